/*
 * Stage 5: NCCL 2.22.3's channel construction (init.cc all-gather 3,
 * connect.cc ncclTopoPreset/ncclTopoPostset) for a job of identical hosts.
 * Trees and NVLS are in channels_trees.c, rings in channels_rings.c, P2P
 * counts in channels_p2p.c.
 */
#include "channels/channels_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int min_int(int a, int b)
{
    return a < b ? a : b;
}
static int max_int(int a, int b)
{
    return a > b ? a : b;
}

void tp_channels__free(tp_channels *ch)
{
    free(ch->rings);
    free(ch->ranks);
    free(ch->nvls);
    ch->rings = NULL;
    ch->ranks = NULL;
    ch->nvls = NULL;
}

/* Preset's ring fields of `rank`, at position i of a ring channel. */
static void preset_ring(tp_topo_ranks *tr, const int *intra, int n, int i, int c)
{
    tr->v[TP_TR_RING_RECV][c] = intra[0];
    tr->v[TP_TR_RING_SEND][c] = intra[n - 1];
    tr->v[TP_TR_RING_PREV][c] = i == 0 ? -1 : intra[i - 1];
    tr->v[TP_TR_RING_NEXT][c] = i == n - 1 ? -1 : intra[i + 1];
}

/* Preset's tree fields: NCCL 2.22.3 takes the tree parent at index 0 and the
 * children at 0 (TREE), 1/0 (BALANCED_TREE) or 1/1 (SPLIT_TREE). */
static void preset_tree(tp_topo_ranks *tr, const int *intra, int n, int i, int c, int pattern)
{
    int child0 = pattern == TP_PATTERN_TREE ? 0 : 1;
    int child1 = pattern == TP_PATTERN_SPLIT_TREE ? 1 : 0;
    tr->v[TP_TR_TREE_PARENT][c] = intra[0];
    tr->v[TP_TR_TREE_CHILD0][c] = intra[child0];
    tr->v[TP_TR_TREE_CHILD1][c] = intra[child1];
    tr->v[TP_TR_TREE_UP][c] = i == 0 ? -1 : intra[i - 1];
    tr->v[TP_TR_TREE_DOWN0][c] = i == n - 1 ? -1 : intra[i + 1];
}

/* ncclTopoPreset for one rank of a domain (home numbering). */
static void preset_rank(tp_topo_ranks *tr, const tp_domain_view *d, int rank)
{
    const tp_graph *ring = d->graphs[TP_GRAPH_RING];
    const tp_graph *tree = d->graphs[TP_GRAPH_TREE];
    int n = d->n_gpus;
    int nc = min_int(min_int(ring->n_channels, tree->n_channels), TP_MAXCHANNELS);
    for (int f = 0; f < TP_TR_COUNT; f++)
        for (int c = 0; c < TP_MAXCHANNELS; c++)
            tr->v[f][c] = TP_UNSET;
    for (int c = 0; c < nc; c++) {
        const int *ri = ring->intra + c * n;
        const int *ti = tree->intra + c * n;
        tr->v[TP_TR_TREE_UP][c] = tr->v[TP_TR_TREE_DOWN0][c] = -1;
        for (int i = 0; i < n; i++) {
            if (ri[i] == rank)
                preset_ring(tr, ri, n, i, c);
            if (ti[i] == rank)
                preset_tree(tr, ti, n, i, c, tree->pattern);
        }
    }
}

/* Preset's NVLS heads of a domain: first GPU of each NVLS channel, no duplicates. */
static int preset_nvls_heads(int *heads, const tp_domain_view *d)
{
    const tp_graph *g = d->graphs[TP_GRAPH_NVLS];
    int n_heads = 0;
    for (int c = 0; c < g->n_channels && c < TP_MAXCHANNELS; c++) {
        int head = g->intra[c * d->n_gpus];
        bool dup = false;
        for (int h = 0; h < n_heads; h++)
            dup |= heads[h] == head;
        if (!dup)
            heads[n_heads++] = head;
    }
    return n_heads;
}

static void graph_info(tp_graph_info *gi, const tp_graph *g)
{
    gi->pattern = g->pattern;
    gi->n_channels = g->n_channels;
    gi->same_channels = g->same_channels;
    gi->bw_intra = g->bw_intra;
    gi->bw_inter = g->bw_inter;
    gi->type_intra = g->type_intra;
    gi->type_inter = g->type_inter;
    gi->cross_nic = g->cross_nic;
}

