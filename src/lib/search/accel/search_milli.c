/*
 * Milli mode: the search's link bandwidths as integer thousandths of GB/s.
 *
 * NCCL 2.22.3 reserves bandwidth with SUB_ROUND: round((a - b) * 1000) / 1000
 * in float. When a and b are both "normalized" floats, i.e. the float nearest
 * to m/1000 and k/1000 for integers 0 <= m, k <= 2^20, that is exactly the
 * float nearest to (m - k)/1000:
 *   - a and b are off their decimal values by at most 2^-14 each (ulp/2 below
 *     2^11), a - b by one more rounding of 2^-14: 3 * 2^-14 in all, so
 *     (a - b) * 1000 is within 0.19 of m - k, and its own rounding adds at
 *     most 2^-3 (it is below 2^20): 0.31 < 0.5, and round() gives m - k;
 *   - (m - k) is exact in float, and / 1000 is correctly rounded.
 * Releasing adds back (a + b: the same bound, since the sum never exceeds the
 * value before the reservation), and below 2^11 the floats of two different
 * thousandths differ (spacing <= 2^-12 < 0.001), so a < b iff m < k.
 * So a pass whose link values and amounts are all normalized can run on the
 * integers m, k with +, - and <, with NCCL's exact results; every reservation
 * is given back by the end of the pass, so the floats never need updating.
 * Passes that do not qualify (NVLS, CollNet, odd amounts or link values such
 * as 18 x 20.6 computed in float) run on the floats (the core's arithmetic,
 * with the hashes of the sub-search memory kept in step).
 * This is the accelerators' link arithmetic: the walk, gpu_pci_bw and
 * net_bw hooks of search_accel.h.
 */
#include "search/accel/accel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The thousandths of v when v is the float nearest to them, else -1. */
static int32_t milli_of(float v)
{
    if (!(v >= 0.0f && v <= TP_MILLI_MAX / 1000.0f))
        return -1;
    /* v * 1000 is exact in double (24 + 10 bits): floor(x + 0.5) is llround here, inline. */
    int32_t m = (int32_t)floor((double)v * 1000.0 + 0.5);
    if (m > TP_MILLI_MAX || (float)m / 1000.0f != v)
        return -1;
    return m;
}

/* From link bandwidth addresses to link table indices (tp_accel__link_slot). */
typedef struct link_map {
    const float **key;
    int *index;
    size_t mask;
} link_map;

/* The table index of bw, added to the table on first sight. */
static int link_index(tp_milli *mi, link_map *map, float *bw)
{
    size_t i = tp_accel__link_slot(map->key, map->mask, bw);
    if (!map->key[i]) {
        map->key[i] = bw;
        map->index[i] = mi->n_links;
        mi->link_bw[mi->n_links++] = bw;
    }
    return map->index[i];
}

/* Every compiled route, with its (from, to) node types. */
#define FOR_EACH_ROUTE(s, t1, t2, cp, r)                                                           \
    for (int t1 = 0; t1 < TP_NODE_TYPE_COUNT; t1++)                                                \
        for (int t2 = 0; t2 < TP_NODE_TYPE_COUNT; t2++)                                            \
            for (int r = 0;                                                                        \
                 (s)->routes[t1][t2] && r < (s)->sys->nodes[t1].count * (s)->sys->nodes[t2].count; \
                 r++)                                                                              \
                for (const tp_cpath *cp = &(s)->routes[t1][t2][r]; cp; cp = NULL)

