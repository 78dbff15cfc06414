/*
 * Stage 4: NCCL 2.22.3's ncclTopoSearchInit and ncclTopoCompute
 * (src/graph/search.cc): the graph file override, the search passes with
 * their relaxation ladder, the second pass raising bandwidth, channel
 * duplication and the simple-order fallback; and ncclTopoPrintGraph.
 * The recursion itself is in search_rec.c, candidate orders in search_order.c;
 * accelerators attach through search_accel.h.
 */
#include "search/search_int.h"
#include "common/nccl_profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL_CROSS_NIC (NCCL 2.22.3 ncclTopoCompute): channels may leave by another NIC never, always,
 * or only once the ladder needs it. */
enum { TP_CROSS_NIC_NEVER = 0, TP_CROSS_NIC_ALWAYS = 1, TP_CROSS_NIC_IF_NEEDED = 2 };

/* NCCL 2.25 device.h: the most NVLS heads and CollNet direct peers (rule nvls-heads-limit). */
#define TP_NCCL_MAX_NVLS_ARITY 32
#define TP_NCCL_MAX_DIRECT_ARITY 7

/* The largest route bw from a GPU to nodes of `type` (NCCL 2.22.3 getMaxBw). */
static float gpu_max_bw(const tp_system *sys, const tp_node *gpu, int type)
{
    float max_bw = 0.0f;
    for (int i = 0; i < sys->nodes[type].count; i++) {
        const tp_route *path = &gpu->paths[type][i];
        if (path->count == 0)
            continue;
        if (path->bw > max_bw)
            max_bw = path->bw;
    }
    return max_bw;
}

/* NVLink bw summed, or the (last) PCI link bw if larger (NCCL 2.22.3 getTotalBw). */
static float gpu_total_bw(const tp_node *gpu)
{
    float nvl_bw = 0.0f, pci_bw = 0.0f;
    for (int l = 0; l < gpu->n_links; l++) {
        if (gpu->links[l].type == TP_LINK_NVL)
            nvl_bw += gpu->links[l].bw;
        if (gpu->links[l].type == TP_LINK_PCI)
            pci_bw = gpu->links[l].bw;
    }
    return pci_bw > nvl_bw ? pci_bw : nvl_bw;
}

tp_status tp_search__init(tp_system *sys, tp_error *err)
{
    (void)err;
    sys->max_bw = 0.0f;
    sys->total_bw = 0.0f;
    int n_nets = sys->nodes[TP_NODE_NET].count;
    if (n_nets == 0 && sys->nodes[TP_NODE_GPU].count == 1) {
        sys->max_bw = TP_LOC_BW;
        sys->total_bw = TP_LOC_BW;
        return TP_OK;
    }
    for (int g = 0; g < sys->nodes[TP_NODE_GPU].count; g++) {
        const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
        float bw = gpu_max_bw(sys, gpu, n_nets ? TP_NODE_NET : TP_NODE_GPU);
        float total = gpu_total_bw(gpu);
        if (bw > sys->max_bw)
            sys->max_bw = bw;
        if (total > sys->total_bw)
            sys->total_bw = total;
    }
    return TP_OK;
}

tp_status tp_search__init_devs(tp_system *sys, const tp_system *devs, tp_error *err)
{
    tp_status st = tp_search__init(sys, err);
    int n_nets = sys->nodes[TP_NODE_NET].count;
    if (st != TP_OK || (n_nets == 0 && sys->nodes[TP_NODE_GPU].count == 1))
        return st;
    sys->max_bw = 0.0f;
    sys->total_bw = 0.0f;
    for (int g = 0; g < devs->nodes[TP_NODE_GPU].count; g++) {
        const tp_node *dev = &devs->nodes[TP_NODE_GPU].nodes[g];
        float bw = gpu_max_bw(devs, dev, n_nets ? TP_NODE_NET : TP_NODE_GPU);
        float total = gpu_total_bw(dev);
        if (bw > sys->max_bw)
            sys->max_bw = bw;
        if (total > sys->total_bw)
            sys->total_bw = total;
    }
    return TP_OK;
}

int tp_search__event_room(tp_graph *graph)
{
    /* Every slot is written before it is read: no zeroing (tp_grow's) needed. */
    /* A search traces up to hundreds of passes; most graphs of a plan far fewer. */
    size_t cap = graph->events_cap ? 2 * graph->events_cap : 128;
    tp_search_event *events = realloc(graph->events, cap * sizeof(*events));
    if (!events)
        return 0; /* the trace is informational: a short one is acceptable */
    graph->events = events;
    graph->events_cap = cap;
    return 1;
}

/* The one event that ends the ladder early (rest_futile): the comparison knows it by its text. */
static const char SECOND_PASSES_SKIPPED[] =
    "no better graph possible here or higher: second passes skipped (NCCL runs them)";

static int pass2_kind(tp_search_event_kind kind)
{
    return kind == TP_EV_TRY || kind == TP_EV_BUDGET || kind == TP_EV_RAISE;
}

int tp_search__same_decisions(const tp_graph *x, const tp_graph *y)
{
    size_t i = 0, j = 0;
    while (i < x->n_events || j < y->n_events) {
        const tp_search_event *ex = i < x->n_events ? &x->events[i] : NULL;
        if (ex && ex->kind == TP_EV_SETTLE) {
            i++;
        } else if (ex && ex->kind == TP_EV_BOUND) {
            /* A stopped pass may have improved the graph before it was stopped. */
            size_t pass = i;
            if (pass > 0 && x->events[pass - 1].kind == TP_EV_IMPROVED)
                pass--;
            if (pass == 0 || x->events[pass - 1].kind != TP_EV_TRY)
                return 0;
            if (x->events[i++].why == SECOND_PASSES_SKIPPED) {
                /* whatever NCCL ran of them; what follows the ladder (a fallback) must agree */
                while (j < y->n_events && pass2_kind(y->events[j].kind))
                    j++;
                continue;
            }
            j += j < y->n_events && y->events[j].kind == TP_EV_BUDGET;
        } else if (ex && j < y->n_events && ex->kind == y->events[j].kind) {
            i++, j++;
        } else {
            return 0;
        }
    }
    return 1;
}

