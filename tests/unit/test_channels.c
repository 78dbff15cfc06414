/*
 * Channels (NCCL 2.22.3 init.cc / connect.cc / trees.cc / rings.cc): the
 * builder on hand-made graphs (expected lines from the conformance logs of
 * the seed fixtures), then the whole pipeline on the seed 002 experiment:
 * native 6 search -> 12 final, MAX=4 -> 4, MIN=16 -> 16, sparse ring 4 -> 8,
 * one-channel replay -> 2.
 */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- builder on hand-made graphs ---------------------------------------- */

/* A graph of nc channels of n GPUs each, ranks shifted by `offset`. */
static tp_graph *mk_graph(int pattern, int nc, int n, const int *rows, int offset)
{
    tp_graph *g = tp_graph__new(n);
    assert_non_null(g);
    g->pattern = pattern;
    g->n_channels = nc;
    g->bw_intra = g->bw_inter = 20.0f;
    for (int i = 0; i < nc * n; i++)
        g->intra[i] = rows[i] + offset;
    return g;
}

typedef struct build_case {
    const char *const *env;
    int n_hosts, per_host, rank;
    tp_graph *ring, *tree, *nvls;
    int nvls_channels;
    int min_comp_cap;
    const char *nccl; /* the NCCL version modelled (NULL: the default) */
} build_case;

static tp_status build(tp_channels *ch, tp_log *log, const build_case *bc)
{
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, bc->env ? bc->env : none, &err), TP_OK);
    if (bc->nccl)
        assert_int_equal(tp_config_set_nccl(cfg, bc->nccl, &err), TP_OK);
    tp_graph *empty = calloc(1, sizeof(*empty));
    int *domain_of = calloc((size_t)bc->per_host, sizeof(int));
    int *host_kind = calloc((size_t)bc->n_hosts, sizeof(int));
    assert_true(empty && domain_of && host_kind);
    tp_domain_view dv = {
        .n_gpus = bc->per_host,
        .graphs = {bc->ring, bc->tree, empty, empty, bc->nvls ? bc->nvls : empty},
        .nvls_channels = bc->nvls_channels,
    };
    tp_kind_view kind = {
        .n_ranks = bc->per_host,
        .rep_host = bc->rank / bc->per_host,
        .domain_of = domain_of,
    };
    tp_channels_job job = {
        .n_hosts = bc->n_hosts,
        .host_kind = host_kind,
        .n_kinds = 1,
        .kinds = &kind,
        .rank = bc->rank,
        .n_domains = 1,
        .domains = &dv,
        .min_comp_cap = bc->min_comp_cap ? bc->min_comp_cap : 70,
    };
    tp_channels__ctas(cfg, log, &job.min_ctas, &job.max_ctas);
    tp_status st = tp_channels__build(ch, &job, cfg, log, &err);
    free(empty);
    free(domain_of);
    free(host_kind);
    tp_config_free(cfg);
    return st;
}

static void free_case(build_case *bc)
{
    free(bc->ring);
    free(bc->tree);
    free(bc->nvls);
}

/* The log lines, in order, from the first line starting with `from`. */
static void assert_lines(const tp_log *log, const char *from, const char *const *expected)
{
    size_t i = 0;
    while (i < log->n_lines && strncmp(log->lines[i].text, from, strlen(from)) != 0)
        i++;
    for (size_t k = 0; expected[k]; k++, i++) {
        if (i >= log->n_lines) {
            print_error("missing line %zu: %s\n", k, expected[k]);
            fail();
        }
        if (strcmp(log->lines[i].text, expected[k]) != 0)
            print_error("line %zu: got \"%s\"\n     expected \"%s\"\n", k, log->lines[i].text,
                        expected[k]);
        assert_string_equal(log->lines[i].text, expected[k]);
    }
}

static bool log_has(const tp_log *log, const char *text)
{
    for (size_t i = 0; i < log->n_lines; i++)
        if (strcmp(log->lines[i].text, text) == 0)
            return true;
    return false;
}

