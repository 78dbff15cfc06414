/* verify: the two passes over the log and the per-rank comparison (see verify.h). */
#include "verify/verify.h"

#include "config/config.h"
#include "plan/plan.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tp_status tp_verify_new(tp_verify **out, const tp_verify_options *opt, tp_error *err)
{
    if (!out || !opt)
        return tp_fail_arg(err, "tp_verify_new", !out ? "out is NULL" : "opt is NULL");
    *out = NULL;
    tp_verify *v = calloc(1, sizeof(*v));
    if (!v)
        return tp_fail_nomem(err);
    v->opt = *opt;
    v->opt.job.node_topos = NULL;
    tp_status st = TP_OK;
    if (opt->job.n_node_topos > 0) {
        v->node_topos = calloc((size_t)opt->job.n_node_topos, sizeof(char *));
        st = v->node_topos ? TP_OK : tp_fail_nomem(err);
        for (int i = 0; st == TP_OK && i < opt->job.n_node_topos; i++)
            st = tp_strdup(&v->node_topos[i], opt->job.node_topos[i], err);
    }
    if (st == TP_OK && opt->topo_xml) {
        v->topo_text = malloc(opt->topo_len + 1);
        if (!v->topo_text)
            st = tp_fail_nomem(err);
        else {
            memcpy(v->topo_text, opt->topo_xml, opt->topo_len);
            v->topo_text[opt->topo_len] = '\0';
            v->topo_len = opt->topo_len;
            snprintf(v->topo_source, sizeof(v->topo_source), "%s",
                     opt->topo_source ? opt->topo_source : "<topology>");
        }
    } else if (st == TP_OK && opt->topo_path) {
        st = tp_read_file(&v->topo_text, &v->topo_len, opt->topo_path, err);
        snprintf(v->topo_source, sizeof(v->topo_source), "%s", opt->topo_path);
    }
    if (st == TP_OK) {
        const char *none[] = {NULL};
        st = opt->cfg ? tp_config_copy(&v->cfg, opt->cfg, err) : tp_config_new(&v->cfg, none, err);
    }
    if (st != TP_OK) {
        tp_verify_free(v);
        return st;
    }
    *out = v;
    return TP_OK;
}

static tp_status add_input(tp_verify *v, const char *path, const char *text, size_t len,
                           tp_error *err)
{
    if (v->n_inputs == v->cap_inputs && tp_grow((void **)&v->inputs, &v->cap_inputs,
                                                v->n_inputs + 1, sizeof(*v->inputs), err) != TP_OK)
        return TP_ERR_NOMEM;
    tp_vinput *in = &v->inputs[v->n_inputs];
    *in = (tp_vinput){.text = text, .len = len};
    if (tp_strdup(&in->path, path, err) != TP_OK)
        return TP_ERR_NOMEM;
    v->n_inputs++;
    return TP_OK;
}

tp_status tp_verify_add_file(tp_verify *v, const char *path, tp_error *err)
{
    if (!v || !path)
        return tp_fail_arg(err, "tp_verify_add_file", !v ? "v is NULL" : "path is NULL");
    if (access(path, R_OK) != 0)
        return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    return add_input(v, path, NULL, 0, err);
}

tp_status tp_verify_add_buffer(tp_verify *v, const char *text, size_t len, const char *source,
                               tp_error *err)
{
    if (!v || !text)
        return tp_fail_arg(err, "tp_verify_add_buffer", !v ? "v is NULL" : "text is NULL");
    return add_input(v, source ? source : "<buffer>", text, len, err);
}

/* ---- streams ---- */

static size_t key_slot(const char *key, size_t n_slots)
{
    return (size_t)(tp_verify__hash(key) & (n_slots - 1));
}

static tp_status rehash(tp_verify *v, tp_error *err)
{
    size_t n = v->n_slots ? v->n_slots * 2 : 64;
    size_t *slots = calloc(n, sizeof(*slots));
    if (!slots)
        return tp_fail_nomem(err);
    for (size_t i = 0; i < v->n_streams; i++) {
        size_t s = key_slot(v->streams[i].key, n);
        while (slots[s])
            s = (s + 1) & (n - 1);
        slots[s] = i + 1;
    }
    free(v->stream_slots);
    v->stream_slots = slots;
    v->n_slots = n;
    return TP_OK;
}

static tp_vstream *find_stream(const tp_verify *v, const char *key)
{
    if (!v->n_slots)
        return NULL;
    for (size_t s = key_slot(key, v->n_slots); v->stream_slots[s]; s = (s + 1) & (v->n_slots - 1))
        if (strcmp(v->streams[v->stream_slots[s] - 1].key, key) == 0)
            return &v->streams[v->stream_slots[s] - 1];
    return NULL;
}

static tp_status add_host(tp_verify *v, const char *host, tp_error *err)
{
    for (size_t i = 0; i < v->hosts_len; i += strlen(v->hosts + i) + 1)
        if (strcmp(v->hosts + i, host) == 0)
            return TP_OK;
    size_t n = strlen(host) + 1;
    if (tp_grow((void **)&v->hosts, &v->hosts_cap, v->hosts_len + n, 1, err) != TP_OK)
        return TP_ERR_NOMEM;
    memcpy(v->hosts + v->hosts_len, host, n);
    v->hosts_len += n;
    v->n_hosts++;
    return TP_OK;
}

