/*
 * The recursive search of NCCL 2.22.3 (src/graph/search.cc): walk GPUs (and
 * NETs) channel by channel, reserving bandwidth on the live system links and
 * giving it back exactly on backtrack, and keep the best graph found.
 * Every rule, order and float operation follows NCCL, since the step budget
 * makes the result depend on the exact order of the tries.
 */
#include "search/search_int.h"

#include <math.h>
#include <string.h>

/* NCCL 2.22.3 INTEL_P2P_OVERHEAD: Intel root complexes split P2P into 64B TLPs. */
static float intel_p2p_overhead(float bw)
{
    return bw * 6 / 5;
}

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

static uint64_t float_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return bits;
}

/* Set *bw, keeping the linear hashes of the bandwidth state in step. */
static void set_bw(tp_search_ctx *s, float *bw, float value, uint64_t k1, uint64_t k2)
{
    uint64_t delta = float_bits(value) - float_bits(*bw);
    s->bw_hash1 += k1 * delta;
    s->bw_hash2 += k2 * delta;
    *bw = value;
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
    float pci_bw = path->intel ? intel_p2p_overhead(bw) : bw;
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
        set_bw(s, h->bw, sub_round(*h->bw, fw_bw), h->k1, h->k2);
        if (rev_bw != 0)
            set_bw(s, h->rev, sub_round(*h->rev, rev_bw), h->rk1, h->rk2);
    }
    *steps = max_steps;
    return TP_OK;
}

static inline int32_t rev_amount(const tp_hop *h, const tp_amount *a, int32_t fw)
{
    return h->rev_div8 ? a->v[2 + h->sel] : h->rev_full ? fw : 0;
}

/*
 * Milli mode hashes the reservations rather than the values: a route adds
 * its precomputed hash change for the amount taken (subtracts it when given
 * back; search_milli.c). Equal hashes then mean equal counts of each amount
 * on every link, hence equal values, also in the shadow passes.
 */
static void release_milli(tp_search_ctx *s, const tp_cpath *path, const tp_amount *a)
{
    for (int step = 0; step < path->count; step++) {
        const tp_hop *h = &path->hops[step];
        int32_t fw = a->v[h->sel], rev = rev_amount(h, a, fw);
        *h->m += fw;
        if (rev)
            *h->mrev += rev;
    }
    int ai = (int)(a - s->amounts);
    s->bw_hash1 -= path->hash1[ai];
    s->bw_hash2 -= path->hash2[ai];
}

/* The first hop of path without room for a (milli mode, nothing taken), -1 if none. */
static int short_hop_milli(const tp_cpath *path, const tp_amount *a)
{
    for (int step = 0; step < path->count; step++) {
        const tp_hop *h = &path->hops[step];
        int32_t fw = a->v[h->sel], rev = rev_amount(h, a, fw);
        if (*h->m < fw || (rev && *h->mrev < rev))
            return step;
    }
    return -1;
}

/*
 * followPath in milli mode (search_milli.c): the same walk on integers.
 * Returns -1 when every hop had room, with all taken; else the first hop
 * without, with nothing taken, which is what NCCL's take-then-release
 * leaves (exact integers). No route touches a link twice (search_milli.c).
 */
static int follow_milli(tp_search_ctx *s, const tp_cpath *path, const tp_amount *a)
{
    int short_hop = short_hop_milli(path, a);
    if (short_hop >= 0)
        return short_hop;
    for (int step = 0; step < path->count; step++) {
        const tp_hop *h = &path->hops[step];
        int32_t fw = a->v[h->sel], rev = rev_amount(h, a, fw);
        *h->m -= fw;
        if (rev)
            *h->mrev -= rev;
    }
    int ai = (int)(a - s->amounts);
    s->bw_hash1 += path->hash1[ai];
    s->bw_hash2 += path->hash2[ai];
    return -1;
}

static int is_tree_pattern(int pattern)
{
    return pattern == TP_PATTERN_BALANCED_TREE || pattern == TP_PATTERN_TREE ||
           pattern == TP_PATTERN_SPLIT_TREE;
}

