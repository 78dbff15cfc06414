/*
 * Channels that cannot start: with NETs, NCCL 2.22.3's channel is
 *   NET -> g1 -> g2 -> ... -> gn, with returns to a NET from some GPUs
 * (ncclTopoSearchRecNet, ncclTopoSearchTryGpu, ncclTopoSearchRecGpu at
 * backToNet): a Balanced Tree sends bw_inter / 2 back from g1 and from g2,
 * a Tree bw_inter from g1, a Split Tree from g2, a Ring from gn. On a PCIe
 * tree the switch uplinks carry all of it: a channel starting inside a
 * switch comes down its uplink from the NET, goes back up to the NET, and
 * has to leave the switch (and come back into it) to visit the other GPUs.
 *
 * A side here is a bridge side S of GPUs (search_bound.c) with its link
 * out (`up`: every route from a GPU of S to any GPU outside S or to any
 * NET takes it) and its link in (`down`: every route from a GPU outside S
 * or from any NET into S takes it). A channel whose first GPU is in S has
 * its GPUs in blocks inside and outside S; with b blocks inside:
 *   down >= bw_inter (NET -> g1) + (b - 1) bw_intra (entries),
 *   up   >= (b - 1 + [last GPU outside]) bw_intra (exits) + its returns from S,
 * each hop taking at least the plain amount (the Intel PCI share is more).
 * A complete channel holds all of its reservations at once, so it exists
 * only if both fit in the link values at the pass start (milli mode:
 * exact). When for every GPU some side around it cannot hold the cheapest
 * such channel, no channel starts anywhere: the pass finds no graph.
 */
#include "search/accel/accel.h"

#include <stdlib.h>

/* Whether route cp takes link li. */
static int route_takes(const tp_accel *a, const tp_cpath *cp, int li)
{
    for (int k = 0; k < cp->count; k++)
        if (tp_accel__mhop(a, &cp->hops[k])->li == li)
            return 1;
    return 0;
}

/* Every route between a GPU of side and every NET takes up (out) and down (in). */
static int nets_cross(const tp_accel *a, uint64_t side, int up, int down)
{
    const tp_search_ctx *s = a->s;
    const tp_cpath *to_net = s->routes[TP_NODE_GPU][TP_NODE_NET];
    const tp_cpath *from_net = s->routes[TP_NODE_NET][TP_NODE_GPU];
    if (!to_net || !from_net)
        return 0;
    for (int g = 0; g < s->n_gpus; g++) {
        if (!((side >> g) & 1))
            continue;
        for (int n = 0; n < s->n_nets; n++)
            if (!route_takes(a, &to_net[g * s->n_nets + n], up) ||
                !route_takes(a, &from_net[n * s->n_gpus + g], down))
                return 0;
    }
    return 1;
}

tp_status tp_accel__sides_init(tp_accel *a)
{
    tp_bound *b = &a->bound;
    b->n_sides = 0;
    if (a->s->n_nets == 0 || b->n_bridges == 0)
        return TP_OK;
    size_t pairs = (size_t)b->back_first[b->n_bridges];
    b->sides = tp_arena_alloc(&b->tables, (pairs ? pairs : 1) * sizeof(*b->sides));
    if (!b->sides)
        return TP_ERR_NOMEM;
    int n = a->s->n_gpus;
    uint64_t all = tp_accel__gpu_mask(n), covered = 0;
    for (int i = 0; i < b->n_bridges; i++) {
        for (int k = b->back_first[i]; k < b->back_first[i + 1]; k++) {
            int up = b->bridge_link[i], down = b->bridge_link[b->back[k]];
            uint64_t side = b->bridge_side[i];
            if (nets_cross(a, side, up, down)) {
                b->sides[b->n_sides++] = (tp_side){
                    .gpus = side, .size = tp_accel__popcount(side), .up = up, .down = down};
                covered |= side;
            }
        }
    }
    if (covered != all)
        b->n_sides = 0; /* a GPU in no side: a channel may always start there */
    return TP_OK;
}

void tp_accel__sides_free(tp_accel *a)
{
    a->bound.sides = NULL; /* in the bound's tables */
    a->bound.n_sides = 0;
}

/* What a channel reserves, in thousandths: the plain amounts of the pass. */
typedef struct channel_amounts {
    int64_t intra, inter; /* GPU -> GPU; NET -> GPU */
    int64_t back;         /* one return to a NET */
    int pattern;
} channel_amounts;

/* What the returns of a channel take out of side S (first GPU in S). */
static int64_t returns_out(const channel_amounts *c, int second_in, int last_in)
{
    switch (c->pattern) {
    case TP_PATTERN_BALANCED_TREE:
        return c->back * (second_in ? 2 : 1);
    case TP_PATTERN_TREE:
        return c->back;
    case TP_PATTERN_SPLIT_TREE:
        return second_in ? c->back : 0;
    default: /* Ring */
        return last_in ? c->back : 0;
    }
}

/* Whether a channel with b blocks in S fits the side's links (first GPU in S). */
static int fits(const tp_accel *a, const tp_side *sd, const channel_amounts *c, int b,
                int second_in, int last_in)
{
    int64_t down = c->inter + (int64_t)(b - 1) * c->intra;
    int64_t up = (int64_t)(b - 1 + !last_in) * c->intra + returns_out(c, second_in, last_in);
    return down <= a->milli.link_m[sd->down] && up <= a->milli.link_m[sd->up];
}

/*
 * Whether some channel starting in side sd fits its links: for each choice
 * of g2 in S or not and of the last GPU in S or not, the fewest blocks in S
 * (more only take more). S holds k GPUs, n - k are outside.
 */
static int side_can_start(const tp_accel *a, const tp_side *sd, const channel_amounts *c)
{
    int k = sd->size, out = a->s->n_gpus - k;
    for (int second_in = 0; second_in <= 1; second_in++) {
        for (int last_in = 0; last_in <= 1; last_in++) {
            /* A second block in S: to end there, or to visit S's rest after leaving at g2. */
            int b = last_in || (!second_in && k > 1) ? 2 : 1;
            int in_needed = (second_in ? 2 : 1) + (b - 1);
            int out_blocks = b - 1 + !last_in;
            if (in_needed <= k && out_blocks <= out && fits(a, sd, c, b, second_in, last_in))
                return 1;
        }
    }
    return 0;
}

int tp_accel__no_start(const tp_accel *a, const tp_graph *g, const tp_amount *amounts)
{
    const tp_bound *b = &a->bound;
    int n = a->s->n_gpus;
    if (b->n_sides == 0 || tp_search__head_pattern(g->pattern))
        return 0;
    channel_amounts c = {.intra = amounts[0].v[0], .inter = amounts[1].v[0], .pattern = g->pattern};
    c.back = g->pattern == TP_PATTERN_BALANCED_TREE ? amounts[2].v[0] : c.inter;
    uint64_t all = tp_accel__gpu_mask(n), blocked = 0;
    for (int i = 0; i < b->n_sides && blocked != all; i++) {
        const tp_side *sd = &b->sides[i];
        if ((sd->gpus & ~blocked) && !side_can_start(a, sd, &c))
            blocked |= sd->gpus;
    }
    return blocked == all;
}
