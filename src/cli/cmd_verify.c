/* topoplan verify: a real NCCL log against the plan of its job (a thin layer over tp_verify). */
#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan verify LOG... [--topo TOPO.xml | --builtin NAME | --node-topo FILE... |\n"
    "                       --job FILE] [--nodes N] [--rank R] [--format text|json]\n"
    "                       [--emit PARTIAL.xml] [--no-causes]\n"
    "\n"
    "Check an NCCL_DEBUG=INFO log of a job (NCCL 2.22.3) against topoplan's plan of\n"
    "the same job, rank by rank. LOG: one file per rank or one file with every rank\n"
    "interleaved as launchers write it (host:pid:tid [dev] prefixes, timestamps,\n"
    "[rank]: prefixes, other programs' lines, CRLF, a cut last line, gzip). Ranks come\n"
    "from the `comm ... rank R nRanks N` lines (a log without one is rank R, default\n"
    "0), hosts from the prefixes, the NCCL_* settings from NCCL's `NAME set by\n"
    "environment to VALUE` lines (options and --env override them), the topology from\n"
    "--topo or the log's NCCL_TOPO_FILE (relative to the log's folder when not found).\n"
    "Each rank's lines are normalized as the conformance suite does and compared by\n"
    "section (system, paths, search, channels, tuning); a rank agrees, or diverges at\n"
    "its first differing line (expected and log lines, the stage). Run-time connection\n"
    "lines (`Channel 00/0 : 0[0] -> 1[1] via P2P/...`) are checked against the transport\n"
    "the plan gives the pair (P2P, SHM or NET; GDR on NET), and the ring's network\n"
    "connections against the NIC and PXN proxy the plan gives. A divergence is\n"
    "explained by re-planning candidates (NCCL_CROSS_NIC, NCCL_P2P_LEVEL, ... toggled;\n"
    "a GPU at PCIe x8 or x4, a NIC removed, an NVLink down): a cause is named only when\n"
    "its plan reproduces every line of the rank, with its AllReduce bus bandwidth at\n"
    "1 MiB, 64 MiB and 1 GiB against the prediction; the hardware edits are also tried\n"
    "on one node alone (a degraded node among healthy ones, named with its host).\n"
    "Lines of no compared section (run-time lines, other libraries) are skipped\n"
    "and counted.\n"
    "Without a topology the log is checked against itself: ring neighbours that do not\n"
    "name each other, ranks whose channel counts differ, channels lost between the\n"
    "search and the final count, connections within a host via SHM or NET, the one\n"
    "host whose ring search found fewer channels than every other (a degraded node).\n"
    "The NCCL version is --nccl's, else the log's `NCCL version` line: a version whose\n"
    "profile is partial (`topoplan versions`) is compared with that profile, noted on\n"
    "stderr and in the report.\n"
    "  --topo FILE       the topology XML (NCCL_TOPO_FILE format)\n"
    "  --nodes N         nodes of the job (default: the log's host count)\n"
    "  --rank R          rank of a log that has no `comm ... rank` line\n"
    "  --emit FILE       write the partial topology the log's system lines show\n"
    "                    (GPUs with bus ids, NICs) for `topoplan complete`/`validate`\n"
    "  --no-causes       do not re-plan candidate causes\n"
    "Exit status: 0 every rank agrees (no finding without a topology), 1 a rank\n"
    "diverges, 3 a log that is not NCCL's, from an NCCL version topoplan does not\n"
    "model, or an invalid topology; 4 a log that cannot be read.\n";

typedef struct verify_args {
    const char *topo, *emit;
    bool no_causes;
    const char **logs;
    int n_logs;
} verify_args;

/* Options that take a value (their value is not a log). */
static bool takes_value(const char *arg)
{
    static const char *const with_value[] = {"--nodes",  "--rank",    "--node-topo", "--job",
                                             "--format", "--builtin", "-n",          "-r",
                                             "-b",       "--topo",    "--emit"};
    for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++)
        if (strcmp(arg, with_value[k]) == 0)
            return true;
    return false;
}

/* Take --topo, --emit, --no-causes and the logs out of argv; the rest is the shared parser's. */
static int take_own(int *argc, char **argv, verify_args *va)
{
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        const char *a = argv[i];
        bool value = i + 1 < *argc;
        if (i > 0 && (strcmp(a, "--topo") == 0 || strcmp(a, "--emit") == 0)) {
            if (!value)
                return cli_usage_error(usage, "verify: %s needs a file", a);
            *(strcmp(a, "--topo") == 0 ? &va->topo : &va->emit) = argv[++i];
        } else if (i > 0 && strcmp(a, "--no-causes") == 0) {
            va->no_causes = true;
        } else if (i > 0 && takes_value(a) && value) {
            argv[n++] = argv[i++];
            argv[n++] = argv[i];
        } else if (i > 0 && (a[0] != '-' || strcmp(a, "-") == 0)) {
            va->logs[va->n_logs++] = a;
        } else {
            argv[n++] = argv[i];
        }
    }
    *argc = n;
    return CLI_EXIT_OK;
}

