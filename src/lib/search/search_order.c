/*
 * The orders the search tries candidates in (NCCL 2.22.3): local NICs of a
 * GPU per channel (topo.cc ncclTopoGetLocalNet / ncclTopoGetLocalGpu), the
 * NET list of ncclTopoSelectNets and the GPU ranking of
 * ncclTopoSearchNextGpuSort. Fidelity depends on these orders exactly.
 */
#include "search/search_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int tp_search__id_to_index(const tp_system *sys, int type, int64_t id)
{
    const tp_node_set *set = &sys->nodes[type];
    for (int i = 0; i < set->count; i++)
        if (set->nodes[i].id == id)
            return i;
    return -1;
}

/*
 * NCCL 2.22.3 ncclTopoGetLocal: the nodes of `result_type` with the best
 * route bandwidth from node (type, index), ties broken by the best path type.
 */
/* ncclTopoGetLocal: the nodes of result_type best connected to the node. */
static int get_local(const tp_system *sys, int type, int index, int result_type, int *out)
{
    int count = 0;
    tp_paths__get_local(sys, type, index, result_type, out, &count, NULL);
    return count;
}

int tp_search__local_net(const tp_system *sys, int gpu, int channel)
{
    int nets[TP_MAX_NODES], gpus[TP_MAX_NODES];
    if (sys->nodes[TP_NODE_NET].count == 0 || gpu < 0)
        return -1;
    int n_nets = get_local(sys, TP_NODE_GPU, gpu, TP_NODE_NET, nets);
    int n_gpus = get_local(sys, TP_NODE_NET, nets[0], TP_NODE_GPU, gpus);
    int net = tp_paths__local_net_start(sys, gpu, n_nets, n_gpus);
    net += channel % tp_paths__nets_per_gpu(sys, n_nets, n_gpus);
    return nets[net % n_nets];
}

int tp_search__local_gpu(const tp_system *sys, int net)
{
    int gpus[TP_MAX_NODES];
    if (sys->nodes[TP_NODE_GPU].count == 0)
        return -1;
    int n_gpus = get_local(sys, TP_NODE_NET, net, TP_NODE_GPU, gpus);
    for (int c = 0; c < sys->profile->max_channels; c++)
        for (int i = 0; i < n_gpus; i++)
            if (tp_search__local_net(sys, gpus[i], c) == net)
                return gpus[i];
    return -1;
}

static void append_unique(int *list, int *count, int n)
{
    for (int i = 0; i < *count; i++)
        if (list[i] == n)
            return;
    list[(*count)++] = n;
}

/* ncclTopoGetLocalNet for every GPU and channel, from one ncclTopoGetLocal pair per GPU. */
static void build_local_nets(tp_search_ctx *s)
{
    int nets[TP_MAX_NODES], gpus[TP_MAX_NODES];
    for (int g = 0; g < s->n_gpus; g++) {
        int n_nets = get_local(s->sys, TP_NODE_GPU, g, TP_NODE_NET, nets);
        int n_gpus = get_local(s->sys, TP_NODE_NET, nets[0], TP_NODE_GPU, gpus);
        int base = tp_paths__local_net_start(s->sys, g, n_nets, n_gpus);
        int spread = tp_paths__nets_per_gpu(s->sys, n_nets, n_gpus);
        for (int c = 0; c < TP_MAXCHANNELS; c++)
            s->local_net[g * TP_MAXCHANNELS + c] = nets[(base + c % spread) % n_nets];
    }
}

/*
 * ncclTopoGetLocalGpu for every NET, from the table above: of the GPUs
 * close to the NET, the one with the earliest channel picking it (channel
 * by channel, close GPU by close GPU), found from the first channel on which
 * each GPU picks each NET (first, n_gpus x n_nets).
 */
