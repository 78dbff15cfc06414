/*
 * `topoplan diff` and `topoplan check`: a comparison written layer by layer
 * (diff) or as findings ordered by severity (check), in text or JSON.
 */
#include "compare/compare.h"
#include "report/report_tune.h"

/* Where to look when the first difference is at a layer (regression localisation). */
static const char *const layer_hints[TP_LAYER_COUNT] = {
    "the topology itself differs: look at the hardware (PCIe link training, BIOS, cabling, "
    "missing devices) and at what the container, sysfs and NVML expose",
    "same topology, other paths: look at the path policies (NCCL_P2P_LEVEL, NVB, PXN, GDR)",
    "same paths, other graphs: look at the search constraints and NCCL_GRAPH_FILE",
    "same graphs, other channels: look at NCCL_MIN/MAX_NCHANNELS, CTAs and NVLS",
    "same channels, other choices: look at NCCL_ALGO, NCCL_PROTO, NCCL_NTHREADS, "
    "NCCL_NET_OVERHEAD and the CPUs and GPUs of the job",
};

/*
 * The layer's hint; for graphs, the NCCL rule that changed them when the comparison found it;
 * in a version diff, the version's rules and numbers listed under the layer.
 */
static const char *layer_hint(const tp_comparison *c, int layer)
{
    if (layer == TP_LAYER_GRAPHS && c->graph_rule[0])
        return c->graph_rule;
    if (tp_compare__is_version_diff(c))
        return "the NCCL versions differ: see the rules and profile values listed under this "
               "layer (and the environment, when it differs too)";
    return layer_hints[layer];
}

static size_t layer_count(const tp_comparison *c, int layer)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_diffs; i++)
        n += (int)c->diffs[i].layer == layer;
    return n;
}

static const tp_difference *layer_first(const tp_comparison *c, int layer)
{
    for (size_t i = 0; i < c->n_diffs; i++)
        if ((int)c->diffs[i].layer == layer)
            return &c->diffs[i];
    return NULL;
}

static void text_job(FILE *out, const tp_comparison *c)
{
    fprintf(out, "%d node%s, rank %d, %s%s", c->job.n_nodes, c->job.n_nodes == 1 ? "" : "s",
            c->job.rank, c->env[0] ? "environment: " : "same NCCL_* environment", c->env);
}

static void text_summary(FILE *out, const tp_comparison *c)
{
    fputs("summary\n", out);
    for (int l = 0; l < TP_LAYER_COUNT; l++) {
        size_t n = layer_count(c, l);
        const tp_difference *d = layer_first(c, l);
        if (n == 0)
            fprintf(out, "  %-9s identical\n", tp_compare__layer_name(l));
        else
            fprintf(out, "  %-9s %zu difference%s, first: %s\n", tp_compare__layer_name(l), n,
                    n == 1 ? "" : "s", d->text);
    }
    int first = tp_comparison_first_layer(c);
    fprintf(out, "first difference at %s: %s\n", tp_compare__layer_name(first),
            layer_hint(c, first));
    if (c->why[0])
        fprintf(out, "why: %s\n", c->why);
}

/* "2.22.3 -> 2.27.5" or "2.22.3": the version(s) the comparison modelled. */
static void text_versions(FILE *out, const tp_comparison *c)
{
    if (tp_compare__is_version_diff(c))
        fprintf(out, "%s -> %s", c->profile[0]->version, c->profile[1]->version);
    else
        fputs(c->nccl_version, out);
}

/* One line per side whose profile is not yet exact on its public suite. */
static void text_partial(FILE *out, const tp_comparison *c)
{
    for (int s = 0; s < 2; s++)
        if (!c->profile[s]->exact && (s == 0 || c->profile[1] != c->profile[0]))
            fprintf(out,
                    "note: the NCCL %s profile is partial (%d of %d public conformance cases "
                    "pass): its prediction is not yet exact\n",
                    c->profile[s]->version, c->profile[s]->public_passed,
                    c->profile[s]->public_total);
}

static const char *yes_no(bool b)
{
    return b ? "yes" : "no";
}

