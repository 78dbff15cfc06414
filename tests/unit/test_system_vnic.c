/*
 * NIC fusion into virtual NICs (rule nic-fusion, NCCL 2.27.5 topo.cc ncclTopoMakeVNics and the
 * IB plugin's makeVDevice): which NICs fuse, the virtual NIC's properties and place, the lines
 * NCCL prints, and NCCL 2.22.3 (no such rule) leaving the NICs alone.
 */
#include "helpers.h"

#include "config/config.h"
#include "system/system.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU "<cpu numaid=\"0\" affinity=\"ff\" arch=\"x86_64\" vendor=\"AuthenticAMD\">"
#define BRIDGE(bus)                                                                                \
    "<pci busid=\"0000:" bus                                                                       \
    "\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
#define NIC_PCI(bus)                                                                               \
    "<pci busid=\"0000:" bus                                                                       \
    "\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
#define GPU(bus, dev)                                                                              \
    "<pci busid=\"0000:" bus                                                                       \
    "\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"                       \
    "<gpu dev=\"" dev "\" sm=\"90\" rank=\"" dev "\" gdr=\"1\"/></pci>"
#define NET(name, dev, speed, port, guid, maxconn, gdr)                                            \
    "<net name=\"" name "\" dev=\"" dev "\" speed=\"" speed "\" port=\"" port "\" latency=\"0\" "  \
    "guid=\"" guid "\" maxconn=\"" maxconn "\" gdr=\"" gdr "\"/>"

/* Two ports of one NIC (one <pci>, one <nic>) next to a GPU under a switch. */
static const char *const dual_port = "<system version=\"1\">" CPU BRIDGE("10:00.0")
    GPU("12:00.0", "0") NIC_PCI("11:00.0") "<nic>" NET("mlx5_0", "0", "200000", "1", "0xaa",
                                                       "131072", "1")
        NET("mlx5_1", "1", "100000", "2", "0xbb", "65536", "0") "</nic></pci></pci></cpu></system>";

typedef struct prepared {
    tp_xml *doc;
    tp_log log;
    tp_system *sys;
    tp_status st;
    tp_error err;
} prepared;

/* Prepare and build xml under NCCL `version` with env (NULL-terminated "K=V" list or NULL). */
static void prepare(prepared *p, const char *xml, const char *version, const char *const *env)
{
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    memset(p, 0, sizeof(*p));
    p->log.enabled = true;
    assert_int_equal(tp_config_new(&cfg, env ? env : none, &p->err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, version, &p->err), TP_OK);
    assert_int_equal(tp_xml__parse(&p->doc, xml, strlen(xml), "<test>", &p->err), TP_OK);
    p->st = tp_system__prepare_xml_log(p->doc, cfg, 0, 0, &p->log, &p->err);
    if (p->st == TP_OK)
        p->st = tp_system__from_xml_log(&p->sys, p->doc, cfg, 0, &p->log, &p->err);
    tp_config_free(cfg);
}

static void release(prepared *p)
{
    tp_system__free(p->sys);
    tp_xml__free(p->doc);
    tp_log_clear(&p->log);
}

/* The log lines that start with `prefix` ("" every line), joined by '\n'. */
static const char *lines(const prepared *p, const char *prefix)
{
    static char buf[4096];
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->log.n_lines && at < sizeof(buf); i++)
        if (strncmp(p->log.lines[i].text, prefix, strlen(prefix)) == 0)
            at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s\n",
                                   p->log.lines[i].level == TP_LOG_WARN ? "WARN " : "",
                                   p->log.lines[i].text);
    return buf;
}

static const tp_xml_elem *find_by(const tp_xml_elem *e, const char *tag, const char *attr,
                                  const char *value)
{
    const char *v = tp_xml__attr(e, attr);
    if (tp_xml__is_tag(e, tag) && v && strcmp(v, value) == 0)
        return e;
    for (size_t i = 0; i < e->n_children; i++) {
        const tp_xml_elem *f = find_by(e->children[i], tag, attr, value);
        if (f)
            return f;
    }
    return NULL;
}

static int n_nets(const prepared *p)
{
    return p->sys->nodes[TP_NODE_NET].count;
}

