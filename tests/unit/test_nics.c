/*
 * Multi-NIC planning (seed 001, NCCL 2.22.3): NCCL_IB_HCA and port merging on
 * the topology's <net> elements, NIC per ring channel and per P2P peer, rails,
 * PXN relay conditions, and the seed's single-NIC negative controls.
 */
#include "helpers.h"

#include "nics/nics.h"
#include "paths/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static tp_plan *plan_text(const char *xml, const char *const *env, int n_nodes)
{
    return helpers_plan(xml, env, n_nodes, 0);
}

static tp_plan *plan_fixture(const char *name, const char *const *env, int n_nodes)
{
    char *xml = helpers_fixture(name);
    tp_plan *plan = plan_text(xml, env, n_nodes);
    free(xml);
    return plan;
}

static void build(tp_nics *nx, const tp_plan *plan)
{
    tp_error err = {0};
    tp_status st = tp_nics__build(nx, plan, &err);
    if (st != TP_OK)
        print_error("nics: %s\n", err.message);
    assert_int_equal(st, TP_OK);
}

static bool has_finding(const tp_nics *nx, const char *part)
{
    for (size_t i = 0; i < nx->findings.n_lines; i++)
        if (strstr(nx->findings.lines[i].text, part))
            return true;
    return false;
}

static bool notes_have(const tp_plan *plan, const char *part)
{
    for (size_t i = 0; i < plan->nic_notes.n_lines; i++)
        if (strstr(plan->nic_notes.lines[i].text, part))
            return true;
    return false;
}

static const tp_nic_rank *rank_of(const tp_nics *nx, int rank)
{
    for (int i = 0; i < nx->n_ranks; i++)
        if (nx->ranks[i].rank == rank)
            return &nx->ranks[i];
    fail_msg("rank %d not in the view", rank);
    return NULL;
}

