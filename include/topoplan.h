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

#include <stdbool.h>
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

/**
 * @defgroup version Versions
 * As hwloc and libgit2 do it: the macros give the version a program was
 * compiled against, tp_version() the version of the library it runs with.
 */

#define TOPOPLAN_VERSION_MAJOR 0
#define TOPOPLAN_VERSION_MINOR 2
#define TOPOPLAN_VERSION_PATCH 0
/** The version of topoplan itself, "MAJOR.MINOR.PATCH". */
#define TOPOPLAN_VERSION "0.2.0"
/** One comparable number: 0xMMmmpp (major, minor, patch). */
#define TOPOPLAN_VERSION_NUMBER                                                                    \
    ((TOPOPLAN_VERSION_MAJOR << 16) | (TOPOPLAN_VERSION_MINOR << 8) | TOPOPLAN_VERSION_PATCH)
/** The ABI version: the SONAME is libtopoplan.so.TOPOPLAN_SOVERSION. */
#define TOPOPLAN_SOVERSION 0
/** The NCCL version whose decisions topoplan reproduces, as NCCL_VERSION_CODE numbers it. */
#define TOPOPLAN_NCCL_VERSION_CODE 22203
/** The same, as text. */
#define TOPOPLAN_NCCL_VERSION "2.22.3"

/**
 * The version of the library running (not the header compiled against).
 * @param major, minor, patch  may be NULL; filled when not
 * @return TOPOPLAN_VERSION_NUMBER of the library
 */
TP_API unsigned tp_version(int *major, int *minor, int *patch);
/** @return the library's version text, e.g. "0.2.0" (static storage). */
TP_API const char *tp_version_string(void);
/** @return the NCCL version the library reproduces, NCCL_VERSION_CODE style (22203). */
TP_API int tp_nccl_version(void);
/** @return the same as text, "2.22.3" (static storage). */
TP_API const char *tp_nccl_version_string(void);

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
    TP_ERR_ARGUMENT, /**< a NULL or out-of-range argument: a bug in the caller */
    TP_ERR_USAGE,    /**< a job the caller asked for is out of range (nodes, rank) */
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

/**
 * Read a whole input file into a NUL-terminated buffer; the caller frees *out
 * with free(). Fails with TP_ERR_IO naming the path and the system error
 * (missing file, directory, read error) or TP_ERR_XML when the file is larger
 * than TP_MAX_INPUT_BYTES. A FIFO without a writer reads as empty.
 */
TP_API tp_status tp_read_file(char **out, size_t *len, const char *path, tp_error *err);

/**
 * An output file that never destroys what it replaces: the text goes to a new
 * file beside the target (same folder, so the rename is atomic) and replaces
 * the target only at tp_output_close(..., keep = true) after every byte was
 * written. A failure, or keep = false, leaves the target as it was. A target
 * that exists and is not a regular file (a terminal, /dev/null, a FIFO) is
 * written in place. The library's own dump files are written this way.
 */
typedef struct tp_output tp_output;
/**
 * @param out   receives the file; the caller owns it (tp_output_close)
 * @param path  the target
 * @return TP_OK; TP_ERR_IO naming the path and the system error; TP_ERR_ARGUMENT for NULLs
 */
TP_API tp_status tp_output_open(tp_output **out, const char *path, tp_error *err);
/** The stream to write to (borrowed, valid until tp_output_close); NULL when o is NULL. */
TP_API FILE *tp_output_stream(const tp_output *o);
/**
 * Close and free the file: with keep, rename it over the target when every
 * write succeeded; otherwise remove it. NULL is a no-op.
 * @return TP_OK; TP_ERR_IO naming the target when a write or the close failed
 *   (kept or not: the target is then as it was)
 */
TP_API tp_status tp_output_close(tp_output *o, bool keep, tp_error *err);

/** Output formats of the readable reports. */
typedef enum tp_format { TP_FORMAT_TEXT, TP_FORMAT_JSON, TP_FORMAT_DOT } tp_format;

/** @defgroup config Configuration: every NCCL_* parameter */

/** Opaque set of NCCL_* parameters; unset ones take NCCL 2.22.3's defaults. */
typedef struct tp_config tp_config;

/**
 * Build a configuration from a NULL-terminated list of "KEY=VALUE" strings
 * (a process environment, or the CLI's --env list; their source is
 * "environment"). Values are read as NCCL 2.22.3 reads them: a number with
 * trailing text is taken, text that is no number reads as 0, an out-of-range
 * number or an unknown path level is ignored (NCCL's default); each such
 * value, and each NCCL_* name topoplan does not model, leaves a warning
 * (tp_config_warning).
 */
TP_API tp_status tp_config_new(tp_config **out, const char *const *envp, tp_error *err);
/** Set one variable, overriding any earlier value; same reading as tp_config_new. */
TP_API tp_status tp_config_set(tp_config *cfg, const char *key, const char *value, tp_error *err);
/** A copy of a configuration (to plan a what-if with a few variables changed). */
TP_API tp_status tp_config_copy(tp_config **out, const tp_config *cfg, tp_error *err);
/** tp_config_set() recording where the value came from (e.g. "--env", "--env-file F:3"). */
TP_API tp_status tp_config_set_from(tp_config *cfg, const char *key, const char *value,
                                    const char *source, tp_error *err);
/** Where a set variable's value came from, or NULL when it is unset (owned by cfg). */
TP_API const char *tp_config_source(const tp_config *cfg, const char *key);
/** Number of warnings about the values and names given so far. */
TP_API size_t tp_config_warning_count(const tp_config *cfg);
/** Warning i (0-based), or NULL; owned by cfg. */
TP_API const char *tp_config_warning(const tp_config *cfg, size_t i);
/** Longest line of an env file (an NCCL_* assignment is far shorter). */
#define TP_ENV_FILE_MAX_LINE 4096
/**
 * Apply an env file's text: KEY=VALUE lines, blank lines and # comments
 * skipped, a trailing CR ignored. `source` names the file in errors. A line
 * without '=', longer than TP_ENV_FILE_MAX_LINE bytes, or a NUL byte fails
 * with TP_ERR_CONFIG at source:line:1; an invalid value as tp_config_set()
 * fails, its message prefixed with source:line. Lines before the bad one stay applied.
 * Each value records "--env-file SOURCE:LINE" as its origin (tp_config_source).
 */
TP_API tp_status tp_config_load_env_text(tp_config *cfg, const char *text, size_t len,
                                         const char *source, tp_error *err);
/**
 * Select the NCCL version whose rules the configuration models ("2.27.5";
 * tp_nccl_profile_info lists them). A new configuration models the default
 * profile: the newest one exact on its public suite. Parameter defaults follow
 * the version.
 * @return TP_OK; TP_ERR_USAGE for a version without a profile (the message
 *   names the supported ones); TP_ERR_ARGUMENT when cfg or version is NULL
 */
TP_API tp_status tp_config_set_nccl(tp_config *cfg, const char *version, tp_error *err);
/** @return the NCCL version the configuration models ("2.22.3"), NULL when cfg is NULL */
TP_API const char *tp_config_nccl(const tp_config *cfg);

/** One NCCL version profile, as tp_nccl_profile_info fills it. */
typedef struct tp_nccl_profile_info {
    const char *nccl;  /**< "2.27.5" (static storage) */
    int version_code;  /**< NCCL_VERSION_CODE style: 22705 */
    bool exact;        /**< passes its whole public conformance suite */
    bool is_default;   /**< the profile a new configuration models */
    int public_passed; /**< public conformance cases passed ... */
    int public_total;  /**< ... of this many */
} tp_nccl_profile_info;
/** Version of tp_nccl_profile_info; a caller built with it passes sizeof its record. */
#define TP_NCCL_PROFILE_INFO_VERSION 1
/** @return the number of NCCL version profiles (oldest first) */
TP_API int tp_nccl_profile_count(void);
/**
 * @param i     0 .. tp_nccl_profile_count()-1
 * @param info  the caller's record; @param size its size (sizeof(tp_nccl_profile_info)):
 *   fields past it are not written
 * @return TP_OK; TP_ERR_ARGUMENT when info is NULL or i out of range
 */
TP_API tp_status tp_nccl_profile_info_at(int i, tp_nccl_profile_info *info, size_t size,
                                         tp_error *err);
/** Free a configuration (NULL-safe). */
TP_API void tp_config_free(tp_config *cfg);
/** Write the effective parameter table (name, value, default or set) as text. */
TP_API tp_status tp_config_write(FILE *out, const tp_config *cfg, tp_error *err);
/**
 * `topoplan env`: the parameter table as text (tp_config_write()) or as a
 * JSON document (schema topoplan.env); TP_ERR_CONFIG for other formats.
 */
