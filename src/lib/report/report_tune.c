/*
 * `topoplan tune`: per collective and size, NCCL 2.22.3's algorithm and
 * protocol choice, channels, threads, predicted time, algorithm and bus
 * bandwidth (nccl-tests' definitions), where the choice changes and why
 * (the competing times). Every figure comes from the plan's tuning model
 * and tp_tune__choose, the rule NCCL's --sizes lines are checked against.
 */
#include "report/report_tune.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TUNE_MIN_BYTES ((uint64_t)8)
#define TUNE_MAX_BYTES ((uint64_t)8 << 30)

int tp_tune_coll_from_name(const char *name)
{
    for (int c = 0; name && c < TP_COLL_COUNT; c++)
        if (strcasecmp(name, tp_tune__coll_name(c)) == 0)
            return c;
    return -1;
}

void tp_report__size_name(char *buf, size_t size, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    uint64_t v = bytes;
    while (u < 4 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, "%" PRIu64 " %s", v, units[u]);
}

void tp_report__tune_sweep_free(tune_sweep *s)
{
    free(s->rows);
    memset(s, 0, sizeof(*s));
}

/* Every size of every selected collective, chosen as NCCL chooses. */
tp_status tp_report__tune_sweep(tune_sweep *s, const tp_plan *plan, const tp_tune_options *opt,
                                const char *fn, tp_error *err)
{
    memset(s, 0, sizeof(*s));
    tp_status ok = tp_plan__check_done(plan, fn, err);
    if (ok != TP_OK)
        return ok;
    uint64_t lo = opt && opt->min_bytes ? opt->min_bytes : TUNE_MIN_BYTES;
    uint64_t hi = opt && opt->max_bytes ? opt->max_bytes : TUNE_MAX_BYTES;
    int coll = opt ? opt->coll : -1;
    if (coll < -1 || coll >= TP_COLL_COUNT)
        return tp_fail_arg(err, fn, "opt->coll out of range");
    if (lo > hi || hi > ((uint64_t)1 << 40))
        return tp_fail_arg(err, fn, "sizes out of range (at most 1 TiB, min <= max)");
    if (!plan->tuned)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "the plan has no tuning model");
    s->tuning = &plan->tuning;
    for (uint64_t b = lo; b <= hi && b > 0; b *= 2)
        s->n_sizes++;
    for (int c = 0; c < TP_COLL_COUNT; c++)
        if (coll < 0 || c == coll)
            s->colls[s->n_colls++] = (tp_coll)c;
    if (!plan->tuning.modelled)
        return TP_OK;
    s->rows = calloc((size_t)s->n_colls * (size_t)s->n_sizes, sizeof(*s->rows));
    if (!s->rows)
        return tp_fail_nomem(err);
    for (int i = 0; i < s->n_colls; i++) {
        uint64_t b = lo;
        for (int k = 0; k < s->n_sizes; k++, b *= 2) {
            tune_row *r = &s->rows[i * s->n_sizes + k];
            r->bytes = b;
            r->ok = tp_tune__choose(&plan->tuning, s->colls[i], (size_t)b, &r->choice);
            r->algbw = r->ok && r->choice.time > 0 ? (double)b / (r->choice.time * 1e3) : 0;
            r->busbw = r->algbw * tp_tune__busbw_factor(s->colls[i], plan->tuning.job.n_ranks);
        }
    }
    return TP_OK;
}

static void pair_name(char *buf, size_t size, tp_algo algo, tp_proto proto)
{
    snprintf(buf, size, "%s/%s", tp_tune__algo_name(algo), tp_tune__proto_name(proto));
}

/* A pair's time at a row: its cost table entry, or the chosen backup time. */
static float time_of(const tune_row *r, tp_algo algo, tp_proto proto)
{
    if (r->choice.algo == algo && r->choice.proto == proto)
        return r->choice.time;
    return r->choice.times[algo][proto];
}

bool tp_report__tune_crossover(const tune_row *prev, const tune_row *r)
{
    return prev->ok && r->ok &&
           (prev->choice.algo != r->choice.algo || prev->choice.proto != r->choice.proto);
}