/* The stream key of a line: its input and host:pid, or its [dev] when there is no host. */
static void stream_key(char *key, size_t size, size_t input, const tp_vline *l)
{
    if (l->host_len || l->pid_len)
        snprintf(key, size, "%zu#%.*s:%.*s", input, (int)l->host_len, l->host, (int)l->pid_len,
                 l->pid);
    else
        snprintf(key, size, "%zu#[%d]", input, l->dev);
}

static tp_status get_stream(tp_verify *v, size_t input, const tp_vline *l, tp_vstream **out,
                            tp_error *err)
{
    char key[600];
    stream_key(key, sizeof(key), input, l);
    if ((*out = find_stream(v, key)) != NULL)
        return TP_OK;
    if ((v->n_streams + 1) * 2 > v->n_slots && rehash(v, err) != TP_OK)
        return TP_ERR_NOMEM;
    if (v->n_streams == v->cap_streams &&
        tp_grow((void **)&v->streams, &v->cap_streams, v->n_streams + 1, sizeof(*v->streams),
                err) != TP_OK)
        return TP_ERR_NOMEM;
    tp_vstream *s = &v->streams[v->n_streams];
    *s = (tp_vstream){.input = (int)input, .dev = l->dev, .rank = -1};
    char host[300];
    snprintf(host, sizeof(host), "%.*s", (int)l->host_len, l->host);
    if (tp_strdup(&s->key, key, err) != TP_OK || tp_strdup(&s->host, host, err) != TP_OK)
        return TP_ERR_NOMEM;
    if (add_host(v, host, err) != TP_OK)
        return TP_ERR_NOMEM;
    size_t slot = key_slot(key, v->n_slots);
    while (v->stream_slots[slot])
        slot = (slot + 1) & (v->n_slots - 1);
    v->stream_slots[slot] = ++v->n_streams;
    *out = s;
    return TP_OK;
}

/* ---- pass 1: streams, ranks, version, settings, subsystems ---- */

static void where(char *buf, size_t size, const tp_verify *v, size_t input, unsigned line)
{
    snprintf(buf, size, "%s:%u", v->inputs[input].path, line);
}

static tp_status take_setting(tp_verify *v, size_t input, unsigned no, const char *text,
                              tp_error *err)
{
    const char *mid = strstr(text, " set by environment to ");
    size_t skip = strlen(" set by environment to ");
    if (!mid && strncmp(text, "NCCL_IB_HCA set to ", 19) == 0) /* net_ib.cc's own wording */
        mid = text + 11, skip = strlen(" set to ");
    if (!mid || strncmp(text, "NCCL_", 5) != 0)
        return TP_OK;
    char name[128], value[512];
    snprintf(name, sizeof(name), "%.*s", (int)(mid - text), text);
    snprintf(value, sizeof(value), "%s", mid + skip);
    /* NCCL's integer parameters print "%lld." : the period is not the value's. */
    size_t len = strlen(value);
    if (len > 1 && value[len - 1] == '.') {
        bool number = true;
        for (size_t i = value[0] == '-'; i + 1 < len; i++)
            number &= isdigit((unsigned char)value[i]) != 0;
        if (number)
            value[len - 1] = '\0';
    }
    for (size_t i = 0; i < v->n_settings; i++)
        if (strcmp(v->settings[i].name, name) == 0) {
            if (strcmp(v->settings[i].value, value) != 0)
                tp_verify__note(v, "%s:%u: %s is %s here, %s at %s (the first one is used)",
                                v->inputs[input].path, no, name, value, v->settings[i].value,
                                v->settings[i].where);
            return TP_OK;
        }
    if (v->n_settings == v->cap_settings &&
        tp_grow((void **)&v->settings, &v->cap_settings, v->n_settings + 1, sizeof(*v->settings),
                err) != TP_OK)
        return TP_ERR_NOMEM;
    tp_vsetting *s = &v->settings[v->n_settings++];
    *s = (tp_vsetting){0};
    where(s->where, sizeof(s->where), v, input, no);
    if (tp_strdup(&s->name, name, err) != TP_OK || tp_strdup(&s->value, value, err) != TP_OK)
        return TP_ERR_NOMEM;
    return TP_OK;
}

/* "comm PTR rank R nRanks N nNodes M localRanks L localRank l" */
static void take_comm(tp_verify *v, tp_vstream *s, const char *norm)
{
    int r, n, nodes, lr, l;
    if (sscanf(norm, "INFO comm PTR rank %d nRanks %d nNodes %d localRanks %d localRank %d", &r, &n,
               &nodes, &lr, &l) != 5 ||
        r < 0 || n <= 0 || r >= n || n > TP_VERIFY_MAX_RANKS || s->rank >= 0)
        return; /* a process's later communicators are not the job's first one */
    s->rank = r;
    s->n_ranks = n;
    s->n_nodes = nodes;
    s->local_ranks = lr;
    s->local_rank = l;
    if (n > v->log_n_ranks)
        v->log_n_ranks = n;
}

