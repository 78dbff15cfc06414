/* Stage 2 (placeholder until the system builder lands). */
#include "system.h"

#include <stdlib.h>

tp_status tp_system__prepare_xml(tp_xml *doc, const tp_config *cfg, int first_rank, tp_error *err)
{
    (void)doc, (void)cfg, (void)first_rank;
    return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "system builder not implemented yet");
}

tp_status tp_system__from_xml(tp_system **out, tp_xml *doc, const tp_config *cfg,
                              uint64_t host_hash, tp_error *err)
{
    (void)doc, (void)cfg, (void)host_hash;
    *out = NULL;
    return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "system builder not implemented yet");
}

void tp_system__free(tp_system *sys)
{
    free(sys);
}

void tp_system__print(tp_log *log, const tp_system *sys)
{
    (void)log, (void)sys;
}
