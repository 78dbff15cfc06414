/*
 * topoplan complete: a partial provider topology filled in as NCCL 2.22.3
 * fills it at run time (xml.cc ncclTopoFillGpu/ncclTopoGetXmlFromGpu: <gpu>
 * and <nvlink> from NVML; ncclTopoGetXmlFromSys: CPU and PCI attributes from
 * sysfs; topo.cc ncclTopoFillNet: <nic><net> from the network plugin), with
 * the values a SKU file gives for what NCCL would read on that machine.
 *
 * The published text is never rewritten: additions are planned on the parsed
 * tree (each existing element collects the attributes and children it gains
 * in a detached "holder" element) and then spliced into the text at byte
 * offsets, so every published byte survives.
 */
#include "complete/complete.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The collapsed NVSwitch target NCCL dumps when the switches have no bus id. */
#define NVSWITCH_TARGET "fffffff:ff:ff.0"
#define NVSWITCH_TCLASS "0x068000"
#define GPU_TCLASS "0x030200"

typedef struct pending {
    tp_xml_elem *target; /* existing element (borrowed) */
    tp_xml_elem *holder; /* owned, detached: attributes and children to add */
} pending;

typedef struct edit {
    size_t at, del;
    char *text; /* owned */
    size_t seq;
} edit;

typedef struct gpu_slot {
    const char *busid;
    tp_xml_elem *pci; /* existing <pci>, or the new one (owned by a holder) */
    tp_xml_elem *gpu; /* existing <gpu> or NULL */
    int dev;
} gpu_slot;

typedef struct cctx {
    const char *source;
    const char *text;
    size_t len;
    const tp_sku *sku;
    const char *mode; /* NULL when the SKU has no modes */
    const tp_complete_options *opts;
    tp_pv_file file;
    pending *pend;
    size_t n_pend, cap_pend;
    gpu_slot *gpus;
    size_t n_gpus, cap_gpus;
    tp_completion *out;
    tp_error *err;
    tp_status st;
} cctx;

/* ---- additions record ---- */

static void note(cctx *c, const char *element, const char *added, const char *reason)
{
    tp_completion *o = c->out;
    if (c->st != TP_OK)
        return;
    if ((c->st = tp_grow((void **)&o->adds, &o->cap_adds, o->n_adds + 1, sizeof(*o->adds),
                         c->err)) != TP_OK)
        return;
    tp_completion_add *a = &o->adds[o->n_adds];
    a->element = strdup(element);
    a->added = strdup(added);
    a->reason = strdup(reason ? reason : "");
    o->n_adds++;
    if (!a->element || !a->added || !a->reason)
        c->st = tp_fail_nomem(c->err);
}

static void note_left(cctx *c, const char *fmt, ...) TP_PRINTF(2, 3);
static void note_left(cctx *c, const char *fmt, ...)
{
    tp_completion *o = c->out;
    if (c->st != TP_OK || (c->st = tp_grow((void **)&o->notes, &o->cap_notes, o->n_notes + 1,
                                           sizeof(*o->notes), c->err)) != TP_OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&o->notes[o->n_notes], fmt, ap) < 0)
        c->st = tp_fail_nomem(c->err);
    else
        o->n_notes++;
    va_end(ap);
}

/* What the fill leaves alone, so the user knows it was not forgotten. */
static void note_unfilled(cctx *c)
{
    for (size_t i = 0; i < c->file.n_pci && c->st == TP_OK; i++) {
        const tp_pv_pci *p = &c->file.pci[i];
        if (p->role == TP_PV_OTHER && !tp_xml__attr(p->e, "class"))
            note_left(c,
                      "pci %s: left as published: no class, and not a GPU, NIC or switch "
                      "of the %s layout (NCCL reads its class from sysfs)",
                      p->busid, c->sku->name);
    }
    long long want = tp_sku__get_int(c->sku, NULL, "gpu.count", 0);
    if (want > 0 && (long long)c->n_gpus != want)
        note_left(c,
                  "the file has %zu GPU%s, %s has %lld: the others are not in the file "
                  "and not where the SKU places missing ones",
                  c->n_gpus, c->n_gpus == 1 ? "" : "s", c->sku->name, want);
}

static const char *why(const cctx *c, const char *key)
{
    const char *v = tp_sku__get(c->sku, NULL, key);
    return v ? v : "";
}

/* ---- holders ---- */

static tp_xml_elem *holder_for(cctx *c, tp_xml_elem *target)
{
    for (size_t i = 0; i < c->n_pend; i++)
        if (c->pend[i].target == target)
            return c->pend[i].holder;
    if (c->st != TP_OK || (c->st = tp_grow((void **)&c->pend, &c->cap_pend, c->n_pend + 1,
                                           sizeof(*c->pend), c->err)) != TP_OK)
        return NULL;
    tp_xml_elem *h = NULL;
    if ((c->st = tp_xml__add_child(&h, NULL, target->tag, c->err)) != TP_OK)
        return NULL;
    c->pend[c->n_pend++] = (pending){target, h};
    return h;
}

/* A new element appended to parent (a holder or a new element). */
static tp_xml_elem *new_child(cctx *c, tp_xml_elem *parent, const char *tag)
{
    tp_xml_elem *e = NULL;
    if (c->st == TP_OK && parent)
        c->st = tp_xml__add_child(&e, parent, tag, c->err);
    return c->st == TP_OK ? e : NULL;
}

