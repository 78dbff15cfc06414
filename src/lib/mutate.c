/* What-if edits of a topology XML: attributes, removals, NVLink counts. */
#include "mutate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Attributes that belong to the <pci> element; others go to its <gpu>. */
static const char *const pci_attrs[] = {"busid", "class", "vendor", "device", "subsystem_vendor",
                                        "subsystem_device", "link_speed", "link_width"};

static tp_status spec_error(tp_error *err, const tp_mutation *m, const char *what)
{
    static const char *const kind_names[] = {
        [TP_MUT_SET] = "--set", [TP_MUT_SET_NET] = "--set-net", [TP_MUT_SET_CPU] = "--set-cpu",
        [TP_MUT_REMOVE] = "--remove", [TP_MUT_REMOVE_NET] = "--remove-net",
        [TP_MUT_NVLINK] = "--nvlink",
    };
    const char *name = (size_t)m->kind < ARRAY_LEN(kind_names) ? kind_names[m->kind] : "mutation";
    return tp_fail(err, TP_ERR_CONFIG, name, 0, 0, "\"%s\": %s", m->spec, what);
}

/* "1a:00.0" or "0000:1A:00.0" -> "0000:1a:00.0"; false when malformed. */
static bool normalize_busid(const char *text, size_t len, char out[16])
{
    char tmp[32];
    if (len == 7) {
        snprintf(tmp, sizeof(tmp), "0000:%.*s", (int)len, text);
    } else if (len == 12) {
        snprintf(tmp, sizeof(tmp), "%.*s", (int)len, text);
    } else {
        return false;
    }
    for (int i = 0; i < 12; i++) {
        bool sep = i == 4 || i == 7 || i == 10;
        char c = (char)tolower((unsigned char)tmp[i]);
        if (sep ? c != (i == 10 ? '.' : ':') : !isxdigit((unsigned char)c))
            return false;
        out[i] = c;
    }
    out[12] = '\0';
    return true;
}

static tp_xml_elem *find_by_attr(tp_xml_elem *e, const char *tag, const char *attr,
                                 const char *value)
{
    const char *v = strcmp(e->tag, tag) == 0 ? tp_xml__attr(e, attr) : NULL;
    if (v && strcasecmp(v, value) == 0)
        return e;
    for (size_t i = 0; i < e->n_children; i++) {
        tp_xml_elem *found = find_by_attr(e->children[i], tag, attr, value);
        if (found)
            return found;
    }
    return NULL;
}

/* Split "TARGET:ATTR=VALUE" at the last ':' before '='. */
static bool split_assignment(const char *spec, size_t *target_len, const char **attr,
                             size_t *attr_len, const char **value)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return false;
    const char *colon = eq;
    while (colon > spec && *colon != ':')
        colon--;
    if (colon == spec || colon + 1 == eq)
        return false;
    *target_len = (size_t)(colon - spec);
    *attr = colon + 1;
    *attr_len = (size_t)(eq - *attr);
    *value = eq + 1;
    return true;
}

/*
 * An attribute the edit may write: a name NCCL's XML reader takes (a letter
 * or '_', then letters, digits, '_', '-', '.') and a value without control
 * characters, so the written file stays well-formed XML.
 */
