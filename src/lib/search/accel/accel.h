/*
 * The accelerators of the search (search/accel/), private to them: each
 * module owns one part of tp_accel (its own struct, made by its _init and
 * freed by its _free) and the whole is attached to a search context
 * through search_accel.h. Every accelerator is exact: it changes how fast
 * NCCL's decisions are reached, never which (search_diff and test_search
 * compare each with the bare core).
 *   milli  (search_milli.c)  link arithmetic on integer thousandths
 *   memo   (search_memo.c)   memory of sub-searches that saved nothing
 *   pass   (search_pass.c)   memory of whole passes that saved nothing
 *   shadow (search_shadow.c) passes at lower speeds followed alongside
 *   bound  (search_bound.c)  passes cut when they cannot beat the best graph
 *          (search_sides.c)  with channels that cannot start inside a switch
 *   dead   (search_dead.c)   next channels that cannot start
 *   iso    (search_iso.c)    mirrored domains (not attached: used by the plan)
 */
#ifndef TP_ACCEL_H
#define TP_ACCEL_H

#include "search/search_int.h"

typedef struct tp_accel tp_accel;

/* Which accelerators a search attaches (tp_accel_opts.use). */
enum {
    TP_ACCEL_MILLI = 1u << 0,
    TP_ACCEL_MEMO = 1u << 1,
    TP_ACCEL_PASS = 1u << 2,
    TP_ACCEL_SHADOW = 1u << 3, /* needs MILLI and PASS */
    TP_ACCEL_BOUND = 1u << 4,  /* needs MILLI */
    TP_ACCEL_DEAD = 1u << 5,   /* needs MILLI */
    TP_ACCEL_ALL = (1u << 6) - 1,
};

/* How the accelerated search runs (tests; tp_search__compute's are the defaults). */
typedef struct tp_accel_opts {
    unsigned use; /* TP_ACCEL_*; 0: step by step (no accelerator attached) */
    int cut_cap;  /* steps a pass that cannot beat the best graph explores before it is cut
                     (-1: never cut; 0: at once, which makes settling them frequent) */
    int verify;   /* run the passes the pass memory knows and check their steps (an error
                     if they differ) */
} tp_accel_opts;

/* The defaults of tp_search__compute: every accelerator, hopeless passes cut after this. */
#define TP_CUT_STEP_CAP 16
extern const tp_accel_opts tp_accel__defaults;

/* ncclTopoCompute with the accelerators of opts (tests). */
tp_status tp_search__compute_opts(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                  tp_log *log, const tp_accel_opts *opts, tp_error *err);

/* ---- milli: link arithmetic in thousandths (search_milli.c) ---- */

/* Largest bandwidth milli mode handles: 2^20 thousandths (see search_milli.c). */
#define TP_MILLI_MAX ((1 << 20) - 1)
/* Amounts (bandwidths of a pass in thousandths) remembered per search. */
#define TP_AMOUNT_CACHE 64

/*
 * A bandwidth of the pass in thousandths of GB/s: what followPath takes
 * forward (v[0] plain, v[1] PCI share of an Intel route) and on the
 * reverse link (v[2], v[3]: 1/8 of each; v[4]: 0, for links whose reverse
 * does not pay).
 */
typedef struct tp_amount {
    float bw;
    int32_t v[5];
} tp_amount;

/* The pass settings the amounts of a pass follow from. */
typedef struct tp_amounts_of {
    int valid;
    tp_pattern pattern;
    float bw_intra, bw_inter;
} tp_amounts_of;

/* A compiled hop as the accelerators see it (parallel to the core's hop pool). */
typedef struct tp_mhop {
    int32_t *m, *mrev; /* the link and its reverse in thousandths (milli.no_rev: does not pay) */
    int li, lri;       /* their indices in the link table */
    uint64_t k1, k2;   /* hash multipliers of the link */
    uint64_t rk1, rk2; /* and of its reverse */
    unsigned char sel; /* milli amount forward: 1 for the PCI share of an Intel route, else 0 */
    unsigned char rev_div8; /* the core hop's (tp_hop), here to keep the walk on one table */
    unsigned char rev_full;
    unsigned char rev_i; /* the amount (tp_amount.v index) the reverse link pays */
} tp_mhop;

/* What the hops of a route take (tp_mroute.kind): the walks have a loop for each. */
enum {
    TP_MROUTE_ANY = 0,   /* amounts forward and on reverse links */
    TP_MROUTE_PLAIN = 1, /* the plain amount (v[0]) forward only */
    TP_MROUTE_FWD = 2,   /* forward only (plain or Intel PCI share) */
};