/* Number every bandwidth the search reads: hop links, their reverses, the GPUs' PCI links. */
static void number_links(tp_accel *a, link_map *map)
{
    const tp_search_ctx *s = a->s;
    tp_milli *mi = &a->milli;
    FOR_EACH_ROUTE(s, t1, t2, cp, r)
    {
        for (int k = 0; k < cp->count; k++) {
            const tp_hop *h = &cp->hops[k];
            tp_mhop *mh = &mi->hops[h - s->hop_pool];
            unsigned char sel = (unsigned char)(h->pci && cp->intel);
            /* Its pointers and hash multipliers are set by key_links. */
            *mh = (tp_mhop){
                .li = link_index(mi, map, h->bw),
                .lri = h->rev ? link_index(mi, map, h->rev) : 0,
                .sel = sel,
                .rev_div8 = h->rev_div8,
                .rev_full = h->rev_full,
                .rev_i = (unsigned char)(h->rev_div8   ? 2 + sel
                                         : h->rev_full ? sel
                                                       : 4),
            };
            /* A paying reverse without its link is an error only when walked: floats then. */
            if ((h->rev_div8 || h->rev_full) && !h->rev)
                mi->capable = 0;
            /* The amounts the hop takes, by the speed its route is walked at. */
            unsigned slots = (1u << sel) | (mh->rev_i < 4 ? 1u << mh->rev_i : 0);
            if (cp->intra)
                mi->slots_intra |= slots;
            else
                mi->slots_inter |= slots;
            if (t1 == TP_NODE_GPU && t2 == TP_NODE_NET)
                mi->slots_out |= slots;
        }
    }
    for (int g = 0; g < s->n_gpus; g++) {
        if (!s->pci_up[g])
            continue;
        mi->pci_up_m[g] = mi->link_m + link_index(mi, map, (float *)s->pci_up[g]);
        mi->pci_down_m[g] = mi->link_m + link_index(mi, map, (float *)s->pci_down[g]);
    }
}

/*
 * Milli mode checks a whole route before taking it, which equals NCCL's
 * hop-by-hop walk when no link is touched twice by one route (routes are
 * simple paths: a link and its reverse join the same two nodes).
 */
static int routes_simple(const tp_accel *a)
{
    const tp_search_ctx *s = a->s;
    FOR_EACH_ROUTE(s, t1, t2, cp, r)
    {
        for (int i = 0; i < cp->count; i++)
            for (int j = 0; j <= i; j++) {
                const tp_mhop *x = tp_accel__mhop(a, &cp->hops[i]);
                const tp_mhop *y = tp_accel__mhop(a, &cp->hops[j]);
                int x_rev = x->rev_div8 || x->rev_full, y_rev = y->rev_div8 || y->rev_full;
                if ((j < i && x->li == y->li) || (x_rev && x->lri == y->li) ||
                    (y_rev && y->lri == x->li) || (j < i && x_rev && y_rev && x->lri == y->lri))
                    return 0;
            }
    }
    return 1;
}

/*
 * The hash code of one reservation of kind `kind` (amount v[] index) of the
 * pass amount `index`: distinct per amount and kind, since pass 2 reserves
 * different intra and inter bws.
 */
static void reservation_code(int index, int kind, uint64_t *c1, uint64_t *c2)
{
    *c1 = tp_accel__mix(0x51ed270b27c3a5e1ULL, (uint64_t)(4 * index + kind));
    *c2 = tp_accel__mix(0x2f8a9c4b61d0e357ULL, (uint64_t)(4 * index + kind));
}

/* The hash codes of every (pass amount, kind), computed once. */
typedef struct reservation_codes {
    uint64_t c1[3][4], c2[3][4];
} reservation_codes;

/* A route's hash change for one reservation of each pass amount: the sum over its links. */
static void hash_route(const tp_accel *a, const tp_cpath *cp, const reservation_codes *rc)
{
    tp_mroute *mr = &a->milli.routes[cp->index];
    for (int index = 0; index < 3; index++) {
        uint64_t h1 = 0, h2 = 0;
        for (int step = 0; step < cp->count; step++) {
            const tp_hop *hop = &cp->hops[step];
            const tp_mhop *h = tp_accel__mhop(a, hop);
            h1 += h->k1 * rc->c1[index][h->sel];
            h2 += h->k2 * rc->c2[index][h->sel];
            if (hop->rev && (h->rev_div8 || h->rev_full)) {
                int kind = h->rev_div8 ? 2 + h->sel : h->sel;
                h1 += h->rk1 * rc->c1[index][kind];
                h2 += h->rk2 * rc->c2[index][kind];
            }
        }
        mr->hash1[index] = h1;
        mr->hash2[index] = h2;
    }
    int sel = 0, rev = 0;
    for (int step = 0; step < cp->count; step++) {
        const tp_mhop *h = tp_accel__mhop(a, &cp->hops[step]);
        sel |= h->sel;
        rev |= h->rev_div8 || h->rev_full;
    }
    mr->kind = rev ? TP_MROUTE_ANY : sel ? TP_MROUTE_FWD : TP_MROUTE_PLAIN;
}

