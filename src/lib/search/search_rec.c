/*
 * The recursive search of NCCL 2.22.3 (src/graph/search.cc): walk GPUs (and
 * NETs) channel by channel, reserving bandwidth on the live system links and
 * giving it back exactly on backtrack, and keep the best graph found.
 * Every rule, order and float operation follows NCCL, since the step budget
 * makes the result depend on the exact order of the tries. An attached
 * accelerator (search_accel.h) is told what the search does at a few
 * points, and may do the link arithmetic and the sub-searches its own way.
 */
#include "search/search_int.h"

#include <math.h>
#include <string.h>

/*
 * The helpers of a search step (follow a route, try a GPU, try the next
 * GPUs) are inlined where they are called: their calls and by-value
 * records cost more than their work, and constant arguments (mult 1 or -1)
 * fold away.
 */
#define STEP_INLINE __attribute__((always_inline)) static inline

/*
 * roundf (half away from zero), inline: libm's call dominates the search
 * otherwise. Exact for every float: the fraction ax - r is exact below 2^23.
 */
static float round_half_away(float x)
{
    float ax = fabsf(x);
    if (!(ax < 8388608.0f))
        return x;
    float r = (float)(int32_t)ax;
    if (ax - r >= 0.5f)
        r += 1.0f;
    return copysignf(r, x);
}

/* NCCL 2.22.3 SUB_ROUND: subtract, then round to 1/1000 to cancel float drift. */
static float sub_round(float a, float b)
{
    return round_half_away((a - b) * 1000) / 1000;
}

/*
 * NCCL 2.22.3 followPath: take bw from the first max_steps links of path;
 * stop at the first link without enough (*steps tells how far it went).
 * Pre-Ampere GPUs entered from a non-GPU also pay 1/8 on the reverse link,
 * and POWER CPUs over NVLink pay the full bw on it (see search_path.c).
 */
static tp_status follow(tp_search_ctx *s, const tp_cpath *path, int max_steps, float bw, int *steps)
{
    float pci_bw = path->intel ? tp_search__intel_p2p_overhead(bw) : bw;
    for (int step = 0; step < max_steps; step++) {
        const tp_hop *h = &path->hops[step];
        float fw_bw = h->pci ? pci_bw : bw, rev_bw = 0;
        if (h->rev_div8)
            rev_bw += fw_bw / 8;
        if (h->rev_full)
            rev_bw += fw_bw;
        if ((h->rev_div8 || h->rev_full) && !h->rev)
            return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: no reverse link");
        if (*h->bw < fw_bw || (rev_bw != 0 && *h->rev < rev_bw)) {
            *steps = step;
            return TP_OK;
        }
        *h->bw = sub_round(*h->bw, fw_bw);
        if (rev_bw != 0)
            *h->rev = sub_round(*h->rev, rev_bw);
    }
    *steps = max_steps;
    return TP_OK;
}

tp_status tp_search__walk_floats(tp_search_ctx *s, const tp_cpath *path, float bw, float mult,
                                 int *done)
{
    bw *= mult;
    int step = 0;
    tp_status st = follow(s, path, path->count, bw, &step);
    *done = step == path->count;
    if (st == TP_OK && !*done)
        st = follow(s, path, step, -bw, &step);
    return st;
}

/* Reserve (mult > 0) or release bw on path: 1 when done, 0 when a link is short. */
STEP_INLINE tp_status walk_path(tp_search_ctx *s, const tp_cpath *path, float bw, float mult,
                                int *done)
{
    if (!s->accel || !s->accel->walk)
        return tp_search__walk_floats(s, path, bw, mult, done);
    *done = s->accel->walk(s->accel_state, path, bw, mult);
    return *done < 0 ? TP_ERR_INTERNAL : TP_OK;
}

static void note_read(tp_search_ctx *s, tp_search_read what, int value, int result)
{
    if (s->accel && s->accel->read)
        s->accel->read(s->accel_state, what, value, result);
}

/* A route between two nodes: (t1, i1) to (t2, i2); t1 == -1 starts a channel without a route. */
typedef struct route_ref {
    int t1, i1, t2, i2;
} route_ref;

/* A route found: its compiled path (NULL: the channel starts at the node) and destination. */
typedef struct route_at {
    const tp_cpath *path;
    tp_node *to;
} route_at;

static route_at resolve(const tp_search_ctx *s, route_ref r)
{
    route_at at = {NULL, &s->sys->nodes[r.t2].nodes[r.i2]};
    if (r.t1 != -1)
        at.path = &s->routes[r.t1][r.t2][r.i1 * s->sys->nodes[r.t2].count + r.i2];
    return at;
}

/*
 * NCCL 2.22.3 ncclTopoFollowPath: reserve (mult > 0) or release (mult < 0)
 * the graph's bandwidth on route r. *out is the destination, or NULL when
 * the path type is too weak or bandwidth is short.
 */