/* A compiled route's hash change for one reservation of each pass amount. */
typedef struct tp_mroute {
    uint64_t hash1[3], hash2[3];
    unsigned char kind; /* TP_MROUTE_*: what its hops take */
} tp_mroute;

typedef struct tp_milli {
    tp_mhop *hops;     /* per core hop (hop_pool index) */
    tp_mroute *routes; /* per core route (tp_cpath.index) */
    int n_links;
    float **link_bw; /* every link bandwidth the search reads (the system's floats) */
    int32_t *link_m; /* their values in thousandths during a milli pass */
    const int32_t **pci_up_m, **pci_down_m; /* per GPU with a PCI link: its links' values */
    int capable; /* the routes allow it (reverse links present, simple) */
    int simple;  /* no route takes a link twice */
    /* Amounts (bits of tp_amount.v) some hop takes: of GPU/NVS routes, of NET routes, of GPU to
     * NET routes (a Balanced Tree walks them at half bw_inter). */
    unsigned slots_intra, slots_inter, slots_out;
    int on;               /* the current pass runs in milli mode */
    int link_m_ok;        /* link_m holds the floats' values */
    tp_amount amounts[3]; /* bw_intra, bw_inter, bw_inter / 2 of the pass */
    int n_amounts;
    tp_amounts_of amounts_of;                 /* the speeds and pattern amounts[] were made for */
    tp_amount cached[TP_AMOUNT_CACHE];        /* amounts made so far, by bw */
    unsigned char cached_ok[TP_AMOUNT_CACHE]; /* 0: empty slot, 1: not exact, 2: exact */
    unsigned char cached_slots[TP_AMOUNT_CACHE]; /* the amounts it had to be exact for */
    uint64_t *net_k1, *net_k2;                   /* per NET: hash multipliers of its bw */
    int32_t no_rev; /* stays 0: the reverse of the hops whose reverse does not pay */
} tp_milli;

/* ---- memo: tables of explored sub-searches and passes (search_memo.c) ---- */

typedef struct tp_memo_entry {
    uint64_t key, check;
    int steps;    /* budget steps it took */
    int complete; /* 0: it ran out of budget after `steps` (a lower bound) */
    unsigned generation;
} tp_memo_entry;

typedef struct tp_memo_table {
    tp_memo_entry *slots;
    size_t cap, count;
    unsigned generation; /* entries of older generations are free */
} tp_memo_table;

typedef struct tp_memo {
    tp_memo_table table;         /* valid within one search pass */
    int on;                      /* this pass uses it (its pattern allows it) */
    uint64_t bw_hash1, bw_hash2; /* linear hashes of every bandwidth changed */
    int dep_chan, dep_depth;     /* previous channel of the next-channel sub-search, GPUs it read */
    int dep_max;                 /* largest dep_depth recorded in the pass */
    unsigned long n_copies;      /* graphs saved so far */
} tp_memo;

/* ---- pass: memory of whole passes (search_pass.c) ---- */

/* Distinct route types the pass memory tells apart. */
#define TP_PASS_MAX_TYPES 32
/* Settings a pass may not read: sameChannels, crossNic. */
#define TP_READ_SAME 1u
#define TP_READ_CROSS 2u

/* Contexts found last that the pass memory checks before hashing (one per speeds' slot). */
#define TP_PASS_LAST_BITS 3
#define TP_PASS_LAST (1 << TP_PASS_LAST_BITS)

/*
 * What passes of one context share: the start state and every setting but
 * the four the ladder moves most (typeIntra, typeInter, sameChannels,
 * crossNic), which index the context's steps.
 */
typedef struct tp_pass_context {
    uint64_t state;    /* hash of the bandwidths at the start */
    uint64_t speeds;   /* bits of bwIntra (high half) and bwInter */
    uint64_t channels; /* minChannels (high half) and maxChannels */
    uint64_t rest;     /* nHops (high half), pattern and collNet (small: 16 bits each) */
} tp_pass_context;

