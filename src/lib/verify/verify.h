/*
 * verify: a real NCCL_DEBUG=INFO log against the plan of its job.
 *
 * The log is read twice, streaming, in bounded memory (no line is kept whole):
 * pass 1 finds the streams (one per host:pid, or per file), the rank of each
 * (its `comm ... rank R nRanks N` line), the NCCL version, the NCCL_* settings
 * NCCL reports and the subsystems the log shows; pass 2 compares every rank's
 * normalized lines, section by section, with the lines the plan of that rank
 * gives (kept as 64-bit hashes), and records each rank's lines as hashes too,
 * so candidate causes can be re-planned and checked without the log.
 */
#ifndef TP_VERIFY_H
#define TP_VERIFY_H

#include "common/internal.h"

#include <stdint.h>

/* The conformance suite's sections, in pipeline order. */
typedef enum tp_vsection {
    TP_VS_SYSTEM,
    TP_VS_PATHS,
    TP_VS_SEARCH,
    TP_VS_CHANNELS,
    TP_VS_TUNING,
    TP_VS_COUNT,
    TP_VS_CONNECTIONS = TP_VS_COUNT /* run-time connection lines: checked, not hashed */
} tp_vsection;

const char *tp_verify__section_name(int s);

/* Most ranks a log's comm lines may name (65,536 nodes of 8 GPUs). */
#define TP_VERIFY_MAX_RANKS (TP_MAX_JOB_NODES * 8)

/* Longest log line kept (NCCL's own lines are < 1024 bytes; launchers add prefixes). */
#define TP_VERIFY_LINE_MAX 4096

/* One physical line of a log, split as NCCL's logger wrote it. */
typedef struct tp_vline {
    const char *host; /* host of the host:pid:tid prefix ("" when none), not NUL-terminated */
    size_t host_len;
    const char *pid; /* pid ("" when none) */
    size_t pid_len;
    int dev;          /* the [dev] field, -1 when none */
    bool nccl;        /* an NCCL INFO/WARN line */
    bool warn;        /* NCCL WARN */
    const char *text; /* after the marker, trailing blanks stripped, NUL-terminated */
} tp_vline;

/* Split a raw line (NUL-terminated, no newline; modified in place). */
void tp_verify__split(char *raw, tp_vline *out);
/*
 * The normalized form of an NCCL line as the conformance normalizer writes it
 * ("INFO text" / "WARN text", comm pointers as PTR) into buf; false when the
 * normalizer drops the line (version, settings, sysfs, ...).
 */
bool tp_verify__normalize(const char *text, bool warn, char *buf, size_t size);
/* Section of a normalized line; `current` is the section of the line before (rule-less lines). */
int tp_verify__classify(const char *norm, int current);
/*
 * Bytes of a line compared: NCCL prints into a char[1024] after its prefix
 * ("host:pid:tid [dev] NCCL INFO "), so where a long line is cut depends on the
 * host name's length; up to 900 bytes every line is whole on both sides.
 */
#define TP_VERIFY_HASHED 900
/* 64-bit FNV-1a of a line's first TP_VERIFY_HASHED bytes. */
uint64_t tp_verify__hash(const char *s);

/* A growable array of line hashes. */
typedef struct tp_hashes {
    uint64_t *h;
    size_t n, cap;
} tp_hashes;

/* Per rank: the plan's lines and the log's lines, as hashes per section. */
typedef struct tp_vrank {
    int rank;
    bool seen;        /* the log has a stream for this rank */
    bool planned;     /* expected[] filled */
    bool expected_ok; /* the plan exists (NCCL's own failures included) */
    bool diverged;    /* first divergence recorded */
    int plan_status;
    tp_hashes expected[TP_VS_COUNT];
    tp_hashes actual[TP_VS_COUNT];
    size_t cursor[TP_VS_COUNT];
    size_t n_lines; /* normalized lines of the log for this rank */
    /* The first divergence: */
    int div_section;
    size_t div_index;
    char *div_expected; /* NULL: the log has a line the plan does not */
    char *div_actual;   /* NULL: the plan has a line the log does not */
    char *div_where;    /* "FILE:LINE" (NULL: none) */
    int cause;          /* index into tp_verify.causes, -1 when none found */
    /* self-check: what this rank's lines say about the job */
    const char *host;           /* its stream's host (borrowed) */
    int coll_channels;          /* "N coll channels", -1 when absent */
    uint64_t coll_line;         /* that line's hash: job-wide, every rank prints the same */
    int ring_search_channels;   /* "Pattern 4, ..., nChannels N", -1 when absent */
    int *ring_prev, *ring_next; /* per channel, from "Ring cc : p -> r -> n" (-1: none) */
    int n_ring;
    int conn_p2p, conn_shm, conn_net, conn_gdr, conn_fallback; /* run-time connection lines */
    bool cut; /* its line was the log's cut last line */
    /* the transport the plan gives each rank of its host: 'P' P2P, 'S' SHM, 'N' NET */
    int first_local; /* first rank of its host */
    char *transport; /* per rank of its host (NULL: not planned) */
    int n_local;
    int gdr; /* GPU Direct RDMA on every NIC of its ring channels 1, on none 0, mixed or none -1 */
    /* per ring channel: the NET device its ring connections use (-1: none) and, for a send,
     * its proxy as a local index (-2: not checked); n_ring_net channels (verify_nets.c) */
    int *ring_net;
    int n_ring_net;
    char *net_names; /* the host's NET names by device, NUL-separated (n_net_names) */
    int n_net_names;
    bool rings_connected; /* its "Connected all rings" was read: ring connections are done */
    bool div_ring_phase;  /* its divergence was a connection line of the ring phase */
} tp_vrank;

