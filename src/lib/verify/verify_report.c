/* verify: the result as text (per rank, then the job) and as JSON (schema topoplan.verify). */
#include "verify/verify.h"

#include "report/report.h"

#include <stdio.h>
#include <string.h>

static const char *verdict_name(tp_verify_verdict v)
{
    static const char *const names[] = {"agree", "diverge", "absent", "self"};
    return (unsigned)v < ARRAY_LEN(names) ? names[v] : "?";
}

/* Diverging ranks the text shows line by line (the JSON has every one). */
#define TP_VERIFY_TEXT_RANKS 8

static const double busbw_sizes[3] = {1 << 20, 1 << 26, 1 << 30};
static const char *const busbw_names[3] = {"1 MiB", "64 MiB", "1 GiB"};

static void text_header(FILE *out, const tp_verify *v)
{
    unsigned long lines = 0, other = 0;
    for (size_t i = 0; i < v->n_inputs; i++) {
        lines += v->inputs[i].n_lines;
        other += v->inputs[i].other_lines;
    }
    fprintf(out, "log: %zu file%s, %lu lines (%lu NCCL lines, %lu other lines skipped)",
            v->n_inputs, v->n_inputs == 1 ? "" : "s", lines, v->nccl_lines, other);
    fprintf(out, "; NCCL %s; %d rank%s on %d host%s\n",
            v->version[0] ? v->version : "(no version line)", v->n_ranks,
            v->n_ranks == 1 ? "" : "s", v->n_hosts, v->n_hosts == 1 ? "" : "s");
    if (v->self_only)
        fprintf(out, "no topology: the log is checked against itself\n");
    else
        fprintf(out, "planned on %s, %d node%s\n", v->topo_source, v->n_nodes,
                v->n_nodes == 1 ? "" : "s");
    for (size_t i = 0; i < v->n_settings; i++)
        fprintf(out, "setting from the log: %s=%s (%s)\n", v->settings[i].name,
                v->settings[i].value, v->settings[i].where);
}

/* Whether rank i has the verdict `want` (cause < -1) or, as a diverging rank, that cause. */
static bool rank_in(const tp_verify *v, int i, tp_verify_verdict want, int cause)
{
    tp_verify_rank_info info = {0};
    if (i >= v->n_ranks || tp_verify_rank(v, i, &info, sizeof(info)) != TP_OK)
        return false;
    if (cause < -1)
        return info.verdict == want;
    return info.verdict == TP_VERIFY_DIVERGE && v->ranks[i]->cause == cause;
}

/* Ranks of one verdict, or of one cause, as ranges: "0-7, 9". */
static void rank_ranges(FILE *out, const tp_verify *v, tp_verify_verdict want, int cause)
{
    int start = -1, n = 0;
    for (int i = 0; i <= v->n_ranks; i++) {
        bool in = rank_in(v, i, want, cause);
        if (in && start < 0)
            start = i;
        if (!in && start >= 0) {
            fprintf(out, "%s%d", n++ ? ", " : "", start);
            if (i - 1 > start)
                fprintf(out, "-%d", i - 1);
            start = -1;
        }
    }
}

static void text_rank(FILE *out, const tp_verify *v, const tp_vrank *r)
{
    tp_verify_rank_info info;
    tp_verify_rank(v, r->rank, &info, sizeof(info));
    fprintf(out, "rank %d: diverges in %s (line %zu of the section) at %s\n", r->rank, info.stage,
            r->div_index + 1, info.where[0] ? info.where : "the end of its lines");
    fprintf(out, "  expected: %s\n", info.expected ? info.expected : "(no more lines)");
    fprintf(out, "  log:      %s\n", info.actual ? info.actual : "(no more lines)");
    if (r->cut)
        fprintf(out, "  cause: the log is cut inside this rank's last line\n");
    else if (r->cause >= 0)
        fprintf(out, "  cause: %s (re-planned with it: reproduces all %zu lines of the rank)\n",
                v->causes[r->cause].what, r->n_lines);
    else
        fprintf(out, "  cause: none of the candidate settings and hardware changes reproduces "
                     "its lines\n");
}

