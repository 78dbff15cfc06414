/* topoplan validate: does NCCL 2.22.3 accept this topology (and graph file)? */
#include "cli.h"

#include <stdio.h>

static const char usage[] =
    "usage: topoplan validate [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE]\n"
    "                         [--graph GRAPH.xml] [--format text|json]\n"
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

int cmd_validate(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    int code = CLI_EXIT_OK;
    if (cli_parse_args(
            argc, argv, ctx,
            (cli_syntax){.usage = usage, .options = CLI_OPT_GRAPH | CLI_OPT_FORMAT, .n_files = 1},
            &a, &code) != 0)
        return code;
    tp_error err = {0};
    if (a.graph && tp_config_set(ctx->cfg, "NCCL_GRAPH_FILE", a.graph, &err) != TP_OK)
        return cli_fail(&err);
    tp_plan *plan = NULL;
    tp_error failure = {0};
    /* On failures NCCL reports, the plan comes back with the error: free it too. */
    if ((code = cli_plan_err(&plan, &a.in, ctx, &failure)) != CLI_EXIT_OK) {
        /* "not accepted" is an answer: JSON readers get it as a document too */
        if (code == CLI_EXIT_INPUT && ctx->format == TP_FORMAT_JSON &&
            tp_report_validate(ctx->out, plan, &failure, NULL, ctx->format, &err) != TP_OK)
            code = cli_fail(&err);
        cli_partial_notes(&a.in, plan, ctx->out, true);
        tp_plan_free(plan);
        return code;
    }
    /* A graph NCCL loads without complaint may still not fit the links: say so. */
    tp_graph_check *chk = NULL;
    if (a.graph && tp_graph_check_file(&chk, plan, a.graph, &err) != TP_OK)
        code = cli_fail(&err);
    else if (tp_report_validate(ctx->out, plan, NULL, chk, ctx->format, &err) != TP_OK)
        code = cli_fail(&err);
    tp_graph_check_free(chk);
    /* partial provider files: what NCCL fills at run time (JSON keeps stdout one document) */
    cli_partial_notes(&a.in, plan, ctx->out, ctx->format == TP_FORMAT_JSON);
    tp_plan_free(plan);
    return code;
}
