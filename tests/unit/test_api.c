/*
 * The public API's boundary, as a program using only include/topoplan.h sees
 * it: ownership on every error path (a failed call leaves *out NULL except
 * for the failures NCCL itself reports), the library's own vocabulary in
 * errors, NULL and out-of-range arguments, versions. `make check-valgrind`
 * runs this binary with --leak-check=full: a leak on any path here fails it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "topoplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define V100 "tests/fixtures/v100_nv2.xml"

static tp_config *empty_config(void)
{
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, none, &err), TP_OK);
    return cfg;
}

static tp_config *config_of(const char *key, const char *value)
{
    tp_config *cfg = empty_config();
    tp_error err = {0};
    assert_int_equal(tp_config_set(cfg, key, value, &err), TP_OK);
    return cfg;
}

/* A plan call that must fail with `want`, leaving *out NULL. */
static tp_error plan_fails(const char *path, tp_job job, const tp_config *cfg, tp_status want)
{
    tp_plan *plan = (tp_plan *)&plan; /* not NULL: the call must clear it */
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, path, &job, cfg, &err), want);
    assert_null(plan);
    assert_int_equal(err.code, want);
    return err;
}

static void test_bad_rank_leaves_no_plan(void **state)
{
    (void)state;
    tp_job job = {TP_JOB_VERSION, 1, 4, NULL, 0};
    tp_error err = plan_fails(V100, job, NULL, TP_ERR_USAGE);
    assert_string_equal(err.source, "job.rank");
    assert_string_equal(err.message, "rank 4 out of range (job has 4 ranks)");
    /* The same through the buffer entry point, the one the issue reported. */
    const char *xml = tp_builtin_xml("v100-nv2");
    tp_plan *plan = NULL;
    assert_non_null(xml);
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "b", &job, NULL, &err), TP_ERR_USAGE);
    assert_null(plan);
    assert_string_equal(err.source, "job.rank");
}

static void test_bad_job_fields(void **state)
{
    (void)state;
    tp_error err = plan_fails(V100, (tp_job){TP_JOB_VERSION, 0, 0, NULL, 0}, NULL, TP_ERR_USAGE);
    assert_string_equal(err.source, "job.n_nodes");
    err = plan_fails(V100, (tp_job){TP_JOB_VERSION, TP_MAX_JOB_NODES + 1, 0, NULL, 0}, NULL,
                     TP_ERR_USAGE);
    assert_string_equal(err.source, "job.n_nodes");
    err = plan_fails(V100, (tp_job){TP_JOB_VERSION, 1, -1, NULL, 0}, NULL, TP_ERR_USAGE);
    assert_string_equal(err.source, "job.rank");
    err = plan_fails(V100, (tp_job){TP_JOB_VERSION + 1, 1, 0, NULL, 0}, NULL, TP_ERR_ARGUMENT);
    assert_string_equal(err.source, "job.version");
    /* Checked before they size anything: -1 once wrote past a block of no kinds. */
    const char *topos[2] = {V100, NULL};
    err = plan_fails(V100, (tp_job){TP_JOB_VERSION, 2, 0, topos, -1}, NULL, TP_ERR_USAGE);
    assert_string_equal(err.source, "job.node_topos");
    err = plan_fails(V100, (tp_job){TP_JOB_VERSION, 3, 0, topos, 2}, NULL, TP_ERR_ARGUMENT);
    assert_string_equal(err.source, "job.node_topos");
    assert_string_equal(err.message, "entry 1 (node 2's topology path) is NULL");
}

/* A topology file NCCL 2.22.3 itself refuses: the failed plan ends with NCCL's last line. */
static void nccl_refuses(const char *path, tp_status want, const char *last_line, bool is_warn)
{
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, path, &job, NULL, &err), want);
    assert_non_null(plan);
    assert_int_equal(tp_plan_status(plan), want);
    assert_null(tp_plan_system(plan));
    int n = tp_plan_log_count(plan);
    bool warn = !is_warn;
    assert_true(n > 0);
    assert_string_equal(tp_plan_log_line(plan, n - 1, &warn), last_line);
    assert_int_equal(warn, is_warn);
    tp_plan_free(plan);
}

