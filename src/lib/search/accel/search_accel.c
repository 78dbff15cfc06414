/*
 * The accelerators attached to NCCL's search (search_accel.h): their state
 * made and freed together, the hooks dispatched to each, the pass runner
 * that tries the pass memory, shadows and cuts before the core's
 * recursion, and tp_search__compute, which runs the search with them.
 */
#include "search/accel/accel.h"

#include <stdlib.h>

const tp_accel_opts tp_accel__defaults = {.use = TP_ACCEL_ALL, .cut_cap = TP_CUT_STEP_CAP};

static void make_hooks(tp_accel *a);

/* The accelerators of `use` whose own needs are attached too. */
static unsigned usable(unsigned use)
{
    if (!(use & TP_ACCEL_MILLI))
        use &= ~(unsigned)(TP_ACCEL_SHADOW | TP_ACCEL_BOUND | TP_ACCEL_DEAD);
    if (!(use & TP_ACCEL_PASS))
        use &= ~(unsigned)TP_ACCEL_SHADOW;
    return use;
}

tp_status tp_accel__new(tp_search_ctx *s, const tp_accel_opts *opts, tp_accel **out, tp_error *err)
{
    tp_accel *a = calloc(1, sizeof(*a));
    *out = a;
    if (!a)
        return tp_fail_nomem(err);
    a->s = s;
    a->use = usable(opts->use);
    a->pass.verify = opts->verify;
    a->bound.cut_cap = opts->cut_cap;
    a->bound.settle_cap = -1;
    a->bound.pending.left = -1;
    /* Without accelerators no search runs with it (a link table to compare, search_iso.c). */
    if (a->use)
        make_hooks(a);
    tp_accel__table_reset(&a->memo.table);
    /* The link table serves every accelerator (the pass memory hashes it too). */
    tp_status st = tp_accel__milli_init(a, err);
    if (!(a->use & TP_ACCEL_MILLI))
        a->milli.capable = 0;
    if (st == TP_OK && (a->use & TP_ACCEL_SHADOW))
        st = tp_accel__shadow_init(a, err);
    if (st == TP_OK && (a->use & TP_ACCEL_DEAD))
        st = tp_accel__dead_init(a, err);
    if (st == TP_OK && (a->use & TP_ACCEL_BOUND))
        st = tp_accel__bound_init(a, err);
    if (a->use)
        tp_accel__pass_init(a);
    if (st != TP_OK) {
        tp_accel__free(a);
        *out = NULL;
    }
    return st;
}

void tp_accel__free(tp_accel *a)
{
    if (!a)
        return;
    tp_accel__table_free(&a->memo.table);
    tp_accel__pass_free(a);
    tp_accel__milli_free(a);
    tp_accel__shadow_free(a);
    tp_accel__dead_free(a);
    tp_accel__bound_free(a);
    free(a);
}

/* The hooks of tp_accel__ops a pass needs: walk (bit 0), milli mode (1), shadows alive (2). */
static void make_hooks(tp_accel *a)
{
    for (int i = 0; i < 8; i++) {
        tp_search_accel_ops *h = &a->hooks[i];
        *h = tp_accel__ops;
        h->take_first = NULL; /* the core walks each candidate */
        if (!(i & 1)) {
            h->walk = NULL; /* the core's floats, unhashed: nothing to record */
        } else if (!(i & 2)) {
            h->walk = tp_accel__walk_floats;
        } else if (i & 4) {
            h->walk = tp_accel__walk_shadowed;
            h->take_first = tp_accel__take_first_shadowed;
        } else {
            h->walk = tp_accel__walk_milli;
            h->take_first = tp_accel__take_first_milli;
        }
        if (!(i & 2))
            h->gpu_pci_bw = NULL; /* the links' floats are live */
        if (!(i & 4)) {
            h->bw_test = NULL; /* no shadow to test */
            h->order = NULL;
        }
    }
}