/* NCCL 2.22.3 init.cc: every rank aligns its graphs on the minimum over ranks
 * (channels, sameChannels, bandwidths) and the maximum (types, crossNic). */
static void combine_graphs(tp_channels *ch, const tp_channels_job *job)
{
    for (int a = 0; a < TP_GRAPH_COUNT; a++) {
        tp_graph_info *out = &ch->combined[a];
        graph_info(out, job->domains[0].graphs[a]);
        for (int d = 1; d < job->n_domains; d++) {
            tp_graph_info gi;
            graph_info(&gi, job->domains[d].graphs[a]);
            out->n_channels = min_int(out->n_channels, gi.n_channels);
            out->same_channels = min_int(out->same_channels, gi.same_channels);
            out->bw_intra = gi.bw_intra < out->bw_intra ? gi.bw_intra : out->bw_intra;
            out->bw_inter = gi.bw_inter < out->bw_inter ? gi.bw_inter : out->bw_inter;
            out->type_intra = max_int(out->type_intra, gi.type_intra);
            out->type_inter = max_int(out->type_inter, gi.type_inter);
            out->cross_nic = max_int(out->cross_nic, gi.cross_nic);
        }
    }
}

/* First rank of every host, host of every rank. */
static tp_status alloc_hosts(tp_chan_ctx *x, tp_error *err)
{
    const tp_channels_job *job = x->job;
    x->host_first = tp_chan__alloc(x, (size_t)job->n_hosts + 1, sizeof(int));
    x->node_base = tp_chan__alloc(x, (size_t)job->n_hosts + 1, sizeof(int));
    if (!x->host_first || !x->node_base)
        return tp_fail_nomem(err);
    x->host_first[0] = 0;
    for (int h = 0; h < job->n_hosts; h++)
        x->host_first[h + 1] = x->host_first[h] + job->kinds[job->host_kind[h]].n_ranks;
    x->n_ranks = x->ch->n_ranks = x->host_first[job->n_hosts];
    x->rank_host = tp_chan__alloc(x, (size_t)x->n_ranks + 1, sizeof(int));
    if (!x->rank_host)
        return tp_fail_nomem(err);
    for (int h = 0; h < job->n_hosts; h++)
        for (int r = x->host_first[h]; r < x->host_first[h + 1]; r++)
            x->rank_host[r] = h;
    return TP_OK;
}

static tp_status alloc_ctx(tp_chan_ctx *x, tp_error *err)
{
    const tp_channels_job *job = x->job;
    int nd = job->n_domains;
    x->kinds = tp_chan__zalloc(x, (size_t)job->n_kinds, sizeof(*x->kinds));
    x->heads = tp_chan__zalloc(x, (size_t)nd, sizeof(*x->heads));
    x->n_heads = tp_chan__zalloc(x, (size_t)nd, sizeof(*x->n_heads));
    if (!x->kinds || !x->heads || !x->n_heads)
        return tp_fail_nomem(err);
    for (int k = 0; k < job->n_kinds; k++) {
        size_t per = (size_t)job->kinds[k].n_ranks;
        tp_kind_ctx *kx = &x->kinds[k];
        kx->tr = tp_chan__alloc(x, per, sizeof(*kx->tr)); /* every rank's is preset in full */
        kx->node_in_host = tp_chan__zalloc(x, per, sizeof(int));
        kx->first_local = tp_chan__zalloc(x, per, sizeof(int));
        if (!kx->tr || !kx->node_in_host || !kx->first_local)
            return tp_fail_nomem(err);
    }
    return alloc_hosts(x, err);
}

/* Preset of every local rank of each kind's representative host, and the domains' NVLS heads. */
static void preset_all(tp_chan_ctx *x)
{
    const tp_channels_job *job = x->job;
    for (int k = 0; k < job->n_kinds; k++) {
        const tp_kind_view *kv = &job->kinds[k];
        for (int l = 0; l < kv->n_ranks; l++) {
            const tp_domain_view *d = &job->domains[kv->domain_of[l]];
            preset_rank(&x->kinds[k].tr[l], d, x->host_first[kv->rep_host] + l);
        }
    }
    for (int d = 0; d < job->n_domains; d++)
        x->n_heads[d] = preset_nvls_heads(x->heads[d], &job->domains[d]);
}

