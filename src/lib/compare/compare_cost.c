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

tp_status tp_comparison_set_job(tp_comparison *cmp, const tp_plan *job_base,
                                const tp_plan *job_node, tp_error *err)
{
    if (!cmp)
        return tp_fail_arg(err, "tp_comparison_set_job", "cmp is NULL");
    tp_job_cost cost;
    tp_status st = tp_plan_cost(&cost, job_base, job_node, err);
    tp_channels_info info[2];
    for (int s = 0; s < 2 && st == TP_OK; s++)
        st = tp_plan_channels(s ? job_node : job_base, &info[s], sizeof(info[s]));
    if (st != TP_OK)
        return st == TP_ERR_ARGUMENT ? st
                                     : tp_fail_arg(err, "tp_comparison_set_job", "no channels");
    cmp->has_job = true;
    cmp->cost = cost;
    cmp->job_nodes = job_base->job.n_nodes;
    for (int s = 0; s < 2; s++) {
        cmp->job_channels[s] = info[s].n_channels;
        cmp->job_search[s] = info[s].search_channels;
    }
    tp_severity sev =
        cost.worst_change_pct <= -TP_COST_ERROR_PCT ? TP_SEVERITY_ERROR : TP_SEVERITY_WARN;
    for (size_t i = 0; i < cmp->n_diffs; i++) {
        tp_difference *d = &cmp->diffs[i];
        if (d->consequence || d->severity == TP_SEVERITY_INFO || d->layer != TP_LAYER_SYSTEM)
            continue;
        d->severity = titled(d, "missing GPU") ? TP_SEVERITY_ERROR : sev;
    }
    return TP_OK;
}

const tp_job_cost *tp_comparison_job_cost(const tp_comparison *cmp, int *n_nodes)
{
    if (n_nodes)
        *n_nodes = cmp && cmp->has_job ? cmp->job_nodes : 0;
    return cmp && cmp->has_job ? &cmp->cost : NULL;
}
