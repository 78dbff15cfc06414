/*
 * Passes that cannot beat the best graph. NCCL 2.22.3's ladder runs many
 * first passes at settings where no graph could be better than the one
 * already saved (say 4 x 12 GB/s saved, then a pass at 10 GB/s with four
 * 100G NICs: at most 4 channels). Such a pass, or the rest of a pass once its
 * best graph can no longer be beaten, has one effect left: the steps it takes
 * from the global budget. It is cut short (tp_search__stop) and those steps
 * are settled only if the ladder's global budget check ever depends on them.
 *
 * The bound on the channels of any graph a pass can build, from the link and
 * NET values at its start (milli mode, where values are exact):
 *   - with NETs, each channel takes (int)bw_inter from every NET of its start
 *     NET's port and keeps it while later channels are searched, so a port
 *     group starts at most floor(max NET bw / bw) channels;
 *   - each channel enters every GPU through the last hop of a route into it
 *     (from a NET, or from the previous GPU; a ring without NETs closes back
 *     into its first GPU) and keeps at least the smallest amount of the pass
 *     on that link, so GPU g takes at most the sum over its entry links of
 *     floor(value / smallest amount) channels. A tree without NETs does not
 *     enter its first GPU: any two GPUs together still bound its channels.
 *   - no channel at all when none can start inside some switch around each
 *     GPU (search_sides.c).
 * Other reservations only take more. A graph of c channels at bw is better
 * than the saved one only if c x bw is larger, or equal with fewer hops
 * (ncclTopoCompareGraphs); c channels have at least c times the fewest hops
 * a channel can have, which rules ties out.
 */
#include "search/accel/accel.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

/* No bound from this GPU (some route into it has no hop to count). */
#define UNBOUNDED INT32_MAX

static void add_entry_link(tp_accel *a, int g, const tp_cpath *cp)
{
    if (cp->count == 0) {
        a->bound.open[g] = 1;
        return;
    }
    int li = tp_accel__mhop(a, &cp->hops[cp->count - 1])->li;
    int *links = a->bound.links + (size_t)g * (size_t)a->bound.width;
    for (int i = 0; i < a->bound.count[g]; i++)
        if (links[i] == li)
            return;
    if (a->bound.count[g] < a->bound.width)
        links[a->bound.count[g]++] = li;
    else
        a->bound.open[g] = 1;
}

static int min_route_hops(const tp_accel *a, int from, int to)
{
    const tp_cpath *cp = a->s->routes[from][to];
    int n1 = a->s->sys->nodes[from].count, n2 = a->s->sys->nodes[to].count, best = INT32_MAX;
    for (int i = 0; cp && i < n1; i++)
        for (int j = 0; j < n2; j++)
            if (!(from == to && i == j) && cp[i * n2 + j].count < best)
                best = cp[i * n2 + j].count;
    return best == INT32_MAX ? 0 : best;
}

/* The fewest hops of a route from side to the other GPUs, and back (hops[0], hops[1]). */
static void crossing_hops(const tp_accel *a, uint64_t side, int *hops)
{
    int n = a->s->n_gpus;
    hops[0] = hops[1] = INT32_MAX;
    for (int g = 0; g < n; g++) {
        for (int h = 0; h < n; h++) {
            int dir = (side >> g) & 1 ? 0 : 1;
            if (((side >> g) & 1) == ((side >> h) & 1))
                continue;
            int count = a->s->routes[TP_NODE_GPU][TP_NODE_GPU][g * n + h].count;
            if (count < hops[dir])
                hops[dir] = count;
        }
    }
}

/* n elements (at least one) of `size` bytes from the bound's tables, as they come. */
static void *bound_table(tp_accel *a, size_t n, size_t size)
{
    return tp_arena_alloc(&a->bound.tables, (n ? n : 1) * size);
}

