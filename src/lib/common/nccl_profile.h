#ifndef TP_NCCL_PROFILE_H
#define TP_NCCL_PROFILE_H
/*
 * NCCL version profiles: one record per NCCL version topoplan models, holding
 * the numbers and tables of its topology rules that differ between versions,
 * and the set of named rules (tp_rule) it follows. Stages read the profile the
 * configuration carries (tp_config__profile) and ask tp_profile_has(p, rule);
 * they never compare version numbers. Each entry names the NCCL version and
 * source function it comes from (nccl_profile.c). Constants that no version
 * changes stay with the module that owns them (budgets in search.h, ...).
 * Adding a version: docs/architecture.md, "Adding an NCCL version".
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The profiles, oldest first; stages' variant tables are indexed by this. */
typedef enum tp_nccl_id {
    TP_NCCL_2_22_3,
    TP_NCCL_2_27_5,
    TP_NCCL_2_30_7,
    TP_NCCL_COUNT
} tp_nccl_id;

/*
 * Rules NCCL changed after 2.22.3, one bit each. A profile has a rule from the
 * NCCL version named here on (file:function of that version).
 */
typedef enum tp_rule {
    /* 2.23 paths.cc printNodePaths, topo.cc ncclTopoPrintRec: node ids print as
     * "<system id>-<local id>" in hex ("GPU/0-1a000"). */
    TP_RULE_LOG_SYSTEM_IDS,
    /* 2.23 rings.cc dumpLine: "Channel %02d/%02d :" then each rank at the width of nranks-1. */
    TP_RULE_LOG_RING_DIGITS,
    /* 2.23 tuning.cc: the PAT algorithm (NCCL_PAT_ENABLE) and a third tuning table block. */
    TP_RULE_PAT,
    /* 2.24 topo.cc ncclTopoMakeVNics/ncclTopoProcessNet: NICs fused into virtual NICs by the
     * IB plugin (NCCL_NET_MERGE_LEVEL, NCCL_NET_FORCE_MERGE), networks imported from the plugins;
     * 2.27 xml.cc ncclTopoTrimXml then drops the members (<nic>/<net> without keep); 2.24
     * ncclTopoAddPci: each PCI function is a NIC of its own (system stage: system_vnic.c). */
    TP_RULE_NIC_FUSION,
    /* 2.24 topo.cc ncclTopoPrintRec: a NET leaf prints "(coll/asic/port/bw)". */
    TP_RULE_LOG_NET_COLL,
    /* 2.27 search.cc ncclTopoCompute: "Could not find a path ... simple order" is INFO, not WARN.
     */
    TP_RULE_FALLBACK_INFO,
    /* 2.24 init.cc/tuning.cc parseList: NCCL_ALGO/NCCL_PROTO per function, no Ring fallback. */
    TP_RULE_ALGO_PER_FUNCTION,
    /* 2.25 search.cc ncclTopoCompute, paths.cc ncclTopoGetGpuMinPath/MaxPath: the search ladder
     * runs from the best to the worst existing path type. */
    TP_RULE_LADDER_MIN_MAX_PATH,
    /* 2.25 search.cc ncclTopoCompute: NVLS heads limited to NCCL_MAX_NVLS_ARITY, CollNetDirect to
     * NCCL_MAX_DIRECT_ARITY+1, min = max channels for these patterns. */
    TP_RULE_NVLS_HEADS_LIMIT,
    /* 2.25 connect.cc ncclTopoPostset: the 4-channels-per-search-channel doubling from sm90 on
     * (2.22.3: exactly sm90). */
    TP_RULE_POSTSET_DOUBLE_FROM_SM90,
    /* 2.26 topo.cc ncclTopoAddC2c, paths.cc: <c2c> makes LINK_C2C links and PATH_C2C paths. */
    TP_RULE_C2C_PATH,
    /* 2.26 paths.cc ncclTopoCheckGdr: GDR log by rank with the mode ("read %d mode %s"). */
    TP_RULE_LOG_GDR_MODE,
    /* 2.27.5 paths.cc ncclTopoComputePaths: PATH_P2C (GPU-C2C-CPU-PCI-NIC), ordered before PXN. */
    TP_RULE_P2C_BEFORE_PXN,
    /* 2.27.5 search.cc ncclTopoSearchRecNet: each NET's local GPU first, then its closest GPUs
     * whatever their bandwidth, the previous channel replayed only with sameChannels 1, NETs no
     * GPU reaches skipped; NVLS/CollNet heads skip duplicates and NETs without a local GPU and
     * go on (variant search_net_2_27.c). */
    TP_RULE_RECNET_LOCAL_GPU_FIRST,
    /* 2.27.5 search.cc ncclTopoPrintGraph: graph lines name GPUs by topology id, not rank. */
    TP_RULE_LOG_GRAPH_GPU_IDS,
    /* 2.27 transport.cc: the "Check P2P Type isAllDirectP2p %d directMode %d" line. */
    TP_RULE_LOG_P2P_TYPE,
    /* 2.23 paths.cc ncclTopoCheckP2p: P2P by default up to PXB whatever the CPU, up to SYS on
     * AMD x86 with at most 2 GPUs (2.22.3: SYS, PXB on ARM, Intel and Zhaoxin). */
    TP_RULE_P2P_LEVEL_PXB,
    /* 2.23-2.27 tuning.cc ncclTopoTuneModel (variant tuning_2_27.c): no LL128 ppn discount, Tree
     * only for AllReduce, ppn-1 jobs take Tree's network latency, nNodes-1 inter-node ring steps,
     * the algorithm-bandwidth ratio only for Ring on AllGather/ReduceScatter, NVLS
     * AllGather/ReduceScatter bandwidth, LL128 from sm70 with no upper bound (PXN from sm90). */
    TP_RULE_TUNE_MODEL_2_27,
    /* 2.24 enqueue.cc topoGetAlgoInfo: "Bytes -> Algo" is a TRACE line; the choice is logged
     * when a task is scheduled, which "--sizes" does not model (no selection lines). */
    TP_RULE_NO_SIZE_LINES,
    /* 2.27 tuning.cc getNthreads: an invalid NCCL_NTHREADS / NCCL_LL128_NTHREADS is an INFO
     * (GRAPH|ENV) line, not a WARN. */
    TP_RULE_NTHREADS_INFO,
    /* 2.25 nvls.cc ncclNvlsInit: NCCL_NVLS_NCHANNELS defaults to -2 and a value not above 0
     * takes the architecture's count (nvls_channels_sm90/_sm100/_sm100_one_node: 16/32/24);
     * 2.22.3 uses the parameter's 16 as is. */
    TP_RULE_NVLS_CHANNELS_BY_ARCH,
    /* 2.23 search.cc ncclTopoCompute, ncclTopoSearchRecGpu, ncclTopoSearchRecNet; connect.cc
     * ncclTopoPostset: the NCCL_CROSS_NIC=2 retry sets crossNic 2, for rings and balanced trees
     * only; a ring at crossNic 2 alternates NICs (an odd channel starts on the NET the previous
     * one ended on and ends on the one it started on, any port), crossNic 1 ends anywhere and
     * crossNic 0 on the start's port; the odd nodes' rings are exchanged only at crossNic 2. */
    TP_RULE_CROSS_NIC_RING_ALTERNATE,
    /* 2.27.5 search.cc ncclTopoGetGraphFromXmlSub: a graph file's <graph> without latencyinter
     * is an INFO line ("latencyinter not found in graph, using 0.0"), not xml.h's WARN. */
    TP_RULE_GRAPH_LATENCY_INFO,
    /* 2.26 search.cc ncclTopoCompute, paths.cc ncclTopoSplitNvLink: GPUs in exactly two NVLink
     * domains make the ring search at least 2 channels (trees then keep the ring's count). */
    TP_RULE_RING_SPLIT_NVLINK,
    /* 2.30.7 topo.cc ncclTopoPopulateNics: "Filled %s ... net=%s gin=%s rma=%s keep=%s coll=%s
     * rail=%d plane=%d", and no "Retrieving state" / "Initialized state" lines. */
    TP_RULE_LOG_POPULATE_NICS_RAILS,
    /* 2.28 transport.cc ncclTransportCheckP2pType: the P2P type line ends "isAllCudaP2p %d",
     * every rank logs it (2.27: rank 0), a node of one rank is all direct (2.27: not). */
    TP_RULE_LOG_P2P_CUDA,
    /* 2.28.7 init.cc ncclP2pSchedule: "ncclP2pSchedule: group size used is %d" (8 ranks across
     * nodes, the largest node's ranks on one; 2.28.9), made a divisor of every node's ranks. */
    TP_RULE_LOG_P2P_GROUP_SIZE,
    /* 2.30.3 init.cc initTransportsRank (AllGather3): each rank's Net/CollNet device count, rank
     * 0 the min/max across ranks and a mismatch (ignored by NCCL_IGNORE_NET_MISMATCH=1). */
    TP_RULE_LOG_NET_DEVICE_COUNTS,
    /* 2.30.3 search.cc ncclTopoGetXmlFromChannel: graph dump <gpu> elements carry rank="%d". */
    TP_RULE_GRAPH_DUMP_RANK,
    /* 2.30.3 topo.cc ncclTopoAddGpu, paths.cc ncclTopoSetPaths: each GPU hangs off a DEV node (its
     * device, printed with the PCI device word) by a LOC link, the DEV holding the GPU's links:
     * routes gain a hop at each GPU end, paths to DEVs are printed. */
    TP_RULE_DEV_NODES,
    /* 2.28.7 paths.cc ncclTopoTrimSystem: a job on one host keeps its NETs (system->inter 0
     * instead of removing them): the system and paths printed still show them. */
    TP_RULE_NETS_KEPT_ONE_NODE,
    /* 2.30.3 paths.cc ncclTopoCheckGdr: the GDR decision lines are TRACE, not INFO. */
    TP_RULE_GDR_LOG_TRACE,
    /* 2.30.7 paths.cc ncclTopoSetPaths: a route is replaced by one of a better type, then a wider
     * one, then one of fewer hops (before: by a wider one not longer). */
    TP_RULE_PATHS_TYPE_FIRST,
    /* 2.30.3 nvls.cc ncclNvlsTuning: "NVLS tuning: nChannels %d chunkSize %d treeMaxChunkSize %d"
     * after the all-gather. */
    TP_RULE_LOG_NVLS_TUNING,
    /* 2.30.3 paths.cc ncclTopoComputeP2pChannels: "Tuning P2P operations with maxP2pPeers = %d"
     * across nodes. */
    TP_RULE_LOG_P2P_MAX_PEERS,
    /* 2.29 paths.cc ncclTopoGetNchannels / ncclTopoComputeP2pChannels: a remote peer gets
     * max(local NETs its channels use, their bandwidth / 14 GB/s) channels, NVB peers count
     * NVLinks, and across nodes the count per peer is halved until all ranks fit one round of 8
     * peers a channel. */
    TP_RULE_P2P_CHANNELS_BY_NET_BW,
    /* 2.28 tuning.cc ncclTopoTuneModel: NVLS/NVLSTree bandwidth from nvlsEfficiency and the
     * channels less one (x2 for AllReduce), NVLSTree capped per channel, both need 2 channels, and
     * their bus to algorithm bandwidth ratio is Ring's (tuning_2_27.c with 2.30.7's constants). */
    TP_RULE_NVLS_MODEL_2_28,
    /* 2.30.3 xml.h kvConvertToInt: two "HINT: ..." lines after a dictionary fallback. */
    TP_RULE_LOG_TOPO_HINTS,
    /* 2.28.9 topo.cc ncclTopoAddNet: a NET's asic is strtoull(guid, 16) ("1" is 1; before: "0x%lx",
     * 0 without the prefix), its NET id without a guid. */
    TP_RULE_NET_GUID_HEX,
    /* 2.28 connect.cc ncclTopoPostset: the collective channels are no longer raised to the NVLS
     * channel count ("max CTA count from 32 to 16 on Blackwell"). */
    TP_RULE_NO_NVLS_CHANNEL_COPY,
    /* 2.29.7 debug.cc ncclDebugLogV: the message is printed whole after the prefix (before: both
     * cut to one char[1024]). */
    TP_RULE_LOG_LINES_WHOLE,
    /* 2.23 paths.cc ncclGetLevel: NCCL_P2P_DISABLE=1 logs "NCCL_P2P_DISABLE set by environment to
     * 1" (2.22.3: "NCCL_P2P_LEVEL set by environment to LOC"). */
    TP_RULE_LOG_P2P_DISABLE,
    /* 2.27 init.cc envConfigOverride: NCCL_COLLNET_ENABLE (at every comm init, "%d.") and
     * NCCL_NVLS_NCHANNELS are read with the comm config, after NCCL_MAX_CTAS (2.22.3: CollNet
     * only with a CollNet plugin, NVLS channels in ncclNvlsInit). */
    TP_RULE_LOG_COMM_CONFIG_ENV,
    /* 2.30.7 debug.cc ncclDebugLogV (debug.h INFO_LOC): an NCCLCHECK back-trace line names the
     * function after the source line ("graph/search.cc:953 (ncclTopoGetGraphFromXmlSub) -> 2"). */
    TP_RULE_LOG_TRACE_FUNCTION,
    /* 2.28 connect.cc ncclTopoPostset (crossNicRing from ncclTopoPreset): an odd node's rank
     * exchanges rings c and c^1 when its own ring graph is at crossNic 2 (before: the all-gathered
     * max), so a node whose search settled on another crossNic keeps its rings. */
    TP_RULE_CROSS_NIC_RING_PER_RANK,
    /* 2.30.7 topo.cc ncclTopoGetLocalNetType: a GPU's first local NET is its device number modulo
     * the GPUs sharing those NETs (then bit-mirrored), not the device number itself. */
    TP_RULE_LOCAL_NET_START_MODULO,
    /* 2.30.3 search.cc ncclTopoGetChannelFromXml: a graph file's <gpu rank="%d"> gives the rank
     * (its dev, still required, is not looked up: an unknown dev is no error there). */
    TP_RULE_GRAPH_FILE_RANK,
    /* 2.28 xml.cc ncclTopoFillNet: a NET given its parent (a virtual NIC) skips the subsystem
     * check ("... is not a PCI device (). Attaching to first CPU" only without one, naming it). */
    TP_RULE_VNIC_FORCED_PARENT,
    /* 2.28 topo.cc ncclTopoGetVNicParent: devices whose closest common parent is a CPU get a
     * made-up PCI device under it (a copy of the first's, a new bus id), as a bridge did. */
    TP_RULE_VNIC_PCI_UNDER_CPU,
    /* 2.28 topo.cc ncclTopoFindLinkWidth: at PIX/PXB/PHB the virtual NIC's PCI devices up to the
     * common parent get link_width = the members' widths summed (each branch capped by its own). */
    TP_RULE_VNIC_LINK_WIDTH,
    /* 2.30.3 net_v12.h NCCL_NET_MAX_DEVS_PER_NIC: a virtual NIC fuses up to 8 devices (was 4). */
    TP_RULE_VNIC_EIGHT_DEVS,
    /* 2.30.7 topo.cc ncclTopoGetVNicParent: devices of different CPUs (common parent the system)
     * are not fused: NCCL fails (ncclInvalidArgument). */
    TP_RULE_VNIC_ONE_NUMA,
    /* 2.28 topo.cc ncclTopoGetFusionEnv: NCCL_NET_MERGE_LEVEL is read (an unknown value's line)
     * before the plugin's devices are filled, in the dump's pass too (2.27.5: in MakeVNics). */
    TP_RULE_NET_FUSION_ENV_FIRST,
    /* 2.30.7 topo.cc ncclTopoGetMergePolicy, ncclTopoAutoMerge: NCCL_NET_MERGE_POLICY=RAIL (a line
     * saying so) fuses only devices of one defined rail, none of the IB plugin's here (rail -1);
     * another value than ALL is a WARN. */
    TP_RULE_NET_MERGE_POLICY,
    /* 2.24 net_ib.cc ncclIbMakeVDeviceInternal: NCCL_IB_MERGE_NICS is read (its ENV line) when the
     * IB plugin adds its first device, so not when NCCL_IB_HCA keeps none (2.22.3's ncclIbInit
     * reads it before looking at any). */
    TP_RULE_IB_MERGE_NICS_PER_DEVICE,
    /* 2.28.7 topo.cc ncclTopoGetLocalNet (2.28.3), search.cc ncclTopoSelectNets:
     * NCCL_NETDEVS_POLICY sets how many local NETs a GPU's channels step through (AUTO: its share,
     * ALL, MAX:n) and cuts the search's other NETs under MAX:n (an INFO line names the value). */
    TP_RULE_NETDEVS_POLICY,
    /* 2.29.2 search.cc ncclTopoCompute: the simple-order fallback leaves through GPU 0's and the
     * last GPU's first NET (ncclTopoSelectNets), not NET id 0 both ways. */
    TP_RULE_FALLBACK_LOCAL_NETS,
    TP_RULE_COUNT
} tp_rule;

