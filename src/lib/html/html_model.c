/* The drawn system: nodes placed in rows, links per pair, channel routes (html_model.h). */
#include "html/html_model.h"
#include "nics/nics.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define GPU_GAP 104 /* between GPU centres */
#define NET_GAP 92
#define ROW_GAP 104
#define MIN_SEP 12            /* between boxes of one row */
#define NET_LINE_WIDTH 1000.0 /* the widest line of NET ports, unless the GPUs are wider */
#define NET_GAP_Y 64          /* from a line of NICs down to their ports */

int tp_html__node_of(const pic_model *m, const tp_node *n)
{
    return m->first[n->type] + (int)(n - m->sys->nodes[n->type].nodes);
}

int tp_html__link_of(const pic_model *m, int a, int b)
{
    for (int i = 0; i < m->n_links; i++)
        if ((m->links[i].a == a && m->links[i].b == b) ||
            (m->links[i].a == b && m->links[i].b == a))
            return i;
    return -1;
}

/* The node as it was before the searches (NCCL 2.22.3's NVLS search leaves bandwidth taken on
 * NETs), or n itself without that system. */
static const tp_node *unsearched(const tp_html_pic *pic, const tp_node *n)
{
    int i = pic->host ? tp_system__index_of(pic->host, n->type, n->id) : -1;
    return i >= 0 ? &pic->host->nodes[n->type].nodes[i] : n;
}

/* A link's own bandwidth: the same link before the searches, else as drawn. */
static float own_bw(const tp_html_pic *pic, const tp_node *from, const tp_link *l)
{
    const tp_node *a = unsearched(pic, from), *b = unsearched(pic, l->rem);
    for (int k = 0; a != from && k < a->n_links; k++)
        if (a->links[k].type == l->type && a->links[k].rem->id == b->id &&
            a->links[k].rem->type == b->type)
            return a->links[k].bw;
    return l->bw;
}

static void node_name(pic_node *p, const tp_html_pic *pic)
{
    const tp_node *n = p->n;
    unsigned long long local = (unsigned long long)TP_ID_LOCAL_ID(n->id);
    const char *dev = NULL;
    switch (n->type) {
    case TP_NODE_GPU:
        snprintf(p->name, sizeof(p->name), "GPU %d", n->gpu.rank);
        break;
    case TP_NODE_NET:
        dev = pic->xml ? tp_nics__xml_net_name(pic->xml, n->net.dev) : NULL;
        snprintf(p->name, sizeof(p->name), "%s", dev ? dev : "");
        if (!dev)
            snprintf(p->name, sizeof(p->name), "NET %d", n->net.dev);
        break;
    case TP_NODE_CPU:
        snprintf(p->name, sizeof(p->name), "CPU %llu", local);
        break;
    case TP_NODE_NVS:
        snprintf(p->name, sizeof(p->name), "NVSwitch");
        break;
    default:
        snprintf(p->name, sizeof(p->name), "%s %llx", tp_node_type_name(n->type), local);
    }
    tp_graphcheck__label(p->label, sizeof(p->label), n);
    if (n->type == TP_NODE_GPU)
        snprintf(p->sub, sizeof(p->sub), "dev %d, sm%d", n->gpu.dev, n->gpu.cuda_comp_cap);
    else if (n->type == TP_NODE_NET) {
        float bw = unsearched(pic, n)->net.bw; /* a 1 Gb/s port: 0.1 GB/s, not "0 GB/s" */
        snprintf(p->sub, sizeof(p->sub), "NET/%d, %.*f GB/s", n->net.dev, bw < 9.95f ? 1 : 0, bw);
    } else if (n->type == TP_NODE_CPU)
        snprintf(p->sub, sizeof(p->sub), "NUMA %llu", local);
}

/* Wide enough for its texts (12 px and 10 px sans-serif, about 7 and 5.8 px a character). */
static void node_size(pic_node *p)
{
    static const double w[TP_NODE_TYPE_COUNT] = {84, 70, 120, 96, 56, 84};
    static const double h[TP_NODE_TYPE_COUNT] = {46, 26, 30, 34, 22, 32};
    double name = 7.0 * (double)strlen(p->name) + 14, sub = 5.8 * (double)strlen(p->sub) + 12;
    p->w = w[p->type];
    p->w = name > p->w ? name : p->w;
    p->w = sub > p->w ? sub : p->w;
    p->h = h[p->type];
}

