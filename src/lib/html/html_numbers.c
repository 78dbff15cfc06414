/* The numbers of the page: path matrix heat map, tuning plots on log axes, common sizes. */
#include "html/html.h"
#include "nics/nics.h"

#include <math.h>
#include <string.h>

static void node_title(char *buf, size_t size, const tp_node *n, const tp_xml_elem *xml)
{
    const char *name =
        n->type == TP_NODE_NET && xml ? tp_nics__xml_net_name(xml, n->net.dev) : NULL;
    if (n->type == TP_NODE_GPU)
        snprintf(buf, size, "GPU %d", n->gpu.rank);
    else if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "NET %d", n->net.dev);
}

static void heat_cell(FILE *out, const tp_node *from, int to_type, int to, const char *from_name,
                      const char *to_name)
{
    if (!from->paths[to_type]) {
        fputs("<td class=\"p-DIS\">-</td>", out);
        return;
    }
    const tp_route *r = &from->paths[to_type][to];
    if (r->count == 0) {
        fputs("<td class=\"p-LOC\">-</td>", out);
        return;
    }
    const char *type = tp_path_type_name(r->type);
    fprintf(out, "<td class=\"p-%s\" title=\"", type);
    tp_html__text(out, from_name);
    fputs(" \xe2\x86\x92 ", out);
    tp_html__text(out, to_name);
    fprintf(out, ": %s, %.1f GB/s, %d hop%s\">%s<small>%.0f</small></td>", type, r->bw, r->count,
            r->count == 1 ? "" : "s", type, r->bw);
}

#define HEAT_NET_BLOCK 8 /* NIC columns per table: 32 ports in one table overflowed the page */

