/*
 * `graph-check`: an NCCL_GRAPH_FILE against a planned topology (beyond
 * NCCL). NCCL 2.22.3's loader (search.cc ncclTopoGetGraphFromXml) copies
 * the file into its graphs and checks only that each gpu dev exists; here
 * every graph of the file is checked as NCCL's search would have built it:
 * channel shapes, devices, nchannels, then the hops and the bandwidth they
 * reserve (graphcheck_replay.c).
 *
 * A file that is not a graph file (bad XML, missing or unreadable
 * attributes) fails with its position; everything else is a finding.
 */
#include "graphcheck/graphcheck.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct gc_ctx {
    tp_graph_check *chk;
    const tp_plan *plan;
    const tp_system *sys;
    const tp_xml *doc;
    tp_gc_channel *channels; /* TP_MAXCHANNELS parsed channels of the current graph */
    tp_error *err;
} gc_ctx;

/* NCCL 2.22.3 kvDictLinkType: the path types a graph file may name. */
#define TP_GC_LAST_FILE_TYPE TP_PATH_SYS

/* Findings about an element, about a parsed channel, about a graph as a whole. */
static tp_gc_where at_elem(tp_gc_graph *g, int channel, const tp_xml_elem *e)
{
    return (tp_gc_where){.graph = g, .channel = channel, .line = e->line, .column = e->column};
}

static tp_gc_where at_channel(tp_gc_graph *g, int channel, const tp_gc_channel *ch)
{
    return (tp_gc_where){.graph = g, .channel = channel, .line = ch->line, .column = ch->column};
}

static tp_gc_where at_graph(tp_gc_graph *g)
{
    return (tp_gc_where){.graph = g, .channel = -1, .line = g->line, .column = g->column};
}

void tp_graphcheck__add(tp_graph_check *chk, tp_gc_severity sev, tp_gc_where at, const char *fmt,
                        ...)
{
    tp_gc_graph *g = at.graph;
    tp_gc_finding **list = g ? &g->findings : &chk->findings;
    size_t *n = g ? &g->n_findings : &chk->n_findings;
    size_t *cap = g ? &g->findings_cap : &chk->findings_cap;
    tp_error ignored;
    if (tp_grow((void **)list, cap, *n + 1, sizeof(**list), &ignored) != TP_OK) {
        chk->failed = true;
        return;
    }
    tp_gc_finding *f = &(*list)[(*n)++];
    f->severity = sev;
    f->channel = at.channel;
    f->line = at.line;
    f->column = at.column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text, sizeof(f->text), fmt, ap);
    va_end(ap);
    if (g && sev == TP_GC_ERROR)
        g->n_errors++;
}

/* ------------------------------------------------------------------------ */
/* Strict attribute readers: a graph file that NCCL would misread is malformed. */

static tp_status need(gc_ctx *c, const tp_xml_elem *e, const char *name, const char **out)
{
    *out = tp_xml__attr(e, name);
    if (!*out)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, e, "missing attribute \"%s\"", name);
    return TP_OK;
}

static tp_status attr_int(gc_ctx *c, const tp_xml_elem *e, const char *name, int base, long *out)
{
    const char *v;
    tp_status st = need(c, e, name, &v);
    if (st != TP_OK)
        return st;
    char *end = NULL;
    errno = 0;
    *out = strtol(v, &end, base);
    if (end == v || *end || errno || *out < INT32_MIN || *out > INT32_MAX)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, e, "%s \"%s\" is not %s", name, v,
                            base == 16 ? "a hexadecimal number" : "an integer");
    return TP_OK;
}

static tp_status attr_float(gc_ctx *c, const tp_xml_elem *e, const char *name, float *out)
{
    const char *v;
    tp_status st = need(c, e, name, &v);
    if (st != TP_OK)
        return st;
    char *end = NULL;
    *out = strtof(v, &end);
    if (end == v || *end || !(*out >= 0 && *out < 1e9f))
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, e,
                            "%s \"%s\" is not a bandwidth (expected a number of GB/s)", name, v);
    return TP_OK;
}

