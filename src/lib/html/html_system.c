/* The system picture of the page: SVG written here, laid out by html_model.c. */
#include "html/html_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *link_class(int type)
{
    switch (type) {
    case TP_LINK_NVL:
        return "NVL";
    case TP_LINK_PCI:
        return "PCI";
    case TP_LINK_SYS:
        return "SYS";
    case TP_LINK_NET:
        return "NET";
    default:
        return "LOC";
    }
}

/* "ring 0, 1, 2; tree 0": the channels of each graph that walk a link. */
static void channels_text(char *buf, size_t size, const pic_link *l)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < TP_GRAPH_COUNT; k++) {
        if (!l->channels[k])
            continue;
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? "; " : "",
                              tp_channels__graph_name(k));
        for (int c = 0, first = 1; c < 64; c++)
            if (l->channels[k] >> c & 1) {
                n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%d", first ? " " : ", ",
                                      c);
                first = 0;
            }
    }
}

/* "GPU 0 -> GPU 3, GPU 0 -> mlx5_1, ... and 12 more": the paths through a link. */
static void paths_text(char *buf, size_t size, const pic_model *m, const pic_link *l)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < l->paths && i < TP_HTML_PATHS_NAMED; i++)
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s \xe2\x86\x92 %s",
                              i ? ", " : "", m->nodes[l->path_ends[i][0]].name,
                              m->nodes[l->path_ends[i][1]].name);
    if (l->paths > TP_HTML_PATHS_NAMED)
        snprintf(buf + n, n < size ? size - n : 0, " and %d more", l->paths - TP_HTML_PATHS_NAMED);
}

static void link_info(char *buf, size_t size, const pic_model *m, const pic_link *l)
{
    char chans[600], bw[64], paths[600];
    channels_text(chans, sizeof(chans), l);
    paths_text(paths, sizeof(paths), m, l);
    if (fabsf(l->bw - l->bw_back) < 0.05f) /* one speed as printed */
        snprintf(bw, sizeof(bw), "%.1f GB/s", l->bw);
    else
        snprintf(bw, sizeof(bw), "%.1f GB/s down, %.1f GB/s back", l->bw, l->bw_back);
    snprintf(buf, size, "%s link %s - %s: %s\nreserved by: %s\n%d GPU/NIC path%s walk it%s%s",
             link_class(l->type), m->nodes[l->a].name, m->nodes[l->b].name, bw,
             chans[0] ? chans : "no channel", l->paths, l->paths == 1 ? "" : "s",
             l->paths ? ": " : "", paths);
}

/* Channels with the same NIC choice grouped: "ch 0, 8: mlx5_0 (NET/0), GDR". */
static void gpu_nics(char *buf, size_t size, const tp_html_pic *pic, const pic_model *m, int rank)
{
    tp_channels_info ch;
    size_t n = strlen(buf);
    if (!pic->nic_plan || tp_plan_channels(pic->nic_plan, &ch, sizeof(ch)) != TP_OK)
        return;
    bool done[TP_MAXCHANNELS * 2] = {false};
    tp_nic_choice a, b;
    for (int c = 0; c < ch.n_channels && c < TP_MAXCHANNELS * 2; c++) {
        if (done[c] || tp_plan_nic(pic->nic_plan, rank, c, -1, &a, sizeof(a)) != TP_OK)
            continue;
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "\nch %d", c);
        for (int d = c + 1; d < ch.n_channels && d < TP_MAXCHANNELS * 2; d++)
            if (!done[d] && tp_plan_nic(pic->nic_plan, rank, d, -1, &b, sizeof(b)) == TP_OK &&
                b.net_id == a.net_id && b.proxy_rank == a.proxy_rank && b.gdr == a.gdr) {
                done[d] = true;
                n += (size_t)snprintf(buf + n, n < size ? size - n : 0, ", %d", d);
            }
        if (a.role == TP_NIC_NONE) { /* its ring neighbours there are both on its node */
            n += (size_t)snprintf(buf + n, n < size ? size - n : 0,
                                  ": no NIC (between GPUs of its node)");
            continue;
        }
        const char *name = a.net_index >= 0 && a.net_index < m->sys->nodes[TP_NODE_NET].count
                               ? m->nodes[m->first[TP_NODE_NET] + a.net_index].name
                               : "?";
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, ": NIC %s (NET/%d)%s%s", name,
                              a.net_dev, a.gdr ? ", GDR" : ", no GDR", "");
        if (a.proxy_rank != rank)
            n += (size_t)snprintf(buf + n, n < size ? size - n : 0, ", PXN via rank %d",
                                  a.proxy_rank);
    }
}

