/* topoplan plan: the main view of a job's plan. */
#include "cli.h"

static const char usage[] =
    "usage: topoplan plan [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--format text|json|dot] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Plan a job of N identical nodes as NCCL 2.22.3 would and show, for rank R: each\n"
    "graph's result (pattern, channels, bandwidth, path types), the final channel count\n"
    "and the steps that led to it (search, duplication, NCCL_MIN/MAX_NCHANNELS, CTAs,\n"
    "NVLS), which GPU takes each channel to and from the network, the rings and the\n"
    "trees. --format json carries every ring and tree of every rank; --format dot\n"
    "draws the system (render with `dot -Tsvg`).\n";

int cmd_plan(int argc, char **argv, cli_ctx *ctx)
{
    return cli_run_report(argc, argv, ctx, usage, tp_report_plan);
}
