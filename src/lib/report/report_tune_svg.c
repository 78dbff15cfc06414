/*
 * `topoplan tune --plot`: predicted bus bandwidth against message size, one
 * panel per collective, one line per algorithm/protocol NCCL could take
 * (colour: algorithm, dashes: protocol), NCCL's choice as a wide grey band
 * under them, and a marker where the choice changes. Written as SVG text.
 */
#include "report/report_tune.h"

#include <math.h>

#define PANEL_W 980
#define PANEL_H 400
#define PLOT_X0 80
#define PLOT_X1 720
#define PLOT_Y0 50  /* top of the plot area within a panel */
#define PLOT_Y1 340 /* bottom */
#define LEGEND_X 745

static const char *const algo_colour[TP_ALGO_COUNT] = {"#1f77b4", "#d62728", "#9467bd", "#8c564b",
                                                       "#2ca02c", "#ff7f0e", "#17becf"};
static const char *const proto_dash[TP_PROTO_COUNT] = {"2,4", "9,4", "none"};

typedef struct panel {
    const tune_sweep *s;
    int i;             /* collective index in the sweep */
    double y_off;      /* panel's top */
    double x_lo, x_hi; /* log2 of the first and last size */
    double y_max;      /* GB/s at the top of the axis */
    int n_ranks, n_nodes;
    const char *nccl_version; /* the version modelled */
} panel;

static const tune_row *row(const panel *p, int k)
{
    return &p->s->rows[p->i * p->s->n_sizes + k];
}

static double x_of(const panel *p, uint64_t bytes)
{
    double span = p->x_hi > p->x_lo ? p->x_hi - p->x_lo : 1;
    return PLOT_X0 + (log2((double)bytes) - p->x_lo) / span * (PLOT_X1 - PLOT_X0);
}

static double y_of(const panel *p, double bw)
{
    return p->y_off + PLOT_Y1 - bw / p->y_max * (PLOT_Y1 - PLOT_Y0);
}

/* busbw of a pair at row k; negative when the pair is not available there. */
static double pair_busbw(const panel *p, int k, tp_algo a, tp_proto pr)
{
    const tune_row *r = row(p, k);
    float t =
        r->choice.algo == a && r->choice.proto == pr ? r->choice.time : r->choice.times[a][pr];
    if (!r->ok || t <= 0)
        return -1;
    tp_coll coll = p->s->colls[p->i];
    return (double)r->bytes / ((double)t * 1e3) * tp_tune__busbw_factor(coll, p->n_ranks);
}

/* A round axis top: 1..6, 8 or 10 times a power of ten above the largest value. */
static double nice_max(double v)
{
    if (v <= 0)
        return 1;
    double mag = pow(10, floor(log10(v)));
    for (int m = 1; m <= 10; m++)
        if (m * mag >= v && m != 7 && m != 9)
            return m * mag;
    return 10 * mag;
}

static void axes(FILE *out, const panel *p)
{
    double top = p->y_off + PLOT_Y0, bottom = p->y_off + PLOT_Y1;
    fprintf(out,
            "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
            "stroke=\"#888\"/>\n",
            PLOT_X0, top, PLOT_X1 - PLOT_X0, PLOT_Y1 - PLOT_Y0);
    for (int t = 0; t <= 5; t++) {
        double bw = p->y_max * t / 5, y = y_of(p, bw);
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                PLOT_X0, y, PLOT_X1, y);
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", PLOT_X0 - 6,
                y + 4, bw);
    }
    int step = p->s->n_sizes > 12 ? 3 : 1;
    for (int k = 0; k < p->s->n_sizes; k += step) {
        char name[32];
        uint64_t b = row(p, k)->bytes;
        double x = x_of(p, b);
        tp_report__size_name(name, sizeof(name), b);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", x,
                top, x, bottom);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                bottom + 16, name);
    }
    fprintf(out,
            "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">message size (NCCL nBytes)"
            "</text>\n",
            (PLOT_X0 + PLOT_X1) / 2, bottom + 36);
    fprintf(out,
            "<text transform=\"translate(24,%.1f) rotate(-90)\" text-anchor=\"middle\">"
            "predicted busbw (GB/s)</text>\n",
            (top + bottom) / 2);
}

/* One polyline through the rows where the pair is available. */
static void pair_line(FILE *out, const panel *p, tp_algo a, tp_proto pr, const char *style)
{
    bool open = false;
    for (int k = 0; k < p->s->n_sizes; k++) {
        double bw = pair_busbw(p, k, a, pr);
        if (bw < 0) {
            if (open)
                fprintf(out, "\" %s/>\n", style);
            open = false;
            continue;
        }
        fprintf(out, open ? " %.1f,%.1f" : "<polyline fill=\"none\" points=\"%.1f,%.1f",
                x_of(p, row(p, k)->bytes), y_of(p, bw));
        open = true;
    }
    if (open)
        fprintf(out, "\" %s/>\n", style);
}