static void hash_routes(tp_accel *a)
{
    reservation_codes rc;
    for (int index = 0; index < 3; index++)
        for (int kind = 0; kind < 4; kind++)
            reservation_code(index, kind, &rc.c1[index][kind], &rc.c2[index][kind]);
    const tp_search_ctx *s = a->s;
    FOR_EACH_ROUTE(s, t1, t2, cp, r)
    {
        hash_route(a, cp, &rc);
    }
}

/* The hash multipliers of every link and NET (keys: room for two per link). */
static void key_links(tp_accel *a, uint64_t *keys)
{
    tp_milli *mi = &a->milli;
    const tp_search_ctx *s = a->s;
    for (int l = 0; l < mi->n_links; l++)
        tp_accel__bw_keys(mi->link_bw[l], &keys[2 * l], &keys[2 * l + 1]);
    for (size_t i = 0; i < s->n_hops; i++) {
        const tp_hop *hop = &s->hop_pool[i];
        tp_mhop *h = &mi->hops[i];
        h->m = mi->link_m + h->li;
        /* A reverse that does not pay takes 0 (rev_amount) from a zero of its own. */
        h->mrev = hop->rev && (hop->rev_div8 || hop->rev_full) ? mi->link_m + h->lri : &mi->no_rev;
        h->k1 = keys[2 * h->li];
        h->k2 = keys[2 * h->li + 1];
        h->rk1 = hop->rev ? keys[2 * h->lri] : 0;
        h->rk2 = hop->rev ? keys[2 * h->lri + 1] : 0;
    }
    for (int n = 0; n < s->n_nets; n++)
        tp_accel__bw_keys(&s->sys->nodes[TP_NODE_NET].nodes[n].net.bw, &mi->net_k1[n],
                          &mi->net_k2[n]);
}

/*
 * The link table's arrays in one block that starts with link_bw (tp_accel__milli_free frees
 * that): a table is made per search, and six allocations cost more than a small system's
 * arrays. The routes and the PCI link views start zeroed; the rest is set before it is read.
 */
static tp_status alloc_tables(tp_milli *mi, const tp_search_ctx *s, size_t cap, tp_error *err)
{
    size_t n_gpus = (size_t)s->n_gpus, n_nets = (size_t)s->n_nets, size = 0;
    size_t link_bw = tp_search__place(&size, cap * sizeof(*mi->link_bw));
    size_t link_m = tp_search__place(&size, cap * sizeof(*mi->link_m));
    size_t hops = tp_search__place(&size, (s->n_hops ? s->n_hops : 1) * sizeof(*mi->hops));
    size_t zeroed = size;
    size_t routes =
        tp_search__place(&size, (size_t)(s->n_routes ? s->n_routes : 1) * sizeof(*mi->routes));
    size_t pci = tp_search__place(&size, (2 * n_gpus + 1) * sizeof(*mi->pci_up_m));
    size_t zeroed_end = size;
    size_t net_k = tp_search__place(&size, (2 * n_nets + 1) * sizeof(*mi->net_k1));
    char *block = malloc(size);
    if (!block)
        return tp_fail_nomem(err);
    memset(block + zeroed, 0, zeroed_end - zeroed);
    mi->link_bw = (float **)(block + link_bw);
    mi->link_m = (int32_t *)(block + link_m);
    mi->hops = (tp_mhop *)(block + hops); /* each set by its route */
    mi->routes = (tp_mroute *)(block + routes);
    mi->pci_up_m = (const int32_t **)(block + pci);
    mi->pci_down_m = mi->pci_up_m + n_gpus;
    mi->net_k1 = (uint64_t *)(block + net_k);
    mi->net_k2 = mi->net_k1 + n_nets;
    return TP_OK;
}