/* Bridge indices by side size, smallest first (stable): the order disjoint sides are picked in. */
static tp_status order_bridges(tp_accel *a)
{
    a->bound.bridge_order = bound_table(a, (size_t)a->bound.n_bridges, sizeof(int));
    if (!a->bound.bridge_order)
        return TP_ERR_NOMEM;
    int k = 0;
    for (int size = 1; size <= a->s->n_gpus; size++)
        for (int i = 0; i < a->bound.n_bridges; i++)
            if (tp_accel__popcount(a->bound.bridge_side[i]) == size)
                a->bound.bridge_order[k++] = i;
    return TP_OK;
}

/*
 * Hubs: bridge links that every route out of k >= 2 disjoint bridge sides
 * takes (with P2P through the CPU, the switch uplink of a group of
 * switches). A channel leaves each of those sides by a step of its own, so
 * it takes the hub k times (a chain k - 1 times).
 */
static tp_status find_hubs(tp_accel *a, const uint64_t *reach, uint64_t all)
{
    int n = a->s->n_gpus;
    a->bound.hub_link = bound_table(a, (size_t)a->bound.n_bridges, sizeof(int));
    a->bound.hub_sides = bound_table(a, (size_t)a->bound.n_bridges, sizeof(int));
    if (!a->bound.hub_link || !a->bound.hub_sides)
        return TP_ERR_NOMEM;
    for (int b = 0; b < a->bound.n_bridges; b++) {
        const uint64_t *row = reach + (size_t)a->bound.bridge_link[b] * (size_t)n;
        uint64_t taken = 0;
        int k = 0;
        for (int j = 0; j < a->bound.n_bridges; j++) {
            uint64_t side = a->bound.bridge_side[a->bound.bridge_order[j]], other = all & ~side;
            if (side & taken)
                continue;
            int all_out = 1;
            for (int g = 0; g < n && all_out; g++)
                if (((side >> g) & 1) && (row[g] & other) != other)
                    all_out = 0;
            if (all_out) {
                taken |= side;
                k++;
            }
        }
        if (k >= 2) {
            a->bound.hub_link[a->bound.n_hubs] = a->bound.bridge_link[b];
            a->bound.hub_sides[a->bound.n_hubs++] = k;
        }
    }
    return TP_OK;
}

/*
 * Bridges: links every route from a GPU of one side X to a GPU of the
 * other side goes through (X: the GPUs with some route over the link).
 * A channel visits GPUs of both sides, so some step of it crosses over a
 * bridge of X or over one of the other side; a closed ring crosses both ways.
 */
static tp_status find_bridges(tp_accel *a)
{
    int n = a->s->n_gpus;
    if (n < 2 || n > 64)
        return TP_OK;
    uint64_t all = tp_accel__gpu_mask(n);
    uint64_t *reach = calloc((size_t)a->milli.n_links * (size_t)n, sizeof(*reach));
    a->bound.bridge_link = bound_table(a, (size_t)a->milli.n_links, sizeof(int));
    a->bound.bridge_side = bound_table(a, (size_t)a->milli.n_links, sizeof(uint64_t));
    a->bound.bridge_hops = bound_table(a, (size_t)a->milli.n_links, 2 * sizeof(int));
    if (!reach || !a->bound.bridge_link || !a->bound.bridge_side || !a->bound.bridge_hops) {
        free(reach);
        return TP_ERR_NOMEM;
    }
    for (int g = 0; g < n; g++)
        for (int h = 0; h < n; h++) {
            const tp_cpath *cp = &a->s->routes[TP_NODE_GPU][TP_NODE_GPU][g * n + h];
            for (int k = 0; g != h && k < cp->count; k++)
                reach[(size_t)tp_accel__mhop(a, &cp->hops[k])->li * (size_t)n + (size_t)g] |= 1ULL
                                                                                              << h;
        }
    for (int l = 0; l < a->milli.n_links; l++) {
        const uint64_t *row = reach + (size_t)l * (size_t)n;
        uint64_t side = 0;
        for (int g = 0; g < n; g++)
            if (row[g])
                side |= 1ULL << g;
        uint64_t other = all & ~side;
        int complete = side != 0 && other != 0;
        for (int g = 0; g < n && complete; g++)
            if (((side >> g) & 1) && (row[g] & other) != other)
                complete = 0;
        if (complete) {
            a->bound.bridge_link[a->bound.n_bridges] = l;
            a->bound.bridge_side[a->bound.n_bridges] = side;
            crossing_hops(a, side, &a->bound.bridge_hops[2 * a->bound.n_bridges]);
            a->bound.n_bridges++;
        }
    }
    tp_status st = order_bridges(a);
    if (st == TP_OK)
        st = find_hubs(a, reach, all);
    free(reach);
    return st;
}

