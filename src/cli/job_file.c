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

static int job_error(const char *path, int line, const char *what)
{
    cli_message("%s:%d: %s", path, line, what);
    return CLI_EXIT_INPUT;
}

/* "COUNT x FILE": append COUNT nodes. */
static int take_nodes(cli_ctx *ctx, cli_args *a, const char *path, int line, char *text)
{
    char *end = NULL;
    long count = strtol(text, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == text || count < 1 || count > TP_MAX_JOB_NODES || *end != 'x' ||
        (end[1] != ' ' && end[1] != '\t'))
        return job_error(path, line, "expected \"COUNT x TOPO.xml\", NCCL_*=VALUE or \"rank R\"");
    end++;
    while (*end == ' ' || *end == '\t')
        end++;
    if (!*end)
        return job_error(path, line, "no topology file after \"x\"");
    if (a->in.job.n_nodes + count > TP_MAX_JOB_NODES)
        return job_error(path, line, "too many nodes");
    const char *file = job_path(ctx, path, end);
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

static int take_line(cli_ctx *ctx, cli_args *a, const char *path, int line, char *text)
{
    char *eq = strchr(text, '=');
    if (strncmp(text, "NCCL_", 5) == 0 && eq) {
        *eq = '\0';
        tp_error err = {0};
        if (tp_config_set(ctx->cfg, text, eq + 1, &err) != TP_OK)
            return job_error(path, line, err.message);
        return 0;
    }
    if (strncmp(text, "rank", 4) == 0 && isspace((unsigned char)text[4])) {
        char *end = NULL;
        long r = strtol(text + 5, &end, 10);
        if (end == text + 5 || *end || r < 0 || r > INT32_MAX)
            return job_error(path, line, "expected \"rank R\"");
        if (!a->rank_given)
            a->in.job.rank = (int)r;
        return 0;
    }
    return take_nodes(ctx, a, path, line, text);
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
        if (*item)
            code = take_line(ctx, a, path, line, item);
    }
    free(text);
    if (code == 0 && a->in.job.n_nodes == 0)
        code = job_error(path, line, "no \"COUNT x TOPO.xml\" line: the job has no node");
    return code;
}
