/* Jobs of nodes that differ: who limits the job, what it costs, the nodes side by side. */
#include "html/html.h"
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

static void graph_cells(FILE *out, const tp_graph_info *g, unsigned limits)
{
    fprintf(out, "<td%s>%d</td><td%s>%.1f</td><td%s>%.1f</td><td%s>%s/%s</td>",
            limits & TP_LIMIT_CHANNELS ? " class=\"bad\"" : "", g->n_channels,
            limits & TP_LIMIT_BW_INTRA ? " class=\"bad\"" : "", g->bw_intra,
            limits & TP_LIMIT_BW_INTER ? " class=\"bad\"" : "", g->bw_inter,
            limits & (TP_LIMIT_TYPE_INTRA | TP_LIMIT_TYPE_INTER) ? " class=\"bad\"" : "",
            tp_path_type_name(g->type_intra), tp_path_type_name(g->type_inter));
}

static void limits_table(FILE *out, const tp_plan *plan, const tp_job_limits *lim)
{
    fputs("<table class=\"limits\"><caption>Each kind of node's own search result beside the "
          "job's (the job takes the fewest channels, the lowest bandwidths, the worst path "
          "types); red: what that kind sets</caption><thead><tr><th>graph</th><th>nodes</th>"
          "<th>topology</th><th>channels</th><th>GB/s intra</th><th>GB/s inter</th>"
          "<th>types</th><th>causes</th></tr></thead><tbody>\n",
          out);
    for (int s = 0; s < TP_GRAPH_COUNT; s++) {
        const tp_graph_limits *gl = &lim->graphs[s];
        if (!gl->shown)
            continue;
        fprintf(out, "<tr><th scope=\"row\" rowspan=\"%d\">%s</th><td colspan=\"2\">the job</td>",
                plan->n_kinds + 1, tp_channels__graph_name(s));
        graph_cells(out, &gl->combined, 0);
        fputs("<td></td></tr>\n", out);
        for (int k = 0; k < plan->n_kinds; k++) {
            const tp_kind_graph *kg = &gl->kinds[k];
            char hosts[256];
            tp_limits__hosts_text(hosts, sizeof(hosts), plan, k);
            fputs("<tr><td>", out);
            tp_html__text(out, hosts);
            fputs("</td><td title=\"", out);
            tp_html__text(out, plan->kinds[k].source);
            fputs("\">", out);
            tp_html__text(out, tp_html__base_name(plan->kinds[k].source));
            fputs("</td>", out);
            graph_cells(out, &kg->own, kg->limits);
            fputs("<td>", out);
            for (int i = 0; i < kg->n_causes; i++) {
                fputs(i ? "<br>" : "", out);
                tp_html__text(out, kg->causes[i]);
            }
            fputs("</td></tr>\n", out);
        }
    }
    fputs("</tbody></table>\n", out);
}

