/* topoplan: global options, the command table and dispatch. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Reports write text and JSON; the log and mutated XML only their own text. */
#define REPORT (CLI_FMT_TEXT | CLI_FMT_JSON)
static const cli_cmd cmds[] = {
    {"nccl-log", cmd_nccl_log, CLI_FMT_TEXT, "the log lines NCCL 2.22.3 prints for a rank"},
    {"plan", cmd_plan, REPORT | CLI_FMT_DOT | CLI_FMT_SVG,
     "the main view: graphs, channels and why, rings, trees"},
    {"matrix", cmd_matrix, REPORT, "GPU x GPU and GPU x NIC path types, like nvidia-smi topo -m"},
    {"paths", cmd_paths, REPORT, "path matrix between GPUs and NICs, with bottlenecks"},
    {"search", cmd_search, REPORT, "graph search results with their decision trace"},
    {"graph-check", cmd_graph_check, REPORT, "check an NCCL_GRAPH_FILE against a topology"},
    {"validate", cmd_validate, REPORT, "does NCCL accept this topology (and graph file)? notes"},
    {"mutate", cmd_mutate, CLI_FMT_TEXT,
     "what-if edits of a topology (attributes, removals, NVLinks)"},
    {"diff", cmd_diff, REPORT, "differences of two topologies, layer by layer, and why"},
    {"check", cmd_check, REPORT, "health check of a node's topology against a baseline"},
    {"hca", cmd_hca, REPORT, "which IB devices an NCCL_IB_HCA value selects"},
    {"tune", cmd_tune, REPORT, "algorithm/protocol NCCL picks per size, predicted time and busbw"},
    {"nics", cmd_nics, REPORT, "which NIC each rank uses per channel and peer: rails, PXN, GDR"},
    {"complete", cmd_complete, REPORT, "fill a partial provider topology as NCCL does at run time"},
    {"builtins", cmd_builtins, REPORT, "list the built-in topologies (or print one)"},
    {"env", cmd_env, REPORT, "the effective NCCL_* parameters"},
    {"versions", cmd_versions, REPORT, "the NCCL versions modelled (--nccl), exact or partial"},
    {"verify", cmd_verify, REPORT, "check a real NCCL log against the plan, rank by rank, and why"},
    {"report", cmd_report, CLI_FMT_TEXT,
     "the plan as one HTML page: system, channels, why, paths, tuning"},
};

static const char usage[] =
    "usage: topoplan [global options] <command> [options] [args]\n"
    "\n"
    "Global options:\n"
    "  -h, --help            this help; `topoplan help COMMAND` for a command's\n"
    "  --version             print the version\n"
    "  -E, --env KEY=VALUE   set an NCCL_* variable (repeatable; overrides the environment)\n"
    "  --env-file FILE       read KEY=VALUE lines (blank lines and # comments skipped);\n"
    "                        applied before --env values\n"
    "  --no-env              ignore NCCL_* variables of the process environment\n"
    "  --nccl VERSION        model this NCCL version's rules (`topoplan versions` lists\n"
    "                        them; default: the newest exact one)\n"
    "  --format FORMAT       text (default), json (every report; see docs/json.md),\n"
    "                        dot or svg (plan); a format a command cannot write\n"
    "                        is a usage error\n"
    "  -o, --output FILE     write the report to FILE instead of standard output (also\n"
    "                        after the command); FILE is replaced only when the command\n"
    "                        answers and every byte is written, never left truncated\n";

static const char exit_codes[] =
    "Exit codes (one per kind of fault, the same for every command):\n"
    "  0  success\n"
    "  1  negative answer: check found deviations, diff found differences, a graph is\n"
    "     infeasible, hca selected nothing\n"
    "  2  usage error: unknown command or option, bad option value, --nodes outside\n"
    "     1..65536, --rank outside the job's ranks, unknown --builtin\n"
    "  3  invalid input: XML, topology, configuration (NCCL_* values, env-file lines),\n"
    "     graph file, edit expression, an input over a limit (16 MiB per file, 4096\n"
    "     bytes per env-file line), or a failure NCCL itself reports; with\n"
    "     FILE:LINE:COL where there is a file\n"
    "  4  I/O error (a file cannot be opened, read or written: the message names the\n"
    "     path and the system error) or out of memory\n"
    "  5  internal error: a broken invariant, a bug in topoplan (please report it with\n"
    "     the input)\n"
    "A topology or graph file NCCL 2.22.3's own XML parser refuses (it is stricter\n"
    "than XML: no <?xml?>, no tabs, one space between attributes, ...) exits 3 with\n"
    "NCCL's message; nccl-log first prints NCCL's WARN and back-trace lines (4 when\n"
    "NCCL cannot open the file). The catalogue: docs/nccl-errors.md.\n";

