/* The NCCL_* parameter registry: parsing, validation and lookup. */
#include "config/config.h"

#include "common/names.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct tp_param {
    const char *name;
    tp_param_kind kind;
    int64_t nccl_default;
} tp_param;

static const tp_param params[] = {
#define TP_PARAM_ROW(id, name, kind, dflt) [TP_P_##id] = {name, kind, dflt},
    TP_PARAMS(TP_PARAM_ROW)
#undef TP_PARAM_ROW
};

typedef struct param_value {
    bool is_set;
    bool out_of_range; /* an integer NCCL's strtoll refuses (ERANGE): text kept, is_set false */
    int64_t num;
    char *text;
    char source[TP_CONFIG_SOURCE_MAX]; /* "environment", "--env", "--env-file F:3" ... */
} param_value;

/* Warnings kept per configuration (more are counted, not kept). */
#define TP_CONFIG_MAX_WARNINGS 64

/*
 * Parameters only some NCCL versions read, each with the rule of the
 * version that reads it: set under a profile without that rule, NCCL
 * ignores them without a word.
 */
static const struct {
    tp_param_id id;
    tp_rule read_by;
} versioned_params[] = {
    {TP_P_NET_MERGE_LEVEL, TP_RULE_NIC_FUSION},
    {TP_P_NET_FORCE_MERGE, TP_RULE_NIC_FUSION},
    {TP_P_NET_MERGE_POLICY, TP_RULE_NET_MERGE_POLICY},
    {TP_P_NETDEVS_POLICY, TP_RULE_NETDEVS_POLICY},
};
#define N_VERSIONED_PARAMS (sizeof(versioned_params) / sizeof(versioned_params[0]))

struct tp_config {
    param_value values[TP_PARAM_COUNT];
    /* The NCCL version modelled, and its parameter defaults (nccl_profile.h). */
    const tp_nccl_profile *profile;
    int64_t defaults[TP_PARAM_COUNT];
    char *warnings[TP_CONFIG_MAX_WARNINGS];
    size_t n_warnings;
    /* The set parameters the profile's NCCL does not read (versioned_params), as warnings after
     * the others: remade whenever the profile or a value changes. */
    char unread[N_VERSIONED_PARAMS][200];
    size_t n_unread;
};

bool tp_config__read_by_profile(const tp_config *cfg, tp_param_id id)
{
    for (size_t k = 0; k < N_VERSIONED_PARAMS; k++)
        if (versioned_params[k].id == id)
            return tp_profile_has(cfg->profile, versioned_params[k].read_by);
    return true;
}

/* Remake cfg->unread for the profile and the values now. */
static void note_unread(tp_config *cfg)
{
    cfg->n_unread = 0;
    for (size_t k = 0; k < N_VERSIONED_PARAMS; k++) {
        const param_value *v = &cfg->values[versioned_params[k].id];
        tp_rule rule = versioned_params[k].read_by;
        if (!(v->is_set || v->out_of_range) || tp_profile_has(cfg->profile, rule))
            continue; /* tp_config__read_by_profile */
        /* the rule's source: "2.24 topo.cc ncclTopoMakeVNics" */
        const char *source = tp_rule_source(rule), *space = strchr(source, ' ');
        int version_len = space ? (int)(space - source) : (int)strlen(source);
        snprintf(cfg->unread[cfg->n_unread++], sizeof(cfg->unread[0]),
                 "%s=%s has no effect: NCCL %s does not read it (NCCL %.*s and later do: %s)",
                 params[versioned_params[k].id].name, v->text ? v->text : "", cfg->profile->version,
                 version_len, source, space ? space + 1 : "");
    }
}

static void warn(tp_config *cfg, const char *fmt, ...) TP_PRINTF(2, 3);
static void warn(tp_config *cfg, const char *fmt, ...)
{
    if (cfg->n_warnings == TP_CONFIG_MAX_WARNINGS)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char *copy = strdup(buf);
    if (copy) /* warnings are advisory: one lost to memory is acceptable */
        cfg->warnings[cfg->n_warnings++] = copy;
}

/*
 * What NCCL 2.22.3 says when a parameter's default is not a number: the
 * sentinel values (-2, -1) mean NCCL decides.
 */
