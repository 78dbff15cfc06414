/*
 * Unit tests of graph-check: NCCL_GRAPH_FILE contents against the seed
 * topologies (4 x V100-SXM2, seed document 002 chapter 19). Expected
 * reservations come from NCCL 2.22.3's search rules: NV2 gives 40 GB/s per
 * GPU pair and direction, NET ports are charged (int)speedinter, V100s
 * entered from a NET charge 1/8 on the reverse link, and PHB paths through
 * an Intel CPU charge 6/5 on their PCI links.
 */
#include "helpers.h"

#include "graphcheck/graphcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tp_plan *plan_fixture(const char *name, int n_nodes)
{
    char *xml = helpers_fixture(name);
    tp_plan *plan = helpers_plan(xml, NULL, n_nodes, 0);
    free(xml);
    return plan;
}

/* Check graph text on a fixture topology; fails the test unless the check itself succeeds. */
static tp_graph_check *check_text(const char *topo, int n_nodes, const char *graph)
{
    tp_plan *plan = plan_fixture(topo, n_nodes);
    tp_graph_check *chk = NULL;
    tp_error err = {0};
    tp_status st = tp_graph_check_buffer(&chk, plan, graph, strlen(graph), "graph.xml", &err);
    if (st != TP_OK)
        print_error("check failed: %s\n", err.message);
    assert_int_equal(st, TP_OK);
    tp_plan_free(plan);
    return chk;
}

static tp_graph_check *check_fixture(const char *topo, int n_nodes, const char *graph_name)
{
    char *graph = helpers_fixture(graph_name);
    tp_graph_check *chk = check_text(topo, n_nodes, graph);
    free(graph);
    return chk;
}

/* The bookkeeping of link from -> to in graph g, or NULL. */
static const tp_gc_link *find_link(const tp_gc_graph *g, const char *from, const char *to)
{
    for (size_t i = 0; i < g->n_links; i++)
        if (strcmp(g->links[i].from, from) == 0 && strcmp(g->links[i].to, to) == 0)
            return &g->links[i];
    return NULL;
}

/* The first finding of g whose text contains `text`, or NULL. */
static const tp_gc_finding *find_finding(const tp_gc_graph *g, const char *text)
{
    for (size_t i = 0; i < g->n_findings; i++)
        if (strstr(g->findings[i].text, text))
            return &g->findings[i];
    return NULL;
}

static size_t count_over(const tp_gc_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_links; i++)
        n += g->links[i].over;
    return n;
}

/* A one-graph file: its <graph> attributes and its n <channel> bodies. */
typedef struct graph_spec {
    int id, pattern, nchannels;
    float speed; /* speedintra and speedinter */
    const char *type_intra;
    const char *const *channels;
    int n;
} graph_spec;

static void make_graph(char *buf, size_t size, graph_spec spec)
{
    int len =
        snprintf(buf, size,
                 "<graphs version=\"1\">\n  <graph id=\"%d\" pattern=\"%d\" crossnic=\"0\" "
                 "nchannels=\"%d\" speedintra=\"%g\" speedinter=\"%g\" latencyinter=\"0\" "
                 "typeintra=\"%s\" typeinter=\"PIX\" samechannels=\"0\">\n",
                 spec.id, spec.pattern, spec.nchannels, spec.speed, spec.speed, spec.type_intra);
    for (int c = 0; c < spec.n; c++)
        len += snprintf(buf + len, size - (size_t)len, "    <channel>%s</channel>\n",
                        spec.channels[c]);
    snprintf(buf + len, size - (size_t)len, "  </graph>\n</graphs>\n");
}

#define RING_0123 "<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/>"

/* Seed 002 H1: NCCL's own 6 x 20 GB/s rings (and trees) replay exactly on NV2. */
static void test_graphcheck_exact_replay_is_feasible(void **state)
{
    (void)state;
    tp_graph_check *chk = check_fixture("v100_nv2.xml", 1, "graph_v100_nv2_exact.xml");
    assert_true(tp_graph_check_feasible(chk));
    assert_int_equal(tp_graph_check_error_count(chk), 0);
    assert_int_equal(chk->n_graphs, 5);
    for (int gi = 0; gi < 2; gi++) {
        const tp_gc_graph *g = &chk->graphs[gi];
        assert_int_equal(g->n_channels, 6);
        assert_int_equal(g->n_errors, 0);
        /* The six rings use each of the 12 directed NV2 pairs twice: 2 x 20 = 40 of 40. */
        if (gi == 0) {
            assert_int_equal(g->n_links, 12);
            for (size_t i = 0; i < g->n_links; i++) {
                assert_true(g->links[i].reserved == 40.0f);
                assert_true(g->links[i].capacity == 40.0f);
                assert_false(g->links[i].over);
            }
        }
    }
    /* Empty graphs: NCCL searches them; nothing to replay. */
    assert_int_equal(chk->graphs[4].n_links, 0);
    assert_non_null(find_finding(&chk->graphs[4], "no channels"));
    tp_graph_check_free(chk);
}