/*
 * NCCL 2.22.3 init.cc: a "node" is the set of ranks whose ring channel 0
 * starts at the same rank, numbered in order of first appearance over ranks.
 * Hosts of one kind are identical, so one host's split repeats on each.
 */
static tp_status assign_kind_nodes(tp_chan_ctx *x, int k, tp_error *err)
{
    const tp_kind_view *kv = &x->job->kinds[k];
    tp_kind_ctx *kx = &x->kinds[k];
    int per = kv->n_ranks, base = x->host_first[kv->rep_host], n = 0;
    for (int l = 0; l < per; l++) {
        int first = kx->tr[l].v[TP_TR_RING_RECV][0];
        if (first == TP_UNSET || first < base || first >= base + per)
            return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                           "rank %d: ring channel 0 does not start on its host", base + l);
        int j = 0;
        while (j < n && kx->first_local[j] != first - base)
            j++;
        if (j == n)
            kx->first_local[n++] = first - base;
        kx->node_in_host[l] = j;
    }
    kx->nodes_per_host = n;
    return TP_OK;
}

/* Every kind's split, then the nodes of the job host by host. */
static tp_status assign_nodes(tp_chan_ctx *x, tp_error *err)
{
    const tp_channels_job *job = x->job;
    for (int k = 0; k < job->n_kinds; k++) {
        tp_status st = assign_kind_nodes(x, k, err);
        if (st != TP_OK)
            return st;
    }
    x->node_base[0] = 0;
    for (int h = 0; h < job->n_hosts; h++)
        x->node_base[h + 1] = x->node_base[h] + x->kinds[job->host_kind[h]].nodes_per_host;
    int nn = x->ch->n_nodes = x->node_base[job->n_hosts];
    x->node_first = tp_chan__alloc(x, (size_t)nn + 1, sizeof(int));
    if (!x->node_first)
        return tp_fail_nomem(err);
    for (int h = 0; h < job->n_hosts; h++) {
        const tp_kind_ctx *kx = &x->kinds[job->host_kind[h]];
        for (int j = 0; j < kx->nodes_per_host; j++)
            x->node_first[x->node_base[h] + j] = x->host_first[h] + kx->first_local[j];
    }
    return TP_OK;
}

/* localRanks / localRank of the reported rank within its node. */
static void local_ranks(tp_chan_ctx *x)
{
    int r = x->job->rank, me = tp_chan__local(x, r);
    const tp_kind_ctx *kx = &x->kinds[tp_chan__kind(x, r)];
    int per = x->job->kinds[tp_chan__kind(x, r)].n_ranks, mine = kx->node_in_host[me];
    x->ch->local_ranks = x->ch->local_rank = 0;
    for (int l = 0; l < per; l++) {
        if (kx->node_in_host[l] != mine)
            continue;
        if (l < me)
            x->ch->local_rank++;
        x->ch->local_ranks++;
    }
}

