/* topoplan diff, and the flow diff and check share. */
#include "cli.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan diff [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--format "
    "text|json]\n"
    "                     [--env-a KEY=VALUE]... [--env-b KEY=VALUE]... [--nccl-a VERSION]\n"
    "                     [--nccl-b VERSION] [--report FILE.html] A.xml (B.xml | --builtin NAME)\n"
    "       topoplan diff [options] (--env-a/-b KEY=VALUE | --nccl-a/-b VERSION)... TOPO.xml\n"
    "\n"
    "Plan both topologies for the same job (N identical nodes, rank R's view) under\n"
    "the same NCCL_* environment and list their differences in pipeline order:\n"
    "system (nodes added or removed by NCCL id, attributes, link types and bandwidths),\n"
    "paths (GPU-GPU, GPU-CPU and GPU-NET type, bandwidth, hops), graphs (pattern,\n"
    "channels, bandwidth, path types, crossNic, channel orders) and channels (counts,\n"
    "rings, trees). Then one summary line per layer, the first layer that differs, and\n"
    "why the collective channel count changed. Nodes are matched by NCCL id; GPUs, PCI\n"
    "switches and NICs whose bus ids were renumbered are matched by position when both\n"
    "sides have as many unmatched ones; NETs follow their NIC.\n"
    "Last, the tuning layer: NCCL's algorithm/protocol for one call of each collective,\n"
    "8 B to 8 GiB, where it differs, and the predicted time of the largest call.\n"
    "  --env-a KEY=VALUE  an NCCL_* value for A only (repeatable), over the common ones\n"
    "  --env-b KEY=VALUE  an NCCL_* value for B only (repeatable): a what-if on the\n"
    "                     environment, e.g. `diff A.xml A.xml --env-b NCCL_PROTO=^LL128`\n"
    "  --report FILE.html also write both sides as one HTML page (as `topoplan report`),\n"
    "                     the devices and links that differ marked in each picture\n"
    "  With --env-a/--env-b and one topology, both sides plan it: an A/B of the\n"
    "  environment alone, e.g. `diff topo.xml --env-a NCCL_CROSS_NIC=0 --env-b NCCL_CROSS_NIC=1`\n"
    "  --nccl-a VERSION   side A models this NCCL version (`topoplan versions`)\n"
    "  --nccl-b VERSION   side B models this one: what an upgrade changes, e.g.\n"
    "                     `diff topo.xml --nccl-a 2.22.3 --nccl-b 2.27.5` (one or two\n"
    "                     topologies, combinable with --env-a/--env-b). Each layer then\n"
    "                     lists the profile rules that differ between the versions and act\n"
    "                     on it, then every such rule (A -> B, stage, NCCL source), and\n"
    "                     AllReduce bus bandwidth at 1 MiB, 64 MiB and 1 GiB on each\n"
    "                     side; a partial profile (not yet exact) is noted in one line\n"
    "Exit status: 0 identical, 1 different, 2 usage (an unknown VERSION), 3 invalid input.\n";

/* The HTML page of a comparison (--report), for cli_write_html. */
typedef struct compare_page {
    const tp_comparison *cmp;
    const tp_plan *first, *second;
    bool check;
} compare_page;

static tp_status write_compare_page(FILE *out, const void *arg, tp_error *err)
{
    const compare_page *p = arg;
    return tp_report_compare_html(out, p->cmp, p->first, p->second, p->check, err);
}

int cli_compare_run(const cli_input *first, const cli_input *second, cli_ctx *ctx, bool check)
{
    return cli_compare_run_env(first, second, NULL, NULL, ctx, check);
}

int cli_compare_run_env(const cli_input *first, const cli_input *second, const tp_config *first_cfg,
                        const tp_config *second_cfg, cli_ctx *ctx, bool check)
{
    tp_plan *plans[2] = {NULL, NULL};
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    cli_ctx ctx_a = *ctx, ctx_b = *ctx;
    if (first_cfg)
        ctx_a.cfg = (tp_config *)first_cfg;
    if (second_cfg)
        ctx_b.cfg = (tp_config *)second_cfg;
    int code = cli_plan(&plans[0], first, &ctx_a);
    if (code == CLI_EXIT_OK)
        code = cli_plan(&plans[1], second, &ctx_b);
    if (code == CLI_EXIT_OK && tp_compare_plans(&cmp, plans[0], plans[1], &err) != TP_OK)
        code = cli_fail(&err);
    /* The second topology as one node of a job of the first: what it costs the job. */
    bool node_file = second->path && !(first->path && strcmp(first->path, second->path) == 0);
    if (code == CLI_EXIT_OK && check && node_file &&
        tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR) +
                tp_comparison_count_severity(cmp, TP_SEVERITY_WARN) >
            0) {
        cli_job_effect_t fx;
        cli_job_effect(&fx, first, second->path, first->job.n_nodes, ctx, cmp);
    }
    if (code == CLI_EXIT_OK && ctx->html) {
        compare_page page = {cmp, plans[0], plans[1], check};
        code = cli_write_html(ctx->html, write_compare_page, &page);
    }
    if (code == CLI_EXIT_OK) {
        tp_status st = check ? tp_report_check(ctx->out, cmp, ctx->format, &err)
                             : tp_report_diff(ctx->out, cmp, ctx->format, &err);
        size_t bad = check ? tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR) +
                                 tp_comparison_count_severity(cmp, TP_SEVERITY_WARN)
                           : tp_comparison_count(cmp);
        code = st != TP_OK ? cli_fail(&err) : bad ? CLI_EXIT_NEGATIVE : CLI_EXIT_OK;
        /* A diff states it after the differences (a check's report holds it). */
        if (st == TP_OK && !check && bad && ctx->format == TP_FORMAT_TEXT && node_file) {
            cli_job_effect_t fx;
            cli_job_effect(&fx, first, second->path, first->job.n_nodes, ctx, NULL);
            cli_job_effect_text(ctx->out, &fx, first->builtin ? first->builtin : first->path,
                                second->path);
        }
    }
    tp_comparison_free(cmp);
    tp_plan_free(plans[0]);
    tp_plan_free(plans[1]);
    cli_partial_notes(first, NULL, ctx->out, true);
    if (!(first->path && second->path && strcmp(first->path, second->path) == 0))
        cli_partial_notes(second, NULL, ctx->out, true); /* a file's notes once */
    return code;
}