void tp_accel__hooks(tp_accel *a)
{
    /* Walks are watched by milli mode, the sub-search memory and the pass memory. */
    int walk = a->milli.on || a->memo.on ||
               ((a->use & TP_ACCEL_PASS) && !tp_search__head_pattern(a->pass.pattern));
    int i = (walk ? 1 : 0) | (a->milli.on ? 2 : 0) | (a->shadow.alive ? 4 : 0);
    if (a->s->accel)
        tp_search__hooks(a->s, &a->hooks[i]);
}

int tp_accel__begin(tp_accel *a, const tp_graph *g)
{
    tp_accel__memo_begin(a, g);
    tp_accel__pass_begin(a, g);
    return (a->use & TP_ACCEL_MILLI) && tp_accel__milli_begin(a, g);
}

/*
 * What only a pass that runs needs (not one the pass memory knows): its
 * dead next channels and the hooks narrowed to it.
 */
static void arm_pass(tp_accel *a, const tp_graph *g)
{
    if (!a->milli.on) {
        /* A float pass may round link values: what was made of them is made again after it (a
         * float pass the pass memory knows changes nothing). */
        a->pass.state_ok = 0;
        a->milli.link_m_ok = 0;
    }
    a->dead.next_dead = a->milli.on && (a->use & TP_ACCEL_DEAD) &&
                        tp_accel__dead_pass(a, a->milli.link_m, a->milli.amounts, g);
    tp_accel__hooks(a);
}

/* Verify mode: run a pass the pass memory knew, and check its steps. */
static tp_status verify_pass(tp_accel *a, tp_graph *g, const tp_ladder_pass *p, int budget,
                             int recorded, int settling)
{
    int time = budget;
    a->pass.verifying = 1; /* this pass itself, not its memory */
    tp_status st = tp_accel__run_pass(a, g, p, &time, settling);
    a->pass.verifying = 0;
    if (st == TP_OK && !tp_search__stopped(a->s, NULL) && time != recorded)
        st = tp_fail(a->s->err, TP_ERR_INTERNAL, NULL, 0, 0,
                     "search: pass memory said %d steps left, the pass left %d", recorded, time);
    return st;
}

/*
 * One search pass, or the steps of an equivalent one that saved nothing
 * (search_pass.c), or a pass cut short when it cannot beat the best graph
 * (search_bound.c). Settling a cut pass runs it whole, without shadows.
 */
tp_status tp_accel__run_pass(tp_accel *a, tp_graph *g, const tp_ladder_pass *p, int *time,
                             int settling)
{
    tp_search_ctx *s = a->s;
    int budget = *time, missed = a->pass.missed;
    a->pass.missed = 0;
    if (p->number == 1 && !missed && !a->pass.verifying && (a->use & TP_ACCEL_PASS) &&
        tp_accel__pass_find(a, g, time, NULL)) {
        if (!a->pass.verify)
            return TP_OK;
        return verify_pass(a, g, p, budget, *time, settling);
    }
    int first_run = p->number == 1 && !settling; /* a first pass, not a settling re-run */
    if (first_run && tp_accel__cut_known(a, g, time))
        return TP_OK;
    arm_pass(a, g);
    tp_accel__bound_begin(a, g, first_run && (a->use & TP_ACCEL_BOUND));
    /* Hopeless from the start: small searches still run whole, large ones are cut. */
    int cap = tp_accel__cut_cap(a, g);
    tp_search__stop_after(s, settling ? a->bound.settle_cap : cap, TP_ACCEL_CUT_WHY);
    unsigned long copies = a->memo.n_copies;
    if (p->number == 1 && (a->use & TP_ACCEL_SHADOW))
        tp_accel__shadow_begin(a, g, p->lower, p->n_lower);
    tp_status st = tp_search__rec(s, g, time);
    /* A pass that saved a graph is not recorded, its shadows are (search_shadow.c). */
    if (st == TP_OK && p->number == 1 && *time >= 0) {
        if (a->memo.n_copies == copies)
            tp_accel__pass_store(a, g, *time);
        tp_accel__shadow_end(a, g, *time);
    }
    tp_accel__shadow_stop(a);
    return st;
}

