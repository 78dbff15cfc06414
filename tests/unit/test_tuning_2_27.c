/*
 * NCCL 2.27.5's tuning model (v2.27.5-1 graph/tuning.cc) next to 2.22.3's:
 * each rule of profile rule tune-model-2-27 and PAT on a synthetic job whose
 * figures follow from NCCL's formulas, the same job under 2.22.3 showing the
 * old behaviour.
 */
#include "helpers.h"

#include "tuning/tuning_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A job of n_ranks over n_nodes with every graph at 2 channels of 20 GB/s on NVLink and PIX. */
static tp_tune_job job_of(int n_ranks, int n_nodes, int cc)
{
    tp_tune_job job;
    memset(&job, 0, sizeof(job));
    job.n_ranks = n_ranks;
    job.n_nodes = n_nodes;
    job.cpu_arch = job.comm_cpu_arch = TP_CPU_ARCH_X86;
    job.cpu_vendor = job.comm_cpu_vendor = TP_CPU_VENDOR_INTEL;
    job.min_comp_cap = job.max_comp_cap = cc;
    for (int a = 0; a < TP_ALGO_COUNT; a++) {
        job.graphs[a].pattern = TP_PATTERN_BALANCED_TREE;
        job.graphs[a].n_channels = 2;
        job.graphs[a].bw_intra = job.graphs[a].bw_inter = 20.0f;
        job.graphs[a].type_intra = TP_PATH_NVL;
        job.graphs[a].type_inter = TP_PATH_PIX;
    }
    job.n_channels = 2;
    return job;
}

static void model(tp_tuning *t, const char *version, const tp_tune_job *job)
{
    tp_config *cfg = NULL;
    tp_error err = {0};
    const char *const env[] = {NULL};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, version, &err), TP_OK);
    tp_log log = {0};
    tp_tune__model(t, job, cfg, &log);
    tp_config_free(cfg);
}

static void expect_near(float got, double want, const char *what)
{
    if (got < want - 1e-3 || got > want + 1e-3)
        fail_msg("%s: %f, expected %f", what, (double)got, want);
}

/* PAT: AllGather/ReduceScatter on Simple with one rank per node from sm60; bandwidth .75 of the
 * bus, latency 8 + log2i(nNodes) * interLat / 3.5 + 2.8 per rank, interLat Tree's. */
static void test_pat(void **state)
{
    (void)state;
    tp_tuning t;
    tp_tune_job job = job_of(4, 4, 80);
    model(&t, "2.27.5", &job);
    for (int c = TP_COLL_ALLGATHER; c <= TP_COLL_REDUCESCATTER; c++) {
        expect_near(t.bandwidth[c][TP_ALGO_PAT][TP_PROTO_SIMPLE], 2 * 20 * .75, "PAT bw");
        expect_near(t.latency[c][TP_ALGO_PAT][TP_PROTO_SIMPLE], 8 + 2 * (14 / 3.5) + 4 * 2.8,
                    "PAT latency");
        assert_true(t.bandwidth[c][TP_ALGO_PAT][TP_PROTO_LL] == 0.0f);
    }
    assert_true(t.bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_PAT][TP_PROTO_SIMPLE] == 0.0f);
    assert_int_equal(t.max_threads[TP_ALGO_PAT][TP_PROTO_SIMPLE], 0);
    model(&t, "2.22.3", &job);
    assert_true(t.bandwidth[TP_COLL_ALLGATHER][TP_ALGO_PAT][TP_PROTO_SIMPLE] == 0.0f);
    job = job_of(8, 4, 80); /* two ranks per node */
    model(&t, "2.27.5", &job);
    assert_true(t.bandwidth[TP_COLL_ALLGATHER][TP_ALGO_PAT][TP_PROTO_SIMPLE] == 0.0f);
    job = job_of(4, 4, 52); /* no CUDA atomics */
    model(&t, "2.27.5", &job);
    assert_true(t.bandwidth[TP_COLL_ALLGATHER][TP_ALGO_PAT][TP_PROTO_SIMPLE] == 0.0f);
}