/* For each bridge, the bridges across from it: their side is its far side (the way back). */
static tp_status find_ways_back(tp_accel *a)
{
    tp_bound *b = &a->bound;
    int n = a->s->n_gpus;
    uint64_t all = b->n_bridges == 0 ? 0 : tp_accel__gpu_mask(n); /* n <= 64 then */
    size_t pairs = 0;
    for (int i = 0; i < b->n_bridges; i++)
        for (int j = 0; j < b->n_bridges; j++)
            pairs += b->bridge_side[j] == (all & ~b->bridge_side[i]);
    b->back_first = bound_table(a, (size_t)b->n_bridges + 1, sizeof(int));
    b->back = bound_table(a, pairs, sizeof(int));
    if (!b->back_first || !b->back)
        return TP_ERR_NOMEM;
    int k = 0;
    for (int i = 0; i < b->n_bridges; i++) {
        b->back_first[i] = k;
        for (int j = 0; j < b->n_bridges; j++)
            if (b->bridge_side[j] == (all & ~b->bridge_side[i]))
                b->back[k++] = j;
    }
    b->back_first[b->n_bridges] = k;
    return TP_OK;
}

static void crossing_extra(tp_accel *a);

tp_status tp_accel__bound_init(tp_accel *a, tp_error *err)
{
    int n = a->s->n_gpus > 0 ? a->s->n_gpus : 1;
    a->bound.width = a->s->n_gpus + a->s->n_nets;
    a->bound.links =
        bound_table(a, (size_t)n * (size_t)(a->bound.width ? a->bound.width : 1), sizeof(int));
    a->bound.count = tp_arena_zalloc(&a->bound.tables, (size_t)n * sizeof(int));
    a->bound.open = tp_arena_zalloc(&a->bound.tables, (size_t)n);
    if (!a->bound.links || !a->bound.count || !a->bound.open)
        return tp_fail_nomem(err);
    for (int g = 0; g < a->s->n_gpus; g++) {
        for (int i = 0; i < a->s->n_gpus; i++)
            if (i != g)
                add_entry_link(a, g, &a->s->routes[TP_NODE_GPU][TP_NODE_GPU][i * a->s->n_gpus + g]);
        for (int i = 0; i < a->s->n_nets; i++)
            add_entry_link(a, g, &a->s->routes[TP_NODE_NET][TP_NODE_GPU][i * a->s->n_gpus + g]);
    }
    if (find_bridges(a) != TP_OK || find_ways_back(a) != TP_OK || tp_accel__sides_init(a) != TP_OK)
        return tp_fail_nomem(err);
    a->bound.hops_gpu_gpu = min_route_hops(a, TP_NODE_GPU, TP_NODE_GPU);
    crossing_extra(a);
    a->bound.hops_net_gpu = a->s->n_nets ? min_route_hops(a, TP_NODE_NET, TP_NODE_GPU) : 0;
    a->bound.hops_gpu_net = a->s->n_nets ? min_route_hops(a, TP_NODE_GPU, TP_NODE_NET) : 0;
    return TP_OK;
}

void tp_accel__bound_free(tp_accel *a)
{
    tp_arena_free(&a->bound.tables);
    a->bound.bridge_hops = NULL;
    a->bound.bridge_order = NULL;
    a->bound.back_first = a->bound.back = NULL;
    a->bound.hub_link = a->bound.hub_sides = NULL;
    a->bound.n_hubs = 0;
    a->bound.links = a->bound.count = a->bound.bridge_link = NULL;
    a->bound.open = NULL;
    a->bound.bridge_side = NULL;
    a->bound.n_bridges = 0;
    tp_accel__sides_free(a);
    free(a->bound.cuts);
    a->bound.cuts = NULL;
    a->bound.n_cuts = a->bound.cuts_cap = 0;
}

