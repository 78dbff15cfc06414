/*
 * Stage 6: NCCL 2.22.3's tuning model, ncclTopoTuneModel (graph/tuning.cc).
 * Arithmetic follows NCCL's types step by step (float fields, double
 * constants and std::min/std::max of doubles), so the printed %8.1f/%6.1f
 * figures match to the last digit.
 */
#include "tuning/tuning_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const coll_names[TP_COLL_COUNT] = {"Broadcast", "Reduce", "AllGather",
                                                      "ReduceScatter", "AllReduce"};
static const char *const algo_names[TP_ALGO_COUNT] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
static const char *const proto_names[TP_PROTO_COUNT] = {"LL", "LL128", "Simple"};

const char *tp_tune__coll_name(tp_coll c)
{
    return c >= 0 && c < TP_COLL_COUNT ? coll_names[c] : "?";
}
const char *tp_tune__algo_name(tp_algo a)
{
    return a >= 0 && a < TP_ALGO_COUNT ? algo_names[a] : "?";
}
const char *tp_tune__proto_name(tp_proto p)
{
    return p >= 0 && p < TP_PROTO_COUNT ? proto_names[p] : "?";
}

#define min_d tp_tune__min_d
#define min_f tp_tune__min_f
#define max_f tp_tune__max_f

/* NCCL's log2i: floor(log2(n)), -1 for 0. */

int tp_tune__log2i(long n)
{
    int l = -1;
    for (unsigned long u = (unsigned long)n; u; u >>= 1)
        l++;
    return l;
}

void tp_tune__parse_list(const char *text, const char *const *names, int n, int *list)
{
    bool invert = text[0] == '^';
    for (int i = 0; i < n; i++)
        list[i] = invert;
    for (const char *p = text + invert; *p;) {
        size_t len = strcspn(p, ",");
        for (int i = 0; i < n; i++)
            if (len > 0 && strlen(names[i]) == len && strncasecmp(p, names[i], len) == 0)
                list[i] = !invert;
        p += len + (p[len] == ',');
    }
}

/* An invalid thread count: WARN in 2.22.3, INFO (GRAPH|ENV) from 2.27 (rule nthreads-info). */
#define NTHREADS_COMPLAIN(info, log, ...)                                                          \
    ((info) ? tp_log_info_sub(log, TP_SUB_GRAPH | TP_SUB_ENV, __VA_ARGS__)                         \
            : tp_log_warn(log, __VA_ARGS__))

/* NCCL getNthreads: a set value must be a multiple of a warp, within [min, max]. */
static int nthreads(const tp_tuning *t, tp_log *log, const char *name, int env, int min, int max,
                    int def)
{
    if (env <= 0)
        return def;
    if (env % t->k->shared->warp_size != 0) {
        NTHREADS_COMPLAIN(t->nthreads_info, log, "Invalid %s %d (must be a multiple of %d)", name,
                          env, t->k->shared->warp_size);
        return max;
    }
    if (env > max) {
        NTHREADS_COMPLAIN(t->nthreads_info, log, "Invalid %s %d (maximum %d).", name, env, max);
        return max;
    }
    if (env < min) {
        NTHREADS_COMPLAIN(t->nthreads_info, log, "Invalid %s %d (minimum %d).", name, env, min);
        return min;
    }
    return env;
}

static void set_max_threads(tp_tuning *t, const tp_config *cfg, tp_log *log)
{
    const tp_tune_graph *ring = &t->job.graphs[TP_ALGO_RING];
    int env = (int)tp_config_int(cfg, TP_P_NTHREADS);
    int env128 = (int)tp_config_int(cfg, TP_P_LL128_NTHREADS);
    int min = t->k->shared->min_thread_warps * t->k->shared->warp_size;
    int simple_def = ring->bw_intra * ring->n_channels <= t->k->shared->pci_bw
                         ? t->k->shared->simple_pci_threads
                         : t->k->shared->simple_max_threads;
    int(*mt)[TP_PROTO_COUNT] = t->max_threads;
    tp_config__log_env(cfg, TP_P_NTHREADS, log); /* tuning.cc: first read, then NCCL_LL128_ */
    mt[TP_ALGO_RING][TP_PROTO_SIMPLE] =
        nthreads(t, log, "NCCL_NTHREADS", env, min, t->k->shared->simple_max_threads, simple_def);
    mt[TP_ALGO_TREE][TP_PROTO_SIMPLE] =
        nthreads(t, log, "NCCL_NTHREADS", env, min, t->k->shared->simple_max_threads,
                 t->k->shared->simple_max_threads);
    for (int a = TP_ALGO_COLLNET_DIRECT; a <= TP_ALGO_NVLS_TREE; a++) /* not PAT: NCCL leaves 0 */
        mt[a][TP_PROTO_SIMPLE] = t->k->shared->max_threads;
    mt[TP_ALGO_RING][TP_PROTO_LL] = mt[TP_ALGO_TREE][TP_PROTO_LL] =
        nthreads(t, log, "NCCL_NTHREADS", env, min, t->k->shared->ll_max_threads,
                 t->k->shared->ll_max_threads);
    tp_config__log_env(cfg, TP_P_LL128_NTHREADS, log);
    mt[TP_ALGO_RING][TP_PROTO_LL128] = mt[TP_ALGO_TREE][TP_PROTO_LL128] =
        nthreads(t, log, "NCCL_LL128_NTHREADS", env128,
                 t->k->shared->ll128_max_threads / t->k->shared->ll128_min_threads_div,
                 t->k->shared->ll128_max_threads, t->k->shared->ll128_max_threads);
}

