/*
 * Every public function of include/topoplan.h at its boundary: each pointer argument NULL in
 * turn and integers out of range (negative, INT_MIN/INT_MAX, past the end) give
 * TP_ERR_ARGUMENT (or the documented neutral value for functions without a status), never a
 * crash or a read past a block. Run under valgrind or ASan (check-valgrind, check-san).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "topoplan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define V100 "tests/fixtures/v100_nv2.xml"
#define ARG TP_ERR_ARGUMENT

static const int bad_ints[] = {-1, INT_MIN, INT_MAX, 1 << 20};

typedef struct fixture {
    tp_plan *plan;
    tp_config *cfg;
    FILE *sink;
    tp_error err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    const char *const none[] = {NULL};
    tp_job job = TP_JOB_INIT;
    job.n_nodes = 2;
    if (!f || tp_config_new(&f->cfg, none, &f->err) != TP_OK ||
        tp_plan_file(&f->plan, V100, &job, f->cfg, &f->err) != TP_OK ||
        !(f->sink = fopen("/dev/null", "w")))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tp_plan_free(f->plan);
    tp_config_free(f->cfg);
    fclose(f->sink);
    free(f);
    return 0;
}

static void test_config_and_files(void **state)
{
    fixture *f = *state;
    tp_error *e = &f->err;
    char *text = NULL;
    size_t len = 0;
    tp_config *cfg = NULL;
    assert_int_equal(tp_read_file(NULL, &len, V100, e), ARG);
    assert_int_equal(tp_read_file(&text, NULL, V100, e), ARG);
    assert_int_equal(tp_read_file(&text, &len, NULL, e), ARG);
    assert_int_equal(tp_config_copy(NULL, f->cfg, e), ARG);
    assert_int_equal(tp_config_copy(&cfg, NULL, e), ARG);
    assert_int_equal(tp_config_load_env_text(NULL, "A=1", 3, "x", e), ARG);
    assert_int_equal(tp_config_load_env_text(f->cfg, NULL, 3, "x", e), ARG);
    assert_null(tp_config_source(NULL, "NCCL_ALGO"));
    assert_null(tp_config_source(f->cfg, NULL));
    assert_int_equal(tp_config_warning_count(NULL), 0);
    assert_null(tp_config_warning(NULL, 0));
    assert_null(tp_config_warning(f->cfg, SIZE_MAX));
    assert_int_equal(tp_report_env(NULL, f->cfg, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_report_env(f->sink, NULL, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_report_env(f->sink, f->cfg, (tp_format)-1, e), ARG);
    tp_error_format(NULL, NULL, 0);
    char buf[8];
    tp_error_format(NULL, buf, sizeof(buf));
    assert_true(memchr(buf, '\0', sizeof(buf)) != NULL);
    assert_non_null(tp_status_name((tp_status)-7));
    assert_int_equal(tp_version(NULL, NULL, NULL), (unsigned)TOPOPLAN_VERSION_NUMBER);
    assert_null(text);
}

static void test_reports(void **state)
{
    fixture *f = *state;
    tp_error *e = &f->err;
    tp_status (*reports[])(FILE *, const tp_plan *, tp_format, tp_error *) = {
        tp_report_paths, tp_report_search, tp_report_search_pruning,
        tp_report_plan,  tp_report_nics,   tp_report_matrix,
    };
    for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
        assert_int_equal(reports[i](NULL, f->plan, TP_FORMAT_TEXT, e), ARG);
        assert_int_equal(reports[i](f->sink, NULL, TP_FORMAT_TEXT, e), ARG);
        assert_int_equal(reports[i](f->sink, f->plan, (tp_format)-1, e), ARG);
        assert_int_equal(reports[i](f->sink, f->plan, (tp_format)99, e), ARG);
    }
    assert_int_equal(tp_report_nccl_log(NULL, f->plan, e), ARG);
    assert_int_equal(tp_report_nccl_log_sizes(f->sink, NULL, e), ARG);
    assert_int_equal(tp_report_topology_xml(NULL, f->plan, e), ARG);
    assert_int_equal(tp_report_plan_picture(NULL, f->plan, -1, e), ARG);
    tp_tune_options bad = {.coll = 99};
    assert_int_equal(tp_report_tune(NULL, f->plan, NULL, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_report_tune(f->sink, NULL, NULL, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_report_tune(f->sink, f->plan, &bad, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_report_tune_svg(f->sink, f->plan, &bad, e), ARG);
    assert_int_equal(tp_report_validate(NULL, f->plan, NULL, NULL, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_report_builtins(NULL, NULL, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_report_hca(f->sink, "mlx5", NULL, 2, TP_FORMAT_TEXT, e), ARG);
    tp_hca_port port = {NULL, 1};
    assert_int_equal(tp_report_hca(f->sink, "mlx5", &port, 1, TP_FORMAT_TEXT, e), ARG);
}

static void test_queries(void **state)
{
    fixture *f = *state;
    const tp_system *sys = tp_plan_system(f->plan);
    tp_node_info node;
    tp_link_info link;
    tp_path_info path;
    tp_graph_summary g;
    tp_decision d;
    tp_rank_channel rc;
    tp_nic_choice nic;
    tp_tune_call call;
    tp_channels_info ch;
    tp_job_info job;
    int count = 0;
    float lat = 0, bw = 0;
    assert_null(tp_plan_system(NULL));
    assert_int_equal(tp_plan_job(f->plan, NULL, sizeof(job)), ARG);
    assert_int_equal(tp_plan_channels(f->plan, NULL, sizeof(ch)), ARG);
    assert_int_equal(tp_plan_log_count(NULL), -1);
    assert_int_equal(tp_plan_nic_note_count(NULL), -1);
    assert_int_equal(tp_plan_note_count(NULL), 0);
    assert_null(tp_plan_note(f->plan, SIZE_MAX));
    for (size_t i = 0; i < sizeof(bad_ints) / sizeof(bad_ints[0]); i++) {
        int v = bad_ints[i];
        assert_null(tp_plan_log_line(f->plan, v, NULL));
        assert_null(tp_plan_nic_note(f->plan, v));
        assert_int_equal(tp_system_node_count(sys, (tp_node_type)v), -1);
        assert_int_equal(tp_system_node(sys, TP_NODE_GPU, v, &node, sizeof(node)), ARG);
        assert_int_equal(tp_system_node(sys, (tp_node_type)v, 0, &node, sizeof(node)), ARG);
        assert_int_equal(tp_system_link(sys, TP_NODE_GPU, 0, v, &link, sizeof(link)), ARG);
        assert_int_equal(tp_system_path(sys, TP_NODE_GPU, 0, TP_NODE_GPU, v, &path, sizeof(path)),
                         ARG);
        assert_int_equal(
            tp_system_path_hop(sys, TP_NODE_GPU, 0, TP_NODE_GPU, 1, v, &link, sizeof(link)), ARG);
        assert_int_equal(tp_system_find(sys, (tp_node_type)v, 0), -1);
        assert_int_equal(tp_system_gpu_of_rank(sys, v), -1);
        assert_int_equal(tp_plan_graph(f->plan, (tp_graph_kind)v, &g, sizeof(g)), ARG);
        assert_null(tp_plan_graph_gpus(f->plan, TP_GRAPH_RING, v, &count));
        assert_null(tp_plan_graph_nets(f->plan, (tp_graph_kind)v, 0, &count));
        assert_int_equal(tp_plan_graph_decision(f->plan, TP_GRAPH_RING, v, &d, sizeof(d)), ARG);
        assert_int_equal(tp_plan_rank_channel(f->plan, v, 0, &rc, sizeof(rc)), ARG);
        assert_int_equal(tp_plan_rank_channel(f->plan, 0, v, &rc, sizeof(rc)), ARG);
        assert_null(tp_plan_ring(f->plan, v, &count));
        assert_int_equal(tp_plan_p2p_channel(f->plan, v, 0, 0), -1);
        assert_int_equal(tp_plan_p2p_channel(f->plan, 0, v, 0), -1);
        assert_int_equal(tp_plan_p2p_channel(f->plan, 0, 1, v), -1);
        assert_int_equal(tp_plan_nic(f->plan, v, 0, -1, &nic, sizeof(nic)), ARG);
        assert_int_equal(tp_plan_nic(f->plan, 0, v, -1, &nic, sizeof(nic)), ARG);
        assert_int_equal(tp_plan_tune_call(f->plan, v, 1024, &call, sizeof(call)), ARG);
        assert_int_equal(tp_plan_tune_entry(f->plan, v, 0, 0, &lat, &bw), ARG);
        assert_int_equal(tp_plan_tune_entry(f->plan, 4, v, 0, &lat, &bw), ARG);
        assert_null(tp_tune_coll_name(v));
        assert_null(tp_tune_algo_name(v));
        assert_null(tp_tune_proto_name(v));
        assert_string_equal(tp_node_type_str((tp_node_type)v), "?");
        assert_string_equal(tp_path_type_str((tp_path_type)v), "?");
        assert_string_equal(tp_graph_kind_str((tp_graph_kind)v), "?");
    }
    assert_int_equal(tp_system_node(NULL, TP_NODE_GPU, 0, &node, sizeof(node)), ARG);
    assert_int_equal(tp_system_node(sys, TP_NODE_GPU, 0, NULL, sizeof(node)), ARG);
    assert_int_equal(tp_system_link(sys, TP_NODE_GPU, 0, 0, NULL, sizeof(link)), ARG);
    assert_int_equal(tp_system_path(sys, TP_NODE_GPU, 0, TP_NODE_GPU, 1, NULL, 0), ARG);
    assert_int_equal(tp_plan_graph(f->plan, TP_GRAPH_RING, NULL, sizeof(g)), ARG);
    assert_null(tp_plan_graph_gpus(f->plan, TP_GRAPH_RING, 0, NULL));
    assert_int_equal(tp_plan_nic(f->plan, 0, 0, -1, NULL, sizeof(nic)), ARG);
    assert_int_equal(tp_plan_tune_call(f->plan, 4, 0, &call, sizeof(call)), ARG);
    assert_int_equal(tp_plan_tune_call(f->plan, 4, 1024, NULL, sizeof(call)), ARG);
    assert_int_equal(tp_plan_tune_entry(f->plan, 4, 0, 0, NULL, &bw), ARG);
    assert_int_equal(tp_tune_coll_from_name(NULL), -1);
    assert_null(tp_builtin_xml(NULL));
    assert_null(tp_builtin_name(SIZE_MAX));
    assert_null(tp_sku_name(SIZE_MAX));
}

static void test_tools(void **state)
{
    fixture *f = *state;
    tp_error *e = &f->err;
    tp_mutation m = {TP_MUT_SET, NULL};
    tp_graph_check *chk = NULL;
    tp_comparison *cmp = NULL;
    tp_completion *c = NULL;
    tp_lints *l = NULL;
    tp_findings *fi = NULL;
    char buf[16];
    assert_int_equal(tp_mutate_buffer(f->sink, "<system/>", 9, "x", &m, 1, e), ARG);
    assert_int_equal(tp_mutate_buffer(NULL, "<system/>", 9, "x", NULL, 0, e), ARG);
    assert_int_equal(tp_mutate_buffer(f->sink, "<system/>", 9, "x", NULL, 1, e), ARG);
    assert_int_equal(tp_mutate_file_checked(f->sink, NULL, NULL, 0, e), ARG);
    assert_int_equal(tp_graph_check_buffer(&chk, f->plan, NULL, 3, "x", e), ARG);
    assert_int_equal(tp_graph_check_buffer(NULL, f->plan, "<graphs/>", 9, "x", e), ARG);
    assert_int_equal(tp_graph_check_feasible(NULL), 0);
    assert_int_equal(tp_graph_check_error_count(NULL), 0);
    assert_int_equal(tp_compare_plans(&cmp, f->plan, NULL, e), ARG);
    assert_int_equal(tp_comparison_count(NULL), 0);
    assert_null(tp_comparison_get(NULL, 0));
    assert_string_equal(tp_comparison_why(NULL), "");
    assert_int_equal(tp_hca_selects(NULL, "mlx5_0", 1), 1); /* NULL: NCCL_IB_HCA unset */
    assert_int_equal(tp_hca_selects("mlx5", NULL, 1), 0);
    assert_int_equal(tp_hca_prefix_trap(NULL, "mlx5_0", 1, buf, sizeof(buf)), 0);
    assert_int_equal(tp_complete_buffer(&c, NULL, 3, "x", NULL, e), ARG);
    assert_int_equal(tp_complete_buffer(NULL, "<system/>", 9, "x", NULL, e), ARG);
    assert_null(tp_completion_xml(NULL));
    assert_null(tp_completion_get(NULL, 0));
    assert_int_equal(tp_report_completion(f->sink, NULL, TP_FORMAT_TEXT, e), ARG);
    assert_int_equal(tp_sku_title(SIZE_MAX, buf, sizeof(buf), e), ARG);
    assert_int_equal(tp_sku_title(0, NULL, 8, e), ARG);
    assert_int_equal(tp_lint_buffer(&l, NULL, 3, "x", NULL, e), ARG);
    assert_int_equal(tp_lint_buffer(NULL, "<system/>", 9, "x", NULL, e), ARG);
    assert_int_equal(tp_lint_file(&l, NULL, NULL, e), ARG);
    assert_int_equal(tp_lint_plan(&l, NULL, NULL, e), ARG);
    assert_int_equal(tp_plan_nic_findings(&fi, NULL, e), ARG);
    assert_int_equal(tp_plan_nic_findings(NULL, f->plan, e), ARG);
    assert_int_equal(tp_findings_count(NULL), -1);
    assert_null(tp_findings_get(NULL, 0));
    assert_int_equal(tp_plan_write_dumps(NULL, e), ARG);
    assert_null(chk);
    assert_null(cmp);
    assert_null(c);
    assert_null(l);
    assert_null(fi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_and_files),
        cmocka_unit_test(test_reports),
        cmocka_unit_test(test_queries),
        cmocka_unit_test(test_tools),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