STEP_INLINE tp_status follow_path(tp_search_ctx *s, tp_graph *g, route_at r, float mult,
                                  tp_node **out)
{
    tp_node *node2 = r.to;
    *out = node2;
    if (!r.path)
        return TP_OK;
    const tp_cpath *path = r.path;
    *out = NULL;
    float bw = path->intra ? g->bw_intra : g->bw_inter;
    if (mult == 1) {
        /* Trees also need the way back: the weaker of the two types decides. */
        int need = tp_search__route_need(path, g->pattern);
        int type = path->intra ? g->type_intra : g->type_inter;
        if (need > type) {
            if (path->intra)
                note_read(s, TP_READ_TYPE_INTRA, need, 0);
            return TP_OK;
        }
    }
    int done = 0;
    tp_status st = walk_path(s, path, bw, mult, &done);
    if (st != TP_OK || !done)
        return st;
    /* NCCL adds mult * count in float: the same integers for the usual mult (counts < 2^24). */
    if (mult == 1)
        g->n_hops += path->count;
    else if (mult == -1)
        g->n_hops -= path->count;
    else
        g->n_hops += mult * path->count;
    *out = node2;
    return TP_OK;
}

/* Where a channel turns (ncclTopoSearchParams) and how its next GPU is chosen. */
typedef struct chain_rules {
    int back_to_net, back_to_first;
    tp_order forced;
} chain_rules;

static tp_status rec_gpu(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int step, chain_rules rules,
                         int *time);

/* One ncclTopoSearchTryGpu: from node (from_type, from_index) to GPU index gpu at `step`. */
typedef struct gpu_try {
    int step;
    chain_rules rules;
    int from_type, from_index; /* from_type -1: the channel starts at the GPU */
    int gpu;
} gpu_try;

/* NCCL 2.22.3 ncclTopoSearchTryGpu: go to the GPU and continue from there. */
STEP_INLINE tp_status try_gpu(tp_search_ctx *s, tp_graph *g, const gpu_try *t, int *time)
{
    const uint64_t flag = 1ULL << g->n_channels;
    const route_at r = resolve(s, (route_ref){t->from_type, t->from_index, TP_NODE_GPU, t->gpu});
    tp_node *gpu;
    tp_status st = follow_path(s, g, r, 1, &gpu);
    if (st != TP_OK || !gpu)
        return st;
    s->used[t->gpu] ^= flag;
    st = rec_gpu(s, g, gpu, t->step, t->rules, time);
    s->used[t->gpu] ^= flag;
    if (st != TP_OK)
        return st;
    return follow_path(s, g, r, -1, &gpu);
}

/* NCCL 2.22.3 ncclTopoReplayGetGpu: the GPU after `step` in the previous channel. */
static tp_status replay_gpu(tp_search_ctx *s, const tp_graph *g, int step, int *gi)
{
    *gi = -1;
    if (g->n_channels == 0)
        return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: replay without a channel");
    int rank = g->intra[(g->n_channels - 1) * s->n_gpus + step + 1];
    note_read(s, TP_READ_PREV_CHANNEL, step + 2, g->n_channels - 1);
    for (int i = 0; i < s->n_gpus; i++) {
        if (s->sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank == rank) {
            *gi = i;
            return TP_OK;
        }
    }
    return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: replay rank %d not found", rank);
}

/* NCCL 2.22.3 ncclTopoCompareGraphs: more channels x bw wins, then fewer hops. */
static int better_graph(const tp_search_ctx *s, const tp_graph *g, const tp_graph *ref)
{
    if (g->n_channels < g->min_channels)
        return 0;
    if (g->pattern == TP_PATTERN_NVLS) {
        /* NVLS channels pull from distinct GPUs: the more the better. */
        int copy = g->n_channels > ref->n_channels && g->n_channels <= s->n_gpus;
        if (g->n_channels * g->bw_inter > ref->n_channels * ref->bw_inter)
            copy = 1;
        return copy;
    }
    if (g->n_channels * g->bw_intra > ref->n_channels * ref->bw_intra)
        return 1;
    if (g->n_channels * g->bw_intra < ref->n_channels * ref->bw_intra)
        return 0;
    return g->pattern == ref->pattern && g->cross_nic == ref->cross_nic && g->n_hops < ref->n_hops;
}

/* NCCL 2.22.3 ncclTopoSearchParams: where a channel turns back. */
static chain_rules search_params(const tp_search_ctx *s, int pattern, tp_order forced)
{
    chain_rules r = {.back_to_net = -1, .back_to_first = -1, .forced = forced};
    if (s->n_nets) {
        if (pattern == TP_PATTERN_RING)
            r.back_to_net = s->n_gpus - 1;
        else if (pattern == TP_PATTERN_SPLIT_TREE)
            r.back_to_net = 1;
        else
            r.back_to_net = 0;
    } else if (pattern == TP_PATTERN_RING) {
        r.back_to_first = s->n_gpus - 1;
    }
    return r;
}

