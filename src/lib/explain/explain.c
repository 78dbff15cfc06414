/* Plain-word explanations of graphs, from their decision traces and a bandwidth replay. */
#include "explain/explain.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool tp_explain__is_ours(tp_search_event_kind kind)
{
    return kind == TP_EV_BOUND || kind == TP_EV_SETTLE;
}

static void add_line(tp_graph_why *w, const char *step, const char *fmt, ...) TP_PRINTF(3, 4);
static void add_line(tp_graph_why *w, const char *step, const char *fmt, ...)
{
    if (w->n_lines == TP_WHY_MAX_LINES)
        return;
    tp_why_line *l = &w->lines[w->n_lines++];
    l->step = step;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text, sizeof(l->text), fmt, ap);
    va_end(ap);
}

/* An empty explanation; the line buffers are left as they are (only n_lines of them are read). */
static void why_reset(tp_graph_why *w)
{
    w->start = w->result = w->dup = -1;
    w->n_lines = 0;
    w->n_limits = 0;
}

static long find_event(const tp_graph *g, tp_search_event_kind kind, bool last)
{
    long found = -1;
    for (size_t i = 0; i < g->n_events; i++) {
        if (g->events[i].kind != kind)
            continue;
        found = (long)i;
        if (!last)
            break;
    }
    return found;
}

/* "15.0 GB/s" or "18.0/15.0 GB/s intra/inter". */
static void bw_text(char *buf, size_t size, float intra, float inter)
{
    if (intra == inter)
        snprintf(buf, size, "%.1f GB/s", intra);
    else
        snprintf(buf, size, "%.1f/%.1f GB/s intra/inter", intra, inter);
}

static void settings_text(char *buf, size_t size, const tp_search_event *e)
{
    char bw[64];
    bw_text(bw, sizeof(bw), e->bw_intra, e->bw_inter);
    snprintf(buf, size, "%s, path types %s/%s, sameChannels %d, crossNic %d", bw,
             tp_path_type_name(e->type_intra), tp_path_type_name(e->type_inter), e->same_channels,
             e->cross_nic);
}

/*
 * The value a relaxation moved to: the knob that went the relaxing way
 * (rungs also reset the knobs before them, which move back).
 */
static void relax_value(char *buf, size_t size, const tp_search_event *before,
                        const tp_search_event *e)
{
    buf[0] = '\0';
    if (!before)
        return;
    if (e->type_intra > before->type_intra)
        snprintf(buf, size, "%s", tp_path_type_name(e->type_intra));
    else if (e->type_inter > before->type_inter)
        snprintf(buf, size, "%s", tp_path_type_name(e->type_inter));
    else if (e->bw_intra < before->bw_intra)
        snprintf(buf, size, "%.1f", e->bw_intra);
    else if (e->pattern != before->pattern)
        snprintf(buf, size, "pattern %d", e->pattern);
}

/* Relaxations in [from, to), grouped by kind in order of first use, with their values. */
typedef struct relax_group {
    const char *why;
    char values[200];
} relax_group;

/* The pass (TP_EV_TRY) an event happened in. */
static const tp_search_event *pass_of(const tp_graph *g, long i)
{
    for (; i >= 0; i--)
        if (g->events[i].kind == TP_EV_TRY)
            return &g->events[i];
    return NULL;
}

/* Whether `v` is one of the ", "-separated values of list. */
static bool has_value(const char *list, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = strstr(list, v); p; p = strstr(p + 1, v))
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

