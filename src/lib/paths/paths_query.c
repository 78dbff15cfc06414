/*
 * Stage 3, queries on computed routes: local NETs and GPUs, NET device and
 * PXN proxy of a rank, NVB peers (NCCL 2.22.3 paths.cc and topo.cc helpers
 * used by the search, the channels and the NIC report).
 */
#include "paths/paths.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Queries on the routes (topo.cc and paths.cc helpers)                */
/* ------------------------------------------------------------------ */

void tp_paths__get_local(const tp_system *sys, int type, int index, int result_type, int *locals,
                         int *n_locals, int *path_type)
{
    int min_type = TP_PATH_DIS, count = 0;
    float max_bw = 0;
    const tp_route *paths = sys->nodes[type].nodes[index].paths[result_type];
    for (int i = 0; paths && i < sys->nodes[result_type].count; i++) {
        /* NCCL 2.22.3: widest first, then best path type; ties are all kept. */
        if (paths[i].bw > max_bw || (paths[i].bw == max_bw && paths[i].type < min_type)) {
            max_bw = paths[i].bw;
            min_type = paths[i].type;
            if (path_type)
                *path_type = min_type;
            count = 0;
        }
        if (paths[i].bw == max_bw && paths[i].type == min_type)
            locals[count++] = i;
    }
    *n_locals = count;
}

int tp_paths__mirror_bits(int val, int pow2)
{
    int mirror = 0;
    for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (val & b)
            mirror |= mb;
    return mirror;
}

int tp_paths__local_net_start(const tp_system *sys, int g, int n_nets, int n_gpus)
{
    /* NCCL 2.22.3: spread GPUs over their NICs by device number, bit-mirrored for 2^k NICs;
     * 2.30.7 (local-net-start-modulo): the device number modulo the GPUs sharing the NICs. */
    int start = sys->nodes[TP_NODE_GPU].nodes[g].gpu.dev;
    if (tp_profile_has(sys->profile, TP_RULE_LOCAL_NET_START_MODULO) && n_gpus > 0)
        start %= n_gpus;
    if ((n_nets & (n_nets - 1)) == 0)
        start = tp_paths__mirror_bits(start, n_nets);
    return start;
}

int tp_paths__nets_per_gpu(const tp_system *sys, int n_nets, int n_gpus)
{
    /* NCCL 2.22.3 and NETDEVS_POLICY AUTO (2.28.3): the local NETs divided among their GPUs */
    if (sys->netdevs.kind == TP_NETDEVS_ALL)
        return n_nets;
    if (sys->netdevs.kind == TP_NETDEVS_MAX)
        return sys->netdevs.max < n_nets ? sys->netdevs.max : n_nets;
    return n_gpus > 0 ? (n_nets + n_gpus - 1) / n_gpus : n_nets;
}

/* What ncclTopoGetLocalNet reads of a GPU's routes, the same for every channel. */
typedef struct local_nets {
    int *nets; /* room for the system's NETs */
    int n_nets;
    int first;  /* the channel-0 pick before the modulo */
    int spread; /* channels step through this many NICs */
} local_nets;

static tp_status local_nets_of(const tp_system *sys, int g, local_nets *ln, tp_error *err)
{
    int gpus[TP_MAX_NODES], n_gpus;
    tp_paths__get_local(sys, TP_NODE_GPU, g, TP_NODE_NET, ln->nets, &ln->n_nets, NULL);
    if (ln->n_nets == 0)
        return tp_paths__internal(err, "local NET without any NET");
    tp_paths__get_local(sys, TP_NODE_NET, ln->nets[0], TP_NODE_GPU, gpus, &n_gpus, NULL);
    if (n_gpus == 0)
        return tp_paths__internal(err, "local NET without any GPU");
    ln->first = tp_paths__local_net_start(sys, g, ln->n_nets, n_gpus);
    ln->spread = tp_paths__nets_per_gpu(sys, ln->n_nets, n_gpus);
    return TP_OK;
}

