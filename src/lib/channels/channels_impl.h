/*
 * Private to the channels module (channels*.c): the state of one build, as
 * NCCL 2.22.3's initTransportsRank + ncclTopoPostset hold it, laid out for
 * hosts of a few kinds (per-local-rank templates for each kind, per-rank arrays
 * only where every rank needs its own value).
 */
#ifndef TP_CHANNELS_IMPL_H
#define TP_CHANNELS_IMPL_H

#include "channels/channels.h"

/* A topoRanks entry NCCL never wrote: it reads as 0 (calloc'd all-gather buffer). */
#define TP_UNSET INT32_MIN

/* The fields of NCCL's ncclTopoRanks, plus the preset tree of the channel. */
typedef enum tp_topo_field {
    TP_TR_RING_RECV,
    TP_TR_RING_SEND,
    TP_TR_RING_PREV,
    TP_TR_RING_NEXT,
    TP_TR_TREE_PARENT,
    TP_TR_TREE_CHILD0,
    TP_TR_TREE_CHILD1,
    TP_TR_TREE_UP,    /* channel->tree.up after preset */
    TP_TR_TREE_DOWN0, /* channel->tree.down[0] after preset */
    TP_TR_COUNT
} tp_topo_field;

/* One local rank's preset result, in its kind's representative host's rank numbers. */
typedef struct tp_topo_ranks {
    int v[TP_TR_COUNT][TP_MAXCHANNELS];
} tp_topo_ranks;

typedef struct tp_tree {
    int up;
    int down[TP_MAX_TREE_ARITY];
} tp_tree;

/* The preset of one kind of host, for its representative host. */
typedef struct tp_kind_ctx {
    tp_topo_ranks *tr; /* per local index */
    int *node_in_host; /* per local index: NCCL node within its host */
    int *first_local;  /* per node of a host: local index of its first rank */
    int nodes_per_host;
} tp_kind_ctx;

typedef struct tp_chan_ctx {
    const tp_channels_job *job;
    const tp_config *cfg;
    tp_log *log;
    tp_channels *ch;
    tp_arena scratch; /* every array below: one allocation per chunk, freed with the build */
    int n_ranks;
    tp_kind_ctx *kinds;           /* per kind of host */
    int *host_first;              /* n_hosts + 1: first rank of each host */
    int *rank_host;               /* per rank: its host */
    int *node_base;               /* n_hosts + 1: first NCCL node of each host */
    int *node_first;              /* per NCCL node: its first rank (nodesFirstRank) */
    int (*heads)[TP_MAXCHANNELS]; /* NVLS heads per domain */
    int *n_heads;                 /* per domain */
    int nc;                       /* search channels after the all-gather */
    bool cross_swap;              /* postset's crossNic ring exchange applies */
    bool cross_per_rank; /* ... decided by each rank's own ring (cross-nic-ring-per-rank) */
    int *ring_prev;      /* nc x n_ranks, after connectRings */
    int *ring_next;
    tp_tree *trees;          /* 2nc x n_ranks: channel c and its duplicate c+nc */
    int src[TP_MAXCHANNELS]; /* final channel -> base channel (0..2nc-1) */
    int n_channels;
} tp_chan_ctx;

/* n elements of `size` bytes from the build's scratch (NULL: out of memory), as they come or
 * cleared. */
static inline void *tp_chan__alloc(tp_chan_ctx *x, size_t n, size_t size)
{
    return tp_arena_alloc(&x->scratch, n * size);
}
static inline void *tp_chan__zalloc(tp_chan_ctx *x, size_t n, size_t size)
{
    return tp_arena_zalloc(&x->scratch, n * size);
}

/* Rank r's host, local index and kind of host. */
static inline int tp_chan__host(const tp_chan_ctx *x, int r)
{
    return x->rank_host[r];
}
static inline int tp_chan__local(const tp_chan_ctx *x, int r)
{
    return r - x->host_first[x->rank_host[r]];
}
static inline int tp_chan__kind(const tp_chan_ctx *x, int r)
{
    return x->job->host_kind[x->rank_host[r]];
}
/* Domain of rank r. */
static inline int tp_chan__domain(const tp_chan_ctx *x, int r)
{
    return x->job->kinds[tp_chan__kind(x, r)].domain_of[tp_chan__local(x, r)];
}
/* NCCL node (ring fragment) of rank r. */
static inline int tp_chan__node(const tp_chan_ctx *x, int r)
{
    return x->node_base[tp_chan__host(x, r)] +
           x->kinds[tp_chan__kind(x, r)].node_in_host[tp_chan__local(x, r)];
}
/* First rank (NCCL's nodesFirstRank) of node n. */
static inline int tp_chan__first_rank(const tp_chan_ctx *x, int n)
{
    return x->node_first[n];
}