static const char *default_meaning(int id)
{
    switch (id) {
    case TP_P_P2P_LEVEL:
        return "decided by NCCL per GPU pair from the path type and the CPU";
    case TP_P_NET_GDR_LEVEL:
        return "decided by NCCL per GPU and NIC (PXB; more on some systems)";
    case TP_P_NET_GDR_READ:
        return "decided by NCCL (GDR reads on for sm80+ GPUs)";
    case TP_P_MIN_NCHANNELS:
    case TP_P_MIN_NRINGS:
        return "no minimum";
    case TP_P_MAX_NCHANNELS:
    case TP_P_MAX_NRINGS:
        return "no maximum beyond 32";
    case TP_P_MIN_CTAS:
        return "1";
    case TP_P_MAX_CTAS:
        return "32";
    case TP_P_NCHANNELS_PER_NET_PEER:
        return "computed by NCCL from the NICs' count and bandwidth";
    case TP_P_NTHREADS:
    case TP_P_LL128_NTHREADS:
        return "NCCL's per-architecture thread counts";
    case TP_P_NET_OVERHEAD:
        return "NCCL's per-CPU network overhead";
    case TP_P_NET_MERGE_LEVEL: /* 2.24 topo.cc ncclTopoMakeVNics (getenv) */
        return "PORT from NCCL 2.24 (fuses the ports of one NIC); not read by 2.22.3";
    case TP_P_NET_FORCE_MERGE:
        return "none; read from NCCL 2.24 on";
    case TP_P_NET_MERGE_POLICY: /* 2.30.7 topo.cc ncclTopoGetMergePolicy */
        return "ALL; read from NCCL 2.30.7 on";
    case TP_P_NETDEVS_POLICY: /* 2.28.3 topo.cc getNetDevsPolicyOnce */
        return "AUTO (a GPU's share of its local NICs); read from NCCL 2.28.3 on";
    default:
        return NULL;
    }
}

void tp_config__default_text(char *buf, size_t size, int id)
{
    const char *meaning = default_meaning(id);
    if (meaning)
        snprintf(buf, size, "%s", meaning);
    else if (params[id].kind == TP_KIND_STR)
        snprintf(buf, size, "none");
    else
        snprintf(buf, size, "%lld", (long long)params[id].nccl_default);
}

/* NCCL 2.22.3 reads old-style numeric levels as 0=LOC 1=PIX 2=PXB 3=PHB 4=SYS. */
static const int old_level_to_path[] = {TP_PATH_LOC, TP_PATH_PIX, TP_PATH_PXB, TP_PATH_PHB,
                                        TP_PATH_SYS};

/*
 * NCCL 2.22.3 ncclLoadParam: strtoll(value, NULL, 0); only an out-of-range
 * value (errno) falls back to the default; text after the number, or no
 * number at all (0), is taken silently. *is_set false: the default applies.
 */
static void parse_int_nccl(tp_config *cfg, const char *name, const char *text, int64_t *out,
                           bool *is_set)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 0);
    *is_set = true;
    *out = v;
    if (errno == ERANGE) {
        *is_set = false;
        warn(cfg, "%s=%s is out of range: NCCL 2.22.3 ignores it and uses its default", name, text);
    } else if (end == text) {
        warn(cfg, "%s=%s is not a number: NCCL 2.22.3 reads it as 0 (strtoll), as topoplan does",
             name, text);
    } else if (*end != '\0') {
        warn(cfg, "%s=%s: NCCL 2.22.3 reads %lld and ignores \"%s\", as topoplan does", name, text,
             v, end);
    }
}

/*
 * NCCL 2.22.3 ncclGetLevel: a path type name, or old numbering when the
 * value starts with a digit (strtol, capped at 4); anything else leaves the
 * level unset (NCCL decides), silently.
 */