/* Channels the NET port groups can start: sum of floor(max NET bw / bw). */
static int64_t net_bound(const tp_accel *a, int bw)
{
    if (a->s->n_nets == 0 || bw <= 0)
        return INT64_MAX;
    const tp_node *nets = a->s->sys->nodes[TP_NODE_NET].nodes;
    int64_t total = 0;
    for (int n = 0; n < a->s->n_nets; n++) {
        float max_bw = 0;
        int first = 1;
        for (int k = a->s->port_first[n]; k < a->s->port_first[n + 1]; k++) {
            int i = a->s->port_nets[k];
            first &= i >= n; /* count each group once, at its lowest index */
            if (nets[i].net.bw > max_bw)
                max_bw = nets[i].net.bw;
        }
        if (first && max_bw >= bw)
            total += (int64_t)floor((double)max_bw / bw);
    }
    return total;
}

/* Channels that can enter GPU g: sum over its entry links of floor(value / a_min). */
static int64_t gpu_bound(const tp_accel *a, int g, int32_t a_min)
{
    if (a->bound.open[g])
        return UNBOUNDED;
    const int *links = a->bound.links + (size_t)g * (size_t)a->bound.width;
    int64_t total = 0;
    for (int i = 0; i < a->bound.count[g]; i++)
        if (a->milli.link_m[links[i]] > 0)
            total += a->milli.link_m[links[i]] / a_min;
    return total;
}

/*
 * The smallest amount a route into a GPU takes: bw_intra from a GPU, and
 * bw_inter from a NET (the halved Balanced Tree amount only leaves to NETs).
 */
static int32_t smallest_entry(const tp_accel *a, const tp_amount *amounts)
{
    int32_t intra = amounts[0].v[0], inter = amounts[1].v[0];
    return a->s->n_nets && inter < intra ? inter : intra;
}

/*
 * Upper bound on the channels the GPUs let through: each channel enters
 * every GPU (but the first of a NET-less tree: then any two GPUs together
 * bound it), and all GPUs together take `entries` routes per channel.
 */
static int64_t gpus_bound(const tp_accel *a, const tp_graph *g, const tp_amount *amounts)
{
    int32_t a_min = smallest_entry(a, amounts);
    if (a->s->n_gpus < 2 || a_min <= 0)
        return INT64_MAX;
    int64_t lo1 = INT64_MAX, lo2 = INT64_MAX, sum = 0;
    for (int i = 0; i < a->s->n_gpus; i++) {
        int64_t b = gpu_bound(a, i, a_min);
        sum = b == UNBOUNDED || sum == INT64_MAX ? INT64_MAX : sum + b;
        if (b < lo1) {
            lo2 = lo1;
            lo1 = b;
        } else if (b < lo2) {
            lo2 = b;
        }
    }
    int all_entered = a->s->n_nets > 0 || g->pattern == TP_PATTERN_RING;
    int64_t bound = all_entered ? lo1 : lo2 == INT64_MAX ? INT64_MAX : lo1 + lo2;
    int64_t entries = all_entered ? a->s->n_gpus : a->s->n_gpus - 1;
    if (sum != INT64_MAX && sum / entries < bound)
        bound = sum / entries;
    return bound;
}

