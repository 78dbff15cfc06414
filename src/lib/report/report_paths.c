/* `topoplan paths`: GPU x GPU and GPU x NET matrices with bottlenecks and hops. */
#include "report/report.h"

#include <string.h>

static const int dest_types[] = {TP_NODE_GPU, TP_NODE_NET};

/* Index of the narrowest hop (the first one when several tie). */
static int bottleneck_hop(const tp_route *r)
{
    int best = -1;
    for (int h = 0; h < r->count; h++)
        if (best < 0 || r->list[h]->bw < r->list[best]->bw)
            best = h;
    return best;
}

/* The node a hop leaves from: the route's start, else the previous hop's end. */
static const tp_node *hop_source(const tp_node *start, const tp_route *r, int h)
{
    return h == 0 ? start : r->list[h - 1]->rem;
}

static void text_matrix(FILE *out, const tp_system *sys, int dtype)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU], *dst = &sys->nodes[dtype];
    char label[64];
    fprintf(out, "GPU x %s (hops/bw GB/s/type)\n%-8s", tp_node_type_name(dtype), "");
    for (int j = 0; j < dst->count; j++) {
        tp_report__node_short(label, sizeof(label), sys, &dst->nodes[j]);
        fprintf(out, " %16s", label);
    }
    fputc('\n', out);
    for (int i = 0; i < gpus->count; i++) {
        const tp_node *g = &gpus->nodes[i];
        tp_report__node_short(label, sizeof(label), sys, g);
        fprintf(out, "%-8s", label);
        for (int j = 0; j < dst->count; j++) {
            const tp_route *r = &g->paths[dtype][j];
            char cell[48];
            snprintf(cell, sizeof(cell), "%d/%.1f/%s", r->count, r->bw, tp_path_type_name(r->type));
            fprintf(out, " %16s", cell);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

static void text_route(FILE *out, const tp_system *sys, const tp_node *g, int dtype, int j)
{
    const tp_route *r = &g->paths[dtype][j];
    char a[64], b[64];
    tp_report__node_short(a, sizeof(a), sys, g);
    tp_report__node_short(b, sizeof(b), sys, &sys->nodes[dtype].nodes[j]);
    fprintf(out, "%s -> %s: %s %.1f GB/s, %d hop%s", a, b, tp_path_type_name(r->type), r->bw,
            r->count, r->count == 1 ? "" : "s");
    int bn = bottleneck_hop(r);
    if (bn >= 0) {
        tp_report__node_label(a, sizeof(a), hop_source(g, r, bn));
        tp_report__node_label(b, sizeof(b), r->list[bn]->rem);
        fprintf(out, "; bottleneck %s -> %s (%s %.1f)", a, b, tp_link_type_name(r->list[bn]->type),
                r->list[bn]->bw);
    }
    fputs("\n   via", out);
    tp_report__node_label(a, sizeof(a), g);
    fprintf(out, " %s", a);
    for (int h = 0; h < r->count; h++) {
        tp_report__node_label(b, sizeof(b), r->list[h]->rem);
        fprintf(out, " -%s[%.1f]-> %s", tp_link_type_name(r->list[h]->type), r->list[h]->bw, b);
    }
    fputc('\n', out);
}

static void write_text(FILE *out, const tp_system *sys)
{
    for (size_t t = 0; t < ARRAY_LEN(dest_types); t++)
        if (sys->nodes[dest_types[t]].count > 0)
            text_matrix(out, sys, dest_types[t]);
    fputs("Routes\n", out);
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int i = 0; i < gpus->count; i++)
        for (size_t t = 0; t < ARRAY_LEN(dest_types); t++)
            for (int j = 0; j < sys->nodes[dest_types[t]].count; j++)
                if (dest_types[t] != TP_NODE_GPU || j != i)
                    text_route(out, sys, &gpus->nodes[i], dest_types[t], j);
}

static void json_hop(FILE *out, const tp_node *from, const tp_link *l)
{
    char a[64], b[64];
    tp_report__node_label(a, sizeof(a), from);
    tp_report__node_label(b, sizeof(b), l->rem);
    fprintf(out, "{\"from\": \"%s\", \"to\": \"%s\", \"link\": \"%s\", \"bw\": %.1f}", a, b,
            tp_link_type_name(l->type), l->bw);
}

static void json_route(FILE *out, const tp_system *sys, const tp_node *g, const tp_node *dst,
                       const tp_route *r)
{
    char a[64], b[64];
    tp_report__node_short(a, sizeof(a), sys, g);
    tp_report__node_short(b, sizeof(b), sys, dst);
    fprintf(out,
            "    {\"from\": \"%s\", \"to\": \"%s\", \"type\": \"%s\", \"bw\": %.1f, "
            "\"hops\": %d, \"route\": [",
            a, b, tp_path_type_name(r->type), r->bw, r->count);
    for (int h = 0; h < r->count; h++) {
        fputs(h ? ", " : "", out);
        json_hop(out, hop_source(g, r, h), r->list[h]);
    }
    fputs("], \"bottleneck\": ", out);
    int bn = bottleneck_hop(r);
    if (bn < 0)
        fputs("null", out);
    else
        json_hop(out, hop_source(g, r, bn), r->list[bn]);
    fputs("}", out);
}

static void json_nodes(FILE *out, const tp_system *sys, int type)
{
    const tp_node_set *set = &sys->nodes[type];
    for (int i = 0; i < set->count; i++) {
        char name[64], id[64];
        tp_report__node_short(name, sizeof(name), sys, &set->nodes[i]);
        tp_report__node_label(id, sizeof(id), &set->nodes[i]);
        fprintf(out, "%s\n    {\"name\": \"%s\", \"nccl_id\": \"%s\"}", i ? "," : "", name, id);
    }
    fputs(set->count ? "\n  " : "", out);
}

static void write_json(FILE *out, const tp_plan *plan)
{
    const tp_system *sys = plan->sys;
    tp_report__json_begin(out, "topoplan.paths", tp_config_nccl(plan->cfg));
    tp_report__json_job(out, plan);
    fputs("  \"gpus\": [", out);
    json_nodes(out, sys, TP_NODE_GPU);
    fputs("],\n  \"nets\": [", out);
    json_nodes(out, sys, TP_NODE_NET);
    fputs("],\n  \"paths\": [\n", out);
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    bool first = true;
    for (int i = 0; i < gpus->count; i++) {
        for (size_t t = 0; t < ARRAY_LEN(dest_types); t++) {
            const tp_node_set *dst = &sys->nodes[dest_types[t]];
            for (int j = 0; j < dst->count; j++) {
                fputs(first ? "" : ",\n", out);
                first = false;
                json_route(out, sys, &gpus->nodes[i], &dst->nodes[j],
                           &gpus->nodes[i].paths[dest_types[t]][j]);
            }
        }
    }
    fputs("\n  ]\n}\n", out);
}

tp_status tp_report_paths(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err)
{
    tp_status ok = tp_plan__check_done(plan, "tp_report_paths", err);
    if (ok != TP_OK)
        return ok;
    if (!out)
        return tp_fail_arg(err, "tp_report_paths", "out is NULL");
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail_arg(err, "tp_report_paths", "fmt out of range");
    const tp_system *sys = plan->sys;
    if (!sys || sys->nodes[TP_NODE_GPU].count == 0 || !sys->nodes[TP_NODE_GPU].nodes[0].paths[0])
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "the plan has no paths");
    if (fmt == TP_FORMAT_JSON) {
        write_json(out, plan);
    } else if (fmt == TP_FORMAT_TEXT) {
        tp_report__job_line(out, plan);
        write_text(out, sys);
    } else
        return tp_fail(err, TP_ERR_CONFIG, "fmt", 0, 0, "paths: no dot output (use text or json)");
    return tp_report__check_stream(out, err);
}
