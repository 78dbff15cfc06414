/*
 * The planner: runs the pipeline for every rank NCCL would run it for
 * (identical hosts share results) and keeps what reports need.
 *
 * A job is n_nodes hosts of one or more kinds: the hosts planned on the same
 * topology text. The pipeline (system, paths, search) runs once per kind, on
 * one host of it (the reported rank's host for its kind, the first host of
 * the kind otherwise), and once per domain there: the ranks of a host whose
 * trimmed systems are identical (all of the host usually; one per GPU when
 * GPUs cannot reach each other). Other hosts of a kind reuse those results
 * with shifted rank numbers; only the channels are built for every rank.
 */
#ifndef TP_PLAN_H
#define TP_PLAN_H

#include "channels/channels.h"
#include "tuning/tuning.h"

/* One pipeline result, shared by the ranks of a domain. */
typedef struct tp_domain {
    tp_system *sys;                   /* trimmed, with paths (owned) */
    tp_graph *graphs[TP_GRAPH_COUNT]; /* in graph_block; home host's rank numbers */
    unsigned char *graph_block;       /* owned: room for every graph of the domain */
    int nvls_support;                 /* ncclNvlsInit */
    int nvls_channels;
    bool searched;    /* every graph computed */
    long search_work; /* steps its searches took (0: mirrored) */
} tp_domain;

/* Hosts planned on one topology: one pipeline run. */
typedef struct tp_host_kind {
    char *text; /* the topology XML text (owned), re-read for dumps */
    size_t text_len;
    char source[256];    /* its name in messages */
    int n_gpus;          /* ranks of one host of this kind */
    int rep_host;        /* the host whose pipeline runs */
    tp_xml *topo_xml;    /* its XML as NCCL prepares it on rep_host (owned) */
    tp_system *host_sys; /* its system before paths (owned) */
    int net_devices;     /* its NET plugin's devices (physical and virtual), -1: not modelled */
    tp_gpu_domains *host_domains; /* its GPU domains, from its first rank's paths (owned) */
    tp_domain *domains;           /* n_domains (owned) */
    int n_domains;
    int *domain_of;                      /* domain of each local index, -1 before it runs (owned) */
    int domain_base;                     /* index of domains[0] among the job's domains */
    int cpu_arch, cpu_vendor, cpu_model; /* ncclTopoCpuType of its system */
    int min_comp_cap, max_comp_cap;      /* over its GPUs */
    tp_search_mirrors *mirrors;          /* while its domains run: what mirroring derived */
    tp_host_routes *host_routes;         /* while its domains run: the routes they take (or NULL) */
    /* 2.30.3 (TP_RULE_DEV_NODES): host_sys with the searches' raw routes to GPUs and NETs, its
     * GPUs standing for the DEV nodes a trim keeps (owned, or NULL). */
    tp_system *dev_routes;
    /* A re-planned job's kind whose pipeline ran in the plan it re-plans, on the same host and
     * ranks: every field above is that plan's (not run again, not freed with this one). */
    bool borrowed;
} tp_host_kind;

/*
 * What the job is, as NCCL's tuning model reads it after the all-gather
 * (init.cc): ranks, hosts, every host's CPU (via host_kind), the job's CPU
 * and compute capabilities. The combined graphs are plan->channels.combined.
 */
typedef struct tp_job_facts {
    int n_ranks;
    int n_hosts;                    /* --nodes: hosts, not NCCL's nNodes (channels.n_nodes) */
    int min_comp_cap, max_comp_cap; /* over every GPU of the job */
    int cpu_arch, cpu_vendor;       /* the job's (TP_CPU_*_MIXED when hosts differ) */
} tp_job_facts;

