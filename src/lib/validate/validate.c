/*
 * What `validate` reports besides success: the notes the system stage
 * recorded while building the topology (values NCCL 2.22.3 would substitute
 * without a word), each with its file position.
 */
#include "graphcheck/graphcheck.h"
#include "plan/plan.h"
#include "report/report.h"

size_t tp_plan_note_count(const tp_plan *plan)
{
    return plan && plan->host_sys ? plan->host_sys->notes.n_lines : 0;
}

const char *tp_plan_note(const tp_plan *plan, size_t i)
{
    if (i >= tp_plan_note_count(plan))
        return NULL;
    return plan->host_sys->notes.lines[i].text;
}

static void json_error(FILE *out, const tp_error *e)
{
    fprintf(out, "{\"status\": \"%s\", \"source\": ", tp_status_name(e->code));
    tp_report__json_str(out, e->source);
    fprintf(out, ", \"line\": %u, \"column\": %u, \"message\": ", e->line, e->column);
    tp_report__json_str(out, e->message);
    fputc('}', out);
}

static void json_graph_check(FILE *out, const tp_graph_check *chk)
{
    fputs("{\"graph_file\": ", out);
    tp_report__json_str(out, chk->source);
    fprintf(out, ", \"feasible\": %s, \"errors\": %zu}",
            tp_graph_check_feasible(chk) ? "true" : "false", tp_graph_check_error_count(chk));
}

static void validate_json(FILE *out, const tp_plan *plan, const tp_error *failure,
                          const tp_graph_check *chk)
{
    /* A plan that failed before it existed models the default version. */
    const char *nccl = plan ? tp_config_nccl(plan->cfg) : tp_nccl_profile__default()->version;
    tp_report__json_begin(out, "topoplan.validate", nccl);
    if (plan && !failure)
        tp_report__json_job(out, plan);
    fprintf(out, "  \"accepted\": %s,\n  \"error\": ", failure ? "false" : "true");
    if (failure)
        json_error(out, failure);
    else
        fputs("null", out);
    fputs(",\n  \"notes\": [", out);
    for (size_t i = 0; i < tp_plan_note_count(plan); i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        tp_report__json_str(out, tp_plan_note(plan, i));
    }
    fputs(tp_plan_note_count(plan) ? "\n  ],\n  \"graph_check\": " : "],\n  \"graph_check\": ",
          out);
    if (chk)
        json_graph_check(out, chk);
    else
        fputs("null", out);
    fputs("\n}\n", out);
}

static void validate_text(FILE *out, const tp_plan *plan, const tp_error *failure,
                          const tp_graph_check *chk)
{
    if (failure)
        return;                              /* the error itself goes to standard error */
    const tp_channels *ch = &plan->channels; /* the job it was checked for, as every report */
    fprintf(out, "ok: job of %d node%s x %d GPUs = %d ranks, reported rank %d [NCCL %s]\n",
            plan->job.n_nodes, plan->job.n_nodes == 1 ? "" : "s", plan->n_gpus_per_node,
            ch->n_ranks, plan->job.rank, tp_config_nccl(plan->cfg));
    for (size_t i = 0; i < tp_plan_note_count(plan); i++)
        fprintf(out, "note: %s\n", tp_plan_note(plan, i));
    size_t n = chk ? tp_graph_check_error_count(chk) : 0;
    if (n > 0)
        fprintf(out,
                "note: %s: NCCL accepts it, but graph-check finds %zu problem%s that make "
                "it infeasible (run `topoplan graph-check %s ...`)\n",
                chk->source, n, n == 1 ? "" : "s", chk->source);
}

tp_status tp_report_validate(FILE *out, const tp_plan *plan, const tp_error *failure,
                             const tp_graph_check *chk, tp_format fmt, tp_error *err)
{
    if (!out || (!plan && !failure))
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "validate: NULL argument");
    if (fmt == TP_FORMAT_JSON)
        validate_json(out, plan, failure, chk);
    else if (fmt == TP_FORMAT_TEXT)
        validate_text(out, plan, failure, chk);
    else
        return tp_fail(err, TP_ERR_CONFIG, "--format", 0, 0, "validate writes text or json");
    return tp_report__check_stream(out, err);
}