static chain_rules with_order(chain_rules r, tp_order forced)
{
    r.forced = forced;
    return r;
}

static tp_status free_intra(tp_search_ctx *s, tp_graph *g, int *time);
static tp_status free_net(tp_search_ctx *s, tp_graph *g, int n, int *time);

tp_status tp_search__sub(tp_search_ctx *s, tp_graph *g, tp_search_sub kind, int net, int *time)
{
    switch (kind) {
    case TP_SUB_NEXT_CHANNEL:
        return tp_search__rec(s, g, time);
    case TP_SUB_FREE_INTRA:
        return free_intra(s, g, time);
    default:
        if (tp_profile_has(s->profile, TP_RULE_RECNET_LOCAL_GPU_FIRST))
            return tp_search__free_net_2_27(s, g, net, time);
        return free_net(s, g, net, time);
    }
}

/* A sub-search, through the accelerator when one is attached. */
static tp_status sub_search(tp_search_ctx *s, tp_graph *g, tp_search_sub kind, int net, int *time)
{
    if (s->accel)
        return s->accel->sub(s->accel_state, g, kind, net, time);
    return tp_search__sub(s, g, kind, net, time);
}

/* A channel is complete: keep it if better, then try one more channel. */
static tp_status channel_done(tp_search_ctx *s, tp_graph *g, int *time)
{
    tp_status st = TP_OK;
    g->n_channels++;
    int saved = better_graph(s, g, s->save);
    if (saved) {
        tp_search__copy_graph(s->save, g, s->n_gpus);
        if (g->n_channels == g->max_channels)
            *time = -1;
    }
    if (s->accel)
        s->accel->channel_done(s->accel_state, g, saved, time);
    if (g->n_channels < g->max_channels)
        st = sub_search(s, g, TP_SUB_NEXT_CHANNEL, 0, time);
    g->n_channels--;
    return st;
}

/* A ring at crossNic 2 (TP_RULE_CROSS_NIC_RING_ALTERNATE): its odd channels go back over the
 * previous channel's NETs, the other way round. */
static int alternating_ring(const tp_search_ctx *s, const tp_graph *g)
{
    return g->pattern == TP_PATTERN_RING && g->cross_nic == 2 &&
           tp_profile_has(s->profile, TP_RULE_CROSS_NIC_RING_ALTERNATE);
}

/* Whether NET n may end the channel that started at start (NCCL 2.22.3 rules). */
static int net_may_close(tp_search_ctx *s, const tp_graph *g, const tp_node *net,
                         const tp_node *start)
{
    if (g->pattern == TP_PATTERN_TREE && net->id != start->id)
        return 0; /* trees are symmetric */
    if (tp_profile_has(s->profile, TP_RULE_CROSS_NIC_RING_ALTERNATE)) {
        /* Read whichever way crossNic is: 0 refuses another port, 1 and 2 take it. */
        int other_port = net->net.asic != start->net.asic || net->net.port != start->net.port;
        if (other_port)
            note_read(s, TP_READ_CROSS_NIC, g->cross_nic, 0);
        if (alternating_ring(s, g))
            return !(g->n_channels & 1) || net->id == g->inter[(g->n_channels - 1) * 2];
        return !other_port || g->cross_nic != 0;
    }
    if (net->net.asic != start->net.asic || net->net.port != start->net.port) {
        note_read(s, TP_READ_CROSS_NIC, g->cross_nic, 0);
        if (g->cross_nic != 1)
            return 0;
    }
    if (g->cross_nic && (g->n_channels & 1) && net->id != g->inter[(g->n_channels - 1) * 2])
        return 0;
    return 1;
}

/* Go from GPU gpu back out to a NET (the channel's exit), then continue. */
static tp_status back_to_net_step(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int step,
                                  chain_rules rules, int *time)
{
    tp_node *nets = s->sys->nodes[TP_NODE_NET].nodes;
    int gi = (int)(gpu - s->sys->nodes[TP_NODE_GPU].nodes);
    int start_index = s->start_net[g->n_channels];
    int count;
    const int *list;
    tp_status st0 = tp_search__select_nets(s, g->type_inter, gi, &list, &count);
    if (st0 != TP_OK)
        return st0;
    for (int i = 0; i < count; i++) {
        int n = list[i];
        if (!net_may_close(s, g, &nets[n], &nets[start_index]))
            continue;
        /* Balanced tree: the first two GPUs each carry half of the NET traffic. */
        chain_rules next = {
            .back_to_net = -1, .back_to_first = rules.back_to_first, .forced = rules.forced};
        float bw_save = g->bw_inter;
        if (g->pattern == TP_PATTERN_BALANCED_TREE) {
            if (step == 0)
                next.back_to_net = 1;
            else if (nets[n].id != g->inter[g->n_channels * 2 + 1])
                continue;
            g->bw_inter /= 2;
        }
        const route_at out = resolve(s, (route_ref){TP_NODE_GPU, gi, TP_NODE_NET, n});
        tp_node *net;
        tp_status st = follow_path(s, g, out, 1, &net);
        g->bw_inter = bw_save;
        if (st != TP_OK)
            return st;
        if (!net)
            continue;
        g->inter[g->n_channels * 2 + 1] = net->id;
        st = rec_gpu(s, g, gpu, step, next, time);
        if (st != TP_OK)
            return st;
        if (g->pattern == TP_PATTERN_BALANCED_TREE)
            g->bw_inter /= 2;
        st = follow_path(s, g, out, -1, &net);
        g->bw_inter = bw_save;
        if (st != TP_OK)
            return st;
    }
    return TP_OK;
}

