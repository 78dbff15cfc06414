/*
 * Partial provider files and provider-file defects. Partial findings say what
 * NCCL 2.22.3 would fill at run time (and topoplan cannot see); lints are
 * defects NCCL itself does not report but that change its decisions.
 */
#include "provider/provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct lint_item {
    char *msg;
    int partial;
} lint_item;

struct tp_lints {
    char sku[64];
    char candidates[1024];
    lint_item *items;
    size_t n, cap;
};

typedef struct lctx {
    tp_lints *l;
    const tp_sku *sku; /* NULL when unknown */
    tp_pv_file f;
    tp_error *err;
    tp_status st;
} lctx;

static void add(lctx *c, int partial, tp_buf *b)
{
    if (c->st != TP_OK)
        return;
    if (b->failed) {
        c->st = tp_fail_nomem(c->err);
        return;
    }
    if ((c->st = tp_grow((void **)&c->l->items, &c->l->cap, c->l->n + 1, sizeof(*c->l->items),
                         c->err)) != TP_OK)
        return;
    char *msg = strdup(tp_buf_str(b));
    if (!msg) {
        c->st = tp_fail_nomem(c->err);
        return;
    }
    c->l->items[c->l->n++] = (lint_item){msg, partial};
}

/* " (a, b, c, ... n more)" for a list of bus ids. */
static void list_ids(tp_buf *b, const char *const *ids, size_t n)
{
    const size_t shown = 4;
    tp_buf_put(b, " (");
    for (size_t i = 0; i < n && i < shown; i++)
        tp_buf_printf(b, "%s%s", i ? ", " : "", ids[i]);
    if (n > shown)
        tp_buf_printf(b, ", ... %zu more", n - shown);
    tp_buf_put(b, ")");
}

static bool sku_has_nvlinks(const lctx *c)
{
    const char *kind = c->sku ? tp_sku__get(c->sku, NULL, "nvlink") : NULL;
    return kind && strcmp(kind, "none") != 0;
}

/* NVIDIA SXM/HGX parts (PCI device ids) whose NVML reports NVLinks. */
static bool nvlink_class_device(const char *device)
{
    static const char *const sxm[] = {"0x1db1", "0x1db5", "0x1db8", "0x20b0", "0x20b2",
                                      "0x20b3", "0x2330", "0x2335", "0x2901", "0x2324"};
    for (size_t i = 0; device && i < ARRAY_LEN(sxm); i++)
        if (strcasecmp(device, sxm[i]) == 0)
            return true;
    return false;
}

static void partial_gpus(lctx *c)
{
    const char **bare = calloc(c->f.n_pci + 1, sizeof(*bare));
    const char **no_nvl = calloc(c->f.n_pci + 1, sizeof(*no_nvl));
    size_t n_bare = 0, n_no_nvl = 0, n_gpu = 0;
    for (size_t i = 0; bare && no_nvl && i < c->f.n_pci; i++) {
        const tp_pv_pci *p = &c->f.pci[i];
        if (p->role != TP_PV_GPU || tp_xml__child(p->e, "pci"))
            continue;
        n_gpu++;
        const tp_xml_elem *gpu = tp_xml__child(p->e, "gpu");
        if (!gpu)
            bare[n_bare++] = p->busid;
        else if (!tp_xml__child(gpu, "nvlink") &&
                 (sku_has_nvlinks(c) || nvlink_class_device(tp_xml__attr(p->e, "device"))))
            no_nvl[n_no_nvl++] = p->busid;
    }
    tp_buf b = {0};
    if (!bare || !no_nvl) {
        c->st = tp_fail_nomem(c->err);
    } else if (n_gpu == 0) {
        tp_buf_put(&b, "no GPU in the file: NCCL adds each GPU it finds through CUDA/NVML, with "
                       "its PCI path from sysfs (xml.cc ncclTopoFillGpu); topoplan plans only "
                       "the GPUs the file has");
        add(c, 1, &b);
    }
    if (n_bare) {
        tp_buf_clear(&b);
        tp_buf_printf(&b, "%zu GPU endpoint%s without <gpu>", n_bare, n_bare == 1 ? "" : "s");
        list_ids(&b, bare, n_bare);
        tp_buf_put(&b, ": NCCL fills dev, sm, rank and gdr from NVML at run time "
                       "(ncclTopoGetXmlFromGpu), and their NVLinks");
        add(c, 1, &b);
    }
    if (n_no_nvl) {
        tp_buf_clear(&b);
        tp_buf_printf(&b, "%zu NVLink-class GPU%s without <nvlink>", n_no_nvl,
                      n_no_nvl == 1 ? "" : "s");
        list_ids(&b, no_nvl, n_no_nvl);
        tp_buf_put(&b, ": NCCL asks NVML for the NVLinks of a <gpu> that has none; as "
                       "written they plan as PCIe-only GPUs");
        add(c, 1, &b);
    }
    tp_buf_free(&b);
    free(bare);
    free(no_nvl);
}

