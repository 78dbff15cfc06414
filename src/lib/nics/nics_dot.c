/*
 * Graphviz picture of a plan: the system (GPUs, switches, CPUs, NICs by name,
 * links with type and bandwidth), the ring and tree channels of the reported
 * rank's node drawn over it, and a legend. Left to right, so that many NICs
 * stack up instead of making a strip.
 */
#include "nics/nics.h"
#include "report/report.h"

/* Colors of the channels, cycled; links are drawn in grays and blues. */
static const char *const channel_colors[] = {
    "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628", "#f781bf", "#999900",
};
#define N_CHANNEL_COLORS (sizeof(channel_colors) / sizeof(channel_colors[0]))

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
    return type == TP_NODE_GPU   ? "box3d"
           : type == TP_NODE_CPU ? "component"
           : type == TP_NODE_NVS ? "hexagon"
           : type == TP_NODE_NET ? "ellipse"
                                 : "box";
}

/* A stable DOT id: "GPU_0_1a000". */
static void dot_id(char *buf, size_t size, const tp_node *n)
{
    snprintf(buf, size, "%s_%llx_%llx", tp_node_type_name(n->type),
             (unsigned long long)TP_ID_SYSTEM_ID(n->id), (unsigned long long)TP_ID_LOCAL_ID(n->id));
}

static void dot_node(FILE *out, const tp_plan *plan, const tp_node *n)
{
    const tp_system *sys = plan->sys;
    char id[64], label[64], name[32], extra[200] = "";
    dot_id(id, sizeof(id), n);
    tp_report__node_label(label, sizeof(label), n);
    tp_report__node_short(name, sizeof(name), sys, n);
    if (n->type == TP_NODE_GPU) {
        snprintf(extra, sizeof(extra), "%s\\n%s, sm%d", name, label, n->gpu.cuda_comp_cap);
    } else if (n->type == TP_NODE_NET) {
        const char *dev =
            plan->topo_xml ? tp_nics__xml_net_name(plan->topo_xml->root, n->net.dev) : NULL;
        snprintf(extra, sizeof(extra), "%s %s\\n%.1f GB/s", name, dev ? dev : "",
                 tp_nics__own_speed(plan, n));
    } else {
        snprintf(extra, sizeof(extra), "%s", label);
    }
    fprintf(out, "  %s [label=\"%s\", shape=%s%s];\n", id, extra, node_shape(n->type),
            n->type == TP_NODE_GPU ? ", style=filled, fillcolor=\"#f0f0f0\"" : "");
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

static const tp_node *gpu_of_rank(const tp_system *sys, int rank)
{
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++)
        if (sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank == rank)
            return &sys->nodes[TP_NODE_GPU].nodes[i];
    return NULL;
}

static const tp_node *net_of_id(const tp_system *sys, int64_t id)
{
    for (int i = 0; i < sys->nodes[TP_NODE_NET].count; i++)
        if (sys->nodes[TP_NODE_NET].nodes[i].id == id)
            return &sys->nodes[TP_NODE_NET].nodes[i];
    return NULL;
}

static void channel_edge(FILE *out, const tp_node *a, const tp_node *b, int c, bool tree)
{
    char x[64], y[64];
    if (!a || !b)
        return;
    dot_id(x, sizeof(x), a);
    dot_id(y, sizeof(y), b);
    /* no labels: flat labelled edges make dot lose routes; the legend names the colors */
    fprintf(out,
            "  %s -- %s [dir=forward, constraint=false, penwidth=2, color=\"%s\", "
            "style=%s];\n",
            x, y, channel_colors[c % N_CHANNEL_COLORS], tree ? "dashed" : "solid");
}

