/* The NCCL_DEBUG=INFO log of the reported rank, as NCCL prints it. */
#include "plan/plan.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

/*
 * NCCL 2.22.3's logger formats the prefix and the message into one
 * char[1024], so long messages lose their end. The reference outputs were
 * produced with the prefix "[<cudaDev>] NCCL INFO ", which we print too.
 */
#define TP_LOG_LINE_SIZE 1024

/* NCCL 2.22.3 debug levels (debug.cc): lines at or below the level print. */
typedef enum debug_level { LOG_NONE, LOG_VERSION, LOG_WARN, LOG_INFO } debug_level;

/* NCCL_DEBUG as NCCL reads it; unset means INFO, the reference outputs' setting. */
static debug_level debug_level_of(const tp_config *cfg)
{
    static const struct {
        const char *name;
        debug_level level;
    } levels[] = {{"VERSION", LOG_VERSION},
                  {"WARN", LOG_WARN},
                  {"INFO", LOG_INFO},
                  {"ABORT", LOG_INFO},
                  {"TRACE", LOG_INFO}};
    const char *text = tp_config_str(cfg, TP_P_DEBUG);
    if (!text)
        return LOG_INFO;
    for (size_t i = 0; i < ARRAY_LEN(levels); i++)
        if (strcasecmp(text, levels[i].name) == 0)
            return levels[i].level;
    return LOG_NONE;
}

/*
 * NCCL_DEBUG_SUBSYS when unset. NCCL 2.22.3 itself defaults to INIT,ENV, but
 * the reference outputs were produced with INIT,ENV,GRAPH (conformance README).
 */
#define TP_LOG_DEFAULT_SUBSYS (TP_SUB_INIT | TP_SUB_ENV | TP_SUB_GRAPH)

/* NCCL 2.22.3 subsystem names (debug.cc ncclDebugInit), matched case-insensitively. */
static const struct {
    const char *name;
    uint64_t mask;
} subsys_names[] = {
    {"INIT", TP_SUB_INIT},
    {"COLL", TP_SUB_COLL},
    {"P2P", TP_SUB_P2P},
    {"SHM", TP_SUB_SHM},
    {"NET", TP_SUB_NET},
    {"GRAPH", TP_SUB_GRAPH},
    {"TUNING", TP_SUB_TUNING},
    {"ENV", TP_SUB_ENV},
    {"ALLOC", TP_SUB_ALLOC},
    {"CALL", TP_SUB_CALL},
    {"PROXY", TP_SUB_PROXY},
    {"NVLS", TP_SUB_NVLS},
    {"BOOTSTRAP", TP_SUB_BOOTSTRAP},
    {"REG", TP_SUB_REG},
    {"PROFILE", TP_SUB_PROFILE},
    {"ALL", TP_SUB_ALL},
};

static uint64_t subsys_bits(const char *tok, size_t len)
{
    for (size_t i = 0; i < ARRAY_LEN(subsys_names); i++)
        if (strlen(subsys_names[i].name) == len && strncasecmp(tok, subsys_names[i].name, len) == 0)
            return subsys_names[i].mask;
    return 0;
}

/*
 * NCCL 2.22.3 ncclDebugInit: a comma list of names (empty items skipped,
 * unknown names ignored) ORed from 0, or, after a leading '^', cleared from
 * all bits. NULL (unset) gives the reference outputs' mask.
 */
uint64_t tp_log__subsys_mask(const char *text)
{
    if (!text)
        return TP_LOG_DEFAULT_SUBSYS;
    bool invert = text[0] == '^';
    uint64_t mask = invert ? TP_SUB_ALL : 0;
    for (const char *p = text + invert; *p;) {
        size_t len = strcspn(p, ",");
        uint64_t bits = subsys_bits(p, len);
        mask = invert ? mask & ~bits : mask | bits;
        p += len + (p[len] == ',');
    }
    return mask;
}

static int reported_dev(const tp_plan *plan)
{
    const tp_node_set *gpus = plan->sys ? &plan->sys->nodes[TP_NODE_GPU] : NULL;
    for (int i = 0; gpus && i < gpus->count; i++)
        if (gpus->nodes[i].gpu.rank == plan->job.rank)
            return gpus->nodes[i].gpu.dev;
    return 0;
}

/* Print a log's lines that NCCL_DEBUG / NCCL_DEBUG_SUBSYS let through. */
static tp_status print_log(FILE *out, const tp_plan *plan, const tp_log *log, tp_error *err)
{
    int dev = reported_dev(plan);
    debug_level level = debug_level_of(plan->cfg);
    uint64_t mask = tp_log__subsys_mask(tp_config_str(plan->cfg, TP_P_DEBUG_SUBSYS));
    bool whole = tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_LOG_LINES_WHOLE);
    for (size_t i = 0; i < log->n_lines; i++) {
        const tp_log_line *l = &log->lines[i];
        /* NCCL 2.22.3 ncclDebugLog: both the level and the subsystem must pass. */
        if (level < (l->level == TP_LOG_WARN ? LOG_WARN : LOG_INFO) || (l->sub & mask) == 0)
            continue;
        const char *kind = l->level == TP_LOG_WARN ? "WARN" : "INFO";
        if (whole) { /* 2.29.7: the prefix is formatted alone, the message printed whole */
            fprintf(out, "[%d] NCCL %s %s\n", dev, kind, l->text);
            continue;
        }
        char line[TP_LOG_LINE_SIZE];
        snprintf(line, sizeof(line), "[%d] NCCL %s %s", dev, kind, l->text);
        fprintf(out, "%s\n", line);
    }
    if (log->failed)
        return tp_fail_nomem(err);
    if (ferror(out))
        return tp_fail(err, TP_ERR_IO, NULL, 0, 0, "write error: %s", strerror(errno));
    return TP_OK;
}

tp_status tp_report_nccl_log(FILE *out, const tp_plan *plan, tp_error *err)
{
    if (!out || !plan)
        return tp_fail_arg(err, "tp_report_nccl_log", !out ? "out is NULL" : "plan is NULL");
    return print_log(out, plan, &plan->log, err);
}

tp_status tp_report_nccl_log_sizes(FILE *out, const tp_plan *plan, tp_error *err)
{
    if (!out || !plan)
        return tp_fail_arg(err, "tp_report_nccl_log_sizes", !out ? "out is NULL" : "plan is NULL");
    /* NCCL runs a one-rank communicator's collectives without a selection;
     * a failed init makes no call. */
    if (!plan->tuned || plan->status != TP_OK || !plan->tuning.modelled)
        return TP_OK;
    tp_log log = {.enabled = true};
    tp_status st = tp_tune__log_sizes(&plan->tuning, &log, err);
    tp_error print_err = {0};
    tp_status pst = print_log(out, plan, &log, &print_err);
    tp_log_clear(&log);
    if (pst != TP_OK) {
        *err = print_err;
        return pst;
    }
    return st;
}