static tp_status attr_type(gc_ctx *c, const tp_xml_elem *e, const char *name, int *out)
{
    const char *v;
    tp_status st = need(c, e, name, &v);
    if (st != TP_OK)
        return st;
    *out = tp_path_type_from_name(v);
    if (*out < 0 || *out > TP_GC_LAST_FILE_TYPE)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, e,
                            "unknown %s \"%s\" (expected LOC, NVL, NVB, PIX, PXB, PXN, PHB or SYS)",
                            name, v);
    return TP_OK;
}

static tp_status attr_int_to(gc_ctx *c, const tp_xml_elem *e, const char *name, int *out)
{
    long v = 0;
    tp_status st = attr_int(c, e, name, 0, &v);
    *out = (int)v;
    return st;
}

/* The attributes NCCL 2.22.3 reads from a <graph> (latencyinter is optional there). */
static tp_status read_graph_attrs(gc_ctx *c, const tp_xml_elem *e, tp_gc_graph *g)
{
    tp_status st;
    float latency;
    if ((st = attr_int_to(c, e, "id", &g->id)) ||
        (st = attr_int_to(c, e, "pattern", &g->pattern)) ||
        (st = attr_int_to(c, e, "crossnic", &g->cross_nic)) ||
        (st = attr_int_to(c, e, "nchannels", &g->n_channels)) ||
        (st = attr_float(c, e, "speedintra", &g->bw_intra)) ||
        (st = attr_float(c, e, "speedinter", &g->bw_inter)) ||
        (st = attr_type(c, e, "typeintra", &g->type_intra)) ||
        (st = attr_type(c, e, "typeinter", &g->type_inter)) ||
        (st = attr_int_to(c, e, "samechannels", &g->same_channels)))
        return st;
    if (tp_xml__attr(e, "latencyinter"))
        st = attr_float(c, e, "latencyinter", &latency);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Channels */

/* NCCL 2.22.3 ncclTopoGetChannelFromXml: the GPU whose (system id, dev) is dev; last match. */
static int gpu_of_dev(const tp_system *sys, long dev)
{
    int found = -1;
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++)
        if (TP_ID(TP_ID_SYSTEM_ID(gpus->nodes[g].id), gpus->nodes[g].gpu.dev) == dev)
            found = g;
    return found;
}

/* The GPU of rank, -1 when none. */
static int gpu_of_rank(const tp_system *sys, long rank)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++)
        if (gpus->nodes[g].gpu.rank == rank)
            return g;
    return -1;
}

static tp_status channel_gpu(gc_ctx *c, tp_gc_graph *g, int index, const tp_xml_elem *e,
                             tp_gc_channel *ch)
{
    long dev;
    tp_status st = attr_int(c, e, "dev", 16, &dev);
    if (st != TP_OK)
        return st;
    /* 2.30.3 (graph-file-rank): a rank attribute names the GPU, its dev is not looked up. */
    const char *rank = tp_profile_has(tp_config__profile(c->plan->cfg), TP_RULE_GRAPH_FILE_RANK)
                           ? tp_xml__attr(e, "rank")
                           : NULL;
    int gi = rank ? gpu_of_rank(c->sys, strtol(rank, NULL, 0)) : gpu_of_dev(c->sys, dev);
    if (gi < 0 && rank)
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_elem(g, index, e),
                           "gpu rank \"%s\" is not a rank of the system", rank);
    else if (gi < 0)
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_elem(g, index, e),
                           "gpu dev \"%s\" is not a GPU of the system (graph device ids are hex, "
                           "as NCCL reads them: %ld; NCCL fails: \"XML Import Channel : dev %ld "
                           "not found\")",
                           tp_xml__attr(e, "dev"), dev, dev);
    if (ch->n_gpus < TP_GC_MAX_CHANNEL_GPUS)
        ch->gpus[ch->n_gpus] = gi;
    ch->n_gpus++;
    return TP_OK;
}

