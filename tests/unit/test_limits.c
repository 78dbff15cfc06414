/*
 * Who limits the job (job_limits.c): a 4-node DGX H100 job with one degraded
 * node (made here with the mutate API: a GPU's PCIe link at x8, or a NIC
 * removed) names that node as the one setting the job's channel count, with
 * the hardware deviation as the cause, and measures its cost by re-planning.
 */
#include "helpers.h"
#include "report/job_limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DGX "tests/fixtures/dgx_h100.xml"

/* The DGX H100 fixture with one edit, written to a temporary file (path in buf). */
static void degraded_node(char *buf, size_t size, tp_mutation_kind kind, const char *spec)
{
    snprintf(buf, size, "/tmp/tp_limits_XXXXXX");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    tp_mutation m = {.kind = kind, .spec = spec};
    tp_error err = {0};
    assert_int_equal(tp_mutate_file(f, DGX, &m, 1, &err), TP_OK);
    assert_int_equal(fclose(f), 0);
}

/* A job of 4 nodes whose node `odd` is planned on `path`, the others on the fixture. */
static tp_plan *plan_job(const char *path, int odd)
{
    const char *topos[3] = {DGX, DGX, DGX};
    topos[odd - 1] = path;
    tp_job job = {
        .version = TP_JOB_VERSION, .n_nodes = 4, .rank = 0, .node_topos = topos, .n_node_topos = 3};
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, DGX, &job, NULL, &err), TP_OK);
    return plan;
}

static void assert_limiting(const tp_plan *plan, const tp_job_limits *lim, int odd,
                            const char *cause)
{
    assert_int_equal(lim->n_kinds, 2);
    int k = plan->host_kind[odd];
    assert_int_equal(k, 1);
    char hosts[64];
    tp_limits__hosts_text(hosts, sizeof(hosts), plan, k);
    char want[64];
    snprintf(want, sizeof(want), "node %d", odd);
    assert_string_equal(hosts, want);
    for (int s = 0; s < TP_GRAPH_COUNT; s++) {
        if (s != TP_GRAPH_RING && s != TP_GRAPH_TREE)
            continue;
        const tp_graph_limits *gl = &lim->graphs[s];
        assert_true(gl->shown);
        /* The odd node sets the job's channels; the healthy ones do not. */
        assert_true(gl->kinds[k].limits & TP_LIMIT_CHANNELS);
        assert_false(gl->kinds[0].limits & TP_LIMIT_CHANNELS);
        assert_int_equal(gl->kinds[k].own.n_channels, gl->combined.n_channels);
        assert_true(gl->kinds[0].own.n_channels > gl->combined.n_channels);
        assert_true(gl->kinds[k].n_causes > 0);
        assert_non_null(strstr(gl->kinds[k].causes[0], cause));
    }
    /* Re-planned with the odd node like the others, the job's channel count changes. */
    const tp_kind_cost *c = &lim->costs[k];
    assert_int_equal(c->like, 0);
    assert_int_equal(c->channels_now, plan->channels.n_channels);
    assert_true(c->channels_like != c->channels_now);
}

static void test_gpu_link_x8_limits_the_job(void **state)
{
    (void)state;
    char path[64];
    degraded_node(path, sizeof(path), TP_MUT_SET, "1b:00.0:link_width=8");
    tp_plan *plan = plan_job(path, 3);
    tp_job_limits lim;
    tp_error err = {0};
    assert_int_equal(tp_limits__compute(&lim, plan, &err), TP_OK);
    assert_limiting(plan, &lim, 3,
                    "PCIe link downgraded: PCI link GPU 0 (0000:1b:00.0, GPU/0-1b000)");
    /* More collective channels (sm90 doubling), yet every AllReduce size slower in NCCL's
     * own model: the cost is stated in busbw, not as a gain of channels. */
    for (int k = 0; k < plan->n_kinds; k++) {
        const tp_kind_cost *c = &lim.costs[k];
        if (c->like < 0 || c->channels_now <= c->channels_like)
            continue;
        assert_int_equal(c->calls.n_calls, TP_COST_CALLS);
        assert_true(c->calls.worst_change_pct <= -TP_COST_ERROR_PCT);
    }
    tp_limits__free(&lim);
    tp_plan_free(plan);
    unlink(path);
}

static void test_missing_nic_limits_the_job(void **state)
{
    (void)state;
    char path[64];
    degraded_node(path, sizeof(path), TP_MUT_REMOVE_NET, "mlx5_1");
    tp_plan *plan = plan_job(path, 2);
    tp_job_limits lim;
    tp_error err = {0};
    assert_int_equal(tp_limits__compute(&lim, plan, &err), TP_OK);
    assert_limiting(plan, &lim, 2, "missing NIC: NIC mlx5_1 at 0000:40:00.0 (NIC/0-40000)");
    tp_limits__free(&lim);
    tp_plan_free(plan);
    unlink(path);
}

