/* Fuzz target: lines "KEY=VALUE" as an environment for the configuration. */
#include "topoplan.h"

#include <stdint.h>
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
    tp_config_new(&cfg, env, &err);
    tp_config_free(cfg);
    free(text);
    return 0;
}
