/* topoplan nics: which NIC every rank of a node uses, per ring channel and per peer. */
#include "cli.h"

static const char usage[] =
    "usage: topoplan nics [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--format "
    "text|json] (TOPO.xml | --builtin NAME)\n"
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
    return cli_run_net_report(argc, argv, ctx, usage, tp_report_nics);
}
