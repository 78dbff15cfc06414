/* verify: the log against itself (rings of neighbours, job-wide lines, channels, transports). */
#include "verify/verify.h"

#include "config/config.h"
#include "paths/paths.h"
#include "plan/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most ring channels a rank's lines are followed on (NCCL's MAXCHANNELS). */
#define TP_VERIFY_MAX_RINGS 64

static void take_ring(tp_vrank *r, const char *norm)
{
    int c, prev, me, next;
    if (sscanf(norm, "INFO Ring %d : %d -> %d -> %d", &c, &prev, &me, &next) != 4 || c < 0 ||
        c >= TP_VERIFY_MAX_RINGS || me != r->rank)
        return;
    if (!r->ring_prev) {
        r->ring_prev = malloc(TP_VERIFY_MAX_RINGS * sizeof(int));
        r->ring_next = malloc(TP_VERIFY_MAX_RINGS * sizeof(int));
        if (!r->ring_prev || !r->ring_next) {
            free(r->ring_prev);
            free(r->ring_next);
            r->ring_prev = r->ring_next = NULL;
            return;
        }
        for (int i = 0; i < TP_VERIFY_MAX_RINGS; i++)
            r->ring_prev[i] = r->ring_next[i] = -1;
    }
    r->ring_prev[c] = prev;
    r->ring_next[c] = next;
    if (c + 1 > r->n_ring)
        r->n_ring = c + 1;
}

/* "Channel 00/1 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA": a connection of the run. */
static void take_connection(tp_verify *v, tp_vrank *r, const char *norm)
{
    const char *via = strstr(norm, " via ");
    int a, b;
    const char *colon = strstr(norm, " : ");
    if (!via || !colon || sscanf(colon, " : %d[%*d] -> %d[", &a, &b) != 2)
        return;
    const char *t = via + 5;
    bool shm = strncmp(t, "SHM", 3) == 0, net = strncmp(t, "NET", 3) == 0;
    r->conn_p2p += strncmp(t, "P2P", 3) == 0;
    r->conn_shm += shm;
    r->conn_net += net;
    r->conn_gdr += net && strstr(t, "GDRDMA") != NULL;
    if (!shm && !net)
        return;
    /* both ends on one host, yet not P2P: a fallback transport */
    int peer = a == r->rank ? b : a;
    const tp_vrank *p = tp_verify__rank(v, peer);
    if (p && p->host && r->host && r->host[0] && strcmp(p->host, r->host) == 0)
        r->conn_fallback++;
}

void tp_verify__observe(tp_verify *v, tp_vrank *r, const tp_vstream *s, const char *norm)
{
    r->host = s->host;
    if (strcmp(norm, "INFO Connected all rings") == 0)
        r->rings_connected = true;
    if (strncmp(norm, "INFO Ring ", 10) == 0)
        take_ring(r, norm);
    else if (strncmp(norm, "INFO Channel ", 13) == 0 && strstr(norm, " via "))
        take_connection(v, r, norm);
    else if (strstr(norm, " coll channels, ")) {
        r->coll_channels = atoi(norm + 5);
        r->coll_line = tp_verify__hash(norm);
    } else if (strncmp(norm, "INFO Pattern 4, ", 16) == 0) {
        const char *n = strstr(norm, "nChannels ");
        if (n)
            r->ring_search_channels = atoi(n + 10);
    }
}

static void finding(tp_verify *v, const char *fmt, ...) TP_PRINTF(2, 3);
static void finding(tp_verify *v, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    tp_verify__note(v, "%s", buf);
    v->self_findings++;
}

/* Each rank's next on a ring channel must name it as its previous. */
static void check_rings(tp_verify *v)
{
    int reported = 0;
    for (int i = 0; i < v->n_ranks && reported < 16; i++) {
        const tp_vrank *r = v->ranks[i];
        if (!r)
            continue;
        for (int c = 0; c < r->n_ring && reported < 16; c++) {
            int n = r->ring_next[c];
            const tp_vrank *next = tp_verify__rank(v, n);
            if (!next || !next->ring_prev)
                continue;
            int back = next->ring_prev[c];
            if (back >= 0 && back != i) {
                finding(v,
                        "ring %02d: rank %d sends to rank %d, whose ring line receives from "
                        "rank %d (one of the two lines is altered or cut)",
                        c, i, n, back);
                reported++;
            }
        }
    }
}

/* The line every rank prints alike: "N coll channels, ...". */
static void check_job_lines(tp_verify *v)
{
    uint64_t common = 0;
    int votes = 0;
    for (int i = 0; i < v->n_ranks; i++) {
        const tp_vrank *r = v->ranks[i];
        if (!r)
            continue;
        if (r->coll_channels < 0)
            continue;
        if (votes == 0)
            common = r->coll_line;
        votes += r->coll_line == common ? 1 : -1;
    }
    int odd = 0;
    for (int i = 0; i < v->n_ranks; i++) {
        const tp_vrank *r = v->ranks[i];
        if (!r)
            continue;
        if (r->coll_channels >= 0 && r->coll_line != common && odd++ < 16)
            finding(v, "rank %d's channel counts differ from the other ranks' (%d coll channels)",
                    i, r->coll_channels);
    }
    for (int i = 0; i < v->n_ranks; i++) {
        const tp_vrank *r = v->ranks[i];
        if (!r)
            continue;
        if (r->coll_channels >= 0 && r->ring_search_channels > 0 &&
            r->coll_channels < r->ring_search_channels && i < 64)
            tp_verify__note(v,
                            "rank %d: its ring search found %d channels, the job runs %d "
                            "(another rank's node found fewer, or NCCL_MAX_NCHANNELS)",
                            i, r->ring_search_channels, r->coll_channels);
    }
}

