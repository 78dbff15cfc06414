/*
 * Stage 6, per call: NCCL's algorithm/protocol choice (2.22.3; 2.27.5 where noted) for one
 * collective (enqueue.cc initCollCostTable, updateCollCostTable,
 * topoGetAlgoInfo; tuning.cc ncclTopoGetAlgoTime), without tuner plugin
 * and without CollNet, for one call not aggregated in a group.
 */
#include "tuning/tuning_table.h"

float tp_tune__algo_time(const tp_tuning *t, tp_coll coll, tp_algo algo, tp_proto proto,
                         size_t n_bytes, bool *backup)
{
    const tp_tune_job *job = &t->job;
    float bw = t->bandwidth[coll][algo][proto];
    float lat = t->latency[coll][algo][proto];
    *backup = false;
    /* 2.22.3's Ring backup bandwidth (comm->ringbdw); 2.27 has none. */
    if (algo == TP_ALGO_RING && bw == 0.0f && !t->model_2_27) {
        bw = t->ring_backup_bw[coll][proto];
        *backup = true;
    }
    if (bw == 0)
        return -1.0f;
    int log_size = tp_tune__log2i((long)(n_bytes >> t->k->shared->tree_correction_shift));
    /* NCCL 2.22.3: trees are corrected by a measured factor from 64 B to 256 MB. */
    if (algo == TP_ALGO_TREE && log_size >= 0 && log_size < TP_TREE_CORRECTION_SIZES)
        bw *= t->k->shared->tree_correction[proto][log_size];
    /* ... and large inter-node Ring/Simple AllReduce pays a plateau on its latency. */
    if (algo == TP_ALGO_RING && proto == TP_PROTO_SIMPLE && job->n_nodes > 1 &&
        coll == TP_COLL_ALLREDUCE &&
        n_bytes / (size_t)(job->n_channels * job->n_ranks) >= t->k->shared->ring_plateau_min_bytes)
        lat = (float)(lat * (job->min_comp_cap < 80 ? t->k->shared->ring_plateau_pre_sm80
                                                    : t->k->shared->ring_plateau_sm80));
    int lat_count = 1; /* one operation: numPipeOps 1 for Ring, DIVUP(1, batch) for others */
    return lat * lat_count + (float)n_bytes / (t->k->shared->bytes_per_us_per_gbs * bw);
}

/* 2.27 updateCollCostTable: NVLS needs NVLS support, beyond AllReduce at most
 * NCCL_MAX_NVLS_ARITY local ranks; across nodes CollNet (never here). PAT's scaled
 * ReduceScatter ops are not modelled (sum). */
static bool considered_2_27(const tp_tuning *t, tp_coll coll, tp_algo a)
{
    const tp_tune_job *job = &t->job;
    if ((a == TP_ALGO_COLLNET_DIRECT || a == TP_ALGO_COLLNET_CHAIN) && job->collnet_support != 1)
        return false;
    if ((a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE) &&
        (!job->nvls_support ||
         (coll != TP_COLL_ALLREDUCE && job->local_ranks > t->k->max_nvls_arity)))
        return false;
    return !(a == TP_ALGO_NVLS && job->collnet_support != 1 && job->n_nodes > 1);
}

/* updateCollCostTable: which algorithms a call may take. */
static bool considered(const tp_tuning *t, tp_coll coll, tp_algo a)
{
    const tp_tune_job *job = &t->job;
    if (t->model_2_27)
        return considered_2_27(t, coll, a);
    if ((a == TP_ALGO_COLLNET_DIRECT || a == TP_ALGO_COLLNET_CHAIN) && job->collnet_support != 1)
        return false;
    if ((a == TP_ALGO_NVLS || a == TP_ALGO_NVLS_TREE) && job->nvls_support != 1 &&
        coll != TP_COLL_ALLGATHER)
        return false;
    if (a == TP_ALGO_NVLS && job->collnet_support != 1 && job->n_nodes > 1)
        return false;
    /* NCCL 2.22.3 runs NVLS AllGather / ReduceScatter on one node only. */
    return !(a == TP_ALGO_NVLS && (coll == TP_COLL_ALLGATHER || coll == TP_COLL_REDUCESCATTER) &&
             job->n_nodes > 1);
}

/* nBytes < nc * nt * threshold, without overflow (NCCL_THREAD_THRESHOLDS can be huge). */
static bool below(size_t n_bytes, int nc, int nt, long threshold)
{
    long work;
    if (__builtin_mul_overflow((long)nc * nt, threshold, &work))
        return threshold > 0;
    return work > 0 && n_bytes < (size_t)work;
}

