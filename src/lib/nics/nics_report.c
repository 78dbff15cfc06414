/* `topoplan nics`: per-rank NIC use (ring channel ends, P2P peers, PXN, GDR) and findings. */
#include "nics/nics.h"
#include "report/report.h"

#include <string.h>

static void bus_id_text(char *buf, size_t size, int64_t id)
{
    unsigned long long v = (unsigned long long)TP_ID_LOCAL_ID(id);
    snprintf(buf, size, "%04llx:%02llx:%02llx.%llx", v >> 20, (v >> 12) & 0xff, (v >> 4) & 0xff,
             v & 0xf);
}

static const char *net_name(const tp_nics *nx, int dev)
{
    const tp_nic_net *net = tp_nics__net(nx, dev);
    return net ? net->name : "?";
}

/* The rail a channel end keeps or crosses: remote NIC and local NIC, in flow order. */
static void rail_text(char *buf, size_t size, const tp_nic_use *u)
{
    int from = u->send ? u->net : u->peer_net, to = u->send ? u->peer_net : u->net;
    snprintf(buf, size, "NET/%d -> NET/%d %s", from, to, from == to ? "kept" : "crossed");
}

static void text_header(FILE *out, const tp_nics *nx)
{
    int first = nx->first_rank;
    fprintf(out, "NICs of node %d (ranks %d-%d) in a job of %d node%s [NCCL %s]\n", nx->node, first,
            first + nx->per_node - 1, nx->n_nodes, nx->n_nodes == 1 ? "" : "s", nx->nccl_version);
    fprintf(out, "NCCL_CROSS_NIC=%lld, P2P PXN level %d, %d ring channels, %d P2P channels\n\n",
            (long long)nx->cross_nic, nx->pxn_level, nx->ring_channels, nx->p2p_channels);
    if (nx->n_nets == 0)
        return;
    fprintf(out, "NET devices\n  %-5s %-24s %-5s %-8s %-10s %s\n", "NET", "name", "NUMA", "GB/s",
            "ring ends", "P2P sends");
    for (int i = 0; i < nx->n_nets; i++) {
        const tp_nic_net *n = &nx->nets[i];
        fprintf(out, "  %-5d %-24s %-5d %-8.1f %-10d %d\n", n->dev, n->name, n->numa, n->bw,
                n->ring_uses, n->p2p_uses);
    }
    fputc('\n', out);
}

static void rail_pair(char *buf, size_t size, int from, int to)
{
    if (from < 0 || to < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "NET/%d -> NET/%d %s", from, to, from == to ? "kept" : "crossed");
}

static void text_channels(FILE *out, const tp_nics *nx)
{
    if (nx->ring_channels == 0 || nx->n_nets == 0 || nx->n_nodes < 2)
        return;
    fprintf(out,
            "Ring channels at node %d (rail in: previous node's NIC -> entry NIC; rail out: "
            "exit NIC -> next node's NIC)\n  %-4s %-15s %-15s %-24s %s\n",
            nx->node, "ch", "entry", "exit", "rail in", "rail out");
    for (int c = 0; c < nx->ring_channels; c++) {
        const tp_nic_channel *ch = &nx->channels[c];
        char entry[32], exit_[32], in[48], out_[48];
        snprintf(entry, sizeof(entry), "NET/%d rank %d", ch->entry_net, ch->entry_rank);
        snprintf(exit_, sizeof(exit_), "NET/%d rank %d", ch->exit_net, ch->exit_rank);
        rail_pair(in, sizeof(in), ch->prev_exit_net, ch->entry_net);
        rail_pair(out_, sizeof(out_), ch->exit_net, ch->next_entry_net);
        fprintf(out, "  %-4d %-15s %-15s %-24s %s\n", c, ch->entry_net < 0 ? "-" : entry,
                ch->exit_net < 0 ? "-" : exit_, in, out_);
    }
    fputc('\n', out);
}

