/* topoplan search: the graphs NCCL's search finds, and why. */
#include "cli.h"

static const char usage[] =
    "usage: topoplan search [--nodes N] [--rank R] [--format text|json] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Show each graph NCCL 2.22.3 computes (ring, tree, collnet, nvls): its channels,\n"
    "bandwidth and path types, and the search's decisions: the settings it tried,\n"
    "the constraints it relaxed and why, the solutions it found, budget exhaustion\n"
    "and fallbacks, or the graph file it replayed.\n";

int cmd_search(int argc, char **argv, cli_ctx *ctx)
{
    return cli_run_report(argc, argv, ctx, usage, tp_report_search);
}
