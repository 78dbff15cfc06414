/*
 * What ncclTopoTuneModel's entries share, and the entries of the 2.27 variant
 * (tuning_2_27.c, profiles with TP_RULE_TUNE_MODEL_2_27). Private to the stage.
 */
#ifndef TP_TUNING_MODEL_H
#define TP_TUNING_MODEL_H

#include "tuning/tuning_table.h"

typedef struct model_ctx {
    const tp_tune_constants *k; /* the profile's (tuning_table.h) */
    const tp_tune_job *job;
    /* baseLat and hwLat: the shared tables with the version's cells */
    float base_lat[TP_ALGO_COUNT][TP_PROTO_COUNT];
    float hw_lat[TP_HW_COUNT][TP_ALGO_COUNT][TP_PROTO_COUNT];
    double ll_max_bw, tree_max_bw, ring_ll128_max_bw, tree_ll128_max_bw;
    float ppn;
    float net_overhead;
    tp_hw_class intra_hw[TP_ALGO_COUNT], hw[TP_ALGO_COUNT];
    /* TP_RULE_NVLS_MODEL_2_28, with the job's row of its constants */
    bool nvls_2_28;
    float nvls_efficiency;
    double nvls_tree_max_bw;
} model_ctx;

/* std::min / std::max as NCCL calls them: the first argument on ties. */
static inline double tp_tune__min_d(double a, double b)
{
    return b < a ? b : a;
}
static inline float tp_tune__min_f(float a, float b)
{
    return b < a ? b : a;
}
static inline float tp_tune__max_f(float a, float b)
{
    return a < b ? b : a;
}

/*
 * The pieces of an entry both model versions compute alike (tuning.c); each version's entry
 * functions call them and keep only their own rules.
 */
/* Steps of a ring: 2(n-1) for AllReduce, n-1 for AllGather/ReduceScatter, n for Broadcast/Reduce.
 */
int tp_tune__ring_steps(tp_coll coll, int n_ranks);
/* The per-channel graph bandwidth an entry starts from (bwIntra up to 2 nodes and for CollNet,
 * else bwInter; NVLS the smaller of both, NVLSTree half bwInter beyond 2 nodes). */
float tp_tune__graph_bw(const model_ctx *m, tp_algo a);
/* Ring's and Tree's per-protocol caps on the bus bandwidth (both versions model Tree for AllReduce
 * only); Ring/LL128's share is the version's. */
float tp_tune__ring_tree_bus_bw(const model_ctx *m, tp_algo a, tp_proto p, float bus,
                                double ring_ll128_share);
/* CollNetDirect/Simple outside AllGather/ReduceScatter: the arity factor, sm90's share. */
float tp_tune__collnet_direct_bus_bw(const model_ctx *m, float bus);
/* Bus to algorithm bandwidth: Ring nRanks/nsteps, NVLS and NVLSTree 5/6, the others .5. */
float tp_tune__algo_ratio(const model_ctx *m, tp_coll coll, tp_algo a);

/* An entry's latency parts, us: base, intra-node step and inter-node step (network latency of
 * algorithm net_algo plus the graph's latencyInter, twice on Simple for the flush). */
typedef struct tp_tune_lat {
    float base, intra, inter;
} tp_tune_lat;
tp_tune_lat tp_tune__lat_parts(const model_ctx *m, tp_algo a, tp_proto p, tp_algo net_algo);
/* Ring latency with n_inter network steps: per step, or per chunk for Broadcast/Reduce. */
float tp_tune__ring_lat(const model_ctx *m, tp_coll coll, tp_proto p, tp_tune_lat l, int n_inter);
/* Tree, CollNetDirect, CollNetChain, NVLS and NVLSTree latency. */
float tp_tune__tree_like_lat(const model_ctx *m, tp_algo a, tp_tune_lat l);

/* NCCL 2.27 ncclPatEnable (NCCL_PAT_ENABLE at its default 2, host network). */
bool tp_tune__pat_enabled(const tp_tune_constants *k, const tp_tune_job *job);
/* Which algorithm/protocol pairs NCCL 2.27 models for a collective. */
bool tp_tune__modelled_2_27(const tp_tune_constants *k, const tp_tune_job *job, tp_coll coll,
                            tp_algo a, tp_proto p);
/* One entry's algorithm bandwidth and latency, as 2.27 computes them. */
float tp_tune__entry_bw_2_27(const model_ctx *m, tp_coll coll, tp_algo a, tp_proto p);
float tp_tune__entry_lat_2_27(const model_ctx *m, tp_coll coll, tp_algo a, tp_proto p);
/* 2.27's LL128 default rule (NCCL_LL128_C2C at its default 1). */
bool tp_tune__ll128_default_2_27(const tp_tuning *t, tp_coll coll, tp_algo algo);

/* NCCL's names, by number (tuning.c). */
typedef struct tp_tune__names {
    const char *const *coll, *const *algo, *const *proto;
} tp_tune__names;

/* 2.24-2.27 NCCL_PROTO / NCCL_ALGO per function (parseList), the "Enabled NCCL Func/Proto/Algo
 * Matrix" line and NCCL's own disabling. False after NCCL's WARN for a list it rejects. */
bool tp_tune__parse_enables_2_27(tp_tuning *t, const tp_config *cfg, tp_log *log,
                                 const tp_tune__names *names);

#endif