static void set(cctx *c, tp_xml_elem *e, const char *name, const char *value)
{
    if (c->st == TP_OK && e)
        c->st = tp_xml__set_attr(e, name, value, c->err);
}

static void set_int(cctx *c, tp_xml_elem *e, const char *name, long long v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", v);
    set(c, e, name, buf);
}

/* " a=\"1\" b=\"2\"" of an element's attributes. */
static void attrs_text(tp_buf *b, const tp_xml_elem *e)
{
    for (size_t i = 0; i < e->n_attrs; i++)
        tp_buf_printf(b, " %s=\"%s\"", e->attrs[i].name, e->attrs[i].value);
}

/*
 * Add the SKU's attributes `prefix`<name> (in SKU order) that e lacks, and
 * record them with the reason key.
 */
static void add_missing_attrs(cctx *c, tp_xml_elem *e, const char *prefix, const char *what,
                              const char *reason)
{
    tp_xml_elem *h = NULL;
    size_t plen = strlen(prefix);
    for (size_t i = 0; i < c->sku->n_entries && c->st == TP_OK; i++) {
        const tp_sku_entry *s = &c->sku->entries[i];
        if (strncmp(s->key, prefix, plen) != 0 || strchr(s->key + plen, '.'))
            continue;
        if (tp_xml__attr(e, s->key + plen))
            continue;
        if (!h && !(h = holder_for(c, e)))
            return;
        if (!tp_xml__attr(h, s->key + plen))
            set(c, h, s->key + plen, s->value);
    }
    if (h && h->n_attrs && c->st == TP_OK) {
        tp_buf b = {0};
        attrs_text(&b, h);
        note(c, what, b.failed ? "" : tp_buf_str(&b) + 1, reason);
        tp_buf_free(&b);
    }
}

static void element_name(char *buf, size_t size, const tp_xml_elem *e)
{
    const char *busid = tp_xml__attr(e, "busid");
    const char *numa = tp_xml__attr(e, "numaid");
    if (busid)
        snprintf(buf, size, "%s %s", e->tag, busid);
    else if (numa)
        snprintf(buf, size, "%s numaid=%s", e->tag, numa);
    else
        snprintf(buf, size, "%s", e->tag);
}

/* ---- CPUs and PCI attributes (sysfs) ---- */

static void fill_cpus(cctx *c)
{
    for (size_t i = 0; i < c->file.n_cpus && c->st == TP_OK; i++) {
        tp_xml_elem *cpu = c->file.cpus[i];
        const char *numa = tp_xml__attr(cpu, "numaid");
        char key[64], name[80];
        snprintf(key, sizeof(key), "cpu.affinity.%s", numa ? numa : "");
        const char *aff = tp_sku__get(c->sku, NULL, key);
        tp_xml_elem *h = NULL;
        if (aff && !tp_xml__attr(cpu, "affinity") && (h = holder_for(c, cpu)))
            set(c, h, "affinity", aff);
        element_name(name, sizeof(name), cpu);
        add_missing_attrs(c, cpu, "cpu.", name, why(c, "why.cpu"));
    }
}

/*
 * A <pci> with its class and link attributes was written by an NCCL dump (or
 * copied from one): what it lacks, sysfs did not give. Only bare elements,
 * which the provider left for NCCL to fill, get the SKU's PCI values.
 */
static bool bare_pci(const tp_xml_elem *e)
{
    return !tp_xml__attr(e, "class") || !tp_xml__attr(e, "link_speed") ||
           !tp_xml__attr(e, "link_width");
}

static void fill_pci_attrs(cctx *c)
{
    for (size_t i = 0; i < c->file.n_pci && c->st == TP_OK; i++) {
        tp_pv_pci *p = &c->file.pci[i];
        if (!bare_pci(p->e))
            continue;
        const char *prefix = p->role == TP_PV_GPU      ? "gpu.pci."
                             : p->role == TP_PV_NIC    ? "nic.pci."
                             : p->role == TP_PV_SWITCH ? "switch.pci."
                                                       : NULL;
        if (!prefix)
            continue;
        char name[80], reason[32];
        element_name(name, sizeof(name), p->e);
        snprintf(reason, sizeof(reason), "why.%spci",
                 p->role == TP_PV_GPU   ? "gpu."
                 : p->role == TP_PV_NIC ? "nic."
                                        : "switch.");
        add_missing_attrs(c, p->e, prefix, name, why(c, reason));
    }
}

/* ---- GPUs (NVML) ---- */

static void add_slot(cctx *c, const char *busid, tp_xml_elem *pci, tp_xml_elem *gpu)
{
    if (c->st != TP_OK || (c->st = tp_grow((void **)&c->gpus, &c->cap_gpus, c->n_gpus + 1,
                                           sizeof(*c->gpus), c->err)) != TP_OK)
        return;
    c->gpus[c->n_gpus++] = (gpu_slot){busid, pci, gpu, -1};
}

static tp_xml_elem *find_pci(const cctx *c, const char *busid)
{
    for (size_t i = 0; i < c->file.n_pci; i++)
        if (strcasecmp(c->file.pci[i].busid, busid) == 0)
            return c->file.pci[i].e;
    return NULL;
}