static void print_help(void)
{
    fputs(usage, stdout);
    fputs("\nCommands:\n", stdout);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        printf("  %-12s %s\n", cmds[i].name, cmds[i].summary);
    fputs("\n`topoplan help exit-codes` lists the exit codes.\n", stdout);
}

static const cli_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

typedef struct global_opts {
    const char **env_list; /* --env values, then NULL */
    size_t n_env;
    const char **env_files; /* --env-file paths */
    size_t n_env_files;
    int no_env;
    const char *output;
    const char *format; /* --format NAME, checked against the command */
    const char *nccl;   /* --nccl VERSION */
} global_opts;

static int parse_globals(int argc, char **argv, global_opts *g)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"env", required_argument, NULL, 'E'},
        {"no-env", no_argument, NULL, 'N'},
        {"format", required_argument, NULL, 'F'},
        {"output", required_argument, NULL, 'o'},
        {"env-file", required_argument, NULL, 'f'},
        {"nccl", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0; /* our own one-line message */
    while ((c = getopt_long(argc, argv, "+hE:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            print_help();
            exit(CLI_EXIT_OK);
        case 'V':
            printf("topoplan %s (reproduces NCCL %s)\n", tp_version_string(),
                   tp_nccl_version_string());
            exit(CLI_EXIT_OK);
        case 'E':
            if (!strchr(optarg, '='))
                return cli_usage_error(usage, "--env expects KEY=VALUE, got \"%s\"", optarg);
            g->env_list[g->n_env++] = optarg;
            break;
        case 'N':
            g->no_env = 1;
            break;
        case 'f':
            g->env_files[g->n_env_files++] = optarg;
            break;
        case 'F':
            if (!cli_format_bit(optarg))
                return cli_usage_error(usage, "unknown format \"%s\" (text, json, dot or svg)",
                                       optarg);
            g->format = optarg;
            break;
        case 'o':
            g->output = optarg;
            break;
        case 'n':
            g->nccl = optarg;
            break;
        default:
            return cli_usage_error(usage,
                                   "bad global option \"%s\" (unknown, or its value is "
                                   "missing)",
                                   argv[optind - 1]);
        }
    }
    return 0;
}

/* Apply an env file (read whole, bounded like every input file). */
static int apply_env_file(tp_config *cfg, const char *path)
{
    tp_error err = {0};
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_read_file(&text, &len, path, &err);
    if (st == TP_OK)
        st = tp_config_load_env_text(cfg, text, len, path, &err);
    free(text);
    return st == TP_OK ? 0 : cli_fail(&err);
}

void cli_note_partial_profile(const tp_config *cfg)
{
    for (int i = 0; i < tp_nccl_profile_count(); i++) {
        tp_nccl_profile_info info;
        if (tp_nccl_profile_info_at(i, &info, sizeof(info), NULL) != TP_OK ||
            strcmp(info.nccl, tp_config_nccl(cfg)) != 0 || info.exact)
            continue;
        fprintf(stderr,
                "topoplan: note: the prediction is not yet exact for NCCL %s (%d of %d public "
                "conformance cases pass; `topoplan versions`)\n",
                info.nccl, info.public_passed, info.public_total);
    }
}

static int build_config(cli_ctx *ctx, const global_opts *g)
{
    tp_error err = {0};
    const char *const empty[] = {NULL};
    if (tp_config_new(&ctx->cfg, g->no_env ? empty : (const char *const *)environ, &err))
        return cli_fail(&err);
    if (g->nccl && tp_config_set_nccl(ctx->cfg, g->nccl, &err))
        return cli_usage_error(usage, "--nccl: %s", err.message);
    if (g->nccl)
        cli_note_partial_profile(ctx->cfg);
    for (size_t i = 0; i < g->n_env_files; i++) {
        int code = apply_env_file(ctx->cfg, g->env_files[i]);
        if (code)
            return code;
    }
    for (size_t i = 0; i < g->n_env; i++) {
        char key[256];
        const char *eq = strchr(g->env_list[i], '=');
        snprintf(key, sizeof(key), "%.*s", (int)(eq - g->env_list[i]), g->env_list[i]);
        if (tp_config_set_from(ctx->cfg, key, eq + 1, "--env", &err))
            return cli_fail(&err);
    }
    for (size_t i = 0; i < tp_config_warning_count(ctx->cfg); i++)
        cli_message("warning: %s", tp_config_warning(ctx->cfg, i));
    return 0;
}

/*
 * Flush and close the report stream; a failed write names the file and the system error.
 * An -o file replaces its target only when the command answered (exit 0 or 1).
 */
static int finish_output(cli_ctx *ctx, int code)
{
    int bad = 0;
    if (ctx->report.name) {
        bad = cli_out_close(&ctx->report, code == CLI_EXIT_OK || code == CLI_EXIT_NEGATIVE);
    } else {
        int earlier = errno; /* a command's failed write leaves its reason here */
        errno = 0;
        bad = fflush(ctx->out) != 0 || ferror(ctx->out);
        int e = errno ? errno : earlier;
        if (bad)
            cli_message("standard output: cannot write: %s", strerror(e ? e : EIO));
    }
    ctx->out = stdout;
    /* A negative answer that could not be written is an I/O error, not an answer. */
    return bad ? (code > CLI_EXIT_NEGATIVE && code != CLI_EXIT_IO ? code : CLI_EXIT_IO) : code;
}

int main(int argc, char **argv)
{
    global_opts g = {.env_list = calloc((size_t)argc + 1, sizeof(char *)),
                     .env_files = calloc((size_t)argc + 1, sizeof(char *))};
    cli_seen seen = {0};
    cli_ctx ctx = {.out = stdout, .seen = &seen};
    int code = g.env_list && g.env_files ? parse_globals(argc, argv, &g) : CLI_EXIT_IO;
    if (code == 0 && optind >= argc) {
        print_help();
        code = CLI_EXIT_USAGE;
    }
    if (code == 0 && strcmp(argv[optind], "help") == 0) {
        const cli_cmd *cmd = optind + 1 < argc ? find_cmd(argv[optind + 1]) : NULL;
        if (optind + 1 < argc && strcmp(argv[optind + 1], "exit-codes") == 0) {
            fputs(exit_codes, stdout);
        } else if (cmd) {
            char *help_argv[] = {(char *)cmd->name, "--help", NULL};
            code = cmd->fn(2, help_argv, &ctx);
        } else if (optind + 1 < argc) {
            code = cli_usage_error(usage, "help: unknown command \"%s\"", argv[optind + 1]);
        } else {
            print_help();
        }
        cli_ctx_release(&ctx);
        free(g.env_list);
        free(g.env_files);
        return code;
    }
    const cli_cmd *cmd = code == 0 ? find_cmd(argv[optind]) : NULL;
    if (code == 0 && !cmd)
        code = cli_usage_error(usage, "unknown command \"%s\"", argv[optind]);
    if (code == 0) {
        ctx.formats = cmd->formats;
        ctx.command = cmd->name;
        if (g.format)
            code = cli_set_format(&ctx, g.format, NULL);
    }
    if (code == 0)
        code = build_config(&ctx, &g);
    if (code == 0 && g.output)
        code = cli_set_output(&ctx, g.output, usage);
    if (code == 0) {
        int done = cmd->fn(argc - optind, argv + optind, &ctx);
        if (done == CLI_EXIT_OK || done == CLI_EXIT_NEGATIVE) /* an error line stays alone */
            cli_setting_notes(&ctx, NULL); /* commands without a plan: the configuration's */
        code = finish_output(&ctx, done);
    } else if (ctx.report.name) {
        cli_out_close(&ctx.report, false);
    }
    cli_seen_release(&seen);
    tp_config_free(ctx.cfg);
    cli_ctx_release(&ctx);
    free(g.env_list);
    free(g.env_files);
    return code;
}
