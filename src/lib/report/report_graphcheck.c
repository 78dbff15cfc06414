/* The graph-check result as text or JSON (writes only; the check owns the data). */
#include "graphcheck/graphcheck.h"
#include "report/report.h"

#include <string.h>

static const char *severity_name(tp_gc_severity sev)
{
    return sev == TP_GC_ERROR ? "error" : sev == TP_GC_WARNING ? "warning" : "note";
}

/* JSON severities are the same words in every document: error, warning, info. */
static const char *json_severity_name(tp_gc_severity sev)
{
    return sev == TP_GC_ERROR ? "error" : sev == TP_GC_WARNING ? "warning" : "info";
}

static const char *link_kind(const tp_gc_link *l)
{
    return l->type == TP_GC_NET_PORT ? "NET port" : tp_link_type_name(l->type);
}

static size_t count_severity(const tp_gc_finding *f, size_t n, tp_gc_severity sev)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += f[i].severity == sev;
    return k;
}

static size_t total_severity(const tp_graph_check *chk, tp_gc_severity sev)
{
    size_t k = count_severity(chk->findings, chk->n_findings, sev);
    for (size_t i = 0; i < chk->n_graphs; i++)
        k += count_severity(chk->graphs[i].findings, chk->graphs[i].n_findings, sev);
    return k;
}

/* Channel numbers as ranges: "0-3, 5". */
static void text_channels(FILE *out, uint64_t mask)
{
    const char *sep = "";
    for (int c = 0; c < 64; c++) {
        if (!(mask >> c & 1))
            continue;
        int end = c;
        while (end + 1 < 64 && (mask >> (end + 1) & 1))
            end++;
        if (end > c)
            fprintf(out, "%s%d-%d", sep, c, end);
        else
            fprintf(out, "%s%d", sep, c);
        sep = ", ";
        c = end;
    }
}

static void text_finding(FILE *out, const tp_graph_check *chk, const tp_gc_finding *f)
{
    char source[1100];
    fprintf(out, "  %s: ", severity_name(f->severity));
    if (f->line)
        fprintf(out, "%s:%u:%u: ", tp_printable(source, sizeof(source), chk->source), f->line,
                f->column);
    if (f->channel >= 0)
        fprintf(out, "channel %d: ", f->channel);
    fprintf(out, "%s\n", f->text);
}

static void text_link_name(FILE *out, const tp_gc_link *l)
{
    if (l->type == TP_GC_NET_PORT)
        fprintf(out, "%s port", l->from);
    else
        fprintf(out, "%s -> %s (%s)", l->from, l->to, link_kind(l));
}

static void text_over(FILE *out, const tp_gc_link *l)
{
    fputs("  error: link ", out);
    text_link_name(out, l);
    fprintf(out, " is oversubscribed: %g GB/s reserved, %g available; channels ", l->reserved,
            l->capacity);
    text_channels(out, l->channels);
    fputc('\n', out);
}

/* The most used link, as a share of its capacity (the graph's headroom). */
static const tp_gc_link *busiest(const tp_gc_graph *g)
{
    const tp_gc_link *best = NULL;
    for (size_t i = 0; i < g->n_links; i++) {
        const tp_gc_link *l = &g->links[i];
        if (l->capacity > 0 &&
            (!best || l->reserved / l->capacity > best->reserved / best->capacity))
            best = l;
    }
    return best;
}

static void text_graph(FILE *out, const tp_graph_check *chk, const tp_gc_graph *g)
{
    fprintf(out, "\ngraph id %d (%s), line %u: ", g->id, tp_pattern_name(g->pattern), g->line);
    if (g->n_channels != 0 || g->n_elements != 0)
        fprintf(out, "%d channel%s, speed %g/%g GB/s, type %s/%s: ", g->n_channels,
                g->n_channels == 1 ? "" : "s", g->bw_intra, g->bw_inter,
                tp_path_type_name(g->type_intra), tp_path_type_name(g->type_inter));
    if (g->n_errors)
        fprintf(out, "INFEASIBLE (%d error%s)\n", g->n_errors, g->n_errors == 1 ? "" : "s");
    else
        fputs(g->n_channels > 0 ? "feasible\n" : "empty\n", out);
    for (size_t i = 0; i < g->n_findings; i++)
        text_finding(out, chk, &g->findings[i]);
    for (size_t i = 0; i < g->n_links; i++)
        if (g->links[i].over)
            text_over(out, &g->links[i]);
    const tp_gc_link *b = busiest(g);
    if (b && !g->n_errors) {
        fputs("  busiest link: ", out);
        text_link_name(out, b);
        fprintf(out, ", %g of %g GB/s reserved\n", b->reserved, b->capacity);
    }
}