/* The route from node (t1, i1) to node (t2, i2). */
static route_at route(const tp_search_ctx *s, int t1, int i1, int t2, int i2)
{
    return resolve(s, (route_ref){t1, i1, t2, i2});
}

/* The channel's last step: every GPU is in; NVLS and CollNet direct channels end here. */
static tp_status channel_end(tp_search_ctx *s, tp_graph *g, int *time)
{
    const chain_rules none = {.back_to_net = -1, .back_to_first = -1, .forced = TP_ORDER_FREE};
    return rec_gpu(s, g, NULL, s->n_gpus, none, time);
}

/*
 * NCCL 2.22.3 ncclTopoSearchTryNvls: the head GPU gi needs twice the bw
 * to and from the NVSwitch, the others once; reserve both directions.
 */
static tp_status try_nvls(tp_search_ctx *s, tp_graph *g, int gi, int *time)
{
    tp_node *node = NULL;
    tp_status st = TP_OK;
    int d0 = 0, d1 = 0;
    do {
        st = follow_path(s, g, route(s, TP_NODE_NVS, 0, TP_NODE_GPU, d0), d0 == gi ? 2 : 1, &node);
        d0++;
    } while (st == TP_OK && node && d0 < s->n_gpus);
    if (st != TP_OK)
        return st;
    if (!node) {
        d0--;
    } else {
        do {
            st = follow_path(s, g, route(s, TP_NODE_GPU, d1, TP_NODE_NVS, 0), d1 == gi ? 2 : 1,
                             &node);
            d1++;
        } while (st == TP_OK && node && d1 < s->n_gpus);
        if (st != TP_OK)
            return st;
        if (!node)
            d1--;
        else if ((st = channel_end(s, g, time)) != TP_OK)
            return st;
        while (d1 && st == TP_OK) {
            d1--;
            st = follow_path(s, g, route(s, TP_NODE_GPU, d1, TP_NODE_NVS, 0), d1 == gi ? -2 : -1,
                             &node);
        }
    }
    while (d0 && st == TP_OK) {
        d0--;
        st =
            follow_path(s, g, route(s, TP_NODE_NVS, 0, TP_NODE_GPU, d0), d0 == gi ? -2 : -1, &node);
    }
    return st;
}

/* Release `count` GPU<->GPU reservations made by try_collnet_direct. */
static tp_status collnet_release(tp_search_ctx *s, tp_graph *g, int gi, int count, float mul,
                                 int to_head)
{
    tp_node *node;
    tp_status st = TP_OK;
    while (count && st == TP_OK) {
        count--;
        route_at r = to_head ? route(s, TP_NODE_GPU, count, TP_NODE_GPU, gi)
                             : route(s, TP_NODE_GPU, gi, TP_NODE_GPU, count);
        st = follow_path(s, g, r, -mul, &node);
    }
    return st;
}

/* NCCL 2.22.3 ncclTopoSearchTryCollnetDirect: head gi talks to every GPU both ways. */
static tp_status try_collnet_direct(tp_search_ctx *s, tp_graph *g, int gi, int *time)
{
    int fwd = 0, bwd = 0;
    tp_node *node = NULL;
    tp_status st = TP_OK;
    float mul = 1.0 / (float)(s->n_gpus - 1);
    do {
        st = follow_path(s, g, route(s, TP_NODE_GPU, gi, TP_NODE_GPU, fwd), mul, &node);
    } while (st == TP_OK && node && ++fwd < s->n_gpus);
    if (st == TP_OK && node) {
        do {
            st = follow_path(s, g, route(s, TP_NODE_GPU, bwd, TP_NODE_GPU, gi), mul, &node);
        } while (st == TP_OK && node && ++bwd < s->n_gpus);
        if (st == TP_OK && node) {
            int step = 1;
            for (int i = 0; i < s->n_gpus; i++)
                if (i != gi)
                    g->intra[g->n_channels * s->n_gpus + step++] =
                        s->sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank;
            st = channel_end(s, g, time);
        }
        if (st == TP_OK)
            st = collnet_release(s, g, gi, bwd, mul, 1);
    }
    if (st == TP_OK)
        st = collnet_release(s, g, gi, fwd, mul, 0);
    return st;
}

