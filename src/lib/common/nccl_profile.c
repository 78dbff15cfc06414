/* The NCCL version profiles (see nccl_profile.h): one record per version. */
#include "common/nccl_profile.h"

#include <stdio.h>
#include <string.h>

#define RULE(r) (UINT64_C(1) << (r))
#define LADDER(a)                                                                                  \
    {                                                                                              \
        a, (int)(sizeof(a) / sizeof((a)[0]))                                                       \
    }

/* ---- search.cc speed arrays (GB/s) ---- */

/* speedArrayIntra / speedArrayInter: unchanged from 2.21.5 to 2.30.7. */
static const float legacy_intra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                     9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
static const float legacy_inter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                     7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
/* sm90SpeedArrayIntra / sm90SpeedArrayInter: unchanged from 2.21.5 to 2.30.7. */
static const float sm90_intra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
static const float sm90_inter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                   15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
/* sm100SpeedArrayIntra / sm100SpeedArrayInter of 2.27.5 (2.25.1 added them; 2.27.3 the 18.0,
 * 2.27.5 the 48.0, 45.1 at the top of inter). */
static const float sm100_intra_2_27_5[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0,
                                           30.0, 24.0, 20.0, 19.0, 18.0};
static const float sm100_inter_2_27_5[] = {48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                           15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
/* sm100 arrays of 2.30.7: intra gained 45.0 (2.29.2); inter 96.0 (2.27.7), 80.0 (2.29.7) and
 * 86.0 (2.30.3) at the top. */
static const float sm100_intra_2_30_7[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                           40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
static const float sm100_inter_2_30_7[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                           30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                           6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

/* ---- topo.cc topoPathTypeStr ---- */

static const char *const paths_2_22_3[] = {"LOC", "NVL", "NVB", "PIX", "PXB",
                                           "PXN", "PHB", "SYS", "NET", "DIS"};
/* 2.26 inserted C2C after NVB; 2.27.5 P2C after PXB (2.27.3 had it after PXN). */
static const char *const paths_2_27_5[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                           "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

/* ---- search.cc / xml.h lines of the NCCL_GRAPH_FILE error back-trace ---- */

static const tp_graph_file_lines graph_file_lines_2_22_3 = {
    .channel_dev = 775,
    .graph_id = 796,
    .graph_crossnic = 800,
    .graph_pattern = 804,
    .graph_nchannels = 805,
    .graph_speedintra = 806,
    .graph_speedinter = 807,
    .graph_samechannels = 814,
    .graph_channel = 816,
    .graphs = 823,
    .compute_file = 942,
    .compute_graphs = 944,
    .xml_get_int = 108,
    .xml_get_float = 130,
};
/* 2.27.5: the same call sites, moved down by the rewritten ncclTopoSelectNets (xml.h: by
 * xmlGetAttrIntDefault and xmlGetAttrUint64). */
static const tp_graph_file_lines graph_file_lines_2_27_5 = {
    .channel_dev = 816,
    .graph_id = 837,
    .graph_crossnic = 841,
    .graph_pattern = 845,
    .graph_nchannels = 846,
    .graph_speedintra = 847,
    .graph_speedinter = 848,
    .graph_samechannels = 857,
    .graph_channel = 859,
    .graphs = 866,
    .compute_file = 1002,
    .compute_graphs = 1004,
    .xml_get_int = 108,
    .xml_get_float = 136,
};

/* 2.30.7: search.cc's graph-file readers moved down again (2.28 .. 2.30 search changes); xml.h
 * by the attribute getters added above xmlGetAttrInt / Float. */
static const tp_graph_file_lines graph_file_lines_2_30_7 = {
    .channel_dev = 901,
    .graph_id = 931,
    .graph_crossnic = 935,
    .graph_pattern = 939,
    .graph_nchannels = 940,
    .graph_speedintra = 941,
    .graph_speedinter = 942,
    .graph_samechannels = 951,
    .graph_channel = 953,
    .graphs = 961,
    .compute_file = 1116,
    .compute_graphs = 1118,
    .xml_get_int = 114,
    .xml_get_float = 150,
};

/* ---- parameter defaults (param.cc users) that differ from config.h's 2.22.3 table ---- */

static const tp_param_default params_2_27_5[] = {
    /* 2.25 nvls.cc ncclNvlsInit: -2, decided per architecture (16 sm90, 24/32 sm100). */
    {"NCCL_NVLS_NCHANNELS", -2},
    /* 2.25 init.cc: MAXCHANNELS 64 raises the P2P channel ceiling with it. */
    {"NCCL_MAX_P2P_NCHANNELS", 64},
};

/* Rules every profile from 2.27.5 on follows. */
#define RULES_2_27_5                                                                               \
    (RULE(TP_RULE_LOG_SYSTEM_IDS) | RULE(TP_RULE_LOG_RING_DIGITS) | RULE(TP_RULE_PAT) |            \
     RULE(TP_RULE_NIC_FUSION) | RULE(TP_RULE_ALGO_PER_FUNCTION) |                                  \
     RULE(TP_RULE_LADDER_MIN_MAX_PATH) | RULE(TP_RULE_NVLS_HEADS_LIMIT) |                          \
     RULE(TP_RULE_POSTSET_DOUBLE_FROM_SM90) | RULE(TP_RULE_C2C_PATH) |                             \
     RULE(TP_RULE_LOG_GDR_MODE) | RULE(TP_RULE_P2C_BEFORE_PXN) |                                   \
     RULE(TP_RULE_RECNET_LOCAL_GPU_FIRST) | RULE(TP_RULE_LOG_GRAPH_GPU_IDS) |                      \
     RULE(TP_RULE_LOG_P2P_TYPE) | RULE(TP_RULE_LOG_NET_COLL) | RULE(TP_RULE_FALLBACK_INFO) |       \
     RULE(TP_RULE_P2P_LEVEL_PXB) | RULE(TP_RULE_TUNE_MODEL_2_27) | RULE(TP_RULE_NO_SIZE_LINES) |   \
     RULE(TP_RULE_NTHREADS_INFO) | RULE(TP_RULE_NVLS_CHANNELS_BY_ARCH) |                           \
     RULE(TP_RULE_CROSS_NIC_RING_ALTERNATE) | RULE(TP_RULE_GRAPH_LATENCY_INFO) |                   \
     RULE(TP_RULE_RING_SPLIT_NVLINK) | RULE(TP_RULE_LOG_P2P_DISABLE) |                             \
     RULE(TP_RULE_LOG_COMM_CONFIG_ENV) | RULE(TP_RULE_IB_MERGE_NICS_PER_DEVICE))

/* The entries 2.22.3 and 2.27.5 share (checked by test_nccl_profile for both). */
#define COMMON_ENTRIES                                                                             \
    .sm90_cc = 90,                              /* search.cc ncclTopoCompute: ccMin >= 90 */       \
        .speed_intra = LADDER(legacy_intra),    /* search.cc speedArrayIntra */                    \
        .speed_inter = LADDER(legacy_inter),    /* search.cc speedArrayInter */                    \
        .sm90_speed_intra = LADDER(sm90_intra), /* search.cc sm90SpeedArrayIntra */                \
        .sm90_speed_inter = LADDER(sm90_inter), /* search.cc sm90SpeedArrayInter */                \
        .dup_min_bw = 25.0,                     /* search.cc ncclTopoDupChannels */                \
        .dup_fast_cc = 80, .dup_fast_bw = 50.0, .dup_fast_max_chans = 4,                           \
    .lower_bw_share = .49,                    /* search.cc ncclTopoCompute */                      \
        .fallback_bw = 0.1f,                  /* search.cc ncclTopoCompute, simple order */        \
        .p2p_read_cc = 80,                    /* paths.cc ncclTopoCheckP2p */                      \
        .gdr_read_min_cc = 80,                /* paths.cc ncclTopoCheckGdr */                      \
        .bcm_id_mask = 0xfffffffffffff000ULL, /* topo.cc getBcmGen */                              \
        .bcm_gen4_id = 0x1000c0101000a000ULL, .bcm_gen5_id = 0x1000c03010000000ULL,                \
    .bcm_level = 0x1000, .bcm_flattened = 0xffff, /* topo.cc ncclTopoFlattenBcmSwitches */         \
        .postset_double_cc = 90,                  /* connect.cc ncclTopoPostset */                 \
        .postset_double_bw = 45.0f, .postset_double_max = 16

/* The entries of 2.27.5 that later profiles inherit unless they change them: every field but a
 * profile's identity, status, rules and sm100 ladders (which 2.27.7 .. 2.30.3 all changed). */
#define ENTRIES_SINCE_2_27_5                                                                       \
    .max_channels = 64,               /* device.h MAXCHANNELS (2.25.1) */                          \
        .collnet_direct_graph_id = 4, /* init.cc (2.23.4) */                                       \
        .nvls_channels_sm90 = 16,     /* nvls.cc NVLS_NCHANNELS_SM90, _SM100, _SM100_NVL (2.25) */ \
        .nvls_channels_sm100 = 32, .nvls_channels_sm100_one_node = 24, COMMON_ENTRIES,             \
    .sm100_cc = 100,                 /* search.cc ncclTopoCompute: ccMin >= 100 (2.25.1) */        \
        .sm100_nvlink_bw = 40.1f,    /* topo.h SM100_NVLINK_BW (2.27.5; 40.0 before) */            \
        .intel_srp_min_model = 0x8F, /* topo.cc ncclTopoAddCpu (2.26) */                           \
        .intel_erp_min_model = 0xCF, .srp_qpi_bw = 22.0f, /* topo.h SRP_QPI_BW */                  \
        .erp_qpi_bw = 40.0f,                              /* topo.h ERP_QPI_BW */                  \
        .path_names = paths_2_27_5,                                                                \
    .n_path_types = (int)(sizeof(paths_2_27_5) / sizeof(paths_2_27_5[0])),                         \
    .param_defaults = params_2_27_5,                                                               \
    .n_param_defaults = (int)(sizeof(params_2_27_5) / sizeof(params_2_27_5[0]))

/* Rules every profile from 2.30.7 on follows: 2.27.5's and those of 2.28 .. 2.30.7. */
#define RULES_2_30_7                                                                               \
    (RULES_2_27_5 | RULE(TP_RULE_LOG_POPULATE_NICS_RAILS) | RULE(TP_RULE_LOG_P2P_CUDA) |           \
     RULE(TP_RULE_LOG_P2P_GROUP_SIZE) | RULE(TP_RULE_LOG_NET_DEVICE_COUNTS) |                      \
     RULE(TP_RULE_GRAPH_DUMP_RANK) | RULE(TP_RULE_DEV_NODES) | RULE(TP_RULE_NETS_KEPT_ONE_NODE) |  \
     RULE(TP_RULE_GDR_LOG_TRACE) | RULE(TP_RULE_PATHS_TYPE_FIRST) |                                \
     RULE(TP_RULE_LOG_NVLS_TUNING) | RULE(TP_RULE_LOG_P2P_MAX_PEERS) |                             \
     RULE(TP_RULE_P2P_CHANNELS_BY_NET_BW) | RULE(TP_RULE_NVLS_MODEL_2_28) |                        \
     RULE(TP_RULE_LOG_TOPO_HINTS) | RULE(TP_RULE_NET_GUID_HEX) |                                   \
     RULE(TP_RULE_NO_NVLS_CHANNEL_COPY) | RULE(TP_RULE_LOG_LINES_WHOLE) |                          \
     RULE(TP_RULE_LOG_TRACE_FUNCTION) | RULE(TP_RULE_CROSS_NIC_RING_PER_RANK) |                    \
     RULE(TP_RULE_LOCAL_NET_START_MODULO) | RULE(TP_RULE_GRAPH_FILE_RANK) |                        \
     RULE(TP_RULE_VNIC_FORCED_PARENT) | RULE(TP_RULE_VNIC_PCI_UNDER_CPU) |                         \
     RULE(TP_RULE_VNIC_LINK_WIDTH) | RULE(TP_RULE_VNIC_EIGHT_DEVS) | RULE(TP_RULE_VNIC_ONE_NUMA) | \
     RULE(TP_RULE_NET_FUSION_ENV_FIRST) | RULE(TP_RULE_NET_MERGE_POLICY) |                         \
     RULE(TP_RULE_NETDEVS_POLICY) | RULE(TP_RULE_FALLBACK_LOCAL_NETS))

static const tp_nccl_profile profiles[TP_NCCL_COUNT] = {
    [TP_NCCL_2_22_3] =
        {
            .id = TP_NCCL_2_22_3,
            .version = "2.22.3",
            .version_code = 22203,
            .tag = "v2.22.3-1", /* commit 178b6b759074597777ce13438efb0e0ba625e429 */
            /* conformance/cases: 167 of 167 (tests/conformance-pass.txt) */
            .exact = true,
            .public_passed = 167,
            .public_total = 167,
            .is_default = true,
            .rules = 0,
            .max_channels = 32,           /* device.h MAXCHANNELS */
            .collnet_direct_graph_id = 2, /* init.cc */
            COMMON_ENTRIES,
            .sm100_cc = 0,        /* no sm100 arrays before 2.25.1 */
            .sm100_nvlink_bw = 0, /* no SM100_NVLINK_BW before 2.25.1 */
            .path_names = paths_2_22_3,
            .n_path_types = (int)(sizeof(paths_2_22_3) / sizeof(paths_2_22_3[0])),
            .graph_file_lines = &graph_file_lines_2_22_3,
            .param_defaults = NULL,
            .n_param_defaults = 0,
        },
    [TP_NCCL_2_27_5] =
        {
            .id = TP_NCCL_2_27_5,
            .version = "2.27.5",
            .version_code = 22705,
            .tag = "v2.27.5-1",
            /* conformance/nccl-2.27.5/cases: tests/conformance-pass-2.27.5.txt (measured) */
            .exact = true,
            .public_passed = 166,
            .public_total = 166,
            .rules = RULES_2_27_5,
            ENTRIES_SINCE_2_27_5,
            .sm100_speed_intra = LADDER(sm100_intra_2_27_5),
            .sm100_speed_inter = LADDER(sm100_inter_2_27_5),
            .graph_file_lines = &graph_file_lines_2_27_5,
            /* debug.cc: 1023 - its 38-byte prefix (the Trees lines of real_simai_1a100 and
             * real_aws_p5_2023_32nets_nodes_2 stop at 985 bytes) */
            .log_message_max = 985,
        },
    [TP_NCCL_2_30_7] =
        {
            .id = TP_NCCL_2_30_7,
            .version = "2.30.7",
            .version_code = 23007,
            .tag = "v2.30.7-1",
            /* conformance/nccl-2.30.7/cases: tests/conformance-pass-2.30.7.txt (measured) */
            .exact = true,
            .public_passed = 166,
            .public_total = 166,
            .rules = RULES_2_30_7,
            /* Everything 2.27.5 has but its sm100 ladders (search.cc, 2.29.2 .. 2.30.3). */
            ENTRIES_SINCE_2_27_5,
            .sm100_speed_intra = LADDER(sm100_intra_2_30_7),
            .sm100_speed_inter = LADDER(sm100_inter_2_30_7),
            .graph_file_lines = &graph_file_lines_2_30_7,
            .log_message_max = 0, /* 2.29.7 debug.cc prints the message whole (log-lines-whole) */
        },
};

static const struct {
    const char *name, *source;
} rules[TP_RULE_COUNT] = {
    [TP_RULE_LOG_SYSTEM_IDS] = {"log-system-ids", "2.23 paths.cc printNodePaths"},
    [TP_RULE_LOG_RING_DIGITS] = {"log-ring-digits", "2.23 rings.cc dumpLine"},
    [TP_RULE_PAT] = {"pat", "2.23 tuning.cc ncclTopoTuneModel"},
    [TP_RULE_NIC_FUSION] = {"nic-fusion", "2.24 topo.cc ncclTopoMakeVNics"},
    [TP_RULE_LOG_NET_COLL] = {"log-net-coll", "2.24 topo.cc ncclTopoPrintRec"},
    [TP_RULE_FALLBACK_INFO] = {"fallback-info", "2.27 search.cc ncclTopoCompute"},
    [TP_RULE_ALGO_PER_FUNCTION] = {"algo-per-function", "2.24 tuning.cc parseList"},
    [TP_RULE_LADDER_MIN_MAX_PATH] = {"ladder-min-max-path", "2.25 search.cc ncclTopoCompute"},
    [TP_RULE_NVLS_HEADS_LIMIT] = {"nvls-heads-limit", "2.25 search.cc ncclTopoCompute"},
    [TP_RULE_POSTSET_DOUBLE_FROM_SM90] = {"postset-double-from-sm90",
                                          "2.25 connect.cc ncclTopoPostset"},
    [TP_RULE_C2C_PATH] = {"c2c-path", "2.26 topo.cc ncclTopoAddC2c"},
    [TP_RULE_LOG_GDR_MODE] = {"log-gdr-mode", "2.26 paths.cc ncclTopoCheckGdr"},
    [TP_RULE_P2C_BEFORE_PXN] = {"p2c-before-pxn", "2.27.5 paths.cc ncclTopoComputePaths"},
    [TP_RULE_RECNET_LOCAL_GPU_FIRST] = {"recnet-local-gpu-first",
                                        "2.27.5 search.cc ncclTopoSearchRecNet"},
    [TP_RULE_LOG_GRAPH_GPU_IDS] = {"log-graph-gpu-ids", "2.27.5 search.cc ncclTopoPrintGraph"},
    [TP_RULE_LOG_P2P_TYPE] = {"log-p2p-type", "2.27 transport.cc p2pSetup"},
    [TP_RULE_P2P_LEVEL_PXB] = {"p2p-level-pxb", "2.23 paths.cc ncclTopoCheckP2p"},
    [TP_RULE_TUNE_MODEL_2_27] = {"tune-model-2-27", "2.27 tuning.cc ncclTopoTuneModel"},
    [TP_RULE_NTHREADS_INFO] = {"nthreads-info", "2.27 tuning.cc getNthreads"},
    [TP_RULE_NO_SIZE_LINES] = {"no-size-lines", "2.24 enqueue.cc topoGetAlgoInfo"},
    [TP_RULE_NVLS_CHANNELS_BY_ARCH] = {"nvls-channels-by-arch", "2.25 nvls.cc ncclNvlsInit"},
    [TP_RULE_CROSS_NIC_RING_ALTERNATE] = {"cross-nic-ring-alternate",
                                          "2.23 search.cc ncclTopoSearchRecGpu"},
    [TP_RULE_GRAPH_LATENCY_INFO] = {"graph-latency-info",
                                    "2.27.5 search.cc ncclTopoGetGraphFromXmlSub"},
    [TP_RULE_RING_SPLIT_NVLINK] = {"ring-split-nvlink", "2.26 search.cc ncclTopoCompute"},
    [TP_RULE_LOG_POPULATE_NICS_RAILS] = {"log-populate-nics-rails",
                                         "2.30.7 topo.cc ncclTopoPopulateNics"},
    [TP_RULE_LOG_P2P_CUDA] = {"log-p2p-cuda", "2.28 transport.cc ncclTransportCheckP2pType"},
    [TP_RULE_LOG_P2P_GROUP_SIZE] = {"log-p2p-group-size", "2.28.7 init.cc ncclP2pSchedule"},
    [TP_RULE_LOG_NET_DEVICE_COUNTS] = {"log-net-device-counts",
                                       "2.30.3 init.cc initTransportsRank"},
    [TP_RULE_GRAPH_DUMP_RANK] = {"graph-dump-rank", "2.30.3 search.cc ncclTopoGetXmlFromChannel"},
    [TP_RULE_DEV_NODES] = {"dev-nodes", "2.30.3 topo.cc ncclTopoAddGpu"},
    [TP_RULE_NETS_KEPT_ONE_NODE] = {"nets-kept-one-node", "2.28.7 paths.cc ncclTopoTrimSystem"},
    [TP_RULE_GDR_LOG_TRACE] = {"gdr-log-trace", "2.30.3 paths.cc ncclTopoCheckGdr"},
    [TP_RULE_PATHS_TYPE_FIRST] = {"paths-type-first", "2.30.7 paths.cc ncclTopoSetPaths"},
    [TP_RULE_LOG_NVLS_TUNING] = {"log-nvls-tuning", "2.30.3 nvls.cc ncclNvlsTuning"},
    [TP_RULE_LOG_LINES_WHOLE] = {"log-lines-whole", "2.29.7 debug.cc ncclDebugLogV"},
    [TP_RULE_LOG_TRACE_FUNCTION] = {"log-trace-function", "2.30.7 debug.cc ncclDebugLogV"},
    [TP_RULE_GRAPH_FILE_RANK] = {"graph-file-rank", "2.30.3 search.cc ncclTopoGetChannelFromXml"},
    [TP_RULE_LOCAL_NET_START_MODULO] = {"local-net-start-modulo",
                                        "2.30.7 topo.cc ncclTopoGetLocalNetType"},
    [TP_RULE_CROSS_NIC_RING_PER_RANK] = {"cross-nic-ring-per-rank",
                                         "2.28 connect.cc ncclTopoPostset"},
    [TP_RULE_NO_NVLS_CHANNEL_COPY] = {"no-nvls-channel-copy", "2.28 connect.cc ncclTopoPostset"},
    [TP_RULE_LOG_TOPO_HINTS] = {"log-topo-hints", "2.30.3 xml.cc kvConvertToInt"},
    [TP_RULE_NET_GUID_HEX] = {"net-guid-hex", "2.28.9 topo.cc ncclTopoAddNet"},
    [TP_RULE_NVLS_MODEL_2_28] = {"nvls-model-2-28", "2.28 tuning.cc ncclTopoTuneModel"},
    [TP_RULE_P2P_CHANNELS_BY_NET_BW] = {"p2p-channels-by-net-bw",
                                        "2.29 paths.cc ncclTopoGetNchannels"},
    [TP_RULE_LOG_P2P_MAX_PEERS] = {"log-p2p-max-peers",
                                   "2.30.3 paths.cc ncclTopoComputeP2pChannels"},
    [TP_RULE_LOG_P2P_DISABLE] = {"log-p2p-disable", "2.23 paths.cc ncclGetLevel"},
    [TP_RULE_LOG_COMM_CONFIG_ENV] = {"log-comm-config-env", "2.27 init.cc envConfigOverride"},
    [TP_RULE_IB_MERGE_NICS_PER_DEVICE] = {"ib-merge-nics-per-device",
                                          "2.24 net_ib.cc ncclIbMakeVDeviceInternal"},
    [TP_RULE_VNIC_FORCED_PARENT] = {"vnic-forced-parent", "2.28 xml.cc ncclTopoFillNet"},
    [TP_RULE_VNIC_PCI_UNDER_CPU] = {"vnic-pci-under-cpu", "2.28 topo.cc ncclTopoGetVNicParent"},
    [TP_RULE_VNIC_LINK_WIDTH] = {"vnic-link-width", "2.28 topo.cc ncclTopoFindLinkWidth"},
    [TP_RULE_VNIC_EIGHT_DEVS] = {"vnic-eight-devs", "2.30.3 topo.cc ncclTopoAutoMerge"},
    [TP_RULE_VNIC_ONE_NUMA] = {"vnic-one-numa", "2.30.7 topo.cc ncclTopoGetVNicParent"},
    [TP_RULE_NET_FUSION_ENV_FIRST] = {"net-fusion-env-first", "2.28 topo.cc ncclTopoGetFusionEnv"},
    [TP_RULE_NET_MERGE_POLICY] = {"net-merge-policy", "2.30.7 topo.cc ncclTopoGetMergePolicy"},
    [TP_RULE_NETDEVS_POLICY] = {"netdevs-policy",
                                "2.28.7 topo.cc ncclTopoGetLocalNet, search.cc ncclTopoSelectNets"},
    [TP_RULE_FALLBACK_LOCAL_NETS] = {"fallback-local-nets", "2.29.2 search.cc ncclTopoCompute"},
};

const tp_nccl_profile *tp_nccl_profile__at(int i)
{
    return i >= 0 && i < TP_NCCL_COUNT ? &profiles[i] : NULL;
}

const tp_nccl_profile *tp_nccl_profile__find(const char *version)
{
    for (int i = 0; version && i < TP_NCCL_COUNT; i++)
        if (strcmp(profiles[i].version, version) == 0)
            return &profiles[i];
    return NULL;
}

const tp_nccl_profile *tp_nccl_profile__default(void)
{
    for (int i = 0; i < TP_NCCL_COUNT; i++)
        if (profiles[i].is_default)
            return &profiles[i];
    return &profiles[0];
}

void tp_nccl_profile__list(char *buf, size_t size)
{
    size_t at = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < TP_NCCL_COUNT && at < size; i++) {
        int n = snprintf(buf + at, size - at, "%s%s", i ? ", " : "", profiles[i].version);
        at += n > 0 ? (size_t)n : 0;
    }
}

const char *tp_rule_name(tp_rule rule)
{
    return rule < TP_RULE_COUNT ? rules[rule].name : "?";
}

const char *tp_rule_source(tp_rule rule)
{
    return rule < TP_RULE_COUNT ? rules[rule].source : "?";
}

int64_t tp_nccl_profile__param_default(const tp_nccl_profile *p, const char *name, int64_t base)
{
    for (int i = 0; i < p->n_param_defaults; i++)
        if (strcmp(p->param_defaults[i].name, name) == 0)
            return p->param_defaults[i].value;
    return base;
}

int tp_nccl_profile__path_number(const tp_nccl_profile *p, const char *name)
{
    for (int i = 0; i < p->n_path_types; i++)
        if (strcmp(p->path_names[i], name) == 0)
            return i;
    return -1;
}
