/* `topoplan search`: every graph's result, channels and decision trace. */
#include "explain/explain.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

static const char *event_kind_name(tp_search_event_kind kind)
{
    static const char *const names[] = {
        [TP_EV_TRY] = "try",           [TP_EV_SOLUTION] = "solution", [TP_EV_RELAX] = "relax",
        [TP_EV_RAISE] = "raise",       [TP_EV_BUDGET] = "budget",     [TP_EV_FALLBACK] = "fallback",
        [TP_EV_LOADED] = "loaded",     [TP_EV_BOUND] = "bound",       [TP_EV_SETTLE] = "settle",
        [TP_EV_IMPROVED] = "improved", [TP_EV_DUP] = "dup",           [TP_EV_DONE] = "done",
    };
    return (size_t)kind < ARRAY_LEN(names) && names[kind] ? names[kind] : "?";
}

/* GPUs of the graph's channel c, as ranks; n_gpus entries. */
static void text_channel(FILE *out, const tp_system *sys, const tp_graph *g, int c)
{
    int n_gpus = sys->nodes[TP_NODE_GPU].count;
    bool has_net = sys->nodes[TP_NODE_NET].count > 0 && g->pattern != TP_PATTERN_NVLS;
    fprintf(out, "    %2d:", c);
    if (has_net)
        fprintf(out, " NET/%lld ->", (long long)TP_ID_LOCAL_ID(g->inter[c * 2]));
    int per_channel = g->pattern == TP_PATTERN_NVLS ? 1 : n_gpus;
    for (int i = 0; i < per_channel; i++)
        fprintf(out, " %d", g->intra[c * n_gpus + i]);
    if (has_net)
        fprintf(out, " -> NET/%lld", (long long)TP_ID_LOCAL_ID(g->inter[c * 2 + 1]));
    fputc('\n', out);
}

static void text_event(FILE *out, const tp_search_event *ev)
{
    fprintf(out,
            "    %s%-8s %s: bw %.1f/%.1f, type %s/%s, sameChannels %d, crossNic %d, "
            "pattern %d, %d channels\n",
            tp_explain__is_ours(ev->kind) ? "topoplan's own, not NCCL's: " : "",
            event_kind_name(ev->kind), ev->why ? ev->why : "", ev->bw_intra, ev->bw_inter,
            tp_path_type_name(ev->type_intra), tp_path_type_name(ev->type_inter), ev->same_channels,
            ev->cross_nic, ev->pattern, ev->n_channels);
}

/* The explanation lines of a graph, indented under "why:". */
static void text_why(FILE *out, const tp_graph_why *w)
{
    fputs("  why:\n", out);
    for (int i = 0; i < w->n_lines; i++)
        fprintf(out, "    %-11s %s\n", w->lines[i].step, w->lines[i].text);
}

/* Events shown: NCCL's decisions, and topoplan's own pruning only when asked for. */
static bool event_shown(const tp_search_event *ev, bool show_ours)
{
    return show_ours || !tp_explain__is_ours(ev->kind);
}

static void text_graph(FILE *out, const tp_system *sys, int slot, const tp_graph *g,
                       const tp_graph_why *w, bool show_ours)
{
    fprintf(out, "Graph %d (%s): pattern %d (%s)\n", g->id, tp_channels__graph_name(slot),
            g->pattern, tp_pattern_name(g->pattern));
    if (g->n_channels == 0) {
        fputs("  not computed or no solution (0 channels)\n\n", out);
        return;
    }
    fprintf(out,
            "  %d channels, bw %.1f GB/s intra / %.1f inter, type %s/%s, sameChannels %d, "
            "crossNic %d\n  channels (ranks in order):\n",
            g->n_channels, g->bw_intra, g->bw_inter, tp_path_type_name(g->type_intra),
            tp_path_type_name(g->type_inter), g->same_channels, g->cross_nic);
    for (int c = 0; c < g->n_channels; c++)
        text_channel(out, sys, g, c);
    text_why(out, w);
    if (g->n_events)
        fputs("  decisions:\n", out);
    for (size_t i = 0; i < g->n_events; i++)
        if (event_shown(&g->events[i], show_ours))
            text_event(out, &g->events[i]);
    fputc('\n', out);
}