static tp_status write_error(tp_error *err, const char *path)
{
    *err = (tp_error){.code = TP_ERR_IO};
    snprintf(err->source, sizeof(err->source), "%s", path);
    snprintf(err->message, sizeof(err->message), "cannot write: %s", strerror(errno));
    return TP_ERR_IO;
}

static int run_verify(const cli_args *a, const verify_args *va, cli_ctx *ctx)
{
    tp_verify_options opt = {.job = a->in.job,
                             .cfg = ctx->cfg,
                             .find_causes = !va->no_causes,
                             .nccl_version = ctx->nccl};
    if (!a->nodes_given)
        opt.job.n_nodes = a->in.job.n_node_topos ? a->in.job.n_node_topos + 1 : 0;
    if (a->in.builtin) {
        opt.topo_xml = tp_builtin_xml(a->in.builtin);
        if (!opt.topo_xml)
            return cli_usage_error(usage, "verify: unknown builtin \"%s\"", a->in.builtin);
        opt.topo_len = strlen(opt.topo_xml);
        opt.topo_source = a->in.builtin;
    } else {
        opt.topo_path = va->topo ? va->topo : a->job_file ? a->in.path : NULL;
    }
    tp_verify *v = NULL;
    tp_error err = {0};
    tp_status st = tp_verify_new(&v, &opt, &err);
    for (int i = 0; st == TP_OK && i < va->n_logs; i++)
        st = tp_verify_add_file(v, va->logs[i], &err);
    if (st == TP_OK)
        st = tp_verify_run(v, &err);
    /* the log's version line chose another profile than the one the options noted */
    if (st == TP_OK && strcmp(tp_verify_nccl(v), tp_config_nccl(ctx->cfg)) != 0)
        cli_note_partial_profile(tp_verify_nccl(v));
    if (st == TP_OK)
        st = tp_report_verify(ctx->out, v, ctx->format, &err);
    if (st == TP_OK && va->emit) {
        FILE *f = fopen(va->emit, "w");
        if (f)
            st = tp_verify_write_topology(f, v, &err);
        if (!f || (fclose(f) != 0 && st == TP_OK))
            st = write_error(&err, va->emit);
    }
    int code = st != TP_OK                    ? cli_fail(&err)
               : tp_verify_divergences(v) > 0 ? CLI_EXIT_NEGATIVE
                                              : CLI_EXIT_OK;
    tp_verify_free(v);
    return code;
}

int cmd_verify(int argc, char **argv, cli_ctx *ctx)
{
    verify_args va = {0};
    va.logs = calloc((size_t)argc + 1, sizeof(*va.logs));
    if (!va.logs || cli_keep(ctx, va.logs) != 0)
        return CLI_EXIT_IO;
    int code = take_own(&argc, argv, &va);
    if (code != CLI_EXIT_OK)
        return code;
    bool help = false;
    for (int i = 1; i < argc; i++)
        help |= strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
    bool has_topology_option = false;
    for (int i = 1; i < argc; i++)
        has_topology_option |= strcmp(argv[i], "--builtin") == 0 || strcmp(argv[i], "-b") == 0 ||
                               strcmp(argv[i], "--job") == 0;
    cli_args a;
    if (cli_parse_args(argc, argv, ctx,
                       (cli_syntax){.usage = usage,
                                    .options = CLI_OPT_FORMAT,
                                    .n_files = has_topology_option ? 1 : 0},
                       &a, &code) != 0)
        return code;
    if (help)
        return CLI_EXIT_OK;
    if (ctx->format == TP_FORMAT_DOT)
        return cli_usage_error(usage, "verify writes text or json, not dot");
    if (va.n_logs == 0)
        return cli_usage_error(usage, "verify: expected a LOG file");
    for (int i = 0; i < va.n_logs; i++)
        if (strcmp(va.logs[i], "-") == 0)
            return cli_usage_error(usage, "verify: reads each log twice (streaming, bounded "
                                          "memory): give a file, not standard input");
    if (va.topo && (a.in.builtin || a.job_file))
        return cli_usage_error(usage, "verify: --topo, --builtin and --job exclude each other");
    return run_verify(&a, &va, ctx);
}
