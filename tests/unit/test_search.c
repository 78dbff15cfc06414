/*
 * Unit tests of the search stage, from the figures of the seed document
 * 002 (chapter 19, 4 x V100-SXM2 fixtures) and NCCL 2.22.3's rules.
 * The graphs are computed directly on the planned system, like init.cc does.
 */
#include "helpers.h"

#include "search/search.h"
#include "search/accel/accel.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Plan a fixture (system + paths) with an environment. */
/* The graphs' channel limits init.cc sets under NCCL 2.22.3 (MAXCHANNELS 32), these tests' profile.
 */
#define MAX_2_22_3 32
#define RING_MAX_2_22_3 (MAX_2_22_3 / 2)

static tp_plan *plan_fixture(const char *name, const char *const *env)
{
    char *xml = helpers_fixture(name);
    tp_plan *plan = helpers_plan(xml, env, 1, 0);
    free(xml);
    return plan;
}

static tp_graph *new_graph(int id, int pattern, int min_ch, int max_ch)
{
    tp_graph *g = tp_graph__new(TP_MAX_NODES); /* rows for any system of the tests */
    assert_non_null(g);
    g->id = id;
    g->pattern = pattern;
    g->min_channels = min_ch;
    g->max_channels = max_ch;
    return g;
}

static void free_graph(tp_graph *g)
{
    tp_search__graph_release(g);
    free(g);
}

/* Compute one graph on the plan's system with the plan's configuration. */
static tp_status compute(tp_plan *plan, tp_graph *g, tp_error *err)
{
    return tp_search__compute(plan->sys, g, plan->cfg, &plan->log, err);
}

static void assert_order(const tp_graph *g, int n_gpus, int c, const int *ranks)
{
    for (int i = 0; i < n_gpus; i++)
        assert_int_equal(g->intra[c * n_gpus + i], ranks[i]);
}

/* A graph file in /tmp; returns its path in buf. */
static void write_graph_file(char *buf, size_t size, const char *text)
{
    snprintf(buf, size, "/tmp/tp_test_search_XXXXXX");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_search_init_nv2_max_total_bw(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("v100_nv2.xml", NULL);
    /* Seed 000: all pairs NV2 at 20 GB/s per link: 40 per pair, 3 pairs. */
    assert_true(plan->sys->max_bw == 40.0f);
    assert_true(plan->sys->total_bw == 120.0f);
    tp_plan_free(plan);
}

/* Seed 002 H1: 6 ring channels at 20 GB/s over NVLink, in this order. */
static void test_search_native_nv2_six_rings(void **state)
{
    (void)state;
    static const int rings[6][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1},
                                    {0, 2, 1, 3}, {0, 3, 1, 2}, {0, 3, 2, 1}};
    tp_plan *plan = plan_fixture("v100_nv2.xml", NULL);
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    tp_error err = {0};
    assert_int_equal(compute(plan, g, &err), TP_OK);
    assert_int_equal(g->n_channels, 6);
    assert_true(g->bw_intra == 20.0f && g->bw_inter == 20.0f);
    assert_int_equal(g->type_intra, TP_PATH_NVL);
    assert_int_equal(g->type_inter, TP_PATH_PIX);
    assert_int_equal(g->same_channels, 0);
    for (int c = 0; c < 6; c++)
        assert_order(g, 4, c, rings[c]);
    /* Every reservation was given back. */
    const tp_node *gpu0 = &plan->sys->nodes[TP_NODE_GPU].nodes[0];
    for (int l = 0; l < gpu0->n_links; l++)
        if (gpu0->links[l].type == TP_LINK_NVL)
            assert_true(gpu0->links[l].bw == 40.0f);
    free_graph(g);
    tp_plan_free(plan);
}

/* Table: seed fixtures, ring graph (NCCL 2.22.3 expected logs). */
static const struct {
    const char *fixture;
    int n_channels;
    float bw;
    int type_intra;
    int same_channels;
} ring_table[] = {
    {"v100_nv2.xml", 6, 20.0f, TP_PATH_NVL, 0},
    {"v100_nv1.xml", 6, 10.0f, TP_PATH_NVL, 0},
    {"v100_sparse_ring.xml", 4, 20.0f, TP_PATH_NVL, 0},
    {"v100_weak.xml", 1, 0.1f, TP_PATH_SYS, 1},
};

static void test_search_ring_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(ring_table) / sizeof(ring_table[0]); i++) {
        tp_plan *plan = plan_fixture(ring_table[i].fixture, NULL);
        tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
        tp_error err = {0};
        assert_int_equal(compute(plan, g, &err), TP_OK);
        assert_int_equal(g->n_channels, ring_table[i].n_channels);
        assert_true(g->bw_intra == ring_table[i].bw);
        assert_int_equal(g->type_intra, ring_table[i].type_intra);
        assert_int_equal(g->same_channels, ring_table[i].same_channels);
        free_graph(g);
        tp_plan_free(plan);
    }
}

/* Seed 002 experiment 5: weak topology falls back to simple order. */
static void test_search_weak_fallback(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("v100_weak.xml", NULL);
    tp_graph *g = new_graph(1, TP_PATTERN_BALANCED_TREE, 1, 1);
    tp_error err = {0};
    assert_int_equal(compute(plan, g, &err), TP_OK);
    assert_int_equal(g->n_channels, 1);
    assert_true(g->bw_intra == 0.1f && g->bw_inter == 0.1f);
    assert_int_equal(g->type_intra, TP_PATH_SYS);
    assert_int_equal(g->type_inter, TP_PATH_SYS);
    static const int order[4] = {0, 1, 2, 3};
    assert_order(g, 4, 0, order);
    assert_true(helpers_log_has(plan, "Could not find a path for pattern 1, falling back to "
                                      "simple order"));
    assert_true(g->n_events > 0);
    assert_int_equal(g->events[g->n_events - 1].kind, TP_EV_FALLBACK);
    free_graph(g);
    tp_plan_free(plan);
}

