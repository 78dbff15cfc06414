/*
 * Who limits the job: NCCL 2.22.3's init.cc gives every rank the minimum
 * channel count and bandwidths and the worst path types over all ranks
 * (AllGather3). Here, for each graph, each kind of host's own search result
 * next to the combined one, the kinds that set the minimum and the links
 * their own graph's explanation names; and what a kind costs the job,
 * measured by re-planning the job with its hosts planned like another kind.
 */
#ifndef TP_JOB_LIMITS_H
#define TP_JOB_LIMITS_H

#include "explain/explain.h"

/* What a kind's own graph sets in the combined one: bits of tp_kind_graph.limits. */
typedef enum tp_limit_bit {
    TP_LIMIT_CHANNELS = 1u,
    TP_LIMIT_BW_INTRA = 2u,
    TP_LIMIT_BW_INTER = 4u,
    TP_LIMIT_TYPE_INTRA = 8u,
    TP_LIMIT_TYPE_INTER = 16u,
} tp_limit_bit;

typedef struct tp_kind_graph {
    tp_graph_info own; /* minimum over the kind's domains, as the all-gather takes it */
    unsigned limits;   /* tp_limit_bit set: it is the worst and some kind is better */
    int n_causes;
    char causes[TP_WHY_MAX_LIMITS][512]; /* its graph's "limit" lines (explain.c) */
    /* the hardware deviations among the causes, with their structured fields */
    int n_deviations;
    tp_difference deviations[TP_WHY_MAX_LIMITS];
} tp_kind_graph;

typedef struct tp_graph_limits {
    bool shown; /* the graph was searched by every kind */
    tp_graph_info combined;
    tp_kind_graph *kinds; /* n_kinds (owned) */
} tp_graph_limits;

/* What planning a kind's hosts like another kind changes for the job. */
typedef struct tp_kind_cost {
    int like;                        /* the kind its hosts were re-planned as (-1: not measured) */
    int channels_now, channels_like; /* collective channels */
    float ring_bw_now, ring_bw_like; /* combined ring bw_intra */
    float ring_bw_inter_now, ring_bw_inter_like;
    tp_job_cost calls; /* NCCL's tuning model: AllReduce planned like `like` -> as planned */
} tp_kind_cost;

typedef struct tp_job_limits {
    int n_kinds;
    tp_graph_limits graphs[TP_GRAPH_COUNT];
    tp_kind_cost *costs; /* n_kinds (owned); like == -1 with a single kind */
} tp_job_limits;

tp_status tp_limits__compute(tp_job_limits *out, const tp_plan *plan, tp_error *err);
void tp_limits__free(tp_job_limits *lim);

/* The hosts of kind k as text: "node 3", "nodes 0, 2-5". */
void tp_limits__hosts_text(char *buf, size_t size, const tp_plan *plan, int kind);
/* Names of the TP_LIMIT_* bits set, comma separated ("channels, bw intra"). */
void tp_limits__what_text(char *buf, size_t size, unsigned limits);

/* Text and JSON sections of `topoplan plan` (JSON: the value of "limits"). */
void tp_limits__write_text(FILE *out, const tp_plan *plan, const tp_job_limits *lim);
void tp_limits__write_json(FILE *out, const tp_plan *plan, const tp_job_limits *lim);

#endif