/* A speed ladder of the search (GB/s, fastest first). */
typedef struct tp_speed_ladder {
    const float *speeds;
    int count;
} tp_speed_ladder;

/*
 * Source lines NCCL's error back-trace prints when a graph file is rejected
 * ("graph/search.cc:816 -> 2"): the NCCLCHECK call sites of search.cc
 * (ncclTopoGetChannelFromXml, ncclTopoGetGraphFromXmlSub, ncclTopoGetGraphFromXml,
 * ncclTopoCompute) and of xml.h's xmlGetAttrInt / xmlGetAttrFloat.
 */
typedef struct tp_graph_file_lines {
    int channel_dev;                             /* ncclTopoGetChannelFromXml: "dev" */
    int graph_id, graph_crossnic, graph_pattern; /* ncclTopoGetGraphFromXmlSub: ... */
    int graph_nchannels, graph_speedintra, graph_speedinter, graph_samechannels;
    int graph_channel;                /* ... its call of ncclTopoGetChannelFromXml */
    int graphs;                       /* ncclTopoGetGraphFromXml: its call of ...Sub */
    int compute_file, compute_graphs; /* ncclTopoCompute: reading the file, its graphs */
    int xml_get_int, xml_get_float;   /* xml.h: xmlGetAttrStr in xmlGetAttrInt / Float */
} tp_graph_file_lines;