/* Replace the first occurrence of `from` in a heap string. */
static char *replace(char *text, const char *from, const char *to)
{
    char *at = strstr(text, from);
    assert_non_null(at);
    size_t head = (size_t)(at - text), flen = strlen(from), tlen = strlen(to);
    char *out = malloc(strlen(text) - flen + tlen + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    memcpy(out + head, to, tlen);
    strcpy(out + head + tlen, at + flen);
    free(text);
    return out;
}

/* ------------------------------------------------------------------ */
/* Seed negative control: one NET device                               */
/* ------------------------------------------------------------------ */

/* Seed 001 H1/H2: with one NET device CROSS_NIC 0/1/2 and every PXN setting change nothing. */
static void test_nics_single_net_negative_control(void **state)
{
    (void)state;
    static const char *const configs[][2] = {
        {NULL, NULL},
        {"NCCL_CROSS_NIC=0", NULL},
        {"NCCL_CROSS_NIC=1", NULL},
        {"NCCL_CROSS_NIC=2", NULL},
        {"NCCL_PXN_DISABLE=1", NULL},
        {"NCCL_P2P_PXN_LEVEL=0", NULL},
        {"NCCL_P2P_PXN_LEVEL=1", NULL},
        {"NCCL_P2P_PXN_LEVEL=2", NULL},
        {"NCCL_IB_MERGE_NICS=0", NULL},
    };
    int base_uses = -1;
    for (size_t c = 0; c < ARRAY_LEN(configs); c++) {
        tp_plan *plan = plan_fixture("v100_nv2.xml", configs[c], 2);
        tp_nics nx;
        build(&nx, plan);
        assert_int_equal(nx.n_nets, 1);
        assert_true(has_finding(&nx, "one NET device"));
        int uses = 0;
        for (int i = 0; i < nx.n_ranks; i++) {
            const tp_nic_rank *r = &nx.ranks[i];
            uses += r->n_uses;
            for (int u = 0; u < r->n_uses; u++) {
                assert_int_equal(r->uses[u].net, 0);
                assert_int_equal(r->uses[u].proxy_rank, r->rank);
                assert_int_equal(r->uses[u].peer_net, 0);
            }
            assert_int_equal(r->n_peers, 4);
            for (int p = 0; p < r->n_peers; p++) {
                assert_int_equal(r->peers[p].net, 0);
                assert_int_equal(r->peers[p].proxy_rank, r->rank);
            }
            assert_int_equal(r->n_pxn, 0);
        }
        if (base_uses < 0)
            base_uses = uses;
        assert_int_equal(uses, base_uses);
        assert_false(has_finding(&nx, "PXN:"));
        assert_false(has_finding(&nx, "cross rails"));
        tp_nics__free(&nx);
        tp_plan_free(plan);
    }
}

/* ------------------------------------------------------------------ */
/* PXN relay conditions                                                */
/* ------------------------------------------------------------------ */

/*
 * Two A100s on separate PCIe switches of one CPU, one NIC. %1$s: NVLink
 * from GPU0 to GPU1, %2$s the reverse, %3$s: the NIC on GPU0's switch,
 * %4$s: the NIC on the CPU, %5$s: GPU1 next to the NIC instead of on switch B.
 */
#define PCI_SW(bus)                                                                                \
    "<pci busid=\"0000:" bus ":00.0\" class=\"0x060400\" vendor=\"0x10b5\" device=\"0xc010\" "     \
    "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
#define PCI_DEV(bus, cls)                                                                          \
    "<pci busid=\"0000:" bus ":00.0\" class=\"" cls "\" vendor=\"0x10de\" device=\"0x20b0\" "      \
    "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
#define NIC_XML(bus)                                                                               \
    PCI_DEV(bus, "0x020700")                                                                       \
    "<nic><net name=\"mlx5_0\" dev=\"0\" speed=\"200000\" port=\"1\" "                             \
    "latency=\"0\" guid=\"0x1\" maxconn=\"131072\" gdr=\"1\"/></nic></pci>"
#define GPU_XML(bus, dev, links)                                                                   \
    PCI_DEV(bus, "0x030200")                                                                       \
    "<gpu dev=\"" dev "\" sm=\"80\" rank=\"" dev "\" gdr=\"1\">" links "</gpu></pci>"
#define NVL_TO(bus) "<nvlink target=\"0000:" bus ":00.0\" count=\"12\" tclass=\"0x030200\"/>"

typedef struct relay_case {
    const char *name;
    bool nvlink;
    bool nic_on_cpu; /* relay far from the NIC */
    bool gpu1_near;  /* source already at PXB or better: no better path */
    bool pxn;        /* expected */
} relay_case;

static char *relay_xml(const relay_case *rc)
{
    const char *nvl0 = rc->nvlink ? NVL_TO("21") : "";
    const char *nvl1 = rc->nvlink ? NVL_TO("11") : "";
    char gpu0[1024], gpu1[1024];
    snprintf(
        gpu0, sizeof(gpu0),
        PCI_DEV("11", "0x030200") "<gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\">%s</gpu></pci>",
        nvl0);
    snprintf(
        gpu1, sizeof(gpu1),
        PCI_DEV("21", "0x030200") "<gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">%s</gpu></pci>",
        nvl1);
    char *xml = malloc(8192);
    assert_non_null(xml);
    snprintf(xml, 8192,
             "<system version=\"1\"><cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"x86_64\" "
             "vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"106\">" PCI_SW(
                 "10") "%s%s%s</pci>" PCI_SW("20") "%s</pci>%s</cpu></system>",
             gpu0, rc->nic_on_cpu ? "" : NIC_XML("12"), rc->gpu1_near ? gpu1 : "",
             rc->gpu1_near ? "" : gpu1, rc->nic_on_cpu ? NIC_XML("30") : "");
    return xml;
}

static int gpu1_net_path(const tp_plan *plan)
{
    const tp_system *sys = plan->sys;
    int g = tp_paths__rank_to_index(sys, 1);
    assert_true(g >= 0);
    assert_int_equal(sys->nodes[TP_NODE_NET].count, 1);
    return sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET][0].type;
}

