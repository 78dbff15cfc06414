/* The NCCL_* parameter registry: parsing, validation and lookup. */
#include "config.h"

#include "names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int64_t num;
    char *text;
} param_value;

struct tp_config {
    param_value values[TP_PARAM_COUNT];
};

/* NCCL 2.22.3 reads old-style numeric levels as 0=LOC 1=PIX 2=PXB 3=PHB 4=SYS. */
static const int old_level_to_path[] = {TP_PATH_LOC, TP_PATH_PIX, TP_PATH_PXB, TP_PATH_PHB,
                                        TP_PATH_SYS};

static tp_status parse_int(const char *name, const char *text, int64_t *out, tp_error *err)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 0);
    if (errno || end == text || *end != '\0')
        return tp_fail(err, TP_ERR_CONFIG, name, 0, 0, "invalid value \"%s\" (expected an integer)",
                       text);
    *out = v;
    return TP_OK;
}

static tp_status parse_level(const char *name, const char *text, int64_t *out, tp_error *err)
{
    for (int i = 0; i <= TP_PATH_SYS; i++) {
        if (strcmp(text, tp_path_type_name(i)) == 0) {
            *out = i;
            return TP_OK;
        }
    }
    if (text[0] >= '0' && text[0] <= '9') {
        int64_t old = 0;
        if (parse_int(name, text, &old, err) != TP_OK)
            return err->code;
        if (old > (int64_t)ARRAY_LEN(old_level_to_path) - 1)
            old = ARRAY_LEN(old_level_to_path) - 1;
        *out = old_level_to_path[old];
        return TP_OK;
    }
    return tp_fail(err, TP_ERR_CONFIG, name, 0, 0,
                   "invalid value \"%s\" (expected LOC, NVL, NVB, PIX, PXB, PXN, PHB, SYS or 0..4)",
                   text);
}

static int find_param(const char *key, size_t key_len)
{
    for (size_t i = 0; i < ARRAY_LEN(params); i++)
        if (strlen(params[i].name) == key_len && strncmp(params[i].name, key, key_len) == 0)
            return (int)i;
    return -1;
}

static tp_status set_param(tp_config *cfg, int id, const char *value, tp_error *err)
{
    param_value v = {.is_set = true};
    const tp_param *p = &params[id];
    /* NCCL 2.22.3 reads an empty numeric or level value as unset. */
    if (p->kind != TP_KIND_STR && value[0] == '\0') {
        free(cfg->values[id].text);
        memset(&cfg->values[id], 0, sizeof(cfg->values[id]));
        return TP_OK;
    }
    tp_status st = TP_OK;
    if (p->kind == TP_KIND_INT)
        st = parse_int(p->name, value, &v.num, err);
    else if (p->kind == TP_KIND_LEVEL)
        st = parse_level(p->name, value, &v.num, err);
    if (st != TP_OK)
        return st;
    if ((st = tp_strdup(&v.text, value, err)) != TP_OK)
        return st;
    free(cfg->values[id].text);
    cfg->values[id] = v;
    return TP_OK;
}

tp_status tp_config_set(tp_config *cfg, const char *key, const char *value, tp_error *err)
{
    if (!cfg || !key || !value)
        return tp_fail_arg(err, "tp_config_set", !cfg ? "cfg is NULL" : !key ? "key is NULL"
                                                                          : "value is NULL");
    int id = find_param(key, strlen(key));
    if (id < 0)
        return TP_OK; /* not a parameter topoplan models */
    return set_param(cfg, id, value, err);
}

tp_status tp_config_new(tp_config **out, const char *const *envp, tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_config_new", "out is NULL");
    *out = NULL;
    tp_config *cfg = calloc(1, sizeof(*cfg));
    if (!cfg)
        return tp_fail_nomem(err);
    for (size_t i = 0; envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        if (!eq)
            continue;
        int id = find_param(envp[i], (size_t)(eq - envp[i]));
        if (id < 0)
            continue;
        tp_status st = set_param(cfg, id, eq + 1, err);
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
        free(cfg->values[i].text);
    free(cfg);
}

tp_status tp_config__copy(tp_config **out, const tp_config *cfg, tp_error *err)
{
    *out = NULL;
    tp_config *copy = calloc(1, sizeof(*copy));
    if (!copy)
        return tp_fail_nomem(err);
    for (size_t i = 0; i < TP_PARAM_COUNT; i++) {
        copy->values[i] = cfg->values[i];
        copy->values[i].text = NULL;
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
    return v->is_set ? v->num : params[id].nccl_default;
}

const char *tp_config_str(const tp_config *cfg, tp_param_id id)
{
    return cfg->values[id].is_set ? cfg->values[id].text : NULL;
}

bool tp_config_is_set(const tp_config *cfg, tp_param_id id)
{
    return cfg->values[id].is_set;
}

const char *tp_config_name(tp_param_id id)
{
    return params[id].name;
}

tp_status tp_config_write(FILE *out, const tp_config *cfg, tp_error *err)
{
    if (!out || !cfg)
        return tp_fail_arg(err, "tp_config_write", !out ? "out is NULL" : "cfg is NULL");
    for (size_t i = 0; i < TP_PARAM_COUNT; i++) {
        const param_value *v = &cfg->values[i];
        if (v->is_set)
            fprintf(out, "%-30s %-20s (set)\n", params[i].name, v->text);
        else if (params[i].kind == TP_KIND_STR)
            fprintf(out, "%-30s %-20s (default)\n", params[i].name, "");
        else
            fprintf(out, "%-30s %-20lld (default)\n", params[i].name,
                    (long long)params[i].nccl_default);
    }
    if (ferror(out))
        return tp_fail(err, TP_ERR_IO, NULL, 0, 0, "cannot write the configuration");
    return TP_OK;
}
