/*
 * Passes where a second channel cannot start. On PCIe machines every route
 * into a GPU ends with the same link (switch -> GPU); when that link cannot
 * carry two channels' worth of bandwidth, a completed channel blocks every
 * later one at its very first reservation. NCCL 2.22.3 still tries the next
 * channel after each completed channel (ncclTopoSearchRecNet from every
 * candidate NET), which is most of the work of such passes; here it is
 * skipped when it provably does nothing.
 *
 * Why it is exact: with NETs, a channel starts by reserving a NET -> GPU
 * route (ncclTopoSearchTryGpu) before any recursion step is counted. Every
 * route into GPU g ends with link L_g, and no other reservation touches L_g
 * (checked on the compiled routes). A completed channel entered every GPU,
 * so L_g holds at least the smallest amount a route into g takes, a_min.
 * If L_g's value at the pass start is below 2 a_min, what is left is below
 * a_min and every route into g fails: the next channel's search takes no
 * step, saves nothing and gives back all it reserved. Its one trace is the
 * NET latency it leaves in the graph (written when trying each NET), which
 * tp_accel__dead_next_channel sets as NCCL would.
 */
#include "search/accel/accel.h"

#include <stdlib.h>
#include <string.h>

/* The route kinds that end at a GPU, and whether they reserve the inter-node bw. */
static const struct {
    int from, inter;
} entry_kinds[] = {{TP_NODE_GPU, 0}, {TP_NODE_NVS, 0}, {TP_NODE_NET, 1}};

/* Record route cp's last hop as an entry into GPU g; -2 marks GPUs entered by several links. */
static void note_entry(tp_accel *a, const tp_cpath *cp, int g, int inter)
{
    if (cp->count == 0)
        return;
    const tp_mhop *last = tp_accel__mhop(a, &cp->hops[cp->count - 1]);
    tp_entry *e = &a->dead.entry[g];
    if (e->link == -1)
        e->link = last->li;
    else if (e->link != last->li)
        e->link = -2;
    e->sel_mask[inter] |= (unsigned char)(1u << last->sel);
}

/* Some hop other than a last hop into g takes from GPU g's entry link: g does not qualify. */
static void check_other_uses(tp_accel *a, const int *link_gpu)
{
    const tp_search_ctx *s = a->s;
    for (int t1 = 0; t1 < TP_NODE_TYPE_COUNT; t1++) {
        for (int t2 = 0; t2 < TP_NODE_TYPE_COUNT; t2++) {
            const tp_cpath *cp = s->routes[t1][t2];
            int n = s->sys->nodes[t1].count * s->sys->nodes[t2].count;
            for (int r = 0; cp && r < n; r++) {
                for (int k = 0; k < cp[r].count; k++) {
                    const tp_mhop *h = tp_accel__mhop(a, &cp[r].hops[k]);
                    int g = link_gpu[h->li];
                    int entry = t2 == TP_NODE_GPU && k == cp[r].count - 1 &&
                                r % s->sys->nodes[t2].count == g;
                    if (g >= 0 && !entry)
                        a->dead.entry[g].link = -2;
                    if ((h->rev_div8 || h->rev_full) && link_gpu[h->lri] >= 0)
                        a->dead.entry[link_gpu[h->lri]].link = -2;
                }
            }
        }
    }
}

tp_status tp_accel__dead_init(tp_accel *a, tp_error *err)
{
    const tp_search_ctx *s = a->s;
    tp_dead *d = &a->dead;
    d->capable = 0;
    if (s->n_nets == 0 || !a->milli.capable)
        return TP_OK;
    d->entry = calloc((size_t)s->n_gpus, sizeof(*d->entry));
    int *link_gpu = malloc((size_t)(a->milli.n_links > 0 ? a->milli.n_links : 1) * sizeof(int));
    if (!d->entry || !link_gpu) {
        free(link_gpu);
        return tp_fail_nomem(err);
    }
    for (int g = 0; g < s->n_gpus; g++)
        d->entry[g].link = -1;
    for (size_t k = 0; k < ARRAY_LEN(entry_kinds); k++) {
        int from = entry_kinds[k].from, n_from = s->sys->nodes[from].count;
        for (int i = 0; s->routes[from][TP_NODE_GPU] && i < n_from; i++)
            for (int g = 0; g < s->n_gpus; g++)
                note_entry(a, &s->routes[from][TP_NODE_GPU][i * s->n_gpus + g], g,
                           entry_kinds[k].inter);
    }
    for (int i = 0; i < a->milli.n_links; i++)
        link_gpu[i] = -1;
    for (int g = 0; g < s->n_gpus; g++)
        if (d->entry[g].link >= 0)
            link_gpu[d->entry[g].link] = g;
    check_other_uses(a, link_gpu);
    free(link_gpu);
    d->capable = 1;
    for (int g = 0; g < s->n_gpus; g++)
        d->capable &= d->entry[g].link >= 0;
    return TP_OK;
}

void tp_accel__dead_free(tp_accel *a)
{
    free(a->dead.entry);
    a->dead.entry = NULL;
}

/* The smallest amount a route into a GPU takes from its entry link, -1 if none. */
static int32_t min_entry(const tp_entry *e, const tp_amount *intra, const tp_amount *inter)
{
    int32_t best = -1;
    for (int k = 0; k < 2; k++) {
        const tp_amount *a = k ? inter : intra;
        for (int sel = 0; sel < 2; sel++)
            if ((e->sel_mask[k] >> sel) & 1 && (best < 0 || a->v[sel] < best))
                best = a->v[sel];
    }
    return best;
}

int tp_accel__dead_pass(const tp_accel *a, const int32_t *link_m, const tp_amount *amounts,
                        const tp_graph *g)
{
    const tp_search_ctx *s = a->s;
    if (!a->dead.capable || tp_search__head_pattern(g->pattern))
        return 0;
    const tp_amount *intra = &amounts[0];
    const tp_amount *inter = amounts[1].bw == amounts[0].bw ? &amounts[0] : &amounts[1];
    for (int i = 0; i < s->n_gpus; i++) {
        int32_t a_min = min_entry(&a->dead.entry[i], intra, inter);
        if (a_min <= 0 || !(link_m[a->dead.entry[i].link] < 2 * a_min))
            return 0;
    }
    return 1;
}

tp_status tp_accel__dead_next_channel(tp_accel *a, tp_graph *g)
{
    tp_search_ctx *s = a->s;
    const int bw = (int)g->bw_inter; /* NCCL keeps it in an int */
    int count;
    const int *list;
    tp_status st = tp_search__select_nets(s, g->type_inter, -1, &list, &count);
    for (int i = 0; i < count && st == TP_OK; i++) {
        int n = list[(g->n_channels + i) % count];
        if (tp_search__net_may_open(s, g, n, bw))
            g->latency_inter = s->sys->nodes[TP_NODE_NET].nodes[n].net.latency;
    }
    return st;
}
