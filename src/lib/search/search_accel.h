/*
 * The one door between NCCL's search (the core: search.c, search_rec.c,
 * search_order.c, search_path.c) and the accelerators under search/accel/.
 *
 * The core runs NCCL 2.22.3's search step by step on the system's floats.
 * An accelerator, when one is attached to a search context, is told what
 * the search does at the few points listed here and may take over three
 * things: the link arithmetic (how a route's bandwidth is reserved and
 * read), the sub-searches (the next channel, a channel from scratch) and
 * the passes of the ladder. It must leave every decision NCCL takes as
 * it is: tests compare every accelerator with the bare core (search_diff,
 * test_search). The core keeps no state of its own for an accelerator;
 * the accelerator owns its state (the `void *` below), made when it is
 * attached and freed by its `free` hook.
 */
#ifndef TP_SEARCH_ACCEL_H
#define TP_SEARCH_ACCEL_H

#include "search/search.h"

typedef struct tp_cpath tp_cpath;
typedef struct tp_rank_row tp_rank_row;

/* The sub-searches the core runs through an accelerator's `sub` hook (tp_search__sub runs them). */
typedef enum tp_search_sub {
    TP_SUB_NEXT_CHANNEL, /* the next channel, after a completed one (ncclTopoSearchRec) */
    TP_SUB_FREE_INTRA,   /* a channel from scratch, from every GPU in turn */
    TP_SUB_FREE_NET,     /* a channel from scratch at one NET (ncclTopoSearchTryNet's GPUs) */
} tp_search_sub;

/* What a pass read that an accelerator may want to know (the `read` hook). */
typedef enum tp_search_read {
    TP_READ_TYPE_INTRA,   /* a GPU/NVS route of type `value` was refused by typeIntra (accepted
                             ones are reserved next: the walk hook at mult 1) */
    TP_READ_CROSS_NIC,    /* crossNic decided where a channel may leave */
    TP_READ_PREV_CHANNEL, /* a replay read the first `value` GPUs of channel `result` */
} tp_search_read;

/* A pass of the ladder as the core runs it. */
typedef struct tp_ladder_pass {
    int number;         /* 1: first pass (relaxation ladder), 2: second pass (raising bw) */
    const float *lower; /* the speeds of the ladder below this pass's, fastest first */
    int n_lower;
} tp_ladder_pass;

/*
 * First passes an accelerator knows, alike but for the four settings the
 * ladder moves at one speed (typeIntra, typeInter, sameChannels, crossNic):
 * the budget each leaves, by those four (negative: not known), and the mode they
 * share. The `known` hook hands one out with a pass it knows; the ladder
 * then answers those passes itself, as the hook would, while the pattern and
 * speeds stay and no pass begins (tp_known_passes__steps): most of a
 * speed's passes are known once one of each path type has run.
 */
typedef struct tp_known_passes {
    const int *steps; /* NULL: none; else by tp_known_passes__steps's index */
    const signed char *intra_rank, *inter_rank; /* per path type: its rank along each axis */
    int n_inter_ranks;
    int kept; /* the passes leave every bandwidth as they found it */
    int pattern;
    float bw_intra, bw_inter; /* the settings they share that the ladder moves too */
} tp_known_passes;

/* The crossNic values a table of passes tells apart: 0, 1 and 2 (NCCL 2.23's retry). */
#define TP_KNOWN_CROSS_VALUES 3

/* The index of g's pass among its context's, by the ranks of its path types (-1: none). */
static inline int tp_known_passes__slot(const signed char *intra_rank,
                                        const signed char *inter_rank, int n_inter_ranks,
                                        const tp_graph *g, int type_intra)
{
    unsigned ti = (unsigned)type_intra, te = (unsigned)g->type_inter,
             same = (unsigned)g->same_channels, cross = (unsigned)g->cross_nic;
    if (ti >= TP_PATH_TYPE_COUNT || te >= TP_PATH_TYPE_COUNT || same > 1 ||
        cross >= TP_KNOWN_CROSS_VALUES)
        return -1;
    int rank = intra_rank[ti] * n_inter_ranks + inter_rank[te];
    return (rank * 2 + (int)same) * TP_KNOWN_CROSS_VALUES + (int)cross;
}

/* The budget the first pass of g leaves by table k; negative: not known, or k is not g's. */
static inline int tp_known_passes__steps(const tp_known_passes *k, const tp_graph *g)
{
    if (!k->steps || g->bw_intra != k->bw_intra || g->bw_inter != k->bw_inter ||
        (int)g->pattern != k->pattern)
        return -1;
    int slot =
        tp_known_passes__slot(k->intra_rank, k->inter_rank, k->n_inter_ranks, g, g->type_intra);
    return slot < 0 ? -1 : k->steps[slot];
}

/*
 * The hooks. The first seven may be NULL: nothing to do there (the core's
 * floats for the link arithmetic, its walk of each candidate); an accelerator may narrow its hooks
 * while it has nothing to do (tp_search__hooks).
 */
