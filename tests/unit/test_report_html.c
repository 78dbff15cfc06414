/*
 * The HTML page of a plan (tp_report_html): the same bytes for the same plan,
 * nothing fetched from the network, every GPU, NIC port and link of the
 * system in the picture, each graph's bounding links resolved to a drawn
 * link, and a 64-node job of nodes that differ under 2 MB with its limiting
 * node drawn; the check page marks the link that differs on both sides. The browser side (script,
 * picking) is make check-report.
 */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DGX "tests/fixtures/dgx_h100.xml"
#define DGX_X8 "tests/fixtures/dgx_h100_gpu0_x8.xml"

static tp_plan *plan_file(const char *path, int n_nodes, const char *odd)
{
    const char *topos[1] = {odd};
    tp_job job = {.version = TP_JOB_VERSION,
                  .n_nodes = n_nodes,
                  .rank = 0,
                  .node_topos = odd ? topos : NULL,
                  .n_node_topos = odd ? 1 : 0};
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, path, &job, NULL, &err), TP_OK);
    return plan;
}

/* The page as a string (caller frees). */
static char *page(const tp_plan *plan, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    tp_error err = {0};
    assert_int_equal(tp_report_html(f, plan, &err), TP_OK);
    assert_int_equal(fclose(f), 0);
    return text;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Node pairs with a link between them, each pair once (as the picture draws them). */
static int link_pairs(const tp_system *sys)
{
    int n = 0;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int i = 0; i < tp_system_node_count(sys, t); i++) {
            tp_node_info node;
            assert_int_equal(tp_system_node(sys, t, i, &node, sizeof(node)), TP_OK);
            for (int l = 0; l < node.n_links; l++) {
                tp_link_info a;
                assert_int_equal(tp_system_link(sys, t, i, l, &a, sizeof(a)), TP_OK);
                bool first = (int)a.to_type > t || ((int)a.to_type == t && a.to_index > i);
                bool back_seen = false; /* a one-way link from the other end counts once */
                if (!first) {
                    tp_node_info other;
                    tp_system_node(sys, a.to_type, a.to_index, &other, sizeof(other));
                    for (int k = 0; k < other.n_links && !back_seen; k++) {
                        tp_link_info b;
                        tp_system_link(sys, a.to_type, a.to_index, k, &b, sizeof(b));
                        back_seen = (int)b.to_type == t && b.to_index == i;
                    }
                }
                n += (first || !back_seen) && !((int)a.to_type == t && a.to_index == i);
            }
        }
    return n;
}

static void test_same_bytes_no_network(void **state)
{
    (void)state;
    tp_plan *plan = plan_file(DGX, 2, NULL);
    size_t la, lb;
    char *a = page(plan, &la), *b = page(plan, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    /* the SVG namespace is the only URL; nothing is loaded from elsewhere */
    assert_int_equal(count(a, "http"), count(a, "http://www.w3.org/2000/svg"));
    assert_int_equal(count(a, " src="), 0);
    assert_int_equal(count(a, "<link"), 0);
    assert_non_null(strstr(a, "<script>"));
    assert_non_null(strstr(a, "</html>\n"));
    free(a);
    free(b);
    tp_plan_free(plan);
}

static void test_every_node_and_link_drawn(void **state)
{
    (void)state;
    tp_plan *plan = plan_file(DGX, 2, NULL);
    const tp_system *sys = tp_plan_system(plan);
    size_t len;
    char *text = page(plan, &len);
    assert_int_equal(count(text, "class=\"node k-GPU"), tp_system_node_count(sys, TP_NODE_GPU));
    assert_int_equal(count(text, "class=\"node k-NET"), tp_system_node_count(sys, TP_NODE_NET));
    assert_int_equal(count(text, "class=\"link t-"), link_pairs(sys));
    /* without the script, ring channel 0 is highlighted and every ring channel can be picked */
    tp_graph_summary ring;
    assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &ring, sizeof(ring)), TP_OK);
    assert_true(count(text, "class=\"link t-NVL on\"") + count(text, "class=\"link t-PCI on\"") >
                0);
    char want[64];
    snprintf(want, sizeof(want), "value=\"ring/%d\"", ring.n_channels - 1);
    assert_non_null(strstr(text, want));
    free(text);
    tp_plan_free(plan);
}

/* Every "limit" line of the explanation has a button naming a drawn link. */
static void test_bounding_links_resolved(void **state)
{
    (void)state;
    tp_plan *plan = plan_file(DGX, 2, NULL);
    size_t len;
    char *text = page(plan, &len);
    /* every "limit" line that names a link (not "no link bound it") */
    int limits = count(text, "<b>limit</b> ") - count(text, "<b>limit</b> no link");
    assert_true(limits > 0);
    assert_int_equal(count(text, "class=\"bound\""), limits);
    assert_int_equal(count(text, "data-links=\"-1\""), 0);
    free(text);
    tp_plan_free(plan);
}

