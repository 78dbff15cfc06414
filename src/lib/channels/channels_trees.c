/*
 * Double binary trees across nodes (NCCL 2.22.3 trees.cc, connect.cc
 * connectTrees) and the NVLS heads and trees (connectNvls).
 */
#include "channels/channels_impl.h"

#include <stdlib.h>

void tp_channels__btree(int n, int rank, int *up, int *down0, int *down1, int *child_type)
{
    int bit = 1;
    while (bit < n && !(bit & rank))
        bit <<= 1;
    if (rank == 0) {
        /* NCCL 2.22.3 leaves the child type unset for the root; it is never read. */
        *up = *down0 = -1;
        *down1 = n > 1 ? bit >> 1 : -1;
        *child_type = 0;
        return;
    }
    int parent = (rank ^ bit) | (bit << 1);
    if (parent >= n)
        parent = rank ^ bit;
    *child_type = rank < parent ? 0 : 1;
    *up = parent;
    int lowbit = bit >> 1;
    *down0 = lowbit == 0 ? -1 : rank - lowbit;
    int d1 = lowbit == 0 ? -1 : rank + lowbit;
    /* NCCL 2.22.3 shrinks the second child until it is in range, one step late. */
    while (d1 >= n) {
        d1 = lowbit == 0 ? -1 : rank + lowbit;
        lowbit >>= 1;
    }
    *down1 = d1;
}

/* Map a tree position through f: mirror (even n) or shift by one (odd n). */
static int dtree_map(int v, int n)
{
    if (v == -1)
        return -1;
    return n % 2 == 1 ? (v + 1) % n : n - 1 - v;
}

void tp_channels__dtree(int n, int rank, int t0[4], int t1[4])
{
    tp_channels__btree(n, rank, &t0[0], &t0[1], &t0[2], &t0[3]);
    /* NCCL 2.22.3: the second tree is the first one shifted (odd n) or mirrored. */
    int other = n % 2 == 1 ? (rank - 1 + n) % n : n - 1 - rank;
    int u, d0, d1;
    tp_channels__btree(n, other, &u, &d0, &d1, &t1[3]);
    t1[0] = dtree_map(u, n);
    t1[1] = dtree_map(d0, n);
    t1[2] = dtree_map(d1, n);
}

/* Every rank's channel trees as preset leaves them (chain inside the node), rank by rank. */
static void init_trees(tp_chan_ctx *x)
{
    size_t nr = (size_t)x->n_ranks;
    for (size_t r = 0; r < nr; r++) {
        const tp_rank_topo rt = tp_chan__rank_topo(x, (int)r);
        for (int c = 0; c < x->nc; c++) {
            tp_tree t = {.down = {-1, -1, -1}};
            t.up = tp_chan__topo_of(&rt, TP_TR_TREE_UP, c);
            t.down[0] = tp_chan__topo_of(&rt, TP_TR_TREE_DOWN0, c);
            x->trees[(size_t)c * nr + r] = t;
            x->trees[(size_t)(c + x->nc) * nr + r] = t;
        }
    }
}

/* setTreeDown: append a child in the first free slot. */
static tp_status set_down(tp_chan_ctx *x, tp_tree *t, int rank, int child, tp_error *err)
{
    int i = 0;
    while (i < TP_MAX_TREE_ARITY && t->down[i] >= 0)
        i++;
    if (i == TP_MAX_TREE_ARITY) {
        if (rank == x->job->rank)
            tp_log_warn(x->log, "Internal error : tree already has %d children (%d %d %d)", i,
                        t->down[0], t->down[1], t->down[2]);
        return tp_fail(err, TP_ERR_GRAPH, NULL, 0, 0, "rank %d: tree already has %d children", rank,
                       i);
    }
    t->down[i] = child;
    return TP_OK;
}

static bool rank_ok(const tp_chan_ctx *x, int r)
{
    return r >= 0 && r < x->n_ranks;
}

/* A node's part in connectTrees on the channel at hand. */
typedef struct tp_tree_node {
    int dtree[2][4]; /* its two trees across nodes (tp_channels__dtree), the same on each channel */
    tp_rank_topo first; /* its first rank's topoRanks */
    int ends[3]; /* its parent, child0 and child1 ranks on the channel: read once, used often */
} tp_tree_node;