/* Try GPU index `next` after GPU index gi, at step + 1. */
STEP_INLINE tp_status try_next(tp_search_ctx *s, tp_graph *g, int gi, int next, int step,
                               chain_rules rules, int *time)
{
    const gpu_try t = {
        .step = step + 1, .rules = rules, .from_type = TP_NODE_GPU, .from_index = gi, .gpu = next};
    return try_gpu(s, g, &t, time);
}

/* try_gpu after its route (path, to GPU index gi) was taken: go on from there (the route stays). */
static tp_status go_on(tp_search_ctx *s, tp_graph *g, const tp_cpath *path, int gi, int step,
                       chain_rules rules, int *time)
{
    const uint64_t flag = 1ULL << g->n_channels;
    g->n_hops += path->count;
    s->used[gi] ^= flag;
    tp_status st = rec_gpu(s, g, &s->sys->nodes[TP_NODE_GPU].nodes[gi], step, rules, time);
    s->used[gi] ^= flag;
    return st;
}

/* Give back route path, taken by go_on's caller (try_gpu's last follow). */
static tp_status give_back(tp_search_ctx *s, tp_graph *g, const tp_cpath *path)
{
    tp_node *gpu;
    return follow_path(s, g, (route_at){path, NULL}, -1, &gpu);
}

/*
 * Try the GPUs next[0..count) after GPU index gi, in order, paths[i] the
 * route to next[i]. An accelerator may walk the candidates that cannot be
 * taken in one call (take_first), which also gives back the route of the
 * candidate tried before.
 */
static tp_status try_next_all(tp_search_ctx *s, tp_graph *g, int gi, const int *next,
                              const tp_cpath *const *paths, int count, int step, chain_rules rules,
                              int *time)
{
    const tp_cpath *held = NULL; /* the route of the last candidate, still taken */
    tp_status st = TP_OK;
    for (int i = 0; i < count && st == TP_OK;) {
        if (!s->accel || !s->accel->take_first) {
            if (held && (st = give_back(s, g, held)) != TP_OK)
                return st;
            held = NULL;
            st = try_next(s, g, gi, next[i++], step, rules, time);
            continue;
        }
        int k = s->accel->take_first(s->accel_state, g, held, paths + i, count - i);
        if (held)
            g->n_hops -= held->count;
        held = NULL;
        if (k < 0)
            return TP_ERR_INTERNAL;
        if (k >= count - i)
            return TP_OK;
        i += k;
        st = go_on(s, g, paths[i], next[i], step + 1, rules, time);
        held = paths[i++];
    }
    if (st != TP_OK || !held)
        return st;
    return give_back(s, g, held);
}

/* The routes from GPU index gi to the GPUs next[0..count). */
static void routes_to(const tp_search_ctx *s, int gi, const int *next, int count,
                      const tp_cpath **paths)
{
    const tp_cpath *row = s->routes[TP_NODE_GPU][TP_NODE_GPU] + (size_t)gi * (size_t)s->n_gpus;
    for (int i = 0; i < count; i++)
        paths[i] = &row[next[i]];
}

/* ncclTopoSearchNextGpuSort without NET keys or NVSwitches: the fixed ranking, unused GPUs. */
static int next_fixed_order(const tp_search_ctx *s, const tp_graph *g, int gi, int *next,
                            const tp_cpath **paths)
{
    const uint64_t flag = 1ULL << g->n_channels;
    const int *order = s->gpu_order + (size_t)gi * (size_t)s->n_gpus;
    const tp_cpath *row = s->routes[TP_NODE_GPU][TP_NODE_GPU] + (size_t)gi * (size_t)s->n_gpus;
    const int n = s->gpu_order_count[gi];
    int count = 0;
    for (int i = 0; i < n; i++) {
        int k = order[i];
        if (!(s->used[k] & flag)) {
            paths[count] = &row[k];
            next[count++] = k;
        }
    }
    return count;
}

/* Pick the GPUs after `gpu` in the order the search mode dictates and try each. */
STEP_INLINE tp_status next_gpu_step(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int step,
                                    chain_rules rules, int *time)
{
    int next[TP_MAX_NODES], count = 1;
    const tp_cpath *paths[TP_MAX_NODES];
    int gi = (int)(gpu - s->sys->nodes[TP_NODE_GPU].nodes);
    tp_status st = TP_OK;
    if (rules.forced == TP_ORDER_PCI) {
        next[0] = step + 1;
    } else if (rules.forced == TP_ORDER_REPLAY) {
        st = replay_gpu(s, g, step, next);
    } else {
        int btn = rules.back_to_net;
        int sort_net = btn == -1 ? 0 : btn == step + 1 ? 1 : -1;
        if (!sort_net && !s->sys->nodes[TP_NODE_NVS].count) {
            count = next_fixed_order(s, g, gi, next, paths);
        } else {
            st = tp_search__next_gpus_live(s, g, gpu, next, &count, sort_net);
            routes_to(s, gi, next, st == TP_OK ? count : 0, paths);
        }
        if (st == TP_OK)
            return try_next_all(s, g, gi, next, paths, count, step, rules, time);
    }
    for (int i = 0; i < count && st == TP_OK; i++)
        st = try_next(s, g, gi, next[i], step, rules, time);
    return st;
}

