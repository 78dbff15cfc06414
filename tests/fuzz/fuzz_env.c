/*
 * Fuzz target: lines "KEY=VALUE" as the NCCL_* environment, used by the
 * planner on a builtin the input size picks (1 and 2 nodes, every report), not only parsed.
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
        tp_config_write(fuzz_sink(), cfg, &err);
        fuzz_plan_builtin(tp_builtin_name(size % tp_builtin_count()), cfg);
    }
    tp_config_free(cfg);
    free(text);
    return 0;
}
