/* What-if edits of a topology XML: attributes, removals, NVLink counts. */
#include "common/names.h"
#include "mutate/mutate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Attributes that belong to the <pci> element; others go to its <gpu>. */
static const char *const pci_attrs[] = {
    "busid",      "class",     "vendor", "device", "subsystem_vendor", "subsystem_device",
    "link_speed", "link_width"};
/* What topoplan's loader (as NCCL 2.22.3's) reads on the other elements an edit may touch. */
static const char *const gpu_attrs[] = {"dev", "sm", "rank", "gdr"};
static const char *const net_attrs[] = {"name", "dev",     "speed", "port", "latency",
                                        "guid", "maxconn", "gdr",   "coll"};
static const char *const cpu_attrs[] = {"numaid",   "affinity", "arch",     "vendor",
                                        "familyid", "modelid",  "host_hash"};

typedef struct attr_set {
    const char *tag;
    const char *const *names;
    size_t n;
} attr_set;

static bool in_set(const attr_set *set, const char *name)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->names[i], name) == 0)
            return true;
    return false;
}

/* Fail naming an attribute the loader does not read on any of `sets`. */
static tp_status unknown_attr(tp_error *err, const tp_mutation *m, const char *name,
                              const attr_set *sets, size_t n_sets);

static tp_status spec_error(tp_error *err, const tp_mutation *m, const char *what)
{
    static const char *const kind_names[] = {
        [TP_MUT_SET] = "--set",
        [TP_MUT_SET_NET] = "--set-net",
        [TP_MUT_SET_CPU] = "--set-cpu",
        [TP_MUT_REMOVE] = "--remove",
        [TP_MUT_REMOVE_NET] = "--remove-net",
        [TP_MUT_NVLINK] = "--nvlink",
        [TP_MUT_NVLINK_DOWN] = "--nvlink-down",
        [TP_MUT_ADD] = "--add",
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
 * or '_', then letters, digits, '_', '-', '.') and a value of printable
 * ASCII (NCCL's values are), so the written file stays well-formed XML.
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
        else if ((unsigned char)*c >= 0x80)
            return spec_error(err, m, "non-ASCII byte in the value (topology values are ASCII)");
    return TP_OK;
}

static tp_status unknown_attr(tp_error *err, const tp_mutation *m, const char *name,
                              const attr_set *sets, size_t n_sets)
{
    const char *nearest = NULL;
    size_t best = 3; /* suggest only close names */
    char known[400] = "";
    size_t len = 0;
    for (size_t s = 0; s < n_sets; s++) {
        len += (size_t)snprintf(known + len, sizeof(known) - len, "%s<%s>:", s ? "; " : "",
                                sets[s].tag);
        for (size_t i = 0; i < sets[s].n && len < sizeof(known); i++) {
            len += (size_t)snprintf(known + len, sizeof(known) - len, " %s", sets[s].names[i]);
            size_t d = tp_edit_distance(name, sets[s].names[i]);
            if (d < best)
                best = d, nearest = sets[s].names[i];
        }
    }
    char what[600];
    snprintf(what, sizeof(what), "unknown attribute \"%s\"%s%s%s (the loader reads %s)", name,
             nearest ? " (did you mean " : "", nearest ? nearest : "", nearest ? "?)" : "", known);
    return spec_error(err, m, what);
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
    const attr_set sets[] = {{"pci", pci_attrs, ARRAY_LEN(pci_attrs)},
                             {"gpu", gpu_attrs, ARRAY_LEN(gpu_attrs)}};
    tp_xml_elem *gpu = tp_xml__child(pci, "gpu");
    tp_status st = check_attr(err, m, name, value);
    if (st != TP_OK)
        return st;
    if (!is_pci_attr(name) && !(gpu && in_set(&sets[1], name)))
        return unknown_attr(err, m, name, sets, gpu ? 2 : 1);
    return tp_xml__set_attr(is_pci_attr(name) ? pci : gpu, name, value, err);
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
    const attr_set set = {"net", net_attrs, ARRAY_LEN(net_attrs)};
    tp_status st = check_attr(err, m, name, eq + 1);
    if (st == TP_OK && !in_set(&set, name))
        return unknown_attr(err, m, name, &set, 1);
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
    const attr_set set = {"cpu", cpu_attrs, ARRAY_LEN(cpu_attrs)};
    tp_status st = check_attr(err, m, name, value);
    if (st == TP_OK && !in_set(&set, name))
        return unknown_attr(err, m, name, &set, 1);
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

/* The GPU's <nvlink> to `target`, or NULL. */
static tp_xml_elem *nvlink_to(const tp_xml_elem *gpu, const char *target)
{
    for (size_t i = 0; i < gpu->n_children; i++) {
        const char *t = tp_xml__attr(gpu->children[i], "target");
        if (strcmp(gpu->children[i]->tag, "nvlink") == 0 && t && strcasecmp(t, target) == 0)
            return gpu->children[i];
    }
    return NULL;
}

/* Set the <nvlink> from the GPU of `from` to `to` (count 0 removes it). */
static tp_status set_one_nvlink(tp_xml *doc, const tp_mutation *m, const char *from, const char *to,
                                const char *count, tp_error *err)
{
    tp_xml_elem *pci = find_by_attr(doc->root, "pci", "busid", from);
    tp_xml_elem *gpu = pci ? tp_xml__child(pci, "gpu") : NULL;
    tp_xml_elem *peer = find_by_attr(doc->root, "pci", "busid", to);
    tp_xml_elem *link = gpu ? nvlink_to(gpu, to) : NULL;
    /* An NVSwitch is often no <pci> of the file: the GPU's link to it names it. */
    if (!gpu || (!peer && !link))
        return spec_error(err, m,
                          "the first bus id must be a GPU, the second a device or an "
                          "NVLink target of that GPU (an NVSwitch)");
    if (strcmp(count, "0") == 0) {
        if (link)
            tp_xml__remove(link);
        return TP_OK;
    }
    tp_status st = TP_OK;
    if (!link) {
        const char *cls = peer ? tp_xml__attr(peer, "class") : NULL;
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

/* One NVLink of a GPU down: to TARGET, else to the target it has the most links to. */
static tp_status nvlink_down(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    const char *comma = strchr(m->spec, ',');
    char busid[16], target[16] = "";
    size_t len = comma ? (size_t)(comma - m->spec) : strlen(m->spec);
    if (!normalize_busid(m->spec, len, busid) ||
        (comma && !normalize_busid(comma + 1, strlen(comma + 1), target)))
        return spec_error(err, m, "expected BUSID[,TARGET]");
    tp_xml_elem *pci = find_by_attr(doc->root, "pci", "busid", busid);
    tp_xml_elem *gpu = pci ? tp_xml__child(pci, "gpu") : NULL;
    if (!gpu)
        return spec_error(err, m, "no GPU with this bus id");
    tp_xml_elem *link = target[0] ? nvlink_to(gpu, target) : NULL;
    long most = 0;
    for (size_t i = 0; !target[0] && i < gpu->n_children; i++) {
        const char *c = tp_xml__attr(gpu->children[i], "count");
        long n = c && strcmp(gpu->children[i]->tag, "nvlink") == 0 ? strtol(c, NULL, 10) : 0;
        if (n > most)
            most = n, link = gpu->children[i];
    }
    if (!link)
        return spec_error(err, m, "the GPU has no NVLink to take down there");
    const char *c = tp_xml__attr(link, "count");
    long n = c ? strtol(c, NULL, 10) : 1;
    if (n <= 1) {
        tp_xml__remove(link);
        return TP_OK;
    }
    char count[24];
    snprintf(count, sizeof(count), "%ld", n - 1);
    return tp_xml__set_attr(link, "count", count, err);
}

/* Deep copy of `src` appended to `parent`. */
static tp_status copy_elem(tp_xml_elem **out, tp_xml_elem *parent, const tp_xml_elem *src,
                           tp_error *err)
{
    tp_xml_elem *e = NULL;
    tp_status st = tp_xml__add_child(&e, parent, src->tag, err);
    for (size_t i = 0; st == TP_OK && i < src->n_attrs; i++)
        st = tp_xml__set_attr(e, src->attrs[i].name, src->attrs[i].value, err);
    for (size_t i = 0; st == TP_OK && i < src->n_children; i++)
        st = copy_elem(NULL, e, src->children[i], err);
    if (out)
        *out = e;
    return st;
}

/* The largest integer value of attribute `attr` on `tag` elements (base 0), or -1. */
static long max_attr(const tp_xml_elem *e, const char *tag, const char *attr)
{
    const char *v = strcmp(e->tag, tag) == 0 ? tp_xml__attr(e, attr) : NULL;
    long best = v ? strtol(v, NULL, 0) : -1;
    for (size_t i = 0; i < e->n_children; i++) {
        long c = max_attr(e->children[i], tag, attr);
        best = c > best ? c : best;
    }
    return best;
}

/* The largest guid of the <net> elements (unsigned 64-bit), 0 when none. */
static unsigned long long max_guid(const tp_xml_elem *e)
{
    const char *v = strcmp(e->tag, "net") == 0 ? tp_xml__attr(e, "guid") : NULL;
    unsigned long long best = v ? strtoull(v, NULL, 0) : 0;
    for (size_t i = 0; i < e->n_children; i++) {
        unsigned long long c = max_guid(e->children[i]);
        best = c > best ? c : best;
    }
    return best;
}

static tp_status set_long(tp_xml_elem *e, const char *attr, long v, tp_error *err)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld", v);
    return tp_xml__set_attr(e, attr, buf, err);
}

/*
 * The copy's identity: the next GPU dev and rank; NETs the next devs, a
 * name of their own and a new guid (a shared guid would merge them as ports
 * of one NIC); no NVLink to another GPU (it would be one-sided).
 */
static tp_status renumber_copy(tp_xml *doc, tp_xml_elem *e, const char *busid, tp_error *err)
{
    tp_status st = TP_OK;
    if (strcmp(e->tag, "gpu") == 0) {
        st = set_long(e, "dev", max_attr(doc->root, "gpu", "dev") + 1, err);
        if (st == TP_OK && tp_xml__attr(e, "rank"))
            st = set_long(e, "rank", max_attr(doc->root, "gpu", "rank") + 1, err);
        for (size_t i = e->n_children; st == TP_OK && i-- > 0;) {
            const char *t = tp_xml__attr(e->children[i], "target");
            tp_xml_elem *peer = t ? find_by_attr(doc->root, "pci", "busid", t) : NULL;
            if (peer && tp_xml__child(peer, "gpu"))
                tp_xml__remove(e->children[i]);
        }
        return st;
    }
    if (strcmp(e->tag, "net") == 0) {
        char name[128];
        snprintf(name, sizeof(name), "%s@%s",
                 tp_xml__attr(e, "name") ? tp_xml__attr(e, "name") : "net", busid);
        st = tp_xml__set_attr(e, "name", name, err);
        if (st == TP_OK)
            st = set_long(e, "dev", max_attr(doc->root, "net", "dev") + 1, err);
        if (st == TP_OK && tp_xml__attr(e, "guid")) {
            char guid[32];
            snprintf(guid, sizeof(guid), "0x%llx", max_guid(doc->root) + 1);
            st = tp_xml__set_attr(e, "guid", guid, err);
        }
        return st;
    }
    for (size_t i = 0; st == TP_OK && i < e->n_children; i++)
        st = renumber_copy(doc, e->children[i], busid, err);
    return st;
}

/* "NEWBUSID=BUSID": a copy of a GPU or NIC device beside the original. */
static tp_status add_device(tp_xml *doc, const tp_mutation *m, tp_error *err)
{
    const char *eq = strchr(m->spec, '=');
    char busid[16], from[16];
    if (!eq || !normalize_busid(m->spec, (size_t)(eq - m->spec), busid) ||
        !normalize_busid(eq + 1, strlen(eq + 1), from))
        return spec_error(err, m, "expected NEWBUSID=BUSID");
    tp_xml_elem *src = find_by_attr(doc->root, "pci", "busid", from);
    if (!src || !src->parent)
        return spec_error(err, m, "no <pci> with the second bus id");
    if (find_by_attr(doc->root, "pci", "busid", busid))
        return spec_error(err, m, "the new bus id is taken");
    if (tp_xml__child(src, "pci"))
        return spec_error(err, m, "copy a GPU or NIC device, not a bridge with devices below");
    if (!tp_xml__child(src, "gpu") && !tp_xml__child(src, "nic"))
        return spec_error(err, m, "the device is neither a GPU nor a NIC");
    tp_xml_elem *copy = NULL;
    tp_status st = copy_elem(&copy, src->parent, src, err);
    if (st == TP_OK)
        st = tp_xml__set_attr(copy, "busid", busid, err);
    return st == TP_OK ? renumber_copy(doc, copy, busid, err) : st;
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
    case TP_MUT_NVLINK_DOWN:
        return nvlink_down(doc, m, err);
    case TP_MUT_ADD:
        return add_device(doc, m, err);
    }
    return spec_error(err, m, "unknown mutation");
}

tp_status tp_mutate_buffer(FILE *out, const char *xml, size_t len, const char *source,
                           const tp_mutation *muts, size_t n_muts, tp_error *err)
{
    if (!out || !xml || (n_muts > 0 && !muts))
        return tp_fail_arg(err, "tp_mutate_buffer",
                           !out   ? "out is NULL"
                           : !xml ? "xml is NULL"
                                  : "muts is NULL");
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
