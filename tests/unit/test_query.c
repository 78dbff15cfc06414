/*
 * The read-only query API (include/topoplan.h "Reading a plan"), used as a
 * program outside the library uses it. Expected figures are NCCL 2.22.3's
 * on the same inputs, as the CLI reports them (`topoplan plan|paths|search|
 * nics`): the 4 x V100 NV2 seed fixture searches 6 ring channels of 20 GB/s
 * (12 collective), every GPU pair on 2 NVLinks (40 GB/s, 1 hop); the DGX H100
 * builtin at 2 nodes searches 8 ring channels of 48 GB/s entering at NET i
 * for GPU i, and P2P sends to another rail go through PXN.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "topoplan.h"

#include <stdio.h>
#include <string.h>

static tp_plan *plan_of(const char *path, const char *builtin, int nodes, int rank)
{
    tp_job job = TP_JOB_INIT;
    job.n_nodes = nodes;
    job.rank = rank;
    tp_plan *plan = NULL;
    tp_error err = {0};
    tp_status st;
    if (builtin) {
        const char *xml = tp_builtin_xml(builtin);
        assert_non_null(xml);
        st = tp_plan_buffer(&plan, xml, strlen(xml), builtin, &job, NULL, &err);
    } else {
        st = tp_plan_file(&plan, path, &job, NULL, &err);
    }
    assert_int_equal(st, TP_OK);
    return plan;
}

static int setup_v100(void **state)
{
    *state = plan_of("tests/fixtures/v100_nv2.xml", NULL, 1, 0);
    return 0;
}

static int setup_h100(void **state)
{
    *state = plan_of(NULL, "dgx-h100", 2, 0);
    return 0;
}

static int teardown(void **state)
{
    tp_plan_free(*state);
    return 0;
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tp_node_type_str(TP_NODE_NVS), "NVS");
    assert_string_equal(tp_node_type_str((tp_node_type)42), "?");
    assert_string_equal(tp_link_type_str(TP_LINK_NVL), "NVL");
    assert_string_equal(tp_path_type_str(TP_PATH_PXN), "PXN");
    assert_string_equal(tp_path_type_str((tp_path_type)-1), "?");
    assert_string_equal(tp_pattern_str(TP_PATTERN_BALANCED_TREE), "balanced tree");
    assert_string_equal(tp_graph_kind_str(TP_GRAPH_COLLNET_DIRECT), "collnet-direct");
    assert_string_equal(tp_graph_kind_str(TP_GRAPH_COUNT), "?");
}

static void test_job_and_log(void **state)
{
    const tp_plan *plan = *state;
    tp_job_info job;
    assert_int_equal(tp_plan_job(plan, &job, sizeof(job)), TP_OK);
    assert_int_equal(job.n_nodes, 1);
    assert_int_equal(job.n_ranks, 4);
    assert_int_equal(job.gpus_per_node, 4);
    assert_int_equal(job.rank, 0);
    int n = tp_plan_log_count(plan);
    assert_true(n > 10);
    bool warn = true;
    assert_non_null(tp_plan_log_line(plan, 0, &warn));
    assert_false(warn);
    assert_string_equal(tp_plan_log_line(plan, n - 1, NULL),
                        "12 coll channels, 12 collnet channels, 0 nvls channels, 16 p2p channels, "
                        "4 p2p channels per peer");
    assert_null(tp_plan_log_line(plan, n, NULL));
    assert_null(tp_plan_log_line(plan, -1, NULL));
    assert_int_equal(tp_plan_nic_note_count(plan), 0);
    assert_null(tp_plan_nic_note(plan, 0));
    assert_int_equal(tp_plan_job(NULL, &job, sizeof(job)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_job(plan, NULL, 0), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_log_count(NULL), -1);
    assert_int_equal(tp_plan_nic_note_count(NULL), -1);
    assert_int_equal(tp_plan_status(NULL), TP_ERR_ARGUMENT);
}

static void test_system_nodes(void **state)
{
    const tp_system *sys = tp_plan_system(*state);
    assert_non_null(sys);
    assert_int_equal(tp_system_node_count(sys, TP_NODE_GPU), 4);
    assert_int_equal(tp_system_node_count(sys, TP_NODE_CPU), 1);
    assert_int_equal(tp_system_node_count(sys, TP_NODE_NET), 0); /* one node: NETs trimmed */
    assert_int_equal(tp_system_node_count(sys, TP_NODE_TYPE_COUNT), -1);
    assert_int_equal(tp_system_node_count(NULL, TP_NODE_GPU), -1);
    tp_node_info gpu;
    assert_int_equal(tp_system_node(sys, TP_NODE_GPU, 1, &gpu, sizeof(gpu)), TP_OK);
    assert_int_equal(gpu.type, TP_NODE_GPU);
    assert_int_equal(gpu.index, 1);
    assert_int_equal(gpu.id, 0x1c000);
    assert_string_equal(gpu.label, "GPU/0-1c000");
    assert_int_equal(gpu.gpu_rank, 1);
    assert_int_equal(gpu.gpu_cuda_comp_cap, 70);
    assert_int_equal(gpu.net_dev, -1);
    assert_int_equal(tp_system_find(sys, TP_NODE_GPU, 0x1c000), 1);
    assert_int_equal(tp_system_find(sys, TP_NODE_GPU, 0x99000), -1);
    assert_int_equal(tp_system_find(NULL, TP_NODE_GPU, 0x1c000), -1);
    assert_int_equal(tp_system_gpu_of_rank(sys, 3), 3);
    assert_int_equal(tp_system_gpu_of_rank(sys, 4), -1);
    assert_int_equal(tp_system_gpu_of_rank(NULL, 0), -1);
    assert_int_equal(tp_system_node(sys, TP_NODE_GPU, 4, &gpu, sizeof(gpu)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_system_node(sys, TP_NODE_GPU, -1, &gpu, sizeof(gpu)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_system_node(sys, TP_NODE_GPU, 0, NULL, 0), TP_ERR_ARGUMENT);
    /* A caller with a smaller (older) record gets only what fits. */
    tp_node_info small;
    memset(&small, 0x5a, sizeof(small));
    assert_int_equal(tp_system_node(sys, TP_NODE_GPU, 2, &small, offsetof(tp_node_info, label)),
                     TP_OK);
    assert_int_equal(small.id, 0x1d000);
    assert_int_equal((unsigned char)small.label[0], 0x5a);
}

static void test_system_links_and_paths(void **state)
{
    const tp_system *sys = tp_plan_system(*state);
    tp_node_info gpu;
    assert_int_equal(tp_system_node(sys, TP_NODE_GPU, 0, &gpu, sizeof(gpu)), TP_OK);
    int nvlinks = 0;
    for (int l = 0; l < gpu.n_links; l++) {
        tp_link_info link;
        assert_int_equal(tp_system_link(sys, TP_NODE_GPU, 0, l, &link, sizeof(link)), TP_OK);
        assert_int_equal(link.from_type, TP_NODE_GPU);
        assert_int_equal(link.from_index, 0);
        if (link.type == TP_LINK_NVL) {
            nvlinks++;
            assert_true(link.bw == 40.0f); /* 2 NVLinks x 20 GB/s (sm70) */
        }
    }
    assert_int_equal(nvlinks, 3);
    tp_link_info link;
    assert_int_equal(tp_system_link(sys, TP_NODE_GPU, 0, gpu.n_links, &link, sizeof(link)),
                     TP_ERR_ARGUMENT);
    tp_path_info path;
    assert_int_equal(tp_system_path(sys, TP_NODE_GPU, 0, TP_NODE_GPU, 1, &path, sizeof(path)),
                     TP_OK);
    assert_int_equal(path.type, TP_PATH_NVL);
    assert_true(path.bw == 40.0f);
    assert_int_equal(path.hops, 1);
    assert_int_equal(path.bottleneck_hop, 0);
    assert_int_equal(
        tp_system_path_hop(sys, TP_NODE_GPU, 0, TP_NODE_GPU, 1, 0, &link, sizeof(link)), TP_OK);
    assert_int_equal(link.type, TP_LINK_NVL);
    assert_int_equal(link.to_type, TP_NODE_GPU);
    assert_int_equal(link.to_index, 1);
    assert_int_equal(
        tp_system_path_hop(sys, TP_NODE_GPU, 0, TP_NODE_GPU, 1, 1, &link, sizeof(link)),
        TP_ERR_ARGUMENT);
    assert_int_equal(tp_system_path(sys, TP_NODE_GPU, 0, TP_NODE_GPU, 0, &path, sizeof(path)),
                     TP_OK);
    assert_int_equal(path.type, TP_PATH_LOC);
    assert_int_equal(path.hops, 0);
    assert_int_equal(path.bottleneck_hop, -1);
    assert_int_equal(tp_system_path(sys, TP_NODE_GPU, 0, TP_NODE_GPU, 9, &path, sizeof(path)),
                     TP_ERR_ARGUMENT);
    assert_int_equal(tp_system_path(NULL, TP_NODE_GPU, 0, TP_NODE_GPU, 1, &path, sizeof(path)),
                     TP_ERR_ARGUMENT);
}

static void test_graphs(void **state)
{
    const tp_plan *plan = *state;
    tp_graph_summary g;
    assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &g, sizeof(g)), TP_OK);
    assert_int_equal(g.kind, TP_GRAPH_RING);
    assert_int_equal(g.pattern, TP_PATTERN_RING);
    assert_int_equal(g.n_channels, 6);
    assert_true(g.bw_intra == 20.0f && g.bw_inter == 20.0f);
    assert_int_equal(g.type_intra, TP_PATH_NVL);
    assert_int_equal(g.n_gpus, 4);
    assert_false(g.has_nets);
    assert_true(g.n_decisions > 0);
    int n = 0;
    const int *gpus = tp_plan_graph_gpus(plan, TP_GRAPH_RING, 0, &n);
    assert_int_equal(n, 4);
    int want[] = {0, 1, 2, 3};
    assert_memory_equal(gpus, want, sizeof(want));
    assert_null(tp_plan_graph_gpus(plan, TP_GRAPH_RING, 6, &n));
    assert_int_equal(n, 0);
    assert_null(tp_plan_graph_gpus(plan, TP_GRAPH_RING, 0, NULL));
    assert_null(tp_plan_graph_nets(plan, TP_GRAPH_RING, 0, &n));
    assert_int_equal(n, 0);
    tp_decision d;
    assert_int_equal(tp_plan_graph_decision(plan, TP_GRAPH_RING, 0, &d, sizeof(d)), TP_OK);
    assert_int_equal(d.kind, TP_DECISION_TRY);
    assert_non_null(d.why);
    assert_int_equal(tp_plan_graph_decision(plan, TP_GRAPH_RING, g.n_decisions, &d, sizeof(d)),
                     TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_graph(plan, TP_GRAPH_NVLS, &g, sizeof(g)), TP_OK);
    assert_int_equal(g.n_channels, 0); /* 4 V100s: no NVLS */
    assert_int_equal(tp_plan_graph(plan, TP_GRAPH_COUNT, &g, sizeof(g)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_graph(NULL, TP_GRAPH_RING, &g, sizeof(g)), TP_ERR_ARGUMENT);
}