/* NCCL 2.22.3 getNetOverhead: NCCL_NET_OVERHEAD (ns), else by the job's x86 CPU vendor. */
static float net_overhead(const tp_tune_constants *k, const tp_tune_job *job, const tp_config *cfg)
{
    int64_t ns = tp_config_int(cfg, TP_P_NET_OVERHEAD);
    if (ns != -2)
        return (float)((double)ns * .001);
    if (job->comm_cpu_arch == TP_CPU_ARCH_X86 && job->comm_cpu_vendor == TP_CPU_VENDOR_INTEL)
        return (float)k->shared->net_overhead_intel;
    if (job->comm_cpu_arch == TP_CPU_ARCH_X86 && job->comm_cpu_vendor == TP_CPU_VENDOR_AMD)
        return (float)k->shared->net_overhead_amd;
    return (float)k->shared->net_overhead_other;
}

/* The shared latency tables with the version's own cells. */
static void init_latencies(model_ctx *m)
{
    const tp_tune_constants *k = m->k;
    memcpy(m->base_lat, k->shared->base_lat, sizeof(m->base_lat));
    memcpy(m->hw_lat, k->shared->hw_lat, sizeof(m->hw_lat));
    for (int i = 0; i < k->n_lat_cells; i++) {
        const tp_tune_lat_cell *c = &k->lat_cells[i];
        float *cell = c->hw == TP_TUNE_BASE_LAT ? &m->base_lat[c->algo][c->proto]
                                                : &m->hw_lat[c->hw][c->algo][c->proto];
        *cell = c->us;
    }
}

/* The per-architecture bandwidth caps: the shared rows, or the version's Blackwell row. */
static void init_bw_caps(model_ctx *m, const tp_tuning *t)
{
    const tp_tune_job *job = &t->job;
    const tp_tune_constants *k = m->k;
    const tp_tune_shared *s = k->shared;
    bool blackwell = k->blackwell && job->min_comp_cap >= k->blackwell_cc;
    tp_cc_class cc = job->min_comp_cap >= 90   ? TP_CC_HOPPER
                     : job->min_comp_cap >= 80 ? TP_CC_AMPERE
                                               : TP_CC_VOLTA;
    int nodes = job->n_nodes <= 2 ? job->n_nodes - 1 : 2;
    /* One node: LL by GPU; several: by rank 0's CPU vendor (AMD row, else Intel; 2.27: the
     * job's MIXED vendors take the AMD row too). */
    bool amd_row = job->cpu_vendor == TP_CPU_VENDOR_AMD ||
                   (t->model_2_27 && job->cpu_vendor == TP_CPU_VENDOR_MIXED);
    int ll_row = job->n_nodes == 1 ? (int)cc : amd_row ? 1 : 0;
    const tp_tune_cc_row *row = blackwell ? k->blackwell : NULL;
    m->ll_max_bw = row && job->n_nodes == 1 ? row->ll_max_bw[nodes] : s->ll_max_bw[ll_row][nodes];
    m->tree_max_bw = row ? row->tree_max_bw[nodes] : s->tree_max_bw[cc][nodes];
    m->ring_ll128_max_bw = row ? row->ring_ll128_max_bw[nodes] : s->ring_ll128_max_bw[cc][nodes];
    m->tree_ll128_max_bw = row ? row->tree_ll128_max_bw[nodes] : s->tree_ll128_max_bw[cc][nodes];
    tp_cc_class arch = blackwell ? TP_CC_BLACKWELL : cc;
    m->nvls_efficiency = k->nvls_efficiency[arch];
    m->nvls_tree_max_bw = k->nvls_tree_max_bw[arch][nodes];
}

