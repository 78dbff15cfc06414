/*
 * topoplan: predict and explain NCCL's topology decisions without a GPU.
 *
 * Pipeline: topology XML -> system (nodes, links) -> paths -> search (graphs)
 * -> channels -> reports. Bandwidths are float GB/s named `bw`, as in NCCL.
 *
 * Conventions:
 *  - Every fallible function returns tp_status (TP_OK == 0) and fills the
 *    caller-owned tp_error passed last.
 *  - `**out` parameters: the caller owns the result and releases it with the
 *    matching *_free() (NULL-safe). Outputs are cleared on entry.
 *  - Getters returning `const T *` borrow from their owner.
 *  - The library never prints, exits or reads the environment.
 */
#ifndef TOPOPLAN_H
#define TOPOPLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TP_API __attribute__((visibility("default")))
#else
#define TP_API
#endif

/** The version of topoplan itself. */
#define TOPOPLAN_VERSION "0.1.0"

/** @defgroup errors Errors */

/** Status codes returned by every fallible function. */
typedef enum tp_status {
    TP_OK = 0,
    TP_ERR_NOMEM,    /**< allocation failed */
    TP_ERR_IO,       /**< cannot open, read or write a file */
    TP_ERR_XML,      /**< not well-formed XML */
    TP_ERR_TOPOLOGY, /**< well-formed, but not a valid topology */
    TP_ERR_CONFIG,   /**< bad NCCL_* value or option value */
    TP_ERR_GRAPH,    /**< bad or impossible graph file, or a failure NCCL reports */
    TP_ERR_INTERNAL, /**< a broken invariant: a bug in topoplan */
} tp_status;

/** Where and what went wrong. A plain record owned by the caller. */
typedef struct tp_error {
    tp_status code;
    char source[256];  /**< file name, "<buffer>", or the env var name */
    unsigned line;     /**< 0 when not applicable */
    unsigned column;   /**< 0 when not applicable */
    char message[512]; /**< one line, no trailing period */
} tp_error;

/** Static name of a status ("ok", "xml", ...). */
TP_API const char *tp_status_name(tp_status st);

/** Format an error as `source:line:col: message` into buf (always NUL-terminated). */
TP_API void tp_error_format(const tp_error *err, char *buf, size_t size);

/** @defgroup config Configuration: every NCCL_* parameter */

/** Opaque set of NCCL_* parameters; unset ones take NCCL 2.22.3's defaults. */
typedef struct tp_config tp_config;

/**
 * Build a configuration from a NULL-terminated list of "KEY=VALUE" strings
 * (a process environment, or the CLI's --env list). Variables that are not
 * NCCL parameters topoplan models are ignored. Invalid values fail with
 * TP_ERR_CONFIG naming the variable.
 */
TP_API tp_status tp_config_new(tp_config **out, const char *const *envp, tp_error *err);
/** Set one variable, overriding any earlier value; same validation as tp_config_new. */
TP_API tp_status tp_config_set(tp_config *cfg, const char *key, const char *value, tp_error *err);
/** Free a configuration (NULL-safe). */
TP_API void tp_config_free(tp_config *cfg);
/** Write the effective parameter table (name, value, default or set) as text. */
TP_API tp_status tp_config_write(FILE *out, const tp_config *cfg, tp_error *err);

/** @defgroup plan Planning a job */

/** What job to plan: identical nodes and the rank whose view is reported. */
typedef struct tp_job {
    int n_nodes; /**< number of identical nodes, >= 1 */
    int rank;    /**< global rank whose log is reported: node * nGPUs + local index */
} tp_job;

/** Opaque result of planning: system, paths, graphs and channels. */
typedef struct tp_plan tp_plan;

/**
 * Plan a job on the topology in an NCCL topology XML file.
 * Files named by the configuration (NCCL_GRAPH_FILE) are read relative to the
 * working directory; dump files (NCCL_TOPO_DUMP_FILE, NCCL_GRAPH_DUMP_FILE)
 * are not written here: see tp_plan_write_dumps().
 * On failures that NCCL itself reports (e.g. a bad graph file) the plan is
 * still returned in *out with the log up to the failure, and the error status.
 */
TP_API tp_status tp_plan_file(tp_plan **out, const char *path, const tp_job *job,
                              const tp_config *cfg, tp_error *err);