/* Close an intra-node ring: back from the last GPU (index gi) to the first. */
static tp_status close_ring(tp_search_ctx *s, tp_graph *g, int gi, int step, chain_rules rules,
                            int *time)
{
    int rank = g->intra[g->n_channels * s->n_gpus], p = -1;
    for (int i = 0; i < s->n_gpus && p < 0; i++)
        if (s->sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank == rank)
            p = i;
    if (p < 0)
        return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: gpu rank %d not found", rank);
    const route_at back = resolve(s, (route_ref){TP_NODE_GPU, gi, TP_NODE_GPU, p});
    tp_node *first;
    tp_status st = follow_path(s, g, back, 1, &first);
    if (st != TP_OK || !first)
        return st;
    rules.back_to_first = -1;
    st = rec_gpu(s, g, first, step + 1, rules, time);
    if (st != TP_OK)
        return st;
    return follow_path(s, g, back, -1, &first);
}

/* NCCL 2.22.3 ncclTopoSearchRecGpu: one step of a channel, at GPU `gpu`. */
static tp_status rec_gpu(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int step, chain_rules rules,
                         int *time)
{
    if (*time <= 0)
        return TP_OK;
    (*time)--;
    s->work++;
    if (s->stop.after >= 0 && s->stop.after-- == 0) {
        tp_search__stop(s, time, s->stop.why);
        return TP_OK;
    }
    if (step == s->n_gpus)
        return channel_done(s, g, time);
    g->intra[g->n_channels * s->n_gpus + step] = gpu->gpu.rank;
    int gi = (int)(gpu - s->sys->nodes[TP_NODE_GPU].nodes);
    if (step == rules.back_to_net) {
        if (s->n_nets == 0)
            return TP_OK;
        return back_to_net_step(s, g, gpu, step, rules, time);
    }
    if (g->pattern == TP_PATTERN_NVLS)
        return try_nvls(s, g, gi, time);
    if (g->pattern == TP_PATTERN_COLLNET_DIRECT)
        return try_collnet_direct(s, g, gi, time);
    if (step < s->n_gpus - 1)
        return next_gpu_step(s, g, gpu, step, rules, time);
    if (step == rules.back_to_first)
        return close_ring(s, g, gi, step, rules, time);
    const chain_rules end = {.back_to_net = -1, .back_to_first = -1, .forced = rules.forced};
    return rec_gpu(s, g, gpu, s->n_gpus, end, time);
}

/* Take (sign 1) or give back (sign -1) bw on every NET of the same NIC port. */
static void net_port_bw(tp_search_ctx *s, const tp_node *net, int bw, int sign)
{
    tp_node *nets = s->sys->nodes[TP_NODE_NET].nodes;
    int n = (int)(net - nets);
    for (int k = s->port_first[n]; k < s->port_first[n + 1]; k++) {
        int i = s->port_nets[k];
        float was = nets[i].net.bw;
        nets[i].net.bw -= sign * bw;
        if (s->accel && s->accel->net_bw)
            s->accel->net_bw(s->accel_state, i, sign, was);
    }
}

tp_status tp_search__try_first_gpu(tp_search_ctx *s, tp_graph *g, int net, int gpu, tp_order order,
                                   int *time)
{
    const gpu_try t = {.step = 0,
                       .rules = search_params(s, g->pattern, order),
                       .from_type = TP_NODE_NET,
                       .from_index = net,
                       .gpu = gpu};
    return try_gpu(s, g, &t, time);
}

tp_status tp_search__replay_first(tp_search_ctx *s, const tp_graph *g, int *gi)
{
    return replay_gpu(s, g, -1, gi);
}

tp_status tp_search__sub_search(tp_search_ctx *s, tp_graph *g, tp_search_sub kind, int net,
                                int *time)
{
    return sub_search(s, g, kind, net, time);
}

/*
 * NVLS / CollNet direct from a NET: only pair each NET with its local GPU as
 * a head. Returns 1 in *leak when NCCL skips a duplicate head without giving
 * the NET bandwidth back (an NCCL 2.22.3 quirk we keep).
 */