static void text_causes(FILE *out, const tp_verify *v)
{
    for (size_t i = 0; i < v->n_causes; i++) {
        const tp_vcause *c = &v->causes[i];
        fprintf(out, "  %s: %d rank%s (", c->what, c->ranks, c->ranks == 1 ? "" : "s");
        rank_ranges(out, v, TP_VERIFY_DIVERGE, (int)i);
        fputs(")\n", out);
        if (c->node >= 0) {
            int per = v->n_ranks / v->n_nodes;
            fprintf(out,
                    "    degraded node: node %d (host %s, ranks %d-%d): its hardware differs from "
                    "the topology's, the other nodes run as planned\n",
                    c->node, c->host && c->host[0] ? c->host : "?", c->node * per,
                    (c->node + 1) * per - 1);
        }
        if (!c->has_busbw)
            continue;
        fprintf(out, "    AllReduce busbw, predicted -> with the cause:");
        for (int k = 0; k < 3; k++)
            fprintf(out, "%s %s %.1f -> %.1f GB/s", k ? "," : "", busbw_names[k],
                    c->busbw_expected[k], c->busbw_cause[k]);
        fputc('\n', out);
    }
}

static tp_status report_text(FILE *out, const tp_verify *v, tp_error *err)
{
    text_header(out, v);
    int agree = 0, diverge = 0, absent = 0, self = 0, uncaused = 0;
    for (int i = 0; i < v->n_ranks; i++) {
        const tp_vrank *r = v->ranks[i];
        tp_verify_rank_info info;
        tp_verify_rank(v, i, &info, sizeof(info));
        agree += info.verdict == TP_VERIFY_AGREE;
        absent += info.verdict == TP_VERIFY_ABSENT;
        self += info.verdict == TP_VERIFY_SELF;
        if (info.verdict == TP_VERIFY_DIVERGE) {
            uncaused += r->cause < 0;
            if (diverge++ < TP_VERIFY_TEXT_RANKS)
                text_rank(out, v, r);
        }
    }
    if (diverge > TP_VERIFY_TEXT_RANKS)
        fprintf(out, "... %d more diverging ranks (every one in --format json)\n",
                diverge - TP_VERIFY_TEXT_RANKS);
    if (agree) {
        fprintf(out, "ranks that agree: ");
        rank_ranges(out, v, TP_VERIFY_AGREE, -2);
        fputc('\n', out);
    }
    if (absent) {
        fprintf(out, "ranks without lines in the log: ");
        rank_ranges(out, v, TP_VERIFY_ABSENT, -2);
        fputc('\n', out);
    }
    for (size_t i = 0; i < v->n_notes; i++)
        fprintf(out, "note: %s\n", v->notes[i]);
    if (v->unknown_lines || v->unattributed_lines)
        fprintf(out, "skipped: %lu NCCL lines of no compared section, %lu lines of no rank\n",
                v->unknown_lines, v->unattributed_lines);
    if (v->self_only)
        fprintf(out, "summary: %d rank%s checked against each other, %d finding%s\n", self,
                self == 1 ? "" : "s", v->self_findings, v->self_findings == 1 ? "" : "s");
    else
        fprintf(out, "summary: %d of %d ranks agree, %d diverge%s\n", agree, v->n_ranks - absent,
                diverge, diverge == 1 ? "s" : "");
    if (diverge) {
        text_causes(out, v);
        if (uncaused) {
            fprintf(out, "  no cause found: %d rank%s (", uncaused, uncaused == 1 ? "" : "s");
            rank_ranges(out, v, TP_VERIFY_DIVERGE, -1);
            fputs(")\n", out);
        }
    }
    return tp_report__check_stream(out, err);
}

static void json_inputs(FILE *out, const tp_verify *v)
{
    fputs("  \"inputs\": [", out);
    for (size_t i = 0; i < v->n_inputs; i++) {
        const tp_vinput *in = &v->inputs[i];
        fprintf(out, "%s\n    {\"path\": ", i ? "," : "");
        tp_report__json_str(out, in->path);
        fprintf(out,
                ", \"lines\": %u, \"nccl_lines\": %u, \"other_lines\": %u, \"gzip\": %s, "
                "\"crlf\": %s, \"truncated\": %s}",
                in->n_lines, in->nccl_lines, in->other_lines, in->gzip ? "true" : "false",
                in->crlf ? "true" : "false", in->truncated ? "true" : "false");
    }
    fputs("],\n", out);
}

