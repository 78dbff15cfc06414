/* The command-line layer: shared context, helpers and exit codes. */
#ifndef TP_CLI_H
#define TP_CLI_H

#include "topoplan.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit codes (listed by `topoplan help exit-codes`). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_NEGATIVE = 1, /* check found deviations, diff found differences */
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_INPUT = 3,    /* invalid XML, topology, configuration or graph */
    CLI_EXIT_IO = 4,       /* I/O or out of memory */
    CLI_EXIT_INTERNAL = 5, /* a bug in topoplan */
};

/* Output formats, as bits of the set a command writes (cli_ctx.formats). */
typedef enum cli_fmt_bit {
    CLI_FMT_TEXT = 1u << TP_FORMAT_TEXT,
    CLI_FMT_JSON = 1u << TP_FORMAT_JSON,
    CLI_FMT_DOT = 1u << TP_FORMAT_DOT,
    CLI_FMT_SVG = 1u << 3, /* DOT rendered by Graphviz in the CLI */
} cli_fmt_bit;

/* An output file written beside its target and renamed over it on success (tp_output). */
typedef struct cli_out_file {
    FILE *f;          /* NULL when not open */
    const char *name; /* as given, for messages */
    tp_output *out;
} cli_out_file;

/* Open a new file for `path` (o->f); prints the error and returns CLI_EXIT_IO on failure. */
int cli_out_open(cli_out_file *o, const char *path);
/*
 * Close it: when `keep` and every write succeeded it replaces the target, otherwise the
 * target stays as it was. Returns CLI_EXIT_IO (the error printed) when a write failed.
 */
int cli_out_close(cli_out_file *o, bool keep);

/* The setting notes printed so far (each once, however many plans a command makes). */
typedef struct cli_seen {
    char **notes;
    size_t n, cap;
    bool planned; /* a plan's notes were printed: the configuration's alone are not needed */
} cli_seen;

typedef struct cli_ctx {
    tp_config *cfg;   /* from the environment and --env options */
    tp_format format; /* --format (svg: TP_FORMAT_DOT with svg set) */
    bool svg;         /* --format svg: render the DOT report to SVG */
    unsigned formats; /* cli_fmt_bit set: what the running command writes */
    const char *command;
    FILE *out;           /* stdout or -o FILE */
    cli_out_file report; /* -o FILE (global or after the command), when given */
    cli_seen *seen;      /* setting notes printed (may be NULL: none printed) */
    const char *html;    /* check/diff --report FILE.html: also write the HTML page there */
    void **owned;        /* blocks parsed options point into, freed by cli_ctx_release */
    size_t n_owned, cap_owned;
} cli_ctx;

/* Give a heap block to the context (freed by cli_ctx_release); -1 (block freed) on no memory. */
int cli_keep(cli_ctx *ctx, void *block);
/* Free what the context owns (not cfg or out). */
void cli_ctx_release(cli_ctx *ctx);

typedef int cli_fn(int argc, char **argv, cli_ctx *ctx);

typedef struct cli_cmd {
    const char *name;
    cli_fn *fn;
    unsigned formats; /* CLI_FMT_* */
    const char *summary;
} cli_cmd;

/* Options every planning command takes: input and job. */
typedef struct cli_input {
    const char *path;    /* topology XML, or NULL with builtin */
    const char *builtin; /* --builtin NAME */
    tp_job job;
} cli_input;

/* Options beyond --nodes, --rank, --node-topo, --job, --builtin and --help that a command takes. */
/* CLI_OPT_MANY: n_files is a minimum; every file argument goes to cli_args.rest. */
typedef enum cli_option_bit {
    CLI_OPT_FORMAT = 1u,
    CLI_OPT_GRAPH = 2u,
    CLI_OPT_BASELINE = 4u,
    CLI_OPT_MANY = 8u,
} cli_option_bit;

/* A planning command's syntax: its usage text, options and file arguments. */
typedef struct cli_syntax {
    const char *usage;
    unsigned options; /* cli_option_bit set */
    int n_files;      /* file arguments, the topology last */
} cli_syntax;

/* A parsed planning command line. */
typedef struct cli_args {
    cli_input in;            /* the job and the topology: the last file argument or --builtin */
    const char *files[2];    /* the file arguments before the topology */
    const char *graph;       /* --graph */
    const char *baseline;    /* --baseline */
    const char **node_topos; /* --node-topo values (owned by the context) */
    const char *job_file;    /* --job */
    char **rest;             /* CLI_OPT_MANY: the file arguments (into argv) */
    int n_rest;
    bool rank_given;  /* --rank was on the command line */
    bool nodes_given; /* --nodes was on the command line */
} cli_args;

