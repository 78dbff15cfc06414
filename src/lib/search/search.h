/*
 * Stage 4: the graph search of NCCL 2.22.3 (src/graph/search.cc): ring,
 * tree, NVLS and CollNet patterns, bandwidth reservation with backtracking,
 * the relaxation ladder and step budgets; graph files in and out.
 */
#ifndef TP_SEARCH_H
#define TP_SEARCH_H

#include "paths/paths.h"

#include <stddef.h>

/* Step budgets of NCCL 2.22.3 search.cc (counted in ncclTopoSearchRecGpu calls). */
#define TP_SEARCH_GLOBAL_TIMEOUT (1LL << 19)
#define TP_SEARCH_TIMEOUT (1 << 14)
#define TP_SEARCH_TIMEOUT_TREE (1 << 14)
#define TP_SEARCH_TIMEOUT_SAMECHANNELS (1 << 8)
/* Budget of the PCI-order reference try from a NET (not counted globally). */
#define TP_SEARCH_TIMEOUT_PCI_ORDER (1 << 10)

/* Version of the graph XML format NCCL 2.22.3 reads and writes (xml/nccl_xml.h). */
#define TP_GRAPH_XML_VERSION TP_NCCL_XML_VERSION

/* The source lines of NCCL's back-trace for a rejected graph file are the profile's
 * (tp_nccl_profile.graph_file_lines). */

/* Kinds of decisions the search records. */
typedef enum tp_search_event_kind {
    TP_EV_TRY,      /* a search pass with these settings */
    TP_EV_SOLUTION, /* a better solution was found */
    TP_EV_RELAX,    /* a constraint was relaxed */
    TP_EV_RAISE,    /* second pass: bandwidth raised */
    TP_EV_BUDGET,   /* the step budget ran out */
    TP_EV_FALLBACK, /* simple-order fallback */
    TP_EV_LOADED,   /* graph taken from NCCL_GRAPH_FILE */
    TP_EV_BOUND,    /* a pass cut short by an accelerator: it could not beat the best graph */
    TP_EV_SETTLE,   /* cut passes re-run: the global budget check needed their steps */
    TP_EV_IMPROVED, /* the pass just run left a better graph (the event holds that graph) */
    TP_EV_DUP,      /* ncclTopoDupChannels doubled the channels at a fraction of the bw */
    TP_EV_DONE,     /* first pass stopped: no better graph can exist (max channels or total bw) */
} tp_search_event_kind;

/* One decision: 24 bytes (a search records hundreds, per graph of every plan). */
typedef struct tp_search_event {
    const char *why; /* static text */
    float bw_intra, bw_inter;
    unsigned short n_channels;
    unsigned char kind; /* tp_search_event_kind */
    unsigned char pattern, type_intra, type_inter, same_channels, cross_nic;
} tp_search_event;

/* Whether a graph was searched, and whether the search left the system's bandwidths as is. */
typedef enum tp_search_state {
    TP_SEARCH_NONE,    /* not computed */
    TP_SEARCH_KEPT,    /* searched on integers only: link and NET bandwidths unchanged */
    TP_SEARCH_CHANGED, /* loaded from a file, or float passes that may round bandwidths */
} tp_search_state;

/* ncclTopoGraph of NCCL 2.22.3, plus the recorded decisions. */
typedef struct tp_graph {
    int id; /* ring 0, tree 1, collnet 2, nvls 3 */
    tp_pattern pattern;
    int cross_nic;
    int coll_net;
    int min_channels;
    int max_channels;
    int n_channels;
    float bw_intra;
    float bw_inter;
    float latency_inter;
    tp_path_type type_intra;
    tp_path_type type_inter;
    int same_channels;
    int n_hops;
    tp_search_state search_state; /* how the last tp_search__compute went */
    int intra_cap;                /* ints intra holds: TP_MAXCHANNELS rows of the system's GPUs */
    int64_t inter[TP_MAXCHANNELS * 2];
    tp_search_event *events; /* owned */
    size_t n_events, events_cap;
    /* Channel c's GPU ranks at [c x n_gpus, (c + 1) x n_gpus): sized by the system's GPUs, so
     * a graph is a few KB and a plan touches few fresh pages (tp_graph__new, tp_graph__size).
     * A graph declared as a variable has no rows: only its settings are used. */
    int intra[];
} tp_graph;

