/*
 * NIC fusion into virtual NICs (system_vnic.h): NCCL 2.27.5 topo.cc
 * ncclTopoMakeVNics and what the IB plugin's makeVDevice reports for a
 * virtual device (net_ib.cc ncclIbMakeVDeviceInternal / ncclIbGetProperties):
 * its name the members' joined by '+', its speed their sum, every other
 * property its first member's; NCCL then places it (ncclTopoGetVNicParent,
 * ncclTopoFillNet) next to the members' closest common parent. What 2.28 .. 2.30.7 changed
 * follows the profile's vnic-* rules (nccl_profile.h).
 */
#include "system/system_vnic.h"
#include "netdev/netdev.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* NCCL_NET_MAX_DEVS_PER_NIC: devices per virtual NIC (net_v10.h 4; net_v12.h 8, vnic-eight-devs);
 * the arrays hold the larger. */
#define TP_VNIC_MAX_DEVS 8
#define TP_VNIC_MAX_DEVS_V10 4
/* ncclTopoMakeUniqueBusId: tries before giving up. */
#define TP_VNIC_BUSID_TRIES 100
/* topo.cc PCI_BRIDGE_DEVICE_CLASS: a common parent of this class gets a PCI device of its own. */
#define TP_PCI_BRIDGE_CLASS "0x060400"

/* Path levels of the fusion (ncclTopoGetPath), in the profile's numbering. */
typedef struct vnic_levels {
    int loc, port, pix, pxb, phb, sys, dis;
} vnic_levels;

typedef struct vnic_group {
    int ndevs;
    int devs[TP_VNIC_MAX_DEVS];
} vnic_group;

typedef struct vnic_ctx {
    tp_xml *doc;
    const tp_vnic_phys *phys;
    const tp_config *cfg;
    tp_log *log;
    tp_error *err;
    vnic_levels lv;
    int max_devs;      /* the profile's NCCL_NET_MAX_DEVS_PER_NIC */
    bool rail_policy;  /* NCCL_NET_MERGE_POLICY=RAIL */
    int *paths;        /* n x n fusion levels between the physical devices */
    bool *placed;      /* placedDevs */
    vnic_group *vnics; /* made, in vNic index order */
    int n_vnics, cap_vnics;
    tp_xml_elem **made; /* the <net> of each virtual NIC populated so far (creation order) */
} vnic_ctx;

const char *tp_system__net_pci_path(const tp_xml_elem *net)
{
    const tp_xml_elem *nic = net->parent;
    const tp_xml_elem *pci = nic ? nic->parent : NULL;
    const char *bus = pci && tp_xml__is_tag(pci, "pci") ? tp_xml__attr(pci, "busid") : NULL;
    return bus ? bus : "";
}

static const char *name_of(const tp_xml_elem *net)
{
    const char *n = tp_xml__attr(net, "name");
    return n ? n : "";
}

static long long attr_num(const tp_xml_elem *e, const char *name, int base)
{
    const char *s = tp_xml__attr(e, name);
    return s ? strtoll(s, NULL, base) : 0;
}

/* ---- ncclTopoGetPath: the closest common parent of a set of <net> elements ---- */

#define TP_VNIC_MAX_DEPTH 256

/* e and its ancestors, root first; returns the count. */
static int chain_of(const tp_xml_elem *e, const tp_xml_elem **chain)
{
    int n = 0;
    for (const tp_xml_elem *p = e; p && n < TP_VNIC_MAX_DEPTH; p = p->parent)
        n++;
    int k = n;
    for (const tp_xml_elem *p = e; p && k > 0; p = p->parent)
        chain[--k] = p;
    return n;
}

/* Whether, at a mismatch, every element's busid differs from the first's in its last character
 * only (the ports of one device: PATH_PORT). */
static bool multi_port(const tp_xml_elem *first, const tp_xml_elem *const *others, int n)
{
    const char *ref = tp_xml__attr(first, "busid");
    if (!ref)
        return false;
    for (int i = 0; i < n; i++) {
        if (!others[i])
            continue; /* NCCL skips a chain that ended */
        const char *bus = tp_xml__attr(others[i], "busid");
        if (!bus || strlen(bus) != strlen(ref) || strncmp(bus, ref, strlen(bus) - 1) != 0)
            return false;
    }
    return true;
}

