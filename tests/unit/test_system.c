/*
 * The system stage: XML preparation and building, against NCCL 2.22.3's
 * rules (topo.cc, xml.cc) and the seed documents' figures (seed 000:
 * PCIe 8 GT/s x16 = 12 GB/s, x4 = 3 GB/s, V100 NV2 = 40 GB/s).
 */
#include "helpers.h"

#include "system/system.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

#define CPU_INTEL                                                                                  \
    "<cpu numaid=\"0\" affinity=\"ff\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" "    \
    "modelid=\"85\">"

/* One GPU (sm, nvlinks given) on a PCI link of this speed and width. */
static char *one_gpu_xml(const char *speed, const char *width)
{
    char *buf = malloc(2048);
    snprintf(buf, 2048,
             "<system version=\"1\">" CPU_INTEL
             "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"%s\" link_width=\"%s\">"
             "<gpu dev=\"0\" sm=\"70\" rank=\"0\" gdr=\"0\"/></pci></cpu></system>",
             speed, width);
    return buf;
}

static tp_status try_build(const char *xml, int first_rank, tp_log *log, tp_system **out,
                           tp_error *err)
{
    tp_xml *doc = NULL;
    *out = NULL;
    tp_status st = tp_xml__parse(&doc, xml, strlen(xml), "<test>", err);
    if (st == TP_OK)
        st = tp_system__prepare_xml_log(doc, NULL, first_rank, first_rank, log, err);
    if (st == TP_OK)
        st = tp_system__from_xml_log(out, doc, NULL, 0, log, err);
    tp_xml__free(doc);
    return st;
}

static tp_system *build(const char *xml, int first_rank, tp_log *log)
{
    tp_system *sys = NULL;
    tp_error err = {0};
    if (try_build(xml, first_rank, log, &sys, &err) != TP_OK) {
        char msg[1024];
        tp_error_format(&err, msg, sizeof(msg));
        print_error("build failed: %s\n", msg);
        fail();
    }
    assert_int_equal(tp_system__check(sys, &err), TP_OK);
    return sys;
}

/* The error message of a failing build (static buffer). */
static const char *build_error(const char *xml)
{
    static char msg[1024];
    tp_system *sys = NULL;
    tp_error err = {0};
    tp_status st = try_build(xml, 0, NULL, &sys, &err);
    tp_system__free(sys);
    if (st == TP_OK)
        return "(no error)";
    tp_error_format(&err, msg, sizeof(msg));
    return msg;
}

static const tp_link *find_link(const tp_node *n, tp_node_type rem_type, int64_t rem_id)
{
    for (int l = 0; l < n->n_links; l++)
        if (n->links[l].rem->type == rem_type && n->links[l].rem->id == rem_id)
            return &n->links[l];
    return NULL;
}

static bool log_has(const tp_log *log, const char *text)
{
    for (size_t i = 0; i < log->n_lines; i++)
        if (strcmp(log->lines[i].text, text) == 0)
            return true;
    return false;
}

/* ---- bandwidth rules ---- */

static void test_pci_bw_gen_by_width(void **state)
{
    (void)state;
    static const struct {
        const char *speed, *width;
        float bw;
        bool kv_line; /* NCCL logs its fallback */
    } rows[] = {
        {"8.0 GT/s PCIe", "16", 12.0f, false}, /* seed 000: Gen3 x16 */
        {"8.0 GT/s PCIe", "4", 3.0f, false},   /* seed 000: Gen3 x4 */
        {"2.5 GT/s PCIe", "16", 3.0f, false},
        {"5.0 GT/s PCIe", "8", 3.0f, false},
        {"16.0 GT/s PCIe", "16", 24.0f, false},
        {"32.0 GT/s PCIe", "16", 48.0f, false},
        {"64.0 GT/s PCIe", "16", 96.0f, false},
        {"8 GT/s", "16", 12.0f, false},
        {"16 GT/s", "1", 1.5f, false},
        {"32 GT/s PCIe/s", "8", 24.0f, false},
        {"8.0 GT/s PCIe", "0", 12.0f, false}, /* width 0 counts as x16 */
        {"16.0 GT/s PCIe", "", 24.0f, false}, /* so does an empty width */
        {"", "16", 12.0f, true},              /* unknown speed: Gen3 */
        {"7 GT/s", "8", 6.0f, true},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        char *xml = one_gpu_xml(rows[i].speed, rows[i].width);
        tp_log log = {.enabled = true};
        tp_system *sys = build(xml, 0, &log);
        const tp_node *gpu = sys->nodes[TP_NODE_GPU].nodes;
        const tp_link *up = find_link(gpu, TP_NODE_CPU, 0);
        assert_non_null(up);
        if (up->bw != rows[i].bw)
            print_error("row %zu: \"%s\" x\"%s\": %f\n", i, rows[i].speed, rows[i].width,
                        (double)up->bw);
        assert_true(up->bw == rows[i].bw);
        assert_int_equal(up->type, TP_LINK_PCI);
        char line[128];
        snprintf(line, sizeof(line),
                 "KV Convert to int : could not find value of '%s' in dictionary, falling back "
                 "to 60",
                 rows[i].speed);
        assert_int_equal(log_has(&log, line), rows[i].kv_line);
        /* The notes name the <pci> by its place (line 1, the column of its '<'). */
        int column = (int)(strstr(xml, "<pci") - xml) + 1;
        snprintf(line, sizeof(line),
                 "<test>:1:%d: <pci> link_speed=\"%s\" is unknown; NCCL falls back to 60", column,
                 rows[i].speed);
        assert_int_equal(log_has(&sys->notes, line), rows[i].kv_line);
        snprintf(line, sizeof(line), "<test>:1:%d: <pci> link_width \"%s\": NCCL assumes x16",
                 column, rows[i].width);
        assert_int_equal(log_has(&sys->notes, line), atoi(rows[i].width) == 0);
        tp_log_clear(&log);
        tp_system__free(sys);
        free(xml);
    }
}

