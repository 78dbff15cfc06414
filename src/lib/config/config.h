/*
 * The configuration: every NCCL_* parameter topoplan models, in one table.
 * This module is the only place that reads environment text. Other modules
 * ask for values by id. Each entry names NCCL 2.22.3's default.
 */
#ifndef TP_CONFIG_H
#define TP_CONFIG_H

#include "common/internal.h"
#include "common/nccl_profile.h"

/* Kinds of parameter values. */
typedef enum tp_param_kind {
    TP_KIND_INT,   /* strtoll(base 0) of the whole value, like NCCL_PARAM */
    TP_KIND_STR,   /* kept as text */
    TP_KIND_LEVEL, /* a path type name (LOC..SYS) or NCCL's old 0..4 numbering */
} tp_param_kind;

/* Path levels that a TP_KIND_LEVEL parameter yields when unset. */
#define TP_LEVEL_UNSET (-2)

/*
 * X(id, "NCCL_NAME", kind, default). Defaults are NCCL 2.22.3's; -2 means
 * "NCCL decides" where NCCL uses that sentinel.
 */
#define TP_PARAMS(X)                                                                               \
    X(TOPO_FILE, "NCCL_TOPO_FILE", TP_KIND_STR, 0)                                                 \
    X(TOPO_DUMP_FILE, "NCCL_TOPO_DUMP_FILE", TP_KIND_STR, 0)                                       \
    X(TOPO_DUMP_FILE_RANK, "NCCL_TOPO_DUMP_FILE_RANK", TP_KIND_INT, 0)                             \
    X(GRAPH_FILE, "NCCL_GRAPH_FILE", TP_KIND_STR, 0)                                               \
    X(GRAPH_DUMP_FILE, "NCCL_GRAPH_DUMP_FILE", TP_KIND_STR, 0)                                     \
    X(GRAPH_DUMP_FILE_RANK, "NCCL_GRAPH_DUMP_FILE_RANK", TP_KIND_INT, 0)                           \
    X(NVB_DISABLE, "NCCL_NVB_DISABLE", TP_KIND_INT, 0)                                             \
    X(P2P_LEVEL, "NCCL_P2P_LEVEL", TP_KIND_LEVEL, TP_LEVEL_UNSET)                                  \
    X(P2P_DISABLE, "NCCL_P2P_DISABLE", TP_KIND_INT, 0)                                             \
    X(SHM_DISABLE, "NCCL_SHM_DISABLE", TP_KIND_INT, 0)                                             \
    X(NET_GDR_LEVEL, "NCCL_NET_GDR_LEVEL", TP_KIND_LEVEL, TP_LEVEL_UNSET)                          \
    X(NET_GDR_READ, "NCCL_NET_GDR_READ", TP_KIND_INT, -2)                                          \
    X(NET_DISABLE_INTRA, "NCCL_NET_DISABLE_INTRA", TP_KIND_INT, 0)                                 \
    X(PXN_DISABLE, "NCCL_PXN_DISABLE", TP_KIND_INT, 0)                                             \
    X(P2P_PXN_LEVEL, "NCCL_P2P_PXN_LEVEL", TP_KIND_INT, 2)                                         \
    X(CROSS_NIC, "NCCL_CROSS_NIC", TP_KIND_INT, 2)                                                 \
    X(MIN_NCHANNELS, "NCCL_MIN_NCHANNELS", TP_KIND_INT, -2)                                        \
    X(MAX_NCHANNELS, "NCCL_MAX_NCHANNELS", TP_KIND_INT, -2)                                        \
    X(MIN_CTAS, "NCCL_MIN_CTAS", TP_KIND_INT, -2)                                                  \
    X(MAX_CTAS, "NCCL_MAX_CTAS", TP_KIND_INT, -2)                                                  \
    X(NCHANNELS_PER_NET_PEER, "NCCL_NCHANNELS_PER_NET_PEER", TP_KIND_INT, -1)                      \
    X(MIN_P2P_NCHANNELS, "NCCL_MIN_P2P_NCHANNELS", TP_KIND_INT, 1)                                 \
    X(MAX_P2P_NCHANNELS, "NCCL_MAX_P2P_NCHANNELS", TP_KIND_INT, 32)                                \
    X(NVLS_ENABLE, "NCCL_NVLS_ENABLE", TP_KIND_INT, 2)                                             \
    X(NVLS_NCHANNELS, "NCCL_NVLS_NCHANNELS", TP_KIND_INT, 16)                                      \
    X(COLLNET_ENABLE, "NCCL_COLLNET_ENABLE", TP_KIND_INT, 0)                                       \
    X(IB_HCA, "NCCL_IB_HCA", TP_KIND_STR, 0)                                                       \
    X(IB_MERGE_NICS, "NCCL_IB_MERGE_NICS", TP_KIND_INT, 1)                                         \
    X(ALGO, "NCCL_ALGO", TP_KIND_STR, 0)                                                           \
    X(PROTO, "NCCL_PROTO", TP_KIND_STR, 0)                                                         \
    X(NTHREADS, "NCCL_NTHREADS", TP_KIND_INT, -2)                                                  \
    X(LL128_NTHREADS, "NCCL_LL128_NTHREADS", TP_KIND_INT, -2)                                      \
    X(NET_OVERHEAD, "NCCL_NET_OVERHEAD", TP_KIND_INT, -2)                                          \
    X(THREAD_THRESHOLDS, "NCCL_THREAD_THRESHOLDS", TP_KIND_STR, 0)                                 \
    X(IGNORE_CPU_AFFINITY, "NCCL_IGNORE_CPU_AFFINITY", TP_KIND_INT, 0)                             \
    X(MNNVL_ENABLE, "NCCL_MNNVL_ENABLE", TP_KIND_INT, 2)                                           \
    X(MIN_NRINGS, "NCCL_MIN_NRINGS", TP_KIND_INT, -2)                                              \
    X(MAX_NRINGS, "NCCL_MAX_NRINGS", TP_KIND_INT, -2)                                              \
    X(DEBUG, "NCCL_DEBUG", TP_KIND_STR, 0)                                                         \
    X(DEBUG_SUBSYS, "NCCL_DEBUG_SUBSYS", TP_KIND_STR, 0)                                           \
    X(NET_MERGE_LEVEL, "NCCL_NET_MERGE_LEVEL", TP_KIND_STR, 0)                                     \
    X(NET_FORCE_MERGE, "NCCL_NET_FORCE_MERGE", TP_KIND_STR, 0)                                     \
    X(NET_MERGE_POLICY, "NCCL_NET_MERGE_POLICY", TP_KIND_STR, 0)                                   \
    X(NETDEVS_POLICY, "NCCL_NETDEVS_POLICY", TP_KIND_STR, 0)