static int gcd_int(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* 2.28.9 init.cc ncclP2pSchedule: peers are scheduled in groups of NCCL_P2P_SCHEDULE_GROUP_SIZE
 * ranks across (NCCL) nodes, of the largest node's ranks on one, cut to divide every node's. */
static void p2p_group_size(tp_chan_ctx *x)
{
    int n_nodes = x->ch->n_nodes, max_local = 0;
    int *local = tp_chan__zalloc(x, (size_t)n_nodes, sizeof(int));
    if (!local)
        return; /* the size stays 0: not logged */
    for (int r = 0; r < x->n_ranks; r++)
        local[tp_chan__node(x, r)]++;
    for (int n = 0; n < n_nodes; n++)
        max_local = local[n] > max_local ? local[n] : max_local;
    int group = n_nodes > 1 ? TP_P2P_SCHEDULE_GROUP_SIZE : max_local;
    for (int n = 0; n < n_nodes; n++)
        if (local[n] % group != 0 || local[n] < group)
            group = gcd_int(group, local[n]);
    x->ch->p2p_group_size = group;
}

/*
 * init.cc: the job's CPU is mixed when hosts differ in architecture or
 * vendor; rank 0 says so.
 */
static void job_cpu(tp_chan_ctx *x)
{
    const tp_channels_job *job = x->job;
    const tp_kind_view *mine = &job->kinds[job->host_kind[x->rank_host[job->rank]]];
    int arch = mine->cpu_arch, vendor = mine->cpu_vendor;
    for (int h = 0; h < job->n_hosts; h++) {
        const tp_kind_view *kv = &job->kinds[job->host_kind[h]];
        if (kv->cpu_arch != arch)
            arch = TP_CPU_ARCH_MIXED;
        if (kv->cpu_vendor != vendor)
            vendor = TP_CPU_VENDOR_MIXED;
    }
    x->ch->cpu_arch = arch;
    x->ch->cpu_vendor = vendor;
    if (job->rank != 0)
        return;
    if (arch == TP_CPU_ARCH_MIXED)
        tp_log_info_sub(x->log, TP_SUB_GRAPH, "CPUs with mixed architecture were detected.");
    if (vendor == TP_CPU_VENDOR_MIXED)
        tp_log_info_sub(x->log, TP_SUB_GRAPH, "CPUs with mixed vendors were detected.");
}

/* Every rank's preset ring neighbours, rank by rank (its lookups made once). */
static void preset_ring_links(tp_chan_ctx *x)
{
    size_t nr = (size_t)x->n_ranks;
    for (size_t r = 0; r < nr; r++) {
        const tp_rank_topo t = tp_chan__rank_topo(x, (int)r);
        for (int c = 0; c < x->nc; c++) {
            x->ring_prev[(size_t)c * nr + r] = tp_chan__topo_of(&t, TP_TR_RING_PREV, c);
            x->ring_next[(size_t)c * nr + r] = tp_chan__topo_of(&t, TP_TR_RING_NEXT, c);
        }
    }
}

/* Start and end ranks of every node's ring fragment, joined into rings (connectRings). */
static tp_status connect_rings(tp_chan_ctx *x, tp_error *err)
{
    int nr = x->n_ranks, nn = x->ch->n_nodes;
    tp_rank_topo *first = tp_chan__alloc(x, (size_t)nn, sizeof(*first)); /* nodes' first ranks */
    if (!first)
        return tp_fail_nomem(err);
    for (int n = 0; n < nn; n++)
        first[n] = tp_chan__rank_topo(x, tp_chan__first_rank(x, n));
    preset_ring_links(x);
    for (int c = 0; c < x->nc; c++) {
        int *prev = x->ring_prev + (size_t)c * nr, *next = x->ring_next + (size_t)c * nr;
        for (int n = 0; n < nn; n++) {
            int recv = tp_chan__topo_of(&first[n], TP_TR_RING_RECV, c);
            int send = tp_chan__topo_of(&first[n], TP_TR_RING_SEND, c);
            int prev_send = tp_chan__topo_of(&first[(n - 1 + nn) % nn], TP_TR_RING_SEND, c);
            int next_recv = tp_chan__topo_of(&first[(n + 1) % nn], TP_TR_RING_RECV, c);
            if (recv < 0 || recv >= nr || send < 0 || send >= nr)
                return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                               "channel %d: node %d has no ring end", c, n);
            prev[recv] = prev_send;
            next[send] = next_recv;
        }
    }
    return TP_OK;
}

/* copyChannels: channels [start, end) repeat channels [0, end - start). */
static int copy_channels(tp_chan_ctx *x, int start, int end)
{
    int c = start, max_channels = tp_config__profile(x->cfg)->max_channels;
    for (; c < end && c < max_channels; c++)
        x->src[c] = x->src[c - start];
    return c;
}

/* ncclMaxNchannels (connect.cc). */
static int max_nchannels(const tp_config *cfg, tp_log *log)
{
    const int max_channels = tp_config__profile(cfg)->max_channels; /* MAXCHANNELS */
    int n = max_channels;
    tp_config__log_env(cfg, TP_P_MAX_NRINGS, log); /* read in this order, at every call */
    tp_config__log_env(cfg, TP_P_MAX_NCHANNELS, log);
    if (tp_config_int(cfg, TP_P_MAX_NRINGS) != -2)
        n = (int)tp_config_int(cfg, TP_P_MAX_NRINGS);
    if (tp_config_int(cfg, TP_P_MAX_NCHANNELS) != -2)
        n = (int)tp_config_int(cfg, TP_P_MAX_NCHANNELS);
    if (n > max_channels)
        n = max_channels;
    if (n < 1) {
        tp_log_warn(log, "User asked for a maximum of %d channels, setting it to 1", n);
        n = 1;
    }
    return n;
}