static void test_job_of_64_nodes(void **state)
{
    (void)state;
    tp_plan *plan = plan_file(DGX, 64, DGX_X8);
    size_t len;
    char *text = page(plan, &len);
    assert_true(len < 2u * 1024 * 1024);
    assert_non_null(strstr(text, "The node that limits the job: node 1 (dgx_h100_gpu0_x8.xml)"));
    assert_non_null(strstr(text, "nodes 0, 2-63"));
    /* rings: the first four nodes written out, the other 60 counted */
    assert_non_null(strstr(text, "\xe2\x80\xa6 480 more ranks on 60 more nodes"));
    assert_int_equal(count(text, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"system"), 3);
    free(text);
    tp_plan_free(plan);
}

/* The check page of node against base (caller frees). */
static char *compare_page(const tp_plan *base, const tp_plan *node)
{
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    assert_int_equal(tp_compare_plans(&cmp, base, node, &err), TP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(tp_report_compare_html(f, cmp, base, node, true, &err), TP_OK);
    assert_int_equal(fclose(f), 0);
    tp_comparison_free(cmp);
    return text;
}

/* check --report: a GPU's PCIe link at x8 is marked on both sides, its finding can be shown;
 * a node against itself has no mark. */
static void test_compare_marks_the_changed_link(void **state)
{
    (void)state;
    tp_plan *base = plan_file(DGX, 2, NULL), *node = plan_file(DGX_X8, 2, NULL);
    char *text = compare_page(base, node);
    assert_int_equal(count(text, " changed\" id=\"first-l"), 1);
    assert_int_equal(count(text, " changed\" id=\"second-l"), 1);
    assert_true(count(text, "class=\"finding\" data-labels=\"GPU/") > 0);
    assert_true(count(text, "(differs)</option>") > 0);
    free(text);
    text = compare_page(base, base);
    assert_int_equal(count(text, " changed\" id=\""), 0);
    assert_int_equal(count(text, "(differs)"), 0);
    free(text);
    tp_plan_free(base);
    tp_plan_free(node);
}

/* NICs at their own speed: NCCL 2.22.3's NVLS search leaves bandwidth taken on NETs of the
 * searched system (OCI H100: half of them under 1 GB/s), which is not what the NIC is. */
static void test_nic_speed_before_search(void **state)
{
    (void)state;
    tp_plan *plan = plan_file("tests/fixtures/oci_h100.xml", 2, NULL);
    const tp_system *sys = tp_plan_system(plan);
    int drained = 0;
    for (int i = 0; i < tp_system_node_count(sys, TP_NODE_NET); i++) {
        tp_node_info net;
        assert_int_equal(tp_system_node(sys, TP_NODE_NET, i, &net, sizeof(net)), TP_OK);
        drained += net.net_bw < 1; /* of 22.5 GB/s */
    }
    assert_true(drained > 0); /* the case this test is about */
    size_t len;
    char *text = page(plan, &len);
    assert_int_equal(count(text, ", 0 GB/s"), 0);
    assert_int_equal(count(text, ": 0.0 GB/s"), 0);
    free(text);
    tp_plan_free(plan);
}

/* A GPU between two GPUs of its node on a ring channel uses no NIC there: its tooltip says so
 * (not "NIC ? (NET/-1) ... PXN via rank -1"). */
static void test_inner_gpu_channels_have_no_nic(void **state)
{
    (void)state;
    tp_plan *plan = plan_file(DGX, 2, NULL);
    size_t len;
    char *text = page(plan, &len);
    assert_true(count(text, "NIC per collective channel:") > 0);
    assert_true(count(text, ": no NIC (between GPUs of its node)") > 0);
    assert_int_equal(count(text, "NET/-1"), 0);
    assert_int_equal(count(text, "PXN via rank -1"), 0);
    free(text);
    tp_plan_free(plan);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    tp_error err = {0};
    assert_int_equal(tp_report_html(NULL, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_html(stdout, NULL, &err), TP_ERR_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_no_network),
        cmocka_unit_test(test_every_node_and_link_drawn),
        cmocka_unit_test(test_bounding_links_resolved),
        cmocka_unit_test(test_job_of_64_nodes),
        cmocka_unit_test(test_compare_marks_the_changed_link),
        cmocka_unit_test(test_nic_speed_before_search),
        cmocka_unit_test(test_inner_gpu_channels_have_no_nic),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