static void chosen_band(FILE *out, const panel *p)
{
    fputs("<polyline fill=\"none\" stroke=\"#999\" stroke-opacity=\"0.45\" stroke-width=\"10\" "
          "stroke-linejoin=\"round\" points=\"",
          out);
    for (int k = 0; k < p->s->n_sizes; k++)
        if (row(p, k)->ok)
            fprintf(out, " %.1f,%.1f", x_of(p, row(p, k)->bytes), y_of(p, row(p, k)->busbw));
    fputs("\"/>\n", out);
}

static void crossovers(FILE *out, const panel *p)
{
    int n = 0;
    for (int k = 1; k < p->s->n_sizes; k++) {
        const tune_row *prev = row(p, k - 1), *r = row(p, k);
        if (!tp_report__tune_crossover(prev, r))
            continue;
        double x = x_of(p, r->bytes);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
                "stroke-dasharray=\"1,3\"/>\n",
                x, p->y_off + PLOT_Y0, x, p->y_off + PLOT_Y1);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s/%s</text>\n", x + 3,
                p->y_off + PLOT_Y0 + 12 + 12 * (n++ % 4), tp_tune__algo_name(r->choice.algo),
                tp_tune__proto_name(r->choice.proto));
    }
}

static void legend(FILE *out, const panel *p, bool shown[TP_ALGO_COUNT][TP_PROTO_COUNT])
{
    double y = p->y_off + PLOT_Y0 + 6;
    fprintf(out,
            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999\" "
            "stroke-opacity=\"0.45\" stroke-width=\"10\"/>\n",
            LEGEND_X, y, LEGEND_X + 30, y);
    fprintf(out, "<text x=\"%d\" y=\"%.1f\">NCCL's choice</text>\n", LEGEND_X + 38, y + 4);
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int pr = 0; pr < TP_PROTO_COUNT; pr++) {
            if (!shown[a][pr])
                continue;
            y += 20;
            fprintf(out,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                    "stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n",
                    LEGEND_X, y, LEGEND_X + 30, y, algo_colour[a], proto_dash[pr]);
            fprintf(out, "<text x=\"%d\" y=\"%.1f\">%s/%s</text>\n", LEGEND_X + 38, y + 4,
                    tp_tune__algo_name(a), tp_tune__proto_name(pr));
        }
}

static void draw_panel(FILE *out, panel *p)
{
    bool shown[TP_ALGO_COUNT][TP_PROTO_COUNT] = {{false}};
    double top = 0;
    for (int k = 0; k < p->s->n_sizes; k++)
        for (int a = 0; a < TP_ALGO_COUNT; a++)
            for (int pr = 0; pr < TP_PROTO_COUNT; pr++) {
                double bw = pair_busbw(p, k, a, pr);
                shown[a][pr] |= bw >= 0;
                top = bw > top ? bw : top;
            }
    p->y_max = nice_max(top * 1.05);
    tp_coll coll = p->s->colls[p->i];
    fprintf(out,
            "<text x=\"%d\" y=\"%.1f\" font-size=\"15\" font-weight=\"bold\">%s: predicted "
            "bus bandwidth, %d ranks on %d NCCL node%s (NCCL %s model)</text>\n",
            PLOT_X0, p->y_off + 28, tp_tune__coll_name(coll), p->n_ranks, p->n_nodes,
            p->n_nodes == 1 ? "" : "s", p->nccl_version);
    axes(out, p);
    chosen_band(out, p);
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int pr = 0; pr < TP_PROTO_COUNT; pr++)
            if (shown[a][pr]) {
                char style[128];
                snprintf(style, sizeof(style),
                         "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"", algo_colour[a],
                         proto_dash[pr]);
                pair_line(out, p, a, pr, style);
            }
    crossovers(out, p);
    legend(out, p, shown);
}

tp_status tp_report_tune_svg(FILE *out, const tp_plan *plan, const tp_tune_options *opt,
                             tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_report_tune_svg", "out is NULL");
    tune_sweep s;
    tp_status st = tp_report__tune_sweep(&s, plan, opt, "tp_report_tune_svg", err);
    if (st != TP_OK)
        return st;
    int n_panels = s.rows ? s.n_colls : 0;
    int height = n_panels ? n_panels * PANEL_H : 60;
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
            PANEL_W, height, PANEL_W, height);
    fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", PANEL_W, height);
    if (!n_panels)
        fputs("<text x=\"20\" y=\"35\">One rank: NCCL runs collectives as local copies, with no "
              "model.</text>\n",
              out);
    for (int i = 0; i < n_panels; i++) {
        panel p = {.s = &s,
                   .i = i,
                   .y_off = (double)i * PANEL_H,
                   .n_ranks = plan->tuning.job.n_ranks,
                   .n_nodes = plan->tuning.job.n_nodes,
                   .nccl_version = tp_config_nccl(plan->cfg)};
        p.x_lo = log2((double)s.rows[i * s.n_sizes].bytes);
        p.x_hi = log2((double)s.rows[i * s.n_sizes + s.n_sizes - 1].bytes);
        draw_panel(out, &p);
    }
    fputs("</svg>\n", out);
    tp_report__tune_sweep_free(&s);
    return tp_report__check_stream(out, err);
}
