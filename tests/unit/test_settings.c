/*
 * Setting notes (tp_setting_notes) and job costs (tp_plan_cost,
 * tp_job_cost_text): a setting NCCL 2.22.3 misreads or that leaves the job on
 * a fallback gives one note with its consequence, a setting read as meant
 * none; a cost is NCCL's own choice for each AllReduce size in both plans.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "topoplan.h"

#include <stdbool.h>
#include <string.h>

/* The DGX H100 builtin planned for `nodes` nodes under one NCCL_* value (NULL: none). */
static tp_plan *h100_with(const char *kv, int nodes)
{
    const char *env[] = {kv, NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    tp_job job = TP_JOB_INIT;
    job.n_nodes = nodes;
    const char *xml = tp_builtin_xml("dgx-h100");
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "dgx-h100", &job, cfg, &err), TP_OK);
    tp_config_free(cfg);
    return plan;
}

/* The notes of a plan, joined by newlines into buf; their count. */
static int notes_of(const tp_plan *plan, char *buf, size_t size)
{
    tp_findings *f = NULL;
    tp_error err = {0};
    assert_int_equal(tp_setting_notes(&f, NULL, plan, &err), TP_OK);
    buf[0] = '\0';
    int n = tp_findings_count(f);
    for (int i = 0; i < n; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s\n", tp_findings_get(f, i));
    tp_findings_free(f);
    return n;
}

static void test_algo_typo(void **state)
{
    (void)state;
    tp_plan *plan = h100_with("NCCL_ALGO=Rnig", 16), *plain = h100_with(NULL, 16);
    char text[4096];
    assert_int_equal(notes_of(plan, text, sizeof(text)), 1);
    assert_non_null(strstr(text, "NCCL_ALGO=Rnig: \"Rnig\" is no algorithm"));
    assert_non_null(strstr(text, "(nearest: Ring)"));
    assert_non_null(strstr(text, "falls back to Tree and Ring"));
    /* The consequence is the cost against the plan without the setting. */
    tp_job_cost cost;
    tp_error err = {0};
    assert_int_equal(tp_plan_cost(&cost, plain, plan, &err), TP_OK);
    assert_int_equal(cost.n_calls, TP_COST_CALLS);
    char line[1024];
    tp_job_cost_text(&cost, line, sizeof(line));
    assert_non_null(strstr(text, line));
    assert_true(cost.worst_change_pct < 0);
    /* 256 MiB: NVLSTree without the typo, Ring with it (NCCL's own choice in both). */
    tp_tune_call call;
    assert_int_equal(cost.calls[2].n_bytes, 256u << 20);
    assert_int_equal(tp_plan_tune_call(plain, 4, 256u << 20, &call, sizeof(call)), TP_OK);
    assert_int_equal(cost.calls[2].before.algorithm, call.algorithm);
    assert_int_equal(call.algorithm, 5);                /* NVLSTree */
    assert_int_equal(cost.calls[2].after.algorithm, 1); /* Ring */
    assert_true(cost.calls[2].busbw_change_pct < -20);
    tp_plan_free(plan);
    tp_plan_free(plain);
}

static void test_valid_settings_silent(void **state)
{
    (void)state;
    const char *valid[] = {"NCCL_ALGO=ring,Tree", "NCCL_PROTO=^LL128", "NCCL_IB_HCA=mlx5_0,mlx5_1",
                           NULL};
    for (int i = 0; valid[i]; i++) {
        tp_plan *plan = h100_with(valid[i], 2);
        char text[2048];
        assert_int_equal(notes_of(plan, text, sizeof(text)), 0);
        tp_plan_free(plan);
    }
}

static void test_ib_hca_fallback(void **state)
{
    (void)state;
    tp_plan *plan = h100_with("NCCL_IB_HCA=mlx5_9", 2);
    char text[4096];
    assert_int_equal(notes_of(plan, text, sizeof(text)), 1);
    assert_non_null(strstr(text, "selects none of the topology's 8 IB ports"));
    assert_non_null(strstr(text, "falls back to its Socket transport"));
    assert_non_null(strstr(text, "this plan assumes otherwise"));
    tp_plan_free(plan);
}

static void test_config_only(void **state)
{
    (void)state;
    const char *env[] = {"NCCL_PROTO=simpel", NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    tp_findings *f = NULL;
    assert_int_equal(tp_setting_notes(&f, cfg, NULL, &err), TP_OK);
    assert_int_equal(tp_findings_count(f), 1);
    assert_non_null(strstr(tp_findings_get(f, 0), "no protocol is left"));
    assert_null(strstr(tp_findings_get(f, 0), "against no"));
    tp_findings_free(f);
    tp_config_free(cfg);
    assert_int_equal(tp_setting_notes(&f, NULL, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_setting_notes(NULL, cfg, NULL, &err), TP_ERR_ARGUMENT);
}

static void test_cost_same_plan(void **state)
{
    (void)state;
    tp_plan *plan = h100_with(NULL, 2);
    tp_job_cost cost;
    tp_error err = {0};
    assert_int_equal(tp_plan_cost(&cost, plan, plan, &err), TP_OK);
    assert_true(cost.worst_change_pct == 0);
    char line[1024];
    tp_job_cost_text(&cost, line, sizeof(line));
    assert_non_null(strstr(line, "AllReduce 1 MiB "));
    assert_null(strstr(line, "->"));
    assert_int_equal(tp_plan_cost(&cost, NULL, plan, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_cost(NULL, plan, plan, &err), TP_ERR_ARGUMENT);
    tp_plan_free(plan);
}

/* A node file planned for a job of `nodes` nodes (the node alone, or node 1 of baseline nodes). */
static tp_plan *node_plan(const char *path, int nodes, bool among_baseline)
{
    tp_job job = TP_JOB_INIT;
    job.n_nodes = nodes;
    const char *topos[1] = {path};
    tp_plan *plan = NULL;
    tp_error err = {0};
    if (among_baseline && path) {
        job.node_topos = topos;
        job.n_node_topos = 1;
    }
    const char *xml = tp_builtin_xml("dgx-h100");
    tp_status st = among_baseline || !path
                       ? tp_plan_buffer(&plan, xml, strlen(xml), "dgx-h100", &job, NULL, &err)
                       : tp_plan_file(&plan, path, &job, NULL, &err);
    assert_int_equal(st, TP_OK);
    return plan;
}

/* GPU 3 at x4 and a missing NIC: one ERROR each (their cost), at --nodes 1 and 2 alike. */
static void test_check_severity_follows_cost(void **state)
{
    (void)state;
    const char *nodes[] = {"tests/fixtures/dgx_h100_gpu3_x4.xml",
                           "tests/fixtures/dgx_h100_nic3_missing.xml"};
    tp_plan *job_base = node_plan(NULL, 2, true);
    for (int k = 0; k < 2; k++) {
        tp_plan *job_node = node_plan(nodes[k], 2, true);
        for (int n = 1; n <= 2; n++) {
            tp_plan *base = node_plan(NULL, n, true), *node = node_plan(nodes[k], n, false);
            tp_comparison *cmp = NULL;
            tp_error err = {0};
            assert_int_equal(tp_compare_plans(&cmp, base, node, &err), TP_OK);
            int cost_nodes = -1;
            assert_null(tp_comparison_job_cost(cmp, 0, &cost_nodes));
            assert_int_equal(cost_nodes, 0);
            assert_int_equal(tp_comparison_set_job(cmp, job_base, job_node, &err), TP_OK);
            const tp_job_cost *cost = tp_comparison_job_cost(cmp, 0, &cost_nodes);
            assert_non_null(cost);
            assert_int_equal(cost_nodes, 2);
            assert_true(cost->worst_change_pct <= -TP_COST_ERROR_PCT);
            assert_int_equal(tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR), 1);
            assert_int_equal(tp_comparison_count_severity(cmp, TP_SEVERITY_WARN), 0);
            /* Every other non-INFO difference is a consequence, listed under the cause. */
            for (size_t i = 0; i < tp_comparison_count(cmp); i++) {
                const tp_difference *d = tp_comparison_get(cmp, i);
                if (d->layer != TP_LAYER_SYSTEM)
                    assert_true(d->consequence);
            }
            tp_comparison_free(cmp);
            tp_plan_free(base);
            tp_plan_free(node);
        }
        tp_plan_free(job_node);
    }
    tp_plan_free(job_base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_algo_typo),       cmocka_unit_test(test_valid_settings_silent),
        cmocka_unit_test(test_ib_hca_fallback), cmocka_unit_test(test_config_only),
        cmocka_unit_test(test_cost_same_plan),  cmocka_unit_test(test_check_severity_follows_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