static void test_nvlink_bw_per_compute_capability(void **state)
{
    (void)state;
    static const struct {
        int sm;
        float bw;
    } rows[] = {
        {50, 20.0f}, {60, 18.0f}, {61, 18.0f}, {70, 20.0f}, {75, 20.0f},  {80, 20.0f},
        {86, 12.0f}, {87, 20.0f}, {89, 20.0f}, {90, 20.6f}, {100, 20.6f},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        assert_true(tp_system__nvlink_bw(tp_nccl_profile__find("2.22.3"), rows[i].sm) ==
                    rows[i].bw);
    /* 2.27.5: SM100_NVLINK_BW for Blackwell. */
    assert_true(tp_system__nvlink_bw(tp_nccl_profile__find("2.27.5"), 100) == 40.1f);
    assert_true(tp_system__nvlink_bw(tp_nccl_profile__find("2.27.5"), 90) == 20.6f);
}

/* Two GPUs joined by `count` NVLinks, the first listing the link only. */
static char *nvlink_pair_xml(int sm, int count)
{
    char *buf = malloc(2048);
    snprintf(buf, 2048,
             "<system version=\"1\">" CPU_INTEL
             "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
             "link_width=\"16\"><gpu dev=\"0\" sm=\"%d\" rank=\"0\" gdr=\"0\">"
             "<nvlink target=\"0000:1c:00.0\" count=\"%d\" tclass=\"0x030200\"/></gpu></pci>"
             "<pci busid=\"0000:1c:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
             "link_width=\"16\"><gpu dev=\"1\" sm=\"%d\" rank=\"1\" gdr=\"0\"/></pci>"
             "</cpu></system>",
             sm, count, sm);
    return buf;
}

static void test_nvlink_links_count_times_rate(void **state)
{
    (void)state;
    static const struct {
        int sm, count;
        float bw;
    } rows[] = {
        {70, 2, 40.0f}, /* seed 000: V100 NV2 */
        {70, 1, 20.0f}, {80, 12, 240.0f}, {86, 4, 48.0f}, {60, 4, 72.0f}, {90, 18, 18 * 20.6f},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        char *xml = nvlink_pair_xml(rows[i].sm, rows[i].count);
        tp_system *sys = build(xml, 0, NULL);
        const tp_node *g0 = &sys->nodes[TP_NODE_GPU].nodes[0];
        const tp_node *g1 = &sys->nodes[TP_NODE_GPU].nodes[1];
        const tp_link *l = find_link(g0, TP_NODE_GPU, 0x1c000);
        assert_non_null(l);
        assert_int_equal(l->type, TP_LINK_NVL);
        assert_true(l->bw == rows[i].bw);
        /* NCCL 2.22.3: a GPU-GPU NVLink is one-way unless the peer lists it too. */
        assert_null(find_link(g1, TP_NODE_GPU, 0x1a000));
        /* NVLinks sort ahead of the PCI link. */
        assert_int_equal(g0->links[0].type, TP_LINK_NVL);
        tp_system__free(sys);
        free(xml);
    }
}

/* Two CPUs of this kind with one GPU each. */
static char *two_cpu_xml(const char *arch, const char *vendor, int family, int model)
{
    char *buf = malloc(4096);
    char cpu[2][512];
    for (int i = 0; i < 2; i++)
        snprintf(cpu[i], sizeof(cpu[i]),
                 "<cpu numaid=\"%d\" affinity=\"ff\" arch=\"%s\" vendor=\"%s\" familyid=\"%d\" "
                 "modelid=\"%d\"><pci busid=\"0000:%02x:00.0\" class=\"0x030200\" "
                 "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"><gpu dev=\"%d\" sm=\"80\" "
                 "rank=\"%d\" gdr=\"0\"/></pci></cpu>",
                 i, arch, vendor, family, model, 0x1a + 0x60 * i, i, i);
    snprintf(buf, 4096, "<system version=\"1\">%s%s</system>", cpu[0], cpu[1]);
    return buf;
}

static void test_cpu_interconnect_by_vendor(void **state)
{
    (void)state;
    static const struct {
        const char *arch, *vendor;
        int family, model;
        float bw;
        int arch_id, vendor_id, model_id;
    } rows[] = {
        {"x86_64", "GenuineIntel", 6, 85, 10.0f, 1, 1, 2},  /* Skylake: SKL_QPI */
        {"x86_64", "GenuineIntel", 6, 143, 10.0f, 1, 1, 2}, /* Sapphire Rapids */
        {"x86_64", "GenuineIntel", 6, 79, 6.0f, 1, 1, 1},   /* Broadwell: QPI */
        {"x86_64", "AuthenticAMD", 23, 49, 16.0f, 1, 2, -1},
        {"x86_64", "CentaurHauls", 7, 0x5B, 9.0f, 1, 3, 1}, /* Yongfeng */
        {"x86_64", "  Shanghai  ", 7, 0x3B, 6.0f, 1, 3, -1},
        {"x86_64", "HygonGenuine", 24, 1, 5000.0f, 1, 0, -1}, /* unknown vendor: LOC_BW */
        {"ppc64", "IBM", 0, 0, 32.0f, 2, -1, -1},
        {"arm64", "ARM", 0, 0, 6.0f, 3, -1, -1},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        char *xml = two_cpu_xml(rows[i].arch, rows[i].vendor, rows[i].family, rows[i].model);
        tp_system *sys = build(xml, 0, NULL);
        assert_int_equal(sys->nodes[TP_NODE_CPU].count, 2);
        const tp_node *c0 = &sys->nodes[TP_NODE_CPU].nodes[0];
        const tp_link *l = find_link(c0, TP_NODE_CPU, 1);
        assert_non_null(l);
        assert_int_equal(l->type, TP_LINK_SYS);
        if (l->bw != rows[i].bw)
            print_error("row %zu: %f\n", i, (double)l->bw);
        assert_true(l->bw == rows[i].bw);
        int arch, vendor, model;
        tp_system__cpu_type(sys, &arch, &vendor, &model);
        assert_int_equal(arch, rows[i].arch_id);
        assert_int_equal(vendor, rows[i].vendor_id);
        assert_int_equal(model, rows[i].model_id);
        tp_system__free(sys);
        free(xml);
    }
}

/* ---- NVSwitch, NICs, ordering ---- */

static const char nvswitch_xml[] =
    "<system version=\"1\">" CPU_INTEL
    "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"16\"><gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">"
    "<nvlink target=\"0000:c0:00.0\" count=\"10\" tclass=\"0x068000\"/>"
    "<nvlink target=\"0000:c1:00.0\" count=\"8\"/></gpu></pci>"
    "<pci busid=\"0000:1b:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"16\"><gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\">"
    "<nvlink target=\"0000:c0:00.0\" count=\"18\" tclass=\"0x068000\"/></gpu></pci>"
    "</cpu></system>";

static void test_nvswitch_single_node_both_ways(void **state)
{
    (void)state;
    tp_system *sys = build(nvswitch_xml, 0, NULL);
    assert_int_equal(sys->nodes[TP_NODE_NVS].count, 1);
    const tp_node *nvs = sys->nodes[TP_NODE_NVS].nodes;
    assert_int_equal(nvs->id, 0);
    for (int g = 0; g < 2; g++) {
        const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
        const tp_link *to = find_link(gpu, TP_NODE_NVS, 0);
        const tp_link *back = find_link(nvs, TP_NODE_GPU, gpu->id);
        assert_non_null(to);
        assert_non_null(back);
        /* Both <nvlink> of GPU 0 (the second with no tclass: NVSwitch) add up, in
         * float as NCCL adds them (10 x 20.6 + 8 x 20.6 is not 18 x 20.6 in float). */
        float want = g == 0 ? 10 * 20.6f + 8 * 20.6f : 18 * 20.6f;
        assert_true(to->bw == want);
        assert_true(back->bw == to->bw);
    }
    tp_system__free(sys);
}

static const char nic_xml[] =
    "<system version=\"1\">" CPU_INTEL
    "<pci busid=\"0000:18:00.0\" class=\"0x060400\" vendor=\"0x10b5\" device=\"0x8796\" "
    "subsystem_vendor=\"0x10b5\" subsystem_device=\"0x8796\" link_speed=\"8.0 GT/s PCIe\" "
    "link_width=\"16\">"
    "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
    "link_width=\"16\"><gpu dev=\"0\" sm=\"70\" rank=\"0\"/></pci>"
    "<pci busid=\"0000:1c:00.0\" class=\"0x020000\" link_speed=\"8.0 GT/s PCIe\" "
    "link_width=\"8\"><nic><net name=\"mlx5_0\" dev=\"7\" speed=\"100000\" port=\"1\" "
    "latency=\"0.000000\" guid=\"0xabc\" maxconn=\"131072\" gdr=\"1\"/></nic></pci>"
    "<pci busid=\"0000:1c:00.1\" class=\"0x020000\" link_speed=\"8.0 GT/s PCIe\" "
    "link_width=\"8\"><nic><net name=\"mlx5_1\" dev=\"3\" speed=\"0\" port=\"2\" "
    "guid=\"abc\" gdr=\"0\"/></nic></pci>"
    "</pci></cpu></system>";

static void test_nics_merge_functions_and_nets_renumbered(void **state)
{
    (void)state;
    tp_log log = {.enabled = true};
    tp_system *sys = build(nic_xml, 0, &log);
    /* Functions .0 and .1 of one device share a NIC (NCCL 2.22.3 multi-port merge). */
    assert_int_equal(sys->nodes[TP_NODE_NIC].count, 1);
    assert_int_equal(sys->nodes[TP_NODE_NIC].nodes[0].id, 0x1c000);
    assert_int_equal(sys->nodes[TP_NODE_NET].count, 2);
    /* NET devices are numbered by their order of dev (3 then 7). */
    const tp_node *n0 = &sys->nodes[TP_NODE_NET].nodes[0];
    const tp_node *n1 = &sys->nodes[TP_NODE_NET].nodes[1];
    assert_int_equal(n0->net.dev, 1);
    assert_int_equal(n0->id, 1);
    assert_true(n0->net.bw == 12.5f);
    assert_int_equal(n0->net.asic, 0xabc);
    assert_int_equal(n0->net.max_channels, 131072);
    assert_int_equal(n1->net.dev, 0);
    assert_true(n1->net.bw == 1.25f);  /* speed 0: 10 Gb/s */
    assert_int_equal(n1->net.asic, 0); /* guid without 0x: NCCL's sscanf fails */
    assert_int_equal(n1->net.max_channels, 32); /* MAXCHANNELS of NCCL 2.22.3 */
    assert_true(n1->net.latency == 0.0f);
    assert_true(log_has(&log, "Attribute latency of node net not found"));
    /* The GPU had no gdr: GDR-capable since a NET has gdr="1". */
    assert_int_equal(sys->nodes[TP_NODE_GPU].nodes[0].gpu.gdr_support, 1);
    assert_int_equal(sys->nodes[TP_NODE_PCI].nodes[0].pci.device, 0x10b5879610b58796ULL);
    tp_log_clear(&log);
    tp_system__free(sys);
}

static void test_print_tree_lines(void **state)
{
    (void)state;
    tp_log log = {.enabled = true};
    tp_system *sys = build(nic_xml, 0, NULL);
    sys->max_bw = 12.0f;
    sys->total_bw = 12.0f;
    tp_system__print(&log, sys);
    static const char *const want[] = {
        "=== System : maxBw 12.0 totalBw 12.0 ===",
        "CPU/0-0 (1/1/2)",
        "+ PCI[12.0] - PCI/0-18000 (10b5879610b58796)",
        "              + PCI[12.0] - GPU/0-1a000 (0)",
        "              + PCI[6.0] - NIC/0-1c000",
        "                           + NET[12.5] - NET/1 (abc/1/12.500000)",
        "                           + NET[1.2] - NET/0 (0/2/1.250000)",
        "==========================================",
    };
    assert_int_equal(log.n_lines, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        assert_string_equal(log.lines[i].text, want[i]);
    tp_log_clear(&log);
    tp_system__free(sys);
}

/* GPUs listed out of rank order, with an uplink sorted last by NCCL's tree sort. */
static const char order_xml[] =
    "<system version=\"1\">" CPU_INTEL
    "<pci busid=\"0000:20:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
    "link_width=\"16\"><gpu dev=\"1\" sm=\"70\" rank=\"%s\" gdr=\"0\"/></pci>"
    "<pci busid=\"0000:10:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
    "link_width=\"16\"><gpu dev=\"0\" sm=\"70\" rank=\"%s\" gdr=\"0\"/></pci>"
    "</cpu></system>";

static void test_gpu_ranks_follow_rank_then_dev(void **state)
{
    (void)state;
    static const struct {
        const char *r_first, *r_second;
        int first_rank;
        int rank_of_20, rank_of_10;
    } rows[] = {
        {"0", "1", 0, 0, 1}, /* rank attributes 0..n-1 win */
        {"1", "0", 0, 1, 0},
        {"5", "9", 0, 1, 0}, /* not 0..n-1: by dev */
        {"0", "1", 8, 8, 9}, /* a later node offsets the ranks */
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        char xml[2048];
        snprintf(xml, sizeof(xml), order_xml, rows[i].r_first, rows[i].r_second);
        tp_system *sys = build(xml, rows[i].first_rank, NULL);
        /* Rank 0's GPU comes first in NCCL's fused XML, hence in the system. */
        const tp_node_set *g = &sys->nodes[TP_NODE_GPU];
        const tp_node *g20 = g->nodes[0].id == 0x20000 ? &g->nodes[0] : &g->nodes[1];
        const tp_node *g10 = g->nodes[0].id == 0x10000 ? &g->nodes[0] : &g->nodes[1];
        assert_int_equal(g20->gpu.rank, rows[i].rank_of_20);
        assert_int_equal(g10->gpu.rank, rows[i].rank_of_10);
        assert_true(g->nodes[0].gpu.rank < g->nodes[1].gpu.rank);
        tp_system__free(sys);
    }
}

static void test_sort_puts_uplink_last(void **state)
{
    (void)state;
    tp_system *sys = build(nvswitch_xml, 0, NULL);
    for (int g = 0; g < 2; g++) {
        const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
        assert_int_equal(gpu->n_links, 2);
        assert_int_equal(gpu->links[0].type, TP_LINK_NVL);
        assert_int_equal(gpu->links[1].type, TP_LINK_PCI);
    }
    tp_system__free(sys);
}

/* Same-name NETs: NCCL finds every device by name, so the first gets the last dev. */
static void test_duplicate_net_names(void **state)
{
    (void)state;
    static const char xml[] =
        "<system version=\"1\">" CPU_INTEL
        "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
        "link_width=\"16\"><gpu dev=\"0\" sm=\"70\" rank=\"0\" gdr=\"0\"/></pci>"
        "<nic><net name=\"eth0\" dev=\"0\" speed=\"10000\" guid=\"0x1\"/>"
        "<net name=\"eth1\" dev=\"1\" speed=\"10000\" guid=\"0x2\"/>"
        "<net name=\"eth0\" dev=\"1\" speed=\"10000\" guid=\"0x3\"/></nic></cpu></system>";
    tp_system *sys = build(xml, 0, NULL);
    const tp_node_set *nets = &sys->nodes[TP_NODE_NET];
    assert_int_equal(nets->count, 3);
    assert_int_equal(nets->nodes[0].net.dev, 2);
    assert_int_equal(nets->nodes[1].net.dev, 1);
    assert_int_equal(nets->nodes[2].net.dev, 1); /* never looked up: keeps its dev */
    /* A <nic> right under a CPU hangs off a NIC with id 0, linked at LOC_BW. */
    const tp_link *l = find_link(&sys->nodes[TP_NODE_CPU].nodes[0], TP_NODE_NIC, 0);
    assert_non_null(l);
    assert_true(l->bw == TP_LOC_BW);
    tp_system__free(sys);
}

/* Broadcom Gen4 switches in base mode: the sub switch level is flattened. */
static void test_bcm_gen4_switch_flattened(void **state)
{
    (void)state;
    static const char xml[] =
        "<system version=\"1\">" CPU_INTEL
        "<pci busid=\"0000:01:00.0\" class=\"0x060400\" vendor=\"0x1000\" device=\"0xc010\" "
        "subsystem_vendor=\"0x1000\" subsystem_device=\"0xa064\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\">"
        "<pci busid=\"0000:03:00.0\" class=\"0x060400\" vendor=\"0x1000\" device=\"0xc010\" "
        "subsystem_vendor=\"0x1000\" subsystem_device=\"0xa064\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\">"
        "<pci busid=\"0000:07:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\"><gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/></pci></pci>"
        "</pci></cpu></system>";
    tp_system *sys = build(xml, 0, NULL);
    assert_int_equal(sys->nodes[TP_NODE_PCI].count, 1);
    const tp_node *sw = sys->nodes[TP_NODE_PCI].nodes;
    assert_int_equal(sw->id, 0x1000);
    assert_int_equal(sw->pci.device, 0x1000c0101000ffffULL);
    const tp_node *gpu = sys->nodes[TP_NODE_GPU].nodes;
    assert_non_null(find_link(sw, TP_NODE_GPU, gpu->id));
    assert_ptr_equal(gpu->links[gpu->n_links - 1].rem, sw);
    assert_ptr_equal(sw->links[sw->n_links - 1].rem, sys->nodes[TP_NODE_CPU].nodes);
    tp_system__free(sys);
}

/* ---- the node store ---- */

static void test_clone_repoints_links(void **state)
{
    (void)state;
    tp_system *sys = build(nic_xml, 0, NULL);
    tp_system *copy = NULL;
    tp_error err = {0};
    assert_int_equal(tp_system__clone(&copy, sys, &err), TP_OK);
    assert_int_equal(tp_system__check(copy, &err), TP_OK);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        assert_int_equal(copy->nodes[t].count, sys->nodes[t].count);
        for (int n = 0; n < copy->nodes[t].count; n++) {
            const tp_node *a = &sys->nodes[t].nodes[n], *b = &copy->nodes[t].nodes[n];
            assert_int_equal(a->n_links, b->n_links);
            for (int l = 0; l < a->n_links; l++) {
                assert_int_equal(a->links[l].rem->id, b->links[l].rem->id);
                assert_ptr_equal(b->links[l].rem,
                                 copy->nodes[a->links[l].rem->type].nodes +
                                     (a->links[l].rem - sys->nodes[a->links[l].rem->type].nodes));
            }
        }
    }
    tp_system__free(sys);
    tp_system__free(copy);
}

static void test_remove_node_fixes_pointers(void **state)
{
    (void)state;
    tp_system *sys = build(nvswitch_xml, 0, NULL);
    tp_error err = {0};
    assert_int_equal(tp_system__remove_node(sys, TP_NODE_GPU, 0, &err), TP_OK);
    assert_int_equal(sys->nodes[TP_NODE_GPU].count, 1);
    assert_int_equal(sys->nodes[TP_NODE_GPU].nodes[0].id, 0x1b000);
    const tp_node *nvs = sys->nodes[TP_NODE_NVS].nodes;
    assert_int_equal(nvs->n_links, 1);
    assert_ptr_equal(nvs->links[0].rem, sys->nodes[TP_NODE_GPU].nodes);
    assert_int_equal(tp_system__check(sys, &err), TP_OK);
    assert_int_equal(tp_system__remove_node(sys, TP_NODE_GPU, 3, &err), TP_ERR_INTERNAL);
    tp_system__free(sys);
}

/* Same nodes in the same order, each with the same links (type, bw, far end's type and index). */
static void assert_same_system(const tp_system *a, const tp_system *b)
{
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        assert_int_equal(a->nodes[t].count, b->nodes[t].count);
        for (int n = 0; n < a->nodes[t].count; n++) {
            const tp_node *x = &a->nodes[t].nodes[n], *y = &b->nodes[t].nodes[n];
            assert_int_equal(x->id, y->id);
            assert_int_equal(x->n_links, y->n_links);
            for (int l = 0; l < x->n_links; l++) {
                const tp_link *p = &x->links[l], *q = &y->links[l];
                assert_int_equal(p->type, q->type);
                assert_true(p->bw == q->bw);
                assert_int_equal(p->rem->type, q->rem->type);
                assert_int_equal(p->rem - a->nodes[p->rem->type].nodes,
                                 q->rem - b->nodes[q->rem->type].nodes);
            }
        }
    }
}

