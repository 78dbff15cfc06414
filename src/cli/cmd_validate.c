/* topoplan validate: does NCCL 2.22.3 accept this topology (and graph file)? */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan validate [--nodes N] [--rank R] [--graph GRAPH.xml]\n"
    "                         (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Load and plan the topology as NCCL 2.22.3 would (replaying GRAPH.xml as\n"
    "NCCL_GRAPH_FILE when given). Print \"ok\" and the notes of the system stage\n"
    "(values NCCL substitutes without a word), or the error with its position and\n"
    "exit status 3. With --graph, a graph NCCL accepts but graph-check finds\n"
    "infeasible is noted (see `topoplan help graph-check`).\n";

typedef struct val_args {
    cli_input in;
    const char *graph;
} val_args;

static int parse_count(const char *text, int min, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < min || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

static const char *option_name(int c)
{
    return c == 'n' ? "nodes" : c == 'r' ? "rank" : "format";
}

static int parse_args(int argc, char **argv, val_args *a, int *code)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},   {"rank", required_argument, NULL, 'r'},
        {"builtin", required_argument, NULL, 'b'}, {"graph", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    a->in.job.n_nodes = 1;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hn:r:b:g:", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            *code = CLI_EXIT_OK;
            return -1;
        }
        int bad = (c == 'n' && parse_count(optarg, 1, &a->in.job.n_nodes)) ||
                  (c == 'r' && parse_count(optarg, 0, &a->in.job.rank));
        if (bad || c == '?') {
            *code = c == '?' ? cli_usage_error(usage, "%s: bad option", argv[0])
                             : cli_usage_error(usage, "invalid value \"%s\" for --%s", optarg,
                                               option_name(c));
            return -1;
        }
        if (c == 'b')
            a->in.builtin = optarg;
        if (c == 'g')
            a->graph = optarg;
    }
    a->in.path = optind < argc ? argv[optind++] : NULL;
    if (optind < argc || !a->in.path == !a->in.builtin) {
        *code = cli_usage_error(usage, "%s: expected one topology file or --builtin NAME", argv[0]);
        return -1;
    }
    return 0;
}

/* A graph NCCL loads without complaint may still not fit the links: say so. */
static int note_graph_check(FILE *out, const tp_plan *plan, const char *graph)
{
    tp_graph_check *chk = NULL;
    tp_error err = {0};
    if (tp_graph_check_file(&chk, plan, graph, &err) != TP_OK)
        return cli_fail(&err);
    size_t n = tp_graph_check_error_count(chk);
    if (n > 0)
        fprintf(out,
                "note: %s: NCCL accepts it, but graph-check finds %zu problem%s that make "
                "it infeasible (run `topoplan graph-check %s ...`)\n",
                graph, n, n == 1 ? "" : "s", graph);
    tp_graph_check_free(chk);
    return CLI_EXIT_OK;
}

int cmd_validate(int argc, char **argv, cli_ctx *ctx)
{
    val_args a;
    int code = CLI_EXIT_OK;
    if (parse_args(argc, argv, &a, &code) != 0)
        return code;
    tp_error err = {0};
    if (a.graph && tp_config_set(ctx->cfg, "NCCL_GRAPH_FILE", a.graph, &err) != TP_OK)
        return cli_fail(&err);
    tp_plan *plan = NULL;
    /* On failures NCCL reports, the plan comes back with the error: free it too. */
    if ((code = cli_plan(&plan, &a.in, ctx)) != CLI_EXIT_OK) {
        tp_plan_free(plan);
        return code;
    }
    fputs("ok\n", ctx->out);
    for (size_t i = 0; i < tp_plan_note_count(plan); i++)
        fprintf(ctx->out, "note: %s\n", tp_plan_note(plan, i));
    if (a.graph)
        code = note_graph_check(ctx->out, plan, a.graph);
    tp_plan_free(plan);
    return code;
}