/* ncclTopoCheckPix: each element's NIC device sits right under `common`. */
static bool check_pix(const tp_xml_elem *common, const tp_xml_elem *const *nodes, int n)
{
    if (!tp_xml__attr(common, "busid"))
        return false;
    for (int i = 0; i < n; i++) {
        const tp_xml_elem *e = nodes[i];
        if (!tp_xml__is_tag(e, "net"))
            continue;
        if (!(e = e->parent))
            return false;
        if (!tp_xml__is_tag(e, "nic"))
            continue;
        if (!(e = e->parent))
            return false;
        if (tp_xml__is_tag(e, "pci") && e->parent != common)
            return false;
    }
    return true;
}

/* ncclFindFirstPciParent: the first <pci> from e up, e itself when none before the system. */
static tp_xml_elem *first_pci_parent(const tp_xml_elem *e)
{
    for (const tp_xml_elem *p = e; p && !tp_xml__is_tag(p, "system"); p = p->parent)
        if (tp_xml__is_tag(p, "pci"))
            return (tp_xml_elem *)p;
    return (tp_xml_elem *)e;
}

static int get_path(const vnic_levels *lv, const tp_xml_elem *const *nodes, int n,
                    tp_xml_elem **parent)
{
    const tp_xml_elem *chains[TP_VNIC_MAX_DEVS][TP_VNIC_MAX_DEPTH];
    int len[TP_VNIC_MAX_DEVS];
    const tp_xml_elem *common = NULL;
    int path = -1;
    if (n == 1) {
        common = nodes[0];
        path = lv->loc;
    }
    for (int i = 0; i < n && path < 0; i++)
        len[i] = chain_of(nodes[i], chains[i]);
    for (int k = 0; path < 0 && k < len[0]; k++) {
        const tp_xml_elem *at[TP_VNIC_MAX_DEVS] = {0};
        bool same = true;
        for (int i = 1; i < n; i++) {
            at[i - 1] = k < len[i] ? chains[i][k] : NULL;
            same = same && at[i - 1] == chains[0][k];
        }
        if (same) {
            common = chains[0][k];
            continue;
        }
        if (multi_port(chains[0][k], at, n - 1))
            path = lv->port;
        break;
    }
    if (path >= 0)
        ;
    else if (!common)
        path = lv->dis;
    else if (tp_xml__is_tag(common, "system"))
        path = lv->sys;
    else if (tp_xml__is_tag(common, "cpu"))
        path = lv->phb;
    else if (tp_xml__is_tag(common, "nic") || tp_xml__is_tag(common, "net"))
        path = lv->port;
    else
        path = check_pix(common, nodes, n) ? lv->pix : lv->pxb;
    *parent = common ? first_pci_parent(common) : NULL;
    return path;
}

/* ---- ncclTopoMakeVnic / makeVDevice ---- */

static void log_merge_failed(vnic_ctx *v, const vnic_group *g)
{
    tp_log_info_sub(v->log, TP_SUB_GRAPH | TP_SUB_INIT | TP_SUB_NET,
                    "TOPO/NET : Tried merging multiple devices together and failed. "
                    "vProps={ndevs=%d, devs=[%d %d %d %d]}. Set NCCL_NET_MERGE_LEVEL=LOC to "
                    "disable NIC fusion.",
                    g->ndevs, g->devs[0], g->devs[1], g->devs[2], g->devs[3]);
}

/* false: the plugin refused (NCCL_IB_MERGE_NICS=0); a group of one makes nothing. */
static bool make_vnic(vnic_ctx *v, const vnic_group *g)
{
    if (g->ndevs == 1)
        return true;
    if (tp_config_int(v->cfg, TP_P_IB_MERGE_NICS) == 0 || v->n_vnics == v->cap_vnics) {
        log_merge_failed(v, g);
        return false;
    }
    for (int i = 0; i < g->ndevs; i++)
        tp_xml__set_attr(v->phys->nodes[g->devs[i]], "keep", "0", NULL);
    tp_log_info_sub(v->log, TP_SUB_GRAPH, "TOPO/NET : Made vNic %d",
                    (int)v->phys->count + v->n_vnics);
    v->vnics[v->n_vnics++] = *g;
    return true;
}

/* ---- ncclTopoForceMerge ---- */

typedef struct force_entry {
    char name[256];
    int port; /* -1: any */
} force_entry;

