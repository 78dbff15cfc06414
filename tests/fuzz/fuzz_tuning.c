/*
 * Fuzz target: lines "KEY=VALUE" as the environment of a 2-node job on the
 * built-in V100 machine, then the tuning model, its table and --sizes lines
 * (NCCL_ALGO, NCCL_PROTO, NCCL_NTHREADS, NCCL_THREAD_THRESHOLDS, ...) and
 * the tune report.
 */
#include "topoplan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *env[64];
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n < 63; line = strtok(NULL, "\n"))
        env[n++] = line;
    env[n] = NULL;
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) == TP_OK) {
        const char *xml = tp_builtin_xml("v100-nv2");
        tp_job job = {.n_nodes = 2, .rank = 0};
        tp_plan *plan = NULL;
        tp_plan_buffer(&plan, xml, strlen(xml), "v100-nv2", &job, cfg, &err);
        FILE *out = fopen("/dev/null", "w");
        if (plan && out) {
            tp_tune_options opt = {.coll = -1, .min_bytes = 1024, .max_bytes = 1 << 20};
            tp_report_nccl_log(out, plan, &err);
            tp_report_nccl_log_sizes(out, plan, &err);
            tp_report_tune(out, plan, &opt, TP_FORMAT_JSON, &err);
            tp_report_tune_svg(out, plan, &opt, &err);
        }
        if (out)
            fclose(out);
        tp_plan_free(plan);
    }
    tp_config_free(cfg);
    free(text);
    return 0;
}