static void build_local_gpus(tp_search_ctx *s, int *first)
{
    int gpus[TP_MAX_NODES];
    const int max_channels = s->sys->profile->max_channels; /* NCCL's channel loop: MAXCHANNELS */
    for (int i = 0; i < s->n_gpus * s->n_nets; i++)
        first[i] = max_channels;
    for (int g = 0; g < s->n_gpus; g++)
        for (int c = max_channels - 1; c >= 0; c--) /* down: the earliest channel stays */
            if (s->local_net[g * TP_MAXCHANNELS + c] >= 0 &&
                s->local_net[g * TP_MAXCHANNELS + c] < s->n_nets)
                first[g * s->n_nets + s->local_net[g * TP_MAXCHANNELS + c]] = c;
    for (int n = 0; n < s->n_nets; n++) {
        int n_gpus = get_local(s->sys, TP_NODE_NET, n, TP_NODE_GPU, gpus), best = max_channels;
        s->local_gpu[n] = -1;
        for (int i = 0; i < n_gpus; i++) {
            if (first[gpus[i] * s->n_nets + n] < best) {
                best = first[gpus[i] * s->n_nets + n];
                s->local_gpu[n] = gpus[i];
            }
        }
    }
}

/* The route types up to type_inter (bit t) of some GPU -> NET route the selection reads. */
static unsigned selected_types(const tp_search_ctx *s, int type_inter)
{
    unsigned types = 0;
    const int max_channels = s->sys->profile->max_channels; /* NCCL reads MAXCHANNELS NETs */
    for (int g = 0; g < s->n_gpus; g++) {
        const tp_route *paths = s->sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET];
        for (int n = 0; n < s->n_nets && n < max_channels; n++)
            if (paths[n].type >= 0 && paths[n].type <= type_inter && paths[n].type < 32)
                types |= 1u << paths[n].type;
    }
    return types;
}

/*
 * 2.28.7 ncclTopoSelectNets under NCCL_NETDEVS_POLICY MAX:n: the other NETs are added only up
 * to n (n per GPU for the list of every GPU); the preferred ones are all kept. NCCL multiplies
 * in int (a huge n wraps, as there). Other policies: no limit.
 */
static int selection_limit(const tp_search_ctx *s, int gpu)
{
    if (s->sys->netdevs.kind != TP_NETDEVS_MAX)
        return INT_MAX;
    unsigned limit = (unsigned)s->sys->netdevs.max;
    return (int)(gpu == -1 ? limit * (unsigned)s->n_gpus : limit);
}

/*
 * NCCL 2.22.3 ncclTopoSelectNets: preferred NICs of the GPU(s), then others
 * by path type (only the types some route has: types, from selected_types),
 * up to selection_limit.
 */
static void build_selection(const tp_search_ctx *s, unsigned types, int gpu, int *nets, int *count)
{
    const tp_system *sys = s->sys;
    const int max_channels = sys->profile->max_channels; /* MAXCHANNELS */
    const int limit = selection_limit(s, gpu);
    *count = 0;
    for (int g = 0; g < s->n_gpus; g++) {
        if (gpu != -1 && gpu != g)
            continue;
        const int *local = &s->local_net[g * TP_MAXCHANNELS];
        append_unique(nets, count, local[0]);
        for (int c = 1; c < max_channels && local[c] != local[0]; c++)
            append_unique(nets, count, local[c]);
    }
    for (; types; types &= types - 1) {
        int t = __builtin_ctz(types);
        for (int g = 0; g < s->n_gpus; g++) {
            if (gpu != -1 && gpu != g)
                continue;
            const tp_route *paths = sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET];
            for (int n = 0; n < s->n_nets && n < max_channels && *count < limit; n++)
                if (paths[n].type == t)
                    append_unique(nets, count, n);
        }
    }
}