/* NCCL parseStringList into at most TP_VNIC_MAX_DEVS entries "name[:port]". */
static int parse_group(const char *text, size_t len, force_entry *out, int max)
{
    int n = 0;
    size_t at = 0;
    for (size_t i = 0; i <= len && n < max; i++) {
        char c = i < len ? text[i] : '\0';
        if (c == ':' || c == ',' || c == '\0') {
            if (at > 0) {
                out[n].name[at] = '\0';
                out[n++].port = c == ':' ? atoi(text + i + 1) : -1;
                at = 0;
            }
            while (c == ':' || (i < len && c != ',' && c != '\0'))
                c = ++i < len ? text[i] : '\0';
        } else if (at + 1 < sizeof(out[n].name)) {
            out[n].name[at++] = c;
        }
    }
    return n;
}

static bool force_matches(const tp_xml_elem *dev, const force_entry *e, int n)
{
    int port = (int)attr_num(dev, "port", 0);
    for (int i = 0; i < n; i++)
        if (strcmp(name_of(dev), e[i].name) == 0 &&
            (e[i].port == -1 || port == -1 || e[i].port == port))
            return true;
    return false;
}

static tp_status force_fail(vnic_ctx *v, const char *group)
{
    return tp_fail(v->err, TP_ERR_TOPOLOGY, NULL, 0, 0,
                   "NCCL_NET_FORCE_MERGE group \"%s\": NCCL %s fails (ncclInvalidUsage)", group,
                   tp_config__profile(v->cfg)->version);
}

/* One ';'-separated group of NCCL_NET_FORCE_MERGE. */
static tp_status force_group(vnic_ctx *v, const char *group, size_t len)
{
    char text[512];
    tp_copy_str(text, len + 1 < sizeof(text) ? len + 1 : sizeof(text), group);
    force_entry entries[TP_VNIC_MAX_DEVS];
    int n = parse_group(text, strlen(text), entries, v->max_devs);
    if (n == 0) /* NCCL's loop retries this group forever (its strtok does not advance) */
        return tp_fail(v->err, TP_ERR_TOPOLOGY, NULL, 0, 0,
                       "NCCL_NET_FORCE_MERGE group \"%s\" names no device: NCCL %s loops "
                       "forever on it",
                       text, tp_config__profile(v->cfg)->version);
    vnic_group g = {0};
    int matched = 0;
    for (size_t d = 0; d < v->phys->count; d++)
        if (force_matches(v->phys->devs[d], entries, n) && matched++ < v->max_devs)
            g.devs[g.ndevs++] = (int)d;
    if (matched != n) {
        tp_log_warn(v->log, "TOPO/NET : Only matched %d devices, %d requested from %s", matched, n,
                    text);
        return force_fail(v, text);
    }
    if (!make_vnic(v, &g)) {
        tp_log_warn(v->log,
                    "TOPO/NET : Could not force merge NICs %s. Please specify a valid "
                    "NCCL_NET_FORCE_MERGE string.",
                    text);
        return force_fail(v, text);
    }
    for (int i = 0; i < g.ndevs; i++)
        v->placed[g.devs[i]] = true;
    return TP_OK;
}

static tp_status force_merge(vnic_ctx *v, const char *spec)
{
    tp_log_info_sub(v->log, TP_SUB_ENV | TP_SUB_NET,
                    "TOPO/NET : Force-fusing NICs using NCCL_NET_FORCE_MERGE=%s", spec);
    tp_status st = TP_OK;
    for (const char *p = spec; *p && st == TP_OK;) {
        size_t len = strcspn(p, ";");
        if (len)
            st = force_group(v, p, len);
        p += len + (p[len] == ';');
    }
    return st;
}

/* ---- ncclTopoAutoMerge ---- */

static void compute_paths(vnic_ctx *v)
{
    int n = (int)v->phys->count;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const tp_xml_elem *pair[2] = {v->phys->nodes[i], v->phys->nodes[j]};
            tp_xml_elem *parent = NULL;
            v->paths[i * n + j] = get_path(&v->lv, pair, 2, &parent);
        }
}

static void auto_merge(vnic_ctx *v, int level)
{
    int n = (int)v->phys->count;
    for (int i = 0; i < n; i++) {
        if (v->placed[i])
            continue;
        vnic_group g = {.ndevs = 1, .devs = {i}};
        v->placed[i] = true;
        /* RAIL joins devices of one defined rail: the IB plugin's have none (rail=-1) */
        for (int j = 0; j < n && g.ndevs < v->max_devs && !v->rail_policy; j++) {
            if (v->paths[i * n + j] <= level && !v->placed[j] && j != i) {
                g.devs[g.ndevs++] = j;
                v->placed[j] = true;
            }
        }
        if (make_vnic(v, &g))
            continue;
        tp_log_info_sub(v->log, TP_SUB_GRAPH | TP_SUB_INIT | TP_SUB_NET,
                        "Marking physical devices as unplaced, increasing distance and restarting "
                        "search.");
        v->placed[i] = false;
        for (int k = 1; k < g.ndevs; k++) {
            v->placed[g.devs[k]] = false;
            v->paths[i * n + g.devs[k]] = v->paths[g.devs[k] * n + i] = v->lv.dis;
        }
        i = 0; /* NCCL restarts with i = 0, which its loop then increments */
    }
}