/* Reserve (mult > 0) or release bw on path: 1 when done, 0 when a link is short. */
static tp_status walk_path(tp_search_ctx *s, const tp_cpath *path, float bw, float mult, int *done)
{
    if (s->milli) {
        const tp_amount *a = tp_search__milli_amount(s, bw);
        if (!a)
            return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: bw %g not of the pass",
                           (double)bw);
        int short_hop = -1;
        if (mult > 0)
            short_hop = follow_milli(s, path, a);
        else
            release_milli(s, path, a);
        *done = short_hop < 0;
        if (s->shadow_alive && mult > 0)
            tp_search__shadow_walk(s, path, a, short_hop);
        else if (s->shadow_alive)
            tp_search__shadow_release(s, path, a);
        return TP_OK;
    }
    bw *= mult;
    int step = 0;
    tp_status st = follow(s, path, path->count, bw, &step);
    *done = step == path->count;
    if (st == TP_OK && !*done)
        st = follow(s, path, step, -bw, &step);
    return st;
}

/*
 * The pass memory (search_pass.c) records a pass for every typeIntra that
 * would have taken the same decisions: those at or above every route type
 * accepted, below every route type refused.
 */
static void note_type_intra(tp_search_ctx *s, int need, int accepted)
{
    if (accepted && need > s->ti_lo)
        s->ti_lo = need;
    if (!accepted && need - 1 < s->ti_hi)
        s->ti_hi = need - 1;
}

/*
 * NCCL 2.22.3 ncclTopoFollowPath: reserve (mult > 0) or release (mult < 0)
 * the graph's bandwidth from node (type1, i1) to (type2, i2). *out is the
 * destination, or NULL when the path type is too weak or bandwidth is short.
 * type1 == -1 starts a channel without any path.
 */
static tp_status follow_path(tp_search_ctx *s, tp_graph *g, int type1, int i1, int type2, int i2,
                             float mult, tp_node **out)
{
    tp_node *node2 = &s->sys->nodes[type2].nodes[i2];
    *out = node2;
    if (type1 == -1)
        return TP_OK;
    const tp_cpath *path = &s->routes[type1][type2][i1 * s->sys->nodes[type2].count + i2];
    *out = NULL;
    int intra = (type1 == TP_NODE_GPU || type1 == TP_NODE_NVS) &&
                (type2 == TP_NODE_GPU || type2 == TP_NODE_NVS);
    float bw = intra ? g->bw_intra : g->bw_inter;
    int type = intra ? g->type_intra : g->type_inter;
    if (mult == 1) {
        /* Trees also need the way back: the weaker of the two types decides. */
        int need = path->type;
        if (is_tree_pattern(g->pattern) && path->rev_type > need)
            need = path->rev_type;
        if (intra)
            note_type_intra(s, need, need <= type);
        if (need > type)
            return TP_OK;
    }
    int done = 0;
    tp_status st = walk_path(s, path, bw, mult, &done);
    if (st != TP_OK || !done)
        return st;
    g->n_hops += mult * path->count;
    *out = node2;
    return TP_OK;
}

static tp_status rec_gpu(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int step, int back_to_net,
                         int back_to_first, int forced, int *time);

/* NCCL 2.22.3 ncclTopoSearchTryGpu: go to GPU index gi and continue from there. */
static tp_status try_gpu(tp_search_ctx *s, tp_graph *g, int step, int back_to_net,
                         int back_to_first, int forced, int *time, int type, int index, int gi)
{
    const uint64_t flag = 1ULL << g->n_channels;
    tp_node *gpu;
    tp_status st = follow_path(s, g, type, index, TP_NODE_GPU, gi, 1, &gpu);
    if (st != TP_OK || !gpu)
        return st;
    s->used[gi] ^= flag;
    st = rec_gpu(s, g, gpu, step, back_to_net, back_to_first, forced, time);
    s->used[gi] ^= flag;
    if (st != TP_OK)
        return st;
    return follow_path(s, g, type, index, TP_NODE_GPU, gi, -1, &gpu);
}

