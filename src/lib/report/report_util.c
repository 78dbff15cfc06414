/* Helpers shared by the report writers. */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void tp_report__bus_id(char *buf, size_t size, int64_t id)
{
    tp_system__bus_id(buf, size, id);
}

void tp_report__device_name(char *buf, size_t size, const tp_xml *xml, const tp_node *node)
{
    char id[64];
    if (node->type == TP_NODE_NET) /* NET/3: the device index NCCL's NET lines print */
        snprintf(id, sizeof(id), "NET/%d", node->net.dev);
    else
        tp_report__node_label(id, sizeof(id), node);
    tp_system__device_name(buf, size, xml, node, id);
}

/* {"name", "bus_id", "nccl_id"} of a finding's device, or null. */
static void json_device(FILE *out, const tp_diff_device *dev)
{
    if (!dev->name[0]) {
        fputs("null", out);
        return;
    }
    fputs("{\"name\": ", out);
    tp_report__json_str(out, dev->name);
    fputs(", \"bus_id\": ", out);
    if (dev->bus_id[0])
        tp_report__json_str(out, dev->bus_id);
    else
        fputs("null", out);
    fputs(", \"nccl_id\": ", out);
    tp_report__json_str(out, dev->nccl_id);
    fputc('}', out);
}

/* [{"quantity", "unit", "before", "after"}]: what a finding compares (null for a side without). */
static void json_values(FILE *out, const tp_difference *d)
{
    fputc('[', out);
    for (int i = 0; i < d->n_values; i++) {
        const tp_diff_value *v = &d->values[i];
        fprintf(out, "%s{\"quantity\": \"%s\", \"unit\": \"%s\", \"before\": ", i ? ", " : "",
                v->quantity, v->unit);
        if (v->has_before)
            fprintf(out, "%.6g", v->before);
        else
            fputs("null", out);
        fputs(", \"after\": ", out);
        if (v->has_after)
            fprintf(out, "%.6g", v->after);
        else
            fputs("null", out);
        fputc('}', out);
    }
    fputc(']', out);
}

void tp_report__json_finding_fields(FILE *out, const tp_difference *d)
{
    fputs(", \"device\": ", out);
    json_device(out, &d->device);
    fputs(", \"peer\": ", out);
    json_device(out, &d->peer);
    fputs(", \"values\": ", out);
    json_values(out, d);
}

void tp_report__device_fields(tp_diff_device *out, const tp_xml *xml, const tp_node *node)
{
    char dev[16];
    const char *name = NULL;
    memset(out, 0, sizeof(*out));
    tp_report__node_label(out->nccl_id, sizeof(out->nccl_id), node);
    if (node->type == TP_NODE_GPU || node->type == TP_NODE_NIC || node->type == TP_NODE_PCI)
        tp_report__bus_id(out->bus_id, sizeof(out->bus_id), node->id);
    switch (node->type) {
    case TP_NODE_GPU:
        snprintf(out->name, sizeof(out->name), "GPU %d", node->gpu.dev);
        return;
    case TP_NODE_NET:
        snprintf(dev, sizeof(dev), "%d", node->net.dev);
        const tp_xml_elem *net = xml ? tp_system__xml_find(xml->root, "net", "dev", dev) : NULL;
        name = net ? tp_xml__attr(net, "name") : NULL;
        snprintf(out->name, sizeof(out->name), name ? "%s" : "NET/%s", name ? name : dev);
        return;
    case TP_NODE_NIC:
        name = tp_system__nic_net_name(xml, node);
        snprintf(out->name, sizeof(out->name), "NIC%s%s", name ? " " : "", name ? name : "");
        return;
    case TP_NODE_PCI:
        snprintf(out->name, sizeof(out->name), "PCIe switch");
        return;
    case TP_NODE_NVS:
        snprintf(out->name, sizeof(out->name), "NVSwitch");
        return;
    case TP_NODE_CPU:
        snprintf(out->name, sizeof(out->name), "NUMA node %lld",
                 (long long)TP_ID_LOCAL_ID(node->id));
        return;
    default:
        snprintf(out->name, sizeof(out->name), "%s", out->nccl_id);
    }
}

