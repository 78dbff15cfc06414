/*
 * Stage 2, XML preparation: bring a loaded topology XML to the state NCCL
 * 2.22.3 holds just before ncclTopoGetSystemFromXml (and writes to
 * NCCL_TOPO_DUMP_FILE), with nothing read from NVML or sysfs:
 *
 *  1. what NCCL's own parser keeps (xml.cc xmlLoadSub): known elements only,
 *     at most 16 attributes, its node limits;
 *  2. per local rank (ncclTopoGetSystem, topo.cc): fill its GPU (ncclTopoFillGpu
 *     without sysfs), mark it and every NET device "keep", set ranks and
 *     defaults, then drop unmarked branches (ncclTopoTrimXml);
 *  3. fuse the ranks' trees in rank order (ncclTopoFuseXml).
 *
 * GPU order, NET order and GDR defaults follow the conformance suite's model
 * of a real job (see conformance/README.md): the XML is the whole truth.
 */
#include "system/system.h"
#include "system/system_vnic.h"
#include "netdev/netdev.h"

#include <stdlib.h>
#include <string.h>

typedef struct prep_ctx {
    tp_xml *doc;
    tp_log *log;
    tp_error *err;
    tp_xml_elem **gpus; /* original <gpu> elements in local-rank order */
    size_t n_gpus;
    tp_xml_elem **nets; /* original <net> elements in NET device order */
    size_t n_nets;
    int gdr_default; /* NCCL's peerInfo gdrSupport for a <gpu> without gdr */
    unsigned dropped_gpu_line, dropped_gpu_col; /* the first <gpu> NCCL's parser ignored */
    bool plain;                    /* trim every rank's tree by a walk of its own (tests) */
    const tp_config *cfg;          /* NULL: NCCL's defaults (2.22.3) */
    bool import_nets;              /* TP_RULE_NIC_FUSION: NETs imported from the plugin */
    tp_prep_pass pass;             /* NCCL_TOPO_DUMP_FILE's two passes (rule nic-fusion) */
    tp_log net_log;                /* the import's lines, logged after the ranks' own */
    struct elem_list *shared_trim; /* what every rank's trim drops, its own GPU aside */
    /* The preparation's own arrays (lists, keys, views), freed together at its end: a dozen
     * allocations and frees cost a small topology more than the work on them. */
    tp_arena scratch;
} prep_ctx;

/* An element list that grows in an arena. */
typedef struct elem_list {
    tp_xml_elem **items;
    size_t count, cap;
    tp_arena *arena;
} elem_list;

static tp_status list_add(elem_list *l, tp_xml_elem *e, tp_error *err)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        tp_xml_elem **items = tp_arena_alloc(l->arena, cap * sizeof(*items));
        if (!items)
            return tp_fail_nomem(err);
        if (l->count)
            memcpy(items, l->items, l->count * sizeof(*items));
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = e;
    return TP_OK;
}

/* An array of n items of `size` bytes in the scratch arena, cleared. */
static void *scratch_zalloc(prep_ctx *c, size_t n, size_t size)
{
    void *p = tp_arena_zalloc(&c->scratch, n * size);
    if (!p)
        tp_fail_nomem(c->err);
    return p;
}

/* The <pci>, <gpu> and <net> elements of a tree, each list in document order. */
typedef struct tagged_lists {
    elem_list pcis, gpus, nets;
} tagged_lists;

/* Pre-order walk collecting them all in one pass. */
static tp_status collect(const tp_xml_elem *e, tagged_lists *out, tp_error *err)
{
    tp_status st = TP_OK;
    if (tp_xml__is_tag(e, "pci"))
        st = list_add(&out->pcis, (tp_xml_elem *)e, err);
    else if (tp_xml__is_tag(e, "gpu"))
        st = list_add(&out->gpus, (tp_xml_elem *)e, err);
    else if (tp_xml__is_tag(e, "net"))
        st = list_add(&out->nets, (tp_xml_elem *)e, err);
    for (size_t i = 0; i < e->n_children && st == TP_OK; i++)
        st = collect(e->children[i], out, err);
    return st;
}

/* ---- 1. what NCCL's parser keeps ---- */

/* NCCL 2.22.3 topology parser handlers: which children each element accepts. */
static const struct {
    const char *parent;
    const char *children[4];
} known_children[] = {
    {"system", {"cpu"}},        {"cpu", {"pci", "nic"}}, {"pci", {"pci", "gpu", "nic", "pcilink"}},
    {"gpu", {"nvlink", "c2c"}}, {"nic", {"net"}},
};

/* -1: the element takes no children at all (they vanish silently); 0: not this one; 1: known. */
static int child_known(const char *parent, const char *child)
{
    for (size_t i = 0; i < ARRAY_LEN(known_children); i++) {
        if (!tp_xml__same_text(known_children[i].parent, parent))
            continue;
        for (size_t k = 0; k < ARRAY_LEN(known_children[i].children); k++) {
            const char *c = known_children[i].children[k];
            if (c && tp_xml__same_text(c, child))
                return 1;
        }
        return 0;
    }
    return -1;
}

/* NCCL 2.22.3 keeps the first 16 attributes of an element, with one line per extra one. */
static void cut_attrs(prep_ctx *c, tp_xml_elem *e)
{
    while (e->n_attrs > TP_XML_MAX_ATTRS) {
        tp_log_info_sub(c->log, TP_SUB_GRAPH, "XML Parse : Ignoring extra attributes (max %d)",
                        TP_XML_MAX_ATTRS);
        tp_xml__unset_attr(e, e->attrs[TP_XML_MAX_ATTRS].name);
    }
}

/* The parser still reads (and reports extra attributes of) elements it drops. */
static void cut_attrs_rec(prep_ctx *c, tp_xml_elem *e)
{
    cut_attrs(c, e);
    for (size_t i = 0; i < e->n_children; i++)
        cut_attrs_rec(c, e->children[i]);
}

static const tp_xml_elem *first_with_tag(const tp_xml_elem *e, const char *tag)
{
    if (tp_xml__same_text(e->tag, tag))
        return e;
    for (size_t i = 0; i < e->n_children; i++) {
        const tp_xml_elem *found = first_with_tag(e->children[i], tag);
        if (found)
            return found;
    }
    return NULL;
}

static void drop_unknown(prep_ctx *c, tp_xml_elem *e)
{
    for (size_t i = 0; i < e->n_children;) {
        tp_xml_elem *child = e->children[i];
        int known = child_known(e->tag, child->tag);
        if (known == 1) {
            cut_attrs(c, child);
            drop_unknown(c, child);
            i++;
            continue;
        }
        cut_attrs_rec(c, child);
        if (known == 0)
            tp_log_info_sub(c->log, TP_SUB_GRAPH, "Ignoring element %s", child->tag);
        const tp_xml_elem *gpu = first_with_tag(child, "gpu");
        if (gpu && !c->dropped_gpu_line) {
            c->dropped_gpu_line = gpu->line;
            c->dropped_gpu_col = gpu->column;
        }
        tp_xml__remove(child);
    }
}

