/*
 * Root causes and their cost: a health check lists the hardware deviations
 * (system layer) first, what they change in paths, graphs, channels and
 * tuning under them, and rates each cause by what the node costs a job in
 * NCCL's tuning model, so the same node gets the same severity at any --nodes.
 */
#include "compare/compare.h"

#include <string.h>

const char *tp_compare__kind_id(int kind)
{
    static const char *const ids[] = {
        "node_missing", "node_extra",   "node_renumbered", "node_attr",
        "node_moved",   "link_missing", "link_extra",      "link_bw",
        "path",         "graph",        "channels",        "tuning",
    };
    return kind >= 0 && kind < (int)ARRAY_LEN(ids) ? ids[kind] : "?";
}

static bool titled(const tp_difference *d, const char *title)
{
    return d->title && strcmp(d->title, title) == 0;
}

static bool has_title(const tp_comparison *c, const char *title)
{
    for (size_t i = 0; i < c->n_diffs; i++)
        if (titled(&c->diffs[i], title))
            return true;
    return false;
}

void tp_compare__mark_consequences(tp_comparison *c)
{
    bool hardware = false;
    for (size_t i = 0; i < c->n_diffs; i++)
        hardware = hardware || (c->diffs[i].layer == TP_LAYER_SYSTEM &&
                                c->diffs[i].severity != TP_SEVERITY_INFO);
    if (!hardware)
        return; /* no root cause in the hardware: every difference stands for itself */
    bool nic_missing = has_title(c, "missing NIC");
    for (size_t i = 0; i < c->n_diffs; i++) {
        tp_difference *d = &c->diffs[i];
        /* A NET device goes with its NIC: one cause, not two. */
        d->consequence =
            d->layer != TP_LAYER_SYSTEM || (nic_missing && titled(d, "missing NET device"));
    }
}

/* The lowest busbw change over the jobs measured (0 when none). */
static double worst_change(const tp_comparison *c)
{
    double worst = 0;
    for (int j = 0; j < c->n_jobs; j++)
        if (c->jobs[j].cost.worst_change_pct < worst)
            worst = c->jobs[j].cost.worst_change_pct;
    return worst;
}

tp_status tp_comparison_set_job(tp_comparison *cmp, const tp_plan *job_base,
                                const tp_plan *job_node, tp_error *err)
{
    if (!cmp)
        return tp_fail_arg(err, "tp_comparison_set_job", "cmp is NULL");
    struct tp_cmp_job job = {0};
    tp_status st = tp_plan_cost(&job.cost, job_base, job_node, err);
    tp_channels_info info[2];
    for (int s = 0; s < 2 && st == TP_OK; s++)
        st = tp_plan_channels(s ? job_node : job_base, &info[s], sizeof(info[s]));
    if (st != TP_OK)
        return st;
    job.nodes = job_base->job.n_nodes;
    for (int s = 0; s < 2; s++) {
        job.channels[s] = info[s].n_channels;
        job.search[s] = info[s].search_channels;
    }
    int j = 0; /* a job of the same size replaces the one measured before */
    while (j < cmp->n_jobs && cmp->jobs[j].nodes != job.nodes)
        j++;
    if (j == (int)ARRAY_LEN(cmp->jobs))
        return tp_fail_arg(err, "tp_comparison_set_job", "two job sizes are measured already");
    cmp->jobs[j] = job;
    cmp->n_jobs += j == cmp->n_jobs;
    tp_severity sev =
        worst_change(cmp) <= -TP_COST_ERROR_PCT ? TP_SEVERITY_ERROR : TP_SEVERITY_WARN;
    for (size_t i = 0; i < cmp->n_diffs; i++) {
        tp_difference *d = &cmp->diffs[i];
        if (d->consequence || d->severity == TP_SEVERITY_INFO || d->layer != TP_LAYER_SYSTEM)
            continue;
        d->severity = titled(d, "missing GPU") ? TP_SEVERITY_ERROR : sev;
    }
    return TP_OK;
}

const tp_job_cost *tp_comparison_job_cost(const tp_comparison *cmp, int i, int *n_nodes)
{
    bool ok = cmp && i >= 0 && i < cmp->n_jobs;
    if (n_nodes)
        *n_nodes = ok ? cmp->jobs[i].nodes : 0;
    return ok ? &cmp->jobs[i].cost : NULL;
}