/* A stream: the lines of one process (host:pid) of one input. */
typedef struct tp_vstream {
    char *key; /* "input#host:pid" */
    char *host;
    int input;
    int dev;
    int rank; /* -1 until its comm line */
    int n_ranks, n_nodes, local_ranks, local_rank;
    int section;    /* section of its last line (rule-less lines follow it) */
    bool comm_seen; /* pass 2: its comm line was read */
    bool ended;     /* pass 2: a second communicator's init began: not compared */
} tp_vstream;

/* A cause found by re-planning. */
typedef struct tp_vcause {
    char *what;   /* "NCCL_CROSS_NIC=1" or "mutate --set 0000:1c:00.0:link_width=8" */
    char *detail; /* plain words */
    int ranks;    /* diverging ranks it reproduces */
    size_t lines; /* lines it reproduces (first such rank) */
    double busbw_expected[3], busbw_cause[3];
    bool has_busbw;
    int node;   /* the one node whose hardware it changes (a degraded node), -1: every node */
    char *host; /* that node's host in the log ("" when it has none), NULL: every node */
} tp_vcause;

/* One input: a file (path) or a caller's buffer. */
typedef struct tp_vinput {
    char *path;
    const char *text; /* borrowed; NULL for a file */
    size_t len;
    unsigned n_lines, nccl_lines, other_lines;
    bool truncated; /* the last line has no newline */
    bool crlf;
    bool gzip;
} tp_vinput;

/* Ranks planned once per kind (verify_kinds.c). */
typedef struct tp_vkind tp_vkind;
typedef struct tp_vkinds tp_vkinds;

/* A setting NCCL reported ("NAME set by environment to VALUE"). */
typedef struct tp_vsetting {
    char *name, *value;
    char where[300];
} tp_vsetting;

struct tp_verify {
    tp_verify_options opt;
    char *topo_text; /* main topology text (owned) */
    size_t topo_len;
    char topo_source[256];
    char **node_topos; /* copies of the option's paths */
    tp_config *cfg;    /* the job's: the options' cfg, then the log's settings */
    tp_vinput *inputs;
    size_t n_inputs, cap_inputs;
    tp_vstream *streams;
    size_t n_streams, cap_streams;
    size_t *stream_slots; /* open addressing over streams (index + 1), 0 empty */
    size_t n_slots;
    tp_vsetting *settings;
    size_t n_settings, cap_settings;
    char version[64]; /* the log's NCCL version, "" when none */
    char version_where[300];
    char *hosts; /* distinct hosts, NUL-separated (counted in n_hosts) */
    size_t hosts_len, hosts_cap;
    int n_hosts;
    int log_n_ranks; /* nRanks of the comm lines */
    bool has_graph, has_tuning_table, has_sizes;
    uint64_t subsys_mask;
    tp_vrank **ranks; /* n_ranks slots, a record only for ranks the log has (rank_of) */
    int n_ranks;
    int n_nodes;    /* the job planned */
    bool self_only; /* no topology: the log against itself */
    tp_vcause *causes;
    size_t n_causes, cap_causes;
    char **notes; /* self-check findings and reader notes */
    size_t n_notes, cap_notes;
    unsigned long unknown_lines;
    unsigned long nccl_lines;
    unsigned long unattributed_lines;
    int self_findings; /* inconsistencies between ranks (the log against itself) */
    bool ran;
    tp_vkinds *kinds; /* one plan per kind of rank (NULL: one per rank) */
    /* the partial topology the log reveals (pass 1): GPU and NIC system-tree lines */
    char **tree_lines;
    size_t n_tree_lines, cap_tree_lines;
};

