/*
 * `mutate` checked: an attribute edit must leave a topology the loader takes
 * as it took the one before (the loader's own rules for values: numbers,
 * bus ids, link speeds ...), so that a typo fails where it is made.
 */
#include "mutate/mutate.h"
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>

static bool is_attribute_edit(tp_mutation_kind kind)
{
    return kind == TP_MUT_SET || kind == TP_MUT_SET_NET || kind == TP_MUT_SET_CPU;
}

/* A topology as text: the XML, its length, and the name errors give it. */
typedef struct topo_text {
    const char *xml;
    size_t len;
    const char *source;
} topo_text;

/* The first n edits applied to in, as text (owned by the caller). */
static tp_status apply_some(char **out, size_t *out_len, topo_text in, const tp_mutation *muts,
                            size_t n, tp_error *err)
{
    *out = NULL;
    *out_len = 0;
    FILE *mem = open_memstream(out, out_len);
    if (!mem)
        return tp_fail_nomem(err);
    tp_status st = tp_mutate_buffer(mem, in.xml, in.len, in.source, muts, n, err);
    if (fclose(mem) != 0 && st == TP_OK)
        st = tp_fail_nomem(err);
    return st;
}

/* Whether the loader (a one-node plan, default environment) takes the text; why not in *why. */
static tp_status loads(bool *ok, tp_error *why, topo_text in, tp_error *err)
{
    tp_config *cfg = NULL;
    const char *const empty[] = {NULL};
    tp_status st = tp_config_new(&cfg, empty, err);
    if (st != TP_OK)
        return st;
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    *why = (tp_error){0};
    tp_status planned = tp_plan_buffer(&plan, in.xml, in.len, in.source, &job, cfg, why);
    *ok = planned == TP_OK;
    tp_plan_free(plan);
    tp_config_free(cfg);
    return planned == TP_ERR_NOMEM || planned == TP_ERR_INTERNAL ? (*err = *why, planned) : TP_OK;
}

/* Fail when edit i is an attribute edit that turns a loadable topology into one that is not. */
static tp_status check_edits(topo_text in, const tp_mutation *muts, size_t n, tp_error *err)
{
    bool before = false;
    tp_error why;
    tp_status st = loads(&before, &why, in, err);
    for (size_t i = 0; st == TP_OK && i < n; i++) {
        char *text = NULL;
        size_t text_len = 0;
        bool after = false;
        st = apply_some(&text, &text_len, in, muts, i + 1, err);
        if (st == TP_OK)
            st = loads(&after, &why, (topo_text){.xml = text, .len = text_len, .source = in.source},
                       err);
        free(text);
        if (st == TP_OK && before && !after && is_attribute_edit(muts[i].kind))
            return tp_fail(err, TP_ERR_CONFIG,
                           muts[i].kind == TP_MUT_SET       ? "--set"
                           : muts[i].kind == TP_MUT_SET_NET ? "--set-net"
                                                            : "--set-cpu",
                           0, 0, "\"%s\": the loader rejects the value: %s", muts[i].spec,
                           why.message);
        before = after;
    }
    return st;
}

tp_status tp_mutate_file_checked(FILE *out, const char *path, const tp_mutation *muts,
                                 size_t n_muts, tp_error *err)
{
    if (!out || !path || (n_muts > 0 && !muts))
        return tp_fail_arg(err, "tp_mutate_file_checked",
                           !out    ? "out is NULL"
                           : !path ? "path is NULL"
                                   : "muts is NULL");
    for (size_t i = 0; i < n_muts; i++)
        if (!muts[i].spec)
            return tp_fail_arg(err, "tp_mutate_file_checked", "a mutation's spec is NULL");
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st == TP_OK)
        st = check_edits((topo_text){.xml = text, .len = len, .source = path}, muts, n_muts, err);
    if (st == TP_OK)
        st = tp_mutate_buffer(out, text, len, path, muts, n_muts, err);
    free(text);
    return st;
}
