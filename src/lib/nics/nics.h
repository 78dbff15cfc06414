/*
 * Multi-NIC view of a plan: which NET device every rank of a node uses, per
 * collective (ring) channel and per remote P2P peer, the rail a channel keeps
 * or crosses, PXN relays and GPU Direct RDMA, as NCCL 2.22.3 decides them
 * (search.cc ncclTopoGetNetDev, paths.cc ncclTopoGetIntermediateRank /
 * ncclTopoGetPxnRanks / ncclTopoCheckGdr, transport/net.cc send/recv setup).
 *
 * Also the step that applies NCCL_IB_HCA and (as a what-if) NCCL_IB_MERGE_NICS
 * to the topology XML's <net> elements before the system is built.
 */
#ifndef TP_NICS_H
#define TP_NICS_H

#include "plan/plan.h"

/* Length of a NET device name kept for reports ("mlx5_0+mlx5_1"). */
#define TP_NIC_NAME_MAX 136

/*
 * The channel of ring or tree graph `g` whose NETs collective channel `channel`
 * uses: NCCL's ncclTopoGetNetDev takes it modulo graph->nChannels, which init.cc
 * has lowered to the job's combined count (min over ranks of ring and tree) by
 * then, not the node's own searched count (they differ in heterogeneous jobs).
 */
int tp_nics__graph_channel(const tp_plan *plan, const tp_graph *g, int channel);
/* NUMA id of the CPU closest to node `index` of `type`, -1 when none. */
int tp_nics__local_numa(const tp_system *sys, int type, int index);
/* A NIC's own speed (GB/s) as the topology gives it, before any search reserved part of it. */
float tp_nics__own_speed(const tp_plan *plan, const tp_node *net);
/* The name attribute of the <net> with device number `dev` under e, or NULL. */
const char *tp_nics__xml_net_name(const tp_xml_elem *e, int dev);

/* One use of a NET device by a rank for a ring channel (its node boundary). */
typedef struct tp_nic_use {
    int channel;
    bool send;      /* exit: send to the next node; else entry: receive */
    int net;        /* NET device number on this node */
    int proxy_rank; /* rank whose proxy drives the NIC: != rank means PXN */
    int gdr;
    int peer_rank; /* the rank at the other end (another node) */
    int peer_net;  /* the NET device that rank uses (the other end of the rail) */
} tp_nic_use;

/* NCCL 2.22.3 device.h NCCL_MAX_DEV_WORK_P2P_PER_BATCH: peers per P2P channel base step. */
#define TP_P2P_PER_BATCH 8

/* One part of a P2P send: the channel NCCL's schedule puts it on, and that channel's NIC. */
typedef struct tp_nic_part {
    int part, channel;
    int net;        /* NET device number on this node */
    int64_t net_id; /* its NET node id */
    int proxy_rank; /* != rank: PXN relay */
    int gdr;        /* GPU Direct RDMA of the send (read) */
} tp_nic_part;

/* P2P sends to one remote peer (representative of its local index). */
typedef struct tp_nic_p2p {
    int peer_rank;
    int net;        /* NIC of part 0 */
    int proxy_rank; /* != rank: PXN relay (part 0) */
    int gdr;        /* GPU Direct RDMA of the send (read, part 0) */
    int round;      /* NCCL's p2p schedule round of this send, -1 when not computed */
    int n_nets;     /* distinct NICs over the parts */
    int nets[TP_MAXCHANNELS];
    int n_parts; /* p2pnChannelsPerPeer: parts of a large send */
    tp_nic_part parts[TP_MAXCHANNELS];
    /* Receives from this peer: its send's round and parts, each on this rank's NIC of the
     * part's channel (net.cc recvSetup: ncclTopoGetNetDev with itself as peer, no PXN). */
    int recv_round;
    int n_recv_parts;
    tp_nic_part recv_parts[TP_MAXCHANNELS];
} tp_nic_p2p;

/* A tree or NVLS channel end of a rank that crosses nodes, and its NIC. */
typedef struct tp_nic_graph_use {
    int channel;
    const char *role; /* "up" / "down" (tree), "head" (NVLS) */
    int peer_rank;    /* tree: the rank on the other node; NVLS: -1 */
    int net;
    int64_t net_id;
    int proxy_rank; /* sends: PXN relay when != rank */
} tp_nic_graph_use;

