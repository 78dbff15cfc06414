/* topoplan nccl-log: the NCCL_DEBUG=INFO lines NCCL 2.22.3 prints for a rank. */
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan nccl-log [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--sizes]\n"
    "                         (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Print the log lines NCCL 2.22.3 prints at NCCL_DEBUG=INFO for rank R of a job\n"
    "of N nodes: system tree, paths, graph search, channels, tuning. NCCL_*\n"
    "variables of the environment (or --env) apply; NCCL_TOPO_DUMP_FILE and\n"
    "NCCL_GRAPH_DUMP_FILE are written as NCCL writes them. Exit status 3 when NCCL\n"
    "itself would fail. NCCL_DEBUG (unset: INFO) and NCCL_DEBUG_SUBSYS (unset:\n"
    "INIT,ENV,GRAPH, the reference setting) filter the lines as NCCL filters them.\n"
    "\n"
    "  --nodes N        number of nodes (default 1)\n"
    "  --node-topo FILE node 1 uses FILE, the next --node-topo node 2, ...; other nodes\n"
    "                   use TOPO.xml. Ranks are numbered node by node.\n"
    "  --job FILE       the job from a file instead of TOPO.xml, --nodes, --node-topo:\n"
    "                   lines \"COUNT x TOPO.xml\" (paths relative to FILE), NCCL_*=VALUE,\n"
    "                   \"rank R\"; '#' starts a comment\n"
    "  --rank R         rank whose log is printed (default 0)\n"
    "  --sizes          then NCCL's algorithm/protocol choice for one call of each\n"
    "                   collective, 8 B to 8 GiB (rank 0, under TUNING)\n"
    "  --builtin NAME   plan a built-in topology (see `topoplan builtins`)\n";

/* Take the --sizes flag out of argv (the shared parser does not know it). */
static bool take_sizes_flag(int *argc, char **argv)
{
    bool found = false;
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        if (i > 0 && strcmp(argv[i], "--sizes") == 0)
            found = true;
        else
            argv[n++] = argv[i];
    }
    *argc = n;
    return found;
}

int cmd_nccl_log(int argc, char **argv, cli_ctx *ctx)
{
    cli_input in;
    int code = 0;
    bool sizes = take_sizes_flag(&argc, argv);
    if (cli_parse_input(argc, argv, ctx, usage, &in, &code) != 0)
        return code;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &in, ctx);
    if (plan) {
        tp_error err = {0};
        tp_status st = tp_report_nccl_log(ctx->out, plan, &err);
        if (st == TP_OK && sizes)
            st = tp_report_nccl_log_sizes(ctx->out, plan, &err);
        if (st == TP_OK)
            st = tp_plan_write_dumps(plan, &err);
        if (st != TP_OK && code == CLI_EXIT_OK)
            code = cli_fail(&err);
    }
    /* stdout stays NCCL's log: the partial-file notes go to stderr. */
    cli_partial_notes(&in, plan, ctx->out, true);
    tp_plan_free(plan);
    return code;
}