/* GPU endpoints the file leaves out, where the SKU says they sit (gpu.parents). */
static void add_missing_gpus(cctx *c, size_t have)
{
    size_t want = (size_t)tp_sku__get_int(c->sku, NULL, "gpu.count", 0);
    size_t n = tp_sku__list_len(c->sku, "gpu.parents");
    for (size_t i = 0; i < n && have < want && c->st == TP_OK; i++) {
        char busid[32], parent[32];
        tp_sku__list_word(c->sku, "gpu.busids", i, busid, sizeof(busid));
        tp_sku__list_word(c->sku, "gpu.parents", i, parent, sizeof(parent));
        tp_xml_elem *up = find_pci(c, parent);
        if (!*busid || find_pci(c, busid) || !up)
            continue;
        tp_xml_elem *pci = new_child(c, holder_for(c, up), "pci");
        set(c, pci, "busid", busid);
        for (size_t k = 0; k < c->sku->n_entries && c->st == TP_OK; k++)
            if (strncmp(c->sku->entries[k].key, "gpu.pci.", 8) == 0)
                set(c, pci, c->sku->entries[k].key + 8, c->sku->entries[k].value);
        if (c->st != TP_OK)
            return;
        tp_buf b = {0}, r = {0};
        attrs_text(&b, pci);
        tp_buf_printf(&r, "the file leaves this GPU out; %s", why(c, "why.gpu.pci"));
        char where[80];
        snprintf(where, sizeof(where), "pci %s", parent);
        char *added = NULL;
        if (!b.failed && (added = malloc(b.len + 8)))
            snprintf(added, b.len + 8, "<pci%s>", tp_buf_str(&b));
        note(c, where, added ? added : "<pci>", r.failed ? "" : tp_buf_str(&r));
        free(added);
        tp_buf_free(&b);
        tp_buf_free(&r);
        add_slot(c, pci ? tp_xml__attr(pci, "busid") : "", pci, NULL);
        have++;
    }
}

static int cmp_slot(const void *a, const void *b)
{
    return strcasecmp(((const gpu_slot *)a)->busid, ((const gpu_slot *)b)->busid);
}

static void collect_gpus(cctx *c)
{
    for (size_t i = 0; i < c->file.n_pci && c->st == TP_OK; i++)
        if (c->file.pci[i].role == TP_PV_GPU && !tp_xml__child(c->file.pci[i].e, "pci"))
            add_slot(c, c->file.pci[i].busid, c->file.pci[i].e,
                     tp_xml__child(c->file.pci[i].e, "gpu"));
    add_missing_gpus(c, c->n_gpus);
    if (c->st != TP_OK)
        return;
    /* dev = CUDA/NVML index = PCI bus order; a published dev is kept. */
    if (c->n_gpus > 1)
        qsort(c->gpus, c->n_gpus, sizeof(*c->gpus), cmp_slot);
    for (size_t i = 0; i < c->n_gpus; i++) {
        const char *dev = c->gpus[i].gpu ? tp_xml__attr(c->gpus[i].gpu, "dev") : NULL;
        c->gpus[i].dev = dev ? atoi(dev) : (int)i;
    }
}

static long long gpu_sm(const cctx *c)
{
    return c->opts->sm > 0 ? c->opts->sm : tp_sku__get_int(c->sku, NULL, "gpu.sm", 0);
}

static long long gdr_value(const cctx *c, const char *key)
{
    if (c->opts->gdr == TP_COMPLETE_GDR_ON)
        return 1;
    if (c->opts->gdr == TP_COMPLETE_GDR_OFF)
        return 0;
    return tp_sku__get_int(c->sku, c->mode, key, 0);
}

/* The first `n` PCI domains no bus id of the file (or added GPU) uses, from 1. */
static bool domain_used(const cctx *c, unsigned d)
{
    for (size_t i = 0; i < c->file.n_pci; i++)
        if (strtoul(c->file.pci[i].busid, NULL, 16) == d)
            return true;
    for (size_t i = 0; i < c->n_gpus; i++)
        if (strtoul(c->gpus[i].busid, NULL, 16) == d)
            return true;
    return false;
}

static const char *busid_of_dev(const cctx *c, int dev)
{
    for (size_t i = 0; i < c->n_gpus; i++)
        if (c->gpus[i].dev == dev)
            return c->gpus[i].busid;
    return NULL;
}

static void add_nvlink(cctx *c, tp_xml_elem *gpu, const char *target, long long count,
                       const char *tclass)
{
    tp_xml_elem *l = new_child(c, gpu, "nvlink");
    set(c, l, "target", target);
    set_int(c, l, "count", count);
    set(c, l, "tclass", tclass);
}

static void nvlinks_mesh(cctx *c, tp_xml_elem *gpu, int dev)
{
    char key[48];
    snprintf(key, sizeof(key), "nvlink.mesh.%d", dev);
    size_t n = tp_sku__list_len(c->sku, key);
    for (size_t i = 0; i < n && c->st == TP_OK; i++) {
        char word[32];
        int peer = -1, count = 0;
        tp_sku__list_word(c->sku, key, i, word, sizeof(word));
        const char *target =
            sscanf(word, "%dx%d", &peer, &count) == 2 ? busid_of_dev(c, peer) : NULL;
        if (!target) {
            c->st = tp_fail(c->err, TP_ERR_CONFIG, c->sku->name, 0, 0,
                            "%s: \"%s\" names no GPU of the file", key, word);
            return;
        }
        add_nvlink(c, gpu, target, count, GPU_TCLASS);
    }
}