static tp_status channel_net(gc_ctx *c, tp_gc_graph *g, int index, const tp_xml_elem *e,
                             tp_gc_channel *ch, bool *warned)
{
    long dev;
    tp_status st = attr_int(c, e, "dev", 16, &dev);
    if (st != TP_OK)
        return st;
    int ni = tp_system__index_of(c->sys, TP_NODE_NET, dev);
    if (c->sys->nodes[TP_NODE_NET].count == 0 && !*warned) {
        *warned = true;
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_elem(g, index, e),
                           "net dev \"%s\" ignored: the system has no NET (NCCL drops the NETs of "
                           "a single-node job; plan more nodes with --nodes)",
                           tp_xml__attr(e, "dev"));
    } else if (ni < 0 && c->sys->nodes[TP_NODE_NET].count > 0) {
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_elem(g, index, e),
                           "net dev \"%s\" is not a NET of the system (graph device ids are hex, "
                           "as NCCL reads them: NET %ld)",
                           tp_xml__attr(e, "dev"), dev);
    }
    if (ch->n_nets < 2)
        ch->nets[ch->n_nets] = ni;
    ch->n_nets++;
    return TP_OK;
}

/* Read one <channel>: its devices as system indices (NCCL ignores other elements). */
static tp_status read_channel(gc_ctx *c, tp_gc_graph *g, int index, const tp_xml_elem *e,
                              tp_gc_channel *ch)
{
    memset(ch, 0, sizeof(*ch));
    ch->nets[0] = ch->nets[1] = -1;
    ch->line = e->line;
    ch->column = e->column;
    bool warned = false;
    tp_status st = TP_OK;
    for (size_t i = 0; i < e->n_children && st == TP_OK; i++) {
        const tp_xml_elem *sub = e->children[i];
        if (strcmp(sub->tag, "gpu") == 0)
            st = channel_gpu(c, g, index, sub, ch);
        else if (strcmp(sub->tag, "net") == 0)
            st = channel_net(c, g, index, sub, ch, &warned);
        else
            tp_graphcheck__add(c->chk, TP_GC_WARNING, at_elem(g, index, sub),
                               "<%s> ignored (NCCL reads only <gpu> and <net> here)", sub->tag);
    }
    return st;
}

/* How often each GPU of the system appears in the channel. */
static void count_visits(const tp_gc_channel *ch, int n_gpus, int *visits)
{
    memset(visits, 0, (size_t)n_gpus * sizeof(int));
    int kept = ch->n_gpus < TP_GC_MAX_CHANNEL_GPUS ? ch->n_gpus : TP_GC_MAX_CHANNEL_GPUS;
    for (int i = 0; i < kept; i++)
        if (ch->gpus[i] >= 0)
            visits[ch->gpus[i]]++;
}

/* Rings, trees, CollNet: every GPU of the node exactly once (NCCL's search builds no other). */
static void check_visits(gc_ctx *c, tp_gc_graph *g, int index, const tp_gc_channel *ch)
{
    int n = c->sys->nodes[TP_NODE_GPU].count, visits[TP_MAX_NODES];
    const tp_node *gpus = c->sys->nodes[TP_NODE_GPU].nodes;
    count_visits(ch, n, visits);
    for (int i = 0; i < n; i++) {
        if (visits[i] == 1)
            continue;
        if (visits[i] == 0)
            tp_graphcheck__add(c->chk, TP_GC_ERROR, at_channel(g, index, ch),
                               "GPU/%d (dev %d) is missing: a channel visits every GPU once",
                               gpus[i].gpu.rank, gpus[i].gpu.dev);
        else
            tp_graphcheck__add(c->chk, TP_GC_ERROR, at_channel(g, index, ch),
                               "GPU/%d (dev %d) is visited %d times (expected once)",
                               gpus[i].gpu.rank, gpus[i].gpu.dev, visits[i]);
    }
    if (ch->n_gpus > n)
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_channel(g, index, ch),
                           "%d GPUs listed for a node of %d (NCCL writes the extra ones over the "
                           "next channel)",
                           ch->n_gpus, n);
}

