/*
 * The tuning layer of a comparison: NCCL 2.22.3's algorithm/protocol choice
 * for one call of each collective, 8 B to 8 GiB, on both plans (each with
 * its own environment), and the predicted bandwidth at the largest size.
 * Consecutive sizes with the same change are reported as one range.
 */
#include "compare/compare.h"
#include "report/report_tune.h"

#include <math.h>
#include <string.h>

#define FIRST_LOG2 3
#define LAST_LOG2 33
/* Relative change of the largest call's predicted time worth reporting. */
#define TIME_CHANGE 0.005

void tp_compare__env(tp_comparison *c)
{
    size_t n = 0;
    c->env[0] = '\0';
    for (int id = 0; id < TP_PARAM_COUNT; id++) {
        const char *a = tp_config_str(c->plan[0]->cfg, (tp_param_id)id);
        const char *b = tp_config_str(c->plan[1]->cfg, (tp_param_id)id);
        if ((!a && !b) || (a && b && strcmp(a, b) == 0))
            continue;
        if (n < sizeof(c->env))
            n +=
                (size_t)snprintf(c->env + n, sizeof(c->env) - n, "%s%s %s -> %s", n ? "; " : "",
                                 tp_config_name((tp_param_id)id), a ? a : "unset", b ? b : "unset");
    }
}

typedef struct side_choice {
    bool ok;
    tp_tune_choice ch;
} side_choice;

static void pair_text(char *buf, size_t size, const side_choice *s)
{
    if (!s->ok)
        snprintf(buf, size, "no algorithm (NCCL fails)");
    else
        snprintf(buf, size, "%s/%s (%.2f us)", tp_tune__algo_name(s->ch.algo),
                 tp_tune__proto_name(s->ch.proto), (double)s->ch.time);
}

static bool same_choice(const side_choice *a, const side_choice *b)
{
    return a->ok == b->ok && (!a->ok || (a->ch.algo == b->ch.algo && a->ch.proto == b->ch.proto));
}

/* The run [k0, k1] of sizes with the same change. */
static void add_run(tp_comparison *c, tp_coll coll, int k0, int k1, const side_choice s0[2],
                    const side_choice s1[2])
{
    char from[64], to[64], lo[32], hi[32], range[80];
    pair_text(from, sizeof(from), &s0[0]);
    pair_text(to, sizeof(to), &s0[1]);
    tp_report__size_name(lo, sizeof(lo), (uint64_t)1 << k0);
    tp_report__size_name(hi, sizeof(hi), (uint64_t)1 << k1);
    if (k0 == k1)
        snprintf(range, sizeof(range), "the %s %s", lo, tp_tune__coll_name(coll));
    else
        snprintf(range, sizeof(range), "%s %s to %s", tp_tune__coll_name(coll), lo, hi);
    bool slower = !s0[1].ok || (s0[0].ok && s0[1].ch.time > s0[0].ch.time);
    char tail[96] = "";
    if (k0 != k1 && s1[0].ok && s1[1].ok)
        snprintf(tail, sizeof(tail), "; at %s %.2f -> %.2f us", hi, (double)s1[0].ch.time,
                 (double)s1[1].ch.time);
    tp_compare__add(c, TP_DIFF_TUNING, slower ? TP_SEVERITY_WARN : TP_SEVERITY_INFO,
                    slower ? "slower algorithm/protocol choice" : "other algorithm/protocol choice",
                    "%s goes from %s to %s%s", range, from, to, tail);
}

static void choose_both(const tp_comparison *c, tp_coll coll, int k, side_choice out[2])
{
    for (int s = 0; s < 2; s++)
        out[s].ok = tp_tune__choose(&c->plan[s]->tuning, coll, (size_t)1 << k, &out[s].ch);
}

/* The largest call: the choice may stay while the prediction moves. */
static void largest_call(tp_comparison *c, tp_coll coll, const side_choice s[2])
{
    if (!s[0].ok || !s[1].ok)
        return;
    double t0 = s[0].ch.time, t1 = s[1].ch.time;
    if (fabs(t1 - t0) <= TIME_CHANGE * t0)
        return;
    double bytes = (double)((uint64_t)1 << LAST_LOG2), bw[2];
    for (int i = 0; i < 2; i++)
        bw[i] = bytes / ((double)s[i].ch.time * 1e3) *
                tp_tune__busbw_factor(coll, c->plan[i]->tuning.job.n_ranks);
    char lo[32];
    tp_report__size_name(lo, sizeof(lo), (uint64_t)1 << LAST_LOG2);
    tp_compare__add(c, TP_DIFF_TUNING, bw[1] < bw[0] ? TP_SEVERITY_WARN : TP_SEVERITY_INFO,
                    bw[1] < bw[0] ? "lower predicted bandwidth" : "higher predicted bandwidth",
                    "the %s %s: %.2f -> %.2f us, busbw %.1f -> %.1f GB/s", lo,
                    tp_tune__coll_name(coll), t0, t1, bw[0], bw[1]);
    TP_CMP_VALUE(c, "time", "us", t0, t1);
    TP_CMP_VALUE(c, "busbw", "GB/s", bw[0], bw[1]);
}

static void compare_coll(tp_comparison *c, tp_coll coll)
{
    side_choice first[2] = {{0}}, last[2] = {{0}}, cur[2] = {{0}};
    int start = -1;
    for (int k = FIRST_LOG2; k <= LAST_LOG2 + 1; k++) {
        bool differs = false;
        if (k <= LAST_LOG2) {
            choose_both(c, coll, k, cur);
            differs = !same_choice(&cur[0], &cur[1]);
        }
        bool same_run = start >= 0 && differs && same_choice(&cur[0], &first[0]) &&
                        same_choice(&cur[1], &first[1]);
        if (start >= 0 && !same_run) {
            add_run(c, coll, start, k - 1, first, last);
            start = -1;
        }
        if (differs && start < 0) {
            start = k;
            memcpy(first, cur, sizeof(first));
        }
        if (differs)
            memcpy(last, cur, sizeof(last));
    }
    largest_call(c, coll, cur);
}

void tp_compare__tuning(tp_comparison *c)
{
    /* The order NCCL's --sizes calls use: AllReduce first. */
    static const tp_coll order[] = {TP_COLL_ALLREDUCE, TP_COLL_ALLGATHER, TP_COLL_REDUCESCATTER,
                                    TP_COLL_BROADCAST, TP_COLL_REDUCE};
    const tp_tuning *t0 = &c->plan[0]->tuning, *t1 = &c->plan[1]->tuning;
    if (!c->plan[0]->tuned || !c->plan[1]->tuned)
        return;
    if (t0->modelled != t1->modelled) {
        tp_compare__add(c, TP_DIFF_TUNING, TP_SEVERITY_INFO, "tuning model",
                        "tuning model: %s -> %s", t0->modelled ? "yes" : "none (one rank)",
                        t1->modelled ? "yes" : "none (one rank)");
        return;
    }
    if (!t0->modelled)
        return;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        compare_coll(c, order[i]);
}