/* NCCL 2.22.3 limits: 256 parser nodes (the last one trips the check) and 128 children. */
static tp_status check_limits(prep_ctx *c, const tp_xml_elem *e, size_t *count)
{
    if (++*count >= TP_XML_MAX_NODES) {
        tp_log_warn(c->log, "Error : XML parser is limited to %d nodes", TP_XML_MAX_NODES);
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                            "too many elements (NCCL 2.22.3 reads at most %d)",
                            TP_XML_MAX_NODES - 1);
    }
    if (e->n_children > TP_XML_MAX_SUBS) {
        tp_log_warn(c->log, "Error : XML parser is limited to %d subnodes", TP_XML_MAX_SUBS);
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                            "%zu children (NCCL 2.22.3 reads at most %d)", e->n_children,
                            TP_XML_MAX_SUBS);
    }
    for (size_t i = 0; i < e->n_children; i++) {
        tp_status st = check_limits(c, e->children[i], count);
        if (st != TP_OK)
            return st;
    }
    return TP_OK;
}

static tp_status check_root(prep_ctx *c)
{
    tp_xml_elem *top = c->doc->root;
    if (!tp_xml__is_tag(top, "system"))
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, top,
                            "not a topology (expected a <system> root element)");
    const char *v = tp_xml__attr(top, "version");
    if (!v) {
        tp_log_warn(c->log, "Attribute version of node system not found");
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, top, "missing attribute version");
    }
    int version = (int)strtol(v, NULL, 0);
    if (version != TP_TOPO_XML_VERSION) {
        tp_log_warn(c->log, "XML Topology has wrong version %d, %d needed", version,
                    TP_TOPO_XML_VERSION);
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, top, "version \"%s\" (expected %d)", v,
                            TP_TOPO_XML_VERSION);
    }
    if (c->doc->nccl_read)
        return TP_OK; /* the replay kept NCCL's own limits, and NCCL drops nothing of it */
    cut_attrs(c, top);
    drop_unknown(c, top);
    /* Every <gpu> is a rank: one NCCL never reads would leave its rank without a GPU. */
    if (c->dropped_gpu_line)
        return tp_fail(c->err, TP_ERR_TOPOLOGY, c->doc->source, c->dropped_gpu_line,
                       c->dropped_gpu_col,
                       "<gpu>: not where NCCL 2.22.3 reads GPUs (<system>/<cpu>/<pci>.../<gpu>): "
                       "NCCL ignores it and its rank would have no GPU");
    size_t count = 0;
    return check_limits(c, top, &count);
}

/* ---- validation and the job's view: GPU and NET order ---- */

/*
 * Every <pci> needs a readable bus id, and GPUs distinct ones: NCCL finds a
 * rank's GPU by bus id, so a second GPU with the same id would never be used.
 * (Other repeated bus ids are legal: NCCL's own fusion can write them.)
 */
static tp_status check_busids(prep_ctx *c, const elem_list *pcis)
{
    /* The GPUs' <pci> seen so far and their ids, each converted once. */
    tp_xml_elem **gpu_pci = scratch_zalloc(c, pcis->count + 1, sizeof(*gpu_pci));
    int64_t *gpu_id = gpu_pci ? scratch_zalloc(c, pcis->count + 1, sizeof(*gpu_id)) : NULL;
    size_t n_gpus = 0;
    tp_status st = gpu_id ? TP_OK : TP_ERR_NOMEM;
    for (size_t i = 0; i < pcis->count && st == TP_OK; i++) {
        tp_xml_elem *pci = pcis->items[i];
        const char *bi = tp_xml__attr(pci, "busid");
        if (!bi) {
            st = tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, pci, "missing attribute busid");
            break;
        }
        int digits = 0;
        int64_t a = tp_system__busid_to_int64(bi, &digits);
        if (digits == 0) {
            st = tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, pci,
                              "busid=\"%s\" is not a PCI bus id (expected e.g. 0000:1a:00.0)", bi);
            break;
        }
        if (!tp_xml__child(pci, "gpu"))
            continue;
        for (size_t j = 0; j < n_gpus && st == TP_OK; j++)
            if (gpu_id[j] == a)
                st = tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, pci,
                                  "duplicate bus id %s (first at line %u)", bi, gpu_pci[j]->line);
        gpu_pci[n_gpus] = pci;
        gpu_id[n_gpus++] = a;
    }
    return st;
}

/* The integer attribute `name` of every element, if all have a valid one. */
static bool all_ints(tp_xml_elem **items, size_t n, const char *name, long *out)
{
    for (size_t i = 0; i < n; i++) {
        const char *s = tp_xml__attr(items[i], name);
        char *end = NULL;
        if (!s || !*s)
            return false;
        if (tp_system__plain_decimal(s, &out[i]))
            continue;
        out[i] = strtol(s, &end, 0);
        if (*end)
            return false;
    }
    return true;
}

static bool all_distinct(const long *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (v[i] == v[j])
                return false;
    return true;
}

static bool is_permutation(const long *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0 || (size_t)v[i] >= n)
            return false;
    return all_distinct(v, n);
}

/* Stable insertion sort of items by key (small lists). */
static void sort_by_key(tp_xml_elem **items, long *keys, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        tp_xml_elem *it = items[i];
        long k = keys[i];
        size_t j = i;
        for (; j > 0 && keys[j - 1] > k; j--) {
            items[j] = items[j - 1];
            keys[j] = keys[j - 1];
        }
        items[j] = it;
        keys[j] = k;
    }
}

/*
 * Local rank order of the GPUs: by their rank attribute when those are
 * 0..n-1, else by dev when all distinct, else XML order (conformance model).
 */
static tp_status order_gpus(prep_ctx *c, elem_list *gpus)
{
    long *keys = scratch_zalloc(c, gpus->count + 1, sizeof(*keys));
    if (!keys)
        return TP_ERR_NOMEM;
    if (all_ints(gpus->items, gpus->count, "rank", keys) && is_permutation(keys, gpus->count))
        sort_by_key(gpus->items, keys, gpus->count);
    else if (all_ints(gpus->items, gpus->count, "dev", keys) && all_distinct(keys, gpus->count))
        sort_by_key(gpus->items, keys, gpus->count);
    return TP_OK;
}

/* NET devices: by dev when every <net> has a distinct one, else XML order. */
static tp_status order_nets(prep_ctx *c, elem_list *nets)
{
    long *keys = scratch_zalloc(c, nets->count + 1, sizeof(*keys));
    if (!keys)
        return TP_ERR_NOMEM;
    if (all_ints(nets->items, nets->count, "dev", keys) && all_distinct(keys, nets->count))
        sort_by_key(nets->items, keys, nets->count);
    for (size_t i = 0; i < nets->count; i++)
        if (!tp_xml__attr(nets->items[i], "name"))
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, nets->items[i],
                                "missing attribute name (NCCL finds NET devices by name)");
    return TP_OK;
}

static int gdr_default(const elem_list *nets)
{
    for (size_t i = 0; i < nets->count; i++) {
        const char *g = tp_xml__attr(nets->items[i], "gdr");
        if (g && strtol(g, NULL, 0) == 1)
            return 1;
    }
    return 0;
}

