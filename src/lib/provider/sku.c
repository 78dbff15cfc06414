/* The SKU catalogue: parsing the embedded "key = value" files and lookups. */
#include "provider/sku.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void tp_sku__free(tp_sku *sku)
{
    if (!sku)
        return;
    free(sku->owned_entries);
    free(sku->text);
    free(sku);
}

/* s[0..n) without its leading and trailing blanks, ended in place (s[n] is writable). */
static char *trim_in_place(char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    s[n] = '\0';
    return s;
}

/* One "key = value" line (its own copy, line[len] writable): its entry points into it. */
static tp_status add_entry(tp_sku *sku, char *line, size_t len, char *eq, tp_error *err)
{
    tp_status st = tp_grow((void **)&sku->owned_entries, &sku->cap, sku->n_entries + 1,
                           sizeof(*sku->owned_entries), err);
    if (st != TP_OK)
        return st;
    sku->entries = sku->owned_entries;
    tp_sku_entry *e = &sku->owned_entries[sku->n_entries++];
    e->value = trim_in_place(eq + 1, len - (size_t)(eq - line) - 1);
    e->key = trim_in_place(line, (size_t)(eq - line));
    return TP_OK;
}

tp_status tp_sku__parse(tp_sku **out, const char *text, const char *source, tp_error *err)
{
    *out = NULL;
    tp_sku *sku = calloc(1, sizeof(*sku));
    if (!sku || !(sku->text = strdup(text))) {
        free(sku);
        return tp_fail_nomem(err);
    }
    unsigned line_no = 0;
    for (char *p = sku->text; *p;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        line_no++;
        const char *q = p;
        while (q < p + len && isspace((unsigned char)*q))
            q++;
        if (q < p + len && *q != '#') {
            char *eq = memchr(p, '=', len);
            tp_status st =
                eq ? add_entry(sku, p, len, eq, err)
                   : tp_fail(err, TP_ERR_CONFIG, source, line_no, 1, "expected \"key = value\"");
            if (st != TP_OK) {
                tp_sku__free(sku);
                return st;
            }
        }
        p += len + (nl != NULL);
    }
    const char *name = tp_sku__get(sku, NULL, "name");
    if (!name || strlen(name) >= sizeof(sku->name)) {
        tp_sku__free(sku);
        return tp_fail(err, TP_ERR_CONFIG, source, 0, 0, "SKU file without a valid name");
    }
    snprintf(sku->name, sizeof(sku->name), "%s", name);
    *out = sku;
    return TP_OK;
}

tp_status tp_sku__embedded(tp_sku **out, size_t i, tp_error *err)
{
    *out = NULL;
    const tp_sku_text *t = &tp_sku_texts[i];
    tp_sku *sku = calloc(1, sizeof(*sku));
    if (!sku)
        return tp_fail_nomem(err);
    sku->entries = t->entries;
    sku->n_entries = t->n_entries;
    const char *name = tp_sku__get(sku, NULL, "name");
    if (!name || strlen(name) >= sizeof(sku->name)) {
        tp_sku__free(sku);
        return tp_fail(err, TP_ERR_CONFIG, t->name, 0, 0, "SKU file without a valid name");
    }
    snprintf(sku->name, sizeof(sku->name), "%s", name);
    *out = sku;
    return TP_OK;
}

tp_status tp_sku__load(tp_sku **out, const char *name, tp_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < tp_sku_texts_count; i++)
        if (strcasecmp(tp_sku_texts[i].name, name) == 0)
            return tp_sku__embedded(out, i, err);
    char known[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < tp_sku_texts_count && used < sizeof(known); i++)
        used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
                                 tp_sku_texts[i].name);
    return tp_fail(err, TP_ERR_CONFIG, "--sku", 0, 0, "unknown SKU \"%s\" (known: %s)", name,
                   known);
}

const char *tp_sku__get(const tp_sku *sku, const char *mode, const char *key)
{
    if (mode) {
        char scoped[160];
        snprintf(scoped, sizeof(scoped), "mode.%s.%s", mode, key);
        const char *v = tp_sku__get(sku, NULL, scoped);
        if (v)
            return v;
    }
    for (size_t i = 0; i < sku->n_entries; i++)
        if (strcmp(sku->entries[i].key, key) == 0)
            return sku->entries[i].value;
    return NULL;
}

long long tp_sku__get_int(const tp_sku *sku, const char *mode, const char *key, long long dflt)
{
    const char *v = tp_sku__get(sku, mode, key);
    if (!v || !*v)
        return dflt;
    char *end = NULL;
    long long n = strtoll(v, &end, 0);
    return *end ? dflt : n;
}

/* Bounds of word i of a space-separated list: start pointer and length, or NULL. */
static const char *nth_word(const char *list, size_t i, size_t *len)
{
    const char *p = list;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return NULL;
        size_t n = strcspn(p, " \t");
        if (i-- == 0) {
            *len = n;
            return p;
        }
        p += n;
    }
}

/* a and b (n bytes each) equal but for case; compared from the end, where bus ids differ. */
static bool same_word(const char *a, const char *b, size_t n)
{
    while (n-- > 0)
        if (a[n] != b[n] && tolower((unsigned char)a[n]) != tolower((unsigned char)b[n]))
            return false;
    return true;
}

int tp_sku__word_index(const char *list, const char *word)
{
    const char *p = list;
    size_t wlen = strlen(word);
    /* One pass over the list: a word ends at a space, a tab or the end. */
    for (int i = 0; p; i++) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *w = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if ((size_t)(p - w) == wlen && same_word(w, word, wlen))
            return i;
    }
    return -1;
}

int tp_sku__list_index(const tp_sku *sku, const char *key, const char *word)
{
    return tp_sku__word_index(tp_sku__get(sku, NULL, key), word);
}

bool tp_sku__list_has(const tp_sku *sku, const char *key, const char *word)
{
    return tp_sku__list_index(sku, key, word) >= 0;
}

size_t tp_sku__list_len(const tp_sku *sku, const char *key)
{
    const char *list = tp_sku__get(sku, NULL, key);
    size_t n = 0, len = 0;
    for (const char *w = list ? nth_word(list, 0, &len) : NULL; w; w = nth_word(w + len, 0, &len))
        n++;
    return n;
}

const char *tp_sku__list_word(const tp_sku *sku, const char *key, size_t i, char *buf, size_t size)
{
    const char *list = tp_sku__get(sku, NULL, key);
    size_t len = 0;
    const char *w = list ? nth_word(list, i, &len) : NULL;
    snprintf(buf, size, "%.*s", w ? (int)len : 0, w ? w : "");
    return buf;
}