/* NCCL_NET_MERGE_LEVEL through nicPathKvList (kvConvertToInt: prefix match, else 0 with a
 * line, and from 2.30.3 its hints); unset: PORT. */
int tp_system__vnic_merge_level(const tp_config *cfg, tp_log *log)
{
    const tp_nccl_profile *p = tp_config__profile(cfg);
    const char *text = tp_config_str(cfg, TP_P_NET_MERGE_LEVEL);
    if (!text)
        return tp_nccl_profile__path_number(p, "NVL"); /* PATH_PORT */
    static const char *const names[] = {"LOC", "PORT", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        int number = tp_nccl_profile__path_number(p, i == 1 ? "NVL" : names[i]);
        if (number >= 0 && strncmp(text, names[i], strlen(names[i])) == 0)
            return number;
    }
    tp_log_info_sub(log, TP_SUB_GRAPH,
                    "KV Convert to int : could not find value of '%s' in dictionary, falling "
                    "back to 0",
                    text);
    if (tp_profile_has(p, TP_RULE_LOG_TOPO_HINTS)) { /* printMissingTopoDictValueHint */
        tp_log_info_sub(log, TP_SUB_GRAPH,
                        "HINT: In many cases this issue indicates missing or faulty information in "
                        "the provided topology file.");
        tp_log_info_sub(log, TP_SUB_GRAPH,
                        "HINT: To confirm, set NCCL_TOPO_DUMP_FILE=topo.xml to produce the "
                        "topology NCCL has detected and compare to the one provided.");
    }
    return 0;
}

bool tp_system__vnic_rail_policy(const tp_config *cfg, tp_log *log)
{
    const char *text = tp_config_str(cfg, TP_P_NET_MERGE_POLICY);
    if (!text || !tp_profile_has(tp_config__profile(cfg), TP_RULE_NET_MERGE_POLICY))
        return false;
    if (strcasecmp(text, "RAIL") == 0) {
        tp_log_info_sub(log, TP_SUB_ENV, "NCCL_NET_MERGE_POLICY set by environment to RAIL");
        return true;
    }
    if (strcasecmp(text, "ALL") != 0)
        tp_log_warn(log, "NCCL_NET_MERGE_POLICY: unknown value '%s', defaulting to ALL", text);
    return false;
}

/* The level auto-fusion uses: read here (2.27.5 ncclTopoMakeVNics), or before the plugin's
 * devices were filled (net-fusion-env-first: its lines were printed then). */
static int merge_level(vnic_ctx *v)
{
    tp_log quiet = {.enabled = false};
    bool read_before = tp_profile_has(tp_config__profile(v->cfg), TP_RULE_NET_FUSION_ENV_FIRST);
    return tp_system__vnic_merge_level(v->cfg, read_before ? &quiet : v->log);
}

/* ---- ncclTopoPopulateNics for the virtual devices ---- */

void tp_system__log_populated(tp_log *log, const tp_nccl_profile *profile,
                              const tp_populated_net *d)
{
    if (d->old_dev != -1 && d->old_dev != d->n)
        tp_log_info_sub(log, TP_SUB_GRAPH, "TOPO/NET : Changing IB dev index from %ld to %d",
                        d->old_dev, d->n);
    const char *keep = tp_xml__attr(d->net, "keep"), *coll = tp_xml__attr(d->net, "coll");
    if (!tp_profile_has(profile, TP_RULE_LOG_POPULATE_NICS_RAILS)) {
        tp_log_info_sub(log, TP_SUB_GRAPH,
                        "ncclTopoPopulateNics : Filled %s in topo with pciPath=%s keep=%s coll=%s",
                        d->name, d->pci_path, keep ? keep : "(null)", coll ? coll : "(null)");
        return;
    }
    /* 2.30.7: a NET plugin's device (net=1), no gin/rma, no rail; the IB plugin gives a device
     * it fused the plane NCCL_IB_PLANE_VIRT_BIT | 1 (16385), others none. */
    tp_log_info_sub(log, TP_SUB_GRAPH,
                    "ncclTopoPopulateNics : Filled %s in topo with pciPath=%s net=1 gin=(null) "
                    "rma=(null) keep=%s coll=%s rail=-1 plane=%d",
                    d->name, d->pci_path, keep ? keep : "(null)", coll ? coll : "(null)",
                    d->is_virtual ? (1 << 14) | 1 : -1);
}