tp_status tp_accel__milli_init(tp_accel *a, tp_error *err)
{
    tp_milli *mi = &a->milli;
    const tp_search_ctx *s = a->s;
    /* Distinct links: at most every hop's, the reverses that pay, two PCI links per GPU. */
    size_t n_rev = 0;
    for (size_t i = 0; i < s->n_hops; i++)
        n_rev += s->hop_pool[i].rev != NULL;
    size_t cap = s->n_hops + n_rev + 2 * (size_t)s->n_gpus + 1, size = 1;
    while (size < 2 * cap)
        size *= 2;
    /* Scratch in one block: the map's keys (zeroed) and indices, two hash keys per link. */
    size_t scratch_size = 0, key_at = tp_search__place(&scratch_size, size * sizeof(float *));
    size_t index_at = tp_search__place(&scratch_size, size * sizeof(int));
    size_t keys_at = tp_search__place(&scratch_size, 2 * cap * sizeof(uint64_t));
    char *scratch = malloc(scratch_size);
    if (!scratch)
        return tp_fail_nomem(err);
    link_map map = {(const float **)(scratch + key_at), (int *)(scratch + index_at), size - 1};
    memset(map.key, 0, size * sizeof(*map.key));
    tp_status st = alloc_tables(mi, s, cap, err);
    if (st == TP_OK) {
        mi->capable = 1;
        number_links(a, &map);
    }
    /* Without accelerators (mirrored domains compare tables) the link numbers are all it takes. */
    if (st == TP_OK && !a->use) {
        mi->capable = 0;
    } else if (st == TP_OK) {
        key_links(a, (uint64_t *)(scratch + keys_at));
        mi->simple = routes_simple(a);
        if (!mi->simple)
            mi->capable = 0;
        hash_routes(a);
    }
    free(scratch);
    return st;
}

void tp_accel__milli_free(tp_accel *a)
{
    tp_milli *mi = &a->milli;
    free(mi->link_bw); /* the block of every array below */
    mi->pci_up_m = mi->pci_down_m = NULL;
    mi->net_k1 = mi->net_k2 = NULL;
    mi->link_bw = NULL;
    mi->link_m = NULL;
    mi->hops = NULL;
    mi->routes = NULL;
    mi->n_links = 0;
}

/*
 * The amounts followPath takes for bw, as NCCL 2.22.3 computes them in
 * float; only those of `slots` (bits of v[]) need to be normalized.
 */
static int make_amount(tp_amount *am, float bw, unsigned slots)
{
    float pci = tp_search__intel_p2p_overhead(bw);
    float v[4] = {bw, pci, bw / 8, pci / 8};
    am->bw = bw;
    am->v[4] = 0;
    for (int i = 0; i < 4; i++) {
        am->v[i] = milli_of(v[i]);
        if (((slots >> i) & 1) && am->v[i] < 0)
            return 0;
    }
    return 1;
}

/*
 * make_amount through a small direct-mapped cache: a search meets few
 * speeds, each many times (cached_ok: 0 empty, 1 not exact, 2 exact).
 */
static int cached_amount(tp_milli *mi, tp_amount *am, float bw, unsigned slots)
{
    uint32_t bits = tp_float_bits(bw);
    size_t slot = (size_t)(((bits ^ slots) * 0x9e3779b1u) >> 26) % TP_AMOUNT_CACHE;
    if (mi->cached_ok[slot] && mi->cached[slot].bw == bw && mi->cached_slots[slot] == slots) {
        *am = mi->cached[slot];
        return mi->cached_ok[slot] == 2;
    }
    int ok = make_amount(am, bw, slots);
    mi->cached[slot] = *am;
    mi->cached_slots[slot] = (unsigned char)slots;
    mi->cached_ok[slot] = (unsigned char)(ok ? 2 : 1);
    return ok;
}

/*
 * The amounts (v[] bits) a walk at bw may take in a pass at these speeds:
 * GPU/NVS routes go at bw_intra, NET routes at bw_inter, and a Balanced
 * Tree's GPU to NET routes at bw_inter / 2. A walk finds its amount by bw
 * (tp_accel__milli_amount), so a speed serves every kind of route at it.
 */