/* Seed 002 custom replay 0-2-1-3: the ring's wrap-around hop 3 -> 0 is reserved too. */
static void test_graphcheck_ring_wraps_around(void **state)
{
    (void)state;
    tp_graph_check *chk = check_fixture("v100_nv2.xml", 1, "graph_v100_nv2_ring_0213.xml");
    assert_true(tp_graph_check_feasible(chk));
    const tp_gc_graph *g = &chk->graphs[0];
    static const char *const hops[][2] = {
        {"GPU/0", "GPU/2"}, {"GPU/2", "GPU/1"}, {"GPU/1", "GPU/3"}, {"GPU/3", "GPU/0"}};
    assert_int_equal(g->n_links, 4);
    for (size_t i = 0; i < ARRAY_LEN(hops); i++) {
        const tp_gc_link *l = find_link(g, hops[i][0], hops[i][1]);
        assert_non_null(l);
        assert_true(l->reserved == 20.0f);
        assert_int_equal(l->channels, 1);
    }
    tp_graph_check_free(chk);
}

/* Seed 002: dev 0xff does not exist; NCCL fails on it, graph-check names it. */
static void test_graphcheck_bad_dev(void **state)
{
    (void)state;
    tp_graph_check *chk = check_fixture("v100_nv2.xml", 1, "graph_v100_nv2_bad_dev.xml");
    assert_false(tp_graph_check_feasible(chk));
    const tp_gc_graph *g = &chk->graphs[0];
    const tp_gc_finding *f = find_finding(g, "gpu dev \"0xff\" is not a GPU of the system");
    assert_non_null(f);
    assert_int_equal(f->severity, TP_GC_ERROR);
    assert_int_equal(f->channel, 0);
    assert_int_equal(f->line, 7);
    assert_int_equal(f->column, 7);
    /* GPU 3 (dev 0x3) was never listed. */
    assert_non_null(find_finding(g, "GPU/3 (dev 3) is missing"));
    tp_graph_check_free(chk);
}

typedef struct shape_case {
    const char *name;
    int nchannels;
    const char *channels[2];
    int n;
    const char *expect; /* text of an error finding */
    int channel;        /* its channel, -1 for the graph */
} shape_case;

static const shape_case shape_cases[] = {
    {"missing GPU",
     1,
     {"<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/>"},
     1,
     "GPU/3 (dev 3) is missing",
     0},
    {"GPU twice",
     2,
     {RING_0123, "<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"1\"/><gpu dev=\"3\"/>"},
     2,
     "GPU/1 (dev 1) is visited 2 times",
     1},
    {"twice hides a missing one",
     1,
     {"<gpu dev=\"0\"/><gpu dev=\"2\"/><gpu dev=\"2\"/><gpu dev=\"3\"/>"},
     1,
     "GPU/1 (dev 1) is missing",
     0},
    {"too many GPUs", 1, {RING_0123 "<gpu dev=\"0\"/>"}, 1, "5 GPUs listed for a node of 4", 0},
    {"nchannels above the elements",
     2,
     {RING_0123},
     1,
     "nchannels is 2 but the graph has 1 <channel> elements",
     -1},
    {"nchannels below the elements",
     1,
     {RING_0123, RING_0123},
     2,
     "nchannels is 1 but the graph has 2 <channel> elements",
     -1},
    {"missing dev",
     1,
     {"<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"0xff\"/>"},
     1,
     "gpu dev \"0xff\" is not a GPU of the system",
     0},
};

static void test_graphcheck_shapes(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(shape_cases); i++) {
        const shape_case *sc = &shape_cases[i];
        char buf[4096];
        make_graph(buf, sizeof(buf),
                   (graph_spec){.id = 0,
                                .pattern = TP_PATTERN_RING,
                                .nchannels = sc->nchannels,
                                .speed = 20,
                                .type_intra = "NVL",
                                .channels = sc->channels,
                                .n = sc->n});
        tp_graph_check *chk = check_text("v100_nv2.xml", 1, buf);
        const tp_gc_finding *f = find_finding(&chk->graphs[0], sc->expect);
        if (!f)
            print_error("case \"%s\": no finding \"%s\"\n", sc->name, sc->expect);
        assert_non_null(f);
        assert_int_equal(f->severity, TP_GC_ERROR);
        assert_int_equal(f->channel, sc->channel);
        assert_false(tp_graph_check_feasible(chk));
        tp_graph_check_free(chk);
    }
}

