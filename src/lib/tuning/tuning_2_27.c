/*
 * NCCL 2.27's ncclTopoTuneModel entries (v2.27.5-1 graph/tuning.cc), for
 * profiles with TP_RULE_TUNE_MODEL_2_27; 2.22.3's stay in tuning.c. What
 * changed from 2.22.3: PAT for AllGather/ReduceScatter, Tree modelled only for
 * AllReduce, no LL128 ring discount below 2 ranks per node, ppn-1 jobs take
 * Tree's network latency, nNodes-1 inter-node ring steps, NVLS
 * AllGather/ReduceScatter bandwidth, and no algorithm-bandwidth ratio for
 * non-Ring AllGather/ReduceScatter.
 */
#include "tuning/tuning_model.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool ag_rs(tp_coll coll)
{
    return coll == TP_COLL_ALLGATHER || coll == TP_COLL_REDUCESCATTER;
}

bool tp_tune__pat_enabled(const tp_tune_constants *k, const tp_tune_job *job)
{
    if (job->min_comp_cap < k->pat_min_cc)
        return false;                    /* CUDA atomics */
    return job->n_nodes == job->n_ranks; /* one GPU per node */
}

bool tp_tune__modelled_2_27(const tp_tune_constants *k, const tp_tune_job *job, tp_coll coll,
                            tp_algo a, tp_proto p)
{
    if ((coll == TP_COLL_BROADCAST || coll == TP_COLL_REDUCE) && a != TP_ALGO_RING)
        return false;
    if (ag_rs(coll) && a != TP_ALGO_PAT && a != TP_ALGO_RING && a != TP_ALGO_NVLS &&
        a != TP_ALGO_COLLNET_DIRECT)
        return false;
    if (coll == TP_COLL_ALLREDUCE && a == TP_ALGO_PAT)
        return false;
    if ((a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE) && p != TP_PROTO_SIMPLE)
        return false;
    return !(a == TP_ALGO_PAT && (p != TP_PROTO_SIMPLE || !tp_tune__pat_enabled(k, job)));
}

/* 2.28 (TP_RULE_NVLS_MODEL_2_28): an NVLS channel's bus bandwidth, its NVLink share at the
 * architecture's NVLS efficiency less one channel, doubled for AllReduce's two pipelined
 * operations; NVLSTree's network share doubled on 2 nodes and capped per channel. */
static float nvls_bw_2_28(const model_ctx *m, tp_coll coll, tp_algo a)
{
    const tp_tune_graph *g = &m->job->graphs[a];
    float intra = g->bw_intra * m->nvls_efficiency * (g->n_channels - 1) / g->n_channels;
    if (coll == TP_COLL_ALLREDUCE)
        intra *= 2.0f;
    else
        intra *= (m->ppn - 1) / m->ppn;
    float inter = g->bw_inter * ((m->job->n_nodes <= 2 && a == TP_ALGO_NVLS_TREE) ? 2 : 1);
    float bw = tp_tune__min_f(intra, inter);
    return a == TP_ALGO_NVLS_TREE ? tp_tune__min_f(bw, (float)m->nvls_tree_max_bw) : bw;
}

/* 2.28: NVLS and NVLSTree need 2 channels; NCCL leaves their entries unset (0) otherwise. */
static bool nvls_unset(const model_ctx *m, tp_algo a)
{
    return m->nvls_2_28 && (a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE) &&
           m->job->graphs[a].n_channels < 2;
}

/* The graph bandwidth an entry starts from: 2.27's NVLS AllGather/ReduceScatter takes the
 * other local ranks' share of bwIntra and 0.9 of bwInter. */
static float graph_bw(const model_ctx *m, tp_coll coll, tp_algo a)
{
    if (m->nvls_2_28 && (a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE))
        return nvls_bw_2_28(m, coll, a);
    const tp_tune_graph *g = &m->job->graphs[a];
    float ppn = m->ppn;
    if (a == TP_ALGO_NVLS && coll != TP_COLL_ALLREDUCE)
        return tp_tune__min_f(g->bw_intra * (ppn - 1.0f) / ppn,
                              g->bw_inter * (float)m->k->nvls_ag_rs_inter_share);
    return tp_tune__graph_bw(m, a);
}