static void test_ports_of_one_nic_fuse(void **state)
{
    (void)state;
    prepared p;
    prepare(&p, dual_port, "2.27.5", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(
        lines(&p, ""),
        "TOPO/NET : Importing network plugins to topology\n"
        "Retrieving state for IB\n"
        "Initialized state 0 for IB\n"
        "ncclTopoPopulateNics : Filled mlx5_0 in topo with pciPath=0000:11:00.0 keep=1 "
        "coll=(null)\n"
        "ncclTopoPopulateNics : Filled mlx5_1 in topo with pciPath=0000:11:00.0 keep=1 "
        "coll=(null)\n"
        "TOPO/NET : Made vNic 2\n"
        "Topology detection: network path 0000:11:00.0 is not a PCI device (). Attaching to first "
        "CPU\n"
        "ncclTopoPopulateNics : Filled mlx5_0+mlx5_1 in topo with pciPath=0000:11:00.0 keep=1 "
        "coll=(null)\n");
    /* One NET: the virtual NIC, in the members' <nic>, the members gone (2.27 trim). */
    assert_int_equal(n_nets(&p), 1);
    const tp_node *net = &p.sys->nodes[TP_NODE_NET].nodes[0];
    assert_int_equal(net->net.dev, 2);
    assert_true(net->net.bw == 300000 / 8000.0f); /* the members' speeds summed */
    assert_int_equal(net->net.port, 1);           /* the rest: the first member's */
    assert_true(net->net.asic == 0xaa);
    assert_int_equal(net->net.max_channels, 131072);
    assert_int_equal(net->net.gdr_support, 1);
    const tp_xml_elem *vnic = find_by(p.doc->root, "net", "name", "mlx5_0+mlx5_1");
    assert_non_null(vnic);
    assert_string_equal(tp_xml__attr(vnic->parent->parent, "busid"), "0000:11:00.0");
    assert_null(find_by(p.doc->root, "net", "name", "mlx5_0"));
    assert_null(find_by(p.doc->root, "net", "name", "mlx5_1"));
    assert_non_null(tp_system__find(p.sys, TP_NODE_NIC, 0x11000));
    release(&p);

    /* NCCL 2.22.3 has no fusion: two NETs, no import lines. */
    prepare(&p, dual_port, "2.22.3", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_int_equal(n_nets(&p), 2);
    assert_string_equal(lines(&p, "TOPO/NET"), "");
    release(&p);
}

/* Two one-port NICs at functions .0 and .1 under a switch: PATH_PORT by their bus ids, and the
 * common parent a bridge, so the virtual NIC gets a PCI device of its own (next free bus id). */
static void test_bridge_parent_gets_own_pci(void **state)
{
    (void)state;
    static const char *const xml = "<system version=\"1\">" CPU BRIDGE("10:00.0")
        GPU("12:00.0", "0") NIC_PCI("11:00.0") "<nic>" NET(
            "mlx5_0", "0", "100000", "1", "0xaa", "131072",
            "1") "</nic></pci>" NIC_PCI("11:00.1") "<nic>" NET("mlx5_1", "1", "100000", "1", "0xbb",
                                                               "131072", "1") "</nic></pci></pci></"
                                                                              "cpu></system>";
    prepared p;
    prepare(&p, xml, "2.27.5", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "TOPO/NET : Made"), "TOPO/NET : Made vNic 2\n");
    const tp_xml_elem *pci = find_by(p.doc->root, "pci", "busid", "0000:11:00.2");
    assert_non_null(pci);
    assert_string_equal(tp_xml__attr(pci, "class"), "0x020000"); /* the first member's copy */
    assert_string_equal(tp_xml__attr(pci->parent, "busid"), "0000:10:00.0");
    assert_null(find_by(p.doc->root, "pci", "busid", "0000:11:00.0"));
    assert_int_equal(n_nets(&p), 1);
    assert_non_null(tp_system__find(p.sys, TP_NODE_NIC, 0x11002));
    release(&p);
}

/* Nets of a <nic> right under a CPU share that <nic>: the virtual NIC goes into a <nic> inside
 * it, which NCCL's system build does not read (no NET). */
static void test_cpu_nic_nets_nest(void **state)
{
    (void)state;
    static const char *const xml = "<system version=\"1\">" CPU GPU("12:00.0", "0") "<nic>" NET(
        "veth0", "0", "10000", "0", "0x1", "65536", "0")
        NET("veth1", "1", "10000", "0", "0x2", "65536", "0") "</nic></cpu></system>";
    prepared p;
    prepare(&p, xml, "2.27.5", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "Topology detection"),
                        "Topology detection: network path  is not a PCI device (). Attaching to "
                        "first CPU\n");
    const tp_xml_elem *vnic = find_by(p.doc->root, "net", "name", "veth0+veth1");
    assert_non_null(vnic);
    assert_true(tp_xml__is_tag(vnic->parent, "nic") && tp_xml__is_tag(vnic->parent->parent, "nic"));
    assert_int_equal(n_nets(&p), 0);
    release(&p);
}