static void parse_level_nccl(tp_config *cfg, const char *name, const char *text, int64_t *out,
                             bool *is_set)
{
    *is_set = true;
    for (int i = 0; i <= TP_PATH_SYS; i++) {
        if (strcmp(text, tp_path_type_name(i)) == 0) {
            *out = i;
            return;
        }
    }
    if (text[0] >= '0' && text[0] <= '9') {
        char *end = NULL;
        long old = strtol(text, &end, 0);
        if (old > (long)ARRAY_LEN(old_level_to_path) - 1 || old < 0)
            old = ARRAY_LEN(old_level_to_path) - 1;
        *out = old_level_to_path[old];
        if (*end != '\0')
            warn(cfg, "%s=%s: NCCL 2.22.3 reads the old level %ld (%s) and ignores \"%s\"", name,
                 text, old, tp_path_type_name((int)*out), end);
        return;
    }
    *is_set = false;
    warn(cfg,
         "%s=%s is not a path type (LOC, NVL, NVB, PIX, PXB, PXN, PHB, SYS) nor a level "
         "0..4: NCCL 2.22.3 ignores it and decides the level itself",
         name, text);
}

static tp_netdevs_policy parse_netdevs_policy(const char *text, bool *recognized);

/* A value NCCL reads as something else than it says: a warning naming what NCCL does. */
static void check_text_value(tp_config *cfg, int id, const char *text)
{
    bool recognized = true;
    if (id == TP_P_NETDEVS_POLICY)
        parse_netdevs_policy(text, &recognized);
    if (!recognized)
        warn(cfg,
             "%s=%s is not AUTO, ALL nor MAX:n (n > 0): NCCL (2.28.3 on) uses AUTO, as topoplan "
             "does",
             params[id].name, text);
}

static int find_param(const char *key, size_t key_len)
{
    for (size_t i = 0; i < ARRAY_LEN(params); i++)
        if (strlen(params[i].name) == key_len && strncmp(params[i].name, key, key_len) == 0)
            return (int)i;
    return -1;
}

static tp_status set_param(tp_config *cfg, int id, const char *value, const char *source,
                           tp_error *err)
{
    param_value v = {.is_set = true};
    const tp_param *p = &params[id];
    /* NCCL 2.22.3 reads an empty numeric or level value as unset. */
    if (p->kind != TP_KIND_STR && value[0] == '\0') {
        free(cfg->values[id].text);
        memset(&cfg->values[id], 0, sizeof(cfg->values[id]));
        note_unread(cfg);
        return TP_OK;
    }
    if (p->kind == TP_KIND_INT)
        parse_int_nccl(cfg, p->name, value, &v.num, &v.is_set);
    else if (p->kind == TP_KIND_LEVEL)
        parse_level_nccl(cfg, p->name, value, &v.num, &v.is_set);
    else
        check_text_value(cfg, id, value);
    tp_status st = TP_OK;
    v.out_of_range = p->kind == TP_KIND_INT && !v.is_set;
    if ((v.is_set || v.out_of_range) && (st = tp_strdup(&v.text, value, err)) != TP_OK)
        return st;
    snprintf(v.source, sizeof(v.source), "%s", v.is_set ? source : "");
    free(cfg->values[id].text);
    cfg->values[id] = v;
    note_unread(cfg);
    return TP_OK;
}

void tp_config__unset(tp_config *cfg, tp_param_id id)
{
    if (!cfg || id < 0 || id >= TP_PARAM_COUNT)
        return;
    free(cfg->values[id].text);
    memset(&cfg->values[id], 0, sizeof(cfg->values[id]));
}

/* An NCCL_* name topoplan does not model: say so, naming the nearest one it does. */
static void unknown_name(tp_config *cfg, const char *key, size_t len)
{
    char name[64];
    if (len < 5 || strncmp(key, "NCCL_", 5) != 0)
        return;
    snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), key);
    size_t best = (size_t)-1;
    const char *nearest = NULL;
    for (size_t i = 0; i < ARRAY_LEN(params); i++) {
        size_t d = tp_edit_distance(name, params[i].name);
        if (d < best)
            best = d, nearest = params[i].name;
    }
    if (nearest && best <= 3)
        warn(cfg, "%s is not an NCCL variable topoplan knows: ignored (did you mean %s?)", name,
             nearest);
    else
        warn(cfg, "%s is not an NCCL variable topoplan models: ignored", name);
}

