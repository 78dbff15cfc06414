/*
 * The findings on a page: a health check's root causes with their severity
 * and what the node costs a job, their consequences folded under them, and on
 * the plan's own page the setting notes and topology-file lints, each graded
 * and with its cost where one was measured.
 */
#include "compare/compare.h"
#include "html/html.h"
#include "query/query.h"
#include "tuning/tuning.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The NCCL labels a finding names ("GPU/0-1c000 PCI/0-18000"), space separated. */
static void labels_of(char *buf, size_t size, const char *text)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *p = text; *p; p++) {
        if (!isupper((unsigned char)*p) || (p > text && isalnum((unsigned char)p[-1])))
            continue;
        const char *q = p;
        while (isupper((unsigned char)*q))
            q++;
        if (*q != '/' || !isxdigit((unsigned char)q[1]))
            continue;
        q++;
        while (isxdigit((unsigned char)*q))
            q++;
        if (*q != '-' || !isxdigit((unsigned char)q[1]))
            continue;
        q++;
        while (isxdigit((unsigned char)*q))
            q++;
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%.*s", n ? " " : "",
                              (int)(q - p), p);
        p = q - 1;
    }
}

/* Whether a node of sys has NCCL's label `label`. */
static bool drawn_label(const tp_system *sys, const char *label, size_t len)
{
    char buf[48];
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < sys->nodes[t].count; i++) {
            tp_report__node_label(buf, sizeof(buf), &sys->nodes[t].nodes[i]);
            if (strlen(buf) == len && strncmp(buf, label, len) == 0)
                return true;
        }
    return false;
}

/* Keep the labels of nodes drawn on the page (a node's own page lacks what only the baseline
 * has: a finding about a missing GPU has nothing to mark there). */
static void keep_drawn(char *labels, const tp_system *drawn)
{
    char *out = labels;
    for (const char *p = labels; *p;) {
        size_t len = strcspn(p, " ");
        if (drawn_label(drawn, p, len)) {
            if (out != labels)
                *out++ = ' ';
            memmove(out, p, len);
            out += len;
        }
        p += len + (p[len] == ' ');
    }
    *out = '\0';
}

static void finding_row(FILE *out, const tp_difference *d, const tp_system *drawn)
{
    char labels[512];
    labels_of(labels, sizeof(labels), d->text);
    bool named = labels[0] != '\0';
    if (drawn)
        keep_drawn(labels, drawn);
    const char *name = tp_compare__severity_name((int)d->severity);
    fprintf(out, "<tr><td class=\"sev-%s\">%s</td><td>%s</td><td>", name, name,
            tp_compare__layer_name((int)d->layer));
    tp_html__text(out, d->title);
    fputs("</td><td>", out);
    tp_html__text(out, d->text);
    fputs("</td><td>", out);
    if (labels[0])
        fprintf(out, "<button type=\"button\" class=\"finding\" data-labels=\"%s\">show</button>",
                labels);
    else if (named)
        fputs("<small>only on the baseline</small>", out);
    fputs("</td></tr>\n", out);
}

/* Which differences a table lists. */
typedef enum finding_kind {
    CAUSES,      /* root causes that cost or may cost a job (ERROR, WARN) */
    HARMLESS,    /* root causes graded INFO: renumbered devices, better paths, other orders */
    CONSEQUENCES /* what the root causes change in paths, graphs, channels, tuning */
} finding_kind;

static bool of_kind(const tp_difference *d, finding_kind kind)
{
    if (kind == CONSEQUENCES)
        return d->consequence;
    return !d->consequence && (d->severity == TP_SEVERITY_INFO) == (kind == HARMLESS);
}

/* The differences of one kind, errors first. */
static void finding_rows(FILE *out, const tp_comparison *cmp, bool check, finding_kind kind,
                         const tp_system *drawn)
{
    fprintf(out,
            "<table class=\"findings\"><thead><tr><th>severity</th><th>layer</th><th>what</th>"
            "<th>detail (%s)</th><th></th></tr></thead><tbody>\n",
            check ? "baseline \xe2\x86\x92 this node" : "first \xe2\x86\x92 second");
    size_t n = tp_comparison_count(cmp);
    for (int sev = TP_SEVERITY_ERROR; sev >= TP_SEVERITY_INFO; sev--)
        for (size_t i = 0; i < n; i++) {
            const tp_difference *d = tp_comparison_get(cmp, i);
            if ((int)d->severity == sev && of_kind(d, kind))
                finding_row(out, d, drawn);
        }
    fputs("</tbody></table>\n", out);
}

