/*
 * The public read-only queries over a plan (include/topoplan.h, "Reading a
 * plan"), the version calls and the public names of the model's enumerations.
 *
 * Every function checks its arguments first: a NULL or out-of-range argument
 * gives the documented error value, never a crash. Records are filled through
 * a local copy and then at most `size` bytes of it, so a caller built with an
 * older (smaller) record keeps working.
 */
#include "nics/nics.h"
#include "query/query.h"
#include "report/report.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static_assert((int)TP_DECISION_SETTLE == (int)TP_EV_SETTLE, "decision kinds out of sync");
static_assert((int)TP_DECISION_DONE == (int)TP_EV_DONE, "decision kinds out of sync");

/* Copy a filled record into the caller's, no more than the caller's size. */
static tp_status give(void *dst, size_t size, const void *src, size_t full)
{
    memcpy(dst, src, size < full ? size : full);
    return TP_OK;
}

unsigned tp_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = TOPOPLAN_VERSION_MAJOR;
    if (minor)
        *minor = TOPOPLAN_VERSION_MINOR;
    if (patch)
        *patch = TOPOPLAN_VERSION_PATCH;
    return TOPOPLAN_VERSION_NUMBER;
}

const char *tp_version_string(void)
{
    return TOPOPLAN_VERSION;
}

int tp_nccl_version(void)
{
    return TOPOPLAN_NCCL_VERSION_CODE;
}

const char *tp_nccl_version_string(void)
{
    return TOPOPLAN_NCCL_VERSION;
}

const char *tp_node_type_str(tp_node_type type)
{
    return tp_node_type_name((int)type);
}

const char *tp_link_type_str(tp_link_type type)
{
    return tp_link_type_name((int)type);
}

const char *tp_path_type_str(tp_path_type type)
{
    return tp_path_type_name((int)type);
}

const char *tp_pattern_str(tp_pattern pattern)
{
    return tp_pattern_name((int)pattern);
}

const char *tp_graph_kind_str(tp_graph_kind kind)
{
    return (int)kind >= 0 && kind < TP_GRAPH_COUNT ? tp_channels__graph_name((int)kind) : "?";
}

/* ---- the plan ---- */

/* A plan whose pipeline went to the end. */
static bool finished(const tp_plan *plan)
{
    return plan && plan->status == TP_OK && plan->sys && plan->domain_of;
}

tp_status tp_plan_status(const tp_plan *plan)
{
    return plan ? plan->status : TP_ERR_ARGUMENT;
}

static int rank_count(const tp_plan *plan)
{
    return plan->host_first_rank[plan->job.n_nodes];
}

tp_status tp_plan_job(const tp_plan *plan, tp_job_info *info, size_t size)
{
    if (!plan || !info)
        return TP_ERR_ARGUMENT;
    tp_job_info v = {
        .n_nodes = plan->job.n_nodes,
        .n_ranks = rank_count(plan),
        .rank = plan->job.rank,
        .gpus_per_node = plan->n_gpus_per_node,
    };
    return give(info, size, &v, sizeof(v));
}

int tp_plan_log_count(const tp_plan *plan)
{
    return plan ? (int)plan->log.n_lines : -1;
}

const char *tp_plan_log_line(const tp_plan *plan, int i, bool *warn)
{
    if (!plan || i < 0 || (size_t)i >= plan->log.n_lines)
        return NULL;
    if (warn)
        *warn = plan->log.lines[i].level == TP_LOG_WARN;
    return plan->log.lines[i].text;
}

int tp_plan_nic_note_count(const tp_plan *plan)
{
    return plan ? (int)plan->nic_notes.n_lines : -1;
}

const char *tp_plan_nic_note(const tp_plan *plan, int i)
{
    if (!plan || i < 0 || (size_t)i >= plan->nic_notes.n_lines)
        return NULL;
    return plan->nic_notes.lines[i].text;
}

/* ---- the system ---- */

const tp_system *tp_plan_system(const tp_plan *plan)
{
    return plan ? plan->sys : NULL;
}

static bool valid_type(tp_node_type type)
{
    return (int)type >= 0 && type < TP_NODE_TYPE_COUNT;
}