/* One table of the heat map: every GPU's row, the columns [lo, hi) of `type`. */
static void heat_table(FILE *out, const tp_system *sys, const tp_xml_elem *xml, int type, int lo,
                       int hi)
{
    char a[64], b[64];
    fputs("<table class=\"heat\"><thead><tr><th scope=\"col\">from \\ to</th>", out);
    for (int j = lo; j < hi; j++) {
        node_title(a, sizeof(a), &sys->nodes[type].nodes[j], xml);
        fputs("<th scope=\"col\">", out);
        tp_html__text(out, a);
        fputs("</th>", out);
    }
    fputs("</tr></thead><tbody>\n", out);
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++) {
        const tp_node *g = &sys->nodes[TP_NODE_GPU].nodes[i];
        node_title(a, sizeof(a), g, xml);
        fputs("<tr><th scope=\"row\">", out);
        tp_html__text(out, a);
        fputs("</th>", out);
        for (int j = lo; j < hi; j++) {
            node_title(b, sizeof(b), &sys->nodes[type].nodes[j], xml);
            heat_cell(out, g, type, j, a, b);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

void tp_html__paths(FILE *out, const tp_system *sys, const tp_xml_elem *xml)
{
    int n_gpus = sys->nodes[TP_NODE_GPU].count, n_nets = sys->nodes[TP_NODE_NET].count;
    fputs("<section id=\"paths\" aria-labelledby=\"paths-h\"><h2 id=\"paths-h\">Paths: type and "
          "bandwidth (GB/s) from each GPU</h2>\n<p class=\"note\">NCCL's path from the row's GPU "
          "to the column's GPU or NIC: its worst link type (colour) and its narrowest link "
          "(number). Point at a cell for the hops.</p>\n<div class=\"heats\">",
          out);
    heat_table(out, sys, xml, TP_NODE_GPU, 0, n_gpus);
    for (int lo = 0; lo < n_nets; lo += HEAT_NET_BLOCK)
        heat_table(out, sys, xml, TP_NODE_NET, lo,
                   lo + HEAT_NET_BLOCK < n_nets ? lo + HEAT_NET_BLOCK : n_nets);
    fputs("</div>\n<p class=\"legend\">", out);
    static const char *const kinds[] = {"NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET"};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        fprintf(out, "<span class=\"p-%s\" style=\"padding:0 6px;margin-right:4px\">%s</span>",
                kinds[i], kinds[i]);
    fputs(" best to worst</p></section>\n", out);
}

/* ---- tuning ---- */

#define PW 980 /* plot panel */
#define PH 360
#define X0 70
#define X1 700
#define Y0 36
#define Y1 300

static const char *const algo_colour[TP_ALGO_COUNT] = {"#1f77b4", "#d62728", "#9467bd", "#8c564b",
                                                       "#2ca02c", "#ff7f0e", "#17becf"};
static const char *const proto_dash[TP_PROTO_COUNT] = {"2 4", "9 4", "none"};

typedef struct tune_axes {
    const tune_sweep *s;
    int i;
    int n_ranks;
    double x_lo, x_hi, y_lo, y_hi; /* log2 bytes; log10 GB/s */
} tune_axes;

static const tune_row *trow(const tune_axes *p, int k)
{
    return &p->s->rows[p->i * p->s->n_sizes + k];
}

static double tx(const tune_axes *p, uint64_t bytes)
{
    double span = p->x_hi > p->x_lo ? p->x_hi - p->x_lo : 1;
    return X0 + (log2((double)bytes) - p->x_lo) / span * (X1 - X0);
}

static double ty(const tune_axes *p, double bw)
{
    double v = log10(bw);
    v = v < p->y_lo ? p->y_lo : v;
    return Y1 - (v - p->y_lo) / (p->y_hi - p->y_lo) * (Y1 - Y0);
}

/* Whether bw is above the plot's floor (points below it are left out, not flattened). */
static bool on_plot(const tune_axes *p, double bw)
{
    return bw > 0 && log10(bw) >= p->y_lo - 1e-9;
}

static double pair_bw(const tune_axes *p, int k, int a, int pr)
{
    const tune_row *r = trow(p, k);
    float t = r->choice.algo == (tp_algo)a && r->choice.proto == (tp_proto)pr
                  ? r->choice.time
                  : r->choice.times[a][pr];
    if (!r->ok || t <= 0)
        return -1;
    return (double)r->bytes / ((double)t * 1e3) *
           tp_tune__busbw_factor(p->s->colls[p->i], p->n_ranks);
}

static void tune_grid(FILE *out, const tune_axes *p)
{
    fprintf(out,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
            "class=\"axis\"/>\n",
            X0, Y0, X1 - X0, Y1 - Y0);
    for (int d = (int)p->y_lo; d <= (int)p->y_hi; d++) {
        double y = ty(p, pow(10, d));
        fprintf(out,
                "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                X0, y, X1, y, X0 - 5, y + 4, pow(10, d));
    }
    for (int k = 0; k < p->s->n_sizes; k += 3) {
        char name[32];
        double x = tx(p, trow(p, k)->bytes);
        tp_report__size_name(name, sizeof(name), trow(p, k)->bytes);
        fprintf(out,
                "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                x, Y0, x, Y1, x, Y1 + 16, name);
    }
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size (log scale)</text>"
            "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">busbw GB/s "
            "(log scale)</text>\n",
            (X0 + X1) / 2, Y1 + 36, (Y0 + Y1) / 2);
}

static void tune_line(FILE *out, const tune_axes *p, int a, int pr)
{
    bool open = false;
    for (int k = 0; k < p->s->n_sizes; k++) {
        double bw = pair_bw(p, k, a, pr);
        if (!on_plot(p, bw)) {
            fputs(open ? "\"/>\n" : "", out);
            open = false;
            continue;
        }
        if (!open)
            fprintf(out,
                    "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                    "stroke-dasharray=\"%s\" points=\"",
                    algo_colour[a], proto_dash[pr]);
        fprintf(out, "%s%.1f,%.1f", open ? " " : "", tx(p, trow(p, k)->bytes), ty(p, bw));
        open = true;
    }
    fputs(open ? "\"/>\n" : "", out);
}

/* NCCL's choice: a wide band under the lines, a dot with its name where it changes. */
static void tune_choice(FILE *out, const tune_axes *p)
{
    fputs("<polyline fill=\"none\" stroke=\"#888\" stroke-opacity=\".35\" stroke-width=\"11\" "
          "stroke-linejoin=\"round\" points=\"",
          out);
    for (int k = 0, first = 1; k < p->s->n_sizes; k++)
        if (trow(p, k)->ok && on_plot(p, trow(p, k)->busbw)) {
            fprintf(out, "%s%.1f,%.1f", first ? "" : " ", tx(p, trow(p, k)->bytes),
                    ty(p, trow(p, k)->busbw));
            first = 0;
        }
    fputs("\"/>\n", out);
    for (int k = 0, n = 0; k < p->s->n_sizes; k++) {
        const tune_row *r = trow(p, k);
        /* the first choice on the plot, then every change */
        if (!r->ok || !on_plot(p, r->busbw) ||
            (n && k && !tp_report__tune_crossover(trow(p, k - 1), r)))
            continue;
        double x = tx(p, r->bytes), y = ty(p, r->busbw);
        fprintf(out,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#000\"/><text class=\"choice\" "
                "x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s/%s</text>\n",
                x, y, x + 5, y - 6 - 12 * (n++ % 2), tp_tune__algo_name(r->choice.algo),
                tp_tune__proto_name(r->choice.proto));
    }
}

static void tune_legend(FILE *out, bool shown[TP_ALGO_COUNT][TP_PROTO_COUNT])
{
    int y = Y0 + 6;
    fprintf(out,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\" stroke-opacity=\".35\" "
            "stroke-width=\"11\"/><text x=\"%d\" y=\"%d\">NCCL's choice (dot: it changes)</text>\n",
            X1 + 20, y, X1 + 50, y, X1 + 56, y + 4);
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int pr = 0; pr < TP_PROTO_COUNT; pr++)
            if (shown[a][pr]) {
                y += 18;
                fprintf(out,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                        "stroke-width=\"2\" stroke-dasharray=\"%s\"/><text x=\"%d\" y=\"%d\">"
                        "%s/%s</text>\n",
                        X1 + 20, y, X1 + 50, y, algo_colour[a], proto_dash[pr], X1 + 56, y + 4,
                        tp_tune__algo_name(a), tp_tune__proto_name(pr));
            }
}

static void tune_panel(FILE *out, tune_axes *p)
{
    bool shown[TP_ALGO_COUNT][TP_PROTO_COUNT] = {{false}};
    double lo = 0, hi = 0;
    for (int k = 0; k < p->s->n_sizes; k++)
        for (int a = 0; a < TP_ALGO_COUNT; a++)
            for (int pr = 0; pr < TP_PROTO_COUNT; pr++) {
                double bw = pair_bw(p, k, a, pr);
                if (bw <= 0)
                    continue;
                shown[a][pr] = true;
                lo = lo == 0 || bw < lo ? bw : lo;
                hi = bw > hi ? bw : hi;
            }
    p->y_hi = ceil(log10(hi > 0 ? hi : 1) + 1e-9);
    p->y_lo = floor(log10(lo > 0 ? lo : 1e-3));
    p->y_lo = p->y_lo < p->y_hi - 4 ? p->y_hi - 4 : p->y_lo; /* four decades: the sizes compared */
    p->y_lo = p->y_lo >= p->y_hi ? p->y_hi - 1 : p->y_lo;
    const char *coll = tp_tune__coll_name(p->s->colls[p->i]);
    fprintf(out,
            "<div class=\"tune-panel\" data-coll=\"%s\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
            "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s: "
            "predicted bus bandwidth against message size per algorithm and protocol, NCCL's "
            "choice marked\"><text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s, %d "
            "ranks</text>\n",
            coll, PW, PH, PW, PH, coll, X0, coll, p->n_ranks);
    tune_grid(out, p);
    tune_choice(out, p);
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int pr = 0; pr < TP_PROTO_COUNT; pr++)
            if (shown[a][pr])
                tune_line(out, p, a, pr);
    tune_legend(out, shown);
    fputs("</svg></div>\n", out);
}

/* NCCL's choice at the sizes people compare, for every collective. */
static void tune_table(FILE *out, const tune_sweep *s)
{
    static const int shifts[] = {10, 16, 20, 24, 28, 30, 33};
    fputs("<div class=\"pic\"><table class=\"sizes\"><caption>NCCL's choice at common sizes: "
          "algorithm/protocol, "
          "channels, predicted time, busbw</caption><thead><tr><th>size</th>",
          out);
    for (int i = 0; i < s->n_colls; i++)
        fprintf(out, "<th>%s</th>", tp_tune__coll_name(s->colls[i]));
    fputs("</tr></thead><tbody>\n", out);
    for (size_t z = 0; z < sizeof(shifts) / sizeof(shifts[0]); z++) {
        uint64_t bytes = (uint64_t)1 << shifts[z];
        int k = 0;
        while (k < s->n_sizes && s->rows[k].bytes < bytes)
            k++;
        if (k == s->n_sizes)
            continue;
        char name[32];
        tp_report__size_name(name, sizeof(name), bytes);
        fprintf(out, "<tr><th scope=\"row\">%s</th>", name);
        for (int i = 0; i < s->n_colls; i++) {
            const tune_row *r = &s->rows[i * s->n_sizes + k];
            if (!r->ok) {
                fputs("<td>none</td>", out);
                continue;
            }
            /* below 1 GB/s two significant digits: 1 KiB calls read "0.0 GB/s" */
            fprintf(out, "<td>%s/%s, %d ch<br><small>%.1f us, %.*f GB/s</small></td>",
                    tp_tune__algo_name(r->choice.algo), tp_tune__proto_name(r->choice.proto),
                    r->choice.n_channels, r->choice.time, r->busbw < 0.995 ? 2 : 1, r->busbw);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table></div>\n", out);
}

tp_status tp_html__tune(FILE *out, const tp_plan *plan, tp_error *err)
{
    fprintf(out,
            "<section id=\"tune\" class=\"tune\" aria-labelledby=\"tune-h\"><h2 id=\"tune-h\">"
            "Tuning: predicted bus bandwidth by size (NCCL %s's model)</h2>\n",
            tp_config_nccl(plan->cfg));
    tune_sweep s;
    tp_status st = TP_OK;
    if (!plan->tuned || !plan->tuning.modelled) {
        fputs("<p class=\"note\">No tuning model: a job of one rank runs no collective "
              "algorithm.</p></section>\n",
              out);
        return TP_OK;
    }
    st = tp_report__tune_sweep(&s, plan, NULL, "tp_report_html", err);
    if (st != TP_OK)
        return st;
    fputs("<div class=\"controls\"><label for=\"tune-pick\">Collective</label> <select "
          "id=\"tune-pick\">",
          out);
    for (int i = 0; i < s.n_colls; i++)
        fprintf(out, "<option value=\"%s\"%s>%s</option>", tp_tune__coll_name(s.colls[i]),
                s.colls[i] == TP_COLL_ALLREDUCE ? " selected" : "", tp_tune__coll_name(s.colls[i]));
    fputs("</select></div>\n", out);
    for (int i = 0; i < s.n_colls; i++) {
        tune_axes p = {.s = &s, .i = i, .n_ranks = plan->tuning.job.n_ranks};
        p.x_lo = log2((double)s.rows[0].bytes);
        p.x_hi = log2((double)s.rows[s.n_sizes - 1].bytes);
        tune_panel(out, &p);
    }
    tune_table(out, &s);
    fputs("</section>\n", out);
    tp_report__tune_sweep_free(&s);
    return TP_OK;
}
