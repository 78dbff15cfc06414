/*
 * The system layer of a comparison (XML -> system): nodes missing, extra or
 * renumbered, their attributes, where GPUs and NICs hang, and the links
 * between matched nodes. Reads each plan's host system (before trimming).
 *
 * Severities (the health-check rules): a missing GPU, NIC, NET or NVSwitch,
 * a missing NVLink or a lower NVLink bandwidth are errors; other missing or
 * extra nodes and links, a slower PCIe link, NIC or CPU link, lost GDR, a
 * GPU or NIC under another PCI parent or NUMA node, another GPU or CPU model
 * are warnings (errors of the later layers say when they cost the plan);
 * renumbered ids and faster links are information.
 */
#include "compare/compare.h"
#include "nics/nics.h"

#include <string.h>

/* A GPU's or NIC's PCI parent may be several switches deep: stop somewhere. */
#define MAX_PCI_DEPTH 64

static const tp_system *host(const tp_comparison *c, int side)
{
    return c->plan[side]->host_sys;
}

static int index_in(const tp_system *sys, const tp_node *n)
{
    return (int)(n - sys->nodes[n->type].nodes);
}

static const tp_node *matched_node(const tp_comparison *c, int side, const tp_node *n)
{
    int other = c->match[side][n->type][index_in(host(c, side), n)];
    return other < 0 ? NULL : &host(c, 1 - side)->nodes[n->type].nodes[other];
}

/* A node by the names operators know, next to NCCL's id (tp_report__device_name). */
static void label_of(const tp_comparison *c, char *buf, size_t size, const tp_node *n)
{
    const tp_node_set *set = &host(c, 0)->nodes[n->type];
    int side = n >= set->nodes && n < set->nodes + set->count ? 0 : 1;
    tp_report__device_name(buf, size, c->plan[side]->topo_xml, n);
}

static void describe(char *buf, size_t size, const tp_node *n)
{
    if (n->type == TP_NODE_GPU)
        snprintf(buf, size, " (dev %d, sm %d)", n->gpu.dev, n->gpu.cuda_comp_cap);
    else if (n->type == TP_NODE_NET)
        snprintf(buf, size, " (dev %d, port %d, guid 0x%llx, %.1f GB/s)", n->net.dev, n->net.port,
                 (unsigned long long)n->net.asic, n->net.bw);
    else
        buf[0] = '\0';
}

/* A NET's name in its side's prepared XML, or NULL. */
static const char *net_name(const tp_comparison *c, int side, const tp_node *n)
{
    const tp_xml *xml = c->plan[side]->topo_xml;
    return xml && xml->root ? tp_nics__xml_net_name(xml->root, n->net.dev) : NULL;
}

/* Whether `name` is one of the '+'-joined members of a virtual NIC's name. */
static bool has_member(const char *vnic, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = vnic; p; p = strchr(p, '+') ? strchr(p, '+') + 1 : NULL)
        if (strncmp(p, name, len) == 0 && (p[len] == '+' || p[len] == '\0'))
            return true;
    return false;
}

/* The virtual NIC of side 1 that side 0's NET n is fused into (2.24+, rule nic-fusion). */
static const tp_node *fused_into(const tp_comparison *c, const tp_node *n)
{
    const char *name = n->type == TP_NODE_NET ? net_name(c, 0, n) : NULL;
    const tp_node_set *nets = &host(c, 1)->nodes[TP_NODE_NET];
    for (int j = 0; name && j < nets->count; j++) {
        const char *v = net_name(c, 1, &nets->nodes[j]);
        if (v && strchr(v, '+') && strcmp(v, name) != 0 && has_member(v, name))
            return &nets->nodes[j];
    }
    return NULL;
}

static void node_fused(tp_comparison *c, const tp_node *n, const tp_node *vnic)
{
    char a[160], b[160];
    label_of(c, a, sizeof(a), n);
    label_of(c, b, sizeof(b), vnic);
    tp_compare__add(c, TP_DIFF_NODE_RENUMBERED, TP_SEVERITY_INFO, "NIC fused",
                    "%s: fused into the virtual NIC %s (rule nic-fusion)", a, b);
}