/* One channel of a ring or tree graph: NET in -> GPUs in order -> NET out. */
static void dot_channel(FILE *out, const tp_system *sys, const tp_graph *g, int c, bool tree)
{
    int n_gpus = sys->nodes[TP_NODE_GPU].count;
    const tp_node *first = gpu_of_rank(sys, g->intra[c * n_gpus]);
    const tp_node *last = gpu_of_rank(sys, g->intra[c * n_gpus + n_gpus - 1]);
    if (sys->nodes[TP_NODE_NET].count > 0)
        channel_edge(out, net_of_id(sys, g->inter[c * 2]), first, c, tree);
    for (int i = 0; i + 1 < n_gpus; i++)
        channel_edge(out, gpu_of_rank(sys, g->intra[c * n_gpus + i]),
                     gpu_of_rank(sys, g->intra[c * n_gpus + i + 1]), c, tree);
    if (sys->nodes[TP_NODE_NET].count > 0)
        channel_edge(out, last, net_of_id(sys, g->inter[c * 2 + 1]), c, tree);
    else if (!tree && n_gpus > 1)
        channel_edge(out, last, first, c, tree); /* a ring closes inside a single node */
}

static void dot_legend(FILE *out, const tp_plan *plan, int channel)
{
    const tp_graph *ring = plan->graphs[TP_GRAPH_RING];
    fputs("  subgraph cluster_legend {\n    label=\"Legend\"; fontname=\"Helvetica\"; "
          "fontsize=10; style=rounded;\n    legend [shape=plaintext, label=<<table border=\"0\" "
          "cellspacing=\"2\">\n",
          out);
    fputs("      <tr><td align=\"left\"><font color=\"forestgreen\">NVL</font>: NVLink</td></tr>\n"
          "      <tr><td align=\"left\"><font color=\"royalblue\">PCI</font>: PCIe</td></tr>\n"
          "      <tr><td align=\"left\"><font color=\"firebrick\">SYS</font>: CPU-CPU "
          "link</td></tr>\n"
          "      <tr><td align=\"left\"><font color=\"gray40\">NET</font>: NIC port (NET/dev "
          "name)</td></tr>\n"
          "      <tr><td align=\"left\">links: type and bandwidth GB/s</td></tr>\n",
          out);
    fprintf(out,
            "      <tr><td align=\"left\">arrows: ring channels (solid) and tree channels "
            "(dashed) of the search, %s</td></tr>\n",
            channel >= 0 ? "one channel" : "every channel");
    int n = ring ? ring->n_channels : 0;
    for (int c = 0; c < n && c < (int)N_CHANNEL_COLORS; c++)
        if (channel < 0 || c == channel)
            fprintf(
                out,
                "      <tr><td align=\"left\"><font color=\"%s\">channel %d%s</font></td></tr>\n",
                channel_colors[c], c,
                n > (int)N_CHANNEL_COLORS && c == 0 ? " (colors repeat every 8)" : "");
    if (ring)
        fprintf(
            out,
            "      <tr><td align=\"left\">ring search: %d channel%s x %.1f GB/s, %s/%s</td></tr>\n",
            ring->n_channels, ring->n_channels == 1 ? "" : "s", ring->bw_intra,
            tp_path_type_name(ring->type_intra), tp_path_type_name(ring->type_inter));
    fputs("    </table>>];\n  }\n", out);
}

tp_status tp_report__plan_dot(FILE *out, const tp_plan *plan, int channel, tp_error *err)
{
    const tp_system *sys = plan->sys;
    fputs("graph topology {\n  rankdir=LR; newrank=true; nodesep=0.15; ranksep=0.6;\n"
          "  node [fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [fontname=\"Helvetica\", fontsize=8];\n",
          out);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < sys->nodes[t].count; i++)
            dot_node(out, plan, &sys->nodes[t].nodes[i]);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < sys->nodes[t].count; i++)
            dot_links(out, sys, &sys->nodes[t].nodes[i]);
    static const int kinds[] = {TP_GRAPH_RING, TP_GRAPH_TREE};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const tp_graph *g = plan->graphs[kinds[k]];
        if (!g || sys->nodes[TP_NODE_GPU].count == 0)
            continue;
        for (int c = 0; c < g->n_channels; c++)
            if (channel < 0 || c == channel)
                dot_channel(out, sys, g, c, kinds[k] == TP_GRAPH_TREE);
    }
    dot_legend(out, plan, channel);
    fputs("}\n", out);
    return tp_report__check_stream(out, err);
}

tp_status tp_report_plan_picture(FILE *out, const tp_plan *plan, int channel, tp_error *err)
{
    if (!out || !plan || !plan->sys)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "plan picture: NULL argument or no plan");
    return tp_report__plan_dot(out, plan, channel, err);
}
