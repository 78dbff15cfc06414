/*
 * Fuzz target: any bytes as an NCCL graph file, replayed by the planner
 * (NCCL_GRAPH_FILE) and checked by graph-check, on the built-in 4 x V100.
 */
#include "topoplan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void replay(const char *topo, const char *graph_path)
{
    char setting[4200];
    snprintf(setting, sizeof(setting), "NCCL_GRAPH_FILE=%s", graph_path);
    const char *const env[] = {setting, NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) != TP_OK)
        return;
    tp_plan *plan = NULL;
    tp_job job = {.n_nodes = 1, .rank = 0};
    tp_plan_buffer(&plan, topo, strlen(topo), "<builtin>", &job, cfg, &err);
    tp_plan_free(plan);
    tp_config_free(cfg);
}

static void check(const char *topo, const uint8_t *data, size_t size)
{
    const char *const env[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) != TP_OK)
        return;
    tp_plan *plan = NULL;
    tp_job job = {.n_nodes = 1, .rank = 0};
    if (tp_plan_buffer(&plan, topo, strlen(topo), "<builtin>", &job, cfg, &err) == TP_OK) {
        tp_graph_check *chk = NULL;
        tp_graph_check_buffer(&chk, plan, (const char *)data, size, "<fuzz>", &err);
        tp_graph_check_free(chk);
    }
    tp_plan_free(plan);
    tp_config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *topo = tp_builtin_xml("v100-nv2");
    char path[] = "/tmp/topoplan-fuzz-graph-XXXXXX";
    int fd = mkstemp(path);
    if (!topo || fd < 0)
        return 0;
    FILE *f = fdopen(fd, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
        replay(topo, path);
    } else {
        close(fd);
    }
    unlink(path);
    check(topo, data, size);
    return 0;
}
