/* topoplan report: the plan as one self-contained HTML page. */
#include "cli.h"

#include <string.h>

static const char usage[] =
    "usage: topoplan report [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE]\n"
    "                       [--nccl VERSION] [-o FILE.html] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "Write the plan as one HTML page that opens from disk in any current browser (CSS,\n"
    "script and SVG pictures inline, no network; the same bytes for the same input):\n"
    "the system of rank R's node as an operator pictures it (NVSwitches above the GPUs\n"
    "in index order, PCI switches and CPUs below with their NUMA sides, NICs by name),\n"
    "a picker that highlights one channel's route or every ring/tree/NVLS channel's\n"
    "links, details on hover or keyboard focus (a link's type, bandwidth, paths and\n"
    "channels; a GPU's NIC per channel, PXN proxy and GDR), each graph's explanation\n"
    "with a button that shows its bounding link, the path matrix as a heat map, the\n"
    "tuning model as log-scale busbw plots with NCCL's choice and a table of common\n"
    "sizes; for nodes that differ (--node-topo, --job) the node that limits the job\n"
    "beside a good one and what it costs. Without scripts the pictures stay whole.\n"
    "  --nccl VERSION  model this NCCL version (as the global --nccl; `topoplan\n"
    "           versions`); the page names it in its header, and a partial profile\n"
    "           with its public conformance tally\n"
    "  -o FILE  write the page to FILE (default: standard output), replaced only when\n"
    "           the whole page was written\n";

int cli_take_value(int *argc, char **argv, const char *flag, const char **value)
{
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        if (i == 0 || strcmp(argv[i], flag) != 0) {
            argv[n++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc)
            return -1;
        *value = argv[++i];
    }
    *argc = n;
    return 0;
}

int cli_write_html(const char *path, cli_html_fn *write, const void *arg)
{
    cli_out_file o;
    int code = cli_out_open(&o, path);
    if (code != CLI_EXIT_OK)
        return code;
    tp_error err = {0};
    tp_status st = write(o.f, arg, &err);
    code = cli_out_close(&o, st == TP_OK);
    if (code == CLI_EXIT_OK && st != TP_OK)
        code = cli_fail(&err);
    return code;
}

int cmd_report(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    int code = 0;
    const char *nccl = NULL;
    if (cli_take_value(&argc, argv, "--nccl", &nccl) != 0)
        return cli_usage_error(usage, "report: --nccl needs a VERSION (`topoplan versions`)");
    tp_error nccl_err = {0};
    if (nccl && tp_config_set_nccl(ctx->cfg, nccl, &nccl_err) != TP_OK)
        return cli_usage_error(usage, "report: --nccl: %s", nccl_err.message);
    if (nccl)
        cli_note_partial_profile(ctx->cfg);
    if (cli_parse_args(argc, argv, ctx, (cli_syntax){.usage = usage, .n_files = 1}, &a, &code) != 0)
        return code;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &a.in, ctx);
    if (code == CLI_EXIT_OK) {
        tp_error err = {0};
        code = tp_report_html(ctx->out, plan, &err) == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
    }
    cli_partial_notes(&a.in, plan, ctx->out, true);
    tp_plan_free(plan);
    return code;
}