static const char graph_0213[] =
    "<graphs version=\"1\">\n"
    "  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"1\" speedintra=\"20\" "
    "speedinter=\"20\" latencyinter=\"0\" typeintra=\"NVL\" typeinter=\"PIX\" "
    "samechannels=\"%d\">\n"
    "    <channel>\n      <gpu dev=\"0\"/>\n      <gpu dev=\"0x2\"/>\n"
    "      <gpu dev=\"0x1\"/>\n      <gpu dev=\"%s\"/>\n    </channel>\n"
    "  </graph>\n</graphs>\n";

static tp_plan *plan_with_graph_file(char *path, size_t size, int same, const char *last_dev)
{
    char text[1024];
    snprintf(text, sizeof(text), graph_0213, same, last_dev);
    write_graph_file(path, size, text);
    char env_var[600];
    snprintf(env_var, sizeof(env_var), "NCCL_GRAPH_FILE=%s", path);
    const char *env[] = {env_var, NULL};
    /* The planner may itself fail on a bad file: only its system is needed here. */
    char *xml = helpers_fixture("v100_nv2.xml");
    tp_plan *plan = NULL;
    tp_error err = {0};
    (void)helpers_try_plan(&plan, xml, env, 1, 0, &err);
    free(xml);
    assert_non_null(plan);
    assert_non_null(plan->sys);
    return plan;
}

/* Seed 002 experiment 2: a one-channel graph file is replayed as is. */
static void test_search_custom_replay_0213(void **state)
{
    (void)state;
    char path[64];
    tp_plan *plan = plan_with_graph_file(path, sizeof(path), 1, "0x3");
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    tp_error err = {0};
    assert_int_equal(compute(plan, g, &err), TP_OK);
    assert_int_equal(g->n_channels, 1);
    static const int order[4] = {0, 2, 1, 3};
    assert_order(g, 4, 0, order);
    assert_true(g->bw_intra == 20.0f);
    assert_int_equal(g->same_channels, 1);
    assert_true(helpers_log_has(plan, "Loading graphs"));
    assert_int_equal(g->events[g->n_events - 1].kind, TP_EV_LOADED);
    free_graph(g);
    tp_plan_free(plan);
    unlink(path);
}

/* Seed 002 experiment 3: the tree is not in the file, so it is searched (1 channel, bw 40). */
static void test_search_partial_replay(void **state)
{
    (void)state;
    char path[64];
    tp_plan *plan = plan_with_graph_file(path, sizeof(path), 0, "0x3");
    tp_graph *ring = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    tp_error err = {0};
    assert_int_equal(compute(plan, ring, &err), TP_OK);
    assert_int_equal(ring->same_channels, 0);
    tp_graph *tree = new_graph(1, TP_PATTERN_BALANCED_TREE, 1, ring->n_channels);
    assert_int_equal(compute(plan, tree, &err), TP_OK);
    assert_int_equal(tree->n_channels, 1);
    assert_true(tree->bw_intra == 40.0f && tree->bw_inter == 40.0f);
    assert_int_equal(tree->same_channels, 1);
    static const int order[4] = {0, 1, 2, 3};
    assert_order(tree, 4, 0, order);

    /* The dump writes both, as NCCL_GRAPH_DUMP_FILE does. */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tp_graph *graphs[2] = {ring, tree};
    assert_int_equal(tp_search__dump_graphs(out, plan->sys, graphs, 2, &err), TP_OK);
    fclose(out);
    assert_non_null(strstr(text, "  <graph id=\"1\" pattern=\"1\" crossnic=\"0\" nchannels=\"1\" "
                                 "speedintra=\"40\" speedinter=\"40\" latencyinter=\"0\" "
                                 "typeintra=\"NVL\" typeinter=\"PIX\" samechannels=\"1\">\n"
                                 "    <channel>\n      <gpu dev=\"0\"/>\n      <gpu "
                                 "dev=\"0x1\"/>\n"));
    assert_int_equal(strncmp(text, "<graphs version=\"1\">\n  <graph id=\"0\"", 35), 0);
    free(text);
    free_graph(ring);
    free_graph(tree);
    tp_plan_free(plan);
    unlink(path);
}

/* Seed 002 experiment 4: a device the system lacks fails the import, as in NCCL. */
static void test_search_bad_dev_fails(void **state)
{
    (void)state;
    char path[64];
    tp_plan *plan = plan_with_graph_file(path, sizeof(path), 1, "0xff");
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    tp_error err = {0};
    assert_int_equal(compute(plan, g, &err), TP_ERR_GRAPH);
    assert_true(helpers_log_has(plan, "XML Import Channel : dev 255 not found."));
    assert_true(helpers_log_has(plan, "graph/search.cc:816 -> 2"));
    assert_true(helpers_log_has(plan, "graph/search.cc:823 -> 2"));
    assert_true(helpers_log_has(plan, "graph/search.cc:944 -> 2"));
    assert_int_equal(err.line, 7); /* the <gpu dev="0xff"/> element */
    free_graph(g);
    tp_plan_free(plan);
    unlink(path);
}

/* 2.30.7 (log-trace-function): the same refusal, its back-trace at 2.30.7's lines and naming
 * each line's function. */
