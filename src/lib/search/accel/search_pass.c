/*
 * Memory of whole search passes. NCCL 2.22.3's ncclTopoCompute walks a
 * ladder of settings and often searches again with settings that cannot
 * change a single decision of the recursion: a typeIntra or typeInter that
 * admits exactly the same routes as one already tried, at the same speeds,
 * from the same link state. A first-pass search that saved no graph has only
 * one effect, the steps it took; such a pass is recorded and, when an
 * equivalent pass comes up, charged instead of explored.
 *
 * Why it is exact:
 *   - inside a pass the path types only meet route types (ncclTopoFollowPath
 *     compares path->type, and for trees the reverse type; ncclTopoSelectNets
 *     walks types 0..typeInter); two limits with the same routes at or under
 *     them (same "effective type") give the same answers everywhere;
 *   - every other input tells passes apart: their context (pattern, speeds,
 *     channel bounds, hops, collNet and the link and NET bandwidths at the
 *     start, hashed) and, within it, sameChannels and crossNic; the budget
 *     follows from pattern and sameChannels;
 *   - the best graph only gets better over the passes, and ncclTopoCompareGraphs
 *     is transitive in that sense: a graph that did not beat it before does
 *     not beat it now (see search_rec.c better_graph), so the pass still
 *     saves nothing and takes the same path.
 * Only first passes are recorded: the second pass changes the best graph
 * by duplicating channels before it starts.
 * A context's passes sit in a small array indexed by the settings the
 * ladder moves (pass_slot): a pass of the context found last, the usual
 * case, is looked up without hashing. The same slots remember the first
 * passes the bound cut without saving (search_bound.c), by what they had
 * left: the same identity tells those passes apart.
 */
#include "search/accel/accel.h"

#include <stdlib.h>
#include <string.h>

static void add_type(int *types, int *count, int t)
{
    for (int i = 0; i < *count && i < TP_PASS_MAX_TYPES; i++)
        if (types[i] == t)
            return;
    if (*count < TP_PASS_MAX_TYPES)
        types[*count] = t;
    (*count)++; /* past TP_PASS_MAX_TYPES the memory is off (path types are far fewer) */
}

/* Types and reverse types of the routes between nodes of types a and b. */
static void route_types(const tp_search_ctx *s, int from, int to, int *types, int *count)
{
    const tp_cpath *cp = s->routes[from][to];
    int n = s->sys->nodes[from].count * s->sys->nodes[to].count;
    for (int i = 0; cp && i < n; i++) {
        add_type(types, count, cp[i].type);
        add_type(types, count, cp[i].rev_type);
    }
}

/* The largest route type at or under t (-1: none). */
static int effective(const int *types, int count, int t)
{
    int best = -1;
    for (int i = 0; i < count; i++)
        if (types[i] <= t && types[i] > best)
            best = types[i];
    return best;
}

/* The rank of each path type's effective type (monotonic: ranks grow with the types). */
static int rank_types(const int *types, int count, signed char *rank)
{
    int n = 0, last = INT32_MIN;
    for (int t = 0; t < TP_PATH_TYPE_COUNT; t++) {
        int eff = effective(types, count, t);
        if (eff != last)
            n++, last = eff;
        rank[t] = (signed char)(n - 1);
    }
    return n;
}

void tp_accel__pass_init(tp_accel *a)
{
    const tp_search_ctx *s = a->s;
    tp_pass_memory *pm = &a->pass;
    int intra[TP_PASS_MAX_TYPES], inter[TP_PASS_MAX_TYPES], n_intra = 0, n_inter = 0;
    route_types(s, TP_NODE_GPU, TP_NODE_GPU, intra, &n_intra);
    route_types(s, TP_NODE_GPU, TP_NODE_NVS, intra, &n_intra);
    route_types(s, TP_NODE_NVS, TP_NODE_GPU, intra, &n_intra);
    route_types(s, TP_NODE_GPU, TP_NODE_NET, inter, &n_inter);
    route_types(s, TP_NODE_NET, TP_NODE_GPU, inter, &n_inter);
    pm->usable = n_intra <= TP_PASS_MAX_TYPES && n_inter <= TP_PASS_MAX_TYPES;
    pm->n_ti_ranks = rank_types(intra, pm->usable ? n_intra : 0, pm->ti_rank);
    pm->n_te_ranks = rank_types(inter, pm->usable ? n_inter : 0, pm->te_rank);
    pm->stride = pm->n_ti_ranks * pm->n_te_ranks * 2 * TP_KNOWN_CROSS_VALUES;
    tp_accel__pass_reset(a);
}

