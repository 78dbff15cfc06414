/* Helpers shared by the commands: errors, input options, planning. */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_exit_for(tp_status st)
{
    switch (st) {
    case TP_OK:
        return CLI_EXIT_OK;
    case TP_ERR_XML:
    case TP_ERR_TOPOLOGY:
    case TP_ERR_CONFIG:
    case TP_ERR_GRAPH:
        return CLI_EXIT_INPUT;
    case TP_ERR_IO:
    case TP_ERR_NOMEM:
        return CLI_EXIT_IO;
    case TP_ERR_INTERNAL:
    default:
        return CLI_EXIT_INTERNAL;
    }
}

int cli_fail(const tp_error *err)
{
    char msg[1024];
    tp_error_format(err, msg, sizeof(msg));
    fprintf(stderr, "topoplan: %s\n", msg);
    if (err->code == TP_ERR_INTERNAL)
        fprintf(stderr, "topoplan: this is a bug in topoplan; please report it with the input\n");
    return cli_exit_for(err->code);
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("topoplan: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fputs(usage, stderr);
    return CLI_EXIT_USAGE;
}

static int parse_count(const char *text, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < 0 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_input(int argc, char **argv, const char *usage, cli_input *in, int *exit_code)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'}, {"rank", required_argument, NULL, 'r'},
        {"builtin", required_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(in, 0, sizeof(*in));
    in->job.n_nodes = 1;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hn:r:b:", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            *exit_code = CLI_EXIT_OK;
            return -1;
        }
        if ((c == 'n' && (parse_count(optarg, &in->job.n_nodes) || in->job.n_nodes < 1)) ||
            (c == 'r' && parse_count(optarg, &in->job.rank))) {
            *exit_code = cli_usage_error(usage, "invalid value \"%s\" for --%s", optarg,
                                         c == 'n' ? "nodes" : "rank");
            return -1;
        }
        if (c == 'b')
            in->builtin = optarg;
        if (c == '?') {
            *exit_code = cli_usage_error(usage, "%s: bad option", argv[0]);
            return -1;
        }
    }
    if (optind < argc)
        in->path = argv[optind++];
    if (optind < argc || (!in->path == !in->builtin)) {
        *exit_code = cli_usage_error(usage, "%s: expected one topology file or --builtin NAME",
                                     argv[0]);
        return -1;
    }
    return 0;
}

int cli_plan(tp_plan **out, const cli_input *in, const cli_ctx *ctx)
{
    tp_error err = {0};
    tp_status st;
    *out = NULL;
    if (in->builtin) {
        const char *xml = tp_builtin_xml(in->builtin);
        if (!xml) {
            fprintf(stderr, "topoplan: unknown builtin \"%s\" (see `topoplan builtins`)\n",
                    in->builtin);
            return CLI_EXIT_USAGE;
        }
        st = tp_plan_buffer(out, xml, strlen(xml), in->builtin, &in->job, ctx->cfg, &err);
    } else {
        st = tp_plan_file(out, in->path, &in->job, ctx->cfg, &err);
    }
    return st == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
}

int cli_run_report(int argc, char **argv, cli_ctx *ctx, const char *usage, cli_report_fn *report)
{
    cli_input in;
    int code = 0;
    if (cli_parse_input(argc, argv, usage, &in, &code) != 0)
        return code;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &in, ctx);
    if (code == CLI_EXIT_OK) {
        tp_error err = {0};
        if (report(ctx->out, plan, ctx->format, &err) != TP_OK)
            code = cli_fail(&err);
    }
    tp_plan_free(plan);
    return code;
}