/* A parameter default that differs from the configuration's base table (QEMU-style compat). */
typedef struct tp_param_default {
    const char *name; /* "NCCL_NVLS_NCHANNELS" */
    int64_t value;
} tp_param_default;

typedef struct tp_nccl_profile {
    tp_nccl_id id;
    const char *version; /* "2.22.3" */
    int version_code;    /* NCCL_VERSION_CODE: 22203 */
    const char *tag;     /* the NCCL git tag the rules were read from */
    /* Status on the version's public conformance suite (measured, see the profile's entry). */
    bool exact;
    int public_passed, public_total;
    /* What topoplan models without --nccl (exactly one profile; see tp_nccl_profile__default). */
    bool is_default;
    uint64_t rules; /* bit (1 << tp_rule) per rule the version follows */

    /* ---- src/include/device.h, src/init.cc ---- */
    int max_channels;            /* MAXCHANNELS */
    int collnet_direct_graph_id; /* init.cc: collNetDirectGraph->id (2.23: 2 -> 4) */
    /* nvls.cc ncclNvlsInit (rule nvls-channels-by-arch): NVLS channels when NCCL_NVLS_NCHANNELS
     * is not above 0: sm90, sm100 across nodes, sm100 on one node. */
    int nvls_channels_sm90, nvls_channels_sm100, nvls_channels_sm100_one_node;

    /* ---- src/graph/search.cc ---- */
    int sm90_cc;  /* ncclTopoCompute: the sm90 ladders, simpler-tree rung and NVLS from this cc */
    int sm100_cc; /* ... the sm100 ladders from this cc (0: none) */
    tp_speed_ladder speed_intra, speed_inter;             /* legacy arrays */
    tp_speed_ladder sm90_speed_intra, sm90_speed_inter;   /* sm90 arrays */
    tp_speed_ladder sm100_speed_intra, sm100_speed_inter; /* sm100 arrays (count 0: none) */
    double dup_min_bw;      /* ncclTopoDupChannels: duplicated only from this bwIntra up, */
    int dup_fast_cc;        /* ... and above this compute capability, not below */
    double dup_fast_bw;     /* ... this bwIntra with more than */
    int dup_fast_max_chans; /* ... this many channels */
    double lower_bw_share;  /* ncclTopoCompute: a lower speed only above this share of bwInter */
    float fallback_bw;      /* ncclTopoCompute: bw of the simple-order fallback graph */

    /* ---- src/graph/paths.cc ---- */
    int p2p_read_cc;     /* ncclTopoCheckP2p: P2P read over NVLink at exactly this cc */
    int gdr_read_min_cc; /* ncclTopoCheckGdr: GDR read from this cc on (NCCL_NET_GDR_READ -2) */

    /* ---- src/graph/topo.cc / topo.h ---- */
    float sm100_nvlink_bw; /* ncclTopoNVLinkBw for cc >= 100 (0: no Blackwell row) */
    uint64_t bcm_id_mask, bcm_gen4_id, bcm_gen5_id, bcm_level, bcm_flattened; /* getBcmGen */
    /* ncclTopoAddCpu / ncclTopoGetInterCpuBw (2.26): Intel Sapphire and Emerald Rapids, from
     * these model ids on (0: not told apart from Skylake), with their QPI bandwidths. */
    int intel_srp_min_model, intel_erp_min_model;
    float srp_qpi_bw, erp_qpi_bw;
    const char *const *path_names; /* topoPathTypeStr, in NCCL's numbering */
    int n_path_types;
    const tp_graph_file_lines *graph_file_lines; /* search.cc, xml.h: NCCL_GRAPH_FILE back-trace */
    /* debug.cc ncclDebugLog: the bytes of a message its char[1024] keeps after the
     * "host:pid:tid [dev] NCCL INFO " prefix, as measured on the version's public suite (0: the
     * lines' own buffers cut first). */
    int log_message_max;

    /* ---- src/graph/connect.cc ncclTopoPostset ---- */
    int postset_double_cc;   /* channels doubled again across nodes at this cc (rule above) */
    float postset_double_bw; /* ... when the ring's bwIntra is above this */
    int postset_double_max;  /* ... while below this many channels */

    /* ---- parameter defaults that differ from config.h's table (src/misc/param.cc users) ---- */
    const tp_param_default *param_defaults;
    int n_param_defaults;
} tp_nccl_profile;