static void node_missing(tp_comparison *c, const tp_node *n)
{
    static const char *const titles[TP_NODE_TYPE_COUNT] = {
        [TP_NODE_GPU] = "missing GPU",      [TP_NODE_PCI] = "missing PCI switch",
        [TP_NODE_NVS] = "missing NVSwitch", [TP_NODE_CPU] = "missing CPU (NUMA node)",
        [TP_NODE_NIC] = "missing NIC",      [TP_NODE_NET] = "missing NET device",
    };
    bool grave = n->type != TP_NODE_PCI && n->type != TP_NODE_CPU;
    char a[160], d[128];
    label_of(c, a, sizeof(a), n);
    describe(d, sizeof(d), n);
    tp_compare__add(c, TP_DIFF_NODE_MISSING, grave ? TP_SEVERITY_ERROR : TP_SEVERITY_WARN,
                    titles[n->type], "%s%s: removed", a, d);
    tp_compare__set_device(c, 0, false, n);
}

/* The members of side 0's virtual NIC n that side 1's NET m does not have ("" when none). */
static void members_lost(const tp_comparison *c, const tp_node *n, const tp_node *m, char *buf,
                         size_t size)
{
    const char *a = n->type == TP_NODE_NET ? net_name(c, 0, n) : NULL;
    const char *b = a ? net_name(c, 1, m) : NULL;
    size_t at = 0;
    buf[0] = '\0';
    for (const char *p = a && b && strchr(a, '+') ? a : NULL; p && at < size;) {
        size_t len = strcspn(p, "+");
        char member[256];
        snprintf(member, sizeof(member), "%.*s", (int)len, p);
        if (!has_member(b, member))
            at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? ", " : "", member);
        p = p[len] ? p + len + 1 : NULL;
    }
}

static void node_renumbered(tp_comparison *c, const tp_node *n, const tp_node *m, tp_match_how how)
{
    char a[160], b[160], lost[160];
    label_of(c, a, sizeof(a), n);
    label_of(c, b, sizeof(b), m);
    members_lost(c, n, m, lost, sizeof(lost));
    if (lost[0]) {
        tp_compare__add(c, TP_DIFF_NODE_RENUMBERED, TP_SEVERITY_INFO, "virtual NIC lost a member",
                        "%s -> %s: %s no longer in it (missing or not fused: rule nic-fusion)", a,
                        b, lost);
        return;
    }
    tp_compare__add(c, TP_DIFF_NODE_RENUMBERED, TP_SEVERITY_INFO, "renumbered device",
                    "%s -> %s: %s", a, b,
                    how == TP_MATCH_NIC ? "same NIC and port, another device index"
                                        : "matched by position (another NCCL id)");
    tp_compare__set_device(c, 0, false, n);
    tp_compare__set_device(c, 1, true, m);
}

/* Missing, extra and renumbered nodes of one type. */
static void nodes_of_type(tp_comparison *c, int type)
{
    char b[160], d[128];
    for (int i = 0; i < host(c, 0)->nodes[type].count; i++) {
        const tp_node *n = &host(c, 0)->nodes[type].nodes[i];
        const tp_node *m = matched_node(c, 0, n);
        const tp_node *vnic = fused_into(c, n);
        if (vnic && (!m || m == vnic))
            node_fused(c, n, vnic);
        else if (!m)
            node_missing(c, n);
        else if (TP_ID_LOCAL_ID(n->id) != TP_ID_LOCAL_ID(m->id))
            node_renumbered(c, n, m, c->how[type][i]);
    }
    for (int j = 0; j < host(c, 1)->nodes[type].count; j++) {
        const tp_node *m = &host(c, 1)->nodes[type].nodes[j];
        if (matched_node(c, 1, m))
            continue;
        label_of(c, b, sizeof(b), m);
        describe(d, sizeof(d), m);
        tp_compare__add(c, TP_DIFF_NODE_EXTRA, TP_SEVERITY_WARN, "extra device", "%s%s: added", b,
                        d);
        tp_compare__set_device(c, 1, false, m);
    }
}