static void nvlinks_switch_domains(cctx *c, tp_xml_elem *gpu)
{
    size_t n = tp_sku__list_len(c->sku, "nvlink.switches");
    unsigned d = 1;
    for (size_t i = 0; i < n && c->st == TP_OK; i++, d++) {
        while (domain_used(c, d) && d < 0xffff)
            d++;
        char word[16], target[32];
        tp_sku__list_word(c->sku, "nvlink.switches", i, word, sizeof(word));
        snprintf(target, sizeof(target), "%04x:00:00.0", d);
        add_nvlink(c, gpu, target, atoll(word), NVSWITCH_TCLASS);
    }
}

/* The NVLinks NVML reports for one GPU, as NCCL dumps them. */
static void add_nvlinks(cctx *c, tp_xml_elem *gpu, int dev)
{
    const char *kind = tp_sku__get(c->sku, NULL, "nvlink");
    if (c->opts->nvlinks < 0 || !kind || strcmp(kind, "none") == 0)
        return;
    if (c->opts->nvlinks > 0 || strcmp(kind, "nvswitch") == 0) {
        long long n = c->opts->nvlinks > 0 ? c->opts->nvlinks
                                           : tp_sku__get_int(c->sku, NULL, "nvlink.count", 0);
        add_nvlink(c, gpu, NVSWITCH_TARGET, n, NVSWITCH_TCLASS);
    } else if (strcmp(kind, "nvswitch-domains") == 0) {
        nvlinks_switch_domains(c, gpu);
    } else if (strcmp(kind, "mesh") == 0) {
        nvlinks_mesh(c, gpu, dev);
    } else {
        c->st =
            tp_fail(c->err, TP_ERR_CONFIG, c->sku->name, 0, 0, "unknown nvlink kind \"%s\"", kind);
    }
}

static void note_children(cctx *c, const char *where, const tp_xml_elem *parent, size_t from,
                          const char *reason)
{
    for (size_t i = from; i < parent->n_children && c->st == TP_OK; i++) {
        tp_buf b = {0};
        tp_buf_printf(&b, "<%s", parent->children[i]->tag);
        attrs_text(&b, parent->children[i]);
        tp_buf_put(&b, "/>");
        note(c, where, b.failed ? "" : tp_buf_str(&b), reason);
        tp_buf_free(&b);
    }
}

static void fill_one_gpu(cctx *c, gpu_slot *g)
{
    char where[80];
    snprintf(where, sizeof(where), "pci %s", g->busid);
    bool is_new = g->pci->line == 0;
    tp_xml_elem *gpu = g->gpu;
    tp_xml_elem *h = gpu ? holder_for(c, gpu) : NULL;
    if (!gpu) {
        gpu = new_child(c, is_new ? g->pci : holder_for(c, g->pci), "gpu");
        h = gpu;
    }
    if (!h)
        return;
    size_t attrs_before = h->n_attrs;
    if (!tp_xml__attr(g->gpu ? g->gpu : gpu, "dev"))
        set_int(c, h, "dev", g->dev);
    if (!g->gpu || !tp_xml__attr(g->gpu, "sm"))
        set_int(c, h, "sm", gpu_sm(c));
    if (!g->gpu || !tp_xml__attr(g->gpu, "rank"))
        set_int(c, h, "rank", g->dev);
    if (!g->gpu || !tp_xml__attr(g->gpu, "gdr"))
        set_int(c, h, "gdr", gdr_value(c, "gpu.gdr"));
    if (c->st == TP_OK && h->n_attrs > attrs_before) {
        tp_buf b = {0};
        tp_buf_put(&b, g->gpu ? "" : "<gpu");
        attrs_text(&b, h);
        tp_buf_put(&b, g->gpu ? "" : ">");
        note(c, where, b.failed ? "" : tp_buf_str(&b) + (g->gpu != NULL), why(c, "why.gpu"));
        tp_buf_free(&b);
    }
    if (g->gpu && tp_xml__child(g->gpu, "nvlink"))
        return; /* NCCL asks NVML only for GPUs without <nvlink> */
    size_t before = h->n_children;
    add_nvlinks(c, h, g->dev);
    note_children(c, where, h, before, why(c, "why.nvlink"));
}

static void fill_gpus(cctx *c)
{
    collect_gpus(c);
    if (c->st == TP_OK && c->n_gpus == 0)
        c->st = tp_fail(c->err, TP_ERR_TOPOLOGY, c->source, 0, 0,
                        "no GPU endpoint of %s in the file (its GPU bus ids: %s), and nowhere "
                        "the SKU places missing ones: is it this machine?",
                        c->sku->name, why(c, "gpu.busids"));
    for (size_t i = 0; i < c->n_gpus && c->st == TP_OK; i++)
        fill_one_gpu(c, &c->gpus[i]);
}