/* The lists of typeInter t (slot t of TP_SEL_TYPES), built on first use. */
static tp_sel_lists *sel_lists(tp_search_ctx *s, int type_inter)
{
    int t = type_inter >= 0 && type_inter < TP_SEL_TYPES ? type_inter : TP_SEL_TYPES - 1;
    tp_sel_lists *sl = &s->sel[t];
    if (sl->type == type_inter + 1)
        return sl;
    size_t rows = (size_t)s->n_gpus + 1, width = (size_t)(s->n_nets > 0 ? s->n_nets : 1);
    if (!sl->nets) { /* the counts follow the lists in their block */
        if (!(sl->nets = malloc((rows * width + rows) * sizeof(int))))
            return NULL;
        sl->count = sl->nets + rows * width;
    }
    unsigned types = selected_types(s, type_inter);
    for (size_t row = 0; row < rows; row++) {
        int g = row == rows - 1 ? -1 : (int)row;
        build_selection(s, types, g, sl->nets + row * width, &sl->count[row]);
    }
    sl->type = type_inter + 1;
    return sl;
}

tp_status tp_search__select_nets(tp_search_ctx *s, int type_inter, int gpu, const int **list,
                                 int *count)
{
    /* The routes are fixed during a search: build every row once per typeInter. */
    tp_sel_lists *sl = sel_lists(s, type_inter);
    if (!sl)
        return tp_fail_nomem(s->err);
    int row = gpu == -1 ? s->n_gpus : gpu;
    *count = sl->count[row];
    *list = sl->nets + (size_t)row * (size_t)(s->n_nets > 0 ? s->n_nets : 1);
    return TP_OK;
}

/* NCCL 2.22.3 ncclGpuScore: int fields, so bandwidths are truncated. */
typedef struct gpu_score {
    int g, start_index, intra_hops, intra_bw, inter_hops, inter_pci_bw, inter_bw;
} gpu_score;

/* Most important first: inter bw, PCI bw, inter hops, intra bw, intra hops, start index. */
static int cmp_score(const gpu_score *a, const gpu_score *b)
{
    int d;
    if ((d = b->inter_bw - a->inter_bw))
        return d;
    if ((d = b->inter_pci_bw - a->inter_pci_bw))
        return d;
    if ((d = a->inter_hops - b->inter_hops))
        return d;
    if ((d = b->intra_bw - a->intra_bw))
        return d;
    if ((d = a->intra_hops - b->intra_hops))
        return d;
    return a->start_index - b->start_index;
}

/* NCCL 2.22.3 gpuPciBw: which links it reads (the first PCI link of the GPU and its reverse). */
static void find_pci_links(tp_search_ctx *s, int g)
{
    tp_node *gpu = &s->sys->nodes[TP_NODE_GPU].nodes[g];
    s->pci_up[g] = s->pci_down[g] = NULL;
    for (int l = 0; l < gpu->n_links; l++) {
        tp_link *gl = &gpu->links[l];
        if (gl->type != TP_LINK_PCI)
            continue;
        tp_node *pci = gl->rem;
        for (int k = 0; k < pci->n_links; k++) {
            if (pci->links[k].rem != gpu)
                continue;
            s->pci_up[g] = &gl->bw;
            s->pci_down[g] = &pci->links[k].bw;
            return;
        }
    }
}

/* NCCL 2.22.3 gpuPciBw: the live GPU<->PCI link bandwidth (truncated to int), or -1. */
static int gpu_pci_bw(const tp_search_ctx *s, int g)
{
    if (!s->pci_up[g])
        return -1;
    if (s->accel && s->accel->gpu_pci_bw)
        return s->accel->gpu_pci_bw(s->accel_state, g);
    float up = *s->pci_up[g], down = *s->pci_down[g];
    return (int)(up < down ? up : down);
}

/* Total order (start indices differ), so a stable insertion sort equals NCCL's qsort. */
static void sort_scores(gpu_score *sc, int count)
{
    for (int i = 1; i < count; i++) {
        gpu_score v = sc[i];
        int j = i - 1;
        while (j >= 0 && cmp_score(&sc[j], &v) > 0) {
            sc[j + 1] = sc[j];
            j--;
        }
        sc[j + 1] = v;
    }
}

/*
 * NCCL 2.22.3: with NVSwitches, only the ring/tree neighbours among the
 * candidates are tried, each found one moved to the front in turn. The
 * ranking of the other candidates is then irrelevant, so it is skipped.
 */
