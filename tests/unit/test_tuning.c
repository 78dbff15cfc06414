/*
 * Tuning (NCCL 2.22.3 graph/tuning.cc, enqueue.cc): NCCL_ALGO / NCCL_PROTO
 * parsing, the LL128 enable rule, the model and the per-call choice on the
 * DGX H100 fixture at 2 nodes (expected figures: NCCL 2.22.3's own table and
 * selection lines for that job, conformance case tune_dgx_h100_nodes2), and
 * nccl-tests' bus bandwidth factors.
 */
#include "helpers.h"

#include "tuning/tuning_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const protos[] = {"LL", "LL128", "Simple"};
static const char *const algos[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                    "NVLSTree"};

static void expect_list(const char *text, const char *const *names, int n, const int *want)
{
    int got[6];
    tp_tune__parse_list(text, names, n, got);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("\"%s\": %s is %d, expected %d", text, names[i], got[i], want[i]);
}

/* parseList: '^' inverts, names are case-insensitive, unknown and empty items are ignored. */
static void test_parse_list_like_nccl(void **state)
{
    (void)state;
    expect_list("LL,Simple", protos, 3, (const int[]){1, 0, 1});
    expect_list("^LL128", protos, 3, (const int[]){1, 0, 1});
    expect_list("ll128", protos, 3, (const int[]){0, 1, 0});
    expect_list("^", protos, 3, (const int[]){1, 1, 1});
    expect_list("", protos, 3, (const int[]){0, 0, 0});
    expect_list("^simple,LL", protos, 3, (const int[]){0, 1, 0});
    expect_list("Simple ,LL", protos, 3, (const int[]){1, 0, 0});
    expect_list(",,Tree,,bogus,", algos, 6, (const int[]){1, 0, 0, 0, 0, 0});
    expect_list("nvls", algos, 6, (const int[]){0, 0, 0, 0, 1, 0});
    expect_list("^Ring,NVLSTree", algos, 6, (const int[]){1, 0, 1, 1, 1, 0});
}

/* A model whose Ring graph has these path types and GPUs. */
static tp_tuning ll128_model(int type_intra, int type_inter, int min_cc, int max_cc, int n_ranks)
{
    tp_tuning t;
    memset(&t, 0, sizeof(t));
    t.k = tp_tune__constants(tp_nccl_profile__find("2.22.3"));
    t.job.n_ranks = n_ranks;
    t.job.min_comp_cap = min_cc;
    t.job.max_comp_cap = max_cc;
    t.job.graphs[TP_ALGO_RING].type_intra = type_intra;
    t.job.graphs[TP_ALGO_RING].type_inter = type_inter;
    return t;
}

/* LL128 by default: NVLink (or NVB) inside nodes, PXB to the NIC (PXN on Hopper), one GPU kind
 * of compute capability 70, 80 or 90. */