/* NVLS (NCCL 2.22.3 ncclTopoSearchTryNvls): one head GPU per channel, each head once. */
static void check_nvls_channel(gc_ctx *c, tp_gc_graph *g, int index, const tp_gc_channel *ch)
{
    if (ch->n_gpus == 0) {
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_channel(g, index, ch),
                           "no <gpu>: an NVLS channel names its head GPU");
        return;
    }
    if (ch->n_gpus > 1)
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_channel(g, index, ch),
                           "%d GPUs listed: NCCL uses only the first, the NVLS head", ch->n_gpus);
    int head = ch->gpus[0];
    for (int k = 0; k < index && k < TP_MAXCHANNELS && head >= 0; k++) {
        if (c->channels[k].n_gpus > 0 && c->channels[k].gpus[0] == head) {
            tp_graphcheck__add(c->chk, TP_GC_WARNING, at_channel(g, index, ch),
                               "head GPU/%d already heads channel %d (NCCL's search gives each "
                               "channel its own head)",
                               c->sys->nodes[TP_NODE_GPU].nodes[head].gpu.rank, k);
            break;
        }
    }
}

/* The profile follows rule cross-nic-ring-alternate (2.23 ncclTopoSearchRecGpu). */
static bool alternate_rule(const gc_ctx *c)
{
    return tp_profile_has(tp_config__profile(c->plan->cfg), TP_RULE_CROSS_NIC_RING_ALTERNATE);
}

/* Whether NCCL's search lets a channel leave by another NIC port than it entered: crossNic 1
 * (from 2.23 also 2). */
static bool may_cross_port(const gc_ctx *c, const tp_gc_graph *g)
{
    return alternate_rule(c) ? g->cross_nic != 0 : g->cross_nic == 1;
}

/* NCCL 2.22.3 ncclTopoSearchRecNet / RecGpu: which NET a channel may leave through. */
static void check_nets(gc_ctx *c, tp_gc_graph *g, int index, const tp_gc_channel *ch)
{
    const tp_node *nets = c->sys->nodes[TP_NODE_NET].nodes;
    if (c->sys->nodes[TP_NODE_NET].count == 0)
        return;
    if (ch->n_nets != 2) {
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_channel(g, index, ch),
                           "%d <net> elements (expected 2: the NET the channel enters from, then "
                           "the one it leaves through)",
                           ch->n_nets);
        return;
    }
    const tp_node *in = ch->nets[0] >= 0 ? &nets[ch->nets[0]] : NULL;
    const tp_node *out = ch->nets[1] >= 0 ? &nets[ch->nets[1]] : NULL;
    if (!in || !out)
        return;
    if (g->pattern == TP_PATTERN_TREE && in != out)
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_channel(g, index, ch),
                           "enters from NET/%d but leaves through NET/%d: NCCL's trees use one "
                           "NET both ways",
                           in->net.dev, out->net.dev);
    else if (!may_cross_port(c, g) &&
             (in->net.asic != out->net.asic || in->net.port != out->net.port))
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_channel(g, index, ch),
                           "enters from NET/%d but leaves through NET/%d, another port, with "
                           "crossnic %d (NCCL's search needs crossnic %s for that)",
                           in->net.dev, out->net.dev, g->cross_nic,
                           alternate_rule(c) ? "1 or 2" : "1");
}

/*
 * NCCL 2.22.3 with crossNic (from 2.23 rings at crossNic 2 only): an odd channel enters from the
 * NET the previous channel left through, and leaves through the one it entered from.
 */
