/*
 * Devices by the names operators know (shared by the explanations and the reports): bus ids,
 * the <pci> element of a PCI device, NET names, "GPU 3 (0000:5f:00.0, GPU/0-5f000)".
 */
#include "system/system.h"

#include <string.h>
#include <strings.h>

void tp_system__bus_id(char *buf, size_t size, int64_t id)
{
    unsigned long long v = (unsigned long long)TP_ID_LOCAL_ID(id);
    snprintf(buf, size, "%04llx:%02llx:%02llx.%llx", v >> 20, (v >> 12) & 0xff, (v >> 4) & 0xff,
             v & 0xf);
}

const tp_xml_elem *tp_system__xml_find(const tp_xml_elem *e, const char *tag, const char *attr,
                                       const char *value)
{
    if (!e)
        return NULL;
    const char *v = strcmp(e->tag, tag) == 0 ? tp_xml__attr(e, attr) : NULL;
    if (v && strcasecmp(v, value) == 0)
        return e;
    for (size_t i = 0; i < e->n_children; i++) {
        const tp_xml_elem *hit = tp_system__xml_find(e->children[i], tag, attr, value);
        if (hit)
            return hit;
    }
    return NULL;
}

const tp_xml_elem *tp_system__pci_elem(const tp_xml *xml, const tp_node *node)
{
    char bus[32];
    tp_system__bus_id(bus, sizeof(bus), node->id);
    return xml ? tp_system__xml_find(xml->root, "pci", "busid", bus) : NULL;
}

/* The name of the first <net> under e, or NULL. */
static const char *first_net_name(const tp_xml_elem *e)
{
    if (!e)
        return NULL;
    if (strcmp(e->tag, "net") == 0)
        return tp_xml__attr(e, "name");
    for (size_t i = 0; i < e->n_children; i++) {
        const char *name = first_net_name(e->children[i]);
        if (name)
            return name;
    }
    return NULL;
}

const char *tp_system__nic_net_name(const tp_xml *xml, const tp_node *nic)
{
    return first_net_name(tp_system__pci_elem(xml, nic));
}

void tp_system__device_name(char *buf, size_t size, const tp_xml *xml, const tp_node *node,
                            const char *label)
{
    char bus[32], dev[16];
    tp_system__bus_id(bus, sizeof(bus), node->id);
    const char *name = NULL;
    switch (node->type) {
    case TP_NODE_GPU:
        snprintf(buf, size, "GPU %d (%s, %s)", node->gpu.dev, bus, label);
        return;
    case TP_NODE_NET: {
        snprintf(dev, sizeof(dev), "%d", node->net.dev);
        const tp_xml_elem *net = xml ? tp_system__xml_find(xml->root, "net", "dev", dev) : NULL;
        name = net ? tp_xml__attr(net, "name") : NULL;
        if (name)
            snprintf(buf, size, "%s (%s)", name, label);
        else
            snprintf(buf, size, "%s", label);
        return;
    }
    case TP_NODE_NIC:
        name = tp_system__nic_net_name(xml, node);
        snprintf(buf, size, "NIC %s%s%s (%s)", name ? name : "", name ? " at " : "", bus, label);
        return;
    case TP_NODE_PCI:
        snprintf(buf, size, "PCIe switch %s (%s)", bus, label);
        return;
    case TP_NODE_NVS:
        snprintf(buf, size, "NVSwitch");
        return;
    case TP_NODE_CPU:
        snprintf(buf, size, "NUMA node %lld (%s)", (long long)TP_ID_LOCAL_ID(node->id), label);
        return;
    default:
        snprintf(buf, size, "%s", label);
    }
}
