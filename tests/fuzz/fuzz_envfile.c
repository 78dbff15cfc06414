/* Fuzz target: any bytes as an --env-file, then planned on a builtin with the result. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, NULL, &err) != TP_OK)
        return 0;
    /* a graph file named by the fuzzer would read any file: parse only then */
    if (tp_config_load_env_text(cfg, (const char *)data, size, "<fuzz>", &err) == TP_OK &&
        !memmem(data, size, "GRAPH_FILE", 10))
        fuzz_plan_builtin("v100-nv2", cfg);
    tp_config_free(cfg);
    return 0;
}
