/* `topoplan plan`: the main view: graphs, final channels and why, rings, trees, NICs. */
#include "explain/explain.h"
#include "report/job_limits.h"
#include "report/report.h"

#include <stdlib.h>

#include <string.h>

/* Ranks shown per ring line in text; JSON carries every rank. */
#define TEXT_RING_RANKS 48

/*
 * The rings and trees are thousands of small numbers on big jobs: written
 * into a block flushed as it fills, not one printf each.
 */
typedef struct num_out {
    FILE *f;
    size_t n;
    char buf[4096];
} num_out;

static void num_flush(num_out *o)
{
    fwrite(o->buf, 1, o->n, o->f);
    o->n = 0;
}

static void num_str(num_out *o, const char *s)
{
    size_t len = strlen(s);
    if (o->n + len > sizeof(o->buf))
        num_flush(o);
    if (len > sizeof(o->buf)) {
        fputs(s, o->f);
        return;
    }
    memcpy(o->buf + o->n, s, len);
    o->n += len;
}

/* "%d" of v. */
static void num_int(num_out *o, int v)
{
    if (o->n + TP_INT_SIZE > sizeof(o->buf))
        num_flush(o);
    o->n += (size_t)tp_format_int(o->buf + o->n, v);
}

/* "%02d" of a channel number (0 or more). */
static void num_channel(num_out *o, int c)
{
    if (c < 10)
        num_str(o, "0");
    num_int(o, c);
}

static void text_header(FILE *out, const tp_plan *p)
{
    const tp_channels *ch = &p->channels;
    tp_report__job_line(out, p);
    if (ch->n_nodes != p->job.n_nodes)
        fprintf(out,
                "  note: NCCL sees %d nodes for %d hosts: GPUs of one host that cannot "
                "use P2P or SHM are split into separate nodes\n",
                ch->n_nodes, p->job.n_nodes);
    const tp_system *s = p->sys;
    fprintf(out,
            "System of rank %d: %d GPU, %d NVSwitch, %d CPU, %d NIC, %d NET; maxBw %.1f "
            "totalBw %.1f GB/s\n\n",
            p->job.rank, s->nodes[TP_NODE_GPU].count, s->nodes[TP_NODE_NVS].count,
            s->nodes[TP_NODE_CPU].count, s->nodes[TP_NODE_NIC].count, s->nodes[TP_NODE_NET].count,
            s->max_bw, s->total_bw);
}

static void text_graphs(FILE *out, const tp_plan *p)
{
    fputs("Graphs (search result of the reported rank; combined = minimum over all ranks)\n", out);
    fprintf(out, "  %-15s %7s %8s %17s %9s %8s %5s   %s\n", "graph", "pattern", "channels",
            "bw intra/inter", "types", "crossNic", "same", "combined");
    for (int s = 0; s < TP_GRAPH_COUNT; s++) {
        const tp_graph *g = p->graphs[s];
        const tp_graph_info *c = &p->channels.combined[s];
        if (!g)
            continue;
        char bw[32], types[16];
        snprintf(bw, sizeof(bw), "%.1f/%.1f", g->bw_intra, g->bw_inter);
        snprintf(types, sizeof(types), "%s/%s", tp_path_type_name(g->type_intra),
                 tp_path_type_name(g->type_inter));
        fprintf(out, "  %-15s %7d %8d %17s %9s %8d %5d   %d ch, %.1f/%.1f\n",
                tp_channels__graph_name(s), g->pattern, g->n_channels, bw, types, g->cross_nic,
                g->same_channels, c->n_channels, c->bw_intra, c->bw_inter);
    }
    fputc('\n', out);
}

/* Each graph's explanation (explain.c), under the table. */
static void text_graph_whys(FILE *out, const tp_plan *p, const tp_graph_why *whys)
{
    fputs("Why each graph is so (search decisions of the reported rank)\n", out);
    for (int s = 0; s < TP_GRAPH_COUNT; s++) {
        if (!p->graphs[s])
            continue;
        fprintf(out, "  %s:\n", tp_channels__graph_name(s));
        for (int i = 0; i < whys[s].n_lines; i++)
            fprintf(out, "    %-11s %s\n", whys[s].lines[i].step, whys[s].lines[i].text);
    }
    fputc('\n', out);
}

static void text_channel_count(FILE *out, const tp_plan *p)
{
    const tp_channels *ch = &p->channels;
    fprintf(out, "Channels: %d collective, %d NVLS, %d CollNet, %d P2P (%d per peer)\n",
            ch->n_channels, ch->n_nvls_channels, ch->n_collnet_channels, ch->p2p_n_channels,
            ch->p2p_n_channels_per_peer);
    fprintf(out, "  why %d:\n", ch->n_channels);
    tp_graph_why w;
    tp_explain__channels(&w, p);
    for (int i = 0; i < w.n_lines; i++)
        fprintf(out, "  - %s\n", w.lines[i].text);
    fputc('\n', out);
}