static void test_search_bad_dev_fails_2_30_7(void **state)
{
    (void)state;
    char path[64];
    tp_plan *plan = plan_with_graph_file(path, sizeof(path), 1, "0xff");
    tp_error err = {0};
    assert_int_equal(tp_config_set_nccl(plan->cfg, "2.30.7", &err), TP_OK);
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    assert_int_equal(compute(plan, g, &err), TP_ERR_GRAPH);
    assert_true(helpers_log_has(plan, "graph/search.cc:953 (ncclTopoGetGraphFromXmlSub) -> 2"));
    assert_true(helpers_log_has(plan, "graph/search.cc:961 (ncclTopoGetGraphFromXml) -> 2"));
    assert_true(helpers_log_has(plan, "graph/search.cc:1118 (ncclTopoCompute) -> 2"));
    free_graph(g);
    tp_plan_free(plan);
    unlink(path);
}

/* Rule graph-file-rank (2.30.3): a <gpu rank="%d"> is taken as that rank whatever its dev; a rank
 * the system lacks is topoplan's refusal (no NCCL back-trace). 2.22.3 looks the dev up. */
static void test_search_graph_file_rank(void **state)
{
    (void)state;
    static const struct {
        const char *nccl, *rank;
        tp_status want;
    } runs[] = {
        {"2.30.7", "3", TP_OK}, {"2.22.3", "3", TP_ERR_GRAPH}, {"2.30.7", "9", TP_ERR_GRAPH}};
    for (size_t i = 0; i < ARRAY_LEN(runs); i++) {
        char path[64], dev[32];
        snprintf(dev, sizeof(dev), "0xff\" rank=\"%s", runs[i].rank);
        tp_plan *plan = plan_with_graph_file(path, sizeof(path), 1, dev);
        tp_error err = {0};
        assert_int_equal(tp_config_set_nccl(plan->cfg, runs[i].nccl, &err), TP_OK);
        tp_log_clear(&plan->log);
        plan->log.enabled = true;
        tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
        assert_int_equal(compute(plan, g, &err), runs[i].want);
        if (runs[i].want == TP_OK) {
            static const int order[4] = {0, 2, 1, 3};
            assert_order(g, 4, 0, order);
        }
        assert_int_equal(helpers_log_has(plan, "XML Import Channel : dev 255 not found."),
                         strcmp(runs[i].nccl, "2.22.3") == 0);
        free_graph(g);
        tp_plan_free(plan);
        unlink(path);
    }
}

/* The print format of ncclTopoPrintGraph. */
static void test_search_print_graph(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("v100_nv2.xml", NULL);
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    tp_error err = {0};
    assert_int_equal(compute(plan, g, &err), TP_OK);
    tp_search__print_graph(&plan->log, plan->sys, g);
    assert_true(helpers_log_has(plan, "Pattern 4, crossNic 0, nChannels 6, bw 20.000000/20.000000,"
                                      " type NVL/PIX, sameChannels 0"));
    assert_true(helpers_log_has(plan, " 5 : GPU/0 GPU/3 GPU/2 GPU/1"));
    free_graph(g);
    tp_plan_free(plan);
}

/* The graph header's "%f" bandwidths are written without printf: the same text as printf's. */
static void test_search_print_graph_bw(void **state)
{
    (void)state;
    /* 1/128 and 3/128: ties at the sixth decimal (printf rounds them to even) */
    static const float bws[] = {0.0078125f, 0.0234375f, 0.12f,    0.24f,       2.4f,
                                17.5f,      0.0f,       -0.0f,    1e-7f,       5e-7f,
                                1.5e-6f,    2.5e-6f,    -3.25f,   123456.789f, 8.388607e6f,
                                1e9f,       3.4e38f,    INFINITY, -INFINITY,   NAN};
    tp_plan *plan = plan_fixture("v100_nv2.xml", NULL);
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, 1);
    for (size_t i = 0; i < ARRAY_LEN(bws); i++) {
        /* and 40 values growing from each, with odd fractions */
        for (float v = bws[i], step = 0; step < 40; step++, v = v * 1.77f + 1.0f / 7.0f) {
            g->bw_intra = v;
            g->bw_inter = -v / 3;
            g->type_intra = g->type_inter = 0;
            char want[512];
            snprintf(want, sizeof(want),
                     "Pattern 4, crossNic 0, nChannels 0, bw %f/%f, type LOC/LOC, sameChannels 0",
                     (double)g->bw_intra, (double)g->bw_inter);
            tp_log_clear(&plan->log);
            plan->log.enabled = true;
            tp_search__print_graph(&plan->log, plan->sys, g);
            assert_int_equal(plan->log.n_lines, 1);
            assert_string_equal(plan->log.lines[0].text, want);
            if (!isfinite(v))
                break;
        }
    }
    free_graph(g);
    tp_plan_free(plan);
}

/* NVLS (sm90 + NVSwitch): one head GPU per channel, the other slots stay GPU/0. */
static void test_search_nvls_heads(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("dgx_h100.xml", NULL);
    tp_graph *g = new_graph(3, TP_PATTERN_NVLS, 1, MAX_2_22_3);
    tp_error err = {0};
    assert_int_equal(compute(plan, g, &err), TP_OK);
    /* NCCL 2.22.3 on this machine: 8 channels, bw 40/60, NVL/PIX. */
    assert_int_equal(g->n_channels, 8);
    assert_true(g->bw_intra == 40.0f && g->bw_inter == 60.0f);
    for (int c = 0; c < 8; c++) {
        assert_int_equal(g->intra[c * 8], c);
        for (int i = 1; i < 8; i++)
            assert_int_equal(g->intra[c * 8 + i], 0);
    }
    tp_search__print_graph(&plan->log, plan->sys, g);
    assert_true(helpers_log_has(plan, " 2 : GPU/2 GPU/0 GPU/0 GPU/0 GPU/0 GPU/0 GPU/0 GPU/0"));
    /* The dump keeps only the head of each NVLS channel. */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(tp_search__dump_graphs(out, plan->sys, &g, 1, &err), TP_OK);
    fclose(out);
    assert_non_null(strstr(text, "    <channel>\n      <gpu dev=\"0x1\"/>\n    </channel>\n"));
    free(text);
    free_graph(g);
    tp_plan_free(plan);
}