static void test_channels(void **state)
{
    const tp_plan *plan = *state;
    tp_channels_info ch;
    assert_int_equal(tp_plan_channels(plan, &ch, sizeof(ch)), TP_OK);
    assert_int_equal(ch.n_channels, 12);
    assert_int_equal(ch.search_channels, 6);
    assert_int_equal(ch.p2p_channels, 16);
    assert_int_equal(ch.p2p_channels_per_peer, 4);
    assert_int_equal(ch.n_nvls_channels, 0);
    tp_rank_channel rc;
    assert_int_equal(tp_plan_rank_channel(plan, 0, 4, &rc, sizeof(rc)), TP_OK);
    assert_int_equal(rc.ring_prev, 2);
    assert_int_equal(rc.ring_next, 3);
    assert_int_equal(rc.tree_up, 1);
    assert_int_equal(rc.tree_down[0], 3);
    assert_int_equal(rc.tree_down[1], -1);
    assert_int_equal(tp_plan_rank_channel(plan, 4, 0, &rc, sizeof(rc)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_rank_channel(plan, 0, 12, &rc, sizeof(rc)), TP_ERR_ARGUMENT);
    int n = 0;
    const int *ring = tp_plan_ring(plan, 1, &n);
    int want[] = {0, 1, 3, 2};
    assert_int_equal(n, 4);
    assert_memory_equal(ring, want, sizeof(want));
    assert_null(tp_plan_ring(plan, 12, &n));
    assert_null(tp_plan_ring(NULL, 0, &n));
    tp_nic_choice nic;
    /* One node: no NETs, so no NIC to ask about. */
    assert_int_equal(tp_plan_nic(plan, 0, 0, -1, &nic, sizeof(nic)), TP_ERR_ARGUMENT);
}

static void test_h100_nets(void **state)
{
    const tp_plan *plan = *state;
    const tp_system *sys = tp_plan_system(plan);
    assert_int_equal(tp_system_node_count(sys, TP_NODE_NET), 8);
    tp_node_info net;
    assert_int_equal(tp_system_node(sys, TP_NODE_NET, 3, &net, sizeof(net)), TP_OK);
    assert_int_equal(net.net_dev, 3);
    assert_true(net.net_bw == 50.0f);
    int gpu0 = tp_system_gpu_of_rank(sys, 0);
    tp_path_info path;
    assert_int_equal(tp_system_path(sys, TP_NODE_GPU, gpu0, TP_NODE_NET, 0, &path, sizeof(path)),
                     TP_OK);
    assert_int_equal(path.type, TP_PATH_PIX);
    assert_int_equal(path.hops, 3);
    assert_true(path.bw == 48.0f);
    assert_int_equal(tp_system_path(sys, TP_NODE_GPU, gpu0, TP_NODE_NET, 1, &path, sizeof(path)),
                     TP_OK);
    assert_int_equal(path.type, TP_PATH_PXN);
    assert_int_equal(path.hops, 5);
    tp_graph_summary g;
    assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &g, sizeof(g)), TP_OK);
    assert_int_equal(g.n_channels, 8);
    assert_true(g.has_nets);
    assert_int_equal(g.cross_nic, 1);
    int n = 0;
    const int64_t *nets = tp_plan_graph_nets(plan, TP_GRAPH_RING, 1, &n);
    assert_int_equal(n, 2);
    assert_int_equal(nets[0], 1); /* channel 1: NET/1 -> 1 2 ... 0 -> NET/0 */
    assert_int_equal(nets[1], 0);
    const int *gpus = tp_plan_graph_gpus(plan, TP_GRAPH_RING, 1, &n);
    assert_int_equal(n, 8);
    assert_int_equal(gpus[0], 1);
    assert_int_equal(gpus[7], 0);
}