/* seed_v100_nv2's graphs (expected.log "Pattern" lines): 6 ring and 6 tree channels. */
static const int nv2_ring[] = {0, 1, 2, 3, 0, 1, 3, 2, 0, 2, 3, 1,
                               0, 2, 1, 3, 0, 3, 1, 2, 0, 3, 2, 1};
static const int nv2_tree[] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 2, 1, 3,
                               0, 2, 1, 3, 1, 0, 3, 2, 1, 0, 3, 2};

static void test_channels_seed_nv2_lines(void **state)
{
    (void)state;
    build_case bc = {.n_hosts = 1, .per_host = 4, .rank = 0};
    bc.ring = mk_graph(TP_PATTERN_RING, 6, 4, nv2_ring, 0);
    bc.tree = mk_graph(TP_PATTERN_BALANCED_TREE, 6, 4, nv2_tree, 0);
    tp_channels ch;
    tp_log log = {.enabled = true};
    assert_int_equal(build(&ch, &log, &bc), TP_OK);
    assert_int_equal(ch.search_channels, 6);
    assert_int_equal(ch.n_channels, 12);
    assert_int_equal(ch.n_nodes, 1);
    static const char *const expected[] = {
        "comm PTR rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0",
        "Tree 0 : -1 -> 0 -> 1/-1/-1",
        "Tree 6 : -1 -> 0 -> 1/-1/-1",
        "Tree 1 : -1 -> 0 -> 1/-1/-1",
        "Tree 7 : -1 -> 0 -> 1/-1/-1",
        "Tree 2 : -1 -> 0 -> 2/-1/-1",
        "Tree 8 : -1 -> 0 -> 2/-1/-1",
        "Tree 3 : -1 -> 0 -> 2/-1/-1",
        "Tree 9 : -1 -> 0 -> 2/-1/-1",
        "Tree 4 : 1 -> 0 -> 3/-1/-1",
        "Tree 10 : 1 -> 0 -> 3/-1/-1",
        "Tree 5 : 1 -> 0 -> 3/-1/-1",
        "Tree 11 : 1 -> 0 -> 3/-1/-1",
        "Channel 00/12 :    0   1   2   3",
        "Channel 01/12 :    0   1   3   2",
        "Channel 02/12 :    0   2   3   1",
        "Channel 03/12 :    0   2   1   3",
        "Channel 04/12 :    0   3   1   2",
        "Channel 05/12 :    0   3   2   1",
        "Channel 06/12 :    0   1   2   3",
        "Channel 07/12 :    0   1   3   2",
        "Channel 08/12 :    0   2   3   1",
        "Channel 09/12 :    0   2   1   3",
        "Channel 10/12 :    0   3   1   2",
        "Channel 11/12 :    0   3   2   1",
        "Ring 00 : 3 -> 0 -> 1",
        "Ring 01 : 2 -> 0 -> 1",
        "Ring 02 : 1 -> 0 -> 2",
        "Ring 03 : 3 -> 0 -> 2",
        "Ring 04 : 2 -> 0 -> 3",
        "Ring 05 : 1 -> 0 -> 3",
        "Ring 06 : 3 -> 0 -> 1",
        "Ring 07 : 2 -> 0 -> 1",
        "Ring 08 : 1 -> 0 -> 2",
        "Ring 09 : 3 -> 0 -> 2",
        "Ring 10 : 2 -> 0 -> 3",
        "Ring 11 : 1 -> 0 -> 3",
        "Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1 [2] 2/-1/-1->0->-1 [3] 2/-1/-1->0->-1 "
        "[4] 3/-1/-1->0->1 [5] 3/-1/-1->0->1 [6] 1/-1/-1->0->-1 [7] 1/-1/-1->0->-1 "
        "[8] 2/-1/-1->0->-1 [9] 2/-1/-1->0->-1 [10] 3/-1/-1->0->1 [11] 3/-1/-1->0->1",
        NULL,
    };
    assert_lines(&log, "comm ", expected);
    tp_channels__free(&ch);
    tp_log_clear(&log);
    free_case(&bc);
}

