/*
 * Private to the search stage (search*.c, graphfile.c): the state shared by
 * the recursive search of NCCL 2.22.3 (src/graph/search.cc) and its helpers.
 */
#ifndef TP_SEARCH_INT_H
#define TP_SEARCH_INT_H

#include "search/search.h"

#define TP_DIVUP(x, y) (((x) + (y)-1) / (y))

/*
 * NVLS and CollNet direct channels have a head GPU that talks to all the
 * others (NCCL 2.22.3 ncclTopoSearchTryNvls / TryCollnetDirect): they
 * reserve other multiples of the bandwidth and compare graphs by channel
 * count first, so the shortcuts built on chains and on a transitive order
 * (milli mode, memories, bounds, dead channels) leave them out.
 */
static inline int tp_search__head_pattern(int pattern)
{
    return pattern == TP_PATTERN_NVLS || pattern == TP_PATTERN_COLLNET_DIRECT;
}

/* How the next GPU is chosen (NCCL 2.22.3 FORCED_ORDER_*). */
enum { TP_ORDER_FREE = 0, TP_ORDER_PCI = 1, TP_ORDER_REPLAY = 2 };

/* One link of a compiled route (search_path.c): what a reservation changes. */
typedef struct tp_hop {
    float *bw;         /* the link's bandwidth */
    float *rev;        /* the reverse link's, when it pays too (NULL if absent) */
    int32_t *m, *mrev; /* the same two in thousandths, for milli mode (search_milli.c) */
    int li, lri;       /* their indices in the link table */
    uint64_t k1, k2;   /* hash multipliers of *bw */
    uint64_t rk1, rk2; /* and of *rev */
    unsigned char pci; /* a PCI link: takes the PCI share of bw */
    unsigned char sel; /* milli amount forward: 1 for the PCI share of an Intel route, else 0 */
    unsigned char rev_div8; /* reverse pays 1/8 (pre-Ampere GPU entered from a non-GPU) */
    unsigned char rev_full; /* reverse pays all (POWER CPU over NVLink) */
} tp_hop;

