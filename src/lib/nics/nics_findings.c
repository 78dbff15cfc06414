/*
 * Findings of the NIC view in plain words: idle rails, channels crossing
 * rails, NICs on another NUMA node, PXN relays, GDR, filter results. The
 * questions users bring to NCCL's issue tracker about multi-NIC machines.
 */
#include "nics/nics.h"

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
        tp_log_info(&nx->findings,
                    "one NET device, %s: every channel and peer uses it; "
                    "NCCL_CROSS_NIC and the PXN settings cannot change that",
                    a);
    }
}

/*
 * Idle NICs that share guid and port with a used one: NCCL 2.22.3 takes NETs
 * of one guid and port for ports of one NIC (ncclTopoAddNet), so the search
 * uses one of them ("30 idle NICs: they share one guid"). "" when none.
 */
static void shared_guid_cause(char *buf, size_t size, const tp_nics *nx)
{
    int shared = 0;
    const tp_nic_net *with = NULL;
    for (int i = 0; i < nx->n_nets; i++) {
        const tp_nic_net *idle = &nx->nets[i];
        if (idle->ring_uses > 0)
            continue;
        for (int j = 0; j < nx->n_nets; j++)
            if (nx->nets[j].ring_uses > 0 && nx->nets[j].asic == idle->asic &&
                nx->nets[j].port == idle->port) {
                shared++;
                with = &nx->nets[j];
                break;
            }
    }
    buf[0] = '\0';
    if (shared)
        snprintf(buf, size,
                 ": %d of them share guid 0x%llx and port %d with %s (NET/%d), so NCCL counts "
                 "them as one port with it (a topology-file defect, see the lint)",
                 shared, (unsigned long long)with->asic, with->port, with->name, with->dev);
}

/* Rails: NICs that no ring channel uses. */
static void idle_rails(tp_nics *nx)
{
    char cause[TP_NIC_NAME_MAX + 256];
    shared_guid_cause(cause, sizeof(cause), nx);
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
        tp_log_info(&nx->findings,
                    "only one rail carries the ring channels: %s; %s stay idle "
                    "for collectives%s",
                    a, tp_buf_str(&idle), cause);
    } else if (nx->n_nets > 1 && used > 1 && used < nx->n_nets) {
        tp_log_info(&nx->findings, "%d of %d NICs carry ring channels; %s carry none%s", used,
                    nx->n_nets, tp_buf_str(&idle), cause);
    }
    tp_buf_free(&idle);
}

/* One node boundary of a channel: the sending node's NIC and the receiving node's. */
static bool crossed(int from, int to)
{
    return from >= 0 && to >= 0 && from != to;
}

/*
 * The NCCL_CROSS_NIC=0 advice, given only when re-planning with it shows
 * fewer channels crossing rails; otherwise what re-planning showed.
 */
static void cross_nic_advice(tp_nics *nx, const tp_plan *plan, int n, int total)
{
    if (nx->cross_nic == 0)
        return;
    int after = 0, after_total = 0;
    tp_error err = {0};
    if (tp_nics__replan_crossings(plan, "NCCL_CROSS_NIC", "0", &after, &after_total, &err) !=
        TP_OK) {
        tp_log_info(&nx->findings,
                    "NCCL_CROSS_NIC=0 was not advised: re-planning with it "
                    "failed (%s)",
                    err.message);
    } else if (after < n) {
        tp_log_info(&nx->findings,
                    "advice, checked by re-planning: NCCL_CROSS_NIC=0 leaves %d of "
                    "%d ring channels crossing rails (now %d of %d)",
                    after, after_total, n, total);
    } else {
        tp_log_info(&nx->findings,
                    "NCCL_CROSS_NIC=0 would not help: re-planned with it, %d of %d "
                    "ring channels still cross rails",
                    after, after_total);
    }
}

/* Ring channels that change rails at a boundary into or out of this node. */
static void crossing(tp_nics *nx, const tp_plan *plan)
{
    tp_buf list = {0};
    int n = 0, total = 0;
    for (int c = 0; c < nx->ring_channels; c++) {
        const tp_nic_channel *ch = &nx->channels[c];
        bool in = crossed(ch->prev_exit_net, ch->entry_net);
        bool out = crossed(ch->exit_net, ch->next_entry_net);
        total += ch->exit_net >= 0 || ch->entry_net >= 0;
        if (!in && !out)
            continue;
        tp_buf_printf(&list, "%s%d (", n++ ? ", " : "", c);
        if (in)
            tp_buf_printf(&list, "in NET/%d -> NET/%d%s", ch->prev_exit_net, ch->entry_net,
                          out ? "; " : "");
        if (out)
            tp_buf_printf(&list, "out NET/%d -> NET/%d", ch->exit_net, ch->next_entry_net);
        tp_buf_printf(&list, ")");
    }
    if (n > 0)
        tp_log_info(&nx->findings,
                    "%d of %d ring channels cross rails between nodes (one node "
                    "sends from one NIC, the other receives on another): %s%s",
                    n, total, tp_buf_str(&list), "");
    else if (total > 0 && nx->n_nets > 1)
        tp_log_info(&nx->findings, "every ring channel keeps its rail between nodes (each node "
                                   "receives on the NIC the previous one sends from)");
    tp_buf_free(&list);
    if (n > 0)
        cross_nic_advice(nx, plan, n, total);
}