static void partial_nics(lctx *c)
{
    size_t n_nic = 0, with_net = 0;
    for (size_t i = 0; i < c->f.n_pci; i++) {
        if (c->f.pci[i].role != TP_PV_NIC)
            continue;
        n_nic++;
        with_net += tp_pv__has_net(c->f.pci[i].e);
    }
    if (n_nic == 0 || with_net > 0)
        return;
    tp_buf b = {0};
    tp_buf_printf(&b,
                  "%zu NIC endpoint%s without <nic><net>: the network plugin reports "
                  "them at run time (topo.cc ncclTopoFillNet); as written the job has "
                  "no network",
                  n_nic, n_nic == 1 ? "" : "s");
    add(c, 1, &b);
    tp_buf_free(&b);
}

static void partial_attrs(lctx *c)
{
    size_t bare_pci = 0, bare_cpu = 0;
    for (size_t i = 0; i < c->f.n_pci; i++) {
        const tp_xml_elem *e = c->f.pci[i].e;
        bare_pci += !tp_xml__attr(e, "class") || !tp_xml__attr(e, "link_speed") ||
                    !tp_xml__attr(e, "link_width");
    }
    for (size_t i = 0; i < c->f.n_cpus; i++)
        bare_cpu += !tp_xml__attr(c->f.cpus[i], "arch") || !tp_xml__attr(c->f.cpus[i], "familyid");
    tp_buf b = {0};
    if (bare_pci) {
        tp_buf_printf(&b,
                      "%zu <pci> element%s without class or link attributes: NCCL reads "
                      "them from sysfs (ncclTopoGetXmlFromSys)",
                      bare_pci, bare_pci == 1 ? "" : "s");
        add(c, 1, &b);
    }
    if (bare_cpu) {
        tp_buf_clear(&b);
        tp_buf_printf(&b,
                      "%zu <cpu> without arch/vendor/familyid/modelid: NCCL takes the "
                      "CPUID of the machine it runs on",
                      bare_cpu);
        add(c, 1, &b);
    }
    tp_buf_free(&b);
}

/* NCCL 2.22.3 scans guid with "0x%lx": without the prefix the asic stays 0. */
static unsigned long long nccl_guid(const char *s)
{
    return s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? strtoull(s + 2, NULL, 16) : 0;
}

typedef struct net_ref {
    const tp_xml_elem *pci, *net;
    unsigned long long guid;
    long port;
} net_ref;

