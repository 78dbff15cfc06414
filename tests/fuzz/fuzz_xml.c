/* Fuzz target: any bytes as a topology XML, through the whole planner on 1 and 2 nodes, every report. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, NULL, &err) != TP_OK)
        return 0;
    fuzz_plan((const char *)data, size, 1, 0, cfg);
    fuzz_plan((const char *)data, size, 2, 1, cfg);
    tp_config_free(cfg);
    return 0;
}
