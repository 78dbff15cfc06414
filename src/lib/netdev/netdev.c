/* NCCL_IB_HCA matching and IB port merging, as NCCL 2.22.3 does them. */
#include "netdev/netdev.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* NCCL 2.22.3 parseStringList: "a[:port],b,..."; a ':' ends the name, the text
 * up to the next ',' is read as the port number (atoi), empty names are skipped. */
void tp_hca__parse(tp_hca_filter *f, const char *text)
{
    memset(f, 0, sizeof(*f));
    if (!text)
        return;
    f->exclude = text[0] == '^';
    text += f->exclude;
    f->exact = text[0] == '=';
    text += f->exact;
    size_t len = 0;
    const char *p = text;
    while (f->n_entries < TP_HCA_MAX_ENTRIES) {
        char c = *p;
        tp_hca_entry *e = &f->entries[f->n_entries];
        if (c == ':' || c == ',' || c == '\0') {
            if (len > 0) {
                e->prefix[len] = '\0';
                e->port = c == ':' ? atoi(p + 1) : -1;
                f->n_entries++;
                len = 0;
            }
            while (c == ':' || (c != ',' && c != '\0'))
                c = *++p; /* the port text runs up to the next ',' */
        } else if (len < TP_IB_NAME_MAX - 1) {
            e->prefix[len++] = c;
        }
        if (c == '\0')
            break;
        p++;
    }
}

static bool name_matches(const char *name, const char *ref, bool exact)
{
    return exact ? strcmp(name, ref) == 0 : strncmp(name, ref, strlen(ref)) == 0;
}

static bool port_matches(int a, int b)
{
    return a == -1 || b == -1 || a == b;
}

static bool any_entry_matches(const tp_hca_filter *f, const char *name, int port)
{
    if (f->n_entries == 0)
        return true; /* NCCL: no list means every device */
    for (int i = 0; i < f->n_entries; i++)
        if (name_matches(name, f->entries[i].prefix, f->exact) &&
            port_matches(port, f->entries[i].port))
            return true;
    return false;
}

bool tp_hca__selects(const tp_hca_filter *f, const char *name, int port)
{
    return any_entry_matches(f, name, port) != f->exclude;
}

int tp_hca__trap(const tp_hca_filter *f, const char *name, int port)
{
    if (f->exact)
        return -1;
    for (int i = 0; i < f->n_entries; i++) {
        const tp_hca_entry *e = &f->entries[i];
        size_t n = strlen(e->prefix);
        if (strncmp(name, e->prefix, n) == 0 && isdigit((unsigned char)name[n]) && n > 0 &&
            isdigit((unsigned char)e->prefix[n - 1]) && port_matches(port, e->port))
            return i;
    }
    return -1;
}

static bool same_nic(const tp_ib_port_info *a, const tp_ib_port_info *b)
{
    return strcmp(a->pci_path, b->pci_path) == 0 && a->guid == b->guid &&
           a->link_layer == b->link_layer;
}

/* The logical device a port joins (NCCL's ncclIbFindMatchingDev), or n_logical. */
static int find_logical(const tp_ib_logical *devs, int n_logical, const tp_ib_port_info *ports,
                        const int *selected, const tp_ib_port_info *p)
{
    for (int i = 0; i < n_logical; i++)
        if (devs[i].n_ports < TP_IB_MAX_PORTS_PER_NIC &&
            same_nic(&ports[selected[devs[i].ports[0]]], p))
            return i;
    return n_logical;
}

static int build_logical(tp_ib_logical *devs, const tp_ib_port_info *ports, const int *selected,
                         int n_selected, bool merge)
{
    int n = 0;
    for (int s = 0; s < n_selected; s++) {
        const tp_ib_port_info *p = &ports[selected[s]];
        int d = merge ? find_logical(devs, n, ports, selected, p) : n;
        if (d == n) {
            memset(&devs[n], 0, sizeof(devs[n]));
            snprintf(devs[n].name, TP_IB_NAME_MAX, "%s", p->name);
            n++;
        } else {
            size_t used = strlen(devs[d].name);
            snprintf(devs[d].name + used, sizeof(devs[d].name) - used, "+%s", p->name);
        }
        devs[d].ports[devs[d].n_ports++] = s;
        devs[d].speed += p->speed;
    }
    return n;
}

static bool mixed_port_counts(const tp_ib_logical *devs, int n)
{
    for (int i = 1; i < n; i++)
        if (devs[i].n_ports != devs[0].n_ports)
            return true;
    return false;
}

tp_status tp_ib__discover(tp_ib_discovery *out, const tp_ib_port_info *ports, int n_ports,
                          const tp_hca_filter *filter, bool merge_nics, tp_error *err)
{
    *out = (tp_ib_discovery){0};
    int n_selected = 0;
    for (int i = 0; i < n_ports && n_selected < TP_HCA_MAX_ENTRIES; i++)
        if (tp_hca__selects(filter, ports[i].name, ports[i].port))
            out->selected[n_selected++] = i;
    tp_ib_logical *devs = calloc(n_selected ? (size_t)n_selected : 1, sizeof(*devs));
    if (!devs)
        return tp_fail_nomem(err);
    int n = build_logical(devs, ports, out->selected, n_selected, merge_nics);
    if (merge_nics && mixed_port_counts(devs, n)) {
        /* NCCL 2.22.3: a mix of single- and multi-port devices disables merging. */
        out->merge_disabled = true;
        n = build_logical(devs, ports, out->selected, n_selected, false);
    }
    out->devs = devs;
    out->n_devs = n;
    out->n_selected = n_selected;
    return TP_OK;
}

int tp_hca_selects(const char *filter, const char *name, int port)
{
    if (!name)
        return 0;
    tp_hca_filter f;
    tp_hca__parse(&f, filter);
    return tp_hca__selects(&f, name, port);
}

int tp_hca_prefix_trap(const char *filter, const char *name, int port, char *entry, size_t size)
{
    if (!name || (size > 0 && !entry))
        return 0;
    tp_hca_filter f;
    tp_hca__parse(&f, filter);
    int i = tp_hca__trap(&f, name, port);
    if (i < 0)
        return 0;
    if (size)
        snprintf(entry, size, "%s", f.entries[i].prefix);
    return 1;
}