static tp_status check_gpus(prep_ctx *c)
{
    for (size_t i = 0; i < c->n_gpus; i++) {
        tp_xml_elem *gpu = c->gpus[i];
        if (!tp_xml__attr(gpu, "dev"))
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, gpu,
                                "missing attribute dev (NCCL would ask NVML)");
        if (strtol(tp_xml__attr(gpu, "dev"), NULL, 0) < 0)
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, gpu,
                                "dev=\"%s\" is negative (a CUDA device number)",
                                tp_xml__attr(gpu, "dev"));

        if (!tp_xml__attr(gpu, "sm"))
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, gpu,
                                "missing attribute sm (NCCL would ask CUDA)");
        if (!tp_xml__is_tag(gpu->parent, "pci") || !tp_xml__attr(gpu->parent, "busid"))
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, gpu,
                                "a <gpu> must be the child of a <pci busid=...>");
        /* NCCL 2.22.3 ncclTopoAddPci takes the first <gpu> of a <pci> only. */
        if (tp_xml__child(gpu->parent, "gpu") != gpu)
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, gpu,
                                "a second <gpu> in one <pci>: NCCL 2.22.3 reads only the first, "
                                "so this GPU's rank would have none");
    }
    return TP_OK;
}

/* ---- 2. the NET devices (the same in every rank's tree) ---- */

/* NCCL 2.22.3 xmlSetAttrIfUnset / xmlInitAttr*: only set what is missing. */
static tp_status init_attr(tp_xml_elem *e, const char *name, const char *value, tp_error *err)
{
    return tp_xml__attr(e, name) ? TP_OK : tp_xml__set_attr(e, name, value, err);
}

static tp_status set_int_attr(tp_xml_elem *e, const char *name, long v, bool only_init,
                              tp_error *err)
{
    char text[32];
    tp_format_int(text, (int)v);
    return only_init ? init_attr(e, name, text, err) : tp_xml__set_attr(e, name, text, err);
}

/* The NET plugin's properties are the listed <net>'s own attributes. */
static tp_status init_net_props(prep_ctx *c, tp_xml_elem *net, const tp_xml_elem *props)
{
    static const char *const ints[] = {"speed", "port"};
    tp_status st = TP_OK;
    const char *s;
    char text[64];
    for (size_t i = 0; i < ARRAY_LEN(ints) && st == TP_OK; i++)
        if ((s = tp_xml__attr(props, ints[i])))
            st = set_int_attr(net, ints[i], strtol(s, NULL, 0), true, c->err);
    if (st == TP_OK && (s = tp_xml__attr(props, "latency"))) {
        tp_format_fixed(text, strtof(s, NULL), 6); /* "%f" */
        st = init_attr(net, "latency", text, c->err);
    }
    if (st == TP_OK && (s = tp_xml__attr(props, "guid"))) {
        text[0] = '0';
        text[1] = 'x';
        tp_format_hex(text + 2, strtoull(s, NULL, 16), 1);
        st = init_attr(net, "guid", text, c->err);
    }
    if (st == TP_OK && (s = tp_xml__attr(props, "maxconn")))
        st = set_int_attr(net, "maxconn", strtol(s, NULL, 0), true, c->err);
    if (st == TP_OK && (s = tp_xml__attr(props, "gdr")))
        st = set_int_attr(net, "gdr", strtol(s, NULL, 0), true, c->err);
    return st;
}

/*
 * NCCL 2.22.3 ncclTopoGetSystem: every rank marks NET device n (found by
 * name with ncclTopoFillNet: with duplicate names the first <net> of that
 * name gets every later dev number) keep="1", dev=n, plugin properties.
 * Every rank does the same, so we do it once on the shared tree.
 */
static tp_status fill_net(prep_ctx *c, tp_xml_elem *net, size_t n, const char *name)
{
    if (!net)
        return tp_fail(c->err, TP_ERR_INTERNAL, c->doc->source, 0, 0, "net %s vanished", name);
    const char *dev = tp_xml__attr(net, "dev");
    long old_dev = dev ? strtol(dev, NULL, 0) : -1;
    tp_status st = set_int_attr(net, "keep", 1, false, c->err);
    if (st == TP_OK && (st = set_int_attr(net, "dev", (long)n, false, c->err)) == TP_OK &&
        net != c->nets[n]) /* a <net> has every property it would be given from itself */
        st = init_net_props(c, net, c->nets[n]);
    if (st == TP_OK && c->import_nets) /* 2.24 ncclTopoPopulateNics */
        tp_system__log_populated(
            &c->net_log, tp_config__profile(c->cfg),
            &(tp_populated_net){.net = net,
                                .n = (int)n,
                                .old_dev = old_dev,
                                .name = name,
                                .pci_path = tp_system__net_pci_path(c->nets[n])});
    return st;
}

/* NCCL's xmlFindTagKv answer: the first <net> of that name in document order. */
static tp_xml_elem *first_named(const elem_list *in_doc, const char *const *names, const char *name)
{
    for (size_t i = 0; i < in_doc->count; i++)
        if (names[i] && tp_xml__same_text(names[i], name))
            return in_doc->items[i];
    return NULL;
}

/* in_doc: every <net> in document order. Their names are read once (filling a NET never
 * sets one, and the texts stay where they are when other attributes change). */
static tp_status fill_nets(prep_ctx *c, const elem_list *in_doc)
{
    const char **names = scratch_zalloc(c, in_doc->count + 1, sizeof(*names));
    if (!names)
        return TP_ERR_NOMEM;
    for (size_t i = 0; i < in_doc->count; i++)
        names[i] = tp_xml__attr(in_doc->items[i], "name");
    tp_xml_elem **filled = scratch_zalloc(c, c->n_nets + 1, sizeof(*filled));
    if (!filled)
        return TP_ERR_NOMEM;
    tp_status st = TP_OK;
    for (size_t n = 0; n < c->n_nets && st == TP_OK; n++) {
        const char *name = tp_xml__attr(c->nets[n], "name");
        filled[n] = first_named(in_doc, names, name);
        st = fill_net(c, filled[n], n, name);
    }
    int n_vnics = 0;
    if (st == TP_OK && c->import_nets && !c->pass.physical_nics) {
        tp_vnic_phys phys = {.devs = c->nets, .nodes = filled, .count = c->n_nets};
        st = tp_system__make_vnics(c->doc, &phys, c->cfg, &c->net_log, &n_vnics, c->err);
    }
    if (c->pass.net_devices && c->import_nets)
        *c->pass.net_devices = (int)c->n_nets + n_vnics;
    return st;
}

/* ---- 3. one rank's tree, as a view of the shared one ---- */

/*
 * A rank's tree differs from the shared one only by what ncclTopoFillGpu
 * writes on its GPU's branch (`chain`) and by the branches ncclTopoTrimXml
 * drops (`removed`). We read it through these instead of copying it.
 */
#define TP_VIEW_MAX_CHAIN 64
#define TP_VIEW_MAX_ATTRS (TP_XML_MAX_ATTRS + 8)

typedef struct rank_view {
    const tp_xml_elem *gpu, *gpu_pci;
    bool usable; /* dev != -1: NCCL keeps it */
    char rank_text[16], gdr_text[16];
    const tp_xml_elem *chain[TP_VIEW_MAX_CHAIN]; /* GPU's PCI devices up to its CPU */
    size_t n_chain;
    elem_list removed; /* trimmed elements (their subtrees go too) */
    /* A rank fused before this one (NULL: none): what its fusion left is not fused again. */
    const struct rank_view *ref;
    bool trim_nets; /* 2.27 ncclTopoTrimXml: <nic> and <net> without keep go too */
} rank_view;

/* An element's attributes as the rank sees them (borrowed strings). */
typedef struct attr_view {
    const char *name[TP_VIEW_MAX_ATTRS];
    const char *value[TP_VIEW_MAX_ATTRS];
    size_t n;
} attr_view;