static void node_info(char *buf, size_t size, const tp_html_pic *pic, const pic_model *m,
                      const pic_node *p)
{
    const tp_node *n = p->n;
    char numa[32] = "";
    if (p->numa >= 0 && p->type != TP_NODE_CPU)
        snprintf(numa, sizeof(numa), ", NUMA %d", p->numa);
    switch (p->type) {
    case TP_NODE_GPU:
        snprintf(buf, size, "%s (%s): CUDA dev %d, sm%d, %s%s%s", p->name, p->label, n->gpu.dev,
                 n->gpu.cuda_comp_cap, n->gpu.gdr_support ? "GDR capable" : "no GDR", numa,
                 pic->nic_plan ? "\nNIC per collective channel:" : "");
        gpu_nics(buf, size, pic, m, n->gpu.rank);
        break;
    case TP_NODE_NET:
        snprintf(buf, size, "NIC port %s (NET/%d, port %d): %.1f GB/s, %s%s%s", p->name, n->net.dev,
                 n->net.port, p->net_bw, n->net.gdr_support ? "GDR" : "no GDR",
                 n->net.coll_support ? ", CollNet" : "", numa);
        break;
    default:
        snprintf(buf, size, "%s (%s)%s, %d link%s", p->name, p->label, numa, n->n_links,
                 n->n_links == 1 ? "" : "s");
    }
}

static void svg_link(FILE *out, const tp_html_pic *pic, const pic_model *m, int k,
                     const pic_route *shown)
{
    const pic_link *l = &m->links[k];
    const pic_node *a = &m->nodes[l->a], *b = &m->nodes[l->b];
    if (a->y > b->y || (a->y == b->y && a->x > b->x)) {
        const pic_node *t = a;
        a = b;
        b = t;
    }
    bool on = false;
    for (int i = 0; shown && i < shown->n_links; i++)
        on = on || shown->links[i] == k;
    char info[2048];
    link_info(info, sizeof(info), m, l);
    if (l->changed)
        strncat(info, "\nCHANGED: the other side lacks this link or has another bandwidth",
                sizeof(info) - strlen(info) - 1);
    fprintf(out, "<g class=\"link t-%s%s%s\" id=\"%s-l%d\" data-ends=\"%d %d\" data-info=\"",
            link_class(l->type), on ? " on" : "", l->changed ? " changed" : "", pic->id, k, l->a,
            l->b);
    tp_html__text(out, info);
    fputs("\"><title>", out);
    tp_html__text(out, info);
    double width = 1.5 + 0.6 * log2(l->bw > 1 ? l->bw : 1);
    width = width > 6 ? 6 : width;
    if (a->row != b->row) {
        fprintf(out, "</title><path d=\"M%.1f %.1fL%.1f %.1f\" stroke-width=\"%.1f\"/></g>\n", a->x,
                a->y + a->h / 2, b->x, b->y - b->h / 2, width);
        return;
    }
    double dx = b->x - a->x, h = 16 + 0.22 * dx;
    bool up = a->row == 0 || a->row == m->gpu_row;
    h = up ? (h > 150 ? 150 : h) : (h > 34 ? 34 : h);
    double y = up ? a->y - a->h / 2 : a->y + a->h / 2;
    fprintf(out,
            "</title><path d=\"M%.1f %.1fQ%.1f %.1f %.1f %.1f\" stroke-width=\"%.1f\" "
            "fill=\"none\"/></g>\n",
            a->x, y, (a->x + b->x) / 2, up ? y - 2 * h : y + 2 * h, b->x, y, width);
}