/*
 * search_milli.c: on "normalized" values (the float nearest to m/1000 and
 * k/1000, below 2^20 thousandths), NCCL 2.22.3's SUB_ROUND is exact integer
 * arithmetic in thousandths, and comparisons agree. Checked on a grid of
 * link values against every amount a pass can take from the speed ladders.
 */
static void test_search_milli_rounding(void **state)
{
    (void)state;
    static const float speeds[] = {60, 50, 48, 45, 42, 40, 30, 28, 24, 22,   20,   18,    17.5f, 15,
                                   12, 11, 10, 9,  7,  6,  5,  4,  3,  2.4f, 1.2f, 0.24f, 0.12f};
    int checked = 0;
    for (size_t i = 0; i < ARRAY_LEN(speeds); i++) {
        float amounts[4] = {speeds[i], speeds[i] * 6 / 5, speeds[i] / 8, speeds[i] * 6 / 5 / 8};
        for (int j = 0; j < 4; j++) {
            int32_t k = (int32_t)llround((double)amounts[j] * 1000.0);
            if ((float)k / 1000.0f != amounts[j])
                continue; /* not normalized: milli mode is off for such passes */
            for (int32_t m = 0; m <= TP_MILLI_MAX; m += m < 100000 ? 37 : 7919) {
                float a = (float)m / 1000.0f, b = (float)k / 1000.0f;
                assert_int_equal(a < b, m < k);
                if (m < k)
                    continue;
                float taken = roundf((a - b) * 1000) / 1000;
                assert_true(taken == (float)(m - k) / 1000.0f);
                assert_true(roundf((taken + b) * 1000) / 1000 == a);
                checked++;
            }
        }
    }
    assert_true(checked > 100000);
}

/* Two graphs as NCCL would print and dump them, with the same decisions recorded. */
static void assert_same_graph(const tp_graph *x, const tp_graph *y, int n_gpus)
{
    assert_int_equal(x->n_channels, y->n_channels);
    assert_int_equal(x->pattern, y->pattern);
    assert_int_equal(x->cross_nic, y->cross_nic);
    assert_true(x->bw_intra == y->bw_intra && x->bw_inter == y->bw_inter);
    assert_true(x->latency_inter == y->latency_inter);
    assert_int_equal(x->type_intra, y->type_intra);
    assert_int_equal(x->type_inter, y->type_inter);
    assert_int_equal(x->same_channels, y->same_channels);
    assert_int_equal(x->n_hops, y->n_hops);
    assert_memory_equal(x->intra, y->intra, (size_t)TP_MAXCHANNELS * (size_t)n_gpus * sizeof(int));
    assert_memory_equal(x->inter, y->inter, sizeof(x->inter));
    assert_true(tp_search__same_decisions(x, y));
}

/* The ring, tree and NVLS graphs of two searches are the same; frees both sets. */
/* The three graphs a[] against b[] (kept), then a[] freed. */
static void assert_same_free_first(tp_graph **a, tp_graph **b, int n_gpus)
{
    for (int k = 0; k < 3; k++) {
        assert_same_graph(a[k], b[k], n_gpus);
        free_graph(a[k]);
    }
}

static void assert_same_graphs_free(tp_graph **a, tp_graph **b, int n_gpus)
{
    assert_same_free_first(a, b, n_gpus);
    for (int k = 0; k < 3; k++)
        free_graph(b[k]);
}

/* Ring then tree (then NVLS when possible), on a system, searched as opts says. */
static void search_all(tp_plan *plan, tp_graph **g, const tp_accel_opts *opts)
{
    tp_error err = {0};
    g[0] = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    assert_int_equal(tp_search__compute_opts(plan->sys, g[0], plan->cfg, &plan->log, opts, &err),
                     TP_OK);
    int n = g[0]->n_channels;
    g[1] = new_graph(1, TP_PATTERN_BALANCED_TREE, n, n);
    assert_int_equal(tp_search__compute_opts(plan->sys, g[1], plan->cfg, &plan->log, opts, &err),
                     TP_OK);
    g[2] = new_graph(3, TP_PATTERN_NVLS, 1, MAX_2_22_3);
    assert_int_equal(tp_search__compute_opts(plan->sys, g[2], plan->cfg, &plan->log, opts, &err),
                     TP_OK);
}

static const tp_accel_opts shortcuts = {.use = TP_ACCEL_ALL, .cut_cap = TP_CUT_STEP_CAP};
/* No accelerator attached: the core alone. */
static const tp_accel_opts step_by_step = {.use = 0, .cut_cap = -1};
/* The shortcuts, with every pass the pass memory knows run and checked. */
static const tp_accel_opts checked = {.use = TP_ACCEL_ALL, .cut_cap = -1, .verify = 1};
/* Each accelerator alone (with those it needs). */
static const tp_accel_opts alone[] = {
    {.use = TP_ACCEL_MILLI, .cut_cap = -1},
    {.use = TP_ACCEL_MEMO, .cut_cap = -1},
    {.use = TP_ACCEL_PASS, .cut_cap = -1, .verify = 1},
    {.use = TP_ACCEL_MILLI | TP_ACCEL_PASS | TP_ACCEL_SHADOW, .cut_cap = -1},
    {.use = TP_ACCEL_MILLI | TP_ACCEL_BOUND, .cut_cap = 0},
    {.use = TP_ACCEL_MILLI | TP_ACCEL_DEAD, .cut_cap = -1},
};

