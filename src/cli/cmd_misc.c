/* topoplan builtins / env: small informational commands. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cmd_builtins(int argc, char **argv, cli_ctx *ctx)
{
    (void)argv;
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
            fputs("usage: topoplan builtins [NAME]\n\nList the built-in topologies, or print the "
                  "XML of one of them.\n", stdout);
            return CLI_EXIT_OK;
        }
        if (argc > 2) {
            fprintf(stderr, "topoplan: builtins: expected at most one NAME\n");
            return CLI_EXIT_USAGE;
        }
        const char *xml = tp_builtin_xml(argv[1]);
        if (!xml) {
            fprintf(stderr, "topoplan: unknown builtin \"%s\"\n", argv[1]);
            return CLI_EXIT_USAGE;
        }
        fputs(xml, ctx->out);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < tp_builtin_count(); i++)
        fprintf(ctx->out, "%-12s %s\n", tp_builtin_name(i), tp_builtin_about(i));
    return CLI_EXIT_OK;
}

int cmd_env(int argc, char **argv, cli_ctx *ctx)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs("usage: topoplan env\n\nPrint every NCCL_* parameter topoplan models with its "
              "effective value.\n", stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "topoplan: env: unexpected argument \"%s\" (set variables with --env)\n",
                argv[1]);
        return CLI_EXIT_USAGE;
    }
    tp_error err = {0};
    return tp_config_write(ctx->out, ctx->cfg, &err) == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
}
