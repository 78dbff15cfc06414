/*
 * NCCL_IB_HCA and NCCL_IB_MERGE_NICS applied to the topology XML's <net>
 * elements, after tp_system__prepare_xml and before the system is built.
 *
 * NCCL 2.22.3 builds its NET devices from the IB plugin's list (net_ib.cc
 * ncclIbInitDevices: filter, then port merging), marks the matching <net>
 * elements keep="1" with dev = plugin index, and ncclTopoTrimXml drops
 * <pci>/<cpu> branches without a kept device. We do the same on the XML's
 * devices: the filter and merging rules are netdev.c's.
 */
#include "netdev/netdev.h"

#include <stdlib.h>
#include <string.h>

typedef struct net_list {
    tp_xml_elem **items;
    size_t count, cap;
} net_list;

static tp_status collect_nets(tp_xml_elem *e, net_list *l, tp_error *err)
{
    if (strcmp(e->tag, "net") == 0) {
        tp_status st = tp_grow((void **)&l->items, &l->cap, l->count + 1, sizeof(*l->items), err);
        if (st == TP_OK)
            l->items[l->count++] = e;
        return st;
    }
    for (size_t i = 0; i < e->n_children; i++) {
        tp_status st = collect_nets(e->children[i], l, err);
        if (st != TP_OK)
            return st;
    }
    return TP_OK;
}

static long attr_long(const tp_xml_elem *e, const char *name, long dflt)
{
    const char *v = tp_xml__attr(e, name);
    return v ? strtol(v, NULL, 0) : dflt;
}

/* The plugin's device order: the dev numbers preparation gave (stable for ties). */
static void sort_by_dev(net_list *l)
{
    for (size_t i = 1; i < l->count; i++) {
        tp_xml_elem *e = l->items[i];
        long key = attr_long(e, "dev", 0);
        size_t j = i;
        for (; j > 0 && attr_long(l->items[j - 1], "dev", 0) > key; j--)
            l->items[j] = l->items[j - 1];
        l->items[j] = e;
    }
}

/*
 * NCCL 2.22.3 ncclIbGetProperties reports port = ibv port + the number of
 * devices found before on the same PCI device ("realPort"), so an XML it
 * dumped numbers a NIC's ports 1, 2, ... NCCL_IB_HCA's ":port" names the ibv
 * port: undo that when it gives a valid port, else take the XML's port.
 */
static int ibv_port(const net_list *l, size_t i)
{
    int before = 0;
    for (size_t j = 0; j < i; j++)
        before += l->items[j]->parent == l->items[i]->parent;
    int port = (int)attr_long(l->items[i], "port", 1);
    return port - before >= 1 ? port - before : port;
}

/* NCCL 2.22.3 ncclIbGetPciPath: the NIC's PCI path with function 0 (ports merge per device). */
static void pci_path(char *buf, size_t size, const tp_xml_elem *net)
{
    const tp_xml_elem *nic = net->parent;
    const tp_xml_elem *dev = nic ? nic->parent : NULL;
    const char *busid = dev ? tp_xml__attr(dev, "busid") : NULL;
    if (!busid) {
        snprintf(buf, size, "virtual:%p", (const void *)nic);
        return;
    }
    snprintf(buf, size, "%s", busid);
    size_t len = strlen(buf);
    if (len > 0)
        buf[len - 1] = '0';
}

/* What the plugin sees of the XML's <net> elements, in device order. */
typedef struct port_table {
    tp_ib_port_info *ports;
    char (*paths)[64];
    int n;
} port_table;

uint64_t tp_netdev__port_guid(const char *guid)
{
    return strtoull(guid, NULL, 16);
}

static tp_status port_table_init(port_table *t, const net_list *l, tp_error *err)
{
    t->n = (int)l->count;
    t->ports = calloc(l->count + 1, sizeof(*t->ports));
    t->paths = calloc(l->count + 1, sizeof(*t->paths));
    if (!t->ports || !t->paths)
        return tp_fail_nomem(err);
    for (size_t i = 0; i < l->count; i++) {
        const tp_xml_elem *e = l->items[i];
        const char *guid = tp_xml__attr(e, "guid");
        pci_path(t->paths[i], sizeof(t->paths[i]), e);
        t->ports[i].name = tp_xml__attr(e, "name");
        t->ports[i].port = ibv_port(l, i);
        t->ports[i].pci_path = t->paths[i];
        t->ports[i].guid = guid ? tp_netdev__port_guid(guid) : 0;
        t->ports[i].link_layer = 1; /* the XML does not record it: taken as equal */
        t->ports[i].speed = (int)attr_long(e, "speed", 0);
    }
    return TP_OK;
}