/* NCCL_MIN/MAX_NCHANNELS and their warnings (connect.cc ncclMin/MaxNchannels). */
static void test_channels_min_max_table(void **state)
{
    (void)state;
    static const struct {
        const char *env;
        int n_channels;
        const char *warn;
    } rows[] = {
        {"NCCL_MAX_NCHANNELS=4", 4, NULL},
        {"NCCL_MIN_NCHANNELS=16", 16, NULL},
        {"NCCL_MAX_NCHANNELS=0", 1, "User asked for a maximum of 0 channels, setting it to 1"},
        {"NCCL_MIN_NCHANNELS=40", 32, "User asked for a minimum of 40 channels, limiting to 32"},
        {"NCCL_MAX_NRINGS=3", 3, NULL},
        {"NCCL_MAX_CTAS=5", 5, NULL},
        {"NCCL_MIN_CTAS=20", 20, NULL},
        {"NCCL_MAX_CTAS=64", 12,
         "maxCTAs 64 is larger than #channels upper limit 32, cap it to 32"},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const char *env[] = {rows[i].env, NULL};
        build_case bc = {.env = env, .n_hosts = 1, .per_host = 4, .rank = 0};
        bc.ring = mk_graph(TP_PATTERN_RING, 6, 4, nv2_ring, 0);
        bc.tree = mk_graph(TP_PATTERN_BALANCED_TREE, 6, 4, nv2_tree, 0);
        tp_channels ch;
        tp_log log = {.enabled = true};
        assert_int_equal(build(&ch, &log, &bc), TP_OK);
        if (ch.n_channels != rows[i].n_channels)
            print_error("%s: %d channels\n", rows[i].env, ch.n_channels);
        assert_int_equal(ch.n_channels, rows[i].n_channels);
        if (rows[i].warn)
            assert_true(log_has(&log, rows[i].warn));
        tp_channels__free(&ch);
        tp_log_clear(&log);
        free_case(&bc);
    }
}

/* seed_v100_nv2_nodes2: one NET ring channel 0 1 2 3, one tree channel, 2 hosts. */
static void test_channels_two_hosts(void **state)
{
    (void)state;
    static const int chain[] = {0, 1, 2, 3};
    static const struct {
        int rank;
        const char *tree0, *tree1, *trees;
    } rows[] = {
        {0, "Tree 0 : -1 -> 0 -> 1/4/-1", "Tree 1 : 4 -> 0 -> 1/-1/-1",
         "Trees [0] 1/4/-1->0->-1 [1] 1/-1/-1->0->4"},
        {4, "Tree 0 : 0 -> 4 -> 5/-1/-1", "Tree 1 : -1 -> 4 -> 5/0/-1",
         "Trees [0] 5/-1/-1->4->0 [1] 5/0/-1->4->-1"},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        int home = rows[i].rank / 4 * 4;
        build_case bc = {.n_hosts = 2, .per_host = 4, .rank = rows[i].rank};
        bc.ring = mk_graph(TP_PATTERN_RING, 1, 4, chain, home);
        bc.tree = mk_graph(TP_PATTERN_BALANCED_TREE, 1, 4, chain, home);
        tp_channels ch;
        tp_log log = {.enabled = true};
        assert_int_equal(build(&ch, &log, &bc), TP_OK);
        assert_int_equal(ch.n_nodes, 2);
        assert_int_equal(ch.n_channels, 2);
        const char *const expected[] = {rows[i].tree0, rows[i].tree1, NULL};
        assert_lines(&log, "Tree ", expected);
        assert_true(log_has(&log, rows[i].trees));
        assert_int_equal(log_has(&log, "Channel 00/02 :    0   1   2   3   4   5   6   7"),
                         rows[i].rank == 0);
        for (int r = 0; r < 8; r++)
            assert_int_equal(ch.rings[r], r);
        tp_channels__free(&ch);
        tp_log_clear(&log);
        free_case(&bc);
    }
}