static bool is_made(const vnic_ctx *v, const tp_xml_elem *e, int n_made)
{
    for (int i = 0; i < n_made; i++)
        if (v->made[i] == e)
            return true;
    return false;
}

static const tp_xml_elem *find_loaded(const vnic_ctx *v, const tp_xml_elem *e, const char *name,
                                      int n_made)
{
    if (tp_xml__is_tag(e, "net") && strcmp(name_of(e), name) == 0 && !is_made(v, e, n_made))
        return e;
    for (size_t i = 0; i < e->n_children; i++) {
        const tp_xml_elem *f = find_loaded(v, e->children[i], name, n_made);
        if (f)
            return f;
    }
    return NULL;
}

/* xmlFindTagKv(xml, "net", "name", name): the loaded elements in document order, then the ones
 * NCCL added, in the order it added them. */
static tp_xml_elem *find_net(const vnic_ctx *v, const char *name, int n_made)
{
    const tp_xml_elem *e = find_loaded(v, v->doc->root, name, n_made);
    for (int i = 0; !e && i < n_made; i++)
        if (strcmp(name_of(v->made[i]), name) == 0)
            e = v->made[i];
    return (tp_xml_elem *)e;
}

static bool busid_used(const tp_xml_elem *e, const char *busid)
{
    const char *b = tp_xml__is_tag(e, "pci") ? tp_xml__attr(e, "busid") : NULL;
    if (b && strcmp(b, busid) == 0)
        return true;
    for (size_t i = 0; i < e->n_children; i++)
        if (busid_used(e->children[i], busid))
            return true;
    return false;
}

/* busIdToInt64: the hex digits up to the first other character, ':' and '.' skipped. */
static long long busid_number(const char *busid)
{
    char hex[17];
    size_t n = 0;
    for (const char *p = busid; *p && n < sizeof(hex) - 1; p++) {
        if (*p == ':' || *p == '.')
            continue;
        if (!strchr("0123456789abcdefABCDEF", *p))
            break;
        hex[n++] = *p;
    }
    hex[n] = '\0';
    return strtoll(hex, NULL, 16);
}

/* ncclTopoMakePciParent: a copy of the first member's PCI device, under the bridge `parent`,
 * with the next bus id no <pci> has. */
static tp_status make_pci_parent(vnic_ctx *v, tp_xml_elem **parent, const tp_xml_elem *member)
{
    const tp_xml_elem *pci = member->parent ? member->parent->parent : NULL;
    const char *seed = pci && tp_xml__is_tag(pci, "pci") ? tp_xml__attr(pci, "busid") : NULL;
    long long id = seed ? busid_number(seed) : 0;
    for (int i = 0; seed && i < TP_VNIC_BUSID_TRIES; i++) {
        char busid[32];
        id++;
        snprintf(busid, sizeof(busid), "%04llx:%02llx:%02llx.%01llx", id >> 20,
                 (id & 0xff000) >> 12, (id & 0xff0) >> 4, id & 0xf);
        if (busid_used(v->doc->root, busid))
            continue;
        tp_xml_elem *made = NULL;
        tp_status st = tp_xml__add_child(&made, *parent, "pci", v->err);
        for (size_t a = 0; a < pci->n_attrs && st == TP_OK; a++)
            st = tp_xml__set_attr(made, pci->attrs[a].name, pci->attrs[a].value, v->err);
        if (st == TP_OK)
            st = tp_xml__set_attr(made, "busid", busid, v->err);
        *parent = made;
        return st;
    }
    if (seed)
        tp_log_warn(v->log, "TOPO/NET : Couldn't generate unique busId after %d tries",
                    TP_VNIC_BUSID_TRIES);
    else
        tp_log_warn(v->log, "TOPO/NET : Can't find busId of child 0 %s", name_of(member));
    return tp_fail(v->err, TP_ERR_TOPOLOGY, NULL, 0, 0,
                   "virtual NIC of %s: NCCL %s finds no PCI parent for it (internal error)",
                   name_of(member), tp_config__profile(v->cfg)->version);
}

