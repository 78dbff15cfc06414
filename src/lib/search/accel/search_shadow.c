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
#include "search/accel/accel.h"

#include <stdlib.h>
#include <string.h>

static int alive(const tp_accel *a, int j)
{
    return (a->shadow.alive >> j) & 1;
}

static void kill_shadow(tp_accel *a, int j)
{
    a->shadow.alive &= ~(1u << j);
    if (!a->shadow.alive)
        tp_accel__hooks(a);
}

void tp_accel__shadow_stop(tp_accel *a)
{
    int was = a->shadow.alive != 0;
    a->shadow.alive = 0;
    a->shadow.count = 0;
    if (was)
        tp_accel__hooks(a);
}

static inline int32_t rev_of(const tp_mhop *h, const tp_amount *am)
{
    return am->v[h->rev_i];
}

/* Give back (sign -1) or take (sign 1) every hop of the route in shadow link values m. */
static inline void shadow_move(int32_t *m, const tp_mhop *hops, int count, const tp_amount *am,
                               int kind, int32_t sign)
{
    if (kind == TP_MROUTE_PLAIN) {
        const int32_t v = sign * am->v[0];
        for (int step = 0; step < count; step++)
            m[hops[step].li] -= v;
        return;
    }
    if (kind == TP_MROUTE_FWD) {
        for (int step = 0; step < count; step++)
            m[hops[step].li] -= sign * am->v[hops[step].sel];
        return;
    }
    for (int step = 0; step < count; step++) {
        const tp_mhop *h = &hops[step];
        int32_t rev = rev_of(h, am);
        m[h->li] -= sign * am->v[h->sel];
        if (rev)
            m[h->lri] -= sign * rev;
    }
}

static int hop_room(const int32_t *m, const tp_mhop *h, const tp_amount *am)
{
    int32_t fw = am->v[h->sel], rev = rev_of(h, am);
    return !(m[h->li] < fw || (rev && m[h->lri] < rev));
}

/*
 * Whether the route's hops have room for am in shadow link values m (as
 * milli mode's walk checks), hop `first` (where the pass found none) first.
 */
static int shadow_room(const int32_t *m, const tp_mhop *hops, int count, const tp_amount *am,
                       int first, int kind)
{
    if (!hop_room(m, &hops[first], am))
        return 0;
    if (kind != TP_MROUTE_ANY) {
        for (int step = 0; step < count; step++)
            if (m[hops[step].li] < am->v[hops[step].sel])
                return 0;
        return 1;
    }
    for (int step = 0; step < count; step++)
        if (step != first && !hop_room(m, &hops[step], am))
            return 0;
    return 1;
}

/*
 * While a shadow agrees, it made the same reservations at amounts no larger
 * (B' < B, and followPath's float operations are monotonic), so its values
 * are no smaller: where the pass had room, so has the shadow. Only refusals
 * need a check.
 */
void tp_accel__shadow_walk(tp_accel *a, const tp_cpath *path, const tp_amount *am, int short_hop)
{
    int ai = (int)(am - a->milli.amounts), kind = a->milli.routes[path->index].kind;
    const tp_mhop *hops = tp_accel__mhops(a, path);
    for (unsigned live = a->shadow.alive; live; live &= live - 1) {
        int j = __builtin_ctz(live);
        tp_shadow *sh = &a->shadow.runs[j];
        if (short_hop < 0)
            shadow_move(sh->link_m, hops, path->count, &sh->amounts[ai], kind, 1);
        else if (shadow_room(sh->link_m, hops, path->count, &sh->amounts[ai], short_hop, kind))
            kill_shadow(a, j); /* the shadow would go on: it disagrees */
    }
}

void tp_accel__shadow_release(tp_accel *a, const tp_cpath *path, const tp_amount *am)
{
    int ai = (int)(am - a->milli.amounts), kind = a->milli.routes[path->index].kind;
    const tp_mhop *hops = tp_accel__mhops(a, path);
    for (unsigned live = a->shadow.alive; live; live &= live - 1) {
        int j = __builtin_ctz(live);
        shadow_move(a->shadow.runs[j].link_m, hops, path->count, &a->shadow.runs[j].amounts[ai],
                    kind, -1);
    }
}

void tp_accel__shadow_bw_test(void *state, int net, float value, int ok)
{
    tp_accel *a = state;
    for (int j = 0; j < a->shadow.count && a->shadow.alive; j++) {
        if (!alive(a, j))
            continue;
        const tp_shadow *sh = &a->shadow.runs[j];
        int shadow_ok = net >= 0 ? !(sh->net_bw[net] < sh->int_bw) : value >= sh->int_bw;
        if (shadow_ok != ok)
            kill_shadow(a, j);
    }
}

