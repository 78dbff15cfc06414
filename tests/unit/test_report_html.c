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

/* The page models the configuration's NCCL version and says so; a partial profile with the
 * public tally that `topoplan versions` gives (read from the library, not written here). */
static void test_page_names_the_modelled_version(void **state)
{
    (void)state;
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, NULL, &err), TP_OK);
    tp_nccl_profile_info other = {0}; /* the newest profile that is not the default */
    for (int i = 0; i < tp_nccl_profile_count(); i++) {
        tp_nccl_profile_info info;
        assert_int_equal(tp_nccl_profile_info_at(i, &info, sizeof(info), &err), TP_OK);
        if (!info.is_default)
            other = info;
    }
    assert_non_null(other.nccl); /* the case this test is about */
    assert_int_equal(tp_config_set_nccl(cfg, other.nccl, &err), TP_OK);
    tp_job job = {.version = TP_JOB_VERSION, .n_nodes = 2};
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_file(&plan, DGX, &job, cfg, &err), TP_OK);
    size_t len;
    char *text = page(plan, &len);
    char want[160];
    snprintf(want, sizeof(want), "<span class=\"nccl\">NCCL %s</span></h1>", other.nccl);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want), "(NCCL %s's model)", other.nccl);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want), "profile is partial: %d of %d public conformance cases pass",
             other.public_passed, other.public_total);
    assert_true((strstr(text, want) != NULL) == !other.exact);
    snprintf(want, sizeof(want), "NCCL %s", tp_nccl_version_string());
    assert_null(strstr(text, want)); /* the default version appears nowhere */
    free(text);
    tp_plan_free(plan);
    /* the default profile is exact: no tally */
    plan = plan_file(DGX, 2, NULL);
    text = page(plan, &len);
    assert_null(strstr(text, "profile is partial"));
    free(text);
    tp_plan_free(plan);
    tp_config_free(cfg);
}

/* The findings section of a page ("" when it has none; caller frees). */
static char *findings_of(const char *text)
{
    const char *a = strstr(text, "<section id=\"findings\"");
    const char *b = a ? strstr(a, "</section>") : NULL;
    return a && b ? strndup(a, (size_t)(b - a)) : strdup("");
}

/* The plan's page lists the setting notes, graded by their measured cost (an unknown
 * NCCL_ALGO leaves the job on Tree and Ring: ERROR, its cost beside it), and the topology
 * file's lints; a clean plan has no findings section. */
static void test_page_lists_setting_notes_and_lints(void **state)
{
    (void)state;
    const char *env[] = {"NCCL_ALGO=Rnig", NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    tp_job job = {.version = TP_JOB_VERSION, .n_nodes = 2};
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_file(&plan, "tests/fixtures/aws_p5_2026.xml", &job, cfg, &err), TP_OK);
    tp_lints *lints = NULL;
    assert_int_equal(tp_lint_plan(&lints, plan, NULL, &err), TP_OK);
    int n_lints = (int)tp_lints_count(lints);
    assert_true(n_lints > 0); /* the case this test is about */
    size_t len;
    char *text = page(plan, &len), *f = findings_of(text);
    assert_non_null(strstr(text, "<a href=\"#findings\">findings</a>"));
    assert_int_equal(count(f, "<td>setting</td>"), 1);
    assert_non_null(strstr(f, "<td class=\"sev-ERROR\">ERROR</td><td>setting</td>"));
    assert_non_null(strstr(f, "<td>against no NCCL_ALGO (NCCL's tuning model, 2 nodes)"));
    assert_int_equal(
        count(f, "<td>topology file</td>") + count(f, "<td>partial topology file</td>"), n_lints);
    for (int i = 0; i < n_lints; i++) { /* each message, up to the first character HTML escapes */
        char want[120];
        snprintf(want, sizeof(want), "<td>%.100s", tp_lints_message(lints, (size_t)i));
        want[4 + strcspn(want + 4, "<>&\"")] = '\0';
        assert_non_null(strstr(f, want));
    }
    free(f);
    free(text);
    tp_lints_free(lints);
    tp_plan_free(plan);
    tp_config_free(cfg);
    plan = plan_file(DGX, 2, NULL);
    text = page(plan, &len);
    assert_null(strstr(text, "id=\"findings\""));
    free(text);
    tp_plan_free(plan);
}

/* With a baseline: the root causes graded with what the node costs a job (a table of the
 * AllReduce sizes, the jobs measured as rows), their consequences folded under them. */
