/*
 * P2P channel counts (NCCL 2.22.3 paths.cc ncclTopoComputeP2pChannels) and
 * the P2P chunk size (init.cc computeBuffSizes), on the reported rank's system.
 */
#include "channels/channels_impl.h"

#include <limits.h>

/* 2.29 device.h NCCL_MAX_DEV_WORK_P2P_PER_BATCH: peers one channel serves in a round. */
#define TP_P2P_PEERS_PER_BATCH 8
/* The largest count NCCL 2.22.3's pow2Up rounds within an int (2^30). */
#define TP_P2P_POW2_MAX (1 << 30)

/* v in 0..TP_P2P_POW2_MAX (tp_channels__p2p refuses the rest). */
static int pow2_up(int v)
{
    int p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/*
 * NCCL 2.22.3 rounds the P2P channel count up to a power of two in an int: above 2^30 that
 * shifts into the sign bit, below 0 it shifts by 32 (undefined behaviour in both), so NCCL's
 * counts are meaningless there. Refused, naming the settings that give the count.
 */
static tp_status refuse_p2p_count(const tp_config *cfg, int p2p_n, tp_error *err)
{
    const char *min_name = tp_config_name(TP_P_MIN_P2P_NCHANNELS);
    const char *max_name = tp_config_name(TP_P_MAX_P2P_NCHANNELS);
    const char *min_text = tp_config_str(cfg, TP_P_MIN_P2P_NCHANNELS);
    const char *max_text = tp_config_str(cfg, TP_P_MAX_P2P_NCHANNELS);
    if (p2p_n > TP_P2P_POW2_MAX)
        return tp_fail(err, TP_ERR_CONFIG, NULL, 0, 0,
                       "%s=%.40s: NCCL 2.22.3 rounds the P2P channel count %d up to a power of "
                       "two in an int, which overflows above 2^30 (undefined behaviour); "
                       "refused",
                       min_name, min_text ? min_text : "", p2p_n);
    return tp_fail(err, TP_ERR_CONFIG, NULL, 0, 0,
                   "%s=%.40s with %s=%.40s: a negative P2P channel count (%d), which NCCL 2.22.3 "
                   "rounds up to a power of two by shifting 1 by 32 bits (undefined behaviour); "
                   "refused",
                   min_name, min_text ? min_text : "(default)", max_name,
                   max_text ? max_text : "(default)", p2p_n);
}

static int pow2_down(int v)
{
    int p = 1;
    while (p <= v / 2)
        p <<= 1;
    return p;
}

/* ncclTopoGetLocal(GPU -> NET): the NETs with the best bandwidth, then the best type. */
static int local_nets(const tp_system *sys, int g, int *nets)
{
    int count = 0;
    tp_paths__get_local(sys, TP_NODE_GPU, g, TP_NODE_NET, nets, &count, NULL);
    return count;
}

/* getLocalNetCountByBw: local NETs needed to match the GPU's bandwidth to its CPU. */
static int net_count_by_bw(const tp_system *sys, int g)
{
    const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
    float gpu_bw = 0, total = 0;
    int nets[TP_MAX_NODES], count = 0;
    /* NCCL 2.22.3 takes the last GPU->CPU link (0 when the GPU sits behind a switch). */
    for (int l = 0; l < gpu->n_links; l++)
        if (gpu->links[l].rem->type == TP_NODE_CPU)
            gpu_bw = gpu->links[l].bw;
    int n = local_nets(sys, g, nets);
    for (int l = 0; l < n && total < gpu_bw; l++, count++)
        total += gpu->paths[TP_NODE_NET][nets[l]].bw;
    return count;
}

/* Channels per remote (network) peer, as ncclTopoGetNchannels computes them. */
static int net_channels(const tp_system *sys, int g, int n_ranks, int p2p_n, const tp_config *cfg)
{
    int n = (int)tp_config_int(cfg, TP_P_NCHANNELS_PER_NET_PEER);
    if (n != -1)
        return n;
    int max = TP_P2P_NET_CHANNELS;
    /* NCCL 2.22.3: avoid 8+ operations per channel at scale. */
    while ((long long)max * n_ranks > (long long)p2p_n * TP_P2P_NET_OPS_PER_CHANNEL && max > 1)
        max /= 2;
    int by_bw = net_count_by_bw(sys, g);
    return by_bw > max ? by_bw : max;
}

/* 2.29 paths.cc ncclTopoGetNchannels: a remote peer gets a channel per local NET needed to
 * match the GPU's bandwidth to its CPU (ncclTopoGetLocalNetCountByBw: the route's, 2.22.3 read
 * the link; only the NETs its channels use), and more to carry those NETs' bandwidth at
 * NCCL_P2P_PER_CHANNEL_NET_BW a channel. */
#define TP_P2P_PER_CHANNEL_NET_BW 14
static int net_channels_by_bw(const tp_system *sys, int g, const tp_config *cfg)
{
    int n = (int)tp_config_int(cfg, TP_P_NCHANNELS_PER_NET_PEER);
    if (n != -1)
        return n;
    const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
    int cpus[TP_MAX_NODES], n_cpus = 0, nets[TP_MAX_NODES];
    tp_paths__get_local(sys, TP_NODE_GPU, g, TP_NODE_CPU, cpus, &n_cpus, NULL);
    float gpu_bw = 0, total = 0;
    for (int i = 0, hops = INT_MAX; i < n_cpus; i++) { /* getLocalCpu: the fewest hops */
        const tp_route *r = &gpu->paths[TP_NODE_CPU][cpus[i]];
        if (r->count < hops)
            hops = r->count, gpu_bw = r->bw;
    }
    int count = 0, n_nets = local_nets(sys, g, nets);
    /* It walks ncclTopoGetLocalNet's channels until they wrap: NCCL_NETDEVS_POLICY (2.28.3)
     * sets how many of the local NETs (all as wide) a GPU's channels step through. */
    int gpus[TP_MAX_NODES], n_gpus = 0;
    if (n_nets > 0)
        tp_paths__get_local(sys, TP_NODE_NET, nets[0], TP_NODE_GPU, gpus, &n_gpus, NULL);
    if (n_gpus > 0)
        n_nets = tp_paths__nets_per_gpu(sys, n_nets, n_gpus);
    while (count < n_nets) {
        total += gpu->paths[TP_NODE_NET][nets[count++]].bw;
        if (total >= gpu_bw)
            break;
    }
    int by_bw = ((int)total + TP_P2P_PER_CHANNEL_NET_BW - 1) / TP_P2P_PER_CHANNEL_NET_BW;
    return count == 0 ? TP_P2P_NET_CHANNELS : count > by_bw ? count : by_bw;
}

/* Fewest channels GPU g wants with any peer (INT_MAX when it has none). */
static int gpu_min_channels(const tp_system *sys, int g, int n_ranks, int p2p_n,
                            const tp_config *cfg)
{
    bool by_bw = tp_profile_has(tp_config__profile(cfg), TP_RULE_P2P_CHANNELS_BY_NET_BW);
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int best = INT_MAX;
    for (int p = 0; p < gpus->count; p++) {
        if (p == g)
            continue;
        const tp_route *path = &gpus->nodes[p].paths[TP_NODE_GPU][g];
        int n = TP_P2P_LOCAL_CHANNELS;
        /* 2.29: an NVB route counts its NVLinks too. */
        bool nvlinks = path->type == TP_PATH_NVL || (by_bw && path->type == TP_PATH_NVB);
        if (nvlinks) {
            float nvl_bw =
                tp_system__nvlink_bw(tp_config__profile(cfg), gpus->nodes[g].gpu.cuda_comp_cap);
            int links = (int)(path->bw / nvl_bw);
            n = TP_P2P_LOCAL_CHANNELS * (links > 1 ? links : 1);
        }
        if (n < best)
            best = n;
    }
    /* Every rank not in the system is remote; the answer does not depend on which. */
    if (n_ranks > gpus->count) {
        int n = by_bw ? net_channels_by_bw(sys, g, cfg) : net_channels(sys, g, n_ranks, p2p_n, cfg);
        if (n >= 0 && n < best)
            best = n;
    }
    return best;
}

/* ncclTopoPathAllNVLink: every GPU pair at NVB or better. */
static bool all_nvlink(const tp_system *sys)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int min_path = TP_PATH_DIS;
    for (int i = 0; i < gpus->count; i++)
        for (int j = 0; j < gpus->count; j++)
            if (i != j && gpus->nodes[i].paths[TP_NODE_GPU][j].type < min_path)
                min_path = gpus->nodes[i].paths[TP_NODE_GPU][j].type;
    return min_path < TP_PATH_PIX;
}

