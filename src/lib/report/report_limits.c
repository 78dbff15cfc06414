/* The "who limits the job" section of `topoplan plan` (job_limits.h), text and JSON. */
#include "report/job_limits.h"
#include "report/report.h"

#include <string.h>

static void graph_values(FILE *out, const tp_graph_info *g)
{
    fprintf(out, "%d ch, %.1f/%.1f GB/s, %s/%s", g->n_channels, g->bw_intra, g->bw_inter,
            tp_path_type_name(g->type_intra), tp_path_type_name(g->type_inter));
}

static void text_graph(FILE *out, const tp_plan *plan, const tp_graph_limits *gl, int slot)
{
    fprintf(out, "  %s: job ", tp_channels__graph_name(slot));
    graph_values(out, &gl->combined);
    fputc('\n', out);
    for (int k = 0; k < plan->n_kinds; k++) {
        const tp_kind_graph *kg = &gl->kinds[k];
        char hosts[256], what[128];
        tp_limits__hosts_text(hosts, sizeof(hosts), plan, k);
        char source[1100];
        fprintf(out, "    %-14s (%s): ", hosts,
                tp_printable(source, sizeof(source), plan->kinds[k].source));
        graph_values(out, &kg->own);
        tp_limits__what_text(what, sizeof(what), kg->limits);
        fprintf(out, kg->limits ? "   <- sets the job's %s\n" : "\n", what);
        for (int i = 0; i < kg->n_causes; i++)
            fprintf(out, "        cause: %s\n", kg->causes[i]);
    }
}

static void text_costs(FILE *out, const tp_plan *plan, const tp_job_limits *lim)
{
    for (int k = 0; k < plan->n_kinds; k++) {
        const tp_kind_cost *c = &lim->costs[k];
        char hosts[256], like[256];
        int cost = c->channels_like - c->channels_now;
        if (c->like < 0 ||
            (cost == 0 && c->ring_bw_like == c->ring_bw_now &&
             c->ring_bw_inter_like == c->ring_bw_inter_now && c->calls.worst_change_pct == 0))
            continue;
        tp_limits__hosts_text(hosts, sizeof(hosts), plan, k);
        tp_limits__hosts_text(like, sizeof(like), plan, c->like);
        fprintf(out,
                "  %s (%s): %d collective channels, ring %.1f/%.1f GB/s; planned like %s "
                "(re-planned): %d, ring %.1f/%.1f GB/s: ",
                hosts, plan->kinds[k].source, c->channels_now, c->ring_bw_now, c->ring_bw_inter_now,
                like, c->channels_like, c->ring_bw_like, c->ring_bw_inter_like);
        bool slower = c->calls.worst_change_pct <= -TP_COST_ERROR_PCT;
        if (cost > 0)
            fprintf(out, "it costs the job %d channel%s", cost, cost == 1 ? "" : "s");
        else if (cost < 0)
            fprintf(out, "%d more channel%s%s", -cost, cost == -1 ? "" : "s",
                    slower ? ", yet the job is slower" : "");
        else
            fputs("same channel count", out);
        /* Channels alone mislead: the cost as NCCL's tuning model predicts it. */
        if (c->calls.n_calls) {
            char calls[1024];
            tp_job_cost_text(&c->calls, calls, sizeof(calls));
            fprintf(out, "; NCCL's tuning model: %s", calls);
        }
        fputc('\n', out);
    }
}

void tp_limits__write_text(FILE *out, const tp_plan *plan, const tp_job_limits *lim)
{
    /* Nodes of one topology: each node's graphs are the job's, nothing to tell. */
    if (plan->n_kinds == 1)
        return;
    fputs("Who limits the job (each node's own search result; the job takes the fewest "
          "channels, the lowest bandwidths, the worst path types)\n",
          out);
    for (int s = 0; s < TP_GRAPH_COUNT; s++)
        if (lim->graphs[s].shown)
            text_graph(out, plan, &lim->graphs[s], s);
    text_costs(out, plan, lim);
    fputc('\n', out);
}

