/*
 * Graph files: NCCL_GRAPH_FILE replay (NCCL 2.22.3 xml.cc
 * ncclTopoGetXmlGraphFromFile and search.cc ncclTopoGetGraphFromXml) and the
 * NCCL_GRAPH_DUMP_FILE content (ncclTopoGetXmlFromGraphs). A matching graph
 * id overrides the search; a GPU the system lacks fails as NCCL fails, with
 * its WARN and back-trace lines.
 */
#include "search/search_int.h"
#include "common/nccl_profile.h"
#include "config/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_SEARCH_CC "graph/search.cc"
#define NCCL_XML_H "graph/xml.h"
/* The NCCL functions of the back-trace lines (search.cc). */
#define GRAPH_SUB "ncclTopoGetGraphFromXmlSub"
#define COMPUTE "ncclTopoCompute"

typedef struct gf_ctx {
    tp_xml *doc; /* owned */
    const tp_system *sys;
    const tp_config *cfg;
    const tp_graph_file_lines *lines; /* the profile's NCCL source lines of the back-trace */
    tp_graph *graph;
    tp_log *log;
    tp_error *err;
    int nccl_code;    /* the ncclResult_t NCCL's back-trace would print */
    int n_loaded;     /* channels of the matching graph (NCCL's nChannels) */
    int role_pattern; /* the graph's pattern as the planner uses it (the file may name another) */
    bool ours;        /* refused by topoplan, not NCCL: no NCCL back-trace */
} gf_ctx;

/*
 * How a refusal of topoplan's own starts: NCCL 2.22.3 loads such a file
 * without a check, then reads channel slots the file left unset.
 */
#define OURS "topoplan refuses this graph file, which NCCL 2.22.3 would load unchecked: "

/* NCCL 2.22.3 kvDictLinkType: the path names a graph file may use. */
static const struct {
    const char *name;
    int type;
} link_type_dict[] = {
    {"LOC", TP_PATH_LOC}, {"NVL", TP_PATH_NVL}, {"NVB", TP_PATH_NVB}, {"PIX", TP_PATH_PIX},
    {"PXB", TP_PATH_PXB}, {"PXN", TP_PATH_PXN}, {"PHB", TP_PATH_PHB}, {"SYS", TP_PATH_SYS},
};

/* One NCCLCHECK back-trace line at `line` of `func` (named from 2.30.7: log-trace-function). */
static void trace(gf_ctx *c, const char *file, const char *func, int line)
{
    if (tp_profile_has(tp_config__profile(c->cfg), TP_RULE_LOG_TRACE_FUNCTION))
        tp_log_info_sub(c->log, TP_SUB_ALL, "%s:%d (%s) -> %d", file, line, func, c->nccl_code);
    else
        tp_log_info_sub(c->log, TP_SUB_ALL, "%s:%d -> %d", file, line, c->nccl_code);
}

/* An attribute as NCCL 2.22.3's node record holds it: only the first 16 are kept. */
static const char *nccl_attr(const tp_xml_elem *e, const char *name)
{
    for (size_t i = 0; i < e->n_attrs && i < TP_NCCL_XML_MAX_ATTRS; i++)
        if (strcmp(e->attrs[i].name, name) == 0)
            return e->attrs[i].value;
    return NULL;
}

static const char *need_attr(gf_ctx *c, const tp_xml_elem *e, const char *name)
{
    const char *v = nccl_attr(e, name);
    if (!v) {
        tp_log_warn(c->log, "Attribute %s of node %s not found", name, e->tag);
        c->nccl_code = TP_NCCL_INTERNAL_ERROR;
    }
    return v;
}

static tp_status missing(gf_ctx *c, const tp_xml_elem *e, const char *name)
{
    return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, e, "missing attribute \"%s\"", name);
}

/* xmlGetAttrInt under NCCLCHECK at search.cc `line`. */
static tp_status get_int(gf_ctx *c, const tp_xml_elem *e, const char *name, int line, int *out)
{
    const char *v = need_attr(c, e, name);
    if (!v) {
        trace(c, NCCL_XML_H, "xmlGetAttrInt", c->lines->xml_get_int);
        trace(c, NCCL_SEARCH_CC, GRAPH_SUB, line);
        return missing(c, e, name);
    }
    *out = (int)strtol(v, NULL, 0);
    return TP_OK;
}