/* ncclTopoFindLinkWidthRec: e's share of the members' PCI width (found: a member is under it). */
static tp_status link_width_rec(vnic_ctx *v, const tp_xml_elem *e, const tp_xml_elem *const *nodes,
                                int n, bool *found, int *width)
{
    int mine = 0;
    if (tp_xml__is_tag(e, "pci")) {
        const char *w = tp_xml__attr(e, "link_width");
        if (!w) { /* NCCL's xmlGetAttrInt fails on it */
            tp_log_warn(v->log, "Attribute link_width of node pci not found");
            return tp_xml__fail(v->err, TP_ERR_TOPOLOGY, v->doc, e,
                                "missing attribute link_width (NCCL %s sums the widths of a "
                                "virtual NIC's members here)",
                                tp_config__profile(v->cfg)->version);
        }
        mine = (int)strtol(w, NULL, 0);
    }
    *found = false;
    for (int i = 0; i < n && !*found; i++)
        *found = e == nodes[i];
    int total = 0;
    for (size_t c = 0; c < e->n_children; c++) {
        bool sub_found = false;
        int sub = 0;
        tp_status st = link_width_rec(v, e->children[c], nodes, n, &sub_found, &sub);
        if (st != TP_OK)
            return st;
        if (sub_found) {
            *found = true;
            total += sub;
        }
    }
    if (!*found)
        *width = 0;
    else if (total == 0) /* the PCI device right above a member */
        *width = mine;
    else
        *width = mine > 0 && mine < total ? mine : total;
    return TP_OK;
}

/* ncclTopoFindLinkWidth: the members' widths summed over the common parent's branches. */
static tp_status link_width(vnic_ctx *v, const tp_xml_elem *parent, const tp_xml_elem *const *nodes,
                            int n, int *width)
{
    *width = 0;
    for (size_t c = 0; c < parent->n_children; c++) {
        bool found = false;
        int sub = 0;
        tp_status st = link_width_rec(v, parent->children[c], nodes, n, &found, &sub);
        if (st != TP_OK)
            return st;
        if (found)
            *width += sub;
    }
    return TP_OK;
}

/* The PCI devices from the virtual NIC's parent up to the common one get the summed width. */
static tp_status set_link_width(vnic_ctx *v, tp_xml_elem *parent, const tp_xml_elem *common,
                                int width)
{
    char text[16];
    snprintf(text, sizeof(text), "%d", width);
    tp_status st = TP_OK;
    for (tp_xml_elem *e = parent; e && st == TP_OK; e = e->parent) {
        if (tp_xml__is_tag(e, "pci"))
            st = tp_xml__set_attr(e, "link_width", text, v->err);
        if (e == common)
            break;
    }
    return st;
}

/* A made-up PCI device for the virtual NIC when its common parent is a PCI bridge (from 2.28,
 * vnic-pci-under-cpu, also a CPU); 2.30.7 refuses a common parent that is the system. */
static tp_status reparent(vnic_ctx *v, tp_xml_elem **parent, const tp_xml_elem *first)
{
    const tp_nccl_profile *p = tp_config__profile(v->cfg);
    if (tp_xml__is_tag(*parent, "cpu"))
        return tp_profile_has(p, TP_RULE_VNIC_PCI_UNDER_CPU) ? make_pci_parent(v, parent, first)
                                                             : TP_OK;
    if (tp_xml__is_tag(*parent, "system") && tp_profile_has(p, TP_RULE_VNIC_ONE_NUMA)) {
        tp_log_warn(v->log, "Fusing NET devices from different NUMA domains is not supported.");
        return tp_fail(v->err, TP_ERR_TOPOLOGY, NULL, 0, 0,
                       "virtual NIC of %s: its devices hang off different CPUs, which NCCL %s "
                       "refuses (ncclInvalidArgument)",
                       name_of(first), p->version);
    }
    if (!tp_xml__is_tag(*parent, "pci"))
        return TP_OK;
    const char *cls = tp_xml__attr(*parent, "class");
    if (!cls) {
        tp_log_warn(v->log, "Attribute class of node pci not found");
        return tp_xml__fail(v->err, TP_ERR_TOPOLOGY, v->doc, *parent,
                            "missing attribute class (NCCL places a virtual NIC here)");
    }
    return strcmp(cls, TP_PCI_BRIDGE_CLASS) == 0 ? make_pci_parent(v, parent, first) : TP_OK;
}