struct tp_local_nets_memo {
    int n_gpus;
    bool *known;       /* per GPU index: nets[g] holds */
    bool *read;        /* per GPU index: the last query read its routes */
    local_nets nets[]; /* per GPU index */
};

tp_local_nets_memo *tp_paths__local_nets_memo_new(const tp_system *sys)
{
    size_t n = (size_t)sys->nodes[TP_NODE_GPU].count, width = (size_t)sys->nodes[TP_NODE_NET].count;
    /* One block: the memo, its entries, their NET lists, then the flags (the only part that needs
     * clearing). */
    tp_local_nets_memo *memo = malloc(sizeof(*memo) + n * sizeof(local_nets) +
                                      n * width * sizeof(int) + (2 * n + 1) * sizeof(bool));
    if (!memo)
        return NULL;
    memo->n_gpus = (int)n;
    int *lists = (int *)(void *)&memo->nets[n];
    for (size_t g = 0; g < n; g++)
        memo->nets[g].nets = lists + g * width;
    memo->known = (bool *)(void *)(lists + n * width);
    memo->read = memo->known + n;
    memset(memo->known, 0, 2 * n * sizeof(bool));
    return memo;
}

void tp_paths__local_nets_memo_free(tp_local_nets_memo *memo)
{
    free(memo);
}

void tp_paths__local_nets_memo_forget(tp_local_nets_memo *memo, int g)
{
    if (g >= 0)
        memo->known[g] = false;
    else
        memset(memo->known, 0, (size_t)memo->n_gpus * sizeof(bool));
}

bool tp_paths__local_nets_memo_read(const tp_local_nets_memo *memo, int g)
{
    return memo->read[g];
}

/* GPU g's local NETs: memo's while known, else computed (into memo, or scratch without one). */
static tp_status local_nets_memo_of(const tp_system *sys, int g, tp_local_nets_memo *memo,
                                    local_nets *scratch, const local_nets **out, tp_error *err)
{
    local_nets *ln = memo ? &memo->nets[g] : scratch;
    *out = ln;
    if (memo && memo->known[g])
        return TP_OK;
    tp_status st = local_nets_of(sys, g, ln, err);
    if (memo)
        memo->known[g] = st == TP_OK;
    return st;
}

/* The GPU index of rank, whose routes are read next; read_gpus (may be NULL) marks it. */
static tp_status gpu_read(const tp_system *sys, int rank, bool *read_gpus, int *g, tp_error *err)
{
    if ((*g = tp_paths__rank_to_index(sys, rank)) < 0)
        return tp_paths__internal(err, "local NET of a rank not in the system");
    if (read_gpus)
        read_gpus[*g] = true;
    return TP_OK;
}

static tp_status local_nets_by_rank(const tp_system *sys, int rank, local_nets *ln, tp_error *err)
{
    int g;
    tp_status st = gpu_read(sys, rank, NULL, &g, err);
    return st != TP_OK ? st : local_nets_of(sys, g, ln, err);
}

static const tp_node *local_net_on(const tp_system *sys, const local_nets *ln, int channel_id)
{
    int net = ln->first + channel_id % ln->spread;
    return &sys->nodes[TP_NODE_NET].nodes[ln->nets[net % ln->n_nets]];
}

tp_status tp_paths__get_local_net(const tp_system *sys, int rank, int channel_id, int64_t *id,
                                  int *dev, tp_error *err)
{
    int nets[TP_MAX_NODES];
    local_nets ln = {.nets = nets};
    tp_status st = local_nets_by_rank(sys, rank, &ln, err);
    if (st != TP_OK)
        return st;
    const tp_node *node = local_net_on(sys, &ln, channel_id);
    if (id)
        *id = node->id;
    if (dev)
        *dev = node->net.dev;
    return TP_OK;
}

/* The first channel (below MAXCHANNELS: ncclTopoGetLocalGpu's loop) on which ln picks NET net_id,
 * or -1. Channel c picks at offset c % spread: channels 0..spread-1 already show every choice. */