static tp_status keep_tree_line(tp_verify *v, const char *text, tp_error *err)
{
    if (v->n_tree_lines >= 4096)
        return TP_OK;
    if (v->n_tree_lines == v->cap_tree_lines &&
        tp_grow((void **)&v->tree_lines, &v->cap_tree_lines, v->n_tree_lines + 1,
                sizeof(*v->tree_lines), err) != TP_OK)
        return TP_ERR_NOMEM;
    return tp_strdup(&v->tree_lines[v->n_tree_lines++], text, err);
}

typedef struct pass1_state {
    size_t tree_stream; /* the stream whose system lines --emit writes (index + 1; 0: none) */
    bool tree_done;
} pass1_state;

static tp_status pass1_line(tp_verify *v, size_t input, unsigned no, char *raw, void *arg,
                            tp_error *err)
{
    pass1_state *ps = arg;
    tp_vline l;
    tp_verify__split(raw, &l);
    tp_vinput *in = &v->inputs[input];
    if (!l.nccl) {
        in->other_lines++;
        return TP_OK;
    }
    in->nccl_lines++;
    tp_vstream *s;
    if (get_stream(v, input, &l, &s, err) != TP_OK)
        return TP_ERR_NOMEM;
    if (!l.warn && strncmp(l.text, "NCCL version ", 13) == 0 && !v->version[0]) {
        snprintf(v->version, sizeof(v->version), "%.*s", (int)strcspn(l.text + 13, "+ "),
                 l.text + 13);
        where(v->version_where, sizeof(v->version_where), v, input, no);
    }
    if (!l.warn && take_setting(v, input, no, l.text, err) != TP_OK)
        return TP_ERR_NOMEM;
    char norm[TP_VERIFY_LINE_MAX + 16];
    if (!tp_verify__normalize(l.text, l.warn, norm, sizeof(norm)))
        return TP_OK;
    if (strncmp(norm, "INFO comm PTR rank ", 19) == 0)
        take_comm(v, s, norm);
    int sec = tp_verify__classify(norm, -1);
    if (sec == TP_VS_SYSTEM || sec == TP_VS_PATHS || sec == TP_VS_SEARCH)
        v->has_graph = true;
    /* 2.30.3's "NVLS tuning:" line is INIT's, in every log: not a sign of the TUNING table */
    if (sec == TP_VS_TUNING && strncmp(norm, "INFO threadThresholds", 21) != 0 &&
        strncmp(norm, "INFO NVLS tuning: ", 18) != 0) {
        const char *q = norm + 5;
        while (isdigit((unsigned char)*q))
            q++;
        if (q > norm + 5 && strncmp(q, " Bytes -> Algo", 14) == 0)
            v->has_sizes = true;
        else
            v->has_tuning_table = true;
    }
    /* by index: the stream table moves as it grows */
    size_t index = (size_t)(s - v->streams) + 1;
    if (sec == TP_VS_SYSTEM && !ps->tree_done && (!ps->tree_stream || ps->tree_stream == index)) {
        ps->tree_stream = index;
        ps->tree_done = strncmp(norm, "INFO ====", 9) == 0 && strncmp(norm, "INFO === S", 10) != 0;
        return keep_tree_line(v, norm + 5, err);
    }
    return TP_OK;
}

/* ---- the job: topology, settings, size ---- */

static bool is_abs(const char *p)
{
    return p[0] == '/';
}

/* A path the log names, as it is or next to the first log (the job's folder). */
static char *resolve_near_log(const tp_verify *v, const char *path)
{
    if (access(path, R_OK) == 0 || is_abs(path) || v->n_inputs == 0 || v->inputs[0].text)
        return strdup(path);
    const char *log = v->inputs[0].path;
    const char *slash = strrchr(log, '/');
    if (!slash)
        return strdup(path);
    char *p = NULL;
    if (asprintf(&p, "%.*s/%s", (int)(slash - log), log, path) < 0)
        return NULL;
    if (access(p, R_OK) != 0) {
        free(p);
        return strdup(path);
    }
    return p;
}

static const char *find_setting(const tp_verify *v, const char *name)
{
    for (size_t i = 0; i < v->n_settings; i++)
        if (strcmp(v->settings[i].name, name) == 0)
            return v->settings[i].value;
    return NULL;
}

