/* What-if edits of a topology XML (topoplan mutate). */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *mutate(const char *xml, const tp_mutation *muts, size_t n, tp_status *st_out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tp_error err = {0};
    *st_out = tp_mutate_buffer(f, xml, strlen(xml), "<test>", muts, n, &err);
    fclose(f);
    return buf;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_mutate_nvlink_removal_is_symmetric_and_changes_the_plan(void **state)
{
    (void)state;
    char *xml = helpers_fixture("v100_nv2.xml");
    tp_mutation m[] = {{TP_MUT_NVLINK, "1a:00.0,1c:00.0=0"}};
    tp_status st;
    char *out = mutate(xml, m, 1, &st);
    assert_int_equal(st, TP_OK);
    assert_int_equal(count(xml, "<nvlink "), 12);
    assert_int_equal(count(out, "<nvlink "), 10);
    tp_plan *plan = helpers_plan(out, NULL, 1, 0);
    int g0 = helpers_gpu_index(plan->sys, 0x1a000), g1 = helpers_gpu_index(plan->sys, 0x1c000);
    assert_int_equal(plan->sys->nodes[TP_NODE_GPU].nodes[g0].paths[TP_NODE_GPU][g1].type,
                     TP_PATH_NVB); /* relayed by another GPU over NVLink */
    assert_int_equal(plan->channels.n_channels, 8);
    tp_plan_free(plan);
    free(out);
    free(xml);
}

static void test_mutate_set_routes_attributes(void **state)
{
    (void)state;
    char *xml = helpers_fixture("v100_nv2.xml");
    tp_mutation m[] = {{TP_MUT_SET, "0000:1C:00.0:link_width=4"}, {TP_MUT_SET, "1c:00.0:sm=80"},
                       {TP_MUT_SET_NET, "eth0:speed=100000"}, {TP_MUT_SET_CPU, "0:modelid=106"}};
    tp_status st;
    char *out = mutate(xml, m, ARRAY_LEN(m), &st);
    assert_int_equal(st, TP_OK);
    assert_non_null(strstr(out, "link_width=\"4\""));
    assert_non_null(strstr(out, "<gpu dev=\"1\" sm=\"80\""));
    assert_non_null(strstr(out, "speed=\"100000\""));
    assert_non_null(strstr(out, "modelid=\"106\""));
    free(out);
    free(xml);
}

static void test_mutate_remove_drops_dangling_nvlinks(void **state)
{
    (void)state;
    char *xml = helpers_fixture("v100_nv2.xml");
    tp_mutation m[] = {{TP_MUT_REMOVE, "1e:00.0"}, {TP_MUT_REMOVE_NET, "eth0"}};
    tp_status st;
    char *out = mutate(xml, m, ARRAY_LEN(m), &st);
    assert_int_equal(st, TP_OK);
    assert_null(strstr(out, "1e:00.0"));
    assert_int_equal(count(out, "<nvlink "), 6);
    assert_null(strstr(out, "<nic"));
    tp_plan *plan = helpers_plan(out, NULL, 1, 0);
    assert_int_equal(plan->sys->nodes[TP_NODE_GPU].count, 3);
    tp_plan_free(plan);
    free(out);
    free(xml);
}

static void test_mutate_bad_specs_fail_with_config_error(void **state)
{
    (void)state;
    char *xml = helpers_fixture("v100_nv2.xml");
    static const tp_mutation bad[] = {
        {TP_MUT_SET, "1a:00.0"},          {TP_MUT_SET, "zz:00.0:link_width=4"},
        {TP_MUT_REMOVE, "99:00.0"},       {TP_MUT_REMOVE_NET, "ib9"},
        {TP_MUT_NVLINK, "1a:00.0=2"},     {TP_MUT_NVLINK, "1a:00.0,1c:00.0=-1"},
        {TP_MUT_SET_CPU, "7:arch=x86_64"}, {TP_MUT_SET, "18:00.0:sm=70"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        tp_status st;
        free(mutate(xml, &bad[i], 1, &st));
        if (st != TP_ERR_CONFIG)
            print_error("spec \"%s\" was accepted\n", bad[i].spec);
        assert_int_equal(st, TP_ERR_CONFIG);
    }
    free(xml);
}

/* Issue 9: an NVLink of a GPU to an NVSwitch taken down changes that GPU's bandwidth in the plan. */
static void test_mutate_nvswitch_links(void **state)
{
    (void)state;
    char *xml = strdup(tp_builtin_xml("dgx-h100"));
    tp_mutation down[] = {{TP_MUT_NVLINK_DOWN, "1a:00.0"}};
    tp_mutation set[] = {{TP_MUT_NVLINK, "1a:00.0,05:00.0=1"}};
    tp_status st;
    char *out = mutate(xml, down, 1, &st);
    assert_int_equal(st, TP_OK);
    /* 5+4+4+5 links to the four switches: the first with the most (5) loses one. */
    assert_non_null(strstr(out, "<nvlink target=\"0000:05:00.0\" count=\"4\""));
    tp_plan *before = helpers_plan(xml, NULL, 1, 0), *after = helpers_plan(out, NULL, 1, 0);
    int g = helpers_gpu_index(after->sys, 0x1a000);
    assert_true(after->sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NVS][0].bw <
                before->sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NVS][0].bw);
    tp_plan_free(before);
    tp_plan_free(after);
    free(out);
    out = mutate(xml, set, 1, &st);
    assert_int_equal(st, TP_OK);
    assert_int_equal(count(out, "count=\"1\""), 1); /* that GPU's link only: no switch GPU side */
    free(out);
    free(xml);
}