/* Postset's crossNic exchange: odd nodes take ring channel c^1. */
static void test_channels_cross_nic_exchange(void **state)
{
    (void)state;
    static const int rings[] = {0, 1, 2, 3, 3, 2, 1, 0};
    static const int expect[2][8][8] = {
        /* not exchanged */
        {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 7, 6, 5, 4, 3, 2, 1}},
        /* exchanged on the odd node */
        {{0, 1, 2, 3, 7, 6, 5, 4}, {0, 4, 5, 6, 7, 3, 2, 1}},
    };
    /* NCCL 2.22.3 exchanges whenever crossNic is set; 2.27.5 (rule cross-nic-ring-alternate)
     * only at crossNic 2, the alternating rings of the NCCL_CROSS_NIC=2 retry. */
    static const struct {
        const char *nccl;
        int cross_nic, exchanged;
    } runs[] = {
        {"2.22.3", 0, 0}, {"2.22.3", 1, 1}, {"2.27.5", 0, 0}, {"2.27.5", 1, 0}, {"2.27.5", 2, 1}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        int cross = runs[i].exchanged;
        build_case bc = {.n_hosts = 2, .per_host = 4, .rank = 0, .nccl = runs[i].nccl};
        bc.ring = mk_graph(TP_PATTERN_RING, 2, 4, rings, 0);
        bc.ring->cross_nic = runs[i].cross_nic;
        bc.tree = mk_graph(TP_PATTERN_BALANCED_TREE, 2, 4, rings, 0);
        tp_channels ch;
        tp_log log = {.enabled = true};
        assert_int_equal(build(&ch, &log, &bc), TP_OK);
        assert_int_equal(ch.n_channels, 4);
        for (int k = 0; k < 4; k++)
            for (int r = 0; r < 8; r++)
                assert_int_equal(ch.rings[k * 8 + r], expect[cross][k % 2][r]);
        tp_channels__free(&ch);
        tp_log_clear(&log);
        free_case(&bc);
    }
}

/* Two hosts of different kinds, each with its own ring (crossNic per host) and tree graphs. */
static tp_status build_two_kinds(tp_channels *ch, tp_log *log, const char *nccl,
                                 const int cross_nic[2], const int *rings)
{
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, none, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, nccl, &err), TP_OK);
    tp_graph empty = {0};
    static const int domain_of[2][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}};
    static const int host_kind[2] = {0, 1};
    tp_domain_view dv[2];
    tp_kind_view kinds[2];
    for (int h = 0; h < 2; h++) {
        tp_graph *ring = mk_graph(TP_PATTERN_RING, 2, 4, rings, 4 * h);
        ring->cross_nic = cross_nic[h];
        tp_graph *tree = mk_graph(TP_PATTERN_BALANCED_TREE, 2, 4, rings, 4 * h);
        dv[h] = (tp_domain_view){.n_gpus = 4, .graphs = {ring, tree, &empty, &empty, &empty}};
        kinds[h] = (tp_kind_view){.n_ranks = 4, .rep_host = h, .domain_of = domain_of[h]};
    }
    tp_channels_job job = {.n_hosts = 2,
                           .host_kind = host_kind,
                           .n_kinds = 2,
                           .kinds = kinds,
                           .rank = 0,
                           .n_domains = 2,
                           .domains = dv,
                           .min_comp_cap = 70};
    tp_channels__ctas(cfg, log, &job.min_ctas, &job.max_ctas);
    tp_status st = tp_channels__build(ch, &job, cfg, log, &err);
    for (int h = 0; h < 2; h++) {
        free((void *)dv[h].graphs[TP_GRAPH_RING]);
        free((void *)dv[h].graphs[TP_GRAPH_TREE]);
    }
    tp_config_free(cfg);
    return st;
}

/* Rule cross-nic-ring-per-rank (2.28): the odd node exchanges its rings only when its own ring
 * search ended at crossNic 2; before, whenever the all-gathered (max) crossNic was 2. */