/* The node, or NULL when it does not exist. */
static const tp_node *node_at(const tp_system *sys, tp_node_type type, int index)
{
    if (!sys || !valid_type(type) || index < 0 || index >= sys->nodes[type].count)
        return NULL;
    return &sys->nodes[type].nodes[index];
}

static int index_in(const tp_system *sys, const tp_node *node)
{
    return (int)(node - sys->nodes[node->type].nodes);
}

int tp_system_node_count(const tp_system *sys, tp_node_type type)
{
    return sys && valid_type(type) ? sys->nodes[type].count : -1;
}

/* The fields of one node type; the others stay -1 / 0. */
static void fill_node_kind(tp_node_info *v, const tp_node *n)
{
    switch (n->type) {
    case TP_NODE_GPU:
        v->gpu_dev = n->gpu.dev;
        v->gpu_rank = n->gpu.rank;
        v->gpu_cuda_comp_cap = n->gpu.cuda_comp_cap;
        v->gpu_gdr = n->gpu.gdr_support != 0;
        break;
    case TP_NODE_NET:
        v->net_dev = n->net.dev;
        v->net_asic = n->net.asic;
        v->net_port = n->net.port;
        v->net_bw = n->net.bw;
        v->net_latency = n->net.latency;
        v->net_gdr = n->net.gdr_support != 0;
        v->net_coll = n->net.coll_support != 0;
        v->net_max_channels = n->net.max_channels;
        break;
    case TP_NODE_CPU:
        v->cpu_arch = n->cpu.arch;
        v->cpu_vendor = n->cpu.vendor;
        v->cpu_model = n->cpu.model;
        break;
    case TP_NODE_PCI:
        v->pci_device = n->pci.device;
        break;
    default:
        break;
    }
}

tp_status tp_system_node(const tp_system *sys, tp_node_type type, int index, tp_node_info *info,
                         size_t size)
{
    const tp_node *n = node_at(sys, type, index);
    if (!n || !info)
        return TP_ERR_ARGUMENT;
    tp_node_info v = {
        .type = type,
        .index = index,
        .id = n->id,
        .n_links = n->n_links,
        .gpu_dev = -1,
        .gpu_rank = -1,
        .gpu_cuda_comp_cap = -1,
        .net_dev = -1,
        .net_port = -1,
        .net_max_channels = -1,
        .cpu_arch = -1,
        .cpu_vendor = -1,
        .cpu_model = -1,
    };
    tp_report__node_label(v.label, sizeof(v.label), n);
    fill_node_kind(&v, n);
    return give(info, size, &v, sizeof(v));
}

int tp_system_find(const tp_system *sys, tp_node_type type, int64_t id)
{
    return sys && valid_type(type) ? tp_system__index_of(sys, (int)type, id) : -1;
}

int tp_system_gpu_of_rank(const tp_system *sys, int rank)
{
    return sys ? tp_paths__rank_to_index(sys, rank) : -1;
}

static tp_link_info link_info(const tp_system *sys, const tp_node *from, const tp_link *l)
{
    tp_link_info v = {
        .type = (tp_link_type)l->type,
        .bw = l->bw,
        .from_type = (tp_node_type)from->type,
        .from_index = index_in(sys, from),
        .to_type = (tp_node_type)l->rem->type,
        .to_index = index_in(sys, l->rem),
    };
    return v;
}

tp_status tp_system_link(const tp_system *sys, tp_node_type type, int index, int link,
                         tp_link_info *info, size_t size)
{
    const tp_node *n = node_at(sys, type, index);
    if (!n || !info || link < 0 || link >= n->n_links)
        return TP_ERR_ARGUMENT;
    tp_link_info v = link_info(sys, n, &n->links[link]);
    return give(info, size, &v, sizeof(v));
}

/* The route NCCL computed between two nodes, or NULL. */
static const tp_route *route_of(const tp_system *sys, tp_node_type from_type, int from_index,
                                tp_node_type to_type, int to_index, const tp_node **from)
{
    const tp_node *a = node_at(sys, from_type, from_index);
    if (!a || !node_at(sys, to_type, to_index) || !a->paths[to_type])
        return NULL;
    *from = a;
    return &a->paths[to_type][to_index];
}

