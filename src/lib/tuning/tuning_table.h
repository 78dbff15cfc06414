/*
 * The version-dependent constants of NCCL's tuning model, all in one table:
 * NCCL 2.22.3 (graph/tuning.cc, device.h, topo.h). Float fields are float
 * where NCCL declares float and double where NCCL declares double, because
 * the printed figures depend on the arithmetic type.
 */
#ifndef TP_TUNING_TABLE_H
#define TP_TUNING_TABLE_H

#include "tuning/tuning.h"

/* Hardware classes of the latency table (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET). */
typedef enum tp_hw_class { TP_HW_NVLINK, TP_HW_PCI, TP_HW_NET, TP_HW_COUNT } tp_hw_class;
/* Rows of the per-architecture tables: Volta, Ampere, Hopper (compute capability 70/80/90+). */
typedef enum tp_cc_class { TP_CC_VOLTA, TP_CC_AMPERE, TP_CC_HOPPER, TP_CC_COUNT } tp_cc_class;
/* Columns: 1 node, 2 nodes, more. */
#define TP_NODE_CLASSES 3
/* treeCorrectionFactor: powers of two from 64 B to 256 MB. */
#define TP_TREE_CORRECTION_SIZES 23

typedef struct tp_tune_constants {
    const char *nccl_version;
    float base_lat[TP_ALGO_COUNT][TP_PROTO_COUNT];            /* baseLat, us */
    float hw_lat[TP_HW_COUNT][TP_ALGO_COUNT][TP_PROTO_COUNT]; /* hwLat, us */
    /* llMaxBws: single node by GPU row; several nodes: row 0 Intel, row 1 AMD */
    double ll_max_bw[TP_CC_COUNT][TP_NODE_CLASSES];
    double ring_ll128_max_bw[TP_CC_COUNT][TP_NODE_CLASSES]; /* perChMaxRingLL128Bws */
    double tree_ll128_max_bw[TP_CC_COUNT][TP_NODE_CLASSES]; /* perChMaxTreeLL128Bws */
    double tree_max_bw[TP_CC_COUNT][TP_NODE_CLASSES];       /* perChMaxTreeBws */
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
} tp_tune_constants;

extern const tp_tune_constants tp_tune_nccl_2_22_3;

/* NCCL's log2i: floor(log2(n)), -1 for 0. */
int tp_tune__log2i(long n);

#endif