/* Issue 9: a GPU and a NIC added as copies get the next dev/rank, and the NIC a new guid. */
static void test_mutate_add_devices(void **state)
{
    (void)state;
    char *xml = strdup(tp_builtin_xml("dgx-h100"));
    tp_mutation add[] = {{TP_MUT_ADD, "1b:00.0=1a:00.0"}, {TP_MUT_ADD, "19:01.0=19:00.0"}};
    tp_status st;
    char *out = mutate(xml, add, 2, &st);
    assert_int_equal(st, TP_OK);
    tp_plan *plan = helpers_plan(out, NULL, 2, 0);
    assert_int_equal(plan->host_sys->nodes[TP_NODE_GPU].count, 9);
    assert_int_equal(plan->host_sys->nodes[TP_NODE_NET].count, 9);
    tp_plan_free(plan);
    free(out);
    tp_mutation bad[] = {{TP_MUT_ADD, "1a:00.0=19:00.0"}, {TP_MUT_ADD, "55:00.0=18:00.0"}};
    for (size_t i = 0; i < 2; i++) {
        out = mutate(xml, &bad[i], 1, &st);
        assert_int_equal(st, TP_ERR_CONFIG); /* bus id taken; a bridge */
        free(out);
    }
    free(xml);
}

/* Issue 9: a value the loader rejects fails naming the edit; a good one passes. */
static void test_mutate_checked_values(void **state)
{
    (void)state;
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    tp_error err = {0};
    tp_mutation bad[] = {{TP_MUT_SET, "1c:00.0:link_width=abc"}};
    assert_int_equal(tp_mutate_file_checked(sink, "tests/fixtures/v100_nv2.xml", bad, 1, &err),
                     TP_ERR_CONFIG);
    assert_string_equal(err.source, "--set");
    assert_non_null(strstr(err.message, "link_width=\"abc\" is not a number"));
    tp_mutation good[] = {{TP_MUT_SET, "1c:00.0:link_width=8"}};
    assert_int_equal(tp_mutate_file_checked(sink, "tests/fixtures/v100_nv2.xml", good, 1, &err),
                     TP_OK);
    assert_int_equal(tp_mutate_file_checked(NULL, "x", good, 1, &err), TP_ERR_ARGUMENT);
    fclose(sink);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutate_nvlink_removal_is_symmetric_and_changes_the_plan),
        cmocka_unit_test(test_mutate_set_routes_attributes),
        cmocka_unit_test(test_mutate_remove_drops_dangling_nvlinks),
        cmocka_unit_test(test_mutate_bad_specs_fail_with_config_error),
        cmocka_unit_test(test_mutate_nvswitch_links),
        cmocka_unit_test(test_mutate_add_devices),
        cmocka_unit_test(test_mutate_checked_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
