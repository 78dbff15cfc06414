/*
 * verify: the NIC and the proxy of a ring connection over the network.
 *
 * NCCL 2.22.3 net.cc sendSetup/recvSetup print "Channel 02/0 : 3[3] -> 11[3] [send] via
 * NET/IB/1(5)/GDRDMA": the NET device ncclTopoGetNetDev gives (search.cc: the ring graph's
 * entry NET for the channel's head, its exit NET for the others) and, for a send, the rank
 * whose proxy drives it when that is not the sender (PXN, "(5)"). The plan gives both per
 * ring channel (tp_plan_nic); they are checked on the ring connections (connection index 0,
 * before the rank's "Connected all rings": tree, NVLS and P2P connections follow it).
 */
#include "verify/verify.h"

#include "nics/nics.h"
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The proxy of a send that is not checked (a head that is also its channel's tail). */
#define TP_PROXY_UNCHECKED (-2)

/* The names of the host's NET devices ("mlx5_0"), NUL-separated, by device number. */
static tp_status net_names(const tp_plan *plan, tp_vrank *r, tp_error *err)
{
    const tp_node_set *nets = &plan->sys->nodes[TP_NODE_NET];
    int n = 0;
    for (int i = 0; i < nets->count; i++)
        n = nets->nodes[i].net.dev + 1 > n ? nets->nodes[i].net.dev + 1 : n;
    free(r->net_names);
    r->net_names = NULL;
    r->n_net_names = 0;
    size_t len = 0;
    for (int pass = 0; pass < 2; pass++) {
        len = 0;
        for (int d = 0; d < n; d++) {
            const char *name =
                plan->topo_xml ? tp_nics__xml_net_name(plan->topo_xml->root, d) : NULL;
            size_t k = name ? strlen(name) : 0;
            if (pass)
                memcpy(r->net_names + len, name ? name : "", k + 1);
            len += k + 1;
        }
        if (!pass && n > 0 && !(r->net_names = malloc(len)))
            return tp_fail_nomem(err);
    }
    r->n_net_names = n;
    return TP_OK;
}

tp_status tp_verify__plan_nets(const tp_plan *plan, int rank, tp_vrank *r, tp_error *err)
{
    tp_channels_info ch;
    free(r->ring_net);
    r->ring_net = NULL;
    r->n_ring_net = 0;
    if (tp_plan_channels(plan, &ch, sizeof(ch)) != TP_OK || ch.n_channels <= 0 ||
        plan->sys->nodes[TP_NODE_NET].count == 0)
        return TP_OK;
    if (!(r->ring_net = malloc(2 * (size_t)ch.n_channels * sizeof(int))))
        return tp_fail_nomem(err);
    r->n_ring_net = ch.n_channels;
    /* ncclTopoGetNetDev reads channel % nChannels of the ring graph as the all-gather left
     * it: the job's fewest channels, which a node of more channels counts from its own */
    int combined = plan->channels.combined[TP_GRAPH_RING].n_channels;
    for (int c = 0; c < ch.n_channels; c++) {
        tp_nic_choice nic;
        int *slot = &r->ring_net[2 * c];
        slot[0] = -1;
        slot[1] = TP_PROXY_UNCHECKED;
        if (combined <= 0 ||
            tp_plan_nic(plan, rank, c % combined, -1, &nic, sizeof(nic)) != TP_OK ||
            nic.role == TP_NIC_NONE)
            continue;
        /* the head's entry NET, the tail's exit NET: net_dev, as ncclTopoGetNetDev picks */
        slot[0] = nic.net_dev;
        if (nic.role == TP_NIC_SEND)
            slot[1] = nic.proxy_rank - r->first_local;
    }
    return net_names(plan, r, err);
}

static const char *name_of(const tp_vrank *r, int dev)
{
    const char *p = r->net_names;
    for (int d = 0; p && d < r->n_net_names; d++, p += strlen(p) + 1)
        if (d == dev)
            return *p ? p : NULL;
    return NULL;
}

static void net_text(const tp_vrank *r, int dev, char *buf, size_t size)
{
    const char *name = name_of(r, dev);
    if (name)
        snprintf(buf, size, "NET/%d (%s)", dev, name);
    else
        snprintf(buf, size, "NET/%d", dev);
}

/* "NET/<plugin>/<dev>[(<proxy>)][/GDRDMA]...": the device and the proxy (-1: none printed). */
static bool parse_net(const char *via, int *dev, int *proxy)
{
    const char *p = strstr(via, "NET/");
    if (!p)
        return false;
    /* the plugin's name may hold '/'-less words with blanks: the device is the first
     * "/<digits>" followed by '(', '/' or the end */
    for (p = strchr(p + 4, '/'); p; p = strchr(p + 1, '/')) {
        char *end;
        long d = strtol(p + 1, &end, 10);
        if (end == p + 1 || (*end != '(' && *end != '/' && *end))
            continue;
        *dev = (int)d;
        *proxy = *end == '(' ? atoi(end + 1) : -1;
        return true;
    }
    return false;
}

bool tp_verify__check_net(const tp_vrank *r, const char *norm, int peer, char *why, size_t size)
{
    int c, conn, dev, proxy;
    const char *via = strstr(norm, " via ");
    if (!r->ring_net || r->rings_connected || !via ||
        sscanf(norm, "INFO Channel %d/%d", &c, &conn) != 2 || conn != 0 || c < 0 ||
        !parse_net(via, &dev, &proxy))
        return true;
    const int *want = &r->ring_net[2 * (c % r->n_ring_net)];
    bool send = strstr(norm, "[send]") != NULL;
    char got_net[96], want_net[96];
    net_text(r, dev, got_net, sizeof(got_net));
    net_text(r, want[0], want_net, sizeof(want_net));
    if (want[0] >= 0 && dev != want[0]) {
        snprintf(why, size, "ring channel %02d: rank %d %s rank %d via %s (the plan's NIC)", c,
                 r->rank, send ? "sends to" : "receives from", peer, want_net);
        return false;
    }
    if (!send || want[0] < 0 || want[1] == TP_PROXY_UNCHECKED)
        return true;
    int want_proxy = want[1] + r->first_local, got_proxy = proxy < 0 ? r->rank : proxy;
    if (got_proxy == want_proxy)
        return true;
    if (want_proxy == r->rank)
        snprintf(why, size,
                 "ring channel %02d: rank %d sends to rank %d on %s through its own proxy, not "
                 "PXN (the plan's)",
                 c, r->rank, peer, want_net);
    else
        snprintf(why, size,
                 "ring channel %02d: rank %d sends to rank %d on %s through rank %d's proxy (PXN: "
                 "the NIC is nearer that GPU; the plan's)",
                 c, r->rank, peer, want_net, want_proxy);
    return false;
}