void tp_accel__pass_reset(tp_accel *a)
{
    a->pass.n_contexts = 0;
    a->pass.missed = 0;
    a->pass.cut_slot = -1;
    for (int i = 0; i < TP_PASS_LAST; i++)
        a->pass.last[i] = -1;
    tp_accel__table_reset(&a->pass.index);
}

void tp_accel__pass_free(tp_accel *a)
{
    tp_pass_memory *pm = &a->pass;
    free(pm->contexts);
    free(pm->steps);
    pm->contexts = NULL;
    pm->steps = NULL;
    pm->cap = 0;
    tp_accel__table_free(&pm->index);
    tp_accel__pass_reset(a);
}

void tp_accel__pass_begin(tp_accel *a, const tp_graph *g)
{
    a->pass.pattern = g->pattern;
    a->pass.ti_lo = 0;
    a->pass.ti_hi = INT32_MAX;
    a->pass.reads = 0;
}

/*
 * The memory records a pass for every typeIntra that would have taken the
 * same decisions: those at or above every route type accepted
 * (tp_accel__pass_accept), below every route type refused.
 */
void tp_accel__pass_read(tp_accel *a, tp_search_read what, int value, int result)
{
    tp_pass_memory *pm = &a->pass;
    (void)result;
    if (what == TP_READ_CROSS_NIC)
        pm->reads |= TP_READ_CROSS;
    else if (value - 1 < pm->ti_hi)
        pm->ti_hi = value - 1;
}

/* The bandwidths a pass starts from: every link the search reads and every NET. */
static uint64_t state_hash(const tp_accel *a)
{
    const tp_search_ctx *s = a->s;
    uint64_t h = 0x6a09e667f3bcc908ULL;
    for (int i = 0; i < a->milli.n_links; i++)
        h = tp_accel__mix(h, tp_float_bits(*a->milli.link_bw[i]));
    for (int n = 0; n < s->n_nets; n++)
        h = tp_accel__mix(h, tp_float_bits(s->sys->nodes[TP_NODE_NET].nodes[n].net.bw));
    return h;
}

/* The context of a pass of g at speeds bw_intra/bw_inter from the start state. */
static tp_pass_context context_of(const tp_pass_memory *pm, const tp_graph *g, float bw_intra,
                                  float bw_inter)
{
    return (tp_pass_context){
        .state = pm->state,
        .speeds = (uint64_t)tp_float_bits(bw_intra) << 32 | tp_float_bits(bw_inter),
        .channels = (uint64_t)(uint32_t)g->min_channels << 32 | (uint32_t)g->max_channels,
        .rest = (uint64_t)(uint32_t)g->n_hops << 32 | (uint32_t)(g->pattern & 0xffff) << 16 |
                (uint32_t)(g->coll_net & 0xffff)};
}

static int same_context(const tp_pass_context *x, const tp_pass_context *y)
{
    return ((x->state ^ y->state) | (x->speeds ^ y->speeds) | (x->channels ^ y->channels) |
            (x->rest ^ y->rest)) == 0;
}

/* A context's hash and check word, for the index. */
static void context_hash(const tp_pass_context *c, uint64_t *key, uint64_t *check)
{
    *key = tp_accel__mix(tp_accel__mix(c->state, c->speeds),
                         c->channels ^ c->rest * 0x9e3779b97f4a7c15ULL);
    *check = tp_accel__mix(*key ^ 0x3c6ef372fe94f82bULL, c->rest ^ c->channels);
}

/* A new context's room: its steps all unknown. -1 when memory is short (nothing recorded). */
static int add_context(tp_pass_memory *pm, const tp_pass_context *c)
{
    if (pm->n_contexts == pm->cap) {
        size_t cap = pm->cap ? 2 * pm->cap : 16;
        tp_pass_context *contexts = realloc(pm->contexts, cap * sizeof(*contexts));
        if (contexts)
            pm->contexts = contexts;
        int *steps = contexts ? realloc(pm->steps, cap * (size_t)pm->stride * sizeof(int)) : NULL;
        if (!steps)
            return -1;
        pm->steps = steps;
        pm->cap = cap;
    }
    size_t i = pm->n_contexts++;
    pm->contexts[i] = *c;
    memset(pm->steps + i * (size_t)pm->stride, 0xff, (size_t)pm->stride * sizeof(int));
    return (int)i;
}

/*
 * The index of context c (made when `make`), -1 when there is none; `last`
 * the one found last. Out of line: most look-ups find the last one.
 */
