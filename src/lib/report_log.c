/* The NCCL_DEBUG=INFO log of the reported rank, as NCCL prints it. */
#include "plan.h"

#include <strings.h>

/*
 * NCCL 2.22.3's logger formats the prefix and the message into one
 * char[1024], so long messages lose their end. The reference outputs were
 * produced with the prefix "[<cudaDev>] NCCL INFO ", which we print too.
 */
#define TP_LOG_LINE_SIZE 1024

/* NCCL 2.22.3 debug levels (debug.cc): lines at or below the level print. */
enum { LOG_NONE, LOG_VERSION, LOG_WARN, LOG_INFO };

/* NCCL_DEBUG as NCCL reads it; unset means INFO, the reference outputs' setting. */
static int debug_level(const tp_config *cfg)
{
    static const struct {
        const char *name;
        int level;
    } levels[] = {{"VERSION", LOG_VERSION}, {"WARN", LOG_WARN}, {"INFO", LOG_INFO},
                  {"ABORT", LOG_INFO},      {"TRACE", LOG_INFO}};
    const char *text = tp_config_str(cfg, TP_P_DEBUG);
    if (!text)
        return LOG_INFO;
    for (size_t i = 0; i < ARRAY_LEN(levels); i++)
        if (strcasecmp(text, levels[i].name) == 0)
            return levels[i].level;
    return LOG_NONE;
}

static int reported_dev(const tp_plan *plan)
{
    const tp_node_set *gpus = plan->sys ? &plan->sys->nodes[TP_NODE_GPU] : NULL;
    for (int i = 0; gpus && i < gpus->count; i++)
        if (gpus->nodes[i].gpu.rank == plan->job.rank)
            return gpus->nodes[i].gpu.dev;
    return 0;
}

tp_status tp_report_nccl_log(FILE *out, const tp_plan *plan, tp_error *err)
{
    int dev = reported_dev(plan), level = debug_level(plan->cfg);
    for (size_t i = 0; i < plan->log.n_lines; i++) {
        const tp_log_line *l = &plan->log.lines[i];
        if (level < (l->level == TP_LOG_WARN ? LOG_WARN : LOG_INFO))
            continue;
        char line[TP_LOG_LINE_SIZE];
        snprintf(line, sizeof(line), "[%d] NCCL %s %s", dev,
                 l->level == TP_LOG_WARN ? "WARN" : "INFO", l->text);
        fprintf(out, "%s\n", line);
    }
    if (plan->log.failed)
        return tp_fail_nomem(err);
    if (ferror(out))
        return tp_fail(err, TP_ERR_IO, NULL, 0, 0, "write error");
    return TP_OK;
}
