/*
 * Who limits the job (job_limits.h): each kind's own graphs against the
 * combination NCCL 2.22.3 makes in init.cc (minimum channels and
 * bandwidths, maximum path types over ranks), the links each limiting
 * graph's explanation names, and each kind's cost measured by re-planning.
 */
#include "report/job_limits.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

/* The graphs whose combination sets the job's channels and speeds (CollNet is not planned). */
static bool slot_shown(int slot)
{
    return slot == TP_GRAPH_RING || slot == TP_GRAPH_TREE || slot == TP_GRAPH_NVLS;
}

static void info_of(tp_graph_info *gi, const tp_graph *g)
{
    *gi = (tp_graph_info){.pattern = g->pattern,
                          .n_channels = g->n_channels,
                          .same_channels = g->same_channels,
                          .bw_intra = g->bw_intra,
                          .bw_inter = g->bw_inter,
                          .type_intra = g->type_intra,
                          .type_inter = g->type_inter,
                          .cross_nic = g->cross_nic};
}

/* The all-gather's rule on two ranks' values (init.cc). */
static void combine(tp_graph_info *acc, const tp_graph_info *gi)
{
    acc->n_channels = gi->n_channels < acc->n_channels ? gi->n_channels : acc->n_channels;
    acc->bw_intra = gi->bw_intra < acc->bw_intra ? gi->bw_intra : acc->bw_intra;
    acc->bw_inter = gi->bw_inter < acc->bw_inter ? gi->bw_inter : acc->bw_inter;
    acc->type_intra = gi->type_intra > acc->type_intra ? gi->type_intra : acc->type_intra;
    acc->type_inter = gi->type_inter > acc->type_inter ? gi->type_inter : acc->type_inter;
}

/* A kind's own value: its domains combined; *worst is the domain that sets the channels. */
static bool kind_own(tp_graph_info *own, int *worst, const tp_host_kind *k, int slot)
{
    bool any = false;
    for (int d = 0; d < k->n_domains; d++) {
        const tp_graph *g = k->domains[d].graphs[slot];
        if (!g)
            return false;
        tp_graph_info gi;
        info_of(&gi, g);
        if (!any || gi.n_channels < own->n_channels)
            *worst = d;
        if (!any)
            *own = gi;
        else
            combine(own, &gi);
        any = true;
    }
    return any;
}

/* The TP_LIMIT_* bits of `own`: equal to the combined value while some kind does better. */
static unsigned limit_bits(const tp_graph_info *own, const tp_graph_info *comb,
                           const tp_graph_info *best)
{
    unsigned bits = 0;
    if (own->n_channels == comb->n_channels && best->n_channels > comb->n_channels)
        bits |= TP_LIMIT_CHANNELS;
    if (own->bw_intra == comb->bw_intra && best->bw_intra > comb->bw_intra)
        bits |= TP_LIMIT_BW_INTRA;
    if (own->bw_inter == comb->bw_inter && best->bw_inter > comb->bw_inter)
        bits |= TP_LIMIT_BW_INTER;
    if (own->type_intra == comb->type_intra && best->type_intra < comb->type_intra)
        bits |= TP_LIMIT_TYPE_INTRA;
    if (own->type_inter == comb->type_inter && best->type_inter < comb->type_inter)
        bits |= TP_LIMIT_TYPE_INTER;
    return bits;
}

/* Domain d of kind k as it was before its searches, with maxBw and totalBw. */
static tp_status fresh_system(tp_system **out, const tp_plan *plan, const tp_host_kind *k,
                              const tp_domain *d, tp_error *err)
{
    int rank = d->sys->nodes[TP_NODE_GPU].nodes[0].gpu.rank;
    tp_status st = tp_graphcheck__rank_system(out, plan, k, rank, err);
    if (st == TP_OK)
        st = tp_search__init(*out, err);
    return st;
}

/*
 * Kind k alone, as a job of identical hosts of its own (for comparing kinds' systems). Two
 * hosts stand for the job's many: the system layer compared is each host's own, before
 * the job's size trims it, and a job of every host's kind would cost the job's size per kind.
 */
static tp_status plan_kind_alone(tp_plan **out, const tp_plan *plan, int k, tp_error *err)
{
    int n_nodes = plan->job.n_nodes < 2 ? plan->job.n_nodes : 2;
    tp_job job = {.version = TP_JOB_VERSION, .n_nodes = n_nodes, .rank = 0};
    const tp_host_kind *kind = &plan->kinds[k];
    return tp_plan_buffer(out, kind->text, kind->text_len, kind->source, &job, plan->cfg, err);
}

