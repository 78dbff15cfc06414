/*
 * The NIC view of a plan: for every rank of the reported rank's node, the NET
 * device of each ring channel's node boundary and of P2P sends to remote
 * peers, with PXN proxies and GDR, as NCCL 2.22.3 computes them.
 *
 * Collective channels: ncclTopoGetNetDev with the ring graph (search.cc): the
 * rank heading channel c (graph intra[c*ngpus]) receives through inter[2c],
 * the other NET user sends through inter[2c+1]; c is taken modulo the job's
 * combined channel count (tp_nics__graph_channel). The proxy comes from
 * ncclTopoGetIntermediateRank, used on the send side only (net.cc recvSetup: no PXN on receive).
 * GDR: ncclTopoCheckGdr with read=1 for send, 0 for receive. P2P: ncclTopoGetNetDev without a graph
 * (paths.c implements it).
 */
#include "nics/nics.h"

#include <stdlib.h>
#include <string.h>

/* What one rank's pipeline gives: its domain's system, ring graph, job view. */
typedef struct rank_ctx {
    const tp_plan *plan;
    const tp_system *sys;
    const tp_graph *ring;
    tp_job_view view;
    int rank, gpu;
} rank_ctx;

static int per_node(const tp_plan *plan)
{
    return plan->n_gpus_per_node;
}

/* First rank of host h. */
static int first_rank(const tp_plan *plan, int h)
{
    return plan->host_first_rank[h];
}

/* Whether rank r is on the home host. */
static bool on_home_host(const tp_plan *plan, int r)
{
    return r >= first_rank(plan, plan->home_host) && r < first_rank(plan, plan->home_host + 1);
}

static bool rank_ctx_init(rank_ctx *c, const tp_plan *plan, int local)
{
    int d = plan->domain_of ? plan->domain_of[local] : -1;
    memset(c, 0, sizeof(*c));
    if (d < 0 || d >= plan->n_domains || !plan->domains[d].sys)
        return false;
    c->plan = plan;
    c->sys = plan->domains[d].sys;
    c->ring = plan->domains[d].graphs[TP_GRAPH_RING];
    c->rank = first_rank(plan, plan->home_host) + local;
    c->gpu = tp_paths__rank_to_index(c->sys, c->rank);
    c->view = (tp_job_view){
        .n_ranks = first_rank(plan, plan->job.n_nodes),
        .n_nodes = plan->job.n_nodes,
        .rank = c->rank,
        .local_n_ranks = per_node(plan),
        .rank_devs = plan->rank_devs,
    };
    return c->gpu >= 0;
}

static int net_dev_of(const tp_system *sys, int64_t id)
{
    int n = tp_paths__id_to_index(sys, TP_NODE_NET, id);
    return n < 0 ? -1 : sys->nodes[TP_NODE_NET].nodes[n].net.dev;
}

static int64_t gpu_bus_id(const rank_ctx *c)
{
    return c->sys->nodes[TP_NODE_GPU].nodes[c->gpu].id;
}

/* NUMA id of the CPU closest to a node: NCCL 2.22.3 gives CPU nodes their NUMA id. */
int tp_nics__local_numa(const tp_system *sys, int type, int index)
{
    int cpus[TP_MAX_NODES], n = 0;
    if (sys->nodes[TP_NODE_CPU].count == 0 || !sys->nodes[type].nodes[index].paths[TP_NODE_CPU])
        return -1;
    tp_paths__get_local(sys, type, index, TP_NODE_CPU, cpus, &n, NULL);
    return n > 0 ? (int)TP_ID_LOCAL_ID(sys->nodes[TP_NODE_CPU].nodes[cpus[0]].id) : -1;
}

int tp_nics__graph_channel(const tp_plan *plan, const tp_graph *g, int channel)
{
    int n = plan->channels.search_channels;
    /* a job-wide count is never above a node's own (it is their minimum) */
    if (n <= 0 || n > g->n_channels)
        n = g->n_channels;
    return channel % n;
}