/* Seed 001 H6: relay-NIC <= PXB, relay-source <= NVL, same node, better path; break one: no PXN. */
static void test_nics_pxn_relay_conditions(void **state)
{
    (void)state;
    static const relay_case cases[] = {
        {"all conditions hold", true, false, false, true},
        {"no NVLink to the relay", false, false, false, false},
        {"relay far from the NIC", true, true, false, false},
        {"no better path", true, false, true, false},
    };
    const char *const level1[] = {"NCCL_P2P_PXN_LEVEL=1", NULL};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *xml = relay_xml(&cases[i]);
        tp_plan *plan = plan_text(xml, level1, 2);
        tp_nics nx;
        build(&nx, plan);
        const tp_nic_rank *r1 = rank_of(&nx, 1);
        bool pxn_path = gpu1_net_path(plan) == TP_PATH_PXN;
        if (pxn_path != cases[i].pxn)
            print_error("case \"%s\": PXN path %d\n", cases[i].name, pxn_path);
        assert_int_equal(pxn_path, cases[i].pxn);
        assert_int_equal(r1->n_peers, 2);
        for (int p = 0; p < r1->n_peers; p++)
            assert_int_equal(r1->peers[p].proxy_rank, cases[i].pxn ? 0 : 1);
        assert_int_equal(has_finding(&nx, "PXN: rank 1"), cases[i].pxn);
        /* Level 1 makes NCCL 2.22.3's ncclTopoGetPxnRanks crash once a NIC is at PXN or closer. */
        assert_int_equal(has_finding(&nx, "init crashes"), !cases[i].nic_on_cpu);
        /* Never on the receive side, and never relayed for the NIC's own GPU. */
        for (int u = 0; u < r1->n_uses; u++)
            if (!r1->uses[u].send)
                assert_int_equal(r1->uses[u].proxy_rank, 1);
        for (int p = 0; p < rank_of(&nx, 0)->n_peers; p++)
            assert_int_equal(rank_of(&nx, 0)->peers[p].proxy_rank, 0);
        tp_nics__free(&nx);
        tp_plan_free(plan);
        free(xml);
    }
}

/* The relay must be on the same node: the same system, a GPU with another system id. */
static void test_nics_pxn_needs_same_node(void **state)
{
    (void)state;
    relay_case base = {"base", true, false, false, true};
    char *xml = relay_xml(&base);
    tp_plan *plan = plan_text(xml, NULL, 2);
    tp_error err = {0};
    for (int other = 0; other < 2; other++) {
        tp_system *sys = NULL;
        assert_int_equal(tp_system__clone(&sys, plan->host_sys, &err), TP_OK);
        int g1 = tp_paths__rank_to_index(sys, 1);
        tp_node *gpu1 = &sys->nodes[TP_NODE_GPU].nodes[g1];
        if (other)
            gpu1->id = TP_ID(1, TP_ID_LOCAL_ID(gpu1->id));
        assert_int_equal(tp_paths__compute(sys, plan->cfg, NULL, NULL, &err), TP_OK);
        int type = gpu1->paths[TP_NODE_NET][0].type;
        int proxy = -1;
        assert_int_equal(tp_paths__get_intermediate_rank(
                             sys, 1, sys->nodes[TP_NODE_NET].nodes[0].id, &proxy, NULL, &err),
                         TP_OK);
        assert_int_equal(type == TP_PATH_PXN, !other);
        assert_int_equal(proxy, other ? 1 : 0);
        tp_system__free(sys);
    }
    tp_plan_free(plan);
    free(xml);
}

