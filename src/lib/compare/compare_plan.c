/*
 * The plan layers of a comparison: paths of the reported rank's system,
 * searched graphs, final channels, and why the channel count changed.
 *
 * Severities (the health-check rules): a GPU pair whose path type got worse
 * (NVL -> NVB/PIX/PHB/SYS, or no path) is an error, as are fewer graph or
 * collective or NVLS channels and a lower graph bandwidth; a lower GPU pair
 * bandwidth of the same type, a worse GPU-CPU or GPU-NET path, worse graph
 * path types, another pattern, fewer P2P channels and GPUs split into other
 * NCCL nodes are warnings; better values and other orders are information.
 */
#include "compare/compare.h"

#include <string.h>

/* Ranks printed for a ring or a graph channel in a difference line. */
#define ORDER_SHOWN 16

static const int dest_types[] = {TP_NODE_GPU, TP_NODE_CPU, TP_NODE_NET};

static void route_text(char *buf, size_t size, const tp_route *r)
{
    snprintf(buf, size, "%s %.1f GB/s, %d hop%s", tp_path_type_name(r->type), r->bw, r->count,
             r->count == 1 ? "" : "s");
}

static void route_severity(int dtype, const tp_route *r0, const tp_route *r1, tp_severity *sev,
                           const char **title)
{
    *sev = TP_SEVERITY_INFO;
    if (dtype == TP_NODE_GPU && r1->type > r0->type) {
        *sev = TP_SEVERITY_ERROR;
        *title = "GPU pair path worse";
    } else if (r1->type > r0->type || r1->bw < r0->bw) {
        *sev = TP_SEVERITY_WARN;
        *title = dtype == TP_NODE_GPU   ? "GPU pair bandwidth lower"
                 : dtype == TP_NODE_NET ? "GPU-NIC path worse"
                                        : "GPU-CPU path worse";
    } else if (r1->type < r0->type || r1->bw > r0->bw) {
        *title = "path better";
    } else {
        *title = "path hops changed";
    }
}

/* One GPU -> node pair whose route differs; labels of side 0. */
static void route_diff(tp_comparison *c, const tp_node *src, const tp_node *dst, const tp_route *r0,
                       const tp_route *r1)
{
    tp_severity sev;
    const char *title;
    route_severity(dst->type, r0, r1, &sev, &title);
    char a[160], b[160], t0[96], t1[96];
    tp_report__device_name(a, sizeof(a), c->plan[0]->topo_xml, src);
    tp_report__device_name(b, sizeof(b), c->plan[0]->topo_xml, dst);
    route_text(t0, sizeof(t0), r0);
    route_text(t1, sizeof(t1), r1);
    tp_compare__add(c, TP_DIFF_PATH, sev, title, "%s -> %s: %s -> %s", a, b, t0, t1);
    tp_compare__set_device(c, 0, false, src);
    tp_compare__set_device(c, 0, true, dst);
    TP_CMP_VALUE(c, "bandwidth", "GB/s", r0->bw, r1->bw);
    TP_CMP_VALUE(c, "hops", "", r0->count, r1->count);
}

/* The route between the counterparts of g and dst in side 1's system, NULL when absent. */
static const tp_route *other_route(const tp_comparison *c, const tp_node *g, const tp_node *dst)
{
    const tp_system *other = c->plan[1]->sys;
    const tp_node *g1 = tp_compare__counterpart(c, 0, g, other);
    const tp_node *d1 = tp_compare__counterpart(c, 0, dst, other);
    if (!g1 || !d1 || !g1->paths[dst->type])
        return NULL;
    return &g1->paths[dst->type][d1 - other->nodes[dst->type].nodes];
}

static bool route_same(const tp_route *x, const tp_route *y)
{
    return x->type == y->type && x->bw == y->bw && x->count == y->count;
}