static void check_cross_nic_pair(gc_ctx *c, tp_gc_graph *g, int index, const tp_gc_channel *ch)
{
    bool alternates =
        alternate_rule(c) ? g->pattern == TP_PATTERN_RING && g->cross_nic == 2 : g->cross_nic != 0;
    if (!alternates || !(index & 1) || index >= TP_MAXCHANNELS || ch->n_nets != 2)
        return;
    const tp_gc_channel *prev = &c->channels[index - 1];
    const tp_node *nets = c->sys->nodes[TP_NODE_NET].nodes;
    if (prev->n_nets != 2 || prev->nets[0] < 0 || prev->nets[1] < 0 || ch->nets[0] < 0 ||
        ch->nets[1] < 0)
        return;
    if (ch->nets[0] != prev->nets[1] || ch->nets[1] != prev->nets[0])
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_channel(g, index, ch),
                           "NET/%d -> NET/%d after channel %d's NET/%d -> NET/%d: with crossnic, "
                           "NCCL's search makes an odd channel the previous one's way back",
                           nets[ch->nets[0]].net.dev, nets[ch->nets[1]].net.dev, index - 1,
                           nets[prev->nets[0]].net.dev, nets[prev->nets[1]].net.dev);
}

/* Shape of channel `index` for the graph's pattern. */
static void check_channel(gc_ctx *c, tp_gc_graph *g, int index, const tp_gc_channel *ch)
{
    if (g->pattern == TP_PATTERN_NVLS)
        check_nvls_channel(c, g, index, ch);
    else
        check_visits(c, g, index, ch);
    if (c->sys->nodes[TP_NODE_NET].count == 0)
        return;
    check_nets(c, g, index, ch);
    check_cross_nic_pair(c, g, index, ch);
}

/* ------------------------------------------------------------------------ */
/* Graphs */

/* The graph id NCCL 2.22.3's init.cc gives each pattern family. */
static bool id_fits_pattern(int id, int pattern)
{
    switch (id) {
    case 0:
        return pattern == TP_PATTERN_RING;
    case 1:
        return pattern == TP_PATTERN_BALANCED_TREE || pattern == TP_PATTERN_SPLIT_TREE ||
               pattern == TP_PATTERN_TREE;
    case 2:
        return pattern == TP_PATTERN_TREE || pattern == TP_PATTERN_COLLNET_DIRECT;
    default:
        return pattern == TP_PATTERN_NVLS;
    }
}

static void check_id_pattern(gc_ctx *c, tp_gc_graph *g)
{
    static const char *const id_names[] = {"ring", "tree", "CollNet", "NVLS"};
    if (tp_pattern_name(g->pattern)[0] == '?')
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_graph(g),
                           "pattern %d is not an NCCL 2.22.3 pattern (1 balanced tree, 2 split "
                           "tree, 3 tree, 4 ring, 5 nvls, 6 collnet direct)",
                           g->pattern);
    else if (g->id < 0 || g->id > 3)
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_graph(g),
                           "NCCL 2.22.3 loads graph ids 0 (ring), 1 (tree), 2 (CollNet) and "
                           "3 (NVLS) only: id %d is never used",
                           g->id);
    else if (!id_fits_pattern(g->id, g->pattern))
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_graph(g),
                           "graph id %d is NCCL's %s graph, but its pattern is %d (%s)", g->id,
                           id_names[g->id], g->pattern, tp_pattern_name(g->pattern));
}

static void check_counts(gc_ctx *c, tp_gc_graph *g)
{
    if (g->n_channels != g->n_elements)
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_graph(g),
                           "nchannels is %d but the graph has %d <channel> elements (NCCL uses "
                           "nchannels)",
                           g->n_channels, g->n_elements);
    const int max_channels = tp_config__profile(c->plan->cfg)->max_channels; /* MAXCHANNELS */
    if (g->n_channels > max_channels || g->n_elements > max_channels)
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_graph(g),
                           "more than %d channels (NCCL's MAXCHANNELS)", max_channels);
    if (g->n_channels < 0)
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_graph(g), "nchannels %d is negative",
                           g->n_channels);
    if (g->n_channels == 0 && g->n_elements == 0)
        tp_graphcheck__add(c->chk, TP_GC_NOTE, at_graph(g),
                           "no channels: NCCL runs its own search for graph id %d", g->id);
}

