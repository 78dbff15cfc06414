/* Graphviz picture of the system: nodes, links with type and bandwidth. */
#include "report.h"

static const char *link_color(int type)
{
    switch (type) {
    case TP_LINK_NVL:
        return "forestgreen";
    case TP_LINK_PCI:
        return "royalblue";
    case TP_LINK_SYS:
        return "firebrick";
    case TP_LINK_NET:
        return "gray40";
    default:
        return "black";
    }
}

static const char *node_shape(int type)
{
    return type == TP_NODE_GPU ? "box3d" : type == TP_NODE_CPU ? "component"
         : type == TP_NODE_NVS ? "hexagon" : type == TP_NODE_NET ? "ellipse" : "box";
}

/* A stable DOT id: "gpu_0_1a000". */
static void dot_id(char *buf, size_t size, const tp_node *n)
{
    snprintf(buf, size, "%s_%llx_%llx", tp_node_type_name(n->type),
             (unsigned long long)TP_ID_SYSTEM_ID(n->id), (unsigned long long)TP_ID_LOCAL_ID(n->id));
}

static void dot_node(FILE *out, const tp_system *sys, const tp_node *n)
{
    char id[64], label[64], extra[64] = "";
    dot_id(id, sizeof(id), n);
    tp_report__node_label(label, sizeof(label), n);
    if (n->type == TP_NODE_GPU)
        snprintf(extra, sizeof(extra), "\\nrank %d, sm%d", n->gpu.rank, n->gpu.cuda_comp_cap);
    else if (n->type == TP_NODE_NET)
        snprintf(extra, sizeof(extra), "\\ndev %d, %.1f GB/s", n->net.dev, n->net.bw);
    (void)sys;
    fprintf(out, "  %s [label=\"%s%s\", shape=%s];\n", id, label, extra, node_shape(n->type));
}

/* Whether the link's reverse is drawn instead (each pair of nodes once). */
static bool is_second_of_pair(const tp_system *sys, const tp_node *from, const tp_link *l)
{
    long from_idx = from - sys->nodes[from->type].nodes;
    long to_idx = l->rem - sys->nodes[l->rem->type].nodes;
    return l->rem->type < from->type || (l->rem->type == from->type && to_idx < from_idx);
}

static void dot_links(FILE *out, const tp_system *sys, const tp_node *n)
{
    char a[64], b[64];
    dot_id(a, sizeof(a), n);
    for (int i = 0; i < n->n_links; i++) {
        const tp_link *l = &n->links[i];
        if (l->rem == n || is_second_of_pair(sys, n, l))
            continue;
        dot_id(b, sizeof(b), l->rem);
        fprintf(out, "  %s -- %s [label=\"%s %.1f\", color=%s, fontcolor=%s];\n", a, b,
                tp_link_type_name(l->type), l->bw, link_color(l->type), link_color(l->type));
    }
}

tp_status tp_report__system_dot(FILE *out, const tp_system *sys, tp_error *err)
{
    fputs("graph topology {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [fontname=\"Helvetica\", fontsize=8];\n", out);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < sys->nodes[t].count; i++)
            dot_node(out, sys, &sys->nodes[t].nodes[i]);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < sys->nodes[t].count; i++)
            dot_links(out, sys, &sys->nodes[t].nodes[i]);
    fputs("}\n", out);
    return tp_report__check_stream(out, err);
}
