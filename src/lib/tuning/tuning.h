/*
 * Stage 6: NCCL 2.22.3's tuning model (graph/tuning.cc ncclTopoTuneModel)
 * and its per-call algorithm/protocol choice (enqueue.cc getAlgoInfo,
 * tuning.cc ncclTopoGetAlgoTime).
 *
 * The stage reads one record of job facts (tp_tune_job), taken from the
 * plan after the channels: the combined graphs, the job's size and CPUs and
 * compute capabilities. It never looks at systems or channels itself, so a
 * heterogeneous job only has to fill the record from its own combination.
 */
#ifndef TP_TUNING_H
#define TP_TUNING_H

#include "config/config.h"
#include "common/internal.h"
#include "common/names.h"
#include "system/system.h"

/* NCCL's collectives, algorithms and protocols, in NCCL's numbering. */
typedef enum tp_coll {
    TP_COLL_BROADCAST,
    TP_COLL_REDUCE,
    TP_COLL_ALLGATHER,
    TP_COLL_REDUCESCATTER,
    TP_COLL_ALLREDUCE,
    TP_COLL_COUNT
} tp_coll;
typedef enum tp_algo {
    TP_ALGO_UNDEF = -1, /* no algorithm available */
    TP_ALGO_TREE,
    TP_ALGO_RING,
    TP_ALGO_COLLNET_DIRECT,
    TP_ALGO_COLLNET_CHAIN,
    TP_ALGO_NVLS,
    TP_ALGO_NVLS_TREE,
    TP_ALGO_PAT, /* 2.23 on (TP_RULE_PAT); 2.22.3's model leaves it at zero */
    TP_ALGO_COUNT
} tp_algo;
typedef enum tp_proto {
    TP_PROTO_UNDEF = -1, /* no protocol available */
    TP_PROTO_LL,
    TP_PROTO_LL128,
    TP_PROTO_SIMPLE,
    TP_PROTO_COUNT
} tp_proto;

/* NCCL's names: "AllReduce", "Ring", "LL128" (ncclFuncStr, ncclAlgoStr, ncclProtoStr). */
const char *tp_tune__coll_name(tp_coll coll);
const char *tp_tune__algo_name(tp_algo algo);
const char *tp_tune__proto_name(tp_proto proto);

/* The graph fields the model reads: the combined graph (init.cc AllGather3),
 * with pattern and latencyInter of rank 0's own graph (never combined). */
typedef struct tp_tune_graph {
    tp_pattern pattern;
    int n_channels;
    int same_channels;
    float bw_intra, bw_inter;
    float latency_inter;
    tp_path_type type_intra, type_inter;
} tp_tune_graph;

/* The job facts of rank 0's model (the model's input record). */
typedef struct tp_tune_job {
    int n_ranks;
    int n_nodes;  /* NCCL's nNodes after AllGather3 */
    int rank;     /* the logged rank: the table prints on rank 0 only */
    int cpu_arch; /* rank 0's node, first CPU (ncclTopoCpuType) */
    int cpu_vendor;
    int comm_cpu_arch; /* the job's: rank 0's unless CPUs differ (then MIXED) */
    int comm_cpu_vendor;
    int min_comp_cap, max_comp_cap;      /* over every GPU of the job */
    tp_tune_graph graphs[TP_ALGO_COUNT]; /* per algorithm: NVLS and NVLSTree share one graph */
    int n_channels;                      /* comm->nChannels after postset */
    int nvls_channels;                   /* comm->nvlsChannels */
    int nvls_support;                    /* comm->nvlsSupport after AllGather3 */
    int collnet_support;                 /* always 0: no CollNet plugin */
    int local_ranks;                     /* comm->localRanks of the reported rank */
} tp_tune_job;

/* protoEnable's third state (tuning.cc): on where NCCL's LL128 default rule allows it. */
#define TP_PROTO_BY_RULE 2