/* NCCL 2.22.3 ncclTopoReplayGetGpu: the GPU after `step` in the previous channel. */
static tp_status replay_gpu(tp_search_ctx *s, const tp_graph *g, int step, int *gi)
{
    *gi = -1;
    if (g->n_channels == 0)
        return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: replay without a channel");
    int rank = g->intra[(g->n_channels - 1) * s->n_gpus + step + 1];
    /* The next-channel memory keys on the part of the previous channel read. */
    if (g->n_channels - 1 == s->dep_chan && step + 2 > s->dep_depth)
        s->dep_depth = step + 2;
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
static void search_params(const tp_search_ctx *s, int pattern, int *back_to_net, int *back_to_first)
{
    if (s->n_nets) {
        if (pattern == TP_PATTERN_RING)
            *back_to_net = s->n_gpus - 1;
        else if (pattern == TP_PATTERN_SPLIT_TREE)
            *back_to_net = 1;
        else
            *back_to_net = 0;
        *back_to_first = -1;
    } else {
        *back_to_net = -1;
        *back_to_first = pattern == TP_PATTERN_RING ? s->n_gpus - 1 : -1;
    }
}

/* The sub-searches that go through the memory. */
typedef enum sub_kind { SUB_NEXT_CHANNEL, SUB_FREE_INTRA, SUB_FREE_NET } sub_kind;

static tp_status free_intra(tp_search_ctx *s, tp_graph *g, int *time);
static tp_status free_net(tp_search_ctx *s, tp_graph *g, int n, int *time);

static tp_status run_sub(tp_search_ctx *s, tp_graph *g, sub_kind kind, int n, int *time)
{
    switch (kind) {
    case SUB_NEXT_CHANNEL:
        return tp_search__rec(s, g, time);
    case SUB_FREE_INTRA:
        return free_intra(s, g, time);
    default:
        return free_net(s, g, n, time);
    }
}

/* Use a memory entry e for a sub-search: 1 when it settles it (budget charged). */
static int memo_apply(const tp_memo_entry *e, int *time)
{
    if (e->complete) {
        *time = *time > e->steps ? *time - e->steps : 0;
        return 1;
    }
    if (*time <= e->steps) {
        *time = 0; /* it ran out of budget with more than we have */
        return 1;
    }
    return 0;
}

/*
 * What a sub-search depends on, hashed: the bandwidth left (bw_hash1/2),
 * the channel count, the hops so far (ties) and `extra` (what else it
 * reads, e.g. the previous channel for replays). Earlier channels only
 * matter through those. Saved graphs only get better during a pass, so a
 * sub-search that saved none will save none again from the same state: it
 * is charged its step count instead of being explored.
 */
static tp_status memo_sub(tp_search_ctx *s, tp_graph *g, sub_kind kind, int n, uint64_t extra,
                          int *time)
{
    if (!s->memo_on)
        return run_sub(s, g, kind, n, time);
    /* The PCI-order reference try has its own budget: it runs even when ours is spent. */
    int own_budget =
        kind == SUB_FREE_NET && g->n_channels == 0 && s->sys->nodes[TP_NODE_NVS].count == 0;
    if (*time <= 0 && !own_budget)
        return TP_OK; /* every step would return at once, with no effect */
    uint64_t key = tp_search__mix(s->bw_hash1, extra);
    key = tp_search__mix(key, ((uint64_t)(uint32_t)g->n_hops << 32) | (uint32_t)g->n_channels);
    key = tp_search__mix(key, ((uint64_t)kind << 32) | (uint32_t)n);
    uint64_t check = tp_search__mix(s->bw_hash2 ^ 0x2545f4914f6cdd1dULL, key);
    const tp_memo_entry *e = tp_search__memo_find(&s->memo, key, check);
    if (e && *time <= 0)
        return TP_OK; /* any entry proves the own-budget part saves nothing */
    if (e && memo_apply(e, time))
        return TP_OK;
    int before = *time;
    unsigned long copies = s->n_copies;
    tp_status st = run_sub(s, g, kind, n, time);
    if (st == TP_OK && s->n_copies == copies && *time >= 0)
        tp_search__memo_store(&s->memo, key, check, before - *time, *time > 0);
    return st;
}

static void next_key(const tp_search_ctx *s, const tp_graph *g, int depth, uint64_t prefix,
                     uint64_t *key, uint64_t *check)
{
    int c = g->n_channels;
    uint64_t k = tp_search__mix(s->bw_hash1, prefix);
    k = tp_search__mix(k, ((uint64_t)(uint32_t)g->n_hops << 32) | (uint32_t)c);
    k = tp_search__mix(k, ((uint64_t)SUB_NEXT_CHANNEL << 32) | (uint32_t)depth);
    /* crossNic's odd channels also read the previous channel's NETs. */
    if (g->cross_nic && (c & 1))
        k = tp_search__mix(k, (uint64_t)g->inter[(c - 1) * 2] * 31 +
                                  (uint64_t)g->inter[(c - 1) * 2 + 1]);
    *key = k;
    *check = tp_search__mix(s->bw_hash2 ^ 0x2545f4914f6cdd1dULL, k);
}

static int net_may_open(tp_search_ctx *s, const tp_graph *g, int n, int bw);

/*
 * A next channel that cannot start (search_dead.c): NCCL's attempt only
 * leaves the latency of the last NET it could open in the graph.
 */
static tp_status dead_next_channel(tp_search_ctx *s, tp_graph *g)
{
    const int bw = (int)g->bw_inter;
    int count;
    const int *list;
    tp_status st = tp_search__select_nets(s, g->type_inter, -1, &list, &count);
    for (int i = 0; i < count && st == TP_OK; i++) {
        int n = list[(g->n_channels + i) % count];
        if (net_may_open(s, g, n, bw))
            g->latency_inter = s->sys->nodes[TP_NODE_NET].nodes[n].net.latency;
    }
    return st;
}

/* Hashes of the first d GPUs of channel c, d = 0..n. */
static void prefix_hashes(const tp_search_ctx *s, const tp_graph *g, int c, uint64_t *ph, int from,
                          int to)
{
    if (from == 0)
        ph[0] = 0x5bd1e995ULL;
    for (int d = from > 0 ? from : 1; d <= to && d <= s->n_gpus; d++)
        ph[d] = tp_search__mix(ph[d - 1], (uint64_t)(uint32_t)g->intra[c * s->n_gpus + d - 1]);
}

/*
 * The next channel's search, through the memory. It depends on the state
 * and on the previous channel only through what its replay reads: the first
 * d GPUs, in order (replay_gpu records d). An entry made with d GPUs read
 * holds for any previous channel with the same first d GPUs, since until it
 * would read the next one the search takes the same branches. Entries are
 * looked up for each d recorded so far in the pass.
 */
static tp_status next_channel(tp_search_ctx *s, tp_graph *g, int *time)
{
    if (s->next_dead)
        return dead_next_channel(s, g);
    if (!s->memo_on)
        return tp_search__rec(s, g, time);
    if (*time <= 0)
        return TP_OK; /* every step would return at once, with no effect */
    uint64_t ph[TP_MAX_NODES + 1], key, check;
    int known = s->dep_max < s->n_gpus ? s->dep_max : s->n_gpus;
    prefix_hashes(s, g, g->n_channels - 1, ph, 0, known);
    for (int d = 0; d <= known; d++) {
        next_key(s, g, d, ph[d], &key, &check);
        const tp_memo_entry *e = tp_search__memo_find(&s->memo, key, check);
        if (e && memo_apply(e, time))
            return TP_OK;
    }
    int outer_chan = s->dep_chan, outer_depth = s->dep_depth;
    s->dep_chan = g->n_channels - 1;
    s->dep_depth = 0;
    int before = *time;
    unsigned long copies = s->n_copies;
    tp_status st = tp_search__rec(s, g, time);
    int d = s->dep_depth;
    s->dep_chan = outer_chan;
    s->dep_depth = outer_depth;
    if (st != TP_OK || s->n_copies != copies || *time < 0)
        return st;
    if (d > known)
        prefix_hashes(s, g, g->n_channels - 1, ph, known + 1, d);
    next_key(s, g, d, ph[d], &key, &check);
    tp_search__memo_store(&s->memo, key, check, before - *time, *time > 0);
    if (d > s->dep_max)
        s->dep_max = d;
    return st;
}

/* A channel is complete: keep it if better, then try one more channel. */
static tp_status channel_done(tp_search_ctx *s, tp_graph *g, int *time)
{
    tp_status st = TP_OK;
    g->n_channels++;
    /* From here on the search reads sameChannels and crossNic (search_pass.c). */
    s->pass_reads |= TP_READ_SAME | TP_READ_CROSS;
    if (better_graph(s, g, s->save)) {
        tp_search__copy_graph(s->save, g, s->n_gpus);
        s->n_copies++;
        s->shadow_alive = 0; /* a pass that saves is not recorded: stop following */
        if (g->n_channels == g->max_channels) {
            *time = -1;
        } else if (s->cut_on && !tp_search__can_beat(s, g)) {
            /* Nothing left in the pass can be saved (search_bound.c): unwind at once. */
            s->cut = 1;
            s->cut_left = *time;
            *time = -1;
        }
    }
    if (g->n_channels < g->max_channels)
        st = next_channel(s, g, time);
    g->n_channels--;
    return st;
}

/* Whether NET n may end the channel that started at start (NCCL 2.22.3 rules). */
static int net_may_close(tp_search_ctx *s, const tp_graph *g, const tp_node *net,
                         const tp_node *start)
{
    if (g->pattern == TP_PATTERN_TREE && net->id != start->id)
        return 0; /* trees are symmetric */
    if (net->net.asic != start->net.asic || net->net.port != start->net.port) {
        s->pass_reads |= TP_READ_CROSS;
        if (g->cross_nic != 1)
            return 0;
    }
    if (g->cross_nic && (g->n_channels & 1) && net->id != g->inter[(g->n_channels - 1) * 2])
        return 0;
    return 1;
}

/* Go from GPU gi back out to a NET (the channel's exit), then continue. */
static tp_status back_to_net_step(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int gi, int step,
                                  int back_to_first, int forced, int *time)
{
    tp_node *nets = s->sys->nodes[TP_NODE_NET].nodes;
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
        int next_back = -1;
        float bw_save = g->bw_inter;
        if (g->pattern == TP_PATTERN_BALANCED_TREE) {
            if (step == 0)
                next_back = 1;
            else if (nets[n].id != g->inter[g->n_channels * 2 + 1])
                continue;
            g->bw_inter /= 2;
        }
        tp_node *net;
        tp_status st = follow_path(s, g, TP_NODE_GPU, gi, TP_NODE_NET, n, 1, &net);
        g->bw_inter = bw_save;
        if (st != TP_OK)
            return st;
        if (!net)
            continue;
        g->inter[g->n_channels * 2 + 1] = net->id;
        st = rec_gpu(s, g, gpu, step, next_back, back_to_first, forced, time);
        if (st != TP_OK)
            return st;
        if (g->pattern == TP_PATTERN_BALANCED_TREE)
            g->bw_inter /= 2;
        st = follow_path(s, g, TP_NODE_GPU, gi, TP_NODE_NET, n, -1, &net);
        g->bw_inter = bw_save;
        if (st != TP_OK)
            return st;
    }
    return TP_OK;
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
        st = follow_path(s, g, TP_NODE_NVS, 0, TP_NODE_GPU, d0, d0 == gi ? 2 : 1, &node);
        d0++;
    } while (st == TP_OK && node && d0 < s->n_gpus);
    if (st != TP_OK)
        return st;
    if (!node) {
        d0--;
    } else {
        do {
            st = follow_path(s, g, TP_NODE_GPU, d1, TP_NODE_NVS, 0, d1 == gi ? 2 : 1, &node);
            d1++;
        } while (st == TP_OK && node && d1 < s->n_gpus);
        if (st != TP_OK)
            return st;
        if (!node)
            d1--;
        else if ((st = rec_gpu(s, g, NULL, s->n_gpus, -1, -1, 0, time)) != TP_OK)
            return st;
        while (d1 && st == TP_OK) {
            d1--;
            st = follow_path(s, g, TP_NODE_GPU, d1, TP_NODE_NVS, 0, d1 == gi ? -2 : -1, &node);
        }
    }
    while (d0 && st == TP_OK) {
        d0--;
        st = follow_path(s, g, TP_NODE_NVS, 0, TP_NODE_GPU, d0, d0 == gi ? -2 : -1, &node);
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
        st = to_head ? follow_path(s, g, TP_NODE_GPU, count, TP_NODE_GPU, gi, -mul, &node)
                     : follow_path(s, g, TP_NODE_GPU, gi, TP_NODE_GPU, count, -mul, &node);
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
        st = follow_path(s, g, TP_NODE_GPU, gi, TP_NODE_GPU, fwd, mul, &node);
    } while (st == TP_OK && node && ++fwd < s->n_gpus);
    if (st == TP_OK && node) {
        do {
            st = follow_path(s, g, TP_NODE_GPU, bwd, TP_NODE_GPU, gi, mul, &node);
        } while (st == TP_OK && node && ++bwd < s->n_gpus);
        if (st == TP_OK && node) {
            int step = 1;
            for (int i = 0; i < s->n_gpus; i++)
                if (i != gi)
                    g->intra[g->n_channels * s->n_gpus + step++] =
                        s->sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank;
            st = rec_gpu(s, g, NULL, s->n_gpus, -1, -1, 0, time);
        }
        if (st == TP_OK)
            st = collnet_release(s, g, gi, bwd, mul, 1);
    }
    if (st == TP_OK)
        st = collnet_release(s, g, gi, fwd, mul, 0);
    return st;
}