/* ncclMinNchannels (connect.cc). */
static int min_nchannels(const tp_config *cfg, tp_log *log)
{
    const int max_channels = tp_config__profile(cfg)->max_channels; /* MAXCHANNELS */
    int n = 0;
    tp_config__log_env(cfg, TP_P_MIN_NRINGS, log);
    tp_config__log_env(cfg, TP_P_MIN_NCHANNELS, log);
    if (tp_config_int(cfg, TP_P_MIN_NRINGS) != -2)
        n = (int)tp_config_int(cfg, TP_P_MIN_NRINGS);
    if (tp_config_int(cfg, TP_P_MIN_NCHANNELS) != -2)
        n = (int)tp_config_int(cfg, TP_P_MIN_NCHANNELS);
    if (n > max_channels) {
        tp_log_warn(log, "User asked for a minimum of %d channels, limiting to %d", n,
                    max_channels);
        n = max_channels;
    }
    return n < 0 ? 0 : n;
}

/*
 * From 2.27 envConfigOverride also reads NCCL_COLLNET_ENABLE ((int)strtol, logged at every comm
 * init unless NCCL_CONFIG_UNDEF_INT) and NCCL_NVLS_NCHANNELS, before capping the CTAs (rule
 * log-comm-config-env). ncclNvlsInit then reads the config: its own line never comes.
 */
static void log_comm_config_2_27(const tp_config *cfg, tp_log *log)
{
    if (!tp_profile_has(tp_config__profile(cfg), TP_RULE_LOG_COMM_CONFIG_ENV))
        return;
    const char *collnet = tp_config__raw_text(cfg, TP_P_COLLNET_ENABLE);
    if (collnet) {
        int v = (int)strtol(collnet, NULL, 0);
        if (v != INT_MIN)
            tp_log_info_sub(log, TP_SUB_ENV, "NCCL_COLLNET_ENABLE set by environment to %d.", v);
    }
    tp_config__log_env(cfg, TP_P_NVLS_NCHANNELS, log);
}

void tp_channels__ctas(const tp_config *cfg, tp_log *log, int *min_ctas, int *max_ctas)
{
    /* NCCL 2.22.3 init.cc envConfigOverride: values <= 0 keep the defaults (1 and MAXCHANNELS). */
    const int max_channels = tp_config__profile(cfg)->max_channels;
    int lo = 1, hi = max_channels;
    tp_config__log_env(cfg, TP_P_MIN_CTAS, log);
    if (tp_config_is_set(cfg, TP_P_MIN_CTAS)) {
        int v = (int)tp_config_int(cfg, TP_P_MIN_CTAS);
        if (v > 0)
            lo = v;
        else if (v != INT_MIN) /* INT_MIN is NCCL_CONFIG_UNDEF_INT: as if unset */
            tp_log_info_sub(log, TP_SUB_ENV, "NCCL_MIN_CTAS %d is too low, leaving it set at %d", v,
                            lo);
    }
    tp_config__log_env(cfg, TP_P_MAX_CTAS, log);
    if (tp_config_is_set(cfg, TP_P_MAX_CTAS)) {
        int v = (int)tp_config_int(cfg, TP_P_MAX_CTAS);
        if (v > 0)
            hi = v;
        else if (v != INT_MIN) /* INT_MIN is NCCL_CONFIG_UNDEF_INT: as if unset */
            tp_log_info_sub(log, TP_SUB_ENV, "NCCL_MAX_CTAS %d is too low, leaving it set at %d", v,
                            hi);
    }
    log_comm_config_2_27(cfg, log);
    if (lo > max_channels) {
        tp_log_warn(log, "minCTAs %d is larger than #channels upper limit %d, cap it to %d", lo,
                    max_channels, max_channels);
        lo = max_channels;
    }
    if (hi > max_channels) {
        tp_log_warn(log, "maxCTAs %d is larger than #channels upper limit %d, cap it to %d", hi,
                    max_channels, max_channels);
        hi = max_channels;
    }
    if (lo > hi) {
        tp_log_warn(log, "minCTAs %d is larger than maxCTAs %d, set both to %d", lo, hi, hi);
        lo = hi;
    }
    *min_ctas = lo;
    *max_ctas = hi;
}

