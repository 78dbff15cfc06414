/* The public queries of the tuning model (include/topoplan.h, group "tune"). */
#include "plan/plan.h"
#include "tuning/tuning_table.h"

#include <string.h>

const char *tp_tune_coll_name(int coll)
{
    return coll >= 0 && coll < TP_COLL_COUNT ? tp_tune__coll_name(coll) : NULL;
}

const char *tp_tune_algo_name(int algorithm)
{
    return algorithm >= 0 && algorithm < TP_ALGO_COUNT ? tp_tune__algo_name(algorithm) : NULL;
}

const char *tp_tune_proto_name(int protocol)
{
    return protocol >= 0 && protocol < TP_PROTO_COUNT ? tp_tune__proto_name(protocol) : NULL;
}

static bool tuned(const tp_plan *plan)
{
    return plan && plan->status == TP_OK && plan->tuned;
}

tp_status tp_plan_tune_call(const tp_plan *plan, int coll, uint64_t n_bytes, tp_tune_call *info,
                            size_t size)
{
    if (!tuned(plan) || !info || coll < 0 || coll >= TP_COLL_COUNT || n_bytes == 0)
        return TP_ERR_ARGUMENT;
    tp_tune_call v = {.algorithm = TP_ALGO_RING, .protocol = TP_PROTO_SIMPLE};
    if (plan->tuning.modelled) {
        tp_tune_choice c;
        if (!tp_tune__choose(&plan->tuning, coll, (size_t)n_bytes, &c))
            return TP_ERR_GRAPH;
        v.algorithm = c.algo;
        v.protocol = c.proto;
        v.time_us = c.time;
        v.channels = c.n_channels;
        v.threads = c.n_threads;
        v.from_backup = c.from_backup;
        v.algbw_gbs = c.time > 0 ? (double)n_bytes / ((double)c.time * 1e3) : 0;
        v.busbw_gbs = v.algbw_gbs * tp_tune__busbw_factor(coll, plan->tuning.job.n_ranks);
    }
    memcpy(info, &v, size < sizeof(v) ? size : sizeof(v));
    return TP_OK;
}

tp_status tp_plan_tune_entry(const tp_plan *plan, int coll, int algorithm, int protocol,
                             float *latency_us, float *bw_gbs)
{
    if (!tuned(plan) || !plan->tuning.modelled || !latency_us || !bw_gbs || coll < 0 ||
        coll >= TP_COLL_COUNT || algorithm < 0 || algorithm >= plan->tuning.k->algo_count ||
        protocol < 0 || protocol >= TP_PROTO_COUNT)
        return TP_ERR_ARGUMENT;
    *latency_us = plan->tuning.latency[coll][algorithm][protocol];
    *bw_gbs = plan->tuning.bandwidth[coll][algorithm][protocol];
    return TP_OK;
}