/* Removing several nodes in one pass leaves what removing them one by one leaves. */
static void test_remove_nodes_as_one_by_one(void **state)
{
    (void)state;
    char *xml = helpers_fixture("dgx_h100.xml");
    tp_system *sys = build(xml, 0, NULL), *one = NULL, *batch = NULL;
    tp_error err = {0};
    static const int gpus[] = {1, 4, 7}; /* indices in the full system */
    bool gone[TP_MAX_NODES] = {false};
    assert_int_equal(tp_system__clone(&one, sys, &err), TP_OK);
    assert_int_equal(tp_system__clone(&batch, sys, &err), TP_OK);
    for (int i = 2; i >= 0; i--)
        assert_int_equal(tp_system__remove_node(one, TP_NODE_GPU, gpus[i], &err), TP_OK);
    for (int i = 0; i < 3; i++)
        gone[gpus[i]] = true;
    assert_int_equal(tp_system__remove_nodes(batch, TP_NODE_GPU, gone, &err), TP_OK);
    assert_same_system(one, batch);
    int n_nets = one->nodes[TP_NODE_NET].count;
    assert_true(n_nets > 1);
    for (int n = n_nets - 1; n >= 0; n--)
        assert_int_equal(tp_system__remove_node(one, TP_NODE_NET, n, &err), TP_OK);
    for (int n = 0; n < n_nets; n++)
        gone[n] = true;
    assert_int_equal(tp_system__remove_nodes(batch, TP_NODE_NET, gone, &err), TP_OK);
    assert_same_system(one, batch);
    assert_int_equal(tp_system__check(batch, &err), TP_OK);
    tp_system__free(one);
    tp_system__free(batch);
    tp_system__free(sys);
    free(xml);
}