static void lint_guids(lctx *c)
{
    net_ref *nets = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < c->f.n_pci && c->st == TP_OK; i++) {
        const tp_xml_elem *nic = tp_xml__child(c->f.pci[i].e, "nic");
        for (size_t k = 0; nic && k < nic->n_children && c->st == TP_OK; k++) {
            const tp_xml_elem *net = nic->children[k];
            if (strcmp(net->tag, "net") != 0 ||
                (c->st = tp_grow((void **)&nets, &cap, n + 1, sizeof(*nets), c->err)) != TP_OK)
                continue;
            const char *port = tp_xml__attr(net, "port");
            nets[n++] = (net_ref){c->f.pci[i].e, net, nccl_guid(tp_xml__attr(net, "guid")),
                                  port ? strtol(port, NULL, 0) : 0};
        }
    }
    for (size_t i = 0; i < n && c->st == TP_OK; i++) {
        size_t same = 0, other_nics = 0, first = i;
        for (size_t k = 0; k < n; k++) {
            if (nets[k].guid != nets[i].guid || nets[k].port != nets[i].port)
                continue;
            first = k < first ? k : first;
            same++;
            other_nics += nets[k].pci != nets[i].pci;
        }
        if (first != i || other_nics == 0)
            continue;
        const char *raw = tp_xml__attr(nets[i].net, "guid");
        tp_buf b = {0};
        tp_buf_printf(&b,
                      "%zu <net> on distinct NICs share guid 0x%llx and port %ld (as NCCL "
                      "reads guid \"%s\" with 0x%%lx): NCCL counts them as ONE NIC port, "
                      "whose bandwidth they share in the search",
                      same, nets[i].guid, nets[i].port, raw ? raw : "");
        add(c, 0, &b);
        tp_buf_free(&b);
    }
    free(nets);
}

static void lint_self_nvlinks(lctx *c)
{
    for (size_t i = 0; i < c->f.n_pci && c->st == TP_OK; i++) {
        const tp_xml_elem *gpu = tp_xml__child(c->f.pci[i].e, "gpu");
        for (size_t k = 0; gpu && k < gpu->n_children; k++) {
            const tp_xml_elem *l = gpu->children[k];
            const char *target = tp_xml__attr(l, "target");
            if (strcmp(l->tag, "nvlink") != 0 || !target ||
                strcasecmp(target, c->f.pci[i].busid) != 0)
                continue;
            tp_buf b = {0};
            const char *count = tp_xml__attr(l, "count");
            tp_buf_printf(&b,
                          "line %u: GPU %s has an <nvlink> to itself (count %s), which "
                          "NCCL 2.22.3 takes without a word",
                          l->line, c->f.pci[i].busid, count ? count : "?");
            add(c, 0, &b);
            tp_buf_free(&b);
        }
    }
}

static void lint_sockets(lctx *c)
{
    long long sockets = c->sku ? tp_sku__get_int(c->sku, NULL, "sockets", 0) : 0;
    if (sockets < 2 || c->f.n_cpus != 1)
        return;
    tp_buf b = {0};
    tp_buf_printf(&b,
                  "one <cpu> for the %lld-socket %s: every device looks local to one "
                  "NUMA node, so NCCL sees no cross-socket (SYS) paths",
                  sockets, c->sku->name);
    add(c, 0, &b);
    tp_buf_free(&b);
}

/* Endpoints of one role whose bus id the SKU's layout gives to another role or none. */
static void lint_layout_role(lctx *c, tp_pv_role role, const char *key, const char *other_key,
                             const char *what, const char *other)
{
    if (!c->sku || !tp_sku__list_len(c->sku, key))
        return;
    /* The two lists looked up once: every endpoint is checked against them. */
    const char *layout = tp_sku__get(c->sku, NULL, key);
    const char *other_layout = tp_sku__get(c->sku, NULL, other_key);
    const char **off = calloc(c->f.n_pci + 1, sizeof(*off));
    size_t n_off = 0, n_swapped = 0;
    for (size_t i = 0; off && i < c->f.n_pci; i++) {
        const tp_pv_pci *p = &c->f.pci[i];
        if (p->role != role || !*p->busid || tp_xml__child(p->e, "pci") ||
            tp_sku__word_index(layout, p->busid) >= 0)
            continue;
        n_swapped += tp_sku__word_index(other_layout, p->busid) >= 0;
        off[n_off++] = p->busid;
    }
    if (n_off) {
        tp_buf b = {0};
        tp_buf_printf(&b, "%zu %s bus id%s off the %s layout", n_off, what, n_off == 1 ? "" : "s",
                      c->sku->name);
        list_ids(&b, off, n_off);
        if (n_swapped)
            tp_buf_printf(&b, ", %zu of them where the SKU has a %s", n_swapped, other);
        tp_buf_put(&b, ": NCCL matches the file to the machine by bus id, so these devices "
                       "are placed where the file says, not where they are");
        add(c, 0, &b);
        tp_buf_free(&b);
    }
    if (!off)
        c->st = tp_fail_nomem(c->err);
    free(off);
}

