/*
 * Private to the search stage (the core, its accelerators under accel/, graphfile.c):
 * the state of NCCL 2.22.3's recursive search (src/graph/search.cc) and
 * its helpers. Accelerators see the core through search_accel.h.
 */
#ifndef TP_SEARCH_INT_H
#define TP_SEARCH_INT_H

#include "search/search.h"
#include "search/search_accel.h"

#define TP_DIVUP(x, y) (((x) + (y)-1) / (y))

/*
 * NVLS and CollNet direct channels have a head GPU that talks to all the
 * others (NCCL 2.22.3 ncclTopoSearchTryNvls / TryCollnetDirect): they
 * reserve other multiples of the bandwidth and compare graphs by channel
 * count first (not a transitive order).
 */
static inline int tp_search__head_pattern(int pattern)
{
    return pattern == TP_PATTERN_NVLS || pattern == TP_PATTERN_COLLNET_DIRECT;
}

/* How the next GPU is chosen (NCCL 2.22.3 FORCED_ORDER_*). */
typedef enum tp_order { TP_ORDER_FREE = 0, TP_ORDER_PCI = 1, TP_ORDER_REPLAY = 2 } tp_order;

/* One link of a compiled route (search_path.c): what a reservation changes. */
typedef struct tp_hop {
    float *bw;              /* the link's bandwidth */
    float *rev;             /* the reverse link's, when it pays too (NULL if absent) */
    unsigned char pci;      /* a PCI link: takes the PCI share of bw */
    unsigned char rev_div8; /* reverse pays 1/8 (pre-Ampere GPU entered from a non-GPU) */
    unsigned char rev_full; /* reverse pays all (POWER CPU over NVLink) */
} tp_hop;

/* A route from one node to another, compiled. */
struct tp_cpath {
    tp_hop *hops; /* borrowed from the context's pool */
    int count;
    int type;            /* path type */
    int rev_type;        /* type of the route back */
    int need[2];         /* the type it needs: [0] type, [1] for trees (also the way back) */
    int index;           /* its number among the compiled routes (tables of an accelerator) */
    int first_hop;       /* index of hops[0] in the context's hop pool */
    unsigned char intel; /* PCI share carries NCCL's INTEL_P2P_OVERHEAD */
    unsigned char intra; /* between GPUs and NVSwitches: reserves bwIntra under typeIntra */
};

static inline int tp_search__tree_pattern(int pattern)
{
    return pattern == TP_PATTERN_BALANCED_TREE || pattern == TP_PATTERN_TREE ||
           pattern == TP_PATTERN_SPLIT_TREE;
}

/* NCCL 2.22.3 ncclTopoFollowPath: the path type a route needs (trees also need the way back). */
static inline int tp_search__route_need(const tp_cpath *path, int pattern)
{
    return path->need[tp_search__tree_pattern(pattern)];
}

/* A candidate next GPU with its static score keys (search_order.c). */
typedef struct tp_rank_cand {
    int g, inter_bw, intra_bw, intra_hops;
} tp_rank_cand;

/* Candidates after one GPU for channels from one NET, in static score order. */
struct tp_rank_row {
    tp_rank_cand *c; /* owned, built on first use */
    int count, ready;
};

/* typeInter values with their own ncclTopoSelectNets lists (path types are fewer). */
#define TP_SEL_TYPES 16

/* ncclTopoSelectNets for one typeInter: (n_gpus + 1) rows of n_nets, the last for all GPUs. */
typedef struct tp_sel_lists {
    int *nets, *count; /* owned: one block, the counts after the lists */
    int type;          /* typeInter + 1 once built, 0 before */
} tp_sel_lists;

/* NCCL 2.22.3: the step budget of one search pass with g's settings. */
static inline int tp_search__step_budget(const tp_graph *g)
{
    if (g->same_channels)
        return TP_SEARCH_TIMEOUT_SAMECHANNELS;
    return g->pattern == TP_PATTERN_TREE ? TP_SEARCH_TIMEOUT_TREE : TP_SEARCH_TIMEOUT;
}