/* Read every input line by line (gzip or plain); fn returns a status to stop early. */
typedef tp_status tp_vline_fn(tp_verify *v, size_t input, unsigned line_no, char *raw, void *arg,
                              tp_error *err);
tp_status tp_verify__each_line(tp_verify *v, tp_vline_fn *fn, void *arg, tp_error *err);

/* Add a note (printf-like); false when out of memory. */
bool tp_verify__note(tp_verify *v, const char *fmt, ...) TP_PRINTF(2, 3);
tp_status tp_hashes_push(tp_hashes *a, uint64_t h, tp_error *err);

/* The topologies of a re-planned job: the main text and the node files (NULL: the job's). */
typedef struct tp_vtopo {
    const char *xml; /* host 0 and every host without a node file (NULL: the job's) */
    size_t len;
    const char *const *node_topos; /* hosts 1..n_node_topos (NULL: the job's) */
    int n_node_topos;
} tp_vtopo;

/* The job planned for rank `rank` (topo NULL: the job's topologies). */
tp_job tp_verify__job(const tp_verify *v, int rank, const tp_vtopo *topo);

/*
 * The plan of one rank of the job under cfg (NULL: the job's), as normalized
 * lines per section: hashes into out (may be NULL), and with want_section >= 0
 * the text of line want_index of that section into *text (malloc'd, NULL when
 * there is none). topo (may be NULL) replaces the job's topologies. Returns the
 * plan's status in *plan_status.
 */
tp_status tp_verify__expected(const tp_verify *v, int rank, const tp_config *cfg,
                              const tp_vtopo *topo, tp_vrank *transports,
                              tp_hashes out[TP_VS_COUNT], int want_section, size_t want_index,
                              char **text, int *plan_status, bool *plan_ok, tp_error *err);

/*
 * The plan of rank r into r (expected, transports, plan status), and with `lines` the
 * normalized lines' text per section (malloc'd arrays of n_lines[s] strings, the caller's).
 */
tp_status tp_verify__expected_lines(const tp_verify *v, tp_vrank *r, char **lines[TP_VS_COUNT],
                                    size_t n_lines[TP_VS_COUNT], tp_error *err);

/*
 * Kinds of ranks (verify_kinds.c): the job plan their keys come from (*out NULL when every
 * rank is planned alone), then rank r's expected lines by its kind (*done false: plan it).
 */
tp_status tp_verify__kinds_new(tp_vkinds **out, const tp_verify *v, tp_error *err);
tp_status tp_verify__plan_by_kind(tp_verify *v, tp_vrank *r, bool *done, tp_error *err);
/* Ranks planned, and ranks renumbered from their kind's plan. */
unsigned long tp_verify__kinds_planned(const tp_vkinds *ks, unsigned long *renumbered);
void tp_verify__kinds_free(tp_vkinds *ks);

/* Rank i's record, NULL when the log has no line of it (or i is out of range). */
static inline tp_vrank *tp_verify__rank(const tp_verify *v, int i)
{
    return i >= 0 && i < v->n_ranks ? v->ranks[i] : NULL;
}

/* The transports the plan gives between the rank and each rank of its host (verify_self.c). */
tp_status tp_verify__plan_transports(const tp_plan *plan, int rank, tp_vrank *r, tp_error *err);
/* A connection line of the rank against those transports: false and *why when they differ. */
bool tp_verify__check_connection(const tp_vrank *r, const char *norm, char *why, size_t size);

/* The NET and proxy of each of the rank's ring channels (verify_nets.c). */
tp_status tp_verify__plan_nets(const tp_plan *plan, int rank, tp_vrank *r, tp_error *err);
/* A connection line to `peer` on another host: false and *why when its NIC or proxy differ. */
bool tp_verify__check_net(const tp_vrank *r, const char *norm, int peer, char *why, size_t size);

/* Record what a rank's line says for the self-check (verify_self.c). */
void tp_verify__observe(tp_verify *v, tp_vrank *r, const tp_vstream *s, const char *norm);
/* Re-plan candidate causes for the diverging ranks (verify_cause.c). */
tp_status tp_verify__find_causes(tp_verify *v, tp_error *err);
/* The log against itself (verify_self.c): ring/tree neighbours, channel counts. */
tp_status tp_verify__self_check(tp_verify *v, tp_error *err);

#endif