/* Channels entering and leaving the node through different NICs (graph crossNic). */
static void cross_nic(tp_nics *nx)
{
    tp_buf list = {0};
    int n = 0;
    for (int c = 0; c < nx->ring_channels; c++) {
        const tp_nic_channel *ch = &nx->channels[c];
        if (ch->entry_net >= 0 && ch->exit_net >= 0 && ch->entry_net != ch->exit_net)
            tp_buf_printf(&list, "%s%d (NET/%d in, NET/%d out)", n++ ? ", " : "", c, ch->entry_net,
                          ch->exit_net);
    }
    if (n > 0)
        tp_log_info(&nx->findings,
                    "%d ring channels enter and leave this node through different "
                    "NICs (cross-NIC graph): %s",
                    n, tp_buf_str(&list));
    tp_buf_free(&list);
}

/* Whether rank r drives NET dev itself (no PXN relay), and for what (text into b). */
static bool describe_direct_use(const tp_nic_rank *r, int dev, tp_buf *b)
{
    int n = 0, p2p = 0;
    for (int u = 0; u < r->n_uses; u++)
        if (r->uses[u].net == dev && r->uses[u].proxy_rank == r->rank)
            tp_buf_printf(b, "%s%d", n++ ? " " : "ring channels ", r->uses[u].channel);
    for (int p = 0; p < r->n_peers; p++)
        if (r->peers[p].net == dev && r->peers[p].proxy_rank == r->rank)
            tp_buf_printf(b, "%s%d",
                          p2p++ ? " " : (n ? "; P2P sends to ranks " : "P2P sends to ranks "),
                          r->peers[p].peer_rank);
    bool recv = false;
    for (int p = 0; p < r->n_peers; p++)
        for (int i = 0; i < r->peers[p].n_recv_parts; i++)
            recv |= r->peers[p].recv_parts[i].net == dev;
    if (recv)
        tp_buf_printf(b, "%sP2P receives", n || p2p ? "; " : "");
    return n || p2p || recv;
}

/* A GPU driving a NIC of another NUMA node through PCIe (relayed sends excluded). */
static void numa(tp_nics *nx)
{
    for (int i = 0; i < nx->n_ranks; i++) {
        const tp_nic_rank *r = &nx->ranks[i];
        for (int k = 0; k < nx->n_nets; k++) {
            const tp_nic_net *net = &nx->nets[k];
            tp_buf what = {0};
            if (r->numa >= 0 && net->numa >= 0 && net->numa != r->numa &&
                describe_direct_use(r, net->dev, &what))
                tp_log_info(&nx->findings,
                            "rank %d (GPU dev %d, NUMA %d) uses NET/%d (%s) on "
                            "NUMA %d: %s",
                            r->rank, r->dev, r->numa, net->dev, net->name, net->numa,
                            tp_buf_str(&what));
            tp_buf_free(&what);
        }
    }
}

/* PXN relays of one rank: which ranks' proxies and NICs carry its sends. */
static void pxn_rank(tp_nics *nx, const tp_nic_rank *r)
{
    tp_buf proxies = {0};
    int n_ring = 0, n_p2p = 0, no_gdr = 0, first = nx->first_rank;
    for (int proxy = first; proxy < first + nx->per_node; proxy++) {
        int uses = 0;
        for (int u = 0; u < r->n_uses; u++)
            uses += r->uses[u].send && r->uses[u].proxy_rank == proxy && proxy != r->rank;
        for (int p = 0; p < r->n_peers; p++) {
            bool relayed = r->peers[p].proxy_rank == proxy && proxy != r->rank;
            uses += relayed;
            n_p2p += relayed;
            no_gdr += relayed && !r->peers[p].gdr;
        }
        if (uses)
            tp_buf_printf(&proxies, " %d", proxy);
    }
    for (int u = 0; u < r->n_uses; u++)
        n_ring += r->uses[u].send && r->uses[u].proxy_rank != r->rank;
    if (proxies.len)
        tp_log_info(&nx->findings,
                    "PXN: rank %d sends through the proxies and NICs of ranks%s (over "
                    "NVLink to that GPU): %d ring channel sends, P2P sends to %d "
                    "of %d peers",
                    r->rank, tp_buf_str(&proxies), n_ring, n_p2p, r->n_peers);
    if (no_gdr)
        tp_log_info(&nx->findings,
                    "rank %d: %d P2P sends relayed by PXN without GPU Direct RDMA: "
                    "NCCL 2.22.3 fails them (\"PXN should not use host buffers for "
                    "data\")",
                    r->rank, no_gdr);
    tp_buf_free(&proxies);
}