/* A pass stopped before its end (tp_search__stop): not NCCL's, an attached accelerator's. */
typedef struct tp_search_stop {
    int after;       /* steps until the pass is stopped (-1: never) */
    int stopped;     /* the pass was stopped: its steps are not known */
    int left;        /* budget it had left then: its final budget is at most that */
    const char *why; /* for the decision trace */
} tp_search_stop;

/* One ncclTopoCompute: the system, the best graph so far and cached orders. */
struct tp_search_ctx {
    tp_system *sys;
    const tp_nccl_profile *profile; /* the configuration's (set for each graph searched) */
    tp_graph *save;                 /* NCCL's saveGraph: the caller's graph */
    int n_gpus, n_nets;
    void *tables;   /* one block holding the tables below up to net_rows (one allocation) */
    int *local_gpu; /* per NET: ncclTopoGetLocalGpu */
    int *port_first,
        *port_nets; /* per NET n: port_nets[port_first[n]..port_first[n+1]) share its port */
    int *local_net; /* per GPU, TP_MAXCHANNELS entries: ncclTopoGetLocalNet */
    tp_sel_lists sel[TP_SEL_TYPES];   /* ncclTopoSelectNets per typeInter */
    int *gpu_order;                   /* n_gpus rows: GPUs ranked from each GPU without NET keys */
    const float **pci_up, **pci_down; /* per GPU: GPU<->PCI link bws (gpuPciBw), or NULL */
    int *gpu_order_count;
    uint64_t *used;                /* per GPU: bit c when in channel c (NCCL's node used flags) */
    tp_rank_row *net_rows;         /* n_gpus x n_nets rows for ranking with NET keys */
    int start_net[TP_MAXCHANNELS]; /* index of the NET each channel started at */
    /* Compiled routes [from type][to type], from-index major (search_path.c). */
    tp_cpath *routes[TP_NODE_TYPE_COUNT][TP_NODE_TYPE_COUNT];
    tp_hop *hop_pool;
    size_t n_hops;
    int n_routes;
    int changed_passes; /* passes run on the system's floats (they may round link values) */
    long work;          /* steps walked and passes begun, over the context's life */
    tp_search_stop stop;
    const tp_search_accel_ops *accel; /* NULL: step by step */
    void *accel_state;                /* the accelerator's, freed by accel->free */
    tp_error *err;
};

/* A table's place in a block of tables: at (the block's size so far) grows by n bytes, rounded
 * up to keep any object aligned; the table's offset returned. */
static inline size_t tp_search__place(size_t *at, size_t n)
{
    size_t align = _Alignof(max_align_t), offset = *at;
    *at += (n + align - 1) / align * align;
    return offset;
}

tp_status tp_search__ctx_init(tp_search_ctx *s, tp_system *sys, tp_graph *save, tp_error *err);
/* The context's tables without its compiled routes (tp_search__compile_routes adds them): what
 * a comparison of two systems reads. */
tp_status tp_search__ctx_tables(tp_search_ctx *s, tp_system *sys, tp_error *err);
/* Ready a context of an earlier search of the same system for a search saving into save. */
void tp_search__ctx_reuse(tp_search_ctx *s, tp_graph *save, tp_error *err);
/* Free the context and the accelerator attached to it. */
void tp_search__ctx_free(tp_search_ctx *s);

/* tp_search__compute as NCCL runs it, step by step: no accelerator attached. For tests. */
tp_status tp_search__compute_plain(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                   tp_log *log, tp_error *err);

/*
 * Whether x (searched with an accelerator) recorded the decisions of y
 * (step by step): a pass x stopped early (TP_EV_BOUND) may have spent its
 * budget in y or not, a final stop stands for second passes y ran or not,
 * and x records when it settled stopped passes; every other event is the
 * same. For tests.
 */
int tp_search__same_decisions(const tp_graph *x, const tp_graph *y);

/* ncclTopoSelectNets for GPU index `gpu` (-1: every GPU); borrowed list. */
tp_status tp_search__select_nets(tp_search_ctx *s, int type_inter, int gpu, const int **list,
                                 int *count);

/* ncclTopoSearchNextGpuSort with NVSwitches or NET keys, where the ranking reads live
 * bandwidths: GPUs to try after `gpu`, best first (search_rec.c has the fixed-order case). */