/* The differing rules acting on `stages` (one bit set): "name (a -> b, source)". */
static void text_layer_rules(FILE *out, const tp_comparison *c, unsigned stage)
{
    bool any = false;
    for (int r = 0; r < TP_RULE_COUNT; r++) {
        if (!((c->rules_differ >> r) & 1u) || !(tp_compare__rule_stages((tp_rule)r) & stage))
            continue;
        fprintf(out, "%s%s", any ? ", " : "  rules that differ here: ", tp_rule_name((tp_rule)r));
        any = true;
    }
    if (any)
        fputc('\n', out);
}

/* The profile numbers that differ and act on the layer `stage`. */
static void text_layer_values(FILE *out, const tp_comparison *c, unsigned stage)
{
    for (int i = 0; i < c->n_values; i++)
        if (c->values[i].stages & stage)
            fprintf(out, "  profile value that differs here: %s\n", c->values[i].text);
}

/* A differing rule's stages as the rule list prints them. */
static void rule_stages_text(tp_rule r, char *buf, size_t size)
{
    tp_compare__rule_stage_names(r, buf, size);
    if (!buf[0])
        snprintf(buf, size, "unassigned");
}

/* The widths of the rule list's name and stage columns: its longest name and stage list, so a
 * long one never pushes the next column out of line. */
static void rule_column_widths(const tp_comparison *c, int *name_w, int *stage_w)
{
    *name_w = *stage_w = 0;
    for (int r = 0; r < TP_RULE_COUNT; r++) {
        if (!((c->rules_differ >> r) & 1u))
            continue;
        char stages[64];
        rule_stages_text((tp_rule)r, stages, sizeof(stages));
        int n = (int)strlen(tp_rule_name((tp_rule)r)), m = (int)strlen(stages);
        *name_w = n > *name_w ? n : *name_w;
        *stage_w = m > *stage_w ? m : *stage_w;
    }
}

static void text_rules(FILE *out, const tp_comparison *c)
{
    int n = 0, name_w, stage_w;
    for (int r = 0; r < TP_RULE_COUNT; r++)
        n += (int)((c->rules_differ >> r) & 1u);
    fprintf(out, "\nrules that differ between NCCL %s and %s: %d\n", c->profile[0]->version,
            c->profile[1]->version, n);
    rule_column_widths(c, &name_w, &stage_w);
    for (int r = 0; r < TP_RULE_COUNT; r++) {
        if (!((c->rules_differ >> r) & 1u))
            continue;
        char stages[64];
        rule_stages_text((tp_rule)r, stages, sizeof(stages));
        fprintf(out, "  %-*s %-3s -> %-3s  %-*s %s\n", name_w, tp_rule_name((tp_rule)r),
                yes_no(tp_profile_has(c->profile[0], (tp_rule)r)),
                yes_no(tp_profile_has(c->profile[1], (tp_rule)r)), stage_w, stages,
                tp_rule_source((tp_rule)r));
    }
}

static void text_busbw(FILE *out, const tp_comparison *c)
{
    fprintf(out, "\nAllReduce bus bandwidth, NCCL %s -> %s (each side's tuning model):\n",
            c->profile[0]->version, c->profile[1]->version);
    for (int i = 0; i < TP_VERSION_DIFF_SIZES; i++) {
        char size[32];
        tp_report__size_name(size, sizeof(size), (uint64_t)1 << tp_compare__version_sizes_log2[i]);
        fprintf(out, "  %-7s ", size);
        for (int s = 0; s < 2; s++) {
            if (c->busbw_ok[s][i])
                fprintf(out, "%s%.1f", s ? " -> " : "", c->busbw[s][i]);
            else
                fprintf(out, "%s-", s ? " -> " : "");
        }
        if (c->busbw_ok[0][i] && c->busbw_ok[1][i] && c->busbw[0][i] > 0)
            fprintf(out, " GB/s (%+.1f%%)\n", 100.0 * (c->busbw[1][i] / c->busbw[0][i] - 1.0));
        else
            fputs(" GB/s (no model on a side)\n", out);
    }
}

