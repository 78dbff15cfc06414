/* topoplan paths: the GPU x GPU and GPU x NET path matrices, explained. */
#include "cli.h"

static const char usage[] =
    "usage: topoplan paths [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--format "
    "text|json] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Show the path NCCL 2.22.3 computes between every GPU and every GPU and NET of\n"
    "rank R's system: hops, bandwidth (GB/s), path type, the bottleneck link and the\n"
    "hops walked. NET paths exist only for multi-node jobs (--nodes 2 or more).\n";

int cmd_paths(int argc, char **argv, cli_ctx *ctx)
{
    return cli_run_report(argc, argv, ctx, usage, tp_report_paths);
}
