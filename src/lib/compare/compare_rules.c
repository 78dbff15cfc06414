/*
 * A diff between two NCCL versions: which of the profiles' named rules differ,
 * the layers each acts on, and each side's AllReduce bus bandwidth at a few
 * common sizes. The stage of each rule lives here, keyed by rule id, so the
 * profile table (common/nccl_profile.c) stays the version's data only.
 */
#include "compare/compare.h"
#include "config/config.h"

#include <stdarg.h>
#include <stdio.h>

const int tp_compare__version_sizes_log2[TP_VERSION_DIFF_SIZES] = {20, 26, 30};

#define STAGE(l) (1u << (l))

/* The stages each rule acts on (nccl_profile.h says what each rule is). */
static const unsigned rule_stages[TP_RULE_COUNT] = {
    [TP_RULE_LOG_SYSTEM_IDS] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_RING_DIGITS] = TP_RULE_STAGE_LOG,
    [TP_RULE_PAT] = STAGE(TP_LAYER_TUNING),
    [TP_RULE_NIC_FUSION] = STAGE(TP_LAYER_SYSTEM), /* NICs and NETs of the system */
    [TP_RULE_LOG_NET_COLL] = TP_RULE_STAGE_LOG,
    [TP_RULE_FALLBACK_INFO] = TP_RULE_STAGE_LOG,
    [TP_RULE_ALGO_PER_FUNCTION] = STAGE(TP_LAYER_TUNING),
    [TP_RULE_LADDER_MIN_MAX_PATH] = STAGE(TP_LAYER_GRAPHS),
    [TP_RULE_NVLS_HEADS_LIMIT] = STAGE(TP_LAYER_GRAPHS),
    [TP_RULE_POSTSET_DOUBLE_FROM_SM90] = STAGE(TP_LAYER_CHANNELS),
    [TP_RULE_C2C_PATH] = STAGE(TP_LAYER_SYSTEM) | STAGE(TP_LAYER_PATHS),
    [TP_RULE_LOG_GDR_MODE] = TP_RULE_STAGE_LOG,
    [TP_RULE_P2C_BEFORE_PXN] = STAGE(TP_LAYER_PATHS),
    [TP_RULE_RECNET_LOCAL_GPU_FIRST] = STAGE(TP_LAYER_GRAPHS),
    [TP_RULE_LOG_GRAPH_GPU_IDS] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_P2P_TYPE] = TP_RULE_STAGE_LOG,
    [TP_RULE_P2P_LEVEL_PXB] = STAGE(TP_LAYER_PATHS), /* P2P vs SHM between GPUs */
    [TP_RULE_TUNE_MODEL_2_27] = STAGE(TP_LAYER_TUNING),
    [TP_RULE_NO_SIZE_LINES] = TP_RULE_STAGE_LOG,
    [TP_RULE_NTHREADS_INFO] = TP_RULE_STAGE_LOG,
    [TP_RULE_NVLS_CHANNELS_BY_ARCH] = STAGE(TP_LAYER_CHANNELS), /* NVLS channel count */
    /* the ring's NETs, and the rings exchanged on odd nodes */
    [TP_RULE_CROSS_NIC_RING_ALTERNATE] = STAGE(TP_LAYER_GRAPHS) | STAGE(TP_LAYER_CHANNELS),
    [TP_RULE_GRAPH_LATENCY_INFO] = TP_RULE_STAGE_LOG,
    [TP_RULE_RING_SPLIT_NVLINK] = STAGE(TP_LAYER_GRAPHS),
    [TP_RULE_LOG_POPULATE_NICS_RAILS] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_P2P_CUDA] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_P2P_GROUP_SIZE] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_NET_DEVICE_COUNTS] = TP_RULE_STAGE_LOG,
    [TP_RULE_GRAPH_DUMP_RANK] = TP_RULE_STAGE_LOG,
    [TP_RULE_DEV_NODES] = STAGE(TP_LAYER_SYSTEM) | STAGE(TP_LAYER_PATHS), /* nodes, hop counts */
    [TP_RULE_NETS_KEPT_ONE_NODE] = TP_RULE_STAGE_LOG, /* printed only: the search skips them */
    [TP_RULE_GDR_LOG_TRACE] = TP_RULE_STAGE_LOG,
    [TP_RULE_PATHS_TYPE_FIRST] = STAGE(TP_LAYER_PATHS),
    [TP_RULE_LOG_NVLS_TUNING] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_P2P_MAX_PEERS] = TP_RULE_STAGE_LOG,
    [TP_RULE_P2P_CHANNELS_BY_NET_BW] = STAGE(TP_LAYER_CHANNELS),
    [TP_RULE_NVLS_MODEL_2_28] = STAGE(TP_LAYER_TUNING),
    [TP_RULE_LOG_TOPO_HINTS] = TP_RULE_STAGE_LOG,
    [TP_RULE_NO_NVLS_CHANNEL_COPY] = STAGE(TP_LAYER_CHANNELS),
    [TP_RULE_LOG_LINES_WHOLE] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_TRACE_FUNCTION] = TP_RULE_STAGE_LOG,
    /* each GPU's NIC per channel: the search's NET order, p2p and PXN NICs */
    [TP_RULE_LOCAL_NET_START_MODULO] = STAGE(TP_LAYER_GRAPHS) | STAGE(TP_LAYER_CHANNELS),
    [TP_RULE_GRAPH_FILE_RANK] = STAGE(TP_LAYER_GRAPHS),           /* a replayed graph's GPUs */
    [TP_RULE_CROSS_NIC_RING_PER_RANK] = STAGE(TP_LAYER_CHANNELS), /* odd nodes' ring exchange */
    [TP_RULE_NET_GUID_HEX] = STAGE(TP_LAYER_SYSTEM) | STAGE(TP_LAYER_GRAPHS), /* NICs sharing */
    [TP_RULE_LOG_P2P_DISABLE] = TP_RULE_STAGE_LOG,
    [TP_RULE_LOG_COMM_CONFIG_ENV] = TP_RULE_STAGE_LOG,
    [TP_RULE_IB_MERGE_NICS_PER_DEVICE] = TP_RULE_STAGE_LOG,
    [TP_RULE_VNIC_FORCED_PARENT] = TP_RULE_STAGE_LOG,
    [TP_RULE_VNIC_PCI_UNDER_CPU] = STAGE(TP_LAYER_SYSTEM), /* where a virtual NIC hangs */
    [TP_RULE_VNIC_LINK_WIDTH] = STAGE(TP_LAYER_SYSTEM),    /* its PCI bandwidth */
    [TP_RULE_VNIC_EIGHT_DEVS] = STAGE(TP_LAYER_SYSTEM),    /* which NICs fuse */
    [TP_RULE_VNIC_ONE_NUMA] = STAGE(TP_LAYER_SYSTEM),
    [TP_RULE_NET_FUSION_ENV_FIRST] = TP_RULE_STAGE_LOG,
    [TP_RULE_NET_MERGE_POLICY] = STAGE(TP_LAYER_SYSTEM), /* which NICs fuse */
    /* a NET's local GPU (PXN routes), the search's NET order, each GPU's NIC per channel */
    [TP_RULE_NETDEVS_POLICY] =
        STAGE(TP_LAYER_PATHS) | STAGE(TP_LAYER_GRAPHS) | STAGE(TP_LAYER_CHANNELS),
    /* the NICs of a graph no search found */
    [TP_RULE_FALLBACK_LOCAL_NETS] = STAGE(TP_LAYER_GRAPHS) | STAGE(TP_LAYER_CHANNELS),
};