static void svg_node(FILE *out, const tp_html_pic *pic, const pic_model *m, int i,
                     const pic_route *shown)
{
    const pic_node *p = &m->nodes[i];
    int ord = -1;
    for (int s = 0; shown && s < shown->n_seq; s++)
        if (shown->seq[s] == i && ord < 0)
            ord = s;
    char info[2048];
    node_info(info, sizeof(info), pic, m, p);
    if (p->changed)
        strncat(info, "\nCHANGED: the other side lacks this device or has it elsewhere",
                sizeof(info) - strlen(info) - 1);
    fprintf(out,
            "<g class=\"node k-%s%s%s\" id=\"%s-n%d\" data-nccl=\"%s\" tabindex=\"0\" "
            "role=\"img\" aria-label=\"",
            tp_node_type_name(p->type), ord >= 0 ? " on" : "", p->changed ? " changed" : "",
            pic->id, i, p->nccl);
    tp_html__text(out, info);
    fputs("\" data-info=\"", out);
    tp_html__text(out, info);
    fputs("\"><title>", out);
    tp_html__text(out, info);
    fprintf(out, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"%d\"/>",
            p->x - p->w / 2, p->y - p->h / 2, p->w, p->h, p->type == TP_NODE_NET ? 12 : 4);
    bool two = p->sub[0] != '\0';
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", p->x, p->y + (two ? -2 : 4));
    tp_html__text(out, p->name);
    fputs("</text>", out);
    if (two) {
        fprintf(out, "<text class=\"sub\" x=\"%.1f\" y=\"%.1f\">", p->x, p->y + 11);
        tp_html__text(out, p->sub);
        fputs("</text>", out);
    }
    fprintf(out, "<text class=\"ord\" x=\"%.1f\" y=\"%.1f\">", p->x + p->w / 2 - 2,
            p->y - p->h / 2 - 3);
    if (ord >= 0)
        fprintf(out, "%d", ord);
    fputs("</text></g>\n", out);
}

static int by_x(const void *a, const void *b)
{
    const pic_node *x = *(pic_node *const *)a, *y = *(pic_node *const *)b;
    return x->x < y->x ? -1 : x->x > y->x;
}

/* One band behind a run of neighbours of one NUMA node in a row, named at its corner. */
static void numa_band(FILE *out, pic_node *const *run, int n)
{
    double lo = run[0]->x - run[0]->w / 2, hi = run[n - 1]->x + run[n - 1]->w / 2, h = 0;
    for (int i = 0; i < n; i++)
        h = run[i]->h > h ? run[i]->h : h;
    double top = run[0]->y - h / 2 - 15;
    fprintf(out,
            "<g class=\"numa n%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%.1f\" rx=\"8\"/><text x=\"%.1f\" y=\"%.1f\">NUMA %d</text></g>\n",
            run[0]->numa % 2, lo - 7, top, hi - lo + 14, h + 22, lo - 3, top + 11, run[0]->numa);
}

/* The NUMA sides: per row, a band behind each run of nodes closest to one CPU. */
static void svg_numa(FILE *out, const pic_model *m)
{
    pic_node **row = malloc((size_t)(m->n_nodes ? m->n_nodes : 1) * sizeof(*row));
    for (int r = 0; row && r < m->n_rows; r++) {
        int n = 0;
        for (int i = 0; i < m->n_nodes; i++)
            if (m->nodes[i].row == r)
                row[n++] = &m->nodes[i];
        qsort(row, (size_t)n, sizeof(*row), by_x);
        for (int i = 0, start = 0; i <= n; i++)
            if (i == n || row[i]->numa != row[start]->numa) {
                if (i > start && row[start]->numa >= 0)
                    numa_band(out, row + start, i - start);
                start = i;
            }
    }
    free(row); /* without memory, no bands: the picture is still right */
}