/* Ring/LL128 keeps .92 of the bus below 2 ranks per node (2.22.3: .7). */
static void test_no_ll128_ppn_discount(void **state)
{
    (void)state;
    tp_tuning t;
    tp_tune_job job = job_of(2, 2, 80);
    model(&t, "2.27.5", &job);
    /* AllReduce ratio nRanks / nsteps = 2 / 2 */
    expect_near(t.bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_LL128], 40 * 0.92, "2.27");
    model(&t, "2.22.3", &job);
    expect_near(t.bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_LL128], 40 * 0.7, "2.22");
}

/* One rank per node exposes Tree's network latency; inter-node ring steps are nNodes-1 (x2 for
 * AllReduce). Ring/LL AllGather on 4 nodes x 1: 3 steps, all across nodes, at Tree/LL's 5.0. */
static void test_inter_latency_and_steps(void **state)
{
    (void)state;
    tp_tuning t;
    tp_tune_job job = job_of(4, 4, 80);
    model(&t, "2.27.5", &job);
    expect_near(t.latency[TP_COLL_ALLGATHER][TP_ALGO_RING][TP_PROTO_LL], 6.6 + 3 * 5.0, "AG");
    expect_near(t.latency[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_LL], 6.6 + 6 * 5.0, "AR");
    model(&t, "2.22.3", &job);
    /* 2.22.3: nNodes-1 = 3 steps at Ring/LL's 2.7, AllReduce 2*nNodes = 8 of 6 steps */
    expect_near(t.latency[TP_COLL_ALLGATHER][TP_ALGO_RING][TP_PROTO_LL], 6.6 + 3 * 2.7, "AG 2.22");
    expect_near(t.latency[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_LL],
                6.6 + (6 - 8) * 1.0f + 8 * 2.7f, "AR 2.22");
}

/* NVLS AllGather on one node: min(bwIntra (ppn-1)/ppn, bwInter .9) per channel, no 5/6 ratio
 * (the ratio is Ring's only for AllGather/ReduceScatter). */
static void test_nvls_allgather_bw(void **state)
{
    (void)state;
    tp_tuning t;
    tp_tune_job job = job_of(8, 1, 90);
    model(&t, "2.27.5", &job);
    expect_near(t.bandwidth[TP_COLL_ALLGATHER][TP_ALGO_NVLS][TP_PROTO_SIMPLE],
                2 * (20.0f * 7.0f / 8.0f), "2.27");
    model(&t, "2.22.3", &job);
    expect_near(t.bandwidth[TP_COLL_ALLGATHER][TP_ALGO_NVLS][TP_PROTO_SIMPLE], 2 * 20 * 5.0 / 6,
                "2.22");
}

/* The constants: Tree/Simple latencies and the Blackwell rows (twice Hopper's). */
static void test_constants(void **state)
{
    (void)state;
    const tp_tune_constants *k = tp_tune__constants(tp_nccl_profile__find("2.27.5"));
    const tp_tune_constants *old = tp_tune__constants(tp_nccl_profile__find("2.22.3"));
    assert_int_equal(k->algo_count, TP_ALGO_COUNT);
    assert_int_equal(old->algo_count, TP_ALGO_PAT);
    tp_tuning t;
    tp_tune_job job = job_of(8, 1, 100);
    model(&t, "2.27.5", &job);
    /* Ring/LL one node: min(llMaxBw, bus * .5), Blackwell's 282 > 20 */
    expect_near(t.latency[TP_COLL_ALLREDUCE][TP_ALGO_TREE][TP_PROTO_SIMPLE], 8.4 + 2 * 7 * 4.0,
                "Tree/Simple latency");
    job.graphs[TP_ALGO_RING].n_channels = 32;
    job.graphs[TP_ALGO_RING].bw_intra = 40.0f;
    model(&t, "2.27.5", &job);
    expect_near(t.bandwidth[TP_COLL_ALLGATHER][TP_ALGO_RING][TP_PROTO_LL] * 7 / 8, 282.0, "LL");
    model(&t, "2.22.3", &job);
    expect_near(t.bandwidth[TP_COLL_ALLGATHER][TP_ALGO_RING][TP_PROTO_LL] * 7 / 8, 141.0, "LL");
}

