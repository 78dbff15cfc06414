/*
 * Fuzz target: a --job file (src/cli/job_file.c, the CLI's reader, built in here with
 * stand-ins for the CLI helpers it calls), then the job it describes planned and
 * reported when its topologies are the two files of the target's own folder (a.xml: DGX
 * H100, b.xml: V100; "COUNT x a.xml" lines) and it has at most 64 nodes.
 */
#include "fuzz_common.h"

#include "../../src/cli/job_file.c"

#include <stdlib.h>
#include <unistd.h>

int cli_keep(cli_ctx *ctx, void *block)
{
    void **grown = realloc(ctx->owned, (ctx->n_owned + 1) * sizeof(*grown));
    if (!grown) {
        free(block);
        return -1;
    }
    ctx->owned = grown;
    ctx->owned[ctx->n_owned++] = block;
    return 0;
}

int cli_fail(const tp_error *err)
{
    return err->code == TP_ERR_INTERNAL ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT;
}

/* The reader's one-line messages are expected: formatted (their arguments read) and dropped. */
void cli_message(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
}

static char job_dir[] = "/tmp/topoplan-fuzz-job-XXXXXX";

static void remove_folder(void)
{
    const char *names[] = {"a.xml", "b.xml", "job.txt"};
    for (size_t i = 0; i < 3; i++) {
        char path[sizeof(job_dir) + 8];
        snprintf(path, sizeof(path), "%s/%s", job_dir, names[i]);
        unlink(path);
    }
    rmdir(job_dir);
}

/* The target's folder: a.xml and b.xml, written once per process, removed at exit. */
static const char *job_folder(void)
{
    char *dir = job_dir;
    static bool ready;
    if (ready)
        return dir;
    if (!mkdtemp(dir))
        return NULL;
    atexit(remove_folder);
    const char *files[][2] = {{"a.xml", "dgx-h100"}, {"b.xml", "v100-nv2"}};
    for (size_t i = 0; i < 2; i++) {
        char path[sizeof(job_dir) + 8];
        snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
        FILE *f = fopen(path, "w");
        if (!f)
            return NULL;
        fputs(tp_builtin_xml(files[i][1]), f);
        fclose(f);
    }
    ready = true;
    return dir;
}

/* Whether a topology path is one of the folder's files (a fuzzed name could be a device). */
static bool in_folder(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (!path || strncmp(path, dir, n) != 0 || path[n] != '/')
        return false;
    return strcmp(path + n + 1, "a.xml") == 0 || strcmp(path + n + 1, "b.xml") == 0;
}

static void plan_job(const cli_args *a, const cli_ctx *ctx, const char *dir)
{
    if (a->in.job.n_nodes > 64 || !in_folder(a->in.path, dir))
        return;
    for (int i = 0; i < a->in.job.n_node_topos; i++)
        if (!in_folder(a->in.job.node_topos[i], dir))
            return;
    tp_plan *plan = NULL;
    tp_error err = {0};
    fuzz_require_no_bug(tp_plan_file(&plan, a->in.path, &a->in.job, ctx->cfg, &err));
    if (plan && tp_plan_status(plan) == TP_OK) {
        FILE *out = fuzz_sink();
        fuzz_require_no_bug(tp_report_plan(out, plan, TP_FORMAT_TEXT, &err));
        fuzz_require_no_bug(tp_report_nics(out, plan, TP_FORMAT_JSON, &err));
    }
    tp_plan_free(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = job_folder();
    if (!dir)
        return 0;
    char path[64];
    snprintf(path, sizeof(path), "%s/job.txt", dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    cli_ctx ctx = {0};
    tp_error err = {0};
    const char *const no_env[] = {NULL};
    if (tp_config_new(&ctx.cfg, no_env, &err) == TP_OK) {
        cli_args a = {.in.job = TP_JOB_INIT};
        if (cli_load_job(&ctx, &a, path) == 0)
            plan_job(&a, &ctx, dir);
    }
    tp_config_free(ctx.cfg);
    for (size_t i = 0; i < ctx.n_owned; i++)
        free(ctx.owned[i]);
    free(ctx.owned);
    return 0;
}