/* A declared NVL type on a PCIe-only machine (seed_v100_nv0): every hop is PIX at 12 GB/s. */
static void test_graphcheck_nvl_on_pcie_only(void **state)
{
    (void)state;
    const char *const ch[] = {RING_0123};
    char buf[4096];
    make_graph(buf, sizeof(buf),
               (graph_spec){.id = 0,
                            .pattern = TP_PATTERN_RING,
                            .nchannels = 1,
                            .speed = 20,
                            .type_intra = "NVL",
                            .channels = ch,
                            .n = 1});
    tp_graph_check *chk = check_text("v100_nv0.xml", 1, buf);
    const tp_gc_graph *g = &chk->graphs[0];
    assert_false(tp_graph_check_feasible(chk));
    assert_non_null(find_finding(g, "GPU/0 -> GPU/1: path type PIX is worse than typeintra NVL"));
    assert_non_null(find_finding(g, "GPU/3 -> GPU/0: path type PIX is worse than typeintra NVL"));
    assert_non_null(find_finding(g, "path bandwidth 12 GB/s is below speedintra 20 GB/s"));
    /* 20 GB/s through 12 GB/s PCIe links: every link of the ring is over. */
    assert_int_equal(count_over(g), 8);
    tp_graph_check_free(chk);

    /* The same ring declared PIX at 12 GB/s... */
    make_graph(buf, sizeof(buf),
               (graph_spec){.id = 0,
                            .pattern = TP_PATTERN_RING,
                            .nchannels = 1,
                            .speed = 12,
                            .type_intra = "PIX",
                            .channels = ch,
                            .n = 1});
    chk = check_text("v100_nv0.xml", 1, buf);
    assert_true(tp_graph_check_feasible(chk));
    tp_graph_check_free(chk);
    /* ...and twice: 24 GB/s on 12 GB/s links. */
    const char *const two[] = {RING_0123, RING_0123};
    make_graph(buf, sizeof(buf),
               (graph_spec){.id = 0,
                            .pattern = TP_PATTERN_RING,
                            .nchannels = 2,
                            .speed = 12,
                            .type_intra = "PIX",
                            .channels = two,
                            .n = 2});
    chk = check_text("v100_nv0.xml", 1, buf);
    assert_false(tp_graph_check_feasible(chk));
    assert_int_equal(count_over(&chk->graphs[0]), 8);
    tp_graph_check_free(chk);
}

/* 12 rings x 20 GB/s on NV2 (40 GB/s per pair): every NVLink pair is reserved 80. */
static void test_graphcheck_too_many_channels(void **state)
{
    (void)state;
    static const char *const perms[6] = {
        "<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/>",
        "<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"3\"/><gpu dev=\"2\"/>",
        "<gpu dev=\"0\"/><gpu dev=\"2\"/><gpu dev=\"3\"/><gpu dev=\"1\"/>",
        "<gpu dev=\"0\"/><gpu dev=\"2\"/><gpu dev=\"1\"/><gpu dev=\"3\"/>",
        "<gpu dev=\"0\"/><gpu dev=\"3\"/><gpu dev=\"1\"/><gpu dev=\"2\"/>",
        "<gpu dev=\"0\"/><gpu dev=\"3\"/><gpu dev=\"2\"/><gpu dev=\"1\"/>",
    };
    const char *ch[12];
    for (int c = 0; c < 12; c++)
        ch[c] = perms[c % 6];
    char buf[8192];
    make_graph(buf, sizeof(buf),
               (graph_spec){.id = 0,
                            .pattern = TP_PATTERN_RING,
                            .nchannels = 12,
                            .speed = 20,
                            .type_intra = "NVL",
                            .channels = ch,
                            .n = 12});
    tp_graph_check *chk = check_text("v100_nv2.xml", 1, buf);
    const tp_gc_graph *g = &chk->graphs[0];
    assert_false(tp_graph_check_feasible(chk));
    assert_int_equal(g->n_links, 12);
    assert_int_equal(count_over(g), 12);
    assert_int_equal(tp_graph_check_error_count(chk), 12);
    /* GPU/0 -> GPU/1 is the first hop of rings 0, 1 (and their repeats 6, 7). */
    const tp_gc_link *l = find_link(g, "GPU/0", "GPU/1");
    assert_non_null(l);
    assert_true(l->reserved == 80.0f && l->capacity == 40.0f);
    assert_int_equal(l->channels, (1ULL << 0) | (1ULL << 1) | (1ULL << 6) | (1ULL << 7));
    /* The path types and speeds are fine: only the sum is too much. */
    assert_int_equal(g->n_findings, 0);
    tp_graph_check_free(chk);
}