typedef struct tp_pass_memory {
    tp_pass_context *contexts; /* owned, n_contexts of them */
    int *steps; /* owned: `stride` per context, by slot (search_pass.c; -1: unknown, below:
                   a pass cut without saving) */
    size_t n_contexts, cap;
    int stride;
    tp_memo_table index;    /* contexts by hash (steps: their index) */
    int last[TP_PASS_LAST]; /* the context found last at each speeds' slot (-1: none) */
    int armed;              /* the pass running is recordable: pass_store records it */
    uint64_t state;         /* hash of the bandwidths at its start */
    int state_ok;           /* state holds since the last float pass */
    int ti_lo, ti_hi;       /* typeIntra values taking this pass's decisions */
    unsigned reads;         /* TP_READ_*: settings this pass read */
    int pattern;            /* of this pass */
    int usable;             /* the route types are few enough to tell apart */
    /* Per path type: the rank of its effective (largest route at or under it) type, intra
     * (GPU/NVS <-> GPU/NVS routes) and inter (GPU <-> NET); how many ranks. */
    signed char ti_rank[TP_PATH_TYPE_COUNT], te_rank[TP_PATH_TYPE_COUNT];
    int n_ti_ranks, n_te_ranks;
    int verify;    /* check the memory against real passes (tests) */
    int verifying; /* running a pass the memory knew, to check it */
    int missed;    /* the pass about to run was looked up (hook_known) and not found */
    int cut_slot;  /* the pass running, for tp_accel__pass_cut_store: its slot (-1: none) */
    tp_pass_context cut_context; /* and its context */
} tp_pass_memory;

/* ---- shadow: passes at lower speeds (search_shadow.c) ---- */

#define TP_SHADOWS 3

/*
 * Values of the shadows side by side, lane j for shadow j (a fourth lane
 * unused): a walk checks and moves every shadow with one vector operation.
 */
typedef int32_t tp_lanes __attribute__((vector_size(16)));
typedef float tp_flanes __attribute__((vector_size(16)));
#define TP_LANES 4

typedef struct tp_shadow {
    float bw;             /* the speed it stands for */
    int int_bw;           /* (int)bw: NCCL's NET checks truncate it */
    tp_amount amounts[3]; /* the pass's amounts, at this speed */
    float *net_bw;        /* NET bandwidths (n_nets) */
} tp_shadow;

typedef struct tp_shadows {
    tp_shadow runs[TP_SHADOWS];
    tp_lanes *link_m;      /* per link: its value in thousandths in each shadow (n_links) */
    tp_lanes amount[3][5]; /* lane j: runs[j].amounts[i].v[k] (0 in lanes without a shadow) */
    int count;
    unsigned alive; /* bit j: shadow j agrees so far */
    int ok;         /* its buffers are allocated */
} tp_shadows;

/* ---- dead: next channels that cannot start (search_dead.c) ---- */

/* The one link every route into a GPU ends with. */
typedef struct tp_entry {
    int link;                  /* link table index; -1 none seen, -2 several or shared */
    unsigned char sel_mask[2]; /* amounts taken there: [intra, inter], bit = hop sel */
} tp_entry;

typedef struct tp_dead {
    tp_entry *entry; /* per GPU */
    int capable;     /* every GPU has a private entry link */
    int next_dead;   /* this pass: no channel can follow a completed one */
} tp_dead;

/* ---- bound: passes that cannot beat the best graph (search_bound.c) ---- */

/* Steps the first settling round lets each cut pass explore (x4 every round). */
#define TP_SETTLE_FIRST_CAP 256

/*
 * A bridge side with its links out and in that every route between its
 * GPUs and the NETs takes too (search_sides.c).
 */
typedef struct tp_side {
    uint64_t gpus; /* the GPUs of the side */
    int size;      /* how many */
    int up, down;  /* link indices: out of the side, into it */
} tp_side;

/* A first pass cut short: its settings and the budget it had left. */
typedef struct tp_cut_pass {
    tp_graph_settings settings;
    int left;
    int round_cap; /* the settling round's cap that last re-ran it or one alike (0: none) */
} tp_cut_pass;