/* PCI depth below the CPUs (a breadth-first walk over PCI links), 1 for an unreached switch. */
static void pci_depths(const pic_model *m, int *depth)
{
    const tp_system *sys = m->sys;
    int n_pci = sys->nodes[TP_NODE_PCI].count;
    for (int i = 0; i < n_pci; i++)
        depth[i] = 0;
    for (int level = 1, grew = 1; grew; level++) {
        grew = 0;
        for (int i = 0; i < n_pci; i++) {
            const tp_node *n = &sys->nodes[TP_NODE_PCI].nodes[i];
            for (int l = 0; l < n->n_links && !depth[i]; l++) {
                const tp_node *r = n->links[l].rem;
                long ri = r - sys->nodes[r->type].nodes;
                if ((r->type == TP_NODE_CPU && level == 1) ||
                    (r->type == TP_NODE_PCI && depth[ri] == level - 1 && level > 1)) {
                    depth[i] = level;
                    grew = 1;
                }
            }
        }
    }
    for (int i = 0; i < n_pci; i++)
        depth[i] = depth[i] ? depth[i] : 1;
}

/* Names in the order people count them: mlx5_2 before mlx5_10. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea, *eb;
            unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
            if (x != y)
                return x < y ? -1 : 1;
            a = ea;
            b = eb;
        } else if (*a != *b) {
            return (unsigned char)*a - (unsigned char)*b;
        } else {
            a++, b++;
        }
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int by_name(const void *a, const void *b)
{
    const pic_node *x = *(pic_node *const *)a, *y = *(pic_node *const *)b;
    int c = natural_cmp(x->name, y->name);
    return c ? c : x->index - y->index;
}

/* NET ports per line: as many as fit NET_LINE_WIDTH (never fewer than the GPUs), the lines
 * balanced (32 ports: 4 lines of 8, not 16 + 16 that shrink the picture to unreadable). */
static int nets_per_line(const pic_model *m, int n_nets, int n_gpus)
{
    double widest = 1;
    for (int i = 0; i < n_nets; i++) {
        double w = m->nodes[m->first[TP_NODE_NET] + i].w + MIN_SEP;
        widest = w > widest ? w : widest;
    }
    int fit = (int)(NET_LINE_WIDTH / widest);
    fit = fit > n_gpus ? fit : n_gpus;
    fit = fit > 1 ? fit : 1;
    int lines = (n_nets + fit - 1) / fit;
    return lines > 1 ? (n_nets + lines - 1) / lines : fit;
}

/* A NIC's line: that of its first NET port by name (0 without ports). */
static int nic_line(const pic_model *m, const pic_node *nic)
{
    int line = -1;
    for (int l = 0; l < nic->n->n_links; l++) {
        const tp_node *r = nic->n->links[l].rem;
        if (r->type != TP_NODE_NET)
            continue;
        const pic_node *net = &m->nodes[tp_html__node_of(m, r)];
        int k = (net->row - m->net_row) / 2;
        line = line < 0 || k < line ? k : line;
    }
    return line < 0 ? 0 : line;
}

/* Rows top down: NVSwitches, GPUs, PCI switches (deepest first), CPUs, then lines of NET ports
 * by name, each under a row of their NICs (so that 32 or 61 ports stay readable). */
