/*
 * Private to the search stage (search*.c, graphfile.c): the state shared by
 * the recursive search of NCCL 2.22.3 (src/graph/search.cc) and its helpers.
 */
#ifndef TP_SEARCH_INT_H
#define TP_SEARCH_INT_H

#include "search.h"

#define TP_DIVUP(x, y) (((x) + (y) - 1) / (y))

/* How the next GPU is chosen (NCCL 2.22.3 FORCED_ORDER_*). */
enum { TP_ORDER_FREE = 0, TP_ORDER_PCI = 1, TP_ORDER_REPLAY = 2 };

/* One link of a compiled route (search_path.c): what a reservation changes. */
typedef struct tp_hop {
    float *bw;             /* the link's bandwidth */
    float *rev;            /* the reverse link's, when it pays too (NULL if absent) */
    uint64_t k1, k2;       /* hash multipliers of *bw */
    uint64_t rk1, rk2;     /* and of *rev */
    unsigned char pci;     /* a PCI link: takes the PCI share of bw */
    unsigned char rev_div8; /* reverse pays 1/8 (pre-Ampere GPU entered from a non-GPU) */
    unsigned char rev_full; /* reverse pays all (POWER CPU over NVLink) */
} tp_hop;

/* A route from one node to another, compiled. */
typedef struct tp_cpath {
    tp_hop *hops; /* borrowed from the context's pool */
    int count;
    int type;     /* path type */
    int rev_type; /* type of the route back */
    unsigned char intel; /* PCI share carries NCCL's INTEL_P2P_OVERHEAD */
} tp_cpath;

/* A sub-search already explored (search_memo.c). */
typedef struct tp_memo_entry {
    uint64_t key, check;
    int steps;    /* budget steps it took */
    int complete; /* 0: it ran out of budget after `steps` (a lower bound) */
    unsigned generation;
} tp_memo_entry;

typedef struct tp_search_memo {
    tp_memo_entry *slots;
    size_t cap, count;
    unsigned generation; /* entries of older generations are free */
} tp_search_memo;

/* One ncclTopoCompute: the system, the best graph so far and cached orders. */
typedef struct tp_search_ctx {
    tp_system *sys;
    tp_graph *save; /* NCCL's saveGraph: the caller's graph */
    int n_gpus, n_nets;
    int *local_gpu;  /* per NET: ncclTopoGetLocalGpu */
    int *sel_nets;   /* (n_gpus + 1) rows of n_nets: ncclTopoSelectNets, last row for all GPUs */
    int *sel_count;  /* per row */
    int sel_type;    /* typeInter the rows were built for; -1 before */
    int *gpu_order;  /* n_gpus rows: GPUs ranked from each GPU without NET keys */
    const float *pci_up[TP_MAX_NODES], *pci_down[TP_MAX_NODES]; /* GPU<->PCI link bws (gpuPciBw) */
    int *gpu_order_count;
    /* Compiled routes [from type][to type], from-index major (search_path.c). */
    tp_cpath *routes[TP_NODE_TYPE_COUNT][TP_NODE_TYPE_COUNT];
    tp_hop *hop_pool;
    uint64_t net_k1[TP_MAX_NODES], net_k2[TP_MAX_NODES]; /* hash multipliers of NET bw */
    /* Sub-search memory: valid within one search pass (see search_memo.c). */
    tp_search_memo memo;
    int memo_on;                          /* the pattern allows it */
    uint64_t bw_hash1, bw_hash2;          /* linear hashes of every bandwidth changed */
    uint64_t chan_hash[TP_MAXCHANNELS];   /* hash of each completed channel */
    unsigned long n_copies;               /* graphs saved so far */
    tp_error *err;
} tp_search_ctx;

tp_status tp_search__ctx_init(tp_search_ctx *s, tp_system *sys, tp_graph *save, tp_error *err);
void tp_search__ctx_free(tp_search_ctx *s);

/* ncclTopoSelectNets for GPU index `gpu` (-1: every GPU); borrowed list. */
const int *tp_search__select_nets(tp_search_ctx *s, int type_inter, int gpu, int *count);

/* ncclTopoSearchNextGpuSort: GPUs to try after `gpu`, best first. */
tp_status tp_search__next_gpus(tp_search_ctx *s, const tp_graph *g, const tp_node *gpu, int *next,
                               int *count, int sort_net);

/* ncclTopoSearchRec: extend g by one more channel, saving better graphs. */
tp_status tp_search__rec(tp_search_ctx *s, tp_graph *g, int *time);

/* memcpy of NCCL's graphs, minus our event list (channels of n_gpus GPUs). */
void tp_search__copy_graph(tp_graph *dst, const tp_graph *src, int n_gpus);

/* Record a decision in graph->events (settings taken from `from`). */
void tp_search__event(tp_graph *graph, tp_search_event_kind kind, const char *why,
                      const tp_graph *from);

/* Compile the routes of the search (search_path.c); freed by tp_search__free_routes. */
tp_status tp_search__compile_routes(tp_search_ctx *s, tp_error *err);
void tp_search__free_routes(tp_search_ctx *s);

/*
 * The memory of sub-searches (search_memo.c). A sub-search that saved no
 * graph takes the same number of steps from the same state, so it can be
 * charged instead of explored: the state is the key (link bandwidths,
 * previous channel, hops), the steps the value.
 */
uint64_t tp_search__mix(uint64_t h, uint64_t v);
void tp_search__memo_reset(tp_search_memo *m);
void tp_search__memo_free(tp_search_memo *m);
const tp_memo_entry *tp_search__memo_find(const tp_search_memo *m, uint64_t key, uint64_t check);
void tp_search__memo_store(tp_search_memo *m, uint64_t key, uint64_t check, int steps,
                           int complete);

/* Index of the node of `type` with `id`, or -1 (ncclTopoIdToIndex). */
int tp_search__id_to_index(const tp_system *sys, int type, int64_t id);

/*
 * NCCL_GRAPH_FILE (graphfile.c): fill graph from the file's <graph> of the
 * same id, as ncclTopoGetGraphFromXml does; graph->n_channels stays 0 when
 * the file has none. Logs NCCL's lines and back-trace on failure.
 */
tp_status tp_graphfile__load(tp_graph *graph, const tp_system *sys, const tp_config *cfg,
                             const char *path, tp_log *log, tp_error *err);

#endif