static int av_find(const attr_view *av, const char *name)
{
    /* The first character first: most names differ there (this runs per element and rank). */
    for (size_t i = 0; i < av->n; i++)
        if (av->name[i][0] == name[0] && tp_xml__same_text(av->name[i], name))
            return (int)i;
    return -1;
}

/* xmlSetAttr (replace in place or append); only_init: xmlSetAttrIfUnset. */
static void av_set(attr_view *av, const char *name, const char *value, bool only_init)
{
    int i = av_find(av, name);
    if (i >= 0 && !only_init)
        av->value[i] = value;
    if (i < 0 && av->n < TP_VIEW_MAX_ATTRS) {
        av->name[av->n] = name;
        av->value[av->n++] = value;
    }
}

static void av_unset(attr_view *av, const char *name)
{
    int i = av_find(av, name);
    if (i < 0)
        return;
    for (size_t k = (size_t)i + 1; k < av->n; k++) {
        av->name[k - 1] = av->name[k];
        av->value[k - 1] = av->value[k];
    }
    av->n--;
}

static bool in_list(const tp_xml_elem *const *items, size_t n, const tp_xml_elem *e)
{
    for (size_t i = 0; i < n; i++)
        if (items[i] == e)
            return true;
    return false;
}

/* Where fill_view writes: xmlSetAttr (replace in place or append); only_init: xmlSetAttrIfUnset. */
typedef struct attr_setter {
    tp_status (*set)(void *target, const char *name, const char *value, bool only_init,
                     tp_error *err);
    void *target;
} attr_setter;

static tp_status set_in_view(void *target, const char *name, const char *value, bool only_init,
                             tp_error *err)
{
    (void)err;
    av_set(target, name, value, only_init);
    return TP_OK;
}

static tp_status set_in_elem(void *target, const char *name, const char *value, bool only_init,
                             tp_error *err)
{
    tp_xml_elem *e = target;
    if (only_init && tp_xml__attr(e, name))
        return TP_OK;
    return tp_xml__set_attr(e, name, value, err);
}

/* NCCL 2.22.3 ncclTopoGetXmlFromSys / GetXmlFromCpu / GetXmlFromGpu with no sysfs or NVML. */
static tp_status fill_view(const rank_view *v, const tp_xml_elem *e, attr_setter to, tp_error *err)
{
    tp_status st = TP_OK;
    if (e == v->gpu_pci)
        st = to.set(to.target, "class", "0x03", true, err);
    if (st != TP_OK)
        return st;
    if (tp_xml__is_tag(e, "pci")) {
        if ((st = to.set(to.target, "link_speed", "", true, err)) == TP_OK)
            st = to.set(to.target, "link_width", "", true, err);
    } else if (tp_xml__is_tag(e, "cpu")) {
        /* the build's arch; vendor/family need CPUID */
        st = to.set(to.target, "arch", "x86_64", true, err);
    } else if (e == v->gpu) {
        if ((st = to.set(to.target, "keep", "1", false, err)) == TP_OK &&
            (st = to.set(to.target, "rank", v->rank_text, false, err)) == TP_OK)
            st = to.set(to.target, "gdr", v->gdr_text, true, err);
    } else if (tp_xml__is_tag(e, "nvlink")) {
        /* unknown peer: taken for an NVSwitch */
        st = to.set(to.target, "tclass", "0x068000", true, err);
    }
    return st;
}

/* Whether fill_view writes on e for this rank: its GPU, the GPU's NVLinks, the PCI chain. */
static bool filled_by_view(const rank_view *v, const tp_xml_elem *e)
{
    bool own_nvlink = v->usable && e->parent == v->gpu && tp_xml__is_tag(e, "nvlink");
    bool gpu = v->usable && e == v->gpu;
    return own_nvlink || gpu || in_list(v->chain, v->n_chain, e);
}

static void view_attrs(const rank_view *v, const tp_xml_elem *e, attr_view *av)
{
    av->n = 0;
    for (size_t i = 0; i < e->n_attrs && i < TP_VIEW_MAX_ATTRS; i++) {
        av->name[i] = e->attrs[i].name;
        av->value[i] = e->attrs[i].value;
        av->n++;
    }
    if (filled_by_view(v, e))
        fill_view(v, e, (attr_setter){set_in_view, av}, NULL);
    int k = av_find(av, "keep");
    if (k >= 0 && tp_xml__same_text(av->value[k], "1"))
        av_unset(av, "keep"); /* ncclTopoTrimXml drops the marks it honours */
}

static bool view_kept(const rank_view *v, const tp_xml_elem *e)
{
    if (v->usable && e == v->gpu)
        return true;
    const char *k = tp_xml__attr(e, "keep");
    return k && tp_xml__same_text(k, "1");
}

/* NCCL 2.22.3 ncclTopoTrimXml: PCI and CPU branches with nothing marked keep="1" go (2.27: NIC
 * and NET ones too, so the members of a virtual NIC, keep="0", leave). */
static bool trimmable(const rank_view *v, const tp_xml_elem *e)
{
    if (tp_xml__is_tag(e, "pci") || tp_xml__is_tag(e, "cpu"))
        return true;
    return v->trim_nets && (tp_xml__is_tag(e, "nic") || tp_xml__is_tag(e, "net"));
}

static tp_status trim_view(rank_view *v, const tp_xml_elem *e, int *keep, tp_error *err)
{
    if (view_kept(v, e)) {
        *keep = 1;
        return TP_OK;
    }
    *keep = 0;
    tp_status st = TP_OK;
    for (size_t s = 0; s < e->n_children && st == TP_OK; s++) {
        int sub = 0;
        st = trim_view(v, e->children[s], &sub, err);
        *keep += sub;
    }
    if (st == TP_OK && *keep == 0 && e->parent && trimmable(v, e))
        st = list_add(&v->removed, (tp_xml_elem *)e, err);
    return st;
}

/* The branches the trim drops when no GPU is the rank's own (keep marks only). */
static tp_status shared_trim(prep_ctx *c, elem_list *out)
{
    rank_view none = {
        .usable = false, .removed = {.arena = &c->scratch}, .trim_nets = c->import_nets};
    int keep = 0;
    tp_status st = trim_view(&none, c->doc->root, &keep, c->err);
    *out = none.removed;
    return st;
}

static bool is_above(const tp_xml_elem *e, const tp_xml_elem *below)
{
    for (const tp_xml_elem *p = below->parent; p; p = p->parent)
        if (p == e)
            return true;
    return false;
}

/*
 * A rank's trim differs from the shared one only above its own GPU: a usable
 * GPU is kept, so every element holding it is too; elsewhere the rank's walk
 * reads the same keep marks. Equal to trim_view on the rank's view (c->plain
 * runs that walk instead; the unit tests compare both).
 */
static tp_status rank_trim(prep_ctx *c, rank_view *v)
{
    int keep = 0;
    if (c->plain)
        return trim_view(v, c->doc->root, &keep, c->err);
    tp_status st = TP_OK;
    for (size_t i = 0; i < c->shared_trim->count && st == TP_OK; i++) {
        tp_xml_elem *e = c->shared_trim->items[i];
        if (!v->usable || !is_above(e, v->gpu))
            st = list_add(&v->removed, e, c->err);
    }
    return st;
}

/*
 * The rank's GPU branch; the affinity read NCCL attempts (and logs) only
 * in the reported rank's own process.
 */