/* LL128 by default from sm70 with no upper bound; up to PXN from sm90, PXB before. */
static void test_ll128_rule(void **state)
{
    (void)state;
    static const struct {
        int cc, inter;
        bool on_old, on_new;
    } cases[] = {
        {86, TP_PATH_PIX, false, true},  {89, TP_PATH_PXB, false, true},
        {100, TP_PATH_PIX, false, true}, {80, TP_PATH_PXN, false, false},
        {90, TP_PATH_PXN, true, true},   {61, TP_PATH_PIX, false, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        tp_tuning t;
        tp_tune_job job = job_of(8, 2, cases[i].cc);
        job.graphs[TP_ALGO_RING].type_inter = cases[i].inter;
        model(&t, "2.22.3", &job);
        if (tp_tune__ll128_default(&t, TP_COLL_ALLREDUCE, TP_ALGO_RING) != cases[i].on_old)
            fail_msg("case %zu: 2.22.3 rule", i);
        model(&t, "2.27.5", &job);
        if (tp_tune__ll128_default(&t, TP_COLL_ALLREDUCE, TP_ALGO_RING) != cases[i].on_new)
            fail_msg("case %zu: 2.27.5 rule", i);
    }
}

/* The level of the plan's log line `text` (-1 when absent). */
static int line_level(const tp_plan *plan, const char *text)
{
    for (size_t i = 0; i < plan->log.n_lines; i++)
        if (strcmp(plan->log.lines[i].text, text) == 0)
            return (int)plan->log.lines[i].level;
    return -1;
}

/* A plan of the V100 fixture (8 GPUs, one node) under `version` with env. */
static tp_status plan_v100(const char *version, const char *const *env, tp_plan **plan)
{
    char *xml = helpers_fixture("v100_nv2.xml");
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, version, &err), TP_OK);
    tp_job job = TP_JOB_INIT;
    *plan = NULL;
    tp_status st = tp_plan_buffer(plan, xml, strlen(xml), "v100", &job, cfg, &err);
    tp_config_free(cfg);
    free(xml);
    return st;
}

/* 2.24 parseList: one list per function after "func:", the first entry for every function. */
static void test_algo_per_function(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_ALGO=ring;allreduce:tree", NULL};
    tp_plan *plan = NULL;
    assert_int_equal(plan_v100("2.27.5", env, &plan), TP_OK);
    const tp_tuning *t = &plan->tuning;
    assert_true(t->bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_SIMPLE] == 0.0f);
    assert_true(t->bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_TREE][TP_PROTO_SIMPLE] > 0.0f);
    assert_true(t->bandwidth[TP_COLL_ALLGATHER][TP_ALGO_RING][TP_PROTO_SIMPLE] > 0.0f);
    assert_true(helpers_log_has(plan, "Enabled NCCL Func/Proto/Algo Matrix:"));
    tp_plan_free(plan);
    /* 2.22.3 has no prefixes: "allreduce:tree" is an unknown name, ignored */
    assert_int_equal(plan_v100("2.22.3", env, &plan), TP_OK);
    assert_true(plan->tuning.bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_SIMPLE] > 0.0f);
    assert_false(helpers_log_has(plan, "Enabled NCCL Func/Proto/Algo Matrix:"));
    tp_plan_free(plan);
}

/* 2.24: an unknown name, prefix or a second entry without a prefix fails NCCL's init. */
static void test_algo_list_strict(void **state)
{
    (void)state;
    static const char *const bad[] = {"NCCL_ALGO=bogus", "NCCL_PROTO=LL;Simple",
                                      "NCCL_ALGO=allreduce:ring;foo:tree"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        const char *const env[] = {bad[i], NULL};
        tp_plan *plan = NULL;
        if (plan_v100("2.27.5", env, &plan) != TP_ERR_CONFIG)
            fail_msg("%s: accepted", bad[i]);
        tp_plan_free(plan);
        if (plan_v100("2.22.3", env, &plan) != TP_OK)
            fail_msg("%s: 2.22.3 rejects it", bad[i]);
        tp_plan_free(plan);
    }
}