/* NICs that rank r's sends (GDR read) or receives (GDR write) reach without GDR. */
static void gdr_list(const tp_nics *nx, const tp_nic_rank *r, bool send, tp_buf *b)
{
    for (int k = 0; k < nx->n_nets; k++) {
        int dev = nx->nets[k].dev;
        bool off = false;
        for (int p = 0; !send && p < r->n_peers; p++)
            for (int i = 0; i < r->peers[p].n_recv_parts; i++)
                off |= r->peers[p].recv_parts[i].net == dev && !r->peers[p].recv_parts[i].gdr;
        for (int u = 0; u < r->n_uses; u++)
            off |= r->uses[u].send == send && r->uses[u].net == dev && !r->uses[u].gdr;
        for (int p = 0; send && p < r->n_peers; p++)
            off |= r->peers[p].net == dev && !r->peers[p].gdr;
        if (off)
            tp_buf_printf(b, "%sNET/%d", b->len ? ", " : "", dev);
    }
}

static void gdr(tp_nics *nx)
{
    for (int i = 0; i < nx->n_ranks; i++) {
        const tp_nic_rank *r = &nx->ranks[i];
        tp_buf send = {0}, recv = {0};
        gdr_list(nx, r, true, &send);
        gdr_list(nx, r, false, &recv);
        if (send.len || recv.len)
            tp_log_info(&nx->findings,
                        "rank %d: no GPU Direct RDMA for %s%s%s%s%s%s: data is "
                        "staged through host memory",
                        r->rank, send.len ? "sends on " : "", tp_buf_str(&send),
                        send.len && recv.len ? ", " : "", recv.len ? "receives on " : "",
                        tp_buf_str(&recv), "");
        tp_buf_free(&send);
        tp_buf_free(&recv);
    }
}

/* Whether re-planning with key=value leaves no rank crashing (the advice holds). */
static bool avoids_crash(const tp_plan *plan, const char *key, const char *value)
{
    tp_nics other;
    tp_error err = {0};
    if (tp_nics__replan(&other, plan, key, value, &err) != TP_OK)
        return false;
    bool crash = false;
    for (int i = 0; i < other.n_ranks; i++)
        crash |= other.ranks[i].pxn_crash;
    tp_nics__free(&other);
    return !crash;
}

static void pxn_crash(tp_nics *nx, const tp_plan *plan)
{
    tp_buf ranks = {0};
    for (int i = 0; i < nx->n_ranks; i++)
        if (nx->ranks[i].pxn_crash)
            tp_buf_printf(&ranks, " %d", nx->ranks[i].rank);
    if (ranks.len) {
        bool disable = avoids_crash(plan, "NCCL_PXN_DISABLE", "1");
        bool level2 = avoids_crash(plan, "NCCL_P2P_PXN_LEVEL", "2");
        tp_log_info(
            &nx->findings,
            "NCCL_P2P_PXN_LEVEL=1: NCCL 2.22.3's ncclTopoGetPxnRanks "
            "passes no device to ncclTopoGetNetDev, which level 1 "
            "dereferences: init crashes on ranks%s%s%s%s",
            tp_buf_str(&ranks), disable || level2 ? " (re-planned without the crash: " : "",
            disable ? (level2 ? "NCCL_PXN_DISABLE=1 or NCCL_P2P_PXN_LEVEL=2" : "NCCL_PXN_DISABLE=1")
            : level2 ? "NCCL_P2P_PXN_LEVEL=2"
                     : "",
            disable || level2 ? ")" : "");
    }
    tp_buf_free(&ranks);
}

void tp_nics__findings(tp_nics *nx, const tp_plan *plan)
{
    for (size_t i = 0; i < plan->nic_notes.n_lines; i++)
        tp_log_info(&nx->findings, "%s", plan->nic_notes.lines[i].text);
    scope(nx);
    if (nx->n_nodes < 2 || nx->n_nets == 0)
        return;
    idle_rails(nx);
    cross_nic(nx);
    crossing(nx, plan);
    numa(nx);
    for (int i = 0; i < nx->n_ranks; i++)
        pxn_rank(nx, &nx->ranks[i]);
    pxn_crash(nx, plan);
    gdr(nx);
}