static void gdr_change(tp_comparison *c, const tp_node *n, const char *who, int old_gdr,
                       int new_gdr)
{
    if (old_gdr == new_gdr)
        return;
    tp_compare__add(c, TP_DIFF_NODE_ATTR, new_gdr < old_gdr ? TP_SEVERITY_WARN : TP_SEVERITY_INFO,
                    new_gdr < old_gdr ? "GPU Direct RDMA lost" : "GPU Direct RDMA gained",
                    "%s: GDR support %d -> %d", who, old_gdr, new_gdr);
    tp_compare__set_device(c, 0, false, n);
    TP_CMP_VALUE(c, "gdr", "", old_gdr, new_gdr);
}

static void net_attrs(tp_comparison *c, const char *who, const tp_node *n, const tp_node *m)
{
    if (n->net.bw != m->net.bw)
        tp_compare__add(c, TP_DIFF_NODE_ATTR,
                        m->net.bw < n->net.bw ? TP_SEVERITY_WARN : TP_SEVERITY_INFO,
                        m->net.bw < n->net.bw ? "NIC speed lower" : "NIC speed higher",
                        "%s: speed %.1f -> %.1f GB/s", who, n->net.bw, m->net.bw);
    if (n->net.bw != m->net.bw) {
        tp_compare__set_device(c, 0, false, n);
        TP_CMP_VALUE(c, "nic_speed", "GB/s", n->net.bw, m->net.bw);
    }
    gdr_change(c, n, who, n->net.gdr_support, m->net.gdr_support);
    if (n->net.max_channels != m->net.max_channels || n->net.latency != m->net.latency ||
        n->net.coll_support != m->net.coll_support)
        tp_compare__add(c, TP_DIFF_NODE_ATTR, TP_SEVERITY_INFO, "NIC attributes",
                        "%s: maxconn/latency/coll %d/%.1f/%d -> %d/%.1f/%d", who,
                        n->net.max_channels, n->net.latency, n->net.coll_support,
                        m->net.max_channels, m->net.latency, m->net.coll_support);
    if (n->net.max_channels != m->net.max_channels || n->net.latency != m->net.latency ||
        n->net.coll_support != m->net.coll_support)
        tp_compare__set_device(c, 0, false, n);
}

/* Attributes NCCL's decisions read, per node type. */
static void node_attrs(tp_comparison *c, const tp_node *n, const tp_node *m)
{
    char who[160];
    label_of(c, who, sizeof(who), n);
    if (n->type == TP_NODE_GPU) {
        if (n->gpu.cuda_comp_cap != m->gpu.cuda_comp_cap) {
            tp_compare__add(c, TP_DIFF_NODE_ATTR, TP_SEVERITY_WARN, "different GPU model",
                            "%s: compute capability %d -> %d", who, n->gpu.cuda_comp_cap,
                            m->gpu.cuda_comp_cap);
            tp_compare__set_device(c, 0, false, n);
            TP_CMP_VALUE(c, "compute_capability", "", n->gpu.cuda_comp_cap, m->gpu.cuda_comp_cap);
        }
        gdr_change(c, n, who, n->gpu.gdr_support, m->gpu.gdr_support);
    } else if (n->type == TP_NODE_NET) {
        net_attrs(c, who, n, m);
    } else if (n->type == TP_NODE_CPU &&
               (n->cpu.arch != m->cpu.arch || n->cpu.vendor != m->cpu.vendor ||
                n->cpu.model != m->cpu.model)) {
        tp_compare__add(c, TP_DIFF_NODE_ATTR, TP_SEVERITY_WARN, "different CPU",
                        "%s: arch/vendor/model %d/%d/%d -> %d/%d/%d (NCCL codes)", who, n->cpu.arch,
                        n->cpu.vendor, n->cpu.model, m->cpu.arch, m->cpu.vendor, m->cpu.model);
        tp_compare__set_device(c, 0, false, n);
    }
}