/* ---- NICs (the network plugin) ---- */

typedef struct nic_ref {
    tp_pv_pci *p;
} nic_ref;

static int cmp_nic(const void *a, const void *b)
{
    return strcasecmp(((const nic_ref *)a)->p->busid, ((const nic_ref *)b)->p->busid);
}

static void net_name(const cctx *c, const char *busid, int dev, char *buf, size_t size)
{
    const char *tmpl = tp_sku__get(c->sku, c->mode, "net.name");
    unsigned dom = 0, bus = 0, slot = 0, fn = 0;
    sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &slot, &fn);
    if (tmpl && strcmp(tmpl, "list") == 0) {
        tp_sku__list_word(c->sku, "net.names", (size_t)dev, buf, size);
        if (!*buf)
            snprintf(buf, size, "net%d", dev);
        return;
    }
    size_t used = 0;
    for (const char *p = tmpl ? tmpl : "net{dev}"; *p && used + 1 < size;) {
        int n = 0;
        if (strncmp(p, "{bus}", 5) == 0)
            n = snprintf(buf + used, size - used, "%u", bus), p += 5;
        else if (strncmp(p, "{slot}", 6) == 0)
            n = snprintf(buf + used, size - used, "%u", slot), p += 6;
        else if (strncmp(p, "{dev}", 5) == 0)
            n = snprintf(buf + used, size - used, "%d", dev), p += 5;
        else
            buf[used] = *p++, n = 1;
        used += n > 0 ? (size_t)n : 0;
        if (used >= size)
            used = size - 1;
    }
    buf[used] = '\0';
}

static void add_net(cctx *c, tp_pv_pci *p, int dev, long long rails)
{
    tp_xml_elem *nic = tp_xml__child(p->e, "nic");
    tp_xml_elem *parent = nic ? holder_for(c, nic) : new_child(c, holder_for(c, p->e), "nic");
    tp_xml_elem *net = new_child(c, parent, "net");
    char name[64], guid[32];
    long long speed = c->opts->nic_speed > 0 ? c->opts->nic_speed
                                             : tp_sku__get_int(c->sku, c->mode, "net.speed", 0);
    unsigned long long base = (unsigned long long)tp_sku__get_int(c->sku, c->mode, "net.guid", 0);
    net_name(c, p->busid, dev, name, sizeof(name));
    snprintf(guid, sizeof(guid), "0x%llx", base + (unsigned long long)dev);
    set(c, net, "name", name);
    set_int(c, net, "dev", dev);
    set_int(c, net, "speed", speed * rails);
    set_int(c, net, "port", tp_sku__get_int(c->sku, c->mode, "net.port", 1));
    const char *lat = tp_sku__get(c->sku, c->mode, "net.latency");
    set(c, net, "latency", lat ? lat : "0.000000");
    set(c, net, "guid", guid);
    set_int(c, net, "maxconn", tp_sku__get_int(c->sku, c->mode, "net.maxconn", 0));
    set_int(c, net, "gdr", gdr_value(c, "net.gdr"));
    if (c->st != TP_OK)
        return;
    char where[80], mode_key[64];
    tp_buf b = {0}, r = {0};
    snprintf(where, sizeof(where), "pci %s", p->busid);
    tp_buf_put(&b, nic ? "<net" : "<nic><net");
    attrs_text(&b, net);
    tp_buf_put(&b, nic ? "/>" : "/></nic>");
    snprintf(mode_key, sizeof(mode_key), "why.mode.%s", c->mode ? c->mode : "");
    tp_buf_printf(&r, "%s%s%s", why(c, "why.net"), c->mode ? "; " : "",
                  c->mode ? why(c, mode_key) : "");
    note(c, where, b.failed ? "" : tp_buf_str(&b), r.failed ? "" : tp_buf_str(&r));
    tp_buf_free(&b);
    tp_buf_free(&r);
}

static void fill_nets(cctx *c)
{
    nic_ref *nics = calloc(c->file.n_pci + 1, sizeof(*nics));
    if (!nics) {
        c->st = tp_fail_nomem(c->err);
        return;
    }
    size_t n = 0;
    bool any_net = false;
    for (size_t i = 0; i < c->file.n_pci; i++) {
        if (c->file.pci[i].role != TP_PV_NIC)
            continue;
        any_net |= tp_pv__has_net(c->file.pci[i].e);
        nics[n++].p = &c->file.pci[i];
    }
    /* The plugin lists every NIC: a file that already has nets was filled by it. */
    if (!any_net) {
        if (n > 1)
            qsort(nics, n, sizeof(*nics), cmp_nic);
        long long rails = tp_sku__get_int(c->sku, c->mode, "net.rails", 1);
        int dev = 0;
        size_t in_group = 0;
        for (size_t i = 0; i < n && c->st == TP_OK; i++) {
            /* Multi-rail plugins make one device of `rails` NICs behind one switch. */
            if (i > 0 && nics[i].p->e->parent != nics[i - 1].p->e->parent)
                in_group = 0;
            if (rails <= 1 || in_group % (size_t)rails == 0)
                add_net(c, nics[i].p, dev++, rails > 1 ? rails : 1);
            in_group++;
        }
    }
    free(nics);
}

/* ---- splicing the additions into the text ---- */

