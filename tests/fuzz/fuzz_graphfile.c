/*
 * Fuzz target: any bytes as an NCCL graph file, replayed by the planner
 * (NCCL_GRAPH_FILE, 1 and 2 nodes) and checked by graph-check, on a builtin
 * with NETs when the file names NETs, else on one without.
 */
#include "fuzz_common.h"

#include <unistd.h>

static void replay(const char *builtin, const char *graph_path)
{
    char setting[4200];
    snprintf(setting, sizeof(setting), "NCCL_GRAPH_FILE=%s", graph_path);
    const char *const env[] = {setting, NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) != TP_OK)
        return;
    fuzz_plan_builtin(builtin, cfg);
    tp_config_free(cfg);
}

static void check(const char *builtin, const uint8_t *data, size_t size)
{
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, NULL, &err) != TP_OK)
        return;
    {
        const char *topo = tp_builtin_xml(builtin);
        tp_job job = TP_JOB_INIT;
        tp_plan *plan = NULL;
        if (tp_plan_buffer(&plan, topo, strlen(topo), "<builtin>", &job, cfg, &err) == TP_OK) {
            tp_graph_check *chk = NULL;
            tp_status st = tp_graph_check_buffer(&chk, plan, (const char *)data, size, "<fuzz>",
                                                 &err);
            fuzz_require_no_bug(st);
            if (st == TP_OK) {
                for (int f = TP_FORMAT_TEXT; f <= TP_FORMAT_JSON; f++)
                    tp_report_graph_check(fuzz_sink(), chk, (tp_format)f, &err);
            }
            tp_graph_check_free(chk);
        }
        tp_plan_free(plan);
    }
    tp_config_free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/topoplan-fuzz-graph-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    FILE *f = fdopen(fd, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
        replay(fuzz_builtin_for_graph(data, size), path);
    } else {
        close(fd);
    }
    unlink(path);
    check(fuzz_builtin_for_graph(data, size), data, size);
    return 0;
}
