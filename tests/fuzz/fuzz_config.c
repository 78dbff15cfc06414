/* Fuzz target: lines "KEY=VALUE" as an environment for the configuration. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    const char *env[64];
    fuzz_env_lines(text, env, 64, false);
    tp_config *cfg = NULL;
    tp_error err = {0};
    tp_config_new(&cfg, env, &err);
    tp_config_free(cfg);
    free(text);
    return 0;
}