static void text_uses(FILE *out, const tp_nic_rank *r)
{
    if (r->n_uses == 0)
        return;
    fprintf(out,
            "  ring channels (entry: receive from the previous node; exit: send to the next)\n"
            "    %-4s %-6s %-7s %-7s %-4s %s\n",
            "ch", "end", "NIC", "proxy", "GDR", "rail");
    for (int u = 0; u < r->n_uses; u++) {
        const tp_nic_use *use = &r->uses[u];
        char nic[32], proxy[32], rail[64];
        snprintf(nic, sizeof(nic), "NET/%d", use->net);
        if (use->proxy_rank == r->rank)
            snprintf(proxy, sizeof(proxy), "-");
        else
            snprintf(proxy, sizeof(proxy), "%d PXN", use->proxy_rank);
        rail_text(rail, sizeof(rail), use);
        fprintf(out, "    %-4d %-6s %-7s %-7s %-4s %s\n", use->channel,
                use->send ? "exit" : "entry", nic, proxy, use->gdr ? "on" : "off", rail);
    }
}

/* Receives from each remote peer: the channel of each part and this rank's NIC on it. */
static void text_recvs(FILE *out, const tp_nic_rank *r)
{
    fprintf(out,
            "  P2P receives from remote peers (%s; each part's channel -> this rank's NIC on "
            "that channel, never relayed [no GDR])\n    %-6s %-6s %s\n",
            r->peers[0].recv_round >= 0 ? "NCCL's p2p schedule: the round the peer sends in"
                                        : "each P2P channel",
            "peer", "round", "parts");
    for (int p = 0; p < r->n_peers; p++) {
        const tp_nic_p2p *peer = &r->peers[p];
        char round[16];
        snprintf(round, sizeof(round), peer->recv_round >= 0 ? "%d" : "-", peer->recv_round);
        fprintf(out, "    %-6d %-6s", peer->peer_rank, round);
        for (int i = 0; i < peer->n_recv_parts; i++) {
            const tp_nic_part *pt = &peer->recv_parts[i];
            fprintf(out, " %d:ch%d->NET/%d%s", pt->part, pt->channel, pt->net,
                    pt->gdr ? "" : "[no GDR]");
        }
        fputc('\n', out);
    }
}

static void text_peers(FILE *out, const tp_nics *nx, const tp_nic_rank *r)
{
    if (r->n_peers == 0)
        return;
    if (r->peers[0].round >= 0)
        fprintf(out,
                "  P2P sends to remote peers (NCCL's p2p schedule: round, then each part's "
                "channel -> NIC [PXN proxy] [no GDR])\n    %-6s %-6s %-7s %-7s %-4s %-6s %s\n",
                "peer", "local", "NIC", "proxy", "GDR", "round", "parts");
    else
        fprintf(out,
                "  P2P sends to remote peers (P2P channel 0; parts: each P2P channel)\n"
                "    %-6s %-6s %-7s %-7s %-4s %-6s %s\n",
                "peer", "local", "NIC", "proxy", "GDR", "round", "channels");
    for (int p = 0; p < r->n_peers; p++) {
        const tp_nic_p2p *peer = &r->peers[p];
        char nic[32], proxy[32];
        snprintf(nic, sizeof(nic), "NET/%d", peer->net);
        if (peer->proxy_rank == r->rank)
            snprintf(proxy, sizeof(proxy), "-");
        else
            snprintf(proxy, sizeof(proxy), "%d PXN", peer->proxy_rank);
        char round[16];
        snprintf(round, sizeof(round), peer->round >= 0 ? "%d" : "-", peer->round);
        fprintf(out, "    %-6d %-6d %-7s %-7s %-4s %-6s", peer->peer_rank, p, nic, proxy,
                peer->gdr ? "on" : "off", round);
        for (int i = 0; i < peer->n_parts; i++) {
            const tp_nic_part *pt = &peer->parts[i];
            fprintf(out, " %d:ch%d->NET/%d", pt->part, pt->channel, pt->net);
            if (pt->proxy_rank != r->rank)
                fprintf(out, "[PXN %d]", pt->proxy_rank);
            if (!pt->gdr)
                fputs("[no GDR]", out);
        }
        fputc('\n', out);
    }
    text_recvs(out, r);
    if (r->pxn_crash) {
        fprintf(out, "  PXN proxy ranks: NCCL 2.22.3 crashes computing them (P2P PXN level 1)\n");
        return;
    }
    if (nx->pxn_level == 0 || r->n_pxn == 0) {
        fprintf(out, "  PXN proxy ranks: none\n");
        return;
    }
    fputs("  PXN proxy ranks:", out);
    for (int i = 0; i < r->n_pxn; i++)
        fprintf(out, " %d", r->pxn_ranks[i]);
    fputc('\n', out);
}