/* Pick the GPUs after `gpu` in the order the search mode dictates and try each. */
static tp_status next_gpu_step(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int gi, int step,
                               int back_to_net, int back_to_first, int forced, int *time)
{
    int next[TP_MAX_NODES], count = 1;
    tp_status st = TP_OK;
    if (forced == TP_ORDER_PCI) {
        next[0] = step + 1;
    } else if (forced == TP_ORDER_REPLAY) {
        st = replay_gpu(s, g, step, next);
    } else {
        int sort_net = back_to_net == -1 ? 0 : back_to_net == step + 1 ? 1 : -1;
        st = tp_search__next_gpus(s, g, gpu, next, &count, sort_net);
    }
    for (int i = 0; i < count && st == TP_OK; i++)
        st = try_gpu(s, g, step + 1, back_to_net, back_to_first, forced, time, TP_NODE_GPU, gi,
                     next[i]);
    return st;
}

/* Close an intra-node ring: back from the last GPU to the first. */
static tp_status close_ring(tp_search_ctx *s, tp_graph *g, int gi, int step, int back_to_net,
                            int forced, int *time)
{
    int rank = g->intra[g->n_channels * s->n_gpus], p = -1;
    for (int i = 0; i < s->n_gpus && p < 0; i++)
        if (s->sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank == rank)
            p = i;
    if (p < 0)
        return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: gpu rank %d not found", rank);
    tp_node *first;
    tp_status st = follow_path(s, g, TP_NODE_GPU, gi, TP_NODE_GPU, p, 1, &first);
    if (st != TP_OK || !first)
        return st;
    st = rec_gpu(s, g, first, step + 1, back_to_net, -1, forced, time);
    if (st != TP_OK)
        return st;
    return follow_path(s, g, TP_NODE_GPU, gi, TP_NODE_GPU, p, -1, &first);
}