typedef enum tp_param_id {
#define TP_PARAM_ENUM(id, name, kind, dflt) TP_P_##id,
    TP_PARAMS(TP_PARAM_ENUM)
#undef TP_PARAM_ENUM
        TP_PARAM_COUNT
} tp_param_id;

/* The integer value (TP_KIND_INT, TP_KIND_LEVEL): the user's, else the default. */
int64_t tp_config_int(const tp_config *cfg, tp_param_id id);
/* The text value (any kind), or NULL when unset. */
const char *tp_config_str(const tp_config *cfg, tp_param_id id);
/* The text the user gave, also an integer NCCL's strtoll refuses (NULL when unset). */
const char *tp_config__raw_text(const tp_config *cfg, tp_param_id id);
/* Whether the user set the parameter. */
bool tp_config_is_set(const tp_config *cfg, tp_param_id id);
/* Whether the NCCL version modelled reads parameter id at all (some arrived in later versions). */
bool tp_config__read_by_profile(const tp_config *cfg, tp_param_id id);
/* NCCL's name for the parameter ("NCCL_CROSS_NIC"). */
const char *tp_config_name(tp_param_id id);
/* Longest kept source of a setting ("--env-file PATH:LINE"). */
#define TP_CONFIG_SOURCE_MAX 160
/* What NCCL 2.22.3 does when the parameter is unset ("2", "no minimum", ...). */
void tp_config__default_text(char *buf, size_t size, int id);
/* How the parameter's value is read. */
tp_param_kind tp_config_kind(tp_param_id id);
/* The NCCL version profile the configuration selects (tp_config_set_nccl; default: the newest
 * exact one). Stages read their version-dependent numbers and rules from it. */