/* A GPU pair is listed once (lower index first) when both directions changed alike. */
static bool mirrored_pair(const tp_comparison *c, const tp_node *g, const tp_node *d, int j,
                          const tp_route *r, const tp_route *r1)
{
    const tp_node_set *gpus = &c->plan[0]->sys->nodes[TP_NODE_GPU];
    if (d->type != TP_NODE_GPU || j > (int)(g - gpus->nodes))
        return false;
    const tp_route *rev = &d->paths[TP_NODE_GPU][g - gpus->nodes];
    const tp_route *rev1 = other_route(c, d, g);
    return rev1 && route_same(rev, r) && route_same(rev1, r1);
}

/* A matched GPU in the reported rank's NCCL node on one side only (P2P/SHM impossible). */
static void gpu_domain(tp_comparison *c, int side, const tp_node *g)
{
    char a[160];
    tp_report__device_name(a, sizeof(a), c->plan[side]->topo_xml, g);
    bool left = side == 0;
    tp_compare__add(c, TP_DIFF_PATH, left ? TP_SEVERITY_ERROR : TP_SEVERITY_INFO,
                    left ? "GPU left the NCCL node" : "GPU joined the NCCL node",
                    left ? "%s: in the reported rank's NCCL node -> not in it (no P2P or SHM "
                           "path: its traffic with those GPUs goes through the network)"
                         : "%s: not in the reported rank's NCCL node -> in it",
                    a);
    tp_compare__set_device(c, side, false, g);
}

/* Pairs of the reported system whose ends are in both plans' reported systems. */
static void paths_of_gpu(tp_comparison *c, const tp_node *g)
{
    for (size_t t = 0; t < ARRAY_LEN(dest_types) && g->paths[dest_types[t]]; t++) {
        const tp_node_set *dst = &c->plan[0]->sys->nodes[dest_types[t]];
        for (int j = 0; j < dst->count; j++) {
            const tp_node *d = &dst->nodes[j];
            const tp_route *r = &g->paths[dest_types[t]][j];
            const tp_route *r1 = d == g ? NULL : other_route(c, g, d);
            if (r1 && !route_same(r, r1) && !mirrored_pair(c, g, d, j, r, r1))
                route_diff(c, g, d, r, r1);
        }
    }
}

void tp_compare__paths(tp_comparison *c)
{
    for (int side = 0; side < 2; side++) {
        const tp_node_set *gpus = &c->plan[side]->sys->nodes[TP_NODE_GPU];
        for (int i = 0; i < gpus->count; i++) {
            const tp_node *g = &gpus->nodes[i];
            if (tp_compare__matched(c, side, g) &&
                !tp_compare__counterpart(c, side, g, c->plan[1 - side]->sys))
                gpu_domain(c, side, g);
            else if (side == 0 && tp_compare__matched(c, side, g))
                paths_of_gpu(c, g);
        }
    }
}

/* A count that differs between the plans: a drop gets lower_severity, a rise is INFO. */
typedef struct count_change {
    tp_diff_kind kind;
    tp_severity lower_severity;
    const char *lower_title, *higher_title;
    const char *what;
    int before, after;
} count_change;

static void add_count(tp_comparison *c, count_change cc)
{
    if (cc.before == cc.after)
        return;
    bool lower = cc.after < cc.before;
    tp_compare__add(c, cc.kind, lower ? cc.lower_severity : TP_SEVERITY_INFO,
                    lower ? cc.lower_title : cc.higher_title, "%s %d -> %d", cc.what, cc.before,
                    cc.after);
    TP_CMP_VALUE(c, "channels", "", cc.before, cc.after);
}

static void graph_bw(tp_comparison *c, const char *name, const tp_graph *g0, const tp_graph *g1)
{
    if (g0->bw_intra == g1->bw_intra && g0->bw_inter == g1->bw_inter)
        return;
    bool lower = g1->bw_intra < g0->bw_intra || g1->bw_inter < g0->bw_inter;
    tp_compare__add(c, TP_DIFF_GRAPH, lower ? TP_SEVERITY_ERROR : TP_SEVERITY_INFO,
                    lower ? "lower graph bandwidth" : "higher graph bandwidth",
                    "%s: bw intra/inter %.1f/%.1f -> %.1f/%.1f GB/s", name, g0->bw_intra,
                    g0->bw_inter, g1->bw_intra, g1->bw_inter);
    TP_CMP_VALUE(c, "bw_intra", "GB/s", g0->bw_intra, g1->bw_intra);
    TP_CMP_VALUE(c, "bw_inter", "GB/s", g0->bw_inter, g1->bw_inter);
}