/* ncclTopoGetVNicParent: the members' common parent, a PCI bridge given a device of its own. */
static tp_status vnic_parent(vnic_ctx *v, const vnic_group *g, tp_xml_elem **parent)
{
    const tp_xml_elem *nodes[TP_VNIC_MAX_DEVS];
    for (int i = 0; i < g->ndevs; i++)
        nodes[i] = v->phys->nodes[g->devs[i]];
    int path = get_path(&v->lv, nodes, g->ndevs, parent);
    const tp_nccl_profile *p = tp_config__profile(v->cfg);
    if (path == v->lv.loc && !tp_profile_has(p, TP_RULE_VNIC_PCI_UNDER_CPU)) {
        *parent = NULL;
        return TP_OK;
    }
    int width = 0;
    tp_status st = TP_OK;
    if (*parent && tp_profile_has(p, TP_RULE_VNIC_LINK_WIDTH) &&
        (path == v->lv.phb || path == v->lv.pxb || path == v->lv.pix))
        st = link_width(v, *parent, nodes, g->ndevs, &width);
    tp_xml_elem *common = *parent;
    if (st == TP_OK && *parent)
        st = reparent(v, parent, nodes[0]);
    if (st == TP_OK && width > 0)
        st = set_link_width(v, *parent, common, width);
    return st;
}

/* ncclTopoFillNet with a forced parent (NULL: the first CPU): a new <net> in its first <nic>. */
static tp_status add_vnic_net(vnic_ctx *v, tp_xml_elem *parent, const char *name, tp_xml_elem **out)
{
    if (!parent)
        parent = tp_xml__child(v->doc->root, "cpu");
    if (!parent)
        return tp_xml__fail(v->err, TP_ERR_TOPOLOGY, v->doc, v->doc->root,
                            "no <cpu> to attach virtual NIC %s to", name);
    tp_xml_elem *nic = tp_xml__child(parent, "nic");
    tp_status st = nic ? TP_OK : tp_xml__add_child(&nic, parent, "nic", v->err);
    if (st == TP_OK)
        st = tp_xml__add_child(out, nic, "net", v->err);
    if (st == TP_OK)
        st = tp_xml__set_attr(*out, "name", name, v->err);
    return st;
}

static tp_status init_attr(tp_xml_elem *e, const char *name, const char *value, tp_error *err)
{
    return tp_xml__attr(e, name) ? TP_OK : tp_xml__set_attr(e, name, value, err);
}

/* ncclTopoPopulateNics' attributes: keep, dev, then the plugin's properties where unset. */
static tp_status fill_vnic(vnic_ctx *v, tp_xml_elem *net, int n, const vnic_group *g)
{
    const tp_xml_elem *first = v->phys->devs[g->devs[0]];
    long long speed = 0;
    for (int i = 0; i < g->ndevs; i++)
        speed += attr_num(v->phys->devs[g->devs[i]], "speed", 0);
    char text[5][32];
    snprintf(text[0], sizeof(text[0]), "%d", n);
    snprintf(text[1], sizeof(text[1]), "%d", (int)speed);
    snprintf(text[2], sizeof(text[2]), "%d", (int)attr_num(first, "port", 0));
    const char *guid = tp_xml__attr(first, "guid");
    snprintf(text[3], sizeof(text[3]), "0x%llx",
             (unsigned long long)(guid ? tp_netdev__port_guid(guid) : 0));
    snprintf(text[4], sizeof(text[4]), "%d", (int)attr_num(first, "maxconn", 0));
    tp_status st = tp_xml__set_attr(net, "keep", "1", v->err);
    if (st == TP_OK && (st = tp_xml__set_attr(net, "dev", text[0], v->err)) == TP_OK &&
        (st = init_attr(net, "latency", "0", v->err)) == TP_OK &&
        (st = init_attr(net, "speed", text[1], v->err)) == TP_OK &&
        (st = init_attr(net, "port", text[2], v->err)) == TP_OK &&
        (st = init_attr(net, "guid", text[3], v->err)) == TP_OK &&
        (st = init_attr(net, "maxconn", text[4], v->err)) == TP_OK)
        st = init_attr(net, "gdr", attr_num(first, "gdr", 0) ? "1" : "0", v->err);
    return st;
}