static int nvswitch_next(const tp_search_ctx *s, const tp_graph *g, int index, int *next)
{
    const tp_node *gpus = s->sys->nodes[TP_NODE_GPU].nodes;
    const tp_route *paths = gpus[index].paths[TP_NODE_GPU];
    const uint64_t flag = 1ULL << g->n_channels;
    int pattern = g->pattern, n = s->n_gpus, first[2], n_first;
    int prev_gpu = (index - 1 + n) % n, next_gpu = (index + 1) % n;
    if (pattern == TP_PATTERN_RING) {
        first[0] = next_gpu, first[1] = prev_gpu, n_first = 2;
    } else if (pattern == TP_PATTERN_SPLIT_TREE || pattern == TP_PATTERN_BALANCED_TREE) {
        first[0] = prev_gpu, first[1] = next_gpu, n_first = 2;
    } else {
        first[0] = next_gpu, n_first = 1;
    }
    if (next_gpu == prev_gpu && n_first == 2)
        n_first = 1;
    int real = 0;
    for (int f = 0; f < n_first; f++) {
        int k = first[f];
        if (k == index || paths[k].count == 0 || (s->used[k] & flag))
            continue; /* not a candidate */
        for (int i = real; i > 0; i--)
            next[i] = next[i - 1];
        next[0] = k;
        real++;
    }
    return real;
}

/*
 * The GPUs after `start` scored as ncclTopoSearchNextGpuSort does without its
 * live key (gpuPciBw), with NET keys from net_paths (NULL: none), sorted.
 */
static int ranked_candidates(const tp_search_ctx *s, int start, const tp_route *net_paths,
                             gpu_score *sc)
{
    const tp_route *paths = s->sys->nodes[TP_NODE_GPU].nodes[start].paths[TP_NODE_GPU];
    int count = 0;
    for (int i = 1; i < s->n_gpus; i++) {
        int k = (start + i) % s->n_gpus;
        if (paths[k].count == 0)
            continue;
        sc[count++] = (gpu_score){.g = k,
                                  .start_index = i,
                                  .intra_hops = paths[k].count,
                                  .intra_bw = (int)paths[k].bw,
                                  .inter_hops = net_paths ? net_paths[k].count : 0,
                                  .inter_bw = net_paths ? (int)net_paths[k].bw : 0};
    }
    sort_scores(sc, count);
    return count;
}

/* Scores without NET keys are fixed for a system: rank every GPU once. */
static void build_gpu_order(tp_search_ctx *s, int start)
{
    gpu_score sc[TP_MAX_NODES];
    int count = ranked_candidates(s, start, NULL, sc);
    int *row = s->gpu_order + (size_t)start * (size_t)s->n_gpus;
    for (int i = 0; i < count; i++)
        row[i] = sc[i].g;
    s->gpu_order_count[start] = count;
}

/*
 * The candidates after GPU `start` for a channel that entered at NET n, in
 * NCCL 2.22.3's score order with the one live key (gpuPciBw) left out.
 */
static tp_status build_net_row(tp_search_ctx *s, int start, int n, tp_rank_row *row)
{
    row->c = malloc((size_t)s->n_gpus * sizeof(*row->c));
    if (!row->c)
        return tp_fail_nomem(s->err);
    gpu_score sc[TP_MAX_NODES];
    int count =
        ranked_candidates(s, start, s->sys->nodes[TP_NODE_NET].nodes[n].paths[TP_NODE_GPU], sc);
    for (int i = 0; i < count; i++)
        row->c[i] = (tp_rank_cand){.g = sc[i].g,
                                   .inter_bw = sc[i].inter_bw,
                                   .intra_bw = sc[i].intra_bw,
                                   .intra_hops = sc[i].intra_hops};
    row->count = count;
    row->ready = 1;
    return TP_OK;
}

/* Insertion sort of row positions by ranks_before (a handful of candidates). */
static void sort_positions(const tp_rank_row *row, int *pos, int *pci, int count)
{
    for (int i = 1; i < count; i++) {
        int p = pos[i], v = pci[i], j = i - 1;
        while (j >= 0 &&
               tp_search__ranks_before(&row->c[p], v, p, &row->c[pos[j]], pci[j], pos[j])) {
            pos[j + 1] = pos[j];
            pci[j + 1] = pci[j];
            j--;
        }
        pos[j + 1] = p;
        pci[j + 1] = v;
    }
}

