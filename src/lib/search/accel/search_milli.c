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
 * as 18 x 20.6 computed in float) run on the floats.
 */
#include "search/search_int.h"

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

/* Open addressing from link bandwidth pointers to link table indices. */
typedef struct link_map {
    float **key;
    int *index;
    size_t mask;
} link_map;

static size_t ptr_hash(const float *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL;
    return (size_t)(x >> 17);
}

/* The table index of bw, added to the table on first sight. */
static int link_index(tp_search_ctx *s, link_map *map, float *bw)
{
    size_t i = ptr_hash(bw) & map->mask;
    while (map->key[i] && map->key[i] != bw)
        i = (i + 1) & map->mask;
    if (!map->key[i]) {
        map->key[i] = bw;
        map->index[i] = s->n_links;
        s->link_bw[s->n_links++] = bw;
    }
    return map->index[i];
}

/* Number every bandwidth the search reads: hop links, their reverses, the GPUs' PCI links. */
static void number_links(tp_search_ctx *s, link_map *map)
{
    for (size_t i = 0; i < s->n_hops; i++) {
        tp_hop *h = &s->hop_pool[i];
        h->li = link_index(s, map, h->bw);
        h->lri = h->rev ? link_index(s, map, h->rev) : 0;
        /* A paying reverse without its link is an error only when walked: floats then. */
        if ((h->rev_div8 || h->rev_full) && !h->rev)
            s->milli_capable = 0;
        s->need_pci |= h->sel;
        s->need_rev8 |= h->rev_div8;
    }
    for (int g = 0; g < s->n_gpus; g++) {
        if (!s->pci_up[g])
            continue;
        s->pci_up_m[g] = s->link_m + link_index(s, map, (float *)s->pci_up[g]);
        s->pci_down_m[g] = s->link_m + link_index(s, map, (float *)s->pci_down[g]);
    }
}

/*
 * Milli mode checks a whole route before taking it (search_rec.c), which
 * equals NCCL's hop-by-hop walk when no link is touched twice by one route
 * (routes are simple paths: a link and its reverse join the same two nodes).
 */