/*
 * Kind k's hardware deviations from kind `like` (system layer of the
 * comparison, warnings and errors): what makes its own graph worse.
 */
static tp_status deviations(tp_kind_graph *kg, const tp_plan *plan, int k, int like,
                            tp_plan **alone, tp_error *err)
{
    tp_plan *a = alone[like], *b = NULL; /* the kinds compared with: planned once */
    tp_comparison *cmp = NULL;
    tp_error ignored = {0};
    tp_status st = a ? TP_OK : plan_kind_alone(&a, plan, like, &ignored);
    alone[like] = a;
    if (st == TP_OK)
        st = plan_kind_alone(&b, plan, k, &ignored);
    if (st == TP_OK)
        st = tp_compare_plans(&cmp, a, b, &ignored);
    for (size_t i = 0; st == TP_OK && i < tp_comparison_count(cmp); i++) {
        const tp_difference *d = tp_comparison_get(cmp, i);
        if (d->layer != TP_LAYER_SYSTEM || d->severity == TP_SEVERITY_INFO ||
            kg->n_causes >= TP_WHY_MAX_LIMITS)
            continue;
        snprintf(kg->causes[kg->n_causes++], sizeof(kg->causes[0]), "%s: %s", d->title, d->text);
        kg->deviations[kg->n_deviations++] = *d;
    }
    tp_comparison_free(cmp);
    tp_plan_free(b);
    if (st == TP_ERR_NOMEM)
        return tp_fail_nomem(err);
    return TP_OK; /* a kind NCCL cannot plan alone has no comparison to give */
}

/* The "limit" lines of the explanation of kind k's graph (its worst domain's). */
static tp_status limit_lines(tp_kind_graph *kg, const tp_plan *plan, const tp_host_kind *k, int d,
                             int slot, tp_error *err)
{
    tp_system *sys = NULL;
    tp_graph_why *why = calloc(1, sizeof(*why));
    tp_status st = why ? fresh_system(&sys, plan, k, &k->domains[d], err) : tp_fail_nomem(err);
    if (st == TP_OK)
        st = tp_explain__graph(why, sys, k->topo_xml, k->domains[d].graphs[slot], false, err);
    for (int i = 0; st == TP_OK && i < why->n_lines && kg->n_causes < TP_WHY_MAX_LIMITS; i++) {
        const char *text = why->lines[i].text;
        /* "no link bound it ..." and "at X GB/s the same channels fit ..." name no link */
        bool names_link = strncmp(text, "no link", 7) != 0 && strncmp(text, "at ", 3) != 0;
        if (strcmp(why->lines[i].step, "limit") == 0)
            snprintf(kg->causes[kg->n_causes++], sizeof(kg->causes[0]), "%s%.*s",
                     names_link ? "full link: " : "", (int)sizeof(kg->causes[0]) - 12,
                     text); /* cut as before */
    }
    tp_system__free(sys);
    free(why);
    return st;
}

/* The kind other than k whose own graph has the most channels, then the highest bw. */
static int best_kind(const tp_graph_limits *gl, int n, int k)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        const tp_graph_info *a = &gl->kinds[i].own;
        const tp_graph_info *b = best >= 0 ? &gl->kinds[best].own : NULL;
        if (i != k && (!b || a->n_channels > b->n_channels ||
                       (a->n_channels == b->n_channels && a->bw_intra > b->bw_intra)))
            best = i;
    }
    return best;
}

