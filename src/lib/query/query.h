/* What the query module's files share: the public list of findings in plain words. */
#ifndef TP_QUERY_H
#define TP_QUERY_H

#include "common/internal.h"

struct tp_findings {
    tp_log lines;
};

#endif