static void text_rings(FILE *out, const tp_plan *p)
{
    const tp_channels *ch = &p->channels;
    num_out o = {.f = out};
    num_str(&o, "Rings (ranks in ring order, from rank 0)\n");
    for (int c = 0; c < ch->n_channels; c++) {
        num_str(&o, "  ");
        num_channel(&o, c);
        num_str(&o, ":");
        int shown = ch->n_ranks < TEXT_RING_RANKS ? ch->n_ranks : TEXT_RING_RANKS;
        for (int i = 0; i < shown; i++) {
            num_str(&o, " ");
            num_int(&o, ch->rings[(size_t)c * ch->n_ranks + i]);
        }
        if (shown < ch->n_ranks) {
            num_str(&o, " ... (");
            num_int(&o, ch->n_ranks - shown);
            num_str(&o, " more; --format json has all)");
        }
        num_str(&o, "\n");
    }
    num_str(&o, "\n");
    num_flush(&o);
}

static void text_rank_view(FILE *out, const tp_plan *p)
{
    const tp_channels *ch = &p->channels;
    fprintf(out, "Rank %d per channel: ring prev -> me -> next; tree parent, children\n",
            p->job.rank);
    num_out o = {.f = out};
    for (int c = 0; c < ch->n_channels; c++) {
        const tp_channel_rank *r = &ch->ranks[(size_t)p->job.rank * ch->n_channels + c];
        num_str(&o, "  ");
        num_channel(&o, c);
        num_str(&o, ": ring ");
        num_int(&o, r->ring_prev);
        num_str(&o, " -> ");
        num_int(&o, p->job.rank);
        num_str(&o, " -> ");
        num_int(&o, r->ring_next);
        num_str(&o, "   tree up ");
        num_int(&o, r->tree_up);
        num_str(&o, ", down ");
        for (int k = 0; k < 3; k++) {
            num_str(&o, k ? "/" : "");
            num_int(&o, r->tree_down[k]);
        }
        num_str(&o, "\n");
    }
    num_str(&o, "\n");
    num_flush(&o);
}

/* For multi-node rings: which GPU takes the channel in from the network and out to it. */
static void text_network(FILE *out, const tp_plan *p)
{
    const tp_graph *g = p->graphs[TP_GRAPH_RING];
    const tp_system *s = p->sys;
    int n_gpus = s->nodes[TP_NODE_GPU].count;
    if (!g || s->nodes[TP_NODE_NET].count == 0 || g->n_channels == 0)
        return;
    fputs("Network (ring graph of the reported rank's node): per channel, NET in -> first GPU ... "
          "last GPU -> NET out\n",
          out);
    for (int c = 0; c < g->n_channels; c++) {
        int64_t in = g->inter[2 * c], outn = g->inter[2 * c + 1];
        fprintf(out, "  %02d: NET/%lld -> rank %d ... rank %d -> NET/%lld%s\n", c,
                (long long)TP_ID_LOCAL_ID(in), g->intra[c * n_gpus],
                g->intra[c * n_gpus + n_gpus - 1], (long long)TP_ID_LOCAL_ID(outn),
                in == outn ? "" : "  (crosses NICs)");
    }
    fputc('\n', out);
}

static void write_text(FILE *out, const tp_plan *p, const tp_graph_why *whys,
                       const tp_job_limits *lim)
{
    text_header(out, p);
    text_graphs(out, p);
    tp_limits__write_text(out, p, lim);
    text_graph_whys(out, p, whys);
    text_channel_count(out, p);
    text_network(out, p);
    text_rings(out, p);
    text_rank_view(out, p);
}

static void json_graphs(FILE *out, const tp_plan *p, const tp_graph_why *whys)
{
    fputs("  \"graphs\": [", out);
    bool first = true;
    for (int s = 0; s < TP_GRAPH_COUNT; s++) {
        const tp_graph *g = p->graphs[s];
        const tp_graph_info *c = &p->channels.combined[s];
        if (!g)
            continue;
        fprintf(out,
                "%s\n    {\"graph\": \"%s\", \"id\": %d, \"pattern\": %d, \"pattern_name\": "
                "\"%s\", \"n_channels\": %d, "
                "\"bw_intra\": %.2f, \"bw_inter\": %.2f, \"type_intra\": \"%s\", "
                "\"type_inter\": \"%s\", \"cross_nic\": %d, \"same_channels\": %d, "
                "\"combined\": {\"n_channels\": %d, \"bw_intra\": %.2f, \"bw_inter\": %.2f},\n     "
                "\"why\": ",
                first ? "" : ",", tp_channels__graph_name(s), g->id, g->pattern,
                tp_pattern_name(g->pattern), g->n_channels, g->bw_intra, g->bw_inter,
                tp_path_type_name(g->type_intra), tp_path_type_name(g->type_inter), g->cross_nic,
                g->same_channels, c->n_channels, c->bw_intra, c->bw_inter);
        tp_report__json_why(out, &whys[s]);
        fputc('}', out);
        first = false;
    }
    fputs("\n  ],\n", out);
}

