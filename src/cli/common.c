/* Helpers shared by the commands: errors, input options, planning. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_exit_for(tp_status st)
{
    switch (st) {
    case TP_OK:
        return CLI_EXIT_OK;
    case TP_ERR_XML:
    case TP_ERR_TOPOLOGY:
    case TP_ERR_CONFIG:
    case TP_ERR_GRAPH:
        return CLI_EXIT_INPUT;
    case TP_ERR_IO:
    case TP_ERR_NOMEM:
        return CLI_EXIT_IO;
    case TP_ERR_USAGE:
        return CLI_EXIT_USAGE;
    case TP_ERR_INTERNAL:
    case TP_ERR_ARGUMENT: /* the CLI called the library wrongly */
    default:
        return CLI_EXIT_INTERNAL;
    }
}

void cli_put_printable(FILE *out, const char *s)
{
    char buf[4 * 2048 + 16];
    fputs(tp_printable(buf, sizeof(buf), s), out);
}

void cli_diag(const char *fmt, ...)
{
    fflush(stdout); /* the report's buffered lines first: never a diagnostic inside one */
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* Whether a note was printed already; remember it when not. */
static bool seen_before(cli_seen *seen, const char *note)
{
    for (size_t i = 0; i < seen->n; i++)
        if (strcmp(seen->notes[i], note) == 0)
            return true;
    if (seen->n == seen->cap) {
        size_t cap = seen->cap ? 2 * seen->cap : 8;
        char **grown = realloc(seen->notes, cap * sizeof(*grown));
        if (!grown)
            return false; /* printed again rather than lost */
        seen->notes = grown;
        seen->cap = cap;
    }
    char *copy = strdup(note);
    if (copy)
        seen->notes[seen->n++] = copy;
    return false;
}

void cli_setting_notes(const cli_ctx *ctx, const tp_plan *plan)
{
    if (!ctx->seen || (!plan && ctx->seen->planned) || (!plan && !ctx->cfg))
        return;
    tp_findings *f = NULL;
    tp_error err = {0};
    if (tp_setting_notes(&f, ctx->cfg, plan, &err) != TP_OK)
        return; /* advisory: the command's own result stands */
    ctx->seen->planned = ctx->seen->planned || plan;
    for (int i = 0; i < tp_findings_count(f); i++)
        if (!seen_before(ctx->seen, tp_findings_get(f, i)))
            cli_message("setting: %s", tp_findings_get(f, i));
    tp_findings_free(f);
}

bool cli_setting_note_new(const cli_ctx *ctx, const char *note)
{
    return !ctx->seen || !seen_before(ctx->seen, note);
}

void cli_seen_release(cli_seen *seen)
{
    for (size_t i = 0; i < seen->n; i++)
        free(seen->notes[i]);
    free(seen->notes);
    memset(seen, 0, sizeof(*seen));
}

void cli_message(const char *fmt, ...)
{
    fflush(stdout); /* at a line boundary of the report (cli_diag) */
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fputs("topoplan: ", stderr);
    cli_put_printable(stderr, msg);
    fputc('\n', stderr);
}

int cli_set_output(cli_ctx *ctx, const char *path, const char *usage)
{
    if (ctx->report.name)
        return cli_usage_error(usage, "%s: -o given twice", ctx->command ? ctx->command : "-o");
    int code = cli_out_open(&ctx->report, path);
    if (code == CLI_EXIT_OK)
        ctx->out = ctx->report.f;
    return code;
}

int cli_fail(const tp_error *err)
{
    /* Only writes to the report stream fail without a source: main names the file. */
    if (err->code == TP_ERR_IO && !err->source[0])
        return CLI_EXIT_IO;
    char msg[1024];
    tp_error named = *err;
    cli_name_flag(&named);
    tp_error_format(&named, msg, sizeof(msg));
    cli_message("%s", msg);
    if (err->code == TP_ERR_INTERNAL)
        fprintf(stderr, "topoplan: this is a bug in topoplan; please report it with the input\n");
    return cli_exit_for(err->code);
}

/*
 * The command a usage text is for: the first word after "usage: topoplan " and its
 * bracketed global options ("[-o OUT.xml] mutate" -> "mutate"); "" for the global usage.
 */
static void usage_command(const char *usage, char *cmd, size_t size)
{
    static const char head[] = "usage: topoplan ";
    cmd[0] = '\0';
    if (strncmp(usage, head, sizeof(head) - 1) != 0)
        return;
    const char *p = usage + sizeof(head) - 1;
    while (*p == '[') {
        const char *close = strchr(p, ']');
        if (!close)
            return;
        p = close + 1 + strspn(close + 1, " ");
    }
    size_t len = strcspn(p, " \n");
    if (len > 0 && p[0] != '<' && len < size)
        snprintf(cmd, size, "%.*s", (int)len, p);
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
    fflush(stdout); /* at a line boundary of the report (cli_diag) */
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* One line naming the problem; the whole usage is a --help away. */
    if (usage) {
        char cmd[32];
        usage_command(usage, cmd, sizeof(cmd));
        cli_message("%s; see `topoplan %s%s--help`", msg, cmd, cmd[0] ? " " : "");
    } else {
        cli_message("%s", msg);
    }
    return CLI_EXIT_USAGE;
}

/* A decimal count 0..max (the library checks the job's own bounds). */
static int parse_count(const char *text, long max, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < 0 || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static const struct {
    const char *name;
    unsigned bit;
} format_names[] = {
    {"text", CLI_FMT_TEXT},
    {"json", CLI_FMT_JSON},
    {"dot", CLI_FMT_DOT},
    {"svg", CLI_FMT_SVG},
};

unsigned cli_format_bit(const char *text)
{
    for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
        if (strcmp(text, format_names[i].name) == 0)
            return format_names[i].bit;
    return 0;
}

int cli_set_format(cli_ctx *ctx, const char *name, const char *usage)
{
    unsigned bit = cli_format_bit(name);
    if (bit && (bit & ctx->formats)) {
        ctx->svg = bit == CLI_FMT_SVG;
        ctx->format = ctx->svg ? TP_FORMAT_DOT : (tp_format)__builtin_ctz(bit);
        return CLI_EXIT_OK;
    }
    char can[64] = "";
    for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
        if (format_names[i].bit & ctx->formats)
            snprintf(can + strlen(can), sizeof(can) - strlen(can), "%s%s", can[0] ? ", " : "",
                     format_names[i].name);
    return cli_usage_error(usage, "%s: %s format \"%s\" (it writes: %s)", ctx->command,
                           bit ? "no" : "unknown", name, can);
}

/*
 * Options of the commands without a topology: --help and --format. Leaves
 * the operands in argv[*first..argc-1]; returns -1 with *code set when done.
 */
int cli_parse_plain(int argc, char **argv, cli_ctx *ctx, const char *usage, int *first, int *code)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            *code = CLI_EXIT_OK;
            return -1;
        }
        if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc) {
            if ((*code = cli_set_output(ctx, argv[++i], usage)) != CLI_EXIT_OK)
                return -1;
            continue;
        }
        const char *value = strncmp(argv[i], "--format=", 9) == 0 ? argv[i] + 9 : NULL;
        if (!value && strcmp(argv[i], "--format") == 0 && i + 1 < argc)
            value = argv[++i];
        if (!value) {
            *code = cli_usage_error(usage, "%s: bad option \"%s\"", argv[0], argv[i]);
            return -1;
        }
        if ((*code = cli_set_format(ctx, value, usage)) != CLI_EXIT_OK)
            return -1;
    }
    *first = i;
    return 0;
}