static int group_relaxations(relax_group *groups, int max, const tp_graph *g, long from, long to)
{
    int n = 0;
    const tp_search_event *before = from > 0 ? pass_of(g, from - 1) : NULL;
    for (long i = from; i < to; i++) {
        const tp_search_event *e = &g->events[i];
        if (e->kind == TP_EV_TRY)
            before = e;
        if (e->kind != TP_EV_RELAX)
            continue;
        int k = 0;
        while (k < n && strcmp(groups[k].why, e->why) != 0)
            k++;
        if (k == n && n == max)
            continue;
        if (k == n)
            groups[n++] = (relax_group){.why = e->why};
        char v[32];
        relax_value(v, sizeof(v), before, e);
        relax_group *gr = &groups[k];
        if (v[0] && !has_value(gr->values, v)) {
            size_t len = strlen(gr->values);
            snprintf(gr->values + len, sizeof(gr->values) - len, "%s%s", len ? ", " : " ", v);
        }
    }
    return n;
}

static void relaxations_text(char *buf, size_t size, const tp_graph *g, long from, long to)
{
    relax_group groups[8];
    int n = group_relaxations(groups, 8, g, from, to);
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < n && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s%s", k ? "; " : "", groups[k].why,
                                groups[k].values);
}

static void explain_relaxations(tp_graph_why *w, const tp_graph *g, long solution)
{
    char buf[400];
    long end = solution >= 0 ? solution : (long)g->n_events;
    long cut = w->result >= 0 ? w->result : end;
    relaxations_text(buf, sizeof(buf), g, 0, cut);
    add_line(w, "relaxed", "%s", buf[0] ? buf : "nothing before the result");
}

/* First-pass relaxations after the result: tried, nothing better. */
static void explain_after(tp_graph_why *w, const tp_graph *g, long solution)
{
    char buf[400];
    long end = solution >= 0 ? solution : (long)g->n_events;
    if (w->result < 0 || w->result >= end)
        return;
    relaxations_text(buf, sizeof(buf), g, w->result, end);
    if (buf[0])
        add_line(w, "after", "it went on to relax %s, without finding a better graph", buf);
}

static void explain_result(tp_graph_why *w, const tp_graph *g, long solution)
{
    if (w->result < 0) {
        add_line(w, "result", "no search pass found a graph");
        return;
    }
    const tp_search_event *r = &g->events[w->result], *pass = pass_of(g, w->result);
    char set[200], bw[64];
    settings_text(set, sizeof(set), pass ? pass : r);
    bw_text(bw, sizeof(bw), r->bw_intra, r->bw_inter);
    add_line(w, "result", "the %s at %s found %d channel%s at %s",
             solution >= 0 && w->result > solution ? "second pass" : "search pass", set,
             r->n_channels, r->n_channels == 1 ? "" : "s", bw);
}

static void explain_second_passes(tp_graph_why *w, const tp_graph *g, long solution)
{
    if (solution < 0)
        return;
    char speeds[200] = "";
    size_t len = 0;
    for (size_t i = (size_t)solution; i < g->n_events; i++) {
        const tp_search_event *e = &g->events[i];
        if (e->kind != TP_EV_RAISE || len >= sizeof(speeds))
            continue;
        char bw[64];
        bw_text(bw, sizeof(bw), e->bw_intra, e->bw_inter);
        len += (size_t)snprintf(speeds + len, sizeof(speeds) - len, "%s%s", len ? ", " : "", bw);
    }
    if (!speeds[0])
        return;
    bool better = w->result > solution, skipped = false;
    for (size_t i = (size_t)solution; i < g->n_events; i++)
        skipped |= g->events[i].kind == TP_EV_BOUND;
    add_line(w, "second pass", "NCCL tried higher speeds (%s%s)%s", speeds,
             skipped ? " and possibly higher" : "",
             better ? "; one of them gave the result" : ": none gave a better graph");
}