/* NCCL_PXN_DISABLE=1 (effective level 0): no relay even when every condition holds. */
static void test_nics_pxn_disable(void **state)
{
    (void)state;
    relay_case base = {"base", true, false, false, true};
    char *xml = relay_xml(&base);
    static const char *const envs[][2] = {{"NCCL_PXN_DISABLE=1", NULL},
                                          {"NCCL_P2P_PXN_LEVEL=0", NULL}};
    for (size_t e = 0; e < ARRAY_LEN(envs); e++) {
        tp_plan *plan = plan_text(xml, envs[e], 2);
        tp_nics nx;
        build(&nx, plan);
        const tp_nic_rank *r1 = rank_of(&nx, 1);
        for (int p = 0; p < r1->n_peers; p++)
            assert_int_equal(r1->peers[p].proxy_rank, 1);
        assert_int_equal(r1->n_pxn, 0);
        assert_int_equal(nx.pxn_level, 0);
        /* PXN_DISABLE also removes the PXN path; level 0 keeps it for collectives. */
        assert_int_equal(gpu1_net_path(plan) == TP_PATH_PXN, e == 1);
        tp_nics__free(&nx);
        tp_plan_free(plan);
    }
    free(xml);
}

/* ------------------------------------------------------------------ */
/* NCCL_IB_HCA and merging on the XML                                  */
/* ------------------------------------------------------------------ */

static void expect_nets(const tp_plan *plan, const char *const *names, int n, float bw)
{
    tp_nics nx;
    build(&nx, plan);
    assert_int_equal(nx.n_nets, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(nx.nets[i].dev, i);
        assert_string_equal(nx.nets[i].name, names[i]);
        assert_true(nx.nets[i].bw == bw);
    }
    tp_nics__free(&nx);
}