/* The log's settings under the options' (an option's value wins). */
static tp_status apply_settings(tp_verify *v, tp_error *err)
{
    static const char *const ignored[] = {"NCCL_TOPO_FILE",       "NCCL_TOPO_DUMP_FILE",
                                          "NCCL_GRAPH_DUMP_FILE", "NCCL_DEBUG",
                                          "NCCL_DEBUG_SUBSYS",    "NCCL_DEBUG_FILE"};
    for (size_t i = 0; i < v->n_settings; i++) {
        const tp_vsetting *s = &v->settings[i];
        bool skip = tp_config_source(v->cfg, s->name) != NULL;
        for (size_t k = 0; k < ARRAY_LEN(ignored); k++)
            skip |= strcmp(s->name, ignored[k]) == 0;
        if (skip)
            continue;
        char *value = strcmp(s->name, "NCCL_GRAPH_FILE") == 0 ? resolve_near_log(v, s->value)
                                                              : strdup(s->value);
        if (!value)
            return tp_fail_nomem(err);
        tp_error serr = {0};
        if (tp_config_set_from(v->cfg, s->name, value, s->where, &serr) != TP_OK)
            tp_verify__note(v, "%s: %s=%s not applied: %s", s->where, s->name, value, serr.message);
        free(value);
    }
    const char *subsys = tp_config_str(v->cfg, TP_P_DEBUG_SUBSYS);
    v->subsys_mask = subsys ? tp_log__subsys_mask(subsys)
                            : TP_SUB_INIT | TP_SUB_ENV | (v->has_graph ? TP_SUB_GRAPH : 0) |
                                  (v->has_tuning_table || v->has_sizes ? TP_SUB_TUNING : 0);
    return TP_OK;
}

static tp_status load_log_topology(tp_verify *v, tp_error *err)
{
    const char *topo = find_setting(v, "NCCL_TOPO_FILE");
    if (v->topo_text || !topo)
        return TP_OK;
    char *path = resolve_near_log(v, topo);
    if (!path)
        return tp_fail_nomem(err);
    tp_error terr = {0};
    if (tp_read_file(&v->topo_text, &v->topo_len, path, &terr) == TP_OK)
        snprintf(v->topo_source, sizeof(v->topo_source), "%s", path);
    else
        tp_verify__note(v,
                        "the log's NCCL_TOPO_FILE %s cannot be read (%s): the log is checked "
                        "against itself",
                        topo, terr.message);
    free(path);
    return TP_OK;
}

/*
 * The NCCL version the job ran (the option's, else the log's version line) selects the
 * profile the plans are made with. A version topoplan models partially is compared with
 * its partial profile and a note says so (a divergence may be topoplan's); a version it
 * does not model cannot be checked (exit 3, one line).
 */
static int profile_of(const char *version, tp_nccl_profile_info *out)
{
    for (int i = 0; i < tp_nccl_profile_count(); i++)
        if (tp_nccl_profile_info_at(i, out, sizeof(*out), NULL) == TP_OK &&
            strcmp(out->nccl, version) == 0)
            return 1;
    return 0;
}

static tp_status version_error(const tp_verify *v, tp_error *err, const char *why)
{
    char src[300];
    snprintf(src, sizeof(src), "%s", v->version_where);
    char *colon = strrchr(src, ':');
    unsigned line = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
    if (colon)
        *colon = '\0';
    return tp_fail(err, TP_ERR_CONFIG, src, line, 1,
                   "the job ran NCCL %s; topoplan %s: its decisions cannot be checked", v->version,
                   why);
}

static tp_status check_version(tp_verify *v, tp_error *err)
{
    if (v->opt.nccl_version) {
        snprintf(v->version, sizeof(v->version), "%s", v->opt.nccl_version);
        snprintf(v->version_where, sizeof(v->version_where), "nccl_version");
    }
    tp_nccl_profile_info info;
    if (v->version[0] && strcmp(v->version, tp_config_nccl(v->cfg)) != 0) {
        if (!profile_of(v->version, &info))
            return version_error(v, err, "does not model it (`topoplan versions`)");
        tp_error perr = {0};
        if (tp_config_set_nccl(v->cfg, v->version, &perr) != TP_OK)
            return version_error(v, err, perr.message);
    }
    if (!profile_of(tp_config_nccl(v->cfg), &info) || info.exact)
        return TP_OK;
    bool ok = tp_verify__note(v,
                              "compared with topoplan's NCCL %s profile, which is partial (%d of "
                              "%d public conformance cases pass, `topoplan versions`): a "
                              "divergence may be the profile's, not the job's",
                              info.nccl, info.public_passed, info.public_total);
    return ok ? TP_OK : tp_fail_nomem(err);
}

static tp_status check_inputs(const tp_verify *v, tp_error *err)
{
    for (size_t i = 0; i < v->n_inputs; i++)
        if (v->inputs[i].nccl_lines == 0)
            return tp_fail(err, TP_ERR_CONFIG, v->inputs[i].path, 0, 0,
                           "not an NCCL log: none of its %u lines is an NCCL INFO or WARN line",
                           v->inputs[i].n_lines);
    return TP_OK;
}

/* Ranks of the job and the streams that give them. */
static tp_status size_job(tp_verify *v, tp_error *err)
{
    int n = v->log_n_ranks;
    if (n == 0) {
        /* no rank line (a failed init, one rank's file): the option's rank */
        n = v->opt.job.rank + 1;
        if (v->n_streams == 1)
            v->streams[0].rank = v->opt.job.rank;
    }
    v->ranks = calloc((size_t)n, sizeof(*v->ranks));
    if (!v->ranks)
        return tp_fail_nomem(err);
    v->n_ranks = n;
    for (size_t i = 0; i < v->n_streams; i++) {
        int r = v->streams[i].rank;
        if (r >= n)
            v->streams[i].rank = -1;
        if (r < 0 || r >= n || v->ranks[r])
            continue;
        /* a record per rank the log has: a job's size alone costs a pointer per rank */
        if (!(v->ranks[r] = calloc(1, sizeof(tp_vrank))))
            return tp_fail_nomem(err);
        *v->ranks[r] = (tp_vrank){
            .rank = r, .cause = -1, .coll_channels = -1, .ring_search_channels = -1, .gdr = -1};
    }
    v->n_nodes = v->opt.job.n_nodes > 0    ? v->opt.job.n_nodes
                 : v->opt.job.n_node_topos ? v->opt.job.n_node_topos + 1
                 : v->n_hosts > 0          ? v->n_hosts
                                           : 1;
    return TP_OK;
}