tp_status tp_system_path(const tp_system *sys, tp_node_type from_type, int from_index,
                         tp_node_type to_type, int to_index, tp_path_info *info, size_t size)
{
    const tp_node *from = NULL;
    const tp_route *r = route_of(sys, from_type, from_index, to_type, to_index, &from);
    if (!r || !info)
        return TP_ERR_ARGUMENT;
    tp_path_info v = {
        .type = (tp_path_type)r->type, .bw = r->bw, .hops = r->count, .bottleneck_hop = -1};
    for (int h = 0; h < r->count; h++)
        if (v.bottleneck_hop < 0 || r->list[h]->bw < r->list[v.bottleneck_hop]->bw)
            v.bottleneck_hop = h;
    return give(info, size, &v, sizeof(v));
}

tp_status tp_system_path_hop(const tp_system *sys, tp_node_type from_type, int from_index,
                             tp_node_type to_type, int to_index, int hop, tp_link_info *info,
                             size_t size)
{
    const tp_node *from = NULL;
    const tp_route *r = route_of(sys, from_type, from_index, to_type, to_index, &from);
    if (!r || !info || hop < 0 || hop >= r->count)
        return TP_ERR_ARGUMENT;
    const tp_node *start = hop == 0 ? from : r->list[hop - 1]->rem;
    tp_link_info v = link_info(sys, start, r->list[hop]);
    return give(info, size, &v, sizeof(v));
}

/* ---- graphs ---- */

static const tp_graph *graph_of(const tp_plan *plan, tp_graph_kind kind)
{
    if (!finished(plan) || (int)kind < 0 || kind >= TP_GRAPH_COUNT)
        return NULL;
    return plan->graphs[kind];
}

static int graph_gpus(const tp_plan *plan)
{
    return plan->sys->nodes[TP_NODE_GPU].count;
}

tp_status tp_plan_graph(const tp_plan *plan, tp_graph_kind kind, tp_graph_summary *info,
                        size_t size)
{
    const tp_graph *g = graph_of(plan, kind);
    if (!g || !info)
        return TP_ERR_ARGUMENT;
    tp_graph_summary v = {
        .kind = kind,
        .pattern = (tp_pattern)g->pattern,
        .n_channels = g->n_channels,
        .min_channels = g->min_channels,
        .max_channels = g->max_channels,
        .bw_intra = g->bw_intra,
        .bw_inter = g->bw_inter,
        .latency_inter = g->latency_inter,
        .type_intra = (tp_path_type)g->type_intra,
        .type_inter = (tp_path_type)g->type_inter,
        .cross_nic = g->cross_nic,
        .same_channels = g->same_channels != 0,
        .n_gpus = graph_gpus(plan),
        .has_nets = plan->sys->nodes[TP_NODE_NET].count > 0,
        .n_decisions = (int)g->n_events,
    };
    return give(info, size, &v, sizeof(v));
}

const int *tp_plan_graph_gpus(const tp_plan *plan, tp_graph_kind kind, int channel, int *count)
{
    const tp_graph *g = graph_of(plan, kind);
    if (count)
        *count = 0;
    if (!g || !count || channel < 0 || channel >= g->n_channels)
        return NULL;
    *count = graph_gpus(plan);
    return &g->intra[channel * *count];
}

const int64_t *tp_plan_graph_nets(const tp_plan *plan, tp_graph_kind kind, int channel, int *count)
{
    const tp_graph *g = graph_of(plan, kind);
    if (count)
        *count = 0;
    if (!g || !count || channel < 0 || channel >= g->n_channels ||
        plan->sys->nodes[TP_NODE_NET].count == 0)
        return NULL;
    *count = 2;
    return &g->inter[channel * 2];
}

tp_status tp_plan_graph_decision(const tp_plan *plan, tp_graph_kind kind, int i, tp_decision *info,
                                 size_t size)
{
    const tp_graph *g = graph_of(plan, kind);
    if (!g || !info || i < 0 || (size_t)i >= g->n_events)
        return TP_ERR_ARGUMENT;
    const tp_search_event *e = &g->events[i];
    tp_decision v = {
        .kind = (tp_decision_kind)e->kind,
        .why = e->why ? e->why : "",
        .bw_intra = e->bw_intra,
        .bw_inter = e->bw_inter,
        .type_intra = (tp_path_type)e->type_intra,
        .type_inter = (tp_path_type)e->type_inter,
        .same_channels = e->same_channels != 0,
        .cross_nic = e->cross_nic,
        .pattern = (tp_pattern)e->pattern,
        .n_channels = e->n_channels,
    };
    return give(info, size, &v, sizeof(v));
}