tp_graph *tp_graph__new(int n_gpus)
{
    tp_graph *g = calloc(1, tp_graph__size(n_gpus));
    if (g)
        tp_graph__set_room(g, n_gpus);
    return g;
}

void tp_search__graph_release(tp_graph *graph)
{
    free(graph->events);
    graph->events = NULL;
    graph->n_events = graph->events_cap = 0;
}

/* The state of one ncclTopoCompute: NCCL's tmpGraph and its ladder position. */
typedef struct ladder {
    tp_search_ctx *s;
    const tp_nccl_profile *profile;
    tp_graph *graph; /* the best graph so far (the caller's) */
    const float *speeds;
    int n_speeds, speed_index, pass;
    int64_t global_timeout; /* NCCL's globalTimeout */
    int cross_nic, try_same, cc_min, cpu_arch, cpu_vendor;
    float max_bw;
    /* TP_RULE_LADDER_MIN_MAX_PATH: the path-type rungs in the profile's numbering (its C2C and
     * P2C rungs search as NVB and PXB: topoplan's systems have no such paths), from the best
     * to the worst type the system has. */
    bool min_max;
    int rung_intra, rung_inter;              /* tmp's types, profile numbers */
    int min_intra, max_intra;                /* GPU to GPU, profile numbers */
    int min_inter, max_inter;                /* GPU to NET, profile numbers */
    tp_path_type start_intra, start_inter;   /* min_intra / min_inter as path types */
    signed char numbers[TP_PATH_TYPE_COUNT]; /* each type's profile number (-1: none): the rungs
                                                read them at every pass */
    tp_known_passes known; /* first passes the accelerator knows, alike (until a pass begins) */
    tp_graph *tmp;         /* the settings being searched (NCCL's tmpGraph): after the ladder */
} ladder;

/*
 * The ladder and its tmp graph in one block, cleared: NCCL's tmpGraph is a
 * copy of a zeroed graph, and NVLS channels leave all but their head GPU's
 * slot untouched (they print).
 */
static ladder *new_ladder(int n_gpus)
{
    size_t at = (sizeof(ladder) + _Alignof(tp_graph) - 1) / _Alignof(tp_graph) * _Alignof(tp_graph);
    ladder *l = calloc(1, at + tp_graph__size(n_gpus));
    if (!l)
        return NULL;
    l->tmp = (tp_graph *)((char *)l + at);
    tp_graph__set_room(l->tmp, n_gpus);
    return l;
}

/* Each rung moves one knob and returns 1, or resets it and returns 0 (next_rung's order). */

/* Rung: a simpler tree (TREE instead of BALANCED_TREE) on sm90+. */
static int rung_simpler_tree(ladder *l)
{
    if (l->cc_min >= l->profile->sm90_cc && l->tmp->pattern == TP_PATTERN_BALANCED_TREE) {
        l->tmp->pattern = TP_PATTERN_TREE;
        return 1;
    }
    l->tmp->pattern = l->graph->pattern;
    return 0;
}

/* The profile's number of path type t (its topoPathTypeStr index). */
static int path_number(const ladder *l, int t)
{
    return l->numbers[t];
}

/* The path type a rung of profile number k searches: the weakest of ours not above it. */
static tp_path_type rung_type(const ladder *l, int k)
{
    tp_path_type t = TP_PATH_LOC;
    for (int u = 0; u < TP_PATH_TYPE_COUNT; u++)
        if (path_number(l, u) >= 0 && path_number(l, u) <= k)
            t = (tp_path_type)u;
    return t;
}

/* NCCL 2.25 ncclTopoCompute: a weaker GPU-to-GPU type, up to typeInter (NETs) or the worst the
 * GPUs have, one profile number at a time. */
static int rung_type_intra_min_max(ladder *l)
{
    int max = l->s->n_nets > 0 ? l->rung_inter : l->max_intra;
    if (l->rung_intra < max &&
        (l->graph->n_channels == 0 || l->rung_intra < path_number(l, l->graph->type_intra))) {
        l->rung_intra++;
        l->tmp->type_intra = rung_type(l, l->rung_intra);
        if (l->rung_intra < path_number(l, TP_PATH_DIS))
            return 1;
    }
    l->rung_intra = l->min_intra;
    l->tmp->type_intra = l->start_intra;
    return 0;
}

/* NCCL 2.25 ncclTopoCompute: a weaker GPU-to-NET type, up to the worst the GPUs have. */
static int rung_type_inter_min_max(ladder *l)
{
    if (l->s->n_nets > 0 && l->rung_inter < l->max_inter &&
        (l->graph->n_channels == 0 || l->rung_inter < path_number(l, l->graph->type_inter) ||
         l->rung_inter < path_number(l, TP_PATH_PXN))) {
        l->rung_inter++;
        l->tmp->type_inter = rung_type(l, l->rung_inter);
        if (l->rung_inter < path_number(l, TP_PATH_DIS))
            return 1;
    }
    l->rung_inter = l->min_inter;
    l->tmp->type_inter = l->start_inter;
    return 0;
}

/* Rung: accept a weaker GPU-to-GPU path type. */
static int rung_type_intra(ladder *l)
{
    if (l->min_max)
        return rung_type_intra_min_max(l);
    tp_path_type max_type = l->s->n_nets > 0 ? l->tmp->type_inter : TP_PATH_SYS;
    if (l->tmp->type_intra < max_type &&
        (l->graph->n_channels == 0 || l->tmp->type_intra < l->graph->type_intra)) {
        l->tmp->type_intra += 1;
        return 1;
    }
    l->tmp->type_intra = l->s->n_gpus == 1 ? TP_PATH_LOC : TP_PATH_NVL;
    return 0;
}

/* Rung: accept a weaker GPU-to-NET path type. */
static int rung_type_inter(ladder *l)
{
    if (l->min_max)
        return rung_type_inter_min_max(l);
    if (l->s->n_nets > 0 && l->tmp->type_inter < TP_PATH_SYS &&
        (l->graph->n_channels == 0 || l->tmp->type_inter < l->graph->type_inter ||
         l->tmp->type_inter < TP_PATH_PXN)) {
        l->tmp->type_inter += 1;
        return 1;
    }
    l->tmp->type_inter = TP_PATH_PIX;
    return 0;
}

