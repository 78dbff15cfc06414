/*
 * The orders the search tries candidates in (NCCL 2.22.3): local NICs of a
 * GPU per channel (topo.cc ncclTopoGetLocalNet / ncclTopoGetLocalGpu), the
 * NET list of ncclTopoSelectNets and the GPU ranking of
 * ncclTopoSearchNextGpuSort. Fidelity depends on these orders exactly.
 */
#include "search_int.h"

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
static int get_local(const tp_system *sys, int type, int index, int result_type, int *out)
{
    int min_type = TP_PATH_DIS, count = 0;
    float max_bw = 0;
    const tp_route *paths = sys->nodes[type].nodes[index].paths[result_type];
    for (int i = 0; i < sys->nodes[result_type].count; i++) {
        if (paths[i].bw > max_bw || (paths[i].bw == max_bw && paths[i].type < min_type)) {
            max_bw = paths[i].bw;
            min_type = paths[i].type;
            count = 0;
        }
        if (paths[i].bw == max_bw && paths[i].type == min_type)
            out[count++] = i;
    }
    return count;
}

static int is_pow2(int v)
{
    return (v & (v - 1)) == 0;
}

static int mirror_bits(int val, int pow2)
{
    int mirror = 0;
    for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (val & b)
            mirror |= mb;
    return mirror;
}

int tp_search__local_net(const tp_system *sys, int gpu, int channel)
{
    int nets[TP_MAX_NODES], gpus[TP_MAX_NODES];
    if (sys->nodes[TP_NODE_NET].count == 0 || gpu < 0)
        return -1;
    int n_nets = get_local(sys, TP_NODE_GPU, gpu, TP_NODE_NET, nets);
    int n_gpus = get_local(sys, TP_NODE_NET, nets[0], TP_NODE_GPU, gpus);
    /* NCCL 2.22.3: spread GPUs over their local NICs by (mirrored) device number. */
    int net = sys->nodes[TP_NODE_GPU].nodes[gpu].gpu.dev;
    if (is_pow2(n_nets))
        net = mirror_bits(net, n_nets);
    net += channel % TP_DIVUP(n_nets, n_gpus);
    return nets[net % n_nets];
}

int tp_search__local_gpu(const tp_system *sys, int net)
{
    int gpus[TP_MAX_NODES];
    if (sys->nodes[TP_NODE_GPU].count == 0)
        return -1;
    int n_gpus = get_local(sys, TP_NODE_NET, net, TP_NODE_GPU, gpus);
    for (int c = 0; c < TP_MAXCHANNELS; c++)
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

/* NCCL 2.22.3 ncclTopoSelectNets: preferred NICs of the GPU(s), then others by path type. */
static void build_selection(const tp_search_ctx *s, int type_inter, int gpu, int *nets, int *count)
{
    const tp_system *sys = s->sys;
    *count = 0;
    for (int g = 0; g < s->n_gpus; g++) {
        if (gpu != -1 && gpu != g)
            continue;
        int first = tp_search__local_net(sys, g, 0);
        append_unique(nets, count, first);
        for (int c = 1; c < TP_MAXCHANNELS; c++) {
            int n = tp_search__local_net(sys, g, c);
            if (n == first)
                break;
            append_unique(nets, count, n);
        }
    }
    for (int t = 0; t <= type_inter; t++) {
        for (int g = 0; g < s->n_gpus; g++) {
            if (gpu != -1 && gpu != g)
                continue;
            const tp_route *paths = sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET];
            for (int n = 0; n < s->n_nets && n < TP_MAXCHANNELS; n++)
                if (paths[n].type == t)
                    append_unique(nets, count, n);
        }
    }
}

const int *tp_search__select_nets(tp_search_ctx *s, int type_inter, int gpu, int *count)
{
    /* The routes are fixed during a search: build every row once per typeInter. */
    if (s->sel_type != type_inter) {
        for (int row = 0; row <= s->n_gpus; row++) {
            int g = row == s->n_gpus ? -1 : row;
            build_selection(s, type_inter, g, s->sel_nets + (size_t)row * s->n_nets,
                            &s->sel_count[row]);
        }
        s->sel_type = type_inter;
    }
    int row = gpu == -1 ? s->n_gpus : gpu;
    *count = s->sel_count[row];
    return s->sel_nets + (size_t)row * s->n_nets;
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

static int same_intra_scores(const gpu_score *sc, int count)
{
    for (int i = 1; i < count; i++)
        if (sc[i].intra_bw != sc[0].intra_bw || sc[i].intra_hops != sc[0].intra_hops)
            return 0;
    return 1;
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
        if (k == index || paths[k].count == 0 || (gpus[k].used & flag))
            continue; /* not a candidate */
        for (int i = real; i > 0; i--)
            next[i] = next[i - 1];
        next[0] = k;
        real++;
    }
    return real;
}

