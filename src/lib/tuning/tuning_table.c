/* The tuning constants: what the versions share, then each version's own (tuning_table.h). */
#include "tuning/tuning_table.h"

/* The table keeps NCCL's row layout (one row per link kind / algorithm). */
/* clang-format off */
/* What NCCL 2.22.3 and 2.27.5 share (graph/tuning.cc, device.h, topo.h). */
const tp_tune_shared tp_tune_shared_constants = {
    /* Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT x LL, LL128, Simple;
     * Tree/Simple: each version's */
    .base_lat = {{6.8f, 14.0f, 0}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    .hw_lat =
        {
            /* NVLink */
            {{.6f, 1.25f, 0}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25}, {0, 0, 25}},
            /* PCI */
            {{1.0f, 1.9f, 0}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}},
            /* network */
            {{5.0f, 8.5f, 0}, {2.7f, 4.0f, 14.0f}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}},
        },
    /* Volta, Ampere, Hopper */
    .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}},
    .ring_ll128_max_bw = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}},
    .tree_ll128_max_bw = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
    .tree_max_bw = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
    .tree_correction =
        {
            {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f,
             .4f, .4f, .5f, .6f, .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f},
            {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f,
             .6f, .6f, .6f, .6f, .8f, .9f, .9f, .9f, .9f, 1.0f, 1.0f},
            {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f,
             .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f},
        },
    .pci_bw = 12.0,
    .warp_size = 32,
    .max_threads = 640,
    .simple_max_threads = 512,
    .ll_max_threads = 512,
    .ll128_max_threads = 640,
    .simple_pci_threads = 256,
    .ll_thread_threshold = 8,
    .ll128_thread_threshold = 8,
    .simple_thread_threshold = 64,
    .collnet_thread_threshold = 512,
    .net_overhead_intel = 1.0,
    .net_overhead_amd = 2.0,
    .net_overhead_other = 1.0,
    .ring_plateau_pre_sm80 = 1.9,
    .ring_plateau_sm80 = 1.4,
    .max_time = 3600000000.0f,
    .proto_ignore = -1.0f,
    .cudart_version = 12020,
    .min_thread_warps = 2,
    .ll128_min_threads_div = 4,
    .ring_ll_share = .5,
    .ring_ll128_share_low_ppn = 0.7,
    .ring_ll128_share = 0.92,
    .tree_share = .92,
    .tree_ll_div = 3.8,
    .tree_ll128_share_one_node = 7.0 / 9.0,
    .tree_ll128_share = 120.0 / 128.0,
    .tree_pattern_share = .85,
    .collnet_ag_rs_measured_ppn = 8,
    .collnet_ag_rs_share_1ppn = 0.95,
    .collnet_ag_rs_share_max_ppn = 0.85,
    .collnet_sm90_share = .85,
    .nvls_algo_ratio = 5.0 / 6.0,
    .tree_algo_ratio = .5,
    .collnet_arity_lat = 0.4,
    .ring_simple_net_overhead_mul = 3,
    .tree_correction_shift = 6,
    .ring_plateau_min_bytes = 64,
    .bytes_per_us_per_gbs = 1000,
    .thread_halving_step = 128,
    .tree_simple_extra_warps = 4,
    .min_warps = 3,
};

/* NCCL 2.22.3: Tree/Simple latencies. */
static const tp_tune_lat_cell lat_cells_2_22_3[] = {
    {TP_TUNE_BASE_LAT, TP_ALGO_TREE, TP_PROTO_SIMPLE, 0},
    {TP_HW_NVLINK, TP_ALGO_TREE, TP_PROTO_SIMPLE, 28},
    {TP_HW_PCI, TP_ALGO_TREE, TP_PROTO_SIMPLE, 28},
    {TP_HW_NET, TP_ALGO_TREE, TP_PROTO_SIMPLE, 28},
};

const tp_tune_constants tp_tune_nccl_2_22_3 = {
    .nccl_version = "2.22.3",
    .shared = &tp_tune_shared_constants,
    .algo_count = 6,
    .lat_cells = lat_cells_2_22_3,
    .n_lat_cells = (int)ARRAY_LEN(lat_cells_2_22_3),
};

/* NCCL 2.27.5 (v2.27.5-1 graph/tuning.cc): Tree/Simple base and hardware latencies, which
 * 2.30.7 keeps (both lists expand this one). */
#define LAT_CELLS_TREE_SIMPLE_SINCE_2_27_5 \
    {TP_TUNE_BASE_LAT, TP_ALGO_TREE, TP_PROTO_SIMPLE, 8.4f}, \
    {TP_HW_NVLINK, TP_ALGO_TREE, TP_PROTO_SIMPLE, 4.0f}, \
    {TP_HW_PCI, TP_ALGO_TREE, TP_PROTO_SIMPLE, 4.0f}, \
    {TP_HW_NET, TP_ALGO_TREE, TP_PROTO_SIMPLE, 14}