/* The model: NCCL's comm fields it fills. */
typedef struct tp_tuning {
    const struct tp_tune_constants *k; /* the profile's constants (tuning_table.h) */
    tp_tune_job job;                   /* copy of the input */
    int max_threads[TP_ALGO_COUNT][TP_PROTO_COUNT];
    float latency[TP_COLL_COUNT][TP_ALGO_COUNT][TP_PROTO_COUNT];   /* us */
    float bandwidth[TP_COLL_COUNT][TP_ALGO_COUNT][TP_PROTO_COUNT]; /* GB/s, algorithm bw */
    float ring_backup_bw[TP_COLL_COUNT][TP_PROTO_COUNT];           /* comm->ringbdw */
    long thread_threshold[TP_ALGO_COUNT][TP_PROTO_COUNT];
    /* per collective (2.22.3: every row alike; 2.24 parseList sets them per function) */
    int proto_enable[TP_COLL_COUNT][TP_PROTO_COUNT]; /* after NCCL_PROTO: 0, 1 or BY_RULE */
    int algo_enable[TP_COLL_COUNT][TP_ALGO_COUNT];   /* after NCCL_ALGO and NCCL's disabling */
    bool modelled;      /* false for a one-rank job: NCCL stops early */
    bool model_2_27;    /* the profile's TP_RULE_TUNE_MODEL_2_27 (tuning_2_27.c) */
    bool size_lines;    /* "--sizes" logs the per-call choice (not from 2.24) */
    bool nthreads_info; /* rule nthreads-info: invalid thread counts are INFO lines */
    bool env_invalid;   /* 2.24: NCCL_ALGO / NCCL_PROTO did not parse (NCCL's init fails) */
} tp_tuning;

/*
 * ncclTopoTuneModel: thread counts (with NCCL_NTHREADS / NCCL_LL128_NTHREADS
 * warnings), latencies and bandwidths, NCCL_ALGO / NCCL_PROTO, the LL128
 * rule, the table (logged rank 0 only) and threadThresholds.
 */
void tp_tune__model(tp_tuning *t, const tp_tune_job *job, const tp_config *cfg, tp_log *log);

/*
 * NCCL 2.22.3 parseList: `text` ("LL,Simple", "^LL128", names
 * case-insensitive, unknown names ignored) sets list[i] for the names[].
 */
void tp_tune__parse_list(const char *text, const char *const *names, int n, int *list);

/* The LL128 default rule for one collective/algorithm (pEnable == 2 in NCCL). */
bool tp_tune__ll128_default(const tp_tuning *t, tp_coll coll, tp_algo algo);

/* One call's choice (enqueue.cc getAlgoInfo with numPipeOps 1). */
typedef struct tp_tune_choice {
    tp_algo algo;     /* TP_ALGO_UNDEF when nothing is available */
    tp_proto proto;   /* TP_PROTO_UNDEF then */
    float time;       /* us */
    bool from_backup; /* only the Ring backup bandwidth was usable */
    int n_channels, n_threads;
    /* the competing times: -1 unavailable, -2 not considered (NCCL_ALGO_PROTO_IGNORE) */
    float times[TP_ALGO_COUNT][TP_PROTO_COUNT];
} tp_tune_choice;

/* ncclTopoGetAlgoTime: time (us) of one algorithm/protocol; -1 when unavailable. */
float tp_tune__algo_time(const tp_tuning *t, tp_coll coll, tp_algo algo, tp_proto proto,
                         size_t n_bytes, bool *backup);

/* The choice for `coll` of `n_bytes` (NCCL's nBytes). Returns false when NCCL
 * fails ("no algorithm/protocol available"). */
bool tp_tune__choose(const tp_tuning *t, tp_coll coll, size_t n_bytes, tp_tune_choice *out);

/*
 * The conformance --sizes calls: each collective in NCCL's enqueue order
 * for the test (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce),
 * 8 B to 8 GiB, their "Bytes -> Algo" lines on rank 0 (TUNING). Returns
 * TP_ERR_GRAPH after NCCL's "no algorithm/protocol available" warning.
 */
/*
 * nccl-tests' bus bandwidth factor of a collective (busbw = algbw x factor):
 * 2(n-1)/n for AllReduce, (n-1)/n for AllGather and ReduceScatter, 1 for
 * Broadcast and Reduce. Algorithm bandwidth is NCCL's nBytes over the time.
 */
double tp_tune__busbw_factor(tp_coll coll, int n_ranks);

tp_status tp_tune__log_sizes(const tp_tuning *t, tp_log *log, tp_error *err);

#endif
