/* topoplan report: the plan as one self-contained HTML page. */
#include "cli.h"

#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: topoplan report [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE]\n"
    "                       [--nccl VERSION] [--baseline BASE.xml] [-o FILE.html]\n"
    "                       (TOPO.xml | --builtin NAME)\n"
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
    "A findings panel lists the setting notes and the topology file's lints, each\n"
    "with its severity and its cost to the job where it is measured (as the notes\n"
    "every command prints on standard error).\n"
    "  --baseline BASE.xml  also check the node against a known-good baseline (as\n"
    "           `topoplan check`; a built-in board name too): its root causes with\n"
    "           their severity and what the node costs a job, the consequences under\n"
    "           them, each with a button marking the devices it names\n"
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

/* The health check of the planned node against --baseline (as `check`): *cmp, or NULL. */
static int check_baseline(tp_comparison **cmp, const cli_args *a, const tp_plan *plan, cli_ctx *ctx)
{
    cli_input baseline = {.path = a->baseline, .job = a->in.job};
    /* A built-in board (`topoplan builtins`) stands for itself unless a file has its name. */
    if (access(a->baseline, F_OK) != 0 && tp_builtin_xml(a->baseline)) {
        baseline.path = NULL;
        baseline.builtin = a->baseline;
    }
    tp_plan *base = NULL;
    tp_error err = {0};
    int code = cli_plan(&base, &baseline, ctx);
    if (code == CLI_EXIT_OK && tp_compare_plans(cmp, base, plan, &err) != TP_OK)
        code = cli_fail(&err);
    /* What the node costs a job of baseline nodes (and alone): the severity follows it. */
    if (code == CLI_EXIT_OK && a->in.path && !a->in.job.n_node_topos &&
        tp_comparison_count_severity(*cmp, TP_SEVERITY_ERROR) +
                tp_comparison_count_severity(*cmp, TP_SEVERITY_WARN) >
            0) {
        cli_job_effect_t fx;
        cli_job_effect(&fx, &baseline, a->in.path, a->in.job.n_nodes, ctx, *cmp);
    }
    tp_plan_free(base);
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
        cli_note_partial_profile(tp_config_nccl(ctx->cfg));
    if (cli_parse_args(argc, argv, ctx,
                       (cli_syntax){.usage = usage, .options = CLI_OPT_BASELINE, .n_files = 1}, &a,
                       &code) != 0)
        return code;
    tp_plan *plan = NULL;
    tp_comparison *cmp = NULL;
    code = cli_plan(&plan, &a.in, ctx);
    if (code == CLI_EXIT_OK && a.baseline)
        code = check_baseline(&cmp, &a, plan, ctx);
    if (code == CLI_EXIT_OK) {
        tp_error err = {0};
        code =
            tp_report_html_check(ctx->out, plan, cmp, &err) == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
    }
    cli_partial_notes(&a.in, plan, ctx->out, true);
    tp_comparison_free(cmp);
    tp_plan_free(plan);
    return code;
}
