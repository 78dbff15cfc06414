/* tp_report_html: the page's frame, its summary, and its sections in order. */
#include "html/html.h"

#include <stdlib.h>
#include <string.h>

static void summary_graph(FILE *out, const tp_plan *plan, int s)
{
    const tp_graph *g = plan->graphs[s];
    if (!g)
        return;
    fprintf(out, "<tr><td>%s graph</td><td>", tp_channels__graph_name(s));
    if (g->n_channels == 0)
        fputs("not searched or not supported", out);
    else
        fprintf(out, "%d channel%s, %.1f GB/s intra, %.1f GB/s inter, %s/%s", g->n_channels,
                g->n_channels == 1 ? "" : "s", g->bw_intra, g->bw_inter,
                tp_path_type_name(g->type_intra), tp_path_type_name(g->type_inter));
    fputs("</td></tr>\n", out);
}

#define RING_NODES_SHOWN 4 /* nodes of a ring written out; the rest are counted */

/* The job's rings (ranks in ring order from rank 0): the first nodes' ranks, the rest counted. */
static void rings(FILE *out, const tp_plan *plan)
{
    tp_channels_info ch;
    if (plan->job.n_nodes < 2 || tp_plan_channels(plan, &ch, sizeof(ch)) != TP_OK)
        return;
    int per_node = plan->n_gpus_per_node > 0 ? plan->n_gpus_per_node : 1;
    fprintf(out,
            "<details id=\"rings\"><summary>The job's %d ring%s across its %d nodes (ranks in "
            "ring order from rank 0; the first %d nodes' ranks written out)</summary><table "
            "class=\"rings\"><tbody>\n",
            ch.n_channels, ch.n_channels == 1 ? "" : "s", plan->job.n_nodes, RING_NODES_SHOWN);
    for (int c = 0; c < ch.n_channels; c++) {
        int n = 0;
        const int *ring = tp_plan_ring(plan, c, &n);
        int shown = n < RING_NODES_SHOWN * per_node ? n : RING_NODES_SHOWN * per_node;
        fprintf(out, "<tr><th scope=\"row\">ring %d</th><td>", c);
        for (int i = 0; ring && i < shown; i++)
            fprintf(out, "%s%d", i == 0 ? "" : i % per_node ? " " : " | ", ring[i]);
        if (n > shown)
            fprintf(out, " | \xe2\x80\xa6 %d more ranks on %d more nodes", n - shown,
                    (n - shown + per_node - 1) / per_node);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table></details>\n", out);
}

static void summary(FILE *out, const tp_plan *plan)
{
    const tp_channels *ch = &plan->channels;
    fputs("<section id=\"summary\" aria-labelledby=\"summary-h\"><h2 id=\"summary-h\">The plan"
          "</h2><table class=\"summary\"><tbody>\n<tr><td>topology</td><td>",
          out);
    tp_html__text(out, plan->source);
    for (int k = 1; k < plan->n_kinds; k++) {
        fputs(", ", out);
        tp_html__text(out, plan->kinds[k].source);
    }
    fprintf(out,
            "</td></tr>\n<tr><td>job</td><td>%d node%s, %d ranks, %d GPUs on the reported rank's "
            "node; the pictures show rank %d's node</td></tr>\n",
            plan->job.n_nodes, plan->job.n_nodes == 1 ? "" : "s", plan->facts.n_ranks,
            plan->n_gpus_per_node, plan->job.rank);
    for (int s = 0; s < TP_GRAPH_COUNT; s++)
        summary_graph(out, plan, s);
    /* NCCL sets its CollNet channel count even without a CollNet graph: say none then */
    bool collnet = false;
    for (int s = 0; s < TP_GRAPH_COUNT; s++)
        collnet |= (s == TP_GRAPH_COLLNET_CHAIN || s == TP_GRAPH_COLLNET_DIRECT) &&
                   plan->graphs[s] && plan->graphs[s]->n_channels > 0;
    char collnet_text[48] = "no CollNet";
    if (collnet)
        snprintf(collnet_text, sizeof(collnet_text), "%d CollNet", ch->n_collnet_channels);
    fprintf(out,
            "<tr><td>channels</td><td>%d collective, %d NVLS, %s, %d P2P (%d per "
            "peer)</td></tr>\n",
            ch->n_channels, ch->n_nvls_channels, collnet_text, ch->p2p_n_channels,
            ch->p2p_n_channels_per_peer);
    fputs("</tbody></table>\n", out);
    tp_graph_why w;
    tp_explain__channels(&w, plan);
    fputs("<details><summary>How the search channels became the final count</summary><ol>", out);
    for (int i = 0; i < w.n_lines; i++) {
        fputs("<li>", out);
        tp_html__text(out, w.lines[i].text);
        fputs("</li>", out);
    }
    fputs("</ol></details>\n", out);
    rings(out, plan);
    fputs("</section>\n", out);
}

/* The NCCL version the page models (with its tally when partial). */
static void version_note(FILE *out, const tp_nccl_profile *p)
{
    fprintf(out,
            "<p class=\"note\" id=\"nccl-version\">NCCL %s's topology decisions for this job, "
            "predicted without a GPU by topoplan %s.",
            p->version, tp_version_string());
    tp_html__partial_note(out, p);
    fputs("</p>\n", out);
}

static void head(FILE *out, const tp_plan *plan, bool findings)
{
    const tp_nccl_profile *profile = tp_config__profile(plan->cfg);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"topoplan ",
          out);
    fprintf(out, "%s (NCCL %s)\">\n<title>topoplan: ", tp_version_string(), profile->version);
    tp_html__text(out, plan->source);
    fprintf(out, ", %d node%s, NCCL %s</title>\n", plan->job.n_nodes,
            plan->job.n_nodes == 1 ? "" : "s", profile->version);
    tp_html__style(out);
    fputs("</head><body>\n<header><h1>topoplan: ", out);
    tp_html__text(out, plan->source);
    fprintf(out, " <span class=\"nccl\">NCCL %s</span></h1>", profile->version);
    version_note(out, profile);
    fprintf(out,
            "<nav aria-label=\"sections\">%s<a href=\"#summary\">plan</a><a href=\"#sys\">"
            "system</a>%s<a href=\"#paths\">paths</a><a href=\"#tune\">tuning</a></nav>"
            "</header>\n<main>\n",
            findings ? "<a href=\"#findings\">findings</a>" : "",
            plan->n_kinds > 1 ? "<a href=\"#job\">who limits the job</a>" : "");
}

