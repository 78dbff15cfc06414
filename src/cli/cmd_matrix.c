/* topoplan matrix: GPU x GPU and GPU x NIC path types, like nvidia-smi topo -m. */
#include "cli.h"

static const char usage[] =
    "usage: topoplan matrix [--nodes N] [--rank R] [--format text|json] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "The compact view of `nvidia-smi topo -m`, from the paths NCCL 2.22.3 computes:\n"
    "the path type (NVL, NVB, PIX, PXB, PXN, PHB, SYS) of every GPU pair and every\n"
    "GPU-NIC pair, each GPU's NUMA node and CPU affinity, the NICs by name, and a\n"
    "legend. NICs are shown in blocks of 16. --nodes defaults to 2 here: NCCL keeps\n"
    "no NIC in a single-node job.\n";

int cmd_matrix(int argc, char **argv, cli_ctx *ctx)
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
        if (tp_report_matrix(ctx->out, plan, ctx->format, &err) != TP_OK)
            code = cli_fail(&err);
    }
    tp_plan_free(plan);
    return code;
}
