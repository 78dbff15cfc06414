/* Stage 3 (placeholder until the path computation lands). */
#include "paths.h"

tp_status tp_paths__compute(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                            tp_log *log, tp_error *err)
{
    (void)sys, (void)cfg, (void)job, (void)log;
    return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "paths not implemented yet");
}

tp_status tp_paths__trim(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                         tp_error *err)
{
    (void)sys, (void)cfg, (void)job;
    return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "paths not implemented yet");
}

void tp_paths__print(tp_log *log, const tp_system *sys)
{
    (void)log, (void)sys;
}