/* From the representative host's rank numbers to `host`'s: what its ranks add. */
static inline int tp_chan__host_offset(const tp_chan_ctx *x, int host)
{
    int rep = x->job->kinds[x->job->host_kind[host]].rep_host;
    return x->host_first[host] - x->host_first[rep];
}

/* A template rank value moved by offset: -1 stays, unset reads as 0. (Inline: read per rank
 * and channel, millions of times for a large job.) */
static inline int tp_chan__shift_by(int v, int offset)
{
    if (v == TP_UNSET)
        return 0;
    return v < 0 ? v : v + offset;
}

/* A template rank value moved to `host`. */
static inline int tp_chan__shift(const tp_chan_ctx *x, int v, int host)
{
    return tp_chan__shift_by(v, tp_chan__host_offset(x, host));
}

/* What the topoRanks fields of rank r read of the job, looked up once for all its channels. */
typedef struct tp_rank_topo {
    const tp_topo_ranks *tr; /* its kind's template of its local index */
    int offset;              /* from the representative host's rank numbers to its host's */
    bool swap;               /* it exchanges ring channels c and c^1 (postset's crossNic) */
} tp_rank_topo;

static inline tp_rank_topo tp_chan__rank_topo(const tp_chan_ctx *x, int r)
{
    int host = tp_chan__host(x, r);
    /* NCCL 2.22.3 postset: with crossNic rings and an even channel count,
     * odd nodes exchange ring channels c and c^1 to alternate rails; from 2.28 only the ranks
     * whose own ring search ended at crossNic 2 (the all-gather's max is not theirs). */
    bool cross = x->cross_swap;
    if (x->cross_per_rank) {
        const tp_graph *ring = x->job->domains[tp_chan__domain(x, r)].graphs[TP_GRAPH_RING];
        cross = ring && ring->cross_nic == 2;
    }
    return (tp_rank_topo){.tr = &x->kinds[tp_chan__kind(x, r)].tr[tp_chan__local(x, r)],
                          .offset = tp_chan__host_offset(x, host),
                          .swap = cross && tp_chan__node(x, r) % 2 == 1};
}

/* topoRanks field of a rank for channel c, after postset's crossNic exchange. */
static inline int tp_chan__topo_of(const tp_rank_topo *t, tp_topo_field field, int c)
{
    if (t->swap && field <= TP_TR_RING_NEXT)
        c ^= 1;
    return tp_chan__shift_by(t->tr->v[field][c], t->offset);
}

/* Room for a "Ring" or "Tree" line (a label, six numbers, separators) or a "Trees" entry. */
#define TP_CHAN_LINE_SIZE 96
#define TP_TREE_ENTRY_SIZE 96

/* "<c> : <from> -> <me> -> " (c as "%0*d" of zero_width), after the label: the head NCCL's
 * "Ring" and "Tree" lines share; the end returned. */
static inline char *tp_chan__put_line_head(char *p, int c, int zero_width, int from, int me)
{
    p = tp_put_int(p, c, zero_width);
    p = tp_put_int(TP_PUT_LIT(p, " : "), from, 0);
    return TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, " -> "), me, 0), " -> ");
}

/* connectTrees for every rank, with the reported rank's "Tree" lines. */
tp_status tp_chan__connect_trees(tp_chan_ctx *x, tp_error *err);
/* connectNvls for the reported rank: "NVLS Head" and "NVLS Trees" lines. */
void tp_chan__connect_nvls(tp_chan_ctx *x);
/* Every rank's NVLS head and tree ends into x->ch->nvls (after tp_chan__connect_nvls). */
tp_status tp_chan__nvls_ranks(tp_chan_ctx *x, tp_error *err);
/* ncclBuildRings: the rings array, "Channel" lines (rank 0), loop checks. */
tp_status tp_chan__build_rings(tp_chan_ctx *x, tp_error *err);

#endif
