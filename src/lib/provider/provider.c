/* Roles of <pci> elements in provider files, and recognising their SKU. */
#include "provider/provider.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void tp_pv__free(tp_pv_file *f)
{
    free(f->pci);
    free(f->cpus);
    memset(f, 0, sizeof(*f));
}

bool tp_pv__has_net(const tp_xml_elem *pci)
{
    for (size_t i = 0; i < pci->n_children; i++) {
        const tp_xml_elem *c = pci->children[i];
        if (strcmp(c->tag, "nic") == 0 && tp_xml__child(c, "net"))
            return true;
    }
    return false;
}

static bool has_pci_child(const tp_xml_elem *e)
{
    return tp_xml__child(e, "pci") != NULL;
}

/* NCCL's classes: 0x03 display (GPU), 0x02 network, 0x0604 PCI bridge. */
static tp_pv_role role_of(const tp_xml_elem *e, const char *busid, const tp_sku *sku)
{
    if (tp_xml__child(e, "gpu"))
        return TP_PV_GPU;
    if (tp_xml__child(e, "nic"))
        return TP_PV_NIC;
    const char *cls = tp_xml__attr(e, "class");
    if (cls && strncasecmp(cls, "0x03", 4) == 0)
        return TP_PV_GPU;
    if (cls && strncasecmp(cls, "0x02", 4) == 0)
        return TP_PV_NIC;
    if ((cls && strncasecmp(cls, "0x0604", 6) == 0) || has_pci_child(e))
        return TP_PV_SWITCH;
    if (sku && !cls && *busid) {
        if (tp_sku__list_has(sku, "gpu.busids", busid))
            return TP_PV_GPU;
        if (tp_sku__list_has(sku, "nic.busids", busid))
            return TP_PV_NIC;
        if (tp_sku__list_has(sku, "switch.busids", busid))
            return TP_PV_SWITCH;
    }
    return TP_PV_OTHER;
}

static tp_status scan_elem(tp_pv_file *f, tp_xml_elem *e, const tp_sku *sku, tp_error *err)
{
    tp_status st = TP_OK;
    if (strcmp(e->tag, "cpu") == 0) {
        if ((st = tp_grow((void **)&f->cpus, &f->cap_cpus, f->n_cpus + 1, sizeof(*f->cpus), err)) !=
            TP_OK)
            return st;
        f->cpus[f->n_cpus++] = e;
    } else if (strcmp(e->tag, "pci") == 0) {
        if ((st = tp_grow((void **)&f->pci, &f->cap_pci, f->n_pci + 1, sizeof(*f->pci), err)) !=
            TP_OK)
            return st;
        const char *busid = tp_xml__attr(e, "busid");
        f->pci[f->n_pci++] =
            (tp_pv_pci){e, busid ? busid : "", role_of(e, busid ? busid : "", sku)};
    }
    for (size_t i = 0; i < e->n_children && st == TP_OK; i++)
        st = scan_elem(f, e->children[i], sku, err);
    return st;
}

tp_status tp_pv__scan(tp_pv_file *f, const tp_xml *doc, const tp_sku *sku, tp_error *err)
{
    memset(f, 0, sizeof(*f));
    tp_status st = scan_elem(f, doc->root, sku, err);
    if (st != TP_OK)
        tp_pv__free(f);
    return st;
}

/* A SKU is ruled out when the file names another GPU device or CPU family. */
static bool contradicts(const tp_sku *sku, const tp_pv_file *f)
{
    const char *dev = tp_sku__get(sku, NULL, "match.gpu.device");
    for (size_t i = 0; dev && i < f->n_pci; i++) {
        const char *d = tp_xml__attr(f->pci[i].e, "device");
        if (f->pci[i].role == TP_PV_GPU && d && strcasecmp(d, dev) != 0)
            return true;
    }
    const char *fam = tp_sku__get(sku, NULL, "match.cpu.familyid");
    for (size_t i = 0; fam && i < f->n_cpus; i++) {
        const char *v = tp_xml__attr(f->cpus[i], "familyid");
        if (v && strcmp(v, fam) != 0)
            return true;
    }
    return false;
}

/*
 * The file's bus ids, lower-cased and sorted once (each with how many <pci>
 * carry it), so that every SKU's layout is matched word by word against them
 * instead of every bus id against every list.
 */
typedef struct busid_count {
    char id[64];
    size_t n;      /* <pci> elements with this bus id */
    size_t marked; /* the SKU being matched that already counted it (index + 1) */
} busid_count;

typedef struct busid_set {
    busid_count *ids;
    size_t n;
} busid_set;

static int cmp_busid(const void *a, const void *b)
{
    return strcmp(((const busid_count *)a)->id, ((const busid_count *)b)->id);
}

/* Copy of word (len bytes) lower-cased into buf; false when it does not fit. */
static bool lower_word(char *buf, size_t size, const char *word, size_t len)
{
    if (len >= size)
        return false;
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)tolower((unsigned char)word[i]);
    buf[len] = '\0';
    return true;
}