static unsigned walked_slots(const tp_milli *mi, float bw, int pattern, float bw_intra,
                             float bw_inter)
{
    unsigned slots = 1; /* the plain amount */
    if (bw == bw_intra)
        slots |= mi->slots_intra;
    if (bw == bw_inter)
        slots |= mi->slots_inter;
    if (pattern == TP_PATTERN_BALANCED_TREE && bw == bw_inter / 2)
        slots |= mi->slots_out;
    return slots;
}

/* The amount of a pass at speed bw in *am: 1 when exact where walks take it. */
static int pass_amount(tp_milli *mi, tp_amount *am, float bw, int pattern, float bw_intra,
                       float bw_inter)
{
    return cached_amount(mi, am, bw, walked_slots(mi, bw, pattern, bw_intra, bw_inter));
}

int tp_accel__milli_amounts_at(tp_accel *a, int pattern, float bw_intra, float bw_inter,
                               tp_amount *out)
{
    tp_milli *mi = &a->milli;
    if (tp_search__head_pattern(pattern))
        return 0; /* they reserve other multiples */
    if (!pass_amount(mi, &out[0], bw_intra, pattern, bw_intra, bw_inter))
        return 0;
    if (bw_inter == bw_intra)
        out[1] = out[0]; /* most passes and every shadow */
    else if (!pass_amount(mi, &out[1], bw_inter, pattern, bw_intra, bw_inter))
        return 0;
    /* Balanced trees: the first two GPUs each send half of the NET traffic. */
    if (pattern != TP_PATTERN_BALANCED_TREE)
        return 2;
    return pass_amount(mi, &out[2], bw_inter / 2, pattern, bw_intra, bw_inter) ? 3 : 0;
}

int tp_accel__milli_amounts(tp_accel *a, const tp_graph *g, tp_amount *out)
{
    return tp_accel__milli_amounts_at(a, g->pattern, g->bw_intra, g->bw_inter, out);
}

/* Load the link values; after a milli pass they are still right (all given back exactly). */
static int load_links(tp_milli *mi)
{
    if (mi->link_m_ok)
        return 1;
    for (int i = 0; i < mi->n_links; i++)
        if ((mi->link_m[i] = milli_of(*mi->link_bw[i])) < 0)
            return 0;
    mi->link_m_ok = 1;
    return 1;
}

/* The pass amounts of g in mi->amounts: those of the previous pass when its speeds were g's. */
static int pass_amounts(tp_accel *a, const tp_graph *g)
{
    tp_milli *mi = &a->milli;
    if (!mi->amounts_of.valid || mi->amounts_of.pattern != g->pattern ||
        mi->amounts_of.bw_intra != g->bw_intra || mi->amounts_of.bw_inter != g->bw_inter) {
        mi->n_amounts = tp_accel__milli_amounts(a, g, mi->amounts);
        mi->amounts_of = (tp_amounts_of){
            .valid = 1, .pattern = g->pattern, .bw_intra = g->bw_intra, .bw_inter = g->bw_inter};
    }
    return mi->n_amounts;
}

int tp_accel__milli_choose(tp_accel *a, const tp_graph *g)
{
    tp_milli *mi = &a->milli;
    mi->on = 0;
    a->dead.next_dead = 0; /* set when the pass runs (tp_accel__run_pass) */
    if (mi->capable && pass_amounts(a, g) && load_links(mi)) {
        mi->on = 1;
        return 1;
    }
    return 0; /* a float pass: link_m_ok is cleared if it runs (search_accel.c arm_pass) */
}

static inline int32_t rev_amount(const tp_mhop *h, const tp_amount *am)
{
    return am->v[h->rev_i];
}

/*
 * Milli mode hashes the reservations rather than the values: a route adds
 * its precomputed hash change for the amount taken (subtracts it when given
 * back). Equal hashes then mean equal counts of each amount on every link,
 * hence equal values, also in the shadow passes.
 */
static inline void hash_reservation(tp_accel *a, const tp_mroute *mr, int ai, int sign)
{
    a->memo.bw_hash1 += (uint64_t)sign * mr->hash1[ai];
    a->memo.bw_hash2 += (uint64_t)sign * mr->hash2[ai];
}