static const pic_route *find_route(const pic_model *m, int graph, int channel)
{
    for (int i = 0; i < m->n_routes; i++)
        if (m->routes[i].graph == graph && m->routes[i].channel == channel)
            return &m->routes[i];
    return NULL;
}

static void svg_picture(FILE *out, const tp_html_pic *pic, const pic_model *m,
                        const pic_route *shown)
{
    const tp_system *sys = m->sys;
    fprintf(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"system%s\" viewBox=\"0 0 %.0f %.0f\" "
        "width=\"%.0f\" height=\"%.0f\" role=\"group\" aria-labelledby=\"%s-t %s-d\">\n"
        "<title id=\"%s-t\">",
        shown ? " has-route" : "", m->width, m->height, m->width, m->height, pic->id, pic->id,
        pic->id);
    tp_html__text(out, pic->title);
    fprintf(out,
            "</title><desc id=\"%s-d\">%d GPUs in index order, %d NVSwitch nodes above, %d PCI "
            "switches and %d CPUs below, %d NICs with %d network ports by name; %d links</desc>\n",
            pic->id, sys->nodes[TP_NODE_GPU].count, sys->nodes[TP_NODE_NVS].count,
            sys->nodes[TP_NODE_PCI].count, sys->nodes[TP_NODE_CPU].count,
            sys->nodes[TP_NODE_NIC].count, sys->nodes[TP_NODE_NET].count, m->n_links);
    svg_numa(out, m);
    fputs("<g class=\"links\">\n", out);
    for (int k = 0; k < m->n_links; k++)
        svg_link(out, pic, m, k, shown);
    fputs("</g><g class=\"nodes\">\n", out);
    for (int i = 0; i < m->n_nodes; i++)
        svg_node(out, pic, m, i, shown);
    fputs("</g></svg>\n", out);
}

/* "ring channel 0: NET mlx5_0 -> GPU 0 -> ... -> NET mlx5_1 (9 links)": a channel's order. */
static void route_text(char *buf, size_t size, const pic_model *m, const pic_route *r)
{
    size_t n = (size_t)snprintf(buf, size, "%s channel %d: ", tp_channels__graph_name(r->graph),
                                r->channel);
    for (int s = 0; s < r->n_seq; s++)
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", s ? " \xe2\x86\x92 " : "",
                              m->nodes[r->seq[s]].name);
    snprintf(buf + n, n < size ? size - n : 0, " (%d link%s)", r->n_links,
             r->n_links == 1 ? "" : "s");
}

static void json_ints(FILE *out, const int *v, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%d", i ? "," : "", v[i]);
    fputc(']', out);
}

/* The routes as data for the script: "ring/0" per channel, "ring" for every channel. */
static void routes_json(FILE *out, const tp_html_pic *pic, const pic_model *m)
{
    fprintf(out, "<script type=\"application/json\" id=\"%s-routes\">{", pic->id);
    for (int i = 0; i < m->n_routes; i++) {
        const pic_route *r = &m->routes[i];
        fprintf(out, "%s\n\"%s/%d\":{\"links\":", i ? "," : "", tp_channels__graph_name(r->graph),
                r->channel);
        json_ints(out, r->links, r->n_links);
        fputs(",\"seq\":", out);
        json_ints(out, r->seq, r->n_seq);
        char text[4096];
        route_text(text, sizeof(text), m, r);
        fputs(",\"text\":", out);
        tp_html__json_str(out, text);
        fputc('}', out);
    }
    for (int k = 0; k < TP_GRAPH_COUNT; k++) {
        int n_ch = 0;
        fprintf(out, "%s\n\"%s\":{\"links\":[", m->n_routes || k ? "," : "",
                tp_channels__graph_name(k));
        for (int l = 0, first = 1; l < m->n_links; l++)
            if (m->links[l].channels[k]) {
                fprintf(out, "%s%d", first ? "" : ",", l);
                first = 0;
            }
        fputs("],\"seq\":[]", out);
        for (int i = 0; i < m->n_routes; i++)
            n_ch += m->routes[i].graph == k;
        fprintf(out, ",\"text\":\"every %s channel (%d): the links they reserve\"}",
                tp_channels__graph_name(k), n_ch);
    }
    fputs("}</script>\n", out);
}