static void test_merge_level_and_merge_nics(void **state)
{
    (void)state;
    prepared p;
    const char *const loc[] = {"NCCL_NET_MERGE_LEVEL=LOC", NULL};
    prepare(&p, dual_port, "2.27.5", loc);
    assert_int_equal(p.st, TP_OK);
    assert_int_equal(n_nets(&p), 2);
    assert_string_equal(lines(&p, "TOPO/NET : Made"), "");
    release(&p);

    /* The plugin refuses: NCCL says so, unplaces the devices and goes on without fusing. */
    const char *const refuse[] = {"NCCL_IB_MERGE_NICS=0", NULL};
    prepare(&p, dual_port, "2.27.5", refuse);
    assert_int_equal(p.st, TP_OK);
    assert_int_equal(n_nets(&p), 2);
    assert_string_equal(lines(&p, "TOPO/NET : Tried"),
                        "TOPO/NET : Tried merging multiple devices together and failed. "
                        "vProps={ndevs=2, devs=[0 1 0 0]}. Set NCCL_NET_MERGE_LEVEL=LOC to disable "
                        "NIC fusion.\n");
    assert_string_equal(lines(&p, "Marking"), "Marking physical devices as unplaced, increasing "
                                              "distance and restarting search.\n");
    release(&p);

    /* An unknown level reads as LOC (kvConvertToInt's fallback). */
    const char *const bad[] = {"NCCL_NET_MERGE_LEVEL=NOPE", NULL};
    prepare(&p, dual_port, "2.27.5", bad);
    assert_int_equal(n_nets(&p), 2);
    assert_string_equal(lines(&p, "KV Convert"), "KV Convert to int : could not find value of "
                                                 "'NOPE' in dictionary, falling back to 0\n");
    release(&p);
}

/* Two NICs on separate devices of one switch are PIX apart: fused only from that level, or when
 * forced; a forced name that matches nothing fails. */
static void test_pix_level_and_force_merge(void **state)
{
    (void)state;
    static const char *const xml = "<system version=\"1\">" CPU BRIDGE("10:00.0")
        GPU("12:00.0", "0") NIC_PCI("11:00.0") "<nic>" NET(
            "mlx5_0", "0", "100000", "1", "0xaa", "131072",
            "1") "</nic></pci>" NIC_PCI("13:00.0") "<nic>" NET("mlx5_2", "1", "100000", "1", "0xbb",
                                                               "131072", "1") "</nic></pci></pci></"
                                                                              "cpu></system>";
    prepared p;
    prepare(&p, xml, "2.27.5", NULL);
    assert_int_equal(n_nets(&p), 2);
    release(&p);
    const char *const pix[] = {"NCCL_NET_MERGE_LEVEL=PIX", NULL};
    prepare(&p, xml, "2.27.5", pix);
    assert_int_equal(p.st, TP_OK);
    assert_int_equal(n_nets(&p), 1);
    assert_non_null(find_by(p.doc->root, "pci", "busid", "0000:11:00.1")); /* under the bridge */
    release(&p);
    const char *const force[] = {"NCCL_NET_FORCE_MERGE=mlx5_2,mlx5_0", NULL};
    prepare(&p, xml, "2.27.5", force);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "TOPO/NET : F"),
                        "TOPO/NET : Force-fusing NICs using NCCL_NET_FORCE_MERGE=mlx5_2,mlx5_0\n");
    /* device order, not the list's, names the virtual NIC */
    assert_non_null(find_by(p.doc->root, "net", "name", "mlx5_0+mlx5_2"));
    release(&p);
    const char *const wrong[] = {"NCCL_NET_FORCE_MERGE=mlx5_0,mlx5_9", NULL};
    prepare(&p, xml, "2.27.5", wrong);
    assert_int_equal(p.st, TP_ERR_TOPOLOGY);
    assert_non_null(strstr(lines(&p, ""), "WARN TOPO/NET : Only matched 1 devices, 2 requested "
                                          "from mlx5_0,mlx5_9\n"));
    release(&p);
}