static void test_channels_cross_nic_exchange_per_rank(void **state)
{
    (void)state;
    static const int rings[] = {0, 1, 2, 3, 3, 2, 1, 0};
    static const int expect[2][2][8] = {
        {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 7, 6, 5, 4, 3, 2, 1}}, /* not exchanged */
        {{0, 1, 2, 3, 7, 6, 5, 4}, {0, 4, 5, 6, 7, 3, 2, 1}}, /* exchanged on the odd node */
    };
    static const struct {
        const char *nccl;
        int cross_nic[2], exchanged;
    } runs[] = {{"2.27.5", {2, 0}, 1}, {"2.30.7", {2, 0}, 0}, {"2.30.7", {0, 2}, 1}};
    for (size_t i = 0; i < ARRAY_LEN(runs); i++) {
        tp_channels ch;
        tp_log log = {.enabled = true};
        assert_int_equal(build_two_kinds(&ch, &log, runs[i].nccl, runs[i].cross_nic, rings), TP_OK);
        for (int k = 0; k < ch.n_channels; k++)
            for (int r = 0; r < 8; r++)
                assert_int_equal(ch.rings[k * 8 + r], expect[runs[i].exchanged][k % 2][r]);
        tp_channels__free(&ch);
        tp_log_clear(&log);
    }
}

/* NVLS heads and trees of syn_dgx_h100_nodes2 (8 channels, heads 0..7). */
static void test_channels_nvls_heads(void **state)
{
    (void)state;
    int rows[8 * 8], nvls_rows[8 * 8];
    for (int c = 0; c < 8; c++)
        for (int i = 0; i < 8; i++) {
            rows[c * 8 + i] = i;
            nvls_rows[c * 8 + i] = (c + i) % 8;
        }
    build_case bc = {
        .n_hosts = 2, .per_host = 8, .rank = 0, .nvls_channels = 16, .min_comp_cap = 90};
    bc.ring = mk_graph(TP_PATTERN_RING, 8, 8, rows, 0);
    bc.tree = mk_graph(TP_PATTERN_TREE, 8, 8, rows, 0);
    bc.nvls = mk_graph(TP_PATTERN_NVLS, 8, 8, nvls_rows, 0);
    tp_channels ch;
    tp_log log = {.enabled = true};
    assert_int_equal(build(&ch, &log, &bc), TP_OK);
    assert_int_equal(ch.n_channels, 16);
    assert_int_equal(ch.n_nvls_channels, 16);
    assert_int_equal(ch.nvls_heads, 8);
    static const char *const expected[] = {
        "NVLS Head  0:  0  8",
        "NVLS Head  1:  1  9",
        "NVLS Head  2:  2 10",
        "NVLS Head  3:  3 11",
        "NVLS Head  4:  4 12",
        "NVLS Head  5:  5 13",
        "NVLS Head  6:  6 14",
        "NVLS Head  7:  7 15",
        "NVLS Trees : 17/8/-1->0->-1 17/-1/-1->0->8",
        NULL,
    };
    assert_lines(&log, "NVLS ", expected);
    tp_channels__free(&ch);
    tp_log_clear(&log);
    free_case(&bc);
}

/* init.cc's 1024-byte "Trees" buffer and rings.cc's 20-rank "Channel" lines. */
static void test_channels_line_limits(void **state)
{
    (void)state;
    static const int two[] = {0, 1};
    const char *env[] = {"NCCL_MIN_NCHANNELS=32", NULL};
    int ranks[] = {0, 20000};
    for (size_t i = 0; i < ARRAY_LEN(ranks); i++) {
        build_case bc = {.env = env, .n_hosts = 16384, .per_host = 2, .rank = ranks[i]};
        bc.ring = mk_graph(TP_PATTERN_RING, 1, 2, two, ranks[i]);
        bc.tree = mk_graph(TP_PATTERN_TREE, 1, 2, two, ranks[i]);
        tp_channels ch;
        tp_log log = {.enabled = true};
        assert_int_equal(build(&ch, &log, &bc), TP_OK);
        assert_int_equal(ch.n_channels, 32);
        for (size_t k = 0; k < log.n_lines; k++) {
            const char *t = log.lines[k].text;
            if (strncmp(t, "Trees", 5) == 0 && ranks[i] == 20000)
                assert_int_equal(strlen(t), 5 + TP_TREES_LINE_SIZE - 2);
            if (strncmp(t, "Channel 00/32", 13) == 0)
                assert_string_equal(t, "Channel 00/32 :    0   1   2   3   4   5   6   7   8   9"
                                       "  10  11  12  13  14  15  16  17  18  19");
        }
        tp_channels__free(&ch);
        tp_log_clear(&log);
        free_case(&bc);
    }
}