static void json_ranks(FILE *out, const tp_verify *v)
{
    fputs("  \"ranks\": [", out);
    for (int i = 0; i < v->n_ranks; i++) {
        tp_verify_rank_info info;
        tp_verify_rank(v, i, &info, sizeof(info));
        fprintf(out, "%s\n    {\"rank\": %d, \"verdict\": \"%s\", \"lines\": %zu, \"stage\": ",
                i ? "," : "", i, verdict_name(info.verdict), info.n_lines);
        tp_report__json_opt_str(out, info.stage);
        fputs(", \"expected\": ", out);
        tp_report__json_opt_str(out, info.expected);
        fputs(", \"actual\": ", out);
        tp_report__json_opt_str(out, info.actual);
        fputs(", \"where\": ", out);
        tp_report__json_str(out, info.where);
        fputs(", \"cause\": ", out);
        tp_report__json_opt_str(out, info.cause);
        fputc('}', out);
    }
    fputs("],\n", out);
}

static void json_causes(FILE *out, const tp_verify *v)
{
    fputs("  \"causes\": [", out);
    for (size_t i = 0; i < v->n_causes; i++) {
        const tp_vcause *c = &v->causes[i];
        fprintf(out, "%s\n    {\"what\": ", i ? "," : "");
        tp_report__json_str(out, c->what);
        fputs(", \"detail\": ", out);
        tp_report__json_str(out, c->detail);
        fputs(", \"node_index\": ", out);
        if (c->node >= 0)
            fprintf(out, "%d", c->node);
        else
            fputs("null", out);
        fputs(", \"host\": ", out);
        tp_report__json_opt_str(out, c->node >= 0 ? c->host : NULL);
        fprintf(out, ", \"n_ranks\": %d, \"allreduce_busbw\": ", c->ranks);
        if (!c->has_busbw) {
            fputs("null}", out);
            continue;
        }
        fputc('[', out);
        for (int k = 0; k < 3; k++)
            fprintf(out, "%s{\"bytes\": %.0f, \"expected_gbs\": %.3f, \"cause_gbs\": %.3f}",
                    k ? ", " : "", busbw_sizes[k], c->busbw_expected[k], c->busbw_cause[k]);
        fputs("]}", out);
    }
    fputs("],\n", out);
}

static tp_status report_json(FILE *out, const tp_verify *v, tp_error *err)
{
    tp_report__json_begin(out, "topoplan.verify", tp_config_nccl(v->cfg));
    json_inputs(out, v);
    fputs("  \"log_nccl_version\": ", out);
    tp_report__json_opt_str(out, v->version[0] ? v->version : NULL);
    fputs(",\n  \"topology\": ", out);
    tp_report__json_opt_str(out, v->self_only ? NULL : v->topo_source);
    fprintf(out, ",\n  \"mode\": \"%s\", \"nodes\": %d, \"hosts\": %d, \"n_ranks\": %d,\n",
            v->self_only ? "self" : "plan", v->n_nodes, v->n_hosts, v->n_ranks);
    static const char *const setting_keys[] = {"name", "value", "where"};
    fputs("  \"settings\": [", out);
    for (size_t i = 0; i < v->n_settings; i++) {
        const char *const values[] = {v->settings[i].name, v->settings[i].value,
                                      v->settings[i].where};
        fputs(i ? ", " : "", out);
        tp_report__json_str_fields(out, setting_keys, values, ARRAY_LEN(setting_keys));
    }
    fprintf(out, "],\n  \"skipped_lines\": %lu, \"unattributed_lines\": %lu,\n", v->unknown_lines,
            v->unattributed_lines);
    json_ranks(out, v);
    json_causes(out, v);
    fputs("  \"notes\": ", out);
    tp_report__json_str_array(out, (const char *const *)v->notes, v->n_notes);
    int counts[4] = {0, 0, 0, 0};
    for (int i = 0; i < v->n_ranks; i++) {
        tp_verify_rank_info info;
        tp_verify_rank(v, i, &info, sizeof(info));
        counts[info.verdict]++;
    }
    fprintf(out,
            ",\n  \"summary\": {\"agree\": %d, \"diverge\": %d, \"absent\": %d, \"self\": %d, "
            "\"self_findings\": %d}\n}\n",
            counts[0], counts[1], counts[2], counts[3], v->self_findings);
    return tp_report__check_stream(out, err);
}

tp_status tp_report_verify(FILE *out, const tp_verify *v, tp_format fmt, tp_error *err)
{
    if (!out || !v)
        return tp_fail_arg(err, "tp_report_verify", !out ? "out is NULL" : "v is NULL");
    if (fmt == TP_FORMAT_JSON)
        return report_json(out, v, err);
    if (fmt != TP_FORMAT_TEXT)
        return tp_fail(err, TP_ERR_CONFIG, NULL, 0, 0, "verify writes text or json");
    return report_text(out, v, err);
}