/* ---- the plan's lines of a rank ---- */

/*
 * Lines compared: those of a section rule (real logs have many rule-less lines of their
 * own), and threadThresholds only under TUNING (the conformance normalizer's rule 5: NCCL
 * prints it in every job, the reference logs keep it only with TUNING).
 */
static bool compared(const char *norm, uint64_t mask)
{
    if (tp_verify__classify(norm, -1) < 0)
        return false;
    return (mask & TP_SUB_TUNING) || strncmp(norm, "INFO threadThresholds ", 22) != 0;
}

/* NCCL's logger prints "[dev] NCCL INFO text" into a char[1024]: long lines lose their end. */
#define TP_VERIFY_NCCL_LINE 1024

/* Where the plan's normalized lines go: hashes per section, one line's text, all texts. */
typedef struct expected_sink {
    tp_hashes *out;
    int want_section;
    size_t want_index;
    char **text;
    char **(*lines)[TP_VS_COUNT]; /* NULL: texts not kept */
    size_t *n_lines, cap[TP_VS_COUNT];
} expected_sink;

static tp_status keep_text(expected_sink *k, int sec, const char *norm, tp_error *err)
{
    char ***lines = &(*k->lines)[sec];
    if (k->n_lines[sec] == k->cap[sec] &&
        tp_grow((void **)lines, &k->cap[sec], k->n_lines[sec] + 1, sizeof(char *), err) != TP_OK)
        return TP_ERR_NOMEM;
    return tp_strdup(&(*lines)[k->n_lines[sec]++], norm, err);
}

static tp_status add_expected(const tp_log_line *l, uint64_t mask, int dev, expected_sink *k,
                              tp_error *err)
{
    if (l->level != TP_LOG_WARN && (l->sub & mask) == 0)
        return TP_OK;
    char printed[TP_VERIFY_NCCL_LINE];
    int prefix = snprintf(printed, sizeof(printed), "[%d] NCCL %s ", dev,
                          l->level == TP_LOG_WARN ? "WARN" : "INFO");
    snprintf(printed + prefix, sizeof(printed) - (size_t)prefix, "%s", l->text);
    char norm[TP_VERIFY_LINE_MAX + 16];
    if (!tp_verify__normalize(printed + prefix, l->level == TP_LOG_WARN, norm, sizeof(norm)))
        return TP_OK;
    if (!compared(norm, mask))
        return TP_OK;
    int sec = tp_verify__classify(norm, -1);
    size_t index = k->out[sec].n;
    if (sec == k->want_section && index == k->want_index && k->text && !*k->text)
        if (tp_strdup(k->text, norm, err) != TP_OK)
            return TP_ERR_NOMEM;
    if (k->lines && keep_text(k, sec, norm, err) != TP_OK)
        return TP_ERR_NOMEM;
    return tp_hashes_push(&k->out[sec], tp_verify__hash(norm), err);
}

static tp_status expected_of_plan(const tp_verify *v, const tp_plan *plan, int rank,
                                  expected_sink *k, tp_error *err)
{
    int dev = 0;
    const tp_system *sys = tp_plan_system(plan);
    for (int i = 0; sys && i < tp_system_node_count(sys, TP_NODE_GPU); i++) {
        tp_node_info g;
        if (tp_system_node(sys, TP_NODE_GPU, i, &g, sizeof(g)) == TP_OK && g.gpu_rank == rank)
            dev = g.gpu_dev;
    }
    tp_status st = TP_OK;
    for (size_t i = 0; st == TP_OK && i < plan->log.n_lines; i++)
        st = add_expected(&plan->log.lines[i], v->subsys_mask, dev, k, err);
    if (st != TP_OK || !v->has_sizes || rank != 0 || !plan->tuned || plan->status != TP_OK ||
        !plan->tuning.modelled)
        return st;
    tp_log sizes = {.enabled = true};
    tp_error serr = {0};
    tp_tune__log_sizes(&plan->tuning, &sizes, &serr);
    for (size_t i = 0; st == TP_OK && i < sizes.n_lines; i++)
        st = add_expected(&sizes.lines[i], v->subsys_mask, dev, k, err);
    tp_log_clear(&sizes);
    return st;
}