/* Bytes of a graph with channel rows for n_gpus GPUs (a multiple of its alignment). */
static inline size_t tp_graph__size(int n_gpus)
{
    size_t rows = (size_t)TP_MAXCHANNELS * (size_t)(n_gpus > 0 ? n_gpus : 1) * sizeof(int);
    size_t align = _Alignof(tp_graph);
    return (offsetof(tp_graph, intra) + rows + align - 1) / align * align;
}
/* The room of a graph of tp_graph__size(n_gpus) bytes: its rows for n_gpus GPUs. */
static inline void tp_graph__set_room(tp_graph *g, int n_gpus)
{
    g->intra_cap = TP_MAXCHANNELS * (n_gpus > 0 ? n_gpus : 1);
}
/* A cleared graph for n_gpus GPUs, NULL when allocation fails (tp_search__graph_release, free). */
tp_graph *tp_graph__new(int n_gpus);

/* A graph's settings: its fields before the channel arrays, as a record of their own. */
typedef struct tp_graph_settings {
    int id;
    tp_pattern pattern;
    int cross_nic, coll_net, min_channels, max_channels, n_channels;
    float bw_intra, bw_inter, latency_inter;
    tp_path_type type_intra, type_inter;
    int same_channels, n_hops;
    tp_search_state search_state;
} tp_graph_settings;
/* A field added to tp_graph before its arrays belongs in tp_graph_settings and its copies too. */
_Static_assert(offsetof(tp_graph, intra_cap) == sizeof(tp_graph_settings),
               "tp_graph_settings must list every setting of tp_graph");

static inline tp_graph_settings tp_graph__settings(const tp_graph *g)
{
    return (tp_graph_settings){.id = g->id,
                               .pattern = g->pattern,
                               .cross_nic = g->cross_nic,
                               .coll_net = g->coll_net,
                               .min_channels = g->min_channels,
                               .max_channels = g->max_channels,
                               .n_channels = g->n_channels,
                               .bw_intra = g->bw_intra,
                               .bw_inter = g->bw_inter,
                               .latency_inter = g->latency_inter,
                               .type_intra = g->type_intra,
                               .type_inter = g->type_inter,
                               .same_channels = g->same_channels,
                               .n_hops = g->n_hops,
                               .search_state = g->search_state};
}

static inline void tp_graph__set_settings(tp_graph *g, const tp_graph_settings *v)
{
    g->id = v->id, g->pattern = v->pattern, g->cross_nic = v->cross_nic;
    g->coll_net = v->coll_net, g->min_channels = v->min_channels;
    g->max_channels = v->max_channels, g->n_channels = v->n_channels;
    g->bw_intra = v->bw_intra, g->bw_inter = v->bw_inter, g->latency_inter = v->latency_inter;
    g->type_intra = v->type_intra, g->type_inter = v->type_inter;
    g->same_channels = v->same_channels, g->n_hops = v->n_hops;
    g->search_state = v->search_state;
}

/* dst's settings become src's; its channel arrays and events are untouched. */
static inline void tp_graph__copy_settings(tp_graph *dst, const tp_graph *src)
{
    tp_graph_settings v = tp_graph__settings(src);
    tp_graph__set_settings(dst, &v);
}