static void diff_text(FILE *out, const tp_comparison *c)
{
    char a[1100], b[1100];
    bool versions = tp_compare__is_version_diff(c);
    fprintf(out, "diff %s -> %s (", tp_printable(a, sizeof(a), c->source[0]),
            tp_printable(b, sizeof(b), c->source[1]));
    text_job(out, c);
    fputs(") [NCCL ", out);
    text_versions(out, c);
    fputs("]\n", out);
    if (versions)
        text_partial(out, c);
    if (c->n_diffs == 0)
        fputs("identical at every layer: system, paths, graphs, channels, tuning\n", out);
    for (int l = 0; l < TP_LAYER_COUNT && (c->n_diffs || versions); l++) {
        size_t n = layer_count(c, l);
        if (n == 0)
            fprintf(out, "\n%s: identical\n", tp_compare__layer_name(l));
        else
            fprintf(out, "\n%s: %zu difference%s\n", tp_compare__layer_name(l), n,
                    n == 1 ? "" : "s");
        for (size_t i = 0; i < c->n_diffs; i++)
            if ((int)c->diffs[i].layer == l)
                fprintf(out, "  %s\n", c->diffs[i].text);
        if (versions) {
            text_layer_rules(out, c, 1u << l);
            text_layer_values(out, c, 1u << l);
        }
    }
    if (versions) {
        text_rules(out, c);
        text_busbw(out, c);
    }
    if (c->n_diffs == 0)
        return;
    fputc('\n', out);
    text_summary(out, c);
}

static void json_diff_item(FILE *out, const tp_difference *d)
{
    fputs("{\"layer\": ", out);
    tp_report__json_str(out, tp_compare__layer_name((int)d->layer));
    static const char *const sev_names[] = {"info", "warning", "error"}; /* as in every JSON */
    fprintf(out, ", \"severity\": \"%s\"", sev_names[d->severity]);
    fprintf(out, ", \"kind\": \"%s\", \"role\": \"%s\"", tp_compare__kind_id((int)d->kind),
            d->consequence ? "consequence" : "cause");
    fputs(", \"title\": ", out);
    tp_report__json_str(out, d->title);
    fputs(", \"text\": ", out);
    tp_report__json_str(out, d->text);
    tp_report__json_finding_fields(out, d);
    fputc('}', out);
}

static void json_head(FILE *out, const tp_comparison *c, const char *schema, const char *k0,
                      const char *k1)
{
    tp_report__json_begin(out, schema, c->nccl_version);
    fprintf(out, "  \"%s\": ", k0);
    tp_report__json_str(out, c->source[0]);
    fprintf(out, ",\n  \"%s\": ", k1);
    tp_report__json_str(out, c->source[1]);
    fprintf(out, ",\n  \"nodes\": %d, \"rank\": %d,\n", c->job.n_nodes, c->job.rank);
    fputs("  \"environment\": ", out);
    if (c->env[0])
        tp_report__json_str(out, c->env);
    else
        fputs("null", out);
    fputs(",\n", out);
    int first = tp_comparison_first_layer(c);
    fputs("  \"first_layer\": ", out);
    if (first < 0)
        fputs("null", out);
    else
        tp_report__json_str(out, tp_compare__layer_name(first));
    fputs(",\n  \"why\": ", out);
    if (c->why[0])
        tp_report__json_str(out, c->why);
    else
        fputs("null", out);
    fputs(",\n", out);
}

/* , "rules": [names] of the differing rules acting on the layer `stage`. */
static void json_layer_rules(FILE *out, const tp_comparison *c, unsigned stage)
{
    fputs(", \"rules\": [", out);
    bool any = false;
    for (int r = 0; r < TP_RULE_COUNT; r++) {
        if (!((c->rules_differ >> r) & 1u) || !(tp_compare__rule_stages((tp_rule)r) & stage))
            continue;
        fputs(any ? ", " : "", out);
        tp_report__json_str(out, tp_rule_name((tp_rule)r));
        any = true;
    }
    fputc(']', out);
}

static void json_profile(FILE *out, const tp_nccl_profile *p)
{
    fputs("{\"nccl\": ", out);
    tp_report__json_str(out, p->version);
    fprintf(out, ", \"exact\": %s, \"public_passed\": %d, \"public_total\": %d}",
            p->exact ? "true" : "false", p->public_passed, p->public_total);
}