/*
 * Parse --nodes, --rank, --node-topo (repeatable), --builtin, --help, the
 * syntax's options (--format sets ctx->format) and exactly its n_files file
 * arguments; --builtin NAME replaces the last one (the topology). Returns 0,
 * or -1 with *code set after printing the help or a usage error.
 */
int cli_parse_args(int argc, char **argv, cli_ctx *ctx, cli_syntax syntax, cli_args *a, int *code);
/* "text" | "json" | "dot" | "svg" as CLI_FMT_* bit; 0 when unknown. */
unsigned cli_format_bit(const char *text);
/*
 * Set ctx's format from --format NAME. A name the running command cannot
 * write is a usage error (exit 2) listing the ones it can; returns the exit code.
 */
int cli_set_format(cli_ctx *ctx, const char *name, const char *usage);
/*
 * Options of the commands without a topology: --help and --format. Leaves
 * the operands in argv[*first..argc-1]; returns -1 with *code set when done.
 */
int cli_parse_plain(int argc, char **argv, cli_ctx *ctx, const char *usage, int *first, int *code);
/* Write a DOT text as SVG (Graphviz' dot layout) to out; returns the exit code. */
int cli_render_svg(FILE *out, const char *dot, size_t len);
/* Something that writes one DOT graph of a plan (a report's DOT form, a plan picture). */
typedef tp_status cli_dot_fn(FILE *out, const tp_plan *plan, const void *arg, tp_error *err);
/* Write what `draw` writes to ctx->out, as SVG when ctx->svg; returns the exit code. */
int cli_write_dot(cli_ctx *ctx, const tp_plan *plan, cli_dot_fn *draw, const void *arg);

/*
 * A diagnostic on stderr ("topoplan: ..." lines). Standard output is flushed
 * first, so a diagnostic lands at a line boundary of the report even when both
 * streams go to one pipe (`plan ... 2>&1 | less`).
 */
void cli_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Print on stderr, once each, the setting notes (tp_setting_notes) of a plan,
 * or of the context's configuration alone when plan is NULL and no plan's
 * notes were printed: "topoplan: setting: NCCL_ALGO=Rnig: ...".
 */
void cli_setting_notes(const cli_ctx *ctx, const tp_plan *plan);
/* Free the notes printed (cli_seen). */
void cli_seen_release(cli_seen *seen);

/* Exit code for a status: the only mapping. */
int cli_exit_for(tp_status st);
/*
 * Print "topoplan: <error>" on stderr; return the exit code. A write error
 * on the report stream (no source) is left to main, which names the file.
 */
int cli_fail(const tp_error *err);
/* tp_printable(s) to out (messages up to 2 KiB): file names and values echoed safely. */
void cli_put_printable(FILE *out, const char *s);
/*
 * A diagnostic on stderr, as given. Standard output is flushed first, so a
 * diagnostic lands at a line boundary of the report even when both streams go
 * to one pipe (`plan ... 2>&1 | less`); cli_message and the usage errors too.
 */
void cli_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "topoplan: " + the formatted message through cli_put_printable + newline, on stderr. */
void cli_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* -o FILE after the command: open it as the report stream (usage error when given twice). */
int cli_set_output(cli_ctx *ctx, const char *path, const char *usage);
/* Print "topoplan: <cmd>: message" and the usage (unless NULL) on stderr; return CLI_EXIT_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, ...);
/* "unknown builtin NAME (nearest: ...)" on stderr; returns CLI_EXIT_USAGE. */
int cli_unknown_builtin(const char *name);
/* cli_parse_args() for commands that take one topology and no other option. */
int cli_parse_input(int argc, char **argv, cli_ctx *ctx, const char *usage, cli_input *in,
                    int *exit_code);
/* Rename an error's library source ("job.rank") to the CLI flag it came from ("--rank"). */
void cli_name_flag(tp_error *err);
/* Plan the input with the context's config. On failure prints the error. */
int cli_plan(tp_plan **out, const cli_input *in, const cli_ctx *ctx);
/* cli_plan() that also returns the planning error in *failure. */
int cli_plan_err(tp_plan **out, const cli_input *in, const cli_ctx *ctx, tp_error *failure);