unsigned tp_compare__rule_stages(tp_rule rule)
{
    return rule < TP_RULE_COUNT ? rule_stages[rule] : 0;
}

void tp_compare__rule_stage_names(tp_rule rule, char *buf, size_t size)
{
    unsigned stages = tp_compare__rule_stages(rule);
    size_t at = 0;
    if (size)
        buf[0] = '\0';
    for (int l = 0; l <= TP_LAYER_COUNT && at < size; l++) {
        if (!(stages & (1u << l)))
            continue;
        const char *name = l == TP_LAYER_COUNT ? "log" : tp_compare__layer_name(l);
        int n = snprintf(buf + at, size - at, "%s%s", at ? ", " : "", name);
        at += n > 0 ? (size_t)n : 0;
    }
}

bool tp_compare__is_version_diff(const tp_comparison *c)
{
    return c->profile[0] != c->profile[1];
}

/* Side s's AllReduce at each size: NCCL's choice and its bus bandwidth. */
static void allreduce_busbw(tp_comparison *c, int s)
{
    const tp_plan *p = c->plan[s];
    for (int i = 0; i < TP_VERSION_DIFF_SIZES; i++) {
        size_t bytes = (size_t)1 << tp_compare__version_sizes_log2[i];
        tp_tune_choice ch;
        c->busbw_ok[s][i] = p->tuned && p->tuning.modelled &&
                            tp_tune__choose(&p->tuning, TP_COLL_ALLREDUCE, bytes, &ch) &&
                            ch.time > 0;
        if (c->busbw_ok[s][i])
            c->busbw[s][i] = (double)bytes / ((double)ch.time * 1e3) *
                             tp_tune__busbw_factor(TP_COLL_ALLREDUCE, p->tuning.job.n_ranks);
    }
}