static void json_rule(FILE *out, const tp_comparison *c, tp_rule r)
{
    char stages[64];
    tp_compare__rule_stage_names(r, stages, sizeof(stages));
    fputs("{\"rule\": ", out);
    tp_report__json_str(out, tp_rule_name(r));
    fputs(", \"source\": ", out);
    tp_report__json_str(out, tp_rule_source(r));
    fputs(", \"stages\": [", out);
    for (int l = 0, any = 0; l <= TP_LAYER_COUNT; l++) {
        if (!(tp_compare__rule_stages(r) & (1u << l)))
            continue;
        fputs(any++ ? ", " : "", out);
        tp_report__json_str(out, l == TP_LAYER_COUNT ? "log" : tp_compare__layer_name(l));
    }
    fprintf(out, "], \"a\": %s, \"b\": %s}", tp_profile_has(c->profile[0], r) ? "true" : "false",
            tp_profile_has(c->profile[1], r) ? "true" : "false");
}

/* The version-diff keys: both profiles, the differing rules, AllReduce busbw per size. */
static void json_versions(FILE *out, const tp_comparison *c)
{
    fputs(",\n  \"nccl_a\": ", out);
    json_profile(out, c->profile[0]);
    fputs(",\n  \"nccl_b\": ", out);
    json_profile(out, c->profile[1]);
    fputs(",\n  \"rules\": [", out);
    bool any = false;
    for (int r = 0; r < TP_RULE_COUNT; r++) {
        if (!((c->rules_differ >> r) & 1u))
            continue;
        fputs(any ? ",\n    " : "\n    ", out);
        json_rule(out, c, (tp_rule)r);
        any = true;
    }
    fputs(any ? "\n  ]" : "]", out);
    fputs(",\n  \"profile_values\": [", out);
    for (int i = 0; i < c->n_values; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        tp_report__json_str(out, c->values[i].text);
    }
    fputs(c->n_values ? "\n  ]" : "]", out);
    fputs(",\n  \"allreduce_busbw\": [", out);
    for (int i = 0; i < TP_VERSION_DIFF_SIZES; i++) {
        fprintf(out, "%s\n    {\"bytes\": %llu", i ? "," : "",
                1ULL << tp_compare__version_sizes_log2[i]);
        for (int s = 0; s < 2; s++) {
            fprintf(out, ", \"%s\": ", s ? "b_gbs" : "a_gbs");
            if (c->busbw_ok[s][i])
                fprintf(out, "%.2f", c->busbw[s][i]);
            else
                fputs("null", out);
        }
        fputc('}', out);
    }
    fputs("\n  ]", out);
}

static void diff_json(FILE *out, const tp_comparison *c)
{
    json_head(out, c, "topoplan.diff", "a", "b");
    fprintf(out, "  \"identical\": %s,\n  \"layers\": [", c->n_diffs ? "false" : "true");
    for (int l = 0; l < TP_LAYER_COUNT; l++) {
        fprintf(out, "%s\n    {\"layer\": \"%s\", \"differences\": [", l ? "," : "",
                tp_compare__layer_name(l));
        bool first = true;
        for (size_t i = 0; i < c->n_diffs; i++) {
            if ((int)c->diffs[i].layer != l)
                continue;
            fputs(first ? "\n      " : ",\n      ", out);
            json_diff_item(out, &c->diffs[i]);
            first = false;
        }
        fputs(first ? "]" : "\n    ]", out);
        if (tp_compare__is_version_diff(c))
            json_layer_rules(out, c, 1u << l);
        fputc('}', out);
    }
    fputs("\n  ]", out);
    if (tp_compare__is_version_diff(c))
        json_versions(out, c);
    fputs("\n}\n", out);
}

static tp_status check_format(tp_format fmt, const char *what, tp_error *err)
{
    if (fmt == TP_FORMAT_DOT)
        return tp_fail(err, TP_ERR_CONFIG, "fmt", 0, 0, "%s: no dot output (use text or json)",
                       what);
    return TP_OK;
}

