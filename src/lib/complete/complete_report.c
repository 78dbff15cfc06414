/* topoplan complete: accessors, the file entry point, the report, the SKU list. */
#include "complete/complete.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

/* The JSON of `complete --format json`: name and version (bump on incompatible change). */

tp_status tp_complete_file(tp_completion **out, const char *path, const tp_complete_options *opts,
                           tp_error *err)
{
    if (!out || !path)
        return tp_fail_arg(err, "tp_complete_file", !out ? "out is NULL" : "path is NULL");
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st == TP_OK)
        st = tp_complete_buffer(out, text, len, path, opts, err);
    free(text);
    return st;
}

const char *tp_completion_xml(const tp_completion *c)
{
    return c ? c->xml : NULL;
}

const char *tp_completion_sku(const tp_completion *c)
{
    return c ? c->sku : NULL;
}

const char *tp_completion_mode(const tp_completion *c)
{
    return c ? c->mode : NULL;
}

size_t tp_completion_count(const tp_completion *c)
{
    return c ? c->n_adds : 0;
}

size_t tp_completion_note_count(const tp_completion *c)
{
    return c ? c->n_notes : 0;
}

const char *tp_completion_note(const tp_completion *c, size_t i)
{
    return c && i < c->n_notes ? c->notes[i] : NULL;
}

const tp_addition *tp_completion_get(const tp_completion *c, size_t i)
{
    if (!c || i >= c->n_adds)
        return NULL;
    tp_completion *m = (tp_completion *)c; /* the view is a cache, not state */
    m->view = (tp_addition){c->adds[i].element, c->adds[i].added, c->adds[i].reason};
    return &m->view;
}

void tp_completion_free(tp_completion *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_adds; i++) {
        free(c->adds[i].element);
        free(c->adds[i].added);
        free(c->adds[i].reason);
    }
    free(c->adds);
    for (size_t i = 0; i < c->n_notes; i++)
        free(c->notes[i]);
    free(c->notes);
    free(c->xml);
    free(c);
}

static void report_json(FILE *out, const tp_completion *c)
{
    tp_report__json_begin(out, "topoplan.complete", tp_nccl_profile__default()->version);
    fputs("  \"sku\": ", out);
    tp_report__json_str(out, c->sku);
    fputs(",\n  \"plugin_mode\": ", out);
    tp_report__json_str(out, c->mode);
    static const char *const add_keys[] = {"element", "added", "reason"};
    fputs(",\n  \"added\": [", out);
    for (size_t i = 0; i < c->n_adds; i++) {
        const char *const values[] = {c->adds[i].element, c->adds[i].added, c->adds[i].reason};
        fputs(i ? ",\n    " : "\n    ", out);
        tp_report__json_str_fields(out, add_keys, values, ARRAY_LEN(add_keys));
    }
    fputs(c->n_adds ? "\n  ],\n  \"notes\": " : "],\n  \"notes\": ", out);
    tp_report__json_str_array(out, (const char *const *)c->notes, c->n_notes);
    fputs("\n}\n", out);
}

size_t tp_completion__first_with_reason(const tp_completion *c, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(c->adds[k].reason, c->adds[i].reason) == 0)
            return k;
    return i;
}

static void report_text(FILE *out, const tp_completion *c)
{
    fprintf(out, "complete: SKU %s%s%s: %zu addition%s\n", c->sku, *c->mode ? ", plugin mode " : "",
            c->mode, c->n_adds, c->n_adds == 1 ? "" : "s");
    for (size_t i = 0; i < c->n_adds; i++) {
        if (tp_completion__first_with_reason(c, i) != i)
            continue;
        fprintf(out, "  why: %s\n", c->adds[i].reason);
        for (size_t k = i; k < c->n_adds; k++)
            if (strcmp(c->adds[k].reason, c->adds[i].reason) == 0)
                fprintf(out, "    %s: %s\n", c->adds[k].element, c->adds[k].added);
    }
    for (size_t i = 0; i < c->n_notes; i++)
        fprintf(out, "  note: %s\n", c->notes[i]);
}

tp_status tp_report_completion(FILE *out, const tp_completion *c, tp_format fmt, tp_error *err)
{
    if (!out || !c)
        return tp_fail_arg(err, "tp_report_completion", !out ? "out is NULL" : "c is NULL");
    if (fmt == TP_FORMAT_JSON)
        report_json(out, c);
    else
        report_text(out, c);
    return tp_report__check_stream(out, err);
}

size_t tp_sku_count(void)
{
    return tp_sku_texts_count;
}

const char *tp_sku_name(size_t i)
{
    return i < tp_sku_texts_count ? tp_sku_texts[i].name : NULL;
}

tp_status tp_sku_title(size_t i, char *buf, size_t size, tp_error *err)
{
    if (!buf || !size)
        return tp_fail_arg(err, "tp_sku_title", "buf is NULL or size 0");
    buf[0] = '\0';
    if (i >= tp_sku_texts_count)
        return tp_fail(err, TP_ERR_ARGUMENT, "tp_sku_title", 0, 0, "i = %zu: no such SKU (%zu)", i,
                       tp_sku_texts_count);
    tp_sku *sku = NULL;
    tp_status st = tp_sku__parse(&sku, tp_sku_texts[i].text, tp_sku_texts[i].name, err);
    if (st == TP_OK) {
        const char *t = tp_sku__get(sku, NULL, "title");
        snprintf(buf, size, "%s", t ? t : "");
    }
    tp_sku__free(sku);
    return st;
}