/* A route from one node to another, compiled. */
typedef struct tp_cpath {
    tp_hop *hops; /* borrowed from the context's pool */
    int count;
    int type;                    /* path type */
    int rev_type;                /* type of the route back */
    unsigned char intel;         /* PCI share carries NCCL's INTEL_P2P_OVERHEAD */
    uint64_t hash1[3], hash2[3]; /* milli mode: hash change of one reservation per amount */
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

/* Amounts (bandwidths of a pass in thousandths) remembered per search. */
#define TP_AMOUNT_CACHE 64

/* Steps explored of a pass that cannot beat the best graph before it is cut short. */
#define TP_CUT_STEP_CAP 16

/* Steps the first settling round lets each cut pass explore (x4 every round). */
#define TP_SETTLE_FIRST_CAP 256

/* Largest bandwidth milli mode handles: 2^20 thousandths (see search_milli.c). */
#define TP_MILLI_MAX ((1 << 20) - 1)

/*
 * A bandwidth of the pass in thousandths of GB/s (milli mode): what
 * followPath takes forward (v[0] plain, v[1] PCI share of an Intel route)
 * and on the reverse link (v[2], v[3]: 1/8 of each).
 */
typedef struct tp_amount {
    float bw;
    int32_t v[4];
} tp_amount;

/* A candidate next GPU with its static score keys (search_order.c). */
typedef struct tp_rank_cand {
    int g, inter_bw, intra_bw, intra_hops;
} tp_rank_cand;

/* Candidates after one GPU for channels from one NET, in static score order. */
typedef struct tp_rank_row {
    tp_rank_cand *c; /* owned, built on first use */
    int count, ready;
} tp_rank_row;

/* typeInter values with their own ncclTopoSelectNets lists (path types are fewer). */
#define TP_SEL_TYPES 16

/* ncclTopoSelectNets for one typeInter: (n_gpus + 1) rows of n_nets, the last for all GPUs. */
typedef struct tp_sel_lists {
    int *nets, *count; /* owned */
    int type;          /* typeInter + 1 once built, 0 before */
} tp_sel_lists;

/* Settings a pass may not read (search_pass.c): sameChannels, crossNic. */
#define TP_READ_SAME 1u
#define TP_READ_CROSS 2u

/* NCCL 2.22.3: the step budget of one search pass with g's settings. */
static inline int tp_search__pass_budget(const tp_graph *g)
{
    if (g->same_channels)
        return TP_SEARCH_TIMEOUT_SAMECHANNELS;
    return g->pattern == TP_PATTERN_TREE ? TP_SEARCH_TIMEOUT_TREE : TP_SEARCH_TIMEOUT;
}

/* Distinct route types the pass memory tells apart (search_pass.c). */
#define TP_PASS_MAX_TYPES 32

/* Shadow passes at lower speeds followed alongside a pass (search_shadow.c). */
#define TP_SHADOWS 3

typedef struct tp_shadow {
    float bw;             /* the speed it stands for */
    int int_bw;           /* (int)bw: NCCL's NET checks truncate it */
    tp_amount amounts[3]; /* the pass's amounts, at this speed */
    int32_t *link_m;      /* link values in thousandths (n_links) */
    float *net_bw;        /* NET bandwidths (n_nets) */
} tp_shadow;

/* The one link every route into a GPU ends with (search_dead.c). */
typedef struct tp_entry {
    int link;                  /* link table index; -1 none seen, -2 several or shared */
    unsigned char sel_mask[2]; /* amounts taken there: [intra, inter], bit = hop sel */
} tp_entry;

/* One ncclTopoCompute: the system, the best graph so far and cached orders. */
struct tp_search_ctx {
    tp_system *sys;
    tp_graph *save; /* NCCL's saveGraph: the caller's graph */
    int n_gpus, n_nets;
    int *local_gpu; /* per NET: ncclTopoGetLocalGpu */
    int *port_first,
        *port_nets; /* per NET n: port_nets[port_first[n]..port_first[n+1]) share its port */
    int *local_net; /* per GPU, TP_MAXCHANNELS entries: ncclTopoGetLocalNet */
    tp_sel_lists sel[TP_SEL_TYPES]; /* ncclTopoSelectNets per typeInter */
    int *gpu_order;                 /* n_gpus rows: GPUs ranked from each GPU without NET keys */
    const float *pci_up[TP_MAX_NODES], *pci_down[TP_MAX_NODES]; /* GPU<->PCI link bws (gpuPciBw) */
    int *gpu_order_count;
    uint64_t *used;                /* per GPU: bit c when in channel c (NCCL's node used flags) */
    tp_rank_row *net_rows;         /* n_gpus x n_nets rows for ranking with NET keys */
    int start_net[TP_MAXCHANNELS]; /* index of the NET each channel started at */
    /* Compiled routes [from type][to type], from-index major (search_path.c). */
    tp_cpath *routes[TP_NODE_TYPE_COUNT][TP_NODE_TYPE_COUNT];
    tp_hop *hop_pool;
    size_t n_hops;
    uint64_t net_k1[TP_MAX_NODES], net_k2[TP_MAX_NODES]; /* hash multipliers of NET bw */
    /* Milli mode (search_milli.c): every link bandwidth the search reads, as integers. */
    int n_links;
    float **link_bw; /* the links' float bandwidths (the system's) */
    int32_t *link_m; /* their values in thousandths during a milli pass */
    const int32_t *pci_up_m[TP_MAX_NODES], *pci_down_m[TP_MAX_NODES];
    int milli_capable;       /* the routes allow it (reverse links present) */
    int need_pci, need_rev8; /* some hop takes the Intel PCI share / a 1/8 reverse */
    int milli;               /* the current pass runs in milli mode */
    int link_m_ok;           /* link_m holds the floats' values */
    tp_entry *entry;         /* per GPU (search_dead.c) */
    int dead_capable;        /* every GPU has a private entry link */
    int next_dead;           /* this pass: no channel can follow a completed one */
    int float_passes;        /* passes run on floats (they may round link values) */
    int plain;               /* no shortcut: floats, no memories, no shadows (tests) */
    int verify;              /* check the pass memory against real passes (tests) */
    int verifying;           /* running a pass the memory knew, to check it */
    long work;               /* steps walked and passes begun, over the context's life */
    tp_amount amounts[3];    /* bw_intra, bw_inter, bw_inter / 2 of the pass */
    tp_amount cached_amounts[TP_AMOUNT_CACHE]; /* amounts made so far, by bw (search_milli.c) */
    unsigned char cached_ok[TP_AMOUNT_CACHE];  /* 0: empty slot, 1: not exact, 2: exact */
    int n_amounts;
    tp_shadow shadows[TP_SHADOWS];
    int n_shadows;
    unsigned shadow_alive; /* bit j: shadow j agrees so far */
    int shadow_ok;         /* its buffers are allocated */
    /* Sub-search memory: valid within one search pass (see search_memo.c). */
    tp_search_memo memo;
    int memo_on;                 /* the pattern allows it */
    uint64_t bw_hash1, bw_hash2; /* linear hashes of every bandwidth changed */
    int dep_chan, dep_depth;     /* previous channel of the next-channel sub-search, GPUs it read */
    int dep_max;                 /* largest dep_depth recorded in the pass */
    unsigned long n_copies;      /* graphs saved so far */
    /* Pass memory (search_pass.c): first passes that saved nothing, by settings. */
    tp_search_memo passes;
    uint64_t pass_key, pass_check; /* of the pass running */
    uint64_t pass_state;           /* hash of the bandwidths at its start */
    int pass_state_ok;             /* pass_state holds since the last float pass */
    int ti_lo, ti_hi;    /* typeIntra values taking this pass's decisions (see note_type_intra) */
    unsigned pass_reads; /* TP_READ_*: settings this pass read */
    int intra_types[TP_PASS_MAX_TYPES], n_intra_types; /* route types GPU/NVS <-> GPU/NVS */
    int inter_types[TP_PASS_MAX_TYPES], n_inter_types; /* route types GPU <-> NET */
    /* Cutting passes that cannot beat the best graph (search_bound.c). */
    int *bound_links, *bound_count; /* per GPU: its entry links (bound_width slots each) */
    unsigned char *bound_open;      /* per GPU: a route enters it without a hop */
    int bound_width;
    int *bridge_link;          /* links that every route between two sides of GPUs takes */
    uint64_t *bridge_side;     /* per bridge: the GPUs on its near side */
    int *bridge_hops;          /* per bridge: fewest hops of a route across, and back */
    int *bridge_order;         /* bridge indices by side size, smallest first */
    int cross_extra[2];        /* hops a chain [0] / closed ring [1] must spend crossing bridges */
    int *hub_link, *hub_sides; /* bridge links every route out of hub_sides sides takes */
    int n_hubs;
    int n_bridges;
    int hops_gpu_gpu, hops_net_gpu, hops_gpu_net; /* fewest hops of a route of each kind */
    int cut_on;                                   /* this pass may be cut short */
    int channel_bound; /* at most this many channels in any graph of the pass */
    int channel_hops;  /* at least this many hops per channel */
    int cut;           /* the pass was cut short: its steps are not known */
    int cut_left;      /* budget it had left when cut: its final time is at most that */
    int cut_cap;       /* steps a pass that cannot beat the best graph explores before its cut */
    int cap_left;      /* steps a hopeless pass may still explore before it is cut (-1: any) */
    int settle_cap;    /* the same for passes re-run to settle the global budget */
    tp_error *err;
};

tp_status tp_search__ctx_init(tp_search_ctx *s, tp_system *sys, tp_graph *save, tp_error *err);
/* Ready a context of an earlier search of the same system for a search saving into save. */
void tp_search__ctx_reuse(tp_search_ctx *s, tp_graph *save, tp_error *err);

/*
 * tp_search__compute as NCCL 2.22.3 runs it, step by step on floats: no
 * milli mode, no sub-search or pass memory, no shadows, no dead channels.
 * For tests: every shortcut must give the same graph.
 */
tp_status tp_search__compute_plain(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                   tp_log *log, tp_error *err);
/* How tp_search__compute_opts searches (tests; tp_search__compute's are the defaults). */
typedef struct tp_search_opts {
    int plain;   /* no shortcut at all (as tp_search__compute_plain) */
    int cut_cap; /* steps a pass that cannot beat the best graph explores before it is cut
                    (-1: never cut; 0: at once, which makes settling them frequent) */
    int verify;  /* run the passes the pass memory knows and check their steps (an error
                    if they differ) */
} tp_search_opts;

/*
 * Whether x (searched with shortcuts) recorded the decisions of y (step by
 * step): a pass x cut short (bound) may have spent its budget in y or not,
 * a final bound stands for second passes y ran or not, and x records when
 * it settled cut passes; every other event is the same. For tests.
 */
int tp_search__same_decisions(const tp_graph *x, const tp_graph *y);

tp_status tp_search__compute_opts(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                  tp_log *log, const tp_search_opts *opts, tp_error *err);
void tp_search__ctx_free(tp_search_ctx *s);

/* ncclTopoSelectNets for GPU index `gpu` (-1: every GPU); borrowed list. */
tp_status tp_search__select_nets(tp_search_ctx *s, int type_inter, int gpu, const int **list,
                                 int *count);

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

/*
 * Milli mode (search_milli.c): build the link table once the routes are
 * compiled; at each pass start, choose the mode for the pass (1: milli).
 */
tp_status tp_search__milli_init(tp_search_ctx *s, tp_error *err);
int tp_search__milli_begin(tp_search_ctx *s, const tp_graph *g);
/*
 * search_dead.c: find each GPU's entry link; tell whether, from these link
 * values and amounts, no second channel of g's pattern can start.
 */
tp_status tp_search__dead_init(tp_search_ctx *s, tp_error *err);
void tp_search__dead_free(tp_search_ctx *s);
int tp_search__dead_pass(const tp_search_ctx *s, const int32_t *link_m, const tp_amount *amounts,
                         const tp_graph *g);
/* The amounts a pass of g reserves, in out[]: their count, 0 when not all exact. */
int tp_search__milli_amounts(tp_search_ctx *s, const tp_graph *g, tp_amount *out);
void tp_search__milli_free(tp_search_ctx *s);
/* The amount of bandwidth bw (a value of the pass), or NULL. */
static inline const tp_amount *tp_search__milli_amount(const tp_search_ctx *s, float bw)
{
    for (int i = 0; i < s->n_amounts; i++)
        if (s->amounts[i].bw == bw)
            return &s->amounts[i];
    return NULL;
}

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
/* Two independent multipliers of a bandwidth: a 128-bit linear hash of the state. */
static inline void tp_search__bw_keys(const float *bw, uint64_t *k1, uint64_t *k2)
{
    *k1 = tp_search__mix(0x1234567ULL, (uint64_t)(uintptr_t)bw) | 1;
    *k2 = tp_search__mix(0x89abcdefULL, (uint64_t)(uintptr_t)bw) | 1;
}
void tp_search__memo_reset(tp_search_memo *m);
void tp_search__memo_free(tp_search_memo *m);
const tp_memo_entry *tp_search__memo_find(const tp_search_memo *m, uint64_t key, uint64_t check);
void tp_search__memo_store(tp_search_memo *m, uint64_t key, uint64_t check, int steps,
                           int complete);

/*
 * The pass memory (search_pass.c): tp_search__pass_find gives the steps left
 * by an equivalent first pass that saved nothing (1), else 0 and remembers
 * the key for tp_search__pass_store, called when this pass saved nothing.
 */
void tp_search__pass_init(tp_search_ctx *s);
int tp_search__pass_find(tp_search_ctx *s, const tp_graph *g, int *time);
void tp_search__pass_store(tp_search_ctx *s, const tp_graph *g, int time);
/* The same for the pass g would run at speed bw from the same start. */
int tp_search__pass_known(tp_search_ctx *s, const tp_graph *g, float bw);
void tp_search__pass_store_at(tp_search_ctx *s, const tp_graph *g, float bw, int time);

/*
 * Shadow passes (search_shadow.c): begin at the lower speeds bws[] before a
 * first pass, report every bandwidth decision, end by recording the shadows
 * that agreed throughout (call only when the pass saved nothing).
 */
tp_status tp_search__shadow_init(tp_search_ctx *s, tp_error *err);
void tp_search__shadow_free(tp_search_ctx *s);
void tp_search__shadow_begin(tp_search_ctx *s, const tp_graph *g, const float *bws, int count);
void tp_search__shadow_end(tp_search_ctx *s, const tp_graph *g, int time);
void tp_search__shadow_kill(tp_search_ctx *s, int j);
/* After the pass walked path: short_hop is its first hop without room, -1 when taken. */
void tp_search__shadow_walk(tp_search_ctx *s, const tp_cpath *path, const tp_amount *a,
                            int short_hop);
void tp_search__shadow_release(tp_search_ctx *s, const tp_cpath *path, const tp_amount *a);
void tp_search__shadow_net_test(tp_search_ctx *s, int n, int short_of_bw);
void tp_search__shadow_local_test(tp_search_ctx *s, float max_bw, int main_ok);
void tp_search__shadow_net_bw(tp_search_ctx *s, int n, int sign);
int tp_search__shadow_pci_bw(const tp_search_ctx *s, int j, int g);

/*
 * search_bound.c: bound_begin at a pass start (after milli mode is chosen)
 * bounds its channels; can_beat tells whether a graph of the pass g may
 * still be better than the saved one (0: the rest of the pass saves nothing).
 */
tp_status tp_search__bound_init(tp_search_ctx *s, tp_error *err);
void tp_search__bound_free(tp_search_ctx *s);
void tp_search__bound_begin(tp_search_ctx *s, const tp_graph *g, int enabled);
int tp_search__can_beat(const tp_search_ctx *s, const tp_graph *g);
/* Between passes (link values at their start): no graph of a pass of g can beat the saved one. */
int tp_search__hopeless(tp_search_ctx *s, const tp_graph *g);

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
