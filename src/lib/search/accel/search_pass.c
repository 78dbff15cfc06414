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
 *   - every other input is in the key: pattern, sameChannels, crossNic,
 *     speeds, channel bounds, hops and the link and NET bandwidths at the
 *     start (hashed), the budget following from pattern and sameChannels;
 *   - the best graph only gets better over the passes, and ncclTopoCompareGraphs
 *     is transitive in that sense: a graph that did not beat it before does
 *     not beat it now (see search_rec.c better_graph), so the pass still
 *     saves nothing and takes the same path.
 * Only first passes are recorded: the second pass changes the best graph
 * by duplicating channels before it starts.
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

/* The same from the table of path types made once (types out of range searched). */
static int effective_of(const signed char *table, const int *types, int count, int t)
{
    return t >= 0 && t < TP_PATH_TYPE_COUNT ? table[t] : effective(types, count, t);
}

static int effective_intra(const tp_pass_memory *pm, int t)
{
    return effective_of(pm->eff_intra, pm->intra_types, pm->n_intra_types, t);
}

static int effective_inter(const tp_pass_memory *pm, int t)
{
    return effective_of(pm->eff_inter, pm->inter_types, pm->n_inter_types, t);
}

void tp_accel__pass_init(tp_accel *a)
{
    const tp_search_ctx *s = a->s;
    tp_pass_memory *pm = &a->pass;
    pm->n_intra_types = pm->n_inter_types = 0;
    route_types(s, TP_NODE_GPU, TP_NODE_GPU, pm->intra_types, &pm->n_intra_types);
    route_types(s, TP_NODE_GPU, TP_NODE_NVS, pm->intra_types, &pm->n_intra_types);
    route_types(s, TP_NODE_NVS, TP_NODE_GPU, pm->intra_types, &pm->n_intra_types);
    route_types(s, TP_NODE_GPU, TP_NODE_NET, pm->inter_types, &pm->n_inter_types);
    route_types(s, TP_NODE_NET, TP_NODE_GPU, pm->inter_types, &pm->n_inter_types);
    int n_intra = pm->n_intra_types < TP_PASS_MAX_TYPES ? pm->n_intra_types : TP_PASS_MAX_TYPES;
    int n_inter = pm->n_inter_types < TP_PASS_MAX_TYPES ? pm->n_inter_types : TP_PASS_MAX_TYPES;
    for (int t = 0; t < TP_PATH_TYPE_COUNT; t++) {
        pm->eff_intra[t] = (signed char)effective(pm->intra_types, n_intra, t);
        pm->eff_inter[t] = (signed char)effective(pm->inter_types, n_inter, t);
    }
    tp_accel__table_reset(&pm->table);
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

static uint64_t float_key(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return bits;
}

/* The bandwidths a pass starts from: every link the search reads and every NET. */
static uint64_t state_hash(const tp_accel *a)
{
    const tp_search_ctx *s = a->s;
    uint64_t h = 0x6a09e667f3bcc908ULL;
    for (int i = 0; i < a->milli.n_links; i++)
        h = tp_accel__mix(h, float_key(*a->milli.link_bw[i]));
    for (int n = 0; n < s->n_nets; n++)
        h = tp_accel__mix(h, float_key(s->sys->nodes[TP_NODE_NET].nodes[n].net.bw));
    return h;
}

/* A pass as the memory knows it: settings of g, at speeds bw_intra/bw_inter, typeIntra ti. */
typedef struct pass_id {
    const tp_graph *g;
    float bw_intra, bw_inter;
    int ti; /* the effective typeIntra */
} pass_id;

/* A key and its check word. */
typedef struct memo_key {
    uint64_t key, check;
} memo_key;

/* The key of pass p run from the start state of the pass memory. */
static memo_key pass_key(const tp_pass_memory *pm, pass_id p)
{
    const tp_graph *g = p.g;
    int ti = p.ti, te = effective_inter(pm, g->type_inter);
    /* The small settings packed into one word, each in a field wide enough for its values. */
    uint64_t settings = (uint64_t)(g->pattern & 0xff) | (uint64_t)((ti + 1) & 0xff) << 8 |
                        (uint64_t)((te + 1) & 0xff) << 16 | (uint64_t)(g->same_channels & 1) << 24 |
                        (uint64_t)(g->cross_nic & 3) << 25 | (uint64_t)(g->coll_net & 1) << 27 |
                        (uint64_t)(g->min_channels & 0xfff) << 28 |
                        (uint64_t)(g->max_channels & 0xfff) << 40;
    /*
     * One mix of two words: the start state with the settings (one state
     * runs many settings: xor keeps them apart), and the speeds with the
     * hops (an odd multiple: distinct small counts stay apart).
     */
    uint64_t speeds = (float_key(p.bw_intra) << 32) | float_key(p.bw_inter);
    uint64_t k = tp_accel__mix(pm->state ^ settings,
                               speeds + (uint64_t)(uint32_t)g->n_hops * 0x9e3779b97f4a7c15ULL);
    return (memo_key){k, tp_accel__mix(k ^ 0x3c6ef372fe94f82bULL, settings)};
}

/* NVLS and CollNet compare graphs by channel count first: not transitive, so not recorded. */
static int recordable(const tp_graph *g)
{
    return !tp_search__head_pattern(g->pattern);
}

int tp_accel__pass_find(tp_accel *a, const tp_graph *g, int *time)
{
    tp_pass_memory *pm = &a->pass;
    pm->key = pm->check = 0;
    if (!recordable(g))
        return 0;
    if (pm->n_intra_types > TP_PASS_MAX_TYPES || pm->n_inter_types > TP_PASS_MAX_TYPES)
        return 0;
    /* Milli passes give every reservation back: the start state only changes after floats. */
    if (!pm->state_ok) {
        pm->state = state_hash(a);
        pm->state_ok = 1;
    }
    int ti = effective_intra(pm, g->type_intra);
    memo_key k = pass_key(pm, (pass_id){g, g->bw_intra, g->bw_inter, ti});
    pm->key = k.key;
    pm->check = k.check;
    const tp_memo_entry *e = tp_accel__table_find(&pm->table, pm->key, pm->check);
    if (!e)
        return 0;
    *time = e->steps;
    return 1;
}

/*
 * Record the pass g ran (at speeds bw_intra/bw_inter) for every effective
 * typeIntra in ti_lo..ti_hi: with any of them, every route type check of
 * the pass, hence every decision, comes out the same.
 */
static void store_types(tp_pass_memory *pm, pass_id p, int time)
{
    int last = INT32_MIN;
    for (int t = pm->ti_lo; t <= pm->ti_hi && t <= TP_PATH_DIS; t++) {
        p.ti = effective_intra(pm, t);
        if (p.ti == last)
            continue;
        last = p.ti;
        memo_key k = pass_key(pm, p);
        tp_accel__table_store(&pm->table, k.key, k.check, time, 1);
    }
}

/*
 * Record the pass for the sameChannels and crossNic values it never read
 * too (reads): with them it walks the same steps, under its own budget
 * (which may differ). A pass that ended with budget left walked all its
 * steps: another budget stops it after as many, or all of them. A pass
 * that spent its budget tells only about budgets no larger.
 */
static void store_settings(tp_pass_memory *pm, const tp_graph *g, float bw_intra, float bw_inter,
                           int time)
{
    int own = tp_search__step_budget(g), used = own - time;
    for (int same = 0; same < 2; same++) {
        for (int cross = 0; cross < 2; cross++) {
            if ((same != g->same_channels && (pm->reads & TP_READ_SAME)) ||
                (cross != g->cross_nic && (pm->reads & TP_READ_CROSS)))
                continue;
            tp_graph alt;
            tp_graph__copy_settings(&alt, g);
            alt.same_channels = same;
            alt.cross_nic = cross;
            int budget = tp_search__step_budget(&alt);
            if (time > 0 || budget <= own)
                store_types(pm, (pass_id){&alt, bw_intra, bw_inter, 0},
                            budget > used ? budget - used : 0);
        }
    }
}

void tp_accel__pass_store(tp_accel *a, const tp_graph *g, int time)
{
    tp_pass_memory *pm = &a->pass;
    if (pm->key == 0 && pm->check == 0)
        return; /* not a recordable pass */
    if (pm->n_intra_types > TP_PASS_MAX_TYPES || pm->n_inter_types > TP_PASS_MAX_TYPES)
        return;
    store_settings(pm, g, g->bw_intra, g->bw_inter, time);
}

int tp_accel__pass_known(tp_accel *a, const tp_graph *g, float bw)
{
    tp_pass_memory *pm = &a->pass;
    if (pm->key == 0 && pm->check == 0)
        return 0;
    int ti = effective_intra(pm, g->type_intra);
    memo_key k = pass_key(pm, (pass_id){g, bw, bw, ti});
    return tp_accel__table_find(&pm->table, k.key, k.check) != NULL;
}

void tp_accel__pass_store_at(tp_accel *a, const tp_graph *g, float bw, int time)
{
    tp_pass_memory *pm = &a->pass;
    if (pm->key == 0 && pm->check == 0)
        return;
    store_settings(pm, g, bw, bw, time);
}