TP_API tp_status tp_report_env(FILE *out, const tp_config *cfg, tp_format fmt, tp_error *err);
/**
 * `topoplan versions`: the NCCL version profiles, each exact or partial with
 * its public conformance tally, the default and the one cfg selects marked;
 * text or a JSON document (schema topoplan.versions); TP_ERR_CONFIG for other formats.
 */
TP_API tp_status tp_report_versions(FILE *out, const tp_config *cfg, tp_format fmt, tp_error *err);

/** @defgroup plan Planning a job */

/** Most nodes a job may have (topoplan's limit: such a job still plans in about a second). */
#define TP_MAX_JOB_NODES 65536
/** Largest input file topoplan reads (topology, graph file, env file): real ones are < 1 MiB. */
#define TP_MAX_INPUT_BYTES (16u << 20)
/** Deepest element nesting of an XML input (NCCL's files nest about 8 deep; walks of a deeper
 * tree would exhaust the stack). */
#define TP_MAX_XML_DEPTH 256

/**
 * What job to plan: its nodes and the rank whose view is reported. Nodes use
 * the main topology unless node_topos names another one: node k (1 <= k <=
 * n_node_topos) is planned on the topology XML file node_topos[k - 1] (node 0
 * always on the main one). Ranks are numbered node by node: the GPUs of the
 * nodes before, plus the local index.
 * The struct grows at its end in later versions without breaking callers:
 * `version` says which fields the caller knows. Initialise it with
 * TP_JOB_INIT or tp_job_init(); a zeroed struct (version 0) reads as version 1.
 */
typedef struct tp_job {
    unsigned version; /**< TP_JOB_VERSION of the header the caller was built with (0: 1) */
    int n_nodes;      /**< number of nodes, 1..TP_MAX_JOB_NODES */
    int rank;         /**< global rank whose log is reported */
    /* version 2: */
    const char *const *node_topos; /**< borrowed for the call; NULL when n_node_topos is 0 */
    int n_node_topos;              /**< at most n_nodes - 1 */
} tp_job;

/** The tp_job layout this header describes. */
#define TP_JOB_VERSION 2
/** A job of one node reported at rank 0. */
#define TP_JOB_INIT                                                                                \
    {                                                                                              \
        TP_JOB_VERSION, 1, 0, NULL, 0                                                              \
    }

/**
 * Fill a job with the defaults of its version (one node, rank 0).
 * @param job      the caller's record
 * @param version  TP_JOB_VERSION (1..the library's own)
 * @return TP_OK, or TP_ERR_ARGUMENT when job is NULL or version unknown to the library
 */
TP_API tp_status tp_job_init(tp_job *job, unsigned version);

/** Opaque result of planning: system, paths, graphs and channels. */
typedef struct tp_plan tp_plan;

/**
 * Plan a job on the topology in an NCCL topology XML file.
 * Files named by the configuration (NCCL_GRAPH_FILE) are read relative to the
 * working directory; dump files (NCCL_TOPO_DUMP_FILE, NCCL_GRAPH_DUMP_FILE)
 * are not written here: see tp_plan_write_dumps().
 *
 * @param out   receives the plan; the caller owns it (tp_plan_free)
 * @param path  the topology XML file
 * @param job   the job (errors name its fields: "job.n_nodes", "job.rank")
 * @param cfg   the NCCL_* configuration (copied: may be freed afterwards)
 * @param err   filled on failure (may be NULL)
 * @return TP_OK; on failure *out is NULL, except for the failures NCCL
 *   itself reports while planning (TP_ERR_TOPOLOGY, TP_ERR_CONFIG or
 *   TP_ERR_GRAPH after the XML was read and the job checked: a bad graph
 *   file, a one-sided NVLink, ...; TP_ERR_IO: an NCCL_GRAPH_FILE it cannot
 *   open) or while loading the topology file (a file
 *   NCCL 2.22.3's own XML parser refuses: TP_ERR_XML or TP_ERR_TOPOLOGY; a
 *   file it cannot open: TP_ERR_IO): then *out is the plan with NCCL's log up
 *   to the failure (tp_report_nccl_log), tp_plan_status() gives the status,
 *   and the caller still frees it. TP_ERR_ARGUMENT when out, path or job is
 *   NULL (cfg NULL means NCCL's defaults).
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
/**
 * After tp_report_nccl_log(): the algorithm/protocol selection NCCL 2.22.3
 * makes for one call of each collective (AllReduce, AllGather,
 * ReduceScatter, Broadcast, Reduce; float32 sum, 8 B to 8 GiB), as the
 * "<n> Bytes -> Algo a proto p time t" lines rank 0 prints under TUNING.
 * Nothing for a one-rank job or a failed plan. TP_ERR_GRAPH when NCCL finds
 * no algorithm/protocol (its warning is printed).
 */
TP_API tp_status tp_report_nccl_log_sizes(FILE *out, const tp_plan *plan, tp_error *err);