static void test_identical_nodes_have_no_limiter(void **state)
{
    (void)state;
    tp_plan *plan = plan_job(DGX, 3);
    tp_job_limits lim;
    tp_error err = {0};
    assert_int_equal(plan->n_kinds, 1);
    assert_int_equal(tp_limits__compute(&lim, plan, &err), TP_OK);
    for (int s = 0; s < TP_GRAPH_COUNT; s++)
        if (lim.graphs[s].shown)
            assert_int_equal(lim.graphs[s].kinds[0].limits, 0);
    assert_int_equal(lim.costs[0].like, -1);
    tp_limits__free(&lim);
    tp_plan_free(plan);
}

/* The fixture with its NIC GUIDs renumbered (another machine of the model), to a temporary file. */
static void other_machine(char *buf, size_t size, const char *src, int n)
{
    char *xml = NULL;
    size_t len = 0;
    tp_error err = {0};
    assert_int_equal(tp_read_file(&xml, &len, src, &err), TP_OK);
    snprintf(buf, size, "/tmp/tp_limits_XXXXXX");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    char guid[16];
    snprintf(guid, sizeof(guid), "%012x", 0xabc000 + n);
    for (const char *p = xml, *q; *p; p = q + 12) {
        q = strstr(p, "946dae03008c");
        if (!q) {
            fputs(p, f);
            break;
        }
        fprintf(f, "%.*s%s", (int)(q - p), p, guid);
    }
    assert_int_equal(fclose(f), 0);
    free(xml);
}

/*
 * Every kind's cost as limits compute it (kinds that would run as they ran borrowed,
 * counts only, one re-plan shared by kinds with the same inputs) equals a full re-plan of
 * the job with that kind's hosts planned like the other kind (issue 25 item 5): a job of 8
 * nodes, 7 distinct files (GUIDs of other machines, x8 links, a missing NIC, a V100 node),
 * reported from a rank that is not local rank 0.
 */
static void test_costs_equal_full_replans(void **state)
{
    (void)state;
    char x8[64], nonic[64], g1[64], g2[64], x8g[64];
    degraded_node(x8, sizeof(x8), TP_MUT_SET, "0000:1b:00.0:link_width=8");
    degraded_node(nonic, sizeof(nonic), TP_MUT_REMOVE_NET, "mlx5_3");
    other_machine(g1, sizeof(g1), DGX, 1);
    other_machine(g2, sizeof(g2), DGX, 2);
    other_machine(x8g, sizeof(x8g), x8, 3);
    const char *topos[7] = {g1, x8, g2, x8g, nonic, g1, "tests/fixtures/v100_nv2.xml"};
    for (int rank = 0; rank <= 9; rank += 9) {
        tp_job job = {.version = TP_JOB_VERSION,
                      .n_nodes = 8,
                      .rank = rank,
                      .node_topos = topos,
                      .n_node_topos = 7};
        tp_plan *plan = NULL;
        tp_error err = {0};
        assert_int_equal(tp_plan_file(&plan, DGX, &job, NULL, &err), TP_OK);
        assert_int_equal(plan->n_kinds, 7);
        tp_job_limits lim;
        assert_int_equal(tp_limits__compute(&lim, plan, &err), TP_OK);
        int measured = 0;
        for (int k = 0; k < plan->n_kinds; k++) {
            const tp_kind_cost *c = &lim.costs[k];
            if (c->like < 0)
                continue;
            int host_kind[8];
            for (int h = 0; h < 8; h++)
                host_kind[h] = plan->host_kind[h] == k ? c->like : plan->host_kind[h];
            tp_plan *full = NULL;
            assert_int_equal(tp_plan__replan(&full, plan, NULL, host_kind, &err), TP_OK);
            assert_int_equal(c->channels_like, full->channels.n_channels);
            assert_true(c->ring_bw_like == full->channels.combined[TP_GRAPH_RING].bw_intra);
            assert_true(c->ring_bw_inter_like == full->channels.combined[TP_GRAPH_RING].bw_inter);
            tp_plan_free(full);
            measured++;
        }
        assert_true(measured >= 6);
        tp_limits__free(&lim);
        tp_plan_free(plan);
    }
    unlink(x8);
    unlink(nonic);
    unlink(g1);
    unlink(g2);
    unlink(x8g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_link_x8_limits_the_job),
        cmocka_unit_test(test_missing_nic_limits_the_job),
        cmocka_unit_test(test_identical_nodes_have_no_limiter),
        cmocka_unit_test(test_costs_equal_full_replans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
