/*
 * Graph-file checking (beyond NCCL): an NCCL_GRAPH_FILE against a planned
 * topology. NCCL 2.22.3's loader trusts the file; this module checks what
 * its search would have guaranteed: channel shapes, devices, channel
 * counts, path types and speeds, and the link bandwidth the channels
 * reserve together, replayed with the search's own arithmetic
 * (search.cc followPath / ncclTopoFollowPath).
 *
 * graphcheck.c parses and checks shapes, graphcheck_replay.c replays the
 * reservations, graphcheck_report.c writes the result.
 */
#ifndef TP_GRAPHCHECK_H
#define TP_GRAPHCHECK_H

#include "plan/plan.h"

/* NCCL 2.22.3 topo.h INTEL_P2P_OVERHEAD: PCI links of a PHB path through an Intel CPU carry bw * 6
 * / 5. */
#define TP_GC_INTEL_OVERHEAD_MUL 6
#define TP_GC_INTEL_OVERHEAD_DIV 5
/* NCCL 2.22.3 followPath: a GPU below this compute capability entered from a non-GPU ... */
#define TP_GC_REV_SHARE_MAX_CC 80
/* ... also takes 1/8 of the bandwidth on the reverse link. */
#define TP_GC_REV_SHARE_DIV 8
/* NCCL 2.22.3 SUB_ROUND: reservations are rounded to 1/1000 GB/s. */
#define TP_GC_ROUND_SCALE 1000
/* A channel can list at most this many GPUs (NCCL_TOPO_MAX_NODES). */
#define TP_GC_MAX_CHANNEL_GPUS TP_MAX_NODES

typedef enum tp_gc_severity {
    TP_GC_ERROR,   /* makes the graph infeasible */
    TP_GC_WARNING, /* not what NCCL's search would produce, or ignored by NCCL */
    TP_GC_NOTE,    /* information */
} tp_gc_severity;

typedef struct tp_gc_finding {
    tp_gc_severity severity;
    int channel;           /* -1: the graph (or file) as a whole */
    unsigned line, column; /* the element at fault; 0 when none */
    char text[384];
} tp_gc_finding;

/* Link kind of tp_gc_link for the NET port budget (not a tp_link_type). */
#define TP_GC_NET_PORT (-1)

/* One link (or NET port) the channels of a graph reserve bandwidth on. */
typedef struct tp_gc_link {
    char from[48], to[48]; /* node labels; `to` is empty for a NET port */
    /* the nodes of the replayed system (valid while it is; to_node NULL for a NET port) */
    const tp_node *from_node, *to_node;
    int type;          /* tp_link_type, or TP_GC_NET_PORT */
    float capacity;    /* bandwidth before the graph */
    float reserved;    /* sum of the reservations */
    float left;        /* what NCCL's arithmetic leaves (may be negative) */
    uint64_t channels; /* bit c: channel c reserves on it */
    bool over;         /* some reservation found less than it needed */
} tp_gc_link;

/* One <graph> of the file and what the check found. */
typedef struct tp_gc_graph {
    int id, pattern, cross_nic, same_channels;
    int n_channels; /* the nchannels attribute */
    int n_elements; /* <channel> elements */
    float bw_intra, bw_inter;
    int type_intra, type_inter;
    unsigned line, column;
    tp_gc_finding *findings;
    size_t n_findings, findings_cap;
    tp_gc_link *links; /* in order of first use */
    size_t n_links, links_cap;
    int n_errors;  /* error findings plus oversubscribed links */
    bool replayed; /* bandwidth was replayed (some channel to replay) */
} tp_gc_graph;

struct tp_graph_check {
    char source[256];      /* the graph file */
    char topology[256];    /* the planned topology */
    char nccl_version[16]; /* the NCCL version the plan models */
    int n_nodes, n_gpus, n_nets, n_nvs;
    tp_gc_finding *findings; /* about the file as a whole */
    size_t n_findings, findings_cap;
    tp_gc_graph *graphs;
    size_t n_graphs, graphs_cap;
    bool failed; /* an allocation failed: findings are incomplete */
};

/* One parsed <channel>: system indices of its devices, -1 for unknown ones. */
typedef struct tp_gc_channel {
    int gpus[TP_GC_MAX_CHANNEL_GPUS];
    int n_gpus;  /* entries kept (at most TP_GC_MAX_CHANNEL_GPUS) */
    int nets[2]; /* entry and exit NET indices; -1 when absent or unknown */
    int n_nets;  /* <net> elements listed */
    unsigned line, column;
} tp_gc_channel;

/* What a finding is about, and where in the graph file. */
typedef struct tp_gc_where {
    tp_gc_graph *graph;    /* NULL: the file as a whole */
    int channel;           /* -1: the graph (or file) as a whole */
    unsigned line, column; /* the element at fault; 0 when none */
} tp_gc_where;

/* Add a finding to at.graph (or to the file); never fails (sets chk->failed). */
void tp_graphcheck__add(tp_graph_check *chk, tp_gc_severity sev, tp_gc_where at, const char *fmt,
                        ...) TP_PRINTF(4, 5);

/*
 * Replay the reservations NCCL 2.22.3's search makes for channels[0..n-1]
 * of g on sys (read-only: the bookkeeping is on the side), adding hop
 * findings (path type, path bandwidth) and the links used to g.
 */
tp_status tp_graphcheck__replay(tp_graph_check *chk, tp_gc_graph *g, const tp_system *sys,
                                const tp_gc_channel *channels, int n, tp_error *err);

/*
 * The system of `rank` (a rank of kind k's representative host) with its
 * paths, as it was before any search (NCCL 2.22.3's NVLS search leaves NET
 * bandwidth taken); built as the plan built it. Free with tp_system__free.
 */
tp_status tp_graphcheck__rank_system(tp_system **out, const tp_plan *plan, const tp_host_kind *k,
                                     int rank, tp_error *err);
/* tp_graphcheck__rank_system of the reported rank. */
tp_status tp_graphcheck__fresh_system(tp_system **out, const tp_plan *plan, tp_error *err);

/* Label of a node in findings: "GPU/<rank>", "NET/<dev>", else NCCL's "PCI/0-1a000". */
void tp_graphcheck__label(char *buf, size_t size, const tp_node *node);

#endif
