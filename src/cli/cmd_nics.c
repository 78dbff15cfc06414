/* topoplan nics: which NIC every rank of a node uses, per ring channel and per peer. */
#include "cli.h"


static const char usage[] =
    "usage: topoplan nics [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--format text|json] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "For every rank of rank R's node: its GPU, NUMA node and nearest NIC; the NET\n"
    "device each ring channel enters or leaves the node through and the rail it keeps\n"
    "or crosses; the NIC and PXN proxy of P2P sends to one peer per remote local\n"
    "index; GPU Direct RDMA. Then findings in plain words: idle rails, channels\n"
    "crossing rails, NICs on another NUMA node, PXN relays, NCCL_IB_HCA results.\n"
    "NCCL_IB_HCA applies to the XML's <net> devices; NCCL_IB_MERGE_NICS=1 (set\n"
    "explicitly) merges ports of one NIC. --nodes defaults to 2 here: NCCL uses no\n"
    "NIC on a single node.\n";

int cmd_nics(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    int code = 0;
    if (cli_parse_args(argc, argv, ctx, usage, CLI_OPT_FORMAT, 1, &a, &code) != 0)
        return code;
    if (!a.nodes_given)
        a.in.job.n_nodes = 2;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &a.in, ctx);
    if (code == CLI_EXIT_OK) {
        tp_error err = {0};
        if (tp_report_nics(ctx->out, plan, ctx->format, &err) != TP_OK)
            code = cli_fail(&err);
    }
    tp_plan_free(plan);
    return code;
}