tp_job tp_verify__job(const tp_verify *v, int rank, const tp_vtopo *topo)
{
    tp_job job = v->opt.job;
    job.version = TP_JOB_VERSION;
    job.n_nodes = v->n_nodes;
    job.rank = rank;
    job.node_topos = (const char *const *)v->node_topos;
    if (topo && topo->node_topos) {
        job.node_topos = topo->node_topos;
        job.n_node_topos = topo->n_node_topos;
    }
    if (job.n_node_topos > job.n_nodes - 1)
        job.n_node_topos = job.n_nodes - 1;
    return job;
}

static tp_status expected_run(const tp_verify *v, int rank, const tp_config *cfg,
                              const tp_vtopo *topo, tp_vrank *transports, expected_sink *k,
                              int *plan_status, bool *out_plan_ok, tp_error *err)
{
    tp_job job = tp_verify__job(v, rank, topo);
    bool own = topo && topo->xml;
    tp_plan *plan = NULL;
    tp_error perr = {0};
    tp_status st =
        tp_plan_buffer(&plan, own ? topo->xml : v->topo_text, own ? topo->len : v->topo_len,
                       v->topo_source, &job, cfg ? cfg : v->cfg, &perr);
    *plan_status = st;
    if (out_plan_ok)
        *out_plan_ok = plan != NULL;
    if (!plan) {
        if (err)
            *err = perr;
        return st == TP_ERR_NOMEM ? TP_ERR_NOMEM : st;
    }
    st = expected_of_plan(v, plan, rank, k, err);
    if (st == TP_OK && transports && plan->status == TP_OK)
        st = tp_verify__plan_transports(plan, rank, transports, err);
    tp_plan_free(plan);
    return st;
}

tp_status tp_verify__expected(const tp_verify *v, int rank, const tp_config *cfg,
                              const tp_vtopo *topo, tp_vrank *transports,
                              tp_hashes out[TP_VS_COUNT], int want_section, size_t want_index,
                              char **text, int *plan_status, bool *out_plan_ok, tp_error *err)
{
    tp_hashes local[TP_VS_COUNT];
    memset(local, 0, sizeof(local));
    expected_sink k = {.out = out ? out : local,
                       .want_section = want_section,
                       .want_index = want_index,
                       .text = text};
    tp_status st = expected_run(v, rank, cfg, topo, transports, &k, plan_status, out_plan_ok, err);
    if (!out)
        for (int s = 0; s < TP_VS_COUNT; s++)
            free(local[s].h);
    return st;
}

tp_status tp_verify__expected_lines(const tp_verify *v, tp_vrank *r, char **lines[TP_VS_COUNT],
                                    size_t n_lines[TP_VS_COUNT], tp_error *err)
{
    r->planned = true;
    expected_sink k = {.out = r->expected,
                       .want_section = -1,
                       .lines = lines ? (char **(*)[TP_VS_COUNT])lines : NULL,
                       .n_lines = n_lines};
    return expected_run(v, r->rank, NULL, NULL, r, &k, &r->plan_status, &r->expected_ok, err);
}

/* ---- pass 2: every rank's lines against its plan ---- */

static void rank_hashes_free(tp_hashes h[TP_VS_COUNT])
{
    for (int s = 0; s < TP_VS_COUNT; s++) {
        free(h[s].h);
        h[s] = (tp_hashes){0};
    }
}

static tp_status plan_rank(tp_verify *v, tp_vrank *r, tp_error *err)
{
    r->planned = true;
    tp_error perr = {0};
    bool done = false;
    tp_status st = tp_verify__plan_by_kind(v, r, &done, &perr);
    if (!done)
        st = tp_verify__expected_lines(v, r, NULL, NULL, &perr);
    if (st == TP_ERR_NOMEM)
        return tp_fail_nomem(err);
    if (st != TP_OK && !r->expected_ok) {
        /* NCCL's own failures keep their lines (compared); a job that cannot be planned at
         * all (a topology that is no XML, a rank beyond the job) stops the check */
        char buf[700];
        tp_error_format(&perr, buf, sizeof(buf));
        return tp_fail(err, st == TP_ERR_USAGE ? TP_ERR_CONFIG : st, NULL, 0, 0,
                       "rank %d of the log cannot be planned (%d nodes): %s", r->rank, v->n_nodes,
                       buf);
    }
    return TP_OK;
}

static void set_where(tp_vrank *r, const char *at)
{
    free(r->div_where);
    r->div_where = at && *at ? strdup(at) : NULL;
}

static tp_status diverge(tp_verify *v, tp_vrank *r, int sec, const char *norm, const char *at,
                         tp_error *err)
{
    r->diverged = true;
    r->div_section = sec;
    r->div_index = sec < TP_VS_COUNT ? r->cursor[sec] : 0;
    set_where(r, at);
    if (norm && tp_strdup(&r->div_actual, norm, err) != TP_OK)
        return TP_ERR_NOMEM;
    if (sec < TP_VS_COUNT && r->div_index < r->expected[sec].n) {
        int ps = 0;
        tp_status st = tp_verify__expected(v, r->rank, NULL, NULL, NULL, NULL, sec, r->div_index,
                                           &r->div_expected, &ps, NULL, NULL);
        if (st == TP_ERR_NOMEM)
            return tp_fail_nomem(err);
    }
    return TP_OK;
}