static void test_ll128_default_rule(void **state)
{
    (void)state;
    static const struct {
        int intra, inter, min_cc, max_cc;
        bool on;
    } cases[] = {
        {TP_PATH_NVL, TP_PATH_PIX, 80, 80, true},
        {TP_PATH_NVB, TP_PATH_PXB, 70, 70, true},
        {TP_PATH_NVL, TP_PATH_LOC, 90, 90, true},
        {TP_PATH_PIX, TP_PATH_PIX, 80, 80, false}, /* PCIe inside the node */
        {TP_PATH_NVL, TP_PATH_PXN, 80, 80, false}, /* PXN only on Hopper */
        {TP_PATH_NVL, TP_PATH_PXN, 90, 90, true},
        {TP_PATH_NVL, TP_PATH_PHB, 90, 90, false},
        {TP_PATH_NVL, TP_PATH_PIX, 80, 90, false}, /* mixed GPUs */
        {TP_PATH_NVL, TP_PATH_PIX, 86, 86, false}, /* untested architecture */
        {TP_PATH_NVL, TP_PATH_PIX, 89, 89, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        tp_tuning t = ll128_model(cases[i].intra, cases[i].inter, cases[i].min_cc,
                                  cases[i].max_cc, 8);
        bool on = tp_tune__ll128_default(&t, TP_COLL_ALLREDUCE, TP_ALGO_RING);
        if (on != cases[i].on)
            fail_msg("case %zu: LL128 %s, expected %s", i, on ? "on" : "off",
                     cases[i].on ? "on" : "off");
    }
}

static tp_plan *h100_plan(const char *const *env, int n_nodes)
{
    char *xml = helpers_fixture("dgx_h100.xml");
    tp_plan *plan = helpers_plan(xml, env, n_nodes, 0);
    free(xml);
    assert_true(plan->tuned && plan->tuning.modelled);
    return plan;
}

static void expect_entry(const tp_tuning *t, int c, int a, int p, const char *want)
{
    char got[32];
    snprintf(got, sizeof(got), "%8.1f/%6.1f", (double)t->latency[c][a][p],
             (double)t->bandwidth[c][a][p]);
    if (strcmp(got, want) != 0)
        fail_msg("%s %s/%s: \"%s\", NCCL printed \"%s\"", tp_tune__coll_name(c),
                 tp_tune__algo_name(a), tp_tune__proto_name(p), got, want);
}

/* NCCL 2.22.3's table for 2 DGX H100 nodes (16 ranks). */
static void test_model_dgx_h100_nodes2(void **state)
{
    (void)state;
    tp_plan *plan = h100_plan(NULL, 2);
    const tp_tuning *t = &plan->tuning;
    expect_entry(t, TP_COLL_BROADCAST, TP_ALGO_RING, TP_PROTO_SIMPLE, "   456.4/ 384.0");
    expect_entry(t, TP_COLL_ALLGATHER, TP_ALGO_RING, TP_PROTO_LL128, "    44.6/ 313.2");
    expect_entry(t, TP_COLL_ALLREDUCE, TP_ALGO_TREE, TP_PROTO_LL, "    25.2/  16.6");
    expect_entry(t, TP_COLL_ALLREDUCE, TP_ALGO_TREE, TP_PROTO_SIMPLE, "   448.0/ 140.8");
    expect_entry(t, TP_COLL_ALLREDUCE, TP_ALGO_RING, TP_PROTO_SIMPLE, "   152.8/ 204.8");
    expect_entry(t, TP_COLL_ALLREDUCE, TP_ALGO_COLLNET_DIRECT, TP_PROTO_SIMPLE, "    44.0/   0.0");
    expect_entry(t, TP_COLL_ALLREDUCE, TP_ALGO_NVLS, TP_PROTO_SIMPLE, "    43.0/   0.0");
    expect_entry(t, TP_COLL_ALLREDUCE, TP_ALGO_NVLS_TREE, TP_PROTO_SIMPLE, "    53.0/ 266.7");
    assert_int_equal(t->max_threads[TP_ALGO_RING][TP_PROTO_LL128], 640);
    assert_int_equal(t->thread_threshold[TP_ALGO_RING][TP_PROTO_LL], 8 * 16);
    assert_true(helpers_log_has(plan, "threadThresholds 8/8/64 | 128/8/64 | 512 | 512"));
    tp_plan_free(plan);
}

/* NCCL 2.22.3's choices for that job ("<n> Bytes -> Algo a proto p time t"). */
static void test_choice_dgx_h100_nodes2(void **state)
{
    (void)state;
    tp_plan *plan = h100_plan(NULL, 2);
    static const struct {
        int coll;
        size_t bytes;
        int algo, proto;
        const char *time;
    } cases[] = {
        {TP_COLL_ALLREDUCE, 8, TP_ALGO_TREE, TP_PROTO_LL, "25.200483"},
        {TP_COLL_ALLREDUCE, 262144, TP_ALGO_TREE, TP_PROTO_LL128, "52.001415"},
        {TP_COLL_ALLREDUCE, 4194304, TP_ALGO_NVLS_TREE, TP_PROTO_SIMPLE, "68.728638"},
        {TP_COLL_ALLREDUCE, (size_t)1 << 33, TP_ALGO_NVLS_TREE, TP_PROTO_SIMPLE, "32265.255859"},
        {TP_COLL_REDUCE, (size_t)1 << 33, TP_ALGO_RING, TP_PROTO_SIMPLE, "22826.021484"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        tp_tune_choice c;
        assert_true(tp_tune__choose(&plan->tuning, cases[i].coll, cases[i].bytes, &c));
        char time[32];
        snprintf(time, sizeof(time), "%f", (double)c.time);
        if (c.algo != cases[i].algo || c.proto != cases[i].proto || strcmp(time, cases[i].time))
            fail_msg("%zu bytes: %d/%d %s, NCCL chose %d/%d %s", cases[i].bytes, c.algo, c.proto,
                     time, cases[i].algo, cases[i].proto, cases[i].time);
    }
    tp_plan_free(plan);
}

/* NCCL_PROTO=^LL128 zeroes LL128; NCCL_ALGO=Tree zeroes Ring where Tree exists. */
static void test_env_disables(void **state)
{
    (void)state;
    const char *const no_ll128[] = {"NCCL_PROTO=^LL128", NULL};
    tp_plan *plan = h100_plan(no_ll128, 2);
    for (int c = 0; c < TP_COLL_COUNT; c++)
        for (int a = 0; a < TP_ALGO_COUNT; a++)
            assert_true(plan->tuning.bandwidth[c][a][TP_PROTO_LL128] == 0.0f);
    tp_tune_choice ch;
    assert_true(tp_tune__choose(&plan->tuning, TP_COLL_ALLREDUCE, 262144, &ch));
    assert_int_not_equal(ch.proto, TP_PROTO_LL128);
    tp_plan_free(plan);
    const char *const tree[] = {"NCCL_ALGO=Tree", NULL};
    plan = h100_plan(tree, 2);
    assert_true(plan->tuning.bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_SIMPLE] == 0.0f);
    /* Broadcast has no Tree: NCCL gives it its Ring bandwidths back. */
    assert_true(plan->tuning.bandwidth[TP_COLL_BROADCAST][TP_ALGO_RING][TP_PROTO_SIMPLE] > 0.0f);
    assert_true(tp_tune__choose(&plan->tuning, TP_COLL_ALLGATHER, 1 << 20, &ch));
    assert_int_equal(ch.algo, TP_ALGO_RING);
    assert_false(ch.from_backup);
    assert_true(tp_tune__choose(&plan->tuning, TP_COLL_ALLREDUCE, 1 << 30, &ch));
    assert_int_equal(ch.algo, TP_ALGO_TREE);
    tp_plan_free(plan);
}

/* nccl-tests: busbw = algbw x 2(n-1)/n (AllReduce), (n-1)/n (AllGather, ReduceScatter), 1. */
static void test_busbw_factors(void **state)
{
    (void)state;
    assert_true(fabs(tp_tune__busbw_factor(TP_COLL_ALLREDUCE, 8) - 1.75) < 1e-12);
    assert_true(fabs(tp_tune__busbw_factor(TP_COLL_ALLREDUCE, 2) - 1.0) < 1e-12);
    assert_true(fabs(tp_tune__busbw_factor(TP_COLL_ALLGATHER, 16) - 15.0 / 16) < 1e-12);
    assert_true(fabs(tp_tune__busbw_factor(TP_COLL_REDUCESCATTER, 4) - 0.75) < 1e-12);
    assert_true(fabs(tp_tune__busbw_factor(TP_COLL_BROADCAST, 8) - 1.0) < 1e-12);
    assert_true(fabs(tp_tune__busbw_factor(TP_COLL_REDUCE, 8) - 1.0) < 1e-12);
    assert_true(fabs(tp_tune__busbw_factor(TP_COLL_ALLREDUCE, 1) - 0.0) < 1e-12);
}

/* The public queries give the same figures, and refuse bad arguments. */
static void test_public_queries(void **state)
{
    (void)state;
    tp_plan *plan = h100_plan(NULL, 2);
    tp_tune_call call;
    assert_int_equal(tp_plan_tune_call(plan, tp_tune_coll_from_name("allreduce"), 4194304, &call,
                                       sizeof(call)),
                     TP_OK);
    assert_string_equal(tp_tune_algo_name(call.algorithm), "NVLSTree");
    assert_string_equal(tp_tune_proto_name(call.protocol), "Simple");
    char time[32];
    snprintf(time, sizeof(time), "%f", (double)call.time_us);
    assert_string_equal(time, "68.728638");
    assert_true(fabs(call.busbw_gbs - 4194304 / (call.time_us * 1e3) * 1.875) < 1e-9);
    float lat, bw;
    assert_int_equal(tp_plan_tune_entry(plan, TP_COLL_ALLREDUCE, TP_ALGO_RING, TP_PROTO_SIMPLE,
                                        &lat, &bw),
                     TP_OK);
    assert_true(lat > 152.7f && lat < 152.9f && bw > 204.7f && bw < 204.9f);
    assert_int_equal(tp_plan_tune_call(plan, 5, 8, &call, sizeof(call)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_tune_call(plan, 0, 0, &call, sizeof(call)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_tune_call(NULL, 0, 8, &call, sizeof(call)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_tune_entry(plan, 0, 6, 0, &lat, &bw), TP_ERR_ARGUMENT);
    assert_null(tp_tune_coll_name(5));
    assert_int_equal(tp_tune_coll_from_name("AllToAll"), -1);
    tp_plan_free(plan);
    const char *const none[] = {"NCCL_PROTO=^LL,LL128,Simple", NULL};
    plan = h100_plan(none, 2);
    assert_int_equal(tp_plan_tune_call(plan, TP_COLL_ALLREDUCE, 1024, &call, sizeof(call)),
                     TP_ERR_GRAPH);
    tp_plan_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_list_like_nccl),
        cmocka_unit_test(test_ll128_default_rule),
        cmocka_unit_test(test_model_dgx_h100_nodes2),
        cmocka_unit_test(test_choice_dgx_h100_nodes2),
        cmocka_unit_test(test_env_disables),
        cmocka_unit_test(test_busbw_factors),
        cmocka_unit_test(test_public_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
