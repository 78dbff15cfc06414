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
