/*
 * `check --report` and `diff --report`: both sides' systems side by side with
 * what differs marked (devices one side lacks or has elsewhere, links missing
 * or of another bandwidth), and the findings, each with a button that marks
 * the devices it names in both pictures.
 */
#include "compare/compare.h"
#include "html/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct side_ctx {
    const tp_comparison *cmp;
    const tp_plan *plan[2];
    int side;
} side_ctx;

static const tp_node *node_by_id(const tp_system *sys, int type, int64_t id)
{
    for (int i = 0; sys && i < sys->nodes[type].count; i++)
        if (sys->nodes[type].nodes[i].id == id)
            return &sys->nodes[type].nodes[i];
    return NULL;
}

/* The node the comparison matched with n, in the other side's drawn system; NULL when none. */
static const tp_node *counterpart(const side_ctx *c, const tp_node *n)
{
    const tp_system *host = c->plan[c->side]->host_sys, *other = c->plan[1 - c->side]->host_sys;
    const tp_node *h = node_by_id(host, n->type, n->id);
    if (!h || !other)
        return NULL;
    long i = h - host->nodes[n->type].nodes;
    int j = c->cmp->match[c->side][n->type][i];
    if (c->cmp->moved[c->side][n->type][i] || j < 0 || j >= other->nodes[n->type].count)
        return NULL;
    return node_by_id(c->plan[1 - c->side]->sys, n->type, other->nodes[n->type].nodes[j].id);
}

static bool node_changed(const void *ctx, const tp_node *n)
{
    return counterpart(ctx, n) == NULL;
}

static bool link_changed(const void *ctx, const tp_node *from, const tp_link *l)
{
    const tp_node *a = counterpart(ctx, from), *b = counterpart(ctx, l->rem);
    for (int k = 0; a && b && k < a->n_links; k++)
        if (a->links[k].rem == b && a->links[k].type == l->type)
            return fabsf(a->links[k].bw - l->bw) > 0.05f;
    return true;
}

/* Channel c of a graph: its GPUs (by CUDA device) and NET devices, as the other side's? */
static bool channel_differs(const void *ctx, int graph, int c)
{
    const side_ctx *sc = ctx;
    const tp_plan *me = sc->plan[sc->side], *other = sc->plan[1 - sc->side];
    const tp_graph *g = me->graphs[graph], *h = other->graphs[graph];
    int n = me->sys->nodes[TP_NODE_GPU].count, n_other = other->sys->nodes[TP_NODE_GPU].count;
    if (!h || c >= h->n_channels || n != n_other)
        return true;
    for (int i = 0; i < n; i++) {
        int r = g->intra[c * n + i], q = h->intra[c * n + i];
        int dev_r = -1, dev_q = -1;
        for (int j = 0; j < n; j++) {
            if (me->sys->nodes[TP_NODE_GPU].nodes[j].gpu.rank == r)
                dev_r = me->sys->nodes[TP_NODE_GPU].nodes[j].gpu.dev;
            if (other->sys->nodes[TP_NODE_GPU].nodes[j].gpu.rank == q)
                dev_q = other->sys->nodes[TP_NODE_GPU].nodes[j].gpu.dev;
        }
        if (dev_r != dev_q)
            return true;
    }
    const tp_node *in = node_by_id(me->sys, TP_NODE_NET, g->inter[2 * c]);
    const tp_node *out = node_by_id(me->sys, TP_NODE_NET, g->inter[2 * c + 1]);
    const tp_node *in_o = node_by_id(other->sys, TP_NODE_NET, h->inter[2 * c]);
    const tp_node *out_o = node_by_id(other->sys, TP_NODE_NET, h->inter[2 * c + 1]);
    return (in ? counterpart(sc, in) : NULL) != in_o ||
           (out ? counterpart(sc, out) : NULL) != out_o;
}

static void findings(FILE *out, const tp_comparison *cmp, bool check)
{
    fprintf(out,
            "<section id=\"findings\" aria-labelledby=\"findings-h\"><h2 id=\"findings-h\">%s"
            "</h2>\n",
            check ? "Findings" : "Differences");
    tp_html__comparison_findings(out, cmp, check, NULL);
    fputs("</section>\n", out);
}