static void init_ctx(model_ctx *m, const tp_tuning *t, const tp_config *cfg)
{
    const tp_tune_job *job = &t->job;
    m->k = t->k;
    m->job = job;
    init_latencies(m);
    init_bw_caps(m, t);
    m->nvls_2_28 = tp_profile_has(tp_config__profile(cfg), TP_RULE_NVLS_MODEL_2_28);
    /* NCCL 2.22.3 favours Tree on POWER: Tree/Simple takes Ring's PCI latency. */
    if (job->cpu_arch == TP_CPU_ARCH_POWER)
        m->hw_lat[TP_HW_PCI][TP_ALGO_TREE][TP_PROTO_SIMPLE] =
            m->hw_lat[TP_HW_PCI][TP_ALGO_RING][TP_PROTO_SIMPLE];
    m->ppn = (float)job->n_ranks / (float)job->n_nodes;
    m->net_overhead = job->n_nodes > 1 ? net_overhead(m->k, job, cfg) : 0.0f;
    /* NCCL 2.22.3 tests typeIntra == LINK_NVL, the value of PATH_NVL. */
    _Static_assert((int)TP_PATH_NVL == (int)TP_LINK_NVL, "NVLink path and link types differ");
    for (int a = 0; a < TP_ALGO_COUNT; a++) {
        m->intra_hw[a] = job->graphs[a].type_intra == TP_PATH_NVL ? TP_HW_NVLINK : TP_HW_PCI;
        m->hw[a] = job->n_nodes == 1 ? m->intra_hw[a] : TP_HW_NET;
    }
}

/* Which algorithm/protocol pairs NCCL 2.22.3 models for a collective. */
static bool modelled(tp_coll coll, tp_algo a, tp_proto p)
{
    if ((coll == TP_COLL_BROADCAST || coll == TP_COLL_REDUCE) && a != TP_ALGO_RING)
        return false;
    if ((coll == TP_COLL_REDUCESCATTER || coll == TP_COLL_ALLGATHER) && a != TP_ALGO_RING &&
        a != TP_ALGO_NVLS && a != TP_ALGO_COLLNET_DIRECT)
        return false;
    return !((a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE) && p != TP_PROTO_SIMPLE);
}

int tp_tune__ring_steps(tp_coll coll, int n_ranks)
{
    return coll == TP_COLL_ALLREDUCE                                    ? 2 * (n_ranks - 1)
           : coll == TP_COLL_REDUCESCATTER || coll == TP_COLL_ALLGATHER ? n_ranks - 1
                                                                        : n_ranks;
}

float tp_tune__graph_bw(const model_ctx *m, tp_algo a)
{
    const tp_tune_graph *g = &m->job->graphs[a];
    int n_nodes = m->job->n_nodes;
    bool collnet = a == TP_ALGO_COLLNET_DIRECT || a == TP_ALGO_COLLNET_CHAIN;
    float bw = n_nodes <= 2 || collnet ? g->bw_intra : g->bw_inter;
    if (a == TP_ALGO_NVLS)
        bw = min_f(g->bw_intra, g->bw_inter);
    if (a == TP_ALGO_NVLS_TREE)
        bw = min_f(g->bw_intra, n_nodes <= 2 ? g->bw_inter : g->bw_inter / 2);
    return bw;
}

float tp_tune__ring_tree_bus_bw(const model_ctx *m, tp_algo a, tp_proto p, float bus,
                                double ring_ll128_share)
{
    const tp_tune_shared *s = m->k->shared;
    const tp_tune_graph *g = &m->job->graphs[a];
    int n_ch = g->n_channels;
    if (a == TP_ALGO_RING && p == TP_PROTO_LL)
        bus = (float)min_d(m->ll_max_bw, bus * s->ring_ll_share);
    if (a == TP_ALGO_RING && p == TP_PROTO_LL128)
        bus = (float)min_d(bus * ring_ll128_share, n_ch * m->ring_ll128_max_bw);
    if (a == TP_ALGO_TREE)
        bus = (float)min_d(bus * s->tree_share, n_ch * m->tree_max_bw);
    if (a == TP_ALGO_TREE && p == TP_PROTO_LL)
        bus = (float)min_d(bus * 1.0 / s->tree_ll_div, m->ll_max_bw);
    if (a == TP_ALGO_TREE && p == TP_PROTO_LL128)
        bus = (float)min_d(
            bus * (m->job->n_nodes == 1 ? s->tree_ll128_share_one_node : s->tree_ll128_share),
            n_ch * m->tree_ll128_max_bw);
    if (a == TP_ALGO_TREE && g->pattern == TP_PATTERN_TREE)
        bus = (float)(bus * s->tree_pattern_share);
    return bus;
}

