/* topoplan plan: the main view of a job's plan. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan plan [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE]\n"
    "                     [--format text|json|dot|svg] [--channel K] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Plan a job of N identical nodes as NCCL 2.22.3 would and show, for rank R: each\n"
    "graph's result (pattern, channels, bandwidth, path types), the final channel count\n"
    "and the steps that led to it (search, duplication, NCCL_MIN/MAX_NCHANNELS, CTAs,\n"
    "NVLS), which GPU takes each channel to and from the network, the rings and the\n"
    "trees. --format json carries every ring and tree of every rank; --format dot\n"
    "draws the system with the NICs by name, the ring and tree channels of the\n"
    "search over it and a legend (--format svg: drawn by Graphviz); --channel K\n"
    "draws only channel K.\n";

/* Take --channel K out of argv; -1 when absent, -2 when its value is bad. */
static int take_channel(int *argc, char **argv)
{
    int channel = -1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--channel") != 0)
            continue;
        char *end = NULL;
        long v = i + 1 < *argc ? strtol(argv[i + 1], &end, 10) : -1;
        if (!end || end == argv[i + 1] || *end || v < 0 || v > 1024)
            return -2;
        channel = (int)v;
        memmove(&argv[i], &argv[i + 2], (size_t)(*argc - i - 2) * sizeof(*argv));
        *argc -= 2;
        i--;
    }
    return channel;
}

/* The picture of one channel, for cli_write_dot. */
static tp_status channel_picture(FILE *out, const tp_plan *plan, const void *arg, tp_error *err)
{
    return tp_report_plan_picture(out, plan, *(const int *)arg, err);
}

static int write_picture(cli_ctx *ctx, const tp_plan *plan, int channel)
{
    return cli_write_dot(ctx, plan, channel_picture, &channel);
}

int cmd_plan(int argc, char **argv, cli_ctx *ctx)
{
    int channel = take_channel(&argc, argv);
    if (channel == -2)
        return cli_usage_error(usage, "plan: --channel expects a channel number");
    if (channel < 0)
        return cli_run_report(argc, argv, ctx, usage, tp_report_plan);
    cli_args a;
    int code = 0;
    if (cli_parse_args(argc, argv, ctx,
                       (cli_syntax){.usage = usage, .options = CLI_OPT_FORMAT, .n_files = 1}, &a,
                       &code) != 0)
        return code;
    if (ctx->format != TP_FORMAT_DOT)
        return cli_usage_error(usage, "plan: --channel applies to --format dot or svg");
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &a.in, ctx);
    if (code == CLI_EXIT_OK)
        code = write_picture(ctx, plan, channel);
    tp_plan_free(plan);
    return code;
}