static tp_status graph_limits(tp_graph_limits *gl, const tp_plan *plan, int slot, tp_plan **alone,
                              tp_error *err)
{
    int n = plan->n_kinds;
    int *worst = calloc((size_t)n, sizeof(int));
    gl->kinds = calloc((size_t)n, sizeof(*gl->kinds));
    if (!worst || !gl->kinds) {
        free(worst);
        return tp_fail_nomem(err);
    }
    gl->combined = plan->channels.combined[slot];
    gl->shown = slot_shown(slot);
    tp_graph_info best = gl->combined;
    for (int i = 0; i < n && gl->shown; i++) {
        tp_graph_info *own = &gl->kinds[i].own;
        gl->shown = kind_own(own, &worst[i], &plan->kinds[i], slot);
        best.n_channels = own->n_channels > best.n_channels ? own->n_channels : best.n_channels;
        best.bw_intra = own->bw_intra > best.bw_intra ? own->bw_intra : best.bw_intra;
        best.bw_inter = own->bw_inter > best.bw_inter ? own->bw_inter : best.bw_inter;
        best.type_intra = own->type_intra < best.type_intra ? own->type_intra : best.type_intra;
        best.type_inter = own->type_inter < best.type_inter ? own->type_inter : best.type_inter;
    }
    tp_status st = TP_OK;
    for (int i = 0; i < n && gl->shown && st == TP_OK; i++) {
        tp_kind_graph *kg = &gl->kinds[i];
        kg->limits = limit_bits(&kg->own, &gl->combined, &best);
        if (!kg->limits)
            continue;
        st = deviations(kg, plan, i, best_kind(gl, n, i), alone, err);
        /* Same hardware as the best kind: the links its own search found full. */
        if (st == TP_OK && kg->n_causes == 0)
            st = limit_lines(kg, plan, &plan->kinds[i], worst[i], slot, err);
    }
    free(worst);
    return st;
}

/* The kind other than k with the most ring channels of its own (ties: the first). */
static int best_other_kind(const tp_job_limits *lim, int k)
{
    int best = -1;
    for (int i = 0; i < lim->n_kinds; i++) {
        int ch = lim->graphs[TP_GRAPH_RING].kinds[i].own.n_channels;
        if (i != k && (best < 0 || ch > lim->graphs[TP_GRAPH_RING].kinds[best].own.n_channels))
            best = i;
    }
    return best;
}

static bool same_graph(const tp_graph *a, const tp_graph *b)
{
    if (!a || !b)
        return a == b;
    tp_graph_info x, y;
    info_of(&x, a);
    info_of(&y, b);
    return x.pattern == y.pattern && x.n_channels == y.n_channels &&
           x.same_channels == y.same_channels && x.bw_intra == y.bw_intra &&
           x.bw_inter == y.bw_inter && x.type_intra == y.type_intra &&
           x.type_inter == y.type_inter && x.cross_nic == y.cross_nic &&
           a->latency_inter == b->latency_inter;
}

/*
 * Whether two kinds give the job's channel counts the same inputs: every domain's graphs as
 * the all-gather combines them, the GPU domains (NCCL nodes per host), CPU, compute
 * capabilities and NVLS. Then the job re-planned with either kind's hosts planned like a
 * third one has the same counts (the combination is a minimum over the kinds present).
 */
static bool same_counts_inputs(const tp_host_kind *a, const tp_host_kind *b)
{
    if (a->n_gpus != b->n_gpus || a->n_domains != b->n_domains || a->cpu_arch != b->cpu_arch ||
        a->cpu_vendor != b->cpu_vendor || a->cpu_model != b->cpu_model ||
        a->min_comp_cap != b->min_comp_cap || a->max_comp_cap != b->max_comp_cap || !a->domain_of ||
        !b->domain_of || memcmp(a->domain_of, b->domain_of, (size_t)a->n_gpus * sizeof(int)) != 0)
        return false;
    for (int d = 0; d < a->n_domains; d++) {
        const tp_domain *x = &a->domains[d], *y = &b->domains[d];
        if (x->nvls_support != y->nvls_support || x->nvls_channels != y->nvls_channels ||
            x->sys->nodes[TP_NODE_GPU].count != y->sys->nodes[TP_NODE_GPU].count)
            return false;
        for (int s = 0; s < TP_GRAPH_COUNT; s++)
            if (!same_graph(x->graphs[s], y->graphs[s]))
                return false;
    }
    return true;
}

/* A kind's cost measured once, for the kinds that would measure the same. */
typedef struct measured_cost {
    int kind, like;
    bool home; /* the kind holds host 0 (rank 0 of the re-planned job) */
    tp_kind_cost cost;
} measured_cost;