static void port_table_free(port_table *t)
{
    free(t->ports);
    free(t->paths);
}

static bool has_device(const tp_xml_elem *e)
{
    if (strcmp(e->tag, "gpu") == 0 || strcmp(e->tag, "net") == 0)
        return true;
    for (size_t i = 0; i < e->n_children; i++)
        if (has_device(e->children[i]))
            return true;
    return false;
}

static bool trimmable(const tp_xml_elem *e)
{
    return strcmp(e->tag, "nic") == 0 || strcmp(e->tag, "pci") == 0 || strcmp(e->tag, "cpu") == 0;
}

/*
 * Drop a <net> and the branch left without a device (ncclTopoTrimXml's rule
 * for <pci>/<cpu>; the emptied <nic> goes too). Returns whether its <nic>
 * still lists other ports: NCCL 2.22.3 itself would leave the <net> there.
 */
static bool remove_net(tp_xml_elem *net)
{
    tp_xml_elem *e = net->parent;
    tp_xml__remove(net);
    bool siblings = e && has_device(e);
    while (e && e->parent && trimmable(e) && !has_device(e)) {
        tp_xml_elem *up = e->parent;
        tp_xml__remove(e);
        e = up;
    }
    return siblings;
}

static tp_status set_long(tp_xml_elem *e, const char *name, long v, tp_error *err)
{
    char text[32];
    snprintf(text, sizeof(text), "%ld", v);
    return tp_xml__set_attr(e, name, text, err);
}

static void note_filter(tp_log *notes, const char *hca, const port_table *t,
                        const tp_ib_discovery *d, const tp_hca_filter *f)
{
    if (!hca)
        return;
    tp_log_info(notes, "NCCL_IB_HCA=\"%s\" selects %d of the %d NET ports of the topology", hca,
                d->n_selected, t->n);
    tp_buf dropped = {0};
    for (int i = 0; i < t->n; i++) {
        const tp_ib_port_info *p = &t->ports[i];
        if (!tp_hca__selects(f, p->name, p->port))
            tp_buf_printf(&dropped, "%s%s:%d", dropped.len ? ", " : "", p->name, p->port);
    }
    if (dropped.len)
        tp_log_info(notes, "NCCL_IB_HCA drops %s", tp_buf_str(&dropped));
    tp_buf_free(&dropped);
    for (int i = 0; i < t->n; i++) {
        const tp_ib_port_info *p = &t->ports[i];
        int trap = tp_hca__trap(f, p->name, p->port);
        if (trap >= 0)
            tp_log_info(notes,
                        "NCCL_IB_HCA entry \"%s\" also %s %s:%d (prefix match); "
                        "\"=%s\" names only that device",
                        f->entries[trap].prefix, f->exclude ? "excludes" : "selects", p->name,
                        p->port, f->entries[trap].prefix);
    }
}

static void note_merges(tp_log *notes, bool merge, const port_table *t, const tp_ib_discovery *d)
{
    if (!merge)
        return;
    if (d->merge_disabled)
        tp_log_info(notes, "NCCL_IB_MERGE_NICS=1: a mix of single- and multi-port NICs: NCCL "
                           "turns merging off");
    for (int i = 0; i < d->n_devs; i++) {
        const tp_ib_logical *l = &d->devs[i];
        if (l->n_ports < 2)
            continue;
        const tp_ib_port_info *a = &t->ports[d->selected[l->ports[0]]];
        const tp_ib_port_info *b = &t->ports[d->selected[l->ports[1]]];
        tp_log_info(notes,
                    "NCCL_IB_MERGE_NICS=1: %s:%d and %s:%d merge into NET/%d %s "
                    "(%d Mb/s)",
                    a->name, a->port, b->name, b->port, i, l->name, l->speed);
    }
}

/* Rename, re-speed and renumber the kept <net> elements; mark them in keep[]. */
static tp_status apply_logical(const net_list *l, const tp_ib_discovery *d, bool *keep,
                               tp_error *err)
{
    for (int i = 0; i < d->n_devs; i++) {
        const tp_ib_logical *dev = &d->devs[i];
        tp_xml_elem *e = l->items[d->selected[dev->ports[0]]];
        keep[d->selected[dev->ports[0]]] = true;
        tp_status st = set_long(e, "dev", i, err);
        if (st == TP_OK && dev->n_ports > 1 &&
            (st = tp_xml__set_attr(e, "name", dev->name, err)) == TP_OK)
            st = set_long(e, "speed", dev->speed, err);
        if (st != TP_OK)
            return st;
    }
    return TP_OK;
}