/* NCCL 2.22.3 ncclTopoSearchRecGpu: one step of a channel, at GPU `gpu`. */
static tp_status rec_gpu(tp_search_ctx *s, tp_graph *g, tp_node *gpu, int step, int back_to_net,
                         int back_to_first, int forced, int *time)
{
    if (*time <= 0)
        return TP_OK;
    (*time)--;
    s->work++;
    if (s->cap_left >= 0 && s->cap_left-- == 0) {
        /* A pass that cannot save ran long: cut it (search_bound.c). */
        s->cut = 1;
        s->cut_left = *time;
        *time = -1;
        return TP_OK;
    }
    if (step == s->n_gpus)
        return channel_done(s, g, time);
    g->intra[g->n_channels * s->n_gpus + step] = gpu->gpu.rank;
    int gi = (int)(gpu - s->sys->nodes[TP_NODE_GPU].nodes);
    if (step == back_to_net) {
        if (s->n_nets == 0)
            return TP_OK;
        return back_to_net_step(s, g, gpu, gi, step, back_to_first, forced, time);
    }
    if (g->pattern == TP_PATTERN_NVLS)
        return try_nvls(s, g, gi, time);
    if (g->pattern == TP_PATTERN_COLLNET_DIRECT)
        return try_collnet_direct(s, g, gi, time);
    if (step < s->n_gpus - 1)
        return next_gpu_step(s, g, gpu, gi, step, back_to_net, back_to_first, forced, time);
    if (step == back_to_first)
        return close_ring(s, g, gi, step, back_to_net, forced, time);
    return rec_gpu(s, g, gpu, s->n_gpus, -1, -1, forced, time);
}