/* The first hop of path without room for am (milli mode, nothing taken), -1 if none. */
static inline int short_hop_milli(const tp_mhop *hops, int count, const tp_amount *am, int kind)
{
    if (kind == TP_MROUTE_PLAIN) {
        /* Most routes: one amount, forward only. */
        const int32_t v = am->v[0];
        for (int step = 0; step < count; step++)
            if (*hops[step].m < v)
                return step;
        return -1;
    }
    if (kind == TP_MROUTE_FWD) {
        for (int step = 0; step < count; step++)
            if (*hops[step].m < am->v[hops[step].sel])
                return step;
        return -1;
    }
    for (int step = 0; step < count; step++) {
        const tp_mhop *h = &hops[step];
        if (*h->m < am->v[h->sel] || *h->mrev < rev_amount(h, am))
            return step;
    }
    return -1;
}

/* Take (sign 1) or give back (sign -1) am on every hop of path (milli mode). */
static inline void move_milli(const tp_mhop *hops, int count, const tp_amount *am, int kind,
                              int32_t sign)
{
    if (kind == TP_MROUTE_PLAIN) {
        const int32_t v = sign * am->v[0];
        for (int step = 0; step < count; step++)
            *hops[step].m -= v;
        return;
    }
    if (kind == TP_MROUTE_FWD) {
        for (int step = 0; step < count; step++)
            *hops[step].m -= sign * am->v[hops[step].sel];
        return;
    }
    for (int step = 0; step < count; step++) {
        const tp_mhop *h = &hops[step];
        *h->m -= sign * am->v[h->sel];
        *h->mrev -= sign * rev_amount(h, am);
    }
}

/* Whether the reverse link of hop pays too (the hashes count it then). */
static int rev_paid(const tp_hop *hop)
{
    return hop->rev && (hop->rev_div8 || hop->rev_full);
}

/*
 * The linear hash of the values of path's links (each link once), weighted
 * by their keys: the difference after and before a float walk is the hash
 * change of the sub-search memory.
 */
static void path_hash(const tp_accel *a, const tp_cpath *path, uint64_t *h1, uint64_t *h2)
{
    *h1 = *h2 = 0;
    const tp_mhop *mh = tp_accel__mhops(a, path);
    if (a->milli.simple) {
        /* Every link of the route once: its hop's, and the reverse when it pays. */
        uint64_t x1 = 0, x2 = 0;
        for (int i = 0; i < path->count; i++) {
            const tp_hop *hop = &path->hops[i];
            uint64_t v = tp_float_bits(*hop->bw);
            x1 += mh[i].k1 * v;
            x2 += mh[i].k2 * v;
            if (rev_paid(hop)) {
                v = tp_float_bits(*hop->rev);
                x1 += mh[i].rk1 * v;
                x2 += mh[i].rk2 * v;
            }
        }
        *h1 = x1;
        *h2 = x2;
        return;
    }
    for (int i = 0; i < path->count; i++) {
        const tp_hop *hop = &path->hops[i];
        const tp_mhop *h = &mh[i];
        int seen_bw = 0, seen_rev = !hop->rev || !(hop->rev_div8 || hop->rev_full);
        /* A route that takes a link twice counts it once. */
        for (int j = 0; j < i; j++) {
            const tp_hop *o = &path->hops[j];
            int o_rev = o->rev && (o->rev_div8 || o->rev_full);
            seen_bw |= o->bw == hop->bw || (o_rev && o->rev == hop->bw);
            seen_rev |= o->bw == hop->rev || (o_rev && o->rev == hop->rev);
        }
        seen_rev |= hop->rev == hop->bw;
        if (!seen_bw) {
            *h1 += h->k1 * tp_float_bits(*hop->bw);
            *h2 += h->k2 * tp_float_bits(*hop->bw);
        }
        if (!seen_rev) {
            *h1 += h->rk1 * tp_float_bits(*hop->rev);
            *h2 += h->rk2 * tp_float_bits(*hop->rev);
        }
    }
}