float tp_tune__collnet_direct_bus_bw(const model_ctx *m, float bus)
{
    int n_ch = m->job->graphs[TP_ALGO_COLLNET_DIRECT].n_channels;
    if (n_ch == 0)
        return 0; /* NCCL divides by zero here; CollNet is disabled anyway */
    float factor = (float)(m->ppn / (1.0 * n_ch));
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (m->job->min_comp_cap >= 90)
        bus = (float)(bus * m->k->shared->collnet_sm90_share);
    return bus;
}

/* 2.22.3's CollNetDirect AllGather/ReduceScatter (no CollNet plugin here). */
static float collnet_direct_bw(const model_ctx *m, tp_coll coll, float bus, float bw)
{
    const tp_tune_shared *s = m->k->shared;
    float ppn = m->ppn;
    if (coll != TP_COLL_ALLGATHER && coll != TP_COLL_REDUCESCATTER)
        return tp_tune__collnet_direct_bus_bw(m, bus);
    bus = ppn * bw;
    if (m->job->n_nodes > 1)
        bus = 0; /* needs the plugin's iallgather / ireducescatter */
    float w = (ppn - 1) / (s->collnet_ag_rs_measured_ppn - 1);
    return (float)(bus *
                   (w * s->collnet_ag_rs_share_max_ppn + (1 - w) * s->collnet_ag_rs_share_1ppn));
}

float tp_tune__algo_ratio(const model_ctx *m, tp_coll coll, tp_algo a)
{
    int n_ranks = m->job->n_ranks;
    float ratio = 1.0f;
    if (a == TP_ALGO_RING)
        ratio = (float)(ratio * ((1.0 * n_ranks) / tp_tune__ring_steps(coll, n_ranks)));
    else if ((a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE) && m->nvls_2_28)
        ratio =
            (float)(ratio * ((1.0 * n_ranks) / tp_tune__ring_steps(coll, n_ranks))); /* as Ring */
    else if (a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE)
        ratio = (float)(ratio * m->k->shared->nvls_algo_ratio);
    else
        ratio = (float)(ratio * m->k->shared->tree_algo_ratio);
    return ratio;
}

static float entry_bw(const model_ctx *m, tp_coll coll, tp_algo a, tp_proto p)
{
    const tp_tune_shared *s = m->k->shared;
    float bw = tp_tune__graph_bw(m, a);
    float bus = m->job->graphs[a].n_channels * bw;
    bus = tp_tune__ring_tree_bus_bw(m, a, p, bus,
                                    m->ppn < 2 ? s->ring_ll128_share_low_ppn : s->ring_ll128_share);
    if ((a == TP_ALGO_COLLNET_DIRECT || a == TP_ALGO_COLLNET_CHAIN) && p != TP_PROTO_SIMPLE)
        bus = 0;
    if (a == TP_ALGO_COLLNET_DIRECT && p == TP_PROTO_SIMPLE)
        bus = collnet_direct_bw(m, coll, bus, bw);
    if (a == TP_ALGO_COLLNET_DIRECT && (coll == TP_COLL_ALLGATHER || coll == TP_COLL_REDUCESCATTER))
        return bus;
    return bus * tp_tune__algo_ratio(m, coll, a);
}

tp_tune_lat tp_tune__lat_parts(const model_ctx *m, tp_algo a, tp_proto p, tp_algo net_algo)
{
    float latency_inter = m->job->graphs[a].latency_inter;
    tp_tune_lat l = {
        .base = m->base_lat[a][p],
        .intra = m->hw_lat[m->intra_hw[a]][a][p],
        .inter = m->hw_lat[TP_HW_NET][net_algo][p] + latency_inter,
    };
    if (p == TP_PROTO_SIMPLE)
        l.inter += latency_inter; /* the flush */
    return l;
}