/*
 * NCCL's own 2-node graph (seed_v100_nv2_nodes2): NET port charged (int)1.2
 * = 1, the V100 entered from the NET charges 1.2/8 back, and the exit path
 * GPU/3 -> NET is PHB through the Intel CPU: 1.2 x 6/5 on its PCI links.
 */
static void test_graphcheck_net_rules(void **state)
{
    (void)state;
    tp_graph_check *chk = check_fixture("v100_nv2.xml", 2, "graph_v100_nv2_nodes2.xml");
    assert_true(tp_graph_check_feasible(chk));
    const tp_gc_graph *g = &chk->graphs[0];
    const tp_gc_link *port = find_link(g, "NET/0", "");
    assert_non_null(port);
    assert_int_equal(port->type, TP_GC_NET_PORT);
    assert_true(port->reserved == 1.0f);
    const tp_gc_link *rev = find_link(g, "GPU/0", "PCI/0-18000");
    assert_non_null(rev);
    assert_true(rev->reserved == 1.2f / 8);
    const tp_gc_link *intel = find_link(g, "GPU/3", "PCI/0-18000");
    assert_non_null(intel);
    assert_true(intel->reserved == 1.2f * 6 / 5);
    const tp_gc_link *net = find_link(g, "NIC/0-0", "NET/0");
    assert_non_null(net);
    assert_true(net->reserved == 1.2f);
    tp_graph_check_free(chk);
}

/* A two-channel ring at crossnic 1 whose odd channel is not the previous one's way back, on
 * dual_port_nics.xml (two GPUs, two dual-port NICs) at 2 nodes, checked under `version`:
 * whether the report warns about the alternation. */