/* topoGetAlgoInfo's channel and thread counts for the chosen pair. */
static void size_launch(const tp_tuning *t, size_t n_bytes, tp_tune_choice *c)
{
    const tp_tune_job *job = &t->job;
    int nc = job->n_channels, nt = t->max_threads[c->algo][c->proto];
    long threshold = t->thread_threshold[c->algo][c->proto];
    bool nvls = c->algo == TP_ALGO_NVLS || c->algo == TP_ALGO_NVLS_TREE;
    if (nvls)
        nc = job->nvls_channels;
    else
        while (below(n_bytes, nc, nt, threshold) && nc >= 2)
            nc--;
    if (!nvls && c->algo != TP_ALGO_COLLNET_DIRECT)
        while (below(n_bytes, nc, nt, threshold) && nt % t->k->shared->thread_halving_step == 0 &&
               nt > 0)
            nt /= 2;
    if (c->proto == TP_PROTO_SIMPLE && c->algo == TP_ALGO_RING)
        nt += t->k->shared->warp_size; /* a sync warp */
    if (c->proto == TP_PROTO_SIMPLE && c->algo == TP_ALGO_TREE)
        nt += t->k->shared->tree_simple_extra_warps * t->k->shared->warp_size;
    if (nt / t->k->shared->warp_size < t->k->shared->min_warps)
        nt = t->k->shared->min_warps * t->k->shared->warp_size;
    if (c->algo == TP_ALGO_TREE || c->algo == TP_ALGO_PAT)
        nt = t->k->shared->max_threads; /* trees (2.27: and PAT) use every thread */
    c->n_channels = nc;
    c->n_threads = nt;
}

bool tp_tune__choose(const tp_tuning *t, tp_coll coll, size_t n_bytes, tp_tune_choice *out)
{
    tp_tune_choice *c = out;
    c->algo = TP_ALGO_UNDEF;
    c->proto = TP_PROTO_UNDEF;
    c->from_backup = false;
    c->n_channels = c->n_threads = 0;
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int p = 0; p < TP_PROTO_COUNT; p++)
            c->times[a][p] = t->k->shared->proto_ignore;
    if (t->job.n_ranks == 1)
        c->times[TP_ALGO_RING][TP_PROTO_SIMPLE] = 0.0f;
    tp_algo backup_algo = TP_ALGO_UNDEF;
    tp_proto backup_proto = TP_PROTO_UNDEF;
    float backup_time = t->k->shared->max_time;
    for (int a = 0; a < TP_ALGO_COUNT && t->job.n_ranks > 1; a++) {
        if (!considered(t, coll, a))
            continue;
        for (int p = 0; p < TP_PROTO_COUNT; p++) {
            bool backup;
            float time = tp_tune__algo_time(t, coll, a, p, n_bytes, &backup);
            if (!backup)
                c->times[a][p] = time;
            else if (time >= 0.0f && time < backup_time) {
                backup_algo = a;
                backup_proto = p;
                backup_time = time;
            }
        }
    }
    float min_time = t->k->shared->max_time;
    for (int a = 0; a < TP_ALGO_COUNT; a++)
        for (int p = 0; p < TP_PROTO_COUNT; p++)
            if (c->times[a][p] != t->k->shared->proto_ignore && c->times[a][p] >= 0.0f &&
                c->times[a][p] < min_time) {
                c->algo = a;
                c->proto = p;
                min_time = c->times[a][p];
            }
    c->time = min_time;
    if (c->algo == TP_ALGO_UNDEF) {
        if (backup_algo == TP_ALGO_UNDEF)
            return false;
        c->algo = backup_algo;
        c->proto = backup_proto;
        c->time = backup_time;
        c->from_backup = true;
    }
    size_launch(t, n_bytes, c);
    return true;
}

double tp_tune__busbw_factor(tp_coll coll, int n_ranks)
{
    double n = n_ranks;
    switch (coll) {
    case TP_COLL_ALLREDUCE:
        return 2 * (n - 1) / n;
    case TP_COLL_ALLGATHER:
    case TP_COLL_REDUCESCATTER:
        return (n - 1) / n;
    default:
        return 1.0;
    }
}

tp_status tp_tune__log_sizes(const tp_tuning *t, tp_log *log, tp_error *err)
{
    /* The order the conformance harness enqueues its calls in. */
    static const tp_coll order[] = {TP_COLL_ALLREDUCE, TP_COLL_ALLGATHER, TP_COLL_REDUCESCATTER,
                                    TP_COLL_BROADCAST, TP_COLL_REDUCE};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        for (int k = 3; k <= 33; k++) {
            size_t n_bytes = (size_t)1 << k;
            tp_tune_choice c;
            if (!tp_tune__choose(t, order[i], n_bytes, &c)) {
                tp_log_warn(log, "Error : no algorithm/protocol available");
                return tp_fail(err, TP_ERR_GRAPH, tp_tune__coll_name(order[i]), 0, 0,
                               "no algorithm/protocol available for %zu bytes", n_bytes);
            }
            if (t->job.rank == 0 && t->size_lines)
                tp_log_info_sub(log, TP_SUB_TUNING, "%ld Bytes -> Algo %d proto %d time %f",
                                (long)n_bytes, c.algo, c.proto, (double)c.time);
        }
    return TP_OK;
}
