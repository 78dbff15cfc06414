/*
 * The constants of NCCL's tuning model (graph/tuning.cc, device.h, topo.h):
 * one record of what every supported version shares, and per version only
 * what differs (QEMU's machine-compat tables). Float fields are float
 * where NCCL declares float and double where NCCL declares double, because
 * the printed figures depend on the arithmetic type.
 */
#ifndef TP_TUNING_TABLE_H
#define TP_TUNING_TABLE_H

#include "tuning/tuning.h"

/* Hardware classes of the latency table (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET). */
typedef enum tp_hw_class { TP_HW_NVLINK, TP_HW_PCI, TP_HW_NET, TP_HW_COUNT } tp_hw_class;
/* Rows of the per-architecture tables: Volta, Ampere, Hopper, Blackwell (compute capability
 * 70/80/90/100+; a table without a Blackwell row maps 100+ to Hopper). */
typedef enum tp_cc_class {
    TP_CC_VOLTA,
    TP_CC_AMPERE,
    TP_CC_HOPPER,
    TP_CC_BLACKWELL,
    TP_CC_COUNT
} tp_cc_class;
/* Columns: 1 node, 2 nodes, more. */
#define TP_NODE_CLASSES 3
/* treeCorrectionFactor: powers of two from 64 B to 256 MB. */
#define TP_TREE_CORRECTION_SIZES 23

/* The rows every version has: Volta, Ampere, Hopper. */
#define TP_TUNE_SHARED_CC_ROWS TP_CC_BLACKWELL

/* The constants every supported version shares (tp_tune_shared_constants). */
typedef struct tp_tune_shared {
    /* baseLat and hwLat, us; the Tree/Simple cells are each version's (tp_tune_lat_cell) */
    float base_lat[TP_ALGO_COUNT][TP_PROTO_COUNT];
    float hw_lat[TP_HW_COUNT][TP_ALGO_COUNT][TP_PROTO_COUNT];
    /* llMaxBws: single node by GPU row; several nodes: row 0 Intel, row 1 AMD */
    double ll_max_bw[TP_TUNE_SHARED_CC_ROWS][TP_NODE_CLASSES];
    double ring_ll128_max_bw[TP_TUNE_SHARED_CC_ROWS][TP_NODE_CLASSES]; /* perChMaxRingLL128Bws */
    double tree_ll128_max_bw[TP_TUNE_SHARED_CC_ROWS][TP_NODE_CLASSES]; /* perChMaxTreeLL128Bws */
    double tree_max_bw[TP_TUNE_SHARED_CC_ROWS][TP_NODE_CLASSES];       /* perChMaxTreeBws */
    float tree_correction[TP_PROTO_COUNT][TP_TREE_CORRECTION_SIZES];
    double pci_bw;            /* PCI_BW: Ring/Simple gets 256 threads at or below it */
    int warp_size;            /* WARP_SIZE */
    int max_threads;          /* NCCL_MAX_NTHREADS */
    int simple_max_threads;   /* NCCL_SIMPLE_MAX_NTHREADS */
    int ll_max_threads;       /* NCCL_LL_MAX_NTHREADS */
    int ll128_max_threads;    /* NCCL_LL128_MAX_NTHREADS */
    int simple_pci_threads;   /* Ring/Simple default at or below PCI_BW */
    long ll_thread_threshold; /* NCCL_LL_THREAD_THRESHOLD (Ring: times nRanks) */
    long ll128_thread_threshold;
    long simple_thread_threshold;
    long collnet_thread_threshold;
    double net_overhead_intel; /* getNetOverhead, us */
    double net_overhead_amd;
    double net_overhead_other;
    /* Ring/Simple AllReduce across nodes: latency factor below / from sm80 */
    double ring_plateau_pre_sm80, ring_plateau_sm80;
    float max_time;     /* topoGetAlgoInfo's and getAlgoInfo's starting minimum */
    float proto_ignore; /* NCCL_ALGO_PROTO_IGNORE */
    /* CUDA runtime of the reference build: only 11.8 (11080) disables LL128 on
     * 2-rank Hopper ring AllReduce. The reference outputs were made with CUDA 12. */
    int cudart_version;
    /* getNthreads' lower bounds: NCCL_NTHREADS 2 warps, NCCL_LL128_NTHREADS max / 4 */
    int min_thread_warps, ll128_min_threads_div;
    /* ncclTopoTuneModel's bus bandwidth corrections (double, as NCCL's literals) */
    double ring_ll_share;               /* Ring/LL: busBw * .5 */
    double ring_ll128_share_low_ppn;    /* Ring/LL128 below 2 ranks per node: 0.7 */
    double ring_ll128_share;            /* ... otherwise 0.92 */
    double tree_share;                  /* Tree: .92 */
    double tree_ll_div;                 /* Tree/LL: busBw / 3.8 */
    double tree_ll128_share_one_node;   /* Tree/LL128 on one node: 7/9 */
    double tree_ll128_share;            /* ... on several: 120/128 */
    double tree_pattern_share;          /* Tree with pattern TREE: .85 */
    int collnet_ag_rs_measured_ppn;     /* CollNetDirect AllGather/ReduceScatter: measured at */
    double collnet_ag_rs_share_1ppn;    /* ... 1 rank per node (0.95) */
    double collnet_ag_rs_share_max_ppn; /* ... and at that many (0.85), interpolated */
    double collnet_sm90_share;          /* CollNetDirect from sm90: .85 */
    double nvls_algo_ratio;             /* bus to algorithm bw: NVLS, NVLSTree 5/6 */
    double tree_algo_ratio;             /* ... Tree, CollNet .5 (Ring: nRanks / nsteps) */
    double collnet_arity_lat;           /* CollNetDirect arity serialization, us per rank */
    int ring_simple_net_overhead_mul;   /* inter-node Ring/Simple: netOverhead * 3 */
    /* ncclTopoGetAlgoTime */
    int tree_correction_shift;     /* treeCorrectionFactor index: log2i(nBytes >> 6) */
    size_t ring_plateau_min_bytes; /* plateau from nBytes / (nChannels * nRanks) >= 64 */
    int bytes_per_us_per_gbs;      /* time = lat + nBytes / (1000 * bw) */
    /* topoGetAlgoInfo */
    int thread_halving_step;     /* nt halves while a multiple of 128 */
    int tree_simple_extra_warps; /* Tree/Simple: 4 more warps (Ring/Simple: 1) */
    int min_warps;               /* at least 3 warps */
} tp_tune_shared;