float tp_tune__ring_lat(const model_ctx *m, tp_coll coll, tp_proto p, tp_tune_lat l, int n_inter)
{
    const tp_tune_job *job = m->job;
    int a = TP_ALGO_RING, nsteps = tp_tune__ring_steps(coll, job->n_ranks);
    float lat = m->hw_lat[m->hw[a]][a][p];
    if (coll == TP_COLL_REDUCE || coll == TP_COLL_BROADCAST) {
        if (job->graphs[a].same_channels)
            return l.base + lat;
        if (p == TP_PROTO_SIMPLE)
            lat = m->hw_lat[m->hw[a]][TP_ALGO_TREE][p];
        return l.base + nsteps * lat;
    }
    /* Inter-node rings still launch nsteps network operations. */
    float overhead = m->net_overhead;
    if (job->n_nodes > 1 && p == TP_PROTO_SIMPLE)
        overhead *= m->k->shared->ring_simple_net_overhead_mul;
    float intra = max_f(l.intra, overhead);
    return l.base + ((nsteps - n_inter) * intra + n_inter * l.inter);
}

float tp_tune__tree_like_lat(const model_ctx *m, tp_algo a, tp_tune_lat l)
{
    int n_nodes = m->job->n_nodes, local = m->job->n_ranks / n_nodes - 1;
    switch (a) {
    case TP_ALGO_TREE:
        return l.base + 2 * (local * l.intra + tp_tune__log2i(n_nodes) * l.inter);
    case TP_ALGO_COLLNET_DIRECT: /* plus the arity serialization, in double */
        return (float)(l.base + (2 * ((local < 1 ? local : 1) * l.intra +
                                      local * m->k->shared->collnet_arity_lat) +
                                 l.inter));
    case TP_ALGO_COLLNET_CHAIN:
        return l.base + (2 * local * l.intra + l.inter);
    case TP_ALGO_NVLS:
        return n_nodes > 1 ? l.intra + l.inter : l.intra;
    default: /* NVLSTree */
        return l.base + (l.intra + 2 * tp_tune__log2i(n_nodes) * l.inter);
    }
}

static float entry_lat(const model_ctx *m, tp_coll coll, tp_algo a, tp_proto p)
{
    tp_tune_lat l = tp_tune__lat_parts(m, a, p, a);
    if (a != TP_ALGO_RING)
        return tp_tune__tree_like_lat(m, a, l);
    /* 2.22.3 counts 2 nNodes network steps in an AllReduce ring, nNodes in Broadcast/Reduce */
    int n_nodes = m->job->n_nodes;
    int n_inter = coll == TP_COLL_ALLREDUCE ? (n_nodes > 1 ? 2 * n_nodes : 0)
                  : coll == TP_COLL_REDUCESCATTER || coll == TP_COLL_ALLGATHER ? n_nodes - 1
                                                                               : n_nodes;
    return tp_tune__ring_lat(m, coll, p, l, n_inter);
}

static void compute_entries(tp_tuning *t, const model_ctx *m)
{
    bool v27 = t->model_2_27;
    for (int c = 0; c < TP_COLL_COUNT; c++)
        for (int a = 0; a < t->k->algo_count; a++)
            for (int p = 0; p < TP_PROTO_COUNT; p++) {
                if (v27 ? !tp_tune__modelled_2_27(t->k, &t->job, c, a, p) : !modelled(c, a, p))
                    continue;
                t->bandwidth[c][a][p] =
                    v27 ? tp_tune__entry_bw_2_27(m, c, a, p) : entry_bw(m, c, a, p);
                if (a == TP_ALGO_RING)
                    t->ring_backup_bw[c][p] = t->bandwidth[c][a][p];
                t->latency[c][a][p] =
                    v27 ? tp_tune__entry_lat_2_27(m, c, a, p) : entry_lat(m, c, a, p);
            }
}

bool tp_tune__ll128_default(const tp_tuning *t, tp_coll coll, tp_algo algo)
{
    if (t->model_2_27)
        return tp_tune__ll128_default_2_27(t, coll, algo);
    const tp_tune_job *job = &t->job;
    const tp_tune_graph *g = &job->graphs[algo];
    int cc = job->min_comp_cap;
    /* NCCL 2.22.3: LL128 by default only on Volta/Ampere/Hopper with NVLink
     * inside nodes, at most PXB (PXN on Hopper) to the NIC, and one GPU kind. */
    bool on = g->type_inter <= TP_PATH_PXB || (cc >= 90 && g->type_inter <= TP_PATH_PXN);
    on = on && g->type_intra <= TP_PATH_NVB;
    on = on && job->min_comp_cap == job->max_comp_cap;
    if (cc == 90)
        on = on && !(t->k->shared->cudart_version == 11080 && coll == TP_COLL_ALLREDUCE &&
                     algo == TP_ALGO_RING && job->n_ranks == 2);
    else if (cc != 70 && cc != 80)
        on = false;
    return on;
}