static void test_connect_aggregates_and_sorts(void **state)
{
    (void)state;
    tp_system *sys = NULL;
    tp_error err = {0};
    tp_node *a, *b, *c;
    assert_int_equal(tp_system__new(&sys, &err), TP_OK);
    assert_int_equal(tp_system__create_node(sys, &a, TP_NODE_GPU, 1, &err), TP_OK);
    assert_int_equal(tp_system__create_node(sys, &b, TP_NODE_GPU, 2, &err), TP_OK);
    assert_int_equal(tp_system__create_node(sys, &c, TP_NODE_GPU, 3, &err), TP_OK);
    assert_int_equal(a->gpu.rank, -1);
    assert_int_equal(tp_system__connect(a, b, TP_LINK_NVL, 20.0f, &err), TP_OK);
    assert_int_equal(tp_system__connect(a, c, TP_LINK_NVL, 30.0f, &err), TP_OK);
    assert_ptr_equal(a->links[0].rem, c);
    assert_int_equal(tp_system__connect(a, b, TP_LINK_NVL, 20.0f, &err), TP_OK);
    assert_int_equal(a->n_links, 2);
    assert_ptr_equal(a->links[0].rem, b);
    assert_true(a->links[0].bw == 40.0f);
    /* Equal bandwidth: the newer link stays behind. */
    assert_int_equal(tp_system__connect(a, c, TP_LINK_PCI, 40.0f, &err), TP_OK);
    assert_ptr_equal(a->links[1].rem, c);
    assert_int_equal(a->links[1].type, TP_LINK_PCI);
    /* PCI links must come in pairs: the checker notices. */
    assert_int_equal(tp_system__check(sys, &err), TP_ERR_INTERNAL);
    tp_system__free(sys);
}