tp_status tp_search__next_gpus_live(tp_search_ctx *s, const tp_graph *g, const tp_node *gpu,
                                    int *next, int *count, int sort_net);

/* a before b in ncclTopoSearchNextGpuSort's order: NET path bw, live PCI bw, row order. */
static inline int tp_search__ranks_before(const tp_rank_cand *a, int pci_a, int pos_a,
                                          const tp_rank_cand *b, int pci_b, int pos_b)
{
    if (a->inter_bw != b->inter_bw)
        return a->inter_bw > b->inter_bw;
    if (pci_a != pci_b)
        return pci_a > pci_b;
    return pos_a < pos_b;
}

/* NCCL 2.22.3 INTEL_P2P_OVERHEAD: Intel root complexes split P2P into 64B TLPs. */
static inline float tp_search__intel_p2p_overhead(float bw)
{
    return bw * 6 / 5;
}

/* NCCL's followPath on the system's floats: reserve (mult > 0) or release bw on path. */
tp_status tp_search__walk_floats(tp_search_ctx *s, const tp_cpath *path, float bw, float mult,
                                 int *done);

/* ncclTopoSearchRec: extend g by one more channel, saving better graphs. */
tp_status tp_search__rec(tp_search_ctx *s, tp_graph *g, int *time);
/* ncclTopoSearchRecNet's test of NET n for the next channel (bw: NCCL's int bwInter). */
int tp_search__net_may_open(tp_search_ctx *s, const tp_graph *g, int n, int bw);

/* ---- search_rec.c's steps, for the rewritten ncclTopoSearchRecNet (search_net_2_27.c) ---- */

/* A NET the next channel starts from, opened: its bandwidth taken, the channel's start set. */
typedef struct tp_net_start {
    int n;     /* the NET's index */
    int count; /* candidate NETs */
} tp_net_start;

/* What a version's ncclTopoSearchRecNet does at an opened NET: *found once a head was tried
 * (NVLS / CollNet direct: the loop ends), *leak when NCCL keeps the NET's bandwidth. */
typedef tp_status (*tp_net_step)(tp_search_ctx *s, tp_graph *g, const tp_net_start *at, int *found,
                                 int *leak, int *time);

/* ncclTopoSearchRecNet's loop, shared by its versions: each candidate NET from the channel's
 * own on, tested (tp_search__net_may_open), opened, `step`, then closed unless it leaks. */
tp_status tp_search__each_start_net(tp_search_ctx *s, tp_graph *g, tp_net_step step, int *time);
/* ncclTopoSearchTryGpu from NET index `net` to GPU index `gpu` at step 0, in `order`. */
tp_status tp_search__try_first_gpu(tp_search_ctx *s, tp_graph *g, int net, int gpu, tp_order order,
                                   int *time);
/* ncclTopoReplayGetGpu(-1): the first GPU of the previous channel. */
tp_status tp_search__replay_first(tp_search_ctx *s, const tp_graph *g, int *gi);
/* A sub-search, through the accelerator when one is attached. */
tp_status tp_search__sub_search(tp_search_ctx *s, tp_graph *g, tp_search_sub kind, int net,
                                int *time);

/* NCCL 2.27.5 ncclTopoSearchRecNet (rule recnet-local-gpu-first): the next channel from each
 * candidate NET; and its channel from scratch at NET n (TP_SUB_FREE_NET). */
tp_status tp_search__rec_net_2_27(tp_search_ctx *s, tp_graph *g, int *time);
tp_status tp_search__free_net_2_27(tp_search_ctx *s, tp_graph *g, int n, int *time);

/* memcpy of NCCL's graphs, minus our event list (channels of n_gpus GPUs). */
void tp_search__copy_graph(tp_graph *dst, const tp_graph *src, int n_gpus);

/* Room for one more event in graph->events; 0 when none is left (the trace is then short). */
int tp_search__event_room(tp_graph *graph);

/* Record a decision in graph->events (settings taken from `from`). Inline: a search records
 * two per pass, and most passes cost little else. */