/* The node a GPU or NIC hangs under: its PCI link's other end. */
static const tp_node *pci_parent(const tp_node *n)
{
    for (int l = 0; l < n->n_links; l++)
        if (n->links[l].type == TP_LINK_PCI)
            return n->links[l].rem;
    return NULL;
}

/* The CPU (NUMA node) of n's PCI tree: a depth-first walk over PCI links. */
static const tp_node *numa_of(const tp_node *n, const tp_node *from, int depth)
{
    if (n->type == TP_NODE_CPU)
        return n;
    for (int l = 0; l < n->n_links && depth < MAX_PCI_DEPTH; l++) {
        const tp_node *r = n->links[l].rem;
        if (n->links[l].type != TP_LINK_PCI || r == from)
            continue;
        const tp_node *cpu = numa_of(r, n, depth + 1);
        if (cpu)
            return cpu;
    }
    return NULL;
}

/* Whether a (side 0) and b (side 1), either possibly NULL, are matched nodes. */
static bool same_node(const tp_comparison *c, const tp_node *a, const tp_node *b)
{
    if (!a || !b)
        return a == b;
    return a->type == b->type && matched_node(c, 0, a) == b;
}

static void where(const tp_comparison *c, char *buf, size_t size, const tp_node *parent,
                  const tp_node *cpu)
{
    char p[160] = "nothing", n[160] = "none";
    if (parent)
        label_of(c, p, sizeof(p), parent);
    if (cpu)
        label_of(c, n, sizeof(n), cpu);
    snprintf(buf, size, "under %s, %s", p, n);
}

/* A GPU or NIC under another PCI parent or NUMA node than its match. */
static void attachment(tp_comparison *c, const tp_node *n, const tp_node *m)
{
    const tp_node *p0 = pci_parent(n), *p1 = pci_parent(m);
    const tp_node *n0 = numa_of(n, NULL, 0), *n1 = numa_of(m, NULL, 0);
    if (same_node(c, p0, p1) && same_node(c, n0, n1))
        return;
    c->moved[0][n->type][index_in(host(c, 0), n)] = true;
    c->moved[1][m->type][index_in(host(c, 1), m)] = true;
    char who[160], w0[400], w1[400];
    label_of(c, who, sizeof(who), n);
    where(c, w0, sizeof(w0), p0, n0);
    where(c, w1, sizeof(w1), p1, n1);
    tp_compare__add(c, TP_DIFF_NODE_MOVED, TP_SEVERITY_WARN,
                    n->type == TP_NODE_NIC ? "NIC on another PCI switch or NUMA node"
                                           : "GPU on another PCI switch or NUMA node",
                    "%s: %s -> %s", who, w0, w1);
    tp_compare__set_device(c, 0, false, n);
}

static void matched_nodes(tp_comparison *c, int type)
{
    for (int i = 0; i < host(c, 0)->nodes[type].count; i++) {
        const tp_node *n = &host(c, 0)->nodes[type].nodes[i];
        const tp_node *m = matched_node(c, 0, n);
        if (!m)
            continue;
        node_attrs(c, n, m);
        if (type == TP_NODE_GPU || type == TP_NODE_NIC)
            attachment(c, n, m);
    }
}

static const tp_link *find_link(const tp_node *n, const tp_node *rem, int type)
{
    for (int l = 0; n && rem && l < n->n_links; l++)
        if (n->links[l].rem == rem && n->links[l].type == type)
            return &n->links[l];
    return NULL;
}

/* Links are listed once, from the lower node type (then index) to the higher. */
static bool canonical(const tp_system *sys, const tp_node *n, const tp_node *r)
{
    if (n->type != r->type)
        return n->type < r->type;
    return index_in(sys, n) < index_in(sys, r);
}