/* Take (sign 1) or give back (sign -1) bw on every NET of the same NIC port. */
static void net_port_bw(tp_search_ctx *s, const tp_node *net, int bw, int sign)
{
    tp_node *nets = s->sys->nodes[TP_NODE_NET].nodes;
    int n = (int)(net - nets);
    for (int k = s->port_first[n]; k < s->port_first[n + 1]; k++) {
        int i = s->port_nets[k];
        if (s->milli) {
            /* Counted, as links are (see release_milli): integer steps are exact below 2^24. */
            nets[i].net.bw -= sign * bw;
            s->bw_hash1 += sign * s->net_k1[i];
            s->bw_hash2 += sign * s->net_k2[i];
        } else {
            set_bw(s, &nets[i].net.bw, nets[i].net.bw - sign * bw, s->net_k1[i], s->net_k2[i]);
        }
        if (s->shadow_alive)
            tp_search__shadow_net_bw(s, i, sign);
    }
}

/*
 * NVLS / CollNet direct from a NET: only pair each NET with its local GPU as
 * a head. Returns 1 in *leak when NCCL skips a duplicate head without giving
 * the NET bandwidth back (an NCCL 2.22.3 quirk we keep).
 */
static tp_status net_head_step(tp_search_ctx *s, tp_graph *g, int n, int net_count,
                               const int back[2], int *found, int *leak, int *time)
{
    *leak = 0;
    if (g->n_channels >= net_count)
        return TP_OK;
    int gpu = s->local_gpu[n];
    for (int c = 0; c < g->n_channels; c++) {
        if (gpu >= 0 && g->intra[c * s->n_gpus] == s->sys->nodes[TP_NODE_GPU].nodes[gpu].gpu.rank) {
            *leak = 1;
            return TP_OK;
        }
    }
    *found = 1;
    if (gpu == -1)
        return TP_OK;
    return try_gpu(s, g, 0, back[0], back[1], 0, time, TP_NODE_NET, n, gpu);
}