static void assign_rows(pic_model *m)
{
    const tp_system *sys = m->sys;
    int depth[TP_MAX_NODES], max_depth = 0;
    pci_depths(m, depth);
    for (int i = 0; i < sys->nodes[TP_NODE_PCI].count; i++)
        max_depth = depth[i] > max_depth ? depth[i] : max_depth;
    int nvs = sys->nodes[TP_NODE_NVS].count > 0;
    int gpu_row = nvs, cpu_row = gpu_row + max_depth + 1;
    m->gpu_row = gpu_row;
    for (int i = 0; i < m->n_nodes; i++) {
        pic_node *p = &m->nodes[i];
        switch (p->type) {
        case TP_NODE_NVS:
            p->row = 0;
            break;
        case TP_NODE_GPU:
            p->row = gpu_row;
            break;
        case TP_NODE_PCI:
            p->row = gpu_row + 1 + (max_depth - depth[p->index]);
            break;
        case TP_NODE_CPU:
            p->row = cpu_row;
            break;
        default:
            p->row = cpu_row + 1; /* NICs and NET ports: their lines below */
        }
    }
    int n_nets = sys->nodes[TP_NODE_NET].count, n_gpus = sys->nodes[TP_NODE_GPU].count;
    int per_line = nets_per_line(m, n_nets, n_gpus);
    pic_node *nets[TP_MAX_NODES];
    for (int i = 0; i < n_nets; i++)
        nets[i] = &m->nodes[m->first[TP_NODE_NET] + i];
    qsort(nets, (size_t)n_nets, sizeof(*nets), by_name);
    m->net_row = cpu_row + 2;
    for (int i = 0; i < n_nets; i++) {
        nets[i]->row = m->net_row + 2 * (i / per_line);
        nets[i]->column = i % per_line;
    }
    for (int i = 0; i < sys->nodes[TP_NODE_NIC].count; i++) {
        pic_node *nic = &m->nodes[m->first[TP_NODE_NIC] + i];
        nic->row = m->net_row - 1 + 2 * nic_line(m, nic);
    }
    m->n_rows = m->net_row + 2 * (n_nets ? (n_nets + per_line - 1) / per_line : 1) - 1;
}

/* Mean x of the node's placed neighbours; false when none. */
static bool pull(const pic_model *m, const pic_node *p, const bool *placed, double *x)
{
    double sum = 0;
    int n = 0;
    for (int l = 0; l < p->n->n_links; l++) {
        int r = tp_html__node_of(m, p->n->links[l].rem);
        if (r != tp_html__node_of(m, p->n) && placed[r]) {
            sum += m->nodes[r].x;
            n++;
        }
    }
    if (n)
        *x = sum / n;
    return n > 0;
}

static int by_ideal(const void *a, const void *b)
{
    const pic_node *x = *(pic_node *const *)a, *y = *(pic_node *const *)b;
    if (x->ideal != y->ideal)
        return x->ideal < y->ideal ? -1 : 1;
    return x->type != y->type ? x->type - y->type : x->index - y->index;
}

/* Place a row's nodes at their ideal x, pushed apart where they would overlap, recentred. */
static void spread_row(pic_model *m, int row, bool *placed)
{
    pic_node *list[6 * TP_MAX_NODES];
    int n = 0;
    double want = 0, got = 0;
    for (int i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].row == row && !placed[i])
            list[n++] = &m->nodes[i];
    if (!n)
        return;
    qsort(list, (size_t)n, sizeof(*list), by_ideal);
    for (int i = 0; i < n; i++) {
        double x = list[i]->ideal;
        if (i && x < list[i - 1]->x + (list[i - 1]->w + list[i]->w) / 2 + MIN_SEP)
            x = list[i - 1]->x + (list[i - 1]->w + list[i]->w) / 2 + MIN_SEP;
        list[i]->x = x;
        want += list[i]->ideal;
        got += x;
    }
    for (int i = 0; i < n; i++) {
        list[i]->x += (want - got) / n;
        placed[tp_html__node_of(m, list[i]->n)] = true;
    }
}

/* The order of the placing: GPUs by index, NETs by name, then who hangs off them. */
static void place(pic_model *m)
{
    bool *placed = calloc((size_t)m->n_nodes, sizeof(bool));
    if (!placed)
        return; /* all at x 0: still a page, if a poor one (no error to report: memory) */
    const tp_system *sys = m->sys;
    int n_gpus = sys->nodes[TP_NODE_GPU].count, n_nets = sys->nodes[TP_NODE_NET].count;
    double centre = (n_gpus > 1 ? (n_gpus - 1) * GPU_GAP : 0) / 2.0;
    for (int i = 0; i < n_gpus; i++) {
        m->nodes[m->first[TP_NODE_GPU] + i].x = i * GPU_GAP;
        placed[m->first[TP_NODE_GPU] + i] = true;
    }
    int per_line = 1;
    for (int i = 0; i < n_nets; i++) {
        const pic_node *p = &m->nodes[m->first[TP_NODE_NET] + i];
        per_line = p->column + 1 > per_line ? p->column + 1 : per_line;
    }
    for (int i = 0; i < n_nets; i++) {
        pic_node *p = &m->nodes[m->first[TP_NODE_NET] + i];
        p->ideal = centre + (p->column - (per_line - 1) / 2.0) * NET_GAP;
    }
    for (int r = m->net_row; r < m->n_rows; r += 2)
        spread_row(m, r, placed);
    /* then the NICs above their ports, the switches from the GPUs down, the CPUs, NVSwitches */
    int order[4 * TP_MAX_NODES + 4], n_order = 0, cpu_row = m->net_row - 2;
    for (int r = m->net_row - 1; r < m->n_rows; r += 2)
        order[n_order++] = r;
    for (int r = m->gpu_row + 1; r < cpu_row; r++)
        order[n_order++] = r;
    order[n_order++] = cpu_row;
    if (m->gpu_row > 0)
        order[n_order++] = 0;
    for (int k = 0; k < n_order; k++) {
        for (int i = 0; i < m->n_nodes; i++) {
            pic_node *p = &m->nodes[i];
            if (p->row == order[k] && !placed[i] && !pull(m, p, placed, &p->ideal))
                p->ideal = centre;
        }
        spread_row(m, order[k], placed);
    }
    free(placed);
}

