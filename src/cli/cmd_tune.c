/* topoplan tune: NCCL 2.22.3's algorithm/protocol choice and predicted bandwidth per size. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan tune [--nodes N] [--coll C] [--sizes A..B] [--plot FILE.svg]\n"
    "                     [--format text|json] (TOPO.xml | --builtin NAME)\n"
    "\n"
    "NCCL 2.22.3's tuning model of the job (rank 0's view) applied to one call of\n"
    "each collective per size: the algorithm and protocol NCCL picks, its channels\n"
    "and threads, the predicted time, algorithm and bus bandwidth (nccl-tests'\n"
    "definitions), the sizes where the choice changes and why (the competing times).\n"
    "NCCL_* variables (NCCL_ALGO, NCCL_PROTO, NCCL_NTHREADS, ...) apply.\n"
    "\n"
    "  --nodes N        number of identical nodes (default 1)\n"
    "  --coll C         AllReduce, AllGather, ReduceScatter, Broadcast or Reduce (default all)\n"
    "  --sizes A..B     sizes A, 2A, 4A, ... up to B, with K/M/G suffixes (default 8..8G)\n"
    "  --plot FILE.svg  also draw predicted busbw against size per algorithm/protocol\n"
    "                   (--plot - writes only the SVG, to the output)\n"
    "  --builtin NAME   plan a built-in topology (see `topoplan builtins`)\n";

/* "8", "64K", "1M", "8G" (binary multiples, optional "B"/"iB"); 0 when invalid. */
static uint64_t parse_size(const char *text, const char **end)
{
    char *e = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &e, 10);
    if (e == text || errno || text[0] == '-')
        return 0;
    int shift = 0;
    switch (toupper((unsigned char)*e)) {
    case 'K':
        shift = 10;
        e++;
        break;
    case 'M':
        shift = 20;
        e++;
        break;
    case 'G':
        shift = 30;
        e++;
        break;
    case 'T':
        shift = 40;
        e++;
        break;
    default:
        break;
    }
    if (shift && *e == 'i')
        e++;
    if (*e == 'B')
        e++;
    if (v > (UINT64_C(1) << 40) >> shift)
        return 0;
    *end = e;
    return (uint64_t)v << shift;
}

static int parse_range(const char *text, tp_tune_options *opt)
{
    const char *e = NULL;
    opt->min_bytes = parse_size(text, &e);
    if (!opt->min_bytes || strncmp(e, "..", 2) != 0)
        return -1;
    opt->max_bytes = parse_size(e + 2, &e);
    return opt->max_bytes && !*e && opt->min_bytes <= opt->max_bytes ? 0 : -1;
}

typedef struct tune_args {
    tp_tune_options opt;
    const char *plot;
} tune_args;

/* Take --coll, --sizes and --plot (with their values) out of argv. */
static int take_tune_options(int *argc, char **argv, tune_args *t)
{
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        const char *o = argv[i];
        bool known =
            i > 0 && (!strcmp(o, "--coll") || !strcmp(o, "--sizes") || !strcmp(o, "--plot"));
        if (!known) {
            argv[n++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc)
            return cli_usage_error(usage, "%s needs a value", o);
        const char *v = argv[++i];
        if (!strcmp(o, "--coll") && (t->opt.coll = tp_tune_coll_from_name(v)) < 0)
            return cli_usage_error(usage, "invalid value \"%s\" for --coll", v);
        if (!strcmp(o, "--sizes") && parse_range(v, &t->opt) != 0)
            return cli_usage_error(usage, "invalid value \"%s\" for --sizes (e.g. 1K..1G)", v);
        if (!strcmp(o, "--plot"))
            t->plot = v;
    }
    *argc = n;
    return CLI_EXIT_OK;
}

static int write_plot(const tp_plan *plan, const tune_args *t, FILE *out)
{
    if (strcmp(t->plot, "-") == 0) {
        tp_error err = {0};
        return tp_report_tune_svg(out, plan, &t->opt, &err) == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
    }
    cli_out_file o; /* replaced only when the plot is written whole */
    int code = cli_out_open(&o, t->plot);
    if (code != CLI_EXIT_OK)
        return code;
    tp_error err = {0};
    tp_status st = tp_report_tune_svg(o.f, plan, &t->opt, &err);
    if (st == TP_OK || (st == TP_ERR_IO && ferror(o.f)))
        return cli_out_close(&o, true); /* a failed write is named there, the target kept */
    cli_out_close(&o, false);
    return cli_fail(&err);
}

int cmd_tune(int argc, char **argv, cli_ctx *ctx)
{
    tune_args t = {.opt = {.coll = -1}};
    int code = take_tune_options(&argc, argv, &t);
    if (code != CLI_EXIT_OK)
        return code;
    cli_args a;
    if (cli_parse_args(argc, argv, ctx,
                       (cli_syntax){.usage = usage, .options = CLI_OPT_FORMAT, .n_files = 1}, &a,
                       &code) != 0)
        return code;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &a.in, ctx);
    if (code == CLI_EXIT_OK) {
        tp_error err = {0};
        bool svg_only = t.plot && strcmp(t.plot, "-") == 0;
        if (!svg_only && tp_report_tune(ctx->out, plan, &t.opt, ctx->format, &err) != TP_OK)
            code = cli_fail(&err);
        else if (t.plot)
            code = write_plot(plan, &t, ctx->out);
    }
    cli_partial_notes(&a.in, plan, ctx->out, true); /* lints that explain the figures */
    tp_plan_free(plan);
    return code;
}
