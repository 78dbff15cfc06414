/*
 * Differential check of the search: the optimised search (tp_search__compute)
 * must give exactly the graphs of the step-by-step one
 * (tp_search__compute_plain) on every topology given, also when it cuts
 * hopeless passes at once (tp_search__compute_cut), for 1 and 2 nodes and a
 * few NCCL_* variations. The shortcuts are exact by construction; this keeps
 * them so on real machines. usage: search_diff TOPO.xml...
 */
#include "plan.h"
#include "search_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        tp_plan_file(&plan, path, &job, cfg, &err) != TP_OK) {
        tp_plan_free(plan);
        plan = NULL;
    }
    tp_config_free(cfg);
    return plan;
}

/*
 * Ring, tree, NVLS on the three (identical) plans' systems: optimised,
 * optimised cutting hopeless passes at once (settling them more often),
 * step by step; 1 when they agree.
 */
static int compare_searches(tp_plan *fast, tp_plan *eager, tp_plan *plain)
{
    static const int patterns[] = {TP_PATTERN_RING, TP_PATTERN_BALANCED_TREE, TP_PATTERN_NVLS};
    int n_gpus = fast->sys->nodes[TP_NODE_GPU].count, ring_channels = TP_MAXCHANNELS / 2, ok = 1;
    for (size_t k = 0; k < ARRAY_LEN(patterns); k++) {
        tp_graph a = {.id = (int)k, .pattern = patterns[k]};
        a.min_channels = k == 1 ? ring_channels : 1;
        a.max_channels = k == 1 ? ring_channels : k == 0 ? TP_MAXCHANNELS / 2 : TP_MAXCHANNELS;
        tp_graph b = a, c = a;
        tp_error err = {0};
        tp_status sa = tp_search__compute(fast->sys, &a, fast->cfg, NULL, &err);
        tp_status sb = tp_search__compute_plain(plain->sys, &b, plain->cfg, NULL, &err);
        tp_status sc = tp_search__compute_cut(eager->sys, &c, eager->cfg, NULL, 0, &err);
        if (k == 0)
            ring_channels = a.n_channels;
        ok &= sa == sb && same_graph(&a, &b, n_gpus) && sc == sb && same_graph(&c, &b, n_gpus);
        tp_search__graph_release(&a);
        tp_search__graph_release(&b);
        tp_search__graph_release(&c);
    }
    return ok;
}

int main(int argc, char **argv)
{
    int runs = 0, differ = 0;
    for (int i = 1; i < argc; i++) {
        for (int n_nodes = 1; n_nodes <= 2; n_nodes++) {
            for (size_t v = 0; v < ARRAY_LEN(variations); v++) {
                tp_plan *fast = plan_of(argv[i], n_nodes, variations[v]);
                tp_plan *eager = plan_of(argv[i], n_nodes, variations[v]);
                tp_plan *plain = plan_of(argv[i], n_nodes, variations[v]);
                if (fast && eager && plain) {
                    runs++;
                    if (!compare_searches(fast, eager, plain)) {
                        differ++;
                        printf("DIFFER %s nodes %d %s\n", argv[i], n_nodes,
                               variations[v] ? variations[v] : "");
                    }
                }
                tp_plan_free(fast);
                tp_plan_free(eager);
                tp_plan_free(plain);
            }
        }
    }
    printf("search-diff: %d passed, %d failed\n", runs - differ, differ);
    return differ ? 1 : 0;
}
