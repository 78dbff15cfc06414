/* topoplan diff, and the flow diff and check share. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan diff [--nodes N] [--rank R] [--node-topo FILE]... [--format text|json] A.xml (B.xml | --builtin NAME)\n"
    "\n"
    "Plan both topologies for the same job (N identical nodes, rank R's view) under\n"
    "the same NCCL_* environment and list their differences in pipeline order:\n"
    "system (nodes added or removed by NCCL id, attributes, link types and bandwidths),\n"
    "paths (GPU-GPU, GPU-CPU and GPU-NET type, bandwidth, hops), graphs (pattern,\n"
    "channels, bandwidth, path types, crossNic, channel orders) and channels (counts,\n"
    "rings, trees). Then one summary line per layer, the first layer that differs, and\n"
    "why the collective channel count changed. Nodes are matched by NCCL id; GPUs, PCI\n"
    "switches and NICs whose bus ids were renumbered are matched by position when both\n"
    "sides have as many unmatched ones; NETs follow their NIC.\n"
    "Exit status: 0 identical, 1 different, 3 invalid input.\n";

int cli_compare_run(const cli_input *first, const cli_input *second, cli_ctx *ctx, bool check)
{
    tp_plan *plans[2] = {NULL, NULL};
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    int code = cli_plan(&plans[0], first, ctx);
    if (code == CLI_EXIT_OK)
        code = cli_plan(&plans[1], second, ctx);
    if (code == CLI_EXIT_OK && tp_compare_plans(&cmp, plans[0], plans[1], &err) != TP_OK)
        code = cli_fail(&err);
    if (code == CLI_EXIT_OK) {
        tp_status st = check ? tp_report_check(ctx->out, cmp, ctx->format, &err)
                             : tp_report_diff(ctx->out, cmp, ctx->format, &err);
        size_t bad = check ? tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR) +
                                 tp_comparison_count_severity(cmp, TP_SEVERITY_WARN)
                           : tp_comparison_count(cmp);
        code = st != TP_OK ? cli_fail(&err) : bad ? CLI_EXIT_NEGATIVE : CLI_EXIT_OK;
    }
    tp_comparison_free(cmp);
    tp_plan_free(plans[0]);
    tp_plan_free(plans[1]);
    cli_partial_notes(first, ctx->out, true);
    cli_partial_notes(second, ctx->out, true);
    return code;
}

int cmd_diff(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    int code = CLI_EXIT_OK;
    if (cli_parse_args(argc, argv, ctx, usage, CLI_OPT_FORMAT, 2, &a, &code) != 0)
        return code;
    if (ctx->format == TP_FORMAT_DOT)
        return cli_usage_error(usage, "diff writes text or json, not dot");
    cli_input first = {.path = a.files[0], .job = a.in.job};
    return cli_compare_run(&first, &a.in, ctx, false);
}