/* A non-canonical direction is left out when it mirrors the canonical one on both sides. */
static bool mirrored(const tp_comparison *c, int side, const tp_node *n, const tp_link *l)
{
    const tp_link *rev = find_link(l->rem, n, l->type);
    const tp_node *n1 = matched_node(c, side, n), *r1 = matched_node(c, side, l->rem);
    const tp_link *l1 = find_link(n1, r1, l->type), *rev1 = find_link(r1, n1, l->type);
    if (!rev || rev->bw != l->bw || !l1 != !rev1)
        return false;
    return !l1 || l1->bw == rev1->bw;
}

static bool skipped_link(const tp_comparison *c, int side, const tp_node *n, const tp_link *l)
{
    const tp_system *sys = host(c, side);
    const tp_node *r = l->rem;
    if (l->type == TP_LINK_NET) /* mirrors the NET's speed, compared as an attribute */
        return true;
    if (!matched_node(c, side, n) || !matched_node(c, side, r)) /* the node is listed */
        return true;
    if (l->type == TP_LINK_PCI &&
        (c->moved[side][n->type][index_in(sys, n)] || c->moved[side][r->type][index_in(sys, r)]))
        return true;
    return !canonical(sys, n, r) && mirrored(c, side, n, l);
}

static bool nvswitch_link(const tp_node *n, const tp_node *r)
{
    return n->type == TP_NODE_NVS || r->type == TP_NODE_NVS;
}

static void link_missing(tp_comparison *c, const tp_node *n, const tp_link *l, const char *a,
                         const char *b)
{
    bool nvl = l->type == TP_LINK_NVL;
    const char *title = !nvl ? (l->type == TP_LINK_PCI ? "missing PCI link" : "missing link")
                        : nvswitch_link(n, l->rem) ? "missing NVSwitch link"
                                                   : "missing NVLink";
    tp_compare__add(c, TP_DIFF_LINK_MISSING, nvl ? TP_SEVERITY_ERROR : TP_SEVERITY_WARN, title,
                    "%s link %s -> %s: %.1f GB/s -> missing", tp_link_type_name(l->type), a, b,
                    l->bw);
    tp_compare__set_device(c, 0, false, n);
    tp_compare__set_device(c, 0, true, l->rem);
    tp_compare__add_value(c, "bandwidth", "GB/s", 1, l->bw, 0, 0);
}

/* The PCIe width and speed of the end whose <pci> link changed (the child sets the bw). */
static void pcie_values(tp_comparison *c, const tp_node *n, const tp_node *r)
{
    const tp_node *ends[2] = {n, r};
    for (int e = 0; e < 2; e++) {
        const tp_node *m = matched_node(c, 0, ends[e]);
        int w0, w1;
        double s0, s1;
        if (!m || !tp_report__pcie_numbers(c->plan[0]->topo_xml, ends[e], &w0, &s0) ||
            !tp_report__pcie_numbers(c->plan[1]->topo_xml, m, &w1, &s1) || (w0 == w1 && s0 == s1))
            continue;
        TP_CMP_VALUE(c, "link_width", "lanes", w0, w1);
        TP_CMP_VALUE(c, "link_speed", "GT/s", s0, s1);
        return;
    }
}

/* "PCIe Gen5 x16 -> x4, " when either end's <pci> changed its link (the child sets the bw). */
static void pcie_change(const tp_comparison *c, char *buf, size_t size, const tp_node *n,
                        const tp_node *r)
{
    buf[0] = '\0';
    const tp_node *ends[2] = {n, r};
    for (int e = 0; e < 2 && !buf[0]; e++) {
        const tp_node *m = matched_node(c, 0, ends[e]);
        char before[48], after[48];
        tp_report__pcie_link(before, sizeof(before), c->plan[0]->topo_xml, ends[e]);
        tp_report__pcie_link(after, sizeof(after), c->plan[1]->topo_xml, m ? m : ends[e]);
        const char *tail = after;
        /* "PCIe Gen5 x16 -> x4": the generation once when it stayed. */
        if (strncmp(before, after, 9) == 0 && strlen(after) > 10)
            tail = after + 10;
        if (before[0] && after[0] && strcmp(before, after) != 0)
            snprintf(buf, size, "%s -> %s, ", before, tail);
    }
}