typedef struct edit_list {
    edit *v;
    size_t n, cap;
} edit_list;

/* Replace `del` bytes at `at` by text; edits at one offset apply in the order made. */
static void add_edit(cctx *c, edit_list *el, size_t at, size_t del, const char *text)
{
    if (c->st != TP_OK)
        return;
    if ((c->st = tp_grow((void **)&el->v, &el->cap, el->n + 1, sizeof(*el->v), c->err)) != TP_OK)
        return;
    char *copy = strdup(text);
    if (!copy) {
        c->st = tp_fail_nomem(c->err);
        return;
    }
    el->v[el->n] = (edit){at, del, copy, el->n};
    el->n++;
}

static void escape_into(tp_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            tp_buf_put(b, "&amp;");
            break;
        case '<':
            tp_buf_put(b, "&lt;");
            break;
        case '"':
            tp_buf_put(b, "&quot;");
            break;
        default:
            tp_buf_printf(b, "%c", *s);
        }
    }
}

static void attrs_escaped(tp_buf *b, const tp_xml_elem *e)
{
    for (size_t i = 0; i < e->n_attrs; i++) {
        tp_buf_printf(b, " %s=\"", e->attrs[i].name);
        escape_into(b, e->attrs[i].value);
        tp_buf_put(b, "\"");
    }
}

/* A new element at `indent`, in NCCL's dump form (two spaces per level). */
static void serialize(tp_buf *b, const tp_xml_elem *e, const char *indent)
{
    tp_buf_printf(b, "%s<%s", indent, e->tag);
    attrs_escaped(b, e);
    if (!e->n_children) {
        tp_buf_put(b, "/>");
        return;
    }
    tp_buf_put(b, ">\n");
    char inner[128];
    snprintf(inner, sizeof(inner), "%s  ", indent);
    for (size_t i = 0; i < e->n_children; i++) {
        serialize(b, e->children[i], inner);
        tp_buf_put(b, "\n");
    }
    tp_buf_printf(b, "%s</%s>", indent, e->tag);
}

/* Leading whitespace of the line holding offset `at` (copied into buf). */
static void line_indent(const cctx *c, size_t at, char *buf, size_t size)
{
    size_t ls = at;
    while (ls > 0 && c->text[ls - 1] != '\n')
        ls--;
    size_t n = 0;
    while (ls + n < at && (c->text[ls + n] == ' ' || c->text[ls + n] == '\t') && n + 1 < size)
        n++;
    memcpy(buf, c->text + ls, n);
    buf[n] = '\0';
}

static bool starts_line(const cctx *c, size_t at)
{
    while (at > 0 && (c->text[at - 1] == ' ' || c->text[at - 1] == '\t'))
        at--;
    return at == 0 || c->text[at - 1] == '\n';
}

static void child_indent(const cctx *c, const tp_xml_elem *e, char *buf, size_t size)
{
    for (size_t i = 0; i < e->n_children; i++) {
        const tp_xml_elem *k = e->children[i];
        if (k->line && starts_line(c, k->src_start)) {
            line_indent(c, k->src_start, buf, size);
            return;
        }
    }
    char own[96];
    line_indent(c, e->src_start, own, sizeof(own));
    snprintf(buf, size, "%s  ", own);
}

/* Offset just after the last attribute of a start tag. */
static size_t attr_end(const cctx *c, const tp_xml_elem *e)
{
    size_t p = e->src_start + e->src_tag_len - 1; /* the '>' */
    if (e->self_closing && p > e->src_start && c->text[p - 1] == '/')
        p--;
    while (p > e->src_start && isspace((unsigned char)c->text[p - 1]))
        p--;
    return p;
}

/* After a self-closing tag: the end of its line when only blanks and comments follow. */
static size_t after_tag_line(const cctx *c, size_t q)
{
    size_t start = q;
    while (q < c->len) {
        if (c->text[q] == ' ' || c->text[q] == '\t') {
            q++;
        } else if (strncmp(c->text + q, "<!--", 4) == 0) {
            const char *end = strstr(c->text + q + 4, "-->");
            if (!end)
                return start;
            q = (size_t)(end - c->text) + 3;
        } else {
            break;
        }
    }
    return q < c->len && (c->text[q] == '\n' || c->text[q] == '\r') ? q : start;
}

static void children_edits(cctx *c, edit_list *el, const pending *p)
{
    const tp_xml_elem *e = p->target;
    char own[96], inner[128];
    line_indent(c, e->src_start, own, sizeof(own));
    child_indent(c, e, inner, sizeof(inner));
    tp_buf b = {0};
    if (e->self_closing) {
        size_t tag_end = e->src_start + e->src_tag_len;
        add_edit(c, el, tag_end - 2, 1, ""); /* "/>" -> ">" */
        for (size_t i = 0; i < p->holder->n_children; i++) {
            tp_buf_put(&b, "\n");
            serialize(&b, p->holder->children[i], inner);
        }
        tp_buf_printf(&b, "\n%s</%s>", own, e->tag);
        add_edit(c, el, after_tag_line(c, tag_end), 0, b.failed ? "" : tp_buf_str(&b));
    } else if (starts_line(c, e->src_close)) {
        size_t ls = e->src_close;
        while (ls > 0 && c->text[ls - 1] != '\n')
            ls--;
        for (size_t i = 0; i < p->holder->n_children; i++) {
            serialize(&b, p->holder->children[i], inner);
            tp_buf_put(&b, "\n");
        }
        add_edit(c, el, ls, 0, b.failed ? "" : tp_buf_str(&b));
    } else {
        for (size_t i = 0; i < p->holder->n_children; i++) {
            tp_buf_put(&b, "\n");
            serialize(&b, p->holder->children[i], inner);
        }
        tp_buf_printf(&b, "\n%s", own);
        add_edit(c, el, e->src_close, 0, b.failed ? "" : tp_buf_str(&b));
    }
    if (b.failed && c->st == TP_OK)
        c->st = tp_fail_nomem(c->err);
    tp_buf_free(&b);
}