const tp_nccl_profile *tp_config__profile(const tp_config *cfg);
/*
 * The ENV line NCCL 2.22.3 prints where it reads a parameter the environment
 * sets: integers "NCCL_X set by environment to V." (param.cc ncclLoadParam,
 * once: the value is cached, so only at the first read of the log), strings
 * "NCCL_X set by environment to TEXT" (the reading site's own INFO, at every
 * read). Nothing when unset or log is NULL.
 */
void tp_config__log_env(const tp_config *cfg, tp_param_id id, tp_log *log);
/*
 * An out-of-range integer (strtoll's ERANGE) logs NCCL's "Invalid value TEXT for NCCL_X, using
 * default D." there instead (param.cc ncclLoadParam, NCCL_ALL, once; both 2.22.3 and 2.27.5).
 * Path levels: "NCCL_X set by environment to NAME" (paths.cc ncclGetLevel, NCCL_ALL, once per
 * process), `level` the level NCCL read; nothing when level < 0.
 */
void tp_config__log_level(const tp_config *cfg, tp_param_id id, int level, tp_log *log);
/* NCCL caches what it read: `line` is logged unless the log has it already (NULL log: nothing). */
void tp_config__log_once(tp_log *log, uint64_t sub, const char *line);
/* The IB plugin's lines at its init (net_ib.cc ncclIbInit, before the topology is read):
 * "NCCL_IB_HCA set to V" (its own wording, not "set by environment"), then
 * NCCL_IB_MERGE_NICS's when the plugin reads it (merge_nics_read). */
void tp_config__log_ib_plugin(const tp_config *cfg, bool merge_nics_read, tp_log *log);
/* How many of its local NETs a GPU uses (2.28 graph.h enum netDevsPolicy). */
typedef enum tp_netdevs_kind {
    TP_NETDEVS_AUTO, /* the local NETs shared out among the GPUs local to them (the default) */
    TP_NETDEVS_ALL,  /* every local NET */
    TP_NETDEVS_MAX,  /* at most max of them */
} tp_netdevs_kind;

typedef struct tp_netdevs_policy {
    tp_netdevs_kind kind;
    int max; /* TP_NETDEVS_MAX: n > 0 */
} tp_netdevs_policy;

/*
 * NCCL_NETDEVS_POLICY as NCCL reads it (2.28.3 topo.cc getNetDevsPolicyOnce): AUTO or ALL in any
 * case, MAX:n (prefix in any case, n by atoi, > 0); anything else is AUTO. Unset: AUTO.
 */
tp_netdevs_policy tp_config__netdevs_policy(const tp_config *cfg);
/* Its INFO(NCCL_ENV) line, once per process: "... set by environment to TEXT", or "Unable to
 * recognize ..." for a value it reads as AUTO. Nothing when unset. */
void tp_config__log_netdevs_policy(const tp_config *cfg, tp_log *log);
/* Forget the user's value of a parameter: NCCL's default again (a what-if without it). */
void tp_config__unset(tp_config *cfg, tp_param_id id);
/* Copy a configuration (a plan keeps its own). */
tp_status tp_config__copy(tp_config **out, const tp_config *cfg, tp_error *err);

#endif