/* Scores without NET keys are fixed for a system: rank every GPU once. */
static void build_gpu_order(tp_search_ctx *s, int start)
{
    const tp_route *paths = s->sys->nodes[TP_NODE_GPU].nodes[start].paths[TP_NODE_GPU];
    gpu_score sc[TP_MAX_NODES];
    int count = 0;
    for (int i = 1; i < s->n_gpus; i++) {
        int k = (start + i) % s->n_gpus;
        if (paths[k].count == 0)
            continue;
        sc[count++] = (gpu_score){.g = k, .start_index = i, .intra_hops = paths[k].count,
                                  .intra_bw = (int)paths[k].bw};
    }
    sort_scores(sc, count);
    int *row = s->gpu_order + (size_t)start * (size_t)s->n_gpus;
    for (int i = 0; i < count; i++)
        row[i] = sc[i].g;
    s->gpu_order_count[start] = count;
}

/* Rank the candidate GPUs with NET keys: live scores, as NCCL 2.22.3 computes them. */
static tp_status rank_with_net(tp_search_ctx *s, const tp_graph *g, int start, int *next,
                               int *count_out, int sort_net)
{
    const tp_node *gpus = s->sys->nodes[TP_NODE_GPU].nodes;
    const uint64_t flag = 1ULL << g->n_channels;
    const tp_route *paths = gpus[start].paths[TP_NODE_GPU];
    int n = tp_search__id_to_index(s->sys, TP_NODE_NET, g->inter[g->n_channels * 2]);
    if (n < 0)
        return tp_fail(s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: start NET not found");
    const tp_route *net_paths = s->sys->nodes[TP_NODE_NET].nodes[n].paths[TP_NODE_GPU];
    gpu_score sc[TP_MAX_NODES];
    int count = 0;
    for (int i = 1; i < s->n_gpus; i++) {
        int k = (start + i) % s->n_gpus;
        if (paths[k].count == 0 || (gpus[k].used & flag))
            continue;
        sc[count++] = (gpu_score){.g = k, .start_index = i, .intra_hops = paths[k].count,
                                  .intra_bw = (int)paths[k].bw, .inter_hops = net_paths[k].count,
                                  .inter_pci_bw = gpu_pci_bw(s, k),
                                  .inter_bw = (int)net_paths[k].bw};
    }
    sort_scores(sc, count);
    /* Same intra scores everywhere: NCCL goes in reverse when not heading to the NET next. */
    int reverse = sort_net == -1 && same_intra_scores(sc, count);
    for (int i = 0; i < count; i++)
        next[i] = sc[reverse ? count - 1 - i : i].g;
    *count_out = count;
    return TP_OK;
}

tp_status tp_search__next_gpus(tp_search_ctx *s, const tp_graph *g, const tp_node *gpu, int *next,
                               int *count_out, int sort_net)
{
    const tp_node *gpus = s->sys->nodes[TP_NODE_GPU].nodes;
    const uint64_t flag = 1ULL << g->n_channels;
    int start = (int)(gpu - gpus), count = 0;
    if (s->sys->nodes[TP_NODE_NVS].count) {
        *count_out = nvswitch_next(s, g, start, next);
        return TP_OK;
    }
    if (sort_net)
        return rank_with_net(s, g, start, next, count_out, sort_net);
    /* Without NET keys the ranking is fixed: filtering by use keeps its order. */
    const int *row = s->gpu_order + (size_t)start * (size_t)s->n_gpus;
    for (int i = 0; i < s->gpu_order_count[start]; i++)
        if (!(gpus[row[i]].used & flag))
            next[count++] = row[i];
    *count_out = count;
    return TP_OK;
}

tp_status tp_search__ctx_init(tp_search_ctx *s, tp_system *sys, tp_graph *save, tp_error *err)
{
    memset(s, 0, sizeof(*s));
    s->sys = sys;
    s->save = save;
    s->err = err;
    s->n_gpus = sys->nodes[TP_NODE_GPU].count;
    s->n_nets = sys->nodes[TP_NODE_NET].count;
    s->sel_type = -1;
    size_t n_nets = (size_t)(s->n_nets > 0 ? s->n_nets : 1);
    s->local_gpu = calloc(n_nets, sizeof(int));
    s->sel_nets = calloc(n_nets * (size_t)(s->n_gpus + 1), sizeof(int));
    s->sel_count = calloc((size_t)s->n_gpus + 1, sizeof(int));
    s->gpu_order = calloc((size_t)s->n_gpus * (size_t)s->n_gpus, sizeof(int));
    s->gpu_order_count = calloc((size_t)s->n_gpus, sizeof(int));
    if (!s->local_gpu || !s->sel_nets || !s->sel_count || !s->gpu_order || !s->gpu_order_count) {
        tp_search__ctx_free(s);
        return tp_fail_nomem(err);
    }
    for (int n = 0; n < s->n_nets; n++)
        s->local_gpu[n] = tp_search__local_gpu(sys, n);
    for (int g = 0; g < s->n_gpus; g++) {
        build_gpu_order(s, g);
        find_pci_links(s, g);
    }
    tp_search__memo_reset(&s->memo);
    tp_status st = tp_search__compile_routes(s, err);
    if (st != TP_OK)
        tp_search__ctx_free(s);
    return st;
}

void tp_search__ctx_free(tp_search_ctx *s)
{
    free(s->local_gpu);
    free(s->sel_nets);
    free(s->sel_count);
    free(s->gpu_order);
    free(s->gpu_order_count);
    tp_search__memo_free(&s->memo);
    tp_search__free_routes(s);
    s->local_gpu = s->sel_nets = s->sel_count = s->gpu_order = s->gpu_order_count = NULL;
}