/*
 * A host whose ranks' ring search found fewer channels than every other host's: a degraded
 * node (the job runs at its count). Reported when the other hosts agree among themselves.
 */
static void check_hosts(tp_verify *v)
{
    if (v->n_hosts < 3)
        return;
    int *found = malloc((size_t)v->n_hosts * sizeof(int));
    if (!found)
        return;
    size_t at = 0;
    for (int h = 0; h < v->n_hosts; h++, at += strlen(v->hosts + at) + 1) {
        found[h] = -1;
        for (int i = 0; i < v->n_ranks; i++) {
            const tp_vrank *r = v->ranks[i];
            if (r && r->host && r->ring_search_channels > 0 &&
                strcmp(r->host, v->hosts + at) == 0 &&
                (found[h] < 0 || r->ring_search_channels < found[h]))
                found[h] = r->ring_search_channels;
        }
    }
    int low = -1, n_low = 0, high = -1;
    bool others_agree = true;
    for (int h = 0; h < v->n_hosts; h++)
        if (found[h] > 0 && (low < 0 || found[h] < found[low]))
            low = h;
    for (int h = 0; low >= 0 && h < v->n_hosts; h++) {
        n_low += found[h] == found[low];
        if (found[h] > found[low]) {
            others_agree &= high < 0 || found[h] == found[high];
            high = h;
        }
    }
    if (low >= 0 && high >= 0 && n_low == 1 && others_agree) {
        at = 0;
        for (int h = 0; h < low; h++)
            at += strlen(v->hosts + at) + 1;
        finding(v,
                "host %s: its ring search found %d channels, every other host's %d: a degraded "
                "node (the job runs at its count; verify with the healthy topology names the "
                "hardware)",
                v->hosts + at, found[low], found[high]);
    }
    free(found);
}

static void check_transports(tp_verify *v)
{
    for (int i = 0; i < v->n_ranks; i++) {
        const tp_vrank *r = v->ranks[i];
        if (!r)
            continue;
        if (r->conn_fallback > 0)
            finding(v,
                    "rank %d: %d connection(s) to ranks of its own host via SHM or NET, "
                    "not P2P (a fallback transport)",
                    i, r->conn_fallback);
    }
}

tp_status tp_verify__self_check(tp_verify *v, tp_error *err)
{
    (void)err;
    check_rings(v);
    check_job_lines(v);
    check_hosts(v);
    check_transports(v);
    return TP_OK;
}

/* <gpu>/<net> elements from the system tree lines of one rank: what `complete` can fill. */
tp_status tp_verify_write_topology(FILE *out, const tp_verify *v, tp_error *err)
{
    if (!out || !v)
        return tp_fail_arg(err, "tp_verify_write_topology", "NULL argument");
    /* (no double hyphen inside an XML comment) */
    fprintf(out, "<!-- partial topology from an NCCL log (topoplan verify, emit): GPUs and NETs "
                 "the log's system lines show -->\n<system version=\"1\">\n");
    int cpu_open = 0, local = 0;
    for (size_t i = 0; i < v->n_tree_lines; i++) {
        const char *t = v->tree_lines[i];
        unsigned numa = 0;
        unsigned long long bus = 0;
        int rank = -1;
        char guid[64] = "";
        int port = 0;
        float speed = 0;
        const char *gpu = strstr(t, " - GPU/");
        const char *net = strstr(t, " - NET/");
        /* "CPU/0-1": the host's index, then the NUMA id */
        if (sscanf(t, "CPU/%*x-%x", &numa) == 1) {
            if (cpu_open)
                fprintf(out, "  </cpu>\n");
            fprintf(out, "  <cpu numaid=\"%u\">\n", numa);
            cpu_open = 1;
        } else if (gpu && sscanf(gpu, " - GPU/%*x-%llx (%d)", &bus, &rank) == 2) {
            /* NCCL's id of a bus id: its hex digits, domain:bus:device.function */
            fprintf(out,
                    "    <pci busid=\"%04llx:%02llx:%02llx.%llx\"><gpu dev=\"%d\" rank=\"%d\"/>"
                    "</pci>\n",
                    bus >> 20, (bus >> 12) & 0xff, (bus >> 4) & 0xff, bus & 0xf, local, local);
            local++; /* the node's GPUs in NCCL's order: its local ranks */
        } else if (net && sscanf(net, " - NET/%d (%63[0-9a-fA-F]/%d/%f", &rank, guid, &port,
                                 &speed) == 4) {
            fprintf(out,
                    "    <nic><net name=\"net%d\" dev=\"%d\" guid=\"0x%s\" port=\"%d\" "
                    "speed=\"%d\"/></nic>\n",
                    rank, rank, guid, port, (int)(speed * 8000.0f + 0.5f));
        }
    }
    if (cpu_open)
        fprintf(out, "  </cpu>\n");
    fprintf(out, "</system>\n");
    return ferror(out) ? tp_fail(err, TP_ERR_IO, NULL, 0, 0, "write error") : TP_OK;
}