/* Node storage sized to a topology: a full type fails as a bug, the 256 limit as NCCL's. */
static void test_sized_node_storage(void **state)
{
    (void)state;
    tp_system *sys = NULL;
    tp_error err = {0};
    tp_node *n = NULL;
    int caps[TP_NODE_TYPE_COUNT] = {[TP_NODE_GPU] = 2, [TP_NODE_NET] = 300};
    assert_int_equal(tp_system__new_sized(&sys, caps, &err), TP_OK);
    assert_int_equal(tp_system__create_node(sys, &n, TP_NODE_GPU, 1, &err), TP_OK);
    assert_int_equal(tp_system__create_node(sys, &n, TP_NODE_GPU, 2, &err), TP_OK);
    assert_int_equal(tp_system__create_node(sys, &n, TP_NODE_GPU, 3, &err), TP_ERR_INTERNAL);
    assert_non_null(strstr(err.message, "sized for 2"));
    for (int i = 0; i < TP_MAX_NODES; i++)
        assert_int_equal(tp_system__create_node(sys, &n, TP_NODE_NET, i, &err), TP_OK);
    assert_int_equal(tp_system__create_node(sys, &n, TP_NODE_NET, 999, &err), TP_ERR_TOPOLOGY);
    assert_non_null(strstr(err.message, "allows 256"));
    /* A copy has room for what it copies. */
    tp_system *copy = NULL;
    assert_int_equal(tp_system__clone(&copy, sys, &err), TP_OK);
    assert_int_equal(copy->nodes[TP_NODE_GPU].count, 2);
    assert_int_equal(copy->nodes[TP_NODE_NET].count, TP_MAX_NODES);
    tp_system__free(copy);
    tp_system__free(sys);
}

static void test_busid_parse(void **state)
{
    (void)state;
    int digits = 0;
    assert_int_equal(tp_system__busid_to_int64("0000:1a:00.0", &digits), 0x1a000);
    assert_int_equal(digits, 9);
    assert_int_equal(tp_system__busid_to_int64("0001:00:00.0", NULL), 0x100000);
    assert_int_equal(tp_system__busid_to_int64("0000:C4:00.0", NULL), 0xc4000);
    assert_int_equal(tp_system__busid_to_int64("zz", &digits), 0);
    assert_int_equal(digits, 0);
}