static void graph_types(tp_comparison *c, const char *name, const tp_graph *g0, const tp_graph *g1)
{
    if (g0->type_intra == g1->type_intra && g0->type_inter == g1->type_inter)
        return;
    bool worse = g1->type_intra > g0->type_intra || g1->type_inter > g0->type_inter;
    tp_compare__add(c, TP_DIFF_GRAPH, worse ? TP_SEVERITY_WARN : TP_SEVERITY_INFO,
                    worse ? "graph path types worse" : "graph path types better",
                    "%s: types %s/%s -> %s/%s", name, tp_path_type_name(g0->type_intra),
                    tp_path_type_name(g0->type_inter), tp_path_type_name(g1->type_intra),
                    tp_path_type_name(g1->type_inter));
}

/* NET ids of side 0 as side 1 numbers them (renumbered NETs keep their channel). */
static int64_t net_on_side1(const tp_comparison *c, int64_t id)
{
    const tp_node *n = tp_system__find(c->plan[0]->sys, TP_NODE_NET, id);
    const tp_node *m = n ? tp_compare__counterpart(c, 0, n, c->plan[1]->sys) : NULL;
    return m ? m->id : id;
}

static bool order_same(const tp_graph *g0, const tp_graph *g1, int ch, int n_gpus)
{
    for (int i = 0; i < n_gpus; i++)
        if (g0->intra[ch * n_gpus + i] != g1->intra[ch * n_gpus + i])
            return false;
    return true;
}

static bool nics_same(const tp_comparison *c, const tp_graph *g0, const tp_graph *g1, int ch)
{
    return c->plan[0]->sys->nodes[TP_NODE_NET].count == 0 ||
           (net_on_side1(c, g0->inter[2 * ch]) == g1->inter[2 * ch] &&
            net_on_side1(c, g0->inter[2 * ch + 1]) == g1->inter[2 * ch + 1]);
}

static void order_text(char *buf, size_t size, const int *ranks, int n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && i < ORDER_SHOWN && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? " " : "", ranks[i]);
    if (n > ORDER_SHOWN && len < size)
        snprintf(buf + len, size - len, " ...");
}

/* "channel F: <order before> -> <order after>" for the first channel that differs. */
static void first_change(char *buf, size_t size, int first, const int *before, const int *after,
                         int n)
{
    char o0[96], o1[96];
    order_text(o0, sizeof(o0), before, n);
    order_text(o1, sizeof(o1), after, n);
    snprintf(buf, size, "channel %d: %s -> %s", first, o0, o1);
}

/* The GPU of the channel's graph that leaves for the network (search.cc backToNet). */
static int exit_step(const tp_graph *g, int n_gpus)
{
    if (g->pattern == TP_PATTERN_RING)
        return n_gpus - 1;
    /* balanced trees leave from the first two GPUs, to the same NET */
    bool second = g->pattern == TP_PATTERN_SPLIT_TREE || g->pattern == TP_PATTERN_BALANCED_TREE;
    return second && n_gpus > 1 ? 1 : 0;
}

/* The route from GPU rank `rank` to NET `net` (to_gpu: the other way), NULL when unknown. */
static const tp_route *net_route(const tp_system *sys, int rank, int64_t net, bool to_gpu)
{
    int ni = tp_system__index_of(sys, TP_NODE_NET, net), gi = -1;
    for (int k = 0; k < sys->nodes[TP_NODE_GPU].count && gi < 0; k++)
        gi = sys->nodes[TP_NODE_GPU].nodes[k].gpu.rank == rank ? k : -1;
    if (ni < 0 || gi < 0)
        return NULL;
    const tp_node *from =
        to_gpu ? &sys->nodes[TP_NODE_NET].nodes[ni] : &sys->nodes[TP_NODE_GPU].nodes[gi];
    const tp_route *paths = from->paths[to_gpu ? TP_NODE_GPU : TP_NODE_NET];
    return paths ? &paths[to_gpu ? gi : ni] : NULL;
}