typedef struct tp_bound {
    tp_arena tables;     /* every table below up to `sides`: made once, freed together */
    int *links, *count;  /* per GPU: its entry links (width slots each) */
    unsigned char *open; /* per GPU: a route enters it without a hop */
    int width;
    int *bridge_link;          /* links that every route between two sides of GPUs takes */
    uint64_t *bridge_side;     /* per bridge: the GPUs on its near side */
    int *bridge_hops;          /* per bridge: fewest hops of a route across, and back */
    int *bridge_order;         /* bridge indices by side size, smallest first */
    int *back_first, *back;    /* bridges j whose side is bridge i's far side:
                                  back[back_first[i]..back_first[i + 1]) */
    int cross_extra[2];        /* hops a chain [0] / closed ring [1] must spend crossing bridges */
    int *hub_link, *hub_sides; /* bridge links every route out of hub_sides sides takes */
    int n_hubs;
    int n_bridges;
    tp_side *sides; /* where a channel starting inside must fit (search_sides.c) */
    int n_sides;
    int hops_gpu_gpu, hops_net_gpu, hops_gpu_net; /* fewest hops of a route of each kind */
    int cut_on;                                   /* this pass may be cut short */
    int channel_bound; /* at most this many channels in any graph of the pass */
    int only_sides;    /* the pass is hopeless only because no channel can start (sides) */
    int channel_hops;  /* at least this many hops per channel */
    int cut_cap;       /* steps a pass that cannot beat the best graph explores before its cut */
    int settle_cap;    /* the same for passes re-run to settle the global budget */
    /*
     * NCCL's globalTimeout counts cut passes as if they spent their whole
     * budget; the steps they did not spend are between 0 and `slack`.
     */
    int64_t slack;
    tp_cut_pass pending;           /* the last pass, when it was cut (pending.left >= 0) */
    unsigned long copies_at_begin; /* memo.n_copies when the pass began */
    tp_cut_pass *cuts;             /* cut passes whose steps count in the global budget (owned) */
    size_t n_cuts, cuts_cap;
} tp_bound;

/* The accelerators' state for one search context. */
struct tp_accel {
    tp_search_ctx *s;
    unsigned use; /* TP_ACCEL_* attached */
    tp_milli milli;
    tp_memo memo;
    tp_pass_memory pass;
    tp_shadows shadow;
    tp_dead dead;
    tp_bound bound;
    tp_search_accel_ops
        hooks[8]; /* tp_accel__ops narrowed to what the pass needs (search_accel.c) */
};