/* ---- errors ---- */

static void test_bad_inputs_fail_with_position(void **state)
{
    (void)state;
    static const struct {
        const char *xml, *want;
    } rows[] = {
        {"<system version=\"2\"><cpu/></system>",
         "<test>:1:1: <system>: version \"2\" (expected 1)"},
        {"<topology version=\"1\"/>",
         "<test>:1:1: <topology>: not a topology (expected a <system> root element)"},
        {"<system version=\"1\">\n" CPU_INTEL
         "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "\n  <gpu dev=\"0\" rank=\"0\"/></pci></cpu></system>",
         "<test>:3:3: <gpu>: missing attribute sm (NCCL would ask CUDA)"},
        {"<system version=\"1\">" CPU_INTEL
         "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"x16\">"
         "<gpu dev=\"0\" sm=\"70\" rank=\"0\"/></pci></cpu></system>",
         "<test>:1:113: <pci>: link_width=\"x16\" is not a number (expected an integer)"},
        {"<system version=\"1\">" CPU_INTEL
         "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "<gpu dev=\"0\" sm=\"70\" rank=\"0\"><nvlink target=\"0000:1b:00.0\" count=\"two\" "
         "tclass=\"0x030200\"/></gpu></pci></cpu></system>",
         "<test>:1:216: <nvlink>: count=\"two\" is not a number (expected an integer)"},
        {"<system version=\"1\">" CPU_INTEL
         "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "<gpu dev=\"0\" sm=\"70\" rank=\"0\"/></pci>\n"
         "<pci busid=\"0000:1A:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "<gpu dev=\"1\" sm=\"70\" rank=\"1\"/></pci></cpu></system>",
         "<test>:2:1: <pci>: duplicate bus id 0000:1A:00.0 (first at line 1)"},
        {"<system version=\"1\">" CPU_INTEL
         "<pci busid=\"0000:1A:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "<gpu dev=\"0\" sm=\"70\" rank=\"0\"/></pci></cpu></system>",
         "<test>:1:113: <pci>: busid \"0000:1A:00.0\" is not in NCCL's form (expected "
         "\"0000:1a:00.0\")"},
        {"<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\">"
         "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "<gpu dev=\"0\" sm=\"70\" rank=\"0\"/></pci></cpu></system>",
         "<test>:1:21: <cpu>: missing attribute vendor"},
        {"<system version=\"1\"><cpu affinity=\"ff\" arch=\"x86_64\" vendor=\"AuthenticAMD\">"
         "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "<gpu dev=\"0\" sm=\"70\" rank=\"0\"/></pci></cpu></system>",
         "<test>:1:21: <cpu>: missing attribute numaid"},
        {"<system version=\"1\">" CPU_INTEL "<nic><net dev=\"0\"/></nic>"
         "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
         "<gpu dev=\"0\" sm=\"70\" rank=\"0\"/></pci></cpu></system>",
         "<test>:1:118: <net>: missing attribute name (NCCL finds NET devices by name)"},
        {"<system version=\"1\">" CPU_INTEL "</cpu></system>",
         "<test>:1:1: <system>: no <gpu> element"},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const char *got = build_error(rows[i].xml);
        if (strcmp(got, rows[i].want) != 0)
            print_error("row %zu: %s\n", i, got);
        assert_string_equal(got, rows[i].want);
    }
}

/* NCCL ignores elements it does not know, saying so, and keeps the first 16 attributes. */
static void test_unknown_elements_ignored(void **state)
{
    (void)state;
    static const char xml[] =
        "<system version=\"1\">" CPU_INTEL "<foo><pci/></foo>"
        "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
        "<gpu dev=\"0\" sm=\"70\" rank=\"0\"><bar/><nvlink target=\"0000:1a:00.0\" count=\"1\" "
        "tclass=\"0x030200\"><baz/></nvlink></gpu></pci></cpu></system>";
    tp_log log = {.enabled = true};
    tp_system *sys = build(xml, 0, &log);
    assert_true(log_has(&log, "Ignoring element foo"));
    assert_true(log_has(&log, "Ignoring element bar"));
    assert_false(log_has(&log, "Ignoring element baz"));
    assert_int_equal(sys->nodes[TP_NODE_GPU].count, 1);
    /* A GPU may list an NVLink to itself: NCCL links it to itself. */
    assert_non_null(find_link(sys->nodes[TP_NODE_GPU].nodes, TP_NODE_GPU, 0x1a000));
    tp_log_clear(&log);
    tp_system__free(sys);
}

/* ---- the prepared XML (NCCL_TOPO_DUMP_FILE) ---- */