static void text_header(FILE *out, const tp_plan *plan)
{
    const tp_tune_job *j = &plan->tuning.job;
    char source[4 * 256 + 16]; /* a file name's control bytes shown, not sent to the terminal */
    fprintf(out,
            "NCCL %s tuning model of %s: %d rank%s, %d NCCL node%s, %d channels, "
            "%d NVLS channels\n",
            tp_config_nccl(plan->cfg), tp_printable(source, sizeof(source), plan->source),
            j->n_ranks, j->n_ranks == 1 ? "" : "s", j->n_nodes, j->n_nodes == 1 ? "" : "s",
            j->n_channels, j->nvls_channels);
    fprintf(out, "Rank 0's view; one call of float32 sum per size, not grouped; no CollNet, no "
                 "tuner plugin.\n");
}

static void text_crossovers(FILE *out, const tune_sweep *s, int i)
{
    bool any = false;
    for (int k = 1; k < s->n_sizes; k++) {
        const tune_row *prev = &s->rows[i * s->n_sizes + k - 1], *r = prev + 1;
        if (!tp_report__tune_crossover(prev, r))
            continue;
        if (!any)
            fputs("  where the choice changes, and why:\n", out);
        any = true;
        char size[32], from[40], to[40], psize[32];
        tp_report__size_name(size, sizeof(size), r->bytes);
        tp_report__size_name(psize, sizeof(psize), prev->bytes);
        pair_name(from, sizeof(from), prev->choice.algo, prev->choice.proto);
        pair_name(to, sizeof(to), r->choice.algo, r->choice.proto);
        float old_now = time_of(r, prev->choice.algo, prev->choice.proto);
        float new_before = time_of(prev, r->choice.algo, r->choice.proto);
        fprintf(out, "    %9s  %s -> %s: %.2f us", size, from, to, (double)r->choice.time);
        if (old_now >= 0)
            fprintf(out, " < %.2f us for %s", (double)old_now, from);
        else
            fprintf(out, " (%s no longer available)", from);
        fprintf(out, "; at %s %s took %.2f us", psize, from, (double)prev->choice.time);
        if (new_before >= 0)
            fprintf(out, " < %.2f us", (double)new_before);
        fputc('\n', out);
    }
    bool available = false;
    for (int k = 0; k < s->n_sizes; k++)
        available = available || s->rows[i * s->n_sizes + k].ok;
    if (!any && available)
        fputs("  the choice never changes in this range\n", out);
}

static void write_text(FILE *out, const tp_plan *plan, const tune_sweep *s)
{
    text_header(out, plan);
    if (!plan->tuning.modelled) {
        fputs("One rank: NCCL runs collectives as local copies, with no model.\n", out);
        return;
    }
    for (int i = 0; i < s->n_colls; i++) {
        tp_coll c = s->colls[i];
        fprintf(out, "\n%s (busbw = algbw x %.4g)\n", tp_tune__coll_name(c),
                tp_tune__busbw_factor(c, plan->tuning.job.n_ranks));
        fprintf(out, "  %9s  %-22s %3s %4s %12s %11s %11s\n", "size", "algorithm/protocol", "ch",
                "thr", "time us", "algbw GB/s", "busbw GB/s");
        for (int k = 0; k < s->n_sizes; k++) {
            const tune_row *r = &s->rows[i * s->n_sizes + k];
            char size[32], pair[48];
            tp_report__size_name(size, sizeof(size), r->bytes);
            if (!r->ok) {
                fprintf(out, "  %9s  no algorithm/protocol available (NCCL fails the call)\n",
                        size);
                continue;
            }
            pair_name(pair, sizeof(pair), r->choice.algo, r->choice.proto);
            if (r->choice.from_backup)
                strncat(pair, " (backup)", sizeof(pair) - strlen(pair) - 1);
            fprintf(out, "  %9s  %-22s %3d %4d %12.2f %11.2f %11.2f\n", size, pair,
                    r->choice.n_channels, r->choice.n_threads, (double)r->choice.time, r->algbw,
                    r->busbw);
        }
        text_crossovers(out, s, i);
    }
}

static void json_pair(FILE *out, tp_algo algo, tp_proto proto, float time)
{
    fprintf(out, "{\"algorithm\": \"%s\", \"protocol\": \"%s\", \"time_us\": %.6f}",
            tp_tune__algo_name(algo), tp_tune__proto_name(proto), (double)time);
}