static tp_status get_float(gf_ctx *c, const tp_xml_elem *e, const char *name, int line, float *out)
{
    const char *v = need_attr(c, e, name);
    if (!v) {
        trace(c, NCCL_XML_H, "xmlGetAttrFloat", c->lines->xml_get_float);
        trace(c, NCCL_SEARCH_CC, GRAPH_SUB, line);
        return missing(c, e, name);
    }
    *out = strtof(v, NULL);
    return TP_OK;
}

/* NCCL 2.22.3 kvConvertToInt: prefix match; unknown names fall back to 0 (LOC). */
static tp_status get_path_type(gf_ctx *c, const tp_xml_elem *e, const char *name, tp_path_type *out)
{
    const char *v = nccl_attr(e, name);
    if (!v) /* NCCL 2.22.3 would dereference NULL here */
        return missing(c, e, name);
    for (size_t i = 0; i < ARRAY_LEN(link_type_dict); i++) {
        if (strncmp(v, link_type_dict[i].name, strlen(link_type_dict[i].name)) == 0) {
            *out = (tp_path_type)link_type_dict[i].type;
            return TP_OK;
        }
    }
    tp_log_info_sub(c->log, TP_SUB_GRAPH,
                    "KV Convert to int : could not find value of '%s' in dictionary, "
                    "falling back to %d",
                    v, 0);
    *out = TP_PATH_LOC; /* NCCL's fallback value 0 */
    return TP_OK;
}

/* The rank of the GPU whose (system id, dev) makes `dev`, or -1 (last match wins). */
static int rank_of_dev(const tp_system *sys, int64_t dev)
{
    int rank = -1;
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++) {
        int64_t sysid = TP_ID_SYSTEM_ID(gpus->nodes[g].id);
        if (TP_ID(sysid, gpus->nodes[g].gpu.dev) == dev)
            rank = gpus->nodes[g].gpu.rank;
    }
    return rank;
}

/* A rank attribute naming no GPU of the system: NCCL would take it as is and index past its
 * rank tables; topoplan refuses the file. */
static tp_status bad_rank(gf_ctx *c, const tp_xml_elem *sub, const char *rank_attr)
{
    int rank = (int)strtol(rank_attr, NULL, 0);
    const tp_node_set *gpus = &c->sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++)
        if (gpus->nodes[g].gpu.rank == rank)
            return TP_OK;
    c->ours = true;
    return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, sub,
                        OURS "gpu rank \"%s\" is not a rank of the system", rank_attr);
}

/* NCCL 2.22.3 ncclTopoGetChannelFromXml: NETs into inter, GPU devs mapped to ranks. */
static tp_status load_channel(gf_ctx *c, const tp_xml_elem *ch, int index, int *n_listed)
{
    int n_gpus = c->sys->nodes[TP_NODE_GPU].count;
    size_t inter = (size_t)index * 2, intra = (size_t)index * (size_t)n_gpus;
    for (size_t s = 0; s < ch->n_children; s++) {
        const tp_xml_elem *sub = ch->children[s];
        int is_net = strcmp(sub->tag, "net") == 0;
        if (!is_net && strcmp(sub->tag, "gpu") != 0)
            continue; /* ignored while parsing */
        const char *v = need_attr(c, sub, "dev");
        if (!v) {
            trace(c, NCCL_SEARCH_CC, "ncclTopoGetChannelFromXml", c->lines->channel_dev);
            return missing(c, sub, "dev");
        }
        int64_t dev = strtol(v, NULL, 16);
        if (is_net) {
            if (inter < ARRAY_LEN(c->graph->inter))
                c->graph->inter[inter++] = dev;
            continue;
        }
        /* 2.30.3 (graph-file-rank): a GPU's rank attribute names it, its dev is not looked up. */
        const char *rank_attr = tp_profile_has(tp_config__profile(c->cfg), TP_RULE_GRAPH_FILE_RANK)
                                    ? nccl_attr(sub, "rank")
                                    : NULL;
        tp_status st = rank_attr ? bad_rank(c, sub, rank_attr) : TP_OK;
        if (st != TP_OK)
            return st;
        int rank = rank_attr ? (int)strtol(rank_attr, NULL, 0) : rank_of_dev(c->sys, dev);
        if (rank == -1) {
            tp_log_warn(c->log, "XML Import Channel : dev %lld not found.", (long long)dev);
            c->nccl_code = TP_NCCL_SYSTEM_ERROR;
            return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, sub,
                                "gpu dev \"%s\" is not a GPU of the system (graph device ids "
                                "are hex, as NCCL reads them: %lld)",
                                v, (long long)dev);
        }
        if (intra < (size_t)c->graph->intra_cap)
            c->graph->intra[intra++] = rank;
        ++*n_listed;
    }
    return TP_OK;
}