static inline void tp_search__event(tp_graph *graph, tp_search_event_kind kind, const char *why,
                                    const tp_graph *from)
{
    if (graph->n_events == graph->events_cap && !tp_search__event_room(graph))
        return;
    tp_search_event *e = &graph->events[graph->n_events++];
    e->why = why;
    e->bw_intra = from->bw_intra;
    e->bw_inter = from->bw_inter;
    e->n_channels = (unsigned short)from->n_channels;
    e->kind = (unsigned char)kind;
    e->pattern = (unsigned char)from->pattern;
    e->type_intra = (unsigned char)from->type_intra;
    e->type_inter = (unsigned char)from->type_inter;
    e->same_channels = (unsigned char)from->same_channels;
    e->cross_nic = (unsigned char)from->cross_nic;
}

/* Compile the routes of the search (search_path.c): one block, freed by tp_search__free_routes. */
tp_status tp_search__compile_routes(tp_search_ctx *s, tp_error *err);
void tp_search__free_routes(tp_search_ctx *s);

/* NCCL 2.22.3 followPath: a PHB route from a GPU through an Intel x86 CPU pays the overhead. */
static inline int tp_search__intel_overhead(const tp_node *start, const tp_route *path)
{
    if (start->type != TP_NODE_GPU || path->type != TP_PATH_PHB)
        return 0;
    for (int step = 0; step < path->count; step++) {
        const tp_node *node = path->list[step]->rem;
        if (node->type == TP_NODE_CPU && node->cpu.arch == TP_CPU_ARCH_X86 &&
            node->cpu.vendor == TP_CPU_VENDOR_INTEL)
            return 1;
    }
    return 0;
}

/* Route (t1, i1) -> (t2, i2) of sys as tp_search__compile_routes sets it, but its hops (NULL);
 * inline, as tp_search__compile_hop. */
static inline void tp_search__route_head(tp_cpath *cp, const tp_system *sys, int t1, int i1, int t2,
                                         int i2)
{
    const tp_node *start = &sys->nodes[t1].nodes[i1];
    const tp_route *path = &start->paths[t2][i2];
    const tp_route *rev = sys->nodes[t2].nodes[i2].paths[t1];
    cp->hops = NULL;
    cp->count = path->count;
    cp->type = path->type;
    cp->rev_type = rev ? rev[i1].type : TP_PATH_DIS;
    cp->need[0] = cp->type;
    cp->need[1] = cp->rev_type > cp->type ? cp->rev_type : cp->type;
    cp->intel = (unsigned char)tp_search__intel_overhead(start, path);
    cp->intra =
        (t1 == TP_NODE_GPU || t1 == TP_NODE_NVS) && (t2 == TP_NODE_GPU || t2 == TP_NODE_NVS);
}

/* NCCL 2.22.3 followPath: GPUs below this compute capability, entered from a non-GPU, also
 * pay 1/8 of the bandwidth on the way back. */
#define TP_NCCL_REV_DIV8_BELOW_CC 80

/* The link of `to` back to `from` of the given type, or NULL. */
static inline tp_link *tp_search__rev_link(tp_node *from, tp_node *to, int type)
{
    for (int l = 0; l < to->n_links; l++)
        if (to->links[l].rem == from && to->links[l].type == type)
            return &to->links[l];
    return NULL;
}

/* The hop of a route from `start` that leaves `node` by `link`, compiled (inline: the search
 * compiles every hop of its routes, a comparison of two systems one at a time). */
static inline void tp_search__compile_hop(tp_hop *h, tp_node *node, tp_link *link,
                                          const tp_node *start)
{
    tp_node *rem = link->rem;
    *h = (tp_hop){.bw = &link->bw, .pci = link->type == TP_LINK_PCI};
    /* Pre-Ampere GPUs entered from a non-GPU: 1/8 back; POWER CPUs over NVLink: all back. */
    h->rev_div8 = rem->type == TP_NODE_GPU && rem->gpu.cuda_comp_cap < TP_NCCL_REV_DIV8_BELOW_CC &&
                  start->type != TP_NODE_GPU;
    h->rev_full =
        rem->type == TP_NODE_CPU && rem->cpu.arch == TP_CPU_ARCH_POWER && link->type == TP_LINK_NVL;
    if (h->rev_div8 || h->rev_full) {
        tp_link *rev = tp_search__rev_link(node, rem, link->type);
        h->rev = rev ? &rev->bw : NULL;
    }
}

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
