/* The NCCL_DEBUG=INFO log of the reported rank, as NCCL prints it. */
#include "plan.h"

tp_status tp_report_nccl_log(FILE *out, const tp_plan *plan, tp_error *err)
{
    for (size_t i = 0; i < plan->log.n_lines; i++) {
        const tp_log_line *l = &plan->log.lines[i];
        fprintf(out, "topoplan:0:0 [0] NCCL %s %s\n", l->level == TP_LOG_WARN ? "WARN" : "INFO",
                l->text);
    }
    if (plan->log.failed)
        return tp_fail_nomem(err);
    if (ferror(out))
        return tp_fail(err, TP_ERR_IO, NULL, 0, 0, "write error");
    return TP_OK;
}