/* NCCL 2.22.3 ncclTopoGetNetDev with a graph: the head of the channel uses the entry NET. */
static int64_t graph_net(const tp_plan *plan, const tp_graph *g, int ngpus, int rank, int channel)
{
    int c = tp_nics__graph_channel(plan, g, channel);
    int index = g->intra[c * ngpus] == rank ? 0 : 1;
    return g->inter[c * 2 + index];
}

/* The NET device `rank` (any node, planned on its kind's representative host) uses for channel. */
static int rank_graph_net(const tp_plan *plan, int rank, int channel)
{
    int h = 0;
    while (h + 1 < plan->job.n_nodes && first_rank(plan, h + 1) <= rank)
        h++;
    const tp_host_kind *k = tp_plan__kind_of_host(plan, h);
    int local = rank - first_rank(plan, h);
    int d = k->domain_of ? k->domain_of[local] : -1;
    if (d < 0 || d >= k->n_domains || !k->domains[d].sys)
        return -1;
    const tp_system *sys = k->domains[d].sys;
    const tp_graph *ring = k->domains[d].graphs[TP_GRAPH_RING];
    if (!ring || ring->n_channels <= 0)
        return -1;
    int ngpus = sys->nodes[TP_NODE_GPU].count;
    return net_dev_of(sys,
                      graph_net(plan, ring, ngpus, first_rank(plan, k->rep_host) + local, channel));
}

static tp_status add_use(tp_nic_rank *r, const rank_ctx *c, int channel, bool send, int peer,
                         tp_error *err)
{
    int ngpus = c->sys->nodes[TP_NODE_GPU].count;
    int64_t id = graph_net(c->plan, c->ring, ngpus, c->rank, channel);
    tp_nic_use *u = &r->uses[r->n_uses];
    *u = (tp_nic_use){.channel = channel,
                      .send = send,
                      .net = net_dev_of(c->sys, id),
                      .proxy_rank = c->rank,
                      .peer_rank = peer};
    if (u->net < 0)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                       "ring channel %d: NET %llx not in the "
                       "system",
                       channel, (unsigned long long)id);
    tp_status st = TP_OK;
    if (send)
        st = tp_paths__get_intermediate_rank(c->sys, c->rank, id, &u->proxy_rank, NULL, err);
    if (st == TP_OK)
        st = tp_paths__check_gdr(c->sys, c->plan->cfg, gpu_bus_id(c), id, send ? 1 : 0, &u->gdr,
                                 err);
    u->peer_net = rank_graph_net(c->plan, peer, channel);
    r->n_uses++;
    return st;
}

/* The ring channels whose previous or next rank is on another node. */
static tp_status ring_uses(tp_nic_rank *r, const rank_ctx *c, tp_error *err)
{
    const tp_channels *ch = &c->plan->channels;
    if (!ch->ranks || !c->ring || c->ring->n_channels <= 0 || ch->n_channels <= 0)
        return TP_OK;
    r->uses = calloc((size_t)ch->n_channels * 2, sizeof(*r->uses));
    if (!r->uses)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    for (int k = 0; k < ch->n_channels && st == TP_OK; k++) {
        const tp_channel_rank *cr = &ch->ranks[(size_t)c->rank * ch->n_channels + k];
        if (!on_home_host(c->plan, cr->ring_prev))
            st = add_use(r, c, k, false, cr->ring_prev, err);
        if (st == TP_OK && !on_home_host(c->plan, cr->ring_next))
            st = add_use(r, c, k, true, cr->ring_next, err);
    }
    return st;
}

static void add_distinct(tp_nic_p2p *p, int dev)
{
    for (int i = 0; i < p->n_nets; i++)
        if (p->nets[i] == dev)
            return;
    if (p->n_nets < TP_MAXCHANNELS)
        p->nets[p->n_nets++] = dev;
}