/* Take each `flag` KEY=VALUE (--env-a, --env-b) out of argv into *cfg (a copy of the context's). */
static int take_env(int *argc, char **argv, const cli_ctx *ctx, const char *flag, tp_config **cfg)
{
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        if (i == 0 || strcmp(argv[i], flag) != 0) {
            argv[n++] = argv[i];
            continue;
        }
        const char *kv = i + 1 < *argc ? argv[++i] : NULL;
        const char *eq = kv ? strchr(kv, '=') : NULL;
        if (!eq || eq == kv)
            return cli_usage_error(usage, "%s needs KEY=VALUE", flag);
        tp_error err = {0};
        if (!*cfg && tp_config_copy(cfg, ctx->cfg, &err) != TP_OK)
            return cli_fail(&err);
        char key[128];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        if (tp_config_set_from(*cfg, key, eq + 1, flag, &err) != TP_OK)
            return cli_fail(&err);
        for (size_t w = 0; w < tp_config_warning_count(*cfg); w++)
            cli_message("warning: %s: %s", flag, tp_config_warning(*cfg, w));
    }
    *argc = n;
    return CLI_EXIT_OK;
}

/* Each `flag` VERSION (--nccl-a, --nccl-b) out of argv: that side models this NCCL version. */
static int take_nccl(int *argc, char **argv, const cli_ctx *ctx, const char *flag, tp_config **cfg)
{
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        if (i == 0 || strcmp(argv[i], flag) != 0) {
            argv[n++] = argv[i];
            continue;
        }
        const char *version = i + 1 < *argc ? argv[++i] : NULL;
        if (!version)
            return cli_usage_error(usage, "%s needs a VERSION (`topoplan versions`)", flag);
        tp_error err = {0};
        if (!*cfg && tp_config_copy(cfg, ctx->cfg, &err) != TP_OK)
            return cli_fail(&err);
        if (tp_config_set_nccl(*cfg, version, &err) != TP_OK)
            return cli_usage_error(usage, "%s: %s", flag, err.message);
    }
    *argc = n;
    return CLI_EXIT_OK;
}

/* File arguments on the command line (options' values excluded); --builtin counts as one. */
static int count_files(int argc, char **argv)
{
    static const char *const with_value[] = {
        "--nodes", "--rank", "--node-topo", "--job", "--format", "--builtin", "-n", "-r", "-b"};
    int n = 0;
    for (int i = 1; i < argc; i++) {
        bool takes = false;
        for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++)
            takes |= strcmp(argv[i], with_value[k]) == 0;
        n += takes && strcmp(argv[i], "--builtin") == 0;
        if (takes)
            i++;
        else if (argv[i][0] != '-' || strcmp(argv[i], "-") == 0)
            n++;
    }
    return n;
}

int cmd_diff(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    tp_config *cfg_a = NULL, *cfg_b = NULL;
    int code = take_env(&argc, argv, ctx, "--env-a", &cfg_a);
    if (code == CLI_EXIT_OK && cli_take_value(&argc, argv, "--report", &ctx->html) != 0)
        code = cli_usage_error(usage, "diff: --report needs a file name");
    if (code == CLI_EXIT_OK)
        code = take_env(&argc, argv, ctx, "--env-b", &cfg_b);
    if (code == CLI_EXIT_OK)
        code = take_nccl(&argc, argv, ctx, "--nccl-a", &cfg_a);
    if (code == CLI_EXIT_OK)
        code = take_nccl(&argc, argv, ctx, "--nccl-b", &cfg_b);
    /* One topology with an environment or NCCL version per side: A/B of those alone. */
    int n_files = (cfg_a || cfg_b) && count_files(argc, argv) == 1 ? 1 : 2;
    if (code == CLI_EXIT_OK &&
        cli_parse_args(argc, argv, ctx,
                       (cli_syntax){.usage = usage, .options = CLI_OPT_FORMAT, .n_files = n_files},
                       &a, &code) == 0) {
        if (ctx->format == TP_FORMAT_DOT)
            code = cli_usage_error(usage, "diff writes text or json, not dot");
        else {
            cli_input first = a.in;
            if (n_files == 2)
                first = (cli_input){.path = a.files[0], .job = a.in.job};
            code = cli_compare_run_env(&first, &a.in, cfg_a, cfg_b, ctx, false);
        }
    }
    tp_config_free(cfg_a);
    tp_config_free(cfg_b);
    return code;
}
