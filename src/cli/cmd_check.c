/* topoplan check: health check of a node's topology against a known-good baseline. */
#include "cli.h"

#include <getopt.h>

static const char usage[] =
    "usage: topoplan check [--nodes N] [--rank R] [--format text|json] NODE.xml --baseline "
    "BASE.xml\n"
    "\n"
    "Compare a node's topology (e.g. dumped on the node with NCCL_TOPO_DUMP_FILE) with a\n"
    "known-good baseline of the same model, planned for the same job under the same\n"
    "NCCL_* environment, and list the deviations as findings, errors first:\n"
    "  ERROR  a missing GPU, NIC, NVSwitch, NVLink or NVSwitch link, a lower NVLink\n"
    "         bandwidth, a GPU pair whose path type got worse (NVL -> PIX/PHB/SYS...),\n"
    "         fewer graph, collective or NVLS channels, a lower graph bandwidth\n"
    "  WARN   a PCIe speed/width downgrade or a slower NIC (the errors above say when\n"
    "         they cost the plan), a GPU or NIC on another PCI switch or NUMA node,\n"
    "         extra devices or links, lost GDR, another GPU or CPU model, worse GPU-CPU or\n"
    "         GPU-NIC paths, fewer P2P channels\n"
    "  INFO   harmless: renumbered bus ids, better paths, other ring or tree orders\n"
    "Nodes are matched by NCCL id (bus id); GPUs, PCI switches and NICs left unmatched\n"
    "on both sides are matched by position when both sides have as many of them (bus\n"
    "ids can be renumbered between machines of one model); NETs follow their NIC.\n"
    "Exit status: 0 healthy (no error or warning), 1 deviations, 3 invalid input.\n";

int cmd_check(int argc, char **argv, cli_ctx *ctx)
{
    static const struct option opts[] = {
        {"baseline", required_argument, NULL, 'B'}, {"nodes", required_argument, NULL, 'n'},
        {"rank", required_argument, NULL, 'r'},     {"format", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    cli_compare_opts o = {.job = {.n_nodes = 1}, .format = ctx->format};
    int c, code = CLI_EXIT_OK;
    optind = 0;
    while ((c = getopt_long(argc, argv, "hn:r:", opts, NULL)) != -1)
        if (cli_compare_option(c, optarg, usage, &o, &code) != 0)
            return code;
    if (argc - optind != 1 || !o.baseline)
        return cli_usage_error(usage, "check: expected one topology file and --baseline FILE");
    return cli_compare_run(o.baseline, argv[optind], &o, ctx, true);
}