/* Channels the bridges and hubs let through (see find_bridges, find_hubs). */
static int64_t bridges_bound(const tp_accel *a, const tp_graph *g, const tp_amount *amounts)
{
    int32_t am = amounts[0].v[0]; /* GPU to GPU routes take bw_intra, or more */
    int64_t bound = INT64_MAX;
    int closed = a->s->n_nets == 0 && g->pattern == TP_PATTERN_RING;
    for (int i = 0; i < a->bound.n_hubs && am > 0; i++) {
        int32_t m = a->milli.link_m[a->bound.hub_link[i]];
        int64_t takes = closed ? a->bound.hub_sides[i] : a->bound.hub_sides[i] - 1;
        int64_t cap = m > 0 ? m / am / takes : 0;
        if (cap < bound)
            bound = cap;
    }
    for (int i = 0; i < a->bound.n_bridges && am > 0; i++) {
        int64_t cap = a->milli.link_m[a->bound.bridge_link[i]] / am;
        if (a->milli.link_m[a->bound.bridge_link[i]] < 0)
            cap = 0;
        if (closed && cap < bound)
            bound = cap;
        for (int k = a->bound.back_first[i]; !closed && k < a->bound.back_first[i + 1]; k++) {
            int j = a->bound.back[k]; /* the way back across bridge i */
            int32_t m = a->milli.link_m[a->bound.bridge_link[j]];
            int64_t back = m > 0 ? m / am : 0;
            if (cap + back < bound)
                bound = cap + back;
        }
    }
    return bound;
}

/* At most this many channels in any graph of a pass of g reserving `amounts`. */
static int channel_bound(const tp_accel *a, const tp_graph *g, const tp_amount *amounts)
{
    int64_t bound = g->max_channels;
    int64_t bb = bridges_bound(a, g, amounts);
    if (bb < bound)
        bound = bb;
    int64_t nb = net_bound(a, (int)g->bw_inter), gb = gpus_bound(a, g, amounts);
    if (nb < bound)
        bound = nb;
    if (gb < bound)
        bound = gb;
    return (int)bound;
}

/* Most disjoint bridge sides whose routes out take at least t hops (smallest sides first). */
static int disjoint_sides(const tp_accel *a, int t)
{
    uint64_t taken = 0;
    int count = 0;
    for (int j = 0; j < a->bound.n_bridges; j++) {
        int i = a->bound.bridge_order[j];
        if (a->bound.bridge_hops[2 * i] >= t && !(a->bound.bridge_side[i] & taken)) {
            taken |= a->bound.bridge_side[i];
            count++;
        }
    }
    return count;
}

/*
 * Hops a channel spends beyond hops_gpu_gpu per route between GPUs, for a
 * closed ring (extra[1]) and a chain (extra[0]). A channel leaves each of k
 * disjoint sides by a step of its own, so at least k of its steps take t
 * hops or more when those sides' routes out all do; summed over the
 * thresholds t (layer by layer). A chain may end inside a side and never
 * leave it: it is owed k - 1 such steps.
 */
static void crossing_extra(tp_accel *a)
{
    int prev = a->bound.hops_gpu_gpu;
    a->bound.cross_extra[0] = a->bound.cross_extra[1] = 0;
    for (;;) {
        int t = INT32_MAX;
        for (int i = 0; i < a->bound.n_bridges; i++)
            if (a->bound.bridge_hops[2 * i] > prev && a->bound.bridge_hops[2 * i] < t)
                t = a->bound.bridge_hops[2 * i];
        if (t == INT32_MAX)
            break;
        int k = disjoint_sides(a, t);
        a->bound.cross_extra[1] += k * (t - prev);
        a->bound.cross_extra[0] += (k > 0 ? k - 1 : 0) * (t - prev);
        prev = t;
    }
}

/* At least this many hops in any channel of g. */
static int channel_hops(const tp_accel *a, const tp_graph *g)
{
    int closes = a->s->n_nets == 0 && g->pattern == TP_PATTERN_RING;
    int steps = closes ? a->s->n_gpus : a->s->n_gpus - 1; /* GPU to GPU routes of a channel */
    int nets = a->s->n_nets ? a->bound.hops_net_gpu + a->bound.hops_gpu_net : 0;
    return steps * a->bound.hops_gpu_gpu + (steps >= 2 ? a->bound.cross_extra[closes] : 0) + nets;
}

void tp_accel__bound_begin(tp_accel *a, const tp_graph *g, int enabled)
{
    a->bound.cut_on = enabled && a->milli.on && !tp_search__head_pattern(g->pattern);
    if (!a->bound.cut_on)
        return;
    a->bound.channel_bound = channel_bound(a, g, a->milli.amounts);
    a->bound.channel_hops = channel_hops(a, g);
    /* The sides' proof is checked last: it only matters when the bounds above leave hope. */
    a->bound.only_sides = 0;
    if (tp_accel__can_beat(a, g) && tp_accel__no_start(a, g, a->milli.amounts)) {
        a->bound.channel_bound = 0;
        a->bound.only_sides = 1;
    }
}