static void explain_stop_and_budget(tp_graph_why *w, const tp_system *sys, const tp_graph *g)
{
    long stop = find_event(g, TP_EV_DONE, false);
    if (stop >= 0) {
        const tp_search_event *e = &g->events[stop];
        if (strstr(e->why, "total"))
            add_line(w, "stop",
                     "first pass stopped: %d x %.1f GB/s reaches the most one GPU can "
                     "move (totalBw %.1f GB/s)",
                     e->n_channels, e->bw_inter, sys->total_bw);
        else
            add_line(w, "stop", "first pass stopped: %d channel%s, the most allowed (maxChannels)",
                     e->n_channels, e->n_channels == 1 ? "" : "s");
    }
    int pass_budgets = 0, global_budget = 0, cut = 0;
    for (size_t i = 0; i < g->n_events; i++) {
        const tp_search_event *e = &g->events[i];
        if (e->kind == TP_EV_BUDGET && strstr(e->why, "global"))
            global_budget = 1;
        else if (e->kind == TP_EV_BUDGET)
            pass_budgets++;
        cut += e->kind == TP_EV_BOUND;
    }
    /* A pass topoplan cut short may have spent its budget in NCCL: the count is then a floor. */
    if (pass_budgets)
        add_line(w, "budget",
                 "%s%d pass%s ran out of its step budget (NCCL then moves on to the "
                 "next settings)",
                 cut ? "at least " : "", pass_budgets, pass_budgets == 1 ? "" : "es");
    if (global_budget)
        add_line(w, "budget", "the global step budget ran out: NCCL stopped relaxing there");
}

static void explain_dup(tp_graph_why *w, const tp_graph *g)
{
    if (w->dup < 0)
        return;
    const tp_search_event *d = &g->events[w->dup];
    const tp_search_event *r = w->result >= 0 ? &g->events[w->result] : NULL;
    add_line(w, "duplicated",
             "NCCL duplicated the %d channels to %d at %.1f GB/s each (ncclTopoDupChannels: "
             "graphs at 25 GB/s or more)",
             r ? r->n_channels : 0, d->n_channels, d->bw_intra);
}

/* Replay the result graph's channels (system indices) on sys; links in gg. */
static tp_status replay_result(tp_gc_graph *gg, const tp_system *sys, const tp_graph *g,
                               const tp_search_event *r, tp_error *err)
{
    int n_gpus = sys->nodes[TP_NODE_GPU].count, n = r->n_channels;
    int per_channel = g->pattern == TP_PATTERN_NVLS ? 1 : n_gpus;
    tp_gc_channel *chs = calloc((size_t)n, sizeof(*chs));
    if (!chs)
        return tp_fail_nomem(err);
    for (int c = 0; c < n; c++) {
        chs[c].n_gpus = per_channel;
        for (int i = 0; i < per_channel; i++) {
            int rank = g->intra[c * n_gpus + i], gi = -1;
            for (int k = 0; k < n_gpus && gi < 0; k++)
                gi = sys->nodes[TP_NODE_GPU].nodes[k].gpu.rank == rank ? k : -1;
            chs[c].gpus[i] = gi;
        }
        chs[c].n_nets = 2;
        for (int k = 0; k < 2; k++)
            chs[c].nets[k] = tp_system__index_of(sys, TP_NODE_NET, g->inter[c * 2 + k]);
    }
    *gg = (tp_gc_graph){.pattern = r->pattern,
                        .bw_intra = r->bw_intra,
                        .bw_inter = r->bw_inter,
                        .type_intra = r->type_intra,
                        .type_inter = r->type_inter,
                        .cross_nic = r->cross_nic,
                        .same_channels = r->same_channels,
                        .n_channels = n};
    tp_graph_check chk = {0};
    tp_status st = tp_graphcheck__replay(&chk, gg, sys, chs, n, err);
    free(chk.findings);
    free(chs);
    return st;
}

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* What one more crossing of link l would take: its reservation per crossing channel. */
static float per_channel_use(const tp_gc_link *l)
{
    int uses = popcount64(l->channels);
    return uses ? l->reserved / (float)uses : 0;
}

/* One end of a link as operators know it, with the search's label ("GPU 3 (0000:5f:00.0,
 * GPU/3)", "mlx5_3 (NET/3)", "NVSwitch"). */
static void end_name(char *buf, size_t size, const tp_xml *xml, const tp_node *n, const char *label)
{
    if (n)
        tp_system__device_name(buf, size, xml, n, label);
    else
        snprintf(buf, size, "%s", label);
}