static void test_page_with_a_baseline_check(void **state)
{
    (void)state;
    tp_plan *base = plan_file(DGX, 2, NULL), *node = plan_file(DGX_X8, 2, NULL);
    tp_plan *job_base = plan_file(DGX, 2, NULL), *job_node = plan_file(DGX, 2, DGX_X8);
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    assert_int_equal(tp_compare_plans(&cmp, base, node, &err), TP_OK);
    assert_int_equal(tp_comparison_set_job(cmp, job_base, job_node, &err), TP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(tp_report_html_check(out, node, cmp, &err), TP_OK);
    assert_int_equal(fclose(out), 0);
    char *f = findings_of(text);
    size_t causes = tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR) +
                    tp_comparison_count_severity(cmp, TP_SEVERITY_WARN) +
                    tp_comparison_count_severity(cmp, TP_SEVERITY_INFO);
    const char *folded = strstr(f, "<details class=\"consequences\">");
    assert_non_null(folded);
    char *top = strndup(f, (size_t)(folded - f));
    assert_int_equal((size_t)count(top, "<tr><td class=\"sev-"), causes);
    assert_int_equal((size_t)count(folded, "<tr><td class=\"sev-"),
                     tp_comparison_count(cmp) - causes);
    assert_true(count(top, "class=\"finding\" data-labels=\"GPU/") > 0);
    int n_nodes = 0;
    const tp_job_cost *cost = tp_comparison_job_cost(cmp, 0, &n_nodes);
    assert_non_null(cost);
    char want[96];
    snprintf(want, sizeof(want), "<th scope=\"row\">%d nodes of the baseline with it</th>",
             n_nodes);
    assert_non_null(strstr(top, want));
    assert_int_equal(count(top, "<td class=\"bad\">"), /* the calls 1 % slower or more */
                     (cost->calls[0].busbw_change_pct <= -TP_COST_ERROR_PCT) +
                         (cost->calls[1].busbw_change_pct <= -TP_COST_ERROR_PCT) +
                         (cost->calls[2].busbw_change_pct <= -TP_COST_ERROR_PCT) +
                         (cost->calls[3].busbw_change_pct <= -TP_COST_ERROR_PCT));
    free(top);
    free(f);
    free(text);
    tp_comparison_free(cmp);
    tp_plan_free(base);
    tp_plan_free(node);
    tp_plan_free(job_base);
    tp_plan_free(job_node);
}

/* What an operator read wrong on the screenshots: a CollNet channel count without a CollNet
 * graph, bounding-link buttons in NCCL's ids where the picture says GPU 0 and mlx5_0, small
 * calls at "0.0 GB/s", 1 Gb/s ports at "0 GB/s"; the check page's finding count above a table
 * of root causes. */
static void test_page_reads_as_an_operator_would(void **state)
{
    (void)state;
    tp_plan *plan = plan_file("tests/fixtures/oci_h100.xml", 2, NULL);
    size_t len;
    char *text = page(plan, &len);
    assert_non_null(strstr(text, ", no CollNet, "));
    int buttons = count(text, "class=\"bound\"");
    assert_true(buttons > 0);
    assert_int_equal(count(text, "\">Show the bounding link GPU ") +
                         count(text, "\">Show the bounding link NVSwitch") +
                         count(text, "\">Show the bounding link mlx5_"),
                     buttons);
    assert_int_equal(count(text, " 0.0 GB/s</small>"), 0);
    assert_true(count(text, " GB/s</small>") > 0);
    /* NCCL's choices named on the plot over a white halo (the lines crossed them) */
    assert_true(count(text, "<circle ") > 0);
    assert_int_equal(count(text, "<text class=\"choice\""), count(text, "<circle "));
    assert_non_null(strstr(text, "text.choice{paint-order:stroke;stroke:#fff"));
    free(text);
    tp_plan_free(plan);
    /* 1 Gb/s Ethernet ports (0.125 GB/s) were drawn as "0 GB/s" */
    plan = plan_file("tests/fixtures/rtx4090_4numa.xml", 2, NULL);
    text = page(plan, &len);
    assert_true(count(text, ", 0.1 GB/s</text>") > 0);
    assert_int_equal(count(text, ", 0 GB/s</text>"), 0);
    free(text);
    tp_plan *base = plan_file(DGX, 2, NULL), *node = plan_file(DGX_X8, 2, NULL);
    text = compare_page(base, node);
    assert_non_null(strstr(text, "<h2 id=\"findings-h\">Findings</h2>"));
    assert_non_null(strstr(text, "<th>detail (baseline \xe2\x86\x92 this node)</th>"));
    free(text);
    tp_plan_free(base);
    tp_plan_free(node);
    tp_plan_free(plan);
}

/* A missing NIC renumbers the NET ports after it (harmless, INFO): those rows are folded apart
 * so that the root cause that matters leads the page (29 of them once buried it on p5). */
