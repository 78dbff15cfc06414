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
typedef enum tp_nccl_id { TP_NCCL_2_22_3, TP_NCCL_2_27_5, TP_NCCL_COUNT } tp_nccl_id;

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
     * IB plugin (NCCL_NET_MERGE_LEVEL), networks imported from the plugins. */
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
    /* 2.27.5 search.cc ncclTopoSearchRecNet: each NET's local GPU first, the previous channel
     * replayed only with sameChannels 1, DIS paths skipped (variant search_net_2_27). */
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
    /* 2.23 paths.cc ncclGetLevel: NCCL_P2P_DISABLE=1 logs "NCCL_P2P_DISABLE set by environment to
     * 1" (2.22.3: "NCCL_P2P_LEVEL set by environment to LOC"). */
    TP_RULE_LOG_P2P_DISABLE,
    /* 2.27 init.cc envConfigOverride: NCCL_COLLNET_ENABLE (at every comm init, "%d.") and
     * NCCL_NVLS_NCHANNELS are read with the comm config, after NCCL_MAX_CTAS (2.22.3: CollNet
     * only with a CollNet plugin, NVLS channels in ncclNvlsInit). */
    TP_RULE_LOG_COMM_CONFIG_ENV,
    TP_RULE_COUNT
} tp_rule;

/* A speed ladder of the search (GB/s, fastest first). */
typedef struct tp_speed_ladder {
    const float *speeds;
    int count;
} tp_speed_ladder;

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
    uint64_t rules; /* bit (1 << tp_rule) per rule the version follows */

    /* ---- src/include/device.h, src/init.cc ---- */
    int max_channels;            /* MAXCHANNELS */
    int collnet_direct_graph_id; /* init.cc: collNetDirectGraph->id (2.23: 2 -> 4) */
    /* nvls.cc ncclNvlsInit: NVLS channels when NCCL_NVLS_NCHANNELS is not above 0: sm90,
     * sm100 across nodes, sm100 on one node (0: no such default, the parameter's value). */
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
/* The default profile: the newest one that is exact on its public suite. */
const tp_nccl_profile *tp_nccl_profile__default(void);
/* Profile i (0 .. TP_NCCL_COUNT-1), oldest first. */
const tp_nccl_profile *tp_nccl_profile__at(int i);
/* "2.22.3, 2.27.5" into buf (for usage errors). */
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