__attribute__((noinline)) static int find_context(tp_pass_memory *pm, const tp_pass_context *c,
                                                  int make, int *last)
{
    uint64_t key, check;
    context_hash(c, &key, &check);
    const tp_memo_entry *e = tp_accel__table_find(&pm->index, key, check);
    int i = e && same_context(&pm->contexts[e->steps], c) ? e->steps : -1;
    if (i < 0 && make && !e && (i = add_context(pm, c)) >= 0)
        tp_accel__table_store(&pm->index, key, check, i, 1);
    if (i >= 0)
        *last = i;
    return i;
}

/* The slot of the context found last at these speeds. */
static inline int *last_slot(tp_pass_memory *pm, uint64_t speeds)
{
    return &pm->last[(speeds * 0x9e3779b97f4a7c15ULL) >> (64 - TP_PASS_LAST_BITS)];
}

/*
 * The steps of context c (made when `make`), NULL when there is none. A
 * pass and the shadows below it each look up a context of their own speeds,
 * mostly the one found last at those speeds: checked first.
 */
static inline int *context_steps(tp_pass_memory *pm, const tp_pass_context *c, int make)
{
    int *last = last_slot(pm, c->speeds), i = *last;
    if (i < 0 || !same_context(&pm->contexts[i], c))
        i = find_context(pm, c, make, last);
    return i < 0 ? NULL : pm->steps + (size_t)i * (size_t)pm->stride;
}

/* The slot of the pass of g with typeIntra ti in its context's steps; -1 when none. */
static int pass_slot(const tp_pass_memory *pm, const tp_graph *g, int ti)
{
    return tp_known_passes__slot(pm->ti_rank, pm->te_rank, pm->n_te_ranks, g, ti);
}

/* The steps the pass of g at speeds bw_intra/bw_inter left; -1: unknown. */
static inline int known_steps(tp_pass_memory *pm, const tp_graph *g, float bw_intra, float bw_inter)
{
    int slot = pass_slot(pm, g, g->type_intra);
    if (slot < 0)
        return -1;
    tp_pass_context c = context_of(pm, g, bw_intra, bw_inter);
    const int *steps = context_steps(pm, &c, 0);
    return steps ? steps[slot] : -1;
}

/* NVLS and CollNet compare graphs by channel count first: not transitive, so not recorded. */
static int recordable(const tp_graph *g)
{
    return !tp_search__head_pattern(g->pattern);
}

/* The start state hashed, when a float pass may have changed it. */
static void fresh_state(tp_accel *a)
{
    tp_pass_memory *pm = &a->pass;
    /* Milli passes give every reservation back: the start state only changes after floats. */
    if (!pm->state_ok) {
        pm->state = state_hash(a);
        pm->state_ok = 1;
    }
}

/* find_steps when g's context is not the one found last at its speeds, or the state is to be
 * hashed again. */
__attribute__((noinline)) static const int *find_slow(tp_accel *a, const tp_graph *g)
{
    fresh_state(a);
    tp_pass_context c = context_of(&a->pass, g, g->bw_intra, g->bw_inter);
    return context_steps(&a->pass, &c, 0);
}

/* The steps of the context of the pass of g, NULL when there is none. Most first passes come
 * from the context found last at their speeds: that one is tried without a call, so the look-up
 * needs no frame. */
static inline const int *find_steps(tp_accel *a, const tp_graph *g)
{
    tp_pass_memory *pm = &a->pass;
    tp_pass_context c = context_of(pm, g, g->bw_intra, g->bw_inter);
    int i = *last_slot(pm, c.speeds);
    if (!pm->state_ok || i < 0 || !same_context(&pm->contexts[i], &c))
        return find_slow(a, g);
    return pm->steps + (size_t)i * (size_t)pm->stride;
}

int tp_accel__pass_find(tp_accel *a, const tp_graph *g, int *time, tp_known_passes *alike)
{
    tp_pass_memory *pm = &a->pass;
    pm->armed = pm->usable && recordable(g);
    if (!pm->armed)
        return 0;
    const int *steps = find_steps(a, g);
    int slot = steps ? pass_slot(pm, g, g->type_intra) : -1;
    if (slot < 0 || steps[slot] < 0)
        return 0;
    *time = steps[slot];
    if (alike)
        /* Its context's passes, by pass_slot's index (tp_known_passes__steps's too). */
        *alike = (tp_known_passes){.steps = steps,
                                   .intra_rank = pm->ti_rank,
                                   .inter_rank = pm->te_rank,
                                   .n_inter_ranks = pm->n_te_ranks,
                                   .pattern = g->pattern,
                                   .bw_intra = g->bw_intra,
                                   .bw_inter = g->bw_inter};
    return 1;
}