/* Rung: let a channel leave by another NIC (NCCL_CROSS_NIC=2); from 2.23 rings and balanced
 * trees only, as crossNic 2 (rings alternate NICs, see net_may_close). */
static int rung_cross_nic(ladder *l)
{
    if (l->cross_nic == TP_CROSS_NIC_IF_NEEDED && l->tmp->cross_nic == 0) {
        if (!tp_profile_has(l->profile, TP_RULE_CROSS_NIC_RING_ALTERNATE)) {
            l->tmp->cross_nic = 1;
            return 1;
        }
        int p = l->graph->pattern;
        if (p == TP_PATTERN_RING || p == TP_PATTERN_BALANCED_TREE) {
            l->tmp->cross_nic = TP_CROSS_NIC_IF_NEEDED;
            return 1;
        }
    }
    l->tmp->cross_nic = l->cross_nic == TP_CROSS_NIC_ALWAYS ? 1 : 0;
    return 0;
}

/* Rung: the next lower speed, unless it would lose more than half of a found graph. */
static int rung_lower_bw(ladder *l)
{
    const float *sp = l->speeds;
    if (l->speed_index < l->n_speeds - 1 &&
        (l->graph->n_channels == 0 ||
         sp[l->speed_index + 1] / l->graph->bw_inter > l->profile->lower_bw_share)) {
        l->tmp->bw_inter = l->tmp->bw_intra = sp[++l->speed_index];
        return 1;
    }
    l->speed_index = 0;
    while (sp[l->speed_index] > l->max_bw && l->speed_index < l->n_speeds - 1)
        l->speed_index++;
    l->tmp->bw_intra = l->tmp->bw_inter = sp[l->speed_index];
    return 0;
}

/*
 * The next rung in NCCL 2.22.3's order: the first that moves its knob
 * (the reason returned; the ones before it were reset), NULL when none can.
 */
static const char *next_rung(ladder *l)
{
    if (rung_simpler_tree(l))
        return "simpler tree pattern (sm90+)";
    if (rung_type_intra(l))
        return "weaker GPU-to-GPU path type";
    if (rung_type_inter(l))
        return "weaker GPU-to-NET path type";
    if (rung_cross_nic(l))
        return "allow crossing NICs";
    if (rung_lower_bw(l))
        return "lower bandwidth";
    return NULL;
}

/*
 * The steps the last pass left go back to the global budget. The accelerator
 * is not asked after a pass it told alike (it has nothing to do then).
 */
static tp_status return_steps(ladder *l, int time, int answered)
{
    if (time == -1) {
        l->global_timeout = TP_SEARCH_GLOBAL_TIMEOUT;
        return TP_OK;
    }
    l->global_timeout += time;
    tp_search_ctx *s = l->s;
    if (!s->accel || answered)
        return TP_OK;
    return s->accel->budget(s->accel_state, l->tmp, &l->global_timeout);
}

/*
 * First pass without a satisfying graph (answered: one the accelerator told
 * alike): move the next knob. Returns 1 to search again, 0 to stop (ladder
 * exhausted or global budget spent).
 */
static int relax(ladder *l, int time, int answered, tp_status *st)
{
    tp_graph *tmp = l->tmp;
    /* Different channels may help, except through AMD CPUs at SYS. */
    if (tmp->same_channels == 1 &&
        !(l->cpu_arch == TP_CPU_ARCH_X86 && l->cpu_vendor == TP_CPU_VENDOR_AMD &&
          tmp->type_intra == TP_PATH_SYS)) {
        tmp->same_channels = 0;
        tp_search__event(l->graph, TP_EV_RELAX, "allow different channels", tmp);
        return 1;
    }
    tmp->same_channels = l->try_same;
    /* Unused steps go back to the global budget. */
    if ((*st = return_steps(l, time, answered)) != TP_OK)
        return 0;
    if (l->global_timeout < 0 && l->graph->n_channels) {
        tp_search__event(l->graph, TP_EV_BUDGET, "global step budget spent", tmp);
        return 0;
    }
    const char *why = next_rung(l);
    if (why)
        tp_search__event(l->graph, TP_EV_RELAX, why, tmp);
    return why != NULL;
}

/* NCCL 2.22.3 ncclTopoDupChannels: fast graphs get each channel twice, at half bw. */
static void dup_channels(const tp_nccl_profile *p, tp_graph *g, int cc_min, int n_gpus)
{
    if (g->n_channels == 0 || g->pattern == TP_PATTERN_NVLS)
        return;
    if (g->bw_intra < p->dup_min_bw)
        return;
    if (cc_min > p->dup_fast_cc && g->bw_intra < p->dup_fast_bw &&
        g->n_channels > p->dup_fast_max_chans)
        return;
    int dup = g->n_channels * 2 < g->max_channels ? g->n_channels * 2 : g->max_channels;
    if (dup <= g->n_channels)
        return;
    memcpy(g->intra + g->n_channels * n_gpus, g->intra,
           (size_t)(dup - g->n_channels) * (size_t)n_gpus * sizeof(int));
    memcpy(g->inter + g->n_channels * 2, g->inter,
           (size_t)(dup - g->n_channels) * 2 * sizeof(int64_t));
    g->bw_intra /= TP_DIVUP(dup, g->n_channels);
    g->bw_inter /= TP_DIVUP(dup, g->n_channels);
    g->n_channels = dup;
}

/* Pass 2 starts from the solution, at the speed just at or below it. */
static void start_second_pass(ladder *l)
{
    int before = l->graph->n_channels;
    dup_channels(l->profile, l->graph, l->cc_min, l->s->n_gpus);
    if (l->graph->n_channels != before)
        tp_search__event(l->graph, TP_EV_DUP, "channels duplicated at a fraction of the bandwidth",
                         l->graph);
    tp_search__copy_graph(l->tmp, l->graph, l->s->n_gpus);
    l->speed_index = 0;
    while (l->speeds[l->speed_index] > l->graph->bw_inter && l->speed_index < l->n_speeds - 1)
        l->speed_index++;
    l->tmp->bw_intra = l->tmp->bw_inter = l->speeds[l->speed_index];
    l->tmp->min_channels = l->graph->n_channels;
    l->pass = 2;
}