static void json_event(FILE *out, const tp_search_event *ev)
{
    fprintf(out, "{\"kind\": \"%s\", \"why\": ", event_kind_name(ev->kind));
    tp_report__json_str(out, ev->why ? ev->why : "");
    fprintf(out,
            ", \"bw_intra\": %.2f, \"bw_inter\": %.2f, \"type_intra\": \"%s\", "
            "\"type_inter\": \"%s\", \"same_channels\": %d, \"cross_nic\": %d, "
            "\"pattern\": %d, \"n_channels\": %d}",
            ev->bw_intra, ev->bw_inter, tp_path_type_name(ev->type_intra),
            tp_path_type_name(ev->type_inter), ev->same_channels, ev->cross_nic, ev->pattern,
            ev->n_channels);
}

static void json_channels(FILE *out, const tp_system *sys, const tp_graph *g)
{
    int n_gpus = sys->nodes[TP_NODE_GPU].count;
    int per_channel = g->pattern == TP_PATTERN_NVLS ? 1 : n_gpus;
    for (int c = 0; c < g->n_channels; c++) {
        fprintf(out, "%s{\"ranks\": [", c ? ", " : "");
        for (int i = 0; i < per_channel; i++)
            fprintf(out, "%s%d", i ? ", " : "", g->intra[c * n_gpus + i]);
        fprintf(out, "], \"net_in\": %lld, \"net_out\": %lld}", (long long)g->inter[c * 2],
                (long long)g->inter[c * 2 + 1]);
    }
}

static void json_graph(FILE *out, const tp_system *sys, int slot, const tp_graph *g,
                       const tp_graph_why *w, bool show_ours)
{
    fprintf(out,
            "    {\"graph\": \"%s\", \"id\": %d, \"pattern\": %d, \"pattern_name\": \"%s\", "
            "\"n_channels\": %d, \"bw_intra\": %.2f, \"bw_inter\": %.2f, "
            "\"type_intra\": \"%s\", \"type_inter\": \"%s\", \"same_channels\": %d, "
            "\"cross_nic\": %d,\n     \"channels\": [",
            tp_channels__graph_name(slot), g->id, g->pattern, tp_pattern_name(g->pattern),
            g->n_channels, g->bw_intra, g->bw_inter, tp_path_type_name(g->type_intra),
            tp_path_type_name(g->type_inter), g->same_channels, g->cross_nic);
    json_channels(out, sys, g);
    fputs("],\n     \"why\": ", out);
    tp_report__json_why(out, w);
    fputs(",\n     \"events\": [", out);
    bool first = true;
    for (size_t i = 0; i < g->n_events; i++) {
        if (!event_shown(&g->events[i], show_ours))
            continue;
        fputs(first ? "" : ",\n       ", out);
        first = false;
        json_event(out, &g->events[i]);
    }
    fputs("]}", out);
}

static tp_status report_search(FILE *out, const tp_plan *plan, tp_format fmt, bool show_ours,
                               tp_error *err)
{
    tp_status ok = tp_plan__check_done(plan, "tp_report_search", err);
    if (ok != TP_OK)
        return ok;
    if (!out)
        return tp_fail_arg(err, "tp_report_search", "out is NULL");
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail_arg(err, "tp_report_search", "fmt out of range");
    if (fmt == TP_FORMAT_DOT)
        return tp_fail(err, TP_ERR_CONFIG, "fmt", 0, 0, "search: no dot output (use text or json)");
    tp_graph_why *whys = malloc(TP_GRAPH_COUNT * sizeof(*whys)); /* tp_explain__plan sets them */
    if (!whys)
        return tp_fail_nomem(err);
    tp_status st = tp_explain__plan(whys, plan, show_ours, err);
    if (st != TP_OK) {
        free(whys);
        return st;
    }
    if (fmt == TP_FORMAT_JSON) {
        tp_report__json_begin(out, "topoplan.search", tp_config_nccl(plan->cfg));
        tp_report__json_job(out, plan);
        fputs("  \"graphs\": [\n", out);
    } else {
        tp_report__job_line(out, plan);
    }
    bool first = true;
    for (int slot = 0; slot < TP_GRAPH_COUNT; slot++) {
        const tp_graph *g = plan->graphs[slot];
        if (!g)
            continue;
        const tp_graph_why *w = &whys[slot];
        if (fmt == TP_FORMAT_TEXT) {
            text_graph(out, plan->sys, slot, g, w, show_ours);
            continue;
        }
        fputs(first ? "" : ",\n", out);
        first = false;
        json_graph(out, plan->sys, slot, g, w, show_ours);
    }
    if (fmt == TP_FORMAT_JSON)
        fputs("\n  ]\n}\n", out);
    free(whys);
    return tp_report__check_stream(out, err);
}

tp_status tp_report_search(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err)
{
    return report_search(out, plan, fmt, false, err);
}

tp_status tp_report_search_pruning(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err)
{
    return report_search(out, plan, fmt, true, err);
}