static void link_bw(tp_comparison *c, const tp_node *n, const tp_link *l, const tp_link *l1,
                    const char *a, const char *b)
{
    char pcie[112] = "";
    if (l->type == TP_LINK_PCI)
        pcie_change(c, pcie, sizeof(pcie), n, l->rem);
    bool lower = l1->bw < l->bw;
    const char *title = !lower                   ? "link bandwidth higher"
                        : l->type == TP_LINK_NVL ? "NVLink bandwidth lower"
                        : l->type == TP_LINK_PCI ? "PCIe link downgraded"
                                                 : "link bandwidth lower";
    tp_severity sev = !lower                   ? TP_SEVERITY_INFO
                      : l->type == TP_LINK_NVL ? TP_SEVERITY_ERROR
                                               : TP_SEVERITY_WARN;
    tp_compare__add(c, TP_DIFF_LINK_BW, sev, title, "%s link %s -> %s: %s%.1f -> %.1f GB/s",
                    tp_link_type_name(l->type), a, b, pcie, l->bw, l1->bw);
    tp_compare__set_device(c, 0, false, n);
    tp_compare__set_device(c, 0, true, l->rem);
    if (l->type == TP_LINK_PCI)
        pcie_values(c, n, l->rem);
    TP_CMP_VALUE(c, "bandwidth", "GB/s", l->bw, l1->bw);
}

/* Side 0's links: missing on side 1, or with another bandwidth. */
static void links_of(tp_comparison *c, const tp_node *n)
{
    for (int k = 0; k < n->n_links; k++) {
        const tp_link *l = &n->links[k];
        if (skipped_link(c, 0, n, l))
            continue;
        const tp_link *l1 = find_link(matched_node(c, 0, n), matched_node(c, 0, l->rem), l->type);
        char a[160], b[160];
        label_of(c, a, sizeof(a), n);
        label_of(c, b, sizeof(b), l->rem);
        if (!l1)
            link_missing(c, n, l, a, b);
        else if (l1->bw != l->bw)
            link_bw(c, n, l, l1, a, b);
    }
}

/* Side 1's links that side 0 does not have. */
static void extra_links_of(tp_comparison *c, const tp_node *m)
{
    for (int k = 0; k < m->n_links; k++) {
        const tp_link *l = &m->links[k];
        if (skipped_link(c, 1, m, l) ||
            find_link(matched_node(c, 1, m), matched_node(c, 1, l->rem), l->type))
            continue;
        char a[160], b[160];
        label_of(c, a, sizeof(a), m);
        label_of(c, b, sizeof(b), l->rem);
        tp_compare__add(c, TP_DIFF_LINK_EXTRA, TP_SEVERITY_WARN, "extra link",
                        "%s link %s -> %s: none -> %.1f GB/s", tp_link_type_name(l->type), a, b,
                        l->bw);
        tp_compare__set_device(c, 1, false, m);
        tp_compare__set_device(c, 1, true, l->rem);
        tp_compare__add_value(c, "bandwidth", "GB/s", 0, 0, 1, l->bw);
    }
}

void tp_compare__system(tp_comparison *c)
{
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        nodes_of_type(c, t);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        matched_nodes(c, t);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < host(c, 0)->nodes[t].count; i++)
            links_of(c, &host(c, 0)->nodes[t].nodes[i]);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < host(c, 1)->nodes[t].count; i++)
            extra_links_of(c, &host(c, 1)->nodes[t].nodes[i]);
}