/* NCCL_PROTO, NCCL_ALGO and what NCCL 2.22.3 disables by itself (the same for every
 * collective). */
static void parse_enables(tp_tuning *t, const tp_config *cfg, tp_log *log)
{
    const tp_tune_job *job = &t->job;
    int *pe = t->proto_enable[0], *ae = t->algo_enable[0];
    pe[TP_PROTO_LL] = pe[TP_PROTO_SIMPLE] = 1;
    pe[TP_PROTO_LL128] = TP_PROTO_BY_RULE;
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        ae[a] = 1;
    const char *proto = tp_config_str(cfg, TP_P_PROTO);
    const char *algo = tp_config_str(cfg, TP_P_ALGO);
    tp_config__log_env(cfg, TP_P_PROTO, log); /* tuning.cc: NCCL_PROTO's line, then NCCL_ALGO's */
    tp_config__log_env(cfg, TP_P_ALGO, log);
    if (proto)
        tp_tune__parse_list(proto, proto_names, TP_PROTO_COUNT, pe);
    if (algo)
        tp_tune__parse_list(algo, algo_names, TP_ALGO_COUNT, ae);
    if (job->n_nodes == 1)
        ae[TP_ALGO_NVLS_TREE] = 0;
    if (!job->collnet_support) {
        ae[TP_ALGO_COLLNET_DIRECT] = ae[TP_ALGO_COLLNET_CHAIN] = 0;
        if (job->n_nodes > 1)
            ae[TP_ALGO_NVLS] = 0;
        /* NCCL_ALGO naming only CollNet: Ring and Tree come back. */
        if (!ae[TP_ALGO_RING] && !ae[TP_ALGO_TREE] && !ae[TP_ALGO_NVLS] && !ae[TP_ALGO_NVLS_TREE])
            ae[TP_ALGO_RING] = ae[TP_ALGO_TREE] = 1;
    }
    for (int c = 1; c < TP_COLL_COUNT; c++) {
        memcpy(t->proto_enable[c], pe, sizeof(t->proto_enable[c]));
        memcpy(t->algo_enable[c], ae, sizeof(t->algo_enable[c]));
    }
}

/* Whether protocol p stays on for collective c on algorithm a (NCCL's LL128 rule when by rule). */
static bool proto_on(const tp_tuning *t, tp_coll c, tp_algo a, tp_proto p)
{
    int on = t->proto_enable[c][p];
    return on == TP_PROTO_BY_RULE && p == TP_PROTO_LL128 ? tp_tune__ll128_default(t, c, a)
                                                         : on != 0;
}

static bool any_bandwidth(const tp_tuning *t, tp_coll c)
{
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int p = 0; p < TP_PROTO_COUNT; p++)
            if (t->bandwidth[c][a][p] != 0)
                return true;
    return false;
}

static void apply_enables(tp_tuning *t)
{
    for (int c = 0; c < TP_COLL_COUNT; c++) {
        for (int a = 0; a < TP_ALGO_COUNT; a++)
            for (int p = 0; p < TP_PROTO_COUNT; p++) {
                bool on = proto_on(t, c, a, p);
                if (!on || !t->algo_enable[c][a])
                    t->bandwidth[c][a][p] = 0;
                if (a == TP_ALGO_RING && !on)
                    t->ring_backup_bw[c][p] = 0;
            }
        /* A collective left without any algorithm gets its Ring bandwidths back (2.22.3). */
        if (!t->model_2_27 && !any_bandwidth(t, c))
            for (int p = 0; p < TP_PROTO_COUNT; p++)
                t->bandwidth[c][TP_ALGO_RING][p] = t->ring_backup_bw[c][p];
    }
}

/* Algorithms per table block. */
#define TABLE_BLOCK_ALGOS 3

/* Room for a table line: 15 + 9 x 17 characters, more with very large values
 * (each at most TP_F1_SIZE, "%8.1f/%6.1f |" per cell). */
#define TABLE_LINE_SIZE (16 + TABLE_BLOCK_ALGOS * TP_PROTO_COUNT * (2 * TP_F1_SIZE + 4))

/* A row's cells: its text after the collective's name ("%13s |"). */
#define ROW_CELLS 15