static int pow2_up(int v)
{
    int p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/*
 * NCCL 2.22.3 init.cc p2p schedule: the round in which (node, local) sends
 * to (peer_node, peer_local). Node and local deltas follow (x*x+x)/2 modulo
 * the next power of two, skipping values past the count.
 */
static int send_round(int node, int local, int n_nodes, int n_locals, int peer_node, int peer_local)
{
    unsigned nodes_pow2 = (unsigned)pow2_up(n_nodes), locals_pow2 = (unsigned)pow2_up(n_locals);
    unsigned node_round = 0, node_delta = 0;
    int round = 0;
    do {
        unsigned local_round = 0, local_delta = 0;
        do {
            if (node_delta < (unsigned)n_nodes && local_delta < (unsigned)n_locals) {
                int to_node = (node + (int)node_delta) % n_nodes;
                int to_local = (local + (int)local_delta) % n_locals;
                if (to_node == peer_node && to_local == peer_local)
                    return round;
                round++;
            }
            local_round++;
            local_delta = (local_delta + local_round) & (locals_pow2 - 1);
        } while (node_delta < (unsigned)n_nodes && local_round != locals_pow2);
        node_round++;
        node_delta = (node_delta + node_round) & (nodes_pow2 - 1);
    } while (node_round != nodes_pow2);
    return -1;
}

static int reverse_bits(int v, int n_bits)
{
    int r = 0;
    for (int i = 0; i < n_bits; i++)
        r |= ((v >> i) & 1) << (n_bits - 1 - i);
    return r;
}

/* NCCL 2.22.3 channel.h ncclP2pChannelBaseForRound (several nodes) and device.h
 * ncclP2pChannelForPart. */
static int part_channel(int round, int n_locals, int p2p_channels, int part)
{
    int base = (round / n_locals) * ((n_locals + TP_P2P_PER_BATCH - 1) / TP_P2P_PER_BATCH) +
               (round % n_locals) / TP_P2P_PER_BATCH;
    base &= 0xff;
    int log2 = 0;
    while ((1 << log2) < p2p_channels)
        log2++;
    return (base + reverse_bits(part, log2)) & (p2p_channels - 1);
}

/* One part of a send to peer: its channel's NIC, proxy and GDR. */
static tp_status p2p_part(tp_nic_part *pt, const rank_ctx *c, int peer, tp_error *err)
{
    tp_status st = tp_paths__get_net_dev(c->sys, c->plan->cfg, &c->view, c->rank, pt->channel, peer,
                                         &pt->net_id, &pt->net, &pt->proxy_rank, NULL, err);
    if (st == TP_OK)
        st = tp_paths__check_gdr(c->sys, c->plan->cfg, gpu_bus_id(c), pt->net_id, 1, &pt->gdr, err);
    return st;
}

/* One part of a receive from a remote peer: this rank's own NIC of the part's channel. */
static tp_status p2p_recv_part(tp_nic_part *pt, const rank_ctx *c, tp_error *err)
{
    tp_status st =
        tp_paths__get_net_dev(c->sys, c->plan->cfg, &c->view, c->rank, pt->channel, c->rank,
                              &pt->net_id, &pt->net, &pt->proxy_rank, NULL, err);
    pt->proxy_rank = c->rank; /* receives are never relayed (net.cc recvSetup) */
    if (st == TP_OK)
        st = tp_paths__check_gdr(c->sys, c->plan->cfg, gpu_bus_id(c), pt->net_id, 0, &pt->gdr, err);
    return st;
}

/*
 * Receives from `peer`: in the round the peer sends to this rank, on the
 * channels of that round's parts (sender and receiver pair up per round).
 */
static tp_status p2p_recvs(tp_nic_p2p *p, const rank_ctx *c, const tp_nics *nx, int peer,
                           tp_error *err)
{
    int per = nx->per_node;
    p->recv_round = nx->p2p_schedule ? send_round(peer / per, peer % per, nx->n_nodes, per,
                                                  c->rank / per, c->rank % per)
                                     : -1;
    int n = p->recv_round >= 0 ? nx->p2p_per_peer : nx->p2p_channels;
    for (int k = 0; k < n && k < TP_MAXCHANNELS; k++) {
        tp_nic_part *pt = &p->recv_parts[p->n_recv_parts];
        pt->part = k;
        pt->channel =
            p->recv_round >= 0 ? part_channel(p->recv_round, per, nx->p2p_channels, k) : k;
        tp_status st = p2p_recv_part(pt, c, err);
        if (st != TP_OK)
            return st;
        p->n_recv_parts++;
    }
    return TP_OK;
}

/* P2P sends to `peer`: the parts on NCCL's schedule (part 0 is the one summarised). */
static tp_status p2p_peer(tp_nic_p2p *p, const rank_ctx *c, const tp_nics *nx, int peer,
                          tp_error *err)
{
    int per = nx->per_node;
    p->peer_rank = peer;
    p->round = nx->p2p_schedule ? send_round(c->rank / per, c->rank % per, nx->n_nodes, per,
                                             peer / per, peer % per)
                                : -1;
    int n = p->round >= 0 ? nx->p2p_per_peer : nx->p2p_channels;
    for (int k = 0; k < n && k < TP_MAXCHANNELS; k++) {
        tp_nic_part *pt = &p->parts[p->n_parts];
        pt->part = k;
        pt->channel = p->round >= 0 ? part_channel(p->round, per, nx->p2p_channels, k) : k;
        tp_status st = p2p_part(pt, c, peer, err);
        if (st != TP_OK)
            return st;
        p->n_parts++;
        add_distinct(p, pt->net);
    }
    p->net = p->parts[0].net;
    p->proxy_rank = p->parts[0].proxy_rank;
    p->gdr = p->parts[0].gdr;
    return p2p_recvs(p, c, nx, peer, err);
}

/* One representative peer per local index, on the next node. */
static tp_status p2p_peers(tp_nic_rank *r, const rank_ctx *c, const tp_nics *nx, tp_error *err)
{
    int next = (c->plan->home_host + 1) % c->plan->job.n_nodes;
    int first = first_rank(c->plan, next), per = first_rank(c->plan, next + 1) - first;
    r->peers = calloc((size_t)per, sizeof(*r->peers));
    if (!r->peers)
        return tp_fail_nomem(err);
    for (int l = 0; l < per; l++) {
        tp_status st = p2p_peer(&r->peers[r->n_peers], c, nx, first + l, err);
        if (st != TP_OK)
            return st;
        r->n_peers++;
    }
    /* P2P receives use the rank's own NIC (net.cc recvSetup passes itself as peer). */
    int64_t id;
    int proxy;
    tp_status st = tp_paths__get_net_dev(c->sys, c->plan->cfg, &c->view, c->rank, 0, c->rank, &id,
                                         &r->recv_net, &proxy, NULL, err);
    if (st == TP_OK)
        st = tp_paths__check_gdr(c->sys, c->plan->cfg, gpu_bus_id(c), id, 0, &r->recv_gdr, err);
    return st;
}

/* A channel end of a graph: which channel, its role, and the rank on the other node. */
typedef struct channel_end {
    int channel;
    const char *role; /* "up" / "down" (tree), "head" (NVLS) */
    int peer;         /* tree: the rank on the other node; NVLS: -1 */
} channel_end;

/*
 * A graph channel end through the NET of `g` (ncclTopoGetNetDev with that
 * graph); every such end sends, so it gets the PXN relay of its sends.
 */
static tp_status graph_use(tp_nic_graph_use *u, const rank_ctx *c, const tp_graph *g,
                           channel_end end, tp_error *err)
{
    int ngpus = c->sys->nodes[TP_NODE_GPU].count;
    int64_t id = g->pattern == TP_PATTERN_NVLS ? g->inter[(end.channel % g->n_channels) * 2]
                                               : graph_net(c->plan, g, ngpus, c->rank, end.channel);
    *u = (tp_nic_graph_use){.channel = end.channel,
                            .role = end.role,
                            .peer_rank = end.peer,
                            .net = net_dev_of(c->sys, id),
                            .net_id = id,
                            .proxy_rank = c->rank};
    return tp_paths__get_intermediate_rank(c->sys, c->rank, id, &u->proxy_rank, NULL, err);
}

/* Tree channel ends whose parent or child is on another node (they send and receive). */
static tp_status tree_uses(tp_nic_rank *r, const rank_ctx *c, tp_error *err)
{
    const tp_channels *ch = &c->plan->channels;
    int d = c->plan->domain_of[r->local];
    const tp_graph *tree = c->plan->domains[d].graphs[TP_GRAPH_TREE];
    if (!ch->ranks || !tree || tree->n_channels <= 0)
        return TP_OK;
    r->tree = calloc((size_t)ch->n_channels * (1 + TP_MAX_TREE_ARITY) + 1, sizeof(*r->tree));
    if (!r->tree)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    for (int k = 0; k < ch->n_channels && st == TP_OK; k++) {
        const tp_channel_rank *cr = &ch->ranks[(size_t)c->rank * ch->n_channels + k];
        if (cr->tree_up >= 0 && !on_home_host(c->plan, cr->tree_up))
            st = graph_use(&r->tree[r->n_tree++], c, tree,
                           (channel_end){.channel = k, .role = "up", .peer = cr->tree_up}, err);
        for (int i = 0; i < TP_MAX_TREE_ARITY && st == TP_OK; i++)
            if (cr->tree_down[i] >= 0 && !on_home_host(c->plan, cr->tree_down[i]))
                st = graph_use(
                    &r->tree[r->n_tree++], c, tree,
                    (channel_end){.channel = k, .role = "down", .peer = cr->tree_down[i]}, err);
    }
    return st;
}

/*
 * NVLS channels this rank heads: their NET carries the node's share across
 * nodes. The job's heads are the first channels of each node's NVLS graph,
 * as many as the node with the fewest has (NCCL's all-gather keeps the
 * minimum of nChannels): a head past them carries nothing.
 */
static tp_status nvls_uses(tp_nic_rank *r, const rank_ctx *c, tp_error *err)
{
    int d = c->plan->domain_of[r->local];
    const tp_graph *nvls = c->plan->domains[d].graphs[TP_GRAPH_NVLS];
    int ngpus = c->sys->nodes[TP_NODE_GPU].count;
    if (!nvls || nvls->n_channels <= 0 || c->plan->channels.n_nvls_channels <= 0)
        return TP_OK;
    int heads = nvls->n_channels < c->plan->channels.nvls_heads ? nvls->n_channels
                                                                : c->plan->channels.nvls_heads;
    r->nvls = calloc((size_t)nvls->n_channels + 1, sizeof(*r->nvls));
    if (!r->nvls)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    for (int k = 0; k < heads && st == TP_OK; k++)
        if (nvls->intra[k * ngpus] == c->rank)
            st = graph_use(&r->nvls[r->n_nvls++], c, nvls,
                           (channel_end){.channel = k, .role = "head", .peer = -1}, err);
    return st;
}

static tp_status pxn_ranks(tp_nic_rank *r, const rank_ctx *c, tp_error *err)
{
    /* NCCL 2.22.3 init.cc connects PXN proxies only when ncclPxnDisable is 0. */
    if (tp_paths__pxn_disable(c->plan->cfg) != 0)
        return TP_OK;
    r->pxn_ranks = calloc((size_t)c->view.n_ranks + 1, sizeof(int));
    if (!r->pxn_ranks)
        return tp_fail_nomem(err);
    tp_error quiet = {0};
    tp_status st = tp_paths__get_pxn_ranks(c->sys, c->plan->cfg, &c->view, r->pxn_ranks, &r->n_pxn,
                                           NULL, &quiet);
    /*
     * NCCL 2.22.3 ncclTopoGetPxnRanks asks ncclTopoGetNetDev for no device,
     * which P2P PXN level 1 dereferences as soon as a NIC is at PXN or
     * closer: init crashes. paths.c reports that as an internal error.
     */
    if (st == TP_ERR_INTERNAL && (int)tp_config_int(c->plan->cfg, TP_P_P2P_PXN_LEVEL) == 1) {
        r->pxn_crash = true;
        r->n_pxn = 0;
        return TP_OK;
    }
    if (st != TP_OK && err)
        *err = quiet;
    return st;
}

static void nearest_net(tp_nic_rank *r, const rank_ctx *c)
{
    int nets[TP_MAX_NODES], n = 0;
    r->near_net = -1;
    if (c->sys->nodes[TP_NODE_NET].count == 0)
        return;
    tp_paths__get_local(c->sys, TP_NODE_GPU, c->gpu, TP_NODE_NET, nets, &n, &r->near_type);
    if (n == 0)
        return;
    const tp_node *net = &c->sys->nodes[TP_NODE_NET].nodes[nets[0]];
    r->near_net = net->net.dev;
    r->near_bw = c->sys->nodes[TP_NODE_GPU].nodes[c->gpu].paths[TP_NODE_NET][nets[0]].bw;
}

static tp_status build_rank(tp_nics *nx, const tp_plan *plan, int local, tp_error *err)
{
    rank_ctx c;
    tp_nic_rank *r = &nx->ranks[nx->n_ranks];
    memset(r, 0, sizeof(*r));
    r->local = local;
    r->rank = first_rank(plan, plan->home_host) + local;
    r->numa = r->near_net = r->recv_net = -1;
    if (!rank_ctx_init(&c, plan, local))
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "rank %d has no pipeline", r->rank);
    nx->n_ranks++;
    const tp_node *gpu = &c.sys->nodes[TP_NODE_GPU].nodes[c.gpu];
    r->dev = gpu->gpu.dev;
    r->bus_id = gpu->id;
    r->numa = tp_nics__local_numa(c.sys, TP_NODE_GPU, c.gpu);
    nearest_net(r, &c);
    if (c.sys->nodes[TP_NODE_NET].count == 0 || plan->job.n_nodes < 2)
        return TP_OK;
    tp_status st = ring_uses(r, &c, err);
    if (st == TP_OK)
        st = p2p_peers(r, &c, nx, err);
    if (st == TP_OK)
        st = tree_uses(r, &c, err);
    if (st == TP_OK)
        st = nvls_uses(r, &c, err);
    if (st == TP_OK)
        st = pxn_ranks(r, &c, err);
    return st;
}