static void drop_unkept(const net_list *l, const port_table *t, const bool *keep, bool merged,
                        tp_log *notes)
{
    for (size_t i = 0; i < l->count; i++) {
        if (keep[i])
            continue;
        char label[TP_IB_NAME_MAX + 16];
        snprintf(label, sizeof(label), "%s:%d", t->ports[i].name, t->ports[i].port);
        bool stays = remove_net(l->items[i]); /* frees the name */
        if (stays && !merged)
            tp_log_info(notes,
                        "NCCL 2.22.3 itself would leave %s's <net> in its XML (its NIC "
                        "keeps another port; ncclTopoTrimXml only trims <pci> and <cpu>)",
                        label);
    }
}

static tp_status run(net_list *l, const char *hca, bool merge, bool edit, tp_log *notes,
                     tp_error *err)
{
    tp_hca_filter f;
    tp_hca__parse(&f, hca);
    port_table t = {0};
    tp_ib_discovery d = {0};
    tp_status st = port_table_init(&t, l, err);
    if (st == TP_OK)
        st = tp_ib__discover(&d, t.ports, t.n, &f, merge, err);
    if (st == TP_OK && d.n_selected == 0) {
        tp_log_info(notes,
                    "NCCL_IB_HCA=\"%s\" matches none of the %d NET ports: NCCL's IB plugin "
                    "finds no device and falls back to sockets (NET/Socket); the plan "
                    "keeps the XML's devices in their place",
                    hca ? hca : "", t.n);
    } else if (st == TP_OK && !edit) {
        note_filter(notes, hca, &t, &d, &f);
    } else if (st == TP_OK) {
        note_filter(notes, hca, &t, &d, &f);
        note_merges(notes, merge, &t, &d);
        bool *keep = calloc(l->count + 1, sizeof(*keep));
        st = keep ? apply_logical(l, &d, keep, err) : tp_fail_nomem(err);
        if (st == TP_OK)
            drop_unkept(l, &t, keep, merge, notes);
        free(keep);
    }
    free(d.devs);
    port_table_free(&t);
    return st;
}

tp_status tp_netdev__apply_env(tp_xml *doc, const tp_config *cfg, tp_log *notes, tp_error *err)
{
    const char *hca = tp_config_str(cfg, TP_P_IB_HCA);
    /* From 2.24 (rule nic-fusion) the system stage selects the plugin's devices before fusing
     * them, and the plugin merges no ports at discovery (NCCL_IB_MERGE_NICS only allows
     * fusion): the notes only. */
    bool edit = !tp_profile_has(tp_config__profile(cfg), TP_RULE_NIC_FUSION);
    /* NCCL 2.22.3 net_ib.cc: an int, any value but 0 merges. */
    bool merge = edit && tp_config_is_set(cfg, TP_P_IB_MERGE_NICS) &&
                 (int)tp_config_int(cfg, TP_P_IB_MERGE_NICS) != 0;
    if ((!hca && !merge) || !doc || !doc->root)
        return TP_OK;
    net_list l = {0};
    tp_status st = collect_nets(doc->root, &l, err);
    sort_by_dev(&l);
    if (st == TP_OK && l.count > 0)
        st = run(&l, hca, merge, edit, notes, err);
    else if (st == TP_OK && hca)
        tp_log_info(notes, "NCCL_IB_HCA is set but the topology has no <net> element");
    free(l.items);
    return st;
}

tp_status tp_netdev__plugin_finds_device(const tp_xml *doc, const tp_config *cfg, bool *found,
                                         tp_error *err)
{
    *found = false;
    if (!doc || !doc->root)
        return TP_OK;
    tp_hca_filter f;
    tp_hca__parse(&f, tp_config_str(cfg, TP_P_IB_HCA));
    net_list l = {0};
    tp_status st = collect_nets(doc->root, &l, err);
    sort_by_dev(&l);
    for (size_t i = 0; st == TP_OK && i < l.count && !*found; i++) {
        const char *name = tp_xml__attr(l.items[i], "name");
        *found = tp_hca__selects(&f, name ? name : "", ibv_port(&l, i));
    }
    free(l.items);
    return st;
}