/*
 * Pass 2: the settings of the next pass in tmp and *speed_index, one speed
 * higher (rings), NVLS inter bw or tree intra bw; 0 when there is none.
 */
static int next_raise(const ladder *l, tp_graph *tmp, int *speed_index)
{
    const tp_graph *graph = l->graph;
    if (*speed_index <= 0)
        return 0;
    if (graph->pattern == TP_PATTERN_RING) {
        tmp->bw_intra = tmp->bw_inter = l->speeds[--*speed_index];
    } else if (graph->pattern == TP_PATTERN_NVLS && tmp->bw_inter == graph->bw_inter &&
               tmp->bw_inter < tmp->bw_intra * 2) {
        tmp->min_channels = tmp->max_channels = graph->n_channels;
        tmp->bw_inter = l->speeds[--*speed_index];
    } else if (tmp->bw_intra == graph->bw_intra && tmp->bw_intra < tmp->bw_inter * 2) {
        tmp->bw_intra = l->speeds[--*speed_index];
    } else {
        return 0;
    }
    return 1;
}

static int raise_bw(ladder *l)
{
    if (!next_raise(l, l->tmp, &l->speed_index))
        return 0;
    tp_search__event(l->graph, TP_EV_RAISE, "second pass: try a higher speed", l->tmp);
    return 1;
}

/*
 * Pass 2: neither this pass nor any raise after it can beat the graph (an
 * accelerator's `futile`). None of them changes it then, whatever steps
 * they take, so they need not run: their steps only decide how many of
 * them NCCL runs.
 */
static int rest_futile(ladder *l)
{
    tp_search_ctx *s = l->s;
    if (!s->accel)
        return 0;
    tp_graph next;
    tp_graph__copy_settings(&next, l->tmp);
    int speed_index = l->speed_index;
    do {
        if (!s->accel->futile(s->accel_state, &next))
            return 0;
    } while (next_raise(l, &next, &speed_index));
    return 1;
}

void tp_search__reset_pass(tp_search_ctx *s, tp_graph *g)
{
    g->n_channels = 0;
    s->work += 32; /* a pass's setup, about */
    s->stop = (tp_search_stop){.after = -1, .left = -1};
}

/* What the accelerator is told of the pass about to run. */
static tp_ladder_pass pass_info(const ladder *l)
{
    return (tp_ladder_pass){.number = l->pass,
                            .lower = l->speeds + l->speed_index + 1,
                            .n_lower = l->n_speeds - 1 - l->speed_index};
}

/*
 * A first pass the accelerator knows (it saves nothing, *time: the budget
 * it leaves) needs neither a begin nor a run.
 */
static int known_pass(ladder *l, int *time, int *kept)
{
    tp_search_ctx *s = l->s;
    *kept = 0;
    return l->pass == 1 && s->accel &&
           s->accel->known(s->accel_state, l->tmp, time, kept, &l->known);
}

/* Ready the pass (reset); *kept = 1 when it leaves every bandwidth of the system as it found it. */
static tp_status begin_pass(ladder *l, int *kept)
{
    tp_search_ctx *s = l->s;
    *kept = 0;
    l->known.steps = NULL; /* the pass may change what the accelerator knows */
    if (!s->accel)
        return TP_OK;
    tp_ladder_pass p = pass_info(l);
    return s->accel->pass_begin(s->accel_state, l->tmp, &p, &l->global_timeout, kept);
}

/* One search pass (ncclTopoSearchRec on tmpGraph), or what an accelerator makes of it. */
static tp_status run_pass(ladder *l, int *time)
{
    tp_search_ctx *s = l->s;
    if (!s->accel)
        return tp_search__rec(s, l->tmp, time);
    tp_ladder_pass p = pass_info(l);
    return s->accel->pass(s->accel_state, l->tmp, &p, time);
}

#define PASS_BUDGET_SPENT "pass step budget spent"

/* After a pass: note a stopped one (its steps unknown, counted as all spent), or a spent budget. */
static void after_pass(ladder *l, int *time)
{
    const tp_search_stop *stop = &l->s->stop;
    if (stop->stopped && stop->left >= 0) {
        *time = 0;
        tp_search__event(l->graph, TP_EV_BOUND, stop->why, l->tmp);
    } else if (*time == 0) {
        tp_search__event(l->graph, TP_EV_BUDGET, PASS_BUDGET_SPENT, l->tmp);
    }
}

/* What a pass may improve in the best graph. */
typedef struct graph_key {
    int n_channels, type_intra, type_inter, same_channels, pattern;
    float bw_intra, bw_inter;
} graph_key;

static graph_key key_of(const tp_graph *g)
{
    return (graph_key){g->n_channels, g->type_intra, g->type_inter, g->same_channels,
                       g->pattern,    g->bw_intra,   g->bw_inter};
}

static bool same_key(graph_key a, graph_key b)
{
    return a.n_channels == b.n_channels && a.type_intra == b.type_intra &&
           a.type_inter == b.type_inter && a.same_channels == b.same_channels &&
           a.pattern == b.pattern && a.bw_intra == b.bw_intra && a.bw_inter == b.bw_inter;
}

/* Run the pass; trace a better graph it found. */
static tp_status run_traced(ladder *l, int *time)
{
    graph_key before = key_of(l->graph);
    tp_status st = run_pass(l, time);
    if (st == TP_OK && !same_key(before, key_of(l->graph)))
        tp_search__event(l->graph, TP_EV_IMPROVED, "this pass found a better graph", l->graph);
    return st;
}

/* The pass about to run counts in the global budget as all of its budget; traced. */
static void charge_pass(ladder *l, int budget, int kept)
{
    if (!kept)
        l->s->changed_passes++;
    l->global_timeout -= budget;
    tp_search__event(l->graph, TP_EV_TRY, l->pass == 1 ? "search pass" : "second pass", l->tmp);
}

