/* topoplan matrix: GPU x GPU and GPU x NIC path types, like nvidia-smi topo -m. */
#include "cli.h"

static const char usage[] =
    "usage: topoplan matrix [--nodes N] [--rank R] [--format text|json] (TOPO.xml | --builtin "
    "NAME)\n"
    "\n"
    "The compact view of `nvidia-smi topo -m`, from the paths NCCL 2.22.3 computes:\n"
    "the path type (NVL, NVB, PIX, PXB, PXN, PHB, SYS) of every GPU pair and every\n"
    "GPU-NIC pair, each GPU's NUMA node and CPU affinity, the NICs by name, and a\n"
    "legend. NICs are shown in blocks of 16. --nodes defaults to 2 here: NCCL keeps\n"
    "no NIC in a single-node job.\n";

int cmd_matrix(int argc, char **argv, cli_ctx *ctx)
{
    return cli_run_net_report(argc, argv, ctx, usage, tp_report_matrix);
}
