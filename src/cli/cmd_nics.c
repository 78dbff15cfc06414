/* topoplan nics: which NIC every rank of a node uses, per ring channel and per peer. */
#include "cli.h"

#include <string.h>

static const char usage[] =
    "usage: topoplan [--format text|json] nics [--nodes N] [--rank R] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "For every rank of rank R's node: its GPU, NUMA node and nearest NIC; the NET\n"
    "device each ring channel enters or leaves the node through and the rail it keeps\n"
    "or crosses; the NIC and PXN proxy of P2P sends to one peer per remote local\n"
    "index; GPU Direct RDMA. Then findings in plain words: idle rails, channels\n"
    "crossing rails, NICs on another NUMA node, PXN relays, NCCL_IB_HCA results.\n"
    "NCCL_IB_HCA applies to the XML's <net> devices; NCCL_IB_MERGE_NICS=1 (set\n"
    "explicitly) merges ports of one NIC. --nodes defaults to 2 here: NCCL uses no\n"
    "NIC on a single node.\n";

/* Whether the command line names --nodes (else this command plans two nodes). */
static int has_nodes_option(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--nodes") == 0 || strncmp(argv[i], "--nodes=", 8) == 0 ||
            strncmp(argv[i], "-n", 2) == 0)
            return 1;
    return 0;
}

int cmd_nics(int argc, char **argv, cli_ctx *ctx)
{
    cli_input in;
    int code = 0;
    if (cli_parse_input(argc, argv, usage, &in, &code) != 0)
        return code;
    if (!has_nodes_option(argc, argv))
        in.job.n_nodes = 2;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &in, ctx);
    if (code == CLI_EXIT_OK) {
        tp_error err = {0};
        if (tp_report_nics(ctx->out, plan, ctx->format, &err) != TP_OK)
            code = cli_fail(&err);
    }
    tp_plan_free(plan);
    return code;
}
