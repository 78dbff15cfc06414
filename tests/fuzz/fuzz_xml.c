/* Fuzz target: any bytes as a topology XML, through the whole planner. */
#include "topoplan.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *const env[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) != TP_OK)
        return 0;
    tp_plan *plan = NULL;
    tp_job job = {.n_nodes = 2, .rank = 0};
    tp_plan_buffer(&plan, (const char *)data, size, "<fuzz>", &job, cfg, &err);
    tp_plan_free(plan);
    tp_config_free(cfg);
    return 0;
}
