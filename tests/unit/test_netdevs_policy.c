/*
 * NCCL_NETDEVS_POLICY (rule netdevs-policy: NCCL 2.28.3 topo.cc ncclTopoGetLocalNet, 2.28.7
 * search.cc ncclTopoSelectNets; profile 2.30.7). Every expectation below is read from NCCL
 * v2.30.7-1's code, named at each test:
 * - getNetDevsPolicyOnce: AUTO / ALL compared with strcasecmp, "MAX:" with strncasecmp and n by
 *   atoi, kept only when n > 0; anything else is AUTO with "Unable to recognize ..."; both lines
 *   INFO(NCCL_ENV).
 * - ncclTopoGetLocalNetType: netsPerGpu = AUTO DIVUP(localNetCount, localGpuCount), ALL
 *   localNetCount, MAX:n min(n, localNetCount); channel c takes
 *   localNets[(start + c % netsPerGpu) % localNetCount], start = mirrorBits(dev % localGpuCount).
 * - ncclTopoSelectNets: the preferred NETs (each GPU's GetLocalNet channels until they wrap), then
 *   the others by path type, cut at n (n x GPUs for the list of every GPU) under MAX:n only.
 * Fixtures: aws_p5_2026.xml (each GPU alone with 4 NICs: GPU dev d's are NET 4d..4d+3),
 * oci_gpu4_8.xml (GPUs dev 2k and 2k+1 share NETs 2k and 2k+1).
 */
#include "helpers.h"

#include "config/config.h"
#include "nics/nics.h"
#include "paths/paths.h"
#include "search/search_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tp_plan *plan_policy(const char *fixture, const char *nccl, const char *policy)
{
    char setting[128];
    snprintf(setting, sizeof(setting), "NCCL_NETDEVS_POLICY=%s", policy ? policy : "");
    const char *const env[] = {policy ? setting : NULL, NULL};
    return helpers_plan_fixture_at(fixture, nccl, env, 2);
}

/* The NET device rank uses on channel c (ncclTopoGetLocalNet). */
static int local_net_dev(const tp_plan *plan, int rank, int c)
{
    int64_t id;
    int dev = -1;
    tp_error err = {0};
    assert_int_equal(tp_paths__get_local_net(plan->sys, rank, c, &id, &dev, &err), TP_OK);
    return dev;
}

/* Each rank r < n_ranks on channels 0..7 uses the NET NCCL picks among its n_local local NETs
 * first[r] ..: first[r] + (start[r] + c % spread) % n_local. */
static void assert_local_nets(const tp_plan *plan, const char *what, int n_ranks, const int *first,
                              const int *start, int n_local, int spread)
{
    for (int r = 0; r < n_ranks; r++) {
        for (int c = 0; c < 8; c++) {
            int want = first[r] + (start[r] + c % spread) % n_local;
            if (local_net_dev(plan, r, c) != want)
                fail_msg("%s: rank %d channel %d uses NET/%d, NCCL NET/%d", what, r, c,
                         local_net_dev(plan, r, c), want);
        }
    }
}

/*
 * ncclTopoGetLocalNetType on p5 (4 NETs, 1 GPU local to them: start 0): netsPerGpu is 4 under
 * AUTO and ALL, n under MAX:n (capped at 4); the value's case and what follows atoi's number do
 * not matter; MAX:0, MAX:-1, an unknown word and an empty value are AUTO.
 */
static void test_netdevs_local_net_p5(void **state)
{
    (void)state;
    static const struct {
        const char *policy;
        int spread;
    } rows[] = {
        {NULL, 4},    {"AUTO", 4},   {"ALL", 4},   {"all", 4},    {"MAX:1", 1},
        {"max:2", 2}, {"Max:3", 3},  {"MAX:9", 4}, {"MAX: 2", 2}, {"MAX:2x", 2},
        {"MAX:0", 4}, {"MAX:-1", 4}, {"MAX", 4},   {"bogus", 4},  {"", 4},
    };
    const int first[4] = {0, 4, 8, 12}, start[4] = {0};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        tp_plan *plan = plan_policy("aws_p5_2026.xml", "2.30.7", rows[i].policy);
        assert_local_nets(plan, rows[i].policy ? rows[i].policy : "unset", 4, first, start, 4,
                          rows[i].spread);
        tp_plan_free(plan);
    }
}