typedef struct pass2_state {
    size_t input;
    unsigned line;
} pass2_state;

static tp_status compare_line(tp_verify *v, tp_vrank *r, int sec, const char *norm, const char *at,
                              tp_error *err)
{
    if (r->diverged)
        return TP_OK;
    if (!r->planned && plan_rank(v, r, err) != TP_OK)
        return TP_ERR_NOMEM;
    uint64_t h = tp_verify__hash(norm);
    size_t c = r->cursor[sec];
    if (c < r->expected[sec].n && r->expected[sec].h[c] == h) {
        r->cursor[sec]++;
        return TP_OK;
    }
    return diverge(v, r, sec, norm, at, err);
}

/* A run-time connection: the transport the plan gives that peer (the rank's first one kept). */
static tp_status check_connection(tp_verify *v, tp_vrank *r, const char *norm, const char *at,
                                  tp_error *err)
{
    if (r->diverged)
        return TP_OK;
    if (!r->planned && plan_rank(v, r, err) != TP_OK)
        return TP_ERR_NOMEM;
    char why[300];
    if (tp_verify__check_connection(r, norm, why, sizeof(why)))
        return TP_OK;
    r->div_ring_phase = !r->rings_connected;
    if (diverge(v, r, TP_VS_CONNECTIONS, norm, at, err) != TP_OK ||
        tp_strdup(&r->div_expected, why, err) != TP_OK)
        return TP_ERR_NOMEM;
    return TP_OK;
}

static tp_status pass2_line(tp_verify *v, size_t input, unsigned no, char *raw, void *arg,
                            tp_error *err)
{
    (void)arg;
    tp_vline l;
    tp_verify__split(raw, &l);
    if (!l.nccl)
        return TP_OK;
    char key[600];
    stream_key(key, sizeof(key), input, &l);
    tp_vstream *s = find_stream(v, key);
    if (!s || s->rank < 0) {
        v->unattributed_lines++;
        return TP_OK;
    }
    char norm[TP_VERIFY_LINE_MAX + 16];
    if (!tp_verify__normalize(l.text, l.warn, norm, sizeof(norm)))
        return TP_OK;
    tp_vrank *r = v->ranks[s->rank];
    r->seen = true;
    char at[320];
    where(at, sizeof(at), v, input, no);
    if (s->ended)
        return TP_OK;
    bool comm = strncmp(norm, "INFO comm PTR rank ", 19) == 0;
    if (s->comm_seen && (comm || strncmp(norm, "INFO === System : ", 18) == 0)) {
        /* the process initialises another communicator: only its first one is checked */
        s->ended = true;
        tp_verify__note(v,
                        "%s: rank %d's process begins another communicator's init: its "
                        "lines are not compared",
                        at, r->rank);
        return TP_OK;
    }
    s->comm_seen |= comm;
    if (v->inputs[input].truncated) {
        tp_verify__note(v, "%s: the log's last line is cut (rank %d): not compared", at, r->rank);
        set_where(r, at);
        r->cut = true;
        return TP_OK;
    }
    int sec = compared(norm, v->subsys_mask) ? tp_verify__classify(norm, -1) : -1;
    tp_verify__observe(v, r, s, norm);
    if (sec < 0 && !v->self_only && strncmp(norm, "INFO Channel ", 13) == 0 &&
        strstr(norm, " via ")) {
        v->unknown_lines++;
        return check_connection(v, r, norm, at, err);
    }
    if (sec < 0) {
        v->unknown_lines++;
        return TP_OK;
    }
    s->section = sec;
    r->n_lines++;
    if (tp_hashes_push(&r->actual[sec], tp_verify__hash(norm), err) != TP_OK)
        return TP_ERR_NOMEM;
    return v->self_only ? TP_OK : compare_line(v, r, sec, norm, at, err);
}

/* After the log: a rank whose log lacks lines the plan has diverges at the first of them. */
static tp_status finish_ranks(tp_verify *v, tp_error *err)
{
    for (int i = 0; i < v->n_ranks; i++) {
        tp_vrank *r = v->ranks[i];
        if (!r || !r->seen || r->diverged || v->self_only)
            continue;
        for (int s = 0; s < TP_VS_COUNT && !r->diverged; s++)
            if (r->cursor[s] < r->expected[s].n) {
                char at[320];
                snprintf(at, sizeof(at), "%s", r->div_where ? r->div_where : "");
                if (diverge(v, r, s, NULL, at, err) != TP_OK)
                    return TP_ERR_NOMEM;
            }
        rank_hashes_free(r->expected);
    }
    return TP_OK;
}