/* Ready the pass in tmp (or know it: *known), charged and traced; *time: its budget. */
static tp_status open_pass(ladder *l, int *time, int *known)
{
    int budget = tp_search__step_budget(l->tmp), kept;
    *time = budget;
    tp_search__reset_pass(l->s, l->tmp);
    *known = known_pass(l, time, &kept);
    tp_status st = *known ? TP_OK : begin_pass(l, &kept);
    charge_pass(l, budget, kept);
    return st;
}

/*
 * A first pass the accelerator told alike (l->known), taken as a known
 * pass, without asking it: *time, the budget it leaves. 0 when the table
 * does not answer it.
 */
static int answered_pass(ladder *l, int *time)
{
    int steps = tp_known_passes__steps(&l->known, l->tmp);
    if (steps < 0)
        return 0;
    int budget = tp_search__step_budget(l->tmp);
    tp_search__reset_pass(l->s, l->tmp);
    charge_pass(l, budget, l->known.kept);
    *time = steps;
    if (steps == 0) /* as after_pass says it (no pass is stopped here) */
        tp_search__event(l->graph, TP_EV_BUDGET, PASS_BUDGET_SPENT, l->tmp);
    return 1;
}

/* A first pass not told alike: begun (or known) and run; *done: the graph needs no more. */
static tp_status first_pass(ladder *l, int *time, int *done)
{
    int known;
    tp_status st = open_pass(l, time, &known);
    if (st == TP_OK && !known)
        st = run_traced(l, time);
    if (st != TP_OK)
        return st;
    after_pass(l, time);
    *done = *time == -1 || l->graph->n_channels * l->graph->bw_inter >= l->s->sys->total_bw;
    if (*done && l->graph->n_channels)
        tp_search__event(l->graph, TP_EV_DONE,
                         *time == -1 ? "stop: the graph has the most channels allowed"
                                     : "stop: channels x bandwidth reach the GPU's total",
                         l->graph);
    return TP_OK;
}

/*
 * The first passes, relaxed one after the other until one makes the graph
 * good enough, the ladder is exhausted or the global budget spent.
 */
static tp_status first_passes(ladder *l)
{
    for (;;) {
        int time, done = 0;
        /* A pass answered saved nothing: the graph is still not done (else the ladder had
         * stopped before it). */
        int answered = answered_pass(l, &time);
        tp_status st = answered ? TP_OK : first_pass(l, &time, &done);
        if (st != TP_OK || done || !relax(l, time, answered, &st))
            return st;
    }
}

/* The second passes: higher speeds from the first pass's graph, until one spends its budget. */
static tp_status second_passes(ladder *l)
{
    while (raise_bw(l)) {
        int time, known;
        tp_status st = open_pass(l, &time, &known);
        if (st != TP_OK)
            return st;
        if (rest_futile(l)) {
            tp_search__event(l->graph, TP_EV_BOUND, SECOND_PASSES_SKIPPED, l->tmp);
            return TP_OK;
        }
        if ((st = run_traced(l, &time)) != TP_OK)
            return st;
        after_pass(l, &time);
        if (time == 0)
            return TP_OK;
    }
    return TP_OK;
}

/* The search loop of ncclTopoCompute: passes until optimal, settled or out of budget. */
static tp_status run_ladder(ladder *l)
{
    tp_status st = first_passes(l);
    if (st != TP_OK)
        return st;
    if (l->graph->n_channels)
        tp_search__event(l->graph, TP_EV_SOLUTION, "first pass result", l->graph);
    start_second_pass(l);
    return second_passes(l);
}

static int min_comp_cap(const tp_system *sys)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int cc = gpus->nodes[0].gpu.cuda_comp_cap;
    for (int g = 1; g < gpus->count; g++)
        if (gpus->nodes[g].gpu.cuda_comp_cap < cc)
            cc = gpus->nodes[g].gpu.cuda_comp_cap;
    return cc;
}

/* The speed ladder of the pattern's kind for the GPUs' compute capability (ncclTopoCompute). */
static tp_speed_ladder pick_ladder(const tp_nccl_profile *p, int cc_min, int inter)
{
    if (p->sm100_cc && cc_min >= p->sm100_cc)
        return inter ? p->sm100_speed_inter : p->sm100_speed_intra;
    if (cc_min >= p->sm90_cc)
        return inter ? p->sm90_speed_inter : p->sm90_speed_intra;
    return inter ? p->speed_inter : p->speed_intra;
}

/* The first speed at or below what the system can carry, as NCCL picks it. */
static void init_speeds(ladder *l)
{
    const tp_system *sys = l->s->sys;
    int n_gpus = l->s->n_gpus;
    tp_speed_ladder ladder_speeds = pick_ladder(l->profile, l->cc_min, l->s->n_nets > 0);
    l->speeds = ladder_speeds.speeds;
    l->n_speeds = ladder_speeds.count;
    l->max_bw = sys->max_bw;
    float total_bw = sys->total_bw;
    if (n_gpus > 1 && l->graph->pattern != TP_PATTERN_RING)
        total_bw *= n_gpus * 1.0 / (n_gpus - 1);
    const float *sp = l->speeds;
    l->speed_index = 0;
    while ((sp[l->speed_index] > l->max_bw ||
            sp[l->speed_index] * l->graph->min_channels > total_bw) &&
           l->speed_index < l->n_speeds - 1)
        l->speed_index++;
    l->tmp->bw_intra = l->tmp->bw_inter = sp[l->speed_index];
}

/* NCCL 2.22.3: nothing found, so one channel in GPU index order at a token speed. */
/*
 * NCCL 2.29.2 (rule fallback-local-nets): the fallback channel enters at GPU
 * 0's first NET and leaves at the last GPU's (ncclTopoSelectNets' first:
 * ncclTopoGetLocalNet at channel 0); the GPUs always have one when the
 * system has NETs. Without NETs (one node) the channel keeps 2.22.3's.
 */
static tp_status fallback_nets(const tp_system *sys, tp_graph *graph, tp_error *err)
{
    const tp_node *gpus = sys->nodes[TP_NODE_GPU].nodes;
    int last = sys->nodes[TP_NODE_GPU].count - 1;
    tp_status st = tp_paths__get_local_net(sys, gpus[0].gpu.rank, 0, &graph->inter[0], NULL, err);
    if (st == TP_OK)
        st = tp_paths__get_local_net(sys, gpus[last].gpu.rank, 0, &graph->inter[1], NULL, err);
    return st;
}