static tp_status check_attr(tp_error *err, const tp_mutation *m, const char *name,
                            const char *value)
{
    bool ok = isalpha((unsigned char)name[0]) || name[0] == '_';
    for (const char *c = name; ok && *c; c++)
        ok = isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.';
    if (!ok)
        return spec_error(err, m, "bad attribute name (letters, digits, '_', '-', '.')");
    for (const char *c = value; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return spec_error(err, m, "control character in the value");
    return TP_OK;
}

static bool is_pci_attr(const char *attr)
{
    for (size_t i = 0; i < ARRAY_LEN(pci_attrs); i++)
        if (strcmp(attr, pci_attrs[i]) == 0)
            return true;
    return false;
}

static tp_status set_on_pci(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    size_t tlen, alen;
    const char *attr, *value;
    char busid[16], name[64];
    if (!split_assignment(m->spec, &tlen, &attr, &alen, &value) || alen >= sizeof(name))
        return spec_error(err, m, "expected BUSID:ATTR=VALUE");
    if (!normalize_busid(m->spec, tlen, busid))
        return spec_error(err, m, "bad bus id (expected e.g. 0000:1a:00.0 or 1a:00.0)");
    snprintf(name, sizeof(name), "%.*s", (int)alen, attr);
    tp_xml_elem *pci = find_by_attr(doc->root, "pci", "busid", busid);
    if (!pci)
        return spec_error(err, m, "no <pci> with this bus id");
    tp_xml_elem *target = is_pci_attr(name) ? pci : tp_xml__child(pci, "gpu");
    if (!target)
        return spec_error(err, m, "not a PCI attribute, and the device has no <gpu>");
    tp_status st = check_attr(err, m, name, value);
    return st != TP_OK ? st : tp_xml__set_attr(target, name, value, err);
}

/* "NAME[:PORT]" -> the matching <net> (port compared when given). */
static tp_xml_elem *find_net(tp_xml_elem *e, const char *name, size_t len, const char *port)
{
    if (strcmp(e->tag, "net") == 0) {
        const char *n = tp_xml__attr(e, "name"), *p = tp_xml__attr(e, "port");
        if (n && strlen(n) == len && strncmp(n, name, len) == 0 &&
            (!port || (p && strcmp(p, port) == 0)))
            return e;
    }
    for (size_t i = 0; i < e->n_children; i++) {
        tp_xml_elem *found = find_net(e->children[i], name, len, port);
        if (found)
            return found;
    }
    return NULL;
}

/* The <net> a "NAME[:PORT]" text of length len names. */
static tp_xml_elem *net_of_spec(tp_xml *doc, const char *text, size_t len)
{
    char port[16] = "";
    const char *colon = memchr(text, ':', len);
    size_t name_len = colon ? (size_t)(colon - text) : len;
    if (colon)
        snprintf(port, sizeof(port), "%.*s", (int)(len - name_len - 1), colon + 1);
    return find_net(doc->root, text, name_len, colon ? port : NULL);
}

static tp_status set_on_net(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    const char *eq = strchr(m->spec, '=');
    const char *colon = eq;
    while (colon && colon > m->spec && *colon != ':')
        colon--;
    if (!eq || !colon || colon == m->spec || colon + 1 == eq)
        return spec_error(err, m, "expected NAME[:PORT]:ATTR=VALUE");
    tp_xml_elem *net = net_of_spec(doc, m->spec, (size_t)(colon - m->spec));
    if (!net)
        return spec_error(err, m, "no <net> with this name and port");
    char name[64];
    if ((size_t)(eq - colon - 1) >= sizeof(name))
        return spec_error(err, m, "attribute name longer than 63 characters");
    snprintf(name, sizeof(name), "%.*s", (int)(eq - colon - 1), colon + 1);
    tp_status st = check_attr(err, m, name, eq + 1);
    return st != TP_OK ? st : tp_xml__set_attr(net, name, eq + 1, err);
}

static tp_status set_on_cpu(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    size_t tlen, alen;
    const char *attr, *value;
    char numa[32], name[64];
    if (!split_assignment(m->spec, &tlen, &attr, &alen, &value) || tlen >= sizeof(numa) ||
        alen >= sizeof(name))
        return spec_error(err, m, "expected NUMAID:ATTR=VALUE");
    snprintf(numa, sizeof(numa), "%.*s", (int)tlen, m->spec);
    snprintf(name, sizeof(name), "%.*s", (int)alen, attr);
    tp_xml_elem *cpu = find_by_attr(doc->root, "cpu", "numaid", numa);
    if (!cpu)
        return spec_error(err, m, "no <cpu> with this numaid");
    tp_status st = check_attr(err, m, name, value);
    return st != TP_OK ? st : tp_xml__set_attr(cpu, name, value, err);
}

/* Remove every <nvlink> whose target is `busid`. */
static void drop_nvlinks_to(tp_xml_elem *e, const char *busid)
{
    for (size_t i = e->n_children; i-- > 0;) {
        tp_xml_elem *c = e->children[i];
        const char *t = strcmp(c->tag, "nvlink") == 0 ? tp_xml__attr(c, "target") : NULL;
        if (t && strcasecmp(t, busid) == 0)
            tp_xml__remove(c);
        else
            drop_nvlinks_to(c, busid);
    }
}

/* Drop the NVLinks that point into a subtree about to disappear. */
static void drop_links_into(tp_xml *doc, const tp_xml_elem *e)
{
    const char *b = strcmp(e->tag, "pci") == 0 ? tp_xml__attr(e, "busid") : NULL;
    if (b)
        drop_nvlinks_to(doc->root, b);
    for (size_t i = 0; i < e->n_children; i++)
        drop_links_into(doc, e->children[i]);
}

static tp_status remove_pci(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    char busid[16];
    if (!normalize_busid(m->spec, strlen(m->spec), busid))
        return spec_error(err, m, "bad bus id (expected e.g. 0000:1a:00.0 or 1a:00.0)");
    tp_xml_elem *pci = find_by_attr(doc->root, "pci", "busid", busid);
    if (!pci)
        return spec_error(err, m, "no <pci> with this bus id");
    drop_links_into(doc, pci); /* NVLinks to any GPU of the subtree would dangle */
    tp_xml__remove(pci);
    return TP_OK;
}

static tp_status remove_net(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    tp_xml_elem *net = net_of_spec(doc, m->spec, strlen(m->spec));
    if (!net)
        return spec_error(err, m, "no <net> with this name and port");
    tp_xml_elem *nic = net->parent;
    tp_xml__remove(net);
    if (nic && strcmp(nic->tag, "nic") == 0 && nic->n_children == 0)
        tp_xml__remove(nic);
    return TP_OK;
}

/* Set the <nvlink> from the GPU of `from` to `to` (count 0 removes it). */
static tp_status set_one_nvlink(tp_xml *doc, const tp_mutation *m, const char *from,
                                const char *to, const char *count, tp_error *err)
{
    tp_xml_elem *pci = find_by_attr(doc->root, "pci", "busid", from);
    tp_xml_elem *gpu = pci ? tp_xml__child(pci, "gpu") : NULL;
    tp_xml_elem *peer = find_by_attr(doc->root, "pci", "busid", to);
    if (!gpu || !peer)
        return spec_error(err, m, "both bus ids must exist, the first one a GPU");
    tp_xml_elem *link = NULL;
    for (size_t i = 0; i < gpu->n_children && !link; i++) {
        const char *t = tp_xml__attr(gpu->children[i], "target");
        if (strcmp(gpu->children[i]->tag, "nvlink") == 0 && t && strcasecmp(t, to) == 0)
            link = gpu->children[i];
    }
    if (strcmp(count, "0") == 0) {
        if (link)
            tp_xml__remove(link);
        return TP_OK;
    }
    tp_status st = TP_OK;
    if (!link) {
        const char *cls = tp_xml__attr(peer, "class");
        if ((st = tp_xml__add_child(&link, gpu, "nvlink", err)) != TP_OK ||
            (st = tp_xml__set_attr(link, "target", to, err)) != TP_OK ||
            (st = tp_xml__set_attr(link, "count", count, err)) != TP_OK)
            return st;
        return tp_xml__set_attr(link, "tclass", cls ? cls : "0x030200", err);
    }
    return tp_xml__set_attr(link, "count", count, err);
}

static tp_status set_nvlinks(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    const char *comma = strchr(m->spec, ','), *eq = strchr(m->spec, '=');
    char a[16], b[16];
    if (!comma || !eq || eq < comma || !*(eq + 1) ||
        !normalize_busid(m->spec, (size_t)(comma - m->spec), a) ||
        !normalize_busid(comma + 1, (size_t)(eq - comma - 1), b))
        return spec_error(err, m, "expected BUSID1,BUSID2=COUNT");
    char *end = NULL;
    long n = strtol(eq + 1, &end, 10);
    if (*end || n < 0 || n > 64)
        return spec_error(err, m, "COUNT must be an integer from 0 to 64");
    char count[8];
    snprintf(count, sizeof(count), "%ld", n);
    tp_status st = set_one_nvlink(doc, m, a, b, count, err);
    tp_xml_elem *peer = st == TP_OK ? find_by_attr(doc->root, "pci", "busid", b) : NULL;
    if (peer && tp_xml__child(peer, "gpu"))
        st = set_one_nvlink(doc, m, b, a, count, err);
    return st;
}

tp_status tp_mutate__apply(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    switch (m->kind) {
    case TP_MUT_SET:
        return set_on_pci(doc, m, err);
    case TP_MUT_SET_NET:
        return set_on_net(doc, m, err);
    case TP_MUT_SET_CPU:
        return set_on_cpu(doc, m, err);
    case TP_MUT_REMOVE:
        return remove_pci(doc, m, err);
    case TP_MUT_REMOVE_NET:
        return remove_net(doc, m, err);
    case TP_MUT_NVLINK:
        return set_nvlinks(doc, m, err);
    }
    return spec_error(err, m, "unknown mutation");
}

tp_status tp_mutate_buffer(FILE *out, const char *xml, size_t len, const char *source,
                           const tp_mutation *muts, size_t n_muts, tp_error *err)
{
    if (!out || !xml || (n_muts > 0 && !muts))
        return tp_fail_arg(err, "tp_mutate_buffer",
                           !out ? "out is NULL" : !xml ? "xml is NULL" : "muts is NULL");
    for (size_t i = 0; i < n_muts; i++)
        if (!muts[i].spec)
            return tp_fail_arg(err, "tp_mutate_buffer", "a mutation's spec is NULL");
    tp_xml *doc = NULL;
    tp_status st = tp_xml__parse(&doc, xml, len, source, err);
    for (size_t i = 0; st == TP_OK && i < n_muts; i++)
        st = tp_mutate__apply(doc, &muts[i], err);
    if (st == TP_OK)
        st = tp_xml__write(out, doc->root, err);
    tp_xml__free(doc);
    return st;
}

tp_status tp_mutate_file(FILE *out, const char *path, const tp_mutation *muts, size_t n_muts,
                         tp_error *err)
{
    if (!path)
        return tp_fail_arg(err, "tp_mutate_file", "path is NULL");
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st == TP_OK)
        st = tp_mutate_buffer(out, text, len, path, muts, n_muts, err);
    free(text);
    return st;
}