/* "NET/0 -> NET/1 (in PIX, out PIX, 48.0 GB/s)": a channel's NICs, their paths, the graph's speed.
 */
static void nics_text(char *buf, size_t size, const tp_system *sys, const tp_graph *g, int ch,
                      int n_gpus)
{
    int single = g->pattern == TP_PATTERN_NVLS || g->pattern == TP_PATTERN_COLLNET_DIRECT;
    int head = g->intra[ch * n_gpus],
        out = g->intra[ch * n_gpus + (single ? 0 : exit_step(g, n_gpus))];
    int64_t in_net = g->inter[2 * ch], out_net = g->inter[2 * ch + 1];
    const tp_route *r_in = net_route(sys, head, in_net, true);
    const tp_route *r_out = net_route(sys, out, out_net, false);
    snprintf(buf, size, "NET/%lld -> NET/%lld (in %s, out %s, %.1f GB/s)", (long long)in_net,
             (long long)out_net, r_in ? tp_path_type_name(r_in->type) : "?",
             r_out ? tp_path_type_name(r_out->type) : "?", g->bw_inter);
}

/*
 * The NCCL 2.22.3 rule behind a change of NICs: short (for the difference's
 * line) and in full (the hint); "" when the graphs' settings do not say.
 */
static void nic_rule(char *brief, size_t brief_size, char *full, size_t full_size,
                     const tp_graph *g0, const tp_graph *g1)
{
    brief[0] = full[0] = '\0';
    if (g0->cross_nic != g1->cross_nic) {
        const char *what = g1->cross_nic ? "a channel may leave on another NIC than it entered"
                                         : "a channel must leave on the NIC it entered";
        snprintf(brief, brief_size, "crossNic %d -> %d: %s", g0->cross_nic, g1->cross_nic, what);
        snprintf(full, full_size,
                 "crossNic %d -> %d (NCCL_CROSS_NIC): %s%s (NCCL 2.22.3 search.cc, "
                 "ncclTopoSearchRecGpu)",
                 g0->cross_nic, g1->cross_nic, what,
                 g1->cross_nic ? ", each odd channel on the NICs of the one before, swapped"
                               : " (same asic and port)");
    } else if (g0->type_inter != g1->type_inter) {
        snprintf(brief, brief_size, "GPU-to-NET path type %s -> %s",
                 tp_path_type_name(g0->type_inter), tp_path_type_name(g1->type_inter));
        snprintf(full, full_size,
                 "the search settled at GPU-to-NET path type %s -> %s (its relaxation order, "
                 "NCCL 2.22.3 search.cc ncclTopoCompute)",
                 tp_path_type_name(g0->type_inter), tp_path_type_name(g1->type_inter));
    }
}

/* Channels whose NICs differ (the GPU order aside): what they were, what they are, the rule. */
static void graph_nics(tp_comparison *c, const char *name, const tp_graph *g0, const tp_graph *g1,
                       int n_gpus, int n_ch)
{
    int n_diff = 0, first = -1;
    for (int ch = 0; ch < n_ch; ch++) {
        if (nics_same(c, g0, g1, ch))
            continue;
        n_diff++;
        first = first < 0 ? ch : first;
    }
    if (n_diff == 0)
        return;
    char before[96], after[96], rule[120], full[300];
    nics_text(before, sizeof(before), c->plan[0]->sys, g0, first, n_gpus);
    nics_text(after, sizeof(after), c->plan[1]->sys, g1, first, n_gpus);
    nic_rule(rule, sizeof(rule), full, sizeof(full), g0, g1);
    tp_compare__add(c, TP_DIFF_GRAPH, TP_SEVERITY_INFO, "graph NICs changed",
                    "%s: NICs differ in %d of %d channels (channel %d: %s -> %s)%s%s", name, n_diff,
                    n_ch, first, before, after, rule[0] ? ": " : "", rule);
    if (full[0] && !c->graph_rule[0])
        snprintf(c->graph_rule, sizeof(c->graph_rule), "%s: %s", name, full);
}