static void test_h100_nics(void **state)
{
    const tp_plan *plan = *state;
    tp_nic_choice nic;
    /* Ring channel 0 enters node 0 at rank 0 on NET/0, channel 1 leaves from rank 0 on NET/0. */
    assert_int_equal(tp_plan_nic(plan, 0, 0, -1, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.net_dev, 0);
    assert_int_equal(nic.proxy_rank, 0);
    assert_true(nic.gdr);
    assert_int_equal(tp_plan_nic(plan, 1, 0, -1, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.net_dev, 1);
    assert_int_equal(nic.net_index, 1);
    /* The same on the identical second node. */
    assert_int_equal(tp_plan_nic(plan, 9, 0, -1, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.net_dev, 1);
    assert_int_equal(nic.proxy_rank, 9);
    /* P2P to another rail goes through the rank on that rail (PXN). */
    assert_int_equal(tp_plan_nic(plan, 0, 0, 9, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.net_dev, 1);
    assert_int_equal(nic.proxy_rank, 1);
    assert_int_equal(tp_plan_nic(plan, 1, 0, 8, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.net_dev, 0);
    assert_int_equal(nic.proxy_rank, 0);
    /* Seen from node 1: rank 8 sending to rank 1 is rank 0 sending to rank 9, shifted. */
    assert_int_equal(tp_plan_nic(plan, 8, 0, 1, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.net_dev, 1);
    assert_int_equal(nic.proxy_rank, 9);
    assert_int_equal(tp_plan_nic(plan, 0, 0, 3, &nic, sizeof(nic)),
                     TP_ERR_ARGUMENT); /* same node */
    /* NCCL's p2p schedule: rank 0 sends to rank 8 in round 8, parts on channels 1 and 9. */
    assert_int_equal(tp_plan_p2p_channel(plan, 0, 8, 0), 1);
    assert_int_equal(tp_plan_p2p_channel(plan, 0, 8, 1), 9);
    assert_int_equal(tp_plan_p2p_channel(plan, 0, 8, 2), -1);
    assert_int_equal(tp_plan_p2p_channel(plan, 0, 3, 0), -1);
    assert_int_equal(tp_plan_p2p_channel(plan, 0, 16, 0), -1);
    assert_int_equal(tp_plan_p2p_channel(NULL, 0, 8, 0), -1);
    assert_int_equal(tp_plan_nic(plan, 16, 0, -1, &nic, sizeof(nic)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_nic(plan, 0, -1, -1, &nic, sizeof(nic)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_nic(plan, 0, 0, 16, &nic, sizeof(nic)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_nic(plan, 0, 0, -1, NULL, 0), TP_ERR_ARGUMENT);
    /* The nics report's findings: every ring channel keeps its rail on this job. */
    tp_findings *f = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_nic_findings(&f, plan, &err), TP_OK);
    int n = tp_findings_count(f), kept = 0;
    assert_true(n > 0);
    for (int i = 0; i < n; i++)
        kept += strstr(tp_findings_get(f, i), "every ring channel keeps its rail") != NULL;
    assert_int_equal(kept, 1);
    assert_null(tp_findings_get(f, n));
    tp_findings_free(f);
    f = (tp_findings *)&f;
    assert_int_equal(tp_plan_nic_findings(&f, NULL, &err), TP_ERR_ARGUMENT);
    assert_null(f);
    assert_int_equal(tp_plan_nic_findings(NULL, plan, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_findings_count(NULL), -1);
    assert_null(tp_findings_get(NULL, 0));
    tp_findings_free(NULL);
    tp_channels_info ch;
    assert_int_equal(tp_plan_channels(plan, &ch, sizeof(ch)), TP_OK);
    assert_int_equal(ch.n_channels, 16);
    assert_int_equal(ch.n_nvls_channels, 16);
    assert_int_equal(ch.nccl_nodes, 2);
}

/* An inner GPU of a ring channel opens no NIC there, and says why; head and tail say their role. */
static void test_h100_nic_roles(void **state)
{
    const tp_plan *plan = *state;
    tp_nic_choice nic;
    /* Ring channel 0 of node 0: NET/0 -> 0 7 6 5 4 3 2 1 -> NET/1. */
    assert_int_equal(tp_plan_nic(plan, 3, 0, -1, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.role, TP_NIC_NONE);
    assert_int_equal(nic.net_dev, -1);
    assert_int_equal(nic.net_id, -1);
    assert_int_equal(nic.net_index, -1);
    assert_int_equal(nic.proxy_rank, -1);
    assert_non_null(strstr(nic.why, "inner GPU of ring channel 0"));
    assert_non_null(strstr(nic.why, "enters at rank 0 and leaves at rank 1"));
    assert_int_equal(tp_plan_nic(plan, 11, 0, -1, &nic, sizeof(nic)), TP_OK); /* node 1 alike */
    assert_int_equal(nic.role, TP_NIC_NONE);
    assert_non_null(strstr(nic.why, "enters at rank 8 and leaves at rank 9"));
    assert_int_equal(tp_plan_nic(plan, 0, 0, -1, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.role, TP_NIC_RECEIVE);
    assert_int_equal(nic.net_dev, 0);
    assert_int_equal(nic.send_net_dev, -1);
    assert_int_equal(tp_plan_nic(plan, 1, 0, -1, &nic, sizeof(nic)), TP_OK);
    assert_int_equal(nic.role, TP_NIC_SEND);
    assert_int_equal(nic.net_dev, 1);
    assert_int_equal(tp_plan_nic(plan, 0, 0, 9, &nic, sizeof(nic)), TP_OK); /* P2P: a send */
    assert_int_equal(nic.role, TP_NIC_SEND);
    /* A caller built before role existed gets the old prefix; net_dev -1 says "no NIC". */
    memset(&nic, 0x55, sizeof(nic));
    assert_int_equal(tp_plan_nic(plan, 3, 0, -1, &nic, offsetof(tp_nic_choice, role)), TP_OK);
    assert_int_equal(nic.net_dev, -1);
    assert_int_equal((int)nic.role, 0x55555555);
}

/* Every rank's NVLS up/down, checked against NCCL's "NVLS Trees" line of that rank. */
static void test_h100_rank_nvls(void **state)
{
    const tp_plan *plan = *state;
    tp_rank_nvls v;
    assert_int_equal(tp_plan_rank_nvls(plan, 0, 0, &v, sizeof(v)), TP_OK);
    assert_int_equal(v.n_heads, 8);
    assert_int_equal(v.head_rank, 0);
    assert_int_equal(v.down, 17);
    for (int rank = 0; rank < 16; rank += 5) {
        tp_plan *p = rank ? NULL : (tp_plan *)plan;
        if (!p) {
            tp_job job = TP_JOB_INIT;
            job.n_nodes = 2;
            job.rank = rank;
            tp_error err = {0};
            const char *xml = tp_builtin_xml("dgx-h100");
            assert_int_equal(tp_plan_buffer(&p, xml, strlen(xml), "dgx-h100", &job, NULL, &err),
                             TP_OK);
        }
        const char *line = NULL;
        for (int i = 0; i < tp_plan_log_count(p) && !line; i++)
            line = strstr(tp_plan_log_line(p, i, NULL), "NVLS Trees : ");
        assert_non_null(line);
        tp_rank_nvls t[2];
        assert_int_equal(tp_plan_rank_nvls(plan, rank, 0, &t[0], sizeof(t[0])), TP_OK);
        assert_int_equal(tp_plan_rank_nvls(plan, rank, 1, &t[1], sizeof(t[1])), TP_OK);
        char want[128];
        snprintf(want, sizeof(want), "NVLS Trees : %d/%d/%d->%d->%d %d/%d/%d->%d->%d",
                 t[0].tree_down[0], t[0].tree_down[1], t[0].tree_down[2], rank, t[0].tree_up,
                 t[1].tree_down[0], t[1].tree_down[1], t[1].tree_down[2], rank, t[1].tree_up);
        assert_string_equal(line, want);
        if (p != plan)
            tp_plan_free(p);
    }
    assert_int_equal(tp_plan_rank_nvls(plan, 16, 0, &v, sizeof(v)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_rank_nvls(plan, 0, 16, &v, sizeof(v)), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_rank_nvls(plan, 0, 0, NULL, 0), TP_ERR_ARGUMENT);
    assert_int_equal(tp_plan_rank_nvls(NULL, 0, 0, &v, sizeof(v)), TP_ERR_ARGUMENT);
}

/* Without NVLS (V100) there is nothing to answer. */
static void test_v100_no_nvls(void **state)
{
    tp_rank_nvls v;
    assert_int_equal(tp_plan_rank_nvls(*state, 0, 0, &v, sizeof(v)), TP_ERR_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_job_and_log, setup_v100, teardown),
        cmocka_unit_test_setup_teardown(test_system_nodes, setup_v100, teardown),
        cmocka_unit_test_setup_teardown(test_system_links_and_paths, setup_v100, teardown),
        cmocka_unit_test_setup_teardown(test_graphs, setup_v100, teardown),
        cmocka_unit_test_setup_teardown(test_channels, setup_v100, teardown),
        cmocka_unit_test_setup_teardown(test_h100_nets, setup_h100, teardown),
        cmocka_unit_test_setup_teardown(test_h100_nics, setup_h100, teardown),
        cmocka_unit_test_setup_teardown(test_h100_nic_roles, setup_h100, teardown),
        cmocka_unit_test_setup_teardown(test_h100_rank_nvls, setup_h100, teardown),
        cmocka_unit_test_setup_teardown(test_v100_no_nvls, setup_v100, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