/* Devices in document order when their dev numbers repeat: NCCL renumbers them and says so. */
static void test_dev_index_changes_logged(void **state)
{
    (void)state;
    static const char *const xml =
        "<system version=\"1\">" CPU GPU("12:00.0", "0") NIC_PCI("11:00.0") "<nic>" NET(
            "a", "1", "100000", "1", "0xaa", "131072",
            "1") "</nic></pci>" NIC_PCI("31:00.0") "<nic>" NET("b", "1", "100000", "1", "0xbb",
                                                               "131072",
                                                               "1") "</nic></pci></cpu></system>";
    prepared p;
    prepare(&p, xml, "2.27.5", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "TOPO/NET : Changing"),
                        "TOPO/NET : Changing IB dev index from 1 to 0\n");
    release(&p);
}

/* NCCL_IB_HCA picks the plugin's devices before fusion: the others are never filled and go. */
static void test_hca_selects_before_fusion(void **state)
{
    (void)state;
    const char *const hca[] = {"NCCL_IB_HCA==mlx5_1", NULL};
    prepared p;
    prepare(&p, dual_port, "2.27.5", hca);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "TOPO/NET : "),
                        "TOPO/NET : Importing network plugins to topology\n"
                        "TOPO/NET : Changing IB dev index from 1 to 0\n");
    assert_int_equal(n_nets(&p), 1);
    assert_int_equal(p.sys->nodes[TP_NODE_NET].nodes[0].net.dev, 0);
    assert_null(find_by(p.doc->root, "net", "name", "mlx5_0"));
    release(&p);
}

/* NCCL_TOPO_DUMP_FILE's pass keeps the physical NICs (2.27.5 usePhysicalDevices). */
static void test_dump_pass_keeps_physical_nics(void **state)
{
    (void)state;
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    tp_xml *doc = NULL;
    assert_int_equal(tp_config_new(&cfg, none, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, "2.27.5", &err), TP_OK);
    assert_int_equal(tp_xml__parse(&doc, dual_port, strlen(dual_port), "<t>", &err), TP_OK);
    assert_int_equal(tp_system__prepare_xml_physical(doc, cfg, 0, &err), TP_OK);
    assert_non_null(find_by(doc->root, "net", "name", "mlx5_0"));
    assert_non_null(find_by(doc->root, "net", "name", "mlx5_1"));
    assert_null(find_by(doc->root, "net", "name", "mlx5_0+mlx5_1"));
    tp_xml__free(doc);
    tp_config_free(cfg);
}

static int count_lines(const tp_plan *plan, const char *text)
{
    int n = 0;
    for (size_t i = 0; i < plan->log.n_lines; i++)
        n += strcmp(plan->log.lines[i].text, text) == 0;
    return n;
}

/* With NCCL_TOPO_DUMP_FILE, 2.27.5 imports the NETs twice: for the dump (physical devices, the
 * plugin's state new), then for the system (its state known, the devices fused). */
static void test_dump_file_imports_twice(void **state)
{
    (void)state;
    for (int dump = 0; dump < 2; dump++) {
        const char *const env[] = {dump ? "NCCL_TOPO_DUMP_FILE=/nonexistent/d.xml" : NULL, NULL};
        tp_config *cfg = NULL;
        tp_plan *plan = NULL;
        tp_error err = {0};
        tp_job job = {.n_nodes = 2, .rank = 0};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, "2.27.5", &err), TP_OK);
        assert_int_equal(
            tp_plan_buffer(&plan, dual_port, strlen(dual_port), "<t>", &job, cfg, &err), TP_OK);
        assert_int_equal(count_lines(plan, "TOPO/NET : Importing network plugins to topology"),
                         1 + dump);
        assert_int_equal(count_lines(plan, "Initialized state 0 for IB"), 1);
        assert_int_equal(count_lines(plan, "TOPO/NET : Made vNic 2"), 1);
        tp_plan_free(plan);
        tp_config_free(cfg);
    }
}

/* ---- 2.28 .. 2.30.7 ---- */

/* vnic-forced-parent (2.28 xml.cc ncclTopoFillNet): the placed virtual NIC skips the subsystem
 * check, so 2.30.7 prints no "not a PCI device" line where 2.27.5 does. */