/* Graph-level rules: pattern and id, counts, settings NCCL ignores. */
static void check_graph(gc_ctx *c, tp_gc_graph *g)
{
    check_id_pattern(c, g);
    check_counts(c, g);
    if (g->cross_nic == 1 && tp_config_int(c->plan->cfg, TP_P_CROSS_NIC) == 0)
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_graph(g),
                           "crossnic 1 with NCCL_CROSS_NIC=0: NCCL skips this graph and searches");
    if (g->pattern == TP_PATTERN_NVLS && g->n_channels > 0 && c->sys->nodes[TP_NODE_NVS].count == 0)
        tp_graphcheck__add(c->chk, TP_GC_ERROR, at_graph(g),
                           "an NVLS graph needs an NVSwitch: the system has none");
    if (g->n_channels > 0 && g->bw_intra <= 0)
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_graph(g),
                           "speedintra is 0: NCCL's tuning gives these channels no bandwidth");
}

/* A later graph with the same id replaces the earlier one in NCCL's loader. */
static void check_duplicate_id(gc_ctx *c, tp_gc_graph *g)
{
    for (size_t i = 0; i + 1 < c->chk->n_graphs; i++) {
        const tp_gc_graph *o = &c->chk->graphs[i];
        /* NCCL dumps two id 2 graphs (CollNet direct and chain): that pair is expected. */
        if (o->id != g->id || g->id == 2)
            continue;
        tp_graphcheck__add(c->chk, TP_GC_WARNING, at_graph(g),
                           "graph id %d already appears at line %u: NCCL loads both, this one "
                           "last, so it wins",
                           g->id, o->line);
        return;
    }
}

static int count_children(const tp_xml_elem *e, const char *tag)
{
    int n = 0;
    for (size_t i = 0; i < e->n_children; i++)
        n += strcmp(e->children[i]->tag, tag) == 0;
    return n;
}

/* The channels NCCL would use: the first min(nchannels, elements) ones, up to MAXCHANNELS. */
static tp_status read_channels(gc_ctx *c, tp_gc_graph *g, const tp_xml_elem *e, int *n_used)
{
    tp_gc_channel scratch;
    int index = 0;
    tp_status st = TP_OK;
    for (size_t i = 0; i < e->n_children && st == TP_OK; i++) {
        const tp_xml_elem *sub = e->children[i];
        if (strcmp(sub->tag, "channel") != 0) {
            tp_graphcheck__add(c->chk, TP_GC_WARNING, at_elem(g, -1, sub),
                               "<%s> ignored (NCCL reads only <channel> here)", sub->tag);
            continue;
        }
        tp_gc_channel *ch = index < TP_MAXCHANNELS ? &c->channels[index] : &scratch;
        if ((st = read_channel(c, g, index, sub, ch)) == TP_OK)
            check_channel(c, g, index, ch);
        index++;
    }
    int n = g->n_channels < g->n_elements ? g->n_channels : g->n_elements;
    *n_used = n < 0 ? 0 : n > TP_MAXCHANNELS ? TP_MAXCHANNELS : n;
    return st;
}