static void test_input_failures_leave_no_plan(void **state)
{
    (void)state;
    tp_job job = TP_JOB_INIT;
    /* NCCL cannot open it: it warns, then detects the machine (not followed). */
    nccl_refuses("tests/fixtures/no-such-file.xml", TP_ERR_IO,
                 "Could not open XML topology file tests/fixtures/no-such-file.xml : "
                 "No such file or directory",
                 true);
    /* NCCL's parser stops at the end of the file, inside a tag. */
    nccl_refuses("tests/errors/truncated.xml", TP_ERR_XML, "graph/topo.cc:728 -> 3", false);
    /* An empty file NCCL reads as no topology (then detects the machine): no line. */
    plan_fails("tests/errors/empty.xml", job, NULL, TP_ERR_XML);
    tp_plan *plan = NULL;
    tp_error err = {0};
    const char no_gpu[] = "<system version=\"1\"><cpu numaid=\"0\"/></system>";
    assert_int_equal(tp_plan_buffer(&plan, no_gpu, strlen(no_gpu), NULL, &job, NULL, &err),
                     TP_ERR_TOPOLOGY);
    assert_null(plan);
}

static void test_null_arguments(void **state)
{
    (void)state;
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(NULL, V100, &job, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_file(&plan, NULL, &job, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_file(&plan, V100, NULL, NULL, NULL), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_buffer(&plan, NULL, 3, NULL, &job, NULL, &err), TP_ERR_ARGUMENT);
    assert_null(plan);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(tp_read_file(&text, &len, NULL, &err), TP_ERR_ARGUMENT);
    assert_string_equal(err.source, "tp_read_file");
    assert_string_equal(err.message, "path is NULL");
    assert_int_equal(tp_read_file(NULL, &len, V100, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_read_file(&text, NULL, V100, &err), TP_ERR_ARGUMENT);
    assert_null(text);
    assert_int_equal(tp_config_new(NULL, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_config_set(NULL, "NCCL_ALGO", "ring", &err), TP_ERR_ARGUMENT);
    tp_config *cfg = empty_config();
    assert_int_equal(tp_config_set(cfg, NULL, "1", &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_config_set(cfg, "NCCL_CROSS_NIC", NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_config_write(NULL, cfg, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_config_write(stdout, NULL, &err), TP_ERR_ARGUMENT);
    tp_config_free(cfg);
    assert_int_equal(tp_report_nccl_log(stdout, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_paths(stdout, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_search(stdout, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_plan(stdout, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_nics(stdout, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_topology_xml(stdout, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_write_dumps(NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_diff(stdout, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_check(stdout, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_graph_check(stdout, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    tp_mutation m = {TP_MUT_REMOVE, NULL};
    assert_int_equal(tp_mutate_buffer(stdout, "<system/>", 9, NULL, &m, 1, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_mutate_file(stdout, NULL, NULL, 0, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_graph_check_file(NULL, NULL, "x", &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_compare_plans(NULL, NULL, NULL, &err), TP_ERR_ARGUMENT);
    /* Getters give their error value. */
    assert_int_equal(tp_graph_check_feasible(NULL), 0);
    assert_int_equal(tp_graph_check_error_count(NULL), 0);
    assert_int_equal(tp_comparison_count(NULL), 0);
    assert_null(tp_comparison_get(NULL, 0));
    assert_int_equal(tp_comparison_count_severity(NULL, TP_SEVERITY_ERROR), 0);
    assert_int_equal(tp_comparison_first_layer(NULL), -1);
    assert_string_equal(tp_comparison_why(NULL), "");
    assert_int_equal(tp_plan_note_count(NULL), 0);
    assert_null(tp_plan_note(NULL, 0));
    assert_null(tp_builtin_xml(NULL));
    assert_int_equal(tp_hca_selects("mlx5", NULL, 1), 0);
    assert_int_equal(tp_hca_prefix_trap("mlx5_1", NULL, 1, NULL, 0), 0);
    assert_true(tp_plan_stage_us(NULL, TP_STAGE_XML) == 0.0);
    char buf[64];
    tp_error_format(NULL, buf, sizeof(buf));
    assert_string_equal(buf, "(no error record)");
    tp_error_format(&err, NULL, 10);
    tp_plan_free(NULL);
    tp_config_free(NULL);
    tp_graph_check_free(NULL);
    tp_comparison_free(NULL);
}

static tp_plan *v100_plan(void)
{
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, V100, &job, NULL, &err), TP_OK);
    assert_int_equal(tp_plan_status(plan), TP_OK);
    return plan;
}

static void test_out_of_range_format(void **state)
{
    (void)state;
    tp_plan *plan = v100_plan();
    tp_error err = {0};
    assert_int_equal(tp_report_plan(stdout, plan, (tp_format)7, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_paths(NULL, plan, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    /* A format a report does not have is a configuration error naming the argument. */
    assert_int_equal(tp_report_search(stdout, plan, TP_FORMAT_DOT, &err), TP_ERR_CONFIG);
    assert_string_equal(err.source, "fmt");
    tp_plan_free(plan);
}

/* A bad NCCL_GRAPH_FILE is a failure NCCL reports: the plan comes back with its log. */
static void test_nccl_failure_keeps_plan(void **state)
{
    (void)state;
    tp_config *cfg = config_of("NCCL_GRAPH_FILE", "tests/fixtures/graph_v100_nv2_bad_dev.xml");
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    tp_error err = {0};
    tp_status st = tp_plan_file(&plan, V100, &job, cfg, &err);
    tp_config_free(cfg);
    assert_int_equal(st, TP_ERR_GRAPH);
    assert_non_null(plan);
    assert_int_equal(tp_plan_status(plan), TP_ERR_GRAPH);
    assert_true(tp_plan_log_count(plan) > 0);
    /* Its log is readable; everything that needs a finished plan says no. */
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    assert_int_equal(tp_report_nccl_log(sink, plan, &err), TP_OK);
    assert_int_equal(tp_report_plan(sink, plan, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_search(sink, plan, TP_FORMAT_JSON, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_nics(sink, plan, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_paths(sink, plan, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    fclose(sink);
    tp_graph_summary g;
    assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &g, sizeof(g)), TP_ERR_ARGUMENT);
    tp_channels_info ch;
    assert_int_equal(tp_plan_channels(plan, &ch, sizeof(ch)), TP_ERR_ARGUMENT);
    tp_graph_check *chk = (tp_graph_check *)&chk;
    assert_int_equal(
        tp_graph_check_file(&chk, plan, "tests/fixtures/graph_v100_nv2_exact.xml", &err),
        TP_ERR_ARGUMENT);
    assert_null(chk);
    tp_plan *good = v100_plan();
    tp_comparison *cmp = (tp_comparison *)&cmp;
    assert_int_equal(tp_compare_plans(&cmp, good, plan, &err), TP_ERR_ARGUMENT);
    assert_null(cmp);
    tp_plan_free(good);
    tp_plan_free(plan);
}

/* A topology NCCL rejects while building its system is NCCL's failure too. */
static void test_nccl_topology_failure_keeps_plan(void **state)
{
    (void)state;
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, "tests/errors/sys_bad_version.xml", &job, NULL, &err),
                     TP_ERR_TOPOLOGY);
    assert_non_null(plan);
    assert_int_equal(tp_plan_status(plan), TP_ERR_TOPOLOGY);
    assert_null(tp_plan_system(plan));
    tp_plan_free(plan);
}

/* NCCL 2.22.3 fails a multi-node job with MNNVL forced on: also reported with the plan. */
static void test_mnnvl_failure_keeps_plan(void **state)
{
    (void)state;
    tp_config *cfg = config_of("NCCL_MNNVL_ENABLE", "1");
    tp_job job = {TP_JOB_VERSION, 2, 0, NULL, 0};
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, V100, &job, cfg, &err), TP_ERR_GRAPH);
    tp_config_free(cfg);
    assert_non_null(plan);
    bool warn = false;
    int n = tp_plan_log_count(plan);
    assert_true(n > 0);
    assert_string_equal(tp_plan_log_line(plan, n - 1, &warn),
                        "MNNVL is not supported on this system");
    assert_true(warn);
    tp_plan_free(plan);
}

static void test_config_errors(void **state)
{
    (void)state;
    /* NCCL 2.22.3 reads "banana" as 0 and ignores an unknown level: warnings, not errors. */
    const char *const bad[] = {"NCCL_CROSS_NIC=banana", NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, bad, &err), TP_OK);
    assert_int_equal(tp_config_warning_count(cfg), 1);
    tp_config_free(cfg);
    cfg = empty_config();
    assert_int_equal(tp_config_set(cfg, "NCCL_P2P_LEVEL", "NOPE", &err), TP_OK);
    assert_int_equal(tp_config_warning_count(cfg), 1);
    assert_int_equal(tp_config_set_from(NULL, "NCCL_P2P_LEVEL", "SYS", "x", &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_config_warning_count(NULL), 0);
    tp_config_free(cfg);
}

static void test_other_error_paths(void **state)
{
    (void)state;
    tp_error err = {0};
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    tp_mutation m = {TP_MUT_REMOVE, "99:00.0"};
    assert_int_equal(tp_mutate_file(sink, V100, &m, 1, &err), TP_ERR_CONFIG);
    assert_int_equal(tp_mutate_file(sink, "tests/fixtures/none.xml", &m, 1, &err), TP_ERR_IO);
    assert_int_equal(tp_mutate_buffer(sink, "<system", 7, NULL, NULL, 0, &err), TP_ERR_XML);
    tp_plan *plan = v100_plan();
    tp_graph_check *chk = (tp_graph_check *)&chk;
    assert_int_equal(tp_graph_check_file(&chk, plan, "tests/fixtures/none.xml", &err), TP_ERR_IO);
    assert_null(chk);
    chk = (tp_graph_check *)&chk;
    assert_int_equal(tp_graph_check_buffer(&chk, plan, "<graphs", 7, NULL, &err), TP_ERR_XML);
    assert_null(chk);
    chk = (tp_graph_check *)&chk;
    assert_int_equal(tp_graph_check_buffer(&chk, plan, "<system/>", 9, NULL, &err), TP_ERR_GRAPH);
    assert_null(chk);
    assert_int_equal(tp_report_topology_xml(sink, plan, &err), TP_OK);
    fclose(sink);
    tp_plan_free(plan);
}

static void test_versions(void **state)
{
    (void)state;
    int major = -1, minor = -1, patch = -1;
    assert_int_equal(tp_version(&major, &minor, &patch), TOPOPLAN_VERSION_NUMBER);
    assert_int_equal(tp_version(NULL, NULL, NULL), TOPOPLAN_VERSION_NUMBER);
    char text[32];
    snprintf(text, sizeof(text), "%d.%d.%d", major, minor, patch);
    assert_string_equal(text, tp_version_string());
    assert_string_equal(TOPOPLAN_VERSION, tp_version_string());
    /* NCCL_VERSION_CODE of 2.22.3: major * 10000 + minor * 100 + patch. */
    assert_int_equal(tp_nccl_version(), 2 * 10000 + 22 * 100 + 3);
    assert_string_equal(tp_nccl_version_string(), "2.22.3");
    tp_job job = {99, 99, 99, NULL, 99};
    assert_int_equal(tp_job_init(&job, TP_JOB_VERSION), TP_OK);
    assert_int_equal(job.version, TP_JOB_VERSION);
    assert_int_equal(job.n_nodes, 1);
    assert_int_equal(job.rank, 0);
    assert_int_equal(tp_job_init(NULL, TP_JOB_VERSION), TP_ERR_ARGUMENT);
    assert_int_equal(tp_job_init(&job, TP_JOB_VERSION + 1), TP_ERR_ARGUMENT);
    assert_int_equal(tp_job_init(&job, 0), TP_ERR_ARGUMENT);
    /* A zeroed job (version 0) reads as version 1. */
    tp_job zero = {0};
    zero.n_nodes = 1;
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, V100, &zero, NULL, &err), TP_OK);
    tp_plan_free(plan);
    assert_string_equal(tp_status_name(TP_ERR_ARGUMENT), "invalid argument");
}

/* The catalogues and helpers every program may call without a plan. */
static void test_catalogues(void **state)
{
    (void)state;
    size_t n = tp_builtin_count();
    assert_true(n >= 2);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(tp_builtin_name(i));
        assert_non_null(tp_builtin_about(i));
        assert_non_null(tp_builtin_xml(tp_builtin_name(i)));
    }
    assert_null(tp_builtin_name(n));
    assert_null(tp_builtin_about(n));
    size_t skus = tp_sku_count();
    char title[256];
    tp_error err = {0};
    for (size_t i = 0; i < skus; i++) {
        assert_non_null(tp_sku_name(i));
        assert_int_equal(tp_sku_title(i, title, sizeof(title), &err), TP_OK);
    }
    assert_null(tp_sku_name(skus));
    char *text = (char *)&text;
    size_t len = 1;
    assert_int_equal(tp_read_file(&text, &len, "tests/fixtures/none.xml", &err), TP_ERR_IO);
    assert_null(text);
    assert_int_equal(tp_read_file(&text, &len, V100, &err), TP_OK);
    assert_true(len > 0 && strstr(text, "<system") != NULL);
    free(text);
}

/* Reports beyond the main ones, on a finished plan and on none. */
static void test_more_reports(void **state)
{
    (void)state;
    tp_plan *plan = v100_plan();
    tp_error err = {0};
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    assert_int_equal(tp_report_search_pruning(sink, plan, TP_FORMAT_TEXT, &err), TP_OK);
    assert_int_equal(tp_report_nccl_log_sizes(sink, plan, &err), TP_OK);
    assert_int_equal(tp_report_search_pruning(sink, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_nccl_log_sizes(NULL, plan, &err), TP_ERR_ARGUMENT);
    fclose(sink);
    tp_plan_free(plan);
}

/* The first line of a JSON document after its "{": the schema name and version. */
static void assert_schema_line(FILE *f, const char *schema)
{
    char line[256], want[128];
    rewind(f);
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "{\n");
    assert_non_null(fgets(line, sizeof(line), f));
    snprintf(want, sizeof(want), "  \"schema\": \"%s\", \"schema_version\": 1,\n", schema);
    assert_string_equal(line, want);
    assert_int_equal(ftruncate(fileno(f), 0), 0);
    rewind(f);
}

/* The reports added for the JSON contract, the matrix and the pictures. */
static void test_contract_reports(void **state)
{
    (void)state;
    tp_plan *plan = v100_plan();
    tp_config *cfg = empty_config();
    tp_error err = {0};
    FILE *f = tmpfile();
    assert_non_null(f);
    const tp_hca_port ports[] = {{"mlx5_1", 1}, {"mlx5_10", 1}};
    assert_int_equal(tp_report_env(f, cfg, TP_FORMAT_JSON, &err), TP_OK);
    assert_schema_line(f, "topoplan.env");
    assert_int_equal(tp_report_builtins(f, NULL, TP_FORMAT_JSON, &err), TP_OK);
    assert_schema_line(f, "topoplan.builtins");
    assert_int_equal(tp_report_hca(f, "mlx5_1", ports, 2, TP_FORMAT_JSON, &err), TP_OK);
    assert_schema_line(f, "topoplan.hca");
    assert_int_equal(tp_report_validate(f, plan, NULL, NULL, TP_FORMAT_JSON, &err), TP_OK);
    assert_schema_line(f, "topoplan.validate");
    assert_int_equal(tp_report_matrix(f, plan, TP_FORMAT_JSON, &err), TP_OK);
    assert_schema_line(f, "topoplan.matrix");
    assert_int_equal(tp_report_plan_picture(f, plan, 0, &err), TP_OK);
    assert_int_equal(tp_report_builtins(f, "no-such", TP_FORMAT_TEXT, &err), TP_ERR_CONFIG);
    assert_int_equal(tp_report_env(f, cfg, TP_FORMAT_DOT, &err), TP_ERR_CONFIG);
    assert_int_equal(tp_report_env(NULL, cfg, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_matrix(f, NULL, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_plan_picture(f, NULL, -1, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_validate(f, NULL, NULL, NULL, TP_FORMAT_TEXT, &err),
                     TP_ERR_ARGUMENT);
    fclose(f);
    tp_config_free(cfg);
    tp_plan_free(plan);
}

/*
 * The other modules' entry points are reachable through the public header
 * alone and own what they return (their behaviour is tested in their own
 * unit tests: test_tuning, the provider tests).
 */
static void test_other_modules_reach(void **state)
{
    (void)state;
    tp_error err = {0};
    tp_config *cfg = empty_config(), *copy = NULL;
    assert_int_equal(tp_config_copy(&copy, cfg, &err), TP_OK);
    assert_non_null(copy);
    tp_config_free(copy);
    tp_config_free(cfg);
    const char *xml = tp_builtin_xml("dgx-h100");
    tp_job job = TP_JOB_INIT;
    job.n_nodes = 2;
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "dgx-h100", &job, NULL, &err), TP_OK);
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    tp_tune_options opt = {tp_tune_coll_from_name("AllReduce"), 1024, 1 << 20};
    assert_int_equal(tp_report_tune(sink, plan, &opt, TP_FORMAT_JSON, &err), TP_OK);
    assert_int_equal(tp_report_tune_svg(sink, plan, &opt, &err), TP_OK);
    tp_plan_free(plan);
    const char *partial = "tests/fixtures/provider/p4d_one_cpu.xml";
    tp_lints *lints = NULL;
    assert_int_equal(tp_lint_file(&lints, partial, NULL, &err), TP_OK);
    assert_string_equal(tp_lints_sku(lints), "aws-p4d.24xlarge");
    assert_non_null(tp_lints_candidates(lints));
    /* The plan's own text gives the file's findings, one for one. */
    tp_job one = {.version = TP_JOB_VERSION, .n_nodes = 1};
    assert_int_equal(tp_plan_file(&plan, partial, &one, NULL, &err), TP_OK);
    tp_lints *of_plan = NULL;
    assert_int_equal(tp_lint_plan(&of_plan, plan, NULL, &err), TP_OK);
    assert_true(tp_lints_count(lints) > 0);
    assert_int_equal(tp_lints_count(of_plan), tp_lints_count(lints));
    for (size_t i = 0; i < tp_lints_count(lints); i++)
        assert_string_equal(tp_lints_message(of_plan, i), tp_lints_message(lints, i));
    assert_string_equal(tp_lints_sku(of_plan), tp_lints_sku(lints));
    tp_lints_free(of_plan);
    of_plan = (tp_lints *)&of_plan;
    assert_int_equal(tp_lint_plan(&of_plan, NULL, NULL, &err), TP_ERR_ARGUMENT);
    assert_null(of_plan);
    assert_int_equal(tp_lint_plan(NULL, plan, NULL, &err), TP_ERR_ARGUMENT);
    tp_plan_free(plan);
    tp_lints_free(lints);
    tp_completion *c = NULL;
    assert_int_equal(tp_complete_file(&c, partial, NULL, &err), TP_OK);
    assert_int_equal(tp_report_completion(sink, c, TP_FORMAT_TEXT, &err), TP_OK);
    tp_completion_free(c);
    c = (tp_completion *)&c;
    assert_int_equal(tp_complete_file(&c, "tests/fixtures/none.xml", NULL, &err), TP_ERR_IO);
    assert_null(c);
    fclose(sink);
}

/* The text of a whole file, or "" when it cannot be read. */
static void read_back(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* tp_output replaces its target only when told to keep a whole write. */
static void test_output_replaces_only_on_success(void **state)
{
    (void)state;
    char dir[] = "/tmp/tp_output_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64], text[64];
    snprintf(path, sizeof(path), "%s/out.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);
    tp_error err = {0};
    tp_output *o = NULL;
    /* Not kept: the target stays as it was, and no new file is left beside it. */
    assert_int_equal(tp_output_open(&o, path, &err), TP_OK);
    fputs("new\n", tp_output_stream(o));
    assert_int_equal(tp_output_close(o, false, &err), TP_OK);
    read_back(path, text, sizeof(text));
    assert_string_equal(text, "old\n");
    /* Kept: replaced whole. */
    assert_int_equal(tp_output_open(&o, path, &err), TP_OK);
    fputs("new\n", tp_output_stream(o));
    assert_int_equal(tp_output_close(o, true, &err), TP_OK);
    read_back(path, text, sizeof(text));
    assert_string_equal(text, "new\n");
    /* A write that fails is an I/O error naming the target. */
    assert_int_equal(tp_output_open(&o, "/dev/full", &err), TP_OK);
    fputs("x\n", tp_output_stream(o));
    assert_int_equal(tp_output_close(o, true, &err), TP_ERR_IO);
    assert_string_equal(err.source, "/dev/full");
    /* A folder that does not exist, and NULLs. */
    char missing[80];
    snprintf(missing, sizeof(missing), "%s/no/such", dir);
    assert_int_equal(tp_output_open(&o, missing, &err), TP_ERR_IO);
    assert_null(o);
    assert_int_equal(tp_output_open(NULL, path, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_output_open(&o, NULL, &err), TP_ERR_ARGUMENT);
    assert_null(tp_output_stream(NULL));
    assert_int_equal(tp_output_close(NULL, true, &err), TP_OK);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0); /* empty: no temporary file left */
}

/* "Did you mean" for builtins: the nearest name by edits. */
static void test_builtin_nearest(void **state)
{
    (void)state;
    assert_string_equal(tp_builtin_nearest("dgx-h10"), "dgx-h100");
    assert_string_equal(tp_builtin_nearest("dgx-a100"), "dgx-a100"); /* a name is its own */
    assert_null(tp_builtin_nearest(NULL));
    char very_long[80];
    memset(very_long, 'x', sizeof(very_long) - 1);
    very_long[sizeof(very_long) - 1] = '\0';
    assert_null(tp_builtin_nearest(very_long));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_rank_leaves_no_plan),
        cmocka_unit_test(test_bad_job_fields),
        cmocka_unit_test(test_input_failures_leave_no_plan),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_out_of_range_format),
        cmocka_unit_test(test_nccl_failure_keeps_plan),
        cmocka_unit_test(test_mnnvl_failure_keeps_plan),
        cmocka_unit_test(test_nccl_topology_failure_keeps_plan),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_other_error_paths),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_catalogues),
        cmocka_unit_test(test_more_reports),
        cmocka_unit_test(test_contract_reports),
        cmocka_unit_test(test_other_modules_reach),
        cmocka_unit_test(test_output_replaces_only_on_success),
        cmocka_unit_test(test_builtin_nearest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