/*
 * ncclTopoGetLocalNetType on OCI BM.GPU4.8: GPUs dev 0 and 1 share NETs 0 and 1. AUTO and MAX:1
 * give each one NET (DIVUP(2, 2)), GPU 1 starting at mirrorBits(1 % 2, 2) = 1; ALL gives both,
 * stepping from the same starts. 2.27.5 does not read the variable: ALL there is AUTO.
 */
static void test_netdevs_local_net_shared_nics(void **state)
{
    (void)state;
    static const struct {
        const char *nccl, *policy;
        int spread;
    } rows[] = {
        {"2.30.7", NULL, 1},    {"2.30.7", "ALL", 2},  {"2.30.7", "MAX:1", 1},
        {"2.30.7", "MAX:2", 2}, {"2.30.7", " ALL", 1}, {"2.27.5", "ALL", 1},
    };
    const int first[2] = {0, 0}, start[2] = {0, 1};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        tp_plan *plan = plan_policy("oci_gpu4_8.xml", rows[i].nccl, rows[i].policy);
        char what[64];
        snprintf(what, sizeof(what), "%s %s", rows[i].nccl, rows[i].policy ? rows[i].policy : "-");
        assert_local_nets(plan, what, 2, first, start, 2, rows[i].spread);
        tp_plan_free(plan);
    }
}

/* ncclTopoSelectNets(typeInter SYS) of GPU index gpu (-1: every GPU), as NET devices. */
static int select_nets(const tp_plan *plan, int gpu, int *devs)
{
    tp_search_ctx ctx;
    tp_error err = {0};
    assert_int_equal(tp_search__ctx_tables(&ctx, plan->sys, &err), TP_OK);
    const int *list;
    int count;
    assert_int_equal(tp_search__select_nets(&ctx, TP_PATH_SYS, gpu, &list, &count), TP_OK);
    for (int i = 0; i < count; i++)
        devs[i] = plan->sys->nodes[TP_NODE_NET].nodes[list[i]].net.dev;
    tp_search__ctx_free(&ctx);
    return count;
}

/*
 * ncclTopoSelectNets on p5 (32 NETs, GPU index g = dev g): AUTO and ALL list every NET, GPU 0's
 * own four first. MAX:1: GPU 0's list is its preferred NET 0 alone (1 >= 1: no others); every
 * GPU's list is the 8 preferred NETs 0, 4, ..., 28 (8 >= 1 x 8 GPUs). MAX:6: GPU 0's 4 preferred,
 * then AUTO's next two others.
 */
static void test_netdevs_select_nets_p5(void **state)
{
    (void)state;
    int autos[TP_MAX_NODES], all[TP_MAX_NODES], devs[TP_MAX_NODES];
    tp_plan *plan = plan_policy("aws_p5_2026.xml", "2.30.7", NULL);
    int n_auto = select_nets(plan, 0, autos);
    assert_int_equal(n_auto, 32);
    for (int i = 0; i < 4; i++)
        assert_int_equal(autos[i], i);
    assert_int_equal(select_nets(plan, -1, devs), 32);
    tp_plan_free(plan);

    plan = plan_policy("aws_p5_2026.xml", "2.30.7", "ALL");
    assert_int_equal(select_nets(plan, 0, all), n_auto);
    assert_memory_equal(all, autos, (size_t)n_auto * sizeof(int));
    tp_plan_free(plan);

    plan = plan_policy("aws_p5_2026.xml", "2.30.7", "MAX:1");
    assert_int_equal(select_nets(plan, 0, devs), 1);
    assert_int_equal(devs[0], 0);
    assert_int_equal(select_nets(plan, -1, devs), 8);
    for (int g = 0; g < 8; g++)
        assert_int_equal(devs[g], 4 * g);
    tp_plan_free(plan);

    plan = plan_policy("aws_p5_2026.xml", "2.30.7", "MAX:6");
    assert_int_equal(select_nets(plan, 0, devs), 6);
    assert_memory_equal(devs, autos, 6 * sizeof(int));
    tp_plan_free(plan);

    plan = plan_policy("aws_p5_2026.xml", "2.27.5", "MAX:1"); /* not read: AUTO's list */
    assert_int_equal(select_nets(plan, 0, devs), n_auto);
    tp_plan_free(plan);
}

