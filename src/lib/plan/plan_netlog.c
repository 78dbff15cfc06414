/*
 * The lines NCCL prints while importing the network plugins into the topology
 * (2.24 topo.cc ncclTopoProcessNet / ncclTopoPopulateNics, TP_RULE_NIC_FUSION):
 * the IB plugin's state, then one "Filled" line per device in device order,
 * its pciPath being the bus id of the PCI element holding its <nic>.
 */
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct net_entry {
    const tp_xml_elem *net;
    long dev;
    size_t order; /* document order: ties keep it */
} net_entry;

static void collect(const tp_xml_elem *e, net_entry *out, size_t *n, size_t cap)
{
    if (tp_xml__is_tag(e, "net") && *n < cap) {
        const char *dev = tp_xml__attr(e, "dev");
        out[*n] = (net_entry){.net = e, .dev = dev ? strtol(dev, NULL, 0) : 0, .order = *n};
        (*n)++;
    }
    for (size_t i = 0; i < e->n_children; i++)
        collect(e->children[i], out, n, cap);
}

static size_t count_nets(const tp_xml_elem *e)
{
    size_t n = tp_xml__is_tag(e, "net");
    for (size_t i = 0; i < e->n_children; i++)
        n += count_nets(e->children[i]);
    return n;
}

static int by_dev(const void *a, const void *b)
{
    const net_entry *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The bus id of the PCI element above the net's <nic>, "" when the NIC hangs off a CPU. */
static const char *pci_path(const tp_xml_elem *net)
{
    const tp_xml_elem *nic = net->parent;
    const tp_xml_elem *pci = nic ? nic->parent : NULL;
    const char *bus = pci && tp_xml__is_tag(pci, "pci") ? tp_xml__attr(pci, "busid") : NULL;
    return bus ? bus : "";
}

static void log_filled(tp_log *log, const tp_xml_elem *net, bool rails)
{
    const char *name = tp_xml__attr(net, "name");
    const char *coll = tp_xml__attr(net, "coll");
    if (!rails) {
        tp_log_info_sub(log, TP_SUB_GRAPH,
                        "ncclTopoPopulateNics : Filled %s in topo with pciPath=%s keep=1 coll=%s",
                        name ? name : "(null)", pci_path(net), coll ? coll : "(null)");
        return;
    }
    /* 2.30.7: the IB plugin sets no rail, nor a plane without NCCL_IB_HCA plane ids (a vNIC
     * it fuses would show NCCL_IB_PLANE_VIRT_BIT | 1: with TP_RULE_NIC_FUSION's vNICs); "net" is 1
     * (a NET plugin's device), gin/rma unset. */
    tp_log_info_sub(log, TP_SUB_GRAPH,
                    "ncclTopoPopulateNics : Filled %s in topo with pciPath=%s net=1 gin=(null) "
                    "rma=(null) keep=1 coll=%s rail=-1 plane=-1",
                    name ? name : "(null)", pci_path(net), coll ? coll : "(null)");
}

tp_status tp_plan__log_net_import(const tp_xml *doc, const tp_nccl_profile *profile, tp_log *log,
                                  tp_error *err)
{
    bool rails = tp_profile_has(profile, TP_RULE_LOG_POPULATE_NICS_RAILS);
    tp_log_info_sub(log, TP_SUB_GRAPH, "TOPO/NET : Importing network plugins to topology");
    if (!rails) {
        tp_log_info_sub(log, TP_SUB_GRAPH, "Retrieving state for IB");
        tp_log_info_sub(log, TP_SUB_GRAPH, "Initialized state 0 for IB");
    }
    size_t cap = doc && doc->root ? count_nets(doc->root) : 0, n = 0;
    if (cap == 0)
        return TP_OK;
    net_entry *nets = malloc(cap * sizeof(*nets));
    if (!nets)
        return tp_fail_nomem(err);
    collect(doc->root, nets, &n, cap);
    qsort(nets, n, sizeof(*nets), by_dev);
    for (size_t i = 0; i < n; i++)
        log_filled(log, nets[i].net, rails);
    free(nets);
    return TP_OK;
}