static bool row_empty(const pic_model *m, int row)
{
    for (int i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].row == row)
            return false;
    return true;
}

/* A row's offset from the first: NET ports close under their NICs; a line of ports without
 * NICs of its own (61 ports of one NIC) right under the line before. */
static double row_y(const pic_model *m, int row)
{
    double y = 0;
    for (int r = 1; r <= row; r++) {
        bool net_line = r >= m->net_row && (r - m->net_row) % 2 == 0;
        bool nic_line = r >= m->net_row - 1 && !net_line;
        if (nic_line && row_empty(m, r))
            continue; /* no gap: the ports below come NET_GAP_Y after the line above */
        y += net_line && (r > m->net_row || !row_empty(m, r - 1)) ? NET_GAP_Y : ROW_GAP;
    }
    return y;
}

/* Shift everything right of the margin, rows down from the top; the picture's size. */
static void frame(pic_model *m)
{
    double lo = 0, hi = 0, arc = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        const pic_node *p = &m->nodes[i];
        lo = i == 0 || p->x - p->w / 2 < lo ? p->x - p->w / 2 : lo;
        hi = i == 0 || p->x + p->w / 2 > hi ? p->x + p->w / 2 : hi;
    }
    for (int i = 0; i < m->n_links; i++) {
        const pic_node *a = &m->nodes[m->links[i].a], *b = &m->nodes[m->links[i].b];
        double dx = a->x > b->x ? a->x - b->x : b->x - a->x;
        double h = 16 + 0.22 * dx;
        if (a->row == b->row && a->row == 0 && h > arc)
            arc = h > 150 ? 150 : h;
    }
    m->top = 28 + arc;
    for (int i = 0; i < m->n_nodes; i++) {
        m->nodes[i].x += 24 - lo;
        m->nodes[i].y = m->top + 30 + row_y(m, m->nodes[i].row);
    }
    m->width = hi - lo + 48;
    m->height = m->top + 30 + row_y(m, m->n_rows - 1) + 50;
}

/* Each pair of linked nodes once (the lower node number first), with both directions' bw. */
static tp_status collect_links(pic_model *m, const tp_html_pic *pic, tp_error *err)
{
    for (int i = 0; i < m->n_nodes; i++) {
        const tp_node *n = m->nodes[i].n;
        for (int l = 0; l < n->n_links; l++) {
            int r = tp_html__node_of(m, n->links[l].rem);
            if (r == i)
                continue;
            int k = tp_html__link_of(m, i, r);
            float bw = own_bw(pic, n, &n->links[l]);
            if (k >= 0) {
                if (m->links[k].a == r)
                    m->links[k].bw_back = bw;
                continue;
            }
            if (m->n_links == m->links_cap) {
                int cap = m->links_cap ? 2 * m->links_cap : 64;
                pic_link *grown = realloc(m->links, (size_t)cap * sizeof(*grown));
                if (!grown)
                    return tp_fail_nomem(err);
                m->links = grown;
                m->links_cap = cap;
            }
            m->links[m->n_links++] = (pic_link){.a = i,
                                                .b = r,
                                                .type = n->links[l].type,
                                                .bw = n->links[l].bw,
                                                .bw_back = n->links[l].bw};
        }
    }
    return TP_OK;
}

