/*
 * Differential check of the search: the core with its accelerators attached
 * (tp_search__compute) must give exactly the graphs of the bare core, step
 * by step (tp_search__compute_plain), on every topology given; so must the
 * core with each accelerator alone, and with all of them cutting hopeless
 * passes at once or checking the pass memory (tp_search__compute_opts); all
 * must record the same decisions, for 1 and 2 nodes and a few NCCL_*
 * variations. The accelerators are exact by construction; this keeps them
 * so on real machines. usage: search_diff [--nccl VERSION] TOPO.xml...
 */
#include "plan/plan.h"
#include "common/nccl_profile.h"
#include "search/accel/accel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The NCCL version the comparisons run under (--nccl; NULL: the default profile). */
static const char *nccl_version;

static const char *const variations[] = {NULL, "NCCL_CROSS_NIC=0", "NCCL_P2P_LEVEL=PIX"};

static bool same_graph(const tp_graph *x, const tp_graph *y, int n_gpus)
{
    return x->n_channels == y->n_channels && x->pattern == y->pattern &&
           x->cross_nic == y->cross_nic && x->bw_intra == y->bw_intra &&
           x->bw_inter == y->bw_inter && x->latency_inter == y->latency_inter &&
           x->type_intra == y->type_intra && x->type_inter == y->type_inter &&
           x->same_channels == y->same_channels && x->n_hops == y->n_hops &&
           memcmp(x->intra, y->intra, (size_t)TP_MAXCHANNELS * (size_t)n_gpus * sizeof(int)) == 0 &&
           memcmp(x->inter, y->inter, sizeof(x->inter)) == 0;
}

static tp_plan *plan_of(const char *path, int n_nodes, const char *setting)
{
    const char *const env[] = {setting, NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    tp_plan *plan = NULL;
    tp_job job = {.n_nodes = n_nodes, .rank = 0};
    if (tp_config_new(&cfg, setting ? env : env + 1, &err) == TP_OK &&
        (!nccl_version || tp_config_set_nccl(cfg, nccl_version, &err) == TP_OK) &&
        tp_plan_file(&plan, path, &job, cfg, &err) != TP_OK) {
        tp_plan_free(plan);
        plan = NULL;
    }
    tp_config_free(cfg);
    return plan;
}

/* The accelerated variants tried against the step-by-step search. */
static const tp_accel_opts variants[] = {
    /* as topoplan runs (tp_search__compute_kept) */
    {.use = TP_ACCEL_ALL, .cut_cap = TP_CUT_STEP_CAP},
    /* hopeless passes cut at once: settling more often */
    {.use = TP_ACCEL_ALL, .cut_cap = 0},
    /* the pass memory checked against real passes */
    {.use = TP_ACCEL_ALL, .cut_cap = -1, .verify = 1},
    /* each accelerator alone, with those it needs */
    {.use = TP_ACCEL_MILLI, .cut_cap = -1},
    {.use = TP_ACCEL_MEMO, .cut_cap = -1},
    {.use = TP_ACCEL_PASS, .cut_cap = -1},
    {.use = TP_ACCEL_MILLI | TP_ACCEL_PASS | TP_ACCEL_SHADOW, .cut_cap = -1},
    {.use = TP_ACCEL_MILLI | TP_ACCEL_BOUND, .cut_cap = 0},
    {.use = TP_ACCEL_MILLI | TP_ACCEL_DEAD, .cut_cap = -1},
};

/*
 * Ring, tree, NVLS on the plans' (identical) systems, plans[v] searched
 * with variants[v], plans[last] step by step; 1 when they all agree.
 */
static int compare_searches(tp_plan **plans)
{
    tp_plan *plain = plans[ARRAY_LEN(variants)];
    static const int patterns[] = {TP_PATTERN_RING, TP_PATTERN_BALANCED_TREE, TP_PATTERN_NVLS};
    const int max_channels = plain->sys->profile->max_channels; /* the version's MAXCHANNELS */
    int n_gpus = plain->sys->nodes[TP_NODE_GPU].count, ring_channels = max_channels / 2, ok = 1;
    tp_search_ctx *keep = NULL;
    for (size_t k = 0; k < ARRAY_LEN(patterns); k++) {
        /* The searches may change the channel bounds: each starts from these. */
        const int min_ch = k == 1 ? ring_channels : 1;
        const int max_ch = k == 1 ? ring_channels : k == 0 ? max_channels / 2 : max_channels;
        tp_graph *b = tp_graph__new(n_gpus);
        if (!b) {
            tp_search__keep_free(keep);
            return 0;
        }
        const tp_graph_settings start = {
            .id = (int)k, .pattern = patterns[k], .min_channels = min_ch, .max_channels = max_ch};
        tp_graph__set_settings(b, &start);
        tp_error err = {0};
        tp_status sb = tp_search__compute_plain(plain->sys, b, plain->cfg, NULL, &err);
        for (size_t v = 0; v < ARRAY_LEN(variants); v++) {
            tp_graph *x = tp_graph__new(n_gpus);
            if (!x) {
                tp_search__graph_release(b);
                free(b);
                tp_search__keep_free(keep);
                return 0;
            }
            tp_graph__set_settings(x, &start);
            /* As topoplan runs: one kept context over the graphs of the system. */
            tp_status sx =
                v == 0 ? tp_search__compute_kept(&keep, plans[v]->sys, x, plans[v]->cfg, NULL, &err)
                       : tp_search__compute_opts(plans[v]->sys, x, plans[v]->cfg, NULL,
                                                 &variants[v], &err);
            int agree = sx == sb && same_graph(x, b, n_gpus) && tp_search__same_decisions(x, b);
            if (!agree)
                printf("  pattern %d: variant %zu differs (graph %s, decisions %s)\n", patterns[k],
                       v, same_graph(x, b, n_gpus) ? "same" : "differs",
                       tp_search__same_decisions(x, b) ? "same" : "differ");
            ok &= agree;
            if (sx != TP_OK && sb == TP_OK)
                printf("  %s\n", err.message);
            tp_search__graph_release(x);
            free(x);
        }
        if (k == 0)
            ring_channels = b->n_channels;
        tp_search__graph_release(b);
        free(b);
    }
    tp_search__keep_free(keep);
    return ok;
}

int main(int argc, char **argv)
{
    int runs = 0, differ = 0, first = 1;
    if (argc > 2 && strcmp(argv[1], "--nccl") == 0) {
        nccl_version = argv[2];
        first = 3;
    }
    for (int i = first; i < argc; i++) {
        for (int n_nodes = 1; n_nodes <= 2; n_nodes++) {
            for (size_t v = 0; v < ARRAY_LEN(variations); v++) {
                tp_plan *plans[ARRAY_LEN(variants) + 1];
                bool all = true;
                for (size_t p = 0; p < ARRAY_LEN(plans); p++)
                    all &= (plans[p] = plan_of(argv[i], n_nodes, variations[v])) != NULL;
                if (all) {
                    runs++;
                    if (!compare_searches(plans)) {
                        differ++;
                        printf("DIFFER %s nodes %d %s\n", argv[i], n_nodes,
                               variations[v] ? variations[v] : "");
                    }
                }
                for (size_t p = 0; p < ARRAY_LEN(plans); p++)
                    tp_plan_free(plans[p]);
            }
        }
    }
    printf("search-diff: %d passed, %d failed\n", runs - differ, differ);
    return differ ? 1 : 0;
}