/* <net> elements of the prepared XML, for the device names. */
const char *tp_nics__xml_net_name(const tp_xml_elem *e, int dev)
{
    const char *d = tp_xml__attr(e, "dev");
    if (strcmp(e->tag, "net") == 0 && d && strtol(d, NULL, 0) == dev)
        return tp_xml__attr(e, "name");
    for (size_t i = 0; i < e->n_children; i++) {
        const char *name = tp_nics__xml_net_name(e->children[i], dev);
        if (name)
            return name;
    }
    return NULL;
}

/*
 * A NIC's own speed: as the topology gives it, before any search. The
 * searched system's value may be lower: NCCL 2.22.3's NVLS search leaves
 * bandwidth taken on NETs (it skips a duplicate head without giving it back).
 */
float tp_nics__own_speed(const tp_plan *plan, const tp_node *net)
{
    const tp_system *host = plan->host_sys;
    int i = host ? tp_system__index_of(host, TP_NODE_NET, net->id) : -1;
    return i >= 0 ? host->nodes[TP_NODE_NET].nodes[i].net.bw : net->net.bw;
}

static tp_status build_nets(tp_nics *nx, const tp_plan *plan, tp_error *err)
{
    const tp_system *sys = plan->sys;
    int n = sys ? sys->nodes[TP_NODE_NET].count : 0;
    nx->nets = calloc((size_t)n + 1, sizeof(*nx->nets));
    if (!nx->nets)
        return tp_fail_nomem(err);
    for (int i = 0; i < n; i++) {
        const tp_node *node = &sys->nodes[TP_NODE_NET].nodes[i];
        tp_nic_net *net = &nx->nets[nx->n_nets++];
        const char *name =
            plan->topo_xml ? tp_nics__xml_net_name(plan->topo_xml->root, node->net.dev) : NULL;
        net->dev = node->net.dev;
        net->id = node->id;
        snprintf(net->name, sizeof(net->name), "%s", name ? name : "?");
        net->numa = tp_nics__local_numa(sys, TP_NODE_NET, i);
        net->bw = tp_nics__own_speed(plan, node);
        net->asic = node->net.asic;
        net->port = node->net.port;
    }
    return TP_OK;
}