static void test_forced_parent_no_attach_line(void **state)
{
    (void)state;
    prepared p;
    prepare(&p, dual_port, "2.30.7", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "TOPO/NET : Made"), "TOPO/NET : Made vNic 2\n");
    assert_string_equal(lines(&p, "Topology detection"), "");
    assert_non_null(find_by(p.doc->root, "net", "name", "mlx5_0+mlx5_1"));
    release(&p);
    prepare(&p, dual_port, "2.27.5", NULL);
    assert_string_not_equal(lines(&p, "Topology detection"), "");
    release(&p);
}

/* Two functions of one NIC right under a CPU: PORT apart, common parent the CPU. */
static const char *const cpu_ports =
    "<system version=\"1\">" CPU GPU("12:00.0", "0") NIC_PCI("11:00.0") "<nic>" NET(
        "mlx5_0", "0", "100000", "1", "0xaa", "131072",
        "1") "</nic></pci>" NIC_PCI("11:00.1") "<nic>" NET("mlx5_1", "1", "100000", "1", "0xbb",
                                                           "131072", "1") "</nic></pci>"
                                                                          "</cpu></"
                                                                          "system>";

/* vnic-pci-under-cpu (2.28 topo.cc ncclTopoGetVNicParent): a CPU common parent gets a made-up
 * PCI device (the first member's copy, the next bus id), as a bridge does; 2.27.5 hangs the
 * virtual NIC off the CPU itself. */
static void test_cpu_parent_gets_own_pci(void **state)
{
    (void)state;
    prepared p;
    prepare(&p, cpu_ports, "2.30.7", NULL);
    assert_int_equal(p.st, TP_OK);
    const tp_xml_elem *pci = find_by(p.doc->root, "pci", "busid", "0000:11:00.2");
    assert_non_null(pci);
    assert_true(tp_xml__is_tag(pci->parent, "cpu"));
    assert_string_equal(tp_xml__attr(pci->children[0]->children[0], "name"), "mlx5_0+mlx5_1");
    assert_non_null(tp_system__find(p.sys, TP_NODE_NIC, 0x11002));
    release(&p);
    prepare(&p, cpu_ports, "2.27.5", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_null(find_by(p.doc->root, "pci", "busid", "0000:11:00.2"));
    const tp_xml_elem *vnic = find_by(p.doc->root, "net", "name", "mlx5_0+mlx5_1");
    assert_true(tp_xml__is_tag(vnic->parent->parent, "cpu"));
    release(&p);
}

/* vnic-link-width (2.28 topo.cc ncclTopoFindLinkWidth): two x16 NICs PIX apart under a switch
 * fuse into an x32 device, and the switch up to it is widened too; 2.27.5 keeps x16. */
static void test_link_width_summed(void **state)
{
    (void)state;
    static const char *const xml = "<system version=\"1\">" CPU BRIDGE("10:00.0")
        GPU("12:00.0", "0") NIC_PCI("11:00.0") "<nic>" NET(
            "mlx5_0", "0", "100000", "1", "0xaa", "131072",
            "1") "</nic></pci>" NIC_PCI("13:00.0") "<nic>" NET("mlx5_2", "1", "100000", "1", "0xbb",
                                                               "131072", "1") "</nic></pci></pci></"
                                                                              "cpu></system>";
    const char *const pix[] = {"NCCL_NET_MERGE_LEVEL=PIX", NULL};
    prepared p;
    prepare(&p, xml, "2.30.7", pix);
    assert_int_equal(p.st, TP_OK);
    const tp_xml_elem *pci = find_by(p.doc->root, "pci", "busid", "0000:11:00.1");
    assert_non_null(pci);
    assert_string_equal(tp_xml__attr(pci, "link_width"), "32");
    assert_string_equal(tp_xml__attr(pci->parent, "link_width"), "32"); /* the switch */
    release(&p);
    prepare(&p, xml, "2.27.5", pix);
    assert_int_equal(p.st, TP_OK);
    pci = find_by(p.doc->root, "pci", "busid", "0000:11:00.1");
    assert_non_null(pci);
    assert_string_equal(tp_xml__attr(pci, "link_width"), "16");
    assert_string_equal(tp_xml__attr(pci->parent, "link_width"), "16");
    release(&p);
    /* A PCI device under the switch without link_width: NCCL's xmlGetAttrInt fails on it. */
    static const char *const no_width = "<system version=\"1\">" CPU BRIDGE(
        "10:00.0") "<pci busid=\"0000:12:00.0\" class=\"0x030200\"><gpu dev=\"0\" sm=\"90\" "
                   "rank=\"0\" "
                   "gdr=\"1\"/></pci>" NIC_PCI("11:00.0") "<nic>" NET(
                       "mlx5_0", "0", "100000", "1", "0xaa", "131072",
                       "1") "</nic></pci>" NIC_PCI("13:00.0") "<nic>" NET("mlx5_2", "1", "100000",
                                                                          "1", "0xbb", "131072",
                                                                          "1") "</nic></pci></"
                                                                               "pci></cpu></"
                                                                               "system>";
    prepare(&p, no_width, "2.30.7", pix);
    assert_int_equal(p.st, TP_ERR_TOPOLOGY);
    assert_non_null(strstr(lines(&p, ""), "WARN Attribute link_width of node pci not found\n"));
    release(&p);
    prepare(&p, no_width, "2.27.5", pix);
    assert_int_equal(p.st, TP_OK);
    release(&p);
}

/* vnic-eight-devs (2.30.3 NCCL_NET_MAX_DEVS_PER_NIC 8): five ports of one NIC make one virtual
 * NIC; 2.27.5 fuses four and leaves the fifth alone. */
static void test_eight_devs_per_vnic(void **state)
{
    (void)state;
    static const char *const xml = "<system version=\"1\">" CPU GPU("12:00.0", "0")
        NIC_PCI("11:00.0") "<nic>" NET("p0", "0", "100000", "1", "0xaa", "131072", "1")
            NET("p1", "1", "100000", "2", "0xaa", "131072", "1")
                NET("p2", "2", "100000", "3", "0xaa", "131072", "1")
                    NET("p3", "3", "100000", "4", "0xaa", "131072", "1")
                        NET("p4", "4", "100000", "5", "0xaa", "131072", "1") "</nic></pci></cpu>"
                                                                             "</system>";
    prepared p;
    prepare(&p, xml, "2.30.7", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "TOPO/NET : Made"), "TOPO/NET : Made vNic 5\n");
    assert_non_null(find_by(p.doc->root, "net", "name", "p0+p1+p2+p3+p4"));
    release(&p);
    prepare(&p, xml, "2.27.5", NULL);
    assert_int_equal(p.st, TP_OK);
    assert_string_equal(lines(&p, "TOPO/NET : Made"), "TOPO/NET : Made vNic 5\n");
    assert_non_null(find_by(p.doc->root, "net", "name", "p0+p1+p2+p3"));
    release(&p);
}