/* NCCL 2.27.5: the Tree/Simple latencies above (PAT's are zero, as the shared table's),
 * Blackwell rows (twice Hopper's), PAT. */
static const tp_tune_lat_cell lat_cells_2_27_5[] = {
    LAT_CELLS_TREE_SIMPLE_SINCE_2_27_5,
};

static const tp_tune_cc_row blackwell_2_27_5 = {
    .ll_max_bw = {2 * 141.0, 2 * 45.0, 2 * 35.0},
    .ring_ll128_max_bw = {2 * 36.7, 2 * 36.7, 2 * 36.7},
    .tree_ll128_max_bw = {2 * 36.7, 2 * 36.7, 2 * 29.0},
    .tree_max_bw = {2 * 38.7, 2 * 41.4, 2 * 36.0},
};

/* What 2.27.5 has of its own and 2.30.7 keeps: NCCL_NUM_ALGORITHMS with PAT, the Blackwell
 * row from sm100, PAT's model, NVLS AllGather/ReduceScatter's network share, LL128 from sm70,
 * the NVLS arity. */
#define TUNE_SINCE_2_27_5 \
    .shared = &tp_tune_shared_constants, \
    .algo_count = 7, \
    .blackwell_cc = 100, \
    .pat_min_cc = 60, \
    .pat_share = .75, \
    .pat_base_lat = 8, \
    .pat_inter_lat_div = 3.5, \
    .pat_rank_lat = 2.8, \
    .nvls_ag_rs_inter_share = 0.9f, \
    .ll128_min_cc = 70, \
    .max_nvls_arity = 32

const tp_tune_constants tp_tune_nccl_2_27_5 = {
    TUNE_SINCE_2_27_5,
    .nccl_version = "2.27.5",
    .lat_cells = lat_cells_2_27_5,
    .n_lat_cells = (int)ARRAY_LEN(lat_cells_2_27_5),
    .blackwell = &blackwell_2_27_5,
};

/* NCCL 2.30.7 (v2.30.7-1 graph/tuning.cc ncclTunerConstantsDefaults): 2.27.5's Tree/Simple
 * latencies, PAT's latencies as table cells (2.28), NVLSTree's network latency 20.9 (2.28.9). */
static const tp_tune_lat_cell lat_cells_2_30_7[] = {
    LAT_CELLS_TREE_SIMPLE_SINCE_2_27_5,
    {TP_HW_NVLINK, TP_ALGO_PAT, TP_PROTO_SIMPLE, 4.0f},
    {TP_HW_PCI, TP_ALGO_PAT, TP_PROTO_SIMPLE, 4.0f},
    {TP_HW_NET, TP_ALGO_PAT, TP_PROTO_SIMPLE, 14},
    {TP_HW_NET, TP_ALGO_NVLS_TREE, TP_PROTO_SIMPLE, 20.9f},
};

/* Measured Blackwell rows (2.28.3 .. 2.29.7) instead of twice Hopper's. */
static const tp_tune_cc_row blackwell_2_30_7 = {
    .ll_max_bw = {2 * 141.0, 2 * 45.0, 2 * 35.0},
    .ring_ll128_max_bw = {40.0, 40.0, 40.0},
    .tree_ll128_max_bw = {55.6, 31.67, 20.0},
    .tree_max_bw = {70.0, 42.8, 24.0},
};

/* NCCL 2.30.7: also the NVLS cost model's efficiency and NVLSTree per-channel caps (2.28;
 * Blackwell N4 80.0 from 2.30.3), LL128 between GPUs of different compute capability from
 * Hopper on (2.30.3). */
const tp_tune_constants tp_tune_nccl_2_30_7 = {
    TUNE_SINCE_2_27_5,
    .nccl_version = "2.30.7",
    .lat_cells = lat_cells_2_30_7,
    .n_lat_cells = (int)ARRAY_LEN(lat_cells_2_30_7),
    .blackwell = &blackwell_2_30_7,
    /* Volta, Ampere, Hopper, Blackwell */
    .nvls_efficiency = {0.0f, 0.0f, 0.85f, 0.74f},
    .nvls_tree_max_bw = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}},
    .ll128_mixed_min_cc = 90,
};
/* clang-format on */

static const tp_tune_constants *const by_profile[TP_NCCL_COUNT] = {
    [TP_NCCL_2_22_3] = &tp_tune_nccl_2_22_3,
    [TP_NCCL_2_27_5] = &tp_tune_nccl_2_27_5,
    [TP_NCCL_2_30_7] = &tp_tune_nccl_2_30_7,
};

const tp_tune_constants *tp_tune__constants(const tp_nccl_profile *p)
{
    return by_profile[p->id];
}