/*
 * Every shortcut (milli mode, sub-search and pass memories, shadow passes,
 * dead next channels, cut passes) gives the graphs of the step-by-step float
 * search; so does a search that runs every pass its pass memory knows and
 * checks the steps it recorded (an error otherwise).
 */
static const struct {
    const char *fixture;
    const char *env[3];
    int n_nodes;
} exact_table[] = {
    {"v100_nv2.xml", {NULL}, 1},
    {"v100_nv1.xml", {NULL}, 1},
    {"v100_nv0.xml", {NULL}, 1},
    {"v100_nv2_x4.xml", {NULL}, 1},
    {"v100_sparse_ring.xml", {NULL}, 1},
    {"v100_weak.xml", {NULL}, 1},
    {"v100_nv2.xml", {NULL}, 2},
    {"pix_nic_2s.xml", {NULL}, 1},
    {"pix_nic_2s.xml", {NULL}, 2},
    {"pix_nic_2s.xml", {"NCCL_CROSS_NIC=1", NULL}, 2},
    {"nic_one_socket.xml", {NULL}, 2},
    {"dual_port_nics.xml", {NULL}, 2},
    {"pcie_2s_8gpu.xml", {NULL}, 1},
    {"pcie_2s_8gpu.xml", {NULL}, 2},
    {"pcie_2s_8gpu.xml", {"NCCL_CROSS_NIC=0", NULL}, 2},
    {"pcie_2s_8gpu.xml", {"NCCL_P2P_LEVEL=PIX", NULL}, 2},
    {"dgx_h100.xml", {NULL}, 2},
    {"ac922.xml", {NULL}, 2},
    {"pxb_2level.xml", {"NCCL_P2P_LEVEL=PIX", NULL}, 1},
    {"pxb_2level.xml", {NULL}, 2},
};

static size_t count_events(const tp_graph *g, tp_search_event_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_events; i++)
        n += g->events[i].kind == kind;
    return n;
}

/*
 * Passes cut short because they cannot beat the best graph, and cut passes
 * settled when NCCL's global budget check depends on their steps: the
 * POWER9 AC922 fixture (two nodes, ring) takes both paths when passes are
 * cut at once, and its graphs equal the step-by-step search's either way.
 */
static void test_search_cut_and_settle(void **state)
{
    (void)state;
    char *xml = helpers_fixture("ac922.xml");
    const char *const no_env[] = {NULL};
    tp_plan *plan = helpers_plan(xml, no_env, 2, 0);
    free(xml);
    tp_error err = {0};
    for (int cap = 0; cap <= TP_CUT_STEP_CAP; cap += TP_CUT_STEP_CAP) {
        tp_graph *cut = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
        tp_graph *plain = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
        const tp_accel_opts opts = {.use = TP_ACCEL_ALL, .cut_cap = cap};
        assert_int_equal(
            tp_search__compute_opts(plan->sys, cut, plan->cfg, &plan->log, &opts, &err), TP_OK);
        assert_int_equal(tp_search__compute_plain(plan->sys, plain, plan->cfg, &plan->log, &err),
                         TP_OK);
        assert_same_graph(cut, plain, plan->sys->nodes[TP_NODE_GPU].count);
        assert_true(count_events(cut, TP_EV_BOUND) > 0);
        /* Cut at once, many small passes are cut and the global budget check needs them. */
        assert_true(cap > 0 || count_events(cut, TP_EV_SETTLE) > 0);
        free_graph(cut);
        free_graph(plain);
    }
    tp_plan_free(plan);
}

static void test_search_shortcuts_exact(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(exact_table); i++) {
        char *xml = helpers_fixture(exact_table[i].fixture);
        tp_plan *fast = helpers_plan(xml, exact_table[i].env, exact_table[i].n_nodes, 0);
        tp_plan *check = helpers_plan(xml, exact_table[i].env, exact_table[i].n_nodes, 0);
        tp_plan *plain = helpers_plan(xml, exact_table[i].env, exact_table[i].n_nodes, 0);
        tp_graph *a[3], *b[3], *c[3];
        search_all(fast, a, &shortcuts);
        search_all(check, c, &checked);
        search_all(plain, b, &step_by_step);
        int n_gpus = fast->sys->nodes[TP_NODE_GPU].count;
        for (int k = 0; k < 3; k++) {
            assert_same_graph(a[k], b[k], n_gpus);
            assert_same_graph(c[k], b[k], n_gpus);
            free_graph(a[k]);
            free_graph(c[k]);
        }
        for (size_t v = 0; v < ARRAY_LEN(alone); v++) {
            tp_plan *one = helpers_plan(xml, exact_table[i].env, exact_table[i].n_nodes, 0);
            search_all(one, a, &alone[v]);
            assert_same_free_first(a, b, n_gpus);
            tp_plan_free(one);
        }
        for (int k = 0; k < 3; k++)
            free_graph(b[k]);
        tp_plan_free(fast);
        tp_plan_free(check);
        tp_plan_free(plain);
        free(xml);
    }
}

/* A fixture's plan under NCCL `version` (the profile's MAXCHANNELS in *max_channels). */
static tp_plan *plan_at(const char *version, const char *fixture, int n_nodes, int *max_channels)
{
    tp_plan *plan = helpers_plan_fixture_at(fixture, version, NULL, n_nodes);
    *max_channels = tp_config__profile(plan->cfg)->max_channels;
    return plan;
}

