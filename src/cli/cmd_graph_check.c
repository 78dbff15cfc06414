/* topoplan graph-check: an NCCL_GRAPH_FILE against a topology, before production. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan graph-check [--nodes N] [--rank R] [--format text|json]\n"
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

typedef struct gc_args {
    cli_input in;
    const char *graph;
} gc_args;

static int parse_positive(const char *text, int min, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < min || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_format(const char *text, tp_format *out)
{
    if (strcmp(text, "text") == 0)
        *out = TP_FORMAT_TEXT;
    else if (strcmp(text, "json") == 0)
        *out = TP_FORMAT_JSON;
    else
        return -1;
    return 0;
}

/* Options, then GRAPH.xml and TOPO.xml (or --builtin). Returns -1 with *code set when done. */
static const char *option_name(int c)
{
    return c == 'n' ? "nodes" : c == 'r' ? "rank" : "format";
}

static int parse_args(int argc, char **argv, cli_ctx *ctx, gc_args *a, int *code)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},   {"rank", required_argument, NULL, 'r'},
        {"builtin", required_argument, NULL, 'b'}, {"format", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    a->in.job.n_nodes = 1;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hn:r:b:", opts, NULL)) != -1) {
        int bad = (c == 'n' && parse_positive(optarg, 1, &a->in.job.n_nodes)) ||
                  (c == 'r' && parse_positive(optarg, 0, &a->in.job.rank)) ||
                  (c == 'F' && parse_format(optarg, &ctx->format));
        if (c == 'h') {
            fputs(usage, stdout);
            *code = CLI_EXIT_OK;
            return -1;
        }
        if (bad || c == '?') {
            *code = c == '?' ? cli_usage_error(usage, "%s: bad option", argv[0])
                             : cli_usage_error(usage, "invalid value \"%s\" for --%s", optarg,
                                               option_name(c));
            return -1;
        }
        if (c == 'b')
            a->in.builtin = optarg;
    }
    a->graph = optind < argc ? argv[optind++] : NULL;
    a->in.path = optind < argc ? argv[optind++] : NULL;
    if (!a->graph || optind < argc || !a->in.path == !a->in.builtin) {
        *code = cli_usage_error(usage,
                                "%s: expected GRAPH.xml and one topology (file or "
                                "--builtin NAME)",
                                argv[0]);
        return -1;
    }
    return 0;
}

int cmd_graph_check(int argc, char **argv, cli_ctx *ctx)
{
    gc_args a;
    int code = CLI_EXIT_OK;
    if (parse_args(argc, argv, ctx, &a, &code) != 0)
        return code;
    if (ctx->format == TP_FORMAT_DOT)
        return cli_usage_error(usage, "graph-check writes text or json, not dot");
    tp_plan *plan = NULL;
    if ((code = cli_plan(&plan, &a.in, ctx)) != CLI_EXIT_OK) {
        tp_plan_free(plan);
        return code;
    }
    tp_graph_check *chk = NULL;
    tp_error err = {0};
    if (tp_graph_check_file(&chk, plan, a.graph, &err) != TP_OK ||
        tp_report_graph_check(ctx->out, chk, ctx->format, &err) != TP_OK)
        code = cli_fail(&err);
    else
        code = tp_graph_check_feasible(chk) ? CLI_EXIT_OK : CLI_EXIT_NEGATIVE;
    tp_graph_check_free(chk);
    tp_plan_free(plan);
    return code;
}