/* Kind k's cost: the job re-planned with k's hosts planned like another kind. */
static tp_status kind_cost(tp_kind_cost *c, const tp_plan *plan, const tp_job_limits *lim, int k,
                           measured_cost *memo, int *n_memo, tp_error *err)
{
    int like = best_other_kind(lim, k), n = plan->job.n_nodes;
    bool home = plan->host_kind[0] == k;
    for (int i = 0; like >= 0 && i < *n_memo; i++) {
        const measured_cost *m = &memo[i];
        if (m->like == like && m->home == home &&
            same_counts_inputs(&plan->kinds[m->kind], &plan->kinds[k])) {
            *c = m->cost;
            return TP_OK;
        }
    }
    c->like = -1;
    c->channels_now = plan->channels.n_channels;
    c->ring_bw_now = plan->channels.combined[TP_GRAPH_RING].bw_intra;
    c->ring_bw_inter_now = plan->channels.combined[TP_GRAPH_RING].bw_inter;
    if (like < 0)
        return TP_OK;
    int *host_kind = malloc((size_t)n * sizeof(int));
    if (!host_kind)
        return tp_fail_nomem(err);
    for (int h = 0; h < n; h++)
        host_kind[h] = plan->host_kind[h] == k ? like : plan->host_kind[h];
    tp_plan *other = NULL;
    tp_error ignored = {0};
    tp_status st = tp_plan__replan_counts(&other, plan, host_kind, &ignored);
    free(host_kind);
    if (st == TP_OK) {
        c->like = like;
        c->channels_like = other->channels.n_channels;
        c->ring_bw_like = other->channels.combined[TP_GRAPH_RING].bw_intra;
        c->ring_bw_inter_like = other->channels.combined[TP_GRAPH_RING].bw_inter;
        tp_plan_cost(&c->calls, other, plan, &ignored); /* none on failure: channels only */
    } else if (st == TP_ERR_NOMEM) {
        st = tp_fail_nomem(err);
    } else {
        st = TP_OK; /* NCCL would fail that way: no figure to give */
    }
    tp_plan_free(other);
    if (st == TP_OK)
        memo[(*n_memo)++] = (measured_cost){.kind = k, .like = like, .home = home, .cost = *c};
    return st;
}

tp_status tp_limits__compute(tp_job_limits *out, const tp_plan *plan, tp_error *err)
{
    memset(out, 0, sizeof(*out));
    out->n_kinds = plan->n_kinds;
    tp_plan **alone = calloc((size_t)plan->n_kinds, sizeof(*alone)); /* kinds compared with */
    tp_status st = alone ? TP_OK : tp_fail_nomem(err);
    for (int s = 0; s < TP_GRAPH_COUNT && st == TP_OK; s++)
        st = graph_limits(&out->graphs[s], plan, s, alone, err);
    for (int k = 0; alone && k < plan->n_kinds; k++)
        tp_plan_free(alone[k]);
    free(alone);
    if (st == TP_OK && !(out->costs = calloc((size_t)plan->n_kinds, sizeof(*out->costs))))
        st = tp_fail_nomem(err);
    /* Kinds that give the counts the same inputs share one re-plan: a job of many node files
     * of a few models costs a few re-plans, not one per file. */
    measured_cost *memo = st == TP_OK ? calloc((size_t)plan->n_kinds, sizeof(*memo)) : NULL;
    int n_memo = 0;
    if (st == TP_OK && !memo)
        st = tp_fail_nomem(err);
    for (int k = 0; k < plan->n_kinds && st == TP_OK; k++)
        st = kind_cost(&out->costs[k], plan, out, k, memo, &n_memo, err);
    free(memo);
    return st;
}

void tp_limits__free(tp_job_limits *lim)
{
    for (int s = 0; s < TP_GRAPH_COUNT; s++)
        free(lim->graphs[s].kinds);
    free(lim->costs);
    memset(lim, 0, sizeof(*lim));
}

void tp_limits__hosts_text(char *buf, size_t size, const tp_plan *plan, int kind)
{
    tp_buf b = {.limit = size > 1 ? size - 1 : 0};
    int count = 0;
    for (int h = 0; h < plan->job.n_nodes; h++) {
        if (plan->host_kind[h] != kind || (h > 0 && plan->host_kind[h - 1] == kind))
            continue;
        int end = h;
        while (end + 1 < plan->job.n_nodes && plan->host_kind[end + 1] == kind)
            end++;
        tp_buf_printf(&b, count ? ", %d" : "%d", h);
        if (end > h)
            tp_buf_printf(&b, "%s%d", end == h + 1 ? ", " : "-", end);
        count += end - h + 1;
    }
    snprintf(buf, size, "node%s %s", count == 1 ? "" : "s", tp_buf_str(&b));
    tp_buf_free(&b);
}

void tp_limits__what_text(char *buf, size_t size, unsigned limits)
{
    static const char *const names[] = {"channels", "bw intra", "bw inter", "path type intra",
                                        "path type inter"};
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (limits & (1u << i))
            used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
                                     used ? ", " : "", names[i]);
}