void tp_accel__shadow_net_bw(tp_accel *a, int n, int sign)
{
    for (int j = 0; j < a->shadow.count; j++) {
        if (!alive(a, j))
            continue;
        a->shadow.runs[j].net_bw[n] -= sign * a->shadow.runs[j].int_bw;
    }
}

/* gpuPciBw of GPU g in shadow j's link values. */
static int shadow_pci_bw(const tp_accel *a, int j, int g)
{
    if (!a->s->pci_up[g])
        return -1;
    const int32_t *m = a->shadow.runs[j].link_m;
    const tp_milli *mi = &a->milli;
    int32_t up = m[mi->pci_up_m[g] - mi->link_m], down = m[mi->pci_down_m[g] - mi->link_m];
    return (up < down ? up : down) / 1000;
}

/* Shadow passes must rank the candidates in the same order. */
void tp_accel__shadow_order(void *state, const tp_rank_row *row, const int *pos, int count)
{
    tp_accel *a = state;
    for (int j = 0; j < a->shadow.count && a->shadow.alive; j++) {
        if (!alive(a, j))
            continue;
        int prev = 0;
        for (int i = 0; i < count; i++) {
            const tp_rank_cand *c = &row->c[pos[i]];
            int pci = shadow_pci_bw(a, j, c->g);
            if (i > 0 &&
                !tp_search__ranks_before(&row->c[pos[i - 1]], prev, pos[i - 1], c, pci, pos[i])) {
                kill_shadow(a, j);
                break;
            }
            prev = pci;
        }
    }
}

/* A shadow at speed bw of the pass g, or 0 when its amounts are not exact or it could save. */
static int shadow_setup(tp_accel *a, tp_shadow *sh, const tp_graph *g, float bw)
{
    const tp_search_ctx *s = a->s;
    tp_graph tmp;
    tp_graph__copy_settings(&tmp, g);
    tmp.bw_intra = tmp.bw_inter = bw;
    for (int n = 1; n <= g->max_channels; n++)
        if (!(n * bw < n * g->bw_intra))
            return 0;
    sh->bw = bw;
    sh->int_bw = (int)bw;
    int n_amounts = a->milli.n_amounts;
    if (!tp_accel__milli_amounts(a, &tmp, sh->amounts) || a->milli.n_amounts != n_amounts)
        return 0;
    /* The pass skips next channels that cannot start (search_dead.c): so must the shadow. */
    if (a->dead.next_dead && !tp_accel__dead_pass(a, a->milli.link_m, sh->amounts, &tmp))
        return 0;
    memcpy(sh->link_m, a->milli.link_m, (size_t)a->milli.n_links * sizeof(*sh->link_m));
    for (int n = 0; n < s->n_nets; n++)
        sh->net_bw[n] = s->sys->nodes[TP_NODE_NET].nodes[n].net.bw;
    return 1;
}

void tp_accel__shadow_begin(tp_accel *a, const tp_graph *g, const float *bws, int count)
{
    tp_shadows *sw = &a->shadow;
    tp_accel__shadow_stop(a);
    if (!a->milli.on || g->bw_intra != g->bw_inter || !sw->ok)
        return;
    for (int i = 0; i < count && sw->count < TP_SHADOWS; i++) {
        tp_shadow *sh = &sw->runs[sw->count];
        if (tp_accel__pass_known(a, g, bws[i]) || !shadow_setup(a, sh, g, bws[i]))
            continue;
        sw->alive |= 1u << sw->count;
        sw->count++;
    }
    if (sw->alive)
        tp_accel__hooks(a);
}

void tp_accel__shadow_end(tp_accel *a, const tp_graph *g, int time)
{
    for (int j = 0; j < a->shadow.count; j++)
        if (alive(a, j))
            tp_accel__pass_store_at(a, g, a->shadow.runs[j].bw, time);
    tp_accel__shadow_stop(a);
}

tp_status tp_accel__shadow_init(tp_accel *a, tp_error *err)
{
    const tp_search_ctx *s = a->s;
    size_t n_nets = (size_t)(s->n_nets > 0 ? s->n_nets : 1);
    size_t n_links = (size_t)(a->milli.n_links > 0 ? a->milli.n_links : 1);
    for (int j = 0; j < TP_SHADOWS; j++) {
        a->shadow.runs[j].link_m = malloc(n_links * sizeof(int32_t));
        a->shadow.runs[j].net_bw = malloc(n_nets * sizeof(float));
        if (!a->shadow.runs[j].link_m || !a->shadow.runs[j].net_bw)
            return tp_fail_nomem(err);
    }
    a->shadow.ok = 1;
    return TP_OK;
}

void tp_accel__shadow_free(tp_accel *a)
{
    for (int j = 0; j < TP_SHADOWS; j++) {
        free(a->shadow.runs[j].link_m);
        free(a->shadow.runs[j].net_bw);
        a->shadow.runs[j].link_m = NULL;
        a->shadow.runs[j].net_bw = NULL;
    }
}