/* connectTrees for the parent and the children ranks of node n, channel c. */
static tp_status connect_node(tp_chan_ctx *x, int c, int n, const tp_tree_node *nodes,
                              tp_error *err)
{
    const int(*t)[4] = nodes[n].dtree;
    int ttp = nodes[n].ends[0], ttc[2] = {nodes[n].ends[1], nodes[n].ends[2]};
    if (!rank_ok(x, ttp) || !rank_ok(x, ttc[0]) || !rank_ok(x, ttc[1]))
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "channel %d: node %d has no tree ends", c,
                       n);
    for (int k = 0; k < 2; k++) {
        tp_tree *trees = x->trees + (size_t)(c + k * x->nc) * (size_t)x->n_ranks;
        if (t[k][0] != -1) /* up: the parent node's child0 or child1, by the child type */
            trees[ttp].up = nodes[t[k][0]].ends[t[k][3] == 0 ? 1 : 2];
    }
    for (int j = 0; j < 2; j++) {
        for (int k = 0; k < 2; k++) {
            int d = t[k][1 + j];
            tp_tree *tree = &x->trees[(size_t)(c + k * x->nc) * (size_t)x->n_ranks + ttc[j]];
            if (d == -1)
                continue;
            tp_status st = set_down(x, tree, ttc[j], nodes[d].ends[0], err);
            if (st != TP_OK)
                return st;
        }
    }
    return TP_OK;
}

/* The reported rank's "Tree" lines for channel c (and its duplicate); ends: its node's. */
static void log_tree(const tp_chan_ctx *x, int c, const int ends[3])
{
    int me = x->job->rank;
    if (me != ends[0] && me != ends[1] && me != ends[2])
        return;
    for (int k = 0; k < 2; k++) {
        int ch = c + k * x->nc;
        const tp_tree *t = &x->trees[(size_t)ch * (size_t)x->n_ranks + (size_t)me];
        /* "Tree %d : %d -> %d -> %d/%d/%d" */
        char *p = tp_log_begin_line(x->log, TP_SUB_GRAPH, TP_CHAN_LINE_SIZE);
        if (!p)
            return;
        p = tp_chan__put_line_head(TP_PUT_LIT(p, "Tree "), ch, 0, t->up, me);
        for (int i = 0; i < 2; i++)
            p = TP_PUT_LIT(tp_put_int(p, t->down[i], 0), "/");
        tp_log_end_line(x->log, tp_put_int(p, t->down[2], 0));
    }
}

tp_status tp_chan__connect_trees(tp_chan_ctx *x, tp_error *err)
{
    int nn = x->ch->n_nodes;
    tp_tree_node *nodes = tp_chan__alloc(x, (size_t)nn + 1, sizeof(*nodes));
    if (!nodes)
        return tp_fail_nomem(err);
    for (int n = 0; n < nn; n++) {
        tp_channels__dtree(nn, n, nodes[n].dtree[0], nodes[n].dtree[1]);
        nodes[n].first = tp_chan__rank_topo(x, tp_chan__first_rank(x, n));
    }
    init_trees(x);
    tp_status st = TP_OK;
    for (int c = 0; c < x->nc && st == TP_OK; c++) {
        for (int n = 0; n < nn; n++)
            for (int f = 0; f < 3; f++)
                nodes[n].ends[f] = tp_chan__topo_of(&nodes[n].first, TP_TR_TREE_PARENT + f, c);
        for (int n = 0; n < nn && st == TP_OK; n++)
            st = connect_node(x, c, n, nodes, err);
        if (st == TP_OK)
            log_tree(x, c, nodes[x->ch->node].ends);
    }
    return st;
}

/* NVLS head h of node n (postset's nvlsHeads[h * nNodes + n]). */
static int nvls_head(const tp_chan_ctx *x, int h, int n)
{
    int first = tp_chan__first_rank(x, n);
    return tp_chan__shift(x, x->heads[tp_chan__domain(x, first)][h], tp_chan__host(x, first));
}

static void log_nvls_heads(const tp_chan_ctx *x, int n_heads)
{
    for (int h = 0; h < n_heads; h++) {
        tp_buf line = {0};
        tp_buf_printf(&line, "NVLS Head %2d:", h);
        for (int n = 0; n < x->ch->n_nodes && n < TP_NVLS_HEAD_MAX_NODES; n++)
            tp_buf_printf(&line, " %2d", nvls_head(x, h, n));
        tp_log_info_sub(x->log, TP_SUB_INIT, "%s", tp_buf_str(&line));
        tp_buf_free(&line);
    }
}