static void graph_order(tp_comparison *c, const char *name, const tp_graph *g0, const tp_graph *g1)
{
    int n_gpus = c->plan[0]->sys->nodes[TP_NODE_GPU].count;
    int n_ch = g0->n_channels < g1->n_channels ? g0->n_channels : g1->n_channels;
    if (n_gpus != c->plan[1]->sys->nodes[TP_NODE_GPU].count)
        return; /* another GPU set: the orders cannot be compared */
    int n_diff = 0, first = -1;
    for (int ch = 0; ch < n_ch; ch++) {
        if (order_same(g0, g1, ch, n_gpus))
            continue;
        n_diff++;
        first = first < 0 ? ch : first;
    }
    if (n_diff > 0) {
        char change[256];
        first_change(change, sizeof(change), first, &g0->intra[first * n_gpus],
                     &g1->intra[first * n_gpus], n_gpus);
        tp_compare__add(c, TP_DIFF_GRAPH, TP_SEVERITY_INFO, "graph channel order changed",
                        "%s: channel order differs in %d of %d channels (%s)", name, n_diff, n_ch,
                        change);
    }
    graph_nics(c, name, g0, g1, n_gpus, n_ch);
}

/* One graph setting compared as a count: its label, and how a change is told. */
static void graph_count(tp_comparison *c, const char *name, count_change cc, const char *label)
{
    char what[64];
    snprintf(what, sizeof(what), "%s: %s", name, label);
    cc.kind = TP_DIFF_GRAPH;
    cc.what = what;
    add_count(c, cc);
}

static void graph_diff(tp_comparison *c, const char *name, const tp_graph *g0, const tp_graph *g1)
{
    graph_count(c, name,
                (count_change){.lower_severity = TP_SEVERITY_WARN,
                               .lower_title = "graph pattern changed",
                               .higher_title = "graph pattern changed",
                               .before = g0->pattern,
                               .after = g1->pattern},
                "pattern");
    graph_count(c, name,
                (count_change){.lower_severity = TP_SEVERITY_ERROR,
                               .lower_title = "fewer graph channels",
                               .higher_title = "more graph channels",
                               .before = g0->n_channels,
                               .after = g1->n_channels},
                "channels");
    graph_bw(c, name, g0, g1);
    graph_types(c, name, g0, g1);
    graph_count(c, name,
                (count_change){.lower_severity = TP_SEVERITY_INFO,
                               .lower_title = "crossNic changed",
                               .higher_title = "crossNic changed",
                               .before = g0->cross_nic,
                               .after = g1->cross_nic},
                "crossNic");
    graph_count(c, name,
                (count_change){.lower_severity = TP_SEVERITY_INFO,
                               .lower_title = "sameChannels changed",
                               .higher_title = "sameChannels changed",
                               .before = g0->same_channels,
                               .after = g1->same_channels},
                "sameChannels");
    graph_order(c, name, g0, g1);
}

void tp_compare__graphs(tp_comparison *c)
{
    for (int s = 0; s < TP_GRAPH_COUNT; s++) {
        const tp_graph *g0 = c->plan[0]->graphs[s], *g1 = c->plan[1]->graphs[s];
        if (g0 && g1)
            graph_diff(c, tp_channels__graph_name(s), g0, g1);
        else if (g0 || g1)
            tp_compare__add(c, TP_DIFF_GRAPH, TP_SEVERITY_INFO, "graph not computed",
                            "%s: %s -> %s", tp_channels__graph_name(s), g0 ? "searched" : "none",
                            g1 ? "searched" : "none");
    }
}

static void rings_diff(tp_comparison *c, const tp_channels *a, const tp_channels *b)
{
    int n_ch = a->n_channels < b->n_channels ? a->n_channels : b->n_channels;
    int n_diff = 0, first = -1;
    for (int ch = 0; ch < n_ch; ch++) {
        if (memcmp(&a->rings[(size_t)ch * a->n_ranks], &b->rings[(size_t)ch * b->n_ranks],
                   (size_t)a->n_ranks * sizeof(int)) == 0)
            continue;
        n_diff++;
        first = first < 0 ? ch : first;
    }
    if (n_diff == 0)
        return;
    char change[256];
    first_change(change, sizeof(change), first, &a->rings[(size_t)first * a->n_ranks],
                 &b->rings[(size_t)first * b->n_ranks], a->n_ranks);
    tp_compare__add(c, TP_DIFF_CHANNELS, TP_SEVERITY_INFO, "ring order changed",
                    "rings: %d of %d channels differ (%s)", n_diff, n_ch, change);
}

