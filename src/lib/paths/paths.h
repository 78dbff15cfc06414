/*
 * Stage 3: paths between every pair of nodes (BFS with bottleneck bandwidth
 * and worst path type), NVB, P2P/SHM/GDR/PXN policies and the trimming of
 * the system NCCL 2.22.3 does (src/graph/paths.cc), plus the queries on
 * paths that search and channels use (ncclTopoGetLocal* of topo.cc).
 *
 * Routes live in the nodes (tp_node.paths[type][index]); they are valid for
 * the node set they were computed on: free them before removing nodes.
 */
#ifndef TP_PATHS_H
#define TP_PATHS_H

#include "system/system.h"

/* NCCL 2.22.3 printNodePaths: each path line is built in a char[1024]. */
#define TP_PATHS_LINE_SIZE 1024
/* NCCL 2.22.3 default P2P level (ncclTopoCheckP2p): SYS, PXB on Intel, Zhaoxin and ARM CPUs. */
#define TP_P2P_LEVEL_DEFAULT TP_PATH_SYS
#define TP_P2P_LEVEL_RESTRICTED TP_PATH_PXB
/* NCCL 2.22.3 default NCCL_NET_GDR_LEVEL (ncclTopoCheckGdr). */
#define TP_NET_GDR_LEVEL_DEFAULT TP_PATH_PXB

/*
 * NCCL 2.22.3 src/graph/paths.cc lines of ncclTopoComputePaths' checks of
 * ncclTopoSetPaths per root type: NCCL prints "graph/paths.cc:<line> -> 3"
 * when a search fails (one-sided link), and the reference logs keep it.
 */
#define TP_NCCL_LINE_PATHS_CPU 552
#define TP_NCCL_LINE_PATHS_GPU 557
#define TP_NCCL_LINE_PATHS_NET 562
#define TP_NCCL_LINE_PATHS_NVS 567
#define TP_NCCL_INTERNAL_ERROR 3 /* ncclInternalError */

/* What the paths stage needs to know about the job (NCCL's comm fields). */
typedef struct tp_job_view {
    int n_ranks;       /* all ranks of the job */
    int n_nodes;       /* hosts */
    int rank;          /* the rank whose pipeline this is */
    int local_n_ranks; /* ranks of this host */
    /*
     * CUDA device of every rank (n_ranks entries, NCCL's peerInfo nvmlDev),
     * used by the PXN queries. NULL: identical hosts, so rank r has the dev
     * of this host's GPU with the same local index.
     */
    const int *rank_devs;
    /* Keep the NETs of a job entirely on this host (2.28.7 keeps them, unused, in the system it
     * prints: TP_RULE_NETS_KEPT_ONE_NODE); false drops them as 2.22.3 does. */
    bool keep_nets;
} tp_job_view;

/*
 * ncclTopoComputePaths: compute every node's routes (replacing old ones).
 * job NULL behaves as NCCL with comm NULL (no P2P/SHM transport check).
 */
tp_status tp_paths__compute(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                            tp_log *log, tp_error *err);
/* Parts of tp_paths__compute that tp_paths__compute_domains left for tp_paths__finish. */
enum { TP_PATHS_NET_SEARCHES = 1u, TP_PATHS_NET_POLICIES = 2u };
/*
 * tp_paths__compute as far as the GPU domains (tp_paths__domains) read it:
 * the searches from CPUs and GPUs and the GPUs' P2P/SHM rewrites. The
 * searches from NETs and NVSwitches (run on demand when a P2P/SHM check
 * reads a GPU's NETs) and the NET rewrites are left in *pending: a system
 * trimmed afterwards recomputes them all, an untrimmed one runs
 * tp_paths__finish. The searches of each root type write only the routes to
 * that type, so their order shows only in which one fails first: when a
 * search could fail (a link without its reverse) all run now, in NCCL's order.
 */
tp_status tp_paths__compute_domains(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                                    tp_log *log, unsigned *pending, tp_error *err);
/*
 * The GDR lines a path computation logs (2.26 ncclTopoCheckGdr, TP_RULE_LOG_GDR_MODE), kept
 * (by their place in the log) so that a second computation of the same routes (an untrimmed
 * system) logs them again from the log instead of computing the routes again.
 */
typedef struct tp_gdr_lines {
    size_t *at; /* indices in the log's lines */
    int count, cap;
    bool kept;   /* the lines of one whole computation are here */
    bool failed; /* a line or an allocation failed: incomplete */
} tp_gdr_lines;
void tp_paths__gdr_lines_free(tp_gdr_lines *l);
/* Log the kept lines again (the log they were kept from). */
void tp_paths__log_gdr_lines(const tp_gdr_lines *l, tp_log *log);

/* The parts of the paths stage in *pending (cleared): sys is then as tp_paths__compute leaves it.
 * gdr (may be NULL) keeps the GDR lines the NET rewrites log. */