/* The GPUs closest to the NET (best bw, then fewest hops), or none if too slow. */
static tp_status try_local_gpus(tp_search_ctx *s, tp_graph *g, int n, int bw, int back_to_net,
                                int back_to_first, int *time)
{
    const tp_route *paths = s->sys->nodes[TP_NODE_NET].nodes[n].paths[TP_NODE_GPU];
    float max_bw = 0;
    int min_hops = 0xfffffff;
    for (int i = 0; i < s->n_gpus; i++) {
        if (paths[i].bw > max_bw) {
            max_bw = paths[i].bw;
            min_hops = paths[i].count;
        } else if (paths[i].bw == max_bw && paths[i].count < min_hops) {
            min_hops = paths[i].count;
        }
    }
    if (s->shadow_alive)
        tp_search__shadow_local_test(s, max_bw, max_bw >= bw);
    if (!(max_bw >= bw))
        return TP_OK;
    tp_status st = TP_OK;
    for (int i = 0; i < s->n_gpus && st == TP_OK; i++) {
        int gi = (g->n_channels + i) % s->n_gpus;
        if (paths[gi].bw == max_bw && paths[gi].count == min_hops)
            st = try_gpu(s, g, 0, back_to_net, back_to_first, 0, time, TP_NODE_NET, n, gi);
    }
    return st;
}

/* Start a ring/tree channel at NET n: replay, PCI order, then the closest GPUs. */
static tp_status net_chain_step(tp_search_ctx *s, tp_graph *g, int n, int back_to_net,
                                int back_to_first, int *time)
{
    tp_status st = TP_OK;
    if (g->n_channels > 0) {
        int gi;
        if ((st = replay_gpu(s, g, -1, &gi)) != TP_OK)
            return st;
        st =
            try_gpu(s, g, 0, back_to_net, back_to_first, TP_ORDER_REPLAY, time, TP_NODE_NET, n, gi);
        if (st != TP_OK)
            return st;
    }
    if (g->n_channels != 0 && g->same_channels != 0)
        return TP_OK;
    /* Starting afresh reads the previous channel only for crossNic's odd channels. */
    int c = g->n_channels;
    uint64_t extra = g->cross_nic && (c & 1) ? (uint64_t)g->inter[(c - 1) * 2] : 0;
    return memo_sub(s, g, SUB_FREE_NET, n, extra, time);
}

