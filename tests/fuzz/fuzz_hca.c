/*
 * Fuzz target: any text as NCCL_IB_HCA: the device filter on its own, and the
 * planner's NET devices on the 8-NIC builtin (1 and 2 nodes, NIC report).
 */
#include "fuzz_common.h"

static const char *const devices[] = {"mlx5_0", "mlx5_1", "mlx5_10", "mlx5_bond_0", "ib0", ""};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *filter = fuzz_text(data, size);
    if (!filter || strlen(filter) > 4000) {
        free(filter);
        return 0;
    }
    char entry[64];
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
        for (int port = 0; port <= 2; port++)
            if (tp_hca_selects(filter, devices[i], port))
                tp_hca_prefix_trap(filter, devices[i], port, entry, sizeof(entry));
    char setting[4100];
    snprintf(setting, sizeof(setting), "NCCL_IB_HCA=%s", filter);
    const char *const env[] = {setting, NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) == TP_OK)
        fuzz_plan_builtin("dgx-h100", cfg);
    tp_config_free(cfg);
    free(filter);
    return 0;
}