/* Ring, tree and NVLS graphs of a plan's system (MAXCHANNELS max), searched as opts says. */
static void search_all_max(tp_plan *plan, int max, tp_graph **g, const tp_accel_opts *opts)
{
    tp_error err = {0};
    g[0] = new_graph(0, TP_PATTERN_RING, 1, max / 2);
    assert_int_equal(tp_search__compute_opts(plan->sys, g[0], plan->cfg, NULL, opts, &err), TP_OK);
    int n = g[0]->n_channels;
    g[1] = new_graph(1, TP_PATTERN_BALANCED_TREE, n, n);
    assert_int_equal(tp_search__compute_opts(plan->sys, g[1], plan->cfg, NULL, opts, &err), TP_OK);
    g[2] = new_graph(3, TP_PATTERN_NVLS, 1, max);
    assert_int_equal(tp_search__compute_opts(plan->sys, g[2], plan->cfg, NULL, opts, &err), TP_OK);
}

/*
 * The rewritten search of NCCL 2.27.5 (and 2.30.7's, which keeps it) runs
 * with every accelerator: each alone and all together (as topoplan runs,
 * cutting at once, checking the pass memory) must give the bare core's
 * graphs and decisions. v100_nv0 finds no ring: its second passes, which
 * the bound skips, are followed by the simple-order fallback.
 */
static void test_search_modern_accel_exact(void **state)
{
    (void)state;
    static const char *const versions[] = {"2.27.5", "2.30.7"};
    static const struct {
        const char *fixture;
        int n_nodes;
    } cases[] = {{"dgx_h100.xml", 2},          {"pcie8_2s.xml", 2},          {"aws_p5_2026.xml", 2},
                 {"p5_48xl_no_nvlink.xml", 2}, {"ncv4_nvlink_pairs.xml", 1}, {"hgx_a100.xml", 2},
                 {"v100_nv0.xml", 1},          {"pix_nic_2s.xml", 2}};
    const tp_accel_opts variants[] = {shortcuts, checked,  alone[0],
                                      alone[1],  alone[2], alone[3],
                                      alone[4],  alone[5], {.use = TP_ACCEL_ALL, .cut_cap = 0}};
    for (size_t v = 0; v < ARRAY_LEN(versions); v++) {
        for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
            int max = 0;
            tp_plan *plain = plan_at(versions[v], cases[i].fixture, cases[i].n_nodes, &max);
            tp_graph *b[3];
            search_all_max(plain, max, b, &step_by_step);
            int n_gpus = plain->sys->nodes[TP_NODE_GPU].count;
            for (size_t k = 0; k < ARRAY_LEN(variants); k++) {
                tp_plan *fast = plan_at(versions[v], cases[i].fixture, cases[i].n_nodes, &max);
                tp_graph *a[3];
                search_all_max(fast, max, a, &variants[k]);
                assert_same_free_first(a, b, n_gpus);
                tp_plan_free(fast);
            }
            for (int p = 0; p < 3; p++)
                free_graph(b[p]);
            tp_plan_free(plain);
        }
    }
}

/*
 * A fixture's plan, the search context of its system and its accelerators
 * (tp_accel__free, ctx_free, free_graph, tp_plan_free).
 */
static tp_plan *ctx_of_fixture(const char *name, const char *const *env, tp_search_ctx *ctx,
                               tp_accel **accel, tp_graph **save)
{
    tp_plan *plan = plan_fixture(name, env);
    tp_error err = {0};
    *save = new_graph(0, TP_PATTERN_RING, 1, 1);
    assert_int_equal(tp_search__ctx_init(ctx, plan->sys, *save, &err), TP_OK);
    assert_int_equal(tp_accel__new(ctx, &tp_accel__defaults, accel, &err), TP_OK);
    return plan;
}

/*
 * The AC922: two POWER9 sockets of three NVLink GPUs; every route from one
 * socket to the other crosses the CPU link, a bridge each way with the
 * sockets as sides (search_bound.c), over three hops where a route within
 * a socket takes one: what a channel must spend crossing.
 */
static void test_search_bridges(void **state)
{
    (void)state;
    tp_search_ctx ctx;
    tp_accel *accel;
    tp_graph *save;
    tp_plan *plan = ctx_of_fixture("ac922.xml", NULL, &ctx, &accel, &save);
    const tp_bound *b = &accel->bound;
    assert_int_equal(ctx.n_gpus, 6);
    int sockets = 0;
    for (int i = 0; i < b->n_bridges; i++) {
        uint64_t side = b->bridge_side[i];
        sockets += side == 0x07 || side == 0x38;
        assert_true(side != 0 && side != 0x3f);
        /* Across sockets: GPU -> CPU -> CPU -> GPU, longer than NVLink within one. */
        if (side == 0x07 || side == 0x38)
            assert_true(b->bridge_hops[2 * i] == 3 && b->bridge_hops[2 * i + 1] == 3);
    }
    assert_int_equal(b->hops_gpu_gpu, 1);
    /* A closed ring crosses both ways (2 x 2 hops more), a chain at least once. */
    assert_int_equal(b->cross_extra[1], 4);
    assert_int_equal(b->cross_extra[0], 2);
    assert_true(sockets >= 2);
    tp_accel__free(accel);
    tp_search__ctx_free(&ctx);
    free_graph(save);
    tp_plan_free(plan);
}

/*
 * Two upper PCIe switches, each over two lower switches of two GPUs; with
 * P2P only within a lower switch, every route out of a lower switch goes
 * up through its upper switch to the CPU: that uplink is a hub, taken once
 * per lower switch a channel leaves (search_bound.c).
 */
