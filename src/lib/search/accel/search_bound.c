/*
 * Passes that cannot beat the best graph. NCCL 2.22.3's ladder runs many
 * first passes at settings where no graph could be better than the one
 * already saved (say 4 x 12 GB/s saved, then a pass at 10 GB/s with four
 * 100G NICs: at most 4 channels). Such a pass, or the rest of a pass once its
 * best graph can no longer be beaten, has one effect left: the steps it takes
 * from the global budget. The ladder (search.c) cuts it short and settles
 * those steps only if the global budget check ever depends on them.
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
 * Other reservations only take more. A graph of c channels at bw is better
 * than the saved one only if c x bw is larger, or equal with fewer hops
 * (ncclTopoCompareGraphs); c channels have at least c times the fewest hops
 * a channel can have, which rules ties out.
 */
#include "search/search_int.h"

#include <math.h>
#include <stdlib.h>

/* No bound from this GPU (some route into it has no hop to count). */
#define UNBOUNDED INT32_MAX

static void add_entry_link(tp_search_ctx *s, int g, const tp_cpath *cp)
{
    if (cp->count == 0) {
        s->bound_open[g] = 1;
        return;
    }
    int li = cp->hops[cp->count - 1].li;
    int *links = s->bound_links + (size_t)g * (size_t)s->bound_width;
    for (int i = 0; i < s->bound_count[g]; i++)
        if (links[i] == li)
            return;
    if (s->bound_count[g] < s->bound_width)
        links[s->bound_count[g]++] = li;
    else
        s->bound_open[g] = 1;
}

static int min_route_hops(const tp_search_ctx *s, int from, int to)
{
    const tp_cpath *cp = s->routes[from][to];
    int n1 = s->sys->nodes[from].count, n2 = s->sys->nodes[to].count, best = INT32_MAX;
    for (int i = 0; cp && i < n1; i++)
        for (int j = 0; j < n2; j++)
            if (!(from == to && i == j) && cp[i * n2 + j].count < best)
                best = cp[i * n2 + j].count;
    return best == INT32_MAX ? 0 : best;
}

/* The fewest hops of a route from side to the other GPUs, and back (hops[0], hops[1]). */
static void crossing_hops(const tp_search_ctx *s, uint64_t side, int *hops)
{
    int n = s->n_gpus;
    hops[0] = hops[1] = INT32_MAX;
    for (int g = 0; g < n; g++) {
        for (int h = 0; h < n; h++) {
            int dir = (side >> g) & 1 ? 0 : 1;
            if (((side >> g) & 1) == ((side >> h) & 1))
                continue;
            int count = s->routes[TP_NODE_GPU][TP_NODE_GPU][g * n + h].count;
            if (count < hops[dir])
                hops[dir] = count;
        }
    }
}

static int popcount64(uint64_t v);

/* Bridge indices by side size, smallest first (stable): the order disjoint sides are picked in. */
static tp_status order_bridges(tp_search_ctx *s)
{
    s->bridge_order = malloc((size_t)(s->n_bridges ? s->n_bridges : 1) * sizeof(int));
    if (!s->bridge_order)
        return TP_ERR_NOMEM;
    int k = 0;
    for (int size = 1; size <= s->n_gpus; size++)
        for (int i = 0; i < s->n_bridges; i++)
            if (popcount64(s->bridge_side[i]) == size)
                s->bridge_order[k++] = i;
    return TP_OK;
}

/*
 * Hubs: bridge links that every route out of k >= 2 disjoint bridge sides
 * takes (with P2P through the CPU, the switch uplink of a group of
 * switches). A channel leaves each of those sides by a step of its own, so
 * it takes the hub k times (a chain k - 1 times).
 */
