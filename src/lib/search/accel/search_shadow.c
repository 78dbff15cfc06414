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
 * Graphs: n x B' < n x B is checked for every n, and every graph of n
 * channels the pass completed at B was no better than the best graph at its
 * end (it was saved, or not better then; the best only improves, see
 * search_pass.c): so the pass at B', which runs later, saves none (n x bw
 * comes first in ncclTopoCompareGraphs). Its steps are those of the pass at
 * B even when that pass saved graphs: a save only steers the recursion when
 * the graph has maxChannels (the pass then stops and records nothing). The
 * sub-search memory stays sound: in milli
 * mode its hashes count the reservations of each amount on each link, so a
 * memory hit means the shadows were in the same state too.
 */
#include "search/accel/accel.h"

#include "common/nccl_profile.h"

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

/* Lane bits (bit j: lane j) of a vector of lane truths (-1 true, 0 false). */
static inline unsigned lane_bits(tp_lanes t)
{
    return (unsigned)((t[0] & 1) | (t[1] & 2) | (t[2] & 4) | (t[3] & 8));
}

/*
 * The lanes with room on hop h for the amounts v (the lane vectors of one
 * pass amount), as milli mode's walk checks: forward, and on the reverse
 * link when it pays (an amount of 0 always fits there).
 */
static inline tp_lanes hop_room(const tp_lanes *m, const tp_mhop *h, const tp_lanes *v, int kind)
{
    tp_lanes ok = m[h->li] >= v[h->sel];
    if (kind == TP_MROUTE_ANY && h->rev_i != 4)
        ok &= (m[h->lri] >= v[h->rev_i]) | (v[h->rev_i] == 0);
    return ok;
}

/* Take (sign 1) or give back (sign -1) the route's amounts v in every lane. */
static inline void lanes_move(tp_lanes *m, const tp_mhop *hops, int count, const tp_lanes *v,
                              int kind, int32_t sign)
{
    for (int step = 0; step < count; step++) {
        const tp_mhop *h = &hops[step];
        m[h->li] -= sign * v[h->sel];
        if (kind == TP_MROUTE_ANY && h->rev_i != 4)
            m[h->lri] -= sign * v[h->rev_i];
    }
}

/*
 * While a shadow agrees, it made the same reservations at amounts no larger
 * (B' < B, and followPath's float operations are monotonic), so its values
 * are no smaller: where the pass had room, so has the shadow. Only refusals
 * need a check: of every lane at once, hop short_hop (where the pass found
 * none) first. Lanes of dead shadows move too; they are not read again.
 */
void tp_accel__shadow_walk(tp_accel *a, const tp_cpath *path, const tp_amount *am, int short_hop)
{
    int ai = (int)(am - a->milli.amounts), kind = a->milli.routes[path->index].kind;
    const tp_mhop *hops = tp_accel__mhops(a, path);
    const tp_lanes *v = a->shadow.amount[ai];
    tp_lanes *m = a->shadow.link_m;
    if (short_hop < 0) {
        lanes_move(m, hops, path->count, v, kind, 1);
        return;
    }
    unsigned room = a->shadow.alive & lane_bits(hop_room(m, &hops[short_hop], v, kind));
    for (int step = 0; room && step < path->count; step++)
        room &= lane_bits(hop_room(m, &hops[step], v, kind));
    for (; room; room &= room - 1)
        kill_shadow(a, __builtin_ctz(room)); /* the shadow would go on: it disagrees */
}