static tp_status side_picture(FILE *out, const side_ctx *c, const char *id, const char *role,
                              tp_error *err)
{
    const tp_plan *plan = c->plan[c->side];
    tp_graph_why *whys = malloc(TP_GRAPH_COUNT * sizeof(*whys));
    if (!whys)
        return tp_fail_nomem(err);
    tp_status st = tp_explain__plan(whys, plan, false, err);
    char title[400];
    snprintf(title, sizeof(title), "%s: %s", role, tp_html__base_name(plan->source));
    tp_html_pic pic = {.id = id,
                       .title = title,
                       .sys = plan->sys,
                       .host = plan->host_sys,
                       .graphs = plan->graphs,
                       .whys = st == TP_OK ? whys : NULL,
                       .xml = plan->topo_xml ? plan->topo_xml->root : NULL,
                       .fold_whys = true,
                       .node_changed = node_changed,
                       .link_changed = link_changed,
                       .channel_differs = channel_differs,
                       .change_ctx = c};
    if (st == TP_OK)
        st = tp_html__system(out, &pic, err);
    free(whys);
    return st;
}

/* "2.22.3", or "2.22.3 -> 2.27.5" when each side models its own version; then the tally of
 * each partial profile. */
static void versions(FILE *out, const tp_comparison *cmp)
{
    bool two = tp_compare__is_version_diff(cmp);
    fputs(cmp->profile[0]->version, out);
    if (two)
        fprintf(out, " \xe2\x86\x92 %s", cmp->profile[1]->version);
    fputs("</span></h1>", out);
    if (cmp->profile[0]->exact && (!two || cmp->profile[1]->exact))
        return;
    fputs("<p class=\"note\" id=\"nccl-version\">", out);
    tp_html__partial_note(out, cmp->profile[0]);
    if (two)
        tp_html__partial_note(out, cmp->profile[1]);
    fputs("</p>", out);
}

tp_status tp_report_compare_html(FILE *out, const tp_comparison *cmp, const tp_plan *first,
                                 const tp_plan *second, bool check, tp_error *err)
{
    if (!out || !cmp)
        return tp_fail_arg(err, "tp_report_compare_html", "out or cmp is NULL");
    tp_status st = tp_plan__check_done(first, "tp_report_compare_html", err);
    if (st == TP_OK)
        st = tp_plan__check_done(second, "tp_report_compare_html", err);
    if (st != TP_OK)
        return st;
    const char *what = check ? "check" : "diff";
    fprintf(out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta "
            "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta "
            "name=\"generator\" content=\"topoplan %s (NCCL %s)\">\n<title>topoplan %s: ",
            tp_version_string(), cmp->profile[0]->version, what);
    tp_html__text(out, tp_html__base_name(second->source));
    fputs(" against ", out);
    tp_html__text(out, tp_html__base_name(first->source));
    fputs("</title>\n", out);
    tp_html__style(out);
    fprintf(out, "</head><body>\n<header><h1>topoplan %s: ", what);
    tp_html__text(out, second->source);
    fputs(" against ", out);
    tp_html__text(out, first->source);
    fputs(" <span class=\"nccl\">NCCL ", out);
    versions(out, cmp);
    fprintf(out, "<p class=\"note\">Marked <span class=\"sw changed\"></span> in the pictures: "
                 "what the other side lacks or has otherwise. <b>show</b> marks the devices a "
                 "finding names in both.</p></header>\n<main>\n");
    findings(out, cmp, check);
    side_ctx a = {.cmp = cmp, .plan = {first, second}, .side = 0};
    side_ctx b = {.cmp = cmp, .plan = {first, second}, .side = 1};
    fputs("<div class=\"kinds\">\n", out);
    st = side_picture(out, &a, "first", check ? "Baseline" : "First (A)", err);
    if (st == TP_OK)
        st = side_picture(out, &b, "second", check ? "Checked node" : "Second (B)", err);
    fputs("</div>\n</main>\n", out);
    tp_html__script(out);
    fputs("</body></html>\n", out);
    return st == TP_OK ? tp_report__check_stream(out, err) : st;
}