int cli_keep(cli_ctx *ctx, void *block)
{
    if (ctx->n_owned == ctx->cap_owned) {
        size_t cap = ctx->cap_owned ? 2 * ctx->cap_owned : 8;
        void **grown = realloc(ctx->owned, cap * sizeof(*grown));
        if (!grown) {
            free(block);
            return -1;
        }
        ctx->owned = grown;
        ctx->cap_owned = cap;
    }
    ctx->owned[ctx->n_owned++] = block;
    return 0;
}

void cli_ctx_release(cli_ctx *ctx)
{
    for (size_t i = 0; i < ctx->n_owned; i++)
        free(ctx->owned[i]);
    free(ctx->owned);
    ctx->owned = NULL;
    ctx->n_owned = ctx->cap_owned = 0;
}

static const struct option parse_opts[] = {
    {"nodes", required_argument, NULL, 'n'},
    {"rank", required_argument, NULL, 'r'},
    {"node-topo", required_argument, NULL, 'T'},
    {"job", required_argument, NULL, 'J'},
    {"builtin", required_argument, NULL, 'b'},
    {"format", required_argument, NULL, 'F'},
    {"graph", required_argument, NULL, 'g'},
    {"baseline", required_argument, NULL, 'B'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Whether option c is one this command takes. */
static bool option_allowed(int c, unsigned extra)
{
    return c != 'o' && (c != 'F' || (extra & CLI_OPT_FORMAT)) &&
           (c != 'g' || (extra & CLI_OPT_GRAPH)) && (c != 'B' || (extra & CLI_OPT_BASELINE));
}

/* Store one option's value; -1 when the value is invalid. */
static int take_option(int c, const char *arg, cli_ctx *ctx, cli_args *a)
{
    switch (c) {
    case 'n':
        a->nodes_given = true;
        return parse_count(arg, TP_MAX_JOB_NODES, &a->in.job.n_nodes) || a->in.job.n_nodes < 1 ? -1
                                                                                               : 0;
    case 'J':
        a->job_file = arg;
        return 0;
    case 'r':
        a->rank_given = true;
        return parse_count(arg, INT_MAX, &a->in.job.rank);
    case 'F':
        return ctx ? 0 : -1; /* checked by the caller: it knows the usage */
    case 'b':
        a->in.builtin = arg;
        return 0;
    case 'T':
        a->node_topos[a->in.job.n_node_topos++] = arg;
        return 0;
    case 'g':
        a->graph = arg;
        return 0;
    default:
        a->baseline = arg;
        return 0;
    }
}

static const char *option_long_name(int c)
{
    for (size_t i = 0; parse_opts[i].name; i++)
        if (parse_opts[i].val == c)
            return parse_opts[i].name;
    return "?";
}

int cli_parse_args(int argc, char **argv, cli_ctx *ctx, cli_syntax syntax, cli_args *a, int *code)
{
    const char *usage = syntax.usage;
    unsigned extra = syntax.options;
    int n_files = syntax.n_files;
    memset(a, 0, sizeof(*a));
    a->in.job.version = TP_JOB_VERSION;
    a->in.job.n_nodes = 1;
    /* --node-topo values point into argv; the list lives as long as the context. */
    a->node_topos = calloc((size_t)argc + 1, sizeof(*a->node_topos));
    if (!a->node_topos || cli_keep(ctx, a->node_topos) != 0) {
        *code = CLI_EXIT_IO;
        return -1;
    }
    a->in.job.node_topos = a->node_topos;
    optind = 0;
    int c;
    opterr = 0; /* our own one-line message, prefixed like every error */
    while ((c = getopt_long(argc, argv, "hn:r:b:o:", parse_opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            *code = CLI_EXIT_OK;
            return -1;
        }
        if (c == 'o' && ctx) { /* -o FILE after the command, as before it */
            if ((*code = cli_set_output(ctx, optarg, usage)) != CLI_EXIT_OK)
                return -1;
            continue;
        }
        if (c == '?' || !option_allowed(c, extra)) {
            *code =
                cli_usage_error(usage, "%s: bad option \"%s\" (unknown, or its value is missing)",
                                argv[0], argv[optind - 1]);
            return -1;
        }
        if (c == 'F' && ctx && (*code = cli_set_format(ctx, optarg, usage)) != CLI_EXIT_OK)
            return -1;
        if (take_option(c, optarg, ctx, a) != 0) {
            *code = c == 'n' ? cli_usage_error(usage,
                                               "invalid value \"%s\" for --nodes "
                                               "(expected 1..%d)",
                                               optarg, TP_MAX_JOB_NODES)
                             : cli_usage_error(usage, "invalid value \"%s\" for --%s", optarg,
                                               option_long_name(c));
            return -1;
        }
    }
    if (a->job_file) {
        if (a->nodes_given || a->in.job.n_node_topos || a->in.builtin) {
            *code = cli_usage_error(usage,
                                    "%s: --job gives the nodes: no --nodes, --node-topo "
                                    "or --builtin with it",
                                    argv[0]);
            return -1;
        }
        if ((*code = cli_load_job(ctx, a, a->job_file)) != 0)
            return -1;
        a->nodes_given = true;
    }
    /* Without --nodes, a job has room for every --node-topo node. */
    if (!a->nodes_given && a->in.job.n_node_topos >= a->in.job.n_nodes)
        a->in.job.n_nodes = a->in.job.n_node_topos + 1;
    /* --builtin NAME or --job FILE stands for the last file argument, the topology. */
    int want = n_files - (a->in.builtin != NULL || a->job_file != NULL);
    if ((extra & CLI_OPT_MANY) && argc - optind >= want && want > 0) {
        a->rest = argv + optind;
        a->n_rest = argc - optind;
        a->in.path = argv[optind];
        return 0;
    }
    if (argc - optind != want) {
        *code = cli_usage_error(usage,
                                "%s: expected %d file argument%s (the topology may be "
                                "--builtin NAME)",
                                argv[0], n_files, n_files == 1 ? "" : "s");
        return -1;
    }
    for (int i = 0; i < n_files - 1; i++)
        a->files[i] = argv[optind + i];
    if (!a->in.builtin && !a->job_file)
        a->in.path = argv[argc - 1];
    return 0;
}

int cli_parse_input(int argc, char **argv, cli_ctx *ctx, const char *usage, cli_input *in,
                    int *exit_code)
{
    cli_args a;
    int st =
        cli_parse_args(argc, argv, ctx, (cli_syntax){.usage = usage, .n_files = 1}, &a, exit_code);
    *in = a.in;
    return st;
}

void cli_name_flag(tp_error *err)
{
    /* The library names the tp_job fields; the user gave them as flags. */
    static const char *const flags[][2] = {{"job.rank", "--rank"},
                                           {"job.n_nodes", "--nodes"},
                                           {"job.node_topos", "--node-topo"},
                                           {"fmt", "--format"}};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strcmp(err->source, flags[i][0]) == 0)
            snprintf(err->source, sizeof(err->source), "%s", flags[i][1]);
}

int cli_unknown_builtin(const char *name)
{
    const char *nearest = tp_builtin_nearest(name);
    if (nearest)
        cli_message("unknown builtin \"%s\" (nearest: %s); see `topoplan builtins`", name, nearest);
    else
        cli_message("unknown builtin \"%s\"; see `topoplan builtins`", name);
    return CLI_EXIT_USAGE;
}

int cli_plan(tp_plan **out, const cli_input *in, const cli_ctx *ctx)
{
    tp_error err = {0};
    return cli_plan_err(out, in, ctx, &err);
}

int cli_plan_err(tp_plan **out, const cli_input *in, const cli_ctx *ctx, tp_error *failure)
{
    tp_error err = {0};
    tp_status st;
    *out = NULL;
    if (in->builtin) {
        const char *xml = tp_builtin_xml(in->builtin);
        if (!xml)
            return cli_unknown_builtin(in->builtin);
        st = tp_plan_buffer(out, xml, strlen(xml), in->builtin, &in->job, ctx->cfg, &err);
    } else {
        st = tp_plan_file(out, in->path, &in->job, ctx->cfg, &err);
    }
    *failure = err;
    if (st == TP_OK)
        cli_setting_notes(ctx, *out);
    return st == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
}

/* A report in its DOT form, for cli_write_dot. */
static tp_status report_dot(FILE *out, const tp_plan *plan, const void *arg, tp_error *err)
{
    cli_report_fn *const *report = arg;
    return (*report)(out, plan, TP_FORMAT_DOT, err);
}

/* Run one report into ctx->out, through Graphviz when SVG was asked for. */
static int cli_write_report(cli_ctx *ctx, const tp_plan *plan, cli_report_fn *report)
{
    tp_error err = {0};
    if (ctx->svg)
        return cli_write_dot(ctx, plan, report_dot, &report);
    return report(ctx->out, plan, ctx->format, &err) == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
}

/* A report command: its report, and what it adds to the plain parse, plan and report. */
typedef struct report_command {
    cli_report_fn *report;
    int default_nodes; /* --nodes when not given (when > 0) */
    bool notes;        /* then notes on a partial topology file */
} report_command;

static int run_report(int argc, char **argv, cli_ctx *ctx, const char *usage, report_command cmd)
{
    cli_args a;
    int code = 0;
    cli_syntax syntax = {.usage = usage, .options = CLI_OPT_FORMAT, .n_files = 1};
    if (cli_parse_args(argc, argv, ctx, syntax, &a, &code) != 0)
        return code;
    if (cmd.default_nodes > 0 && !a.nodes_given)
        a.in.job.n_nodes = cmd.default_nodes;
    tp_plan *plan = NULL;
    code = cli_plan(&plan, &a.in, ctx);
    if (code == CLI_EXIT_OK)
        code = cli_write_report(ctx, plan, cmd.report);
    if (cmd.notes)
        cli_partial_notes(&a.in, plan, ctx->out, true);
    tp_plan_free(plan);
    return code;
}

int cli_run_report(int argc, char **argv, cli_ctx *ctx, const char *usage, cli_report_fn *report)
{
    return run_report(argc, argv, ctx, usage, (report_command){.report = report, .notes = true});
}

int cli_run_net_report(int argc, char **argv, cli_ctx *ctx, const char *usage,
                       cli_report_fn *report)
{
    return run_report(argc, argv, ctx, usage,
                      (report_command){.report = report, .default_nodes = 2, .notes = true});
}

/* The lints of the input: of the text its plan read when there is one, else of the file. */
static tp_status lint_input(tp_lints **l, const cli_input *in, const tp_plan *plan)
{
    tp_error err = {0};
    tp_status st = plan ? tp_lint_plan(l, plan, NULL, &err) : TP_ERR_ARGUMENT;
    return st == TP_ERR_ARGUMENT ? tp_lint_file(l, in->path, NULL, &err) : st;
}

size_t cli_partial_notes(const cli_input *in, const tp_plan *plan, FILE *out, bool to_stderr)
{
    tp_lints *l = NULL;
    if (in->builtin || !in->path || lint_input(&l, in, plan) != TP_OK)
        return 0; /* the command itself reports unreadable input */
    FILE *f = to_stderr ? stderr : out;
    if (to_stderr)
        fflush(stdout); /* at a line boundary of the report (cli_diag) */
    size_t n = tp_lints_count(l), partial = 0;
    for (size_t i = 0; i < n; i++) {
        bool p = tp_lints_is_partial(l, i);
        partial += p;
        if (to_stderr)
            cli_message("%s: %s: %s", in->path, p ? "partial file" : "lint",
                        tp_lints_message(l, i));
        else
            fprintf(f, "%s: %s\n", p ? "partial" : "lint", tp_lints_message(l, i));
    }
    if (partial) {
        const char *sku = tp_lints_sku(l);
        const char *cands = tp_lints_candidates(l);
        char path[1100];
        tp_printable(path, sizeof(path), in->path);
        fprintf(f,
                "%s%s%sNCCL completes this file at run time; for the topology it would hold, "
                "run `topoplan complete %s --sku %s -o FULL.xml`",
                to_stderr ? "topoplan: " : "hint: ", to_stderr ? path : "", to_stderr ? ": " : "",
                path, *sku ? sku : "NAME");
        if (!*sku)
            fprintf(f, " (%s%s)", *cands ? "candidates: " : "see `topoplan complete --list`",
                    cands);
        fputs("\n", f);
    }
    tp_lints_free(l);
    return n;
}

void cli_note_partial_profile(const char *nccl)
{
    for (int i = 0; i < tp_nccl_profile_count(); i++) {
        tp_nccl_profile_info info;
        if (tp_nccl_profile_info_at(i, &info, sizeof(info), NULL) != TP_OK ||
            strcmp(info.nccl, nccl) != 0 || info.exact)
            continue;
        fprintf(stderr,
                "topoplan: note: the prediction is not yet exact for NCCL %s (%d of %d public "
                "conformance cases pass; `topoplan versions`)\n",
                info.nccl, info.public_passed, info.public_total);
    }
}
