/*
 * Comparison of two plans layer by layer (system, paths, graphs, channels):
 * the engine of `topoplan diff` and `topoplan check`. A report-level module:
 * it reads every stage's data of both plans and changes none.
 *
 * Side 0 is the first plan (the baseline of a check), side 1 the second.
 * Node matching (on each plan's host system, before trimming), by type:
 *  1. same local NCCL id (the host byte ignored): bus id of GPUs, PCI
 *     switches and NICs, NUMA id of CPUs, 0 for the NVSwitch;
 *  2. GPUs, PCI switches and NICs still unmatched on both sides, when both
 *     sides have the same number of them, are paired in NCCL's node order
 *     ("by position": bus ids get renumbered between machines of one model;
 *     with unequal counts the pairing would be a guess, so none is made);
 *  3. NETs: the NET of the matched NIC with the same port (preferring the same
 *     GUID). NET ids are device indices that shift when a NIC disappears, so
 *     they are never matched by id.
 */
#ifndef TP_COMPARE_H
#define TP_COMPARE_H

#include "report/report.h"

/* AllReduce sizes whose bus bandwidth a version diff reports: 1 MiB, 64 MiB, 1 GiB. */
#define TP_VERSION_DIFF_SIZES 3
extern const int tp_compare__version_sizes_log2[TP_VERSION_DIFF_SIZES];
/* Most profile numbers a version diff lists. */
#define TP_VERSION_DIFF_VALUES 24

/* How two nodes were matched (rules 1-3 above). */
typedef enum tp_match_how {
    TP_MATCH_NONE,
    TP_MATCH_ID,
    TP_MATCH_POSITION,
    TP_MATCH_NIC
} tp_match_how;

struct tp_comparison {
    const tp_plan *plan[2]; /* borrowed while comparing only; NULL afterwards */
    char source[2][256];
    char nccl_version[16]; /* the NCCL version side 0's plan models */
    /* Each side's NCCL profile (the plans' configurations); a version diff when they differ. */
    const tp_nccl_profile *profile[2];
    uint64_t rules_differ; /* bit (1 << tp_rule) per rule one profile follows and not the other */
    /* AllReduce at the version-diff sizes (compare_rules.c): ok, bus bandwidth (GB/s). */
    bool busbw_ok[2][TP_VERSION_DIFF_SIZES];
    double busbw[2][TP_VERSION_DIFF_SIZES];
    /* The profiles' numbers and defaults that differ (limits, ladders, parameter defaults). */
    struct {
        unsigned stages; /* as tp_compare__rule_stages */
        char text[160];  /* "MAXCHANNELS 32 -> 64 (device.h)" */
    } values[TP_VERSION_DIFF_VALUES];
    int n_values;
    tp_job job;
    int n_ranks[2];
    /* match[side][type][index]: index of the other side's node, -1 when none. */
    int match[2][TP_NODE_TYPE_COUNT][TP_MAX_NODES];
    tp_match_how how[TP_NODE_TYPE_COUNT][TP_MAX_NODES]; /* by side-0 index */
    /* A GPU or NIC whose PCI parent or NUMA node changed (its PCI links are not listed). */
    bool moved[2][TP_NODE_TYPE_COUNT][TP_MAX_NODES];
    tp_difference *diffs;
    size_t n_diffs, cap;
    bool failed;          /* an allocation failed: the list is incomplete */
    char why[400];        /* fits "collective channels N -> M: " and both causes */
    char env[400];        /* NCCL_* values that differ between the two plans ("" when none) */
    char graph_rule[400]; /* the NCCL rule behind the first graph's changed NICs ("" when none) */
    /* What the checked node costs jobs (tp_comparison_set_job): alone, and among baseline nodes. */
    struct tp_cmp_job {
        int nodes;
        int channels[2], search[2]; /* collective and search channels without / with it */
        tp_job_cost cost;
    } jobs[2];
    int n_jobs;
};

/* Mark the consequences of the root causes (tp_difference.consequence), after every layer. */
void tp_compare__mark_consequences(tp_comparison *c);
/* "node_missing", "link_bw", ...: a difference kind's id in JSON. */
const char *tp_compare__kind_id(int kind);

/* Record a difference (its layer is the kind's); the text is formatted old -> new. */
void tp_compare__add(tp_comparison *c, tp_diff_kind kind, tp_severity sev, const char *title,
                     const char *fmt, ...) TP_PRINTF(5, 6);

/* The last difference's device (peer: its other end), a node of side `side`'s plan (-1: of
 * either plan's host system, found by address). */
void tp_compare__set_device(tp_comparison *c, int side, bool peer, const tp_node *n);
/* A quantity the last difference compares, before -> after (has_*: 0 when a side has none). */
void tp_compare__add_value(tp_comparison *c, const char *quantity, const char *unit, int has_before,
                           double before, int has_after, double after);
/* Both sides have it. */
#define TP_CMP_VALUE(c, q, u, b, a) tp_compare__add_value((c), (q), (u), 1, (b), 1, (a))

/*
 * The node of `sys` (a system of side 1 - side, e.g. its trimmed one) matched
 * with node n of side `side`; NULL when unmatched or absent from sys.
 */
const tp_node *tp_compare__counterpart(const tp_comparison *c, int side, const tp_node *n,
                                       const tp_system *sys);
/* Whether n of side `side` has a match in the other plan's host system. */
bool tp_compare__matched(const tp_comparison *c, int side, const tp_node *n);
/* Index of n in its own plan's host system, or -1. */
int tp_compare__host_index(const tp_comparison *c, int side, const tp_node *n);

/* Node matching, then the layers in pipeline order (compare_system.c, compare_plan.c). */
void tp_compare__match(tp_comparison *c);
void tp_compare__system(tp_comparison *c);
void tp_compare__paths(tp_comparison *c);
void tp_compare__graphs(tp_comparison *c);
void tp_compare__channels(tp_comparison *c);
/* The NCCL_* values that differ between the plans, into c->env (compare_tune.c). */
void tp_compare__env(tp_comparison *c);
/* NCCL's choice per collective and size, and the predicted times (compare_tune.c). */
void tp_compare__tuning(tp_comparison *c);
/*
 * A version diff (compare_rules.c): the rules whose value differs between the
 * two profiles into c->rules_differ, and each side's AllReduce bus bandwidth.
 */
void tp_compare__versions(tp_comparison *c);
/* Whether the comparison's two sides model different NCCL versions. */
bool tp_compare__is_version_diff(const tp_comparison *c);
/* Job j's cost line of a check: "cost to a job of 2 nodes of the baseline with it (NCCL's
 * tuning model, re-planned): AllReduce ...; collective channels 16 -> 28, ...". */
void tp_compare__cost_line(char *buf, size_t size, const tp_comparison *c, int j);
/*
 * The stages a rule acts on: bit (1 << tp_layer) per diff layer, TP_RULE_STAGE_LOG
 * for the log lines only (no layer); 0 for a rule without an entry.
 */
#define TP_RULE_STAGE_LOG (1u << TP_LAYER_COUNT)
unsigned tp_compare__rule_stages(tp_rule rule);
/* "system, paths" / "log" into buf: the stage names of a rule. */
void tp_compare__rule_stage_names(tp_rule rule, char *buf, size_t size);

/* The plain-words reason for a changed collective channel count into c->why. */
void tp_compare__why(tp_comparison *c);

/* "system", "paths", "graphs", "channels". */
const char *tp_compare__layer_name(int layer);
/* "INFO", "WARN", "ERROR". */
const char *tp_compare__severity_name(int sev);

#endif
