/*
 * Memory of whole search passes. NCCL 2.22.3's ncclTopoCompute walks a
 * ladder of settings and often searches again with settings that cannot
 * change a single decision of the recursion: a typeIntra or typeInter that
 * admits exactly the same routes as one already tried, at the same speeds,
 * from the same link state. A first-pass search that saved no graph has only
 * one effect, the steps it took; such a pass is recorded and, when an
 * equivalent pass comes up, charged instead of explored.
 *
 * Why it is exact:
 *   - inside a pass the path types only meet route types (ncclTopoFollowPath
 *     compares path->type, and for trees the reverse type; ncclTopoSelectNets
 *     walks types 0..typeInter); two limits with the same routes at or under
 *     them (same "effective type") give the same answers everywhere;
 *   - every other input is in the key: pattern, sameChannels, crossNic,
 *     speeds, channel bounds, hops and the link and NET bandwidths at the
 *     start (hashed), the budget following from pattern and sameChannels;
 *   - the best graph only gets better over the passes, and ncclTopoCompareGraphs
 *     is transitive in that sense: a graph that did not beat it before does
 *     not beat it now (see search_rec.c better_graph), so the pass still
 *     saves nothing and takes the same path.
 * Only first passes are recorded: the second pass changes the best graph
 * by duplicating channels before it starts.
 */
#include "search_int.h"

#include <stdlib.h>
#include <string.h>

static void add_type(int *types, int *count, int t)
{
    for (int i = 0; i < *count && i < TP_PASS_MAX_TYPES; i++)
        if (types[i] == t)
            return;
    if (*count < TP_PASS_MAX_TYPES)
        types[*count] = t;
    (*count)++; /* past TP_PASS_MAX_TYPES the memory is off (path types are far fewer) */
}

/* Types and reverse types of the routes between nodes of types a and b. */
static void route_types(const tp_search_ctx *s, int a, int b, int *types, int *count)
{
    const tp_cpath *cp = s->routes[a][b];
    int n = s->sys->nodes[a].count * s->sys->nodes[b].count;
    for (int i = 0; cp && i < n; i++) {
        add_type(types, count, cp[i].type);
        add_type(types, count, cp[i].rev_type);
    }
}

/* The largest route type at or under t (-1: none). */
static int effective(const int *types, int count, int t)
{
    int best = -1;
    for (int i = 0; i < count; i++)
        if (types[i] <= t && types[i] > best)
            best = types[i];
    return best;
}

void tp_search__pass_init(tp_search_ctx *s)
{
    s->n_intra_types = s->n_inter_types = 0;
    route_types(s, TP_NODE_GPU, TP_NODE_GPU, s->intra_types, &s->n_intra_types);
    route_types(s, TP_NODE_GPU, TP_NODE_NVS, s->intra_types, &s->n_intra_types);
    route_types(s, TP_NODE_NVS, TP_NODE_GPU, s->intra_types, &s->n_intra_types);
    route_types(s, TP_NODE_GPU, TP_NODE_NET, s->inter_types, &s->n_inter_types);
    route_types(s, TP_NODE_NET, TP_NODE_GPU, s->inter_types, &s->n_inter_types);
}

static uint64_t float_key(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return bits;
}

/* The bandwidths a pass starts from: every link the search reads and every NET. */
static uint64_t state_hash(const tp_search_ctx *s)
{
    uint64_t h = 0x6a09e667f3bcc908ULL;
    for (int i = 0; i < s->n_links; i++)
        h = tp_search__mix(h, float_key(*s->link_bw[i]));
    for (int n = 0; n < s->n_nets; n++)
        h = tp_search__mix(h, float_key(s->sys->nodes[TP_NODE_NET].nodes[n].net.bw));
    return h;
}

/* The key of the pass g runs from the state hashed as `state`, at speeds bw_intra/bw_inter. */
static void pass_key(const tp_search_ctx *s, const tp_graph *g, uint64_t state, float bw_intra,
                     float bw_inter, uint64_t *key, uint64_t *check)
{
    int ti = effective(s->intra_types, s->n_intra_types, g->type_intra);
    int te = effective(s->inter_types, s->n_inter_types, g->type_inter);
    uint64_t k = tp_search__mix(state, (uint64_t)(uint32_t)g->pattern);
    k = tp_search__mix(k, ((uint64_t)(uint32_t)ti << 32) | (uint32_t)te);
    k = tp_search__mix(k, ((uint64_t)(uint32_t)g->same_channels << 32) | (uint32_t)g->cross_nic);
    k = tp_search__mix(k, (float_key(bw_intra) << 32) | float_key(bw_inter));
    k = tp_search__mix(k, ((uint64_t)(uint32_t)g->min_channels << 32) | (uint32_t)g->max_channels);
    k = tp_search__mix(k, (uint64_t)(uint32_t)g->n_hops);
    *key = k;
    *check = tp_search__mix(k ^ 0x3c6ef372fe94f82bULL, (uint64_t)(uint32_t)g->coll_net);
}

/* NVLS and CollNet compare graphs by channel count first: not transitive, so not recorded. */
static int recordable(const tp_graph *g)
{
    return g->pattern != TP_PATTERN_NVLS && g->pattern != TP_PATTERN_COLLNET_DIRECT;
}

int tp_search__pass_find(tp_search_ctx *s, const tp_graph *g, int *time)
{
    s->pass_key = s->pass_check = 0;
    if (!recordable(g))
        return 0;
    if (s->n_intra_types > TP_PASS_MAX_TYPES || s->n_inter_types > TP_PASS_MAX_TYPES)
        return 0;
    s->pass_state = state_hash(s);
    pass_key(s, g, s->pass_state, g->bw_intra, g->bw_inter, &s->pass_key, &s->pass_check);
    const tp_memo_entry *e = tp_search__memo_find(&s->passes, s->pass_key, s->pass_check);
    if (!e)
        return 0;
    *time = e->steps;
    return 1;
}

void tp_search__pass_store(tp_search_ctx *s, int time)
{
    if (s->pass_key == 0 && s->pass_check == 0)
        return; /* not a recordable pass */
    if (s->n_intra_types > TP_PASS_MAX_TYPES || s->n_inter_types > TP_PASS_MAX_TYPES)
        return;
    tp_search__memo_store(&s->passes, s->pass_key, s->pass_check, time, 1);
}

int tp_search__pass_known(tp_search_ctx *s, const tp_graph *g, float bw)
{
    uint64_t key, check;
    if (s->pass_key == 0 && s->pass_check == 0)
        return 0;
    pass_key(s, g, s->pass_state, bw, bw, &key, &check);
    return tp_search__memo_find(&s->passes, key, check) != NULL;
}

void tp_search__pass_store_at(tp_search_ctx *s, const tp_graph *g, float bw, int time)
{
    uint64_t key, check;
    if (s->pass_key == 0 && s->pass_check == 0)
        return;
    pass_key(s, g, s->pass_state, bw, bw, &key, &check);
    tp_search__memo_store(&s->passes, key, check, time, 1);
}
