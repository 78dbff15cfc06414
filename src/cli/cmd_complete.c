/* topoplan complete: a partial provider topology filled in as NCCL fills it at run time. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan complete [options] PARTIAL.xml [-o FULL.xml]\n"
    "       topoplan complete --list\n"
    "\n"
    "Write the topology NCCL 2.22.3 would hold after its run-time fill of a partial\n"
    "provider file (cloud NCCL_TOPO_FILE): <gpu dev sm rank gdr> and NVLinks from NVML,\n"
    "CPU/PCI attributes from sysfs, <nic><net> from the network plugin, with the values\n"
    "of the machine's SKU. Nothing published is changed: the additions are spliced into\n"
    "the text, and a leading comment lists each with its reason. The additions are also\n"
    "listed on standard error (--format json: as JSON on standard output, the XML then\n"
    "needs -o).\n"
    "\n"
    "  --sku NAME          the machine (see --list); default: recognised from the file\n"
    "  --list              list the SKU catalogue\n"
    "  -o, --output FILE   write the completed XML to FILE (default standard output)\n"
    "  --plugin-mode MODE  a network plugin mode the SKU defines (aws-p5.48xlarge:\n"
    "                      rdma, the default, or sendrecv: one 100 Gb/s net per EFA)\n"
    "  --sm N              GPU compute capability x10 (e.g. 80 for A100)\n"
    "  --nvlinks N         NVLinks per GPU to the NVSwitch fabric (0: no NVLinks)\n"
    "  --nic-speed MBPS    speed of one NIC port in Mb/s\n"
    "  --gdr 0|1           GPUDirect RDMA of the GPUs and NICs\n"
    "  --format text|json  how the additions are listed\n";

typedef struct complete_args {
    tp_complete_options opts;
    const char *input, *output;
    bool list;
} complete_args;

static int parse_int_opt(const char *arg, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || !*arg || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* What option c takes (the ranges take() accepts). */
static const char *value_range(int c)
{
    switch (c) {
    case 'S':
        return "a compute capability x10 in 10..200";
    case 'N':
        return "NVLinks per GPU in 0..64";
    case 'P':
        return "Mb/s in 1..100000000";
    case 'G':
        return "0 or 1";
    default:
        return "a value";
    }
}

static int take(int c, const char *arg, complete_args *a)
{
    int v = 0;
    switch (c) {
    case 's':
        a->opts.sku = arg;
        return 0;
    case 'm':
        a->opts.plugin_mode = arg;
        return 0;
    case 'o':
        a->output = arg;
        return 0;
    case 'l':
        a->list = true;
        return 0;
    case 'S':
        return parse_int_opt(arg, 10, 200, &a->opts.sm);
    case 'N':
        if (parse_int_opt(arg, 0, 64, &v))
            return -1;
        a->opts.nvlinks = v == 0 ? -1 : v;
        return 0;
    case 'P':
        return parse_int_opt(arg, 1, 100000000, &a->opts.nic_speed);
    case 'G':
        if (parse_int_opt(arg, 0, 1, &v))
            return -1;
        a->opts.gdr = v ? TP_COMPLETE_GDR_ON : TP_COMPLETE_GDR_OFF;
        return 0;
    default:
        return -1;
    }
}