static void test_search_hubs(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_P2P_LEVEL=PIX", NULL};
    tp_search_ctx ctx;
    tp_accel *accel;
    tp_graph *save;
    tp_plan *plan = ctx_of_fixture("pxb_2level.xml", env, &ctx, &accel, &save);
    assert_int_equal(ctx.n_gpus, 8);
    assert_int_equal(accel->bound.n_hubs, 2);
    for (int i = 0; i < accel->bound.n_hubs; i++)
        assert_int_equal(accel->bound.hub_sides[i], 2);
    tp_accel__free(accel);
    tp_search__ctx_free(&ctx);
    free_graph(save);
    tp_plan_free(plan);
}

/* Whether no Balanced Tree channel at speed bw can start, from the link values of a pass start. */
static int tree_cannot_start(tp_accel *accel, float bw)
{
    tp_graph *g = new_graph(1, TP_PATTERN_BALANCED_TREE, 1, 1);
    g->bw_intra = g->bw_inter = bw;
    g->type_intra = g->type_inter = TP_PATH_SYS;
    assert_true(tp_accel__begin(accel, g)); /* milli mode: the link values are exact */
    int blocked = tp_accel__no_start(accel, g, accel->milli.amounts);
    free_graph(g);
    return blocked;
}

/*
 * Two nodes of the two-level PCIe fixture: each lower switch holds two GPUs
 * under a 24 GB/s uplink, the NICs sit above it (search_sides.c). A Balanced
 * Tree channel at 15 GB/s starting in a lower switch takes 15 down from the
 * NET, sends 7.5 back up from its first GPU, and then either 7.5 from a
 * second GPU there and 15 to leave (30 up) or leaves at once and comes back
 * for the other GPU (30 down): no channel starts. At 12 GB/s the first
 * choice fits exactly (12 down, 24 up): NCCL's tree is found there, and the
 * accelerated search gives the step-by-step search's graphs.
 */
static void test_search_sides_no_start(void **state)
{
    (void)state;
    char *xml = helpers_fixture("pxb_2level.xml");
    tp_plan *plan = helpers_plan(xml, NULL, 2, 0), *plain = helpers_plan(xml, NULL, 2, 0);
    free(xml);
    tp_search_ctx ctx;
    tp_accel *accel;
    tp_error err = {0};
    tp_graph *save = new_graph(1, TP_PATTERN_BALANCED_TREE, 1, 1);
    assert_int_equal(tp_search__ctx_init(&ctx, plan->sys, save, &err), TP_OK);
    assert_int_equal(tp_accel__new(&ctx, &tp_accel__defaults, &accel, &err), TP_OK);
    int pairs = 0;
    for (int i = 0; i < accel->bound.n_sides; i++)
        pairs += accel->bound.sides[i].size == 2;
    assert_int_equal(pairs, 4); /* the four lower switches */
    assert_true(tree_cannot_start(accel, 15));
    assert_false(tree_cannot_start(accel, 12));
    tp_accel__free(accel);
    tp_search__ctx_free(&ctx);
    free_graph(save);
    tp_graph *a[3], *b[3];
    search_all(plan, a, &shortcuts);
    search_all(plain, b, &step_by_step);
    assert_int_equal(a[1]->n_channels, 1);
    assert_true(a[1]->bw_intra == 12);
    assert_true(count_events(a[1], TP_EV_BOUND) > 0);
    assert_same_graphs_free(a, b, 8);
    tp_plan_free(plan);
    tp_plan_free(plain);
}

/*
 * The seed's 4 x V100 NV2: after 6 rings at 20 GB/s (120), a ring at 30 or
 * 40 GB/s has at most 3 channels (3 NV2 links into each GPU), so the second
 * passes are skipped; the graph is the step-by-step search's.
 */
static void test_search_second_pass_skipped(void **state)
{
    (void)state;
    tp_plan *fast = plan_fixture("v100_nv2.xml", NULL), *plain = plan_fixture("v100_nv2.xml", NULL);
    tp_graph *a[3], *b[3];
    search_all(fast, a, &shortcuts);
    search_all(plain, b, &step_by_step);
    const tp_graph *ring = a[0];
    assert_int_equal(ring->n_channels, 6);
    assert_int_equal(ring->events[ring->n_events - 1].kind, TP_EV_BOUND);
    assert_int_equal(b[0]->events[b[0]->n_events - 1].kind, TP_EV_TRY);
    assert_same_graphs_free(a, b, 4);
    tp_plan_free(fast);
    tp_plan_free(plain);
}

/* Domain 1's graphs g renamed from domain 0's (asserted: it mirrors), and domain 1's ring
 * as a search of its own system finds it (returned; free_graph it and g's). */
static tp_graph *mirror_second_domain(tp_plan *plan, tp_graph **g)
{
    tp_domain *d = &plan->domains[1];
    for (int i = 0; i < TP_GRAPH_COUNT; i++)
        g[i] = new_graph(0, 0, 0, 0);
    tp_error err = {0};
    int done = 0;
    const tp_search_domain first = {plan->domains[0].sys, plan->domains[0].graphs};
    assert_int_equal(tp_search__mirror(NULL, first, (tp_search_domain){d->sys, g}, TP_GRAPH_COUNT,
                                       plan->cfg, &done, &err),
                     TP_OK);
    assert_int_equal(done, 1);
    tp_graph *ring = new_graph(0, TP_PATTERN_RING, 1, RING_MAX_2_22_3);
    assert_int_equal(tp_search__compute_plain(d->sys, ring, plan->cfg, &plan->log, &err), TP_OK);
    return ring;
}

