/*
 * Fuzz target: lines "KEY=VALUE" as the environment of a 2-node job on the
 * built-in V100 machine, then the tuning model, its table and --sizes lines
 * (NCCL_ALGO, NCCL_PROTO, NCCL_NTHREADS, NCCL_THREAD_THRESHOLDS, ...) and
 * the tune report.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    const char *env[64];
    fuzz_env_lines(text, env, 64, true);
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) == TP_OK) {
        const char *xml = tp_builtin_xml("v100-nv2");
        tp_job job = TP_JOB_INIT;
        job.n_nodes = 2;
        tp_plan *plan = NULL;
        fuzz_require_no_bug(tp_plan_buffer(&plan, xml, strlen(xml), "v100-nv2", &job, cfg, &err));
        FILE *out = fuzz_sink();
        if (plan && out) {
            tp_tune_options opt = {.coll = -1, .min_bytes = 1024, .max_bytes = 1 << 20};
            tp_report_nccl_log(out, plan, &err);
            tp_report_nccl_log_sizes(out, plan, &err);
            tp_report_tune(out, plan, &opt, TP_FORMAT_JSON, &err);
            tp_report_tune_svg(out, plan, &opt, &err);
        }
        tp_plan_free(plan);
    }
    tp_config_free(cfg);
    free(text);
    return 0;
}