/* Postset's channel count: duplication, the sm90 doubling, MIN/MAX and NVLS. */
static void size_channels(tp_chan_ctx *x)
{
    const tp_channels_job *job = x->job;
    tp_channels *ch = x->ch;
    tp_channel_count *count = &ch->count;
    const tp_nccl_profile *p = tp_config__profile(x->cfg);
    int n = count->duplicated = min_int(p->max_channels, TP_POSTSET_COPIES * x->nc);
    for (int c = 0; c < n; c++)
        x->src[c] = c;
    /* NCCL ncclTopoPostset: 4 compute channels per search channel across nodes, on sm90 (from
     * sm90 on with TP_RULE_POSTSET_DOUBLE_FROM_SM90). */
    bool doubling_cc = tp_profile_has(p, TP_RULE_POSTSET_DOUBLE_FROM_SM90)
                           ? job->min_comp_cap >= p->postset_double_cc
                           : job->min_comp_cap == p->postset_double_cc;
    if (doubling_cc && ch->n_nodes > 1 &&
        ch->combined[TP_GRAPH_RING].bw_intra > p->postset_double_bw && n < p->postset_double_max)
        n = copy_channels(x, n, TP_POSTSET_COPIES * n);
    count->sm90_doubled = n;
    count->max_limit = min_int(max_nchannels(x->cfg, x->log), job->max_ctas);
    n = count->after_max = min_int(count->max_limit, n);
    count->min_limit = max_int(min_nchannels(x->cfg, x->log), job->min_ctas);
    n = count->after_min = copy_channels(x, n, count->min_limit);
    int dom = tp_chan__domain(x, job->rank);
    ch->n_nvls_channels =
        ch->combined[TP_GRAPH_NVLS].n_channels == 0 ? 0 : job->domains[dom].nvls_channels;
    /* 2.28 (TP_RULE_NO_NVLS_CHANNEL_COPY): no longer raised to the NVLS channel count. */
    if (n < ch->n_nvls_channels && !tp_profile_has(p, TP_RULE_NO_NVLS_CHANNEL_COPY))
        n = copy_channels(x, n, ch->n_nvls_channels);
    x->n_channels = count->after_nvls = n;
}

/* The per-rank view of every final channel (tp_channels.ranks). */
static tp_status fill_ranks(tp_chan_ctx *x, tp_error *err)
{
    tp_channels *ch = x->ch;
    size_t nr = (size_t)x->n_ranks, nch = (size_t)x->n_channels;
    ch->ranks = malloc((nr * nch + 1) * sizeof(*ch->ranks));
    if (!ch->ranks)
        return tp_fail_nomem(err);
    for (size_t r = 0; r < nr; r++) {
        for (size_t k = 0; k < nch; k++) {
            int b = x->src[k], ring = b % x->nc;
            const tp_tree *t = &x->trees[(size_t)b * nr + r];
            tp_channel_rank *cr = &ch->ranks[r * nch + k];
            cr->ring_prev = x->ring_prev[(size_t)ring * nr + r];
            cr->ring_next = x->ring_next[(size_t)ring * nr + r];
            cr->tree_up = t->up;
            memcpy(cr->tree_down, t->down, sizeof(cr->tree_down));
        }
    }
    return TP_OK;
}

/* " [c] d0/d1/d2->rank->up" of the "Trees" line at p: its end. */
static char *put_tree_entry(char *p, int c, const tp_channel_rank *cr, int rank)
{
    p = TP_PUT_LIT(p, " [");
    p = TP_PUT_LIT(tp_put_int(p, c, 0), "] ");
    for (int i = 0; i < 2; i++)
        p = TP_PUT_LIT(tp_put_int(p, cr->tree_down[i], 0), "/");
    p = TP_PUT_LIT(tp_put_int(p, cr->tree_down[2], 0), "->");
    p = TP_PUT_LIT(tp_put_int(p, rank, 0), "->");
    return tp_put_int(p, cr->tree_up, 0);
}

/* The entry appended to the "Trees" line of `len` bytes (NUL at entries + len), cut at `max`
 * bytes. */
static size_t append_tree_entry(char *entries, size_t len, size_t max, int c,
                                const tp_channel_rank *cr, int rank)
{
    if (len + TP_TREE_ENTRY_SIZE <= max)
        return (size_t)(put_tree_entry(entries + len, c, cr, rank) - entries);
    char text[TP_TREE_ENTRY_SIZE];
    put_tree_entry(text, c, cr, rank);
    for (const char *t = text; *t && len < max; t++)
        entries[len++] = *t;
    entries[len] = '\0';
    return len;
}