static void json_rings(FILE *out, const tp_channels *ch)
{
    num_out o = {.f = out};
    num_str(&o, "  \"rings\": [");
    for (int c = 0; c < ch->n_channels; c++) {
        num_str(&o, c ? ",\n    [" : "\n    [");
        for (int i = 0; i < ch->n_ranks; i++) {
            num_str(&o, i ? ", " : "");
            num_int(&o, ch->rings[(size_t)c * ch->n_ranks + i]);
        }
        num_str(&o, "]");
    }
    num_str(&o, "\n  ],\n");
    num_flush(&o);
}

static void json_trees(FILE *out, const tp_channels *ch)
{
    num_out o = {.f = out};
    num_str(&o, "  \"trees\": [");
    for (int r = 0; r < ch->n_ranks; r++) {
        num_str(&o, r ? ",\n    [" : "\n    [");
        for (int c = 0; c < ch->n_channels; c++) {
            const tp_channel_rank *v = &ch->ranks[(size_t)r * ch->n_channels + c];
            num_str(&o, c ? ", {\"up\": " : "{\"up\": ");
            num_int(&o, v->tree_up);
            for (int k = 0; k < 3; k++) {
                num_str(&o, k ? ", " : ", \"down\": [");
                num_int(&o, v->tree_down[k]);
            }
            num_str(&o, "]}");
        }
        num_str(&o, "]");
    }
    num_str(&o, "\n  ]\n");
    num_flush(&o);
}

static void write_json(FILE *out, const tp_plan *p, const tp_graph_why *whys,
                       const tp_job_limits *lim)
{
    const tp_channels *ch = &p->channels;
    tp_report__json_begin(out, "topoplan.plan", tp_config_nccl(p->cfg));
    fprintf(out,
            "  \"nodes\": %d, \"gpus_per_node\": %d, \"n_ranks\": %d, \"rank\": %d, "
            "\"nccl_nodes\": %d,\n",
            p->job.n_nodes, p->n_gpus_per_node, ch->n_ranks, p->job.rank, ch->n_nodes);
    json_graphs(out, p, whys);
    fputs("  \"limits\": ", out);
    tp_limits__write_json(out, p, lim);
    fputs(",\n", out);
    fprintf(out,
            "  \"channels\": {\"collective\": %d, \"search\": %d, \"nvls\": %d, \"collnet\": %d, "
            "\"p2p\": %d, \"p2p_per_peer\": %d, \"why\": ",
            ch->n_channels, ch->search_channels, ch->n_nvls_channels, ch->n_collnet_channels,
            ch->p2p_n_channels, ch->p2p_n_channels_per_peer);
    tp_graph_why w;
    tp_explain__channels(&w, p);
    tp_report__json_why(out, &w);
    fputs("},\n", out);
    json_rings(out, ch);
    json_trees(out, ch);
    fputs("}\n", out);
}

tp_status tp_report_plan(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err)
{
    tp_status ok = tp_plan__check_done(plan, "tp_report_plan", err);
    if (ok != TP_OK)
        return ok;
    if (!out)
        return tp_fail_arg(err, "tp_report_plan", "out is NULL");
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail_arg(err, "tp_report_plan", "fmt out of range");
    if (!plan->sys || !plan->channels.rings)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "the plan has no channels");
    if (fmt == TP_FORMAT_DOT)
        return tp_report__plan_dot(out, plan, -1, err);
    tp_graph_why *whys = malloc(TP_GRAPH_COUNT * sizeof(*whys)); /* tp_explain__plan sets them */
    if (!whys)
        return tp_fail_nomem(err);
    tp_job_limits lim;
    tp_status st = tp_explain__plan(whys, plan, false, err);
    if (st == TP_OK)
        st = tp_limits__compute(&lim, plan, err);
    if (st == TP_OK && fmt == TP_FORMAT_JSON)
        write_json(out, plan, whys, &lim);
    else if (st == TP_OK)
        write_text(out, plan, whys, &lim);
    if (st == TP_OK)
        tp_limits__free(&lim);
    free(whys);
    return st == TP_OK ? tp_report__check_stream(out, err) : st;
}
