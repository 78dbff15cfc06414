/*
 * Findings of the NIC view in plain words: idle rails, channels crossing
 * rails, NICs on another NUMA node, PXN relays, GDR, filter results. The
 * questions users bring to NCCL's issue tracker about multi-NIC machines.
 */
#include "nics.h"

#include <stdlib.h>
#include <string.h>

static void net_label(char *buf, size_t size, const tp_nics *nx, int dev)
{
    const tp_nic_net *net = tp_nics__net(nx, dev);
    snprintf(buf, size, "NET/%d (%s)", dev, net ? net->name : "?");
}

static void scope(tp_nics *nx)
{
    if (nx->n_nodes < 2) {
        tp_log_info(&nx->findings, "a single node: NCCL uses no NET device (plan with --nodes 2 "
                                   "or more to see which NIC each rank uses)");
    } else if (nx->n_nets == 0) {
        tp_log_info(&nx->findings, "the topology has no NET device: nothing links the nodes");
    } else if (nx->n_nets == 1) {
        char a[TP_NIC_NAME_MAX + 16];
        net_label(a, sizeof(a), nx, nx->nets[0].dev);
        tp_log_info(&nx->findings, "one NET device, %s: every channel and peer uses it; "
                                   "NCCL_CROSS_NIC and the PXN settings cannot change that", a);
    }
}

/* Rails: NICs that no ring channel uses. */
static void idle_rails(tp_nics *nx)
{
    tp_buf idle = {0};
    int used = 0, last = -1;
    for (int i = 0; i < nx->n_nets; i++) {
        if (nx->nets[i].ring_uses > 0) {
            used++;
            last = nx->nets[i].dev;
        } else {
            tp_buf_printf(&idle, "%sNET/%d", idle.len ? ", " : "", nx->nets[i].dev);
        }
    }
    if (nx->n_nets > 1 && used == 1) {
        char a[TP_NIC_NAME_MAX + 16];
        net_label(a, sizeof(a), nx, last);
        tp_log_info(&nx->findings, "only one rail carries the ring channels: %s; %s stay idle "
                                   "for collectives", a, tp_buf_str(&idle));
    } else if (nx->n_nets > 1 && used > 1 && used < nx->n_nets) {
        tp_log_info(&nx->findings, "%d of %d NICs carry ring channels; %s carry none",
                    used, nx->n_nets, tp_buf_str(&idle));
    }
    tp_buf_free(&idle);
}

/* Ring channels whose exit NIC differs from the next node's entry NIC. */
static void crossing(tp_nics *nx)
{
    tp_buf list = {0};
    int n = 0, total = 0;
    const tp_nic_rank *seen = NULL;
    for (int i = 0; i < nx->n_ranks; i++) {
        const tp_nic_rank *r = &nx->ranks[i];
        for (int u = 0; u < r->n_uses; u++) {
            const tp_nic_use *use = &r->uses[u];
            if (!use->send)
                continue;
            total++;
            seen = r;
            if (use->peer_net == use->net)
                continue;
            tp_buf_printf(&list, "%s%d (NET/%d -> NET/%d)", n ? ", " : "", use->channel, use->net,
                          use->peer_net);
            n++;
        }
    }
    if (n > 0)
        tp_log_info(&nx->findings, "%d of %d ring channels cross rails at each node boundary "
                                   "(leave through one NIC, enter the next node through "
                                   "another): %s%s", n, total, tp_buf_str(&list),
                    nx->cross_nic != 0 ? "; NCCL_CROSS_NIC=0 keeps channels on one rail" : "");
    else if (seen && nx->n_nets > 1)
        tp_log_info(&nx->findings, "every ring channel keeps its rail (same NIC out of this node "
                                   "and into the next)");
    tp_buf_free(&list);
}

/* Whether rank r uses NET dev for anything, and for what (text into b). */
static bool describe_use(const tp_nic_rank *r, int dev, tp_buf *b)
{
    int n = 0;
    for (int u = 0; u < r->n_uses; u++)
        if (r->uses[u].net == dev)
            tp_buf_printf(b, "%s%d", n++ ? ", " : "ring channels ", r->uses[u].channel);
    int p2p = 0;
    for (int p = 0; p < r->n_peers; p++)
        if (r->peers[p].net == dev)
            tp_buf_printf(b, "%s%d", p2p++ ? ", " : (n ? "; P2P sends to ranks " :
                                                          "P2P sends to ranks "),
                          r->peers[p].peer_rank);
    if (r->recv_net == dev && r->n_peers > 0)
        tp_buf_printf(b, "%sP2P receives", n || p2p ? "; " : "");
    return n || p2p || (r->recv_net == dev && r->n_peers > 0);
}