/* Same intra scores everywhere: NCCL goes in reverse when not heading to the NET next. */
static int same_intra(const tp_rank_row *row, const int *pos, int count)
{
    for (int i = 1; i < count; i++) {
        const tp_rank_cand *a = &row->c[pos[i]], *b = &row->c[pos[0]];
        if (a->intra_bw != b->intra_bw || a->intra_hops != b->intra_hops)
            return 0;
    }
    return 1;
}

/*
 * Rank the candidate GPUs with NET keys, as NCCL 2.22.3 does with live
 * scores. The static keys sort the same way every time, so the row holds
 * them pre-sorted; ordering by (NET bw, live PCI bw, row position) is then
 * NCCL's order (its comparator is a total order: start indices differ).
 * When the live keys are all equal the row order is already the answer.
 */
static tp_status rank_with_net(tp_search_ctx *s, const tp_graph *g, int start, int *next,
                               int *count_out, int sort_net)
{
    const uint64_t flag = 1ULL << g->n_channels;
    int n = s->start_net[g->n_channels];
    tp_rank_row *row = &s->net_rows[(size_t)start * (size_t)s->n_nets + (size_t)n];
    if (!row->ready && build_net_row(s, start, n, row) != TP_OK)
        return TP_ERR_NOMEM;
    int pos[TP_MAX_NODES], pci[TP_MAX_NODES], count = 0, mixed = 0;
    for (int i = 0; i < row->count; i++) {
        if (s->used[row->c[i].g] & flag)
            continue;
        pos[count] = i;
        pci[count] = gpu_pci_bw(s, row->c[i].g);
        mixed |= pci[count] != pci[0];
        count++;
    }
    if (mixed)
        sort_positions(row, pos, pci, count);
    if (s->accel && s->accel->order)
        s->accel->order(s->accel_state, row, pos, count);
    int reverse = sort_net == -1 && same_intra(row, pos, count);
    for (int i = 0; i < count; i++)
        next[i] = row->c[pos[reverse ? count - 1 - i : i]].g;
    *count_out = count;
    return TP_OK;
}

tp_status tp_search__next_gpus_live(tp_search_ctx *s, const tp_graph *g, const tp_node *gpu,
                                    int *next, int *count_out, int sort_net)
{
    int start = (int)(gpu - s->sys->nodes[TP_NODE_GPU].nodes);
    if (s->sys->nodes[TP_NODE_NVS].count) {
        *count_out = nvswitch_next(s, g, start, next);
        return TP_OK;
    }
    return rank_with_net(s, g, start, next, count_out, sort_net);
}

/* The NETs of each NET's port (same asic and port), in index order: NCCL 2.22.3 charges them all.
 */
static void build_port_groups(tp_search_ctx *s)
{
    const tp_node *nets = s->sys->nodes[TP_NODE_NET].nodes;
    int k = 0;
    for (int n = 0; n < s->n_nets; n++) {
        s->port_first[n] = k;
        for (int i = 0; i < s->n_nets; i++)
            if (nets[i].net.asic == nets[n].net.asic && nets[i].net.port == nets[n].net.port)
                s->port_nets[k++] = i;
    }
    s->port_first[s->n_nets] = k;
}

/*
 * The context's tables in one zeroed block (a context is set up per search, and a dozen
 * allocations cost more than a small system's tables), with room for the scratch rows of
 * build_local_gpus: those returned, NULL when the allocation fails.
 */