static bool tree_same(const tp_channel_rank *x, const tp_channel_rank *y)
{
    return x->tree_up == y->tree_up &&
           memcmp(x->tree_down, y->tree_down, sizeof(x->tree_down)) == 0;
}

static void trees_diff(tp_comparison *c, const tp_channels *a, const tp_channels *b)
{
    int n_ch = a->n_channels < b->n_channels ? a->n_channels : b->n_channels;
    int n_diff = 0;
    const tp_channel_rank *f0 = NULL, *f1 = NULL;
    int fr = 0, fc = 0;
    for (int r = 0; r < a->n_ranks; r++) {
        for (int ch = 0; ch < n_ch; ch++) {
            const tp_channel_rank *x = &a->ranks[(size_t)r * a->n_channels + ch];
            const tp_channel_rank *y = &b->ranks[(size_t)r * b->n_channels + ch];
            if (tree_same(x, y))
                continue;
            if (n_diff++ == 0) {
                f0 = x, f1 = y, fr = r, fc = ch;
            }
        }
    }
    if (n_diff == 0)
        return;
    tp_compare__add(c, TP_DIFF_CHANNELS, TP_SEVERITY_INFO, "tree changed",
                    "trees: %d rank-channels differ (rank %d channel %d: up %d down %d/%d/%d -> "
                    "up %d down %d/%d/%d)",
                    n_diff, fr, fc, f0->tree_up, f0->tree_down[0], f0->tree_down[1],
                    f0->tree_down[2], f1->tree_up, f1->tree_down[0], f1->tree_down[1],
                    f1->tree_down[2]);
}

void tp_compare__channels(tp_comparison *c)
{
    const tp_channels *a = &c->plan[0]->channels, *b = &c->plan[1]->channels;
    const tp_diff_kind K = TP_DIFF_CHANNELS;
    /* clang-format off */
    const count_change counts[] = {
        {K, TP_SEVERITY_ERROR, "fewer collective channels", "more collective channels",
         "collective channels", a->n_channels, b->n_channels},
        {K, TP_SEVERITY_ERROR, "fewer NVLS channels", "more NVLS channels",
         "NVLS channels", a->n_nvls_channels, b->n_nvls_channels},
        {K, TP_SEVERITY_INFO, "fewer CollNet channels", "more CollNet channels",
         "CollNet channels", a->n_collnet_channels, b->n_collnet_channels},
        {K, TP_SEVERITY_WARN, "fewer P2P channels", "more P2P channels",
         "P2P channels", a->p2p_n_channels, b->p2p_n_channels},
        {K, TP_SEVERITY_WARN, "fewer P2P channels per peer", "more P2P channels per peer",
         "P2P channels per peer", a->p2p_n_channels_per_peer, b->p2p_n_channels_per_peer},
        {K, TP_SEVERITY_INFO, "fewer ranks", "more ranks",
         "ranks", a->n_ranks, b->n_ranks},
    };
    /* clang-format on */
    for (size_t i = 0; i < ARRAY_LEN(counts); i++)
        add_count(c, counts[i]);
    if (a->n_nodes != b->n_nodes) {
        tp_compare__add(c, K, b->n_nodes > a->n_nodes ? TP_SEVERITY_WARN : TP_SEVERITY_INFO,
                        b->n_nodes > a->n_nodes ? "more NCCL nodes" : "fewer NCCL nodes",
                        "NCCL nodes %d -> %d (GPUs of a host that cannot use P2P or SHM form "
                        "separate nodes)",
                        a->n_nodes, b->n_nodes);
        TP_CMP_VALUE(c, "nccl_nodes", "", a->n_nodes, b->n_nodes);
    }
    if (a->n_ranks != b->n_ranks)
        return; /* other ranks: rings and trees cannot be compared */
    rings_diff(c, a, b);
    trees_diff(c, a, b);
}

