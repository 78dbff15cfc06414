/*
 * NCCL 2.27.5's ncclTopoSearchRecNet (src/graph/search.cc), which 2.24-2.27
 * rewrote (rule recnet-local-gpu-first): the next channel starts at each
 * candidate NET in turn. Against 2.22.3 (search_rec.c net_step; the loop over the NETs,
 * tp_search__each_start_net, is shared):
 *  - NVLS / CollNet direct heads: a NET whose local GPU already heads a
 *    channel, or that has none, is passed over (its bandwidth given back)
 *    and does not end the NET loop; only a head tried does;
 *  - rings and trees replay the previous channel only at sameChannels 1;
 *    otherwise (and for channel 0) the channel is searched from scratch:
 *    the PCI-order reference (channel 0, no NVSwitch), then the NET's local
 *    GPU (ncclTopoGetLocalGpu), then the other GPUs closest to the NET
 *    (ncclTopoGetLocal) whatever their bandwidth; a NET no GPU reaches
 *    (PATH_DIS) is skipped without giving its bandwidth back, as NCCL does.
 * The GPU steps themselves are search_rec.c's.
 */
#include "search/search_int.h"

/* An NVLS / CollNet direct head at NET n: its local GPU, unless it heads a channel already. */
static tp_status head_at_net(tp_search_ctx *s, tp_graph *g, int n, int count, int *found, int *time)
{
    if (g->n_channels >= count)
        return TP_OK;
    int gpu = s->local_gpu[n];
    if (gpu == -1)
        return TP_OK;
    int rank = s->sys->nodes[TP_NODE_GPU].nodes[gpu].gpu.rank;
    for (int c = 0; c < g->n_channels; c++)
        if (g->intra[c * s->n_gpus] == rank)
            return TP_OK; /* a duplicate head */
    *found = 1;
    return tp_search__try_first_gpu(s, g, n, gpu, TP_ORDER_FREE, time);
}

tp_status tp_search__free_net_2_27(tp_search_ctx *s, tp_graph *g, int n, int *time)
{
    tp_status st = TP_OK;
    if (s->stop.stopped)
        return TP_OK;
    if (g->n_channels == 0 && s->sys->nodes[TP_NODE_NVS].count == 0) {
        /* A reference in PCI order, on its own small budget. */
        int t = TP_SEARCH_TIMEOUT_PCI_ORDER;
        if ((st = tp_search__try_first_gpu(s, g, n, 0, TP_ORDER_PCI, &t)) != TP_OK)
            return st;
        if (s->stop.stopped && t == -1)
            s->stop.left = *time; /* stopped on its own budget: the pass's is what it had left */
        if (t == -1)
            *time = -1;
    }
    int local = s->local_gpu[n];
    if (local != -1 &&
        (st = tp_search__try_first_gpu(s, g, n, local, TP_ORDER_FREE, time)) != TP_OK)
        return st;
    int gpus[TP_MAX_NODES], count = 0, type = TP_PATH_DIS;
    tp_paths__get_local(s->sys, TP_NODE_NET, n, TP_NODE_GPU, gpus, &count, &type);
    if (type == TP_PATH_DIS)
        return TP_OK;
    for (int i = 0; i < count && st == TP_OK; i++)
        if (gpus[i] != local)
            st = tp_search__try_first_gpu(s, g, n, gpus[i], TP_ORDER_FREE, time);
    return st;
}

/* Whether NET n has no GPU at all: NCCL's loop then skips giving its bandwidth back. */
static int net_unreached(const tp_search_ctx *s, int n)
{
    int gpus[TP_MAX_NODES], count = 0, type = TP_PATH_DIS;
    tp_paths__get_local(s->sys, TP_NODE_NET, n, TP_NODE_GPU, gpus, &count, &type);
    return type == TP_PATH_DIS;
}

/* A ring or tree channel at NET n: the previous channel replayed, or one from scratch. */
static tp_status chain_at_net(tp_search_ctx *s, tp_graph *g, int n, int *leak, int *time)
{
    *leak = 0;
    if (g->n_channels > 0 && g->same_channels == 1) {
        int gi;
        tp_status st = tp_search__replay_first(s, g, &gi);
        if (st != TP_OK)
            return st;
        return tp_search__try_first_gpu(s, g, n, gi, TP_ORDER_REPLAY, time);
    }
    tp_status st = tp_search__sub_search(s, g, TP_SUB_FREE_NET, n, time);
    *leak = st == TP_OK && net_unreached(s, n);
    return st;
}

/* NCCL 2.27.5 ncclTopoSearchRecNet at an opened NET: a head, or a ring / tree channel. */
static tp_status net_step_2_27(tp_search_ctx *s, tp_graph *g, const tp_net_start *at, int *found,
                               int *leak, int *time)
{
    *leak = 0;
    if (tp_search__head_pattern(g->pattern))
        return head_at_net(s, g, at->n, at->count, found, time);
    return chain_at_net(s, g, at->n, leak, time);
}

tp_status tp_search__rec_net_2_27(tp_search_ctx *s, tp_graph *g, int *time)
{
    return tp_search__each_start_net(s, g, net_step_2_27, time);
}