/* Whether a graph of c channels at most, each of `hops` hops at least, may beat the saved one. */
static int beatable(const tp_accel *a, const tp_graph *g, int c, int hops)
{
    const tp_graph *ref = a->s->save;
    if (c < 1 || c < g->min_channels)
        return 0;
    /* Values grow with the channel count: the largest count decides (as NCCL multiplies). */
    float value = c * g->bw_intra, best = ref->n_channels * ref->bw_intra;
    if (value > best)
        return 1;
    if (value < best)
        return 0;
    return g->pattern == ref->pattern && g->cross_nic == ref->cross_nic &&
           (int64_t)c * hops < ref->n_hops;
}

int tp_accel__hopeless(void *state, const tp_graph *g)
{
    tp_accel *a = state;
    tp_amount amounts[3];
    if (!(a->use & TP_ACCEL_BOUND))
        return 0;
    if (!a->milli.capable || !a->milli.link_m_ok || tp_search__head_pattern(g->pattern) ||
        !tp_accel__milli_amounts(a, g, amounts))
        return 0;
    return !beatable(a, g, channel_bound(a, g, amounts), channel_hops(a, g)) ||
           tp_accel__no_start(a, g, amounts);
}

/*
 * A hopeless pass is cut after cut_cap steps. One that only the sides show
 * hopeless (no channel can start, search_sides.c) often fails within its
 * first steps: it runs up to the first settling round's cap, so the short
 * ones end whole and the pass memory knows them (a cut pass is not known,
 * and is charged its whole budget until settled).
 */
int tp_accel__cut_cap(const tp_accel *a, const tp_graph *g)
{
    const tp_bound *b = &a->bound;
    if (!b->cut_on || tp_accel__can_beat(a, g))
        return -1;
    if (b->only_sides && b->cut_cap > 0 && b->cut_cap < TP_SETTLE_FIRST_CAP)
        return TP_SETTLE_FIRST_CAP;
    return b->cut_cap;
}

int tp_accel__can_beat(const tp_accel *a, const tp_graph *g)
{
    return beatable(a, g, a->bound.channel_bound, a->bound.channel_hops);
}

int tp_accel__cut_known(tp_accel *a, const tp_graph *g, int *time)
{
    a->bound.copies_at_begin = a->memo.n_copies;
    int left;
    if (!(a->use & TP_ACCEL_BOUND) || !tp_accel__pass_cut_find(a, g, &left))
        return 0;
    /* The pass saved nothing then and cannot now (the best graph only got better): it was
     * hopeless, and what it had left after its first steps is all it can have left. */
    *time = left;
    tp_search__stop(a->s, time, TP_ACCEL_CUT_WHY);
    return 1;
}

void tp_accel__bound_pass_end(tp_accel *a, const tp_graph *g)
{
    tp_bound *b = &a->bound;
    int left, cut = tp_search__stopped(a->s, &left) && left >= 0;
    b->pending.left = -1;
    if (cut) {
        b->pending.settings = tp_graph__settings(g);
        b->pending.left = left;
    }
    /* Remembered when it saved nothing: a pass alike is then cut as far (tp_accel__cut_known). */
    tp_accel__pass_cut_store(a, cut && a->memo.n_copies == b->copies_at_begin ? left : -1);
}

void tp_accel__bound_forget(tp_accel *a)
{
    a->bound.n_cuts = 0;
    a->bound.slack = 0;
    a->bound.pending.left = -1;
}

/* What re-running a cut pass showed: its exact steps (settled) or that it was cut again. */
typedef struct settle_outcome {
    int settled;
    int left; /* settled: the budget it left; cut again: the most it can have left */
} settle_outcome;

/*
 * Whether two cut passes search alike: the settings their steps follow
 * from. Every waiting cut pass starts from the same link and NET values
 * (milli passes give everything back; a float pass settles them first)
 * and saves nothing, so the best graph plays no part. The ladder repeats
 * settings (the P2C rung searches as PXB).
 */