tp_status tp_paths__finish(tp_system *sys, const tp_config *cfg, tp_log *log, unsigned *pending,
                           tp_gdr_lines *gdr, tp_error *err);
/*
 * ncclTopoTrimSystem: drop GPUs of other domains and, when the whole job is
 * local, NETs. Frees the routes (recompute them afterwards, as NCCL does).
 */
tp_status tp_paths__trim(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                         tp_error *err);
/*
 * A copy of host_sys as init.cc has it before the searches of the view's rank:
 * paths, trim, paths again.
 */
tp_status tp_paths__fresh_copy(tp_system **out, const tp_system *host_sys, const tp_config *cfg,
                               const tp_job_view *job, tp_error *err);
/*
 * The two halves of tp_paths__trim. The domains depend on the routes only,
 * not on the rank, so the ranks of one host can share them: computed on
 * the host's system with its first routes, they trim any fresh copy of it
 * (tp_paths__trim_domains on a copy without routes; same GPU order).
 */
typedef struct tp_gpu_domains {
    int n_gpus;
    int domain[TP_MAX_NODES]; /* per GPU index: the lowest GPU index of its domain */
    int64_t ids[TP_MAX_NODES];
} tp_gpu_domains;
tp_status tp_paths__domains(const tp_system *sys, tp_gpu_domains *out, tp_error *err);
tp_status tp_paths__trim_domains(tp_system *sys, const tp_gpu_domains *dom, const tp_job_view *job,
                                 tp_error *err);
/*
 * A host's system with its routes as the searches left them, from which
 * tp_paths__compute_trimmed takes the routes of its trimmed copies: the
 * ranks of a host with several GPU domains search each domain's copy again.
 */
typedef struct tp_host_routes tp_host_routes;
/*
 * Keep *sys, whose paths tp_paths__compute_domains computed leaving *pending:
 * the NET searches are run (and cleared from *pending), *out owns the system
 * and *sys becomes NULL. *out stays NULL (and *sys untouched) when the host's
 * routes cannot serve (nothing pending: the NET rewrites are done; nodes of a
 * type sharing an id; a GPU that routes may cross, over NVLink to a GPU).
 */
tp_status tp_paths__keep_host_routes(tp_host_routes **out, tp_system **sys, const tp_config *cfg,
                                     tp_log *log, unsigned *pending, tp_error *err);
void tp_paths__host_routes_free(tp_host_routes *host);
/*
 * tp_paths__compute on sys, a copy of the host's system trimmed by
 * tp_paths__trim_domains: the same routes, those to CPUs, NETs and
 * NVSwitches taken from the host's where the trimmed nodes carried none.
 */
tp_status tp_paths__compute_trimmed(tp_system *sys, const tp_host_routes *host,
                                    const tp_config *cfg, const tp_job_view *job, tp_log *log,
                                    tp_error *err);
/* Log NCCL's path lines (second part of ncclTopoPrint). */
/* ncclTopoPrintPaths; raw (NULL: none) is tp_paths__raw_routes of the untrimmed host system, for
 * the DEV view of 2.30.3 (TP_RULE_DEV_NODES): hops through DEV nodes and routes to them. */
void tp_paths__print(tp_log *log, const tp_system *sys, const tp_system *raw);
/* A copy of sys (its nodes as they are) holding only the searches' routes to its GPUs and NETs. */
tp_status tp_paths__raw_routes(tp_system **out, const tp_system *sys, const tp_config *cfg,
                               tp_error *err);

/* P2P between two GPUs (ncclTopoCheckP2p); *p2p 1 when allowed. read/intermediate_rank may be NULL.
 */
tp_status tp_paths__check_p2p(const tp_system *sys, const tp_config *cfg, int64_t id1, int64_t id2,
                              int *p2p, int *read, int *intermediate_rank, tp_error *err);
/* GDR between a GPU and a NET (ncclTopoCheckGdr). */
tp_status tp_paths__check_gdr(const tp_system *sys, const tp_config *cfg, int64_t bus_id,
                              int64_t net_id, int read, int *use_gdr, tp_error *err);
/* Whether the network beats the GPU-to-GPU path (ncclTopoCheckNet); *net 1 when it does. */
tp_status tp_paths__check_net(const tp_system *sys, const tp_config *cfg, int64_t id1, int64_t id2,
                              int *net);
/* ncclPxnDisable: 1 when PXN is off (NCCL_PXN_DISABLE; the net plugin is not v4). */
int tp_paths__pxn_disable(const tp_config *cfg);

/* Index of the node of `type` with `id` (ncclTopoIdToIndex), or -1. */
int tp_paths__id_to_index(const tp_system *sys, int type, int64_t id);
/* Index of the GPU of `rank` (ncclTopoRankToIndex), or -1. */
int tp_paths__rank_to_index(const tp_system *sys, int rank);

