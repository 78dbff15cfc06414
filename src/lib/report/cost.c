/*
 * What going from one plan to another costs a job, stated as NCCL 2.22.3's
 * tuning model predicts it: its algorithm/protocol choice and the bus
 * bandwidth of AllReduce calls of a few sizes users care about. Channel counts
 * alone mislead: more channels can come with a slower choice.
 */
#include "plan/plan.h"

#include <stdio.h>
#include <string.h>

static const uint64_t cost_sizes[TP_COST_CALLS] = {1ull << 20, 64ull << 20, 256ull << 20,
                                                   1ull << 30};

/* NCCL's choice for one AllReduce (as tp_plan_tune_call); algorithm -1 when it finds none. */
static void call_of(const tp_plan *plan, uint64_t n_bytes, tp_tune_call *out)
{
    memset(out, 0, sizeof(*out));
    out->algorithm = TP_ALGO_RING;
    out->protocol = TP_PROTO_SIMPLE;
    if (!plan->tuned || !plan->tuning.modelled)
        return; /* a one-rank job: NCCL copies locally */
    tp_tune_choice c;
    if (!tp_tune__choose(&plan->tuning, TP_COLL_ALLREDUCE, (size_t)n_bytes, &c)) {
        out->algorithm = out->protocol = -1;
        return;
    }
    out->algorithm = c.algo;
    out->protocol = c.proto;
    out->time_us = c.time;
    out->channels = c.n_channels;
    out->threads = c.n_threads;
    out->from_backup = c.from_backup;
    out->algbw_gbs = c.time > 0 ? (double)n_bytes / ((double)c.time * 1e3) : 0;
    out->busbw_gbs =
        out->algbw_gbs * tp_tune__busbw_factor(TP_COLL_ALLREDUCE, plan->tuning.job.n_ranks);
}

tp_status tp_plan_cost(tp_job_cost *out, const tp_plan *before, const tp_plan *after, tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_plan_cost", "out is NULL");
    memset(out, 0, sizeof(*out));
    tp_status st = tp_plan__check_done(before, "tp_plan_cost", err);
    if (st == TP_OK)
        st = tp_plan__check_done(after, "tp_plan_cost", err);
    if (st != TP_OK)
        return st;
    out->n_calls = TP_COST_CALLS;
    for (int i = 0; i < TP_COST_CALLS; i++) {
        tp_call_cost *c = &out->calls[i];
        c->n_bytes = cost_sizes[i];
        call_of(before, c->n_bytes, &c->before);
        call_of(after, c->n_bytes, &c->after);
        double b = c->before.busbw_gbs, a = c->after.busbw_gbs;
        c->busbw_change_pct = b > 0 ? (a - b) / b * 100.0 : 0.0;
        if (c->busbw_change_pct < out->worst_change_pct)
            out->worst_change_pct = c->busbw_change_pct;
    }
    return TP_OK;
}

/* "1 MiB", "64 MiB", "1 GiB". */
static void size_text(char *buf, size_t size, uint64_t n)
{
    if (n >= (1ull << 30) && n % (1ull << 30) == 0)
        snprintf(buf, size, "%llu GiB", (unsigned long long)(n >> 30));
    else
        snprintf(buf, size, "%llu MiB", (unsigned long long)(n >> 20));
}

/* "NVLS/Simple", or "no algorithm" when NCCL finds none. */
static const char *choice_text(char *buf, size_t size, const tp_tune_call *c)
{
    if (c->algorithm < 0)
        return "no algorithm (NCCL fails the call)";
    snprintf(buf, size, "%s/%s", tp_tune__algo_name(c->algorithm),
             tp_tune__proto_name(c->protocol));
    return buf;
}

/* Whether a call's choice and busbw are the same in both plans (to the printed 0.1 GB/s). */
static bool unchanged(const tp_call_cost *c)
{
    double d = c->after.busbw_gbs - c->before.busbw_gbs;
    return c->before.algorithm == c->after.algorithm && c->before.protocol == c->after.protocol &&
           d < 0.05 && d > -0.05;
}

void tp_job_cost_text(const tp_job_cost *cost, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    buf[0] = '\0';
    if (!cost)
        return;
    size_t used = 0;
    for (int i = 0; i < cost->n_calls && i < TP_COST_CALLS && used < size; i++) {
        const tp_call_cost *c = &cost->calls[i];
        char sz[32], from[48], to[48];
        size_text(sz, sizeof(sz), c->n_bytes);
        const char *lead = i == 0 ? "AllReduce " : ", ";
        int n;
        if (c->after.algorithm < 0)
            n = snprintf(buf + used, size - used, "%s%s %s %.1f GB/s busbw -> %s", lead, sz,
                         choice_text(from, sizeof(from), &c->before), c->before.busbw_gbs,
                         choice_text(to, sizeof(to), &c->after));
        else if (unchanged(c))
            n = snprintf(buf + used, size - used, "%s%s %s %.1f GB/s busbw, unchanged", lead, sz,
                         choice_text(from, sizeof(from), &c->before), c->before.busbw_gbs);
        else
            n = snprintf(buf + used, size - used, "%s%s %s %.1f -> %s %.1f GB/s busbw (%+.1f %%)",
                         lead, sz, choice_text(from, sizeof(from), &c->before), c->before.busbw_gbs,
                         choice_text(to, sizeof(to), &c->after), c->after.busbw_gbs,
                         c->busbw_change_pct);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}
