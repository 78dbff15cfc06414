/*
 * What-if edits of a topology XML (stage 1 level: the element tree), for
 * `topoplan mutate`: change attributes, remove devices, set NVLink counts.
 */
#ifndef TP_MUTATE_H
#define TP_MUTATE_H

#include "xml/xml.h"

/* Apply one mutation to the document; errors name the spec. */
tp_status tp_mutate__apply(tp_xml *doc, const tp_mutation *m, tp_error *err);

#endif