static void link_name(char *buf, size_t size, const tp_xml *xml, const tp_gc_link *l)
{
    char from[160], to[160];
    end_name(from, sizeof(from), xml, l->from_node, l->from);
    if (l->type == TP_GC_NET_PORT) {
        snprintf(buf, size, "%s port", from);
        return;
    }
    end_name(to, sizeof(to), xml, l->to_node, l->to);
    snprintf(buf, size, "%s -> %s (%s)", from, to, tp_link_type_name(l->type));
}

/* Keep the link a "limit" line names, for pictures (tp_graph_why.limits). */
static void note_limit(tp_graph_why *w, const tp_gc_link *l)
{
    if (w->n_limits == TP_WHY_MAX_LINES)
        return;
    tp_why_limit *m = &w->limits[w->n_limits++];
    snprintf(m->from, sizeof(m->from), "%s", l->from);
    snprintf(m->to, sizeof(m->to), "%s", l->to);
    m->type = l->type;
}

/* One more channel at the result's speed does not fit on l. */
static void channel_limit_line(tp_graph_why *w, const tp_xml *xml, const tp_gc_link *l)
{
    int uses = popcount64(l->channels);
    char name[360];
    link_name(name, sizeof(name), xml, l);
    note_limit(w, l);
    add_line(w, "limit", "%s %.1f GB/s: %d channel%s take%s %.1f; %d would need %.1f", name,
             l->capacity, uses, uses == 1 ? "" : "s", uses == 1 ? "s" : "", l->reserved, uses + 1,
             l->reserved + per_channel_use(l));
}

/* "9 x 42.0: ..." when an NVLS head crosses its GPU <-> NVSwitch link twice. */
static void crossings_text(char *buf, size_t size, const tp_gc_link *l, int pattern, float speed)
{
    buf[0] = '\0';
    bool nvswitch = strncmp(l->from, "NVS/", 4) == 0 || strncmp(l->to, "NVS/", 4) == 0;
    int uses = popcount64(l->channels);
    float crossings = speed > 0 ? l->reserved / speed : 0;
    int n = (int)(crossings + 0.5f);
    if (pattern != TP_PATTERN_NVLS || !nvswitch || n <= uses || fabsf(crossings - n) > 1e-3f)
        return;
    snprintf(buf, size, " (%d x %.1f: the channel this GPU heads crosses its NVSwitch link twice)",
             n, speed);
}

/* At the faster speed `at` (a pass NCCL tried), the result's channels do not fit on l. */
static void speed_limit_line(tp_graph_why *w, const tp_xml *xml, const tp_gc_link *l,
                             const tp_gc_graph *at, int n_alike)
{
    int uses = popcount64(l->channels);
    float speed = l->type == TP_GC_NET_PORT ? at->bw_inter : at->bw_intra;
    char name[360], times[160], alike[48] = "", setting[64];
    bw_text(setting, sizeof(setting), at->bw_intra, at->bw_inter);
    link_name(name, sizeof(name), xml, l);
    note_limit(w, l);
    crossings_text(times, sizeof(times), l, at->pattern, speed);
    if (n_alike)
        snprintf(alike, sizeof(alike), " (and %d more link%s alike)", n_alike,
                 n_alike == 1 ? "" : "s");
    add_line(w, "limit", "%s %.1f GB/s%s: at %s the %d channel%s crossing it would need %.1f%s",
             name, l->capacity, alike, setting, uses, uses == 1 ? "" : "s", l->reserved, times);
}

static bool same_load(const tp_gc_link *a, const tp_gc_link *b)
{
    return a->type == b->type && a->capacity == b->capacity && a->reserved == b->reserved &&
           popcount64(a->channels) == popcount64(b->channels);
}

/*
 * The faster setting NCCL tried and did not keep, nearest the result: the
 * lowest intra speed above the result's or, at the result's intra speed,
 * the lowest inter speed above its inter one. NULL when none.
 */