tp_status tp_report_diff(FILE *out, const tp_comparison *cmp, tp_format fmt, tp_error *err)
{
    if (!out || !cmp)
        return tp_fail_arg(err, "tp_report_diff", !out ? "out is NULL" : "cmp is NULL");
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail_arg(err, "tp_report_diff", "fmt out of range");
    tp_status st = check_format(fmt, "diff", err);
    if (st != TP_OK)
        return st;
    if (fmt == TP_FORMAT_JSON)
        diff_json(out, cmp);
    else
        diff_text(out, cmp);
    return tp_report__check_stream(out, err);
}

static size_t consequence_count(const tp_comparison *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_diffs; i++)
        n += c->diffs[i].consequence != 0;
    return n;
}

static void check_counts(FILE *out, const tp_comparison *c)
{
    size_t e = tp_comparison_count_severity(c, TP_SEVERITY_ERROR);
    size_t w = tp_comparison_count_severity(c, TP_SEVERITY_WARN);
    size_t i = tp_comparison_count_severity(c, TP_SEVERITY_INFO);
    size_t q = consequence_count(c);
    fprintf(out, "result: %s: %zu error%s, %zu warning%s, %zu info",
            e + w ? "DEVIATIONS" : "healthy", e, e == 1 ? "" : "s", w, w == 1 ? "" : "s", i);
    if (q)
        fprintf(out, " (root causes; %zu consequence%s listed under them)", q, q == 1 ? "" : "s");
    fputc('\n', out);
}

void tp_compare__cost_line(char *buf, size_t size, const tp_comparison *c, int j)
{
    const struct tp_cmp_job *job = &c->jobs[j];
    char calls[1024], who[96];
    tp_job_cost_text(&job->cost, calls, sizeof(calls));
    bool slower = job->cost.worst_change_pct <= -TP_COST_ERROR_PCT;
    int more = job->channels[1] - job->channels[0];
    if (job->nodes == 1)
        snprintf(who, sizeof(who), "cost to a one-node job (the node alone)");
    else
        snprintf(who, sizeof(who), "cost to a job of %d nodes of the baseline with it", job->nodes);
    snprintf(buf, size,
             "%s (NCCL's tuning model, re-planned): %s; collective channels %d -> %d, search "
             "channels %d -> %d%s",
             who, calls, job->channels[0], job->channels[1], job->search[0], job->search[1],
             more > 0 && slower ? " (more channels, yet slower)"
             : slower           ? ""
                                : " (no call slower by 1 % or more)");
}

/* The node's cost to each job measured: NCCL's tuning model, then the channel counts. */
static void cost_text(FILE *out, const tp_comparison *c, const char *indent)
{
    for (int j = 0; j < c->n_jobs; j++) {
        char line[1400];
        tp_compare__cost_line(line, sizeof(line), c, j);
        fprintf(out, "%s%s\n", indent, line);
    }
}

static void check_line(FILE *out, const tp_difference *d, const char *indent)
{
    if (d->consequence)
        fprintf(out, "%s%-8s  %s: %s\n", indent, tp_compare__layer_name((int)d->layer), d->title,
                d->text);
    else
        fprintf(out, "%-5s  %-8s  %s: %s\n", tp_compare__severity_name((int)d->severity),
                tp_compare__layer_name((int)d->layer), d->title, d->text);
}

static void check_text(FILE *out, const tp_comparison *c)
{
    char node[1100], base[1100];
    fprintf(out, "check %s against the baseline %s (",
            tp_printable(node, sizeof(node), c->source[1]),
            tp_printable(base, sizeof(base), c->source[0]));
    text_job(out, c);
    fprintf(out, ") [NCCL %s]\n", c->nccl_version);
    bool causes_done = false;
    for (int sev = TP_SEVERITY_ERROR; sev >= TP_SEVERITY_INFO; sev--) {
        /* The root causes' cost and consequences follow the last cause that is no INFO. */
        if (sev == TP_SEVERITY_INFO && !causes_done) {
            causes_done = true;
            cost_text(out, c, "  ");
            if (consequence_count(c))
                fputs("  consequences:\n", out);
            for (int s2 = TP_SEVERITY_ERROR; s2 >= TP_SEVERITY_INFO; s2--)
                for (size_t i = 0; i < c->n_diffs; i++)
                    if (c->diffs[i].consequence && (int)c->diffs[i].severity == s2)
                        check_line(out, &c->diffs[i], "    ");
        }
        for (size_t i = 0; i < c->n_diffs; i++)
            if ((int)c->diffs[i].severity == sev && !c->diffs[i].consequence)
                check_line(out, &c->diffs[i], "");
    }
    if (c->why[0])
        fprintf(out, "why: %s\n", c->why);
    int first = tp_comparison_first_layer(c);
    if (first >= 0)
        fprintf(out, "first difference at %s: %s\n", tp_compare__layer_name(first),
                layer_hint(c, first));
    check_counts(out, c);
}