static int first_channel_on(const tp_system *sys, const local_nets *ln, int64_t net_id)
{
    for (int c = 0; c < ln->spread && c < sys->profile->max_channels; c++)
        if (local_net_on(sys, ln, c)->id == net_id)
            return c;
    return -1;
}

tp_status tp_paths__get_local_gpu(const tp_system *sys, int64_t net_id, int *gpu_index,
                                  tp_error *err)
{
    return tp_paths__get_local_gpu_reads(sys, net_id, gpu_index, NULL, err);
}

tp_status tp_paths__get_local_gpu_reads(const tp_system *sys, int64_t net_id, int *gpu_index,
                                        tp_local_nets_memo *memo, tp_error *err)
{
    bool *read_gpus = memo ? memo->read : NULL;
    if (memo)
        memset(read_gpus, 0, (size_t)memo->n_gpus * sizeof(bool));
    int n = tp_paths__id_to_index(sys, TP_NODE_NET, net_id);
    if (n < 0)
        return tp_paths__internal(err, "local GPU of an unknown NET");
    int gpus[TP_MAX_NODES], n_gpus;
    tp_paths__get_local(sys, TP_NODE_NET, n, TP_NODE_GPU, gpus, &n_gpus, NULL);
    /*
     * NCCL 2.22.3 tries channel by channel, close GPU by close GPU, for the first one that
     * picks this NET (its GPU found by rank, as ncclTopoGetLocalNet does): the GPU with the
     * earliest such channel, the first of them on a tie. Channel 0 reads every GPU's
     * choices up to a pick, so those reads (and their failures) come in that order.
     */
    int best_channel = -1;
    *gpu_index = -1;
    for (int lg = 0; lg < n_gpus && best_channel != 0; lg++) {
        int nets[TP_MAX_NODES];
        local_nets scratch = {.nets = nets};
        const local_nets *ln;
        int g;
        tp_status st =
            gpu_read(sys, sys->nodes[TP_NODE_GPU].nodes[gpus[lg]].gpu.rank, read_gpus, &g, err);
        if (st == TP_OK)
            st = local_nets_memo_of(sys, g, memo, &scratch, &ln, err);
        if (st != TP_OK)
            return st;
        int c = first_channel_on(sys, ln, net_id);
        if (c >= 0 && (best_channel < 0 || c < best_channel)) {
            best_channel = c;
            *gpu_index = gpus[lg];
        }
    }
    return TP_OK;
}

void tp_paths__local_net_count_by_bw(const tp_system *sys, int gpu, int *count)
{
    const tp_node *node = &sys->nodes[TP_NODE_GPU].nodes[gpu];
    float gpu_bw = 0, total = 0;
    /* NCCL 2.22.3 takes the GPU's bandwidth from its (last) link to a CPU. */
    for (int l = 0; l < node->n_links; l++)
        if (node->links[l].rem->type == TP_NODE_CPU)
            gpu_bw = node->links[l].bw;
    int nets[TP_MAX_NODES], n_nets, n = 0;
    tp_paths__get_local(sys, TP_NODE_GPU, gpu, TP_NODE_NET, nets, &n_nets, NULL);
    for (int l = 0; l < n_nets && total < gpu_bw; l++, n++)
        total += node->paths[TP_NODE_NET][nets[l]].bw;
    *count = n;
}