static void chunk_size(tp_channels *ch, const tp_system *sys, tp_log *log)
{
    int chunk = TP_P2P_CHUNK_PCI;
    if (ch->n_nodes > 1)
        chunk = TP_P2P_CHUNK_NET;
    else if (all_nvlink(sys))
        chunk = TP_P2P_CHUNK_NVL;
    if (chunk * TP_NCCL_STEPS > TP_BUFFSIZE_SIMPLE)
        chunk = TP_BUFFSIZE_SIMPLE / TP_NCCL_STEPS;
    ch->p2p_chunk_size = chunk;
    char line[64];
    tp_put_int(TP_PUT_LIT(line, "P2P Chunksize set to "), chunk, 0);
    tp_log_put_sub(log, TP_SUB_INIT, line);
}

tp_status tp_channels__p2p(tp_channels *ch, const tp_system *sys, const tp_config *cfg, tp_log *log,
                           tp_error *err)
{
    chunk_size(ch, sys, log);
    /* ncclTopoComputeP2pChannels reads the maximum, then the minimum; a remote rank's count
     * reads NCCL_NCHANNELS_PER_NET_PEER (at the first GPU: every node has one). */
    tp_config__log_env(cfg, TP_P_MAX_P2P_NCHANNELS, log);
    tp_config__log_env(cfg, TP_P_MIN_P2P_NCHANNELS, log);
    if (ch->n_ranks > sys->nodes[TP_NODE_GPU].count && sys->nodes[TP_NODE_GPU].count > 0)
        tp_config__log_env(cfg, TP_P_NCHANNELS_PER_NET_PEER, log);
    int p2p_n = ch->n_channels;
    int max_p2p = (int)tp_config_int(cfg, TP_P_MAX_P2P_NCHANNELS);
    int min_p2p = (int)tp_config_int(cfg, TP_P_MIN_P2P_NCHANNELS);
    if (p2p_n > max_p2p)
        p2p_n = max_p2p;
    if (p2p_n < min_p2p)
        p2p_n = min_p2p;
    if (p2p_n < 0 || p2p_n > TP_P2P_POW2_MAX)
        return refuse_p2p_count(cfg, p2p_n, err);
    int min_ch = p2p_n;
    for (int g = 0; g < sys->nodes[TP_NODE_GPU].count; g++) {
        int n = gpu_min_channels(sys, g, ch->n_ranks, p2p_n, cfg);
        if (n < min_ch)
            min_ch = n;
    }
    /* NCCL 2.22.3: both counts are powers of two, within the kernel argument limit. */
    int per_peer = pow2_up(min_ch);
    p2p_n = pow2_up(p2p_n);
    int max_channels = tp_config__profile(cfg)->max_channels; /* MAXCHANNELS */
    if (p2p_n > pow2_down(max_channels))
        p2p_n = pow2_down(max_channels);
    ch->p2p_n_channels = p2p_n;
    ch->p2p_n_channels_per_peer = per_peer < p2p_n ? per_peer : p2p_n;
    /* 2.29 ncclTopoComputeP2pChannels: across nodes (NCCL_NCHANNELS_PER_NET_PEER unset), halved
     * until every peer (maxP2pPeers: all ranks) fits one round of NCCL_MAX_DEV_WORK_P2P_PER_BATCH
     * peers a channel. */
    if (tp_profile_has(tp_config__profile(cfg), TP_RULE_P2P_CHANNELS_BY_NET_BW) &&
        ch->n_nodes > 1 && tp_config_int(cfg, TP_P_NCHANNELS_PER_NET_PEER) == -1) {
        int rounds = (ch->n_ranks + TP_P2P_PEERS_PER_BATCH - 1) / TP_P2P_PEERS_PER_BATCH;
        per_peer = pow2_up(min_ch);
        while ((long long)per_peer * rounds > p2p_n && per_peer > 1)
            per_peer /= 2;
        ch->p2p_n_channels_per_peer = per_peer;
    }
    /* "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p
     * channels per peer" */
    char line[160], *p = TP_PUT_LIT(tp_put_int(line, ch->n_channels, 0), " coll channels, ");
    p = TP_PUT_LIT(tp_put_int(p, ch->n_collnet_channels, 0), " collnet channels, ");
    p = TP_PUT_LIT(tp_put_int(p, ch->n_nvls_channels, 0), " nvls channels, ");
    p = TP_PUT_LIT(tp_put_int(p, ch->p2p_n_channels, 0), " p2p channels, ");
    TP_PUT_LIT(tp_put_int(p, ch->p2p_n_channels_per_peer, 0), " p2p channels per peer");
    tp_log_put_sub(log, TP_SUB_INIT, line);
    return TP_OK;
}