static int routes_simple(const tp_search_ctx *s)
{
    for (int t1 = 0; t1 < TP_NODE_TYPE_COUNT; t1++) {
        for (int t2 = 0; t2 < TP_NODE_TYPE_COUNT; t2++) {
            const tp_cpath *cp = s->routes[t1][t2];
            int n = s->sys->nodes[t1].count * s->sys->nodes[t2].count;
            for (int r = 0; cp && r < n; r++)
                for (int i = 0; i < cp[r].count; i++)
                    for (int j = 0; j <= i; j++) {
                        const tp_hop *a = &cp[r].hops[i], *b = &cp[r].hops[j];
                        int a_rev = a->rev_div8 || a->rev_full, b_rev = b->rev_div8 || b->rev_full;
                        if ((j < i && a->li == b->li) || (a_rev && a->lri == b->li) ||
                            (b_rev && b->lri == a->li) ||
                            (j < i && a_rev && b_rev && a->lri == b->lri))
                            return 0;
                    }
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
    *c1 = tp_search__mix(0x51ed270b27c3a5e1ULL, (uint64_t)(4 * index + kind));
    *c2 = tp_search__mix(0x2f8a9c4b61d0e357ULL, (uint64_t)(4 * index + kind));
}

/* The hash codes of every (pass amount, kind), computed once. */
typedef struct reservation_codes {
    uint64_t c1[3][4], c2[3][4];
} reservation_codes;

/* A route's hash change for one reservation of each pass amount: the sum over its links. */
static void hash_route(tp_cpath *cp, const reservation_codes *rc)
{
    for (int index = 0; index < 3; index++) {
        uint64_t h1 = 0, h2 = 0;
        for (int step = 0; step < cp->count; step++) {
            const tp_hop *h = &cp->hops[step];
            h1 += h->k1 * rc->c1[index][h->sel];
            h2 += h->k2 * rc->c2[index][h->sel];
            if (h->rev && (h->rev_div8 || h->rev_full)) {
                int kind = h->rev_div8 ? 2 + h->sel : h->sel;
                h1 += h->rk1 * rc->c1[index][kind];
                h2 += h->rk2 * rc->c2[index][kind];
            }
        }
        cp->hash1[index] = h1;
        cp->hash2[index] = h2;
    }
}

static void hash_routes(tp_search_ctx *s)
{
    reservation_codes rc;
    for (int index = 0; index < 3; index++)
        for (int kind = 0; kind < 4; kind++)
            reservation_code(index, kind, &rc.c1[index][kind], &rc.c2[index][kind]);
    for (int t1 = 0; t1 < TP_NODE_TYPE_COUNT; t1++) {
        for (int t2 = 0; t2 < TP_NODE_TYPE_COUNT; t2++) {
            int n = s->sys->nodes[t1].count * s->sys->nodes[t2].count;
            for (int r = 0; s->routes[t1][t2] && r < n; r++)
                hash_route(&s->routes[t1][t2][r], &rc);
        }
    }
}

tp_status tp_search__milli_init(tp_search_ctx *s, tp_error *err)
{
    size_t cap = 2 * s->n_hops + 2 * (size_t)s->n_gpus + 1, size = 1;
    while (size < 2 * cap)
        size *= 2;
    link_map map = {calloc(size, sizeof(*map.key)), malloc(size * sizeof(*map.index)), size - 1};
    s->link_bw = malloc(cap * sizeof(*s->link_bw));
    s->link_m = malloc(cap * sizeof(*s->link_m));
    tp_status st = TP_OK;
    if (!map.key || !map.index || !s->link_bw || !s->link_m) {
        st = tp_fail_nomem(err);
    } else {
        s->milli_capable = 1;
        number_links(s, &map);
        uint64_t *keys = malloc((size_t)(s->n_links ? s->n_links : 1) * 2 * sizeof(*keys));
        if (!keys) {
            free(map.key);
            free(map.index);
            return tp_fail_nomem(err);
        }
        for (int l = 0; l < s->n_links; l++)
            tp_search__bw_keys(s->link_bw[l], &keys[2 * l], &keys[2 * l + 1]);
        for (size_t i = 0; i < s->n_hops; i++) {
            tp_hop *h = &s->hop_pool[i];
            h->m = s->link_m + h->li;
            h->mrev = h->rev ? s->link_m + h->lri : NULL;
            h->k1 = keys[2 * h->li];
            h->k2 = keys[2 * h->li + 1];
            h->rk1 = h->rev ? keys[2 * h->lri] : 0;
            h->rk2 = h->rev ? keys[2 * h->lri + 1] : 0;
        }
        free(keys);
        if (!routes_simple(s))
            s->milli_capable = 0;
        hash_routes(s);
    }
    free(map.key);
    free(map.index);
    return st;
}

void tp_search__milli_free(tp_search_ctx *s)
{
    free(s->link_bw);
    free(s->link_m);
    s->link_bw = NULL;
    s->link_m = NULL;
    s->n_links = 0;
}

/*
 * The amounts followPath takes for bw, as NCCL 2.22.3 computes them in
 * float; only those some hop uses need to be normalized.
 */
static int make_amount(const tp_search_ctx *s, tp_amount *a, float bw)
{
    float pci = bw * 6 / 5; /* INTEL_P2P_OVERHEAD */
    float v[4] = {bw, pci, bw / 8, pci / 8};
    int need[4] = {1, s->need_pci, s->need_rev8, s->need_pci && s->need_rev8};
    a->bw = bw;
    for (int i = 0; i < 4; i++) {
        a->v[i] = milli_of(v[i]);
        if (need[i] && a->v[i] < 0)
            return 0;
    }
    return 1;
}

/*
 * make_amount through a small direct-mapped cache: a search meets few
 * speeds, each many times (cached_ok: 0 empty, 1 not exact, 2 exact).
 */
static int cached_amount(tp_search_ctx *s, tp_amount *a, float bw)
{
    uint32_t bits;
    memcpy(&bits, &bw, sizeof(bits));
    size_t slot = (size_t)((bits * 0x9e3779b1u) >> 26) % TP_AMOUNT_CACHE;
    if (s->cached_ok[slot] && s->cached_amounts[slot].bw == bw) {
        *a = s->cached_amounts[slot];
        return s->cached_ok[slot] == 2;
    }
    int ok = make_amount(s, a, bw);
    s->cached_amounts[slot] = *a;
    s->cached_ok[slot] = (unsigned char)(ok ? 2 : 1);
    return ok;
}

int tp_search__milli_amounts(tp_search_ctx *s, const tp_graph *g, tp_amount *out)
{
    if (tp_search__head_pattern(g->pattern))
        return 0; /* they reserve other multiples */
    if (!cached_amount(s, &out[0], g->bw_intra) || !cached_amount(s, &out[1], g->bw_inter))
        return 0;
    /* Balanced trees: the first two GPUs each send half of the NET traffic. */
    if (g->pattern != TP_PATTERN_BALANCED_TREE)
        return 2;
    return cached_amount(s, &out[2], g->bw_inter / 2) ? 3 : 0;
}

/* Load the link values; after a milli pass they are still right (all given back exactly). */
static int load_links(tp_search_ctx *s)
{
    if (s->link_m_ok)
        return 1;
    for (int i = 0; i < s->n_links; i++)
        if ((s->link_m[i] = milli_of(*s->link_bw[i])) < 0)
            return 0;
    s->link_m_ok = 1;
    return 1;
}

int tp_search__milli_begin(tp_search_ctx *s, const tp_graph *g)
{
    s->milli = 0;
    s->next_dead = 0;
    if (s->milli_capable && (s->n_amounts = tp_search__milli_amounts(s, g, s->amounts)) &&
        load_links(s)) {
        s->milli = 1;
        s->next_dead = tp_search__dead_pass(s, s->link_m, s->amounts, g);
        return 1;
    }
    s->link_m_ok = 0; /* a float pass may round the link values */
    return 0;
}
