/*
 * Unit tests of the search stage, from the figures of the seed document
 * 002 (chapter 19, 4 x V100-SXM2 fixtures) and NCCL 2.22.3's rules.
 * The graphs are computed directly on the planned system, like init.cc does.
 */
#include "helpers.h"

#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Plan a fixture (system + paths) with an environment. */
static tp_plan *plan_fixture(const char *name, const char *const *env)
{
    char *xml = helpers_fixture(name);
    tp_plan *plan = helpers_plan(xml, env, 1, 0);
    free(xml);
    return plan;
}

static tp_graph *new_graph(int id, int pattern, int min_ch, int max_ch)
{
    tp_graph *g = calloc(1, sizeof(*g));
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
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, TP_MAXCHANNELS / 2);
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
        tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, TP_MAXCHANNELS / 2);
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
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, TP_MAXCHANNELS / 2);
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
    tp_graph *ring = new_graph(0, TP_PATTERN_RING, 1, TP_MAXCHANNELS / 2);
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
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, TP_MAXCHANNELS / 2);
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

/* The print format of ncclTopoPrintGraph. */
static void test_search_print_graph(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("v100_nv2.xml", NULL);
    tp_graph *g = new_graph(0, TP_PATTERN_RING, 1, TP_MAXCHANNELS / 2);
    tp_error err = {0};
    assert_int_equal(compute(plan, g, &err), TP_OK);
    tp_search__print_graph(&plan->log, plan->sys, g);
    assert_true(helpers_log_has(plan, "Pattern 4, crossNic 0, nChannels 6, bw 20.000000/20.000000,"
                                      " type NVL/PIX, sameChannels 0"));
    assert_true(helpers_log_has(plan, " 5 : GPU/0 GPU/3 GPU/2 GPU/1"));
    free_graph(g);
    tp_plan_free(plan);
}

/* NVLS (sm90 + NVSwitch): one head GPU per channel, the other slots stay GPU/0. */
static void test_search_nvls_heads(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("dgx_h100.xml", NULL);
    tp_graph *g = new_graph(3, TP_PATTERN_NVLS, 1, TP_MAXCHANNELS);
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
        cmocka_unit_test(test_search_print_graph),
        cmocka_unit_test(test_search_nvls_heads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