/* 2.27: no Ring fallback when NCCL_ALGO leaves a function nothing; invalid thread counts are
 * INFO lines. */
static void test_no_ring_fallback_and_nthreads_info(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_ALGO=CollNetDirect", "NCCL_NTHREADS=100", NULL};
    tp_plan *plan = NULL;
    assert_int_equal(plan_v100("2.27.5", env, &plan), TP_OK);
    assert_true(plan->tuning.bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_SIMPLE] == 0.0f);
    assert_int_equal(line_level(plan, "Invalid NCCL_NTHREADS 100 (must be a multiple of 32)"),
                     TP_LOG_INFO);
    tp_plan_free(plan);
    assert_int_equal(plan_v100("2.22.3", env, &plan), TP_OK);
    assert_true(plan->tuning.bandwidth[TP_COLL_ALLREDUCE][TP_ALGO_RING][TP_PROTO_SIMPLE] > 0.0f);
    assert_int_equal(line_level(plan, "Invalid NCCL_NTHREADS 100 (must be a multiple of 32)"),
                     TP_LOG_WARN);
    tp_plan_free(plan);
}

/* 2.27 choice: PAT runs with every thread; no Ring backup bandwidth when NCCL_ALGO leaves a
 * function no algorithm (2.22.3 falls back on Ring). */
static void test_choice(void **state)
{
    (void)state;
    tp_tuning t;
    tp_tune_job job = job_of(4, 4, 80);
    job.graphs[TP_ALGO_RING].n_channels = 0; /* leave PAT alone for AllGather */
    model(&t, "2.27.5", &job);
    tp_tune_choice c;
    assert_true(tp_tune__choose(&t, TP_COLL_ALLGATHER, 1 << 20, &c));
    assert_int_equal(c.algo, TP_ALGO_PAT);
    assert_int_equal(c.proto, TP_PROTO_SIMPLE);
    assert_int_equal(c.n_threads, 640);
    const char *const env[] = {"NCCL_ALGO=Tree", NULL};
    tp_plan *plan = NULL;
    assert_int_equal(plan_v100("2.27.5", env, &plan), TP_OK);
    assert_false(tp_tune__choose(&plan->tuning, TP_COLL_ALLGATHER, 1 << 20, &c));
    tp_plan_free(plan);
    assert_int_equal(plan_v100("2.22.3", env, &plan), TP_OK);
    assert_true(tp_tune__choose(&plan->tuning, TP_COLL_ALLGATHER, 1 << 20, &c));
    assert_int_equal(c.algo, TP_ALGO_RING); /* its Ring bandwidths come back */
    tp_plan_free(plan);
}

/* Whether "--sizes" logs any per-call selection line for the plan. */
static bool logs_selection(const tp_plan *plan)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tp_error err = {0};
    assert_int_equal(tp_report_nccl_log_sizes(out, plan, &err), TP_OK);
    fclose(out);
    bool found = strstr(text, "Bytes -> Algo") != NULL;
    free(text);
    return found;
}

/* 2.24 on: no "Bytes -> Algo" lines at --sizes (rule no-size-lines). */
static void test_no_size_lines(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=TUNING", NULL};
    tp_plan *plan = NULL;
    assert_int_equal(plan_v100("2.27.5", env, &plan), TP_OK);
    assert_false(logs_selection(plan));
    tp_plan_free(plan);
    assert_int_equal(plan_v100("2.22.3", env, &plan), TP_OK);
    assert_true(logs_selection(plan));
    tp_plan_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pat),
        cmocka_unit_test(test_no_ll128_ppn_discount),
        cmocka_unit_test(test_inter_latency_and_steps),
        cmocka_unit_test(test_nvls_allgather_bw),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_ll128_rule),
        cmocka_unit_test(test_algo_per_function),
        cmocka_unit_test(test_algo_list_strict),
        cmocka_unit_test(test_no_ring_fallback_and_nthreads_info),
        cmocka_unit_test(test_choice),
        cmocka_unit_test(test_no_size_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