static int *alloc_tables(tp_search_ctx *s)
{
    size_t gpus = (size_t)s->n_gpus, nets = (size_t)(s->n_nets > 0 ? s->n_nets : 1), size = 0;
    size_t local_gpu = tp_search__place(&size, nets * sizeof(int));
    size_t local_net = tp_search__place(&size, gpus * TP_MAXCHANNELS * sizeof(int));
    size_t gpu_order = tp_search__place(&size, gpus * gpus * sizeof(int));
    size_t gpu_order_count = tp_search__place(&size, gpus * sizeof(int));
    size_t used = tp_search__place(&size, gpus * sizeof(*s->used));
    size_t pci = tp_search__place(&size, 2 * gpus * sizeof(*s->pci_up));
    size_t port_first = tp_search__place(&size, (nets + 1) * sizeof(int));
    size_t port_nets = tp_search__place(&size, nets * nets * sizeof(int));
    size_t net_rows = tp_search__place(&size, gpus * nets * sizeof(*s->net_rows));
    size_t scratch = tp_search__place(&size, (gpus * nets + 1) * sizeof(int));
    char *block = calloc(1, size);
    if (!block)
        return NULL;
    s->tables = block;
    s->local_gpu = (int *)(block + local_gpu);
    s->local_net = (int *)(block + local_net);
    s->gpu_order = (int *)(block + gpu_order);
    s->gpu_order_count = (int *)(block + gpu_order_count);
    s->used = (uint64_t *)(block + used);
    s->pci_up = (const float **)(block + pci);
    s->pci_down = s->pci_up + s->n_gpus;
    s->port_first = (int *)(block + port_first);
    s->port_nets = (int *)(block + port_nets);
    s->net_rows = (tp_rank_row *)(block + net_rows);
    return (int *)(block + scratch);
}

tp_status tp_search__ctx_tables(tp_search_ctx *s, tp_system *sys, tp_error *err)
{
    memset(s, 0, sizeof(*s));
    s->stop.after = -1;
    s->sys = sys;
    s->err = err;
    s->n_gpus = sys->nodes[TP_NODE_GPU].count;
    s->n_nets = sys->nodes[TP_NODE_NET].count;
    int *first = alloc_tables(s);
    if (!first)
        return tp_fail_nomem(err);
    if (s->n_nets) {
        build_local_nets(s);
        build_local_gpus(s, first);
    }
    build_port_groups(s);
    for (int g = 0; g < s->n_gpus; g++) {
        build_gpu_order(s, g);
        find_pci_links(s, g);
    }
    return TP_OK;
}

tp_status tp_search__ctx_init(tp_search_ctx *s, tp_system *sys, tp_graph *save, tp_error *err)
{
    tp_status st = tp_search__ctx_tables(s, sys, err);
    if (st != TP_OK)
        return st;
    s->save = save;
    st = tp_search__compile_routes(s, err);
    if (st != TP_OK)
        tp_search__ctx_free(s);
    return st;
}

void tp_search__ctx_reuse(tp_search_ctx *s, tp_graph *save, tp_error *err)
{
    /* What a search leaves that the next one must not see: its graph and its passes. */
    s->save = save;
    s->err = err;
    s->changed_passes = 0;
    memset(s->used, 0, (size_t)s->n_gpus * sizeof(*s->used));
    if (s->accel)
        s->accel->reuse(s->accel_state);
}

void tp_search__ctx_free(tp_search_ctx *s)
{
    if (s->accel)
        s->accel->free(s->accel_state);
    s->accel = NULL;
    s->accel_state = NULL;
    for (int t = 0; t < TP_SEL_TYPES; t++) {
        if (s->sel[t].nets) /* most typeInter slots are never used */
            free(s->sel[t].nets);
        s->sel[t] = (tp_sel_lists){0};
    }
    if (s->net_rows)
        for (size_t i = 0; i < (size_t)s->n_gpus * (size_t)(s->n_nets > 0 ? s->n_nets : 1); i++)
            free(s->net_rows[i].c);
    free(s->tables);
    s->tables = NULL;
    s->local_gpu = s->local_net = s->gpu_order = s->gpu_order_count = NULL;
    s->port_first = s->port_nets = NULL;
    s->used = NULL;
    s->pci_up = s->pci_down = NULL;
    s->net_rows = NULL;
    tp_search__free_routes(s);
}