static tp_nic_net *net_mut(tp_nics *nx, int dev)
{
    for (int i = 0; i < nx->n_nets; i++)
        if (nx->nets[i].dev == dev)
            return &nx->nets[i];
    return NULL;
}

const tp_nic_net *tp_nics__net(const tp_nics *nics, int dev)
{
    return net_mut((tp_nics *)nics, dev);
}

/* The node's view of each ring channel, from its ranks' channel ends. */
static tp_status build_channels(tp_nics *nx, tp_error *err)
{
    nx->channels = calloc((size_t)nx->ring_channels + 1, sizeof(*nx->channels));
    if (!nx->channels)
        return tp_fail_nomem(err);
    for (int c = 0; c < nx->ring_channels; c++)
        nx->channels[c] = (tp_nic_channel){-1, -1, -1, -1, -1, -1};
    for (int i = 0; i < nx->n_ranks; i++) {
        const tp_nic_rank *r = &nx->ranks[i];
        for (int u = 0; u < r->n_uses; u++) {
            const tp_nic_use *use = &r->uses[u];
            tp_nic_channel *ch = &nx->channels[use->channel];
            if (use->send) {
                ch->exit_rank = r->rank;
                ch->exit_net = use->net;
                ch->next_entry_net = use->peer_net;
            } else {
                ch->entry_rank = r->rank;
                ch->entry_net = use->net;
                ch->prev_exit_net = use->peer_net;
            }
        }
    }
    return TP_OK;
}