/* The hops of a route whose values walk_simple keeps before a float walk. */
#define TP_WALK_KEPT 16

/*
 * A float walk on a route that takes each link once (milli.simple, at most
 * TP_WALK_KEPT hops): the hash is linear, so its change is each moved
 * value's change by its key; the values are kept before the walk and only
 * those that moved are weighed after it (the same sum as path_hash's
 * difference, modulo 2^64).
 */
static int walk_simple(tp_accel *a, const tp_cpath *path, float bw, float mult)
{
    uint32_t before[TP_WALK_KEPT][2];
    const tp_hop *hops = path->hops;
    for (int i = 0; i < path->count; i++) {
        before[i][0] = tp_float_bits(*hops[i].bw);
        before[i][1] = rev_paid(&hops[i]) ? tp_float_bits(*hops[i].rev) : 0;
    }
    int done = 0;
    tp_status st = tp_search__walk_floats(a->s, path, bw, mult, &done);
    const tp_mhop *mh = tp_accel__mhops(a, path);
    uint64_t d1 = 0, d2 = 0;
    for (int i = 0; i < path->count; i++) {
        uint64_t v = tp_float_bits(*hops[i].bw);
        if (v != before[i][0]) {
            d1 += mh[i].k1 * (v - before[i][0]);
            d2 += mh[i].k2 * (v - before[i][0]);
        }
        if (rev_paid(&hops[i]) && (v = tp_float_bits(*hops[i].rev)) != before[i][1]) {
            d1 += mh[i].rk1 * (v - before[i][1]);
            d2 += mh[i].rk2 * (v - before[i][1]);
        }
    }
    a->memo.bw_hash1 += d1;
    a->memo.bw_hash2 += d2;
    return st == TP_OK ? done : -1;
}

/* A float walk (the core's), keeping the sub-search memory's hashes in step when it is on. */
__attribute__((noinline)) static int walk_floats(tp_accel *a, const tp_cpath *path, float bw,
                                                 float mult)
{
    int done = 0;
    if (!a->memo.on)
        return tp_search__walk_floats(a->s, path, bw, mult, &done) == TP_OK ? done : -1;
    if (a->milli.simple && path->count <= TP_WALK_KEPT)
        return walk_simple(a, path, bw, mult);
    uint64_t b1, b2, e1, e2;
    path_hash(a, path, &b1, &b2);
    tp_status st = tp_search__walk_floats(a->s, path, bw, mult, &done);
    path_hash(a, path, &e1, &e2);
    a->memo.bw_hash1 += e1 - b1;
    a->memo.bw_hash2 += e2 - b2;
    return st == TP_OK ? done : -1;
}

int tp_accel__walk_floats(void *state, const tp_cpath *path, float bw, float mult)
{
    tp_accel *a = state;
    if (mult == 1 && path->intra)
        tp_accel__pass_accept(a, path); /* its type was accepted */
    return walk_floats(a, path, bw, mult);
}

/* A walk at a bandwidth the pass does not reserve: an internal error. */
__attribute__((noinline, cold)) static int bad_amount(tp_accel *a, float bw)
{
    tp_fail(a->s->err, TP_ERR_INTERNAL, NULL, 0, 0, "search: bw %g not of the pass", (double)bw);
    return -1;
}

/*
 * The walk of a milli pass, with the shadows' when `shadowed`: 1 taken or
 * released, 0 short, -1 error. followPath's take-then-release on a short
 * hop leaves nothing taken (exact integers), so the whole route is checked
 * before anything is taken; no route touches a link twice (routes_simple).
 * A hop whose reverse does not pay has its mrev on a zero of its own.
 */
__attribute__((always_inline)) static inline int walk_milli_at(tp_accel *a, const tp_cpath *path,
                                                               int ai, float mult, int shadowed)
{
    const tp_amount *am = &a->milli.amounts[ai];
    const tp_mroute *mr = &a->milli.routes[path->index];
    const tp_mhop *hops = tp_accel__mhops(a, path);
    if (mult > 0) {
        int short_hop = short_hop_milli(hops, path->count, am, mr->kind);
        if (shadowed && a->shadow.alive)
            tp_accel__shadow_walk(a, path, am, short_hop);
        if (short_hop >= 0)
            return 0;
        move_milli(hops, path->count, am, mr->kind, 1);
        hash_reservation(a, mr, ai, 1);
        return 1;
    }
    move_milli(hops, path->count, am, mr->kind, -1);
    hash_reservation(a, mr, ai, -1);
    if (shadowed && a->shadow.alive)
        tp_accel__shadow_release(a, path, am);
    return 1;
}