static tp_status simple_order_fallback(const tp_nccl_profile *p, const tp_system *sys,
                                       tp_graph *graph, tp_log *log, tp_error *err)
{
    if (graph->n_channels != 0 || graph->coll_net != 0 || graph->pattern == TP_PATTERN_NVLS)
        return TP_OK;
    if (tp_profile_has(p, TP_RULE_FALLBACK_INFO))
        tp_log_info_sub(log, TP_SUB_GRAPH,
                        "Could not find a path for pattern %d, falling back to simple order",
                        graph->pattern);
    else
        tp_log_warn(log, "Could not find a path for pattern %d, falling back to simple order",
                    graph->pattern);
    int n_gpus = sys->nodes[TP_NODE_GPU].count;
    for (int i = 0; i < n_gpus; i++)
        graph->intra[i] = sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank;
    graph->inter[0] = graph->inter[1] = 0;
    graph->bw_intra = graph->bw_inter = p->fallback_bw;
    graph->type_intra = graph->type_inter = TP_PATH_SYS;
    graph->n_channels = 1;
    tp_status st = TP_OK;
    if (tp_profile_has(p, TP_RULE_FALLBACK_LOCAL_NETS) && sys->nodes[TP_NODE_NET].count > 0)
        st = fallback_nets(sys, graph, err);
    tp_search__event(graph, TP_EV_FALLBACK, "no graph found: simple order", graph);
    return st;
}

/* The context of a search of graph on sys: *keep's when there is one (then kept), else new. */
static tp_status open_ctx(tp_search_ctx **out, tp_search_ctx *local, const tp_search_run *run,
                          tp_system *sys, tp_graph *graph, tp_error *err)
{
    tp_search_ctx **keep = run->keep;
    const tp_search_accel *accel = run->accel;
    if (keep && *keep) {
        *out = *keep;
        tp_search__ctx_reuse(*keep, graph, err);
        return TP_OK;
    }
    tp_search_ctx *ctx = keep ? malloc(sizeof(*ctx)) : local;
    if (!ctx)
        return tp_fail_nomem(err);
    tp_status st = tp_search__ctx_init(ctx, sys, graph, err);
    if (st == TP_OK && accel) {
        st = accel->attach(ctx, accel->opts, &ctx->accel_state, err);
        if (st == TP_OK)
            ctx->accel = accel->ops;
        else
            tp_search__ctx_free(ctx);
    }
    if (st != TP_OK) {
        if (keep)
            free(ctx);
        return st;
    }
    if (keep)
        *keep = ctx;
    *out = ctx;
    return TP_OK;
}

long tp_search__work(const tp_search_ctx *keep)
{
    return keep ? keep->work : 0;
}

void tp_search__keep_free(tp_search_ctx *keep)
{
    if (!keep)
        return;
    tp_search__ctx_free(keep);
    free(keep);
}

/* NCCL 2.25 paths.cc ncclTopoGetGpuMinPath / MaxPath: the best and worst type of the routes
 * from the GPUs to nodes of `type` (another GPU for GPUs); SYS / LOC when there are none. */
static void gpu_min_max_path(const tp_system *sys, int type, int *min, int *max)
{
    *min = TP_PATH_SYS;
    *max = TP_PATH_LOC;
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++) {
        const tp_route *paths = sys->nodes[TP_NODE_GPU].nodes[i].paths[type];
        for (int j = 0; paths && j < sys->nodes[type].count; j++) {
            if (type == TP_NODE_GPU && i == j)
                continue;
            *min = paths[j].type < *min ? paths[j].type : *min;
            *max = paths[j].type > *max ? paths[j].type : *max;
        }
    }
}

/* The path types the ladder runs between (NCCL 2.25 ncclTopoCompute, rule ladder-min-max-path):
 * GPU to GPU from the best the GPUs have to the worst GPU-to-NET type (with NETs) or GPU-to-GPU
 * type; GPU to NET from the best to the worst the GPUs have. */
typedef struct type_bounds {
    int min_intra, max_intra, min_inter, max_inter;
} type_bounds;

static type_bounds ladder_bounds(const tp_system *sys)
{
    type_bounds b = {TP_PATH_LOC, TP_PATH_SYS, TP_PATH_PIX, TP_PATH_SYS};
    if (sys->nodes[TP_NODE_GPU].count > 1)
        gpu_min_max_path(sys, TP_NODE_GPU, &b.min_intra, &b.max_intra);
    if (sys->nodes[TP_NODE_NET].count > 0) {
        gpu_min_max_path(sys, TP_NODE_NET, &b.min_inter, &b.max_inter);
        b.max_intra = b.max_inter;
    }
    return b;
}

/* The ladder's path-type rungs in the profile's numbering (rule ladder-min-max-path). */
static void set_rungs(ladder *l, type_bounds b)
{
    l->min_max = true;
    for (int t = 0; t < TP_PATH_TYPE_COUNT; t++)
        l->numbers[t] = (signed char)tp_nccl_profile__path_number(l->profile, tp_path_type_name(t));
    l->start_intra = (tp_path_type)b.min_intra;
    l->start_inter = (tp_path_type)b.min_inter;
    l->min_intra = l->rung_intra = path_number(l, b.min_intra);
    l->max_intra = path_number(l, b.max_intra);
    l->min_inter = l->rung_inter = path_number(l, b.min_inter);
    l->max_inter = path_number(l, b.max_inter);
}

/* NCCL 2.26 ncclTopoSplitNvLink: the GPUs form exactly two NVLink domains of 2 GPUs or more. */
static int split_nvlink(const tp_system *sys)
{
    int n = sys->nodes[TP_NODE_GPU].count, domain[TP_MAX_NODES], size[TP_MAX_NODES] = {0};
    for (int g = 0; g < n; g++)
        domain[g] = g;
    for (int g = 0; g < n; g++)
        for (int p = g + 1; p < n; p++)
            if (sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_GPU][p].type == TP_PATH_NVL)
                domain[p] = domain[g];
    for (int g = 0; g < n; g++)
        size[domain[g]]++;
    int domains = 0;
    for (int g = 0; g < n; g++)
        domains += size[g] > 1;
    return domains == 2;
}