/* ---- channels ---- */

tp_status tp_plan_channels(const tp_plan *plan, tp_channels_info *info, size_t size)
{
    if (!finished(plan) || !info)
        return TP_ERR_ARGUMENT;
    const tp_channels *ch = &plan->channels;
    tp_channels_info v = {
        .n_channels = ch->n_channels,
        .search_channels = ch->search_channels,
        .n_nvls_channels = ch->n_nvls_channels,
        .nvls_heads = ch->nvls_heads,
        .n_collnet_channels = ch->n_collnet_channels,
        .p2p_channels = ch->p2p_n_channels,
        .p2p_channels_per_peer = ch->p2p_n_channels_per_peer,
        .nccl_nodes = ch->n_nodes,
    };
    return give(info, size, &v, sizeof(v));
}

tp_status tp_plan_rank_channel(const tp_plan *plan, int rank, int channel, tp_rank_channel *info,
                               size_t size)
{
    if (!finished(plan) || !info || !plan->channels.ranks || rank < 0 ||
        rank >= plan->channels.n_ranks || channel < 0 || channel >= plan->channels.n_channels)
        return TP_ERR_ARGUMENT;
    const tp_channel_rank *cr =
        &plan->channels.ranks[(size_t)rank * (size_t)plan->channels.n_channels + (size_t)channel];
    tp_rank_channel v = {
        .ring_prev = cr->ring_prev, .ring_next = cr->ring_next, .tree_up = cr->tree_up};
    memcpy(v.tree_down, cr->tree_down, sizeof(v.tree_down));
    return give(info, size, &v, sizeof(v));
}

tp_status tp_plan_rank_nvls(const tp_plan *plan, int rank, int channel, tp_rank_nvls *info,
                            size_t size)
{
    const tp_channels *ch = finished(plan) ? &plan->channels : NULL;
    if (!ch || !info || !ch->nvls || rank < 0 || rank >= ch->n_ranks || channel < 0 ||
        channel >= ch->n_channels)
        return TP_ERR_ARGUMENT;
    const tp_nvls_rank *n = &ch->nvls[rank];
    int k = channel % 2;
    tp_rank_nvls v = {.n_heads = ch->nvls_heads,
                      .head_rank = n->head_rank,
                      .down = n->down,
                      .tree_up = n->tree_up[k]};
    memcpy(v.tree_down, n->tree_down[k], sizeof(v.tree_down));
    return give(info, size, &v, sizeof(v));
}

const int *tp_plan_ring(const tp_plan *plan, int channel, int *count)
{
    if (count)
        *count = 0;
    if (!finished(plan) || !count || !plan->channels.rings || channel < 0 ||
        channel >= plan->channels.n_channels)
        return NULL;
    *count = plan->channels.n_ranks;
    return &plan->channels.rings[(size_t)channel * (size_t)*count];
}

/* ---- NICs ---- */

tp_status tp_plan_nic_findings(tp_findings **out, const tp_plan *plan, tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_plan_nic_findings", "out is NULL");
    *out = NULL;
    tp_status st = tp_plan__check_done(plan, "tp_plan_nic_findings", err);
    tp_nics nx;
    if (st != TP_OK || (st = tp_nics__build(&nx, plan, err)) != TP_OK)
        return st;
    tp_findings *f = calloc(1, sizeof(*f));
    if (f) {
        f->lines = nx.findings; /* taken over: the view forgets them */
        memset(&nx.findings, 0, sizeof(nx.findings));
    }
    tp_nics__free(&nx);
    *out = f;
    return f ? TP_OK : tp_fail_nomem(err);
}

int tp_findings_count(const tp_findings *f)
{
    return f ? (int)f->lines.n_lines : -1;
}

const char *tp_findings_get(const tp_findings *f, int i)
{
    if (!f || i < 0 || (size_t)i >= f->lines.n_lines)
        return NULL;
    return f->lines.lines[i].text;
}