static void test_harmless_differences_folded(void **state)
{
    (void)state;
    tp_plan *base = plan_file(DGX, 2, NULL);
    tp_plan *node = plan_file("tests/fixtures/dgx_h100_nic3_missing.xml", 2, NULL);
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    assert_int_equal(tp_compare_plans(&cmp, base, node, &err), TP_OK);
    size_t harmless = tp_comparison_count_severity(cmp, TP_SEVERITY_INFO);
    assert_true(harmless > 0); /* the case this test is about */
    char *text = compare_page(base, node);
    const char *folded = strstr(text, "<details class=\"harmless\">");
    assert_non_null(folded);
    char *top = strndup(text, (size_t)(folded - text));
    assert_int_equal(count(top, "<td class=\"sev-INFO\">"), 0);
    assert_true(count(top, "<td class=\"sev-WARN\">") + count(top, "<td class=\"sev-ERROR\">") > 0);
    const char *end = strstr(folded, "</details>");
    char *notes = strndup(folded, (size_t)(end - folded));
    assert_int_equal((size_t)count(notes, "<td class=\"sev-INFO\">"), harmless);
    free(notes);
    free(top);
    free(text);
    tp_comparison_free(cmp);
    tp_plan_free(base);
    tp_plan_free(node);
}

/* A node's own page against its baseline cannot mark what only the baseline has: the missing
 * NIC's finding says so instead of a button that marks nothing (seen in check-report). */
static void test_baseline_only_devices_not_marked(void **state)
{
    (void)state;
    tp_plan *base = plan_file(DGX, 2, NULL);
    tp_plan *node = plan_file("tests/fixtures/dgx_h100_nic3_missing.xml", 2, NULL);
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    assert_int_equal(tp_compare_plans(&cmp, base, node, &err), TP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(tp_report_html_check(out, node, cmp, &err), TP_OK);
    assert_int_equal(fclose(out), 0);
    assert_true(count(text, "<small>only on the baseline</small>") > 0);
    /* every label a button names is a node of the page's picture */
    for (const char *p = strstr(text, "data-labels=\""); p; p = strstr(p + 1, "data-labels=\"")) {
        char labels[512];
        snprintf(labels, sizeof(labels), "%.*s", (int)strcspn(p + 13, "\""), p + 13);
        for (char *l = strtok(labels, " "); l; l = strtok(NULL, " ")) {
            char want[80];
            snprintf(want, sizeof(want), "data-nccl=\"%s\"", l);
            assert_non_null(strstr(text, want));
        }
    }
    free(text);
    tp_comparison_free(cmp);
    tp_plan_free(base);
    tp_plan_free(node);
}

/* The y of every box of a kind in the page's first picture ("k-NET"), sorted, distinct. */
static int box_rows(const char *text, const char *kind, double *ys, int max)
{
    int n = 0;
    char want[48];
    snprintf(want, sizeof(want), "class=\"node %s", kind);
    for (const char *p = strstr(text, want); p && n < max; p = strstr(p + 1, want)) {
        const char *r = strstr(p, "<rect x=\"");
        double x, y;
        if (!r || sscanf(r, "<rect x=\"%lf\" y=\"%lf\"", &x, &y) != 2)
            continue;
        int k = 0;
        while (k < n && ys[k] < y - 0.5)
            k++;
        if (k < n && ys[k] < y + 0.5)
            continue;
        memmove(ys + k + 1, ys + k, (size_t)(n - k) * sizeof(*ys));
        ys[k] = y;
        n++;
    }
    return n;
}

/* 61 ports of 2 NICs: the lines of ports without a NIC above them follow each other closely
 * (they were a NIC row's height apart: a third of the picture empty). */
static void test_port_lines_without_nics_close(void **state)
{
    (void)state;
    tp_plan *plan = plan_file("tests/fixtures/rtx4090_4numa.xml", 2, NULL);
    size_t len;
    char *text = page(plan, &len);
    double nets[64], gpus[4], below[64];
    int n_lines = box_rows(text, "k-NET", nets, 64);
    assert_true(n_lines > 3); /* the case this test is about: more lines than NICs */
    assert_int_equal(box_rows(text, "k-GPU", gpus, 4), 1);
    int n_below = box_rows(text, "k-CPU", below, 64);
    assert_true(n_below > 0);
    double row_gap = below[0] - gpus[0]; /* at least one full row apart */
    int close = 0;
    for (int i = 1; i < n_lines; i++)
        close += nets[i] - nets[i - 1] < row_gap;
    assert_true(close >= n_lines - 1 - tp_system_node_count(tp_plan_system(plan), TP_NODE_NIC));
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
    assert_int_equal(tp_report_html_check(NULL, NULL, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_report_html_check(stdout, NULL, NULL, &err), TP_ERR_ARGUMENT);
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
        cmocka_unit_test(test_page_names_the_modelled_version),
        cmocka_unit_test(test_page_lists_setting_notes_and_lints),
        cmocka_unit_test(test_page_with_a_baseline_check),
        cmocka_unit_test(test_page_reads_as_an_operator_would),
        cmocka_unit_test(test_harmless_differences_folded),
        cmocka_unit_test(test_baseline_only_devices_not_marked),
        cmocka_unit_test(test_port_lines_without_nics_close),
        cmocka_unit_test(test_inner_gpu_channels_have_no_nic),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