/* NCCL's transport order (transport.cc): P2P when allowed, else SHM unless disabled or the
 * network beats the path (ncclTopoCheckNet), else NET. */
static char transport_between(const tp_plan *plan, const tp_node *me, const tp_node *peer)
{
    int p2p = 0, net = 0;
    if (tp_paths__check_p2p(plan->sys, plan->cfg, me->id, peer->id, &p2p, NULL, NULL, NULL) ==
            TP_OK &&
        p2p)
        return 'P';
    tp_paths__check_net(plan->sys, plan->cfg, me->id, peer->id, &net);
    return net || tp_config_int(plan->cfg, TP_P_SHM_DISABLE) ? 'N' : 'S';
}

tp_status tp_verify__plan_transports(const tp_plan *plan, int rank, tp_vrank *r, tp_error *err)
{
    int host = tp_plan__host_of_rank(plan, rank);
    int first = plan->host_first_rank[host], n = plan->host_first_rank[host + 1] - first;
    const tp_node_set *gpus = &plan->sys->nodes[TP_NODE_GPU];
    const tp_node *me = NULL;
    for (int i = 0; i < gpus->count; i++)
        if (gpus->nodes[i].gpu.rank == rank)
            me = &gpus->nodes[i];
    free(r->transport);
    r->transport = calloc((size_t)n + 1, 1);
    if (!r->transport)
        return tp_fail_nomem(err);
    r->first_local = first;
    r->n_local = n;
    /* GPUs of the host outside the rank's trimmed system reach it by NET only */
    memset(r->transport, 'N', (size_t)n);
    for (int i = 0; me && i < gpus->count; i++) {
        int peer = gpus->nodes[i].gpu.rank - first;
        if (peer >= 0 && peer < n && &gpus->nodes[i] != me)
            r->transport[peer] = transport_between(plan, me, &gpus->nodes[i]);
    }
    if (!me)
        memset(r->transport, '?', (size_t)n);
    /* GDR of the NICs its collective channels use (tp_plan_nic): checked when all agree */
    bool on = false, off = false;
    tp_channels_info ch;
    if (tp_plan_channels(plan, &ch, sizeof(ch)) == TP_OK)
        for (int c = 0; c < ch.n_channels; c++) {
            /* only the channels where the rank itself is a ring's entry or exit */
            tp_rank_channel rc;
            tp_nic_choice nic;
            if (tp_plan_rank_channel(plan, rank, c, &rc, sizeof(rc)) != TP_OK ||
                !((rc.ring_next >= 0 && tp_plan__host_of_rank(plan, rc.ring_next) != host) ||
                  (rc.ring_prev >= 0 && tp_plan__host_of_rank(plan, rc.ring_prev) != host)) ||
                tp_plan_nic(plan, rank, c, -1, &nic, sizeof(nic)) != TP_OK)
                continue;
            on |= nic.gdr;
            off |= !nic.gdr;
        }
    r->gdr = on && !off ? 1 : off && !on ? 0 : -1;
    return tp_verify__plan_nets(plan, rank, r, err);
}

bool tp_verify__check_connection(const tp_vrank *r, const char *norm, char *why, size_t size)
{
    const char *colon = strstr(norm, " : "), *via = strstr(norm, " via ");
    int a, b;
    if (!colon || !via || !r->transport || sscanf(colon, " : %d[%*d] -> %d[", &a, &b) != 2)
        return true;
    int peer = a == r->rank ? b : a;
    int local = peer - r->first_local;
    if (local < 0 || local >= r->n_local) {
        /* another host: the network; its GDR when the plan gives every NIC of the rank one */
        bool gdr = strstr(via, "GDRDMA") != NULL;
        if (strncmp(via + 5, "NET", 3) != 0)
            return true;
        if (!tp_verify__check_net(r, norm, peer, why, size))
            return false;
        if (r->gdr < 0 || gdr == (r->gdr == 1))
            return true;
        snprintf(why, size,
                 "a connection between ranks %d and %d via NET %s GPU Direct RDMA (the plan's)",
                 r->rank, peer, r->gdr ? "with" : "without");
        return false;
    }
    if (peer == r->rank)
        return true;
    char want = r->transport[local], got = via[5];
    if (want == '?' || (got != 'P' && got != 'S' && got != 'N') || got == want)
        return true;
    static const char *const names[] = {"P2P", "SHM", "NET"};
    const char *wname = names[want == 'P' ? 0 : want == 'S' ? 1 : 2];
    snprintf(why, size, "a connection between ranks %d and %d via %s (the plan's transport)",
             r->rank, peer, wname);
    return false;
}