static tp_status init_view(prep_ctx *c, rank_view *v, size_t local, int rank, bool logged)
{
    v->gpu = c->gpus[local];
    v->gpu_pci = v->gpu->parent;
    v->removed.arena = &c->scratch;
    v->trim_nets = c->import_nets;
    v->usable = strtol(tp_xml__attr(v->gpu, "dev"), NULL, 0) != -1;
    tp_format_int(v->rank_text, rank);
    tp_format_int(v->gdr_text, c->gdr_default);
    for (const tp_xml_elem *p = v->gpu_pci; p && v->n_chain < TP_VIEW_MAX_CHAIN; p = p->parent) {
        bool cpu = tp_xml__is_tag(p, "cpu");
        if (!cpu && !tp_xml__is_tag(p, "pci"))
            break;
        v->chain[v->n_chain++] = p;
        if (!cpu)
            continue;
        const char *numa = tp_xml__attr(p, "numaid");
        if (!tp_xml__attr(p, "affinity") && !numa) {
            tp_log_warn(c->log, "GetXmlFromCpu : could not find CPU numa ID.");
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, p, "missing attribute numaid");
        }
        if (!tp_xml__attr(p, "affinity") && logged)
            tp_log_info_sub(c->log, TP_SUB_GRAPH,
                            "Topology detection : could not read "
                            "/sys/devices/system/node/node%s/cpumap, ignoring",
                            numa);
        break;
    }
    return rank_trim(c, v);
}

/* ---- 4. fusion (ncclTopoFuseXml) ---- */

/* Write a view element (and its kept subtree) under parent. */
static tp_status materialize(const rank_view *v, const tp_xml_elem *e, tp_xml_elem *parent,
                             tp_xml_elem **out, tp_error *err)
{
    attr_view av;
    tp_xml_elem *copy = NULL;
    view_attrs(v, e, &av);
    /* A new root goes to the source's document arena too. */
    tp_status st = parent ? tp_xml__add_child(&copy, parent, e->tag, err)
                          : tp_xml__new_root(&copy, e->arena, e->tag, err);
    if (st != TP_OK)
        return st;
    copy->line = e->line;
    copy->column = e->column;
    /* A view's attribute names are distinct (av_set replaces): appended all at once. */
    tp_xml_range ranges[TP_VIEW_MAX_ATTRS];
    for (size_t i = 0; i < av.n; i++)
        ranges[i] =
            (tp_xml_range){av.name[i], av.value[i], strlen(av.name[i]), strlen(av.value[i])};
    st = tp_xml__append_ranges(copy, ranges, av.n, err);
    for (size_t i = 0; i < e->n_children && st == TP_OK; i++)
        if (!in_list((const tp_xml_elem *const *)v->removed.items, v->removed.count,
                     e->children[i]))
            st = materialize(v, e->children[i], copy, NULL, err);
    if (st != TP_OK && !parent)
        tp_xml__free_elem(copy);
    if (st == TP_OK && out)
        *out = copy;
    return st;
}

static bool view_removed(const rank_view *v, const tp_xml_elem *e);

/*
 * A lone rank's tree is its view of the document itself: the same edits
 * view_attrs reads through, made on the elements, and the trimmed branches
 * removed (materialize would copy the rest unchanged).
 */
static tp_status edit_to_view(const rank_view *v, tp_xml_elem *e, tp_error *err)
{
    tp_status st = TP_OK;
    if (filled_by_view(v, e))
        st = fill_view(v, e, (attr_setter){set_in_elem, e}, err);
    const char *k = tp_xml__attr(e, "keep");
    if (st == TP_OK && k && tp_xml__same_text(k, "1"))
        tp_xml__unset_attr(e, "keep"); /* ncclTopoTrimXml drops the marks it honours */
    for (size_t i = 0; i < e->n_children && st == TP_OK;) {
        tp_xml_elem *child = e->children[i];
        if (view_removed(v, child)) {
            tp_xml__remove(child);
            continue;
        }
        st = edit_to_view(v, child, err);
        i++;
    }
    return st;
}

/*
 * NCCL 2.22.3 xmlFindNode: a child of the same name with the same number of
 * attributes, each of src's present with the same value. (NCCL also compares
 * the parser's open/self-closing flag, which our tree does not keep.)
 */
static tp_xml_elem *find_same(const tp_xml_elem *parent, const tp_xml_elem *src,
                              const attr_view *av)
{
    for (size_t i = 0; i < parent->n_children; i++) {
        tp_xml_elem *n = parent->children[i];
        if (n->n_attrs != av->n || n->tag[0] != src->tag[0] || !tp_xml__same_text(n->tag, src->tag))
            continue;
        size_t a = 0;
        for (; a < av->n; a++) {
            /* Usually at the same place (copies keep the order); names are unique. */
            const char *val = tp_xml__same_text(n->attrs[a].name, av->name[a])
                                  ? n->attrs[a].value
                                  : tp_xml__attr(n, av->name[a]);
            if (!val || val[0] != av->value[a][0] || !tp_xml__same_text(val, av->value[a]))
                break;
        }
        if (a == av->n)
            return n;
    }
    return NULL;
}

/* e is gpu or one of the elements holding it. */
static bool holds(const tp_xml_elem *e, const tp_xml_elem *gpu)
{
    for (const tp_xml_elem *p = gpu; p; p = p->parent)
        if (p == e)
            return true;
    return false;
}

static bool same_view(const attr_view *a, const attr_view *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!tp_xml__same_text(a->name[i], b->name[i]) ||
            !tp_xml__same_text(a->value[i], b->value[i]))
            return false;
    return true;
}

static bool view_removed(const rank_view *v, const tp_xml_elem *e)
{
    return in_list((const tp_xml_elem *const *)v->removed.items, v->removed.count, e);
}

/*
 * Whether fusing child (not trimmed by v) is a no-op because v->ref's fusion
 * did it: dst is where the ref fused too (same_path), and the child's subtree
 * reads the same in both views, which holds when it has neither rank's GPU
 * (views differ only on a GPU, its NVLinks and the elements holding it).
 * Fusing the same subtree at the same place twice changes nothing: every node
 * then finds its first match among the nodes the first time left, and later
 * fusions only append.
 */
static bool fused_by_ref(const rank_view *v, const tp_xml_elem *child, bool same_path)
{
    return v->ref && same_path && !holds(child, v->gpu) && !holds(child, v->ref->gpu);
}

/* The child is fused where the ref fused it: both views read it alike, neither trims it. */
static bool same_place(const rank_view *v, const tp_xml_elem *child, const attr_view *av,
                       bool same_path)
{
    if (!v->ref || !same_path || view_removed(v->ref, child))
        return false;
    attr_view ref_av;
    view_attrs(v->ref, child, &ref_av);
    return same_view(av, &ref_av);
}

static tp_status fuse_view(const rank_view *v, tp_xml_elem *dst, const tp_xml_elem *src,
                           bool same_path, tp_error *err)
{
    tp_status st = TP_OK;
    for (size_t i = 0; i < src->n_children && st == TP_OK; i++) {
        const tp_xml_elem *child = src->children[i];
        if (view_removed(v, child) || fused_by_ref(v, child, same_path))
            continue;
        attr_view av;
        view_attrs(v, child, &av);
        tp_xml_elem *same = find_same(dst, child, &av);
        st = same ? fuse_view(v, same, child, same_place(v, child, &av, same_path), err)
                  : materialize(v, child, dst, NULL, err);
    }
    return st;
}

