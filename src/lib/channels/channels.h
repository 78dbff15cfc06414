/*
 * Stage 5: channels of the whole job from the per-rank graphs, as NCCL
 * 2.22.3's init.cc, connect.cc, rings.cc and trees.cc build them: preset,
 * combination across ranks, postset (rings, double binary trees, NVLS),
 * channel duplication and bounds, P2P channel counts.
 *
 * Scale: the job is n_hosts hosts of a few kinds (hosts of one kind share a
 * topology). Ranks of one host whose trimmed systems are identical form a
 * "domain" and share one pipeline result (system, paths, graphs), computed on
 * one host of the kind and shifted by the difference of first ranks for the
 * others. Only the channel structure is built for every rank.
 */
#ifndef TP_CHANNELS_H
#define TP_CHANNELS_H

#include "search/search.h"

/* Graph slots: tp_graph_kind (include/topoplan.h), in NCCL 2.22.3's order of computation. */

/* Short name of a graph slot: "ring", "tree", "collnet-chain", "collnet-direct", "nvls". */
const char *tp_channels__graph_name(int slot);

/* NCCL 2.22.3 constants (device.h, comm.h, init.cc). */
#define TP_MAX_TREE_ARITY 3          /* NCCL_MAX_TREE_ARITY */
#define TP_P2P_CHUNK_NET (1 << 17)   /* NCCL_P2P_NET_CHUNKSIZE default */
#define TP_P2P_CHUNK_PCI (1 << 17)   /* NCCL_P2P_PCI_CHUNKSIZE default */
#define TP_P2P_CHUNK_NVL (1 << 19)   /* NCCL_P2P_NVL_CHUNKSIZE default */
#define TP_BUFFSIZE_SIMPLE (1 << 22) /* DEFAULT_BUFFSIZE */
#define TP_NCCL_STEPS 8
/* postset: copyChannels doubles the search's channels (and doubles them again, 4 per search
 * channel, under the profile's postset_double_* conditions). */
#define TP_POSTSET_COPIES 2
#define TP_TREES_LINE_SIZE 1024 /* init.cc "Trees" char line[1024] */
#define TP_RING_MAX_WIDTH 20    /* rings.cc dumpLine: ranks printed per ring line */
#define TP_RING_PREFIX_LEN 15   /* ... characters of the "Channel" prefix kept */
#define TP_RING_RANK_STEP 4     /* ... and each rank's " %3d" 4 characters after the last */
#define TP_RING_LINE_LEN (TP_RING_PREFIX_LEN + 5 * TP_RING_MAX_WIDTH)
#define TP_NVLS_HEAD_MAX_NODES 20 /* connectNvls prints at most 20 nodes per head */
/* paths.cc ncclTopoGetNchannels: P2P channels per local peer (per NVLink's worth over NVLink), */
#define TP_P2P_LOCAL_CHANNELS 2
/* ... per remote peer to start from, */
#define TP_P2P_NET_CHANNELS 2
/* 2.28.7 init.cc NCCL_P2P_SCHEDULE_GROUP_SIZE default: NCCL_MAX_DEV_WORK_P2P_PER_BATCH. */
#define TP_P2P_SCHEDULE_GROUP_SIZE 8
/* ... halved while nRanks times them exceed p2pnChannels times this (8+ operations per channel). */
#define TP_P2P_NET_OPS_PER_CHANNEL 4

/* One channel's view from one rank. */
typedef struct tp_channel_rank {
    int ring_prev, ring_next;
    int tree_up, tree_down[TP_MAX_TREE_ARITY];
} tp_channel_rank;

/* One rank's NVLS connections (NCCL 2.22.3 connect.cc connectNvls); channel c uses tree c % 2. */
typedef struct tp_nvls_rank {
    int head_rank;       /* index of the NVLS head the rank is on its node, -1: none */
    int down;            /* nvls.down: n_ranks + 1 + head_rank */
    int tree_up[2];      /* the same head on the parent node, -1: none (or one node) */
    int tree_down[2][3]; /* [0] down, then the same head on the child nodes; -1: none */
} tp_nvls_rank;

/* The graph fields NCCL all-gathers and combines across ranks (init.cc graphInfo). */
typedef struct tp_graph_info {
    tp_pattern pattern;
    int n_channels;
    int same_channels;
    float bw_intra, bw_inter;
    tp_path_type type_intra, type_inter;
    int cross_nic;
} tp_graph_info;