static tp_status populate_vnic(vnic_ctx *v, int k)
{
    const vnic_group *g = &v->vnics[k];
    char name[TP_VNIC_MAX_DEVS * 256 + TP_VNIC_MAX_DEVS];
    size_t at = 0;
    for (int i = 0; i < g->ndevs && at < sizeof(name); i++)
        at += (size_t)snprintf(name + at, sizeof(name) - at, "%s%s", i ? "+" : "",
                               name_of(v->phys->devs[g->devs[i]]));
    const char *pci_path = tp_system__net_pci_path(v->phys->devs[g->devs[0]]);
    int n = (int)v->phys->count + k;
    tp_xml_elem *net = find_net(v, name, k), *parent = NULL;
    const char *old = net ? tp_xml__attr(net, "dev") : NULL;
    tp_status st = TP_OK;
    if (!net) {
        st = vnic_parent(v, g, &parent);
        if (!tp_profile_has(tp_config__profile(v->cfg), TP_RULE_VNIC_FORCED_PARENT))
            tp_log_info_sub(v->log, TP_SUB_NET | TP_SUB_GRAPH,
                            "Topology detection: network path %s is not a PCI device (). "
                            "Attaching to first CPU",
                            pci_path);
        else if (st == TP_OK && !parent)
            tp_log_info_sub(v->log, TP_SUB_NET | TP_SUB_GRAPH,
                            "Topology detection: network path (name = %s) %s is not a PCI "
                            "device (). Attaching to first CPU",
                            name, pci_path);
        if (st == TP_OK)
            st = add_vnic_net(v, parent, name, &net);
    }
    if (st == TP_OK)
        st = fill_vnic(v, net, n, g);
    v->made[k] = net;
    if (st == TP_OK)
        tp_system__log_populated(v->log, tp_config__profile(v->cfg),
                                 &(tp_populated_net){.net = net,
                                                     .n = n,
                                                     .old_dev = old ? strtol(old, NULL, 0) : -1,
                                                     .name = name,
                                                     .pci_path = pci_path,
                                                     .is_virtual = true});
    return st;
}

static void init_levels(vnic_levels *lv, const tp_nccl_profile *p)
{
    lv->loc = tp_nccl_profile__path_number(p, "LOC");
    lv->port = tp_nccl_profile__path_number(p, "NVL"); /* topo.h PATH_PORT = PATH_NVL */
    lv->pix = tp_nccl_profile__path_number(p, "PIX");
    lv->pxb = tp_nccl_profile__path_number(p, "PXB");
    lv->phb = tp_nccl_profile__path_number(p, "PHB");
    lv->sys = tp_nccl_profile__path_number(p, "SYS");
    lv->dis = tp_nccl_profile__path_number(p, "DIS");
}

tp_status tp_system__make_vnics(tp_xml *doc, const tp_vnic_phys *phys, const tp_config *cfg,
                                tp_log *log, int *n_made, tp_error *err)
{
    size_t n = phys->count;
    *n_made = 0;
    if (n == 0)
        return TP_OK;
    vnic_ctx v = {.doc = doc, .phys = phys, .cfg = cfg, .log = log, .err = err};
    init_levels(&v.lv, tp_config__profile(cfg));
    tp_log quiet = {.enabled = false};
    v.rail_policy = tp_system__vnic_rail_policy(cfg, &quiet); /* its lines: import_nets */
    v.max_devs = tp_profile_has(tp_config__profile(cfg), TP_RULE_VNIC_EIGHT_DEVS)
                     ? TP_VNIC_MAX_DEVS
                     : TP_VNIC_MAX_DEVS_V10;
    const char *force = tp_config_str(cfg, TP_P_NET_FORCE_MERGE);
    /* each automatic vNIC takes 2 unplaced devices or more; each forced one, a group */
    v.cap_vnics = (int)n + (force ? (int)strlen(force) : 0);
    v.paths = malloc(n * n * sizeof(*v.paths));
    v.placed = calloc(n, sizeof(*v.placed));
    v.vnics = malloc((size_t)v.cap_vnics * sizeof(*v.vnics));
    v.made = calloc((size_t)v.cap_vnics, sizeof(*v.made));
    tp_status st = v.paths && v.placed && v.vnics && v.made ? TP_OK : tp_fail_nomem(err);
    int level = st == TP_OK ? merge_level(&v) : 0;
    if (st == TP_OK && force)
        st = force_merge(&v, force);
    if (st == TP_OK) {
        compute_paths(&v);
        auto_merge(&v, level);
    }
    for (int k = 0; k < v.n_vnics && st == TP_OK; k++)
        st = populate_vnic(&v, k);
    *n_made = v.n_vnics;
    free(v.paths);
    free(v.placed);
    free(v.vnics);
    free(v.made);
    return st;
}
