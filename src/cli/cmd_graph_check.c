/* topoplan graph-check: an NCCL_GRAPH_FILE against a topology, before production. */
#include "cli.h"

#include <stdio.h>

static const char usage[] =
    "usage: topoplan graph-check [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] "
    "[--format text|json]\n"
    "                            GRAPH.xml (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Check every graph of an NCCL_GRAPH_FILE against the topology, as NCCL 2.22.3's\n"
    "search would have built it (NCCL's loader checks none of this): each channel\n"
    "visits each GPU of the node once (NVLS: one head GPU), every gpu and net dev\n"
    "exists in the system (trimmed as NCCL trims it for a job of N nodes), nchannels\n"
    "matches the <channel> elements, every hop's path is no worse than typeintra /\n"
    "typeinter and as fast as speedintra / speedinter, and the bandwidth the search\n"
    "would reserve for all channels together fits every link (oversubscribed links\n"
    "are named with the channels using them).\n"
    "Exit status: 0 feasible, 1 infeasible, 3 not a graph file (with its position),\n"
    "4 unreadable.\n";

int cmd_graph_check(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    int code = CLI_EXIT_OK;
    if (cli_parse_args(argc, argv, ctx,
                       (cli_syntax){.usage = usage, .options = CLI_OPT_FORMAT, .n_files = 2}, &a,
                       &code) != 0)
        return code;
    tp_plan *plan = NULL;
    if ((code = cli_plan(&plan, &a.in, ctx)) != CLI_EXIT_OK) {
        tp_plan_free(plan);
        return code;
    }
    tp_graph_check *chk = NULL;
    tp_error err = {0};
    if (tp_graph_check_file(&chk, plan, a.files[0], &err) != TP_OK ||
        tp_report_graph_check(ctx->out, chk, ctx->format, &err) != TP_OK)
        code = cli_fail(&err);
    else
        code = tp_graph_check_feasible(chk) ? CLI_EXIT_OK : CLI_EXIT_NEGATIVE;
    tp_graph_check_free(chk);
    cli_partial_notes(&a.in, plan, ctx->out, true); /* lints of the topology checked against */
    tp_plan_free(plan);
    return code;
}