/*
 * The channels NCCL uses (the first nchannels) must each list every GPU of
 * the system once (the NVLS graph: at least its head, whatever pattern the
 * file names). NCCL 2.22.3 does not check this: it builds rings and trees
 * from the unset slots, which is undefined.
 */
static tp_status check_used_channels(gf_ctx *c, const tp_xml_elem *g, const tp_xml_elem **chans,
                                     const int *n_listed, int n_chans)
{
    int n_gpus = c->sys->nodes[TP_NODE_GPU].count;
    const tp_nccl_profile *p = tp_config__profile(c->cfg);
    if (c->graph->n_channels < 0 || c->graph->n_channels > p->max_channels)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, g,
                            OURS "nchannels %d out of range (0..%d, NCCL %s MAXCHANNELS)",
                            c->graph->n_channels, p->max_channels, p->version);
    if (c->graph->n_channels > n_chans)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, g,
                            OURS "nchannels is %d but the graph has %d <channel> elements",
                            c->graph->n_channels, n_chans);
    for (int ch = 0; ch < c->graph->n_channels; ch++) {
        if (c->role_pattern == TP_PATTERN_NVLS) {
            if (n_listed[ch] < 1)
                return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, chans[ch],
                                    OURS "channel %d lists no GPU (an NVLS channel needs its head)",
                                    ch);
            continue;
        }
        if (n_listed[ch] != n_gpus)
            return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, chans[ch],
                                OURS
                                "channel %d lists %d GPUs; it must list each of the %d GPUs once",
                                ch, n_listed[ch], n_gpus);
        const int *intra = c->graph->intra + (size_t)ch * (size_t)n_gpus;
        for (int i = 0; i < n_gpus; i++)
            for (int j = 0; j < i; j++)
                if (intra[i] == intra[j])
                    return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, chans[ch],
                                        OURS
                                        "channel %d lists GPU rank %d twice; it must list each "
                                        "of the %d GPUs once",
                                        ch, intra[i], n_gpus);
    }
    return TP_OK;
}

static int count_channels(const tp_xml_elem *e)
{
    int n = 0;
    for (size_t i = 0; i < e->n_children; i++)
        n += strcmp(e->children[i]->tag, "channel") == 0;
    return n;
}

/* The scalar attributes of a matching <graph>, in NCCL 2.22.3's order. */
static tp_status load_graph_attrs(gf_ctx *c, const tp_xml_elem *e)
{
    tp_graph *g = c->graph;
    int pattern = 0; /* any int a file gives: NCCL stores it as is */
    tp_status st;
    if ((st = get_int(c, e, "pattern", c->lines->graph_pattern, &pattern)))
        return st;
    g->pattern = (tp_pattern)pattern;
    if ((st = get_int(c, e, "nchannels", c->lines->graph_nchannels, &g->n_channels)) ||
        (st = get_float(c, e, "speedintra", c->lines->graph_speedintra, &g->bw_intra)) ||
        (st = get_float(c, e, "speedinter", c->lines->graph_speedinter, &g->bw_inter)))
        return st;
    const char *lat = NULL;
    if (tp_profile_has(tp_config__profile(c->cfg), TP_RULE_GRAPH_LATENCY_INFO)) {
        if (!(lat = nccl_attr(e, "latencyinter")))
            tp_log_info_sub(c->log, TP_SUB_GRAPH, "latencyinter not found in graph, using 0.0");
        g->latency_inter = lat ? strtof(lat, NULL) : 0.0f;
    } else if ((lat = need_attr(c, e, "latencyinter"))) {
        g->latency_inter = strtof(lat, NULL);
    } else {
        /* Not fatal in NCCL: only xml.h's own check reports it. */
        trace(c, NCCL_XML_H, "xmlGetAttrFloat", c->lines->xml_get_float);
        g->latency_inter = 0.0f;
    }
    if ((st = get_path_type(c, e, "typeintra", &g->type_intra)) ||
        (st = get_path_type(c, e, "typeinter", &g->type_inter)))
        return st;
    return get_int(c, e, "samechannels", c->lines->graph_samechannels, &g->same_channels);
}