static void test_nics_two_port_unmerged(void **state)
{
    (void)state;
    static const char *const names[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    /* NCCL_IB_MERGE_NICS is 1 by default, but a dumped XML is already merged: only set counts. */
    tp_plan *plan = plan_fixture("dual_port_nics.xml", NULL, 2);
    expect_nets(plan, names, 4, 12.5f);
    assert_int_equal(plan->nic_notes.n_lines, 0);
    tp_plan_free(plan);
    const char *const off[] = {"NCCL_IB_MERGE_NICS=0", NULL};
    plan = plan_fixture("dual_port_nics.xml", off, 2);
    expect_nets(plan, names, 4, 12.5f);
    tp_plan_free(plan);
}

static void test_nics_two_port_merged(void **state)
{
    (void)state;
    static const char *const names[] = {"mlx5_0+mlx5_1", "mlx5_2+mlx5_3"};
    const char *const on[] = {"NCCL_IB_MERGE_NICS=1", NULL};
    tp_plan *plan = plan_fixture("dual_port_nics.xml", on, 2);
    expect_nets(plan, names, 2, 25.0f);
    assert_true(notes_have(plan, "merge into NET/0 mlx5_0+mlx5_1 (200000 Mb/s)"));
    tp_plan_free(plan);
}

/* Any difference (GUID) prevents merging; a mix of 1- and 2-port devices turns it off. */
static void test_nics_merge_prevented(void **state)
{
    (void)state;
    const char *const on[] = {"NCCL_IB_MERGE_NICS=1", NULL};
    char *xml = helpers_fixture("dual_port_nics.xml");
    xml = replace(xml,
                  "name=\"mlx5_3\" dev=\"3\" speed=\"100000\" port=\"2\" latency=\"0.000000\" "
                  "guid=\"0xb8cef60300aa0020\"",
                  "name=\"mlx5_3\" dev=\"3\" speed=\"100000\" port=\"2\" latency=\"0.000000\" "
                  "guid=\"0xb8cef60300aa0021\"");
    tp_plan *plan = plan_text(xml, on, 2);
    static const char *const mixed[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    expect_nets(plan, mixed, 4, 12.5f);
    assert_true(notes_have(plan, "a mix of single- and multi-port NICs"));
    tp_plan_free(plan);
    free(xml);
}

static void test_nics_hca_filter_on_topology(void **state)
{
    (void)state;
    /* mlx5_1 is port 2 of its PCI device in the XML: ibv port 1. */
    const char *const env[] = {"NCCL_IB_HCA==mlx5_1:1,mlx5_2", NULL};
    tp_plan *plan = plan_fixture("dual_port_nics.xml", env, 2);
    static const char *const names[] = {"mlx5_1", "mlx5_2"};
    expect_nets(plan, names, 2, 12.5f);
    assert_true(notes_have(plan, "selects 2 of the 4 NET ports"));
    assert_true(notes_have(plan, "drops mlx5_0:1, mlx5_3:1"));
    tp_plan_free(plan);
}

static void test_nics_hca_prefix_trap(void **state)
{
    (void)state;
    char *xml = helpers_fixture("dual_port_nics.xml");
    xml = replace(xml, "name=\"mlx5_3\"", "name=\"mlx5_10\"");
    const char *const env[] = {"NCCL_IB_HCA=mlx5_1", NULL};
    tp_plan *plan = plan_text(xml, env, 2);
    static const char *const names[] = {"mlx5_1", "mlx5_10"};
    expect_nets(plan, names, 2, 12.5f);
    assert_true(notes_have(plan, "entry \"mlx5_1\" also selects mlx5_10:1"));
    tp_plan_free(plan);
    const char *const exact[] = {"NCCL_IB_HCA==mlx5_1", NULL};
    plan = plan_text(xml, exact, 2);
    expect_nets(plan, names, 1, 12.5f);
    tp_plan_free(plan);
    free(xml);
}

/* Seed 001 H3: a filter matching no device: NCCL falls back to sockets; we say so. */
static void test_nics_hca_matches_nothing(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_IB_HCA==mlx4_0:1", NULL};
    tp_plan *plan = plan_fixture("dual_port_nics.xml", env, 2);
    static const char *const names[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    expect_nets(plan, names, 4, 12.5f);
    tp_nics nx;
    build(&nx, plan);
    assert_true(has_finding(&nx, "matches none of the 4 NET ports"));
    assert_true(has_finding(&nx, "falls back to sockets"));
    tp_nics__free(&nx);
    tp_plan_free(plan);
}

/* A filter that keeps every device changes neither the NCCL log (but for the IB plugin's own
 * "NCCL_IB_HCA set to" line, first: net_ib.cc ncclIbInit) nor the notes' absence of drops. */
static void test_nics_hca_no_extra_log_lines(void **state)
{
    (void)state;
    tp_plan *base = plan_fixture("dual_port_nics.xml", NULL, 2);
    const char *const env[] = {"NCCL_IB_HCA=mlx5", NULL};
    tp_plan *plan = plan_fixture("dual_port_nics.xml", env, 2);
    assert_int_equal(plan->log.n_lines, base->log.n_lines + 1);
    assert_string_equal(plan->log.lines[0].text, "NCCL_IB_HCA set to mlx5");
    for (size_t i = 0; i < base->log.n_lines; i++)
        assert_string_equal(plan->log.lines[i + 1].text, base->log.lines[i].text);
    assert_false(notes_have(plan, "drops"));
    tp_plan_free(plan);
    tp_plan_free(base);
}

/* The dual-port fixture planned on 2 nodes under NCCL version `nccl` with `env`. */
static tp_plan *plan_versioned(const char *nccl, const char *const *env)
{
    return helpers_plan_fixture_at("dual_port_nics.xml", nccl, env, 2);
}

/*
 * NCCL_IB_MERGE_NICS's ENV line comes when NCCL reads the parameter. 2.22.3's ncclIbInit reads it
 * before it looks at a device; from 2.24 (ib-merge-nics-per-device) ncclIbMakeVDeviceInternal
 * reads it, first for the first port NCCL_IB_HCA keeps: a filter that keeps none, no line.
 */
static void test_nics_merge_nics_env_line_when_read(void **state)
{
    (void)state;
    static const char *const line = "NCCL_IB_MERGE_NICS set by environment to 0.";
    static const struct {
        const char *nccl, *hca;
        bool printed;
    } cases[] = {
        {"2.22.3", "=none", true},  {"2.22.3", "mlx5_2", true}, {"2.27.5", "=none", false},
        {"2.27.5", "^mlx5", false}, {"2.27.5", "mlx5_2", true}, {"2.27.5", NULL, true},
        {"2.30.7", "=none", false}, {"2.30.7", "mlx5_3", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char hca[64];
        snprintf(hca, sizeof(hca), "NCCL_IB_HCA=%s", cases[i].hca ? cases[i].hca : "");
        const char *const env[] = {"NCCL_IB_MERGE_NICS=0", cases[i].hca ? hca : NULL, NULL};
        tp_plan *plan = plan_versioned(cases[i].nccl, env);
        if (helpers_log_has(plan, line) != cases[i].printed)
            print_error("NCCL %s, NCCL_IB_HCA %s\n", cases[i].nccl,
                        cases[i].hca ? cases[i].hca : "unset");
        assert_int_equal(helpers_log_has(plan, line), cases[i].printed);
        tp_plan_free(plan);
    }
}

/* ------------------------------------------------------------------ */
/* Asymmetric node and rail-optimised machine                          */
/* ------------------------------------------------------------------ */

/* A NIC missing on socket 1: its GPUs use socket 0's NIC (SYS), the others don't cross. */
static void test_nics_asymmetric_node(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("nic_one_socket.xml", NULL, 2);
    tp_nics nx;
    build(&nx, plan);
    assert_int_equal(nx.n_nets, 1);
    assert_int_equal(nx.nets[0].numa, 0);
    for (int i = 0; i < nx.n_ranks; i++) {
        const tp_nic_rank *r = &nx.ranks[i];
        char part[64];
        snprintf(part, sizeof(part), "rank %d (GPU dev %d, NUMA 1) uses NET/0", r->rank, r->dev);
        assert_int_equal(r->numa, r->rank < 2 ? 0 : 1);
        assert_int_equal(r->near_type, r->rank < 2 ? TP_PATH_PIX : TP_PATH_SYS);
        assert_int_equal(has_finding(&nx, part), r->rank >= 2);
    }
    tp_nics__free(&nx);
    tp_plan_free(plan);
}

static tp_plan *plan_builtin(const char *name, const char *const *env, int n_nodes)
{
    const char *xml = tp_builtin_xml(name);
    assert_non_null(xml);
    return plan_text(xml, env, n_nodes);
}

/* DGX H100 (8 NICs, one per GPU) under NCCL_CROSS_NIC=0: every channel on one rail. */
static void test_nics_rail_optimised_cross_nic0(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_CROSS_NIC=0", NULL};
    for (int nodes = 2; nodes <= 3; nodes++) {
        tp_plan *plan = plan_builtin("dgx-h100", env, nodes);
        tp_nics nx;
        build(&nx, plan);
        assert_int_equal(nx.n_nets, 8);
        for (int c = 0; c < nx.ring_channels; c++) {
            const tp_nic_channel *ch = &nx.channels[c];
            assert_true(ch->entry_net >= 0);
            assert_int_equal(ch->entry_net, ch->exit_net);
            assert_int_equal(ch->prev_exit_net, ch->entry_net);
            assert_int_equal(ch->next_entry_net, ch->exit_net);
        }
        for (int i = 0; i < nx.n_nets; i++)
            assert_true(nx.nets[i].ring_uses > 0);
        assert_true(has_finding(&nx, "every ring channel keeps its rail"));
        assert_false(has_finding(&nx, "cross-NIC graph"));
        tp_nics__free(&nx);
        tp_plan_free(plan);
    }
}

/* Under NCCL_CROSS_NIC=1 channels leave through another NIC; with 3 nodes rails are crossed. */
static void test_nics_rail_optimised_cross_nic1(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_CROSS_NIC=1", NULL};
    for (int nodes = 2; nodes <= 3; nodes++) {
        tp_plan *plan = plan_builtin("dgx-h100", env, nodes);
        tp_nics nx;
        build(&nx, plan);
        int inside = 0, crossed = 0;
        for (int c = 0; c < nx.ring_channels; c++) {
            const tp_nic_channel *ch = &nx.channels[c];
            inside += ch->entry_net != ch->exit_net;
            crossed += ch->prev_exit_net != ch->entry_net || ch->exit_net != ch->next_entry_net;
        }
        assert_true(inside > 0);
        assert_true(has_finding(&nx, "cross-NIC graph"));
        /* NCCL reverses odd nodes' rings: 2 nodes keep rails, 3 nodes cannot. */
        assert_int_equal(crossed > 0, nodes == 3);
        assert_int_equal(has_finding(&nx, "cross rails between nodes"), nodes == 3);
        tp_nics__free(&nx);
        tp_plan_free(plan);
    }
}

/* P2P on DGX H100: level 2 relays to the GPU next to the peer's NIC; level 0 keeps the own NIC. */
static void test_nics_rail_optimised_p2p(void **state)
{
    (void)state;
    static const struct {
        const char *env;
        bool relay;
    } rows[] = {{NULL, true}, {"NCCL_P2P_PXN_LEVEL=0", false}, {"NCCL_PXN_DISABLE=1", false}};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const char *const env[] = {rows[i].env, NULL};
        tp_plan *plan = plan_builtin("dgx-h100", env, 2);
        tp_nics nx;
        build(&nx, plan);
        const tp_nic_rank *r0 = rank_of(&nx, 0);
        assert_int_equal(r0->n_peers, 8);
        for (int p = 0; p < 8; p++) {
            int local = r0->peers[p].peer_rank % 8;
            assert_int_equal(r0->peers[p].net, rows[i].relay ? local : 0);
            assert_int_equal(r0->peers[p].proxy_rank, rows[i].relay ? local : 0);
            assert_true(r0->peers[p].gdr);
        }
        assert_int_equal(r0->n_pxn, rows[i].relay ? 7 : 0);
        tp_nics__free(&nx);
        tp_plan_free(plan);
    }
}

/* A 2-node job: a DGX H100 (the reported rank's node) and the node of topology `other`. */
static tp_plan *plan_dgx_h100_and(const char *other)
{
    const char *topos[1] = {other};
    tp_job job = TP_JOB_INIT;
    job.n_nodes = 2;
    job.node_topos = topos;
    job.n_node_topos = 1;
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_plan_file(&plan, "tests/fixtures/dgx_h100.xml", &job, NULL, &err), TP_OK);
    return plan;
}

/*
 * A job of a DGX H100 and 4 of its GPUs (socket 0): the 8-GPU node's NVLS
 * graph has 8 heads, the other 4, and NCCL keeps the fewest (init.cc's
 * all-gather; "NVLS Head 0..3" in NCCL's log of conformance case
 * hetero_dgx_h100_8_4_nodes2): ranks 4-7 head no NVLS channel, so their NICs
 * carry no NVLS traffic.
 */
static void test_nics_nvls_heads_of_the_job(void **state)
{
    (void)state;
    tp_plan *plan = plan_dgx_h100_and("tests/fixtures/dgx_h100_socket0_4gpu.xml");
    assert_int_equal(plan->graphs[TP_GRAPH_NVLS]->n_channels, 8);
    assert_int_equal(plan->channels.nvls_heads, 4);
    tp_nics nx;
    build(&nx, plan);
    for (int i = 0; i < nx.n_ranks; i++) {
        const tp_nic_rank *r = &nx.ranks[i];
        assert_int_equal(r->n_nvls, r->rank < 4 ? 1 : 0);
        if (r->n_nvls)
            assert_int_equal(r->nvls[0].channel, r->rank);
    }
    tp_nics__free(&nx);
    tp_plan_free(plan);
}

/*
 * A job whose nodes searched different ring channel counts (DGX H100: 8; its GPU 0
 * at PCIe x8: 7). NCCL takes collective channel c's NIC from graph channel c modulo
 * the job's combined count (init.cc lowers ringGraph->nChannels to it before
 * connecting; search.cc ncclTopoGetNetDev), so channels c and c + combined leave
 * through the same NIC and proxy, even on the node that searched more channels.
 */
static void test_nics_hetero_channel_modulo_job_count(void **state)
{
    (void)state;
    tp_plan *plan = plan_dgx_h100_and("tests/fixtures/dgx_h100_gpu0_x8.xml");
    int combined = plan->channels.search_channels;
    assert_true(combined < plan->graphs[TP_GRAPH_RING]->n_channels); /* node 0 searched more */
    tp_nics nx;
    build(&nx, plan);
    int checked = 0;
    for (int i = 0; i < nx.n_ranks; i++) {
        const tp_nic_rank *r = &nx.ranks[i];
        for (int k = 0; k < r->n_uses; k++) {
            const tp_nic_use *u = &r->uses[k], *base = NULL;
            for (int j = 0; j < r->n_uses && u->channel >= combined; j++)
                if (r->uses[j].channel == u->channel % combined && r->uses[j].send == u->send)
                    base = &r->uses[j];
            if (u->channel < combined)
                continue;
            assert_non_null(base); /* the duplicated ring has the same neighbours */
            assert_int_equal(u->net, base->net);
            assert_int_equal(u->proxy_rank, base->proxy_rank);
            assert_int_equal(u->peer_net, base->peer_net);
            tp_nic_choice a, b;
            assert_int_equal(tp_plan_nic(plan, r->rank, u->channel, -1, &a, sizeof(a)), TP_OK);
            assert_int_equal(tp_plan_nic(plan, r->rank, base->channel, -1, &b, sizeof(b)), TP_OK);
            assert_int_equal(a.role, b.role);
            assert_int_equal(a.net_dev, u->net);
            assert_int_equal(b.net_dev, base->net);
            assert_int_equal(a.proxy_rank, b.proxy_rank);
            checked++;
        }
    }
    assert_true(checked > 0);
    tp_nics__free(&nx);
    tp_plan_free(plan);
}

/* One node: no NET device is used; the report says how to see them. */
static void test_nics_single_node(void **state)
{
    (void)state;
    tp_plan *plan = plan_builtin("dgx-h100", NULL, 1);
    tp_nics nx;
    build(&nx, plan);
    assert_int_equal(nx.n_nets, 0);
    for (int i = 0; i < nx.n_ranks; i++)
        assert_int_equal(nx.ranks[i].n_uses + nx.ranks[i].n_peers, 0);
    assert_true(has_finding(&nx, "a single node"));
    tp_nics__free(&nx);
    tp_plan_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nics_single_net_negative_control),
        cmocka_unit_test(test_nics_pxn_relay_conditions),
        cmocka_unit_test(test_nics_pxn_needs_same_node),
        cmocka_unit_test(test_nics_pxn_disable),
        cmocka_unit_test(test_nics_two_port_unmerged),
        cmocka_unit_test(test_nics_two_port_merged),
        cmocka_unit_test(test_nics_merge_prevented),
        cmocka_unit_test(test_nics_hca_filter_on_topology),
        cmocka_unit_test(test_nics_hca_prefix_trap),
        cmocka_unit_test(test_nics_hca_matches_nothing),
        cmocka_unit_test(test_nics_hca_no_extra_log_lines),
        cmocka_unit_test(test_nics_merge_nics_env_line_when_read),
        cmocka_unit_test(test_nics_asymmetric_node),
        cmocka_unit_test(test_nics_rail_optimised_cross_nic0),
        cmocka_unit_test(test_nics_rail_optimised_cross_nic1),
        cmocka_unit_test(test_nics_rail_optimised_p2p),
        cmocka_unit_test(test_nics_hetero_channel_modulo_job_count),
        cmocka_unit_test(test_nics_nvls_heads_of_the_job),
        cmocka_unit_test(test_nics_single_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