tp_status tp_paths__get_intermediate_rank(const tp_system *sys, int rank, int64_t net_id,
                                          int *intermediate_rank, tp_log *log, tp_error *err)
{
    int n = tp_paths__id_to_index(sys, TP_NODE_NET, net_id);
    int g = tp_paths__rank_to_index(sys, rank);
    if (n < 0 || g < 0)
        return tp_paths__internal(err, "intermediate rank of an unknown GPU or NET");
    const tp_route *path = &sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET][n];
    *intermediate_rank = rank;
    if (path->type != TP_PATH_PXN)
        return TP_OK;
    /* The first GPU on the route, past any NVSwitch. */
    const tp_node *node = NULL;
    int type = TP_NODE_NVS;
    for (int i = 0; i < path->count && type == TP_NODE_NVS; i++) {
        node = path->list[i]->rem;
        type = node->type;
    }
    if (type != TP_NODE_GPU || !node) {
        tp_log_warn(log, "Could not find intermediate GPU between GPU rank %d and NIC %llx", rank,
                    (unsigned long long)net_id);
        return tp_paths__internal(err, "no intermediate GPU on a PXN route");
    }
    *intermediate_rank = node->gpu.rank;
    return TP_OK;
}

/* ncclTopoDevToRank: the rank of this host's GPU with CUDA device dev, -1 if none. */
static int dev_to_rank(const tp_system *sys, int dev)
{
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++) {
        const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[i];
        if (TP_ID_SYSTEM_ID(gpu->id) == sys->system_id && gpu->gpu.dev == dev)
            return gpu->gpu.rank;
    }
    return -1;
}

/* The CUDA device of a rank of the job (identical hosts unless the job says otherwise). */
static int rank_dev(const tp_system *sys, const tp_job_view *job, int rank)
{
    if (job->rank_devs)
        return job->rank_devs[rank];
    int per_host = job->local_n_ranks > 0 ? job->local_n_ranks : 1;
    int first = job->rank / per_host * per_host;
    int g = tp_paths__rank_to_index(sys, first + rank % per_host);
    return g < 0 ? -1 : sys->nodes[TP_NODE_GPU].nodes[g].gpu.dev;
}

/* NCCL 2.22.3 pxnLevel 2: use the NIC's own GPU as proxy when it is an NVLink peer at PXB. */
static tp_status pxn_proxy(const tp_system *sys, int rank, int64_t net_id, int *proxy, bool *found,
                           tp_error *err)
{
    int n = tp_paths__id_to_index(sys, TP_NODE_NET, net_id);
    int g1 = tp_paths__rank_to_index(sys, rank), g2;
    *found = false;
    if (n < 0 || g1 < 0)
        return tp_paths__internal(err, "PXN proxy of an unknown GPU or NET");
    tp_status st = tp_paths__get_local_gpu(sys, net_id, &g2, err);
    if (st != TP_OK || g2 == -1)
        return st;
    const tp_node *peer = &sys->nodes[TP_NODE_GPU].nodes[g2];
    if (peer->paths[TP_NODE_GPU][g1].type <= TP_PATH_NVL &&
        peer->paths[TP_NODE_NET][n].type <= TP_PATH_PXB) {
        *proxy = peer->gpu.rank;
        *found = true;
    }
    return TP_OK;
}

/* NCCL 2.22.3 pxnLevel 1: the peer's NIC if reachable at PXN or better. */
static tp_status pxn_level1(const tp_system *sys, int rank, int64_t net_id, int net_dev,
                            int64_t *id, int *dev, int *proxy, tp_log *log, tp_error *err)
{
    int g = tp_paths__rank_to_index(sys, rank);
    int n = tp_paths__id_to_index(sys, TP_NODE_NET, net_id);
    if (g < 0 || n < 0)
        return tp_paths__internal(err, "PXN route of an unknown GPU or NET");
    if (sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET][n].type > TP_PATH_PXN)
        return TP_OK;
    if (!dev)
        return tp_paths__internal(err,
                                  "NCCL_P2P_PXN_LEVEL=1 needs the device (NCCL dereferences it)");
    *dev = net_dev;
    if (id)
        *id = net_id;
    /* NCCL 2.22.3 passes the device number where a NET id is expected. */
    return tp_paths__get_intermediate_rank(sys, rank, (int64_t)*dev, proxy, log, err);
}