static char *prepared_text(const char *xml, int first_rank)
{
    tp_xml *doc = NULL;
    tp_error err = {0};
    assert_int_equal(tp_xml__parse(&doc, xml, strlen(xml), "<test>", &err), TP_OK);
    assert_int_equal(tp_system__prepare_xml(doc, NULL, first_rank, &err), TP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(tp_xml__write(f, doc->root, &err), TP_OK);
    fclose(f);
    tp_xml__free(doc);
    return text;
}

static const char prep_xml[] =
    "<system version=\"1\">"
    "<cpu numaid=\"1\" affinity=\"ff00\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"23\" "
    "modelid=\"49\">"
    "<pci busid=\"0000:81:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"16\"><gpu dev=\"1\" sm=\"80\"/></pci></cpu>"
    "<cpu numaid=\"0\" affinity=\"00ff\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"23\" "
    "modelid=\"49\">"
    "<pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"16\">"
    "<pci busid=\"0000:11:00.0\" class=\"0x030200\"><gpu dev=\"0\" sm=\"80\"/></pci>"
    "<pci busid=\"0000:12:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"8\"><nic><net name=\"mlx5_0\" dev=\"4\" speed=\"200000\" gdr=\"1\"/></nic></pci>"
    "</pci><pci busid=\"0000:30:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" "
    "link_width=\"16\"/></cpu></system>";

static void test_prepare_matches_nccl_dump(void **state)
{
    (void)state;
    char *text = prepared_text(prep_xml, 0);
    /* Rank 0 (dev 0) first, its CPU's tree fused before rank 1's; empty switch trimmed;
     * attributes NCCL could not read from sysfs are set empty. */
    static const char want[] =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\" affinity=\"00ff\" arch=\"x86_64\" vendor=\"AuthenticAMD\" "
        "familyid=\"23\" modelid=\"49\">\n"
        "    <pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\">\n"
        "      <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"\">\n"
        "        <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/>\n"
        "      </pci>\n"
        "      <pci busid=\"0000:12:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"8\">\n"
        "        <nic>\n"
        "          <net name=\"mlx5_0\" dev=\"0\" speed=\"200000\" gdr=\"1\"/>\n"
        "        </nic>\n"
        "      </pci>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "  <cpu numaid=\"1\" affinity=\"ff00\" arch=\"x86_64\" vendor=\"AuthenticAMD\" "
        "familyid=\"23\" modelid=\"49\">\n"
        "    <pci busid=\"0000:81:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\">\n"
        "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\"/>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n";
    assert_string_equal(text, want);
    free(text);
}

static void test_prepare_round_trip_is_stable(void **state)
{
    (void)state;
    const char *inputs[] = {prep_xml, nic_xml, nvswitch_xml};
    for (size_t i = 0; i < ARRAY_LEN(inputs); i++) {
        char *once = prepared_text(inputs[i], 0);
        char *twice = prepared_text(once, 0);
        assert_string_equal(once, twice);
        free(once);
        free(twice);
    }
}

/* A switch holding a GPU and a NIC, with no link_speed: only the GPU's rank fills it in,
 * so NCCL's fusion sees two different switches and keeps both (as NCCL 2.22.3 does). */
static void test_fusion_keeps_mismatched_copies(void **state)
{
    (void)state;
    static const char xml[] =
        "<system version=\"1\">" CPU_INTEL "<pci busid=\"0000:10:00.0\" class=\"0x060400\">"
        "<pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
        "<gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"0\"/></pci>"
        "<pci busid=\"0000:12:00.0\" class=\"0x020000\" link_speed=\"\" link_width=\"16\">"
        "<nic><net name=\"ib0\" dev=\"0\"/></nic></pci></pci>"
        "<pci busid=\"0000:20:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
        "<gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"0\"/></pci></cpu></system>";
    char *text = prepared_text(xml, 0);
    const char *first = strstr(text, "busid=\"0000:10:00.0\"");
    assert_non_null(first);
    assert_non_null(strstr(first + 1, "busid=\"0000:10:00.0\" class=\"0x060400\">"));
    free(text);
}

/* The shared trim (one walk, each rank's GPU branch kept) equals a walk per rank; a lone
 * rank's in-place edit equals the copy of its view. */
static char *prepared_with(const char *xml, int first_rank, bool plain)
{
    tp_xml *doc = NULL;
    tp_error err = {0};
    assert_int_equal(tp_xml__parse(&doc, xml, strlen(xml), "<test>", &err), TP_OK);
    tp_status st = plain ? tp_system__prepare_xml_plain(doc, first_rank, &err)
                         : tp_system__prepare_xml(doc, NULL, first_rank, &err);
    if (st != TP_OK) {
        char msg[1024];
        tp_error_format(&err, msg, sizeof(msg));
        print_error("prepare failed: %s\n", msg);
    }
    assert_int_equal(st, TP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(tp_xml__write(f, doc->root, &err), TP_OK);
    fclose(f);
    tp_xml__free(doc);
    return text;
}

static void test_shared_trim_matches_rank_walks(void **state)
{
    (void)state;
    static const char *const fixtures[] = {
        "v100_nv2.xml",     "dgx_h100.xml",      "pix_nic_2s.xml", "pxb_2level.xml",
        "pcie_2s_8gpu.xml", "rtx4090_4numa.xml", "ac922.xml",      "pix_nic_2s_no_nic1.xml",
    };
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        char *xml = helpers_fixture(fixtures[i]);
        for (int first_rank = 0; first_rank <= 8; first_rank += 8) {
            char *fast = prepared_with(xml, first_rank, false);
            char *plain = prepared_with(xml, first_rank, true);
            assert_string_equal(fast, plain);
            free(fast);
            free(plain);
        }
        free(xml);
    }
    /* A branch kept only by a NET mark next to one with nothing kept. */
    const char *odd = "<system version=\"1\">" CPU_INTEL
                      "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"\" "
                      "link_width=\"16\"><gpu dev=\"0\" sm=\"70\"/></pci>"
                      "<pci busid=\"0000:1b:00.0\" class=\"0x030200\" link_speed=\"\" "
                      "link_width=\"16\"><gpu dev=\"1\" sm=\"70\"/></pci>"
                      "<pci busid=\"0000:30:00.0\" class=\"0x060400\"><pci busid=\"0000:31:00.0\" "
                      "class=\"0x020000\"><nic><net name=\"ib0\" dev=\"0\"/></nic></pci>"
                      "<pci busid=\"0000:32:00.0\" class=\"0x060400\"/></pci></cpu></system>";
    char *fast = prepared_with(odd, 0, false), *plain = prepared_with(odd, 0, true);
    assert_string_equal(fast, plain);
    free(fast);
    free(plain);
    /* One GPU: its view is edited into the document in place instead of copied. */
    const char *lone =
        "<system version=\"1\">" CPU_INTEL
        "<pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\"><gpu dev=\"0\" sm=\"80\" keep=\"1\"><nvlink target=\"0000:c0:00.0\" "
        "count=\"12\"/><nvlink target=\"0000:c1:00.0\" count=\"6\" tclass=\"0x068000\"/></gpu>"
        "</pci><pci busid=\"0000:30:00.0\" class=\"0x060400\"><pci busid=\"0000:31:00.0\" "
        "class=\"0x020000\"><nic><net name=\"ib0\" dev=\"0\" speed=\"100000\" latency=\"0.5\" "
        "guid=\"0x1234\"/></nic></pci><pci busid=\"0000:32:00.0\" class=\"0x060400\"/></pci></cpu>"
        "<cpu numaid=\"1\" affinity=\"ff00\" arch=\"x86_64\" vendor=\"GenuineIntel\" "
        "familyid=\"6\" modelid=\"85\"><pci busid=\"0000:b0:00.0\" class=\"0x060400\"/></cpu>"
        "</system>";
    for (int first_rank = 0; first_rank <= 8; first_rank += 8) {
        fast = prepared_with(lone, first_rank, false);
        plain = prepared_with(lone, first_rank, true);
        assert_string_equal(fast, plain);
        assert_non_null(strstr(fast, first_rank ? "rank=\"8\"" : "rank=\"0\""));
        assert_null(strstr(fast, "0000:b0:00.0")); /* trimmed */
        free(fast);
        free(plain);
    }
}

/* Fast and plain preparation of one text: the same verdict, and the same tree when it passes. */
static void assert_prepared_alike(const char *xml, size_t len, int first_rank, const char *what)
{
    char *out[2] = {NULL, NULL};
    tp_status st[2];
    for (int plain = 0; plain < 2; plain++) {
        tp_xml *doc = NULL;
        tp_error err = {0};
        if (tp_xml__parse(&doc, xml, len, what, &err) != TP_OK)
            return;
        st[plain] = plain ? tp_system__prepare_xml_plain(doc, first_rank, &err)
                          : tp_system__prepare_xml(doc, NULL, first_rank, &err);
        size_t n = 0;
        FILE *f = open_memstream(&out[plain], &n);
        assert_non_null(f);
        if (st[plain] == TP_OK)
            assert_int_equal(tp_xml__write(f, doc->root, &err), TP_OK);
        fclose(f);
        tp_xml__free(doc);
    }
    if (st[0] != st[1] || strcmp(out[0], out[1]) != 0)
        fail_msg("%s (first rank %d): fused in place and by copies differ", what, first_rank);
    free(out[0]);
    free(out[1]);
}

static void fuse_alike_from_ranks_0_and_8(const char *path, const char *text, size_t len, void *ctx)
{
    (void)ctx;
    assert_prepared_alike(text, len, 0, path);
    assert_prepared_alike(text, len, 8, path);
}

/* Every public topology, and documents where ranks read an element differently or siblings
 * look alike (fusion then duplicates or merges elements): in-place fusion is exact or not used. */
static void test_fusion_in_place_matches_copies(void **state)
{
    (void)state;
    const char *patterns[] = {"../shared/conformance/cases/*/topo.xml", "tests/fixtures/*.xml",
                              "../shared/provider/*/*.xml"};
    int seen = 0;
    for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++)
        seen += helpers_each_file(patterns[p], fuse_alike_from_ranks_0_and_8, NULL);
    assert_true(seen > 0);
    /* clang-format off */
#define GPU_PCI(bus, dev) \
    "<pci busid=\"0000:" bus ":00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" " \
    "link_width=\"16\"><gpu dev=\"" dev "\" sm=\"80\"/></pci>"
#define NIC_PCI(bus, name) \
    "<pci busid=\"0000:" bus ":00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" " \
    "link_width=\"16\"><nic><net name=\"" name "\" dev=\"0\"/></nic></pci>"
#define SWITCH(bus, more) "<pci busid=\"0000:" bus ":00.0\" class=\"0x060400\"" more ">"
    const char *odd[] = {
        /* A switch without link_speed: filled by its GPUs' ranks, seen bare by the others. */
        "<system version=\"1\">" CPU_INTEL SWITCH("10", "") GPU_PCI("11", "0") NIC_PCI("12", "ib0")
        "</pci>" SWITCH("20", " link_speed=\"\" link_width=\"16\"") GPU_PCI("21", "1")
        "</pci></cpu></system>",
        /* The same, the switch kept by its GPUs only. */
        "<system version=\"1\">" CPU_INTEL SWITCH("10", "") GPU_PCI("11", "0") GPU_PCI("12", "1")
        "</pci>" NIC_PCI("30", "ib0") "</cpu></system>",
        /* A GPU next to a NIC in one <pci>: every rank keeps it, one writes its rank. */
        "<system version=\"1\">" CPU_INTEL
        "<pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
        "<gpu dev=\"0\" sm=\"80\"/><nic><net name=\"ib0\" dev=\"0\"/></nic></pci>"
        GPU_PCI("12", "1") "</cpu></system>",
        /* Two switches alike under one CPU, each with a GPU: fusion takes them for one. */
        "<system version=\"1\">" CPU_INTEL SWITCH("10", " link_speed=\"\" link_width=\"16\"")
        GPU_PCI("11", "0") "</pci>" SWITCH("10", " link_speed=\"\" link_width=\"16\"")
        GPU_PCI("21", "1") "</pci>" NIC_PCI("30", "ib0") "</cpu></system>",
        /* A CPU without arch holding one rank's GPU, seen by the other rank for its NIC. */
        "<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\">" GPU_PCI("11", "0")
        NIC_PCI("12", "ib0") "</cpu>" CPU_INTEL GPU_PCI("21", "1") "</cpu></system>",
        /* Ranks in reverse document order: children follow the first rank that has them. */
        "<system version=\"1\">" CPU_INTEL
        "<pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
        "<gpu dev=\"1\" sm=\"80\" rank=\"1\"/></pci>"
        "<pci busid=\"0000:12:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">"
        "<gpu dev=\"0\" sm=\"80\" rank=\"0\"/></pci>" NIC_PCI("30", "ib0") "</cpu></system>",
    };
#undef GPU_PCI
#undef NIC_PCI
#undef SWITCH
    /* clang-format on */
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
        assert_prepared_alike(odd[i], strlen(odd[i]), 0, odd[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pci_bw_gen_by_width),
        cmocka_unit_test(test_nvlink_bw_per_compute_capability),
        cmocka_unit_test(test_nvlink_links_count_times_rate),
        cmocka_unit_test(test_cpu_interconnect_by_vendor),
        cmocka_unit_test(test_nvswitch_single_node_both_ways),
        cmocka_unit_test(test_nics_merge_functions_and_nets_renumbered),
        cmocka_unit_test(test_print_tree_lines),
        cmocka_unit_test(test_gpu_ranks_follow_rank_then_dev),
        cmocka_unit_test(test_sort_puts_uplink_last),
        cmocka_unit_test(test_duplicate_net_names),
        cmocka_unit_test(test_bcm_gen4_switch_flattened),
        cmocka_unit_test(test_clone_repoints_links),
        cmocka_unit_test(test_remove_node_fixes_pointers),
        cmocka_unit_test(test_remove_nodes_as_one_by_one),
        cmocka_unit_test(test_connect_aggregates_and_sorts),
        cmocka_unit_test(test_busid_parse),
        cmocka_unit_test(test_bad_inputs_fail_with_position),
        cmocka_unit_test(test_unknown_elements_ignored),
        cmocka_unit_test(test_prepare_matches_nccl_dump),
        cmocka_unit_test(test_prepare_round_trip_is_stable),
        cmocka_unit_test(test_fusion_keeps_mismatched_copies),
        cmocka_unit_test(test_shared_trim_matches_rank_walks),
        cmocka_unit_test(test_fusion_in_place_matches_copies),
        cmocka_unit_test(test_sized_node_storage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