/*
 * ncclTopoGetLocal: the nodes of result_type with the best bandwidth, then
 * best path type, from node (type, index). locals holds the result type's
 * node count; *path_type (may be NULL) gets their path type.
 */
void tp_paths__get_local(const tp_system *sys, int type, int index, int result_type, int *locals,
                         int *n_locals, int *path_type);
/* NCCL 2.22.3 mirrorBits: reverse the low log2(pow2) bits of val (spreads channels over NETs). */
int tp_paths__mirror_bits(int val, int pow2);
/* ncclTopoGetLocalNet's channel-0 offset in GPU g's n_nets local NETs, shared by n_gpus GPUs. */
int tp_paths__local_net_start(const tp_system *sys, int g, int n_nets, int n_gpus);
/* ncclTopoGetLocalNet's netsPerGpu: how many of GPU g's n_nets local NETs (shared by n_gpus
 * GPUs) its channels step through, under the system's NCCL_NETDEVS_POLICY. */
int tp_paths__nets_per_gpu(const tp_system *sys, int n_nets, int n_gpus);
/* ncclTopoGetLocalNet: the NET of `rank` for channel_id (id and/or dev may be NULL). */
tp_status tp_paths__get_local_net(const tp_system *sys, int rank, int channel_id, int64_t *id,
                                  int *dev, tp_error *err);
/* ncclTopoGetLocalGpu: the GPU index local to NET net_id, -1 when none. */
tp_status tp_paths__get_local_gpu(const tp_system *sys, int64_t net_id, int *gpu_index,
                                  tp_error *err);
/* Each GPU's local NETs as ncclTopoGetLocalNet reads them, kept across queries while its routes
 * stay (the caller forgets what changes), and the GPUs the last query read: owned by the caller,
 * tp_paths__local_nets_memo_free. */
typedef struct tp_local_nets_memo tp_local_nets_memo;
/* A memo for sys's GPUs, all unknown; NULL when out of memory. */
tp_local_nets_memo *tp_paths__local_nets_memo_new(const tp_system *sys);
void tp_paths__local_nets_memo_free(tp_local_nets_memo *memo);
/* GPU g's routes to the NETs changed; g = -1: a route from a NET, which every GPU's entry reads. */
void tp_paths__local_nets_memo_forget(tp_local_nets_memo *memo, int g);
/* Whether the last tp_paths__get_local_gpu_reads with memo read GPU g's routes to the NETs. */
bool tp_paths__local_nets_memo_read(const tp_local_nets_memo *memo, int g);
/* The same, with memo (may be NULL): it keeps the GPUs' local NETs between calls and marks the
 * GPUs whose routes the answer read: the answer holds until one of those or a route from a NET
 * changes. */
tp_status tp_paths__get_local_gpu_reads(const tp_system *sys, int64_t net_id, int *gpu_index,
                                        tp_local_nets_memo *memo, tp_error *err);
/* getLocalNetCountByBw: how many local NETs it takes to match the GPU's bandwidth to its CPU. */
void tp_paths__local_net_count_by_bw(const tp_system *sys, int gpu, int *count);
/* ncclTopoGetIntermediateRank: the rank proxying rank's traffic to net_id (rank itself unless PXN).
 */
tp_status tp_paths__get_intermediate_rank(const tp_system *sys, int rank, int64_t net_id,
                                          int *intermediate_rank, tp_log *log, tp_error *err);
/*
 * ncclTopoGetNetDev without a graph: the NET `rank` uses to talk to
 * peer_rank on channel_id and the rank proxying it (id and dev may be NULL).
 */
tp_status tp_paths__get_net_dev(const tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                                int rank, int channel_id, int peer_rank, int64_t *id, int *dev,
                                int *proxy_rank, tp_log *log, tp_error *err);
/*
 * ncclTopoGetPxnRanks: the distinct ranks proxying job->rank's PXN traffic.
 * ranks must hold job->n_ranks entries.
 */
tp_status tp_paths__get_pxn_ranks(const tp_system *sys, const tp_config *cfg,
                                  const tp_job_view *job, int *ranks, int *n_ranks, tp_log *log,
                                  tp_error *err);
/* ncclTopoGetNvbGpus: ranks reached from rank's GPU over NVB; ranks holds the GPU count. Returns
 * how many. */
int tp_paths__get_nvb_gpus(const tp_system *sys, int rank, int *ranks);
/* ncclTopoPathAllNVLink: 1 when every GPU pair is NVL or NVB. */
int tp_paths__all_nvlink(const tp_system *sys);

/* Fail with TP_ERR_INTERNAL: a route query on a node that is not there. */
tp_status tp_paths__internal(tp_error *err, const char *what);
/*
 * The computed routes' invariants (paths_check.c): every route a chain of
 * links from its source to its destination, its bandwidth within its
 * narrowest link's. TP_ERR_INTERNAL naming the first broken route.
 */
tp_status tp_paths__check(const tp_system *sys, tp_error *err);

#endif