static void count_uses(tp_nics *nx)
{
    for (int i = 0; i < nx->n_ranks; i++) {
        const tp_nic_rank *r = &nx->ranks[i];
        tp_nic_net *net;
        for (int u = 0; u < r->n_uses; u++)
            if ((net = net_mut(nx, r->uses[u].net)))
                net->ring_uses++;
        for (int p = 0; p < r->n_peers; p++)
            if ((net = net_mut(nx, r->peers[p].net)))
                net->p2p_uses++;
    }
}

/* P2P channels and channels per peer; whether NCCL's p2p schedule applies. */
static bool p2p_schedule_of(const tp_plan *plan, int *channels, int *per_peer)
{
    *channels = plan->channels.p2p_n_channels > 0 ? plan->channels.p2p_n_channels : 1;
    *per_peer =
        plan->channels.p2p_n_channels_per_peer > 0 ? plan->channels.p2p_n_channels_per_peer : 1;
    /* The schedule is NCCL's for nodes of equal size; here NCCL's nodes must be the hosts,
     * all of one size (mixed sizes make NCCL's schedule flat: not modelled here). */
    bool equal_hosts = true;
    for (int k = 0; k < plan->n_kinds; k++)
        equal_hosts &= plan->kinds[k].n_gpus == per_node(plan);
    return equal_hosts && plan->channels.n_nodes == plan->job.n_nodes && plan->job.n_nodes > 1 &&
           (*channels & (*channels - 1)) == 0;
}