/* Whether domain 1 of plan mirrors domain 0, its graphs renamed into g. */
static int mirrors(tp_plan *plan, tp_graph **g)
{
    tp_error err = {0};
    int done = 0;
    const tp_search_domain first = {plan->domains[0].sys, plan->domains[0].graphs};
    const tp_search_domain second = {plan->domains[1].sys, g};
    assert_int_equal(tp_search__mirror(NULL, first, second, TP_GRAPH_COUNT, plan->cfg, &done, &err),
                     TP_OK);
    return done;
}

/* Whether domain 1 of plan mirrors domain 0 once NETs 0 and 1 of domain d share a port, or an
 * id (restored after). */
static int mirrors_nets_merged(tp_plan *plan, tp_graph **g, int d, bool same_id)
{
    tp_node *nets = plan->domains[d].sys->nodes[TP_NODE_NET].nodes;
    assert_true(plan->domains[d].sys->nodes[TP_NODE_NET].count >= 2);
    const tp_node saved = nets[1];
    if (same_id) {
        nets[1].id = nets[0].id;
    } else {
        nets[1].net.asic = nets[0].net.asic;
        nets[1].net.port = nets[0].net.port;
    }
    int done = mirrors(plan, g);
    nets[1] = saved;
    return done;
}

/* Domain 1 stops mirroring domain 0 when two NETs of one domain share a port, or an id, that no two
 * NETs of the other share (a class merged on either side). */
static void assert_not_mirror_if_nets_merge(tp_plan *plan, tp_graph **g)
{
    assert_true(mirrors(plan, g));
    for (int d = 0; d < 2; d++) {
        assert_false(mirrors_nets_merged(plan, g, d, false));
        assert_false(mirrors_nets_merged(plan, g, d, true));
    }
    assert_true(mirrors(plan, g));
}

/*
 * Two sockets of the fixture form two domains that differ only in names
 * (the NICs interleave): the second domain's graphs are the first's renamed
 * (search_iso.c), equal to a full search of its own system.
 */
static void test_search_mirror_domains(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("pcie_2s_8gpu.xml", NULL);
    assert_int_equal(plan->n_domains, 2);
    tp_domain *d = &plan->domains[1];
    int n_gpus = d->sys->nodes[TP_NODE_GPU].count, done = 0;
    tp_graph *g[TP_GRAPH_COUNT];
    tp_graph *ring = mirror_second_domain(plan, g);
    tp_error err = {0};
    const tp_search_domain first = {plan->domains[0].sys, plan->domains[0].graphs};
    assert_same_graph(g[TP_GRAPH_RING], ring, n_gpus);
    assert_same_graph(d->graphs[TP_GRAPH_RING], ring, n_gpus);
    assert_true(d->graphs[TP_GRAPH_RING]->intra[0] >= 4); /* the second socket's ranks */
    /* A system that differs in one link bandwidth is not a mirror. */
    const tp_node *gpu = &d->sys->nodes[TP_NODE_GPU].nodes[0];
    float *bw = &gpu->paths[TP_NODE_NET][0].list[0]->bw, saved = *bw;
    *bw = saved / 2;
    assert_int_equal(tp_search__mirror(NULL, first, (tp_search_domain){d->sys, g}, TP_GRAPH_COUNT,
                                       plan->cfg, &done, &err),
                     TP_OK);
    assert_int_equal(done, 0);
    *bw = saved;
    assert_not_mirror_if_nets_merge(plan, g);
    for (int i = 0; i < TP_GRAPH_COUNT; i++)
        free_graph(g[i]);
    free_graph(ring);
    tp_plan_free(plan);
}

/*
 * The HGX A100 board with P2P and SHM off: every GPU is a domain of its own. GPU 1 takes its
 * switch's second NIC first where GPU 0 takes the first one, so GPU 1's domain is GPU 0's with
 * those two NICs swapped: the NETs are matched by the GPUs' own channels (search_iso.c), and the
 * renamed graph is the one a search of GPU 1's system finds.
 */
static void test_search_mirror_swapped_nics(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", NULL};
    tp_plan *plan = plan_fixture("hgx_a100.xml", env);
    assert_int_equal(plan->n_domains, 8);
    tp_graph *g[TP_GRAPH_COUNT];
    tp_graph *ring = mirror_second_domain(plan, g);
    assert_same_graph(g[TP_GRAPH_RING], ring, 1);
    assert_int_not_equal(ring->inter[0], plan->domains[0].graphs[TP_GRAPH_RING]->inter[0]);
    for (int i = 0; i < TP_GRAPH_COUNT; i++)
        free_graph(g[i]);
    free_graph(ring);
    tp_plan_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_init_nv2_max_total_bw),
        cmocka_unit_test(test_search_native_nv2_six_rings),
        cmocka_unit_test(test_search_ring_table),
        cmocka_unit_test(test_search_weak_fallback),
        cmocka_unit_test(test_search_custom_replay_0213),
        cmocka_unit_test(test_search_partial_replay),
        cmocka_unit_test(test_search_bad_dev_fails),
        cmocka_unit_test(test_search_bad_dev_fails_2_30_7),
        cmocka_unit_test(test_search_graph_file_rank),
        cmocka_unit_test(test_search_print_graph),
        cmocka_unit_test(test_search_print_graph_bw),
        cmocka_unit_test(test_search_nvls_heads),
        cmocka_unit_test(test_search_milli_rounding),
        cmocka_unit_test(test_search_shortcuts_exact),
        cmocka_unit_test(test_search_modern_accel_exact),
        cmocka_unit_test(test_search_cut_and_settle),
        cmocka_unit_test(test_search_second_pass_skipped),
        cmocka_unit_test(test_search_bridges),
        cmocka_unit_test(test_search_hubs),
        cmocka_unit_test(test_search_sides_no_start),
        cmocka_unit_test(test_search_mirror_domains),
        cmocka_unit_test(test_search_mirror_swapped_nics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