/* NCCL 2.22.3 ncclTopoGetGraphFromXmlSub: only the graph with our id (and allowed crossNic). */
static tp_status load_graph(gf_ctx *c, const tp_xml_elem *e)
{
    int id, cross_nic;
    tp_status st = get_int(c, e, "id", c->lines->graph_id, &id);
    if (st != TP_OK || c->graph->id != id)
        return st;
    if ((st = get_int(c, e, "crossnic", c->lines->graph_crossnic, &cross_nic)) != TP_OK)
        return st;
    if (tp_config_int(c->cfg, TP_P_CROSS_NIC) == 0 && cross_nic == 1)
        return TP_OK;
    c->graph->cross_nic = cross_nic;
    if ((st = load_graph_attrs(c, e)) != TP_OK)
        return st;
    const tp_nccl_profile *p = tp_config__profile(c->cfg);
    if (count_channels(e) > p->max_channels) {
        c->ours = true; /* NCCL would write past its channel arrays */
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, e,
                            OURS "more than %d channels (NCCL %s MAXCHANNELS)", p->max_channels,
                            p->version);
    }
    const tp_xml_elem *chans[TP_MAXCHANNELS];
    int n_listed[TP_MAXCHANNELS] = {0};
    int index = 0;
    for (size_t s = 0; s < e->n_children; s++) {
        if (strcmp(e->children[s]->tag, "channel") != 0)
            continue;
        chans[index] = e->children[s];
        if ((st = load_channel(c, e->children[s], index, &n_listed[index])) != TP_OK) {
            if (c->ours)
                return st;
            trace(c, NCCL_SEARCH_CC, GRAPH_SUB, c->lines->graph_channel);
            return st;
        }
        index++;
    }
    c->n_loaded = index;
    st = check_used_channels(c, e, chans, n_listed, index);
    c->ours = st != TP_OK;
    return st;
}

/*
 * The <graphs> header as topoplan reads it. NCCL's own checks of the file
 * (its parser, the version, "Loading graphs") ran in the replay of its loader.
 */
static tp_status check_version(gf_ctx *c, const tp_xml_elem *root)
{
    const char *v = tp_xml__attr(root, "version");
    if (!v)
        return missing(c, root, "version");
    int version = (int)strtol(v, NULL, 0);
    if (version != TP_GRAPH_XML_VERSION)
        return tp_xml__fail(c->err, TP_ERR_GRAPH, c->doc, root,
                            "graph file version %d (expected %d)", version, TP_GRAPH_XML_VERSION);
    return TP_OK;
}

static tp_status load_doc(gf_ctx *c)
{
    const tp_xml_elem *root = c->doc->root;
    if (strcmp(root->tag, "graphs") != 0)
        return TP_OK; /* NCCL skips it (the replay logged it) */
    tp_status st = check_version(c, root);
    if (st != TP_OK)
        return st;
    for (size_t i = 0; i < root->n_children; i++) {
        if (strcmp(root->children[i]->tag, "graph") != 0)
            continue;
        if ((st = load_graph(c, root->children[i])) != TP_OK && c->ours)
            return st; /* NCCL's log has nothing to say: the error says it, as topoplan's */
        if (st != TP_OK) {
            trace(c, NCCL_SEARCH_CC, "ncclTopoGetGraphFromXml", c->lines->graphs);
            trace(c, NCCL_SEARCH_CC, COMPUTE, c->lines->compute_graphs);
            return st;
        }
    }
    tp_log_info_sub(c->log, TP_SUB_GRAPH, "Search %d : %d channels loaded from XML graph",
                    c->graph->id, c->n_loaded);
    return TP_OK;
}