int tp_nics__p2p_part_channel(const tp_plan *plan, int rank, int peer, int part)
{
    int channels, per_peer, per = per_node(plan);
    bool schedule = p2p_schedule_of(plan, &channels, &per_peer);
    if (part < 0 || part >= (schedule ? per_peer : channels) || part >= TP_MAXCHANNELS)
        return -1;
    if (!schedule)
        return part;
    int round = send_round(rank / per, rank % per, plan->job.n_nodes, per, peer / per, peer % per);
    return round < 0 ? -1 : part_channel(round, per, channels, part);
}

static tp_status build(tp_nics *out, const tp_plan *plan, bool findings, tp_error *err)
{
    memset(out, 0, sizeof(*out));
    out->findings.enabled = true;
    if (!plan || !plan->sys || !plan->domain_of || plan->status != TP_OK)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "nics: the plan is incomplete");
    out->nccl_version = tp_config_nccl(plan->cfg);
    out->node = plan->home_host;
    out->n_nodes = plan->job.n_nodes;
    out->per_node = per_node(plan);
    out->first_rank = first_rank(plan, plan->home_host);
    out->cross_nic = tp_config_int(plan->cfg, TP_P_CROSS_NIC);
    out->pxn_level = tp_paths__pxn_disable(plan->cfg) == 1
                         ? 0
                         : (int)tp_config_int(plan->cfg, TP_P_P2P_PXN_LEVEL);
    out->ring_channels = plan->channels.n_channels;
    out->p2p_schedule = p2p_schedule_of(plan, &out->p2p_channels, &out->p2p_per_peer);
    tp_status st = build_nets(out, plan, err);
    out->ranks = st == TP_OK ? calloc((size_t)out->per_node, sizeof(*out->ranks)) : NULL;
    if (st == TP_OK && !out->ranks)
        st = tp_fail_nomem(err);
    for (int l = 0; st == TP_OK && l < out->per_node; l++)
        st = build_rank(out, plan, l, err);
    if (st == TP_OK)
        st = build_channels(out, err);
    if (st == TP_OK)
        count_uses(out);
    if (st == TP_OK && findings)
        tp_nics__findings(out, plan);
    if (st != TP_OK)
        tp_nics__free(out);
    return st;
}

