/* topoplan diff, and the options and flow diff and check share. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan diff [--nodes N] [--rank R] [--format text|json] A.xml B.xml\n"
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

static int parse_number(const char *text, int min, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < min || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

int cli_compare_option(int opt, const char *arg, const char *usage_text, cli_compare_opts *o,
                       int *code)
{
    switch (opt) {
    case 'h':
        fputs(usage_text, stdout);
        *code = CLI_EXIT_OK;
        return -1;
    case 'n':
    case 'r':
        if (parse_number(arg, opt == 'n' ? 1 : 0, opt == 'n' ? &o->job.n_nodes : &o->job.rank))
            break;
        return 0;
    case 'F':
        if (strcmp(arg, "text") == 0 || strcmp(arg, "json") == 0) {
            o->format = arg[0] == 't' ? TP_FORMAT_TEXT : TP_FORMAT_JSON;
            return 0;
        }
        break;
    case 'B':
        o->baseline = arg;
        return 0;
    default:
        *code = cli_usage_error(usage_text, "bad option");
        return -1;
    }
    *code = cli_usage_error(usage_text, "invalid value \"%s\" for --%s", arg,
                            opt == 'n'   ? "nodes"
                            : opt == 'r' ? "rank"
                                         : "format");
    return -1;
}

static int plan_one(tp_plan **out, const char *path, const tp_job *job, const cli_ctx *ctx)
{
    tp_error err = {0};
    if (tp_plan_file(out, path, job, ctx->cfg, &err) != TP_OK)
        return cli_fail(&err);
    return CLI_EXIT_OK;
}

int cli_compare_run(const char *first, const char *second, const cli_compare_opts *o, cli_ctx *ctx,
                    bool check)
{
    tp_plan *plans[2] = {NULL, NULL};
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    int code = plan_one(&plans[0], first, &o->job, ctx);
    if (code == CLI_EXIT_OK)
        code = plan_one(&plans[1], second, &o->job, ctx);
    if (code == CLI_EXIT_OK && tp_compare_plans(&cmp, plans[0], plans[1], &err) != TP_OK)
        code = cli_fail(&err);
    if (code == CLI_EXIT_OK) {
        tp_status st = check ? tp_report_check(ctx->out, cmp, o->format, &err)
                             : tp_report_diff(ctx->out, cmp, o->format, &err);
        size_t bad = check ? tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR) +
                                 tp_comparison_count_severity(cmp, TP_SEVERITY_WARN)
                           : tp_comparison_count(cmp);
        code = st != TP_OK ? cli_fail(&err) : bad ? CLI_EXIT_NEGATIVE : CLI_EXIT_OK;
    }
    tp_comparison_free(cmp);
    tp_plan_free(plans[0]);
    tp_plan_free(plans[1]);
    return code;
}

int cmd_diff(int argc, char **argv, cli_ctx *ctx)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},
        {"rank", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cli_compare_opts o = {.job = {.n_nodes = 1}, .format = ctx->format};
    int c, code = CLI_EXIT_OK;
    optind = 0;
    while ((c = getopt_long(argc, argv, "hn:r:", opts, NULL)) != -1)
        if (cli_compare_option(c, optarg, usage, &o, &code) != 0)
            return code;
    if (argc - optind != 2)
        return cli_usage_error(usage, "diff: expected two topology files");
    return cli_compare_run(argv[optind], argv[optind + 1], &o, ctx, false);
}
