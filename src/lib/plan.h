/*
 * The planner: runs the pipeline for every rank NCCL would run it for
 * (identical nodes share results) and keeps what reports need.
 *
 * A job is n_nodes identical hosts. The pipeline (system, paths, search) runs
 * on one host only, the reported rank's ("home" host), and once per domain:
 * the ranks of a host whose trimmed systems are identical (all of the host
 * usually; one per GPU when GPUs cannot reach each other). Other hosts reuse
 * those results with shifted rank numbers; only the channels are built for
 * every rank.
 */
#ifndef TP_PLAN_H
#define TP_PLAN_H

#include "channels.h"
#include "tuning.h"

/* One pipeline result, shared by the ranks of a domain. */
typedef struct tp_domain {
    tp_system *sys;                   /* trimmed, with paths (owned) */
    tp_graph *graphs[TP_GRAPH_COUNT]; /* owned; home host's rank numbers */
    int nvls_support;                 /* ncclNvlsInit */
    int nvls_channels;
    bool searched;                    /* every graph computed */
    long search_work;                 /* steps its searches took (0: mirrored) */
} tp_domain;

struct tp_plan {
    tp_config *cfg; /* own copy */
    tp_job job;
    int n_gpus_per_node;
    int home_host;              /* host of the reported rank: where the pipeline runs */
    int min_ctas, max_ctas;     /* comm config (NCCL_MIN_CTAS / NCCL_MAX_CTAS) */
    char *text;                 /* the topology XML text (owned), re-read for dumps */
    size_t text_len;
    char source[256];           /* its name in messages */
    tp_xml *topo_xml;           /* the home host's XML as NCCL prepares it */
    tp_system *host_sys;        /* the home host's system before paths (owned) */
    tp_domain *domains;         /* n_domains (owned) */
    int n_domains;
    int *domain_of;             /* domain of each local index, -1 before it runs */
    tp_system *sys;             /* reported rank's system: trimmed, with paths (borrowed) */
    tp_graph *graphs[TP_GRAPH_COUNT]; /* reported rank's graphs (borrowed) */
    tp_channels channels;
    tp_tuning tuning;           /* rank 0's tuning model (valid when tuned) */
    bool tuned;                 /* the model ran (the channels were built) */
    tp_log log;                 /* the NCCL lines of the reported rank */
    tp_log nic_notes;           /* NCCL_IB_HCA / merging findings (nics.c), not NCCL lines */
    tp_status status;           /* failure NCCL itself reports, TP_OK otherwise */
    double stage_us[TP_STAGE_COUNT]; /* time spent per stage (benchmarks only) */
};

/*
 * Boundary check of the public functions that read a finished plan: fails
 * with TP_ERR_ARGUMENT when plan is NULL or stopped at a failure NCCL reports.
 */
tp_status tp_plan__check_done(const tp_plan *plan, const char *fn, tp_error *err);

#endif