/* NCCL's canonical bus id text (int64ToBusId): how a rank finds its GPU. */
static tp_status check_canonical(prep_ctx *c, const tp_xml_elem *pci)
{
    const char *orig = tp_xml__attr(pci, "busid");
    uint64_t id = (uint64_t)tp_system__busid_to_int64(orig, NULL);
    /* "%04llx:%02llx:%02llx.%01llx" */
    char busid[64], *p = busid;
    p += tp_format_hex(p, id >> 20, 4);
    *p++ = ':';
    p += tp_format_hex(p, (id & 0xff000) >> 12, 2);
    *p++ = ':';
    p += tp_format_hex(p, (id & 0xff0) >> 4, 2);
    *p++ = '.';
    tp_format_hex(p, id & 0xf, 1);
    if (!tp_xml__same_text(busid, orig))
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, pci,
                            "busid \"%s\" is not in NCCL's form (expected \"%s\")", orig, busid);
    return TP_OK;
}

/* ---- 5. fusion without copies, when every rank reads each element alike ---- */

/*
 * When every element reads the same in all ranks that keep it, and no two
 * sibling elements read the same, each rank's fusion finds an element where
 * an earlier rank put it or appends it: the fused tree is the document with
 * the union of the ranks' trees, each element's children in the order of the
 * first rank that has them (fusion appends), then document order. Other
 * documents (a switch without link_speed seen by a rank whose GPU is not under
 * it, repeated siblings) take the fusion itself.
 */
/* What the in-place fusion knows of one element. */
typedef struct elem_info {
    const tp_xml_elem *elem;
    bool trimmed;          /* in the shared trim: kept only by the ranks whose GPU it holds */
    bool every;            /* kept by every rank (nothing trimmed holds it) */
    size_t first;          /* the first rank keeping it (n_ranks: none) */
    int only;              /* the one rank keeping it, else -1 */
    int n_keepers;         /* trimmed: how many ranks keep it */
    int writer;            /* 1 + the rank whose fill changes it (0: none) */
    signed char link_fill; /* a PCI/CPU chain element's fill (the same for every rank):
                              0 not probed yet, 1 changes nothing, -1 changes it */
} elem_info;

typedef struct direct_plan {
    prep_ctx *c;
    const rank_view *views;
    size_t n_ranks;
    elem_info *slots; /* by the elements' walk_index (pre-order) */
    size_t n_slots;
} direct_plan;

static size_t count_elems(const tp_xml_elem *e)
{
    size_t n = 1;
    for (size_t i = 0; i < e->n_children; i++)
        n += count_elems(e->children[i]);
    return n;
}

/* The element's record (every element of the document has one: add_all). */
static elem_info *info_of(direct_plan *d, const tp_xml_elem *e)
{
    return &d->slots[e->walk_index];
}

/* A record for each element, numbered in pre-order from *next on. */
static void add_all(direct_plan *d, tp_xml_elem *e, size_t *next)
{
    e->walk_index = (*next)++;
    d->slots[e->walk_index] = (elem_info){.elem = e, .only = -1};
    for (size_t i = 0; i < e->n_children; i++)
        add_all(d, e->children[i], next);
}

/* Who keeps each element: a trimmed one, the ranks whose usable GPU it holds; others, as their
 * parent (the root: every rank). */
static void find_keepers(direct_plan *d, const tp_xml_elem *e, const elem_info *parent)
{
    elem_info *in = info_of(d, e);
    if (in->trimmed) {
        in->every = false;
        in->first = in->n_keepers ? in->first : d->n_ranks;
        in->only = in->n_keepers == 1 ? in->only : -1;
    } else if (parent) {
        in->every = parent->every;
        in->first = parent->first;
        in->only = parent->only;
    } else {
        *in = (elem_info){.elem = e, .every = true, .first = 0, .only = -1};
    }
    for (size_t i = 0; i < e->n_children; i++)
        find_keepers(d, e->children[i], in);
}

static void mark_trimmed(direct_plan *d)
{
    const elem_list *s = d->c->shared_trim;
    for (size_t i = 0; i < s->count; i++)
        info_of(d, s->items[i])->trimmed = true;
    for (size_t r = 0; r < d->n_ranks; r++) {
        if (!d->views[r].usable)
            continue;
        for (const tp_xml_elem *p = d->views[r].gpu->parent; p; p = p->parent) {
            elem_info *in = info_of(d, p);
            if (!in->trimmed)
                continue;
            if (in->n_keepers++ == 0)
                in->first = r;
            in->only = (int)r;
        }
    }
}

/* A fill_view target that only notes whether the rank's view of the element differs from the
 * element as it is (its honoured keep mark dropped either way). */
typedef struct fill_probe {
    const tp_xml_elem *elem;
    bool changes;
} fill_probe;

static tp_status probe_set(void *target, const char *name, const char *value, bool only_init,
                           tp_error *err)
{
    (void)err;
    fill_probe *p = target;
    const char *now = tp_xml__attr(p->elem, name);
    if (now)
        p->changes |= !only_init && !tp_xml__same_text(now, value);
    else /* appended, unless it is a keep mark the trim then drops */
        p->changes |= !(tp_xml__same_text(name, "keep") && tp_xml__same_text(value, "1"));
    return TP_OK;
}

/* What rank r fills on e, when r keeps e: nothing new, or e is r's alone (its writer). */
static bool check_filled(direct_plan *d, const tp_xml_elem *e, size_t r)
{
    elem_info *in = info_of(d, e);
    /* e holds r's GPU or is it or its NVLink: r keeps it unless its GPU is unusable. */
    if (!in->every && !d->views[r].usable)
        return true;
    /* Above the GPU's own <pci>, a rank fills only link_speed/link_width/arch: probed once. */
    const rank_view *v = &d->views[r];
    bool shared = e != v->gpu && e != v->gpu_pci && e->parent != v->gpu;
    fill_probe probe = {.elem = e, .changes = shared && in->link_fill < 0};
    if (!shared || !in->link_fill)
        fill_view(v, e, (attr_setter){probe_set, &probe}, NULL);
    if (shared)
        in->link_fill = probe.changes ? -1 : 1;
    if (!probe.changes)
        return true;
    if (in->only != (int)r)
        return false;
    in->writer = (int)r + 1;
    return true;
}

/* Every element a rank fills (fill_view): its PCI/CPU chain, its GPU and that GPU's NVLinks. */
static bool check_fills(direct_plan *d)
{
    for (size_t r = 0; r < d->n_ranks; r++) {
        const rank_view *v = &d->views[r];
        for (size_t k = 0; k < v->n_chain; k++)
            if (!check_filled(d, v->chain[k], r))
                return false;
        if (!v->usable)
            continue;
        if (!check_filled(d, v->gpu, r))
            return false;
        for (size_t k = 0; k < v->gpu->n_children; k++)
            if (filled_by_view(v, v->gpu->children[k]) && !check_filled(d, v->gpu->children[k], r))
                return false;
    }
    return true;
}

/* The element as no rank fills it: its attributes, a honoured keep mark dropped. */
static void base_attrs(const tp_xml_elem *e, attr_view *av)
{
    static const rank_view none = {.usable = false};
    view_attrs(&none, e, av);
}