/* Rank 0's P2P send to its peer on the other node (local rank 0), as `nics` reports it. */
static tp_nic_p2p send_to_peer_8(const tp_plan *plan)
{
    tp_nics nx;
    tp_error err = {0};
    assert_int_equal(tp_nics__build(&nx, plan, &err), TP_OK);
    tp_nic_p2p found = {.peer_rank = -1};
    for (int i = 0; i < nx.n_ranks; i++)
        for (int p = 0; nx.ranks[i].rank == 0 && p < nx.ranks[i].n_peers; p++)
            if (nx.ranks[i].peers[p].peer_rank == 8)
                found = nx.ranks[i].peers[p];
    tp_nics__free(&nx);
    assert_int_equal(found.peer_rank, 8);
    return found;
}

/*
 * What `nics` shows (search.cc ncclTopoGetNetDev, P2P on channel 1, PXN level 2: the peer's
 * local GPU's NET, relayed through that NET's ncclTopoGetLocalGpu when it is another GPU).
 * p5: channel 1 is NET/1 under AUTO, NET/0 under MAX:1 (one NIC: every part on it).
 * OCI: NET/0 (GPU 0's own, no relay) under AUTO; under ALL channel 1 is NET/1, whose local GPU
 * (channel 0's pick) is GPU 1: relayed through rank 1.
 */