/* NVLS and CollNet direct graphs have one head per GPU at most (ncclTopoCompute); from 2.25 also
 * at most NCCL_MAX_NVLS_ARITY / NCCL_MAX_DIRECT_ARITY + 1 (rule nvls-heads-limit). */
static void limit_heads(const tp_nccl_profile *p, tp_graph *graph, int n_gpus)
{
    if (!tp_search__head_pattern(graph->pattern))
        return;
    graph->max_channels = n_gpus;
    if (!tp_profile_has(p, TP_RULE_NVLS_HEADS_LIMIT))
        return;
    int arity =
        graph->pattern == TP_PATTERN_NVLS ? TP_NCCL_MAX_NVLS_ARITY : TP_NCCL_MAX_DIRECT_ARITY + 1;
    if (arity < graph->max_channels)
        graph->max_channels = arity;
}

static tp_status search_graph(tp_system *sys, tp_graph *graph, ladder *l, const tp_search_run *run,
                              tp_error *err)
{
    tp_search_ctx local, *s = NULL;
    tp_status st = open_ctx(&s, &local, run, sys, graph, err);
    if (st != TP_OK)
        return st;
    l->s = s;
    s->profile = l->profile;
    l->graph = graph;
    l->cc_min = min_comp_cap(sys);
    limit_heads(l->profile, graph, s->n_gpus);
    if (s->n_gpus == 1 && graph->pattern != TP_PATTERN_RING)
        graph->pattern = TP_PATTERN_TREE;
    if (s->n_nets == 0 && graph->pattern == TP_PATTERN_NVLS)
        graph->min_channels = graph->max_channels; /* pull evenly from all GPUs (heads) */
    /* 2.26: two NVLink domains joined by a slower link: trees do better with 2 channels, and
     * trees keep the ring's count. */
    if (tp_profile_has(l->profile, TP_RULE_RING_SPLIT_NVLINK) &&
        graph->pattern == TP_PATTERN_RING && split_nvlink(sys) && graph->max_channels >= 2 &&
        graph->min_channels == 1)
        graph->min_channels = 2;
    tp_search__copy_graph(l->tmp, graph, s->n_gpus);
    l->tmp->events = NULL;
    init_speeds(l);
    l->pass = 1;
    l->global_timeout = TP_SEARCH_GLOBAL_TIMEOUT;
    st = run_ladder(l);
    graph->search_state = s->changed_passes ? TP_SEARCH_CHANGED : TP_SEARCH_KEPT;
    if (!run->keep)
        tp_search__ctx_free(s);
    if (st == TP_OK)
        st = simple_order_fallback(l->profile, sys, graph, run->log, err);
    return st;
}

/* NCCL 2.22.3: NVLS needs NVSwitches and sm90 everywhere. */
static int nvls_impossible(const tp_nccl_profile *p, const tp_system *sys, const tp_graph *graph)
{
    return graph->pattern == TP_PATTERN_NVLS &&
           (sys->nodes[TP_NODE_NVS].count == 0 || min_comp_cap(sys) < p->sm90_cc);
}

tp_status tp_search__compute_with(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                  const tp_search_run *run, tp_error *err)
{
    tp_log *log = run->log;
    int n_gpus = sys->nodes[TP_NODE_GPU].count, n_nets = sys->nodes[TP_NODE_NET].count;
    if (n_gpus == 0)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "search: the system has no GPU");
    int p = graph->pattern;
    bool reads_cross_nic = n_nets > 1 && (p == TP_PATTERN_RING || p == TP_PATTERN_BALANCED_TREE ||
                                          p == TP_PATTERN_SPLIT_TREE);
    if (reads_cross_nic)
        tp_config__log_env(cfg, TP_P_CROSS_NIC, log);
    int cross_nic = reads_cross_nic ? (int)tp_config_int(cfg, TP_P_CROSS_NIC) : 0;
    /* NCCL's graphs start zeroed (calloc'ed comm): NVLS prints the untouched slots. */
    memset(graph->intra, 0, (size_t)TP_MAXCHANNELS * (size_t)n_gpus * sizeof(graph->intra[0]));
    memset(graph->inter, 0, sizeof(graph->inter));
    graph->n_hops = 0;
    graph->cross_nic = cross_nic == TP_CROSS_NIC_ALWAYS ? 1 : 0;
    graph->bw_intra = graph->bw_inter = 0;
    graph->latency_inter = 0;
    const tp_nccl_profile *profile = tp_config__profile(cfg);
    const bool min_max = tp_profile_has(profile, TP_RULE_LADDER_MIN_MAX_PATH);
    const type_bounds bounds = ladder_bounds(sys);
    graph->type_intra = min_max       ? (tp_path_type)bounds.min_intra
                        : n_gpus == 1 ? TP_PATH_LOC
                                      : TP_PATH_NVL;
    graph->type_inter = min_max ? (tp_path_type)bounds.min_inter : TP_PATH_PIX;
    graph->n_channels = 0;
    int try_same = p == TP_PATTERN_NVLS ? 0 : 1;
    graph->same_channels = try_same;

    const char *file = tp_config_str(cfg, TP_P_GRAPH_FILE);
    if (file) {
        tp_status st = tp_graphfile__load(graph, sys, cfg, file, log, err);
        if (st != TP_OK)
            return st;
        if (graph->n_channels > 0) {
            tp_search__event(graph, TP_EV_LOADED, "graph taken from NCCL_GRAPH_FILE", graph);
            graph->search_state = TP_SEARCH_CHANGED;
            return TP_OK;
        }
    }
    graph->search_state = TP_SEARCH_KEPT;
    if (nvls_impossible(tp_config__profile(cfg), sys, graph))
        return TP_OK;

    ladder *l = new_ladder(n_gpus);
    if (!l)
        return tp_fail_nomem(err);
    l->profile = profile;
    if (min_max)
        set_rungs(l, bounds);
    l->cross_nic = cross_nic;
    l->try_same = try_same;
    const tp_node_set *cpus = &sys->nodes[TP_NODE_CPU];
    l->cpu_arch = cpus->count ? cpus->nodes[0].cpu.arch : 0;
    l->cpu_vendor = cpus->count ? cpus->nodes[0].cpu.vendor : 0;
    tp_status st = search_graph(sys, graph, l, run, err);
    free(l);
    return st;
}