tp_status tp_paths__get_net_dev(const tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                                int rank, int channel_id, int peer_rank, int64_t *id, int *dev,
                                int *proxy_rank, tp_log *log, tp_error *err)
{
    int64_t net_id;
    int net_dev;
    tp_status st = tp_paths__get_local_net(sys, rank, channel_id, &net_id, &net_dev, err);
    if (st != TP_OK)
        return st;
    if (dev)
        *dev = net_dev;
    if (id)
        *id = net_id;
    *proxy_rank = rank;
    int64_t cross_nic = tp_config_int(cfg, TP_P_CROSS_NIC);
    /* NCCL 2.22.3 keeps the level in an int. */
    int pxn_level =
        tp_paths__pxn_disable(cfg) == 1 ? 0 : (int)tp_config_int(cfg, TP_P_P2P_PXN_LEVEL);
    if (cross_nic != 0 && pxn_level == 0)
        return TP_OK;
    int local_rank = dev_to_rank(sys, rank_dev(sys, job, peer_rank));
    if (local_rank < 0)
        return TP_OK;
    if ((st = tp_paths__get_local_net(sys, local_rank, channel_id, &net_id, &net_dev, err)))
        return st;
    if (cross_nic == 0) {
        if (dev)
            *dev = net_dev;
        if (id)
            *id = net_id;
    }
    if (pxn_level == 1)
        return pxn_level1(sys, rank, net_id, net_dev, id, dev, proxy_rank, log, err);
    if (pxn_level != 2)
        return TP_OK;
    bool found;
    if ((st = pxn_proxy(sys, rank, net_id, proxy_rank, &found, err)) != TP_OK || !found)
        return st;
    if (dev)
        *dev = net_dev;
    if (id)
        *id = net_id;
    return TP_OK;
}

tp_status tp_paths__get_pxn_ranks(const tp_system *sys, const tp_config *cfg,
                                  const tp_job_view *job, int *ranks, int *n_ranks, tp_log *log,
                                  tp_error *err)
{
    *n_ranks = 0;
    if (sys->nodes[TP_NODE_NET].count == 0)
        return TP_OK;
    int g = tp_paths__rank_to_index(sys, job->rank);
    if (g < 0)
        return tp_paths__internal(err, "PXN ranks of a rank not in the system");
    int64_t bus_id = sys->nodes[TP_NODE_GPU].nodes[g].id;
    for (int rank = 0; rank < job->n_ranks; rank++) {
        int64_t net_id;
        int proxy, use_gdr, found = 0;
        tp_status st = tp_paths__get_net_dev(sys, cfg, job, job->rank, 0, rank, &net_id, NULL,
                                             &proxy, log, err);
        if (st != TP_OK)
            return st;
        if (proxy == job->rank)
            continue;
        if ((st = tp_paths__check_gdr(sys, cfg, bus_id, net_id, 1, &use_gdr, err)) != TP_OK)
            return st;
        for (int r = 0; use_gdr && r < *n_ranks; r++)
            found |= ranks[r] == proxy;
        if (use_gdr && !found)
            ranks[(*n_ranks)++] = proxy;
    }
    return TP_OK;
}

int tp_paths__get_nvb_gpus(const tp_system *sys, int rank, int *ranks)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int count = 0;
    for (int g = 0; g < gpus->count; g++) {
        if (gpus->nodes[g].gpu.rank != rank)
            continue;
        for (int p = 0; p < gpus->count; p++)
            if (gpus->nodes[g].paths[TP_NODE_GPU][p].type == TP_PATH_NVB)
                ranks[count++] = gpus->nodes[p].gpu.rank;
    }
    return count;
}

int tp_paths__all_nvlink(const tp_system *sys)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int min_type = TP_PATH_DIS;
    for (int i = 0; i < gpus->count; i++)
        for (int j = 0; j < gpus->count; j++)
            if (i != j && gpus->nodes[i].paths[TP_NODE_GPU][j].type < min_type)
                min_type = gpus->nodes[i].paths[TP_NODE_GPU][j].type;
    /* NCCL 2.22.3 looks at the best pair only. */
    return min_type >= TP_PATH_PIX ? 0 : 1;
}
