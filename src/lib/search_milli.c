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
#include "search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The thousandths of v when v is the float nearest to them, else -1. */
static int32_t milli_of(float v)
{
    if (!(v >= 0.0f && v <= TP_MILLI_MAX / 1000.0f))
        return -1;
    int32_t m = (int32_t)llround((double)v * 1000.0);
    if (m > TP_MILLI_MAX || (float)m / 1000.0f != v)
        return -1;
    return m;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(float *const *)a, y = (uintptr_t)*(float *const *)b;
    return x < y ? -1 : x > y;
}

/* Index of bw in the sorted link table. */
static int32_t *link_slot(tp_search_ctx *s, float *bw)
{
    float **hit = bsearch(&bw, s->link_bw, (size_t)s->n_links, sizeof(*s->link_bw), cmp_ptr);
    return hit ? &s->link_m[hit - s->link_bw] : NULL;
}

/* Every bandwidth the search reads: hop links, their reverses and the GPUs' PCI links. */
static size_t collect_links(const tp_search_ctx *s, size_t n_hops, float **out)
{
    size_t n = 0;
    for (size_t i = 0; i < n_hops; i++) {
        const tp_hop *h = &s->hop_pool[i];
        out[n++] = h->bw;
        if (h->rev)
            out[n++] = h->rev;
    }
    for (int g = 0; g < s->n_gpus; g++) {
        if (s->pci_up[g]) {
            out[n++] = (float *)s->pci_up[g];
            out[n++] = (float *)s->pci_down[g];
        }
    }
    return n;
}

static int unique_sorted(float **v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_ptr);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return (int)k;
}

tp_status tp_search__milli_init(tp_search_ctx *s, tp_error *err)
{
    size_t n_hops = s->n_hops;
    size_t cap = 2 * n_hops + 2 * (size_t)s->n_gpus + 1;
    s->link_bw = malloc(cap * sizeof(*s->link_bw));
    s->link_m = malloc(cap * sizeof(*s->link_m));
    if (!s->link_bw || !s->link_m)
        return tp_fail_nomem(err);
    s->n_links = unique_sorted(s->link_bw, collect_links(s, n_hops, s->link_bw));
    s->milli_capable = 1;
    for (size_t i = 0; i < n_hops; i++) {
        tp_hop *h = &s->hop_pool[i];
        h->m = link_slot(s, h->bw);
        h->mrev = h->rev ? link_slot(s, h->rev) : NULL;
        h->li = (int)(h->m - s->link_m);
        h->lri = h->mrev ? (int)(h->mrev - s->link_m) : 0;
        /* A paying reverse without its link is an error only when walked: floats then. */
        if ((h->rev_div8 || h->rev_full) && !h->rev)
            s->milli_capable = 0;
        s->need_pci |= h->sel;
        s->need_rev8 |= h->rev_div8;
    }
    for (int g = 0; g < s->n_gpus; g++) {
        s->pci_up_m[g] = s->pci_up[g] ? link_slot(s, (float *)s->pci_up[g]) : NULL;
        s->pci_down_m[g] = s->pci_down[g] ? link_slot(s, (float *)s->pci_down[g]) : NULL;
    }
    return TP_OK;
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
static int make_amount(const tp_search_ctx *s, tp_amount *a, int index, float bw)
{
    float pci = bw * 6 / 5; /* INTEL_P2P_OVERHEAD */
    float v[4] = {bw, pci, bw / 8, pci / 8};
    int need[4] = {1, s->need_pci, s->need_rev8, s->need_pci && s->need_rev8};
    a->bw = bw;
    for (int i = 0; i < 4; i++) {
        /* Distinct per amount and kind: pass 2 reserves different intra and inter bws. */
        a->c1[i] = tp_search__mix(0x51ed270b27c3a5e1ULL, (uint64_t)(4 * index + i));
        a->c2[i] = tp_search__mix(0x2f8a9c4b61d0e357ULL, (uint64_t)(4 * index + i));
        a->v[i] = milli_of(v[i]);
        if (need[i] && a->v[i] < 0)
            return 0;
    }
    return 1;
}

int tp_search__milli_amounts(const tp_search_ctx *s, const tp_graph *g, tp_amount *out)
{
    if (g->pattern == TP_PATTERN_NVLS || g->pattern == TP_PATTERN_COLLNET_DIRECT)
        return 0; /* they reserve other multiples */
    if (!make_amount(s, &out[0], 0, g->bw_intra) || !make_amount(s, &out[1], 1, g->bw_inter))
        return 0;
    /* Balanced trees: the first two GPUs each send half of the NET traffic. */
    if (g->pattern != TP_PATTERN_BALANCED_TREE)
        return 2;
    return make_amount(s, &out[2], 2, g->bw_inter / 2) ? 3 : 0;
}

int tp_search__milli_begin(tp_search_ctx *s, const tp_graph *g)
{
    s->milli = 0;
    if (!s->milli_capable || !(s->n_amounts = tp_search__milli_amounts(s, g, s->amounts)))
        return 0;
    for (int i = 0; i < s->n_links; i++)
        if ((s->link_m[i] = milli_of(*s->link_bw[i])) < 0)
            return 0;
    s->milli = 1;
    return 1;
}

const tp_amount *tp_search__milli_amount(const tp_search_ctx *s, float bw)
{
    for (int i = 0; i < s->n_amounts; i++)
        if (s->amounts[i].bw == bw)
            return &s->amounts[i];
    return NULL;
}