/* Parse the input options, plan, and write one report in the context's format. */
typedef tp_status cli_report_fn(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
int cli_run_report(int argc, char **argv, cli_ctx *ctx, const char *usage, cli_report_fn *report);
/* cli_run_report() for the NIC views: --nodes defaults to 2 (NCCL uses no NIC on one node). */
int cli_run_net_report(int argc, char **argv, cli_ctx *ctx, const char *usage,
                       cli_report_fn *report);

/*
 * Plan `first` (the reference) and `second` for the same job under the
 * context's config, compare them and write the diff (check == false) or
 * check report. Exit 0 when identical / healthy, 1 when not, 3 on bad input.
 */
int cli_compare_run(const cli_input *first, const cli_input *second, cli_ctx *ctx, bool check);
/* Same, planning `first` under first_cfg and `second` under second_cfg (NULL: the context's). */
int cli_compare_run_env(const cli_input *first, const cli_input *second, const tp_config *first_cfg,
                        const tp_config *second_cfg, cli_ctx *ctx, bool check);

/*
 * Partial-file findings and provider-file lints of the input's file (nothing
 * for builtins), then the `complete` command to run when the file is partial.
 * plan (may be NULL): the plan of `in`, whose text is linted instead of
 * reading the file again. to_stderr: "topoplan: FILE: ..." lines on stderr;
 * else "partial: ...", "lint: ..." and "hint: ..." lines on out. Returns the
 * number of findings.
 */
size_t cli_partial_notes(const cli_input *in, const tp_plan *plan, FILE *out, bool to_stderr);

/*
 * Read a --job file into a (nodes, topologies, rank unless --rank was given)
 * and apply its NCCL_* lines to ctx->cfg. 0, or the exit code after an error.
 */
int cli_load_job(cli_ctx *ctx, cli_args *a, const char *path);

/* One node's effect on a job of reference nodes (job_effect.c). */
typedef struct cli_job_effect_t {
    bool known;                      /* both jobs planned */
    int n_nodes;                     /* nodes of the job (at least 2) */
    int channels_base, channels_odd; /* collective channels without / with the node */
    int search_base, search_odd;     /* ring/tree search channels after combination */
    tp_job_cost cost;                /* NCCL's tuning model: AllReduce without / with the node */
} cli_job_effect_t;

/*
 * Plan a job of n_nodes (at least 2) nodes of `base` and the same job with
 * node 1 planned on the file `odd`, and state the cost (cmp, may be NULL:
 * tp_comparison_set_job rates its root causes by it); 0, or -1 when either
 * job does not plan.
 */
int cli_job_effect(cli_job_effect_t *fx, const cli_input *base, const char *odd, int n_nodes,
                   const cli_ctx *ctx, tp_comparison *cmp);
/* "Job effect (NCCL's tuning model ...): AllReduce 1 MiB ...; collective channels ...". */
void cli_job_effect_text(FILE *out, const cli_job_effect_t *fx, const char *base, const char *odd);

/* Fleet check: every NODE (files, or .xml files of folders) against the baseline. */
int cli_fleet_check(const cli_args *a, const cli_input *baseline, cli_ctx *ctx);

int cmd_nccl_log(int argc, char **argv, cli_ctx *ctx);
int cmd_plan(int argc, char **argv, cli_ctx *ctx);
int cmd_matrix(int argc, char **argv, cli_ctx *ctx);
int cmd_paths(int argc, char **argv, cli_ctx *ctx);
int cmd_search(int argc, char **argv, cli_ctx *ctx);
int cmd_builtins(int argc, char **argv, cli_ctx *ctx);
int cmd_env(int argc, char **argv, cli_ctx *ctx);
int cmd_versions(int argc, char **argv, cli_ctx *ctx);
int cmd_hca(int argc, char **argv, cli_ctx *ctx);
int cmd_diff(int argc, char **argv, cli_ctx *ctx);
int cmd_check(int argc, char **argv, cli_ctx *ctx);
int cmd_graph_check(int argc, char **argv, cli_ctx *ctx);
int cmd_validate(int argc, char **argv, cli_ctx *ctx);
int cmd_mutate(int argc, char **argv, cli_ctx *ctx);
int cmd_nics(int argc, char **argv, cli_ctx *ctx);
int cmd_complete(int argc, char **argv, cli_ctx *ctx);
int cmd_tune(int argc, char **argv, cli_ctx *ctx);
int cmd_verify(int argc, char **argv, cli_ctx *ctx);
int cmd_report(int argc, char **argv, cli_ctx *ctx);

/* One stderr line when the selected NCCL profile is not yet exact on its public suite. */
void cli_note_partial_profile(const tp_config *cfg);
/* Take `flag` VALUE out of argv (the last one wins); 0, or -1 when its value is missing. */
int cli_take_value(int *argc, char **argv, const char *flag, const char **value);
/* Something that writes an HTML page. */
typedef tp_status cli_html_fn(FILE *out, const void *arg, tp_error *err);
/* Write a page to path; a failure names the path and the system error. Returns the exit code. */
int cli_write_html(const char *path, cli_html_fn *write, const void *arg);

#endif