/* One collective's cells, "%8.1f/%6.1f |" per algorithm and protocol, at p: the end. */
static char *put_cells(char *p, const tp_tuning *t, int c, int a0, int a1)
{
    for (int a = a0; a < a1; a++) {
        for (int pr = 0; pr < TP_PROTO_COUNT; pr++) {
            float lat = t->latency[c][a][pr], bw = t->bandwidth[c][a][pr];
            /* Most cells: algorithms off, both +0.0 (no sign printed). */
            if ((tp_float_bits(lat) | tp_float_bits(bw)) == 0) {
                p = TP_PUT_LIT(p, "     0.0/   0.0 |");
                continue;
            }
            p = tp_put_f1_right(p, lat, 8);
            *p++ = '/';
            p = TP_PUT_LIT(tp_put_f1_right(p, bw, 6), " |");
        }
    }
    return p;
}

/* Whether collectives c and d have the same figures (bits) on algorithms a0..a1. */
static bool same_figures(const tp_tuning *t, int c, int d, int a0, int a1)
{
    size_t n = (size_t)(a1 - a0) * sizeof(t->latency[0][0]);
    return memcmp(t->latency[c][a0], t->latency[d][a0], n) == 0 &&
           memcmp(t->bandwidth[c][a0], t->bandwidth[d][a0], n) == 0;
}

/*
 * One collective's row. `like` is the row before when it has the same
 * figures (NCCL's Broadcast and Reduce, AllGather and ReduceScatter mostly
 * do): its cells are copied rather than formatted again. The row's text and
 * length are returned (NULL when not logged).
 */
static const char *log_row(const tp_tuning *t, tp_log *log, int c, int a0, int a1, const char *like,
                           size_t like_len, size_t *len)
{
    char *row = tp_log_begin_line(log, TP_SUB_TUNING, TABLE_LINE_SIZE);
    if (!row)
        return NULL;
    char *p = TP_PUT_LIT(tp_put_str_right(row, coll_names[c], 13), " |");
    if (like)
        p = tp_put_n(p, like + ROW_CELLS, like_len - ROW_CELLS);
    else
        p = put_cells(p, t, c, a0, a1);
    tp_log_end_line(log, p);
    *len = (size_t)(p - row);
    return row;
}

/* The block's heading lines: algorithms, protocols (NCCL prints three algorithms' worth even in
 * a short last block), thread counts. */
static void log_heading(const tp_tuning *t, tp_log *log, int a0, int a1)
{
    char *p = tp_log_begin_line(log, TP_SUB_TUNING, TABLE_LINE_SIZE);
    if (!p)
        return;
    p = TP_PUT_LIT(p, "  Algorithm   |");
    for (int a = a0; a < a1; a++) {
        p = tp_put_str_right(tp_put_spaces(p, 15), algo_names[a], 17);
        p = TP_PUT_LIT(tp_put_spaces(p, 17), " |");
    }
    tp_log_end_line(log, p);
    if (!(p = tp_log_begin_line(log, TP_SUB_TUNING, TABLE_LINE_SIZE)))
        return;
    p = TP_PUT_LIT(p, "  Protocol    |");
    for (int a = 0; a < TABLE_BLOCK_ALGOS; a++)
        for (int pr = 0; pr < TP_PROTO_COUNT; pr++)
            p = TP_PUT_LIT(tp_put_str_right(p, proto_names[pr], 15), " |");
    tp_log_end_line(log, p);
    if (!(p = tp_log_begin_line(log, TP_SUB_TUNING, TABLE_LINE_SIZE)))
        return;
    p = TP_PUT_LIT(p, " Max NThreads |");
    for (int a = a0; a < a1; a++)
        for (int pr = 0; pr < TP_PROTO_COUNT; pr++)
            p = TP_PUT_LIT(tp_put_int_right(p, t->max_threads[a][pr], 15), " |");
    tp_log_end_line(log, p);
}

/* Rank 0's table: blocks of three algorithms (two, three with PAT). */
static void log_table(const tp_tuning *t, tp_log *log)
{
    if (!log || !log->enabled)
        return;
    int n = t->k->algo_count;
    for (int block = 0; block * TABLE_BLOCK_ALGOS < n; block++) {
        int a0 = block * TABLE_BLOCK_ALGOS;
        int a1 = a0 + TABLE_BLOCK_ALGOS < n ? a0 + TABLE_BLOCK_ALGOS : n;
        log_heading(t, log, a0, a1);
        const char *row = NULL;
        size_t len = 0;
        for (int c = 0; c < TP_COLL_COUNT; c++) {
            bool same = row && same_figures(t, c - 1, c, a0, a1);
            row = log_row(t, log, c, a0, a1, same ? row : NULL, len, &len);
        }
    }
}