/** Path matrix (GPU x GPU, GPU x NIC) with bottleneck and hops. */
TP_API tp_status tp_report_paths(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/** Graph search results and their decision trace. */
TP_API tp_status tp_report_search(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/** tp_report_search() plus topoplan's own pruning of the search (passes it cut short, labelled
 *  as topoplan's, never NCCL's decisions). */
TP_API tp_status tp_report_search_pruning(FILE *out, const tp_plan *plan, tp_format fmt,
                                          tp_error *err);
/** The whole plan: graphs, final channels and why, rings and trees. */
TP_API tp_status tp_report_plan(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/**
 * NIC use of every rank of the reported rank's node: NET entry/exit of each
 * ring channel and the rail it keeps or crosses, the NIC and PXN proxy of P2P
 * sends to remote peers, GDR, then findings in plain words (idle rails,
 * cross-rail channels, NICs on another NUMA node, PXN, NCCL_IB_HCA results).
 */
TP_API tp_status tp_report_nics(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/**
 * `plan --format dot`: the system (NICs by name, links with type and
 * bandwidth), the ring and tree channels of the reported rank's node drawn
 * over it (channel < 0: every channel; else only that one) and a legend, as
 * a Graphviz graph laid out left to right.
 */
TP_API tp_status tp_report_plan_picture(FILE *out, const tp_plan *plan, int channel, tp_error *err);
/**
 * `topoplan matrix`: like `nvidia-smi topo -m`, from NCCL's paths: the path
 * type of every GPU pair and GPU-NET pair, each GPU's NUMA node and CPU
 * affinity, the NICs by name, a legend (text; JSON schema topoplan.matrix).
 * NET columns exist in multi-node jobs only, as NCCL keeps NETs only then.
 */
TP_API tp_status tp_report_matrix(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err);
/**
 * The resolved topology in NCCL's XML format, as NCCL_TOPO_DUMP_FILE holds it
 * for the reported rank (the XML as NCCL prepared it on that rank's node).
 * @return TP_OK, TP_ERR_IO on a write error, TP_ERR_ARGUMENT when out or plan is NULL
 */
TP_API tp_status tp_report_topology_xml(FILE *out, const tp_plan *plan, tp_error *err);

/**
 * The plan as one self-contained HTML page (`topoplan report`): CSS, script
 * and SVG pictures inline, no network, the same bytes for the same plan. The
 * reported rank's system laid out by rows (NVSwitches, GPUs in index order,
 * PCI switches, CPUs with their NUMA sides, NICs by name) with a picker that
 * highlights a channel's route or a pattern's links, hover details (link
 * bandwidth, paths and channels; a GPU's NIC per channel, PXN, GDR), each
 * graph's explanation with its bounding links, the path matrix as a heat map,
 * the tuning model on log axes with a table of common sizes, and, for nodes
 * that differ, the node that limits the job beside a good one; its header
 * names the NCCL version modelled (a partial profile with its public tally),
 * and a findings panel lists the setting notes (tp_setting_notes) and
 * topology-file lints (tp_lint_plan) when there are any (with a baseline:
 * tp_report_html_check). Without the script the pictures stay whole (ring
 * channel 0 highlighted).
 */
TP_API tp_status tp_report_html(FILE *out, const tp_plan *plan, tp_error *err);

/** @defgroup tune Tuning: NCCL's algorithm/protocol choice and predicted bandwidth */

/** What a tuning report covers. */
typedef struct tp_tune_options {
    int coll;           /**< -1: every collective; else tp_tune_coll_from_name()'s value */
    uint64_t min_bytes; /**< first size (0: 8 B); sizes double up to max_bytes */
    uint64_t max_bytes; /**< last size (0: 8 GiB); at most 1 TiB */
} tp_tune_options;

/**
 * NCCL's number of a collective name ("AllReduce", case-insensitive):
 * Broadcast 0, Reduce 1, AllGather 2, ReduceScatter 3, AllReduce 4; -1 if unknown.
 */
TP_API int tp_tune_coll_from_name(const char *name);
/**
 * NCCL 2.22.3's tuning model of the plan (rank 0's view) applied per
 * collective and size: algorithm, protocol, channels, threads, predicted
 * time, algorithm and bus bandwidth (nccl-tests' factors), the sizes where
 * the choice changes and the competing times. TP_FORMAT_TEXT or
 * TP_FORMAT_JSON (schema "topoplan.tune", schemas/tune.schema.json). `opt` may be NULL.
 */
TP_API tp_status tp_report_tune(FILE *out, const tp_plan *plan, const tp_tune_options *opt,
                                tp_format fmt, tp_error *err);
/** NCCL's name of a collective, algorithm or protocol number (static); NULL out of range. */
TP_API const char *tp_tune_coll_name(int coll);
TP_API const char *tp_tune_algo_name(int algorithm);
TP_API const char *tp_tune_proto_name(int protocol);

/** NCCL's choice for one call (tp_plan_tune_call). */
typedef struct tp_tune_call {
    int algorithm; /**< Tree 0, Ring 1, CollNetDirect 2, CollNetChain 3, NVLS 4, NVLSTree 5 */
    int protocol;  /**< LL 0, LL128 1, Simple 2 */
    float time_us; /**< the predicted time NCCL compares (its "time" in the TUNING log) */
    int channels;  /**< channels and threads per channel NCCL launches with */
    int threads;
    double algbw_gbs; /**< n_bytes / time */
    double busbw_gbs; /**< algbw x nccl-tests' factor of the collective */
    int from_backup;  /**< 1 when only the Ring backup bandwidth was usable */
} tp_tune_call;

/**
 * The algorithm/protocol NCCL 2.22.3 picks for one call of `coll` (see
 * tp_tune_coll_from_name) moving `n_bytes` (NCCL's nBytes: the whole buffer
 * of AllReduce/Broadcast/Reduce, all ranks' data for AllGather/ReduceScatter),
 * one float32 sum call, not grouped, rank 0's model. A one-rank job gets
 * Ring/Simple in 0 us (NCCL copies locally).
 * @return TP_OK; TP_ERR_ARGUMENT on a NULL pointer, a failed plan, coll out of
 *   range or n_bytes 0; TP_ERR_GRAPH when NCCL finds no algorithm/protocol
 */
TP_API tp_status tp_plan_tune_call(const tp_plan *plan, int coll, uint64_t n_bytes,
                                   tp_tune_call *info, size_t size);
/**
 * One entry of NCCL's tuning table as rank 0 prints it: latency (us) and
 * algorithm bandwidth (GB/s) after NCCL_ALGO/NCCL_PROTO (0 when disabled).
 * @return TP_OK; TP_ERR_ARGUMENT on a NULL pointer, a failed or one-rank plan,
 *   an index out of range
 */
TP_API tp_status tp_plan_tune_entry(const tp_plan *plan, int coll, int algorithm, int protocol,
                                    float *latency_us, float *bw_gbs);
/** The same sweep as an SVG plot: predicted busbw against size per algorithm/protocol. */
TP_API tp_status tp_report_tune_svg(FILE *out, const tp_plan *plan, const tp_tune_options *opt,
                                    tp_error *err);

/** @defgroup mutate What-if edits of a topology */

/** Kinds of topology edits; each takes a textual spec. */
typedef enum tp_mutation_kind {
    TP_MUT_SET,         /**< "BUSID:ATTR=VALUE": on the <pci> (PCI attributes) or its <gpu> */
    TP_MUT_SET_NET,     /**< "NAME[:PORT]:ATTR=VALUE": on a <net> */
    TP_MUT_SET_CPU,     /**< "NUMAID:ATTR=VALUE": on a <cpu> */
    TP_MUT_REMOVE,      /**< "BUSID": a PCI device and its subtree, and NVLinks to its GPUs */
    TP_MUT_REMOVE_NET,  /**< "NAME[:PORT]": a <net> (and its <nic> when left empty) */
    TP_MUT_NVLINK,      /**< "BUSID1,BUSID2=COUNT": NVLinks both ways (0 removes them); BUSID2
                             may be an NVSwitch the GPU links to (that GPU's links only) */
    TP_MUT_NVLINK_DOWN, /**< "BUSID[,TARGET]": one NVLink of the GPU down (to TARGET, else to
                             the target it has the most links to) */
    TP_MUT_ADD,         /**< "NEWBUSID=BUSID": a copy of a GPU or NIC device (next dev/rank,
                             NICs a new name and guid; GPU-to-GPU NVLinks not copied) */
} tp_mutation_kind;

typedef struct tp_mutation {
    tp_mutation_kind kind;
    const char *spec; /**< borrowed for the call */
} tp_mutation;

/**
 * Apply the edits in order to a topology XML text and write the result in
 * NCCL's XML format to `out`. Bus ids may omit the PCI domain ("1a:00.0").
 * Fails with TP_ERR_CONFIG naming the spec when a target does not exist or
 * an attribute is not one topoplan's loader reads on that element.
 */
TP_API tp_status tp_mutate_buffer(FILE *out, const char *xml, size_t len, const char *source,
                                  const tp_mutation *muts, size_t n_muts, tp_error *err);
/** Same as tp_mutate_buffer() for a file. */
TP_API tp_status tp_mutate_file(FILE *out, const char *path, const tp_mutation *muts, size_t n_muts,
                                tp_error *err);
/**
 * tp_mutate_file(), and each attribute edit's value checked with the
 * loader's own rules: the topology after every --set-like edit must load as
 * it did before it (TP_ERR_CONFIG naming the edit and the loader's message).
 */
TP_API tp_status tp_mutate_file_checked(FILE *out, const char *path, const tp_mutation *muts,
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
TP_API tp_status tp_graph_check_buffer(tp_graph_check **out, const tp_plan *plan, const char *xml,
                                       size_t len, const char *source, tp_error *err);
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
/**
 * `topoplan validate`: whether NCCL accepts the topology. `failure` is the
 * planning error (NULL when accepted; then text prints "ok" and the notes,
 * JSON (schema topoplan.validate) carries the error); `plan` may be NULL when
 * planning failed; `chk` (may be NULL) is the graph check of the replayed
 * graph file, whose infeasibility is noted.
 */
TP_API tp_status tp_report_validate(FILE *out, const tp_plan *plan, const tp_error *failure,
                                    const tp_graph_check *chk, tp_format fmt, tp_error *err);

/** @defgroup cost What a change costs a job, in NCCL's own tuning model */

/** The AllReduce calls a cost is stated for: 1 MiB, 64 MiB, 256 MiB and 1 GiB. */
#define TP_COST_CALLS 4

/** One call in two plans: NCCL's choice and prediction before and after. */
typedef struct tp_call_cost {
    uint64_t n_bytes;
    tp_tune_call before, after; /**< algorithm -1: NCCL finds no algorithm/protocol */
    double busbw_change_pct;    /**< (after - before) / before x 100: negative is slower */
} tp_call_cost;

/** What going from one plan to another costs: AllReduce at TP_COST_CALLS sizes. */
typedef struct tp_job_cost {
    int n_calls;
    tp_call_cost calls[TP_COST_CALLS];
    double worst_change_pct; /**< the lowest busbw_change_pct (0 when no call got slower) */
} tp_job_cost;

/**
 * Compare NCCL 2.22.3's choice and predicted bus bandwidth for one float32
 * AllReduce of each TP_COST_CALLS size in `before` and `after` (e.g. a job of
 * baseline nodes and the same job with one deviating node).
 * @return TP_OK; TP_ERR_ARGUMENT on a NULL pointer or a failed plan
 */
TP_API tp_status tp_plan_cost(tp_job_cost *out, const tp_plan *before, const tp_plan *after,
                              tp_error *err);
/**
 * A cost in one line: "AllReduce 1 MiB NVLS/Simple 85.1 -> Ring/LL128 60.2
 * GB/s busbw (-29.3 %), 64 MiB ..."; calls whose choice and busbw stay the
 * same say "unchanged". Truncated to size bytes (NUL-terminated).
 */
TP_API void tp_job_cost_text(const tp_job_cost *cost, char *buf, size_t size);

/** @defgroup compare Diff and health check of two topologies */

/** Layers of a comparison, in pipeline order. */
typedef enum tp_layer {
    TP_LAYER_SYSTEM,   /**< XML -> system: nodes, links and their attributes */
    TP_LAYER_PATHS,    /**< GPU-GPU, GPU-CPU and GPU-NET paths of the reported rank */
    TP_LAYER_GRAPHS,   /**< ring, tree, CollNet and NVLS search results */
    TP_LAYER_CHANNELS, /**< final channels, NVLS/P2P counts, rings and trees */
    TP_LAYER_TUNING,   /**< NCCL's algorithm/protocol choice per collective and size */
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
    TP_DIFF_LINK_BW,  /**< same link, another bandwidth */
    TP_DIFF_PATH,     /**< type, bandwidth or hops of a GPU path */
    TP_DIFF_GRAPH,    /**< a field or the channel order of a searched graph */
    TP_DIFF_CHANNELS, /**< final channel counts, rings, trees */
    TP_DIFF_TUNING,   /**< the algorithm/protocol NCCL picks, or its predicted time */
} tp_diff_kind;

/** A device a difference names, as operators know it and as NCCL's log names it. */
typedef struct tp_diff_device {
    char name[64];   /**< "GPU 3", "mlx5_3", "NIC mlx5_3", "PCIe switch", "NVSwitch", "NUMA node 0";
                          "" when the difference names no device */
    char bus_id[32]; /**< PCI devices (GPU, NIC, PCI switch): "0000:5f:00.0"; else "" */
    char nccl_id[32]; /**< NCCL's id: "GPU/0-5f000", "NET/0-3", "CPU/0-0", "NVS/0-0" */
} tp_diff_device;

/** A quantity a difference compares, first plan -> second plan. */
typedef struct tp_diff_value {
    const char *quantity; /**< static: "bandwidth", "link_width", "link_speed", "nic_speed",
                               "gdr", "compute_capability", "hops", "channels", "busbw", "time" */
    const char *unit;     /**< static: "GB/s", "lanes", "GT/s", "us", or "" (a count or a flag) */
    int has_before, has_after; /**< 0 on the side that has no such value (a missing link) */
    double before, after;
} tp_diff_value;

/** Most values one difference compares. */
#define TP_DIFF_MAX_VALUES 4

/** One difference between two plans (first plan -> second plan). */
typedef struct tp_difference {
    tp_layer layer;
    tp_diff_kind kind;
    tp_severity severity;
    const char *title; /**< static, what it means for a health check: "missing NVLink" */
    char text[320];    /**< old -> new: "PCI link GPU/0-1c000 -> PCI/0-18000: 12.0 -> 3.0 GB/s" */
    /** 1: a consequence of the root causes (the hardware deviations of the system layer: what
     *  they change in paths, graphs, channels, tuning, or a NET lost with its NIC); listed under
     *  them by `check` and not counted by tp_comparison_count_severity. 0: a root cause. */
    int consequence;
    /** The device it is about (for a link: the end nearer the GPU), named on the side that has
     *  it (the first plan's unless only the second has it); device.name "" when none. */
    tp_diff_device device;
    /** A link's other end, a path's destination; peer.name "" when none. */
    tp_diff_device peer;
    /** The quantities it compares, before -> after (link width and bandwidth, channels, busbw). */
    int n_values;
    tp_diff_value values[TP_DIFF_MAX_VALUES];
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
TP_API tp_status tp_compare_plans(tp_comparison **out, const tp_plan *first, const tp_plan *second,
                                  tp_error *err);
/**
 * Untrusted text (a file name, an NCCL_* value, a message quoting them) as a
 * terminal may show it: control bytes (C0, DEL and the UTF-8 C1 range) as
 * \xHH, everything else as it is; cut to fit `size` (room for a NUL). Returns
 * buf. Every report and message that echoes such text goes through it.
 */
TP_API char *tp_printable(char *buf, size_t size, const char *s);
/**
 * Write s as a JSON string: quotes, backslashes and control bytes escaped,
 * every byte that is not part of well-formed UTF-8 (a file name's, say) as
 * \ufffd, so that any text gives valid JSON. The reports' own writer.
 */
TP_API void tp_json_write_string(FILE *out, const char *s);
/** Free a comparison (NULL-safe). */
TP_API void tp_comparison_free(tp_comparison *cmp);
/**
 * A key under which node topologies may share one check against `baseline`
 * (the fleet check): two texts with equal keys give the same plan for any job
 * and configuration (up to the GUID values messages print) and the same
 * comparison with the baseline. It is the tree the plan reads (NCCL's own
 * reader), every value as written, except that each <net> guid stands for its
 * class under NCCL's readings of it (the asic "0x%lx", equal or not to a
 * baseline NET's; the IB port GUID). A text the plan cannot read fails with
 * the plan's error: it shares nothing. Caller frees *key (free()).
 */
TP_API tp_status tp_compare_key(char **key, size_t *key_len, const tp_plan *baseline,
                                const char *xml, size_t len, tp_error *err);
/** Number of differences, and difference i (borrowed; NULL past the end). */
TP_API size_t tp_comparison_count(const tp_comparison *cmp);
/** Difference i (borrowed; valid until the comparison is freed). */
TP_API const tp_difference *tp_comparison_get(const tp_comparison *cmp, size_t i);
/** Number of root causes (differences that are no consequence) of a severity. */
TP_API size_t tp_comparison_count_severity(const tp_comparison *cmp, tp_severity sev);
/**
 * State what the second plan's node costs a job (health check): `job_base` is
 * a job of baseline nodes, `job_node` the same job with the checked node among
 * them, or the node alone (one-node jobs), both planned by the caller. Call it
 * for up to two job sizes (the node alone, and among baseline nodes); a size
 * measured again replaces its cost. The cost is NCCL's tuning model's
 * (tp_plan_cost: AllReduce 1 MiB to 1 GiB) and sets the severity of every
 * root cause that is not INFO: ERROR when a call of any job measured gets at
 * least TP_COST_ERROR_PCT percent slower, else WARN (a missing GPU stays
 * ERROR), so the severity follows the cost, not the --nodes of the comparison.
 * `check` reports print the costs under the root causes (text and JSON).
 * @return TP_OK; TP_ERR_ARGUMENT on a NULL pointer, a failed plan or a third size
 */
TP_API tp_status tp_comparison_set_job(tp_comparison *cmp, const tp_plan *job_base,
                                       const tp_plan *job_node, tp_error *err);
/** Busbw loss (percent, of any TP_COST_CALLS call) from which a deviation is an ERROR. */
#define TP_COST_ERROR_PCT 1.0
/** Cost i set by tp_comparison_set_job (borrowed), NULL past the end; *n_nodes its job size. */
TP_API const tp_job_cost *tp_comparison_job_cost(const tp_comparison *cmp, int i, int *n_nodes);
/** The first layer with a difference, or -1 when the plans are identical. */
TP_API int tp_comparison_first_layer(const tp_comparison *cmp);
/**
 * Why the collective channel count changed, in plain words ("collective
 * channels 12 -> 8: ring search 6 x 20.0 -> 4 x 20.0 GB/s"); "" when it did not.
 */
TP_API const char *tp_comparison_why(const tp_comparison *cmp);
/** `topoplan diff`: the differences layer by layer, then a summary (text or JSON). */
TP_API tp_status tp_report_diff(FILE *out, const tp_comparison *cmp, tp_format fmt, tp_error *err);
/** `topoplan check`: the differences as findings, errors first (text or JSON). */
TP_API tp_status tp_report_check(FILE *out, const tp_comparison *cmp, tp_format fmt, tp_error *err);

/**
 * `check --report` / `diff --report`: one self-contained HTML page (as
 * tp_report_html) with both plans' systems side by side, the devices and
 * links one side lacks or has otherwise marked in each, and the findings
 * (check == true) or differences, each with a button marking the devices it
 * names. `first` and `second` are the plans compared into `cmp`.
 */
TP_API tp_status tp_report_compare_html(FILE *out, const tp_comparison *cmp, const tp_plan *first,
                                        const tp_plan *second, bool check, tp_error *err);
/**
 * tp_report_html with a findings panel for a health check of the plan's node:
 * `check` compares a baseline's plan (first) with a plan of this topology
 * (second), as `topoplan check` makes it (tp_compare_plans, then
 * tp_comparison_set_job for what the node costs a job); its root causes are
 * listed with their severity and that cost, their consequences folded under
 * them, each with a button marking the devices it names. NULL: as
 * tp_report_html, whose page lists the setting notes and topology-file lints
 * (with their severity and measured cost) when there are any.
 */
TP_API tp_status tp_report_html_check(FILE *out, const tp_plan *plan, const tp_comparison *check,
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
 * With an exclusion filter ("^mlx5_1") the trapped device is excluded too.
 */
TP_API int tp_hca_prefix_trap(const char *filter, const char *name, int port, char *entry,
                              size_t size);

/**
 * @defgroup model NCCL's topology model: enumerations
 * The numbers are NCCL 2.22.3's own; their order is meaningful (path types
 * run from best to worst; link types share numbers with path types).
 */

/** Node types, in NCCL's order. */
typedef enum tp_node_type {
    TP_NODE_GPU,
    TP_NODE_PCI,
    TP_NODE_NVS, /**< NVSwitch */
    TP_NODE_CPU, /**< a NUMA domain */
    TP_NODE_NIC,
    TP_NODE_NET, /**< a network device (a NIC port) */
    TP_NODE_TYPE_COUNT
} tp_node_type;

/** Link types (numbered as the path type they make). */
typedef enum tp_link_type {
    TP_LINK_LOC = 0,
    TP_LINK_NVL = 1,
    TP_LINK_PCI = 3,
    TP_LINK_SYS = 7,
    TP_LINK_NET = 8,
} tp_link_type;

/** Path types, best to worst. */
typedef enum tp_path_type {
    TP_PATH_LOC,
    TP_PATH_NVL,
    TP_PATH_NVB,
    TP_PATH_PIX,
    TP_PATH_PXB,
    TP_PATH_PXN,
    TP_PATH_PHB,
    TP_PATH_SYS,
    TP_PATH_NET,
    TP_PATH_DIS,
    TP_PATH_TYPE_COUNT
} tp_path_type;

/** Graph patterns (NCCL 2.22.3 graph.h). */
typedef enum tp_pattern {
    TP_PATTERN_BALANCED_TREE = 1,
    TP_PATTERN_SPLIT_TREE = 2,
    TP_PATTERN_TREE = 3,
    TP_PATTERN_RING = 4,
    TP_PATTERN_NVLS = 5,
    TP_PATTERN_COLLNET_DIRECT = 6,
} tp_pattern;

/** The graphs a plan searches, in NCCL's order of computation. */
typedef enum tp_graph_kind {
    TP_GRAPH_RING,
    TP_GRAPH_TREE,
    TP_GRAPH_COLLNET_CHAIN,  /**< never searched: no CollNet plugin (0 channels) */
    TP_GRAPH_COLLNET_DIRECT, /**< never searched: no CollNet plugin (0 channels) */
    TP_GRAPH_NVLS,           /**< 0 channels when NVLS is not supported */
    TP_GRAPH_COUNT
} tp_graph_kind;

/** NCCL's names: "GPU", "NVL", "PXB", "ring", ...; "?" when out of range (static). */
TP_API const char *tp_node_type_str(tp_node_type type);
/** @copydoc tp_node_type_str ("" for the numbers between link types). */
TP_API const char *tp_link_type_str(tp_link_type type);
/** @copydoc tp_node_type_str */
TP_API const char *tp_path_type_str(tp_path_type type);
/** @copydoc tp_node_type_str ("balanced tree", "ring", "nvls", ...) */
TP_API const char *tp_pattern_str(tp_pattern pattern);
/** @copydoc tp_node_type_str ("ring", "tree", "collnet-chain", "collnet-direct", "nvls") */
TP_API const char *tp_graph_kind_str(tp_graph_kind kind);

/**
 * @defgroup query Reading a plan
 * Read-only queries over a finished plan (tp_plan_status() == TP_OK for all
 * but tp_plan_status, tp_plan_log_count and tp_plan_log_line). Every pointer
 * returned is borrowed: it stays valid until the plan is freed, and the
 * caller never frees it. Arguments are checked: a NULL or out-of-range
 * argument gives the documented error value (-1, NULL or TP_ERR_ARGUMENT),
 * never a crash.
 *
 * Records the library fills (tp_node_info, ...) can grow at their end in
 * later versions: the caller passes the size of its own record, and the
 * library writes no more than that (fields it does not know stay as they were).
 *
 * Nodes are numbered per type in NCCL's order (a GPU's index is its position
 * in NCCL's GPU list). The system is the one the reported rank's pipeline
 * ran on: its node trimmed as NCCL trims it, with paths.
 */

/** Opaque system (nodes, links, paths) of a plan. */
typedef struct tp_system tp_system;

/**
 * @param plan  a plan, also one NCCL failed (see tp_plan_file)
 * @return TP_OK, or the failure NCCL reports that the plan stopped at;
 *   TP_ERR_ARGUMENT when plan is NULL
 */
TP_API tp_status tp_plan_status(const tp_plan *plan);

/** The job as planned. */
typedef struct tp_job_info {
    int n_nodes;       /**< hosts */
    int n_ranks;       /**< all ranks */
    int rank;          /**< the reported rank */
    int gpus_per_node; /**< ranks per host */
} tp_job_info;

/**
 * @param plan  the plan
 * @param info  the caller's record; @param size its size (sizeof(tp_job_info))
 * @return TP_OK; TP_ERR_ARGUMENT when plan or info is NULL
 */
TP_API tp_status tp_plan_job(const tp_plan *plan, tp_job_info *info, size_t size);

/**
 * Number of NCCL log lines of the reported rank (what tp_report_nccl_log
 * prints before NCCL_DEBUG filtering), also for a failed plan.
 * @return the count, -1 when plan is NULL
 */
TP_API int tp_plan_log_count(const tp_plan *plan);
/**
 * Log line i, without the "NCCL INFO " prefix.
 * @param warn  may be NULL; set to true for a WARN line
 * @return the borrowed text, NULL when plan is NULL or i out of range
 */
TP_API const char *tp_plan_log_line(const tp_plan *plan, int i, bool *warn);
/**
 * Findings about the network devices (NCCL_IB_HCA results, merged ports):
 * plain words, not NCCL log lines.
 * @return the count, -1 when plan is NULL
 */
TP_API int tp_plan_nic_note_count(const tp_plan *plan);
/** NIC note i (borrowed), NULL when plan is NULL or i out of range. */
TP_API const char *tp_plan_nic_note(const tp_plan *plan, int i);

/**
 * The reported rank's system.
 * @return borrowed, NULL when plan is NULL or failed before the system was built
 */
TP_API const tp_system *tp_plan_system(const tp_plan *plan);

/**
 * @return the number of nodes of a type, -1 when sys is NULL or type out of range
 */
TP_API int tp_system_node_count(const tp_system *sys, tp_node_type type);

/** A node's attributes; fields of other types are -1 (or 0 for bandwidths). */
typedef struct tp_node_info {
    tp_node_type type;
    int index;      /**< position among the nodes of its type */
    int64_t id;     /**< NCCL's id: bus id of GPU/PCI/NIC, NUMA id of CPU, dev of NET */
    char label[40]; /**< NCCL's label, e.g. "GPU/0-1a000", "NET/0-3" */
    int n_links;    /**< links from this node (tp_system_link) */
    /* GPU */
    int gpu_dev;           /**< CUDA device number */
    int gpu_rank;          /**< global rank (reported rank's node) */
    int gpu_cuda_comp_cap; /**< e.g. 90 */
    bool gpu_gdr;          /**< GPU Direct RDMA capable */
    /* NET */
    int net_dev;
    uint64_t net_asic;
    int net_port;
    float net_bw; /**< GB/s */
    float net_latency;
    bool net_gdr;
    bool net_coll; /**< CollNet support */
    int net_max_channels;
    /* CPU */
    int cpu_arch;   /**< NCCL's codes: 1 x86, 2 POWER, 3 ARM */
    int cpu_vendor; /**< 1 Intel, 2 AMD, 3 Zhaoxin */
    int cpu_model;
    /* PCI */
    uint64_t pci_device; /**< NCCL's packed vendor/device/subsystem ids */
} tp_node_info;

/**
 * @param sys   the system; @param type, index  the node
 * @param info  the caller's record; @param size  sizeof(tp_node_info)
 * @return TP_OK; TP_ERR_ARGUMENT when sys or info is NULL or the node does not exist
 */
TP_API tp_status tp_system_node(const tp_system *sys, tp_node_type type, int index,
                                tp_node_info *info, size_t size);
/**
 * Index of the node of a type with NCCL id `id`.
 * @return the index, -1 when absent or sys NULL or type out of range
 */
TP_API int tp_system_find(const tp_system *sys, tp_node_type type, int64_t id);
/** @return the index of the GPU of a rank of the reported rank's node, -1 if none */
TP_API int tp_system_gpu_of_rank(const tp_system *sys, int rank);

/** One link (or one hop of a path). */
typedef struct tp_link_info {
    tp_link_type type;
    float bw; /**< GB/s */
    tp_node_type from_type;
    int from_index;
    tp_node_type to_type;
    int to_index;
} tp_link_info;

/**
 * Link `link` (0..n_links-1, NCCL's sorted order) of a node.
 * @return TP_OK; TP_ERR_ARGUMENT when a pointer is NULL or an index is out of range
 */
TP_API tp_status tp_system_link(const tp_system *sys, tp_node_type type, int index, int link,
                                tp_link_info *info, size_t size);

/** A path between two nodes as NCCL computed it. */
typedef struct tp_path_info {
    tp_path_type type;  /**< worst hop type (TP_PATH_DIS: no path) */
    float bw;           /**< bottleneck bandwidth, GB/s */
    int hops;           /**< links walked (0 from a node to itself) */
    int bottleneck_hop; /**< first hop with the lowest bandwidth, -1 when hops == 0 */
} tp_path_info;

/**
 * The path from node (from_type, from_index) to node (to_type, to_index).
 * @return TP_OK; TP_ERR_ARGUMENT when a pointer is NULL, a node does not
 *   exist, or NCCL computed no paths to nodes of to_type (e.g. NVS)
 */
TP_API tp_status tp_system_path(const tp_system *sys, tp_node_type from_type, int from_index,
                                tp_node_type to_type, int to_index, tp_path_info *info,
                                size_t size);
/**
 * Hop `hop` (0..hops-1) of that path, as the link walked.
 * @return TP_OK; TP_ERR_ARGUMENT as tp_system_path, or hop out of range
 */
TP_API tp_status tp_system_path_hop(const tp_system *sys, tp_node_type from_type, int from_index,
                                    tp_node_type to_type, int to_index, int hop, tp_link_info *info,
                                    size_t size);

/** A searched graph of the reported rank (ncclTopoGraph). */
typedef struct tp_graph_summary {
    tp_graph_kind kind;
    tp_pattern pattern;
    int n_channels; /**< 0: not searched (CollNet) or not supported (NVLS) */
    int min_channels, max_channels;
    float bw_intra; /**< GB/s per channel inside the node */
    float bw_inter; /**< GB/s per channel to the network */
    float latency_inter;
    tp_path_type type_intra;
    tp_path_type type_inter;
    int cross_nic; /**< NCCL's crossNic: 0, 1 or 2 */
    bool same_channels;
    int n_gpus;      /**< GPUs per channel */
    bool has_nets;   /**< channels enter and leave through NETs (multi-node) */
    int n_decisions; /**< recorded search decisions (tp_plan_graph_decision) */
} tp_graph_summary;

/**
 * @return TP_OK; TP_ERR_ARGUMENT when plan or info is NULL, kind out of range, or the plan failed
 */
TP_API tp_status tp_plan_graph(const tp_plan *plan, tp_graph_kind kind, tp_graph_summary *info,
                               size_t size);
/**
 * The GPUs of a graph channel, in the channel's order, as ranks.
 * @param count  receives n_gpus (0 on error); must not be NULL
 * @return borrowed array of *count ranks; NULL when an argument is bad or
 *   channel >= n_channels
 */
TP_API const int *tp_plan_graph_gpus(const tp_plan *plan, tp_graph_kind kind, int channel,
                                     int *count);
/**
 * The NET ids a graph channel enters by ([0]) and leaves by ([1]).
 * @param count  receives 2, or 0 when the graph has no NETs or on error; not NULL
 * @return borrowed array; NULL when count is 0
 */
TP_API const int64_t *tp_plan_graph_nets(const tp_plan *plan, tp_graph_kind kind, int channel,
                                         int *count);

/** What a recorded search decision is. */
typedef enum tp_decision_kind {
    TP_DECISION_TRY,      /**< a pass with these settings */
    TP_DECISION_SOLUTION, /**< a better graph was found */
    TP_DECISION_RELAX,    /**< a constraint was relaxed */
    TP_DECISION_RAISE,    /**< second pass: bandwidth raised */
    TP_DECISION_BUDGET,   /**< the step budget ran out */
    TP_DECISION_FALLBACK, /**< simple-order fallback */
    TP_DECISION_LOADED,   /**< graph taken from NCCL_GRAPH_FILE */
    TP_DECISION_BOUND,    /**< topoplan's own: a pass cut short, it could not beat the best graph */
    TP_DECISION_SETTLE,   /**< topoplan's own: cut passes re-run for the global step budget */
    TP_DECISION_IMPROVED, /**< the pass just run left a better graph (its values) */
    TP_DECISION_DUP,      /**< channels duplicated at a fraction of the bandwidth */
    TP_DECISION_DONE,     /**< first pass stopped: no better graph can exist */
} tp_decision_kind;

/** One decision of the search, with the settings it was made at. */
typedef struct tp_decision {
    tp_decision_kind kind;
    const char *why; /**< static text, may be "" */
    float bw_intra, bw_inter;
    tp_path_type type_intra, type_inter;
    bool same_channels;
    int cross_nic;
    tp_pattern pattern;
    int n_channels;
} tp_decision;

/**
 * Decision i of a graph's search (0..n_decisions-1, in order).
 * @return TP_OK; TP_ERR_ARGUMENT on a NULL pointer or an index out of range
 */
TP_API tp_status tp_plan_graph_decision(const tp_plan *plan, tp_graph_kind kind, int i,
                                        tp_decision *info, size_t size);

/** The job's final channels. */
typedef struct tp_channels_info {
    int n_channels;      /**< collective channels (ring and tree) */
    int search_channels; /**< ring/tree channels after combination, before duplication */
    int n_nvls_channels;
    int nvls_heads; /**< NVLS heads per node */
    int n_collnet_channels;
    int p2p_channels;
    int p2p_channels_per_peer;
    int nccl_nodes; /**< NCCL's "nodes": ring fragments */
} tp_channels_info;

/** @return TP_OK; TP_ERR_ARGUMENT when plan or info is NULL or the plan failed */
TP_API tp_status tp_plan_channels(const tp_plan *plan, tp_channels_info *info, size_t size);

/** One collective channel as one rank sees it (-1: none). */
typedef struct tp_rank_channel {
    int ring_prev, ring_next;
    int tree_up;
    int tree_down[3];
} tp_rank_channel;

/**
 * Channel `channel` (0..n_channels-1) of any rank of the job.
 * @return TP_OK; TP_ERR_ARGUMENT on a NULL pointer, a rank or channel out of range
 */
TP_API tp_status tp_plan_rank_channel(const tp_plan *plan, int rank, int channel,
                                      tp_rank_channel *info, size_t size);
/**
 * One rank's NVLS connections on a channel (NCCL 2.22.3 connectNvls): the
 * NVLS "up" peers are the virtual ranks n_ranks+1 .. n_ranks+n_heads, one per
 * head; -1: none.
 */
typedef struct tp_rank_nvls {
    int n_heads;      /**< NVLS heads per node */
    int head_rank;    /**< the head this rank is on its node, -1: it heads none */
    int down;         /**< nvls.down: the virtual rank n_ranks+1+head_rank */
    int tree_up;      /**< across nodes: the same head on the parent node */
    int tree_down[3]; /**< [0] down, then the same head on the child nodes */
} tp_rank_nvls;

/**
 * NVLS up/down of any rank on channel `channel` (0..n_channels-1; NVLS tree
 * channel % 2), as NCCL's "NVLS Trees" line shows them for its own rank.
 * @return TP_OK; TP_ERR_ARGUMENT on a NULL pointer, a rank or channel out of
 *   range, or a plan without NVLS
 */
TP_API tp_status tp_plan_rank_nvls(const tp_plan *plan, int rank, int channel, tp_rank_nvls *info,
                                   size_t size);

/**
 * Ring `channel` as NCCL orders it, from rank 0.
 * @param count  receives the rank count (0 on error); not NULL
 * @return borrowed array of *count ranks, NULL on a bad argument
 */
TP_API const int *tp_plan_ring(const tp_plan *plan, int channel, int *count);

/** Opaque list of findings in plain words. */
typedef struct tp_findings tp_findings;

/**
 * The findings of `topoplan nics` on the reported rank's node (idle rails,
 * cross-rail channels, NICs on another NUMA node, PXN, GDR, NCCL_IB_HCA
 * results), each verified against the plan as that report's are.
 * @param out  receives the list; the caller owns it (tp_findings_free)
 * @return TP_OK; TP_ERR_ARGUMENT when out or plan is NULL or the plan
 *   failed (*out NULL); TP_ERR_NOMEM
 */
TP_API tp_status tp_plan_nic_findings(tp_findings **out, const tp_plan *plan, tp_error *err);
/** @return the number of findings, -1 when f is NULL */
TP_API int tp_findings_count(const tp_findings *f);
/** Finding i (borrowed until tp_findings_free), NULL when f is NULL or i out of range. */
TP_API const char *tp_findings_get(const tp_findings *f, int i);
/** Free a list (NULL-safe). */
TP_API void tp_findings_free(tp_findings *f);

/**
 * Setting notes: one line per NCCL_* setting that NCCL 2.22.3 would misread
 * or that leaves the job on a fallback, with its consequence for this job: an
 * NCCL_ALGO or NCCL_PROTO name NCCL does not know (ignored; the nearest valid
 * name is given), a list that leaves no algorithm NCCL can use (NCCL falls
 * back to Ring and Tree), no protocol at all, an NCCL_IB_HCA that selects no
 * device (NCCL's IB plugin falls back to sockets) or has an entry that selects
 * nothing. The consequence is the plan re-planned without the setting,
 * compared by tp_plan_cost. Each line starts with the setting ("NCCL_ALGO=Rnig: ").
 * @param cfg   the configuration; NULL: the plan's
 * @param plan  may be NULL: the notes the configuration alone gives, no consequence
 * @return TP_OK; TP_ERR_ARGUMENT when out is NULL or both cfg and plan are; TP_ERR_NOMEM
 */
TP_API tp_status tp_setting_notes(tp_findings **out, const tp_config *cfg, const tp_plan *plan,
                                  tp_error *err);

/**
 * The channel NCCL 2.22.3 sends part `part` of rank's P2P messages to `peer`
 * on (init.cc's p2p schedule over the P2P channels; pass it to tp_plan_nic).
 * @param part  0..: parts of one send (p2p_channels_per_peer of them)
 * @return the channel, -1 past the last part or on a bad argument
 *   (NULL or failed plan, rank or peer out of range, both on one node)
 */
TP_API int tp_plan_p2p_channel(const tp_plan *plan, int rank, int peer, int part);

/** What a rank does with the NIC of tp_plan_nic. */
typedef enum tp_nic_role {
    TP_NIC_NONE = 0,        /**< no NIC: an inner GPU of the ring channel (both its neighbours
                                 on the channel are GPUs of its node); net_* and proxy_rank -1 */
    TP_NIC_RECEIVE = 1,     /**< the ring channel's head: receives from the previous node */
    TP_NIC_SEND = 2,        /**< the channel's tail (or a P2P send): sends to the next node */
    TP_NIC_RECEIVE_SEND = 3 /**< head and tail (one GPU per node): net_* is the receive
                                 NET, send_net_dev/send_net_id the send NET */
} tp_nic_role;

/**
 * The NET device a rank uses, and who drives it. Fields after `gdr` were
 * added later: a caller passing the older, smaller sizeof gets the fields it
 * knows (net_dev -1 then says "no NIC").
 */
typedef struct tp_nic_choice {
    int net_dev;         /**< NET device number on the rank's node, -1: no NIC */
    int64_t net_id;      /**< NCCL id of that NET, -1: no NIC */
    int net_index;       /**< its index in tp_plan_system(), -1 if that system lacks it */
    int proxy_rank;      /**< rank whose proxy drives it: != rank means PXN; -1: no NIC */
    bool gdr;            /**< GPU Direct RDMA */
    tp_nic_role role;    /**< receive, send, both, or TP_NIC_NONE */
    int send_net_dev;    /**< TP_NIC_RECEIVE_SEND: the NET it sends on, else -1 */
    int64_t send_net_id; /**< its NCCL id, else -1 */
    char why[128];       /**< plain words, e.g. why there is no NIC */
} tp_nic_choice;

/**
 * The NIC `rank` uses on collective channel `channel` (the ring graph: the
 * channel's head receives on the entry NET, its tail sends on the exit NET,
 * the GPUs between them open none: role TP_NIC_NONE), or, with peer >= 0,
 * for P2P sends to `peer` on P2P channel `channel` (ncclTopoGetNetDev).
 * Ranks of any node (nodes are identical).
 * @param peer  -1 for the collective channel, else a rank of another node
 * @return TP_OK (also for TP_NIC_NONE); TP_ERR_ARGUMENT on a NULL pointer,
 *   out-of-range rank, peer or channel, or a plan without NETs or failed;
 *   TP_ERR_INTERNAL on a bug
 */
TP_API tp_status tp_plan_nic(const tp_plan *plan, int rank, int channel, int peer,
                             tp_nic_choice *info, size_t size);

/** One port of an IB device, as `topoplan hca` takes it ("mlx5_0:1"). */
typedef struct tp_hca_port {
    const char *name; /**< device name, borrowed */
    int port;         /**< port number, 1 when not given */
} tp_hca_port;

/**
 * `topoplan hca`: text lists the selected ports, one "name:port" per line in
 * input order; JSON (schema topoplan.hca) lists every port with whether it is
 * selected and the filter entry that selects it only as a prefix.
 */
TP_API tp_status tp_report_hca(FILE *out, const char *filter, const tp_hca_port *ports, size_t n,
                               tp_format fmt, tp_error *err);

/** @defgroup builtins Built-in topologies */

/**
 * `topoplan builtins`: the list (name and description), or with `name` that
 * topology (text: its XML); JSON documents have the schema topoplan.builtins.
 * TP_ERR_CONFIG for an unknown name or a format other than text and JSON.
 */
TP_API tp_status tp_report_builtins(FILE *out, const char *name, tp_format fmt, tp_error *err);

/** Number of topologies compiled into the library. */
TP_API size_t tp_builtin_count(void);
/** Name of builtin i (static), or NULL past the end. */
TP_API const char *tp_builtin_name(size_t i);
/** One-line description of builtin i (static). */
TP_API const char *tp_builtin_about(size_t i);
/** XML text of the builtin called `name`, or NULL (static storage). */
TP_API const char *tp_builtin_xml(const char *name);
/**
 * The builtin whose name is nearest to `name` (fewest edits; the first of
 * equals), for "did you mean" after an unknown name.
 * @return its name (static), or NULL when name is NULL or longer than 63 bytes
 */
TP_API const char *tp_builtin_nearest(const char *name);

/** @defgroup complete Partial provider files: completion, SKU catalogue, lints */

/** GDR override of tp_complete_options (zero: the SKU's value). */
enum { TP_COMPLETE_GDR_SKU = 0, TP_COMPLETE_GDR_ON = 1, TP_COMPLETE_GDR_OFF = 2 };

/**
 * What tp_complete_buffer() assumes beyond the file. Zero-initialise, then set
 * only what you override; every zero field means "the SKU's value".
 */
typedef struct tp_complete_options {
    const char *sku;         /**< SKU name (see tp_sku_name()); NULL: recognise from the file */
    const char *plugin_mode; /**< network plugin mode the SKU defines (e.g. "sendrecv") */
    int sm;                  /**< GPU compute capability x10 (80 = A100) */
    int nvlinks;             /**< NVLinks per GPU to the NVSwitch fabric; negative: none */
    int nic_speed;           /**< speed of one NIC port in Mb/s */
    int gdr;                 /**< TP_COMPLETE_GDR_* for GPUs and NICs */
} tp_complete_options;

/** The completed topology and what was added. Opaque; tp_completion_free(). */
typedef struct tp_completion tp_completion;

/** One thing complete added: to which element, what, and why (borrowed strings). */
typedef struct tp_addition {
    const char *element; /**< e.g. "pci 0000:10:1c.0", "cpu numaid=0" */
    const char *added;   /**< the attributes or element added, as XML text */
    const char *reason;  /**< where NCCL would get it at run time and what is assumed */
} tp_addition;

/**
 * Complete a partial provider topology as NCCL 2.22.3 fills it at run time
 * (NVML for <gpu>/<nvlink>, sysfs for CPU/PCI attributes, the network plugin for
 * <nic>/<net>), with the SKU's values. The result is the published text with
 * additions only: every published element, attribute, comment and whitespace
 * is kept, new elements use NCCL's NCCL_TOPO_DUMP_FILE form, and a leading
 * comment lists every addition with its reason. Without opts->sku the machine
 * is recognised from the file; TP_ERR_CONFIG lists the candidates when that is
 * not unambiguous. Caller owns *out. TP_ERR_ARGUMENT when out or xml is NULL.
 */
TP_API tp_status tp_complete_buffer(tp_completion **out, const char *xml, size_t len,
                                    const char *source, const tp_complete_options *opts,
                                    tp_error *err);
/** tp_complete_buffer() on a file. */
TP_API tp_status tp_complete_file(tp_completion **out, const char *path,
                                  const tp_complete_options *opts, tp_error *err);
/** The completed XML text (borrowed); the getters return NULL/0 for a NULL completion. */
TP_API const char *tp_completion_xml(const tp_completion *c);
/** The SKU used (borrowed) and the plugin mode ("" when the SKU has none). */
TP_API const char *tp_completion_sku(const tp_completion *c);
TP_API const char *tp_completion_mode(const tp_completion *c);
/** Number of additions; addition i (borrowed), NULL past the end. */
TP_API size_t tp_completion_count(const tp_completion *c);
TP_API const tp_addition *tp_completion_get(const tp_completion *c, size_t i);
/** What complete left as published and why (unclassified leaves, GPUs the SKU has but the
 *  file does not place): count and note i (borrowed), NULL past the end. */
TP_API size_t tp_completion_note_count(const tp_completion *c);
TP_API const char *tp_completion_note(const tp_completion *c, size_t i);
/** The additions with their reasons, then the notes (TP_FORMAT_TEXT or TP_FORMAT_JSON). */
TP_API tp_status tp_report_completion(FILE *out, const tp_completion *c, tp_format fmt,
                                      tp_error *err);
/** Free a completion (NULL-safe). */
TP_API void tp_completion_free(tp_completion *c);

/** Number of SKUs in the catalogue; name and one-line title of SKU i (static), NULL past the end.
 */
TP_API size_t tp_sku_count(void);
TP_API const char *tp_sku_name(size_t i);
TP_API tp_status tp_sku_title(size_t i, char *buf, size_t size, tp_error *err);

/** Partial-file findings and provider-file lints of one topology. Opaque. */
typedef struct tp_lints tp_lints;

/**
 * What NCCL would fill at run time in this file (partial findings: GPU
 * endpoints without <gpu>, NVLink-class GPUs without <nvlink>, NICs without
 * <net>, no GPU at all, missing CPU/PCI attributes) and provider-file defects
 * NCCL does not report (lints: guids that make distinct NICs one port, an
 * NVLink to its own GPU, one <cpu> on a multi-socket SKU, NIC or GPU bus ids
 * off the SKU's layout). sku: NULL to recognise the machine from the file.
 * Caller owns *out.
 */
TP_API tp_status tp_lint_buffer(tp_lints **out, const char *xml, size_t len, const char *source,
                                const char *sku, tp_error *err);
/** tp_lint_buffer() on a file. */
TP_API tp_status tp_lint_file(tp_lints **out, const char *path, const char *sku, tp_error *err);
/**
 * tp_lint_buffer() on the main topology a plan loaded, as the plan read it
 * (the file is not read again, so the findings are of the text planned).
 * The plan stays the caller's; caller owns *out.
 */
TP_API tp_status tp_lint_plan(tp_lints **out, const tp_plan *plan, const char *sku, tp_error *err);
/** Number of findings; message i (borrowed); 1 when finding i is a partial-file one. */
TP_API size_t tp_lints_count(const tp_lints *l);
TP_API const char *tp_lints_message(const tp_lints *l, size_t i);
TP_API int tp_lints_is_partial(const tp_lints *l, size_t i);
/** SKU given or recognised ("" when none), and the candidates when ambiguous (borrowed). */
TP_API const char *tp_lints_sku(const tp_lints *l);
TP_API const char *tp_lints_candidates(const tp_lints *l);
/** Free (NULL-safe). */
TP_API void tp_lints_free(tp_lints *l);

/**
 * @defgroup verify Checking a real NCCL log against the prediction
 * `topoplan verify`: an NCCL_DEBUG=INFO log of a whole job (one file per
 * rank, or every rank interleaved as launchers write it; plain or gzip) is
 * read in two streaming passes with bounded memory, every rank's lines are
 * compared section by section (system, paths, search, channels, tuning) with
 * the lines the plan of that rank gives, and a divergence is explained by
 * re-planning candidate causes (NCCL_* settings, a GPU's PCIe width, a missing
 * NIC or NVLink), each kept only when it reproduces the rank's lines.
 */

/** What a verification compares the log with. Zero-initialise, then set. */
typedef struct tp_verify_options {
    const char *topo_path; /**< topology XML; NULL: the log's NCCL_TOPO_FILE, else self-check */
    const char *topo_xml;  /**< or the topology as text (a builtin), with its length */
    size_t topo_len;
    const char *topo_source; /**< the text's name in messages */
    tp_job job;              /**< n_nodes 0: the log's host count; rank: a log without rank lines */
    const tp_config *cfg;    /**< settings that override the log's (NULL: none) */
    int find_causes;         /**< 1: re-plan candidate causes of divergences */
    const char *nccl_version; /**< the NCCL version the job ran ("2.22.3"); NULL: the log's */
} tp_verify_options;

/** Opaque verification: the inputs, then per rank the verdict. */
typedef struct tp_verify tp_verify;

/** A rank's verdict. */
typedef enum tp_verify_verdict {
    TP_VERIFY_AGREE,   /**< every line of the rank is the plan's */
    TP_VERIFY_DIVERGE, /**< the first divergence is recorded */
    TP_VERIFY_ABSENT,  /**< the job has the rank, the log has no line of it */
    TP_VERIFY_SELF,    /**< no topology: checked against the other ranks only */
} tp_verify_verdict;

/** One rank's result (borrowed strings, valid until tp_verify_free). */
typedef struct tp_verify_rank_info {
    int rank;
    tp_verify_verdict verdict;
    size_t n_lines;       /**< the log's normalized lines of the rank */
    const char *stage;    /**< section of the first divergence ("channels"), NULL when none */
    const char *expected; /**< the plan's line there, NULL when the log has an extra line */
    const char *actual;   /**< the log's line, NULL when the log lacks the plan's line */
    const char *where;    /**< "FILE:LINE" of the log's line, "" when none */
    const char *cause;    /**< the re-planned cause that reproduces the rank, NULL when none */
} tp_verify_rank_info;

/** New verification (caller owns *out; tp_verify_free). Reads the topology now. */
TP_API tp_status tp_verify_new(tp_verify **out, const tp_verify_options *opt, tp_error *err);
/** Add a log file (gzip or plain; read when tp_verify_run runs). */
TP_API tp_status tp_verify_add_file(tp_verify *v, const char *path, tp_error *err);
/** Add a log held in memory (borrowed until tp_verify_run returns); `source` names it. */
TP_API tp_status tp_verify_add_buffer(tp_verify *v, const char *text, size_t len,
                                      const char *source, tp_error *err);
/**
 * Read the logs and compare. TP_ERR_CONFIG (FILE:LINE) when the log names an
 * NCCL version topoplan does not model (one it models partially is compared with its
 * partial profile, and a note says so), or when an input has no NCCL line at
 * all (not an NCCL log); TP_ERR_IO when an input cannot be read.
 */
TP_API tp_status tp_verify_run(tp_verify *v, tp_error *err);
/**
 * The NCCL version the plans were made with (the option's, else the log's version line,
 * else the configuration's); its profile may be partial (tp_nccl_profile_info.exact).
 */
TP_API const char *tp_verify_nccl(const tp_verify *v);
/** Ranks of the job (0 before tp_verify_run or for a NULL v). */
TP_API int tp_verify_rank_count(const tp_verify *v);
/** Rank i's result. TP_ERR_ARGUMENT on a NULL pointer or i out of range. */
TP_API tp_status tp_verify_rank(const tp_verify *v, int i, tp_verify_rank_info *info, size_t size);
/** Ranks that diverge (the self-check's findings count when there is no topology). */
TP_API int tp_verify_divergences(const tp_verify *v);
/** Findings in plain words (reader notes, the log against itself): count, note i. */
TP_API size_t tp_verify_note_count(const tp_verify *v);
TP_API const char *tp_verify_note(const tp_verify *v, size_t i);
/** The whole result as text or JSON (schema topoplan.verify). */
TP_API tp_status tp_report_verify(FILE *out, const tp_verify *v, tp_format fmt, tp_error *err);
/** The partial topology the log's system lines reveal, as NCCL XML (for `complete`/`validate`). */
TP_API tp_status tp_verify_write_topology(FILE *out, const tp_verify *v, tp_error *err);
/** Free (NULL-safe). */
TP_API void tp_verify_free(tp_verify *v);

#ifdef __cplusplus
}
#endif

#endif