static void pending_edits(cctx *c, edit_list *el)
{
    for (size_t i = 0; i < c->n_pend && c->st == TP_OK; i++) {
        const pending *p = &c->pend[i];
        if (p->holder->n_attrs) {
            tp_buf b = {0};
            attrs_escaped(&b, p->holder);
            add_edit(c, el, attr_end(c, p->target), 0, b.failed ? "" : tp_buf_str(&b));
            tp_buf_free(&b);
        }
        if (p->holder->n_children)
            children_edits(c, el, p);
    }
}

/* Comment text cannot hold "--". */
static void comment_put(tp_buf *b, const char *s)
{
    for (; *s; s++)
        tp_buf_printf(b, "%c", (*s == '-' && s[1] == '-') ? '~' : *s);
}

/* What the completed file leaves out of the published text's start (NCCL's reader refuses both). */
typedef struct dropped_start {
    bool bom;  /* a UTF-8 byte order mark */
    bool decl; /* an <?xml ...?> declaration */
} dropped_start;

static void header_comment(cctx *c, tp_buf *b, dropped_start dropped)
{
    const tp_completion *o = c->out;
    tp_buf_printf(b,
                  "<!--\n  COMPLETED NCCL topology, written by topoplan complete (SKU %s%s%s)"
                  "\n  from a partial provider file.\n  Machine: ",
                  o->sku, *o->mode ? ", plugin mode " : "", o->mode);
    comment_put(b, why(c, "title"));
    tp_buf_put(b, "\n  What NCCL 2.22.3 would add at run time (NVML, sysfs, the network plugin),"
                  "\n  in the form of its NCCL_TOPO_DUMP_FILE; nothing published was changed");
    if (dropped.bom || dropped.decl)
        tp_buf_printf(b,
                      "\n  but the %s%s%s, which NCCL 2.22.3's own reader"
                      "\n  refuses (xml.cc):\n",
                      dropped.bom ? "UTF-8 byte order mark" : "",
                      dropped.bom && dropped.decl ? " and " : "",
                      dropped.decl ? "<?xml ...?> declaration" : "");
    else
        tp_buf_put(b, ":\n");
    /* Grouped by reason, in the order reasons first appear. */
    for (size_t i = 0; i < o->n_adds; i++) {
        if (tp_completion__first_with_reason(o, i) != i)
            continue;
        tp_buf_put(b, "    * ");
        comment_put(b, o->adds[i].reason);
        tp_buf_put(b, ":\n");
        for (size_t k = i; k < o->n_adds; k++) {
            if (strcmp(o->adds[k].reason, o->adds[i].reason) != 0)
                continue;
            tp_buf_put(b, "        ");
            comment_put(b, o->adds[k].element);
            tp_buf_put(b, ": ");
            comment_put(b, o->adds[k].added);
            tp_buf_put(b, "\n");
        }
    }
    tp_buf_put(b, "-->");
}