/* The reported rank's NVLS tree ends: up, down0, down1 of trees 0 and 1. */
static void nvls_tree_ends(const tp_chan_ctx *x, int n_heads, int ends[2][3])
{
    int t[2][4], me = x->job->rank, node = x->ch->node;
    tp_channels__dtree(x->ch->n_nodes, node, t[0], t[1]);
    for (int k = 0; k < 2; k++)
        ends[k][0] = ends[k][1] = ends[k][2] = -1;
    for (int h = 0; h < n_heads; h++) {
        if (nvls_head(x, h, node) != me)
            continue;
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 3; i++)
                ends[k][i] = t[k][i] == -1 ? -1 : nvls_head(x, h, t[k][i]);
        break;
    }
}

void tp_chan__connect_nvls(tp_chan_ctx *x)
{
    /* NCCL 2.22.3 postset: the fewest heads over the nodes' first ranks. */
    int fewest = -1;
    for (int n = 0; n < x->ch->n_nodes; n++) {
        int count = x->n_heads[tp_chan__domain(x, tp_chan__first_rank(x, n))];
        if (fewest < 0 || count < fewest)
            fewest = count;
    }
    int n_heads = x->ch->nvls_heads = fewest < 0 ? 0 : fewest;
    if (n_heads == 0) {
        x->ch->n_nvls_channels = 0;
        return;
    }
    int head_rank = -1, me = x->job->rank, nn = x->ch->n_nodes;
    for (int h = 0; h < n_heads; h++)
        if (nvls_head(x, h, x->ch->node) == me)
            head_rank = h;
    if (nn == 1)
        return;
    if (x->ch->node == 0)
        log_nvls_heads(x, n_heads);
    int ends[2][3], down[2][3];
    nvls_tree_ends(x, n_heads, ends);
    for (int k = 0; k < 2; k++) {
        int ix = 1;
        down[k][0] = x->n_ranks + 1 + head_rank;
        down[k][1] = down[k][2] = -1;
        if (ends[k][1] != -1)
            down[k][ix++] = ends[k][1];
        if (ends[k][2] != -1)
            down[k][ix] = ends[k][2];
    }
    tp_log_info_sub(x->log, TP_SUB_GRAPH, "NVLS Trees : %d/%d/%d->%d->%d %d/%d/%d->%d->%d",
                    down[0][0], down[0][1], down[0][2], me, ends[0][0], down[1][0], down[1][1],
                    down[1][2], me, ends[1][0]);
}

/* NCCL 2.22.3 connectNvls for every rank: its head index, down, and the NVLS trees' ends. */
tp_status tp_chan__nvls_ranks(tp_chan_ctx *x, tp_error *err)
{
    int n_heads = x->ch->nvls_heads, nn = x->ch->n_nodes;
    if (n_heads <= 0)
        return TP_OK;
    tp_nvls_rank *v = malloc((size_t)x->n_ranks * sizeof(*v));
    if (!v)
        return tp_fail_nomem(err);
    for (int r = 0; r < x->n_ranks; r++)
        v[r] = (tp_nvls_rank){.head_rank = -1,
                              .down = x->n_ranks,
                              .tree_up = {-1, -1},
                              .tree_down = {{-1, -1, -1}, {-1, -1, -1}}};
    for (int n = 0; n < nn; n++) {
        int t[2][4];
        tp_channels__dtree(nn, n, t[0], t[1]);
        for (int h = 0; h < n_heads; h++) {
            int r = nvls_head(x, h, n);
            if (r < 0 || r >= x->n_ranks || v[r].head_rank >= 0)
                continue; /* a rank heading several: NCCL keeps the first head's trees */
            v[r].head_rank = h;
            v[r].down = x->n_ranks + 1 + h;
            for (int k = 0; k < 2 && nn > 1; k++) {
                int ix = 1;
                v[r].tree_up[k] = t[k][0] == -1 ? -1 : nvls_head(x, h, t[k][0]);
                v[r].tree_down[k][0] = v[r].down;
                for (int i = 1; i < 3; i++)
                    if (t[k][i] != -1)
                        v[r].tree_down[k][ix++] = nvls_head(x, h, t[k][i]);
            }
        }
    }
    x->ch->nvls = v;
    return TP_OK;
}