static void write_text(FILE *out, const tp_graph_check *chk)
{
    fprintf(out,
            "graph-check: %s on %s (%d node%s: %d GPUs, %d NETs, %d NVSwitches per node) "
            "[NCCL %s]\n",
            chk->source, chk->topology, chk->n_nodes, chk->n_nodes == 1 ? "" : "s", chk->n_gpus,
            chk->n_nets, chk->n_nvs, chk->nccl_version);
    fputs("GPUs are named GPU/<rank>, NETs NET/<dev>, as in NCCL's channel lines.\n", out);
    for (size_t i = 0; i < chk->n_findings; i++)
        text_finding(out, chk, &chk->findings[i]);
    for (size_t i = 0; i < chk->n_graphs; i++)
        text_graph(out, chk, &chk->graphs[i]);
    size_t errors = tp_graph_check_error_count(chk);
    size_t warnings = total_severity(chk, TP_GC_WARNING);
    fprintf(out, "\nresult: %s (%zu graph%s, %zu error%s, %zu warning%s)\n",
            tp_graph_check_feasible(chk) ? "feasible" : "infeasible", chk->n_graphs,
            chk->n_graphs == 1 ? "" : "s", errors, errors == 1 ? "" : "s", warnings,
            warnings == 1 ? "" : "s");
}

/* ------------------------------------------------------------------------ */

static void json_findings(FILE *out, const tp_gc_finding *f, size_t n, const char *indent)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out,
                "%s\n%s  {\"severity\": \"%s\", \"channel\": %d, \"line\": %u, "
                "\"column\": %u, \"message\": ",
                i ? "," : "", indent, json_severity_name(f[i].severity), f[i].channel, f[i].line,
                f[i].column);
        tp_report__json_str(out, f[i].text);
        fputc('}', out);
    }
    fprintf(out, "%s%s]", n ? "\n" : "", n ? indent : "");
}

static void json_link(FILE *out, const tp_gc_link *l)
{
    fputs("{\"from\": ", out);
    tp_report__json_str(out, l->from);
    fputs(", \"to\": ", out);
    tp_report__json_str(out, l->type == TP_GC_NET_PORT ? "" : l->to);
    fprintf(out,
            ", \"link\": \"%s\", \"capacity\": %g, \"reserved\": %g, \"left\": %g, "
            "\"over\": %s, \"channels\": [",
            link_kind(l), l->capacity, l->reserved, l->left, l->over ? "true" : "false");
    const char *sep = "";
    for (int c = 0; c < 64; c++) {
        if (l->channels >> c & 1) {
            fprintf(out, "%s%d", sep, c);
            sep = ", ";
        }
    }
    fputs("]}", out);
}

static void json_graph(FILE *out, const tp_gc_graph *g)
{
    fprintf(out,
            "{\"id\": %d, \"pattern\": %d, \"pattern_name\": \"%s\", \"line\": %u, "
            "\"n_channels\": %d, \"channel_elements\": %d, \"bw_intra\": %g, "
            "\"bw_inter\": %g, \"type_intra\": \"%s\", \"type_inter\": \"%s\", "
            "\"cross_nic\": %d, \"same_channels\": %d, \"feasible\": %s, \"errors\": %d,\n",
            g->id, g->pattern, tp_pattern_name(g->pattern), g->line, g->n_channels, g->n_elements,
            g->bw_intra, g->bw_inter, tp_path_type_name(g->type_intra),
            tp_path_type_name(g->type_inter), g->cross_nic, g->same_channels,
            g->n_errors ? "false" : "true", g->n_errors);
    fputs("     \"findings\": ", out);
    json_findings(out, g->findings, g->n_findings, "     ");
    fputs(",\n     \"links\": [", out);
    for (size_t i = 0; i < g->n_links; i++) {
        fprintf(out, "%s\n       ", i ? "," : "");
        json_link(out, &g->links[i]);
    }
    fprintf(out, "%s]}", g->n_links ? "\n     " : "");
}

static void write_json(FILE *out, const tp_graph_check *chk)
{
    tp_report__json_begin(out, "topoplan.graph-check", chk->nccl_version);
    fputs("  \"graph_file\": ", out);
    tp_report__json_str(out, chk->source);
    fputs(", \"topology\": ", out);
    tp_report__json_str(out, chk->topology);
    fprintf(out,
            ",\n  \"nodes\": %d, \"n_gpus\": %d, \"n_nets\": %d, \"n_nvswitches\": %d,\n"
            "  \"feasible\": %s, \"errors\": %zu, \"warnings\": %zu,\n  \"findings\": ",
            chk->n_nodes, chk->n_gpus, chk->n_nets, chk->n_nvs,
            tp_graph_check_feasible(chk) ? "true" : "false", tp_graph_check_error_count(chk),
            total_severity(chk, TP_GC_WARNING));
    json_findings(out, chk->findings, chk->n_findings, "  ");
    fputs(",\n  \"graphs\": [", out);
    for (size_t i = 0; i < chk->n_graphs; i++) {
        fprintf(out, "%s\n    ", i ? "," : "");
        json_graph(out, &chk->graphs[i]);
    }
    fprintf(out, "%s]\n}\n", chk->n_graphs ? "\n  " : "");
}

tp_status tp_report_graph_check(FILE *out, const tp_graph_check *chk, tp_format fmt, tp_error *err)
{
    if (!out || !chk)
        return tp_fail_arg(err, "tp_report_graph_check", !out ? "out is NULL" : "chk is NULL");
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail_arg(err, "tp_report_graph_check", "fmt out of range");
    if (fmt == TP_FORMAT_DOT)
        return tp_fail(err, TP_ERR_CONFIG, "fmt", 0, 0, "graph-check writes text or json, not dot");
    if (fmt == TP_FORMAT_JSON)
        write_json(out, chk);
    else
        write_text(out, chk);
    return tp_report__check_stream(out, err);
}
