/*
 * Why a graph is what it is, in plain words, computed from its decision
 * trace (search.h events) and a replay of the bandwidth its channels reserve
 * (graphcheck_replay.c): where the search started, what it relaxed and in
 * which order, which pass produced the final graph, what NCCL did to it
 * after (duplication), and which links capped its speed or channel count.
 *
 * topoplan's own shortcuts (TP_EV_BOUND, TP_EV_SETTLE) are not NCCL
 * decisions: they appear only when asked for, labelled as topoplan's.
 */
#ifndef TP_EXPLAIN_H
#define TP_EXPLAIN_H

#include "graphcheck/graphcheck.h"

#define TP_WHY_MAX_LINES 16
#define TP_WHY_MAX_LIMITS 3

/* One statement; step is a fixed word ("start", "relaxed", "result", ...). */
typedef struct tp_why_line {
    const char *step;
    char text[512];
} tp_why_line;

/* A link a "limit" line names (labels as tp_graphcheck__label writes them), for pictures. */
typedef struct tp_why_limit {
    char from[48], to[48]; /* `to` is empty for a NET port */
    int type;              /* tp_link_type, or TP_GC_NET_PORT */
} tp_why_limit;

typedef struct tp_graph_why {
    long start;  /* first search pass (TP_EV_TRY), -1 when none */
    long result; /* the TP_EV_IMPROVED event that left the final graph, -1 when none */
    long dup;    /* TP_EV_DUP, -1 when none */
    int n_lines;
    tp_why_line lines[TP_WHY_MAX_LINES];
    int n_limits; /* the links of the "limit" lines, tightest first */
    tp_why_limit limits[TP_WHY_MAX_LINES];
} tp_graph_why;

/*
 * Explain graph g of sys. show_ours adds a line on topoplan's own pruning. xml (may be NULL:
 * fewer names) is the topology sys was built from: the limit lines name devices by it.
 * Fails only on allocation failure or an internal inconsistency.
 */
tp_status tp_explain__graph(tp_graph_why *why, const tp_system *sys, const tp_xml *xml,
                            const tp_graph *g, bool show_ours, tp_error *err);

/*
 * tp_explain__graph for every graph of the plan (whys[slot]; empty, no line,
 * when the slot has no graph), replayed on the system as it was before the
 * searches. whys need no initialising.
 */
tp_status tp_explain__plan(tp_graph_why whys[TP_GRAPH_COUNT], const tp_plan *plan, bool show_ours,
                           tp_error *err);

/* Postset's steps from the search channels to the final count (NCCL 2.22.3 connect.cc). */
void tp_explain__channels(tp_graph_why *w, const tp_plan *p);

/* Whether an event is topoplan's own (pruning), not an NCCL decision. */
bool tp_explain__is_ours(tp_search_event_kind kind);

#endif