/*
 * Record the pass g ran in its context's steps for every typeIntra in
 * ti_lo..ti_hi: with any of them, every route type check of the pass,
 * hence every decision, comes out the same.
 */
static void store_types(tp_pass_memory *pm, int *steps, const tp_graph *g, int time)
{
    /* The slots of the typeIntra values differ by their ranks only, which grow with the types:
     * those of ti_lo..ti_hi are one run of ranks. */
    int first = pass_slot(pm, g, 0), per_rank = pm->n_te_ranks * 2 * TP_KNOWN_CROSS_VALUES;
    int lo = pm->ti_lo > 0 ? pm->ti_lo : 0, hi = pm->ti_hi < TP_PATH_DIS ? pm->ti_hi : TP_PATH_DIS;
    if (first < 0 || lo > hi)
        return;
    for (int r = pm->ti_rank[lo]; r <= pm->ti_rank[hi]; r++)
        steps[first + (r - pm->ti_rank[0]) * per_rank] = time;
}

/*
 * Record the pass (at its speeds, or at bw when at_bw) for the sameChannels
 * and crossNic values it never read too (reads): with them it walks the
 * same steps, under its own budget (which may differ). A pass that ended
 * with budget left walked all its steps: another budget stops it after as
 * many, or all of them. A pass that spent its budget tells only about
 * budgets no larger. All of them share the pass's context.
 */
static void store_settings(tp_pass_memory *pm, const tp_graph *g, float bw, int at_bw, int time)
{
    tp_pass_context c =
        at_bw ? context_of(pm, g, bw, bw) : context_of(pm, g, g->bw_intra, g->bw_inter);
    int *steps = context_steps(pm, &c, 1);
    if (!steps)
        return;
    int own = tp_search__step_budget(g), used = own - time;
    tp_graph alt;
    tp_graph__copy_settings(&alt, g);
    /* Before a channel completes, crossNic 2 (rule cross-nic-ring-alternate) differs from 0
     * and 1 only where the search notes a read (search_rec.c net_may_close). */
    for (int same = 0; same < 2; same++) {
        for (int cross = 0; cross < TP_KNOWN_CROSS_VALUES; cross++) {
            if ((same != g->same_channels && (pm->reads & TP_READ_SAME)) ||
                (cross != g->cross_nic && (pm->reads & TP_READ_CROSS)))
                continue;
            alt.same_channels = same;
            alt.cross_nic = cross;
            int budget = tp_search__step_budget(&alt);
            if (time > 0 || budget <= own)
                store_types(pm, steps, &alt, budget > used ? budget - used : 0);
        }
    }
}

void tp_accel__pass_store(tp_accel *a, const tp_graph *g, int time)
{
    if (a->pass.armed)
        store_settings(&a->pass, g, 0, 0, time);
}

int tp_accel__pass_known(tp_accel *a, const tp_graph *g, float bw)
{
    tp_pass_memory *pm = &a->pass;
    return pm->armed && known_steps(pm, g, bw, bw) >= 0;
}

void tp_accel__pass_store_at(tp_accel *a, const tp_graph *g, float bw, int time)
{
    if (a->pass.armed)
        store_settings(&a->pass, g, bw, 1, time);
}

/*
 * Passes cut without saving (search_bound.c) are remembered in their own
 * slot, as CUT_MARK(left), the budget they had left: a pass alike is cut
 * again as far (tp_accel__cut_known). A pass known whole is never marked.
 */
#define CUT_MARK(left) (-2 - (left))

int tp_accel__pass_cut_find(tp_accel *a, const tp_graph *g, int *left)
{
    tp_pass_memory *pm = &a->pass;
    pm->cut_slot = -1;
    int slot = pm->armed && !pm->verify ? pass_slot(pm, g, g->type_intra) : -1;
    if (slot < 0)
        return 0;
    fresh_state(a);
    pm->cut_slot = slot;
    pm->cut_context = context_of(pm, g, g->bw_intra, g->bw_inter);
    const int *steps = context_steps(pm, &pm->cut_context, 0);
    if (!steps || steps[slot] > CUT_MARK(0))
        return 0;
    *left = CUT_MARK(steps[slot]);
    return 1;
}

void tp_accel__pass_cut_store(tp_accel *a, int left)
{
    tp_pass_memory *pm = &a->pass;
    int *steps = pm->cut_slot >= 0 && left >= 0 ? context_steps(pm, &pm->cut_context, 1) : NULL;
    if (steps && steps[pm->cut_slot] == -1)
        steps[pm->cut_slot] = CUT_MARK(left);
    pm->cut_slot = -1;
}