tp_status tp_config_set_from(tp_config *cfg, const char *key, const char *value, const char *source,
                             tp_error *err)
{
    if (!cfg || !key || !value)
        return tp_fail_arg(err, "tp_config_set_from",
                           !cfg   ? "cfg is NULL"
                           : !key ? "key is NULL"
                                  : "value is NULL");
    int id = find_param(key, strlen(key));
    if (id < 0) {
        unknown_name(cfg, key, strlen(key));
        return TP_OK;
    }
    return set_param(cfg, id, value, source ? source : "tp_config_set", err);
}

tp_status tp_config_set(tp_config *cfg, const char *key, const char *value, tp_error *err)
{
    return tp_config_set_from(cfg, key, value, "tp_config_set", err);
}

const char *tp_config_source(const tp_config *cfg, const char *key)
{
    int id = cfg && key ? find_param(key, strlen(key)) : -1;
    return id >= 0 && cfg->values[id].is_set ? cfg->values[id].source : NULL;
}

size_t tp_config_warning_count(const tp_config *cfg)
{
    return cfg ? cfg->n_warnings + cfg->n_unread : 0;
}

const char *tp_config_warning(const tp_config *cfg, size_t i)
{
    if (!cfg || i >= cfg->n_warnings + cfg->n_unread)
        return NULL;
    return i < cfg->n_warnings ? cfg->warnings[i] : cfg->unread[i - cfg->n_warnings];
}

/* The recorded origin of an env-file value: "--env-file FILE:LINE". */
#define TP_ENV_ORIGIN_MAX 300

/* One env-file line (NUL-terminated, without its newline). */
static tp_status load_env_line(tp_config *cfg, char *line, size_t len, const char *source,
                               unsigned n, tp_error *err)
{
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    if (len > TP_ENV_FILE_MAX_LINE)
        return tp_fail(err, TP_ERR_CONFIG, source, n, 1, "line longer than %d bytes",
                       TP_ENV_FILE_MAX_LINE);
    if (line[0] == '\0' || line[0] == '#')
        return TP_OK;
    char *eq = strchr(line, '=');
    if (!eq || eq == line)
        return tp_fail(err, TP_ERR_CONFIG, source, n, 1, "expected KEY=VALUE, got \"%.200s\"",
                       line);
    *eq = '\0';
    char origin[TP_ENV_ORIGIN_MAX];
    snprintf(origin, sizeof(origin), "--env-file %s:%u", source, n);
    tp_status st = tp_config_set_from(cfg, line, eq + 1, origin, err);
    if (st != TP_OK && err) {
        char inner[sizeof(err->message)];
        tp_error_format(err, inner, sizeof(inner));
        tp_fail(err, st, source, n, 1, "%s", inner);
    }
    return st;
}

tp_status tp_config_load_env_text(tp_config *cfg, const char *text, size_t len, const char *source,
                                  tp_error *err)
{
    if (!cfg || (!text && len))
        return tp_fail_arg(err, "tp_config_load_env_text", !cfg ? "cfg is NULL" : "text is NULL");
    source = source ? source : "<env>";
    if (len > TP_MAX_INPUT_BYTES)
        return tp_fail(err, TP_ERR_CONFIG, source, 0, 0, "larger than %u MiB",
                       TP_MAX_INPUT_BYTES >> 20);
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        unsigned n = 1;
        for (const char *c = text; c < nul; c++)
            n += *c == '\n';
        return tp_fail(err, TP_ERR_CONFIG, source, n, 1, "a NUL byte (not a text file)");
    }
    char *line = malloc(TP_ENV_FILE_MAX_LINE + 2);
    if (!line)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    unsigned n = 1;
    for (size_t pos = 0; st == TP_OK && pos < len; n++) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, l = end - pos;
        size_t kept = l > TP_ENV_FILE_MAX_LINE + 1 ? TP_ENV_FILE_MAX_LINE + 1 : l;
        memcpy(line, text + pos, kept);
        line[kept] = '\0';
        st = load_env_line(cfg, line, kept, source, n, err);
        pos = end + 1;
    }
    free(line);
    return st;
}