/* "Ring %02d : %d -> %d -> %d" */
static void log_ring_line(const tp_chan_ctx *x, int c, const tp_channel_rank *cr, int rank)
{
    char *p = tp_log_begin_line(x->log, TP_SUB_GRAPH, TP_CHAN_LINE_SIZE);
    if (!p)
        return;
    p = tp_chan__put_line_head(TP_PUT_LIT(p, "Ring "), c, 2, cr->ring_prev, rank);
    tp_log_end_line(x->log, tp_put_int(p, cr->ring_next, 0));
}

/* The 1024-byte "Trees" line of the reported rank. */
static void log_trees_line(const tp_chan_ctx *x)
{
    const tp_channels *ch = x->ch;
    int rank = x->job->rank;
    char *line = tp_log_begin_line(x->log, TP_SUB_INIT, sizeof("Trees") + TP_TREES_LINE_SIZE);
    if (!line)
        return;
    char *entries = TP_PUT_LIT(line, "Trees");
    size_t len = 0;
    /* NCCL appends with snprintf into char[1024] at size 1023 - strlen: the line is cut at 1022;
     * the version's debug log may keep less of the message ("Trees" is 5 of it). */
    size_t max = TP_TREES_LINE_SIZE - 2, kept = (size_t)tp_config__profile(x->cfg)->log_message_max;
    if (kept && kept - 5 < max)
        max = kept - 5;
    for (int c = 0; c < ch->n_channels; c++)
        len = append_tree_entry(entries, len, max, c, &ch->ranks[(size_t)rank * ch->n_channels + c],
                                rank);
    tp_log_end_line(x->log, entries + len);
}

/* init.cc after postset: "Ring" lines, then the "Trees" line. */
static void log_rings_trees(const tp_chan_ctx *x)
{
    const tp_channels *ch = x->ch;
    int rank = x->job->rank;
    if (!x->log || !x->log->enabled)
        return;
    for (int c = 0; c < ch->n_channels; c++)
        log_ring_line(x, c, &ch->ranks[(size_t)rank * ch->n_channels + c], rank);
    log_trees_line(x);
}

/* 2.30.3 nvls.cc ncclNvlsTuning's defaults: NCCL_NVLS_CHUNKSIZE, and NCCL_NVLSTREE_MAX_CHUNKSIZE
 * unset (-2): 64 KiB from 4 nodes on, else the chunk size. */
#define TP_NVLS_CHUNK_SIZE (128 * 1024)
#define TP_NVLS_TREE_MAX_CHUNK_MANY_NODES (64 * 1024)
#define TP_NVLS_TREE_MANY_NODES 4

/* 2.30.3 (TP_RULE_LOG_NVLS_TUNING): after the all-gather, with NVLS support and an NVLS graph,
 * the NVLS channel count and chunk sizes NCCL settles on. */
static void log_nvls_tuning(const tp_chan_ctx *x)
{
    const tp_channels *ch = x->ch;
    int nvls = x->job->domains[tp_chan__domain(x, x->job->rank)].nvls_channels;
    if (!tp_profile_has(tp_config__profile(x->cfg), TP_RULE_LOG_NVLS_TUNING) || nvls == 0 ||
        ch->combined[TP_GRAPH_NVLS].n_channels == 0)
        return;
    int tree_max = x->job->n_hosts >= TP_NVLS_TREE_MANY_NODES ? TP_NVLS_TREE_MAX_CHUNK_MANY_NODES
                                                              : TP_NVLS_CHUNK_SIZE;
    tp_log_info_sub(x->log, TP_SUB_INIT,
                    "NVLS tuning: nChannels %d chunkSize %d treeMaxChunkSize %d", nvls,
                    TP_NVLS_CHUNK_SIZE, tree_max);
}