/* Channel from scratch at NET n: PCI order first (channel 0), then the closest GPUs. */
static tp_status free_net(tp_search_ctx *s, tp_graph *g, int n, int *time)
{
    int back_to_net, back_to_first, bw = (int)g->bw_inter;
    search_params(s, g->pattern, &back_to_net, &back_to_first);
    tp_status st = TP_OK;
    if (s->cut)
        return TP_OK; /* its own budget would run on, saving nothing */
    if (g->n_channels == 0 && s->sys->nodes[TP_NODE_NVS].count == 0) {
        /* A reference in PCI order, on its own small budget. */
        int t = TP_SEARCH_TIMEOUT_PCI_ORDER;
        st = try_gpu(s, g, 0, back_to_net, back_to_first, TP_ORDER_PCI, &t, TP_NODE_NET, n, 0);
        if (st != TP_OK)
            return st;
        if (s->cut && t == -1)
            s->cut_left = *time; /* cut on its own budget: the pass's is what it had left */
        if (t == -1)
            *time = -1;
    }
    return try_local_gpus(s, g, n, bw, back_to_net, back_to_first, time);
}

static int net_may_open(tp_search_ctx *s, const tp_graph *g, int n, int bw)
{
    const tp_node *net = &s->sys->nodes[TP_NODE_NET].nodes[n];
    if (g->coll_net && net->net.coll_support == 0)
        return 0;
    if (s->shadow_alive)
        tp_search__shadow_net_test(s, n, net->net.bw < bw);
    if (net->net.bw < bw)
        return 0;
    if (g->cross_nic && (g->n_channels & 1) && net->id != g->inter[(g->n_channels - 1) * 2 + 1])
        return 0;
    return 1;
}

/* NCCL 2.22.3 ncclTopoSearchRecNet: start the next channel at each candidate NET. */
static tp_status rec_net(tp_search_ctx *s, tp_graph *g, int back_to_net, int back_to_first,
                         int *time)
{
    const int bw = (int)g->bw_inter; /* NCCL keeps it in an int */
    int count, found = 0;
    const int *list;
    tp_status st = tp_search__select_nets(s, g->type_inter, -1, &list, &count);
    int heads = tp_search__head_pattern(g->pattern);
    for (int i = 0; i < count && st == TP_OK; i++) {
        if (heads && found)
            continue;
        int n = list[(g->n_channels + i) % count];
        tp_node *net = &s->sys->nodes[TP_NODE_NET].nodes[n];
        if (!net_may_open(s, g, n, bw))
            continue;
        g->inter[g->n_channels * 2] = net->id;
        s->start_net[g->n_channels] = n;
        g->latency_inter = net->net.latency;
        net_port_bw(s, net, bw, 1);
        int leak = 0, back[2] = {back_to_net, back_to_first};
        if (heads)
            st = net_head_step(s, g, n, count, back, &found, &leak, time);
        else
            st = net_chain_step(s, g, n, back_to_net, back_to_first, time);
        if (!leak)
            net_port_bw(s, net, bw, -1);
    }
    return st;
}

tp_status tp_search__rec(tp_search_ctx *s, tp_graph *g, int *time)
{
    int btn, btf;
    search_params(s, g->pattern, &btn, &btf);
    if (s->n_nets) {
        /* NCCL 2.22.3 ignores the status of ncclTopoSearchRecNet; we don't. */
        return rec_net(s, g, btn, btf, time);
    }
    if (g->pattern == TP_PATTERN_NVLS)
        return try_gpu(s, g, 0, btn, btf, 0, time, -1, -1, g->n_channels);
    tp_status st;
    if (g->n_channels == 0) {
        st = try_gpu(s, g, 0, btn, btf, TP_ORDER_PCI, time, -1, -1, 0);
    } else {
        int gi;
        if ((st = replay_gpu(s, g, -1, &gi)) != TP_OK)
            return st;
        st = try_gpu(s, g, 0, btn, btf, TP_ORDER_REPLAY, time, -1, -1, gi);
    }
    if (st != TP_OK || (g->same_channels != 0 && g->n_channels != 0))
        return st;
    /* Starting afresh does not read the previous channel. */
    return memo_sub(s, g, SUB_FREE_INTRA, 0, 0, time);
}

/* Channel from scratch, intra-node: from every GPU in turn. */
static tp_status free_intra(tp_search_ctx *s, tp_graph *g, int *time)
{
    int btn, btf;
    search_params(s, g->pattern, &btn, &btf);
    tp_status st = TP_OK;
    for (int gi = 0; gi < s->n_gpus && st == TP_OK; gi++)
        st = try_gpu(s, g, 0, btn, btf, 0, time, -1, -1, gi);
    return st;
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
