/* topoplan hca: which IB devices an NCCL_IB_HCA value selects. */
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan hca [--format text|json] FILTER DEVICE[:PORT]...\n"
    "\n"
    "Print, one per line in input order, the DEVICE:PORT entries NCCL 2.22.3 would\n"
    "use with NCCL_IB_HCA=FILTER (a port defaults to 1; an empty FILTER selects all).\n"
    "Warnings on standard error: an entry that also selects a longer device name\n"
    "(\"mlx5_1\" selects mlx5_10: use \"=mlx5_1\"; \"^mlx5_1\" excludes it: use\n"
    "\"^=mlx5_1\"), as `nics` reports it, and a filter that selects nothing\n"
    "(NCCL would fall back to sockets). Exit status 1 when nothing is selected.\n";

/* The report, then the warnings on standard error; exit 1 when nothing is selected. */
static int write_hca(cli_ctx *ctx, const char *filter, const tp_hca_port *ports, size_t n)
{
    tp_error err = {0};
    if (tp_report_hca(ctx->out, filter, ports, n, ctx->format, &err) != TP_OK)
        return cli_fail(&err);
    size_t n_selected = 0;
    bool exclude = filter[0] == '^';
    for (size_t i = 0; i < n; i++) {
        char entry[128];
        bool selected = tp_hca_selects(filter, ports[i].name, ports[i].port);
        n_selected += selected;
        /* NCCL 2.22.3 matches entries as prefixes: "mlx5_1" also catches mlx5_10. */
        if (tp_hca_prefix_trap(filter, ports[i].name, ports[i].port, entry, sizeof(entry)) &&
            selected != exclude)
            cli_message("warning: \"%s\" also %s %s:%d (prefix match); use "
                        "\"%s=%s\" to %s only that device",
                        entry, exclude ? "excludes" : "selects", ports[i].name, ports[i].port,
                        exclude ? "^" : "", entry, exclude ? "exclude" : "select");
    }
    if (n_selected == 0) {
        cli_message("warning: NCCL_IB_HCA=\"%s\" selects no device: NCCL would "
                    "find no IB device and fall back to sockets",
                    filter);
        return CLI_EXIT_NEGATIVE;
    }
    return CLI_EXIT_OK;
}

static int split_device(const char *arg, char *name, size_t size, int *port)
{
    const char *colon = strchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
    char *end = NULL;
    *port = 1;
    if (colon) {
        long v = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || v < 1 || v > 255)
            return -1;
        *port = (int)v;
    }
    if (len == 0 || len >= size)
        return -1;
    snprintf(name, size, "%.*s", (int)len, arg);
    return 0;
}

int cmd_hca(int argc, char **argv, cli_ctx *ctx)
{
    int first = 1, code = CLI_EXIT_OK;
    if (cli_parse_plain(argc, argv, ctx, usage, &first, &code) != 0)
        return code;
    if (argc - first < 2)
        return cli_usage_error(usage, "hca: expected a FILTER and at least one DEVICE[:PORT]");
    const char *filter = argv[first];
    size_t n = (size_t)(argc - first - 1);
    tp_hca_port *ports = calloc(n, sizeof(*ports));
    char(*names)[128] = calloc(n, sizeof(*names));
    if (!ports || !names) {
        free(ports);
        free(names);
        fprintf(stderr, "topoplan: out of memory\n");
        return CLI_EXIT_IO;
    }
    for (size_t i = 0; i < n && code == CLI_EXIT_OK; i++) {
        const char *arg = argv[first + 1 + (int)i];
        if (split_device(arg, names[i], sizeof(names[i]), &ports[i].port) != 0)
            code =
                cli_usage_error(usage, "hca: bad device \"%s\" (expected NAME or NAME:PORT)", arg);
        ports[i].name = names[i];
    }
    if (code == CLI_EXIT_OK)
        code = write_hca(ctx, filter, ports, n);
    free(ports);
    free(names);
    return code;
}