static void text_graph_uses(FILE *out, const char *title, const tp_nic_graph_use *u, int n,
                            int rank)
{
    if (n == 0)
        return;
    fprintf(out, "  %s\n", title);
    for (int i = 0; i < n; i++) {
        fprintf(out, "    ch %-3d %-5s", u[i].channel, u[i].role);
        if (u[i].peer_rank >= 0)
            fprintf(out, " rank %-4d", u[i].peer_rank);
        fprintf(out, " NET/%d (id %llx)", u[i].net, (unsigned long long)u[i].net_id);
        if (u[i].proxy_rank != rank)
            fprintf(out, " sends via PXN proxy %d", u[i].proxy_rank);
        fputc('\n', out);
    }
}

static void text_rank(FILE *out, const tp_nics *nx, const tp_nic_rank *r)
{
    char bus[32];
    bus_id_text(bus, sizeof(bus), r->bus_id);
    fprintf(out, "rank %d: GPU dev %d (%s), NUMA %d", r->rank, r->dev, bus, r->numa);
    if (r->near_net >= 0)
        fprintf(out, ", nearest NIC NET/%d (%s, %s, %.1f GB/s)", r->near_net,
                net_name(nx, r->near_net), tp_path_type_name(r->near_type), r->near_bw);
    fputc('\n', out);
    text_uses(out, r);
    text_graph_uses(out, "tree channels to other nodes (tree graph NIC; up: parent, down: child)",
                    r->tree, r->n_tree, r->rank);
    text_graph_uses(out, "NVLS channels this rank heads (NVLS graph NIC)", r->nvls, r->n_nvls,
                    r->rank);
    text_peers(out, nx, r);
    fputc('\n', out);
}

static void write_text(FILE *out, const tp_nics *nx)
{
    text_header(out, nx);
    text_channels(out, nx);
    for (int i = 0; i < nx->n_ranks; i++)
        text_rank(out, nx, &nx->ranks[i]);
    fputs("Findings\n", out);
    if (nx->findings.n_lines == 0)
        fputs("  (none)\n", out);
    for (size_t i = 0; i < nx->findings.n_lines; i++)
        fprintf(out, "  - %s\n", nx->findings.lines[i].text);
}

static void json_nets(FILE *out, const tp_nics *nx)
{
    fputs("  \"nets\": [", out);
    for (int i = 0; i < nx->n_nets; i++) {
        const tp_nic_net *n = &nx->nets[i];
        fprintf(out, "%s\n    {\"dev\": %d, \"id\": \"%llx\", \"device\": ", i ? "," : "", n->dev,
                (unsigned long long)n->id);
        tp_report__json_str(out, n->name);
        fprintf(out,
                ", \"numa\": %d, \"bw\": %.1f, \"asic\": \"%llx\", \"port\": %d, "
                "\"ring_uses\": %d, \"p2p_uses\": %d}",
                n->numa, n->bw, (unsigned long long)n->asic, n->port, n->ring_uses, n->p2p_uses);
    }
    fputs(nx->n_nets ? "\n  ],\n" : "],\n", out);
}

