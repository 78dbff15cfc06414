/* Shared helpers of the unit tests. */
#include "helpers.h"

#include "xml/xml.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tp_status helpers_try_plan(tp_plan **out, const char *xml, const char *const *env, int n_nodes,
                           int rank, tp_error *err)
{
    tp_config *cfg = NULL;
    const char *const none[] = {NULL};
    tp_status st = tp_config_new(&cfg, env ? env : none, err);
    if (st != TP_OK)
        return st;
    tp_job job = {.n_nodes = n_nodes, .rank = rank};
    st = tp_plan_buffer(out, xml, strlen(xml), "<test>", &job, cfg, err);
    tp_config_free(cfg);
    return st;
}

tp_plan *helpers_plan(const char *xml, const char *const *env, int n_nodes, int rank)
{
    tp_plan *plan = NULL;
    tp_error err = {0};
    tp_status st = helpers_try_plan(&plan, xml, env, n_nodes, rank, &err);
    if (st != TP_OK) {
        char msg[1024];
        tp_error_format(&err, msg, sizeof(msg));
        print_error("plan failed: %s\n", msg);
        tp_plan_free(plan);
        fail();
    }
    return plan;
}

tp_plan *helpers_plan_xml_at(const char *xml, const char *nccl, const char *const *env, int n_nodes)
{
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env ? env : none, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, nccl, &err), TP_OK);
    tp_job job = TP_JOB_INIT;
    job.n_nodes = n_nodes;
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "<test>", &job, cfg, &err), TP_OK);
    tp_config_free(cfg);
    return plan;
}

tp_plan *helpers_plan_fixture_at(const char *name, const char *nccl, const char *const *env,
                                 int n_nodes)
{
    char *xml = helpers_fixture(name);
    tp_plan *plan = helpers_plan_xml_at(xml, nccl, env, n_nodes);
    free(xml);
    return plan;
}

char *helpers_fixture(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "tests/fixtures/%s", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("cannot open %s\n", path);
        fail();
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return buf;
}

int helpers_gpu_index(const tp_system *sys, int64_t bus_id)
{
    int idx = tp_system__index_of(sys, TP_NODE_GPU, bus_id);
    if (idx < 0) {
        print_error("no GPU %llx\n", (long long)bus_id);
        fail();
    }
    return idx;
}

int helpers_log_has(const tp_plan *plan, const char *text)
{
    for (size_t i = 0; i < plan->log.n_lines; i++)
        if (strcmp(plan->log.lines[i].text, text) == 0)
            return 1;
    return 0;
}

int helpers_each_file(const char *pattern,
                      void (*check)(const char *path, const char *text, size_t len, void *ctx),
                      void *ctx)
{
    glob_t g;
    int seen = 0;
    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *text = NULL;
        size_t len = 0;
        tp_error err = {0};
        if (tp_xml__read_file(&text, &len, g.gl_pathv[i], &err) != TP_OK)
            continue;
        seen++;
        check(g.gl_pathv[i], text, len, ctx);
        free(text);
    }
    globfree(&g);
    return seen;
}