/* vnic-one-numa (2.30.7 topo.cc ncclTopoGetVNicParent): NICs of two CPUs forced together fail. */
static void test_fusion_across_cpus_fails(void **state)
{
    (void)state;
    static const char *const xml = "<system version=\"1\">" CPU GPU("12:00.0", "0") NIC_PCI(
        "11:00.0") "<nic>" NET("mlx5_0", "0", "100000", "1", "0xaa", "131072",
                               "1") "</nic></pci></cpu>"
                                    "<cpu numaid=\"1\" affinity=\"ff00\" arch=\"x86_64\" "
                                    "vendor=\"AuthenticAMD\">" NIC_PCI("81:00.0") "<nic>" NET(
                                        "mlx5_1", "1", "100000", "1", "0xbb", "131072",
                                        "1") "</nic></pci></cpu></system>";
    const char *const force[] = {"NCCL_NET_FORCE_MERGE=mlx5_0,mlx5_1", NULL};
    prepared p;
    prepare(&p, xml, "2.30.7", force);
    assert_int_equal(p.st, TP_ERR_TOPOLOGY);
    assert_non_null(strstr(lines(&p, ""), "WARN Fusing NET devices from different NUMA domains "
                                          "is not supported.\n"));
    release(&p);
    prepare(&p, xml, "2.27.5", force);
    assert_int_equal(p.st, TP_OK);
    release(&p);
}

/* ncclNet->devices (2.30.3 "Rank %d: %d Net devices"): the physical devices and the virtual NICs.
 */
