/*
 * Shadow passes: while a first pass runs at speed B, follow what the same
 * pass would do at the next lower speeds B' of NCCL 2.22.3's ladder, and
 * when every decision agrees, record the pass at B' too (search_pass.c).
 *
 * A shadow keeps its own link values (milli mode, search_milli.c) and NET
 * bandwidths, changed by the same reservations at its own amounts. Every
 * place where bandwidth steers the recursion checks the shadow against the
 * pass: a route has room (followPath), a NET has room (ncclTopoSearchRecNet),
 * a NET is fast enough to start from (ncclTopoSearchTryNet's local GPUs), the
 * live PCI key of the GPU ranking (ncclTopoSearchNextGpuSort). The first
 * disagreement ends the shadow. If none occurs, by induction the pass at B'
 * takes the same branches in the same order: same steps, same hops.
 * Graphs: the pass is recorded only when it saved none; every completed
 * graph then had n x B no better than the best graph, and n x B' < n x B is
 * checked for every n, so at B' none is better either (the best graph only
 * improves, see search_pass.c). The sub-search memory stays sound: in milli
 * mode its hashes count the reservations of each amount on each link, so a
 * memory hit means the shadows were in the same state too.
 */
#include "search/search_int.h"

#include <stdlib.h>
#include <string.h>

static int alive(const tp_search_ctx *s, int j)
{
    return (s->shadow_alive >> j) & 1;
}

void tp_search__shadow_kill(tp_search_ctx *s, int j)
{
    s->shadow_alive &= ~(1u << j);
}

static inline int32_t rev_of(const tp_hop *h, const tp_amount *a, int32_t fw)
{
    return h->rev_div8 ? a->v[2 + h->sel] : h->rev_full ? fw : 0;
}

/* Give back the first count hops of path in shadow link values m. */
static void shadow_give(int32_t *m, const tp_cpath *path, int count, const tp_amount *a)
{
    for (int step = 0; step < count; step++) {
        const tp_hop *h = &path->hops[step];
        int32_t fw = a->v[h->sel], rev = rev_of(h, a, fw);
        m[h->li] += fw;
        if (rev)
            m[h->lri] += rev;
    }
}

static int hop_room(const int32_t *m, const tp_hop *h, const tp_amount *a)
{
    int32_t fw = a->v[h->sel], rev = rev_of(h, a, fw);
    return !(m[h->li] < fw || (rev && m[h->lri] < rev));
}

/*
 * Whether path has room for a in shadow link values m (see follow_milli),
 * hop `first` (where the pass found none) checked first.
 */
static int shadow_room(const int32_t *m, const tp_cpath *path, const tp_amount *a, int first)
{
    if (!hop_room(m, &path->hops[first], a))
        return 0;
    for (int step = 0; step < path->count; step++)
        if (step != first && !hop_room(m, &path->hops[step], a))
            return 0;
    return 1;
}

/* Take every hop of path in shadow link values m (room is known). */
static void shadow_take_all(int32_t *m, const tp_cpath *path, const tp_amount *a)
{
    for (int step = 0; step < path->count; step++) {
        const tp_hop *h = &path->hops[step];
        int32_t fw = a->v[h->sel];
        m[h->li] -= fw;
        if (h->rev_div8)
            m[h->lri] -= a->v[2 + h->sel];
        else if (h->rev_full)
            m[h->lri] -= fw;
    }
}

/*
 * While a shadow agrees, it made the same reservations at amounts no larger
 * (B' < B, and followPath's float operations are monotonic), so its values
 * are no smaller: where the pass had room, so has the shadow. Only refusals
 * need a check.
 */
void tp_search__shadow_walk(tp_search_ctx *s, const tp_cpath *path, const tp_amount *a,
                            int short_hop)
{
    int ai = (int)(a - s->amounts);
    for (int j = 0; j < s->n_shadows; j++) {
        if (!alive(s, j))
            continue;
        if (short_hop < 0)
            shadow_take_all(s->shadows[j].link_m, path, &s->shadows[j].amounts[ai]);
        else if (shadow_room(s->shadows[j].link_m, path, &s->shadows[j].amounts[ai], short_hop))
            tp_search__shadow_kill(s, j); /* the shadow would go on: it disagrees */
    }
}

void tp_search__shadow_release(tp_search_ctx *s, const tp_cpath *path, const tp_amount *a)
{
    int ai = (int)(a - s->amounts);
    for (int j = 0; j < s->n_shadows; j++) {
        if (!alive(s, j))
            continue;
        shadow_give(s->shadows[j].link_m, path, path->count, &s->shadows[j].amounts[ai]);
    }
}