/* Calls visit(m, link, arg) for each hop of the route from node `from` to `to_type` `to`. */
static void walk_route(pic_model *m, const tp_node *from, int to_type, int to,
                       void (*visit)(pic_model *, int, void *), void *arg)
{
    if (!from->paths[to_type])
        return;
    const tp_route *r = &from->paths[to_type][to];
    const tp_node *prev = from;
    for (int h = 0; h < r->count; h++) {
        int k =
            tp_html__link_of(m, tp_html__node_of(m, prev), tp_html__node_of(m, r->list[h]->rem));
        if (k >= 0)
            visit(m, k, arg);
        prev = r->list[h]->rem;
    }
}

static void count_path(pic_model *m, int link, void *arg)
{
    const int *ends = arg;
    pic_link *l = &m->links[link];
    if (l->paths < TP_HTML_PATHS_NAMED) {
        l->path_ends[l->paths][0] = ends[0];
        l->path_ends[l->paths][1] = ends[1];
    }
    l->paths++;
}

/* How many GPU and NET paths (either way) walk each link. */
static void count_paths(pic_model *m)
{
    static const int ends[] = {TP_NODE_GPU, TP_NODE_NET};
    for (size_t f = 0; f < 2; f++)
        for (int i = 0; i < m->sys->nodes[ends[f]].count; i++)
            for (size_t t = 0; t < 2; t++)
                for (int j = 0; j < m->sys->nodes[ends[t]].count; j++)
                    if (ends[f] != ends[t] || i != j) {
                        int path[2] = {m->first[ends[f]] + i, m->first[ends[t]] + j};
                        walk_route(m, &m->sys->nodes[ends[f]].nodes[i], ends[t], j, count_path,
                                   path);
                    }
}

static void route_link(pic_model *m, int link, void *arg)
{
    pic_route *r = arg;
    m->links[link].channels[r->graph] |= (uint64_t)1 << r->channel;
    for (int i = 0; i < r->n_links; i++)
        if (r->links[i] == link)
            return;
    if (r->n_links == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        int *grown = realloc(r->links, (size_t)cap * sizeof(*grown));
        if (!grown)
            return; /* a shorter highlight; tp_html__model checks r->cap afterwards */
        r->links = grown;
        r->cap = cap;
    }
    r->links[r->n_links++] = link;
}

static const tp_node *gpu_of_rank(const tp_system *sys, int rank)
{
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++)
        if (sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank == rank)
            return &sys->nodes[TP_NODE_GPU].nodes[i];
    return NULL;
}

static int net_of_id(const tp_system *sys, int64_t id)
{
    for (int i = 0; i < sys->nodes[TP_NODE_NET].count; i++)
        if (sys->nodes[TP_NODE_NET].nodes[i].id == id)
            return i;
    return -1;
}

/* Route hop from node a to node b (a GPU or NET), added to r. */
static void route_hop(pic_model *m, pic_route *r, const tp_node *a, const tp_node *b)
{
    if (!a || !b || a == b)
        return;
    walk_route(m, a, b->type, (int)(b - m->sys->nodes[b->type].nodes), route_link, r);
}

static void route_add_node(pic_model *m, pic_route *r, const tp_node *n)
{
    if (n && r->n_seq < (int)(sizeof(r->seq) / sizeof(r->seq[0])))
        r->seq[r->n_seq++] = tp_html__node_of(m, n);
}

/* NVLS: the head GPU and its NVLinks to the NVSwitches. */
static void route_nvls(pic_model *m, pic_route *r, const tp_node *head)
{
    route_add_node(m, r, head);
    for (int l = 0; head && l < head->n_links; l++)
        if (head->links[l].rem->type == TP_NODE_NVS) {
            route_link(m,
                       tp_html__link_of(m, tp_html__node_of(m, head),
                                        tp_html__node_of(m, head->links[l].rem)),
                       r);
            route_add_node(m, r, head->links[l].rem);
        }
}