static int alike_but_speeds(const tp_graph_settings *x, const tp_graph_settings *y)
{
    return x->pattern == y->pattern && x->cross_nic == y->cross_nic && x->coll_net == y->coll_net &&
           x->min_channels == y->min_channels && x->max_channels == y->max_channels &&
           x->type_intra == y->type_intra && x->type_inter == y->type_inter &&
           x->same_channels == y->same_channels && x->n_hops == y->n_hops;
}

static int search_alike(const tp_graph_settings *x, const tp_graph_settings *y)
{
    return alike_but_speeds(x, y) && x->bw_intra == y->bw_intra && x->bw_inter == y->bw_inter;
}

/*
 * The speeds of waiting cut passes alike but slower than x (one speed each
 * way, as shadows need), fastest first, distinct: a whole re-run of x follows
 * them as shadows (search_shadow.c), which records those it agrees with in
 * the pass memory. Their passes save nothing, as x's: the shadows' argument
 * holds for them, and they are then settled from the memory.
 */
static int slower_alike(const tp_bound *b, const tp_graph_settings *x, float *speeds, int max)
{
    int count = 0;
    if (x->bw_intra != x->bw_inter)
        return 0;
    for (size_t k = 0; k < b->n_cuts; k++) {
        const tp_graph_settings *y = &b->cuts[k].settings;
        float bw = y->bw_intra;
        if (!alike_but_speeds(x, y) || y->bw_inter != bw || !(bw < x->bw_intra))
            continue;
        int at = 0;
        while (at < count && speeds[at] > bw)
            at++;
        if ((at < count && speeds[at] == bw) || at == max)
            continue;
        for (int j = count < max ? count : max - 1; j > at; j--)
            speeds[j] = speeds[j - 1];
        speeds[at] = bw;
        if (count < max)
            count++;
    }
    return count;
}

/* Cut pass i takes outcome out: settled (its exact steps to the global budget, and it leaves
 * the list) or cut again (what it can still have left only shrinks). */
static void take_outcome(tp_bound *b, size_t i, settle_outcome out, int64_t *global_timeout)
{
    if (out.settled) {
        *global_timeout += out.left;
        b->slack -= b->cuts[i].left;
        b->cuts[i] = b->cuts[--b->n_cuts];
        return;
    }
    int left = out.left < b->cuts[i].left ? out.left : b->cuts[i].left;
    b->slack -= b->cuts[i].left - left;
    b->cuts[i].left = left;
    b->cuts[i].round_cap = b->settle_cap;
}