/* Everything after the all-gather: nodes, the comm line, postset. */
static tp_status postset(tp_chan_ctx *x, tp_error *err)
{
    tp_channels *ch = x->ch;
    size_t nr = (size_t)x->n_ranks;
    tp_status st;
    /* NCCL prints its communicator's address here; there is none to print, so the line says
     * PTR, as the conformance normalizer writes every address. */
    /* "comm PTR rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d" */
    char *p = tp_log_begin_line(x->log, TP_SUB_INIT, 128);
    if (p) {
        p = tp_put_int(TP_PUT_LIT(p, "comm PTR rank "), x->job->rank, 0);
        p = tp_put_int(TP_PUT_LIT(p, " nRanks "), x->n_ranks, 0);
        p = tp_put_int(TP_PUT_LIT(p, " nNodes "), ch->n_nodes, 0);
        p = tp_put_int(TP_PUT_LIT(p, " localRanks "), ch->local_ranks, 0);
        p = tp_put_int(TP_PUT_LIT(p, " localRank "), ch->local_rank, 0);
        tp_log_end_line(x->log, TP_PUT_LIT(p, " MNNVL 0"));
    }
    log_nvls_tuning(x);
    if (x->job->counts_only) { /* the counts read no ring or tree */
        size_channels(x);
        ch->n_channels = ch->n_collnet_channels = x->n_channels;
        return TP_OK;
    }
    /* connect.cc ncclTopoPostset: odd nodes exchange rings c and c^1 (from 2.23 at crossNic 2). */
    int ring_cross = ch->combined[TP_GRAPH_RING].cross_nic;
    if (tp_profile_has(tp_config__profile(x->cfg), TP_RULE_CROSS_NIC_RING_ALTERNATE))
        ring_cross = ring_cross == 2;
    x->cross_swap = ring_cross && x->nc % 2 == 0;
    x->cross_per_rank = x->nc % 2 == 0 &&
                        tp_profile_has(tp_config__profile(x->cfg), TP_RULE_CROSS_NIC_RING_PER_RANK);
    x->ring_prev = tp_chan__alloc(x, (size_t)x->nc * nr, sizeof(int));
    x->ring_next = tp_chan__alloc(x, (size_t)x->nc * nr, sizeof(int));
    x->trees = tp_chan__alloc(x, 2 * (size_t)x->nc * nr, sizeof(*x->trees));
    if (!x->ring_prev || !x->ring_next || !x->trees)
        return tp_fail_nomem(err);
    if ((st = connect_rings(x, err)) != TP_OK)
        return st;
    if ((st = tp_chan__connect_trees(x, err)) != TP_OK)
        return st;
    size_channels(x);
    ch->n_channels = ch->n_collnet_channels = x->n_channels;
    tp_chan__connect_nvls(x);
    if ((st = tp_chan__nvls_ranks(x, err)) != TP_OK)
        return st;
    if ((st = fill_ranks(x, err)) != TP_OK)
        return st;
    if ((st = tp_chan__build_rings(x, err)) != TP_OK)
        return st;
    log_rings_trees(x);
    return TP_OK;
}

tp_status tp_channels__build(tp_channels *ch, const tp_channels_job *job, const tp_config *cfg,
                             tp_log *log, tp_error *err)
{
    memset(ch, 0, sizeof(*ch));
    tp_chan_ctx x = {.job = job, .cfg = cfg, .log = log, .ch = ch};
    tp_status st = alloc_ctx(&x, err);
    if (st != TP_OK)
        goto out;
    preset_all(&x);
    combine_graphs(ch, job);
    if ((st = assign_nodes(&x, err)) != TP_OK)
        goto out;
    job_cpu(&x);
    ch->node = tp_chan__node(&x, job->rank);
    local_ranks(&x);
    p2p_group_size(&x);
    x.nc = ch->search_channels =
        min_int(ch->combined[TP_GRAPH_RING].n_channels, ch->combined[TP_GRAPH_TREE].n_channels);
    if (x.nc < 1) {
        st = tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "no ring or tree channel to build");
        goto out;
    }
    st = postset(&x, err);
out:
    tp_arena_free(&x.scratch);
    return st;
}

const char *tp_channels__graph_name(int slot)
{
    static const char *const names[TP_GRAPH_COUNT] = {
        [TP_GRAPH_RING] = "ring",
        [TP_GRAPH_TREE] = "tree",
        [TP_GRAPH_COLLNET_CHAIN] = "collnet-chain",
        [TP_GRAPH_COLLNET_DIRECT] = "collnet-direct",
        [TP_GRAPH_NVLS] = "nvls",
    };
    return slot >= 0 && slot < TP_GRAPH_COUNT ? names[slot] : "?";
}