/* "Gen5" of a link_speed value ("32.0 GT/s PCIe"), or NULL. */
static const char *pcie_gen(const char *speed)
{
    static const struct {
        double gts;
        const char *gen;
    } gens[] = {{2.5, "Gen1"}, {5, "Gen2"}, {8, "Gen3"}, {16, "Gen4"}, {32, "Gen5"}, {64, "Gen6"}};
    double v = speed ? atof(speed) : 0;
    for (size_t i = 0; i < ARRAY_LEN(gens); i++)
        if (v > gens[i].gts - 0.01 && v < gens[i].gts + 0.01)
            return gens[i].gen;
    return NULL;
}

bool tp_report__pcie_numbers(const tp_xml *xml, const tp_node *node, int *width, double *gts)
{
    const tp_xml_elem *e =
        node->type == TP_NODE_NVS || node->type == TP_NODE_CPU || node->type == TP_NODE_NET
            ? NULL
            : tp_system__pci_elem(xml, node);
    const char *w = e ? tp_xml__attr(e, "link_width") : NULL;
    const char *s = e ? tp_xml__attr(e, "link_speed") : NULL;
    *width = w ? atoi(w) : 0;
    *gts = s ? atof(s) : 0;
    return w && s;
}

void tp_report__pcie_link(char *buf, size_t size, const tp_xml *xml, const tp_node *node)
{
    buf[0] = '\0';
    const tp_xml_elem *e =
        node->type == TP_NODE_NVS || node->type == TP_NODE_CPU || node->type == TP_NODE_NET
            ? NULL
            : tp_system__pci_elem(xml, node);
    const char *width = e ? tp_xml__attr(e, "link_width") : NULL;
    const char *gen = e ? pcie_gen(tp_xml__attr(e, "link_speed")) : NULL;
    if (width || gen)
        snprintf(buf, size, "PCIe%s%s%s%s", gen ? " " : "", gen ? gen : "", width ? " x" : "",
                 width ? width : "");
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

void tp_report__json_opt_str(FILE *out, const char *s)
{
    if (s)
        tp_json_write_string(out, s);
    else
        fputs("null", out);
}

void tp_report__json_str_array(FILE *out, const char *const *items, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        tp_json_write_string(out, items[i]);
    }
    fputc(']', out);
}

void tp_report__json_str_fields(FILE *out, const char *const *keys, const char *const *values,
                                size_t n)
{
    fputc('{', out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", keys[i]);
        tp_json_write_string(out, values[i]);
    }
    fputc('}', out);
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
    {"topoplan.plan", 2},        {"topoplan.search", 1},   {"topoplan.paths", 1},
    {"topoplan.nics", 2},        {"topoplan.diff", 1},     {"topoplan.check", 1},
    {"topoplan.graph-check", 2}, {"topoplan.validate", 1}, {"topoplan.env", 1},
    {"topoplan.versions", 1},    {"topoplan.builtins", 1}, {"topoplan.hca", 1},
    {"topoplan.matrix", 1},      {"topoplan.complete", 1}, {"topoplan.tune", 2},
    {"topoplan.verify", 2},
};

int tp_report__schema_version(const char *schema)
{
    for (size_t i = 0; i < sizeof(json_schemas) / sizeof(json_schemas[0]); i++)
        if (strcmp(json_schemas[i].name, schema) == 0)
            return json_schemas[i].version;
    return 0;
}

void tp_report__job_line(FILE *out, const tp_plan *p)
{
    const tp_channels *ch = &p->channels;
    fprintf(out,
            "Job: %d node%s x %d GPUs = %d ranks; reported rank %d (NCCL node %d, local "
            "rank %d of %d) [NCCL %s]\n",
            p->job.n_nodes, p->job.n_nodes == 1 ? "" : "s", p->n_gpus_per_node, ch->n_ranks,
            p->job.rank, ch->node, ch->local_rank, ch->local_ranks, tp_config_nccl(p->cfg));
}

void tp_report__json_job(FILE *out, const tp_plan *p)
{
    fprintf(out, "  \"nodes\": %d, \"gpus_per_node\": %d, \"n_ranks\": %d, \"rank\": %d,\n",
            p->job.n_nodes, p->n_gpus_per_node, p->channels.n_ranks, p->job.rank);
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
    static const char *const keys[] = {"step", "text"};
    fputs("[", out);
    for (int i = 0; i < w->n_lines; i++) {
        const char *const values[] = {w->lines[i].step, w->lines[i].text};
        fputs(i ? ", " : "", out);
        tp_report__json_str_fields(out, keys, values, ARRAY_LEN(keys));
    }
    fputs("]", out);
}