void tp_findings_free(tp_findings *f)
{
    if (!f)
        return;
    tp_log_clear(&f->lines);
    free(f);
}

int tp_plan_p2p_channel(const tp_plan *plan, int rank, int peer, int part)
{
    if (!finished(plan) || rank < 0 || rank >= rank_count(plan) || peer < 0 ||
        peer >= rank_count(plan) ||
        tp_plan__host_of_rank(plan, peer) == tp_plan__host_of_rank(plan, rank))
        return -1;
    return tp_nics__p2p_part_channel(plan, rank, peer, part);
}

/* One rank as its home-host twin (nodes are identical: the domains ran on the home host). */
typedef struct twin {
    const tp_system *sys;
    const tp_graph *ring;
    int rank;  /* the home host's rank with the same local index */
    int shift; /* add to home-host ranks to get back to the asked rank's host */
    tp_job_view view;
} twin;

static bool twin_of(const tp_plan *plan, int rank, twin *t)
{
    int h = tp_plan__host_of_rank(plan, rank);
    const tp_host_kind *k = tp_plan__kind_of_host(plan, h);
    int local = rank - plan->host_first_rank[h];
    int d = k->domain_of[local];
    if (d < 0 || d >= k->n_domains || !k->domains[d].sys)
        return false;
    t->sys = k->domains[d].sys;
    t->ring = k->domains[d].graphs[TP_GRAPH_RING];
    t->rank = plan->host_first_rank[k->rep_host] + local;
    t->shift = rank - t->rank;
    t->view = (tp_job_view){.n_ranks = rank_count(plan),
                            .n_nodes = plan->job.n_nodes,
                            .rank = t->rank,
                            .local_n_ranks = k->n_gpus,
                            .rank_devs = plan->rank_devs};
    return tp_paths__rank_to_index(t->sys, t->rank) >= 0;
}

static int shifted(const tp_plan *plan, int rank, int shift)
{
    int n = rank_count(plan);
    return ((rank + shift) % n + n) % n;
}

/* The ring graph's NET for a channel: its head receives on inter[2c], its tail sends on [2c+1]. */
/* The rank's role on ring channel `channel`: head receives, tail sends, inner GPUs neither. */
static tp_nic_role ring_role(const twin *t, int c)
{
    const tp_graph *g = t->ring;
    int ngpus = t->sys->nodes[TP_NODE_GPU].count;
    bool head = g->intra[c * ngpus] == t->rank, tail = g->intra[c * ngpus + ngpus - 1] == t->rank;
    return head && tail ? TP_NIC_RECEIVE_SEND
           : head       ? TP_NIC_RECEIVE
           : tail       ? TP_NIC_SEND
                        : TP_NIC_NONE;
}

static tp_status collective_nic(const tp_plan *plan, const twin *t, int channel, int64_t *id,
                                int *proxy, tp_nic_role *role, tp_error *err)
{
    const tp_graph *g = t->ring;
    if (!g || g->n_channels <= 0 || t->sys->nodes[TP_NODE_NET].count == 0)
        return TP_ERR_ARGUMENT;
    int c = tp_nics__graph_channel(plan, g, channel);
    *role = ring_role(t, c);
    bool send = *role == TP_NIC_SEND;
    *id = *role == TP_NIC_NONE ? -1 : g->inter[c * 2 + (send ? 1 : 0)];
    *proxy = t->rank;
    if (send)
        return tp_paths__get_intermediate_rank(t->sys, t->rank, *id, proxy, NULL, err);
    return TP_OK;
}

/* No NIC: the rank is between two GPUs of its node on that ring channel. */
static tp_status no_nic(const tp_plan *plan, const twin *t, int channel, tp_nic_choice *info,
                        size_t size)
{
    const tp_graph *g = t->ring;
    int ngpus = t->sys->nodes[TP_NODE_GPU].count, c = tp_nics__graph_channel(plan, g, channel);
    tp_nic_choice v = {.net_dev = -1,
                       .net_id = -1,
                       .net_index = -1,
                       .proxy_rank = -1,
                       .role = TP_NIC_NONE,
                       .send_net_dev = -1,
                       .send_net_id = -1};
    snprintf(v.why, sizeof(v.why),
             "inner GPU of ring channel %d: between GPUs of its node, the channel enters at "
             "rank %d and leaves at rank %d",
             channel, shifted(plan, g->intra[c * ngpus], t->shift),
             shifted(plan, g->intra[c * ngpus + ngpus - 1], t->shift));
    return give(info, size, &v, sizeof(v));
}