static tp_status net_head_step(tp_search_ctx *s, tp_graph *g, const tp_net_start *ns, int *found,
                               int *leak, int *time)
{
    *leak = 0;
    if (g->n_channels >= ns->count)
        return TP_OK;
    int gpu = s->local_gpu[ns->n];
    for (int c = 0; c < g->n_channels; c++) {
        if (gpu >= 0 && g->intra[c * s->n_gpus] == s->sys->nodes[TP_NODE_GPU].nodes[gpu].gpu.rank) {
            *leak = 1;
            return TP_OK;
        }
    }
    *found = 1;
    if (gpu == -1)
        return TP_OK;
    const gpu_try t = {.step = 0,
                       .rules = search_params(s, g->pattern, TP_ORDER_FREE),
                       .from_type = TP_NODE_NET,
                       .from_index = ns->n,
                       .gpu = gpu};
    return try_gpu(s, g, &t, time);
}

/* The GPUs closest to NET n (best bw, then fewest hops), or none if too slow. */
static tp_status try_local_gpus(tp_search_ctx *s, tp_graph *g, int n, chain_rules rules, int *time)
{
    const int bw = (int)g->bw_inter; /* NCCL keeps it in an int */
    const tp_route *paths = s->sys->nodes[TP_NODE_NET].nodes[n].paths[TP_NODE_GPU];
    float max_bw = 0;
    int min_hops = INT32_MAX;
    for (int i = 0; i < s->n_gpus; i++) {
        if (paths[i].bw > max_bw) {
            max_bw = paths[i].bw;
            min_hops = paths[i].count;
        } else if (paths[i].bw == max_bw && paths[i].count < min_hops) {
            min_hops = paths[i].count;
        }
    }
    if (s->accel && s->accel->bw_test)
        s->accel->bw_test(s->accel_state, -1, max_bw, max_bw >= bw);
    if (!(max_bw >= bw))
        return TP_OK;
    tp_status st = TP_OK;
    for (int i = 0; i < s->n_gpus && st == TP_OK; i++) {
        int gi = (g->n_channels + i) % s->n_gpus;
        if (paths[gi].bw == max_bw && paths[gi].count == min_hops) {
            const gpu_try t = {.step = 0,
                               .rules = with_order(rules, TP_ORDER_FREE),
                               .from_type = TP_NODE_NET,
                               .from_index = n,
                               .gpu = gi};
            st = try_gpu(s, g, &t, time);
        }
    }
    return st;
}

/* Start a ring/tree channel at NET n: replay, PCI order, then the closest GPUs. */
static tp_status net_chain_step(tp_search_ctx *s, tp_graph *g, int n, chain_rules rules, int *time)
{
    tp_status st = TP_OK;
    if (g->n_channels > 0) {
        int gi;
        if ((st = replay_gpu(s, g, -1, &gi)) != TP_OK)
            return st;
        const gpu_try t = {.step = 0,
                           .rules = with_order(rules, TP_ORDER_REPLAY),
                           .from_type = TP_NODE_NET,
                           .from_index = n,
                           .gpu = gi};
        if ((st = try_gpu(s, g, &t, time)) != TP_OK)
            return st;
    }
    if (g->n_channels != 0 && g->same_channels != 0)
        return TP_OK;
    return sub_search(s, g, TP_SUB_FREE_NET, n, time);
}

/* Channel from scratch at NET n: PCI order first (channel 0), then the closest GPUs. */
static tp_status free_net(tp_search_ctx *s, tp_graph *g, int n, int *time)
{
    chain_rules rules = search_params(s, g->pattern, TP_ORDER_FREE);
    tp_status st = TP_OK;
    if (s->stop.stopped)
        return TP_OK; /* its own budget would run on, with no effect on the stopped pass */
    if (g->n_channels == 0 && s->sys->nodes[TP_NODE_NVS].count == 0) {
        /* A reference in PCI order, on its own small budget. */
        int t = TP_SEARCH_TIMEOUT_PCI_ORDER;
        const gpu_try pci = {.step = 0,
                             .rules = with_order(rules, TP_ORDER_PCI),
                             .from_type = TP_NODE_NET,
                             .from_index = n,
                             .gpu = 0};
        st = try_gpu(s, g, &pci, &t);
        if (st != TP_OK)
            return st;
        if (s->stop.stopped && t == -1)
            s->stop.left = *time; /* stopped on its own budget: the pass's is what it had left */
        if (t == -1)
            *time = -1;
    }
    return try_local_gpus(s, g, n, rules, time);
}

int tp_search__net_may_open(tp_search_ctx *s, const tp_graph *g, int n, int bw)
{
    const tp_node *net = &s->sys->nodes[TP_NODE_NET].nodes[n];
    if (g->coll_net && net->net.coll_support == 0)
        return 0;
    if (s->accel && s->accel->bw_test)
        s->accel->bw_test(s->accel_state, n, net->net.bw, !(net->net.bw < bw));
    if (net->net.bw < bw)
        return 0;
    int alternate = tp_profile_has(s->profile, TP_RULE_CROSS_NIC_RING_ALTERNATE)
                        ? alternating_ring(s, g)
                        : g->cross_nic != 0;
    if (alternate && (g->n_channels & 1) && net->id != g->inter[(g->n_channels - 1) * 2 + 1])
        return 0;
    return 1;
}