/** Same as tp_plan_file() for an XML text in memory; `source` names it in errors. */
TP_API tp_status tp_plan_buffer(tp_plan **out, const char *xml, size_t len, const char *source,
                                const tp_job *job, const tp_config *cfg, tp_error *err);
/** Free a plan and everything it owns (NULL-safe). */
TP_API void tp_plan_free(tp_plan *plan);

/** Pipeline stages whose time a plan records (for benchmarks). */
typedef enum tp_stage {
    TP_STAGE_XML,      /**< parsing the topology XML */
    TP_STAGE_SYSTEM,   /**< NCCL's XML preparation and the system build */
    TP_STAGE_PATHS,    /**< paths, trim, paths again, per domain */
    TP_STAGE_SEARCH,   /**< every graph search, per domain */
    TP_STAGE_CHANNELS, /**< all-gather combination, preset/postset, P2P channels */
    TP_STAGE_COUNT
} tp_stage;

/** Wall-clock microseconds the plan spent in a stage. */
TP_API double tp_plan_stage_us(const tp_plan *plan, tp_stage stage);

/** Write NCCL_TOPO_DUMP_FILE / NCCL_GRAPH_DUMP_FILE if the configuration names them. */
TP_API tp_status tp_plan_write_dumps(const tp_plan *plan, tp_error *err);

/** @defgroup reports Reports */

/** The NCCL_DEBUG=INFO log lines NCCL 2.22.3 prints for the job's rank. */
TP_API tp_status tp_report_nccl_log(FILE *out, const tp_plan *plan, tp_error *err);

/** Output formats of the readable reports. */
typedef enum tp_format { TP_FORMAT_TEXT, TP_FORMAT_JSON, TP_FORMAT_DOT } tp_format;