static tp_status hook_pass_begin(void *state, tp_graph *g, const tp_ladder_pass *p,
                                 int64_t *global_timeout, int *kept)
{
    tp_accel *a = state;
    if (p->number == 2)
        tp_accel__bound_forget(a); /* the global budget is not read again */
    *kept = tp_accel__begin(a, g);
    if (*kept || !a->bound.n_cuts)
        return TP_OK;
    /* A float pass may round link values: cut passes must be settled before. */
    tp_status st = tp_accel__bound_budget(a, g, global_timeout, 1);
    if (st == TP_OK) {
        tp_search__reset_pass(a->s, g);
        *kept = tp_accel__begin(a, g);
    }
    return st;
}

/*
 * A first pass the pass memory knows, found before anything else of the
 * pass is made ready: its mode (kept) and the steps it leaves. A float pass
 * settles the cut passes before it begins (hook_pass_begin): it begins as
 * usual, as in verify mode, where the known passes run too. The passes of
 * its context are told alike when no cut pass waits for the budget (the
 * budget hook has nothing to do after them): the ladder answers them then.
 */
static int hook_known(void *state, const tp_graph *g, int *time, int *kept, tp_known_passes *alike)
{
    tp_accel *a = state;
    tp_bound *b = &a->bound;
    alike->steps = NULL;
    *kept = (a->use & TP_ACCEL_MILLI) && tp_accel__milli_begin(a, g);
    if ((!*kept && b->n_cuts) || a->pass.verify || !(a->use & TP_ACCEL_PASS))
        return 0;
    if (!tp_accel__pass_find(a, g, time, b->n_cuts || b->slack ? NULL : alike)) {
        a->pass.missed = 1; /* the pass runs next: no second look-up (tp_accel__run_pass) */
        return 0;
    }
    alike->kept = *kept;
    b->pending.left = -1; /* not a cut pass (tp_accel__bound_pass_end) */
    return 1;
}

static tp_status hook_pass(void *state, tp_graph *g, const tp_ladder_pass *p, int *time)
{
    tp_accel *a = state;
    tp_status st = tp_accel__run_pass(a, g, p, time, 0);
    tp_accel__bound_pass_end(a, g);
    return st;
}

static tp_status hook_budget(void *state, tp_graph *g, int64_t *global_timeout)
{
    const tp_bound *b = &((tp_accel *)state)->bound;
    /* No cut pass to keep or settle (most relaxations): the budget is exact as it is. */
    if (b->pending.left < 0 && !b->n_cuts && !b->slack)
        return TP_OK;
    return tp_accel__bound_budget(state, g, global_timeout, 0);
}

static void hook_read(void *state, tp_search_read what, int value, int result)
{
    tp_accel *a = state;
    if (what == TP_READ_PREV_CHANNEL)
        tp_accel__memo_read(a, value, result);
    else
        tp_accel__pass_read(a, what, value, result);
}

static tp_status hook_sub(void *state, tp_graph *g, tp_search_sub kind, int net, int *time)
{
    return tp_accel__memo_sub(state, g, kind, net, time);
}

static void hook_channel_done(void *state, tp_graph *g, int saved, int *time)
{
    tp_accel *a = state;
    /* From here on the search reads sameChannels and crossNic (search_pass.c). */
    a->pass.reads |= TP_READ_SAME | TP_READ_CROSS;
    if (!saved)
        return;
    a->memo.n_copies++;
    tp_accel__shadow_saved(a);
    if (g->n_channels != g->max_channels && a->bound.cut_on && !tp_accel__can_beat(a, g))
        tp_search__stop(a->s, time, TP_ACCEL_CUT_WHY); /* nothing left in the pass can be saved */
}

static void hook_reuse(void *state)
{
    tp_accel *a = state;
    a->milli.link_m_ok = 0; /* a float pass may have rounded link values */
    a->pass.state_ok = 0;
    tp_accel__pass_reset(a); /* it held for the previous best graph only */
    tp_accel__shadow_stop(a);
    tp_accel__bound_forget(a);
}

