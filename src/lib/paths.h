/*
 * Stage 3: paths between every pair of nodes (BFS with bottleneck bandwidth
 * and worst path type), NVB, P2P/SHM/GDR/PXN policies and the trimming of
 * the system NCCL 2.22.3 does (src/graph/paths.cc).
 */
#ifndef TP_PATHS_H
#define TP_PATHS_H

#include "system.h"

/* What the paths stage needs to know about the job (NCCL's comm fields). */
typedef struct tp_job_view {
    int n_ranks;       /* all ranks of the job */
    int n_nodes;       /* hosts */
    int rank;          /* the rank whose pipeline this is */
    int local_n_ranks; /* ranks of this host */
} tp_job_view;

/* ncclTopoComputePaths: compute every node's routes (replacing old ones). */
tp_status tp_paths__compute(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                            tp_log *log, tp_error *err);
/* ncclTopoTrimSystem: drop GPUs of other domains and, when the whole job is local, NETs. */
tp_status tp_paths__trim(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                         tp_error *err);
/* Free every node's routes. */
void tp_paths__free(tp_system *sys);
/* Log NCCL's path lines (second part of ncclTopoPrint). */
void tp_paths__print(tp_log *log, const tp_system *sys);

/* P2P between two GPUs (ncclTopoCheckP2p); *p2p 1 when allowed. */
tp_status tp_paths__check_p2p(const tp_system *sys, const tp_config *cfg, int64_t id1, int64_t id2,
                              int *p2p, int *read, int *intermediate_rank, tp_error *err);
/* GDR between a GPU and a NET (ncclTopoCheckGdr). */
tp_status tp_paths__check_gdr(const tp_system *sys, const tp_config *cfg, int64_t bus_id,
                              int64_t net_id, int read, int *use_gdr, tp_error *err);

#endif