/* walk_milli_at at bandwidth bw (a value of the pass). */
__attribute__((always_inline)) static inline int walk_milli(tp_accel *a, const tp_cpath *path,
                                                            float bw, float mult, int shadowed)
{
    const int ai = tp_accel__milli_amount(a, bw);
    if (ai < 0)
        return bad_amount(a, bw);
    if (mult == 1 && path->intra)
        tp_accel__pass_accept(a, path); /* its type was accepted */
    return walk_milli_at(a, path, ai, mult, shadowed);
}

/* take_first in milli mode (see search_accel.h), with the shadows' walks when `shadowed`. */
__attribute__((always_inline)) static inline int take_first(tp_accel *a, const tp_graph *g,
                                                            const tp_cpath *give_back,
                                                            const tp_cpath *const *paths, int count,
                                                            int shadowed)
{
    const int tree = tp_search__tree_pattern(g->pattern);
    const int ai = tp_accel__milli_amount(a, g->bw_intra);
    if (ai < 0)
        return bad_amount(a, g->bw_intra);
    if (give_back)
        walk_milli_at(a, give_back, ai, -1, shadowed && a->shadow.alive);
    for (int i = 0; i < count; i++) {
        const tp_cpath *path = paths[i];
        int need = path->need[tree];
        if (need > (int)g->type_intra) {
            tp_accel__pass_read(a, TP_READ_TYPE_INTRA, need, 0);
            continue;
        }
        if (need > a->pass.ti_lo)
            a->pass.ti_lo = need; /* its type was accepted (tp_accel__pass_accept) */
        if (walk_milli_at(a, path, ai, 1, shadowed && a->shadow.alive))
            return i;
    }
    return count;
}

int tp_accel__take_first_milli(void *state, const tp_graph *g, const tp_cpath *give_back,
                               const tp_cpath *const *paths, int count)
{
    return take_first(state, g, give_back, paths, count, 0);
}

int tp_accel__take_first_shadowed(void *state, const tp_graph *g, const tp_cpath *give_back,
                                  const tp_cpath *const *paths, int count)
{
    return take_first(state, g, give_back, paths, count, 1);
}

int tp_accel__walk_milli(void *state, const tp_cpath *path, float bw, float mult)
{
    return walk_milli(state, path, bw, mult, 0);
}

int tp_accel__walk_shadowed(void *state, const tp_cpath *path, float bw, float mult)
{
    return walk_milli(state, path, bw, mult, 1);
}

int tp_accel__gpu_pci_bw(void *state, int g)
{
    const tp_milli *mi = &((const tp_accel *)state)->milli;
    /* Below 2^11 the float of m/1000 truncates to m/1000. */
    int32_t up = *mi->pci_up_m[g], down = *mi->pci_down_m[g];
    return (up < down ? up : down) / 1000;
}

void tp_accel__net_bw(void *state, int net, int sign, float was)
{
    tp_accel *a = state;
    const tp_milli *mi = &a->milli;
    if (mi->on) {
        /* Counted, as links are (see release_milli): integer steps are exact below 2^24. */
        a->memo.bw_hash1 += sign * mi->net_k1[net];
        a->memo.bw_hash2 += sign * mi->net_k2[net];
    } else if (a->memo.on) {
        uint64_t delta = (uint64_t)tp_float_bits(a->s->sys->nodes[TP_NODE_NET].nodes[net].net.bw) -
                         tp_float_bits(was);
        a->memo.bw_hash1 += mi->net_k1[net] * delta;
        a->memo.bw_hash2 += mi->net_k2[net] * delta;
    }
    if (a->shadow.alive)
        tp_accel__shadow_net_bw(a, net, sign);
}
