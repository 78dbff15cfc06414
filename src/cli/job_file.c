/*
 * --job FILE: a job description for reuse. One item per line, '#' starts a
 * comment:
 *   COUNT x TOPO.xml   COUNT nodes planned on TOPO.xml (relative to the job
 *                      file's folder), in order: the first line's first node
 *                      is node 0
 *   NCCL_*=VALUE       a configuration variable (applied over the environment
 *                      and --env)
 *   rank R             the reported rank (--rank wins)
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A path relative to the job file's folder (absolute paths stay). Kept by the context. */
static const char *job_path(cli_ctx *ctx, const char *job, const char *name)
{
    const char *slash = strrchr(job, '/');
    size_t dir = name[0] == '/' || !slash ? 0 : (size_t)(slash - job + 1);
    char *p = malloc(dir + strlen(name) + 1);
    if (!p || cli_keep(ctx, p) != 0)
        return NULL;
    memcpy(p, job, dir);
    strcpy(p + dir, name);
    return p;
}

/* A line's item and where it starts in the file (FILE:LINE:COL). */
typedef struct job_line {
    const char *path;
    int line, col;
} job_line;

static int job_error(const job_line *at, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int job_error(const job_line *at, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cli_message("%s:%d:%d: %s", at->path, at->line, at->col, msg);
    return CLI_EXIT_INPUT;
}

/* "COUNT x FILE": append COUNT nodes. */
static int take_nodes(cli_ctx *ctx, cli_args *a, const job_line *at, char *text)
{
    char *end = NULL;
    errno = 0;
    long count = strtol(text, &end, 10);
    bool huge = errno == ERANGE || count > TP_MAX_JOB_NODES;
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == text || *end != 'x' || (end[1] != ' ' && end[1] != '\t' && end[1] != '\0'))
        return job_error(at, "expected \"COUNT x TOPO.xml\", NCCL_*=VALUE or \"rank R\"");
    if (huge || count < 1)
        return job_error(at, "%.*s nodes: a job has 1 to %d,%03d nodes", (int)strcspn(text, " \tx"),
                         text, TP_MAX_JOB_NODES / 1000, TP_MAX_JOB_NODES % 1000);
    end++;
    while (*end == ' ' || *end == '\t')
        end++;
    if (!*end)
        return job_error(at, "no topology file after \"x\"");
    if (a->in.job.n_nodes + count > TP_MAX_JOB_NODES)
        return job_error(at, "%ld more nodes make %ld: a job has at most %d,%03d nodes", count,
                         a->in.job.n_nodes + count, TP_MAX_JOB_NODES / 1000,
                         TP_MAX_JOB_NODES % 1000);
    const char *file = job_path(ctx, at->path, end);
    if (!file)
        return CLI_EXIT_IO;
    for (long i = 0; i < count; i++) {
        if (a->in.job.n_nodes == 0)
            a->in.path = file;
        else
            a->node_topos[a->in.job.n_node_topos++] = file;
        a->in.job.n_nodes++;
    }
    return 0;
}

static int take_line(cli_ctx *ctx, cli_args *a, const job_line *at, char *text)
{
    char *eq = strchr(text, '=');
    if (strncmp(text, "NCCL_", 5) == 0 && eq) {
        *eq = '\0';
        tp_error err = {0};
        if (tp_config_set(ctx->cfg, text, eq + 1, &err) != TP_OK)
            return job_error(at, "%s", err.message);
        return 0;
    }
    if (strncmp(text, "rank", 4) == 0 && isspace((unsigned char)text[4])) {
        char *end = NULL;
        long r = strtol(text + 5, &end, 10);
        if (end == text + 5 || *end || r < 0 || r > INT32_MAX)
            return job_error(at, "expected \"rank R\"");
        if (!a->rank_given)
            a->in.job.rank = (int)r;
        return 0;
    }
    return take_nodes(ctx, a, at, text);
}

/* Strip comments and surrounding blanks in place. */
static char *trim(char *s)
{
    char *hash = strchr(s, '#');
    if (hash)
        *hash = '\0';
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

int cli_load_job(cli_ctx *ctx, cli_args *a, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    tp_error err = {0};
    if (tp_read_file(&text, &len, path, &err) != TP_OK)
        return cli_fail(&err);
    /* Every line may name nodes: room for the most the library takes. */
    const char **topos = calloc(TP_MAX_JOB_NODES, sizeof(*topos));
    if (!topos || cli_keep(ctx, topos) != 0) {
        free(text);
        return CLI_EXIT_IO;
    }
    a->node_topos = topos;
    a->in.job.node_topos = topos;
    a->in.job.n_node_topos = 0;
    a->in.job.n_nodes = 0;
    int code = 0, line = 0;
    for (char *s = text, *next; s && code == 0; s = next) {
        next = strchr(s, '\n');
        if (next)
            *next++ = '\0';
        line++;
        char *item = trim(s);
        job_line at = {path, line, (int)(item - s) + 1};
        if (*item)
            code = take_line(ctx, a, &at, item);
    }
    free(text);
    job_line last = {path, line, 1};
    if (code == 0 && a->in.job.n_nodes == 0)
        code = job_error(&last, "no \"COUNT x TOPO.xml\" line: the job has no node");
    return code;
}