static tp_status find_hubs(tp_search_ctx *s, const uint64_t *reach, uint64_t all)
{
    int n = s->n_gpus;
    s->hub_link = malloc((size_t)(s->n_bridges ? s->n_bridges : 1) * sizeof(int));
    s->hub_sides = malloc((size_t)(s->n_bridges ? s->n_bridges : 1) * sizeof(int));
    if (!s->hub_link || !s->hub_sides)
        return TP_ERR_NOMEM;
    for (int b = 0; b < s->n_bridges; b++) {
        const uint64_t *row = reach + (size_t)s->bridge_link[b] * (size_t)n;
        uint64_t taken = 0;
        int k = 0;
        for (int j = 0; j < s->n_bridges; j++) {
            uint64_t side = s->bridge_side[s->bridge_order[j]], other = all & ~side;
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
            s->hub_link[s->n_hubs] = s->bridge_link[b];
            s->hub_sides[s->n_hubs++] = k;
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
static tp_status find_bridges(tp_search_ctx *s)
{
    int n = s->n_gpus;
    if (n < 2 || n > 64)
        return TP_OK;
    uint64_t all = n == 64 ? ~0ULL : (1ULL << n) - 1;
    uint64_t *reach = calloc((size_t)s->n_links * (size_t)n, sizeof(*reach));
    s->bridge_link = malloc((size_t)(s->n_links ? s->n_links : 1) * sizeof(int));
    s->bridge_side = malloc((size_t)(s->n_links ? s->n_links : 1) * sizeof(uint64_t));
    s->bridge_hops = malloc((size_t)(s->n_links ? s->n_links : 1) * 2 * sizeof(int));
    if (!reach || !s->bridge_link || !s->bridge_side || !s->bridge_hops) {
        free(reach);
        return TP_ERR_NOMEM;
    }
    for (int g = 0; g < n; g++)
        for (int h = 0; h < n; h++) {
            const tp_cpath *cp = &s->routes[TP_NODE_GPU][TP_NODE_GPU][g * n + h];
            for (int k = 0; g != h && k < cp->count; k++)
                reach[(size_t)cp->hops[k].li * (size_t)n + (size_t)g] |= 1ULL << h;
        }
    for (int l = 0; l < s->n_links; l++) {
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
            s->bridge_link[s->n_bridges] = l;
            s->bridge_side[s->n_bridges] = side;
            crossing_hops(s, side, &s->bridge_hops[2 * s->n_bridges]);
            s->n_bridges++;
        }
    }
    tp_status st = order_bridges(s);
    if (st == TP_OK)
        st = find_hubs(s, reach, all);
    free(reach);
    return st;
}

static void crossing_extra(tp_search_ctx *s);

tp_status tp_search__bound_init(tp_search_ctx *s, tp_error *err)
{
    int n = s->n_gpus > 0 ? s->n_gpus : 1;
    s->bound_width = s->n_gpus + s->n_nets;
    s->bound_links =
        malloc((size_t)n * (size_t)(s->bound_width ? s->bound_width : 1) * sizeof(int));
    s->bound_count = calloc((size_t)n, sizeof(int));
    s->bound_open = calloc((size_t)n, sizeof(unsigned char));
    if (!s->bound_links || !s->bound_count || !s->bound_open)
        return tp_fail_nomem(err);
    for (int g = 0; g < s->n_gpus; g++) {
        for (int i = 0; i < s->n_gpus; i++)
            if (i != g)
                add_entry_link(s, g, &s->routes[TP_NODE_GPU][TP_NODE_GPU][i * s->n_gpus + g]);
        for (int i = 0; i < s->n_nets; i++)
            add_entry_link(s, g, &s->routes[TP_NODE_NET][TP_NODE_GPU][i * s->n_gpus + g]);
    }
    if (find_bridges(s) != TP_OK)
        return tp_fail_nomem(err);
    s->hops_gpu_gpu = min_route_hops(s, TP_NODE_GPU, TP_NODE_GPU);
    crossing_extra(s);
    s->hops_net_gpu = s->n_nets ? min_route_hops(s, TP_NODE_NET, TP_NODE_GPU) : 0;
    s->hops_gpu_net = s->n_nets ? min_route_hops(s, TP_NODE_GPU, TP_NODE_NET) : 0;
    return TP_OK;
}

void tp_search__bound_free(tp_search_ctx *s)
{
    free(s->bound_links);
    free(s->bound_count);
    free(s->bound_open);
    free(s->bridge_link);
    free(s->bridge_side);
    free(s->bridge_hops);
    s->bridge_hops = NULL;
    free(s->hub_link);
    free(s->hub_sides);
    free(s->bridge_order);
    s->bridge_order = NULL;
    s->hub_link = s->hub_sides = NULL;
    s->n_hubs = 0;
    s->bound_links = s->bound_count = s->bridge_link = NULL;
    s->bound_open = NULL;
    s->bridge_side = NULL;
    s->n_bridges = 0;
}

/* Channels the NET port groups can start: sum of floor(max NET bw / bw). */
static int64_t net_bound(const tp_search_ctx *s, int bw)
{
    if (s->n_nets == 0 || bw <= 0)
        return INT64_MAX;
    const tp_node *nets = s->sys->nodes[TP_NODE_NET].nodes;
    int64_t total = 0;
    for (int n = 0; n < s->n_nets; n++) {
        float max_bw = 0;
        int first = 1;
        for (int k = s->port_first[n]; k < s->port_first[n + 1]; k++) {
            int i = s->port_nets[k];
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
static int64_t gpu_bound(const tp_search_ctx *s, int g, int32_t a_min)
{
    if (s->bound_open[g])
        return UNBOUNDED;
    const int *links = s->bound_links + (size_t)g * (size_t)s->bound_width;
    int64_t total = 0;
    for (int i = 0; i < s->bound_count[g]; i++)
        if (s->link_m[links[i]] > 0)
            total += s->link_m[links[i]] / a_min;
    return total;
}

/*
 * The smallest amount a route into a GPU takes: bw_intra from a GPU, and
 * bw_inter from a NET (the halved Balanced Tree amount only leaves to NETs).
 */
static int32_t smallest_entry(const tp_search_ctx *s, const tp_amount *amounts)
{
    int32_t intra = amounts[0].v[0], inter = amounts[1].v[0];
    return s->n_nets && inter < intra ? inter : intra;
}

/*
 * Upper bound on the channels the GPUs let through: each channel enters
 * every GPU (but the first of a NET-less tree: then any two GPUs together
 * bound it), and all GPUs together take `entries` routes per channel.
 */
static int64_t gpus_bound(const tp_search_ctx *s, const tp_graph *g, const tp_amount *amounts)
{
    int32_t a_min = smallest_entry(s, amounts);
    if (s->n_gpus < 2 || a_min <= 0)
        return INT64_MAX;
    int64_t lo1 = INT64_MAX, lo2 = INT64_MAX, sum = 0;
    for (int i = 0; i < s->n_gpus; i++) {
        int64_t b = gpu_bound(s, i, a_min);
        sum = b == UNBOUNDED || sum == INT64_MAX ? INT64_MAX : sum + b;
        if (b < lo1) {
            lo2 = lo1;
            lo1 = b;
        } else if (b < lo2) {
            lo2 = b;
        }
    }
    int all_entered = s->n_nets > 0 || g->pattern == TP_PATTERN_RING;
    int64_t bound = all_entered ? lo1 : lo2 == INT64_MAX ? INT64_MAX : lo1 + lo2;
    int64_t entries = all_entered ? s->n_gpus : s->n_gpus - 1;
    if (sum != INT64_MAX && sum / entries < bound)
        bound = sum / entries;
    return bound;
}

/* Channels the bridges and hubs let through (see find_bridges, find_hubs). */
static int64_t bridges_bound(const tp_search_ctx *s, const tp_graph *g, const tp_amount *amounts)
{
    int32_t a = amounts[0].v[0]; /* GPU to GPU routes take bw_intra, or more */
    int64_t bound = INT64_MAX;
    int closed = s->n_nets == 0 && g->pattern == TP_PATTERN_RING;
    uint64_t all = s->n_gpus == 64 ? ~0ULL : (1ULL << s->n_gpus) - 1;
    for (int i = 0; i < s->n_hubs && a > 0; i++) {
        int32_t m = s->link_m[s->hub_link[i]];
        int64_t takes = closed ? s->hub_sides[i] : s->hub_sides[i] - 1;
        int64_t cap = m > 0 ? m / a / takes : 0;
        if (cap < bound)
            bound = cap;
    }
    for (int i = 0; i < s->n_bridges && a > 0; i++) {
        int64_t cap = s->link_m[s->bridge_link[i]] / a;
        if (s->link_m[s->bridge_link[i]] < 0)
            cap = 0;
        if (closed && cap < bound)
            bound = cap;
        for (int j = 0; !closed && j < s->n_bridges; j++) {
            int64_t back = s->link_m[s->bridge_link[j]] > 0 ? s->link_m[s->bridge_link[j]] / a : 0;
            if (s->bridge_side[j] == (all & ~s->bridge_side[i]) && cap + back < bound)
                bound = cap + back;
        }
    }
    return bound;
}

/* At most this many channels in any graph of a pass of g reserving `amounts`. */
static int channel_bound(const tp_search_ctx *s, const tp_graph *g, const tp_amount *amounts)
{
    int64_t bound = g->max_channels;
    int64_t bb = bridges_bound(s, g, amounts);
    if (bb < bound)
        bound = bb;
    int64_t nb = net_bound(s, (int)g->bw_inter), gb = gpus_bound(s, g, amounts);
    if (nb < bound)
        bound = nb;
    if (gb < bound)
        bound = gb;
    return (int)bound;
}

/* At least this many hops in any channel of g. */
static int popcount64(uint64_t v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Most disjoint bridge sides whose routes out take at least t hops (smallest sides first). */
static int disjoint_sides(const tp_search_ctx *s, int t)
{
    uint64_t taken = 0;
    int count = 0;
    for (int j = 0; j < s->n_bridges; j++) {
        int i = s->bridge_order[j];
        if (s->bridge_hops[2 * i] >= t && !(s->bridge_side[i] & taken)) {
            taken |= s->bridge_side[i];
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
static void crossing_extra(tp_search_ctx *s)
{
    int prev = s->hops_gpu_gpu;
    s->cross_extra[0] = s->cross_extra[1] = 0;
    for (;;) {
        int t = INT32_MAX;
        for (int i = 0; i < s->n_bridges; i++)
            if (s->bridge_hops[2 * i] > prev && s->bridge_hops[2 * i] < t)
                t = s->bridge_hops[2 * i];
        if (t == INT32_MAX)
            break;
        int k = disjoint_sides(s, t);
        s->cross_extra[1] += k * (t - prev);
        s->cross_extra[0] += (k > 0 ? k - 1 : 0) * (t - prev);
        prev = t;
    }
}

static int channel_hops(const tp_search_ctx *s, const tp_graph *g)
{
    int closes = s->n_nets == 0 && g->pattern == TP_PATTERN_RING;
    int steps = closes ? s->n_gpus : s->n_gpus - 1; /* GPU to GPU routes of a channel */
    int nets = s->n_nets ? s->hops_net_gpu + s->hops_gpu_net : 0;
    return steps * s->hops_gpu_gpu + (steps >= 2 ? s->cross_extra[closes] : 0) + nets;
}

void tp_search__bound_begin(tp_search_ctx *s, const tp_graph *g, int enabled)
{
    s->cut = 0;
    s->cut_on = enabled && s->milli && !tp_search__head_pattern(g->pattern);
    if (!s->cut_on)
        return;
    s->channel_bound = channel_bound(s, g, s->amounts);
    s->channel_hops = channel_hops(s, g);
}

/* Whether a graph of c channels at most, each of `hops` hops at least, may beat the saved one. */
static int beatable(const tp_search_ctx *s, const tp_graph *g, int c, int hops)
{
    const tp_graph *ref = s->save;
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

int tp_search__hopeless(tp_search_ctx *s, const tp_graph *g)
{
    tp_amount amounts[3];
    if (!s->milli_capable || !s->link_m_ok || tp_search__head_pattern(g->pattern) ||
        !tp_search__milli_amounts(s, g, amounts))
        return 0;
    return !beatable(s, g, channel_bound(s, g, amounts), channel_hops(s, g));
}

int tp_search__can_beat(const tp_search_ctx *s, const tp_graph *g)
{
    return beatable(s, g, s->channel_bound, s->channel_hops);
}
