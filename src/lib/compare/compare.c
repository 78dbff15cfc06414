/*
 * Comparison of two plans: the public entry points, the difference list and
 * the node matching (rules in compare.h).
 */
#include "compare/compare.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Node types matched by position when their ids differ: those named by bus ids. */
static const bool by_position[TP_NODE_TYPE_COUNT] = {
    [TP_NODE_GPU] = true,
    [TP_NODE_PCI] = true,
    [TP_NODE_NIC] = true,
};

const char *tp_compare__layer_name(int layer)
{
    static const char *const names[TP_LAYER_COUNT] = {"system", "paths", "graphs", "channels",
                                                      "tuning"};
    return layer >= 0 && layer < TP_LAYER_COUNT ? names[layer] : "?";
}

const char *tp_compare__severity_name(int sev)
{
    static const char *const names[] = {"INFO", "WARN", "ERROR"};
    return sev >= 0 && sev <= TP_SEVERITY_ERROR ? names[sev] : "?";
}

/* The layer each kind of difference belongs to. */
static tp_layer layer_of(tp_diff_kind kind)
{
    switch (kind) {
    case TP_DIFF_NODE_MISSING:
    case TP_DIFF_NODE_EXTRA:
    case TP_DIFF_NODE_RENUMBERED:
    case TP_DIFF_NODE_ATTR:
    case TP_DIFF_NODE_MOVED:
    case TP_DIFF_LINK_MISSING:
    case TP_DIFF_LINK_EXTRA:
    case TP_DIFF_LINK_BW:
        return TP_LAYER_SYSTEM;
    case TP_DIFF_PATH:
        return TP_LAYER_PATHS;
    case TP_DIFF_GRAPH:
        return TP_LAYER_GRAPHS;
    case TP_DIFF_CHANNELS:
        return TP_LAYER_CHANNELS;
    case TP_DIFF_TUNING:
        break;
    }
    return TP_LAYER_TUNING;
}

void tp_compare__add(tp_comparison *c, tp_diff_kind kind, tp_severity sev, const char *title,
                     const char *fmt, ...)
{
    if (c->failed)
        return;
    if (tp_grow((void **)&c->diffs, &c->cap, c->n_diffs + 1, sizeof(*c->diffs), NULL) != TP_OK) {
        c->failed = true;
        return;
    }
    tp_difference *d = &c->diffs[c->n_diffs++];
    memset(d, 0, sizeof(*d));
    d->layer = layer_of(kind);
    d->kind = kind;
    d->severity = sev;
    d->title = title;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->text, sizeof(d->text), fmt, ap);
    va_end(ap);
}

static const tp_system *host(const tp_comparison *c, int side)
{
    return c->plan[side]->host_sys;
}

void tp_compare__set_device(tp_comparison *c, int side, bool peer, const tp_node *n)
{
    if (c->failed || c->n_diffs == 0 || !n)
        return;
    tp_difference *d = &c->diffs[c->n_diffs - 1];
    const tp_node_set *set = &host(c, 0)->nodes[n->type];
    if (side < 0)
        side = n >= set->nodes && n < set->nodes + set->count ? 0 : 1;
    tp_report__device_fields(peer ? &d->peer : &d->device, c->plan[side]->topo_xml, n);
}

void tp_compare__add_value(tp_comparison *c, const char *quantity, const char *unit, int has_before,
                           double before, int has_after, double after)
{
    if (c->failed || c->n_diffs == 0)
        return;
    tp_difference *d = &c->diffs[c->n_diffs - 1];
    if (d->n_values == TP_DIFF_MAX_VALUES)
        return;
    d->values[d->n_values++] = (tp_diff_value){.quantity = quantity,
                                               .unit = unit,
                                               .has_before = has_before,
                                               .has_after = has_after,
                                               .before = has_before ? before : 0,
                                               .after = has_after ? after : 0};
}

int tp_compare__host_index(const tp_comparison *c, int side, const tp_node *n)
{
    return tp_system__index_of(host(c, side), n->type, n->id);
}

bool tp_compare__matched(const tp_comparison *c, int side, const tp_node *n)
{
    int idx = tp_compare__host_index(c, side, n);
    return idx >= 0 && c->match[side][n->type][idx] >= 0;
}

const tp_node *tp_compare__counterpart(const tp_comparison *c, int side, const tp_node *n,
                                       const tp_system *sys)
{
    int idx = tp_compare__host_index(c, side, n);
    int other = idx < 0 ? -1 : c->match[side][n->type][idx];
    if (other < 0)
        return NULL;
    const tp_node *m = &host(c, 1 - side)->nodes[n->type].nodes[other];
    return tp_system__find(sys, m->type, m->id);
}

static void pair(tp_comparison *c, int type, int i0, int i1, tp_match_how how)
{
    c->match[0][type][i0] = i1;
    c->match[1][type][i1] = i0;
    c->how[type][i0] = how;
}

static void match_by_id(tp_comparison *c, int type)
{
    const tp_node_set *s0 = &host(c, 0)->nodes[type], *s1 = &host(c, 1)->nodes[type];
    for (int i = 0; i < s0->count; i++) {
        for (int j = 0; j < s1->count; j++) {
            if (c->match[1][type][j] < 0 &&
                TP_ID_LOCAL_ID(s0->nodes[i].id) == TP_ID_LOCAL_ID(s1->nodes[j].id)) {
                pair(c, type, i, j, TP_MATCH_ID);
                break;
            }
        }
    }
}

static int count_unmatched(const tp_comparison *c, int side, int type)
{
    int n = 0;
    for (int i = 0; i < host(c, side)->nodes[type].count; i++)
        n += c->match[side][type][i] < 0;
    return n;
}