static void json_uses(FILE *out, const tp_nic_rank *r)
{
    fputs("\"channels\": [", out);
    for (int u = 0; u < r->n_uses; u++) {
        const tp_nic_use *use = &r->uses[u];
        int from = use->send ? use->net : use->peer_net, to = use->send ? use->peer_net : use->net;
        fprintf(out,
                "%s{\"channel\": %d, \"end\": \"%s\", \"net\": %d, \"proxy\": %d, "
                "\"pxn\": %s, \"gdr\": %s, \"peer\": %d, \"peer_net\": %d, \"rail\": \"%s\"}",
                u ? ", " : "", use->channel, use->send ? "exit" : "entry", use->net,
                use->proxy_rank, use->proxy_rank != r->rank ? "true" : "false",
                use->gdr ? "true" : "false", use->peer_rank, use->peer_net,
                from == to ? "kept" : "crossed");
    }
    fputs("]", out);
}

static void json_peers(FILE *out, const tp_nic_rank *r)
{
    fputs("\"p2p\": [", out);
    for (int p = 0; p < r->n_peers; p++) {
        const tp_nic_p2p *peer = &r->peers[p];
        fprintf(out,
                "%s{\"peer\": %d, \"net\": %d, \"proxy\": %d, \"pxn\": %s, \"gdr\": %s, "
                "\"round\": %d, \"nets\": [",
                p ? ", " : "", peer->peer_rank, peer->net, peer->proxy_rank,
                peer->proxy_rank != r->rank ? "true" : "false", peer->gdr ? "true" : "false",
                peer->round);
        for (int i = 0; i < peer->n_nets; i++)
            fprintf(out, "%s%d", i ? ", " : "", peer->nets[i]);
        fputs("], \"parts\": [", out);
        for (int i = 0; i < peer->n_parts; i++) {
            const tp_nic_part *pt = &peer->parts[i];
            fprintf(out,
                    "%s{\"part\": %d, \"channel\": %d, \"net\": %d, \"net_id\": \"%llx\", "
                    "\"proxy\": %d, \"pxn\": %s, \"gdr\": %s}",
                    i ? ", " : "", pt->part, pt->channel, pt->net, (unsigned long long)pt->net_id,
                    pt->proxy_rank, pt->proxy_rank != r->rank ? "true" : "false",
                    pt->gdr ? "true" : "false");
        }
        fprintf(out, "], \"recv_round\": %d, \"recv_parts\": [", peer->recv_round);
        for (int i = 0; i < peer->n_recv_parts; i++) {
            const tp_nic_part *pt = &peer->recv_parts[i];
            fprintf(out,
                    "%s{\"part\": %d, \"channel\": %d, \"net\": %d, \"net_id\": \"%llx\", "
                    "\"gdr\": %s}",
                    i ? ", " : "", pt->part, pt->channel, pt->net, (unsigned long long)pt->net_id,
                    pt->gdr ? "true" : "false");
        }
        fputs("]}", out);
    }
    fprintf(out, "], \"p2p_recv\": {\"net\": %d, \"gdr\": %s}, \"pxn_ranks\": [", r->recv_net,
            r->recv_gdr ? "true" : "false");
    for (int i = 0; i < r->n_pxn; i++)
        fprintf(out, "%s%d", i ? ", " : "", r->pxn_ranks[i]);
    fputs("]", out);
}

static void json_graph_uses(FILE *out, const char *key, const tp_nic_graph_use *u, int n, int rank)
{
    fprintf(out, ",\n     \"%s\": [", key);
    for (int i = 0; i < n; i++)
        fprintf(out,
                "%s{\"channel\": %d, \"role\": \"%s\", \"peer\": %d, \"net\": %d, "
                "\"net_id\": \"%llx\", \"proxy\": %d, \"pxn\": %s}",
                i ? ", " : "", u[i].channel, u[i].role, u[i].peer_rank, u[i].net,
                (unsigned long long)u[i].net_id, u[i].proxy_rank,
                u[i].proxy_rank != rank ? "true" : "false");
    fputs("]", out);
}