/*
 * NCCL 2.22.3 ncclTopoGetXmlGraphFromFile, replayed on the file's bytes: its
 * lines go to the log; a file it refuses fails here with its back-trace. A
 * file without a <graphs> element loads no graph (*has_graphs false).
 */
static tp_status replay_nccl_loader(gf_ctx *c, const char *path, const char *text, size_t len,
                                    bool *has_graphs)
{
    tp_log lines = {.enabled = true};
    tp_nccl_xml_result r;
    tp_nccl_xml_input in = {
        .text = text, .len = len, .kind = TP_NCCL_XML_GRAPHS, .source = path, .want_tree = true};
    tp_status st = tp_xml__nccl_load(&in, &lines, &r, c->err);
    tp_xml__log_append(c->log, &lines);
    tp_log_clear(&lines);
    if (st != TP_OK)
        return st;
    c->doc = r.tree; /* read as NCCL reads it, when plain */
    *has_graphs = r.outcome != TP_NCCL_XML_ACCEPTED || r.n_roots > 0;
    if (r.outcome != TP_NCCL_XML_REJECTED)
        return TP_OK;
    c->nccl_code = r.code;
    trace(c, NCCL_SEARCH_CC, COMPUTE, c->lines->compute_file);
    return tp_fail(c->err, TP_ERR_GRAPH, path, r.line, r.column,
                   "NCCL 2.22.3 refuses this graph file: %s", r.message);
}

tp_status tp_graphfile__load(tp_graph *graph, const tp_system *sys, const tp_config *cfg,
                             const char *path, tp_log *log, tp_error *err)
{
    gf_ctx c = {.sys = sys,
                .cfg = cfg,
                .lines = tp_config__profile(cfg)->graph_file_lines,
                .graph = graph,
                .role_pattern = graph->pattern,
                .log = log,
                .err = err};
    tp_config__log_env(cfg, TP_P_GRAPH_FILE, log); /* search.cc ncclTopoCompute, per graph */
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        tp_log_warn(log, "Could not open XML graph file %s : %s", path, strerror(e));
        c.nccl_code = TP_NCCL_SYSTEM_ERROR;
        trace(&c, NCCL_SEARCH_CC, COMPUTE, c.lines->compute_file);
        /* An error without a source is a report write (left to the CLI): name the variable. */
        if (!path[0])
            return tp_fail(err, TP_ERR_IO, "NCCL_GRAPH_FILE", 0, 0,
                           "set to the empty path, which NCCL 2.22.3 cannot open: %s", strerror(e));
        return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open NCCL_GRAPH_FILE: %s", strerror(e));
    }
    fclose(f);
    char *text = NULL;
    size_t len = 0;
    bool has_graphs = false;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st == TP_OK)
        st = replay_nccl_loader(&c, path, text, len, &has_graphs);
    if (st == TP_OK && has_graphs && !c.doc)
        st = tp_xml__parse(&c.doc, text, len, path, err);
    free(text);
    if (st == TP_OK && has_graphs)
        st = load_doc(&c);
    tp_xml__free(c.doc);
    return st;
}

/* ------------------------------------------------------------------------ */
/* NCCL_GRAPH_DUMP_FILE                                                      */

static tp_status set_attr_fmt(tp_xml_elem *e, const char *name, tp_error *err, const char *fmt, ...)
    TP_PRINTF(4, 5);

static tp_status set_attr_fmt(tp_xml_elem *e, const char *name, tp_error *err, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return tp_xml__set_attr(e, name, buf, err);
}

/* NCCL writes int64 attributes with "%#lx" (so 0 is "0", others "0x..."). */
static tp_status add_dev(tp_xml_elem *parent, const char *tag, int64_t dev, tp_error *err)
{
    tp_xml_elem *e;
    tp_status st = tp_xml__add_child(&e, parent, tag, err);
    if (st != TP_OK)
        return st;
    return set_attr_fmt(e, "dev", err, "%#llx", (unsigned long long)dev);
}

static int64_t dev_of_rank(const tp_system *sys, int rank)
{
    int64_t dev = -1;
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int i = 0; i < gpus->count; i++)
        if (gpus->nodes[i].gpu.rank == rank)
            dev = TP_ID(TP_ID_SYSTEM_ID(gpus->nodes[i].id), gpus->nodes[i].gpu.dev);
    return dev;
}