static void picker(FILE *out, const tp_html_pic *pic, const pic_model *m, const pic_route *shown)
{
    fprintf(out,
            "<div class=\"controls\"><label for=\"%s-pick\">Highlight</label> "
            "<select id=\"%s-pick\" class=\"pick\" data-view=\"%s\">"
            "<option value=\"\">nothing (every link)</option>\n",
            pic->id, pic->id, pic->id);
    for (int k = 0; k < TP_GRAPH_COUNT; k++) {
        const tp_graph *g = pic->graphs ? pic->graphs[k] : NULL;
        if (!g || g->n_channels == 0)
            continue;
        const char *name = tp_channels__graph_name(k);
        fprintf(out, "<optgroup label=\"%s\"><option value=\"%s\">%s: every channel</option>", name,
                name, name);
        for (int c = 0; c < g->n_channels && c < TP_MAXCHANNELS; c++) {
            bool differs = pic->channel_differs && pic->channel_differs(pic->change_ctx, k, c);
            fprintf(out, "<option value=\"%s/%d\"%s%s>%s channel %d%s</option>", name, c,
                    differs ? " class=\"changed\"" : "",
                    shown && shown->graph == k && shown->channel == c ? " selected" : "", name, c,
                    differs ? " (differs)" : "");
        }
        fputs("</optgroup>\n", out);
    }
    fprintf(out, "</select> <span class=\"route\" id=\"%s-route\" aria-live=\"polite\">", pic->id);
    char text[4096];
    if (shown) {
        route_text(text, sizeof(text), m, shown);
        tp_html__text(out, text);
    }
    fputs("</span></div>\n", out);
}

static void link_table(FILE *out, const pic_model *m)
{
    fprintf(out,
            "<details class=\"links-table\"><summary>Every link (%d) as a table</summary>"
            "<table><thead><tr><th>from</th><th>to</th><th>type</th><th>GB/s</th>"
            "<th>paths</th><th>channels</th></tr></thead><tbody>\n",
            m->n_links);
    for (int k = 0; k < m->n_links; k++) {
        const pic_link *l = &m->links[k];
        char chans[600];
        channels_text(chans, sizeof(chans), l);
        fputs("<tr><td>", out);
        tp_html__text(out, m->nodes[l->a].name);
        fputs("</td><td>", out);
        tp_html__text(out, m->nodes[l->b].name);
        fprintf(out, "</td><td>%s</td><td>%.1f</td><td>%d</td><td>%s</td></tr>\n",
                link_class(l->type), l->bw, l->paths, chans);
    }
    fputs("</tbody></table></details>\n", out);
}

/* The links a graph's "limit" lines name, as picture link numbers (-1: not drawn). */
static void why_section(FILE *out, const tp_html_pic *pic, const pic_model *m);

tp_status tp_html__system(FILE *out, const tp_html_pic *pic, tp_error *err)
{
    pic_model m;
    tp_status st = tp_html__model(&m, pic, err);
    if (st != TP_OK) {
        tp_html__model_free(&m);
        return st;
    }
    const pic_route *shown = find_route(&m, TP_GRAPH_RING, 0);
    fprintf(out, "<section class=\"sysview\" id=\"%s\" aria-labelledby=\"%s-h\"><h2 id=\"%s-h\">",
            pic->id, pic->id, pic->id);
    tp_html__text(out, pic->title);
    fputs("</h2>\n", out);
    picker(out, pic, &m, shown);
    fputs("<div class=\"pic-row\"><div class=\"pic\">", out);
    svg_picture(out, pic, &m, shown);
    fprintf(out,
            "</div><aside class=\"info\" id=\"%s-info\" aria-live=\"polite\">Point at or focus "
            "(Tab) a GPU, NIC or link for its details: bandwidth and type, the paths and "
            "channels through a link, a GPU's NIC per channel, PXN proxy and GDR.</aside></div>\n",
            pic->id);
    fputs("<p class=\"legend\"><span class=\"sw NVL\"></span>NVLink <span class=\"sw PCI\"></span>"
          "PCIe <span class=\"sw SYS\"></span>CPU-CPU <span class=\"sw NET\"></span>NIC port "
          "<span class=\"sw on\"></span>picked channel (numbers: its order) "
          "<span class=\"sw bound\"></span>bounding link or a finding's devices",
          out);
    fputs(pic->link_changed ? " <span class=\"sw changed\"></span>differs from the other side" : "",
          out);
    fputs(". Line width grows with bandwidth.</p>\n", out);
    routes_json(out, pic, &m);
    link_table(out, &m);
    if (pic->whys)
        why_section(out, pic, &m);
    fputs("</section>\n", out);
    tp_html__model_free(&m);
    return TP_OK;
}