/* Select the profile and the parameter defaults it changes. */
static void use_profile(tp_config *cfg, const tp_nccl_profile *p)
{
    cfg->profile = p;
    for (size_t i = 0; i < TP_PARAM_COUNT; i++)
        cfg->defaults[i] =
            tp_nccl_profile__param_default(p, params[i].name, params[i].nccl_default);
    note_unread(cfg);
}

tp_status tp_config_new(tp_config **out, const char *const *envp, tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_config_new", "out is NULL");
    *out = NULL;
    tp_config *cfg = calloc(1, sizeof(*cfg));
    if (!cfg)
        return tp_fail_nomem(err);
    use_profile(cfg, tp_nccl_profile__default());
    for (size_t i = 0; envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        if (!eq)
            continue;
        int id = find_param(envp[i], (size_t)(eq - envp[i]));
        if (id < 0) {
            unknown_name(cfg, envp[i], (size_t)(eq - envp[i]));
            continue;
        }
        tp_status st = set_param(cfg, id, eq + 1, "environment", err);
        if (st != TP_OK) {
            tp_config_free(cfg);
            return st;
        }
    }
    *out = cfg;
    return TP_OK;
}

void tp_config_free(tp_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < TP_PARAM_COUNT; i++)
        if (cfg->values[i].text) /* most are unset: no call for them (a copy is freed per plan) */
            free(cfg->values[i].text);
    for (size_t i = 0; i < cfg->n_warnings; i++)
        free(cfg->warnings[i]);
    free(cfg);
}

tp_status tp_config__copy(tp_config **out, const tp_config *cfg, tp_error *err)
{
    *out = NULL;
    tp_config *copy = malloc(sizeof(*copy));
    if (!copy)
        return tp_fail_nomem(err);
    /* Set values in full, unset ones as a new configuration holds them (most are unset: their
     * sources are not copied), then the texts of their own. Warnings stay with the original
     * (slots past n_warnings are never read). */
    copy->n_warnings = 0;
    copy->n_unread = 0;
    copy->profile = cfg->profile;
    memcpy(copy->defaults, cfg->defaults, sizeof(copy->defaults));
    for (size_t i = 0; i < TP_PARAM_COUNT; i++) {
        param_value *v = &copy->values[i];
        if (cfg->values[i].is_set || cfg->values[i].out_of_range) {
            *v = cfg->values[i];
        } else {
            v->is_set = false;
            v->out_of_range = false;
            v->num = 0;
            v->source[0] = '\0';
        }
        v->text = NULL;
    }
    for (size_t i = 0; i < TP_PARAM_COUNT; i++) {
        if (cfg->values[i].text && tp_strdup(&copy->values[i].text, cfg->values[i].text, err)) {
            tp_config_free(copy);
            return TP_ERR_NOMEM;
        }
    }
    *out = copy;
    return TP_OK;
}

tp_status tp_config_copy(tp_config **out, const tp_config *cfg, tp_error *err)
{
    if (!out || !cfg)
        return tp_fail_arg(err, "tp_config_copy", !out ? "out is NULL" : "cfg is NULL");
    return tp_config__copy(out, cfg, err);
}

int64_t tp_config_int(const tp_config *cfg, tp_param_id id)
{
    const param_value *v = &cfg->values[id];
    return v->is_set ? v->num : cfg->defaults[id];
}

const tp_nccl_profile *tp_config__profile(const tp_config *cfg)
{
    return cfg->profile;
}

tp_status tp_config_set_nccl(tp_config *cfg, const char *version, tp_error *err)
{
    if (!cfg || !version)
        return tp_fail_arg(err, "tp_config_set_nccl", !cfg ? "cfg is NULL" : "version is NULL");
    const tp_nccl_profile *p = tp_nccl_profile__find(version);
    if (!p) {
        char list[128];
        tp_nccl_profile__list(list, sizeof(list));
        return tp_fail(err, TP_ERR_USAGE, NULL, 0, 0, "unknown NCCL version \"%s\" (supported: %s)",
                       version, list);
    }
    use_profile(cfg, p);
    return TP_OK;
}

const char *tp_config_nccl(const tp_config *cfg)
{
    return cfg ? cfg->profile->version : NULL;
}

const char *tp_config_str(const tp_config *cfg, tp_param_id id)
{
    return cfg->values[id].is_set ? cfg->values[id].text : NULL;
}