/* NCCL 2.22.3 ncclTopoGetXmlFromChannel. */
static tp_status dump_channel(tp_xml_elem *parent, const tp_system *sys, const tp_graph *g, int c,
                              tp_error *err)
{
    int n_gpus = sys->nodes[TP_NODE_GPU].count, has_net = sys->nodes[TP_NODE_NET].count > 0;
    tp_xml_elem *ch;
    tp_status st = tp_xml__add_child(&ch, parent, "channel", err);
    if (st == TP_OK && has_net)
        st = add_dev(ch, "net", g->inter[2 * c], err);
    for (int i = 0; i < n_gpus && st == TP_OK; i++) {
        int64_t dev = dev_of_rank(sys, g->intra[n_gpus * c + i]);
        if (dev == -1)
            return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                           "XML Export Channel : rank %d not found", g->intra[n_gpus * c + i]);
        st = add_dev(ch, "gpu", dev, err);
        /* 2.30.3: with the GPU's rank (written "%d" after dev). */
        if (st == TP_OK && tp_profile_has(sys->profile, TP_RULE_GRAPH_DUMP_RANK))
            st = set_attr_fmt(ch->children[ch->n_children - 1], "rank", err, "%d",
                              g->intra[n_gpus * c + i]);
        if (g->id == 3)
            break; /* NVLS graphs only use the first GPU */
    }
    if (st == TP_OK && has_net)
        st = add_dev(ch, "net", g->inter[2 * c + 1], err);
    return st;
}

static const char *path_dict_name(int type)
{
    for (size_t i = 0; i < ARRAY_LEN(link_type_dict); i++)
        if (link_type_dict[i].type == type)
            return link_type_dict[i].name;
    return NULL;
}

/* NCCL 2.22.3 ncclTopoGetXmlFromGraph: attributes in NCCL's order. */
static tp_status dump_graph(tp_xml_elem *root, const tp_system *sys, const tp_graph *g,
                            tp_error *err)
{
    const char *ti = path_dict_name(g->type_intra), *te = path_dict_name(g->type_inter);
    if (!ti || !te)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                       "KV Convert to str : could not find value %d in dictionary",
                       ti ? g->type_inter : g->type_intra);
    tp_xml_elem *e;
    tp_status st = tp_xml__add_child(&e, root, "graph", err);
    if (st || (st = set_attr_fmt(e, "id", err, "%d", g->id)) ||
        (st = set_attr_fmt(e, "pattern", err, "%d", g->pattern)) ||
        (st = set_attr_fmt(e, "crossnic", err, "%d", g->cross_nic)) ||
        (st = set_attr_fmt(e, "nchannels", err, "%d", g->n_channels)) ||
        (st = set_attr_fmt(e, "speedintra", err, "%g", g->bw_intra)) ||
        (st = set_attr_fmt(e, "speedinter", err, "%g", g->bw_inter)) ||
        (st = set_attr_fmt(e, "latencyinter", err, "%g", g->latency_inter)) ||
        (st = tp_xml__set_attr(e, "typeintra", ti, err)) ||
        (st = tp_xml__set_attr(e, "typeinter", te, err)) ||
        (st = set_attr_fmt(e, "samechannels", err, "%d", g->same_channels)))
        return st;
    for (int c = 0; c < g->n_channels && st == TP_OK; c++)
        st = dump_channel(e, sys, g, c, err);
    return st;
}

tp_status tp_search__dump_graphs(FILE *out, const tp_system *sys, tp_graph *const *graphs,
                                 int n_graphs, tp_error *err)
{
    tp_xml_elem *root = NULL;
    tp_status st = tp_xml__add_child(&root, NULL, "graphs", err);
    if (st != TP_OK)
        return st;
    st = set_attr_fmt(root, "version", err, "%d", TP_GRAPH_XML_VERSION);
    for (int g = 0; g < n_graphs && st == TP_OK; g++)
        st = dump_graph(root, sys, graphs[g], err);
    if (st == TP_OK)
        st = tp_xml__write(out, root, err);
    tp_xml__free_elem(root);
    return st;
}