/* CollNetDirect on Simple: 2.27's AllGather/ReduceScatter bandwidth, else as 2.22.3. */
static float collnet_direct_bw(const model_ctx *m, tp_coll coll, float bus)
{
    const tp_tune_graph *g = &m->job->graphs[TP_ALGO_COLLNET_DIRECT];
    if (ag_rs(coll))
        return m->ppn *
               tp_tune__min_f(g->bw_intra, g->bw_inter * (float)m->k->nvls_ag_rs_inter_share);
    return tp_tune__collnet_direct_bus_bw(m, bus);
}

static float bus_bw(const model_ctx *m, tp_coll coll, tp_algo a, tp_proto p)
{
    const tp_tune_constants *k = m->k;
    float bus = m->job->graphs[a].n_channels * graph_bw(m, coll, a);
    /* no Ring/LL128 discount below 2 ranks per node */
    bus = tp_tune__ring_tree_bus_bw(m, a, p, bus, k->shared->ring_ll128_share);
    if (a == TP_ALGO_PAT)
        bus = (float)(bus * k->pat_share);
    if ((a == TP_ALGO_COLLNET_DIRECT || a == TP_ALGO_COLLNET_CHAIN) && p != TP_PROTO_SIMPLE)
        bus = 0;
    if (a == TP_ALGO_COLLNET_DIRECT && p == TP_PROTO_SIMPLE)
        bus = collnet_direct_bw(m, coll, bus);
    /* Across nodes, NVLS and CollNetDirect AllGather/ReduceScatter need the CollNet plugin. */
    if ((a == TP_ALGO_NVLS || a == TP_ALGO_COLLNET_DIRECT) && p == TP_PROTO_SIMPLE && ag_rs(coll) &&
        m->job->n_nodes > 1 && !m->job->collnet_support)
        bus = 0;
    return bus;
}

float tp_tune__entry_bw_2_27(const model_ctx *m, tp_coll coll, tp_algo a, tp_proto p)
{
    if (nvls_unset(m, a))
        return 0;
    float bus = bus_bw(m, coll, a, p);
    if (a != TP_ALGO_RING && ag_rs(coll))
        return bus; /* the ratio is Ring's only for these */
    return bus * tp_tune__algo_ratio(m, coll, a);
}

float tp_tune__entry_lat_2_27(const model_ctx *m, tp_coll coll, tp_algo a, tp_proto p)
{
    if (nvls_unset(m, a))
        return 0;
    const tp_tune_job *job = m->job;
    int n_nodes = job->n_nodes;
    /* One rank per node exposes the whole network latency: Tree's. */
    tp_tune_lat l = tp_tune__lat_parts(m, a, p, m->ppn == 1 ? TP_ALGO_TREE : a);
    switch (a) {
    case TP_ALGO_RING: /* nNodes-1 network steps (twice for AllReduce) */
        return tp_tune__ring_lat(m, coll, p, l,
                                 n_nodes == 1                ? 0
                                 : coll == TP_COLL_ALLREDUCE ? 2 * (n_nodes - 1)
                                                             : n_nodes - 1);
    case TP_ALGO_TREE:
        return coll == TP_COLL_ALLREDUCE ? tp_tune__tree_like_lat(m, a, l) : l.base;
    case TP_ALGO_PAT: /* a base, a log part across nodes, a linear part */
        if (!ag_rs(coll))
            return l.base;
        return (float)(m->k->pat_base_lat +
                       tp_tune__log2i(n_nodes) * (l.inter / m->k->pat_inter_lat_div) +
                       job->n_ranks * m->k->pat_rank_lat);
    default:
        return tp_tune__tree_like_lat(m, a, l);
    }
}

bool tp_tune__ll128_default_2_27(const tp_tuning *t, tp_coll coll, tp_algo algo)
{
    const tp_tune_job *job = &t->job;
    const tp_tune_graph *g = &job->graphs[algo];
    int cc = job->min_comp_cap;
    /* Hopper on: up to PXN (P2C included); before: up to PXB. */
    bool on = cc >= 90 ? g->type_inter <= TP_PATH_PXN : g->type_inter <= TP_PATH_PXB;
    on = on && g->type_intra <= TP_PATH_NVB;
    /* 2.30.3: also between different compute capabilities from Hopper on. */
    on = on && (job->min_comp_cap == job->max_comp_cap ||
                (t->k->ll128_mixed_min_cc && cc >= t->k->ll128_mixed_min_cc));
    return on && !(cc < t->k->ll128_min_cc ||
                   (cc == 90 && t->k->shared->cudart_version == 11080 &&
                    coll == TP_COLL_ALLREDUCE && algo == TP_ALGO_RING && job->n_ranks == 2));
}