static void numa(tp_nics *nx)
{
    for (int i = 0; i < nx->n_ranks; i++) {
        const tp_nic_rank *r = &nx->ranks[i];
        for (int k = 0; k < nx->n_nets; k++) {
            const tp_nic_net *net = &nx->nets[k];
            tp_buf what = {0};
            if (r->numa >= 0 && net->numa >= 0 && net->numa != r->numa &&
                describe_use(r, net->dev, &what))
                tp_log_info(&nx->findings, "rank %d (GPU dev %d, NUMA %d) uses NET/%d (%s) on "
                                           "NUMA %d: %s", r->rank, r->dev, r->numa, net->dev,
                            net->name, net->numa, tp_buf_str(&what));
            tp_buf_free(&what);
        }
    }
}

/* PXN relays of one rank, grouped by proxy rank. */
static void pxn_rank(tp_nics *nx, const tp_nic_rank *r)
{
    int first = nx->node * nx->per_node;
    for (int proxy = first; proxy < first + nx->per_node; proxy++) {
        if (proxy == r->rank)
            continue;
        tp_buf what = {0};
        int n = 0, p2p = 0, no_gdr = 0;
        for (int u = 0; u < r->n_uses; u++)
            if (r->uses[u].send && r->uses[u].proxy_rank == proxy)
                tp_buf_printf(&what, "%s%d (NET/%d)", n++ ? ", " : "ring channels ",
                              r->uses[u].channel, r->uses[u].net);
        for (int p = 0; p < r->n_peers; p++) {
            if (r->peers[p].proxy_rank != proxy)
                continue;
            tp_buf_printf(&what, "%s%d (NET/%d)", p2p++ ? ", " : (n ? "; P2P sends to ranks " :
                                                                       "P2P sends to ranks "),
                          r->peers[p].peer_rank, r->peers[p].net);
            no_gdr += !r->peers[p].gdr;
        }
        if (n || p2p)
            tp_log_info(&nx->findings, "PXN: rank %d sends through rank %d's proxy and NIC "
                                       "(over NVLink to that GPU): %s", r->rank, proxy,
                        tp_buf_str(&what));
        if (no_gdr)
            tp_log_info(&nx->findings, "rank %d: P2P sends relayed by rank %d without GPU Direct "
                                       "RDMA: NCCL 2.22.3 fails them (\"PXN should not use host "
                                       "buffers for data\")", r->rank, proxy);
        tp_buf_free(&what);
    }
}

static void gdr(tp_nics *nx)
{
    for (int i = 0; i < nx->n_ranks; i++) {
        const tp_nic_rank *r = &nx->ranks[i];
        tp_buf nets = {0};
        int n = 0;
        for (int k = 0; k < nx->n_nets; k++) {
            int dev = nx->nets[k].dev, off = 0;
            for (int u = 0; u < r->n_uses; u++)
                off |= r->uses[u].net == dev && !r->uses[u].gdr;
            for (int p = 0; p < r->n_peers; p++)
                off |= r->peers[p].net == dev && !r->peers[p].gdr;
            if (off)
                tp_buf_printf(&nets, "%sNET/%d", n++ ? ", " : "", dev);
        }
        if (n)
            tp_log_info(&nx->findings, "rank %d: no GPU Direct RDMA with %s: data is staged "
                                       "through host memory", r->rank, tp_buf_str(&nets));
        tp_buf_free(&nets);
    }
}

void tp_nics__findings(tp_nics *nx, const tp_plan *plan)
{
    for (size_t i = 0; i < plan->nic_notes.n_lines; i++)
        tp_log_info(&nx->findings, "%s", plan->nic_notes.lines[i].text);
    scope(nx);
    if (nx->n_nodes < 2 || nx->n_nets == 0)
        return;
    idle_rails(nx);
    crossing(nx);
    numa(nx);
    for (int i = 0; i < nx->n_ranks; i++)
        pxn_rank(nx, &nx->ranks[i]);
    gdr(nx);
}
