/* topoplan: global options, the command table and dispatch. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static const cli_cmd cmds[] = {
    {"nccl-log", cmd_nccl_log, "the log lines NCCL 2.22.3 prints for a rank"},
    {"plan", cmd_plan, "the main view: graphs, channels and why, rings, trees"},
    {"paths", cmd_paths, "path matrix between GPUs and NICs, with bottlenecks"},
    {"search", cmd_search, "graph search results with their decision trace"},
    {"graph-check", cmd_graph_check, "check an NCCL_GRAPH_FILE against a topology"},
    {"validate", cmd_validate, "does NCCL accept this topology (and graph file)? notes"},
    {"mutate", cmd_mutate, "what-if edits of a topology (attributes, removals, NVLinks)"},
    {"diff", cmd_diff, "differences of two topologies, layer by layer, and why"},
    {"check", cmd_check, "health check of a node's topology against a baseline"},
    {"hca", cmd_hca, "which IB devices an NCCL_IB_HCA value selects"},
    {"nics", cmd_nics, "which NIC each rank uses per channel and peer: rails, PXN, GDR"},
    {"builtins", cmd_builtins, "list the built-in topologies (or print one)"},
    {"env", cmd_env, "the effective NCCL_* parameters"},
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
    "  --format text|json|dot  output format of readable reports (default text)\n"
    "  -o, --output FILE     write the report to FILE instead of standard output\n";

static const char exit_codes[] =
    "Exit codes:\n"
    "  0  success\n"
    "  1  negative answer: check found deviations, diff found differences, a graph is\n"
    "     infeasible, hca selected nothing\n"
    "  2  usage error\n"
    "  3  invalid input: XML, topology, configuration, graph file, or a failure NCCL\n"
    "     itself reports\n"
    "  4  I/O error or out of memory\n"
    "  5  internal error (a bug in topoplan: please report it with the input)\n";

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
    tp_format format;
} global_opts;

static int parse_globals(int argc, char **argv, global_opts *g)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},          {"version", no_argument, NULL, 'V'},
        {"env", required_argument, NULL, 'E'},     {"no-env", no_argument, NULL, 'N'},
        {"format", required_argument, NULL, 'F'},  {"output", required_argument, NULL, 'o'},
        {"env-file", required_argument, NULL, 'f'}, {NULL, 0, NULL, 0},
    };
    int c;
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
            if (cli_parse_format(optarg, &g->format))
                return cli_usage_error(usage, "unknown format \"%s\" (expected text, json or dot)",
                                       optarg);
            break;
        case 'o':
            g->output = optarg;
            break;
        default:
            return cli_usage_error(usage, "bad global option");
        }
    }
    return 0;
}

/* Apply the KEY=VALUE lines of an env file; a bad line is a usage error naming it. */
static int apply_env_file(tp_config *cfg, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "topoplan: %s: cannot open: %s\n", path, strerror(errno));
        return CLI_EXIT_IO;
    }
    char line[4096];
    int code = 0;
    tp_error err = {0};
    for (unsigned n = 1; code == 0 && fgets(line, sizeof(line), f); n++) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if (!eq || eq == line) {
            fprintf(stderr, "topoplan: %s:%u: expected KEY=VALUE, got \"%s\"\n", path, n, line);
            code = CLI_EXIT_USAGE;
            break;
        }
        *eq = '\0';
        if (tp_config_set(cfg, line, eq + 1, &err) != TP_OK)
            code = cli_fail(&err);
    }
    fclose(f);
    return code;
}

static int build_config(cli_ctx *ctx, const global_opts *g)
{
    tp_error err = {0};
    const char *const empty[] = {NULL};
    if (tp_config_new(&ctx->cfg, g->no_env ? empty : (const char *const *)environ, &err))
        return cli_fail(&err);
    for (size_t i = 0; i < g->n_env_files; i++) {
        int code = apply_env_file(ctx->cfg, g->env_files[i]);
        if (code)
            return code;
    }
    for (size_t i = 0; i < g->n_env; i++) {
        char key[256];
        const char *eq = strchr(g->env_list[i], '=');
        snprintf(key, sizeof(key), "%.*s", (int)(eq - g->env_list[i]), g->env_list[i]);
        if (tp_config_set(ctx->cfg, key, eq + 1, &err))
            return cli_fail(&err);
    }
    return 0;
}

static int finish_output(cli_ctx *ctx, int code)
{
    int bad = fflush(ctx->out) != 0 || ferror(ctx->out);
    if (ctx->out != stdout)
        bad |= fclose(ctx->out) != 0;
    if (bad) {
        fprintf(stderr, "topoplan: error writing the output\n");
        return code ? code : CLI_EXIT_IO;
    }
    return code;
}

int main(int argc, char **argv)
{
    global_opts g = {.env_list = calloc((size_t)argc + 1, sizeof(char *)),
                     .env_files = calloc((size_t)argc + 1, sizeof(char *))};
    cli_ctx ctx = {.out = stdout};
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
        } else {
            print_help();
        }
        free(g.env_list);
        free(g.env_files);
        return code;
    }
    const cli_cmd *cmd = code == 0 ? find_cmd(argv[optind]) : NULL;
    if (code == 0 && !cmd)
        code = cli_usage_error(usage, "unknown command \"%s\"", argv[optind]);
    if (code == 0)
        code = build_config(&ctx, &g);
    if (code == 0 && g.output && !(ctx.out = fopen(g.output, "w"))) {
        perror(g.output);
        ctx.out = stdout;
        code = CLI_EXIT_IO;
    }
    ctx.format = g.format;
    if (code == 0)
        code = finish_output(&ctx, cmd->fn(argc - optind, argv + optind, &ctx));
    tp_config_free(ctx.cfg);
    free(g.env_list);
    free(g.env_files);
    return code;
}