static void json_rank(FILE *out, const tp_nic_rank *r)
{
    char bus[32];
    bus_id_text(bus, sizeof(bus), r->bus_id);
    fprintf(out,
            "    {\"rank\": %d, \"local\": %d, \"cuda_dev\": %d, \"busid\": \"%s\", \"numa\": %d, "
            "\"nearest_net\": %d, \"nearest_path\": \"%s\", \"nearest_bw\": %.1f,\n     ",
            r->rank, r->local, r->dev, bus, r->numa, r->near_net,
            r->near_net >= 0 ? tp_path_type_name(r->near_type) : "", r->near_bw);
    json_uses(out, r);
    fputs(",\n     ", out);
    json_peers(out, r);
    json_graph_uses(out, "tree", r->tree, r->n_tree, r->rank);
    json_graph_uses(out, "nvls", r->nvls, r->n_nvls, r->rank);
    fprintf(out, ",\n     \"pxn_crash\": %s}", r->pxn_crash ? "true" : "false");
}

static void write_json(FILE *out, const tp_nics *nx, const char *nccl_version)
{
    tp_report__json_begin(out, "topoplan.nics", nccl_version);
    fprintf(out,
            "  \"node_index\": %d, \"nodes\": %d, \"gpus_per_node\": %d, \"cross_nic\": %lld, "
            "\"pxn_level\": %d, \"ring_channels\": %d, \"p2p_channels\": %d, "
            "\"p2p_channels_per_peer\": %d, \"p2p_schedule\": %s,\n",
            nx->node, nx->n_nodes, nx->per_node, (long long)nx->cross_nic, nx->pxn_level,
            nx->ring_channels, nx->p2p_channels, nx->p2p_per_peer,
            nx->p2p_schedule ? "true" : "false");
    bool crash = false;
    for (int i = 0; i < nx->n_ranks; i++)
        crash |= nx->ranks[i].pxn_crash;
    /* NCCL 2.22.3 crashes in init with NCCL_P2P_PXN_LEVEL=1 (ncclTopoGetPxnRanks). */
    fprintf(out, "  \"nccl_crashes\": %s,\n", crash ? "true" : "false");
    json_nets(out, nx);
    fputs("  \"channels\": [", out);
    for (int c = 0; c < nx->ring_channels; c++) {
        const tp_nic_channel *ch = &nx->channels[c];
        fprintf(out,
                "%s\n    {\"channel\": %d, \"entry_rank\": %d, \"entry_net\": %d, "
                "\"exit_rank\": %d, \"exit_net\": %d, \"prev_exit_net\": %d, "
                "\"next_entry_net\": %d}",
                c ? "," : "", c, ch->entry_rank, ch->entry_net, ch->exit_rank, ch->exit_net,
                ch->prev_exit_net, ch->next_entry_net);
    }
    fputs(nx->ring_channels ? "\n  ],\n" : "],\n", out);
    fputs("  \"ranks\": [\n", out);
    for (int i = 0; i < nx->n_ranks; i++) {
        json_rank(out, &nx->ranks[i]);
        fputs(i + 1 < nx->n_ranks ? ",\n" : "\n", out);
    }
    fputs("  ],\n  \"findings\": [", out);
    for (size_t i = 0; i < nx->findings.n_lines; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        tp_report__json_str(out, nx->findings.lines[i].text);
    }
    fputs(nx->findings.n_lines ? "\n  ]\n}\n" : "]\n}\n", out);
}

tp_status tp_report_nics(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err)
{
    tp_status ok = tp_plan__check_done(plan, "tp_report_nics", err);
    if (ok != TP_OK)
        return ok;
    if (!out)
        return tp_fail_arg(err, "tp_report_nics", "out is NULL");
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail_arg(err, "tp_report_nics", "fmt out of range");
    if (fmt == TP_FORMAT_DOT)
        return tp_fail(err, TP_ERR_CONFIG, "fmt", 0, 0, "nics: no dot output (use text or json)");
    tp_nics nx;
    tp_status st = tp_nics__build(&nx, plan, err);
    if (st != TP_OK)
        return st;
    if (fmt == TP_FORMAT_JSON)
        write_json(out, &nx, tp_config_nccl(plan->cfg));
    else
        write_text(out, &nx);
    tp_nics__free(&nx);
    return tp_report__check_stream(out, err);
}