/* The element as the fused tree has it. */
static void final_attrs(direct_plan *d, const tp_xml_elem *e, attr_view *av)
{
    int writer = info_of(d, e)->writer;
    if (writer)
        view_attrs(&d->views[writer - 1], e, av);
    else
        base_attrs(e, av);
}

static bool honoured_keep(const tp_xml_attr *a)
{
    return tp_xml__same_text(a->name, "keep") && tp_xml__same_text(a->value, "1");
}

/* Two elements no rank writes on: whether they read the same (fusion_match). */
static bool same_unwritten(const tp_xml_elem *a, const tp_xml_elem *b)
{
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < a->n_attrs; i++) {
        const tp_xml_attr *at = &a->attrs[i];
        if (honoured_keep(at))
            continue;
        /* Usually at the same place (siblings of a kind list their attributes alike). */
        int k = i < b->n_attrs && tp_xml__attr_named(&b->attrs[i], at->name, at->name_len)
                    ? (int)i
                    : tp_xml__attr_index(b, at->name, at->name_len);
        const char *v = k < 0 ? NULL : b->attrs[k].value;
        if (!v || !tp_xml__same_text(v, at->value))
            return false;
        na++;
    }
    for (size_t i = 0; i < b->n_attrs; i++)
        nb += !honoured_keep(&b->attrs[i]);
    return na == nb;
}

/* xmlFindNode's match: same tag, as many attributes, each of a's in b with its value. */
static bool fusion_match(direct_plan *d, const tp_xml_elem *a, const tp_xml_elem *b)
{
    if (!tp_xml__name_eq(a->tag, b->tag))
        return false;
    if (!info_of(d, a)->writer && !info_of(d, b)->writer)
        return same_unwritten(a, b);
    attr_view va, vb;
    final_attrs(d, a, &va);
    final_attrs(d, b, &vb);
    if (va.n != vb.n)
        return false;
    for (size_t i = 0; i < va.n; i++) {
        int k = av_find(&vb, va.name[i]);
        if (k < 0 || !tp_xml__same_text(vb.value[k], va.value[i]))
            return false;
    }
    return true;
}

/* No two kept siblings that fusion would take for one, anywhere under e. */
static bool distinct_siblings(direct_plan *d, const tp_xml_elem *e)
{
    for (size_t i = 0; i < e->n_children; i++) {
        const tp_xml_elem *child = e->children[i];
        if (info_of(d, child)->first == d->n_ranks)
            continue;
        for (size_t k = 0; k < i; k++)
            if (info_of(d, e->children[k])->first < d->n_ranks &&
                fusion_match(d, e->children[k], child))
                return false;
        if (!distinct_siblings(d, child))
            return false;
    }
    return true;
}

/* The fused tree in place: trimmed-everywhere elements go, keep marks go, children reordered. */
static void shape_direct(direct_plan *d, tp_xml_elem *e)
{
    const char *k = tp_xml__attr(e, "keep");
    if (k && tp_xml__same_text(k, "1"))
        tp_xml__unset_attr(e, "keep"); /* ncclTopoTrimXml drops the marks it honours */
    size_t first[TP_XML_MAX_SUBS + 1], n = 0;
    for (size_t i = 0; i < e->n_children; i++) {
        tp_xml_elem *child = e->children[i];
        size_t r = info_of(d, child)->first;
        if (r == d->n_ranks) {
            child->parent = NULL;
            tp_xml__free_elem(child);
            continue;
        }
        /* Insertion by first rank, stable: document order within one rank. */
        size_t at = n;
        for (; at > 0 && first[at - 1] > r; at--) {
            e->children[at] = e->children[at - 1];
            first[at] = first[at - 1];
        }
        e->children[at] = child;
        first[at] = r;
        n++;
    }
    e->n_children = n;
    for (size_t i = 0; i < n; i++)
        shape_direct(d, e->children[i]);
}

/* The fusion of all ranks made on the document itself, when that is exact (*done). */
static tp_status fuse_direct(prep_ctx *c, const rank_view *views, size_t n_ranks, bool *done)
{
    direct_plan d = {.c = c, .views = views, .n_ranks = n_ranks};
    d.n_slots = count_elems(c->doc->root);
    /* Not cleared: add_all writes every record. */
    if (!(d.slots = tp_arena_alloc(&c->scratch, d.n_slots * sizeof(*d.slots))))
        return tp_fail_nomem(c->err);
    size_t next = 0;
    add_all(&d, c->doc->root, &next);
    mark_trimmed(&d);
    find_keepers(&d, c->doc->root, NULL);
    *done = check_fills(&d) && distinct_siblings(&d, c->doc->root);
    tp_status st = TP_OK;
    for (size_t i = 0; i < d.n_slots && st == TP_OK && *done; i++) {
        const elem_info *in = &d.slots[i];
        if (in->writer) {
            tp_xml_elem *e = (tp_xml_elem *)in->elem;
            st = fill_view(&views[in->writer - 1], e, (attr_setter){set_in_elem, e}, c->err);
        }
    }
    if (st == TP_OK && *done)
        shape_direct(&d, c->doc->root);
    return st;
}

/* ---- 6. the ranks ---- */

/* Rank by rank in the general case: the first rank's tree as is, later ones fused into it. */
static tp_status fuse_copies(prep_ctx *c, rank_view *views, size_t n_ranks)
{
    tp_xml_elem *fused = NULL;
    tp_status st = TP_OK;
    for (size_t i = 0; i < n_ranks && st == TP_OK; i++) {
        /* The second rank (the first fused one) is every later rank's reference (not in the
         * plain mode, the tests' reference). */
        views[i].ref = i >= 2 && !c->plain ? &views[1] : NULL;
        st = fused ? fuse_view(&views[i], fused, c->doc->root, true, c->err)
                   : materialize(&views[i], c->doc->root, NULL, &fused, c->err);
    }
    if (st != TP_OK) {
        tp_xml__free_elem(fused);
        return st;
    }
    tp_xml__free_elem(c->doc->root);
    c->doc->root = fused;
    return TP_OK;
}

/* Every rank's view (NCCL's per-rank checks and lines in rank order), then the fused tree. */
static tp_status fuse_ranks(prep_ctx *c, int first_rank, int report_rank)
{
    elem_list shared = {.arena = &c->scratch};
    c->shared_trim = &shared;
    rank_view *views = scratch_zalloc(c, c->n_gpus, sizeof(*views));
    tp_status st = views ? shared_trim(c, &shared) : TP_ERR_NOMEM;
    size_t n_ready = 0;
    for (; views && n_ready < c->n_gpus && st == TP_OK; n_ready++) {
        int rank = first_rank + (int)n_ready;
        st = check_canonical(c, c->gpus[n_ready]->parent);
        if (st == TP_OK)
            st = init_view(c, &views[n_ready], n_ready, rank, rank == report_rank);
    }
    bool done = false;
    if (st == TP_OK && c->n_gpus == 1 && !c->plain) {
        /* One rank: no fusion, its view is the document (plain mode copies it: the tests). */
        st = edit_to_view(&views[0], c->doc->root, c->err);
        done = true;
    }
    if (st == TP_OK && !done && !c->plain)
        st = fuse_direct(c, views, c->n_gpus, &done);
    if (st == TP_OK && !done)
        st = fuse_copies(c, views, c->n_gpus);
    return st;
}