const char *tp_config__raw_text(const tp_config *cfg, tp_param_id id)
{
    const param_value *v = &cfg->values[id];
    return v->is_set || v->out_of_range ? v->text : NULL;
}

bool tp_config_is_set(const tp_config *cfg, tp_param_id id)
{
    return cfg->values[id].is_set;
}

void tp_config__log_once(tp_log *log, uint64_t sub, const char *line)
{
    if (!log)
        return;
    for (size_t i = 0; i < log->n_lines; i++)
        if (strcmp(log->lines[i].text, line) == 0)
            return;
    tp_log_info_sub(log, sub, "%s", line);
}

/* The default NCCL_PARAM names in its "using default" line (config.h keeps -2 where NCCL's is
 * NCCL_CONFIG_UNDEF_INT, INT_MIN: both mean "NCCL decides"). */
static long long nccl_param_default(const tp_config *cfg, tp_param_id id)
{
    if (id == TP_P_MIN_CTAS || id == TP_P_MAX_CTAS ||
        (id == TP_P_NVLS_NCHANNELS && cfg->defaults[id] == -2))
        return INT32_MIN;
    return (long long)cfg->defaults[id];
}

void tp_config__log_env(const tp_config *cfg, tp_param_id id, tp_log *log)
{
    const param_value *v = &cfg->values[id];
    if (!log || !(v->is_set || v->out_of_range))
        return;
    if (params[id].kind == TP_KIND_STR) {
        tp_log_info_sub(log, TP_SUB_ENV, "%s set by environment to %s", params[id].name, v->text);
        return;
    }
    if (params[id].kind != TP_KIND_INT)
        return; /* levels: tp_config__log_level, by level name */
    char line[4 * 256 + 96];
    if (v->out_of_range) /* param.cc ncclLoadParam, errno from strtoll: INFO(NCCL_ALL) */
        snprintf(line, sizeof(line), "Invalid value %s for %s, using default %lld.", v->text,
                 params[id].name, nccl_param_default(cfg, id));
    else
        snprintf(line, sizeof(line), "%s set by environment to %lld.", params[id].name,
                 (long long)v->num);
    tp_config__log_once(log, v->out_of_range ? TP_SUB_ALL : TP_SUB_ENV, line);
}

void tp_config__log_ib_plugin(const tp_config *cfg, bool merge_nics_read, tp_log *log)
{
    const param_value *hca = &cfg->values[TP_P_IB_HCA];
    if (!log)
        return;
    if (hca->is_set) { /* net_ib.cc ncclIbInit: its own wording, NCCL_NET|NCCL_ENV, once */
        char line[4 * 256 + 32];
        snprintf(line, sizeof(line), "NCCL_IB_HCA set to %s", hca->text);
        tp_config__log_once(log, TP_SUB_NET | TP_SUB_ENV, line);
    }
    if (merge_nics_read)
        tp_config__log_env(cfg, TP_P_IB_MERGE_NICS, log);
}

void tp_config__log_level(const tp_config *cfg, tp_param_id id, int level, tp_log *log)
{
    (void)cfg;
    if (!log || level < 0)
        return;
    char line[96];
    snprintf(line, sizeof(line), "%s set by environment to %s", params[id].name,
             tp_path_type_name(level));
    tp_config__log_once(log, TP_SUB_ALL, line);
}

/* NCCL 2.28.3 getNetDevsPolicyOnce; recognized false: the text it reads as AUTO. */
static tp_netdevs_policy parse_netdevs_policy(const char *text, bool *recognized)
{
    tp_netdevs_policy p = {.kind = TP_NETDEVS_AUTO};
    *recognized = true;
    if (!text || strcasecmp(text, "AUTO") == 0)
        return p;
    if (strcasecmp(text, "ALL") == 0) {
        p.kind = TP_NETDEVS_ALL;
        return p;
    }
    /* atoi: leading blanks, a sign, digits, then anything (glibc's (int)strtol) */
    int n = strncasecmp(text, "MAX:", 4) == 0 ? (int)strtol(text + 4, NULL, 10) : 0;
    if (n > 0) {
        p.kind = TP_NETDEVS_MAX;
        p.max = n;
        return p;
    }
    *recognized = false;
    return p;
}

