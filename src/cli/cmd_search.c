/* topoplan search: the graphs NCCL's search finds, and why. */
#include "cli.h"

static const char usage[] =
    "usage: topoplan search [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE]\n"
    "                       [--format text|json] [--show-accel]\n"
    "                       (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Show each graph NCCL 2.22.3 computes (ring, tree, collnet, nvls): its channels,\n"
    "bandwidth and path types, and the search's decisions: the settings it tried,\n"
    "the constraints it relaxed and why, the solutions it found, budget exhaustion\n"
    "and fallbacks, or the graph file it replayed. Each graph's \"why\" says where\n"
    "the search started, what it relaxed in order, which pass gave the result, what\n"
    "NCCL did after (duplication) and which links capped speed or channel count.\n"
    "--show-accel also lists topoplan's own pruning of the search (passes it cut\n"
    "short because they could not beat the graph), labelled as topoplan's: NCCL\n"
    "runs those passes whole.\n";

#include <string.h>

int cmd_search(int argc, char **argv, cli_ctx *ctx)
{
    /* --show-accel is this command's own flag: take it out before the common parser. */
    int kept = 0;
    bool show_accel = false;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--show-accel") == 0)
            show_accel = true;
        else
            argv[kept++] = argv[i];
    }
    return cli_run_report(kept, argv, ctx, usage,
                          show_accel ? tp_report_search_pruning : tp_report_search);
}