typedef struct tp_nic_rank {
    int rank, local, dev;
    int64_t bus_id;
    int numa;      /* NUMA id of the GPU's closest CPU, -1 if none */
    int near_net;  /* NET device closest to the GPU, -1 without NETs */
    int near_type; /* its path type */
    float near_bw;
    int recv_net, recv_gdr; /* P2P receives on P2P channel 0 (see each peer's recv_parts) */
    tp_nic_use *uses;
    int n_uses;
    tp_nic_p2p *peers;
    int n_peers;
    int *pxn_ranks; /* ncclTopoGetPxnRanks */
    int n_pxn;
    bool pxn_crash;         /* NCCL 2.22.3 would crash there (P2P PXN level 1) */
    tp_nic_graph_use *tree; /* tree channel ends to other nodes */
    int n_tree;
    tp_nic_graph_use *nvls; /* NVLS channels this rank heads, with their NIC */
    int n_nvls;
} tp_nic_rank;

/* One ring channel at this node: where it enters and leaves, and its rails. */
typedef struct tp_nic_channel {
    int entry_rank, entry_net; /* receives from the previous node (-1: none) */
    int exit_rank, exit_net;   /* sends to the next node */
    int prev_exit_net;         /* NIC the previous node sends from: rail into this node */
    int next_entry_net;        /* NIC the next node receives on: rail out of this node */
} tp_nic_channel;

typedef struct tp_nic_net {
    int dev;
    int64_t id;
    char name[TP_NIC_NAME_MAX];
    int numa;
    float bw;
    uint64_t asic;
    int port;
    int ring_uses; /* channel ends (entry or exit) on this NIC */
    int p2p_uses;  /* (rank, peer) P2P sends on this NIC */
} tp_nic_net;

typedef struct tp_nics {
    const char *nccl_version; /* the version the plan models (static storage) */
    int node, n_nodes, per_node;
    int first_rank; /* the node's first rank */
    int64_t cross_nic;
    int pxn_level; /* effective: 0 when NCCL_PXN_DISABLE=1 */
    int ring_channels;
    int p2p_channels;
    int p2p_per_peer;
    bool p2p_schedule; /* rounds and parts computed (NCCL nodes are the hosts) */
    tp_nic_net *nets;
    int n_nets;
    tp_nic_rank *ranks;
    int n_ranks;
    tp_nic_channel *channels; /* ring_channels entries */
    tp_log findings;          /* plain-words findings, in order */
} tp_nics;

/*
 * The channel of part `part` of rank's P2P sends to peer: NCCL 2.22.3's p2p
 * schedule when it applies (see tp_nics.p2p_schedule), else channel `part`;
 * -1 past the last part.
 */
int tp_nics__p2p_part_channel(const tp_plan *plan, int rank, int peer, int part);

/*
 * Build the view of the reported rank's node from a finished plan. Advice in
 * the findings is verified by re-planning with the advised setting.
 */
tp_status tp_nics__build(tp_nics *out, const tp_plan *plan, tp_error *err);
/* tp_nics__build without findings (and so without re-planning). */
tp_status tp_nics__build_bare(tp_nics *out, const tp_plan *plan, tp_error *err);
/* Ring channels that change rails at a boundary into or out of this node; *total: channels with a
 * NIC. */
int tp_nics__rail_crossings(const tp_nics *nics, int *total);
/*
 * Re-plan `plan`'s topology and job with one more setting (key=value) and
 * build its NIC view without findings (free with tp_nics__free). Fails when
 * the re-planned job fails.
 */
tp_status tp_nics__replan(tp_nics *out, const tp_plan *plan, const char *key, const char *value,
                          tp_error *err);
/* tp_nics__replan, counting the rail crossings of the result. */
tp_status tp_nics__replan_crossings(const tp_plan *plan, const char *key, const char *value,
                                    int *crossings, int *total, tp_error *err);
void tp_nics__free(tp_nics *nics);
/* Fill nics->findings from the built view and the plan's NIC notes (nics_findings.c). */
void tp_nics__findings(tp_nics *nics, const tp_plan *plan);
/* The NET entry of dev, or NULL. */
const tp_nic_net *tp_nics__net(const tp_nics *nics, int dev);

#endif