static int cmp_edit(const void *a, const void *b)
{
    const edit *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The length of a UTF-8 byte order mark at the start (0 if none). */
static size_t bom_length(const char *text)
{
    return strncmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

/* The length of a leading <?xml ...?> declaration and its line end (0 if none). */
static size_t declaration_length(const char *text)
{
    const char *end = strncmp(text, "<?xml", 5) == 0 ? strstr(text, "?>") : NULL;
    if (!end)
        return 0;
    end += 2;
    end += strspn(end, "\r\n");
    return (size_t)(end - text);
}

static void splice(cctx *c)
{
    edit_list el = {0};
    tp_buf head = {0};
    /* The comment goes first: a byte order mark before it would stand inside the document. */
    size_t bom = bom_length(c->text), decl = declaration_length(c->text + bom);
    if (c->out->n_adds || bom + decl) {
        header_comment(c, &head, (dropped_start){.bom = bom > 0, .decl = decl > 0});
        tp_buf_put(&head, "\n");
        add_edit(c, &el, 0, bom + decl, head.failed ? "" : tp_buf_str(&head));
    }
    pending_edits(c, &el);
    tp_buf out = {0};
    if (c->st == TP_OK) {
        if (el.n > 1)
            qsort(el.v, el.n, sizeof(*el.v), cmp_edit);
        size_t pos = 0;
        for (size_t i = 0; i < el.n; i++) {
            tp_buf_printf(&out, "%.*s%s", (int)(el.v[i].at - pos), c->text + pos, el.v[i].text);
            pos = el.v[i].at + el.v[i].del;
        }
        tp_buf_printf(&out, "%.*s", (int)(c->len - pos), c->text + pos);
        if (out.failed || head.failed || !(c->out->xml = strdup(tp_buf_str(&out))))
            c->st = tp_fail_nomem(c->err);
    }
    for (size_t i = 0; i < el.n; i++)
        free(el.v[i].text);
    free(el.v);
    tp_buf_free(&out);
    tp_buf_free(&head);
}

/* ---- entry points ---- */

static tp_status resolve_sku(tp_sku **sku, const tp_xml *doc, const tp_complete_options *opts,
                             const char *source, tp_error *err)
{
    if (opts->sku)
        return tp_sku__load(sku, opts->sku, err);
    char name[64], cands[1024];
    tp_status st = tp_pv__recognise(doc, name, sizeof(name), cands, sizeof(cands), err);
    if (st != TP_OK)
        return st;
    if (!*name)
        return tp_fail(err, TP_ERR_CONFIG, source, 0, 0,
                       "cannot tell the machine from the file: %s; give --sku NAME "
                       "(`topoplan complete --list`)",
                       *cands ? cands : "no SKU of the catalogue fits");
    return tp_sku__load(sku, name, err);
}

static tp_status resolve_mode(const tp_sku *sku, const tp_complete_options *opts, const char **mode,
                              tp_error *err)
{
    *mode = tp_sku__get(sku, NULL, "mode");
    if (!opts->plugin_mode)
        return TP_OK;
    char prefix[96];
    snprintf(prefix, sizeof(prefix), "mode.%s.", opts->plugin_mode);
    for (size_t i = 0; i < sku->n_entries; i++)
        if (strncmp(sku->entries[i].key, prefix, strlen(prefix)) == 0) {
            *mode = opts->plugin_mode;
            return TP_OK;
        }
    return tp_fail(err, TP_ERR_CONFIG, "--plugin-mode", 0, 0, "SKU %s has no plugin mode \"%s\"",
                   sku->name, opts->plugin_mode);
}

static tp_status check_overrides(const tp_sku *sku, const tp_complete_options *opts, tp_error *err)
{
    const char *kind = tp_sku__get(sku, NULL, "nvlink");
    if (opts->nvlinks > 0 && kind && strcmp(kind, "mesh") == 0)
        return tp_fail(err, TP_ERR_CONFIG, "--nvlinks", 0, 0,
                       "SKU %s has GPU-to-GPU NVLinks (a mesh), not an NVSwitch fabric: "
                       "--nvlinks N applies to NVSwitch machines (0 removes the NVLinks)",
                       sku->name);
    return TP_OK;
}

static void run(cctx *c, const tp_xml *doc)
{
    if ((c->st = tp_pv__scan(&c->file, doc, c->sku, c->err)) != TP_OK)
        return;
    fill_cpus(c);
    fill_pci_attrs(c);
    fill_gpus(c);
    fill_nets(c);
    note_unfilled(c);
    if (c->st == TP_OK)
        splice(c);
}

static void cctx_free(cctx *c)
{
    for (size_t i = 0; i < c->n_pend; i++)
        tp_xml__free_elem(c->pend[i].holder);
    free(c->pend);
    free(c->gpus);
    tp_pv__free(&c->file);
}

tp_status tp_complete_buffer(tp_completion **out, const char *xml, size_t len, const char *source,
                             const tp_complete_options *opts, tp_error *err)
{
    if (!out || !xml)
        return tp_fail_arg(err, "tp_complete_buffer", !out ? "out is NULL" : "xml is NULL");
    *out = NULL;
    static const tp_complete_options none = {0};
    opts = opts ? opts : &none;
    tp_xml *doc = NULL;
    tp_sku *sku = NULL;
    const char *mode = NULL;
    tp_status st = tp_xml__parse(&doc, xml, len, source, err);
    if (st == TP_OK && strcmp(doc->root->tag, "system") != 0)
        st = tp_xml__fail(err, TP_ERR_TOPOLOGY, doc, doc->root, "expected <system>, got <%s>",
                          doc->root->tag);
    if (st == TP_OK && (st = resolve_sku(&sku, doc, opts, source, err)) == TP_OK &&
        (st = resolve_mode(sku, opts, &mode, err)) == TP_OK)
        st = check_overrides(sku, opts, err);
    tp_completion *o = st == TP_OK ? calloc(1, sizeof(*o)) : NULL;
    if (st == TP_OK && !o)
        st = tp_fail_nomem(err);
    if (st == TP_OK) {
        snprintf(o->sku, sizeof(o->sku), "%s", sku->name);
        snprintf(o->mode, sizeof(o->mode), "%s", mode ? mode : "");
        cctx c = {.source = source ? source : "<buffer>",
                  .text = xml,
                  .len = len,
                  .sku = sku,
                  .mode = mode,
                  .opts = opts,
                  .out = o,
                  .err = err,
                  .st = TP_OK};
        run(&c, doc);
        st = c.st;
        cctx_free(&c);
    }
    tp_sku__free(sku);
    tp_xml__free(doc);
    if (st != TP_OK) {
        tp_completion_free(o);
        return st;
    }
    *out = o;
    return TP_OK;
}