static const tp_search_event *faster_try(const tp_graph *g, const tp_search_event *r, bool inter)
{
    const tp_search_event *best = NULL;
    for (size_t i = 0; i < g->n_events; i++) {
        const tp_search_event *e = &g->events[i];
        if (e->kind != TP_EV_TRY)
            continue;
        bool above = inter ? e->bw_intra == r->bw_intra && e->bw_inter > r->bw_inter
                           : e->bw_intra > r->bw_intra;
        float key = inter ? e->bw_inter : e->bw_intra;
        if (above && (!best || key < (inter ? best->bw_inter : best->bw_intra)))
            best = e;
    }
    return best;
}

/*
 * Why the result is not faster: its channels replayed at the faster
 * setting NCCL tried; the links that could not carry them, fullest first.
 */
static tp_status explain_speed(tp_graph_why *w, const tp_system *sys, const tp_xml *xml,
                               const tp_graph *g, const tp_search_event *r,
                               const tp_search_event *faster, tp_error *err)
{
    tp_search_event at = *r;
    at.bw_intra = faster->bw_intra;
    at.bw_inter = faster->bw_inter;
    tp_gc_graph gg;
    tp_status st = replay_result(&gg, sys, g, &at, err);
    bool shown[256] = {false};
    int n_shown = 0;
    while (st == TP_OK && n_shown < TP_WHY_MAX_LIMITS) {
        long best = -1;
        for (size_t i = 0; i < gg.n_links && i < ARRAY_LEN(shown); i++) {
            const tp_gc_link *l = &gg.links[i];
            if (!shown[i] && l->over &&
                (best < 0 ||
                 l->reserved / l->capacity > gg.links[best].reserved / gg.links[best].capacity))
                best = (long)i;
        }
        if (best < 0)
            break;
        shown[best] = true;
        int alike = 0; /* every GPU's NVSwitch link, both ways, reads the same: one line */
        for (size_t i = 0; i < gg.n_links && i < ARRAY_LEN(shown); i++)
            if (!shown[i] && gg.links[i].over && same_load(&gg.links[i], &gg.links[best]))
                shown[i] = true, alike++;
        speed_limit_line(w, xml, &gg.links[best], &gg, alike);
        n_shown++;
    }
    if (st == TP_OK && n_shown == 0) {
        char bw[64];
        bw_text(bw, sizeof(bw), at.bw_intra, at.bw_inter);
        add_line(w, "limit",
                 "at %s the same %d channels fit every link: the faster passes failed on "
                 "the search's order of tries, path types or step budget",
                 bw, r->n_channels);
    }
    free(gg.findings);
    free(gg.links);
    return st;
}

/* The links too full for one more channel at the result's speed, tightest first. */
static tp_status explain_channel_count(tp_graph_why *w, const tp_system *sys, const tp_xml *xml,
                                       const tp_graph *g, const tp_search_event *r, tp_error *err)
{
    tp_gc_graph gg;
    tp_status st = replay_result(&gg, sys, g, r, err);
    bool shown[TP_WHY_MAX_LIMITS * 64] = {false};
    int n_shown = 0;
    while (st == TP_OK && n_shown < TP_WHY_MAX_LIMITS) {
        long best = -1;
        float best_room = 0;
        for (size_t i = 0; i < gg.n_links && i < ARRAY_LEN(shown); i++) {
            const tp_gc_link *l = &gg.links[i];
            float per = per_channel_use(l);
            float room = per > 0 ? l->left / per : 1e9f;
            if (!shown[i] && room < 1 - 1e-4f && (best < 0 || room < best_room))
                best = (long)i, best_room = room;
        }
        if (best < 0)
            break;
        shown[best] = true;
        channel_limit_line(w, xml, &gg.links[best]);
        n_shown++;
    }
    if (st == TP_OK && n_shown == 0)
        add_line(w, "limit",
                 "no link of the graph's routes is too full for one more channel: the "
                 "channel count was set by the search's order of tries and its rules above");
    free(gg.findings);
    free(gg.links);
    return st;
}