static void test_plugin_device_count(void **state)
{
    (void)state;
    const char *const none[] = {NULL};
    tp_error err = {0};
    tp_config *cfg = NULL;
    tp_xml *doc = NULL;
    int devices = 0;
    assert_int_equal(tp_config_new(&cfg, none, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, "2.30.7", &err), TP_OK);
    assert_int_equal(tp_xml__parse(&doc, dual_port, strlen(dual_port), "<test>", &err), TP_OK);
    const tp_prep_pass pass = {.net_devices = &devices};
    assert_int_equal(tp_system__prepare_xml_pass(doc, cfg, 0, 0, &pass, NULL, &err), TP_OK);
    assert_int_equal(devices, 3); /* mlx5_0, mlx5_1, mlx5_0+mlx5_1 */
    tp_xml__free(doc);
    tp_config_free(cfg);
}

/* net-fusion-env-first (2.28 topo.cc ncclTopoGetFusionEnv): an unknown NCCL_NET_MERGE_LEVEL's
 * line (and 2.30.3's hints) comes before the devices are filled; 2.27.5 reads it after. */
static void test_fusion_env_read_first(void **state)
{
    (void)state;
    const char *const bad[] = {"NCCL_NET_MERGE_LEVEL=NOPE", NULL};
    prepared p;
    prepare(&p, dual_port, "2.30.7", bad);
    assert_int_equal(p.st, TP_OK);
    assert_int_equal(n_nets(&p), 2);
    const char *all = lines(&p, "");
    const char *kv = strstr(all, "KV Convert to int : could not find value of 'NOPE' in "
                                 "dictionary, falling back to 0\nHINT: In many cases");
    const char *filled = strstr(all, "ncclTopoPopulateNics : Filled mlx5_0");
    assert_true(kv && filled && kv < filled);
    release(&p);
    prepare(&p, dual_port, "2.27.5", bad);
    all = lines(&p, "");
    kv = strstr(all, "KV Convert to int");
    filled = strstr(all, "ncclTopoPopulateNics : Filled mlx5_0");
    assert_true(kv && filled && kv > filled);
    release(&p);
}

/* net-merge-policy (2.30.7 topo.cc ncclTopoGetMergePolicy): RAIL fuses only devices of one
 * defined rail (the IB plugin's have none), another value than ALL warns; 2.27.5 ignores it. */
static void test_rail_merge_policy(void **state)
{
    (void)state;
    const char *const rail[] = {"NCCL_NET_MERGE_POLICY=rail", NULL};
    prepared p;
    prepare(&p, dual_port, "2.30.7", rail);
    assert_int_equal(p.st, TP_OK);
    assert_int_equal(n_nets(&p), 2);
    assert_string_equal(lines(&p, "TOPO/NET : Made"), "");
    assert_string_equal(lines(&p, "NCCL_NET_MERGE_POLICY"),
                        "NCCL_NET_MERGE_POLICY set by environment to RAIL\n");
    release(&p);
    prepare(&p, dual_port, "2.27.5", rail);
    assert_int_equal(n_nets(&p), 1);
    assert_string_equal(lines(&p, "NCCL_NET_MERGE_POLICY"), "");
    release(&p);
    const char *const odd[] = {"NCCL_NET_MERGE_POLICY=SOME", NULL};
    prepare(&p, dual_port, "2.30.7", odd);
    assert_int_equal(n_nets(&p), 1);
    assert_non_null(strstr(lines(&p, ""), "WARN NCCL_NET_MERGE_POLICY: unknown value 'SOME', "
                                          "defaulting to ALL\n"));
    release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ports_of_one_nic_fuse),
        cmocka_unit_test(test_bridge_parent_gets_own_pci),
        cmocka_unit_test(test_cpu_nic_nets_nest),
        cmocka_unit_test(test_merge_level_and_merge_nics),
        cmocka_unit_test(test_pix_level_and_force_merge),
        cmocka_unit_test(test_dev_index_changes_logged),
        cmocka_unit_test(test_hca_selects_before_fusion),
        cmocka_unit_test(test_dump_pass_keeps_physical_nics),
        cmocka_unit_test(test_dump_file_imports_twice),
        cmocka_unit_test(test_forced_parent_no_attach_line),
        cmocka_unit_test(test_cpu_parent_gets_own_pci),
        cmocka_unit_test(test_link_width_summed),
        cmocka_unit_test(test_eight_devs_per_vnic),
        cmocka_unit_test(test_fusion_across_cpus_fails),
        cmocka_unit_test(test_plugin_device_count),
        cmocka_unit_test(test_fusion_env_read_first),
        cmocka_unit_test(test_rail_merge_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