/* The role in words; a head that is also the tail gets its send NET too. */
static void nic_role_text(const tp_plan *plan, tp_nic_choice *v, const twin *t, int channel,
                          int peer)
{
    if (peer >= 0) {
        snprintf(v->why, sizeof(v->why), "P2P sends to rank %d on P2P channel %d", peer, channel);
        return;
    }
    if (v->role == TP_NIC_RECEIVE_SEND) {
        int c = tp_nics__graph_channel(plan, t->ring, channel);
        v->send_net_id = t->ring->inter[c * 2 + 1];
        int i = tp_paths__id_to_index(t->sys, TP_NODE_NET, v->send_net_id);
        v->send_net_dev = i >= 0 ? t->sys->nodes[TP_NODE_NET].nodes[i].net.dev : -1;
    }
    snprintf(v->why, sizeof(v->why), "%s of ring channel %d: %s",
             v->role == TP_NIC_RECEIVE ? "head"
             : v->role == TP_NIC_SEND  ? "tail"
                                       : "head and tail",
             channel,
             v->role == TP_NIC_RECEIVE ? "receives from the previous node"
             : v->role == TP_NIC_SEND  ? "sends to the next node"
                                       : "receives from the previous node and sends to the next");
}

tp_status tp_plan_nic(const tp_plan *plan, int rank, int channel, int peer, tp_nic_choice *info,
                      size_t size)
{
    twin t;
    if (!finished(plan) || !info || rank < 0 || rank >= rank_count(plan) || channel < 0 ||
        channel >= TP_MAXCHANNELS || peer >= rank_count(plan) || peer < -1 ||
        !twin_of(plan, rank, &t))
        return TP_ERR_ARGUMENT;
    if (peer >= 0 && tp_plan__host_of_rank(plan, peer) == tp_plan__host_of_rank(plan, rank))
        return TP_ERR_ARGUMENT; /* same node: no NIC between them */
    tp_error err = {0};
    int64_t id = -1;
    int dev = -1, proxy = t.rank, gdr = 0;
    tp_nic_role role = TP_NIC_SEND;
    tp_status st;
    if (peer < 0)
        st = collective_nic(plan, &t, channel, &id, &proxy, &role, &err);
    else if (t.sys->nodes[TP_NODE_NET].count == 0)
        st = TP_ERR_ARGUMENT;
    else
        st = tp_paths__get_net_dev(t.sys, plan->cfg, &t.view, t.rank, channel,
                                   /* with every rank's dev known, the peer as it is */
                                   plan->rank_devs ? peer : shifted(plan, peer, -t.shift), &id,
                                   &dev, &proxy, NULL, &err);
    if (st == TP_OK && role == TP_NIC_NONE)
        return no_nic(plan, &t, channel, info, size);
    bool send = role == TP_NIC_SEND;
    int net = st == TP_OK ? tp_paths__id_to_index(t.sys, TP_NODE_NET, id) : -1;
    if (st == TP_OK && net < 0)
        st = TP_ERR_INTERNAL;
    if (st == TP_OK) {
        const tp_node *gpu =
            &t.sys->nodes[TP_NODE_GPU].nodes[tp_paths__rank_to_index(t.sys, t.rank)];
        st = tp_paths__check_gdr(t.sys, plan->cfg, gpu->id, id, send ? 1 : 0, &gdr, &err);
    }
    if (st != TP_OK)
        return st;
    tp_nic_choice v = {
        .net_dev = t.sys->nodes[TP_NODE_NET].nodes[net].net.dev,
        .net_id = id,
        .net_index = tp_paths__id_to_index(plan->sys, TP_NODE_NET, id),
        .proxy_rank = shifted(plan, proxy, t.shift),
        .gdr = gdr != 0,
        .role = role,
        .send_net_dev = -1,
        .send_net_id = -1,
    };
    nic_role_text(plan, &v, &t, channel, peer);
    return give(info, size, &v, sizeof(v));
}
