/* topoplan nccl-log: the NCCL_DEBUG=INFO lines NCCL 2.22.3 prints for a rank. */
#include "cli.h"

#include <stdio.h>

static const char usage[] =
    "usage: topoplan nccl-log [--nodes N] [--rank R] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Print the log lines NCCL 2.22.3 prints at NCCL_DEBUG=INFO for rank R of a job\n"
    "of N identical nodes: system tree, paths, graph search, channels. NCCL_* variables\n"
    "of the environment (or --env) apply; NCCL_TOPO_DUMP_FILE and NCCL_GRAPH_DUMP_FILE\n"
    "are written as NCCL writes them. Exit status 3 when NCCL itself would fail.\n"
    "NCCL_DEBUG (unset: INFO) and NCCL_DEBUG_SUBSYS (unset: INIT,ENV,GRAPH, the\n"
    "reference setting) filter the lines as NCCL filters them.\n"
    "\n"
    "  --nodes N        number of identical nodes (default 1)\n"
    "  --rank R         rank whose log is printed (default 0)\n"
    "  --builtin NAME   plan a built-in topology (see `topoplan builtins`)\n";

int cmd_nccl_log(int argc, char **argv, cli_ctx *ctx)
{
    cli_input in;
    int code = 0;
    if (cli_parse_input(argc, argv, usage, &in, &code) != 0)
        return code;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &in, ctx);
    if (plan) {
        tp_error err = {0};
        tp_status st = tp_report_nccl_log(ctx->out, plan, &err);
        if (st == TP_OK)
            st = tp_plan_write_dumps(plan, &err);
        if (st != TP_OK && code == CLI_EXIT_OK)
            code = cli_fail(&err);
    }
    tp_plan_free(plan);
    return code;
}
