/*
 * The fleet check's sharing key (tp_compare_key): node files of one model
 * differ from machine to machine mostly in their NIC GUIDs, and a check of
 * each against the baseline would plan the same system again and again.
 *
 * Why equal keys give the same plan and the same comparison: the key is the
 * element tree the plan reads (NCCL's replayed reader, the same checks), every
 * tag, attribute name and value as the reader keeps it, length-prefixed so
 * that no two trees share a key. The only values replaced are <net> guids,
 * and only by their class under every reading topoplan makes of them:
 *  - the asic (NCCL's sscanf "0x%lx", 0 without the prefix), tested for
 *    equality only: between NETs of one node (search.cc, ports) and, in the
 *    comparison, with the baseline's NETs (rule 3 of compare.h). An asic the
 *    baseline has is kept as it is; the others are numbered in order of first
 *    appearance, so equal keys mean the same equalities with each other and
 *    with the baseline;
 *  - the port GUID of NCCL_IB_MERGE_NICS (strtoull base 16), numbered alike.
 * A node with a <net> without guid (its asic is then its dev) keeps its guids
 * as written. The GUID values themselves only appear in messages.
 */
#include "compare/compare.h"
#include "netdev/netdev.h"

#include <stdlib.h>
#include <string.h>

typedef struct guid_classes {
    uint64_t *values;
    size_t n, cap;
} guid_classes;

typedef struct key_walk {
    tp_buf out;
    const tp_plan *baseline;
    bool literal;              /* a <net> without guid: guids kept as written */
    guid_classes asics, ports; /* in order of first appearance */
    bool failed;
} key_walk;

/* Index of v among the classes (added when new); -1 when out of memory. */
static long class_of(guid_classes *c, uint64_t v)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->values[i] == v)
            return (long)i;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        uint64_t *grown = realloc(c->values, cap * sizeof(*grown));
        if (!grown)
            return -1;
        c->values = grown;
        c->cap = cap;
    }
    c->values[c->n] = v;
    return (long)c->n++;
}

static bool system_has_asic(const tp_system *sys, uint64_t asic)
{
    const tp_node_set *nets = sys ? &sys->nodes[TP_NODE_NET] : NULL;
    for (int i = 0; nets && i < nets->count; i++)
        if (nets->nodes[i].net.asic == asic)
            return true;
    return false;
}

static bool baseline_has_asic(const tp_plan *p, uint64_t asic)
{
    if (system_has_asic(p->host_sys, asic))
        return true;
    for (int k = 0; k < p->n_kinds; k++)
        if (system_has_asic(p->kinds[k].host_sys, asic))
            return true;
    return false;
}

static void put_counted(tp_buf *b, const char *s)
{
    tp_buf_put_int(b, (long long)strlen(s));
    tp_buf_put(b, ":");
    tp_buf_put(b, s);
}

static void put_guid(key_walk *w, const char *guid)
{
    uint64_t asic = tp_system__guid_asic(guid);
    long port = class_of(&w->ports, tp_netdev__port_guid(guid));
    if (baseline_has_asic(w->baseline, asic)) {
        tp_buf_put(&w->out, "g=");
        tp_buf_put_hex(&w->out, asic, false);
    } else {
        long a = class_of(&w->asics, asic);
        w->failed |= a < 0;
        tp_buf_put(&w->out, "g#");
        tp_buf_put_int(&w->out, a);
    }
    w->failed |= port < 0;
    tp_buf_put(&w->out, "/");
    tp_buf_put_int(&w->out, port);
    tp_buf_put(&w->out, ";");
}

static bool net_without_guid(const tp_xml_elem *e)
{
    if (tp_xml__is_tag(e, "net") && !tp_xml__attr(e, "guid"))
        return true;
    for (size_t i = 0; i < e->n_children; i++)
        if (net_without_guid(e->children[i]))
            return true;
    return false;
}

static void put_elem(key_walk *w, const tp_xml_elem *e)
{
    bool net = tp_xml__is_tag(e, "net");
    tp_buf_put(&w->out, "<");
    put_counted(&w->out, e->tag);
    for (size_t i = 0; i < e->n_attrs; i++) {
        const tp_xml_attr *a = &e->attrs[i];
        tp_buf_put(&w->out, " ");
        put_counted(&w->out, a->name);
        if (net && !w->literal && strcmp(a->name, "guid") == 0) {
            put_guid(w, a->value);
        } else {
            tp_buf_put(&w->out, "=");
            put_counted(&w->out, a->value);
        }
    }
    for (size_t i = 0; i < e->n_children; i++)
        put_elem(w, e->children[i]);
    tp_buf_put(&w->out, ">");
}

tp_status tp_compare_key(char **key, size_t *key_len, const tp_plan *baseline, const char *xml,
                         size_t len, tp_error *err)
{
    if (!key || !key_len || !baseline || !xml)
        return tp_fail_arg(err, "tp_compare_key",
                           !key || !key_len ? "key is NULL"
                           : !xml           ? "xml is NULL"
                                            : "baseline is NULL");
    *key = NULL;
    *key_len = 0;
    tp_xml *doc = NULL;
    tp_status st = tp_plan__read_topology(&doc, xml, len, err);
    if (st != TP_OK)
        return st;
    key_walk w = {.baseline = baseline, .literal = net_without_guid(doc->root)};
    tp_buf_put(&w.out, doc->nccl_read ? "N" : "E"); /* which reader built the tree */
    put_elem(&w, doc->root);
    tp_xml__free(doc);
    free(w.asics.values);
    free(w.ports.values);
    if (w.failed || w.out.failed) {
        tp_buf_free(&w.out);
        return tp_fail_nomem(err);
    }
    *key_len = w.out.len;
    *key = w.out.data;
    return TP_OK;
}
