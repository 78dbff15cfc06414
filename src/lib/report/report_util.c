/* Helpers shared by the report writers. */
#include "report/report.h"

#include <errno.h>
#include <string.h>

void tp_report__node_label(char *buf, size_t size, const tp_node *node)
{
    snprintf(buf, size, "%s/%llx-%llx", tp_node_type_name(node->type),
             (unsigned long long)TP_ID_SYSTEM_ID(node->id),
             (unsigned long long)TP_ID_LOCAL_ID(node->id));
}

void tp_report__node_short(char *buf, size_t size, const tp_system *sys, const tp_node *node)
{
    const tp_node_set *set = &sys->nodes[node->type];
    long idx = node - set->nodes;
    if (node->type == TP_NODE_GPU)
        snprintf(buf, size, "GPU/%d", node->gpu.rank);
    else if (node->type == TP_NODE_NET)
        snprintf(buf, size, "NET/%d", node->net.dev);
    else
        snprintf(buf, size, "%s/%ld", tp_node_type_name(node->type), idx);
}

/* Length of the well-formed UTF-8 sequence at s (no overlong form, surrogate or code point
 * past U+10FFFF), 0 when the bytes there are not UTF-8. */
static int utf8_length(const unsigned char *s)
{
    static const unsigned lowest[5] = {0, 0, 0x80, 0x800, 0x10000};
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xe0) == 0xc0 ? 2
            : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4
                                    : 0;
    if (n <= 1)
        return n;
    unsigned cp = s[0] & (0x7fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* the NUL ends a cut sequence here too */
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    return cp < lowest[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

void tp_json_write_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    fputc('"', out);
    while (*p) {
        int n = utf8_length(p);
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else if (n == 0)
            fputs("\\ufffd", out); /* a byte that is not UTF-8 (a file name's, say) */
        else
            fwrite(p, 1, (size_t)n, out);
        p += n ? n : 1;
    }
    fputc('"', out);
}

void tp_report__json_str(FILE *out, const char *s)
{
    tp_json_write_string(out, s);
}

/*
 * Every JSON document names its schema (schemas/<name>.schema.json) and the
 * schema's version, bumped on any incompatible change (a removed or renamed
 * key, a changed meaning); added keys keep the version. One table, here.
 */
static const struct {
    const char *name;
    int version;
} json_schemas[] = {
    {"topoplan.plan", 1},        {"topoplan.search", 1},   {"topoplan.paths", 1},
    {"topoplan.nics", 1},        {"topoplan.diff", 1},     {"topoplan.check", 1},
    {"topoplan.graph-check", 1}, {"topoplan.validate", 1}, {"topoplan.env", 1},
    {"topoplan.versions", 1},    {"topoplan.builtins", 1}, {"topoplan.hca", 1},
    {"topoplan.matrix", 1},      {"topoplan.complete", 1}, {"topoplan.tune", 1},
    {"topoplan.verify", 1},
};

int tp_report__schema_version(const char *schema)
{
    for (size_t i = 0; i < sizeof(json_schemas) / sizeof(json_schemas[0]); i++)
        if (strcmp(json_schemas[i].name, schema) == 0)
            return json_schemas[i].version;
    return 0;
}

void tp_report__json_begin(FILE *out, const char *schema, const char *nccl_version)
{
    fprintf(out, "{\n  \"schema\": \"%s\", \"schema_version\": %d,\n", schema,
            tp_report__schema_version(schema));
    fprintf(out, "  \"nccl_version\": \"%s\",\n", nccl_version);
}

tp_status tp_report__check_stream(FILE *out, tp_error *err)
{
    if (ferror(out))
        return tp_fail(err, TP_ERR_IO, NULL, 0, 0, "write error: %s", strerror(errno));
    return TP_OK;
}

void tp_report__json_why(FILE *out, const tp_graph_why *w)
{
    fputs("[", out);
    for (int i = 0; i < w->n_lines; i++) {
        fprintf(out, "%s{\"step\": ", i ? ", " : "");
        tp_report__json_str(out, w->lines[i].step);
        fputs(", \"text\": ", out);
        tp_report__json_str(out, w->lines[i].text);
        fputc('}', out);
    }
    fputs("]", out);
}
