/*
 * The planner: NCCL 2.22.3's per-rank flow (init.cc initTransportsRank)
 * from the topology XML to the channels, for the reported rank.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

static tp_status check_job(const tp_job *job, tp_error *err)
{
    if (job->n_nodes < 1)
        return tp_fail(err, TP_ERR_CONFIG, "--nodes", 0, 0, "invalid value %d (expected >= 1)",
                       job->n_nodes);
    if (job->rank < 0)
        return tp_fail(err, TP_ERR_CONFIG, "--rank", 0, 0, "invalid value %d (expected >= 0)",
                       job->rank);
    return TP_OK;
}

static int count_gpus(const tp_xml_elem *e)
{
    int n = strcmp(e->tag, "gpu") == 0;
    for (size_t i = 0; i < e->n_children; i++)
        n += count_gpus(e->children[i]);
    return n;
}

/* The system, paths and search of the reported rank. */
static tp_status run_rank_pipeline(tp_plan *plan, tp_error *err)
{
    tp_status st;
    int node = plan->job.rank / plan->n_gpus_per_node;
    tp_job_view view = {
        .n_ranks = plan->n_gpus_per_node * plan->job.n_nodes,
        .n_nodes = plan->job.n_nodes,
        .rank = plan->job.rank,
        .local_n_ranks = plan->n_gpus_per_node,
    };
    if ((st = tp_system__prepare_xml(plan->topo_xml, plan->cfg, node * plan->n_gpus_per_node,
                                     err)) != TP_OK)
        return st;
    if ((st = tp_system__from_xml(&plan->sys, plan->topo_xml, plan->cfg, (uint64_t)node, err)))
        return st;
    if ((st = tp_paths__compute(plan->sys, plan->cfg, &view, &plan->log, err)) != TP_OK)
        return st;
    if ((st = tp_paths__trim(plan->sys, plan->cfg, &view, err)) != TP_OK)
        return st;
    if ((st = tp_paths__compute(plan->sys, plan->cfg, &view, &plan->log, err)) != TP_OK)
        return st;
    if ((st = tp_search__init(plan->sys, err)) != TP_OK)
        return st;
    tp_system__print(&plan->log, plan->sys);
    tp_paths__print(&plan->log, plan->sys);
    return TP_OK;
}

static tp_status plan_doc(tp_plan **out, tp_xml *doc, const tp_job *job, const tp_config *cfg,
                          tp_error *err)
{
    tp_status st = check_job(job, err);
    if (st != TP_OK) {
        tp_xml__free(doc);
        return st;
    }
    tp_plan *plan = calloc(1, sizeof(*plan));
    if (!plan) {
        tp_xml__free(doc);
        return tp_fail_nomem(err);
    }
    plan->topo_xml = doc;
    plan->job = *job;
    plan->log.enabled = true;
    plan->n_gpus_per_node = count_gpus(doc->root);
    if ((st = tp_config__copy(&plan->cfg, cfg, err)) != TP_OK)
        goto out;
    if (plan->n_gpus_per_node == 0) {
        st = tp_xml__fail(err, TP_ERR_TOPOLOGY, doc, doc->root, "no <gpu> element: nothing to plan");
        goto out;
    }
    if (job->rank >= plan->n_gpus_per_node * job->n_nodes) {
        st = tp_fail(err, TP_ERR_CONFIG, "--rank", 0, 0, "rank %d out of range (job has %d ranks)",
                     job->rank, plan->n_gpus_per_node * job->n_nodes);
        goto out;
    }
    st = run_rank_pipeline(plan, err);
    plan->status = st;
out:
    *out = plan;
    return st;
}

tp_status tp_plan_buffer(tp_plan **out, const char *xml, size_t len, const char *source,
                         const tp_job *job, const tp_config *cfg, tp_error *err)
{
    *out = NULL;
    tp_xml *doc = NULL;
    tp_status st = tp_xml__parse(&doc, xml, len, source, err);
    if (st != TP_OK)
        return st;
    return plan_doc(out, doc, job, cfg, err);
}

tp_status tp_plan_file(tp_plan **out, const char *path, const tp_job *job, const tp_config *cfg,
                       tp_error *err)
{
    *out = NULL;
    tp_xml *doc = NULL;
    tp_status st = tp_xml__parse_file(&doc, path, err);
    if (st != TP_OK)
        return st;
    return plan_doc(out, doc, job, cfg, err);
}

void tp_plan_free(tp_plan *plan)
{
    if (!plan)
        return;
    for (int i = 0; i < TP_GRAPH_COUNT; i++) {
        if (plan->graphs[i])
            tp_search__graph_release(plan->graphs[i]);
        free(plan->graphs[i]);
    }
    tp_channels__free(&plan->channels);
    tp_system__free(plan->sys);
    tp_xml__free(plan->topo_xml);
    tp_config_free(plan->cfg);
    tp_log_clear(&plan->log);
    free(plan);
}

tp_status tp_plan_write_dumps(const tp_plan *plan, tp_error *err)
{
    (void)plan;
    (void)err;
    return TP_OK;
}