struct tp_plan {
    tp_config *cfg;      /* own copy */
    tp_job job;          /* node_topos cleared: the kinds hold the topologies */
    tp_host_kind *kinds; /* n_kinds (owned); kind 0 is the main topology */
    int n_kinds;
    int *host_kind;       /* kind of each host (owned) */
    int *host_first_rank; /* n_nodes + 1 entries: first rank of each host (owned) */
    int *rank_devs;       /* CUDA dev of every rank with several kinds, else NULL (owned) */
    int home_kind;        /* kind of the home host */
    tp_job_facts facts;
    /* The home host's kind, borrowed from kinds[home_kind]: */
    int n_gpus_per_node; /* GPUs of the home host */
    int home_host;       /* host of the reported rank: where its kind's pipeline runs */
    char source[256];
    tp_xml *topo_xml;
    tp_system *host_sys;
    tp_domain *domains;
    int n_domains;
    int *domain_of;
    /* The reported rank and the job: */
    int min_ctas, max_ctas;           /* comm config (NCCL_MIN_CTAS / NCCL_MAX_CTAS) */
    tp_system *sys;                   /* reported rank's system: trimmed, with paths (borrowed) */
    tp_graph *graphs[TP_GRAPH_COUNT]; /* reported rank's graphs (borrowed) */
    tp_channels channels;
    tp_tuning tuning; /* rank 0's tuning model (valid when tuned) */
    bool tuned;       /* the model ran (the channels were built) */
    bool counts_only; /* a re-plan for its channel counts: channels.combined and n_channels */
    tp_log log;       /* the NCCL lines of the reported rank */
    tp_log load_log;  /* NCCL's lines for a topology file it refused (plan_job.c) */
    tp_log nic_notes; /* NCCL_IB_HCA / merging findings (nics.c), not NCCL lines */
    tp_status status; /* failure NCCL itself reports, TP_OK otherwise */
    double stage_us[TP_STAGE_COUNT]; /* time spent per stage (benchmarks only) */
};

/*
 * Boundary check of the public functions that read a finished plan: fails
 * with TP_ERR_ARGUMENT when plan is NULL or stopped at a failure NCCL reports.
 */
tp_status tp_plan__check_done(const tp_plan *plan, const char *fn, tp_error *err);

/*
 * Load the job into a fresh plan: the main topology (`text`, owned by the
 * plan from the call on, even on failure) is kind 0; every node topology file
 * whose text differs from the kinds before is a new kind. Parses each once
 * (kinds' topo_xml, unprepared), counts GPUs, numbers ranks host by host,
 * finds the home host and each kind's representative host.
 */
tp_status tp_plan__load_job(tp_plan *plan, char *text, size_t len, const char *source,
                            const tp_job *job, tp_error *err);
/*
 * A topology text's tree as the plan reads it (NCCL's replayed loader, then the same checks:
 * a text NCCL refuses or without a <gpu> fails). Caller owns *out.
 */
tp_status tp_plan__read_topology(tp_xml **out, const char *text, size_t len, tp_error *err);

/*
 * Load into a fresh plan the job `from` planned: same hosts, topology texts
 * and reported rank (for re-planning). host_kind (NULL: from's) gives each
 * host one of from's kinds instead; kinds left without a host are dropped.
 */
tp_status tp_plan__copy_job(tp_plan *plan, const tp_plan *from, const int *host_kind,
                            tp_error *err);
/*
 * tp_plan__copy_job for a re-plan under from's configuration: a kind whose pipeline would run
 * exactly as it ran in `from` (same representative host, same first rank, its domains run
 * from local rank 0) is borrowed from `from` instead of loaded and run again, so re-planning
 * a job of many kinds costs the channels, not every kind's search (`from` must outlive plan).
 */
tp_status tp_plan__borrow_job(tp_plan *plan, const tp_plan *from, const int *host_kind,
                              tp_error *err);

/*
 * Plan again the job `plan` planned, under another configuration (NULL:
 * the plan's) and optionally other kinds per host (see tp_plan__copy_job);
 * same ownership and failure rules as tp_plan_file(). With other kinds the
 * rank count may change: the re-planned job reports rank 0.
 */
tp_status tp_plan__replan(tp_plan **out, const tp_plan *plan, const tp_config *cfg,
                          const int *host_kind, tp_error *err);

/*
 * tp_plan__replan with other kinds per host, under the plan's configuration, for the job's
 * counts only: the kinds that run as they ran are borrowed, and the channels stop at the
 * combined graphs and n_channels (no rings, trees, tuning or log). Costs the channel count,
 * not every kind's search: a job's cost per kind scales with the job.
 */
tp_status tp_plan__replan_counts(tp_plan **out, const tp_plan *plan, const int *host_kind,
                                 tp_error *err);

/* Host of a rank of the job (0 <= rank < facts.n_ranks). */
int tp_plan__host_of_rank(const tp_plan *plan, int rank);

/* The kind of host h (0 <= h < job.n_nodes). */
static inline const tp_host_kind *tp_plan__kind_of_host(const tp_plan *plan, int h)
{
    return &plan->kinds[plan->host_kind[h]];
}

#endif
