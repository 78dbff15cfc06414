/*
 * Stage 5: channels of the whole job from the per-rank graphs, as NCCL
 * 2.22.3's init.cc, connect.cc, rings.cc and trees.cc build them: preset,
 * combination across ranks, postset (rings, double binary trees, NVLS),
 * channel duplication and bounds, P2P channel counts.
 */
#ifndef TP_CHANNELS_H
#define TP_CHANNELS_H

#include "search.h"

/* Graph slots, in NCCL 2.22.3's order of computation. */
enum {
    TP_GRAPH_RING,
    TP_GRAPH_TREE,
    TP_GRAPH_COLLNET_CHAIN,
    TP_GRAPH_COLLNET_DIRECT,
    TP_GRAPH_NVLS,
    TP_GRAPH_COUNT
};

/* One channel's view from one rank. */
typedef struct tp_channel_rank {
    int ring_prev, ring_next;
    int tree_up, tree_down[3];
} tp_channel_rank;

/* The channels of the job: rings and trees for every rank. */
typedef struct tp_channels {
    int n_ranks;
    int n_nodes;
    int n_channels;          /* collective channels */
    int n_nvls_channels;
    int n_collnet_channels;
    int p2p_n_channels;
    int p2p_n_channels_per_peer;
    int *rings;              /* n_channels x n_ranks: ring order per channel (owned) */
    tp_channel_rank *ranks;  /* n_ranks x n_channels (owned) */
} tp_channels;

void tp_channels__free(tp_channels *ch);

#endif