/* ncclTopoSearchInit: per-system search limits. */
tp_status tp_search__init(tp_system *sys, tp_error *err);
/* 2.30.3 ncclTopoSearchInit (TP_RULE_DEV_NODES): maxBw and totalBw over the DEV nodes, which a
 * trim keeps, reading the routes the searches gave them (no P2P, GDR or PXN rewrite): devs is
 * tp_paths__raw_routes of the untrimmed host system, its GPUs standing for the DEVs. */
tp_status tp_search__init_devs(tp_system *sys, const tp_system *devs, tp_error *err);
/*
 * ncclTopoCompute: fill graph (id, pattern, collNet, min/maxChannels set by
 * the caller) from NCCL_GRAPH_FILE or the search. Logs NCCL's warnings.
 * The search runs with the accelerators of search/accel/ attached (the
 * same decisions, reached faster).
 */
tp_status tp_search__compute(tp_system *sys, tp_graph *graph, const tp_config *cfg, tp_log *log,
                             tp_error *err);
/*
 * tp_search__compute keeping what it compiled of sys in *keep (NULL at
 * first) for the next graphs of the same system; freed by
 * tp_search__keep_free. The system must not change in between.
 */
typedef struct tp_search_ctx tp_search_ctx;
tp_status tp_search__compute_kept(tp_search_ctx **keep, tp_system *sys, tp_graph *graph,
                                  const tp_config *cfg, tp_log *log, tp_error *err);
void tp_search__keep_free(tp_search_ctx *keep);
/* Steps the searches of a kept context walked (passes count a few each). */
long tp_search__work(const tp_search_ctx *keep);
/* Below this much work, re-searching a system beats proving it mirrors another (plan.c). */
#define TP_MIRROR_MIN_WORK 512
/* ncclTopoPrintGraph: the "Pattern ..." line and channel lines. */
void tp_search__print_graph(tp_log *log, const tp_system *sys, const tp_graph *graph);
/* ncclTopoDumpGraphs: the NCCL_GRAPH_DUMP_FILE content. */
tp_status tp_search__dump_graphs(FILE *out, const tp_system *sys, tp_graph *const *graphs,
                                 int n_graphs, tp_error *err);
/*
 * Graphs of domain b from those of domain a, when b's system is a renaming
 * of a's that the search cannot tell apart (same GPUs in order, NETs in any
 * order; proved in search/accel/) and a's searches left a's bandwidths unchanged.
 * *done is 1 when gb[] (n graphs, allocated) were filled so; 0: search b.
 * gb[]'s trace buffers are theirs or NULL: they are reused, not leaked.
 */
/* A domain's system and its graphs, for tp_search__mirror. */
typedef struct tp_search_domain {
    tp_system *sys;
    tp_graph *const *graphs;
} tp_search_domain;
/*
 * What tp_search__mirror derived of each system, kept for the next
 * comparisons (*cache made on first use; NULL: nothing kept). Its systems
 * must stay as they are until tp_search__mirrors_free.
 */
typedef struct tp_search_mirrors tp_search_mirrors;
tp_status tp_search__mirror(tp_search_mirrors **cache, tp_search_domain a, tp_search_domain b,
                            int n, const tp_config *cfg, int *done, tp_error *err);
void tp_search__mirrors_free(tp_search_mirrors *cache);
/* The kept context of sys's searches (owned; freed here or with the cache) serves as sys's tables
 * in later comparisons; sys stays as it is until tp_search__mirrors_free. */
void tp_search__mirrors_adopt(tp_search_mirrors **cache, tp_system *sys, tp_search_ctx *keep);

/* Release a graph's event list. */
void tp_search__graph_release(tp_graph *graph);

/*
 * ncclTopoGetLocalNet: index of the NET that GPU `gpu` (an index) uses for
 * channel `channel`, or -1 when the system has no NET.
 */
int tp_search__local_net(const tp_system *sys, int gpu, int channel);
/* ncclTopoGetLocalGpu: index of the GPU that NET `net` (an index) serves, or -1. */
int tp_search__local_gpu(const tp_system *sys, int net);

#endif
