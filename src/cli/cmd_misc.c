/* topoplan builtins / env: small informational commands. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char builtins_usage[] =
    "usage: topoplan builtins [--format text|json] [NAME]\n\nList the built-in topologies, or "
    "print the XML of one of them.\n";

static const char env_usage[] =
    "usage: topoplan env [--format text|json]\n\nPrint every NCCL_* parameter topoplan models "
    "with its effective value.\n";

int cmd_builtins(int argc, char **argv, cli_ctx *ctx)
{
    int first = 1, code = CLI_EXIT_OK;
    if (cli_parse_plain(argc, argv, ctx, builtins_usage, &first, &code) != 0)
        return code;
    if (argc - first > 1)
        return cli_usage_error(builtins_usage, "builtins: expected at most one NAME");
    const char *name = first < argc ? argv[first] : NULL;
    if (name && !tp_builtin_xml(name)) {
        cli_message("unknown builtin \"%s\"", name);
        return CLI_EXIT_USAGE;
    }
    tp_error err = {0};
    return tp_report_builtins(ctx->out, name, ctx->format, &err) == TP_OK ? CLI_EXIT_OK
                                                                          : cli_fail(&err);
}

int cmd_env(int argc, char **argv, cli_ctx *ctx)
{
    int first = 1, code = CLI_EXIT_OK;
    if (cli_parse_plain(argc, argv, ctx, env_usage, &first, &code) != 0)
        return code;
    if (first < argc)
        return cli_usage_error(
            env_usage, "env: unexpected argument \"%s\" (set variables with --env)", argv[first]);
    tp_error err = {0};
    return tp_report_env(ctx->out, ctx->cfg, ctx->format, &err) == TP_OK ? CLI_EXIT_OK
                                                                         : cli_fail(&err);
}