static void json_row(FILE *out, const tune_row *r)
{
    fprintf(out, "{\"bytes\": %" PRIu64 ", ", r->bytes);
    if (!r->ok) {
        fputs("\"available\": false}", out);
        return;
    }
    fprintf(out,
            "\"available\": true, \"algorithm\": \"%s\", \"protocol\": \"%s\", "
            "\"from_backup\": %s, \"channels\": %d, \"threads\": %d, \"time_us\": %.6f, "
            "\"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"candidates\": [",
            tp_tune__algo_name(r->choice.algo), tp_tune__proto_name(r->choice.proto),
            r->choice.from_backup ? "true" : "false", r->choice.n_channels, r->choice.n_threads,
            (double)r->choice.time, r->algbw, r->busbw);
    bool first = true;
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int p = 0; p < TP_PROTO_COUNT; p++)
            if (r->choice.times[a][p] >= 0) {
                fputs(first ? "" : ", ", out);
                json_pair(out, a, p, r->choice.times[a][p]);
                first = false;
            }
    fputs("]}", out);
}

static void json_crossovers(FILE *out, const tune_sweep *s, int i)
{
    bool first = true;
    fputs("      \"crossovers\": [", out);
    for (int k = 1; k < s->n_sizes; k++) {
        const tune_row *prev = &s->rows[i * s->n_sizes + k - 1], *r = prev + 1;
        if (!tp_report__tune_crossover(prev, r))
            continue;
        fprintf(out, "%s\n        {\"bytes\": %" PRIu64 ", \"from\": ", first ? "" : ",", r->bytes);
        json_pair(out, prev->choice.algo, prev->choice.proto,
                  time_of(r, prev->choice.algo, prev->choice.proto));
        fputs(", \"to\": ", out);
        json_pair(out, r->choice.algo, r->choice.proto, r->choice.time);
        fputc('}', out);
        first = false;
    }
    fputs(first ? "]\n" : "\n      ]\n", out);
}

static void write_json(FILE *out, const tp_plan *plan, const tune_sweep *s)
{
    const tp_tune_job *j = &plan->tuning.job;
    tp_report__json_begin(out, "topoplan.tune", tp_config_nccl(plan->cfg));
    fputs("  \"source\": ", out);
    tp_report__json_str(out, plan->source);
    fprintf(out,
            ",\n  \"n_ranks\": %d, \"nccl_nodes\": %d, \"channels\": %d, \"nvls_channels\": %d, "
            "\"modelled\": %s,\n  \"collectives\": [",
            j->n_ranks, j->n_nodes, j->n_channels, j->nvls_channels,
            plan->tuning.modelled ? "true" : "false");
    for (int i = 0; plan->tuning.modelled && i < s->n_colls; i++) {
        tp_coll c = s->colls[i];
        fprintf(out, "%s\n    {\"name\": \"%s\", \"busbw_factor\": %.6f,\n      \"sizes\": [",
                i ? "," : "", tp_tune__coll_name(c), tp_tune__busbw_factor(c, j->n_ranks));
        for (int k = 0; k < s->n_sizes; k++) {
            fputs(k ? ",\n        " : "\n        ", out);
            json_row(out, &s->rows[i * s->n_sizes + k]);
        }
        fputs("\n      ],\n", out);
        json_crossovers(out, s, i);
        fputs("    }", out);
    }
    fputs(plan->tuning.modelled ? "\n  ]\n}\n" : "]\n}\n", out);
}

tp_status tp_report_tune(FILE *out, const tp_plan *plan, const tp_tune_options *opt, tp_format fmt,
                         tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_report_tune", "out is NULL");
    if (fmt != TP_FORMAT_TEXT && fmt != TP_FORMAT_JSON)
        return tp_fail_arg(err, "tp_report_tune", "fmt must be text or json");
    tune_sweep s;
    tp_status st = tp_report__tune_sweep(&s, plan, opt, "tp_report_tune", err);
    if (st != TP_OK)
        return st;
    if (fmt == TP_FORMAT_JSON)
        write_json(out, plan, &s);
    else
        write_text(out, plan, &s);
    tp_report__tune_sweep_free(&s);
    return tp_report__check_stream(out, err);
}
