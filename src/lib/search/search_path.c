/*
 * The routes the search walks, compiled once per ncclTopoCompute into flat
 * hop lists: which bandwidths a reservation touches and how (NCCL 2.22.3
 * followPath's rules, which only depend on the route). The search then
 * reserves and releases without chasing nodes.
 */
#include "search/search_int.h"

#include <stdlib.h>

/* The (from, to) node types the search follows routes between. */
static const int route_kinds[][2] = {
    {TP_NODE_GPU, TP_NODE_GPU}, {TP_NODE_GPU, TP_NODE_NET}, {TP_NODE_NET, TP_NODE_GPU},
    {TP_NODE_GPU, TP_NODE_NVS}, {TP_NODE_NVS, TP_NODE_GPU},
};

static int route_len(const tp_system *sys, int t1, int i1, int t2, int i2)
{
    const tp_route *paths = sys->nodes[t1].nodes[i1].paths[t2];
    return paths ? paths[i2].count : 0;
}

static void compile_route(tp_cpath *cp, tp_hop *hops, tp_system *sys, int t1, int i1, int t2,
                          int i2)
{
    tp_node *start = &sys->nodes[t1].nodes[i1];
    const tp_route *path = &start->paths[t2][i2];
    tp_search__route_head(cp, sys, t1, i1, t2, i2);
    cp->hops = hops;
    tp_node *node = start;
    for (int step = 0; step < path->count; step++) {
        tp_search__compile_hop(&hops[step], node, path->list[step], start);
        node = path->list[step]->rem;
    }
}

/* The routes of each kind and the hops they take, in one zeroed block that starts with the hop
 * pool (a search sets them up each time, and a dozen allocations cost more than a small
 * system's routes). */
static tp_status alloc_routes(tp_search_ctx *s, size_t n_hops, tp_error *err)
{
    const tp_system *sys = s->sys;
    size_t size = 0, at[ARRAY_LEN(route_kinds)];
    tp_search__place(&size, (n_hops ? n_hops : 1) * sizeof(tp_hop));
    for (size_t k = 0; k < ARRAY_LEN(route_kinds); k++) {
        int n1 = sys->nodes[route_kinds[k][0]].count, n2 = sys->nodes[route_kinds[k][1]].count;
        at[k] = tp_search__place(&size,
                                 (size_t)(n1 ? n1 : 1) * (size_t)(n2 ? n2 : 1) * sizeof(tp_cpath));
    }
    char *block = calloc(1, size);
    if (!block)
        return tp_fail_nomem(err);
    s->hop_pool = (tp_hop *)block;
    for (size_t k = 0; k < ARRAY_LEN(route_kinds); k++)
        s->routes[route_kinds[k][0]][route_kinds[k][1]] = (tp_cpath *)(block + at[k]);
    return TP_OK;
}

tp_status tp_search__compile_routes(tp_search_ctx *s, tp_error *err)
{
    tp_system *sys = s->sys;
    size_t n_hops = 0;
    for (size_t k = 0; k < ARRAY_LEN(route_kinds); k++) {
        int t1 = route_kinds[k][0], t2 = route_kinds[k][1];
        for (int i1 = 0; i1 < sys->nodes[t1].count; i1++)
            for (int i2 = 0; i2 < sys->nodes[t2].count; i2++)
                n_hops += (size_t)route_len(sys, t1, i1, t2, i2);
    }
    s->n_hops = n_hops;
    s->n_routes = 0;
    if (alloc_routes(s, n_hops, err) != TP_OK)
        return TP_ERR_NOMEM;
    tp_hop *next = s->hop_pool;
    for (size_t k = 0; k < ARRAY_LEN(route_kinds); k++) {
        int t1 = route_kinds[k][0], t2 = route_kinds[k][1];
        int n1 = sys->nodes[t1].count, n2 = sys->nodes[t2].count;
        tp_cpath *cp = s->routes[t1][t2];
        for (int i1 = 0; i1 < n1; i1++) {
            for (int i2 = 0; i2 < n2; i2++) {
                cp[i1 * n2 + i2].index = s->n_routes++;
                if (!sys->nodes[t1].nodes[i1].paths[t2]) {
                    cp[i1 * n2 + i2].type = TP_PATH_DIS;
                    cp[i1 * n2 + i2].need[0] = cp[i1 * n2 + i2].need[1] = TP_PATH_DIS;
                    continue;
                }
                compile_route(&cp[i1 * n2 + i2], next, sys, t1, i1, t2, i2);
                cp[i1 * n2 + i2].first_hop = (int)(next - s->hop_pool);
                next += cp[i1 * n2 + i2].count;
            }
        }
    }
    return TP_OK;
}

void tp_search__free_routes(tp_search_ctx *s)
{
    for (size_t k = 0; k < ARRAY_LEN(route_kinds); k++) /* in the hop pool's block */
        s->routes[route_kinds[k][0]][route_kinds[k][1]] = NULL;
    free(s->hop_pool);
    s->hop_pool = NULL;
}