static int warns_alternation(const char *version)
{
    static const char graph[] =
        "<graphs version=\"1\">\n  <graph id=\"0\" pattern=\"4\" crossnic=\"1\" nchannels=\"2\" "
        "speedintra=\"1\" speedinter=\"1\" latencyinter=\"0\" typeintra=\"NVL\" "
        "typeinter=\"SYS\" samechannels=\"0\">\n"
        "    <channel><net dev=\"0\"/><gpu dev=\"0\"/><gpu dev=\"1\"/><net dev=\"2\"/></channel>\n"
        "    <channel><net dev=\"1\"/><gpu dev=\"1\"/><gpu dev=\"0\"/><net dev=\"3\"/></channel>\n"
        "  </graph>\n</graphs>\n";
    tp_plan *plan = helpers_plan_fixture_at("dual_port_nics.xml", version, NULL, 2);
    tp_error err = {0};
    tp_graph_check *chk = NULL;
    assert_int_equal(tp_graph_check_buffer(&chk, plan, graph, strlen(graph), "g.xml", &err), TP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(tp_report_graph_check(out, chk, TP_FORMAT_TEXT, &err), TP_OK);
    fclose(out);
    int warns = strstr(text, "the previous one's way back") != NULL;
    free(text);
    tp_graph_check_free(chk);
    tp_plan_free(plan);
    return warns;
}

/* NCCL 2.22.3 alternates NICs at any crossNic; from 2.23 only rings at crossNic 2 (rule
 * cross-nic-ring-alternate). */
static void test_graphcheck_cross_nic_follows_the_profile(void **state)
{
    (void)state;
    assert_true(warns_alternation("2.22.3"));
    assert_false(warns_alternation("2.27.5"));
}

/* Rule graph-file-rank (2.30.3): graph-check takes a <gpu rank="3" dev="0xff"> as rank 3 under
 * 2.30.7 (feasible), as an unknown dev under 2.22.3; a rank the system lacks is an error. */
static const tp_gc_graph *check_ranked(const char *version, const char *rank, tp_plan **plan,
                                       tp_graph_check **chk)
{
    char graph[1024];
    snprintf(graph, sizeof(graph),
             "<graphs version=\"1\">\n  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" "
             "nchannels=\"1\" speedintra=\"20\" speedinter=\"20\" latencyinter=\"0\" "
             "typeintra=\"NVL\" typeinter=\"PIX\" samechannels=\"1\">\n    <channel><gpu "
             "dev=\"0\"/><gpu dev=\"0x2\"/><gpu dev=\"0x1\"/><gpu dev=\"0xff\" "
             "rank=\"%s\"/></channel>\n  </graph>\n</graphs>\n",
             rank);
    *plan = helpers_plan_fixture_at("v100_nv2.xml", version, NULL, 1);
    tp_error err = {0};
    assert_int_equal(tp_graph_check_buffer(chk, *plan, graph, strlen(graph), "g.xml", &err), TP_OK);
    return &(*chk)->graphs[0];
}

static void test_graphcheck_gpu_rank_attribute(void **state)
{
    (void)state;
    static const struct {
        const char *version, *rank, *error;
    } runs[] = {{"2.30.7", "3", NULL},
                {"2.22.3", "3", "gpu dev \"0xff\" is not a GPU of the system"},
                {"2.30.7", "9", "gpu rank \"9\" is not a rank of the system"}};
    for (size_t i = 0; i < ARRAY_LEN(runs); i++) {
        tp_plan *plan = NULL;
        tp_graph_check *chk = NULL;
        const tp_gc_graph *g = check_ranked(runs[i].version, runs[i].rank, &plan, &chk);
        assert_int_equal(tp_graph_check_feasible(chk), runs[i].error == NULL);
        if (runs[i].error)
            assert_non_null(find_finding(g, runs[i].error));
        tp_graph_check_free(chk);
        tp_plan_free(plan);
    }
}

/* The NET link is 1.25 GB/s (10 Gb/s): a ring declared at 20 GB/s over it is infeasible. */
static void test_graphcheck_net_too_slow(void **state)
{
    (void)state;
    char *graph = helpers_fixture("graph_v100_nv2_nodes2.xml");
    /* Only the ring graph, at 20 GB/s between nodes. */
    char *end = strstr(graph, "  <graph id=\"1\"");
    assert_non_null(end);
    strcpy(end, "</graphs>\n");
    char *speed = strstr(graph, "speedinter=\"1.2\"");
    assert_non_null(speed);
    memcpy(speed, "speedinter=\"20\" ", strlen("speedinter=\"1.2\""));
    tp_graph_check *chk = check_text("v100_nv2.xml", 2, graph);
    free(graph);
    const tp_gc_graph *g = &chk->graphs[0];
    assert_false(tp_graph_check_feasible(chk));
    assert_non_null(find_finding(g, "NET/0 -> GPU/0: path bandwidth 1.25 GB/s is below "
                                    "speedinter 20 GB/s"));
    const tp_gc_link *port = find_link(g, "NET/0", "");
    assert_non_null(port);
    assert_true(port->over);
    tp_graph_check_free(chk);
}

/* Without --nodes the NETs are trimmed: <net> elements are ignored, with a warning. */
static void test_graphcheck_net_on_single_node(void **state)
{
    (void)state;
    tp_graph_check *chk = check_fixture("v100_nv2.xml", 1, "graph_v100_nv2_nodes2.xml");
    const tp_gc_graph *g = &chk->graphs[0];
    const tp_gc_finding *f = find_finding(g, "the system has no NET");
    assert_non_null(f);
    assert_int_equal(f->severity, TP_GC_WARNING);
    assert_true(tp_graph_check_feasible(chk));
    tp_graph_check_free(chk);
}

typedef struct malformed_case {
    const char *xml;
    tp_status status;
    unsigned line, column;
    const char *message;
} malformed_case;

static const malformed_case malformed_cases[] = {
    {"<graphs version=\"1\">\n  <graph id=\"0\" pattern=\"4\"/>\n</graphs>\n", TP_ERR_GRAPH, 2, 3,
     "<graph>: missing attribute \"crossnic\""},
    {"<graphs version=\"1\">\n  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"1\" "
     "speedintra=\"20\" speedinter=\"20\" typeintra=\"NVLINK\" typeinter=\"PIX\" "
     "samechannels=\"0\"/>\n</graphs>\n",
     TP_ERR_GRAPH, 2, 3, "<graph>: unknown typeintra \"NVLINK\""},
    {"<graphs version=\"1\">\n  <graph id=\"x\"/>\n</graphs>\n", TP_ERR_GRAPH, 2, 3,
     "<graph>: id \"x\" is not an integer"},
    {"<graphs version=\"2\"/>\n", TP_ERR_GRAPH, 1, 1, "<graphs>: graph file version 2"},
    {"<system version=\"1\"/>\n", TP_ERR_GRAPH, 1, 1, "<system>: not a graph file"},
    {"<graphs version=\"1\">\n  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"1\" "
     "speedintra=\"20\" speedinter=\"20\" typeintra=\"NVL\" typeinter=\"PIX\" samechannels=\"0\">"
     "\n    <channel>\n      <gpu devv=\"0\"/>\n",
     TP_ERR_XML, 0, 0, ""},
    {"<graphs version=\"1\">\n  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"1\" "
     "speedintra=\"20\" speedinter=\"20\" typeintra=\"NVL\" typeinter=\"PIX\" samechannels=\"0\">"
     "\n    <channel>\n      <gpu dev=\"zz\"/>\n    </channel>\n  </graph>\n</graphs>\n",
     TP_ERR_GRAPH, 4, 7, "<gpu>: dev \"zz\" is not a hexadecimal number"},
};

static void test_graphcheck_malformed(void **state)
{
    (void)state;
    tp_plan *plan = plan_fixture("v100_nv2.xml", 1);
    for (size_t i = 0; i < ARRAY_LEN(malformed_cases); i++) {
        const malformed_case *mc = &malformed_cases[i];
        tp_graph_check *chk = (tp_graph_check *)1;
        tp_error err = {0};
        tp_status st = tp_graph_check_buffer(&chk, plan, mc->xml, strlen(mc->xml), "g.xml", &err);
        if (st != mc->status)
            print_error("case %zu: status %d, message %s\n", i, st, err.message);
        assert_int_equal(st, mc->status);
        assert_null(chk);
        assert_string_equal(err.source, "g.xml");
        if (mc->line) {
            assert_int_equal(err.line, mc->line);
            assert_int_equal(err.column, mc->column);
        }
        assert_non_null(strstr(err.message, mc->message));
    }
    tp_plan_free(plan);
}

/* Graph-level warnings: crossnic ignored, id and pattern that do not match, foreign elements. */
static void test_graphcheck_warnings(void **state)
{
    (void)state;
    const char *const ch[] = {RING_0123 "<hop/>"};
    char buf[4096];
    make_graph(buf, sizeof(buf),
               (graph_spec){.id = 1,
                            .pattern = TP_PATTERN_RING,
                            .nchannels = 1,
                            .speed = 20,
                            .type_intra = "NVL",
                            .channels = ch,
                            .n = 1});
    tp_graph_check *chk = check_text("v100_nv2.xml", 1, buf);
    const tp_gc_graph *g = &chk->graphs[0];
    const tp_gc_finding *f =
        find_finding(g, "graph id 1 is NCCL's tree graph, but its pattern is 4");
    assert_non_null(f);
    assert_int_equal(f->severity, TP_GC_WARNING);
    assert_non_null(find_finding(g, "<hop> ignored"));
    assert_true(tp_graph_check_feasible(chk));
    tp_graph_check_free(chk);
}

/* Trees: a chain of GPUs without the ring's closing hop. */
static void test_graphcheck_tree_is_a_chain(void **state)
{
    (void)state;
    const char *const ch[] = {RING_0123};
    char buf[4096];
    make_graph(buf, sizeof(buf),
               (graph_spec){.id = 1,
                            .pattern = TP_PATTERN_BALANCED_TREE,
                            .nchannels = 1,
                            .speed = 40,
                            .type_intra = "NVL",
                            .channels = ch,
                            .n = 1});
    tp_graph_check *chk = check_text("v100_nv2.xml", 1, buf);
    const tp_gc_graph *g = &chk->graphs[0];
    assert_true(tp_graph_check_feasible(chk));
    assert_int_equal(g->n_links, 3);
    assert_null(find_link(g, "GPU/3", "GPU/0"));
    tp_graph_check_free(chk);
}

/*
 * Trees also need the reverse path to fit typeinter (NCCL 2.22.3
 * ncclTopoFollowPath): on a DGX H100, GPU/1 reaches NET/0 as PXN, but
 * NET/0 reaches GPU/1 only as PHB. A split tree leaves from its second GPU.
 */
static void test_graphcheck_tree_reverse_path(void **state)
{
    (void)state;
    static const char graph[] =
        "<graphs version=\"1\">\n  <graph id=\"1\" pattern=\"2\" crossnic=\"0\" nchannels=\"1\" "
        "speedintra=\"20\" speedinter=\"20\" latencyinter=\"0\" typeintra=\"NVL\" "
        "typeinter=\"PXN\" samechannels=\"0\">\n    <channel><net dev=\"0\"/><gpu dev=\"0\"/>"
        "<gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/><gpu dev=\"4\"/><gpu dev=\"5\"/>"
        "<gpu dev=\"6\"/><gpu dev=\"7\"/><net dev=\"0\"/></channel>\n  </graph>\n</graphs>\n";
    tp_graph_check *chk = check_text("dgx_h100.xml", 2, graph);
    const tp_gc_graph *g = &chk->graphs[0];
    assert_false(tp_graph_check_feasible(chk));
    assert_int_equal(g->n_errors, 1);
    assert_non_null(find_finding(g, "NET/0 -> GPU/1 (reverse direction, which trees also use): "
                                    "path type PHB is worse than typeinter PXN"));
    tp_graph_check_free(chk);
}

/*
 * NET rules of NCCL 2.22.3's search, as warnings: with crossnic an odd
 * channel is the previous one's way back; trees enter and leave through one NET.
 */
static void test_graphcheck_net_pairing(void **state)
{
    (void)state;
    static const char gpus[] = "<gpu dev=\"0\"/><gpu dev=\"7\"/><gpu dev=\"6\"/><gpu dev=\"5\"/>"
                               "<gpu dev=\"4\"/><gpu dev=\"3\"/><gpu dev=\"2\"/><gpu dev=\"1\"/>";
    char buf[4096];
    snprintf(buf, sizeof(buf),
             "<graphs version=\"1\">\n  <graph id=\"0\" pattern=\"4\" crossnic=\"1\" "
             "nchannels=\"2\" speedintra=\"10\" speedinter=\"10\" typeintra=\"NVL\" "
             "typeinter=\"SYS\" samechannels=\"0\">\n"
             "    <channel><net dev=\"0\"/>%s<net dev=\"1\"/></channel>\n"
             "    <channel><net dev=\"0\"/>%s<net dev=\"1\"/></channel>\n"
             "  </graph>\n  <graph id=\"1\" pattern=\"3\" crossnic=\"0\" nchannels=\"1\" "
             "speedintra=\"10\" speedinter=\"10\" typeintra=\"NVL\" typeinter=\"SYS\" "
             "samechannels=\"0\">\n    <channel><net dev=\"0\"/>%s<net dev=\"1\"/></channel>\n"
             "  </graph>\n</graphs>\n",
             gpus, gpus, gpus);
    tp_graph_check *chk = check_text("dgx_h100.xml", 2, buf);
    const tp_gc_finding *f =
        find_finding(&chk->graphs[0], "NET/0 -> NET/1 after channel 0's NET/0 -> NET/1");
    assert_non_null(f);
    assert_int_equal(f->severity, TP_GC_WARNING);
    assert_int_equal(f->channel, 1);
    assert_non_null(find_finding(&chk->graphs[1], "NCCL's trees use one NET both ways"));
    assert_true(tp_graph_check_feasible(chk));
    tp_graph_check_free(chk);
}

/* NVLS graph with one head per channel (heads listed in `heads`). */
static void make_nvls(char *buf, size_t size, const int *heads, int n, float speed)
{
    int len = snprintf(buf, size,
                       "<graphs version=\"1\">\n  <graph id=\"3\" pattern=\"5\" crossnic=\"0\" "
                       "nchannels=\"%d\" speedintra=\"%g\" speedinter=\"%g\" latencyinter=\"0\" "
                       "typeintra=\"NVL\" typeinter=\"PIX\" samechannels=\"0\">\n",
                       n, speed, speed);
    for (int c = 0; c < n; c++)
        len += snprintf(buf + len, size - (size_t)len,
                        "    <channel><gpu dev=\"%#x\"/></channel>\n", (unsigned)heads[c]);
    snprintf(buf + len, size - (size_t)len, "  </graph>\n</graphs>\n");
}

/*
 * NVLS (NCCL 2.22.3 ncclTopoSearchTryNvls): each channel takes 2x speed
 * between its head and the NVSwitch and 1x for the other GPUs, both ways.
 * 8 heads x 40 GB/s: 2 x 40 + 7 x 40 = 360 of the 370.8 GB/s of 18 NVLinks.
 */
static void test_graphcheck_nvls(void **state)
{
    (void)state;
    const int heads[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    char buf[4096];
    make_nvls(buf, sizeof(buf), heads, 8, 40);
    tp_graph_check *chk = check_text("dgx_h100.xml", 1, buf);
    const tp_gc_graph *g = &chk->graphs[0];
    assert_true(tp_graph_check_feasible(chk));
    const tp_gc_link *up = find_link(g, "GPU/0", "NVS/0-0"),
                     *down = find_link(g, "NVS/0-0", "GPU/0");
    assert_non_null(up);
    assert_non_null(down);
    assert_true(up->reserved == 360.0f && down->reserved == 360.0f);
    assert_true(up->capacity == 370.8f);
    tp_graph_check_free(chk);

    /* GPU 0 heading two channels: a warning, and 400 GB/s on its NVLinks. */
    const int dup[8] = {0, 0, 2, 3, 4, 5, 6, 7};
    make_nvls(buf, sizeof(buf), dup, 8, 40);
    chk = check_text("dgx_h100.xml", 1, buf);
    g = &chk->graphs[0];
    assert_false(tp_graph_check_feasible(chk));
    assert_non_null(find_finding(g, "head GPU/0 already heads channel 0"));
    up = find_link(g, "GPU/0", "NVS/0-0");
    assert_non_null(up);
    assert_true(up->reserved == 400.0f && up->over);
    assert_int_equal(count_over(g), 2);
    tp_graph_check_free(chk);

    /* No NVSwitch on a V100 NV2 machine. */
    make_nvls(buf, sizeof(buf), heads, 4, 20);
    chk = check_text("v100_nv2.xml", 1, buf);
    assert_non_null(find_finding(&chk->graphs[0], "an NVLS graph needs an NVSwitch"));
    assert_false(tp_graph_check_feasible(chk));
    tp_graph_check_free(chk);
}

/* The JSON report parses as one object with the graphs and the oversubscribed links. */
static void test_graphcheck_report_formats(void **state)
{
    (void)state;
    tp_graph_check *chk = check_fixture("v100_nv2.xml", 1, "graph_v100_nv2_bad_dev.xml");
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tp_error err = {0};
    assert_int_equal(tp_report_graph_check(out, chk, TP_FORMAT_TEXT, &err), TP_OK);
    fclose(out);
    assert_non_null(strstr(text, "graph id 0 (ring), line 2: 1 channel, speed 20/20 GB/s, "
                                 "type NVL/PIX: INFEASIBLE (2 errors)"));
    assert_non_null(strstr(text, "graph.xml:7:7: channel 0: gpu dev \"0xff\""));
    assert_non_null(strstr(text, "result: infeasible (1 graph, 2 errors, 0 warnings)"));
    free(text);
    out = open_memstream(&text, &len);
    assert_int_equal(tp_report_graph_check(out, chk, TP_FORMAT_JSON, &err), TP_OK);
    fclose(out);
    assert_non_null(strstr(text, "\"feasible\": false"));
    assert_non_null(strstr(text, "\"severity\": \"error\", \"channel\": 0, \"line\": 7"));
    free(text);
    assert_int_equal(tp_report_graph_check(stdout, chk, TP_FORMAT_DOT, &err), TP_ERR_CONFIG);
    tp_graph_check_free(chk);
}

/* validate's notes: a PCI link width NCCL replaces. */
static void test_graphcheck_plan_notes(void **state)
{
    (void)state;
    char *xml = helpers_fixture("v100_nv2.xml");
    char *w = strstr(xml, "link_width=\"16\"");
    assert_non_null(w);
    memcpy(w, "link_width=\"0\" ", strlen("link_width=\"16\""));
    tp_plan *plan = helpers_plan(xml, NULL, 1, 0);
    free(xml);
    assert_true(tp_plan_note_count(plan) >= 1);
    assert_non_null(strstr(tp_plan_note(plan, 0), "link_width \"0\""));
    assert_null(tp_plan_note(plan, tp_plan_note_count(plan)));
    tp_plan_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphcheck_exact_replay_is_feasible),
        cmocka_unit_test(test_graphcheck_ring_wraps_around),
        cmocka_unit_test(test_graphcheck_bad_dev),
        cmocka_unit_test(test_graphcheck_shapes),
        cmocka_unit_test(test_graphcheck_nvl_on_pcie_only),
        cmocka_unit_test(test_graphcheck_too_many_channels),
        cmocka_unit_test(test_graphcheck_net_rules),
        cmocka_unit_test(test_graphcheck_cross_nic_follows_the_profile),
        cmocka_unit_test(test_graphcheck_gpu_rank_attribute),
        cmocka_unit_test(test_graphcheck_net_too_slow),
        cmocka_unit_test(test_graphcheck_net_on_single_node),
        cmocka_unit_test(test_graphcheck_malformed),
        cmocka_unit_test(test_graphcheck_warnings),
        cmocka_unit_test(test_graphcheck_tree_is_a_chain),
        cmocka_unit_test(test_graphcheck_tree_reverse_path),
        cmocka_unit_test(test_graphcheck_nvls),
        cmocka_unit_test(test_graphcheck_net_pairing),
        cmocka_unit_test(test_graphcheck_report_formats),
        cmocka_unit_test(test_graphcheck_plan_notes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