/* A version's baseLat (hw TP_TUNE_BASE_LAT) or hwLat cell over the shared tables. */
#define TP_TUNE_BASE_LAT TP_HW_COUNT
typedef struct tp_tune_lat_cell {
    int hw; /* tp_hw_class, or TP_TUNE_BASE_LAT */
    tp_algo algo;
    tp_proto proto;
    float us;
} tp_tune_lat_cell;

/* A Blackwell row of each per-architecture table (2.27: twice Hopper's). */
typedef struct tp_tune_cc_row {
    double ll_max_bw[TP_NODE_CLASSES];
    double ring_ll128_max_bw[TP_NODE_CLASSES];
    double tree_ll128_max_bw[TP_NODE_CLASSES];
    double tree_max_bw[TP_NODE_CLASSES];
} tp_tune_cc_row;

/* One version's constants: the shared record and what this version has of its own. */
typedef struct tp_tune_constants {
    const char *nccl_version;
    const tp_tune_shared *shared;
    int algo_count;                    /* NCCL_NUM_ALGORITHMS: 6, 7 with PAT (2.23) */
    const tp_tune_lat_cell *lat_cells; /* over the shared baseLat/hwLat */
    int n_lat_cells;
    int blackwell_cc;                /* the Blackwell row from this compute capability */
    const tp_tune_cc_row *blackwell; /* NULL: no such row (100+ maps to Hopper) */
    /* PAT (2.23 ncclPatEnable, ncclTopoTuneModel): from sm60, one rank per node */
    int pat_min_cc;
    double pat_share;              /* busBw * .75 */
    double pat_base_lat;           /* 8 us */
    double pat_inter_lat_div;      /* log2i(nNodes) * interLat / 3.5 */
    double pat_rank_lat;           /* nRanks * 2.8 us */
    double nvls_ag_rs_inter_share; /* NVLS AllGather/ReduceScatter: bwInter * 0.9f */
    int ll128_min_cc;              /* 2.27: LL128 by default from sm70 on (2.22.3: 70/80/90) */
    int max_nvls_arity; /* 2.27 updateCollCostTable: NVLS beyond AllReduce up to this many local
                           ranks (NCCL_MAX_NVLS_ARITY; 0: no such limit) */
    /* 2.28 NVLS cost model (TP_RULE_NVLS_MODEL_2_28): nvlsEfficiency, perChMaxNVLSTreeBws */
    float nvls_efficiency[TP_CC_COUNT];
    double nvls_tree_max_bw[TP_CC_COUNT][TP_NODE_CLASSES];
    /* 2.30.3: LL128 by default between GPUs of different compute capability from this one on
     * (0: only between equal ones) */
    int ll128_mixed_min_cc;
} tp_tune_constants;

extern const tp_tune_shared tp_tune_shared_constants;
extern const tp_tune_constants tp_tune_nccl_2_22_3, tp_tune_nccl_2_27_5, tp_tune_nccl_2_30_7;
/* The tuning constants of a profile (its variant table, by profile id). */
const tp_tune_constants *tp_tune__constants(const tp_nccl_profile *p);

/* NCCL's log2i: floor(log2(n)), -1 for 0. */
int tp_tune__log2i(long n);

#endif