static void add_value(tp_comparison *c, unsigned stages, const char *fmt, ...) TP_PRINTF(3, 4);
static void add_value(tp_comparison *c, unsigned stages, const char *fmt, ...)
{
    if (c->n_values >= TP_VERSION_DIFF_VALUES)
        return;
    c->values[c->n_values].stages = stages;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->values[c->n_values].text, sizeof(c->values[0].text), fmt, ap);
    va_end(ap);
    c->n_values++;
}

static int ladder_top(const tp_speed_ladder *l, float *top)
{
    *top = l->count ? l->speeds[0] : 0.0f;
    return l->count;
}

/* The profiles' numbers that differ, with the stage they act on. */
static void profile_values(tp_comparison *c)
{
    const tp_nccl_profile *a = c->profile[0], *b = c->profile[1];
    float ta, tb;
    if (a->max_channels != b->max_channels)
        add_value(c, STAGE(TP_LAYER_GRAPHS) | STAGE(TP_LAYER_CHANNELS),
                  "MAXCHANNELS %d -> %d (device.h)", a->max_channels, b->max_channels);
    if (a->n_path_types != b->n_path_types)
        add_value(c, STAGE(TP_LAYER_PATHS), "path types %d -> %d (topo.cc topoPathTypeStr)",
                  a->n_path_types, b->n_path_types);
    if (a->sm100_cc != b->sm100_cc) {
        int na = ladder_top(&a->sm100_speed_intra, &ta),
            nb = ladder_top(&b->sm100_speed_intra, &tb);
        add_value(c, STAGE(TP_LAYER_GRAPHS),
                  "sm100 speed ladders from cc %d -> %d, %d -> %d intra speeds (search.cc)",
                  a->sm100_cc, b->sm100_cc, na, nb);
    }
    if (a->sm100_nvlink_bw != b->sm100_nvlink_bw)
        add_value(c, STAGE(TP_LAYER_SYSTEM), "SM100_NVLINK_BW %.1f -> %.1f GB/s (topo.h)",
                  (double)a->sm100_nvlink_bw, (double)b->sm100_nvlink_bw);
    if (a->intel_srp_min_model != b->intel_srp_min_model ||
        a->intel_erp_min_model != b->intel_erp_min_model)
        add_value(c, STAGE(TP_LAYER_SYSTEM) | STAGE(TP_LAYER_PATHS),
                  "Intel Sapphire/Emerald Rapids CPUs told apart from model %#x/%#x -> %#x/%#x "
                  "(0: not), QPI %.1f/%.1f -> %.1f/%.1f GB/s (topo.cc ncclTopoAddCpu)",
                  a->intel_srp_min_model, a->intel_erp_min_model, b->intel_srp_min_model,
                  b->intel_erp_min_model, (double)a->srp_qpi_bw, (double)a->erp_qpi_bw,
                  (double)b->srp_qpi_bw, (double)b->erp_qpi_bw);
    if (a->collnet_direct_graph_id != b->collnet_direct_graph_id)
        add_value(c, TP_RULE_STAGE_LOG, "CollNetDirect graph id %d -> %d (init.cc)",
                  a->collnet_direct_graph_id, b->collnet_direct_graph_id);
    /* Parameter defaults: the value each side reads where neither environment sets it. */
    for (int id = 0; id < TP_PARAM_COUNT; id++) {
        const tp_config *ca = c->plan[0]->cfg, *cb = c->plan[1]->cfg;
        if (tp_config_kind((tp_param_id)id) == TP_KIND_STR ||
            tp_config_is_set(ca, (tp_param_id)id) || tp_config_is_set(cb, (tp_param_id)id))
            continue;
        int64_t va = tp_config_int(ca, (tp_param_id)id), vb = tp_config_int(cb, (tp_param_id)id);
        if (va != vb)
            add_value(c, STAGE(TP_LAYER_CHANNELS), "%s default %lld -> %lld",
                      tp_config_name((tp_param_id)id), (long long)va, (long long)vb);
    }
}

void tp_compare__versions(tp_comparison *c)
{
    c->rules_differ = 0;
    for (int s = 0; s < 2; s++)
        c->profile[s] = tp_config__profile(c->plan[s]->cfg);
    for (int r = 0; r < TP_RULE_COUNT; r++)
        if (tp_profile_has(c->profile[0], (tp_rule)r) != tp_profile_has(c->profile[1], (tp_rule)r))
            c->rules_differ |= UINT64_C(1) << r;
    for (int s = 0; s < 2; s++)
        allreduce_busbw(c, s);
    c->n_values = 0;
    if (tp_compare__is_version_diff(c))
        profile_values(c);
}