static void json_info(FILE *out, const tp_graph_info *g)
{
    fprintf(out,
            "{\"n_channels\": %d, \"bw_intra\": %.2f, \"bw_inter\": %.2f, \"type_intra\": "
            "\"%s\", \"type_inter\": \"%s\"}",
            g->n_channels, g->bw_intra, g->bw_inter, tp_path_type_name(g->type_intra),
            tp_path_type_name(g->type_inter));
}

static void json_hosts(FILE *out, const tp_plan *plan, int k)
{
    fputc('[', out);
    for (int h = 0, n = 0; h < plan->job.n_nodes; h++)
        if (plan->host_kind[h] == k)
            fprintf(out, "%s%d", n++ ? ", " : "", h);
    fputc(']', out);
}

static void json_limits(FILE *out, unsigned limits)
{
    static const char *const names[] = {"channels", "bw_intra", "bw_inter", "type_intra",
                                        "type_inter"};
    fputc('[', out);
    for (size_t i = 0, n = 0; i < ARRAY_LEN(names); i++)
        if (limits & (1u << i))
            fprintf(out, "%s\"%s\"", n++ ? ", " : "", names[i]);
    fputc(']', out);
}

static void json_kind(FILE *out, const tp_plan *plan, const tp_kind_graph *kg, int k)
{
    fputs("{\"node_indices\": ", out);
    json_hosts(out, plan, k);
    fputs(", \"topology\": ", out);
    tp_report__json_str(out, plan->kinds[k].source);
    fputs(", \"own\": ", out);
    json_info(out, &kg->own);
    fputs(", \"sets\": ", out);
    json_limits(out, kg->limits);
    fputs(", \"causes\": [", out);
    for (int i = 0; i < kg->n_causes; i++) {
        fputs(i ? ", " : "", out);
        tp_report__json_str(out, kg->causes[i]);
    }
    fputs("], \"deviations\": [", out);
    for (int i = 0; i < kg->n_deviations; i++) {
        const tp_difference *d = &kg->deviations[i];
        fputs(i ? ", {\"title\": " : "{\"title\": ", out);
        tp_report__json_str(out, d->title);
        fputs(", \"text\": ", out);
        tp_report__json_str(out, d->text);
        tp_report__json_finding_fields(out, d);
        fputc('}', out);
    }
    fputs("]}", out);
}

static void json_costs(FILE *out, const tp_plan *plan, const tp_job_limits *lim)
{
    fputs("\"costs\": [", out);
    for (int k = 0, n = 0; k < plan->n_kinds; k++) {
        const tp_kind_cost *c = &lim->costs[k];
        if (c->like < 0)
            continue;
        fprintf(out, "%s\n      {\"node_indices\": ", n++ ? "," : "");
        json_hosts(out, plan, k);
        fputs(", \"planned_like\": ", out);
        json_hosts(out, plan, c->like);
        fprintf(out,
                ", \"channels\": %d, \"channels_like\": %d, \"channels_cost\": %d, "
                "\"ring_bw_intra\": %.2f, \"ring_bw_intra_like\": %.2f, \"ring_bw_inter\": "
                "%.2f, \"ring_bw_inter_like\": %.2f, \"worst_busbw_change_pct\": %.2f}",
                c->channels_now, c->channels_like, c->channels_like - c->channels_now,
                c->ring_bw_now, c->ring_bw_like, c->ring_bw_inter_now, c->ring_bw_inter_like,
                c->calls.worst_change_pct);
    }
    fputs("]", out);
}

void tp_limits__write_json(FILE *out, const tp_plan *plan, const tp_job_limits *lim)
{
    fputs("{\"graphs\": [", out);
    for (int s = 0, n = 0; s < TP_GRAPH_COUNT; s++) {
        const tp_graph_limits *gl = &lim->graphs[s];
        if (!gl->shown)
            continue;
        fprintf(out, "%s\n      {\"graph\": \"%s\", \"job\": ", n++ ? "," : "",
                tp_channels__graph_name(s));
        json_info(out, &gl->combined);
        fputs(", \"kinds\": [", out);
        for (int k = 0; k < plan->n_kinds; k++) {
            fputs(k ? ", " : "", out);
            json_kind(out, plan, &gl->kinds[k], k);
        }
        fputs("]}", out);
    }
    fputs("],\n    ", out);
    json_costs(out, plan, lim);
    fputs("}", out);
}
