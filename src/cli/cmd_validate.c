/* topoplan validate: does NCCL 2.22.3 accept this topology (and graph file)? */
#include "cli.h"

#include <stdio.h>

static const char usage[] =
    "usage: topoplan validate [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--graph GRAPH.xml]\n"
    "                         (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Load and plan the topology as NCCL 2.22.3 would (replaying GRAPH.xml as\n"
    "NCCL_GRAPH_FILE when given). Print \"ok\" and the notes of the system stage\n"
    "(values NCCL substitutes without a word), or the error with its position and\n"
    "exit status 3. With --graph, a graph NCCL accepts but graph-check finds\n"
    "infeasible is noted (see `topoplan help graph-check`).\n"
    "A partial provider file (GPUs without <gpu>, NVLink-class GPUs without NVLinks,\n"
    "NICs without <net>, no GPU) is noted with what NCCL fills at run time and the\n"
    "`topoplan complete` command to run; provider-file defects NCCL does not report\n"
    "(guids that merge NICs, an NVLink to itself, one <cpu> on a 2-socket machine,\n"
    "bus ids off the machine's layout) are noted as lint.\n";

/* A graph NCCL loads without complaint may still not fit the links: say so. */
static int note_graph_check(FILE *out, const tp_plan *plan, const char *graph)
{
    tp_graph_check *chk = NULL;
    tp_error err = {0};
    if (tp_graph_check_file(&chk, plan, graph, &err) != TP_OK)
        return cli_fail(&err);
    size_t n = tp_graph_check_error_count(chk);
    if (n > 0)
        fprintf(out,
                "note: %s: NCCL accepts it, but graph-check finds %zu problem%s that make "
                "it infeasible (run `topoplan graph-check %s ...`)\n",
                graph, n, n == 1 ? "" : "s", graph);
    tp_graph_check_free(chk);
    return CLI_EXIT_OK;
}

int cmd_validate(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    int code = CLI_EXIT_OK;
    if (cli_parse_args(argc, argv, ctx, usage, CLI_OPT_GRAPH, 1, &a, &code) != 0)
        return code;
    tp_error err = {0};
    if (a.graph && tp_config_set(ctx->cfg, "NCCL_GRAPH_FILE", a.graph, &err) != TP_OK)
        return cli_fail(&err);
    tp_plan *plan = NULL;
    /* On failures NCCL reports, the plan comes back with the error: free it too. */
    if ((code = cli_plan(&plan, &a.in, ctx)) != CLI_EXIT_OK) {
        tp_plan_free(plan);
        cli_partial_notes(&a.in, ctx->out, true);
        return code;
    }
    fputs("ok\n", ctx->out);
    for (size_t i = 0; i < tp_plan_note_count(plan); i++)
        fprintf(ctx->out, "note: %s\n", tp_plan_note(plan, i));
    cli_partial_notes(&a.in, ctx->out, false);
    if (a.graph)
        code = note_graph_check(ctx->out, plan, a.graph);
    tp_plan_free(plan);
    return code;
}