tp_status tp_verify_run(tp_verify *v, tp_error *err)
{
    if (!v)
        return tp_fail_arg(err, "tp_verify_run", "v is NULL");
    if (v->ran || v->n_inputs == 0)
        return tp_fail_arg(err, "tp_verify_run", v->ran ? "already run" : "no input");
    v->ran = true;
    pass1_state p1 = {0};
    tp_status st = tp_verify__each_line(v, pass1_line, &p1, err);
    if (st == TP_OK)
        st = check_inputs(v, err);
    if (st == TP_OK)
        st = check_version(v, err);
    if (st == TP_OK)
        st = load_log_topology(v, err);
    if (st == TP_OK)
        st = apply_settings(v, err);
    if (st == TP_OK)
        st = size_job(v, err);
    if (st != TP_OK)
        return st;
    v->self_only = v->topo_text == NULL;
    if (!v->self_only && v->n_nodes > 1 && (st = tp_verify__kinds_new(&v->kinds, v, err)) != TP_OK)
        return st;
    for (size_t i = 0; i < v->n_inputs; i++)
        v->nccl_lines += v->inputs[i].nccl_lines;
    pass2_state p2 = {0};
    st = tp_verify__each_line(v, pass2_line, &p2, err);
    if (st == TP_OK)
        st = finish_ranks(v, err);
    if (st == TP_OK)
        st = tp_verify__self_check(v, err);
    if (st == TP_OK && !v->self_only && v->opt.find_causes)
        st = tp_verify__find_causes(v, err);
    return st;
}

/* ---- results ---- */

const char *tp_verify_nccl(const tp_verify *v)
{
    return v ? tp_config_nccl(v->cfg) : NULL;
}

int tp_verify_rank_count(const tp_verify *v)
{
    return v ? v->n_ranks : 0;
}

int tp_verify_divergences(const tp_verify *v)
{
    int n = 0;
    for (int i = 0; v && i < v->n_ranks; i++)
        n += v->ranks[i] && v->ranks[i]->diverged;
    return n + (v && v->self_only ? v->self_findings : 0);
}

static const char *cause_text(const tp_verify *v, const tp_vrank *r)
{
    if (r->cause >= 0 && (size_t)r->cause < v->n_causes)
        return v->causes[r->cause].what;
    return NULL;
}

tp_status tp_verify_rank(const tp_verify *v, int i, tp_verify_rank_info *info, size_t size)
{
    if (!v || !info || i < 0 || i >= v->n_ranks)
        return tp_fail_arg(NULL, "tp_verify_rank", "bad argument");
    const tp_vrank *r = v->ranks[i];
    if (!r) {
        tp_verify_rank_info absent = {.rank = i, .verdict = TP_VERIFY_ABSENT, .where = ""};
        memcpy(info, &absent, size < sizeof(absent) ? size : sizeof(absent));
        return TP_OK;
    }
    tp_verify_rank_info x = {
        .rank = r->rank,
        .verdict = !r->seen       ? TP_VERIFY_ABSENT
                   : r->diverged  ? TP_VERIFY_DIVERGE
                   : v->self_only ? TP_VERIFY_SELF
                                  : TP_VERIFY_AGREE,
        .n_lines = r->n_lines,
        .stage = r->diverged ? tp_verify__section_name(r->div_section) : NULL,
        .expected = r->diverged ? r->div_expected : NULL,
        .actual = r->diverged ? r->div_actual : NULL,
        .where = r->diverged && r->div_where ? r->div_where : "",
        .cause = cause_text(v, r),
    };
    memcpy(info, &x, size < sizeof(x) ? size : sizeof(x));
    return TP_OK;
}

size_t tp_verify_note_count(const tp_verify *v)
{
    return v ? v->n_notes : 0;
}

const char *tp_verify_note(const tp_verify *v, size_t i)
{
    return v && i < v->n_notes ? v->notes[i] : NULL;
}

void tp_verify_free(tp_verify *v)
{
    if (!v)
        return;
    free(v->topo_text);
    for (int i = 0; v->node_topos && i < v->opt.job.n_node_topos; i++)
        free(v->node_topos[i]);
    free(v->node_topos);
    tp_config_free(v->cfg);
    for (size_t i = 0; i < v->n_inputs; i++)
        free(v->inputs[i].path);
    free(v->inputs);
    for (size_t i = 0; i < v->n_streams; i++) {
        free(v->streams[i].key);
        free(v->streams[i].host);
    }
    free(v->streams);
    free(v->stream_slots);
    for (size_t i = 0; i < v->n_settings; i++) {
        free(v->settings[i].name);
        free(v->settings[i].value);
    }
    free(v->settings);
    free(v->hosts);
    for (int i = 0; v->ranks && i < v->n_ranks; i++) {
        tp_vrank *r = v->ranks[i];
        if (!r)
            continue;
        rank_hashes_free(r->expected);
        rank_hashes_free(r->actual);
        free(r->ring_prev);
        free(r->ring_next);
        free(r->div_expected);
        free(r->div_actual);
        free(r->div_where);
        free(r->transport);
        free(r->ring_net);
        free(r->net_names);
        free(r);
    }
    free(v->ranks);
    for (size_t i = 0; i < v->n_causes; i++) {
        free(v->causes[i].what);
        free(v->causes[i].detail);
        free(v->causes[i].host);
    }
    free(v->causes);
    for (size_t i = 0; i < v->n_notes; i++)
        free(v->notes[i]);
    free(v->notes);
    for (size_t i = 0; i < v->n_tree_lines; i++)
        free(v->tree_lines[i]);
    free(v->tree_lines);
    tp_verify__kinds_free(v->kinds);
    free(v);
}