/* A folded table of one kind, when it has rows. */
static void folded_rows(FILE *out, const tp_comparison *cmp, bool check, finding_kind kind,
                        const tp_system *drawn, const char *what)
{
    size_t n = 0;
    for (size_t i = 0; i < tp_comparison_count(cmp); i++)
        n += of_kind(tp_comparison_get(cmp, i), kind);
    if (n == 0)
        return;
    fprintf(out, "<details class=\"%s\"><summary>%zu %s</summary>\n",
            kind == CONSEQUENCES ? "consequences" : "harmless", n, what);
    finding_rows(out, cmp, check, kind, drawn);
    fputs("</details>\n", out);
}

static void algo_proto(FILE *out, const tp_tune_call *c)
{
    if (c->algorithm < 0)
        fputs("no algorithm", out);
    else
        fprintf(out, "%s/%s", tp_tune__algo_name((tp_algo)c->algorithm),
                tp_tune__proto_name((tp_proto)c->protocol));
}

/* One call in a cost cell: NCCL's choice (both when it changes), busbw before -> after. */
static void cost_cell(FILE *out, const tp_call_cost *c)
{
    bool bad = c->busbw_change_pct <= -TP_COST_ERROR_PCT || c->after.algorithm < 0;
    fprintf(out, "<td%s>", bad ? " class=\"bad\"" : "");
    algo_proto(out, &c->before);
    if (c->after.algorithm != c->before.algorithm || c->after.protocol != c->before.protocol) {
        fputs(" \xe2\x86\x92 ", out);
        algo_proto(out, &c->after);
    }
    fprintf(out, "<br>%.1f \xe2\x86\x92 %.1f<small>%+.1f %%</small></td>", c->before.busbw_gbs,
            c->after.algorithm < 0 ? 0.0 : c->after.busbw_gbs, c->busbw_change_pct);
}

/* What the checked node costs a job, as a table: a row per job size measured, a column per
 * AllReduce size (busbw before -> after, the change marked from TP_COST_ERROR_PCT slower). */
static void costs(FILE *out, const tp_comparison *cmp)
{
    if (cmp->n_jobs == 0)
        return;
    const tp_job_cost *first = &cmp->jobs[0].cost;
    fputs("<table class=\"cost\"><caption>What the node costs a job: AllReduce bus bandwidth "
          "(GB/s) in NCCL's tuning model, the job re-planned without and with it</caption>"
          "<thead><tr><th>job</th>",
          out);
    for (int k = 0; k < first->n_calls; k++) {
        char sz[32];
        tp_report__size_name(sz, sizeof(sz), first->calls[k].n_bytes);
        fprintf(out, "<th>%s</th>", sz);
    }
    fputs("<th>channels</th></tr></thead><tbody>\n", out);
    for (int j = 0; j < cmp->n_jobs; j++) {
        const struct tp_cmp_job *job = &cmp->jobs[j];
        if (job->nodes == 1)
            fputs("<tr><th scope=\"row\">the node alone</th>", out);
        else
            fprintf(out, "<tr><th scope=\"row\">%d nodes of the baseline with it</th>", job->nodes);
        for (int k = 0; k < job->cost.n_calls && k < first->n_calls; k++)
            cost_cell(out, &job->cost.calls[k]);
        fprintf(out, "<td>collective %d \xe2\x86\x92 %d, search %d \xe2\x86\x92 %d</td></tr>\n",
                job->channels[0], job->channels[1], job->search[0], job->search[1]);
    }
    fputs("</tbody></table>\n", out);
}

void tp_html__comparison_findings(FILE *out, const tp_comparison *cmp, bool check,
                                  const tp_system *drawn)
{
    size_t n = tp_comparison_count(cmp);
    size_t e = tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR);
    size_t w = tp_comparison_count_severity(cmp, TP_SEVERITY_WARN);
    size_t i = tp_comparison_count_severity(cmp, TP_SEVERITY_INFO);
    fprintf(out,
            "<h3>%s: %zu error%s, %zu warning%s, %zu note%s</h3>\n<p class=\"note\">The root "
            "causes (the hardware that differs), graded by what they cost a job in NCCL's "
            "tuning model (ERROR from %.0f %% slower); <b>show</b> marks the devices a finding "
            "names.</p>\n",
            check ? "Root causes" : "Differences", e, e == 1 ? "" : "s", w, w == 1 ? "" : "s", i,
            i == 1 ? "" : "s", TP_COST_ERROR_PCT);
    if (n == 0) {
        fputs("<p>None: the two plans are the same.</p>\n", out);
        return;
    }
    if (e + w)
        finding_rows(out, cmp, check, CAUSES, drawn);
    else
        fputs("<p>No root cause that costs a job: the notes below are harmless.</p>\n", out);
    costs(out, cmp);
    const char *why = tp_comparison_why(cmp);
    if (why && why[0]) {
        fputs("<p><b>Channels:</b> ", out);
        tp_html__text(out, why);
        fputs("</p>\n", out);
    }
    /* the harmless ones apart: 29 renumbered NIC ports once buried the one missing NIC */
    folded_rows(out, cmp, check, HARMLESS, drawn,
                "harmless differences (renumbered devices, better paths, other orders)");
    folded_rows(out, cmp, check, CONSEQUENCES, drawn,
                "consequences of these root causes (paths, graphs, channels, tuning)");
}