static void json_call(FILE *out, const tp_tune_call *t)
{
    if (t->algorithm < 0) {
        fputs("null", out);
        return;
    }
    fprintf(out,
            "{\"algorithm\": \"%s\", \"protocol\": \"%s\", \"time_us\": %.2f, "
            "\"busbw_gbs\": %.2f}",
            tp_tune_algo_name(t->algorithm), tp_tune_proto_name(t->protocol), t->time_us,
            t->busbw_gbs);
}

static void json_job_effects(FILE *out, const tp_comparison *c)
{
    fputs("  \"job_effects\": [", out);
    for (int j = 0; j < c->n_jobs; j++) {
        const struct tp_cmp_job *job = &c->jobs[j];
        fprintf(out,
                "%s\n   {\"nodes\": %d, \"collective_channels\": [%d, %d], "
                "\"search_channels\": [%d, %d], \"worst_busbw_change_pct\": %.2f, "
                "\"allreduce\": [",
                j ? "," : "", job->nodes, job->channels[0], job->channels[1], job->search[0],
                job->search[1], job->cost.worst_change_pct);
        for (int i = 0; i < job->cost.n_calls; i++) {
            const tp_call_cost *k = &job->cost.calls[i];
            fprintf(out, "%s\n    {\"bytes\": %llu, \"before\": ", i ? "," : "",
                    (unsigned long long)k->n_bytes);
            json_call(out, &k->before);
            fputs(", \"after\": ", out);
            json_call(out, &k->after);
            fprintf(out, ", \"busbw_change_pct\": %.2f}", k->busbw_change_pct);
        }
        fputs("]}", out);
    }
    fputs(c->n_jobs ? "\n  ],\n" : "],\n", out);
}

static void check_json(FILE *out, const tp_comparison *c)
{
    size_t e = tp_comparison_count_severity(c, TP_SEVERITY_ERROR);
    size_t w = tp_comparison_count_severity(c, TP_SEVERITY_WARN);
    json_head(out, c, "topoplan.check", "baseline", "node");
    fprintf(out,
            "  \"healthy\": %s, \"errors\": %zu, \"warnings\": %zu, \"infos\": %zu, "
            "\"consequences\": %zu,\n",
            e + w ? "false" : "true", e, w, tp_comparison_count_severity(c, TP_SEVERITY_INFO),
            consequence_count(c));
    json_job_effects(out, c);
    fputs("  \"findings\": [", out);
    bool first = true;
    for (int pass = 0; pass < 2; pass++)
        for (int sev = TP_SEVERITY_ERROR; sev >= TP_SEVERITY_INFO; sev--) {
            for (size_t i = 0; i < c->n_diffs; i++) {
                if ((int)c->diffs[i].severity != sev || (c->diffs[i].consequence != 0) != pass)
                    continue;
                fputs(first ? "\n    " : ",\n    ", out);
                json_diff_item(out, &c->diffs[i]);
                first = false;
            }
        }
    fputs(first ? "]\n}\n" : "\n  ]\n}\n", out);
}

tp_status tp_report_check(FILE *out, const tp_comparison *cmp, tp_format fmt, tp_error *err)
{
    if (!out || !cmp)
        return tp_fail_arg(err, "tp_report_check", !out ? "out is NULL" : "cmp is NULL");
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail_arg(err, "tp_report_check", "fmt out of range");
    tp_status st = check_format(fmt, "check", err);
    if (st != TP_OK)
        return st;
    if (fmt == TP_FORMAT_JSON)
        check_json(out, cmp);
    else
        check_text(out, cmp);
    return tp_report__check_stream(out, err);
}
