/*
 * What the files of the paths stage share: the node numbering of per-node
 * tables, route storage, the searches and the rewrites (paths.c), used by
 * the routes of trimmed copies (paths_trimmed.c). Not for other stages.
 */
#ifndef TP_PATHS_IMPL_H
#define TP_PATHS_IMPL_H

#include "paths/paths.h"

/* Every node of a system numbered in one sequence, type by type: the index of per-node tables. */
typedef struct tp_node_slots {
    size_t first_of[TP_NODE_TYPE_COUNT];
    size_t total;
} tp_node_slots;

void tp_paths__number_nodes(const tp_system *sys, tp_node_slots *out);

static inline size_t tp_paths__slot(const tp_node_slots *slots, const tp_system *sys,
                                    const tp_node *node)
{
    return slots->first_of[node->type] + (size_t)(node - sys->nodes[node->type].nodes);
}

/*
 * A node's routes to `count` nodes of a type, as NCCL 2.22.3's calloc leaves
 * them: LOC (bw 0) for the array a search root allocates for itself, DIS
 * for the ones its search allocates on the nodes it reaches.
 */
tp_status tp_paths__routes_alloc(tp_system *sys, tp_route **out, int count, bool disconnected,
                                 tp_error *err);
/* Room for `need` hops in r (its list may move: hops past its count are not kept). */
tp_status tp_paths__route_grow(tp_system *sys, tp_route *r, int need, tp_error *err);

/* The searches in NCCL 2.22.3's order, by the type of their roots: CPUs, GPUs, NETs, NVSwitches.
 */
enum { TP_SEARCH_CPUS, TP_SEARCH_GPUS, TP_SEARCH_NETS, TP_SEARCH_NVSWITCHES, TP_SEARCH_KINDS };
/* The searches of the root types [first, last) of that order (ncclTopoSetPaths per root). */
tp_status tp_paths__searches(tp_system *sys, const tp_config *cfg, tp_log *log, int first, int last,
                             tp_error *err);
/* The rewrites after the searches (P2P, SHM, PXN, GDR), as tp_paths__compute ends. */
tp_status tp_paths__rewrites(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                             tp_log *log, tp_error *err);

#endif