static void test_netdevs_nics_p2p(void **state)
{
    (void)state;
    static const struct {
        const char *fixture, *nccl, *policy;
        int net, proxy, n_nets;
    } rows[] = {
        {"aws_p5_2026.xml", "2.30.7", NULL, 1, 0, 1},
        {"aws_p5_2026.xml", "2.30.7", "MAX:1", 0, 0, 1},
        {"aws_p5_2026.xml", "2.27.5", "MAX:1", 1, 0, 1},
        {"oci_gpu4_8.xml", "2.30.7", NULL, 0, 0, 1},
        {"oci_gpu4_8.xml", "2.30.7", "ALL", 1, 1, 1},
        {"oci_gpu4_8.xml", "2.30.7", "nonsense", 0, 0, 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        tp_plan *plan = plan_policy(rows[i].fixture, rows[i].nccl, rows[i].policy);
        tp_nic_p2p s = send_to_peer_8(plan);
        if (s.net != rows[i].net || s.proxy_rank != rows[i].proxy)
            fail_msg("%s %s %s: NET/%d proxy %d, NCCL NET/%d proxy %d", rows[i].fixture,
                     rows[i].nccl, rows[i].policy ? rows[i].policy : "-", s.net, s.proxy_rank,
                     rows[i].net, rows[i].proxy);
        assert_int_equal(s.n_nets, rows[i].n_nets);
        tp_plan_free(plan);
    }
}

/* The index of the first log line equal to text, -1 if none. */
static long line_at(const tp_plan *plan, const char *text)
{
    for (size_t i = 0; i < plan->log.n_lines; i++)
        if (strcmp(plan->log.lines[i].text, text) == 0)
            return (long)i;
    return -1;
}

/*
 * getNetDevsPolicyOnce's lines, INFO(NCCL_ENV) (no WARN), at the first ncclTopoGetLocalNet:
 * paths.cc ncclTopoComputePaths asks ncclTopoGetLocalGpu right after ncclPxnDisable's read, before
 * ncclTopoPrint. Once per process (std::call_once); none when unset or under 2.27.5.
 */
static void test_netdevs_log_lines(void **state)
{
    (void)state;
    static const struct {
        const char *nccl, *policy, *line;
    } rows[] = {
        {"2.30.7", "MAX:1", "NCCL_NETDEVS_POLICY set by environment to MAX:1"},
        {"2.30.7", "all", "NCCL_NETDEVS_POLICY set by environment to all"},
        {"2.30.7", "MAX:0",
         "Unable to recognize NCCL_NETDEVS_POLICY=MAX:0, using NCCL_NETDEVS_POLICY_AUTO instead."},
        {"2.30.7", "",
         "Unable to recognize NCCL_NETDEVS_POLICY=, using NCCL_NETDEVS_POLICY_AUTO instead."},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        char setting[128];
        snprintf(setting, sizeof(setting), "NCCL_NETDEVS_POLICY=%s", rows[i].policy);
        const char *const env[] = {"NCCL_PXN_DISABLE=0", setting, NULL};
        tp_plan *plan = helpers_plan_fixture_at("oci_gpu4_8.xml", rows[i].nccl, env, 2);
        long at = line_at(plan, rows[i].line), pxn = line_at(plan, "NCCL_PXN_DISABLE set by "
                                                                   "environment to 0.");
        if (at < 0)
            fail_msg("NCCL_NETDEVS_POLICY=%s: no line \"%s\"", rows[i].policy, rows[i].line);
        assert_int_equal(at, pxn + 1);
        assert_true(at < line_at(plan, "=== System : maxBw 12.5 totalBw 240.0 ==="));
        assert_int_equal(plan->log.lines[at].level, TP_LOG_INFO);
        assert_true(plan->log.lines[at].sub == TP_SUB_ENV);
        size_t n = 0;
        for (size_t l = 0; l < plan->log.n_lines; l++)
            n += strstr(plan->log.lines[l].text, "NCCL_NETDEVS_POLICY") != NULL;
        assert_int_equal(n, 1);
        tp_plan_free(plan);
    }
    const char *const env[] = {"NCCL_NETDEVS_POLICY=MAX:1", NULL};
    tp_plan *plan = helpers_plan_fixture_at("oci_gpu4_8.xml", "2.27.5", env, 2);
    for (size_t l = 0; l < plan->log.n_lines; l++)
        assert_null(strstr(plan->log.lines[l].text, "NETDEVS"));
    tp_plan_free(plan);
    plan = helpers_plan_fixture_at("oci_gpu4_8.xml", "2.30.7", NULL, 2);
    for (size_t l = 0; l < plan->log.n_lines; l++)
        assert_null(strstr(plan->log.lines[l].text, "NETDEVS"));
    tp_plan_free(plan);
}

/* The configuration: NCCL's reading of each value, a warning for a value NCCL reads as AUTO,
 * and `env`'s default naming the first version that reads it. */
static void test_netdevs_config(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        tp_netdevs_kind kind;
        int max;
        bool warned;
    } rows[] = {
        {"AUTO", TP_NETDEVS_AUTO, 0, false}, {"aLL", TP_NETDEVS_ALL, 0, false},
        {"MAX:4", TP_NETDEVS_MAX, 4, false}, {"max:+7z", TP_NETDEVS_MAX, 7, false},
        {"MAX:0", TP_NETDEVS_AUTO, 0, true}, {"MAXI:2", TP_NETDEVS_AUTO, 0, true},
        {"ALL ", TP_NETDEVS_AUTO, 0, true},  {"", TP_NETDEVS_AUTO, 0, true},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        char setting[64];
        snprintf(setting, sizeof(setting), "NCCL_NETDEVS_POLICY=%s", rows[i].value);
        const char *const env[] = {setting, NULL};
        tp_config *cfg = NULL;
        tp_error err = {0};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, "2.30.7", &err), TP_OK); /* which reads it */
        tp_netdevs_policy p = tp_config__netdevs_policy(cfg);
        if (p.kind != rows[i].kind || p.max != rows[i].max)
            fail_msg("\"%s\": kind %d max %d", rows[i].value, (int)p.kind, p.max);
        assert_int_equal(tp_config_warning_count(cfg), rows[i].warned ? 1 : 0);
        if (rows[i].warned)
            assert_non_null(strstr(tp_config_warning(cfg, 0), "uses AUTO"));
        tp_config_free(cfg);
    }
    char dflt[160];
    tp_config__default_text(dflt, sizeof(dflt), TP_P_NETDEVS_POLICY);
    assert_non_null(strstr(dflt, "read from NCCL 2.28.3 on"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_netdevs_local_net_p5),
        cmocka_unit_test(test_netdevs_local_net_shared_nics),
        cmocka_unit_test(test_netdevs_select_nets_p5),
        cmocka_unit_test(test_netdevs_nics_p2p),
        cmocka_unit_test(test_netdevs_log_lines),
        cmocka_unit_test(test_netdevs_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