/* ncclGetBtree on 14 ranks (the picture in NCCL's trees.cc) and the dtree's second tree. */
static void test_channels_btree_table(void **state)
{
    (void)state;
    static const struct {
        int rank, up, down0, down1;
    } rows[] = {
        {0, -1, -1, 8}, {8, 0, 4, 12},   {4, 8, 2, 6},     {12, 8, 10, 13},
        {2, 4, 1, 3},   {10, 12, 9, 11}, {13, 12, -1, -1}, {1, 2, -1, -1},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        int up, d0, d1, type;
        tp_channels__btree(14, rows[i].rank, &up, &d0, &d1, &type);
        assert_int_equal(up, rows[i].up);
        assert_int_equal(d0, rows[i].down0);
        assert_int_equal(d1, rows[i].down1);
    }
    int t0[4], t1[4];
    tp_channels__dtree(14, 13, t0, t1); /* mirrored: 13 is the second root */
    assert_int_equal(t1[0], -1);
    assert_int_equal(t1[2], 5);
    tp_channels__dtree(13, 1, t0, t1); /* shifted: 1 is the second root */
    assert_int_equal(t1[0], -1);
    tp_channels__dtree(2, 0, t0, t1);
    assert_int_equal(t0[0], -1);
    assert_int_equal(t0[2], 1);
    assert_int_equal(t1[0], 1);
}

/* ---- whole pipeline on the seed 002 experiment ----------------------------- */

static tp_plan *plan_fixture(const char *name, const char *const *env)
{
    char *xml = helpers_fixture(name);
    tp_plan *plan = helpers_plan(xml, env, 1, 0);
    free(xml);
    return plan;
}

static void test_channels_seed_final_counts(void **state)
{
    (void)state;
    static const struct {
        const char *fixture, *env;
        int search, final_channels;
    } rows[] = {
        {"v100_nv2.xml", NULL, 6, 12},
        {"v100_nv2.xml", "NCCL_MAX_NCHANNELS=4", 6, 4},
        {"v100_nv2.xml", "NCCL_MIN_NCHANNELS=16", 6, 16},
        {"v100_sparse_ring.xml", NULL, 4, 8},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const char *env[] = {rows[i].env, NULL};
        tp_plan *plan = plan_fixture(rows[i].fixture, env);
        assert_int_equal(plan->graphs[TP_GRAPH_RING]->n_channels, rows[i].search);
        assert_int_equal(plan->graphs[TP_GRAPH_TREE]->n_channels, rows[i].search);
        if (plan->channels.n_channels != rows[i].final_channels)
            print_error("%s %s: %d final\n", rows[i].fixture, rows[i].env ? rows[i].env : "",
                        plan->channels.n_channels);
        assert_int_equal(plan->channels.n_channels, rows[i].final_channels);
        tp_plan_free(plan);
    }
}