tp_status tp_search__compute_plain(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                   tp_log *log, tp_error *err)
{
    const tp_search_run step_by_step = {.accel = NULL, .keep = NULL, .log = log};
    return tp_search__compute_with(sys, graph, cfg, &step_by_step, err);
}

/* printf's "%f" of a float at p (tp_format_fixed: exact, ties to even as glibc): the end. */
static char *put_float6(char *p, float v)
{
    return p + tp_format_fixed(p, v, 6);
}

/* " NET/%llx" at p: the end returned. */
static char *put_net(char *p, int64_t id)
{
    return tp_put_hex(TP_PUT_LIT(p, " NET/"), (unsigned long long)id, 1, false);
}

/* " GPU/SYS-LOCAL" of the GPU of `rank` (2.27.5 ncclTopoPrintGraph: by topology id). */
static char *put_gpu_id(char *p, const tp_system *sys, int rank)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int64_t id = 0;
    for (int g = 0; g < gpus->count; g++)
        if (gpus->nodes[g].gpu.rank == rank)
            id = gpus->nodes[g].id;
    p = tp_put_hex(TP_PUT_LIT(p, " GPU/"), (unsigned long long)TP_ID_SYSTEM_ID(id), 1, false);
    return tp_put_hex(TP_PUT_LIT(p, "-"), (unsigned long long)TP_ID_LOCAL_ID(id), 1, false);
}

/* " NET/SYS-LOCAL" at p (2.23 on). */
static char *put_net_sys_id(char *p, int64_t id)
{
    p = tp_put_hex(TP_PUT_LIT(p, " NET/"), (unsigned long long)TP_ID_SYSTEM_ID(id), 1, false);
    return tp_put_hex(TP_PUT_LIT(p, "-"), (unsigned long long)TP_ID_LOCAL_ID(id), 1, false);
}

/* Channel c's line with TP_RULE_LOG_GRAPH_GPU_IDS: NETs and GPUs by topology id; NVLS graphs
 * (id 3) name only their first GPU. */
static void print_channel_ids(tp_log *log, const tp_system *sys, const tp_graph *graph, int c,
                              int n_gpus, int has_net)
{
    char *line = tp_log_begin_line(log, TP_SUB_GRAPH, 16 + 2 * 40 + (size_t)n_gpus * 40);
    if (!line)
        return;
    char *p = line;
    if (c < 10)
        *p++ = ' '; /* "%2d" */
    p = TP_PUT_LIT(tp_put_int(p, c, 0), " :");
    if (has_net)
        p = put_net_sys_id(p, graph->inter[2 * c]);
    for (int i = 0; i < n_gpus; i++) {
        p = put_gpu_id(p, sys, graph->intra[n_gpus * c + i]);
        if (graph->id == 3)
            break;
    }
    if (has_net)
        p = put_net_sys_id(p, graph->inter[2 * c + 1]);
    tp_log_end_line(log, p);
}

/* Channel c's line: "%2d :", its NETs and GPUs (at most TP_MAX_NODES). */
static void print_channel(tp_log *log, const tp_graph *graph, int c, int n_gpus, int has_net)
{
    char *line = tp_log_begin_line(log, TP_SUB_GRAPH, 16 + 2 * 24 + n_gpus * (5 + TP_INT_SIZE));
    if (!line)
        return;
    char *p = line;
    if (c < 10)
        *p++ = ' '; /* "%2d" */
    p = tp_put_int(p, c, 0);
    p = TP_PUT_LIT(p, " :");
    if (has_net)
        p = put_net(p, graph->inter[2 * c]);
    for (int i = 0; i < n_gpus; i++)
        p = tp_put_int(TP_PUT_LIT(p, " GPU/"), graph->intra[n_gpus * c + i], 0);
    if (has_net)
        p = put_net(p, graph->inter[2 * c + 1]);
    tp_log_end_line(log, p);
}

/* Room for the graph's header line: its words, four ints, two "%f" and two path type names. */
#define GRAPH_LINE_SIZE (96 + 4 * TP_INT_SIZE + 2 * TP_F1_SIZE)

/* NCCL 2.22.3 ncclTopoPrintGraph's lines, written in place in the log (printed per search). */
void tp_search__print_graph(tp_log *log, const tp_system *sys, const tp_graph *graph)
{
    char *p = tp_log_begin_line(log, TP_SUB_GRAPH, GRAPH_LINE_SIZE);
    if (!p)
        return;
    p = tp_put_int(TP_PUT_LIT(p, "Pattern "), (int)graph->pattern, 0);
    p = tp_put_int(TP_PUT_LIT(p, ", crossNic "), graph->cross_nic, 0);
    p = tp_put_int(TP_PUT_LIT(p, ", nChannels "), graph->n_channels, 0);
    p = put_float6(TP_PUT_LIT(p, ", bw "), graph->bw_intra);
    p = put_float6(TP_PUT_LIT(p, "/"), graph->bw_inter);
    p = tp_put_str(TP_PUT_LIT(p, ", type "), tp_path_type_name(graph->type_intra));
    p = tp_put_str(TP_PUT_LIT(p, "/"), tp_path_type_name(graph->type_inter));
    tp_log_end_line(log, tp_put_int(TP_PUT_LIT(p, ", sameChannels "), graph->same_channels, 0));
    int n_gpus = sys->nodes[TP_NODE_GPU].count, has_net = sys->nodes[TP_NODE_NET].count > 0;
    if (n_gpus > TP_MAX_NODES)
        n_gpus = TP_MAX_NODES; /* not a system the builder makes */
    bool by_id = tp_profile_has(sys->profile, TP_RULE_LOG_GRAPH_GPU_IDS);
    for (int c = 0; c < graph->n_channels; c++) {
        if (by_id)
            print_channel_ids(log, sys, graph, c, n_gpus, has_net);
        else
            print_channel(log, graph, c, n_gpus, has_net);
    }
}