static tp_status resolve(lctx *c, const tp_xml *doc, const char *sku, tp_sku **owned)
{
    tp_status st;
    if (sku) {
        st = tp_sku__load(owned, sku, c->err);
    } else {
        st = tp_pv__recognise(doc, c->l->sku, sizeof(c->l->sku), c->l->candidates,
                              sizeof(c->l->candidates), c->err);
        if (st == TP_OK && *c->l->sku)
            st = tp_sku__load(owned, c->l->sku, c->err);
    }
    if (st == TP_OK && *owned)
        snprintf(c->l->sku, sizeof(c->l->sku), "%s", (*owned)->name);
    c->sku = *owned;
    return st;
}

tp_status tp_lint_buffer(tp_lints **out, const char *xml, size_t len, const char *source,
                         const char *sku, tp_error *err)
{
    if (!out || !xml)
        return tp_fail_arg(err, "tp_lint_buffer", !out ? "out is NULL" : "xml is NULL");
    *out = NULL;
    tp_xml *doc = NULL;
    tp_sku *owned = NULL;
    lctx c = {.l = calloc(1, sizeof(tp_lints)), .err = err, .st = TP_OK};
    if (!c.l)
        return tp_fail_nomem(err);
    c.st = tp_xml__parse(&doc, xml, len, source, err);
    if (c.st == TP_OK)
        c.st = resolve(&c, doc, sku, &owned);
    if (c.st == TP_OK)
        c.st = tp_pv__scan(&c.f, doc, c.sku, err);
    if (c.st == TP_OK) {
        partial_gpus(&c);
        partial_nics(&c);
        partial_attrs(&c);
        lint_guids(&c);
        lint_self_nvlinks(&c);
        lint_sockets(&c);
        lint_layout_role(&c, TP_PV_NIC, "nic.busids", "gpu.busids", "NIC", "GPU");
        lint_layout_role(&c, TP_PV_GPU, "gpu.busids", "nic.busids", "GPU", "NIC");
    }
    tp_pv__free(&c.f);
    tp_sku__free(owned);
    tp_xml__free(doc);
    if (c.st != TP_OK) {
        tp_lints_free(c.l);
        return c.st;
    }
    *out = c.l;
    return TP_OK;
}

tp_status tp_lint_file(tp_lints **out, const char *path, const char *sku, tp_error *err)
{
    if (!out || !path)
        return tp_fail_arg(err, "tp_lint_file", !out ? "out is NULL" : "path is NULL");
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st == TP_OK)
        st = tp_lint_buffer(out, text, len, path, sku, err);
    free(text);
    return st;
}

size_t tp_lints_count(const tp_lints *l)
{
    return l ? l->n : 0;
}

const char *tp_lints_message(const tp_lints *l, size_t i)
{
    return l && i < l->n ? l->items[i].msg : NULL;
}

int tp_lints_is_partial(const tp_lints *l, size_t i)
{
    return l && i < l->n ? l->items[i].partial : 0;
}

const char *tp_lints_sku(const tp_lints *l)
{
    return l ? l->sku : NULL;
}

const char *tp_lints_candidates(const tp_lints *l)
{
    return l ? l->candidates : NULL;
}

void tp_lints_free(tp_lints *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].msg);
    free(l->items);
    free(l);
}