/* NCCL_GRAPH_FILE with one ring channel 0 2 1 3: no search, 2 final channels. */
static void test_channels_seed_one_channel_replay(void **state)
{
    (void)state;
    char path[] = "/tmp/tp_test_graph_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char graph[] =
        "<graphs version=\"1\">\n"
        "  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"1\" speedintra=\"20\" "
        "speedinter=\"20\" latencyinter=\"0\" typeintra=\"NVL\" typeinter=\"PIX\" "
        "samechannels=\"1\">\n"
        "    <channel>\n      <gpu dev=\"0\"/>\n      <gpu dev=\"0x2\"/>\n"
        "      <gpu dev=\"0x1\"/>\n      <gpu dev=\"0x3\"/>\n    </channel>\n"
        "  </graph>\n</graphs>\n";
    assert_int_equal(write(fd, graph, sizeof(graph) - 1), (ssize_t)(sizeof(graph) - 1));
    close(fd);
    char setting[64];
    snprintf(setting, sizeof(setting), "NCCL_GRAPH_FILE=%s", path);
    const char *env[] = {setting, NULL};
    tp_plan *plan = plan_fixture("v100_nv2.xml", env);
    unlink(path);
    assert_int_equal(plan->graphs[TP_GRAPH_RING]->n_channels, 1);
    assert_int_equal(plan->channels.n_channels, 2);
    assert_true(helpers_log_has(plan, "Channel 00/02 :    0   2   1   3"));
    assert_true(helpers_log_has(plan, "Channel 01/02 :    0   2   1   3"));
    tp_plan_free(plan);
}

/* dgx_h100's GPUs turned into compute capability `sm` ("100"), or kept with NULL. */
static char *h100_fixture_as(const char *sm)
{
    char *xml = helpers_fixture("dgx_h100.xml");
    if (!sm)
        return xml;
    char *out = malloc(strlen(xml) * 2 + 1), *o = out;
    assert_non_null(out);
    for (const char *s = xml; *s;)
        if (strncmp(s, "sm=\"90\"", 7) == 0) {
            o += sprintf(o, "sm=\"%s\"", sm);
            s += 7;
        } else {
            *o++ = *s++;
        }
    *o = '\0';
    free(xml);
    return out;
}

/* The NVLS channel count rank 0 of n_nodes hosts gets under NCCL version nccl. */
static int nvls_channels_of(const char *sm, const char *nccl, int n_nodes)
{
    char *xml = h100_fixture_as(sm);
    tp_config *cfg = NULL;
    tp_error err = {0};
    const char *const none[] = {NULL};
    assert_int_equal(tp_config_new(&cfg, none, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, nccl, &err), TP_OK);
    tp_job job = {.n_nodes = n_nodes, .rank = 0};
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "<test>", &job, cfg, &err), TP_OK);
    int n = plan->channels.n_nvls_channels;
    tp_plan_free(plan);
    tp_config_free(cfg);
    free(xml);
    return n;
}

/* 2.25 ncclNvlsInit: NCCL_NVLS_NCHANNELS' default -2 leaves the count to the architecture
 * (16 sm90; sm100: 24 on one node, 32 across nodes) instead of the CTA minimum of 1;
 * 2.22.3's default is 16 whatever the architecture. */
static void test_channels_nvls_default_by_arch(void **state)
{
    (void)state;
    assert_int_equal(nvls_channels_of(NULL, "2.27.5", 1), 16);
    assert_int_equal(nvls_channels_of("100", "2.27.5", 1), 24);
    assert_int_equal(nvls_channels_of("100", "2.27.5", 2), 32);
    assert_int_equal(nvls_channels_of(NULL, "2.22.3", 1), 16);
    assert_int_equal(nvls_channels_of("100", "2.22.3", 2), 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_channels_seed_nv2_lines),
        cmocka_unit_test(test_channels_min_max_table),
        cmocka_unit_test(test_channels_two_hosts),
        cmocka_unit_test(test_channels_cross_nic_exchange),
        cmocka_unit_test(test_channels_cross_nic_exchange_per_rank),
        cmocka_unit_test(test_channels_nvls_heads),
        cmocka_unit_test(test_channels_line_limits),
        cmocka_unit_test(test_channels_btree_table),
        cmocka_unit_test(test_channels_seed_final_counts),
        cmocka_unit_test(test_channels_seed_one_channel_replay),
        cmocka_unit_test(test_channels_nvls_default_by_arch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