static int parse(int argc, char **argv, complete_args *a, cli_ctx *ctx, int *code)
{
    static const struct option opts[] = {
        {"sku", required_argument, NULL, 's'},
        {"plugin-mode", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        {"list", no_argument, NULL, 'l'},
        {"format", required_argument, NULL, 'F'},
        {"sm", required_argument, NULL, 'S'},
        {"nvlinks", required_argument, NULL, 'N'},
        {"nic-speed", required_argument, NULL, 'P'},
        {"gdr", required_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    optind = 0;
    int c;
    opterr = 0; /* our own one-line message */
    int longi = -1;
    while ((c = getopt_long(argc, argv, "ho:", opts, &longi)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            *code = CLI_EXIT_OK;
            return -1;
        }
        if (c == 'F') {
            if ((*code = cli_set_format(ctx, optarg, usage)) != CLI_EXIT_OK)
                return -1;
            continue;
        }
        if (c == '?') {
            *code = cli_usage_error(usage,
                                    "complete: bad option \"%s\" (unknown, or its value is "
                                    "missing)",
                                    argv[optind - 1]);
            return -1;
        }
        if (take(c, optarg, a) != 0) {
            *code = cli_usage_error(usage, "complete: %s%s \"%s\": expected %s",
                                    longi >= 0 ? "--" : "-", longi >= 0 ? opts[longi].name : "o",
                                    optarg, value_range(c));
            return -1;
        }
        longi = -1; /* getopt_long sets it for long options only */
    }
    if (!a->list && argc - optind != 1) {
        *code = cli_usage_error(usage, "complete: expected one PARTIAL.xml");
        return -1;
    }
    if (ctx->format == TP_FORMAT_DOT) {
        *code = cli_usage_error(usage, "complete lists its additions as text or json");
        return -1;
    }
    a->input = a->list ? NULL : argv[optind];
    return 0;
}

/* The provider-file defects completion keeps (guids that make NICs one port, ...): on stderr. */
static void lint_notes(const char *path, const char *sku)
{
    tp_lints *l = NULL;
    tp_error err = {0};
    if (tp_lint_file(&l, path, sku, &err) != TP_OK)
        return; /* completion itself reported the file */
    for (size_t i = 0; i < tp_lints_count(l); i++)
        if (!tp_lints_is_partial(l, i))
            cli_diag("topoplan: %s: lint: %s (completion keeps it)\n", path,
                     tp_lints_message(l, i));
    tp_lints_free(l);
}

static int list_skus(FILE *out)
{
    for (size_t i = 0; i < tp_sku_count(); i++) {
        char title[256];
        tp_error err = {0};
        if (tp_sku_title(i, title, sizeof(title), &err) != TP_OK)
            return cli_fail(&err);
        fprintf(out, "%-24s %s\n", tp_sku_name(i), title);
    }
    return CLI_EXIT_OK;
}

/* The XML to -o FILE (replaced only when written whole) or to the report stream. */
static int write_xml(const char *path, FILE *fallback, const char *xml)
{
    if (!path) {
        fputs(xml, fallback);
        return fflush(fallback) != 0 || ferror(fallback) ? CLI_EXIT_IO : CLI_EXIT_OK;
    }
    cli_out_file o;
    int code = cli_out_open(&o, path);
    if (code == CLI_EXIT_OK) {
        fputs(xml, o.f);
        code = cli_out_close(&o, true);
    }
    return code;
}

int cmd_complete(int argc, char **argv, cli_ctx *ctx)
{
    complete_args a;
    int code = CLI_EXIT_OK;
    if (parse(argc, argv, &a, ctx, &code) != 0)
        return code;
    if (a.list && ctx->format != TP_FORMAT_TEXT)
        return cli_usage_error(usage, "complete --list writes text only (no JSON catalogue)");
    if (a.list)
        return list_skus(ctx->out);
    bool json = ctx->format == TP_FORMAT_JSON;
    /* The global -o names the report stream; the command's -o the XML. */
    if (json && !a.output)
        return cli_usage_error(usage, "complete --format json writes the XML with -o FILE only");
    tp_completion *c = NULL;
    tp_error err = {0};
    if (tp_complete_file(&c, a.input, &a.opts, &err) != TP_OK)
        return cli_fail(&err);
    code = write_xml(a.output, ctx->out, tp_completion_xml(c));
    if (!json)
        fflush(stdout); /* the XML's lines before the additions on stderr (cli_diag) */
    if (code == CLI_EXIT_OK &&
        tp_report_completion(json ? ctx->out : stderr, c, ctx->format, &err) != TP_OK)
        code = cli_fail(&err);
    tp_completion_free(c);
    /* After the written result only: a failed write is reported first, alone. */
    if (code == CLI_EXIT_OK && fflush(ctx->out) == 0 && !ferror(ctx->out))
        lint_notes(a.input, a.opts.sku);
    return code;
}