/* Rule 2: the k-th unmatched node of one side with the k-th of the other. */
static void match_by_position(tp_comparison *c, int type)
{
    int n = count_unmatched(c, 0, type);
    if (n == 0 || n != count_unmatched(c, 1, type))
        return;
    int j = 0;
    for (int i = 0; i < host(c, 0)->nodes[type].count; i++) {
        if (c->match[0][type][i] >= 0)
            continue;
        while (c->match[1][type][j] >= 0)
            j++;
        pair(c, type, i, j, TP_MATCH_POSITION);
    }
}

/* The NIC a NET hangs under (NCCL links them both ways with a NET link). */
static int net_nic(const tp_system *sys, const tp_node *net)
{
    for (int l = 0; l < net->n_links; l++)
        if (net->links[l].type == TP_LINK_NET && net->links[l].rem->type == TP_NODE_NIC)
            return (int)(net->links[l].rem - sys->nodes[TP_NODE_NIC].nodes);
    return -1;
}

/* Rule 3: a NET follows its NIC; same port, the same GUID preferred. */
static void match_nets(tp_comparison *c)
{
    const tp_node_set *s0 = &host(c, 0)->nodes[TP_NODE_NET], *s1 = &host(c, 1)->nodes[TP_NODE_NET];
    for (int i = 0; i < s0->count; i++) {
        const tp_node *a = &s0->nodes[i];
        int nic0 = net_nic(host(c, 0), a);
        int nic1 = nic0 < 0 ? -1 : c->match[0][TP_NODE_NIC][nic0];
        int best = -1;
        for (int j = 0; nic1 >= 0 && j < s1->count; j++) {
            const tp_node *b = &s1->nodes[j];
            if (c->match[1][TP_NODE_NET][j] >= 0 || net_nic(host(c, 1), b) != nic1 ||
                b->net.port != a->net.port)
                continue;
            if (best < 0 || (b->net.asic == a->net.asic && s1->nodes[best].net.asic != a->net.asic))
                best = j;
        }
        if (best >= 0)
            pair(c, TP_NODE_NET, i, best, TP_MATCH_NIC);
    }
}

void tp_compare__match(tp_comparison *c)
{
    memset(c->match, 0xff, sizeof(c->match)); /* every entry -1 */
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        if (t == TP_NODE_NET)
            continue;
        match_by_id(c, t);
        if (by_position[t])
            match_by_position(c, t);
    }
    match_nets(c);
}

static tp_status check_plan(const tp_plan *p, tp_error *err)
{
    if (!p || p->status != TP_OK || !p->host_sys || !p->sys || !p->channels.rings)
        return tp_fail(err, TP_ERR_ARGUMENT, p ? p->source : NULL, 0, 0,
                       "compare: the plan did not complete");
    return TP_OK;
}

tp_status tp_compare_plans(tp_comparison **out, const tp_plan *first, const tp_plan *second,
                           tp_error *err)
{
    if (!out || !first || !second)
        return tp_fail_arg(err, "tp_compare_plans", !out ? "out is NULL" : "a plan is NULL");
    *out = NULL;
    tp_status st = check_plan(first, err);
    if (st == TP_OK)
        st = check_plan(second, err);
    if (st != TP_OK)
        return st;
    tp_comparison *c = calloc(1, sizeof(*c));
    if (!c)
        return tp_fail_nomem(err);
    c->plan[0] = first;
    c->plan[1] = second;
    for (int s = 0; s < 2; s++) {
        snprintf(c->source[s], sizeof(c->source[s]), "%s", c->plan[s]->source);
        c->n_ranks[s] = c->plan[s]->channels.n_ranks;
    }
    snprintf(c->nccl_version, sizeof(c->nccl_version), "%s", tp_config_nccl(first->cfg));
    c->job = first->job;
    tp_compare__match(c);
    tp_compare__system(c);
    tp_compare__paths(c);
    tp_compare__graphs(c);
    tp_compare__channels(c);
    tp_compare__env(c);
    tp_compare__tuning(c);
    tp_compare__versions(c);
    tp_compare__why(c);
    tp_compare__mark_consequences(c);
    c->plan[0] = c->plan[1] = NULL;
    if (c->failed) {
        tp_comparison_free(c);
        return tp_fail_nomem(err);
    }
    *out = c;
    return TP_OK;
}

void tp_comparison_free(tp_comparison *cmp)
{
    if (!cmp)
        return;
    free(cmp->diffs);
    free(cmp);
}

size_t tp_comparison_count(const tp_comparison *cmp)
{
    return cmp ? cmp->n_diffs : 0;
}

const tp_difference *tp_comparison_get(const tp_comparison *cmp, size_t i)
{
    return cmp && i < cmp->n_diffs ? &cmp->diffs[i] : NULL;
}

size_t tp_comparison_count_severity(const tp_comparison *cmp, tp_severity sev)
{
    size_t n = 0;
    if (!cmp)
        return 0;
    for (size_t i = 0; i < cmp->n_diffs; i++)
        n += cmp->diffs[i].severity == sev && !cmp->diffs[i].consequence;
    return n;
}

int tp_comparison_first_layer(const tp_comparison *cmp)
{
    int first = -1;
    if (!cmp)
        return -1;
    for (size_t i = 0; i < cmp->n_diffs; i++)
        if (first < 0 || (int)cmp->diffs[i].layer < first)
            first = (int)cmp->diffs[i].layer;
    return first;
}

const char *tp_comparison_why(const tp_comparison *cmp)
{
    return cmp ? cmp->why : "";
}