static tp_status busid_set_of(busid_set *set, const tp_pv_file *f, tp_error *err)
{
    set->n = 0;
    set->ids = calloc(f->n_pci + 1, sizeof(*set->ids));
    if (!set->ids)
        return tp_fail_nomem(err);
    for (size_t i = 0; i < f->n_pci; i++) {
        const char *b = f->pci[i].busid;
        /* A bus id too long for any layout cannot match one: left out. */
        if (*b && lower_word(set->ids[set->n].id, sizeof(set->ids[0].id), b, strlen(b)))
            set->ids[set->n++].n = 1;
    }
    qsort(set->ids, set->n, sizeof(*set->ids), cmp_busid);
    size_t kept = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (kept && strcmp(set->ids[kept - 1].id, set->ids[i].id) == 0)
            set->ids[kept - 1].n++;
        else
            set->ids[kept++] = set->ids[i];
    }
    set->n = kept;
    return TP_OK;
}

/* <pci> elements whose bus id is in one of the SKU's layout lists (`mark`: the SKU's index + 1). */
static size_t layout_hits(const tp_sku *sku, busid_set *set, size_t mark)
{
    static const char *const keys[] = {"gpu.busids", "nic.busids", "switch.busids", "gpu.parents"};
    size_t hits = 0;
    for (size_t k = 0; k < ARRAY_LEN(keys); k++) {
        const char *p = tp_sku__get(sku, NULL, keys[k]);
        while (p && *p) {
            while (*p == ' ' || *p == '\t')
                p++;
            size_t len = strcspn(p, " \t");
            busid_count key;
            busid_count *found = len && lower_word(key.id, sizeof(key.id), p, len)
                                     ? bsearch(&key, set->ids, set->n, sizeof(*set->ids), cmp_busid)
                                     : NULL;
            if (found && found->marked != mark) {
                found->marked = mark;
                hits += found->n;
            }
            p += len;
        }
    }
    return hits;
}

static size_t count_role(const tp_pv_file *f, tp_pv_role role)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n_pci; i++)
        n += f->pci[i].role == role && !tp_xml__child(f->pci[i].e, "pci");
    return n;
}

/* The file's numbers of GPU and NIC endpoints. */
typedef struct file_shape {
    size_t gpus, nics;
} file_shape;

/* Same numbers of GPU (or none: a file that leaves them out) and NIC endpoints. */
static bool same_shape(const tp_sku *sku, file_shape f)
{
    size_t want_gpus = (size_t)tp_sku__get_int(sku, NULL, "gpu.count", 0);
    return f.nics > 0 && f.nics == tp_sku__list_len(sku, "nic.busids") &&
           (f.gpus == 0 || f.gpus == want_gpus);
}

/* Which SKUs of the catalogue have the file's numbers of GPUs and NICs (same[i]), and how many. */
static size_t count_shapes(const tp_pv_file *f, tp_sku *const *skus, bool *same)
{
    file_shape shape = {count_role(f, TP_PV_GPU), count_role(f, TP_PV_NIC)};
    size_t n = 0;
    for (size_t i = 0; i < tp_sku_texts_count; i++)
        n += same[i] = same_shape(skus[i], shape);
    return n;
}

/* The whole catalogue, split at build time (*skus: tp_sku_texts_count entries, the caller frees).
 */
static tp_status parse_catalogue(tp_sku ***skus, tp_error *err)
{
    *skus = calloc(tp_sku_texts_count + 1, sizeof(**skus));
    if (!*skus)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    for (size_t i = 0; i < tp_sku_texts_count && st == TP_OK; i++)
        st = tp_sku__embedded(&(*skus)[i], i, err);
    return st;
}

static void free_catalogue(tp_sku **skus)
{
    for (size_t i = 0; skus && i < tp_sku_texts_count; i++)
        tp_sku__free(skus[i]);
    free(skus);
}

tp_status tp_pv__recognise(const tp_xml *doc, char *name, size_t size, char *candidates,
                           size_t csize, tp_error *err)
{
    name[0] = candidates[0] = '\0';
    tp_pv_file f = {0};
    tp_sku **skus = NULL;
    busid_set ids = {0};
    size_t shapes = 0;
    bool *same = calloc(tp_sku_texts_count + 1, sizeof(*same));
    tp_status st = same ? tp_pv__scan(&f, doc, NULL, err) : tp_fail_nomem(err);
    if (st == TP_OK && (st = parse_catalogue(&skus, err)) == TP_OK &&
        (st = busid_set_of(&ids, &f, err)) == TP_OK)
        shapes = count_shapes(&f, skus, same);
    size_t best = 0, second = 0, used = 0;
    for (size_t i = 0; st == TP_OK && i < tp_sku_texts_count; i++) {
        const tp_sku *sku = skus[i];
        bool against = contradicts(sku, &f);
        /* Device numbers are evidence only when no other SKU shares them. */
        bool shape = !against && shapes == 1 && same[i];
        size_t hits = against ? 0 : layout_hits(sku, &ids, i + 1);
        /* A candidate holds at least half of the file's bus ids, or a quarter and
         * its own numbers of devices (files with partly made-up bus ids). */
        if ((hits > 0 && 2 * hits >= f.n_pci) || (shape && 4 * hits >= f.n_pci && hits > 0)) {
            if (used < csize)
                used += (size_t)snprintf(
                    candidates + used, csize - used, "%s%s (%zu/%zu bus ids%s)", used ? ", " : "",
                    sku->name, hits, f.n_pci, shape ? ", its numbers of GPUs and NICs" : "");
            hits += shape ? f.n_pci : 0;
            if (hits > best) {
                second = best;
                best = hits;
                snprintf(name, size, "%s", sku->name);
            } else if (hits > second) {
                second = hits;
            }
        }
    }
    if (best == second)
        name[0] = '\0';
    free_catalogue(skus);
    free(ids.ids);
    free(same);
    tp_pv__free(&f);
    return st;
}