/* One "prefix:list" entry of parseList: sets the rows of the matching prefixes. */
static bool parse_entry(char *entry, bool first, const char *text, const char *const *prefixes,
                        int n_prefixes, const char *const *names, int n, int *list, tp_log *log)
{
    char *save = NULL;
    char *prefix = strtok_r(entry, ":", &save);
    char *elems = strtok_r(NULL, ":", &save);
    if (!elems) {
        if (!first) {
            tp_log_warn(log, "All entries except the first must have a prefix: \"%s\"", text);
            return false;
        }
        elems = prefix;
        prefix = NULL;
    }
    int set = 1;
    if (elems[0] == '^') {
        set = 0;
        elems++;
    }
    bool found_prefix = false;
    for (int f = 0; f < n_prefixes; f++) {
        if (prefix && strcasecmp(prefix, prefixes[f]) != 0)
            continue;
        found_prefix = true;
        for (int e = 0; e < n; e++)
            list[f * n + e] = !set;
        char *copy = strdup(elems), *esave = NULL;
        if (!copy)
            return false;
        for (char *elem = strtok_r(copy, ",", &esave); elem; elem = strtok_r(NULL, ",", &esave)) {
            int e = 0;
            while (e < n && strcasecmp(elem, names[e]) != 0)
                e++;
            if (e == n) {
                tp_log_warn(log, "Unrecognized element token \"%s\" when parsing \"%s\"", elem,
                            text);
                free(copy);
                return false;
            }
            list[f * n + e] = set;
        }
        free(copy);
    }
    if (!found_prefix)
        tp_log_warn(log, "Unrecognized prefix token \"%s\" when parsing \"%s\"", prefix, text);
    return found_prefix;
}

/* 2.24 parseList: "[prefix:]list;prefix:list...", each list as 2.22.3's ("^" inverts) applied
 * to the named function's row (every row without a prefix); unknown names fail. */
static bool parse_list(const char *text, const char *const *prefixes, int n_prefixes,
                       const char *const *names, int n, int *list, tp_log *log)
{
    char *all = strdup(text), *save = NULL;
    if (!all)
        return false;
    bool ok = true;
    for (char *entry = strtok_r(all, ";", &save); entry && ok; entry = strtok_r(NULL, ";", &save)) {
        char *copy = strdup(entry);
        ok = copy &&
             parse_entry(copy, entry == all, text, prefixes, n_prefixes, names, n, list, log);
        free(copy);
    }
    free(all);
    return ok;
}

bool tp_tune__parse_enables_2_27(tp_tuning *t, const tp_config *cfg, tp_log *log,
                                 const tp_tune__names *names)
{
    const tp_tune_job *job = &t->job;
    for (int c = 0; c < TP_COLL_COUNT; c++) {
        for (int p = 0; p < TP_PROTO_COUNT; p++)
            t->proto_enable[c][p] = p == TP_PROTO_LL128 ? TP_PROTO_BY_RULE : 1;
        for (int a = 0; a < TP_ALGO_COUNT; a++)
            t->algo_enable[c][a] = 1;
    }
    const char *proto = tp_config_str(cfg, TP_P_PROTO);
    const char *algo = tp_config_str(cfg, TP_P_ALGO);
    tp_config__log_env(cfg, TP_P_PROTO, log);
    if (proto && !parse_list(proto, names->coll, TP_COLL_COUNT, names->proto, TP_PROTO_COUNT,
                             t->proto_enable[0], log))
        return false;
    tp_config__log_env(cfg, TP_P_ALGO, log);
    if (algo && !parse_list(algo, names->coll, TP_COLL_COUNT, names->algo, TP_ALGO_COUNT,
                            t->algo_enable[0], log))
        return false;
    /* The matrix follows on lines of its own, which NCCL prints without a prefix. */
    if (job->rank == 0 && (algo || proto))
        tp_log_info_sub(log, TP_SUB_ENV, "Enabled NCCL Func/Proto/Algo Matrix:");
    for (int c = 0; c < TP_COLL_COUNT; c++) {
        int *ae = t->algo_enable[c];
        if (job->n_nodes == 1)
            ae[TP_ALGO_NVLS_TREE] = 0;
        if (!job->collnet_support) {
            ae[TP_ALGO_COLLNET_DIRECT] = ae[TP_ALGO_COLLNET_CHAIN] = 0;
            if (job->n_nodes > 1)
                ae[TP_ALGO_NVLS] = 0;
        }
    }
    return true;
}