/** Path matrix (GPU x GPU, GPU x NIC) with bottleneck and hops. */
TP_API tp_status tp_report_paths(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/** Graph search results and their decision trace. */
TP_API tp_status tp_report_search(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/** The whole plan: graphs, final channels and why, rings and trees. */
TP_API tp_status tp_report_plan(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/**
 * NIC use of every rank of the reported rank's node: NET entry/exit of each
 * ring channel and the rail it keeps or crosses, the NIC and PXN proxy of P2P
 * sends to remote peers, GDR, then findings in plain words (idle rails,
 * cross-rail channels, NICs on another NUMA node, PXN, NCCL_IB_HCA results).
 */
TP_API tp_status tp_report_nics(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/** The resolved topology in NCCL's XML format (as NCCL_TOPO_DUMP_FILE). */
TP_API tp_status tp_report_topology_xml(FILE *out, const tp_plan *plan, tp_error *err);

/** @defgroup mutate What-if edits of a topology */

/** Kinds of topology edits; each takes a textual spec. */
typedef enum tp_mutation_kind {
    TP_MUT_SET,        /**< "BUSID:ATTR=VALUE": on the <pci> (PCI attributes) or its <gpu> */
    TP_MUT_SET_NET,    /**< "NAME[:PORT]:ATTR=VALUE": on a <net> */
    TP_MUT_SET_CPU,    /**< "NUMAID:ATTR=VALUE": on a <cpu> */
    TP_MUT_REMOVE,     /**< "BUSID": a PCI device and its subtree, and NVLinks to its GPUs */
    TP_MUT_REMOVE_NET, /**< "NAME[:PORT]": a <net> (and its <nic> when left empty) */
    TP_MUT_NVLINK,     /**< "BUSID1,BUSID2=COUNT": NVLinks both ways (0 removes them) */
} tp_mutation_kind;

typedef struct tp_mutation {
    tp_mutation_kind kind;
    const char *spec; /**< borrowed for the call */
} tp_mutation;

/**
 * Apply the edits in order to a topology XML text and write the result in
 * NCCL's XML format to `out`. Bus ids may omit the PCI domain ("1a:00.0").
 * Fails with TP_ERR_CONFIG naming the spec when a target does not exist.
 */
TP_API tp_status tp_mutate_buffer(FILE *out, const char *xml, size_t len, const char *source,
                                  const tp_mutation *muts, size_t n_muts, tp_error *err);
/** Same as tp_mutate_buffer() for a file. */
TP_API tp_status tp_mutate_file(FILE *out, const char *path, const tp_mutation *muts,
                                size_t n_muts, tp_error *err);

/** @defgroup graphcheck Checking a graph file (beyond NCCL) */

/** Opaque result of checking an NCCL_GRAPH_FILE against a plan. */
typedef struct tp_graph_check tp_graph_check;

/**
 * Check the NCCL_GRAPH_FILE at `path` against the plan's system (the
 * reported rank's, trimmed as NCCL trims it). For every <graph>: channel
 * shapes (each GPU of the node once; NVLS: one head GPU), gpu and net
 * devices, nchannels against the <channel> elements, the path type and
 * bandwidth of every hop against the declared types and speeds, and the
 * link bandwidth NCCL 2.22.3's search would reserve for all the channels
 * together (links that would go over are named with their channels).
 * Findings are data in *out: see tp_graph_check_feasible(). Fails only when
 * the file cannot be read (TP_ERR_IO), is not XML (TP_ERR_XML) or is not a
 * graph file (TP_ERR_GRAPH with the element's position: missing or
 * unreadable attribute, wrong root or version). Caller owns *out.
 */
TP_API tp_status tp_graph_check_file(tp_graph_check **out, const tp_plan *plan, const char *path,
                                     tp_error *err);
/** Same as tp_graph_check_file() for XML text in memory; `source` names it in messages. */
TP_API tp_status tp_graph_check_buffer(tp_graph_check **out, const tp_plan *plan,
                                       const char *xml, size_t len, const char *source,
                                       tp_error *err);
/** 1 when nothing makes a graph of the file infeasible, else 0. */
TP_API int tp_graph_check_feasible(const tp_graph_check *chk);
/** Error-level findings, oversubscribed links included (0 when feasible). */
TP_API size_t tp_graph_check_error_count(const tp_graph_check *chk);
/** Free a graph check (NULL-safe). */
TP_API void tp_graph_check_free(tp_graph_check *chk);
/** Write a check's findings, graph by graph (TP_FORMAT_TEXT or TP_FORMAT_JSON). */
TP_API tp_status tp_report_graph_check(FILE *out, const tp_graph_check *chk, tp_format fmt,
                                       tp_error *err);

/**
 * Notes of the system stage: values NCCL 2.22.3 would substitute without a
 * word (unknown PCI speeds, NVLinks to missing GPUs, ...), each starting with
 * "source:line:col: ". Borrowed from the plan; NULL past the end.
 */
TP_API size_t tp_plan_note_count(const tp_plan *plan);
/** Note i (borrowed; valid until the plan is freed). */
TP_API const char *tp_plan_note(const tp_plan *plan, size_t i);

/** @defgroup compare Diff and health check of two topologies */

/** Layers of a comparison, in pipeline order. */
typedef enum tp_layer {
    TP_LAYER_SYSTEM,   /**< XML -> system: nodes, links and their attributes */
    TP_LAYER_PATHS,    /**< GPU-GPU, GPU-CPU and GPU-NET paths of the reported rank */
    TP_LAYER_GRAPHS,   /**< ring, tree, CollNet and NVLS search results */
    TP_LAYER_CHANNELS, /**< final channels, NVLS/P2P counts, rings and trees */
    TP_LAYER_COUNT
} tp_layer;

/** How much a difference matters to a health check. */
typedef enum tp_severity {
    TP_SEVERITY_INFO,  /**< harmless (renumbered bus ids, a better path, other orders) */
    TP_SEVERITY_WARN,  /**< a deviation that does not cost channels or bandwidth by itself */
    TP_SEVERITY_ERROR, /**< missing hardware, a worse GPU path, fewer channels, lower graph bw */
} tp_severity;

/** What a difference is about. */
typedef enum tp_diff_kind {
    TP_DIFF_NODE_MISSING,    /**< a node of the first plan is not in the second */
    TP_DIFF_NODE_EXTRA,      /**< a node of the second plan is not in the first */
    TP_DIFF_NODE_RENUMBERED, /**< matched by position or by NIC, with another NCCL id */
    TP_DIFF_NODE_ATTR,       /**< an attribute (compute capability, NIC speed, GDR, CPU) */
    TP_DIFF_NODE_MOVED,      /**< a GPU or NIC under another PCI parent or NUMA node */
    TP_DIFF_LINK_MISSING,
    TP_DIFF_LINK_EXTRA,
    TP_DIFF_LINK_BW,         /**< same link, another bandwidth */
    TP_DIFF_PATH,            /**< type, bandwidth or hops of a GPU path */
    TP_DIFF_GRAPH,           /**< a field or the channel order of a searched graph */
    TP_DIFF_CHANNELS,        /**< final channel counts, rings, trees */
} tp_diff_kind;

/** One difference between two plans (first plan -> second plan). */
typedef struct tp_difference {
    tp_layer layer;
    tp_diff_kind kind;
    tp_severity severity;
    const char *title; /**< static, what it means for a health check: "missing NVLink" */
    char text[320];    /**< old -> new: "PCI link GPU/0-1c000 -> PCI/0-18000: 12.0 -> 3.0 GB/s" */
} tp_difference;

/** Opaque list of the differences between two plans. */
typedef struct tp_comparison tp_comparison;

/**
 * Compare two plans of the same job (the first one is the reference: the
 * baseline of a health check) layer by layer, in pipeline order. Nodes are
 * matched by NCCL id (the bus id of GPUs, PCI switches and NICs, the NUMA id
 * of CPUs, ignoring the host byte); GPUs, PCI switches and NICs left
 * unmatched on both sides, when both sides have as many of them, are matched
 * by position in NCCL's order (bus ids get renumbered between machines of
 * one model); NETs are matched by their matched NIC and port (NET ids are
 * device indices that shift when a NIC disappears). Both plans must have
 * succeeded. Caller owns *out; the plans may be freed afterwards.
 */
TP_API tp_status tp_compare_plans(tp_comparison **out, const tp_plan *first,
                                  const tp_plan *second, tp_error *err);
/** Free a comparison (NULL-safe). */
TP_API void tp_comparison_free(tp_comparison *cmp);
/** Number of differences, and difference i (borrowed; NULL past the end). */
TP_API size_t tp_comparison_count(const tp_comparison *cmp);
/** Difference i (borrowed; valid until the comparison is freed). */
TP_API const tp_difference *tp_comparison_get(const tp_comparison *cmp, size_t i);
/** Number of differences of a severity. */
TP_API size_t tp_comparison_count_severity(const tp_comparison *cmp, tp_severity sev);
/** The first layer with a difference, or -1 when the plans are identical. */
TP_API int tp_comparison_first_layer(const tp_comparison *cmp);
/**
 * Why the collective channel count changed, in plain words ("collective
 * channels 12 -> 8: ring search 6 x 20.0 -> 4 x 20.0 GB/s"); "" when it did not.
 */
TP_API const char *tp_comparison_why(const tp_comparison *cmp);
/** `topoplan diff`: the differences layer by layer, then a summary (text or JSON). */
TP_API tp_status tp_report_diff(FILE *out, const tp_comparison *cmp, tp_format fmt,
                                tp_error *err);
/** `topoplan check`: the differences as findings, errors first (text or JSON). */
TP_API tp_status tp_report_check(FILE *out, const tp_comparison *cmp, tp_format fmt,
                                 tp_error *err);

/** @defgroup hca NCCL_IB_HCA */

/**
 * Whether NCCL 2.22.3 would use port `port` of IB device `name` under
 * NCCL_IB_HCA=`filter` (comma list of prefix[:port], leading '^' excludes,
 * '=' matches names exactly; NULL or "" selects every port). Returns 1 or 0.
 */
TP_API int tp_hca_selects(const char *filter, const char *name, int port);
/**
 * The prefix trap: 1 when a non-exact entry of `filter` matches `name` only
 * as a prefix followed by more digits ("mlx5_1" matching "mlx5_10"); the
 * entry's text is copied to `entry` (size bytes, NUL-terminated). 0 otherwise.
 */
TP_API int tp_hca_prefix_trap(const char *filter, const char *name, int port, char *entry,
                              size_t size);

/** @defgroup builtins Built-in topologies */

/** Number of topologies compiled into the library. */
TP_API size_t tp_builtin_count(void);
/** Name of builtin i (static), or NULL past the end. */
TP_API const char *tp_builtin_name(size_t i);
/** One-line description of builtin i (static). */
TP_API const char *tp_builtin_about(size_t i);
/** XML text of the builtin called `name`, or NULL (static storage). */
TP_API const char *tp_builtin_xml(const char *name);

#ifdef __cplusplus
}
#endif

#endif