static void hook_free(void *state)
{
    tp_accel__free(state);
}

const tp_search_accel_ops tp_accel__ops = {
    .walk = tp_accel__walk_shadowed,
    .take_first = tp_accel__take_first_shadowed,
    .gpu_pci_bw = tp_accel__gpu_pci_bw,
    .net_bw = tp_accel__net_bw,
    .bw_test = tp_accel__shadow_bw_test,
    .order = tp_accel__shadow_order,
    .read = hook_read,
    .sub = hook_sub,
    .channel_done = hook_channel_done,
    .pass_begin = hook_pass_begin,
    .known = hook_known,
    .pass = hook_pass,
    .budget = hook_budget,
    .futile = tp_accel__hopeless,
    .reuse = hook_reuse,
    .free = hook_free,
};

static tp_status attach(tp_search_ctx *s, const void *opts, void **state, tp_error *err)
{
    tp_accel *a = NULL;
    tp_status st = tp_accel__new(s, opts, &a, err);
    *state = a;
    return st;
}

/* ncclTopoCompute as run says, with the accelerators of opts attached to a new context. */
static tp_status compute(tp_system *sys, tp_graph *graph, const tp_config *cfg, tp_search_run run,
                         const tp_accel_opts *opts, tp_error *err)
{
    const tp_search_accel accel = {.ops = &tp_accel__ops, .attach = attach, .opts = opts};
    run.accel = opts->use ? &accel : NULL;
    return tp_search__compute_with(sys, graph, cfg, &run, err);
}

tp_status tp_search__compute_opts(tp_system *sys, tp_graph *graph, const tp_config *cfg,
                                  tp_log *log, const tp_accel_opts *opts, tp_error *err)
{
    return compute(sys, graph, cfg, (tp_search_run){.log = log}, opts, err);
}

/*
 * Whether a channel search may keep a NET's bandwidth: under rule
 * recnet-local-gpu-first, NCCL passes over a NET no GPU reaches without
 * giving back what it took. The accelerators hold that every pass and every
 * sub-search that saved nothing leaves the bandwidths as it found them.
 */
static int nets_may_leak(const tp_system *sys)
{
    if (!tp_profile_has(sys->profile, TP_RULE_RECNET_LOCAL_GPU_FIRST))
        return 0;
    for (int n = 0; n < sys->nodes[TP_NODE_NET].count; n++) {
        int gpus[TP_MAX_NODES], count = 0, type = TP_PATH_DIS;
        tp_paths__get_local(sys, TP_NODE_NET, n, TP_NODE_GPU, gpus, &count, &type);
        if (type == TP_PATH_DIS)
            return 1;
    }
    return 0;
}

/*
 * The defaults' accelerators, where a search can branch. A lone GPU without a
 * NET has one candidate at every step (itself): each pass is one chain of
 * channels, which the accelerators would only cost more to set up than to run.
 */
static const tp_accel_opts *default_opts(const tp_system *sys)
{
    static const tp_accel_opts bare = {.use = 0};
    if (sys->nodes[TP_NODE_GPU].count == 1 && sys->nodes[TP_NODE_NET].count == 0)
        return &bare;
    if (nets_may_leak(sys))
        return &bare;
    return &tp_accel__defaults;
}

tp_status tp_search__compute(tp_system *sys, tp_graph *graph, const tp_config *cfg, tp_log *log,
                             tp_error *err)
{
    return compute(sys, graph, cfg, (tp_search_run){.log = log}, default_opts(sys), err);
}

tp_status tp_search__compute_kept(tp_search_ctx **keep, tp_system *sys, tp_graph *graph,
                                  const tp_config *cfg, tp_log *log, tp_error *err)
{
    const tp_search_run run = {.keep = keep, .log = log};
    return compute(sys, graph, cfg, run, default_opts(sys), err);
}