static tp_status body(FILE *out, const tp_plan *plan, tp_graph_why *whys, tp_error *err)
{
    summary(out, plan);
    char title[400];
    snprintf(title, sizeof(title), "The system of rank %d's node, and its channels",
             plan->job.rank);
    tp_html_pic pic = {
        .id = "sys",
        .title = title,
        .sys = plan->sys,
        .host = plan->host_sys,
        .graphs = plan->graphs,
        .nic_plan = plan->job.n_nodes > 1 && plan->sys->nodes[TP_NODE_NET].count > 0 ? plan : NULL,
        .whys = whys,
        .xml = plan->topo_xml ? plan->topo_xml->root : NULL};
    tp_status st = tp_html__system(out, &pic, err);
    if (st == TP_OK)
        st = tp_html__job(out, plan, err);
    if (st == TP_OK)
        tp_html__paths(out, plan->sys, pic.xml);
    if (st == TP_OK)
        st = tp_html__tune(out, plan, err);
    return st;
}

tp_status tp_report_html(FILE *out, const tp_plan *plan, tp_error *err)
{
    return tp_report_html_check(out, plan, NULL, err);
}

tp_status tp_report_html_check(FILE *out, const tp_plan *plan, const tp_comparison *check,
                               tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_report_html", "out is NULL");
    tp_status st = tp_plan__check_done(plan, "tp_report_html", err);
    if (st != TP_OK)
        return st;
    tp_graph_why *whys = malloc(TP_GRAPH_COUNT * sizeof(*whys)); /* tp_explain__plan sets them */
    char *findings = NULL;
    size_t findings_len = 0;
    FILE *f = whys ? open_memstream(&findings, &findings_len) : NULL;
    if (!f) {
        free(whys);
        return tp_fail_nomem(err);
    }
    bool any = tp_html__plan_findings(f, plan, check);
    if (fclose(f) != 0)
        any = false;
    st = tp_explain__plan(whys, plan, false, err);
    if (st == TP_OK) {
        head(out, plan, any);
        if (any)
            fwrite(findings, 1, findings_len, out);
        st = body(out, plan, whys, err);
        fputs("</main>\n<footer class=\"note\"><p>One file: no network, the pictures are inline "
              "SVG and work without the script, which only adds picking and hovering.</p>"
              "</footer>\n",
              out);
        tp_html__script(out);
        fputs("</body></html>\n", out);
    }
    free(findings);
    free(whys);
    return st == TP_OK ? tp_report__check_stream(out, err) : st;
}