void tp_accel__shadow_release(tp_accel *a, const tp_cpath *path, const tp_amount *am)
{
    int ai = (int)(am - a->milli.amounts), kind = a->milli.routes[path->index].kind;
    lanes_move(a->shadow.link_m, tp_accel__mhops(a, path), path->count, a->shadow.amount[ai], kind,
               -1);
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

/* gpuPciBw of GPU g in every lane's link values. */
static tp_lanes lanes_pci_bw(const tp_accel *a, int g)
{
    if (!a->s->pci_up[g])
        return (tp_lanes){-1, -1, -1, -1};
    const tp_lanes *m = a->shadow.link_m;
    const tp_milli *mi = &a->milli;
    tp_lanes up = m[mi->pci_up_m[g] - mi->link_m], down = m[mi->pci_down_m[g] - mi->link_m];
    tp_lanes up_less = up < down, least = (up & up_less) | (down & ~up_less);
    /* m / 1000 for 0 <= m <= 2^20 (TP_MILLI_MAX): the float product truncates to it (checked
     * for every m), and costs three vector operations where an integer division costs twenty. */
    return __builtin_convertvector(__builtin_convertvector(least, tp_flanes) * 0.001f, tp_lanes);
}

/*
 * Shadow passes must rank the candidates in the same order: each pair next
 * in the pass's order comes in that order in every lane (tp_search__ranks_before
 * with the lane's live PCI key).
 */
void tp_accel__shadow_order(void *state, const tp_rank_row *row, const int *pos, int count)
{
    tp_accel *a = state;
    unsigned ok = a->shadow.alive;
    tp_lanes prev = {0};
    for (int i = 0; i < count && ok; i++) {
        const tp_rank_cand *c = &row->c[pos[i]];
        tp_lanes pci = lanes_pci_bw(a, c->g);
        if (i > 0) {
            const tp_rank_cand *b = &row->c[pos[i - 1]];
            if (b->inter_bw != c->inter_bw)
                ok = b->inter_bw > c->inter_bw ? ok : 0;
            else
                ok &= lane_bits((prev > pci) | ((prev == pci) & -(pos[i - 1] < pos[i])));
        }
        prev = pci;
    }
    for (unsigned dead = a->shadow.alive & ~ok; dead; dead &= dead - 1)
        kill_shadow(a, __builtin_ctz(dead));
}

/*
 * Shadow j at speed bw of the pass g: 1; 0 when its amounts are not exact or
 * it could save; -1 when a next channel could start (the pass's cannot):
 * then at every lower speed too (its amounts are no larger, its room no
 * smaller), and no lower shadow is tried.
 */
static int shadow_setup(tp_accel *a, int j, const tp_graph *g, float bw)
{
    tp_shadow *sh = &a->shadow.runs[j];
    const tp_search_ctx *s = a->s;
    /* n x bw < n x bw_intra in float for every channel count n: sure when bw is below bw_intra by
     * more than the two roundings (2^-24 each) can make up, else checked one by one. */
    if (!((double)bw * (1.0 + 0x1p-21) < (double)g->bw_intra))
        for (int n = 1; n <= g->max_channels; n++)
            if (!(n * bw < n * g->bw_intra))
                return 0;
    sh->bw = bw;
    sh->int_bw = (int)bw;
    int n_amounts = a->milli.n_amounts;
    if (tp_accel__milli_amounts_at(a, g->pattern, bw, bw, sh->amounts) != n_amounts)
        return 0;
    /* The pass skips next channels that cannot start (search_dead.c): so must the shadow. */
    if (a->dead.next_dead && !tp_accel__dead_pass(a, a->milli.link_m, sh->amounts, g))
        return -1;
    for (int n = 0; n < s->n_nets; n++)
        sh->net_bw[n] = s->sys->nodes[TP_NODE_NET].nodes[n].net.bw;
    return 1;
}

/* The ladder does not go down to speeds that lose half of the best graph's (search.c
 * rung_lower_bw): a shadow there would record a pass that never comes. */
static int reachable(const tp_accel *a, float bw)
{
    const tp_graph *best = a->s->save;
    return !best->n_channels || bw / best->bw_inter > a->s->profile->lower_bw_share;
}

void tp_accel__shadow_saved(tp_accel *a)
{
    const tp_graph *best = a->s->save;
    /* The ladder's first passes end with such a graph (search.c run_ladder): none comes at B'. */
    if (best->n_channels * best->bw_inter >= a->s->sys->total_bw) {
        tp_accel__shadow_stop(a);
        return;
    }
    for (int j = 0; j < a->shadow.count; j++)
        if (alive(a, j) && !reachable(a, a->shadow.runs[j].bw))
            kill_shadow(a, j);
}

void tp_accel__shadow_begin(tp_accel *a, const tp_graph *g, const float *bws, int count)
{
    tp_shadows *sw = &a->shadow;
    tp_accel__shadow_stop(a);
    if (!a->milli.on || g->bw_intra != g->bw_inter || !sw->ok)
        return;
    for (int i = 0; i < count && sw->count < TP_SHADOWS && reachable(a, bws[i]); i++) {
        /* Set up first: most fail, and a failure may end the search. */
        int set = shadow_setup(a, sw->count, g, bws[i]);
        if (set < 0)
            break;
        if (set && !tp_accel__pass_known(a, g, bws[i])) {
            sw->alive |= 1u << sw->count;
            sw->count++;
        }
    }
    if (!sw->count)
        return;
    /* Every shadow starts from the pass's link values. */
    for (int l = 0; l < a->milli.n_links; l++)
        sw->link_m[l] = (tp_lanes){0} + a->milli.link_m[l];
    memset(sw->amount, 0, sizeof(sw->amount));
    for (int j = 0; j < sw->count; j++)
        for (int i = 0; i < a->milli.n_amounts; i++)
            for (int k = 0; k < 5; k++)
                sw->amount[i][k][j] = sw->runs[j].amounts[i].v[k];
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
    _Static_assert(TP_SHADOWS <= TP_LANES, "a lane per shadow");
    /* Zeroed: lanes without a shadow take 0 from values that stay defined. */
    a->shadow.link_m = calloc(n_links, sizeof(tp_lanes));
    if (!a->shadow.link_m)
        return tp_fail_nomem(err);
    for (int j = 0; j < TP_SHADOWS; j++) {
        a->shadow.runs[j].net_bw = malloc(n_nets * sizeof(float));
        if (!a->shadow.runs[j].net_bw)
            return tp_fail_nomem(err);
    }
    a->shadow.ok = 1;
    return TP_OK;
}

void tp_accel__shadow_free(tp_accel *a)
{
    free(a->shadow.link_m);
    a->shadow.link_m = NULL;
    for (int j = 0; j < TP_SHADOWS; j++) {
        free(a->shadow.runs[j].net_bw);
        a->shadow.runs[j].net_bw = NULL;
    }
}