/* A channel: NET in, the GPUs in its order, NET out (a ring closes inside a lone node). */
static void build_route(pic_model *m, pic_route *r, const tp_graph *g)
{
    const tp_system *sys = m->sys;
    int n_gpus = sys->nodes[TP_NODE_GPU].count, c = r->channel;
    if (g->pattern == TP_PATTERN_NVLS) {
        route_nvls(m, r, gpu_of_rank(sys, g->intra[c * n_gpus]));
        return;
    }
    bool nets = sys->nodes[TP_NODE_NET].count > 0;
    int in = nets ? net_of_id(sys, g->inter[2 * c]) : -1;
    int out = nets ? net_of_id(sys, g->inter[2 * c + 1]) : -1;
    const tp_node *prev = in >= 0 ? &sys->nodes[TP_NODE_NET].nodes[in] : NULL;
    route_add_node(m, r, prev);
    for (int i = 0; i < n_gpus; i++) {
        const tp_node *gpu = gpu_of_rank(sys, g->intra[c * n_gpus + i]);
        route_hop(m, r, prev, gpu);
        route_add_node(m, r, gpu);
        prev = gpu ? gpu : prev;
    }
    if (out >= 0) {
        route_hop(m, r, prev, &sys->nodes[TP_NODE_NET].nodes[out]);
        route_add_node(m, r, &sys->nodes[TP_NODE_NET].nodes[out]);
    } else if (!nets && g->id == TP_GRAPH_RING && n_gpus > 1) {
        route_hop(m, r, prev, gpu_of_rank(sys, g->intra[c * n_gpus]));
    }
}

static tp_status build_routes(pic_model *m, tp_graph *const *graphs, tp_error *err)
{
    int total = 0;
    for (int k = 0; graphs && k < TP_GRAPH_COUNT; k++)
        total += graphs[k] ? graphs[k]->n_channels : 0;
    m->routes = calloc((size_t)(total ? total : 1), sizeof(*m->routes));
    if (!m->routes)
        return tp_fail_nomem(err);
    for (int k = 0; graphs && k < TP_GRAPH_COUNT; k++)
        for (int c = 0; graphs[k] && c < graphs[k]->n_channels && c < TP_MAXCHANNELS; c++) {
            pic_route *r = &m->routes[m->n_routes++];
            r->graph = k;
            r->channel = c;
            build_route(m, r, graphs[k]);
        }
    return TP_OK;
}

tp_status tp_html__model(pic_model *m, const tp_html_pic *pic, tp_error *err)
{
    memset(m, 0, sizeof(*m));
    m->sys = pic->sys;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        m->first[t] = m->n_nodes;
        m->n_nodes += m->sys->nodes[t].count;
    }
    m->nodes = calloc((size_t)(m->n_nodes ? m->n_nodes : 1), sizeof(*m->nodes));
    if (!m->nodes)
        return tp_fail_nomem(err);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < m->sys->nodes[t].count; i++) {
            pic_node *p = &m->nodes[m->first[t] + i];
            p->n = &m->sys->nodes[t].nodes[i];
            p->type = t;
            p->index = i;
            /* NVSwitches and CPUs are not on a side: a CPU is the side */
            p->numa = t == TP_NODE_NVS || t == TP_NODE_CPU ? -1 : tp_nics__local_numa(m->sys, t, i);
            node_name(p, pic);
            node_size(p);
            tp_report__node_label(p->nccl, sizeof(p->nccl), p->n);
            p->net_bw = t == TP_NODE_NET ? unsearched(pic, p->n)->net.bw : 0;
            p->changed = pic->node_changed && pic->node_changed(pic->change_ctx, p->n);
        }
    tp_status st = collect_links(m, pic, err);
    for (int k = 0; st == TP_OK && pic->link_changed && k < m->n_links; k++) {
        const tp_node *a = m->nodes[m->links[k].a].n, *b = m->nodes[m->links[k].b].n;
        for (int l = 0; l < a->n_links; l++)
            if (a->links[l].rem == b)
                m->links[k].changed |= pic->link_changed(pic->change_ctx, a, &a->links[l]);
        for (int l = 0; l < b->n_links; l++)
            if (b->links[l].rem == a)
                m->links[k].changed |= pic->link_changed(pic->change_ctx, b, &b->links[l]);
    }
    if (st == TP_OK) {
        assign_rows(m);
        place(m);
        frame(m);
        count_paths(m);
        st = build_routes(m, pic->graphs, err);
    }
    return st;
}

void tp_html__model_free(pic_model *m)
{
    for (int i = 0; i < m->n_routes; i++)
        free(m->routes[i].links);
    free(m->routes);
    free(m->links);
    free(m->nodes);
    memset(m, 0, sizeof(*m));
}