static tp_status check_graph_elem(gc_ctx *c, const tp_xml_elem *e)
{
    tp_graph_check *chk = c->chk;
    tp_status st = tp_grow((void **)&chk->graphs, &chk->graphs_cap, chk->n_graphs + 1,
                           sizeof(*chk->graphs), c->err);
    if (st != TP_OK)
        return st;
    tp_gc_graph *g = &chk->graphs[chk->n_graphs++];
    g->line = e->line;
    g->column = e->column;
    g->n_elements = count_children(e, "channel");
    if ((st = read_graph_attrs(c, e, g)) != TP_OK)
        return st;
    check_graph(c, g);
    check_duplicate_id(c, g);
    int n_used = 0;
    if ((st = read_channels(c, g, e, &n_used)) != TP_OK)
        return st;
    bool replayable = tp_pattern_name(g->pattern)[0] != '?' &&
                      !(g->pattern == TP_PATTERN_NVLS && c->sys->nodes[TP_NODE_NVS].count == 0);
    if (replayable && (st = tp_graphcheck__replay(chk, g, c->sys, c->channels, n_used, c->err)))
        return st;
    for (size_t i = 0; i < g->n_links; i++)
        g->n_errors += g->links[i].over;
    return TP_OK;
}

/* NCCL 2.22.3 ncclTopoGetXmlGraphFromFile: <graphs version="1"> holding <graph> elements. */
static tp_status check_doc(gc_ctx *c)
{
    const tp_xml_elem *root = c->doc->root;
    long version;
    if (strcmp(root->tag, "graphs") != 0)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, root,
                            "not a graph file (expected <graphs>)");
    tp_status st = attr_int(c, root, "version", 0, &version);
    if (st != TP_OK)
        return st;
    if (version != TP_GRAPH_XML_VERSION)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, root,
                            "graph file version %ld (expected %d)", version, TP_GRAPH_XML_VERSION);
    for (size_t i = 0; i < root->n_children && st == TP_OK; i++) {
        const tp_xml_elem *e = root->children[i];
        if (strcmp(e->tag, "graph") == 0)
            st = check_graph_elem(c, e);
        else
            tp_graphcheck__add(c->chk, TP_GC_WARNING, at_elem(NULL, -1, e),
                               "<%s> ignored (NCCL reads only <graph> here)", e->tag);
    }
    return st;
}

/*
 * A rank's system with its paths, as it was before any search: the plan's
 * own copy has been searched, and NCCL 2.22.3's NVLS search leaves NET
 * bandwidth taken (it skips a duplicate head without giving it back). Built
 * as the plan built it (plan.c rank_paths): a copy of the host's system
 * trimmed to the rank's domain with the domains the plan found on the
 * host's first routes (they do not depend on the rank), then paths. Without
 * those domains, init.cc's own steps: paths, trim, paths again.
 */
tp_status tp_graphcheck__rank_system(tp_system **out, const tp_plan *plan, const tp_host_kind *k,
                                     int rank, tp_error *err)
{
    *out = NULL;
    tp_job_view view = {
        .n_ranks = plan->facts.n_ranks,
        .n_nodes = plan->job.n_nodes,
        .rank = rank,
        .local_n_ranks = k->n_gpus,
        .rank_devs = plan->rank_devs,
    };
    if (!k->host_domains)
        return tp_paths__fresh_copy(out, k->host_sys, plan->cfg, &view, err);
    tp_status st = tp_system__clone(out, k->host_sys, err);
    if (st == TP_OK)
        st = tp_paths__trim_domains(*out, k->host_domains, &view, err);
    if (st == TP_OK)
        st = tp_paths__compute(*out, plan->cfg, &view, NULL, err);
    return st;
}

tp_status tp_graphcheck__fresh_system(tp_system **out, const tp_plan *plan, tp_error *err)
{
    *out = NULL;
    if (!plan->host_sys || !plan->sys)
        return tp_fail(err, TP_ERR_TOPOLOGY, plan->source, 0, 0, "the topology was not planned");
    return tp_graphcheck__rank_system(out, plan, &plan->kinds[plan->home_kind], plan->job.rank,
                                      err);
}