static void ring_cause(char *buf, size_t size, const tp_channels *a, const tp_channels *b)
{
    const tp_graph_info *r0 = &a->combined[TP_GRAPH_RING], *r1 = &b->combined[TP_GRAPH_RING];
    if (a->n_nodes > 1 || b->n_nodes > 1)
        snprintf(buf, size, "ring search %d x %.1f/%.1f -> %d x %.1f/%.1f GB/s (intra/inter)",
                 r0->n_channels, r0->bw_intra, r0->bw_inter, r1->n_channels, r1->bw_intra,
                 r1->bw_inter);
    else
        snprintf(buf, size, "ring search %d x %.1f -> %d x %.1f GB/s", r0->n_channels, r0->bw_intra,
                 r1->n_channels, r1->bw_intra);
}

static bool sm90_applied(const tp_channel_count *x)
{
    return x->sm90_doubled != x->duplicated;
}

static bool capped(const tp_channel_count *x)
{
    return x->after_max < x->sm90_doubled;
}

static bool floored(const tp_channel_count *x)
{
    return x->after_min > x->after_max;
}

static bool nvls_raised(const tp_channel_count *x)
{
    return x->after_nvls > x->after_min;
}

/*
 * Postset's steps (channels.h tp_channel_count): the first one that acts on
 * one side only, or (same_search) acts with another result. "" when none.
 */
static void postset_cause(char *buf, size_t size, const tp_nccl_profile *p,
                          const tp_channel_count *x, const tp_channel_count *y, bool same_search)
{
    buf[0] = '\0';
    if (sm90_applied(x) != sm90_applied(y) || (same_search && x->sm90_doubled != y->sm90_doubled))
        snprintf(buf, size,
                 "the sm90 multi-node doubling (ring bw above %.0f GB/s, fewer than %d "
                 "channels) %s: %d -> %d",
                 p->postset_double_bw, p->postset_double_max,
                 sm90_applied(y) ? "applies" : "no longer applies", x->sm90_doubled,
                 y->sm90_doubled);
    else if (capped(x) != capped(y) || (same_search && x->after_max != y->after_max))
        snprintf(buf, size, "after the NCCL_MAX_NCHANNELS/CTAs cap %d -> %d", x->after_max,
                 y->after_max);
    else if (floored(x) != floored(y) || (same_search && x->after_min != y->after_min))
        snprintf(buf, size, "after the NCCL_MIN_NCHANNELS/CTAs floor %d -> %d", x->after_min,
                 y->after_min);
    else if (nvls_raised(x) != nvls_raised(y) || (same_search && x->after_nvls != y->after_nvls))
        snprintf(buf, size, "raised to the NVLS channels %d -> %d", x->after_nvls, y->after_nvls);
}

/* Why the collective channel count changed: the search, then postset. */
void tp_compare__why(tp_comparison *c)
{
    const tp_channels *a = &c->plan[0]->channels, *b = &c->plan[1]->channels;
    char search[160] = "", post[160];
    if (a->n_channels == b->n_channels)
        return;
    const tp_graph_info *t0 = &a->combined[TP_GRAPH_TREE], *t1 = &b->combined[TP_GRAPH_TREE];
    bool same_search = a->search_channels == b->search_channels;
    if (!same_search &&
        a->combined[TP_GRAPH_RING].n_channels != b->combined[TP_GRAPH_RING].n_channels)
        ring_cause(search, sizeof(search), a, b);
    else if (!same_search)
        snprintf(search, sizeof(search),
                 "tree search %d -> %d channels (the search keeps the "
                 "fewer of ring and tree)",
                 t0->n_channels, t1->n_channels);
    postset_cause(post, sizeof(post), tp_config__profile(c->plan[0]->cfg), &a->count, &b->count,
                  same_search);
    snprintf(c->why, sizeof(c->why), "collective channels %d -> %d: %s%s%s", a->n_channels,
             b->n_channels, search, search[0] && post[0] ? "; then " : "",
             search[0] || post[0] ? post : "postset");
}