/*
 * What bound the result: its channel count (the stop rule when the first
 * pass stopped there, else the links one more channel does not fit on)
 * and its speed (the links the same channels overfill at the faster
 * settings NCCL tried).
 */
static tp_status explain_limits(tp_graph_why *w, const tp_system *sys, const tp_xml *xml,
                                const tp_graph *g, tp_error *err)
{
    if (w->result < 0)
        return TP_OK;
    const tp_search_event *r = &g->events[w->result];
    long stop = find_event(g, TP_EV_DONE, false);
    bool stopped = stop >= 0 && r->n_channels >= g->events[stop].n_channels;
    tp_status st = TP_OK;
    if (!stopped)
        st = explain_channel_count(w, sys, xml, g, r, err);
    const tp_search_event *faster[2] = {faster_try(g, r, false), faster_try(g, r, true)};
    for (int k = 0; k < 2 && st == TP_OK; k++)
        if (faster[k])
            st = explain_speed(w, sys, xml, g, r, faster[k], err);
    if (st == TP_OK && stopped && !faster[0] && !faster[1])
        add_line(w, "limit",
                 "no link bound it: the search started at this speed and stopped at the "
                 "rule above");
    return st;
}

static void explain_ours(tp_graph_why *w, const tp_graph *g)
{
    size_t bound = 0, settle = 0;
    for (size_t i = 0; i < g->n_events; i++) {
        bound += g->events[i].kind == TP_EV_BOUND;
        settle += g->events[i].kind == TP_EV_SETTLE;
    }
    if (bound)
        add_line(w, "topoplan",
                 "topoplan (not NCCL) cut %zu pass%s short that could not beat the graph; NCCL "
                 "runs them whole",
                 bound, bound == 1 ? "" : "es");
    if (settle)
        add_line(w, "topoplan",
                 "topoplan (not NCCL) re-ran cut passes %zu time%s to count NCCL's step budget",
                 settle, settle == 1 ? "" : "s");
}

tp_status tp_explain__graph(tp_graph_why *w, const tp_system *sys, const tp_xml *xml,
                            const tp_graph *g, bool show_ours, tp_error *err)
{
    why_reset(w);
    w->start = find_event(g, TP_EV_TRY, false);
    w->result = find_event(g, TP_EV_IMPROVED, true);
    w->dup = find_event(g, TP_EV_DUP, false);
    if (find_event(g, TP_EV_LOADED, false) >= 0) {
        add_line(w, "result", "taken from NCCL_GRAPH_FILE, not searched");
        return TP_OK;
    }
    if (w->start < 0) {
        add_line(w, "result",
                 "NCCL did not search this graph (its pattern is not possible or "
                 "not needed on this system)");
        return TP_OK;
    }
    long solution = find_event(g, TP_EV_SOLUTION, false);
    char set[200];
    settings_text(set, sizeof(set), &g->events[w->start]);
    add_line(w, "start", "the search started at %s (pattern %d)", set, g->events[w->start].pattern);
    explain_relaxations(w, g, solution);
    explain_result(w, g, solution);
    explain_after(w, g, solution);
    explain_stop_and_budget(w, sys, g);
    explain_dup(w, g);
    explain_second_passes(w, g, solution);
    if (find_event(g, TP_EV_FALLBACK, false) >= 0)
        add_line(w, "fallback", "nothing found: NCCL used one channel in GPU order at 0.1 GB/s");
    tp_status st = explain_limits(w, sys, xml, g, err);
    if (show_ours)
        explain_ours(w, g);
    return st;
}

/* Which setting limits the channel count: the user's variable when set, else the default. */
static const char *limit_source(const tp_config *cfg, tp_param_id nch, tp_param_id ctas)
{
    if (tp_config_is_set(cfg, nch))
        return tp_config_name(nch);
    if (tp_config_is_set(cfg, ctas))
        return tp_config_name(ctas);
    return "NCCL's default";
}

