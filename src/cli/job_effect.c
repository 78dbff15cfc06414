/*
 * The job-level effect of one node: the job planned with that node among
 * nodes of a reference topology, against the job of reference nodes only
 * (both re-planned under the same configuration; NCCL gives every rank the
 * fewest channels over ranks, so one node can cost the whole job).
 */
#include "cli.h"

#include <string.h>

/* Plan a job of n nodes on `base`, node 1 on `odd` when odd is not NULL. */
static tp_status plan_job_of(tp_plan **out, const cli_input *base, const char *odd, int n,
                             const cli_ctx *ctx, tp_error *err)
{
    const char *topos[1] = {odd};
    tp_job job = {.version = TP_JOB_VERSION,
                  .n_nodes = n,
                  .rank = 0,
                  .node_topos = topos,
                  .n_node_topos = odd ? 1 : 0};
    if (base->builtin) {
        const char *xml = tp_builtin_xml(base->builtin);
        if (!xml)
            return TP_ERR_USAGE;
        return tp_plan_buffer(out, xml, strlen(xml), base->builtin, &job, ctx->cfg, err);
    }
    return tp_plan_file(out, base->path, &job, ctx->cfg, err);
}

/* The node file alone, as a one-node job. */
static tp_status plan_odd_alone(tp_plan **out, const char *odd, const cli_ctx *ctx, tp_error *err)
{
    tp_job job = {.version = TP_JOB_VERSION, .n_nodes = 1};
    return tp_plan_file(out, odd, &job, ctx->cfg, err);
}

int cli_job_effect(cli_job_effect_t *fx, const cli_input *base, const char *odd, int n_nodes,
                   const cli_ctx *ctx, tp_comparison *cmp)
{
    memset(fx, 0, sizeof(*fx));
    fx->n_nodes = n_nodes < 2 ? 2 : n_nodes;
    tp_plan *plans[2] = {NULL, NULL};
    tp_error err = {0};
    tp_channels_info info[2];
    tp_status st = plan_job_of(&plans[0], base, NULL, fx->n_nodes, ctx, &err);
    if (st == TP_OK)
        st = plan_job_of(&plans[1], base, odd, fx->n_nodes, ctx, &err);
    for (int i = 0; i < 2 && st == TP_OK; i++)
        st = tp_plan_channels(plans[i], &info[i], sizeof(info[i]));
    if (st == TP_OK)
        st = tp_plan_cost(&fx->cost, plans[0], plans[1], &err);
    if (st == TP_OK && cmp)
        st = tp_comparison_set_job(cmp, plans[0], plans[1], &err);
    if (st == TP_OK) {
        fx->channels_base = info[0].n_channels;
        fx->channels_odd = info[1].n_channels;
        fx->search_base = info[0].search_channels;
        fx->search_odd = info[1].search_channels;
        fx->known = true;
    }
    tp_plan_free(plans[0]);
    tp_plan_free(plans[1]);
    /* The node alone against a baseline node alone: what it costs a one-node job. */
    plans[0] = plans[1] = NULL;
    if (st == TP_OK && cmp && (st = plan_job_of(&plans[0], base, NULL, 1, ctx, &err)) == TP_OK &&
        (st = plan_odd_alone(&plans[1], odd, ctx, &err)) == TP_OK)
        st = tp_comparison_set_job(cmp, plans[0], plans[1], &err);
    tp_plan_free(plans[0]);
    tp_plan_free(plans[1]);
    return st == TP_OK ? 0 : -1;
}

void cli_job_effect_text(FILE *out, const cli_job_effect_t *fx, const char *base, const char *odd)
{
    if (!fx->known) {
        fprintf(out, "Job effect: not measured (the job with %s among %s nodes does not plan)\n",
                odd, base);
        return;
    }
    char calls[1024];
    tp_job_cost_text(&fx->cost, calls, sizeof(calls));
    bool slower = fx->cost.worst_change_pct <= -TP_COST_ERROR_PCT;
    fprintf(out,
            "Job effect (NCCL's tuning model, re-planned): in a job of %d nodes of %s, one node "
            "%s: %s; collective channels %d -> %d, search channels %d -> %d%s\n",
            fx->n_nodes, base, odd, calls, fx->channels_base, fx->channels_odd, fx->search_base,
            fx->search_odd,
            fx->channels_odd > fx->channels_base && slower ? " (more channels, yet slower)"
            : slower                                       ? ""
                                                           : " (no call slower by 1 % or more)");
}