/* The ibv port of net i: NCCL's IB plugin reports it plus the ports found before on its device. */
static int ibv_port(const elem_list *nets, size_t i)
{
    int before = 0;
    for (size_t j = 0; j < i; j++)
        before += nets->items[j]->parent == nets->items[i]->parent;
    const char *p = tp_xml__attr(nets->items[i], "port");
    int port = p ? (int)strtol(p, NULL, 0) : 1;
    return port - before >= 1 ? port - before : port;
}

/* 2.24+ (rule nic-fusion): the plugin's devices are those NCCL_IB_HCA selects, before they are
 * filled and fused; the others get no keep mark and go with the trim. None selected: the plugin
 * falls back to sockets, which the XML does not describe, so every device stays (netdev notes). */
static void select_hca(prep_ctx *c, elem_list *nets)
{
    const char *hca = c->import_nets ? tp_config_str(c->cfg, TP_P_IB_HCA) : NULL;
    if (!hca)
        return;
    tp_hca_filter f;
    tp_hca__parse(&f, hca);
    bool *take = scratch_zalloc(c, nets->count + 1, sizeof(*take));
    size_t n = 0;
    for (size_t i = 0; take && i < nets->count; i++)
        n += take[i] = tp_hca__selects(&f, tp_xml__attr(nets->items[i], "name"), ibv_port(nets, i));
    for (size_t i = 0, k = 0; n && i < nets->count; i++)
        if (take[i])
            nets->items[k++] = nets->items[i];
    if (n)
        nets->count = n;
}

/* NCCL 2.24 ncclTopoGetSystem / ncclTopoProcessNet with the IB plugin (its state is new in
 * each rank's process), then the plugin's devices filled in (and fused). */
static tp_status import_nets(prep_ctx *c, const elem_list *in_doc)
{
    if (c->import_nets) {
        tp_log_info_sub(&c->net_log, TP_SUB_GRAPH,
                        "TOPO/NET : Importing network plugins to topology");
        /* 2.30.7 no longer says how it found the IB plugin's state */
        bool state_lines =
            !tp_profile_has(tp_config__profile(c->cfg), TP_RULE_LOG_POPULATE_NICS_RAILS);
        if (state_lines)
            tp_log_info_sub(&c->net_log, TP_SUB_GRAPH, "Retrieving state for IB");
        if (state_lines && !c->pass.net_state_known) /* the process's first import */
            tp_log_info_sub(&c->net_log, TP_SUB_GRAPH, "Initialized state 0 for IB");
        /* 2.28 ncclTopoGetFusionEnv: the merge level is read before the devices are filled, in
         * the dump's pass too */
        if (tp_profile_has(tp_config__profile(c->cfg), TP_RULE_NET_FUSION_ENV_FIRST))
            (void)tp_system__vnic_merge_level(c->cfg, &c->net_log);
        (void)tp_system__vnic_rail_policy(c->cfg, &c->net_log);
    }
    return c->n_nets ? fill_nets(c, in_doc) : TP_OK;
}

static void append_log(tp_log *to, const tp_log *from)
{
    for (size_t i = 0; to && i < from->n_lines; i++) {
        const tp_log_line *l = &from->lines[i];
        if (l->level == TP_LOG_WARN)
            tp_log_warn(to, "%s", l->text);
        else
            tp_log_put_sub(to, l->sub, l->text);
    }
}

static tp_status prepare(prep_ctx *c, int first_rank, int report_rank)
{
    if (c->pass.net_devices)
        *c->pass.net_devices = -1;
    c->import_nets = c->cfg && tp_profile_has(tp_config__profile(c->cfg), TP_RULE_NIC_FUSION);
    c->net_log.enabled = c->import_nets && c->log && c->log->enabled;
    tp_arena *a = &c->scratch;
    tagged_lists all = {{.arena = a}, {.arena = a}, {.arena = a}};
    elem_list *pcis = &all.pcis, *gpus = &all.gpus, *nets = &all.nets, in_doc = {.arena = a};
    tp_status st = check_root(c);
    if (st == TP_OK && (st = collect(c->doc->root, &all, c->err)) == TP_OK && nets->count) {
        /* The NET order sorts nets: fill_nets also reads them in document order. */
        in_doc.items = scratch_zalloc(c, nets->count, sizeof(*in_doc.items));
        in_doc.count = in_doc.cap = nets->count;
        if (in_doc.items)
            memcpy(in_doc.items, nets->items, nets->count * sizeof(*in_doc.items));
        else
            st = TP_ERR_NOMEM;
    }
    if (st == TP_OK && (st = check_busids(c, pcis)) == TP_OK && (st = order_gpus(c, gpus)) == TP_OK)
        st = order_nets(c, nets);
    c->gpus = gpus->items;
    c->n_gpus = gpus->count;
    c->nets = nets->items;
    c->n_nets = nets->count;
    c->gdr_default = gdr_default(nets);
    if (st == TP_OK)
        select_hca(c, nets);
    c->n_nets = nets->count;
    if (st == TP_OK && c->n_gpus == 0)
        st = tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, c->doc->root, "no <gpu> element");
    if (st == TP_OK && (st = check_gpus(c)) == TP_OK && (st = import_nets(c, &in_doc)) == TP_OK)
        st = fuse_ranks(c, first_rank, report_rank);
    append_log(c->log, &c->net_log); /* each rank imports its NETs after filling its GPU */
    tp_log_clear(&c->net_log);
    tp_arena_free(a);
    return st;
}

tp_status tp_system__prepare_xml_log(tp_xml *doc, const tp_config *cfg, int first_rank,
                                     int report_rank, tp_log *log, tp_error *err)
{
    if (!doc || !doc->root)
        return tp_fail(err, TP_ERR_TOPOLOGY, doc ? doc->source : NULL, 0, 0, "empty topology");
    prep_ctx c = {.doc = doc, .log = log, .err = err, .cfg = cfg};
    return prepare(&c, first_rank, report_rank);
}

tp_status tp_system__prepare_xml_pass(tp_xml *doc, const tp_config *cfg, int first_rank,
                                      int report_rank, const tp_prep_pass *pass, tp_log *log,
                                      tp_error *err)
{
    if (!doc || !doc->root)
        return tp_fail(err, TP_ERR_TOPOLOGY, doc ? doc->source : NULL, 0, 0, "empty topology");
    prep_ctx c = {.doc = doc, .log = log, .err = err, .cfg = cfg, .pass = *pass};
    return prepare(&c, first_rank, report_rank);
}

tp_status tp_system__prepare_xml_physical(tp_xml *doc, const tp_config *cfg, int first_rank,
                                          tp_error *err)
{
    const tp_prep_pass dump = {.physical_nics = true};
    return tp_system__prepare_xml_pass(doc, cfg, first_rank, -1, &dump, NULL, err);
}

tp_status tp_system__prepare_xml_plain(tp_xml *doc, int first_rank, tp_error *err)
{
    if (!doc || !doc->root)
        return tp_fail(err, TP_ERR_TOPOLOGY, doc ? doc->source : NULL, 0, 0, "empty topology");
    prep_ctx c = {.doc = doc, .err = err, .plain = true};
    return prepare(&c, first_rank, -1);
}

tp_status tp_system__prepare_xml(tp_xml *doc, const tp_config *cfg, int first_rank, tp_error *err)
{
    return tp_system__prepare_xml_log(doc, cfg, first_rank, -1, NULL, err);
}