/* A row of the notes table: severity, where it comes from, the finding, its cost. */
static void note_row(FILE *out, const char *sev, const char *source, const char *text,
                     size_t text_len, const char *cost)
{
    fprintf(out, "<tr><td class=\"sev-%s\">%s</td><td>%s</td><td>", sev, sev, source);
    char *part = strndup(text, text_len);
    tp_html__text(out, part ? part : text);
    free(part);
    fputs("</td><td>", out);
    tp_html__text(out, cost);
    fputs("</td></tr>\n", out);
}

/* Setting notes, graded by their measured cost: ERROR from TP_COST_ERROR_PCT slower. */
static int setting_rows(FILE *out, const tp_plan *plan)
{
    tp_findings *f = NULL;
    tp_error ignored = {0};
    if (tp_setting_notes(&f, NULL, plan, &ignored) != TP_OK)
        return 0; /* advisory: the page stands without them */
    int n = tp_findings_count(f);
    for (int i = 0; i < n; i++) {
        const char *text = tp_findings_get(f, i);
        const tp_finding_cost *c = tp_findings__cost(f, (size_t)i);
        const char *sev = c && c->worst_change_pct <= -TP_COST_ERROR_PCT ? "ERROR" : "WARN";
        /* the cost part starts "; against no NCCL_X ...": shown in its own column */
        note_row(out, sev, "setting", text, c ? c->at : strlen(text),
                 c ? text + c->at + 2 : "not measured (what NCCL does instead is not modelled)");
    }
    tp_findings_free(f);
    return n;
}

/* Provider-file lints and partial-file findings of the planned topology. */
static int lint_rows(FILE *out, const tp_plan *plan)
{
    tp_lints *l = NULL;
    tp_error ignored = {0};
    if (tp_lint_plan(&l, plan, NULL, &ignored) != TP_OK)
        return 0;
    int n = (int)tp_lints_count(l);
    for (int i = 0; i < n; i++) {
        const char *text = tp_lints_message(l, (size_t)i);
        bool partial = tp_lints_is_partial(l, (size_t)i);
        note_row(out, "WARN", partial ? "partial topology file" : "topology file", text,
                 strlen(text),
                 partial ? "not measured: NCCL completes the file at run time; `topoplan "
                           "complete` gives the topology it would hold"
                         : "not measured: the plan is of the file as written");
    }
    tp_lints_free(l);
    return n;
}

/* The notes table, or nothing when there is no note; the number of notes. */
static int notes(FILE *out, const tp_plan *plan)
{
    char *text = NULL;
    size_t len = 0;
    FILE *rows = open_memstream(&text, &len);
    if (!rows)
        return 0; /* without memory, no notes: the rest of the page stands */
    int n = setting_rows(rows, plan) + lint_rows(rows, plan);
    if (fclose(rows) == 0 && n > 0) {
        fprintf(out,
                "<h3>Settings and topology file: %d note%s</h3>\n<table class=\"findings "
                "notes\"><thead><tr><th>severity</th><th>from</th><th>finding</th><th>cost to "
                "this job (AllReduce busbw, NCCL's tuning model)</th></tr></thead><tbody>\n",
                n, n == 1 ? "" : "s");
        fwrite(text, 1, len, out);
        fputs("</tbody></table>\n", out);
    }
    free(text);
    return n;
}

bool tp_html__plan_findings(FILE *out, const tp_plan *plan, const tp_comparison *check)
{
    char *text = NULL;
    size_t len = 0;
    FILE *body = open_memstream(&text, &len);
    if (!body)
        return false;
    if (check) {
        char base[1100];
        fputs("<p class=\"note\">This node against the baseline ", body);
        tp_html__text(body, tp_printable(base, sizeof(base), check->source[0]));
        fputs(" (as <code>topoplan check</code> compares them).</p>\n", body);
        tp_html__comparison_findings(body, check, true, plan->sys);
    }
    bool any = notes(body, plan) > 0 || check;
    if (fclose(body) == 0 && any) {
        fputs("<section id=\"findings\" aria-labelledby=\"findings-h\"><h2 id=\"findings-h\">"
              "Findings</h2>\n",
              out);
        fwrite(text, 1, len, out);
        fputs("</section>\n", out);
    }
    free(text);
    return any;
}