/* The node a "limit" line's label names, -1 when none. */
static int node_of_label(const pic_model *m, const char *label)
{
    for (int i = 0; label[0] && i < m->n_nodes; i++)
        if (strcmp(m->nodes[i].label, label) == 0)
            return i;
    return -1;
}

static void why_graph(FILE *out, const tp_html_pic *pic, const pic_model *m, int k)
{
    const tp_graph_why *w = &pic->whys[k];
    const tp_graph *g = pic->graphs ? pic->graphs[k] : NULL;
    if (!g || w->n_lines == 0)
        return;
    const char *name = tp_channels__graph_name(k);
    if (g->n_channels == 0) {
        fprintf(out, "<div class=\"why\"><h3>%s: no channel</h3><p>", name);
        tp_html__text(out, w->lines[0].text);
        fputs("</p></div>\n", out);
        return;
    }
    fprintf(out, "<div class=\"why\"><h3>%s: %d channel%s, %.1f GB/s intra, %.1f inter, %s/%s</h3>",
            name, g->n_channels, g->n_channels == 1 ? "" : "s", g->bw_intra, g->bw_inter,
            tp_path_type_name(g->type_intra), tp_path_type_name(g->type_inter));
    fputs("<ol>", out);
    for (int i = 0; i < w->n_lines; i++) {
        fprintf(out, "<li><b>%s</b> ", w->lines[i].step);
        tp_html__text(out, w->lines[i].text);
        fputs("</li>", out);
    }
    fputs("</ol>", out);
    for (int i = 0; i < w->n_limits; i++) {
        const tp_why_limit *l = &w->limits[i];
        int a = node_of_label(m, l->from), b = node_of_label(m, l->to);
        int link = a >= 0 && b >= 0 ? tp_html__link_of(m, a, b) : -1;
        fprintf(out,
                "<button type=\"button\" class=\"bound\" data-view=\"%s\" data-graph=\"%s\" "
                "data-links=\"%d\" data-nodes=\"%d\" title=\"",
                pic->id, name, link, link < 0 ? a : -1);
        tp_html__text(out, l->from); /* NCCL's labels, as the explanation names them */
        if (l->to[0]) {
            fputs(" \xe2\x86\x92 ", out);
            tp_html__text(out, l->to);
        }
        fputs("\">Show the bounding link ", out);
        tp_html__text(out, a >= 0 ? m->nodes[a].name : l->from); /* as the picture names them */
        if (l->to[0]) {
            fputs(" \xe2\x86\x92 ", out);
            tp_html__text(out, b >= 0 ? m->nodes[b].name : l->to);
        } else {
            fputs(" port", out);
        }
        fputs("</button> ", out);
    }
    fputs("</div>\n", out);
}

static void why_section(FILE *out, const tp_html_pic *pic, const pic_model *m)
{
    fputs(pic->fold_whys ? "<details class=\"whys\"><summary>Why each graph of this node is what "
                           "it is, with its bounding links</summary>\n"
                         : "<div class=\"whys\"><h2>Why each graph is what it is</h2>\n",
          out);
    for (int k = 0; k < TP_GRAPH_COUNT; k++)
        why_graph(out, pic, m, k);
    fputs(pic->fold_whys ? "</details>\n" : "</div>\n", out);
}