tp_status tp_nics__build(tp_nics *out, const tp_plan *plan, tp_error *err)
{
    return build(out, plan, true, err);
}

tp_status tp_nics__build_bare(tp_nics *out, const tp_plan *plan, tp_error *err)
{
    return build(out, plan, false, err);
}

static bool crossed(int from, int to)
{
    return from >= 0 && to >= 0 && from != to;
}

int tp_nics__rail_crossings(const tp_nics *nx, int *total)
{
    int n = 0;
    *total = 0;
    for (int c = 0; c < nx->ring_channels; c++) {
        const tp_nic_channel *ch = &nx->channels[c];
        *total += ch->exit_net >= 0 || ch->entry_net >= 0;
        n += crossed(ch->prev_exit_net, ch->entry_net) || crossed(ch->exit_net, ch->next_entry_net);
    }
    return n;
}

tp_status tp_nics__replan(tp_nics *out, const tp_plan *plan, const char *key, const char *value,
                          tp_error *err)
{
    tp_config *cfg = NULL;
    tp_plan *other = NULL;
    tp_status st = tp_config__copy(&cfg, plan->cfg, err);
    if (st == TP_OK)
        st = tp_config_set(cfg, key, value, err);
    if (st == TP_OK)
        st = tp_plan__replan(&other, plan, cfg, NULL, err);
    if (st == TP_OK && other->status != TP_OK)
        st = tp_fail(err, TP_ERR_CONFIG, NULL, 0, 0, "re-planned with %s=%s, NCCL fails", key,
                     value);
    if (st == TP_OK)
        st = tp_nics__build_bare(out, other, err);
    tp_plan_free(other);
    tp_config_free(cfg);
    return st;
}

tp_status tp_nics__replan_crossings(const tp_plan *plan, const char *key, const char *value,
                                    int *crossings, int *total, tp_error *err)
{
    tp_nics nx;
    tp_status st = tp_nics__replan(&nx, plan, key, value, err);
    if (st == TP_OK) {
        *crossings = tp_nics__rail_crossings(&nx, total);
        tp_nics__free(&nx);
    }
    return st;
}

void tp_nics__free(tp_nics *nics)
{
    if (!nics)
        return;
    for (int i = 0; i < nics->n_ranks; i++) {
        free(nics->ranks[i].uses);
        free(nics->ranks[i].peers);
        free(nics->ranks[i].pxn_ranks);
        free(nics->ranks[i].tree);
        free(nics->ranks[i].nvls);
    }
    free(nics->ranks);
    free(nics->nets);
    free(nics->channels);
    tp_log_clear(&nics->findings);
    memset(nics, 0, sizeof(*nics));
}
