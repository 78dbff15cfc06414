/* topoplan hca: which IB devices an NCCL_IB_HCA value selects. */
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan hca FILTER DEVICE[:PORT]...\n"
    "\n"
    "Print, one per line in input order, the DEVICE:PORT entries NCCL 2.22.3 would\n"
    "use with NCCL_IB_HCA=FILTER (a port defaults to 1; an empty FILTER selects all).\n"
    "Warnings on standard error: an entry that also selects a longer device name\n"
    "(\"mlx5_1\" selects mlx5_10: use \"=mlx5_1\"; \"^mlx5_1\" excludes it: use\n"
    "\"^=mlx5_1\"), as `nics` reports it, and a filter that selects nothing\n"
    "(NCCL would fall back to sockets). Exit status 1 when nothing is selected.\n";

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
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 3)
        return cli_usage_error(usage, "hca: expected a FILTER and at least one DEVICE[:PORT]");
    const char *filter = argv[1];
    int n_selected = 0;
    for (int i = 2; i < argc; i++) {
        char name[128], entry[128];
        int port;
        if (split_device(argv[i], name, sizeof(name), &port) != 0)
            return cli_usage_error(usage, "hca: bad device \"%s\" (expected NAME or NAME:PORT)",
                                   argv[i]);
        bool selected = tp_hca_selects(filter, name, port);
        bool exclude = filter[0] == '^';
        if (selected) {
            fprintf(ctx->out, "%s:%d\n", name, port);
            n_selected++;
        }
        /* NCCL 2.22.3 matches entries as prefixes: "mlx5_1" also catches mlx5_10. */
        if (tp_hca_prefix_trap(filter, name, port, entry, sizeof(entry)) && selected != exclude)
            fprintf(stderr, "topoplan: warning: \"%s\" also %s %s:%d (prefix match); use "
                            "\"%s=%s\" to %s only that device\n", entry,
                    exclude ? "excludes" : "selects", name, port, exclude ? "^" : "", entry,
                    exclude ? "exclude" : "select");
    }
    if (n_selected == 0) {
        fprintf(stderr, "topoplan: warning: NCCL_IB_HCA=\"%s\" selects no device: NCCL would "
                        "find no IB device and fall back to sockets\n", filter);
        return CLI_EXIT_NEGATIVE;
    }
    return CLI_EXIT_OK;
}
