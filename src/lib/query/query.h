/* What the query module's files share: the public list of findings in plain words. */
#ifndef TP_QUERY_H
#define TP_QUERY_H

#include "common/internal.h"

/* A setting note's measured cost: where it starts in the line ("; against no NCCL_ALGO ...")
 * and the worst AllReduce busbw change, so a page can show it apart and grade it. */
typedef struct tp_finding_cost {
    size_t line, at;
    double worst_change_pct;
} tp_finding_cost;

#define TP_FINDING_COSTS 8 /* setting notes measure at most one cost each (three today) */

struct tp_findings {
    tp_log lines;
    tp_finding_cost costs[TP_FINDING_COSTS];
    int n_costs;
};

/* The cost measured for line i of f, NULL when none was. */
const tp_finding_cost *tp_findings__cost(const tp_findings *f, size_t i);

#endif