/* Run cut pass i again (with g's graph), exploring at most settle_cap steps (-1: all). */
static tp_status rerun_cut(tp_accel *a, tp_graph *g, size_t i, settle_outcome *out)
{
    tp_graph__set_settings(g, &a->bound.cuts[i].settings);
    int time = tp_search__step_budget(g);
    tp_search__reset_pass(a->s, g);
    if (!tp_accel__begin(a, g))
        return tp_fail(a->s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: cut pass not exact");
    float speeds[TP_SHADOWS];
    int n = a->bound.settle_cap == -1
                ? slower_alike(&a->bound, &a->bound.cuts[i].settings, speeds, TP_SHADOWS)
                : 0;
    const tp_ladder_pass first = {.number = 1, .lower = speeds, .n_lower = n};
    tp_status st = tp_accel__run_pass(a, g, &first, &time, 1);
    int left;
    if (st == TP_OK && tp_search__stopped(a->s, &left)) {
        *out = (settle_outcome){.settled = 0, .left = left};
        return TP_OK;
    }
    if (st == TP_OK && time < 0)
        return tp_fail(a->s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: cut pass saved");
    *out = (settle_outcome){.settled = 1, .left = time};
    return st;
}

/* Settle cut pass i, and with it every waiting pass alike. */
static tp_status settle_one(tp_accel *a, tp_graph *g, size_t i, int64_t *global_timeout)
{
    tp_bound *b = &a->bound;
    const tp_graph_settings settings = b->cuts[i].settings;
    settle_outcome out = {0};
    tp_status st = rerun_cut(a, g, i, &out);
    if (st != TP_OK)
        return st;
    /* From the top down: a settled pass takes the last one's place, already looked at. */
    for (size_t k = b->n_cuts; k-- > 0;)
        if (search_alike(&b->cuts[k].settings, &settings))
            take_outcome(b, k, out, global_timeout);
    return TP_OK;
}

/* The waiting cut pass a round at cap re-runs next: the fastest not re-run at cap yet (the
 * slower ones alike follow it as shadows), the earliest of equals; -1 when none is left. */
static ptrdiff_t next_in_round(const tp_bound *b, int cap)
{
    ptrdiff_t next = -1;
    for (size_t k = 0; k < b->n_cuts; k++)
        if (b->cuts[k].round_cap != cap &&
            (next < 0 || b->cuts[k].settings.bw_intra > b->cuts[next].settings.bw_intra))
            next = (ptrdiff_t)k;
    return next;
}

static int budget_sign_open(const tp_bound *b, int64_t global_timeout)
{
    return global_timeout < 0 && global_timeout + b->slack >= 0;
}

/*
 * Settle cut passes: all of them, or until the sign of the global budget
 * is known. Short searches settle first: a first round re-runs each pass
 * for TP_SETTLE_FIRST_CAP steps, which ends the short ones, then the rest
 * run whole. A pass longer than that mostly spends its whole budget (the
 * hopeless passes of 2.27.5's crossNic 2 ladder): rounds in between would
 * only re-run it again. They start from the same link values (milli passes
 * give everything back) and save nothing, as when cut.
 */
/*
 * Cut passes must be settled now: NCCL 2.22.3 reads the global budget's
 * sign (only once a graph is saved: globalTimeout < 0 && nChannels) and
 * the cuts' slack leaves it open. Till then they wait; they save nothing,
 * so they take the same steps when settled later.
 */
static int settle_now(const tp_accel *a, int64_t global_timeout)
{
    return budget_sign_open(&a->bound, global_timeout) && a->s->save->n_channels != 0;
}

static tp_status settle_cuts(tp_accel *a, tp_graph *g, int64_t *global_timeout, int all)
{
    tp_bound *b = &a->bound;
    if (!all && !settle_now(a, *global_timeout))
        return TP_OK;
    tp_graph_settings current = tp_graph__settings(g);
    tp_status st = TP_OK;
    static const int round_caps[] = {TP_SETTLE_FIRST_CAP, -1}; /* -1: whole */
    for (size_t r = all ? 1 : 0; r < ARRAY_LEN(round_caps) && st == TP_OK && b->n_cuts; r++) {
        const int cap = round_caps[r];
        b->settle_cap = cap;
        for (ptrdiff_t i; st == TP_OK && (all || budget_sign_open(b, *global_timeout)) &&
                          (i = next_in_round(b, cap)) >= 0;)
            st = settle_one(a, g, (size_t)i, global_timeout);
        if (!all && !budget_sign_open(b, *global_timeout))
            break;
    }
    b->settle_cap = -1;
    tp_graph__set_settings(g, &current);
    tp_search__event(a->s->save, TP_EV_SETTLE, "cut passes re-run for the global step budget", g);
    return st;
}

tp_status tp_accel__bound_budget(tp_accel *a, tp_graph *g, int64_t *global_timeout, int all)
{
    tp_bound *b = &a->bound;
    if (all)
        return b->n_cuts ? settle_cuts(a, g, global_timeout, 1) : TP_OK;
    if (b->pending.left >= 0) {
        if (tp_grow((void **)&b->cuts, &b->cuts_cap, b->n_cuts + 1, sizeof(*b->cuts), a->s->err) !=
            TP_OK)
            return TP_ERR_NOMEM;
        b->cuts[b->n_cuts] = b->pending;
        b->cuts[b->n_cuts++].round_cap = 0;
        b->slack += b->pending.left;
        b->pending.left = -1;
    }
    return settle_cuts(a, g, global_timeout, 0);
}