/* How postset reached the final channel count, step by step (for reports). */
typedef struct tp_channel_count {
    int duplicated;   /* 2 x search channels, at most TP_MAXCHANNELS */
    int sm90_doubled; /* after the sm90 multi-node doubling (== duplicated when not applied) */
    int max_limit;    /* min(NCCL_MAX_NCHANNELS or 32, maxCTAs) */
    int after_max;
    int min_limit; /* max(NCCL_MIN_NCHANNELS or 0, minCTAs) */
    int after_min;
    int after_nvls; /* raised to the NVLS channel count if that is larger */
} tp_channel_count;

/* The channels of the job: rings and trees for every rank. */
typedef struct tp_channels {
    int n_ranks;
    int n_nodes; /* NCCL "nodes": ring fragments, not hosts */
    int node;    /* the reported rank's */
    int local_ranks, local_rank;
    int search_channels; /* min(ring, tree) after combination, before duplication */
    int n_channels;      /* collective channels */
    int n_nvls_channels;
    int n_collnet_channels;
    int p2p_n_channels;
    int p2p_n_channels_per_peer;
    int p2p_chunk_size;
    int p2p_group_size;                     /* 2.28.9 ncclP2pSchedule's group of ranks */
    int nvls_heads;                         /* NVLS heads per node (minimum over nodes) */
    int cpu_arch, cpu_vendor;               /* the job's CPU (TP_CPU_*_MIXED when hosts differ) */
    tp_graph_info combined[TP_GRAPH_COUNT]; /* after the all-gather */
    tp_channel_count count;                 /* how n_channels was reached */
    int *rings;             /* n_channels x n_ranks: ring order from rank 0 (owned) */
    tp_channel_rank *ranks; /* n_ranks x n_channels (owned) */
    tp_nvls_rank *nvls;     /* n_ranks (owned), NULL when no NVLS heads */
} tp_channels;

/* What the builder needs from one domain (ranks sharing a pipeline result). */
typedef struct tp_domain_view {
    int n_gpus;                             /* GPUs of its trimmed system */
    const tp_graph *graphs[TP_GRAPH_COUNT]; /* as searched (NVLS with 0 channels if unsupported) */
    int nvls_channels;                      /* ncclNvlsInit's nvlsChannels (0: no NVLS) */
} tp_domain_view;

/*
 * One kind of host: the hosts planned on the same topology. Their pipeline
 * ran once, on rep_host; the other hosts of the kind shift its rank numbers.
 */
typedef struct tp_kind_view {
    int n_ranks;              /* ranks (GPUs) of one host of this kind */
    int rep_host;             /* host whose rank numbers the kind's graphs use */
    const int *domain_of;     /* index in tp_channels_job.domains of each local index */
    int cpu_arch, cpu_vendor; /* ncclTopoComputeCommCPU of its system */
} tp_kind_view;

/* The job as the builder sees it: hosts numbered from 0, ranks host by host. */
typedef struct tp_channels_job {
    int n_hosts;
    const int *host_kind; /* kind of each host (n_hosts entries) */
    int n_kinds;
    const tp_kind_view *kinds;
    int rank; /* reported rank (its log lines go to the log) */
    int n_domains;
    const tp_domain_view *domains; /* of every kind */
    int min_comp_cap;              /* over every GPU of the job */
    int min_ctas, max_ctas;        /* comm config after NCCL's env override */
    /* Only the combined graphs and the channel counts (no rings, trees or log lines): what a
     * job's cost of one kind reads, without connecting every rank of the job. */
    bool counts_only;
} tp_channels_job;

/*
 * NCCL 2.22.3's comm config minCTAs/maxCTAs (defaults 1 and MAXCHANNELS,
 * NCCL_MIN_CTAS / NCCL_MAX_CTAS), with envConfigOverride's warnings.
 */
void tp_channels__ctas(const tp_config *cfg, tp_log *log, int *min_ctas, int *max_ctas);

/*
 * From the graphs to the channels: all-gather combination, the "comm ..."
 * line, preset/postset, rings and trees, and their log lines for the
 * reported rank. `ch` is cleared first.
 */
tp_status tp_channels__build(tp_channels *ch, const tp_channels_job *job, const tp_config *cfg,
                             tp_log *log, tp_error *err);

/*
 * After tp_channels__build: P2P chunk size and ncclTopoComputeP2pChannels on
 * the reported rank's system, then the "N coll channels, ..." line.
 */
tp_status tp_channels__p2p(tp_channels *ch, const tp_system *sys, const tp_config *cfg, tp_log *log,
                           tp_error *err);

/* ncclGetBtree: parent and children of `rank` in NCCL's binary tree of n ranks. */
void tp_channels__btree(int n, int rank, int *up, int *down0, int *down1, int *child_type);
/* ncclGetDtree: the two trees of NCCL's double binary tree. */
void tp_channels__dtree(int n, int rank, int t0[4], int t1[4]);

void tp_channels__free(tp_channels *ch);

#endif
