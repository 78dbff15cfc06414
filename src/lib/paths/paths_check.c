/*
 * Invariants of computed paths: each route is a chain of links, every hop a
 * link of the node the previous hop reached, ending at a node of its
 * destination's type and id (NCCL finds nodes by id); its bandwidth finite,
 * not negative and within its narrowest link's, read in the direction NCCL's
 * search walked it (hop_bw).
 * A failure is a bug of topoplan (TP_ERR_INTERNAL).
 */
#include "paths/paths.h"
#include "common/names.h"

#include <math.h>
#include <stdio.h>

static tp_status broken(tp_error *err, const tp_node *from, int to_type, int to, const char *what)
{
    return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "paths invariant: %s/%llx to %s %d: %s",
                   tp_node_type_name(from->type), (unsigned long long)from->id,
                   tp_node_type_name(to_type), to, what);
}

static bool is_link_of(const tp_node *n, const tp_link *l)
{
    return n->n_links > 0 && l >= n->links && l < n->links + n->n_links;
}

/*
 * The bandwidth NCCL's path search gave hop l (from `at`): it walks from the destination
 * outwards, so a route's bandwidth is the minimum of the links walked back to `at`, the hop's
 * reverse link of the same type (the hop's own link when there is none). The two differ when
 * the ends read a link differently: an NVLink's bandwidth comes from its GPU's sm.
 */
static float hop_bw(const tp_node *at, const tp_link *l)
{
    const tp_node *rem = l->rem;
    for (int i = 0; i < rem->n_links; i++)
        if (rem->links[i].rem == at && rem->links[i].type == l->type)
            return rem->links[i].bw;
    return l->bw;
}

/* The hops of r from `from`: each a link of the node reached so far; NULL if one is not. */
static const tp_node *walk_route(const tp_node *from, const tp_route *r, float *narrowest)
{
    const tp_node *at = from;
    *narrowest = INFINITY;
    for (int h = 0; h < r->count; h++) {
        const tp_link *l = r->list[h];
        if (!l || !is_link_of(at, l))
            return NULL;
        float bw = hop_bw(at, l);
        if (bw < *narrowest)
            *narrowest = bw;
        at = l->rem;
    }
    return at;
}

static tp_status check_route(const tp_system *sys, const tp_node *from, int type, int index,
                             tp_error *err)
{
    const tp_route *r = &from->paths[type][index];
    const tp_node *to = &sys->nodes[type].nodes[index];
    if (r->count < 0 || r->count > r->cap || (r->count > 0 && !r->list))
        return broken(err, from, type, index, "hop count out of bounds");
    if (r->type < TP_PATH_LOC || r->type > TP_PATH_DIS)
        return broken(err, from, type, index, "unknown path type");
    if (!(r->bw >= 0.0f) || !isfinite(r->bw))
        return broken(err, from, type, index, "bandwidth negative or not finite");
    /* No hops: a route to itself, or one never written (NCCL leaves those as allocated). */
    if (r->count == 0)
        return TP_OK;
    float narrowest;
    const tp_node *end = walk_route(from, r, &narrowest);
    if (!end)
        return broken(err, from, type, index, "a hop that is not a link of the node reached");
    /* NCCL finds a route's destination by id: with duplicate ids, the first such node. */
    if (end->type != to->type || end->id != to->id) {
        char what[96];
        snprintf(what, sizeof(what), "the hops end at %s/%llx", tp_node_type_name(end->type),
                 (unsigned long long)end->id);
        return broken(err, from, type, index, what);
    }
    if (r->bw > narrowest * (1.0f + 1e-5f))
        return broken(err, from, type, index, "wider than its narrowest link");
    return TP_OK;
}

tp_status tp_paths__check(const tp_system *sys, tp_error *err)
{
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        for (int i = 0; i < sys->nodes[t].count; i++) {
            const tp_node *from = &sys->nodes[t].nodes[i];
            for (int t2 = 0; t2 < TP_NODE_TYPE_COUNT; t2++) {
                for (int j = 0; from->paths[t2] && j < sys->nodes[t2].count; j++) {
                    tp_status st = check_route(sys, from, t2, j, err);
                    if (st != TP_OK)
                        return st;
                }
            }
        }
    }
    return TP_OK;
}