tp_status tp_search__each_start_net(tp_search_ctx *s, tp_graph *g, tp_net_step step, int *time)
{
    const int bw = (int)g->bw_inter; /* NCCL keeps it in an int */
    int count, found = 0;
    const int *list;
    tp_status st = tp_search__select_nets(s, g->type_inter, -1, &list, &count);
    /* 2.22.3 skips the NETs after a head (continue), 2.27.5 leaves the loop (break): alike. */
    for (int i = 0; i < count && st == TP_OK && !found; i++) {
        int n = list[(g->n_channels + i) % count];
        tp_node *net = &s->sys->nodes[TP_NODE_NET].nodes[n];
        if (!tp_search__net_may_open(s, g, n, bw))
            continue;
        g->inter[g->n_channels * 2] = net->id;
        s->start_net[g->n_channels] = n;
        g->latency_inter = net->net.latency;
        net_port_bw(s, net, bw, 1);
        int leak = 0;
        const tp_net_start at = {.n = n, .count = count};
        st = step(s, g, &at, &found, &leak, time);
        if (!leak)
            net_port_bw(s, net, bw, -1);
    }
    return st;
}

/* NCCL 2.22.3 ncclTopoSearchRecNet at an opened NET: a head, or a ring / tree channel. */
static tp_status net_step(tp_search_ctx *s, tp_graph *g, const tp_net_start *at, int *found,
                          int *leak, int *time)
{
    if (tp_search__head_pattern(g->pattern))
        return net_head_step(s, g, at, found, leak, time);
    *leak = 0;
    return net_chain_step(s, g, at->n, search_params(s, g->pattern, TP_ORDER_FREE), time);
}

tp_status tp_search__rec(tp_search_ctx *s, tp_graph *g, int *time)
{
    chain_rules rules = search_params(s, g->pattern, TP_ORDER_FREE);
    if (s->n_nets) {
        /* NCCL ignores the status of ncclTopoSearchRecNet; we don't. */
        if (tp_profile_has(s->profile, TP_RULE_RECNET_LOCAL_GPU_FIRST))
            return tp_search__rec_net_2_27(s, g, time);
        return tp_search__each_start_net(s, g, net_step, time);
    }
    gpu_try t = {.step = 0, .rules = rules, .from_type = -1, .from_index = -1, .gpu = 0};
    if (g->pattern == TP_PATTERN_NVLS) {
        t.gpu = g->n_channels;
        return try_gpu(s, g, &t, time);
    }
    tp_status st;
    if (g->n_channels == 0) {
        t.rules.forced = TP_ORDER_PCI;
        st = try_gpu(s, g, &t, time);
    } else {
        if ((st = replay_gpu(s, g, -1, &t.gpu)) != TP_OK)
            return st;
        t.rules.forced = TP_ORDER_REPLAY;
        st = try_gpu(s, g, &t, time);
    }
    if (st != TP_OK || (g->same_channels != 0 && g->n_channels != 0))
        return st;
    return sub_search(s, g, TP_SUB_FREE_INTRA, 0, time);
}

/* Channel from scratch, intra-node: from every GPU in turn. */
static tp_status free_intra(tp_search_ctx *s, tp_graph *g, int *time)
{
    gpu_try t = {.step = 0,
                 .rules = search_params(s, g->pattern, TP_ORDER_FREE),
                 .from_type = -1,
                 .from_index = -1};
    tp_status st = TP_OK;
    for (t.gpu = 0; t.gpu < s->n_gpus && st == TP_OK; t.gpu++)
        st = try_gpu(s, g, &t, time);
    return st;
}

void tp_search__hooks(tp_search_ctx *s, const tp_search_accel_ops *ops)
{
    s->accel = ops;
}

void tp_search__stop(tp_search_ctx *s, int *time, const char *why)
{
    s->stop.stopped = 1;
    s->stop.left = *time;
    s->stop.why = why;
    *time = -1;
}

void tp_search__stop_after(tp_search_ctx *s, int steps, const char *why)
{
    s->stop.after = steps;
    s->stop.why = why;
}

int tp_search__stopped(const tp_search_ctx *s, int *left)
{
    if (left)
        *left = s->stop.left;
    return s->stop.stopped;
}

void tp_search__copy_graph(tp_graph *dst, const tp_graph *src, int n_gpus)
{
    /*
     * NCCL copies the whole graph; the channels past n_channels are never
     * read before being rewritten, so only the used ones are copied.
     */
    tp_graph__copy_settings(dst, src);
    size_t n = (size_t)src->n_channels;
    memcpy(dst->intra, src->intra, n * (size_t)n_gpus * sizeof(int));
    memcpy(dst->inter, src->inter, n * 2 * sizeof(int64_t));
}