tp_netdevs_policy tp_config__netdevs_policy(const tp_config *cfg)
{
    bool recognized;
    return parse_netdevs_policy(tp_config_str(cfg, TP_P_NETDEVS_POLICY), &recognized);
}

void tp_config__log_netdevs_policy(const tp_config *cfg, tp_log *log)
{
    const char *text = tp_config_str(cfg, TP_P_NETDEVS_POLICY);
    if (!log || !text)
        return;
    bool recognized;
    parse_netdevs_policy(text, &recognized);
    char line[TP_ENV_FILE_MAX_LINE + 96]; /* both INFO(NCCL_ENV), once (std::call_once) */
    if (recognized)
        snprintf(line, sizeof(line), "NCCL_NETDEVS_POLICY set by environment to %s", text);
    else
        snprintf(line, sizeof(line),
                 "Unable to recognize NCCL_NETDEVS_POLICY=%s, using NCCL_NETDEVS_POLICY_AUTO "
                 "instead.",
                 text);
    tp_config__log_once(log, TP_SUB_ENV, line);
}

const char *tp_config_name(tp_param_id id)
{
    return params[id].name;
}

tp_param_kind tp_config_kind(tp_param_id id)
{
    return params[id].kind;
}

tp_status tp_config_write(FILE *out, const tp_config *cfg, tp_error *err)
{
    if (!out || !cfg)
        return tp_fail_arg(err, "tp_config_write", !out ? "out is NULL" : "cfg is NULL");
    for (size_t i = 0; i < TP_PARAM_COUNT; i++) {
        const param_value *v = &cfg->values[i];
        char dflt[160];
        tp_config__default_text(dflt, sizeof(dflt), (int)i);
        char text[64], shown[4 * 256 + 8], source[4 * 256 + 8]; /* values and files echoed */
        snprintf(text, sizeof(text), "%lld", (long long)v->num);
        tp_printable(shown, sizeof(shown), v->is_set ? v->text : "");
        tp_printable(source, sizeof(source), v->is_set ? v->source : "");
        if (v->is_set && !tp_config__read_by_profile(cfg, (tp_param_id)i))
            fprintf(out, "%-30s %-20s set by %s; NCCL %s does not read it (no effect)\n",
                    params[i].name, shown, source, cfg->profile->version);
        else if (v->is_set && params[i].kind == TP_KIND_INT && strcmp(text, v->text) != 0)
            fprintf(out, "%-30s %-20s set by %s; NCCL reads %s\n", params[i].name, shown, source,
                    text);
        else if (v->is_set && params[i].kind == TP_KIND_LEVEL &&
                 strcmp(v->text, tp_path_type_name((int)v->num)) != 0)
            fprintf(out, "%-30s %-20s set by %s; NCCL reads %s\n", params[i].name, shown, source,
                    tp_path_type_name((int)v->num));
        else if (v->is_set)
            fprintf(out, "%-30s %-20s set by %s\n", params[i].name, shown, source);
        else
            fprintf(out, "%-30s unset (NCCL default: %s)\n", params[i].name, dflt);
    }
    if (ferror(out))
        return tp_fail(err, TP_ERR_IO, NULL, 0, 0, "cannot write the configuration");
    return TP_OK;
}

int tp_nccl_profile_count(void)
{
    return TP_NCCL_COUNT;
}

tp_status tp_nccl_profile_info_at(int i, tp_nccl_profile_info *info, size_t size, tp_error *err)
{
    const tp_nccl_profile *p = tp_nccl_profile__at(i);
    if (!info || !p)
        return tp_fail_arg(err, "tp_nccl_profile_info_at",
                           !info ? "info is NULL" : "i is out of range");
    tp_nccl_profile_info v = {
        .nccl = p->version,
        .version_code = p->version_code,
        .exact = p->exact,
        .is_default = p == tp_nccl_profile__default(),
        .public_passed = p->public_passed,
        .public_total = p->public_total,
    };
    /* A caller built with an older, shorter record gets its prefix. */
    memcpy(info, &v, size < sizeof(v) ? size : sizeof(v));
    return TP_OK;
}