/* How many GPUs a set of GPU bits holds. */
static inline int tp_accel__popcount(uint64_t v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* The set of all n GPUs (n <= 64). */
static inline uint64_t tp_accel__gpu_mask(int n)
{
    return n == 64 ? ~0ULL : (1ULL << n) - 1;
}

/*
 * Open addressing on link bandwidth addresses (the names of the links the search reads): the slot
 * of keys[mask + 1] (mask + 1 a power of two, never full) where bw is, or the empty (NULL) slot
 * where it goes.
 */
static inline size_t tp_accel__link_slot(const float *const *keys, size_t mask, const float *bw)
{
    size_t i = (size_t)(((uint64_t)(uintptr_t)bw * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
    while (keys[i] && keys[i] != bw)
        i = (i + 1) & mask;
    return i;
}

/* The accelerators' view of core hop h. */
static inline const tp_mhop *tp_accel__mhop(const tp_accel *a, const tp_hop *h)
{
    return &a->milli.hops[h - a->s->hop_pool];
}

/* The accelerators' view of the hops of route path. */
static inline const tp_mhop *tp_accel__mhops(const tp_accel *a, const tp_cpath *path)
{
    return &a->milli.hops[path->first_hop];
}

/* Why a pass is cut (the decision trace, TP_EV_BOUND). */
#define TP_ACCEL_CUT_WHY "no better graph possible: rest of pass skipped (NCCL spends its steps)"

/* Narrow the hooks attached to what the pass needs now (the shadows alive, milli mode). */
void tp_accel__hooks(tp_accel *a);

/* The accelerators' own begin of a pass of g: 1 when it runs in milli mode. */
int tp_accel__begin(tp_accel *a, const tp_graph *g);
/* Run a pass of g (settling: again, to know its steps, after it was cut). */
tp_status tp_accel__run_pass(tp_accel *a, tp_graph *g, const tp_ladder_pass *p, int *time,
                             int settling);

/* Make the accelerators of opts for s (attached by the caller); tp_accel__free frees them. */
tp_status tp_accel__new(tp_search_ctx *s, const tp_accel_opts *opts, tp_accel **out, tp_error *err);
void tp_accel__free(tp_accel *a);
extern const tp_search_accel_ops tp_accel__ops;

/* The pass runs in milli mode. */
static inline int tp_accel__milli(const tp_accel *a)
{
    return a->milli.on;
}

/* Milli mode: build the link table once the routes are compiled; choose the mode of a pass. */
tp_status tp_accel__milli_init(tp_accel *a, tp_error *err);
void tp_accel__milli_free(tp_accel *a);
int tp_accel__milli_choose(tp_accel *a, const tp_graph *g);
/* The mode of a pass of g: 1 milli. Inline: a pass at the pattern and speeds of the pass before,
 * on link values already loaded, needs no call (most passes the pass memory knows). */
static inline int tp_accel__milli_begin(tp_accel *a, const tp_graph *g)
{
    tp_milli *mi = &a->milli;
    const tp_amounts_of *of = &mi->amounts_of;
    if (!mi->capable || !mi->link_m_ok || !of->valid || of->pattern != g->pattern ||
        of->bw_intra != g->bw_intra || of->bw_inter != g->bw_inter)
        return tp_accel__milli_choose(a, g);
    a->dead.next_dead = 0; /* set when the pass runs (tp_accel__run_pass) */
    mi->on = mi->n_amounts != 0;
    return mi->on;
}
/* The amounts a pass of g reserves, in out[]: their count, 0 when not all exact. */
int tp_accel__milli_amounts(tp_accel *a, const tp_graph *g, tp_amount *out);
/* The same for a pass of `pattern` at speeds bw_intra/bw_inter. */
int tp_accel__milli_amounts_at(tp_accel *a, int pattern, float bw_intra, float bw_inter,
                               tp_amount *out);
/* The index in milli.amounts of bandwidth bw (a value of the pass), or -1. */
static inline int tp_accel__milli_amount(const tp_accel *a, float bw)
{
    /* A pass has 2 or 3 amounts; the first two are looked at without a loop. */
    const tp_amount *am = a->milli.amounts;
    if (am[0].bw == bw)
        return 0;
    if (am[1].bw == bw && a->milli.n_amounts > 1)
        return 1;
    for (int i = 2; i < a->milli.n_amounts; i++)
        if (am[i].bw == bw)
            return i;
    return -1;
}
/* The link arithmetic hooks (walk, gpu_pci_bw, net_bw) for milli or float passes. */
/* The walk hook: on floats (hashed for the sub-search memory), in milli mode, with shadows. */
int tp_accel__walk_floats(void *state, const tp_cpath *path, float bw, float mult);
int tp_accel__walk_milli(void *state, const tp_cpath *path, float bw, float mult);
int tp_accel__walk_shadowed(void *state, const tp_cpath *path, float bw, float mult);
/* The take_first hook of milli passes, without and with shadows. */
int tp_accel__take_first_milli(void *state, const tp_graph *g, const tp_cpath *give_back,
                               const tp_cpath *const *paths, int count);
int tp_accel__take_first_shadowed(void *state, const tp_graph *g, const tp_cpath *give_back,
                                  const tp_cpath *const *paths, int count);
int tp_accel__gpu_pci_bw(void *state, int g);
void tp_accel__net_bw(void *state, int net, int sign, float was);

/* Memo tables and hashing (search_memo.c). Inline: the memories hash a few words per step. */
static inline uint64_t tp_accel__mix(uint64_t h, uint64_t v)
{
    /* splitmix64 finaliser over the combination. */
    uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* Two independent multipliers of a bandwidth: a 128-bit linear hash of the state. */
static inline void tp_accel__bw_keys(const float *bw, uint64_t *k1, uint64_t *k2)
{
    *k1 = tp_accel__mix(0x1234567ULL, (uint64_t)(uintptr_t)bw) | 1;
    *k2 = tp_accel__mix(0x89abcdefULL, (uint64_t)(uintptr_t)bw) | 1;
}
void tp_accel__table_reset(tp_memo_table *m);
void tp_accel__table_free(tp_memo_table *m);
const tp_memo_entry *tp_accel__table_find(const tp_memo_table *m, uint64_t key, uint64_t check);
void tp_accel__table_store(tp_memo_table *m, uint64_t key, uint64_t check, int steps, int complete);
/* The sub-search memory: the `sub` hook and its per-pass reset. */
tp_status tp_accel__memo_sub(tp_accel *a, tp_graph *g, tp_search_sub kind, int n, int *time);
void tp_accel__memo_begin(tp_accel *a, const tp_graph *g);
void tp_accel__memo_read(tp_accel *a, int depth, int channel);

/*
 * The pass memory (search_pass.c): pass_find gives the steps left by an
 * equivalent first pass that saved nothing (1) and, when alike is not
 * NULL, the passes of its context (all but their mode, `kept`); else 0
 * and remembers the pass for pass_store, called when this pass saved
 * nothing.
 */
void tp_accel__pass_init(tp_accel *a);
void tp_accel__pass_free(tp_accel *a);
/* Forget every pass (they held for the previous best graph only). */
void tp_accel__pass_reset(tp_accel *a);
void tp_accel__pass_begin(tp_accel *a, const tp_graph *g);
void tp_accel__pass_read(tp_accel *a, tp_search_read what, int value, int result);
/* The pass reserves intra route path at mult 1: its type was accepted. */
static inline void tp_accel__pass_accept(tp_accel *a, const tp_cpath *path)
{
    int need = tp_search__route_need(path, a->pass.pattern);
    if (need > a->pass.ti_lo)
        a->pass.ti_lo = need;
}
int tp_accel__pass_find(tp_accel *a, const tp_graph *g, int *time, tp_known_passes *alike);
void tp_accel__pass_store(tp_accel *a, const tp_graph *g, int time);
/* The same for the pass g would run at speed bw from the same start. */
int tp_accel__pass_known(tp_accel *a, const tp_graph *g, float bw);
void tp_accel__pass_store_at(tp_accel *a, const tp_graph *g, float bw, int time);
/* A first pass alike cut before without saving (1: *left, the budget it had left), else 0 and
 * the pass is remembered for pass_cut_store, called after it: left, the budget it had left
 * when it was cut without saving (-1: it was not). */
int tp_accel__pass_cut_find(tp_accel *a, const tp_graph *g, int *left);
void tp_accel__pass_cut_store(tp_accel *a, int left);

/* Shadow passes (search_shadow.c). */
tp_status tp_accel__shadow_init(tp_accel *a, tp_error *err);
void tp_accel__shadow_free(tp_accel *a);
void tp_accel__shadow_begin(tp_accel *a, const tp_graph *g, const float *bws, int count);
void tp_accel__shadow_end(tp_accel *a, const tp_graph *g, int time);
void tp_accel__shadow_stop(tp_accel *a);
/* The pass saved a graph: the shadows at speeds the ladder will not run stop. */
void tp_accel__shadow_saved(tp_accel *a);
/* After the pass walked path: short_hop is its first hop without room, -1 when taken. */
void tp_accel__shadow_walk(tp_accel *a, const tp_cpath *path, const tp_amount *am, int short_hop);
void tp_accel__shadow_release(tp_accel *a, const tp_cpath *path, const tp_amount *am);
void tp_accel__shadow_bw_test(void *state, int net, float value, int ok);
void tp_accel__shadow_net_bw(tp_accel *a, int n, int sign);
void tp_accel__shadow_order(void *state, const tp_rank_row *row, const int *pos, int count);

/* Dead next channels (search_dead.c). */
tp_status tp_accel__dead_init(tp_accel *a, tp_error *err);
void tp_accel__dead_free(tp_accel *a);
int tp_accel__dead_pass(const tp_accel *a, const int32_t *link_m, const tp_amount *amounts,
                        const tp_graph *g);
/* The next channel of a dead pass: NCCL's attempt only leaves a NET latency in g. */
tp_status tp_accel__dead_next_channel(tp_accel *a, tp_graph *g);

/* Cut passes (search_bound.c). */
tp_status tp_accel__bound_init(tp_accel *a, tp_error *err);
void tp_accel__bound_free(tp_accel *a);
void tp_accel__bound_begin(tp_accel *a, const tp_graph *g, int enabled);
/* Steps the pass g explores before it is cut (-1: not cut): it cannot beat the best graph. */
int tp_accel__cut_cap(const tp_accel *a, const tp_graph *g);
/* Whether a graph of the pass g may still be better than the saved one. */
int tp_accel__can_beat(const tp_accel *a, const tp_graph *g);
/* Between passes (link values at their start): no graph of a pass of g can beat the saved one. */
int tp_accel__hopeless(void *state, const tp_graph *g);
/*
 * A first pass equivalent to one cut before without saving (same start, speeds and effective
 * settings) is cut again at once: NCCL takes the same steps in it. 1 when done (*time: -1).
 */
int tp_accel__cut_known(tp_accel *a, const tp_graph *g, int *time);
/* The pass just run was cut: keep it for the global budget; settle cut passes when needed. */
void tp_accel__bound_pass_end(tp_accel *a, const tp_graph *g);
tp_status tp_accel__bound_budget(tp_accel *a, tp_graph *g, int64_t *global_timeout, int all);
void tp_accel__bound_forget(tp_accel *a);

/* Sides (search_sides.c), made from the bridges; whether no channel of g can start at all. */
tp_status tp_accel__sides_init(tp_accel *a);
void tp_accel__sides_free(tp_accel *a);
int tp_accel__no_start(const tp_accel *a, const tp_graph *g, const tp_amount *amounts);

#endif