/* "threadThresholds %ld/%ld/%ld | %ld/%ld/%ld | %ld | %ld": Tree, Ring, CollNet Direct and
 * Chain. */
static void log_thresholds(tp_log *log, long (*th)[TP_PROTO_COUNT])
{
    char *p = tp_log_begin_line(log, TP_SUB_INIT, 32 + 8 * 24);
    if (!p)
        return;
    p = TP_PUT_LIT(p, "threadThresholds ");
    for (int i = 0; i < 2; i++) {
        const long *a = th[i == 0 ? TP_ALGO_TREE : TP_ALGO_RING];
        p = TP_PUT_LIT(tp_put_ll(TP_PUT_LIT(tp_put_ll(p, a[0]), "/"), a[1]), "/");
        p = TP_PUT_LIT(tp_put_ll(p, a[2]), " | ");
    }
    p = TP_PUT_LIT(tp_put_ll(p, th[TP_ALGO_COLLNET_DIRECT][TP_PROTO_SIMPLE]), " | ");
    tp_log_end_line(log, tp_put_ll(p, th[TP_ALGO_COLLNET_CHAIN][TP_PROTO_SIMPLE]));
}

/* Per-thread work before more threads and channels: defaults, then NCCL_THREAD_THRESHOLDS. */
static void thread_thresholds(tp_tuning *t, const tp_config *cfg, tp_log *log)
{
    long(*th)[TP_PROTO_COUNT] = t->thread_threshold;
    for (int a = 0; a < TP_ALGO_COUNT; a++) {
        th[a][TP_PROTO_LL] = t->k->shared->ll_thread_threshold;
        th[a][TP_PROTO_LL128] = t->k->shared->ll128_thread_threshold;
        th[a][TP_PROTO_SIMPLE] = t->k->shared->simple_thread_threshold;
    }
    th[TP_ALGO_RING][TP_PROTO_LL] *= t->job.n_ranks;
    th[TP_ALGO_COLLNET_DIRECT][TP_PROTO_SIMPLE] = t->k->shared->collnet_thread_threshold;
    th[TP_ALGO_COLLNET_CHAIN][TP_PROTO_SIMPLE] = t->k->shared->collnet_thread_threshold;
    const char *text = tp_config_str(cfg, TP_P_THREAD_THRESHOLDS);
    tp_config__log_env(cfg, TP_P_THREAD_THRESHOLDS, log);
    if (text) {
        /* Tree LL/LL128/Simple then Ring; negative or missing values keep the default. */
        long v[2][TP_PROTO_COUNT] = {{-2, -2, -2}, {-2, -2, -2}};
        (void)sscanf(text, "%ld %ld %ld %ld %ld %ld", &v[0][0], &v[0][1], &v[0][2], &v[1][0],
                     &v[1][1], &v[1][2]);
        for (int a = 0; a < 2; a++)
            for (int p = 0; p < TP_PROTO_COUNT; p++)
                if (v[a][p] >= 0)
                    th[a][p] = v[a][p];
    }
    log_thresholds(log, th);
}

void tp_tune__model(tp_tuning *t, const tp_tune_job *job, const tp_config *cfg, tp_log *log)
{
    memset(t, 0, sizeof(*t));
    const tp_nccl_profile *profile = tp_config__profile(cfg);
    t->k = tp_tune__constants(profile);
    t->model_2_27 = tp_profile_has(profile, TP_RULE_TUNE_MODEL_2_27);
    t->size_lines = !tp_profile_has(profile, TP_RULE_NO_SIZE_LINES);
    t->nthreads_info = tp_profile_has(profile, TP_RULE_NTHREADS_INFO);
    t->job = *job;
    set_max_threads(t, cfg, log);
    if (job->n_ranks <= 1)
        return; /* NCCL 2.22.3 models nothing more for one rank */
    t->modelled = true;
    model_ctx m;
    init_ctx(&m, t, cfg);
    compute_entries(t, &m);
    if (t->model_2_27) {
        tp_tune__names names = {coll_names, algo_names, proto_names};
        t->env_invalid = !tp_tune__parse_enables_2_27(t, cfg, log, &names);
        if (t->env_invalid)
            return; /* NCCL's init fails here */
    } else
        parse_enables(t, cfg, log);
    apply_enables(t);
    if (job->rank == 0)
        log_table(t, log);
    thread_thresholds(t, cfg, log);
}