static tp_status check_parsed(tp_graph_check **out, const tp_plan *plan, const tp_xml *doc,
                              tp_error *err)
{
    tp_system *sys = NULL;
    tp_status st = tp_graphcheck__fresh_system(&sys, plan, err);
    if (st != TP_OK) {
        tp_system__free(sys);
        return st;
    }
    gc_ctx c = {.plan = plan, .sys = sys, .doc = doc, .err = err};
    c.chk = calloc(1, sizeof(*c.chk));
    c.channels = calloc(TP_MAXCHANNELS, sizeof(*c.channels));
    st = c.chk && c.channels ? TP_OK : tp_fail_nomem(err);
    if (st == TP_OK) {
        snprintf(c.chk->source, sizeof(c.chk->source), "%s", doc->source);
        snprintf(c.chk->topology, sizeof(c.chk->topology), "%s", plan->source);
        snprintf(c.chk->nccl_version, sizeof(c.chk->nccl_version), "%s", tp_config_nccl(plan->cfg));
        c.chk->n_nodes = plan->job.n_nodes;
        c.chk->n_gpus = sys->nodes[TP_NODE_GPU].count;
        c.chk->n_nets = sys->nodes[TP_NODE_NET].count;
        c.chk->n_nvs = sys->nodes[TP_NODE_NVS].count;
        st = check_doc(&c);
    }
    if (st == TP_OK && c.chk->failed)
        st = tp_fail_nomem(err);
    free(c.channels);
    tp_system__free(sys);
    if (st != TP_OK)
        tp_graph_check_free(c.chk);
    else
        *out = c.chk;
    return st;
}

tp_status tp_graph_check_buffer(tp_graph_check **out, const tp_plan *plan, const char *xml,
                                size_t len, const char *source, tp_error *err)
{
    if (!out || !xml)
        return tp_fail_arg(err, "tp_graph_check_buffer", !out ? "out is NULL" : "xml is NULL");
    *out = NULL;
    tp_status ok = tp_plan__check_done(plan, "tp_graph_check_buffer", err);
    if (ok != TP_OK)
        return ok;
    *out = NULL;
    tp_xml *doc = NULL;
    tp_status st = tp_xml__parse(&doc, xml, len, source ? source : "<buffer>", err);
    if (st == TP_OK)
        st = check_parsed(out, plan, doc, err);
    tp_xml__free(doc);
    return st;
}

tp_status tp_graph_check_file(tp_graph_check **out, const tp_plan *plan, const char *path,
                              tp_error *err)
{
    if (!out || !path)
        return tp_fail_arg(err, "tp_graph_check_file", !out ? "out is NULL" : "path is NULL");
    *out = NULL;
    tp_status ok = tp_plan__check_done(plan, "tp_graph_check_file", err);
    if (ok != TP_OK)
        return ok;
    *out = NULL;
    tp_xml *doc = NULL;
    tp_status st = tp_xml__parse_file(&doc, path, err);
    if (st == TP_OK)
        st = check_parsed(out, plan, doc, err);
    tp_xml__free(doc);
    return st;
}

int tp_graph_check_feasible(const tp_graph_check *chk)
{
    if (!chk)
        return 0;
    for (size_t i = 0; i < chk->n_findings; i++)
        if (chk->findings[i].severity == TP_GC_ERROR)
            return 0;
    for (size_t i = 0; i < chk->n_graphs; i++)
        if (chk->graphs[i].n_errors > 0)
            return 0;
    return 1;
}

size_t tp_graph_check_error_count(const tp_graph_check *chk)
{
    size_t n = 0;
    if (!chk)
        return 0;
    for (size_t i = 0; i < chk->n_findings; i++)
        n += chk->findings[i].severity == TP_GC_ERROR;
    for (size_t i = 0; i < chk->n_graphs; i++)
        n += (size_t)chk->graphs[i].n_errors;
    return n;
}

void tp_graph_check_free(tp_graph_check *chk)
{
    if (!chk)
        return;
    for (size_t i = 0; i < chk->n_graphs; i++) {
        free(chk->graphs[i].findings);
        free(chk->graphs[i].links);
    }
    free(chk->graphs);
    free(chk->findings);
    free(chk);
}