static void costs_list(FILE *out, const tp_plan *plan, const tp_job_limits *lim)
{
    fputs("<ul class=\"costs\">", out);
    for (int k = 0; k < plan->n_kinds; k++) {
        const tp_kind_cost *c = &lim->costs[k];
        if (c->like < 0)
            continue;
        char hosts[256], like[256];
        int cost = c->channels_like - c->channels_now;
        tp_limits__hosts_text(hosts, sizeof(hosts), plan, k);
        tp_limits__hosts_text(like, sizeof(like), plan, c->like);
        fputs("<li><b>", out);
        tp_html__text(out, hosts);
        fputs("</b> (", out);
        tp_html__text(out, tp_html__base_name(plan->kinds[k].source));
        fprintf(out,
                "): the job has %d collective channels, ring %.1f/%.1f GB/s; with these "
                "nodes planned like ",
                c->channels_now, c->ring_bw_now, c->ring_bw_inter_now);
        tp_html__text(out, like);
        fprintf(out, " (re-planned) it would have %d, ring %.1f/%.1f GB/s: ", c->channels_like,
                c->ring_bw_like, c->ring_bw_inter_like);
        if (cost > 0)
            fprintf(out, "<b>they cost the job %d channel%s</b>", cost, cost == 1 ? "" : "s");
        else if (cost < 0)
            fprintf(out, "they give the job %d more channel%s", -cost, cost == -1 ? "" : "s");
        else if (c->ring_bw_like != c->ring_bw_now || c->ring_bw_inter_like != c->ring_bw_inter_now)
            fputs("<b>same channel count, other bandwidth</b>", out);
        else
            fputs("no change", out);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
}

/* Kind k's first domain's explanations, replayed on its system before the searches. */
static tp_status kind_whys(tp_graph_why *whys, const tp_plan *plan, int k, tp_error *err)
{
    const tp_domain *d = &plan->kinds[k].domains[0];
    tp_system *sys = NULL;
    int rank = d->sys->nodes[TP_NODE_GPU].count ? d->sys->nodes[TP_NODE_GPU].nodes[0].gpu.rank : 0;
    tp_status st = tp_graphcheck__rank_system(&sys, plan, &plan->kinds[k], rank, err);
    if (st == TP_OK)
        st = tp_search__init(sys, err);
    for (int s = 0; s < TP_GRAPH_COUNT && st == TP_OK; s++) {
        whys[s].n_lines = whys[s].n_limits = 0;
        if (d->graphs[s])
            st =
                tp_explain__graph(&whys[s], sys, plan->kinds[k].topo_xml, d->graphs[s], false, err);
    }
    tp_system__free(sys);
    return st;
}

static tp_status kind_picture(FILE *out, const tp_plan *plan, int k, const char *role,
                              tp_error *err)
{
    const tp_host_kind *kind = &plan->kinds[k];
    if (!kind->domains || kind->n_domains < 1 || !kind->domains[0].sys)
        return TP_OK;
    tp_graph_why *whys = calloc(TP_GRAPH_COUNT, sizeof(*whys));
    if (!whys)
        return tp_fail_nomem(err);
    tp_status st = kind_whys(whys, plan, k, err);
    char id[16], hosts[256], title[600];
    snprintf(id, sizeof(id), "kind%d", k);
    tp_limits__hosts_text(hosts, sizeof(hosts), plan, k);
    snprintf(title, sizeof(title), "%s: %s (%s)", role, hosts, tp_html__base_name(kind->source));
    tp_html_pic pic = {.id = id,
                       .title = title,
                       .sys = kind->domains[0].sys,
                       .host = kind->host_sys,
                       .graphs = kind->domains[0].graphs,
                       .whys = st == TP_OK ? whys : NULL,
                       .fold_whys = true,
                       .xml = kind->topo_xml ? kind->topo_xml->root : NULL};
    st = tp_html__system(out, &pic, err);
    free(whys);
    return st;
}

/* How many of the job's values kind k sets (tp_limit_bit over the graphs). */
static int kind_sets(const tp_plan *plan, const tp_job_limits *lim, int k)
{
    int n = 0;
    (void)plan;
    for (int s = 0; s < TP_GRAPH_COUNT; s++)
        if (lim->graphs[s].shown)
            for (unsigned b = lim->graphs[s].kinds[k].limits; b; b &= b - 1)
                n++;
    return n;
}

/* The kind that sets most of the job's values, and the other that sets fewest (-1: none). */
static void pick_kinds(const tp_plan *plan, const tp_job_limits *lim, int *worst, int *good)
{
    int most = 0, fewest = 0;
    *worst = *good = -1;
    for (int k = 0; k < plan->n_kinds; k++)
        if (kind_sets(plan, lim, k) > most)
            most = kind_sets(plan, lim, k), *worst = k;
    for (int k = 0; k < plan->n_kinds; k++)
        if (k != *worst && (*good < 0 || kind_sets(plan, lim, k) < fewest))
            fewest = kind_sets(plan, lim, k), *good = k;
}

tp_status tp_html__job(FILE *out, const tp_plan *plan, tp_error *err)
{
    if (plan->n_kinds < 2)
        return TP_OK;
    tp_job_limits lim;
    tp_status st = tp_limits__compute(&lim, plan, err);
    if (st != TP_OK)
        return st;
    fputs("<section id=\"job\" aria-labelledby=\"job-h\"><h2 id=\"job-h\">Who limits the job"
          "</h2>\n",
          out);
    limits_table(out, plan, &lim);
    costs_list(out, plan, &lim);
    int worst, good;
    pick_kinds(plan, &lim, &worst, &good);
    fputs("<div class=\"kinds\">\n", out);
    if (worst >= 0)
        st = kind_picture(out, plan, worst, "The node that limits the job", err);
    if (st == TP_OK && good >= 0)
        st = kind_picture(out, plan, good, "Beside it, a node that sets less of the job", err);
    fputs("</div></section>\n", out);
    tp_limits__free(&lim);
    return st;
}