/* The profile of an NCCL version "X.Y.Z", NULL when topoplan has none. */
const tp_nccl_profile *tp_nccl_profile__find(const char *version);
/* The profile modelled without --nccl: 2.22.3. Newer profiles are exact too, but output without
 * the option is NCCL 2.22.3's by contract (the conformance suite's cases/ folder runs without
 * it, and users' baselines and goldens were made with it): a newer default would change every
 * report silently. */
const tp_nccl_profile *tp_nccl_profile__default(void);
/* Profile i (0 .. TP_NCCL_COUNT-1), oldest first. */
const tp_nccl_profile *tp_nccl_profile__at(int i);
/* "2.22.3, 2.27.5, 2.30.7" into buf (for usage errors). */
void tp_nccl_profile__list(char *buf, size_t size);
/* The rule's name ("p2c-before-pxn") and the NCCL version and function it comes from. */
const char *tp_rule_name(tp_rule rule);
const char *tp_rule_source(tp_rule rule);

/* Whether the profile follows the rule. */
static inline bool tp_profile_has(const tp_nccl_profile *p, tp_rule rule)
{
    return (p->rules >> rule) & 1u;
}

/* The number NCCL gives the path type named `name` in this version (its topoPathTypeStr index),
 * -1 when the version has no such type. */
int tp_nccl_profile__path_number(const tp_nccl_profile *p, const char *name);

/* A profile's parameter default for NCCL name `name`, or `base` when it keeps config.h's. */
int64_t tp_nccl_profile__param_default(const tp_nccl_profile *p, const char *name, int64_t base);

#endif