/* NCCL 2.22.3 ncclNvlsInit: NVLS channels from NCCL_NVLS_NCHANNELS, within the CTA bounds. */
static void nvls_steps(tp_graph_why *w, const tp_plan *p)
{
    int n = p->channels.n_nvls_channels;
    if (n <= 0)
        return;
    int asked = (int)tp_config_int(p->cfg, TP_P_NVLS_NCHANNELS);
    const char *src =
        tp_config_is_set(p->cfg, TP_P_NVLS_NCHANNELS) ? "NCCL_NVLS_NCHANNELS" : "NCCL's default";
    if (asked <= 0) /* 2.25 on: the architecture's count (plan.c nvls_default_channels) */
        add_line(w, "nvls-channels", "%d NVLS channels: %s %d, the GPU architecture's count", n,
                 src, asked);
    else if (n == asked)
        add_line(w, "nvls-channels", "%d NVLS channels: %s", n, src);
    else if (n < asked)
        add_line(w, "nvls-channels", "%d NVLS channels: %d from %s, capped by %s", n, asked, src,
                 limit_source(p->cfg, TP_P_MAX_CTAS, TP_P_MAX_CTAS));
    else
        add_line(w, "nvls-channels", "%d NVLS channels: %d from %s, raised by %s", n, asked, src,
                 limit_source(p->cfg, TP_P_MIN_CTAS, TP_P_MIN_CTAS));
}

void tp_explain__channels(tp_graph_why *w, const tp_plan *p)
{
    const tp_channel_count *c = &p->channels.count;
    why_reset(w);
    add_line(w, "search", "ring search %d and tree search %d channels (minimum over ranks): %d",
             p->channels.combined[TP_GRAPH_RING].n_channels,
             p->channels.combined[TP_GRAPH_TREE].n_channels, p->channels.search_channels);
    add_line(w, "duplicated", "postset duplicates every search channel once: %d%s", c->duplicated,
             c->duplicated < 2 * p->channels.search_channels ? " (at most 32)" : "");
    if (c->sm90_doubled != c->duplicated)
        add_line(w, "sm90",
                 "sm90 GPUs on several nodes with ring bw above %.0f GB/s and fewer "
                 "than %d channels: doubled again to %d",
                 tp_config__profile(p->cfg)->postset_double_bw,
                 tp_config__profile(p->cfg)->postset_double_max, c->sm90_doubled);
    if (c->after_max < c->sm90_doubled)
        add_line(w, "max", "capped at %d by %s", c->after_max,
                 limit_source(p->cfg, TP_P_MAX_NCHANNELS, TP_P_MAX_CTAS));
    if (c->after_min > c->after_max)
        add_line(w, "min", "raised to %d by %s (channels are copied round-robin)", c->after_min,
                 limit_source(p->cfg, TP_P_MIN_NCHANNELS, TP_P_MIN_CTAS));
    if (c->after_nvls > c->after_min)
        add_line(w, "nvls", "raised to the %d NVLS channels", c->after_nvls);
    nvls_steps(w, p);
}

tp_status tp_explain__plan(tp_graph_why whys[TP_GRAPH_COUNT], const tp_plan *plan, bool show_ours,
                           tp_error *err)
{
    for (int s = 0; s < TP_GRAPH_COUNT; s++)
        why_reset(&whys[s]);
    tp_system *fresh = NULL;
    tp_status st = tp_graphcheck__fresh_system(&fresh, plan, err);
    if (st == TP_OK)
        st = tp_search__init(fresh, err); /* maxBw and totalBw, as the searches read them */
    for (int s = 0; s < TP_GRAPH_COUNT && st == TP_OK; s++)
        if (plan->graphs[s])
            st =
                tp_explain__graph(&whys[s], fresh, plan->topo_xml, plan->graphs[s], show_ours, err);
    tp_system__free(fresh);
    return st;
}