void tp_search__shadow_net_test(tp_search_ctx *s, int n, int short_of_bw)
{
    for (int j = 0; j < s->n_shadows; j++)
        if (alive(s, j) && (s->shadows[j].net_bw[n] < s->shadows[j].int_bw) != short_of_bw)
            tp_search__shadow_kill(s, j);
}

void tp_search__shadow_local_test(tp_search_ctx *s, float max_bw, int main_ok)
{
    for (int j = 0; j < s->n_shadows; j++)
        if (alive(s, j) && (max_bw >= s->shadows[j].int_bw) != main_ok)
            tp_search__shadow_kill(s, j);
}

void tp_search__shadow_net_bw(tp_search_ctx *s, int n, int sign)
{
    for (int j = 0; j < s->n_shadows; j++) {
        if (!alive(s, j))
            continue;
        s->shadows[j].net_bw[n] -= sign * s->shadows[j].int_bw;
    }
}

int tp_search__shadow_pci_bw(const tp_search_ctx *s, int j, int g)
{
    if (!s->pci_up[g])
        return -1;
    const int32_t *m = s->shadows[j].link_m;
    int32_t up = m[s->pci_up_m[g] - s->link_m], down = m[s->pci_down_m[g] - s->link_m];
    return (up < down ? up : down) / 1000;
}

/* A shadow at speed bw of the pass g, or 0 when its amounts are not exact or it could save. */
static int shadow_setup(tp_search_ctx *s, tp_shadow *sh, const tp_graph *g, float bw)
{
    tp_graph tmp;
    tp_graph__copy_settings(&tmp, g);
    tmp.bw_intra = tmp.bw_inter = bw;
    for (int n = 1; n <= g->max_channels; n++)
        if (!(n * bw < n * g->bw_intra))
            return 0;
    sh->bw = bw;
    sh->int_bw = (int)bw;
    int n_amounts = s->n_amounts;
    if (!tp_search__milli_amounts(s, &tmp, sh->amounts) || s->n_amounts != n_amounts)
        return 0;
    /* The pass skips next channels that cannot start (search_dead.c): so must the shadow. */
    if (s->next_dead && !tp_search__dead_pass(s, s->link_m, sh->amounts, &tmp))
        return 0;
    memcpy(sh->link_m, s->link_m, (size_t)s->n_links * sizeof(*sh->link_m));
    for (int n = 0; n < s->n_nets; n++)
        sh->net_bw[n] = s->sys->nodes[TP_NODE_NET].nodes[n].net.bw;
    return 1;
}

void tp_search__shadow_begin(tp_search_ctx *s, const tp_graph *g, const float *bws, int count)
{
    s->shadow_alive = 0;
    s->n_shadows = 0;
    if (!s->milli || g->bw_intra != g->bw_inter || !s->shadow_ok)
        return;
    for (int i = 0; i < count && s->n_shadows < TP_SHADOWS; i++) {
        tp_shadow *sh = &s->shadows[s->n_shadows];
        if (tp_search__pass_known(s, g, bws[i]) || !shadow_setup(s, sh, g, bws[i]))
            continue;
        s->shadow_alive |= 1u << s->n_shadows;
        s->n_shadows++;
    }
}

void tp_search__shadow_end(tp_search_ctx *s, const tp_graph *g, int time)
{
    for (int j = 0; j < s->n_shadows; j++)
        if (alive(s, j))
            tp_search__pass_store_at(s, g, s->shadows[j].bw, time);
    s->shadow_alive = 0;
    s->n_shadows = 0;
}

tp_status tp_search__shadow_init(tp_search_ctx *s, tp_error *err)
{
    size_t n_nets = (size_t)(s->n_nets > 0 ? s->n_nets : 1);
    for (int j = 0; j < TP_SHADOWS; j++) {
        s->shadows[j].link_m = malloc((size_t)(s->n_links > 0 ? s->n_links : 1) * sizeof(int32_t));
        s->shadows[j].net_bw = malloc(n_nets * sizeof(float));
        if (!s->shadows[j].link_m || !s->shadows[j].net_bw)
            return tp_fail_nomem(err);
    }
    s->shadow_ok = 1;
    return TP_OK;
}

void tp_search__shadow_free(tp_search_ctx *s)
{
    for (int j = 0; j < TP_SHADOWS; j++) {
        free(s->shadows[j].link_m);
        free(s->shadows[j].net_bw);
        s->shadows[j].link_m = NULL;
        s->shadows[j].net_bw = NULL;
    }
}