typedef struct tp_search_accel_ops {
    /* Link arithmetic: reserve (mult > 0) or release a route's bw: 1 done, 0 when a link is
     * short (nothing taken then), -1 on an internal error (in the context's tp_error). A
     * reservation at mult 1 of an intra route (path->intra) is one whose type was accepted. */
    int (*walk)(void *a, const tp_cpath *path, float bw, float mult);
    /* The walk of the next GPU's candidates: give back bwIntra on route give_back (one it took
     * before; NULL: none), then reserve bwIntra on the first of the `count` routes between GPUs
     * that the pass takes (typeIntra accepts its type, every link has room), telling what the
     * read and walk hooks would be told of each route tried before it: its index (taken), count
     * when none is taken, -1 on an internal error. */
    int (*take_first)(void *a, const tp_graph *g, const tp_cpath *give_back,
                      const tp_cpath *const *paths, int count);
    /* gpuPciBw: the live GPU<->PCI bandwidth (truncated) of GPU g, which has a PCI link. */
    int (*gpu_pci_bw)(void *a, int g);
    /* NET `net`'s bandwidth just changed by -sign x (int)bwInter; `was` its value before. */
    void (*net_bw)(void *a, int net, int sign, float was);
    /* A bandwidth test the search just made: NET `net` has room (net >= 0), or the NET's closest
     * GPUs, reached at `value`, are fast enough (net = -1); `ok` its answer. */
    void (*bw_test)(void *a, int net, float value, int ok);
    /* The candidates after a GPU, as ranked with live PCI bandwidths: row positions pos[]. */
    void (*order)(void *a, const tp_rank_row *row, const int *pos, int count);
    /* What the pass read (tp_search_read). */
    void (*read)(void *a, tp_search_read what, int value, int result);
    /* Run a sub-search (by tp_search__sub, or by knowing what it would do). */
    tp_status (*sub)(void *a, tp_graph *g, tp_search_sub kind, int net, int *time);
    /* Channel g->n_channels - 1 is complete; saved: it made the best graph so far. The hook may
     * stop the pass (tp_search__stop). */
    void (*channel_done)(void *a, tp_graph *g, int saved, int *time);
    /* A pass of g begins (settings set, no channel): *kept = 1 when it will leave every link and
     * NET bandwidth as it found it. global_timeout: NCCL's global budget, for the steps of passes
     * the accelerator stopped early. */
    tp_status (*pass_begin)(void *a, tp_graph *g, const tp_ladder_pass *p, int64_t *global_timeout,
                            int *kept);
    /* In place of pass_begin and pass, for a first pass of g (settings set, no channel): 1 when
     * the accelerator knows what the pass does without running it: it saves no graph and changes
     * no bandwidth, and *time is the budget it leaves; *kept as pass_begin would set it. 0: the
     * pass begins and runs through pass_begin and pass. With a known pass, *alike may be set to
     * the passes known alike: the accelerator's state is then what this hook would leave after
     * each of them, and its budget hook has nothing to do after them. */
    int (*known)(void *a, const tp_graph *g, int *time, int *kept, tp_known_passes *alike);
    /* Run the pass (by tp_search__rec, or by knowing its steps); *time: budget left. */
    tp_status (*pass)(void *a, tp_graph *g, const tp_ladder_pass *p, int *time);
    /* NCCL reads the sign of global_timeout next: make it exact enough for that. */
    tp_status (*budget)(void *a, tp_graph *g, int64_t *global_timeout);
    /* 1 when no graph of a pass of g can beat the best graph: such passes change nothing. */
    int (*futile)(void *a, const tp_graph *g);
    /* The context is reused for another graph of the same system (its bandwidths as the last
     * search left them). */
    void (*reuse)(void *a);
    void (*free)(void *a);
} tp_search_accel_ops;

/*
 * How a search runs: `attach` makes an accelerator's state for a new search
 * context (opts: its options); NULL for the step-by-step search.
 */
typedef struct tp_search_accel {
    const tp_search_accel_ops *ops;
    tp_status (*attach)(tp_search_ctx *s, const void *opts, void **state, tp_error *err);
    const void *opts;
} tp_search_accel;

/* How one ncclTopoCompute runs. */
typedef struct tp_search_run {
    const tp_search_accel *accel; /* attached to a new context (NULL: step by step) */
    tp_search_ctx **keep;         /* NULL, or the context kept for the system (made at first) */
    tp_log *log;
} tp_search_run;

/* The core's search entry point: ncclTopoCompute as run says (tp_search__compute_kept's keep). */
tp_status tp_search__compute_with(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                  const tp_search_run *run, tp_error *err);

/* What an accelerator may call back. */
/* The attached accelerator's hooks from now on (the same state). */
void tp_search__hooks(tp_search_ctx *s, const tp_search_accel_ops *ops);
tp_status tp_search__sub(tp_search_ctx *s, tp_graph *g, tp_search_sub kind, int net, int *time);
/* Stop the pass running now (its remaining steps unknown); `why` goes in the decision trace. */
void tp_search__stop(tp_search_ctx *s, int *time, const char *why);
/* Stop the pass after `steps` more steps (-1: never), for the reason `why`. */
void tp_search__stop_after(tp_search_ctx *s, int steps, const char *why);
/* Whether the pass was stopped, and the budget it had left then (-1: unknown). */
int tp_search__stopped(const tp_search_ctx *s, int *left);
/* Reset the per-pass state of the core for a pass of g (as the ladder does before each pass). */
void tp_search__reset_pass(tp_search_ctx *s, tp_graph *g);

#endif
