/*
 * The NCCL version profiles: each profile's table against values written here
 * (read from NCCL's source at the profile's tag), the rule predicates, the
 * lookup, and the configuration carrying the profile to the stages.
 */
#include "helpers.h"

#include "common/nccl_profile.h"
#include "config/config.h"
#include "tuning/tuning_table.h"

#include <stdlib.h>
#include <string.h>

static void assert_ladder(tp_speed_ladder got, const float *want, int n)
{
    assert_int_equal(got.count, n);
    for (int i = 0; i < n; i++)
        assert_true(got.speeds[i] == want[i]);
}

static void assert_names(const tp_nccl_profile *p, const char *const *want, int n)
{
    assert_int_equal(p->n_path_types, n);
    for (int i = 0; i < n; i++)
        assert_string_equal(p->path_names[i], want[i]);
}

/* search.cc's legacy and sm90 arrays and the numbers every profile shares (2.21.5 .. 2.30.7). */
static void assert_common_entries(const tp_nccl_profile *p)
{
    static const float intra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
    static const float inter[] = {48, 30, 28, 24, 20, 18,   15,   12,    10,   9,
                                  7,  6,  5,  4,  3,  2.4f, 1.2f, 0.24f, 0.12f};
    static const float sm90_intra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
    static const float sm90_inter[] = {48, 45, 42, 40, 30,   24,   22,    20,   17.5f,
                                       15, 12, 6,  3,  2.4f, 1.2f, 0.24f, 0.12f};
    assert_ladder(p->speed_intra, intra, 13);
    assert_ladder(p->speed_inter, inter, 19);
    assert_ladder(p->sm90_speed_intra, sm90_intra, 11);
    assert_ladder(p->sm90_speed_inter, sm90_inter, 17);
    assert_int_equal(p->sm90_cc, 90);
    assert_true(p->dup_min_bw == 25.0);
    assert_int_equal(p->dup_fast_cc, 80);
    assert_true(p->dup_fast_bw == 50.0);
    assert_int_equal(p->dup_fast_max_chans, 4);
    assert_true(p->lower_bw_share == .49);
    assert_true(p->fallback_bw == 0.1f);
    assert_int_equal(p->p2p_read_cc, 80);
    assert_int_equal(p->gdr_read_min_cc, 80);
    assert_true(p->bcm_id_mask == 0xfffffffffffff000ULL);
    assert_true(p->bcm_gen4_id == 0x1000c0101000a000ULL);
    assert_true(p->bcm_gen5_id == 0x1000c03010000000ULL);
    assert_true(p->bcm_level == 0x1000);
    assert_true(p->bcm_flattened == 0xffff);
    assert_int_equal(p->postset_double_cc, 90);
    assert_true(p->postset_double_bw == 45.0f);
    assert_int_equal(p->postset_double_max, 16);
}

static void test_profile_2_22_3_table(void **state)
{
    (void)state;
    const tp_nccl_profile *p = tp_nccl_profile__find("2.22.3");
    assert_non_null(p);
    assert_int_equal(p->id, TP_NCCL_2_22_3);
    assert_int_equal(p->version_code, 22203);
    assert_string_equal(p->tag, "v2.22.3-1");
    assert_true(p->exact);
    assert_int_equal(p->public_passed, 167);
    assert_int_equal(p->public_total, 167);
    assert_int_equal(p->max_channels, 32);
    assert_int_equal(p->collnet_direct_graph_id, 2);
    assert_int_equal(p->nvls_channels_sm90, 0); /* NCCL_NVLS_NCHANNELS 16 as is */
    assert_common_entries(p);
    assert_int_equal(p->sm100_cc, 0);
    assert_int_equal(p->sm100_speed_intra.count, 0);
    assert_int_equal(p->sm100_speed_inter.count, 0);
    assert_true(p->sm100_nvlink_bw == 0);
    assert_int_equal(p->intel_srp_min_model, 0);
    assert_int_equal(p->intel_erp_min_model, 0);
    static const char *const names[] = {"LOC", "NVL", "NVB", "PIX", "PXB",
                                        "PXN", "PHB", "SYS", "NET", "DIS"};
    assert_names(p, names, 10);
    assert_int_equal(p->n_param_defaults, 0);
}

static void test_profile_2_27_5_table(void **state)
{
    (void)state;
    const tp_nccl_profile *p = tp_nccl_profile__find("2.27.5");
    assert_non_null(p);
    assert_int_equal(p->id, TP_NCCL_2_27_5);
    assert_int_equal(p->version_code, 22705);
    assert_string_equal(p->tag, "v2.27.5-1");
    assert_false(p->exact);
    assert_int_equal(p->public_total, 166);
    assert_int_equal(p->max_channels, 64);
    assert_int_equal(p->collnet_direct_graph_id, 4);
    assert_int_equal(p->nvls_channels_sm90, 16); /* nvls.cc NVLS_NCHANNELS_SM90 */
    assert_int_equal(p->nvls_channels_sm100, 32);
    assert_int_equal(p->nvls_channels_sm100_one_node, 24);
    assert_common_entries(p);
    static const float intra[] = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18};
    static const float inter[] = {48, 45.1f, 42, 40, 30,   24,   22,    20,   17.5f,
                                  15, 12,    6,  3,  2.4f, 1.2f, 0.24f, 0.12f};
    assert_int_equal(p->sm100_cc, 100);
    assert_ladder(p->sm100_speed_intra, intra, 11);
    assert_ladder(p->sm100_speed_inter, inter, 17);
    assert_true(p->sm100_nvlink_bw == 40.1f);
    assert_int_equal(p->intel_srp_min_model, 0x8F);
    assert_int_equal(p->intel_erp_min_model, 0xCF);
    assert_true(p->srp_qpi_bw == 22.0f);
    assert_true(p->erp_qpi_bw == 40.0f);
    static const char *const names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                        "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
    assert_names(p, names, 12);
    assert_int_equal(tp_nccl_profile__param_default(p, "NCCL_NVLS_NCHANNELS", 16), -2);
    assert_int_equal(tp_nccl_profile__param_default(p, "NCCL_MAX_P2P_NCHANNELS", 32), 64);
    assert_int_equal(p->n_param_defaults, 2);
}

/* 2.30.7 derives from 2.27.5: the same entries but the sm100 ladders (v2.30.7-1 search.cc). */
static void test_profile_2_30_7_table(void **state)
{
    (void)state;
    const tp_nccl_profile *p = tp_nccl_profile__find("2.30.7");
    const tp_nccl_profile *base = tp_nccl_profile__find("2.27.5");
    assert_non_null(p);
    assert_int_equal(p->id, TP_NCCL_2_30_7);
    assert_int_equal(p->version_code, 23007);
    assert_string_equal(p->tag, "v2.30.7-1");
    assert_false(p->exact);
    assert_int_equal(p->public_total, 166);
    assert_int_equal(p->max_channels, 64);
    assert_int_equal(p->collnet_direct_graph_id, 4);
    assert_int_equal(p->nvls_channels_sm90, 16); /* nvls.cc ncclNvlsTuning (2.30) */
    assert_int_equal(p->nvls_channels_sm100, 32);
    assert_int_equal(p->nvls_channels_sm100_one_node, 24);
    assert_common_entries(p);
    static const float intra[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
    static const float inter[] = {96, 86,    80, 48, 45.1f, 42, 40,   30,   24,    22,
                                  20, 17.5f, 15, 12, 6,     3,  2.4f, 1.2f, 0.24f, 0.12f};
    assert_int_equal(p->sm100_cc, 100);
    assert_ladder(p->sm100_speed_intra, intra, 12);
    assert_ladder(p->sm100_speed_inter, inter, 20);
    assert_true(p->sm100_nvlink_bw == 40.1f);
    assert_int_equal(p->intel_srp_min_model, base->intel_srp_min_model);
    assert_int_equal(p->intel_erp_min_model, base->intel_erp_min_model);
    assert_ptr_equal(p->path_names, base->path_names); /* topoPathTypeStr unchanged */
    assert_int_equal(p->n_path_types, 12);
    assert_ptr_equal(p->param_defaults, base->param_defaults);
    assert_int_equal(p->n_param_defaults, base->n_param_defaults);
    /* Every rule of 2.27.5 is kept. */
    assert_int_equal(p->rules & base->rules, base->rules);
}

static void test_rule_predicates(void **state)
{
    (void)state;
    const tp_nccl_profile *old = tp_nccl_profile__find("2.22.3");
    const tp_nccl_profile *p = tp_nccl_profile__find("2.27.5");
    /* Every rule is one NCCL changed after 2.22.3 and 2.27.5 keeps. */
    static const tp_rule in_2_27_5[] = {
        TP_RULE_LOG_SYSTEM_IDS,
        TP_RULE_LOG_RING_DIGITS,
        TP_RULE_PAT,
        TP_RULE_NIC_FUSION,
        TP_RULE_ALGO_PER_FUNCTION,
        TP_RULE_LADDER_MIN_MAX_PATH,
        TP_RULE_NVLS_HEADS_LIMIT,
        TP_RULE_POSTSET_DOUBLE_FROM_SM90,
        TP_RULE_C2C_PATH,
        TP_RULE_LOG_GDR_MODE,
        TP_RULE_P2C_BEFORE_PXN,
        TP_RULE_RECNET_LOCAL_GPU_FIRST,
        TP_RULE_LOG_GRAPH_GPU_IDS,
        TP_RULE_LOG_P2P_TYPE,
        TP_RULE_LOG_NET_COLL,
        TP_RULE_FALLBACK_INFO,
        TP_RULE_P2P_LEVEL_PXB,
        TP_RULE_TUNE_MODEL_2_27,
        TP_RULE_NO_SIZE_LINES,
        TP_RULE_NTHREADS_INFO,
        TP_RULE_SPLIT_NVLINK_RING,
    };
    /* Rules of 2.28 .. 2.30.7: in 2.30.7 only. */
    static const tp_rule in_2_30_7[] = {
        TP_RULE_LOG_POPULATE_NICS_RAILS, TP_RULE_LOG_P2P_CUDA,      TP_RULE_LOG_P2P_GROUP_SIZE,
        TP_RULE_LOG_NET_DEVICE_COUNTS,   TP_RULE_GRAPH_DUMP_RANK,   TP_RULE_DEV_NODES,
        TP_RULE_NETS_KEPT_ONE_NODE,      TP_RULE_GDR_LOG_TRACE,     TP_RULE_PATHS_TYPE_FIRST,
        TP_RULE_LOG_NVLS_TUNING,         TP_RULE_LOG_P2P_MAX_PEERS, TP_RULE_P2P_CHANNELS_BY_NET_BW,
        TP_RULE_NVLS_MODEL_2_28,         TP_RULE_LOG_TOPO_HINTS,    TP_RULE_NET_GUID_HEX,
        TP_RULE_NO_NVLS_CHANNEL_COPY,    TP_RULE_LOG_LINES_WHOLE,
    };
    const tp_nccl_profile *newest = tp_nccl_profile__find("2.30.7");
    size_t n27 = sizeof(in_2_27_5) / sizeof(in_2_27_5[0]);
    size_t n30 = sizeof(in_2_30_7) / sizeof(in_2_30_7[0]);
    assert_int_equal(n27 + n30, TP_RULE_COUNT);
    for (size_t i = 0; i < n27; i++) {
        assert_false(tp_profile_has(old, in_2_27_5[i]));
        assert_true(tp_profile_has(p, in_2_27_5[i]));
        assert_true(tp_profile_has(newest, in_2_27_5[i]));
    }
    for (size_t i = 0; i < n30; i++) {
        assert_false(tp_profile_has(old, in_2_30_7[i]));
        assert_false(tp_profile_has(p, in_2_30_7[i]));
        assert_true(tp_profile_has(newest, in_2_30_7[i]));
    }
    /* Names are unique and every rule names its NCCL version and function. */
    for (int a = 0; a < TP_RULE_COUNT; a++) {
        assert_string_not_equal(tp_rule_name((tp_rule)a), "?");
        assert_non_null(strstr(tp_rule_source((tp_rule)a), ".cc "));
        for (int b = a + 1; b < TP_RULE_COUNT; b++)
            assert_string_not_equal(tp_rule_name((tp_rule)a), tp_rule_name((tp_rule)b));
    }
    assert_string_equal(tp_rule_name(TP_RULE_P2C_BEFORE_PXN), "p2c-before-pxn");
}

static void test_profile_lookup(void **state)
{
    (void)state;
    assert_null(tp_nccl_profile__find("2.27"));
    assert_null(tp_nccl_profile__find("2.27.5-1"));
    assert_null(tp_nccl_profile__find(NULL));
    assert_ptr_equal(tp_nccl_profile__default(), tp_nccl_profile__find("2.22.3"));
    assert_ptr_equal(tp_nccl_profile__at(0), tp_nccl_profile__find("2.22.3"));
    assert_ptr_equal(tp_nccl_profile__at(1), tp_nccl_profile__find("2.27.5"));
    assert_ptr_equal(tp_nccl_profile__at(2), tp_nccl_profile__find("2.30.7"));
    assert_null(tp_nccl_profile__at(TP_NCCL_COUNT));
    char list[64];
    tp_nccl_profile__list(list, sizeof(list));
    assert_string_equal(list, "2.22.3, 2.27.5, 2.30.7");
    assert_int_equal(tp_nccl_profile_count(), TP_NCCL_COUNT);
    tp_nccl_profile_info info;
    assert_int_equal(tp_nccl_profile_info_at(1, &info, sizeof(info), NULL), TP_OK);
    assert_string_equal(info.nccl, "2.27.5");
    assert_false(info.exact);
    assert_false(info.is_default);
    /* A caller with a shorter record gets its prefix only. */
    tp_nccl_profile_info short_info = {.version_code = -7};
    assert_int_equal(tp_nccl_profile_info_at(0, &short_info, sizeof(const char *), NULL), TP_OK);
    assert_string_equal(short_info.nccl, "2.22.3");
    assert_int_equal(short_info.version_code, -7);
    assert_int_equal(tp_nccl_profile_info_at(TP_NCCL_COUNT, &info, sizeof(info), NULL),
                     TP_ERR_ARGUMENT);
}

static void test_config_carries_the_profile(void **state)
{
    (void)state;
    const char *const env[] = {NULL};
    tp_config *cfg = NULL, *copy = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    assert_string_equal(tp_config_nccl(cfg), "2.22.3");
    assert_int_equal(tp_config_int(cfg, TP_P_NVLS_NCHANNELS), 16);
    assert_int_equal(tp_config_int(cfg, TP_P_MAX_P2P_NCHANNELS), 32);
    assert_int_equal(tp_config_set_nccl(cfg, "2.27.5", &err), TP_OK);
    assert_ptr_equal(tp_config__profile(cfg), tp_nccl_profile__find("2.27.5"));
    assert_int_equal(tp_config_int(cfg, TP_P_NVLS_NCHANNELS), -2);
    assert_int_equal(tp_config_int(cfg, TP_P_MAX_P2P_NCHANNELS), 64);
    assert_int_equal(tp_config_copy(&copy, cfg, &err), TP_OK);
    assert_string_equal(tp_config_nccl(copy), "2.27.5");
    assert_int_equal(tp_config_int(copy, TP_P_MAX_P2P_NCHANNELS), 64);
    assert_int_equal(tp_config_set_nccl(cfg, "2.21.5", &err), TP_ERR_USAGE);
    assert_non_null(strstr(err.message, "supported: 2.22.3, 2.27.5, 2.30.7"));
    assert_string_equal(tp_config_nccl(cfg), "2.27.5"); /* unchanged by the refused version */
    tp_config_free(copy);
    tp_config_free(cfg);
}

/* Names in a conformance ratchet list (one case a line, '#' comments). */
static int ratchet_count(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int n = 0;
    while (fgets(line, sizeof(line), f))
        n += line[0] != '#' && line[0] != '\n';
    fclose(f);
    return n;
}

/* `topoplan versions`: every profile with its status, and a tally that is the ratchet's own
 * count (the list `make check-conformance*` requires), so the status cannot drift from it. */
static void test_report_versions(void **state)
{
    (void)state;
    const char *const env[] = {NULL};
    static const char *const ratchets[] = {"tests/conformance-pass.txt",
                                           "tests/conformance-pass-2.27.5.txt",
                                           "tests/conformance-pass-2.30.7.txt"};
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    for (int fmt = 0; fmt < 2; fmt++) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        assert_int_equal(tp_report_versions(out, cfg, fmt ? TP_FORMAT_JSON : TP_FORMAT_TEXT, &err),
                         TP_OK);
        fclose(out);
        for (int i = 0; i < tp_nccl_profile_count(); i++) {
            tp_nccl_profile_info info;
            assert_int_equal(tp_nccl_profile_info_at(i, &info, sizeof(info), NULL), TP_OK);
            assert_non_null(strstr(text, info.nccl));
            assert_int_equal(info.public_passed, ratchet_count(ratchets[i]));
            assert_int_equal(info.exact, info.public_passed == info.public_total);
        }
        assert_non_null(strstr(text, fmt ? "\"status\": \"partial\"" : "partial"));
        free(text);
    }
    assert_int_equal(tp_report_versions(NULL, cfg, TP_FORMAT_TEXT, &err), TP_ERR_ARGUMENT);
    tp_config_free(cfg);
}

/* The system and search read the profile: on 8 B200 GPUs (18 NVLinks each) 2.22.3 counts 20.6
 * GB/s a link and searches the sm90 ladder (top 60, duplicated to 30 a channel); 2.27.5 counts
 * 40.1 (SM100_NVLINK_BW) and searches the sm100 ladder (top 90, duplicated to 45). */
static void test_search_reads_the_profile_ladder(void **state)
{
    (void)state;
    const char *xml = tp_builtin_xml("hgx-b200");
    assert_non_null(xml);
    float bw[2];
    for (int v = 0; v < 2; v++) {
        tp_config *cfg = NULL;
        tp_error err = {0};
        const char *const env[] = {NULL};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, v ? "2.27.5" : "2.22.3", &err), TP_OK);
        tp_job job = TP_JOB_INIT;
        tp_plan *plan = NULL;
        assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "b200", &job, cfg, &err), TP_OK);
        tp_graph_summary g;
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &g, sizeof(g)), TP_OK);
        bw[v] = g.bw_intra;
        tp_plan_free(plan);
        tp_config_free(cfg);
    }
    assert_true(bw[0] == 30.0f);
    assert_true(bw[1] == 45.0f);
}

/* A plan of tests/fixtures/v100_nv2.xml (4 V100, NVLink all-to-all, one NIC) under `version`. */
static tp_plan *plan_v100(const char *version, int nodes)
{
    char *xml = helpers_fixture("v100_nv2.xml");
    tp_config *cfg = NULL;
    tp_error err = {0};
    const char *const env[] = {NULL};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, version, &err), TP_OK);
    tp_job job = TP_JOB_INIT;
    job.n_nodes = nodes;
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "v100", &job, cfg, &err), TP_OK);
    tp_config_free(cfg);
    free(xml);
    return plan;
}

/* The log formats follow the profile's rules (expected lines: NCCL 2.22.3's and 2.27.5's own
 * logs of conformance case seed_v100_nv2). */
static void test_log_formats_follow_the_profile(void **state)
{
    (void)state;
    static const char *const old_lines[] = {
        "GPU/1A000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1c000 (1/40.0/NVL) GPU/0-1d000 (1/40.0/NVL) "
        "GPU/0-1e000 (1/40.0/NVL) CPU/0-0 (2/12.0/PHB) ",
        " 0 : GPU/0 GPU/1 GPU/2 GPU/3",
        "Channel 00/12 :    0   1   2   3",
    };
    static const char *const new_lines[] = {
        "TOPO/NET : Importing network plugins to topology",
        "ncclTopoPopulateNics : Filled eth0 in topo with pciPath= keep=1 coll=(null)",
        "GPU/0-1a000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1c000 (1/40.0/NVL) GPU/0-1d000 (1/40.0/NVL) "
        "GPU/0-1e000 (1/40.0/NVL) CPU/0-0 (2/12.0/PHB) ",
        " 0 : GPU/0-1a000 GPU/0-1c000 GPU/0-1d000 GPU/0-1e000",
        "Channel 00/12 : 0 1 2 3",
        "Check P2P Type isAllDirectP2p 1 directMode 0",
    };
    tp_plan *old = plan_v100("2.22.3", 1), *cur = plan_v100("2.27.5", 1);
    for (size_t i = 0; i < sizeof(old_lines) / sizeof(old_lines[0]); i++) {
        assert_true(helpers_log_has(old, old_lines[i]));
        assert_false(helpers_log_has(cur, old_lines[i]));
    }
    for (size_t i = 0; i < sizeof(new_lines) / sizeof(new_lines[0]); i++) {
        assert_true(helpers_log_has(cur, new_lines[i]));
        assert_false(helpers_log_has(old, new_lines[i]));
    }
    tp_plan_free(old);
    tp_plan_free(cur);
    /* Two nodes keep the NIC: its leaf line gains the CollNet support (2.24 ncclTopoPrintRec). */
    old = plan_v100("2.22.3", 2);
    cur = plan_v100("2.27.5", 2);
    assert_true(helpers_log_has(old, "                + NET[1.2] - NET/0 (0/0/1.250000)"));
    assert_true(helpers_log_has(cur, "                + NET[1.2] - NET/0-0 (0/0/0/1.250000)"));
    tp_plan_free(old);
    tp_plan_free(cur);
}

/* 2.30.7's lines that 2.27.5 prints otherwise or not at all (expected lines: NCCL 2.30.7's own
 * log of conformance case seed_v100_nv2). */
static void test_log_formats_2_30_7(void **state)
{
    (void)state;
    static const char *const new_lines[] = {
        "ncclTopoPopulateNics : Filled eth0 in topo with pciPath= net=1 gin=(null) rma=(null) "
        "keep=1 coll=(null) rail=-1 plane=-1",
        "Rank 0: 1 Net devices",
        "Rank 0: 0 CollNet devices",
        "Local Net device counts across ranks: min 1 max 1",
        "Check P2P Type isAllDirectP2p 1 directMode 0 isAllCudaP2p 1",
        "ncclP2pSchedule: group size used is 4",
        /* 2.30.3: the GPU's DEV node holds its links; the GPU hangs off it by LOC. */
        "              + PCI[12.0] - DEV/0-1a000 (10de1db510de1249)",
        "                            + LOC[5000.0] - GPU/0-1a000",
        "                            + NVL[40.0] - DEV/0-1c000",
        /* Hops through the DEVs, routes to them; the NET kept on one node (2.28.7). */
        "GPU/0-1a000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1c000 (3/40.0/NVL) GPU/0-1d000 (3/40.0/NVL) "
        "GPU/0-1e000 (3/40.0/NVL) CPU/0-0 (3/12.0/PHB) NET/0-0 (5/1.2/PHB) DEV/0-1a000 "
        "(1/5000.0/LOC) DEV/0-1c000 (2/40.0/NVL) DEV/0-1d000 (2/40.0/NVL) DEV/0-1e000 "
        "(2/40.0/NVL) ",
        "NET/0-0 :GPU/0-1a000 (5/1.2/PHB) GPU/0-1c000 (5/1.2/PHB) GPU/0-1d000 (5/1.2/PHB) "
        "GPU/0-1e000 (5/1.2/PHB) CPU/0-0 (2/1.2/PHB) NET/0-0 (0/5000.0/LOC) DEV/0-1a000 "
        "(4/1.2/PHB) DEV/0-1c000 (4/1.2/PHB) DEV/0-1d000 (4/1.2/PHB) DEV/0-1e000 (4/1.2/PHB) ",
    };
    tp_plan *old = plan_v100("2.27.5", 1), *cur = plan_v100("2.30.7", 1);
    for (size_t i = 0; i < sizeof(new_lines) / sizeof(new_lines[0]); i++) {
        assert_true(helpers_log_has(cur, new_lines[i]));
        assert_false(helpers_log_has(old, new_lines[i]));
    }
    assert_true(helpers_log_has(old, "Retrieving state for IB"));
    assert_false(helpers_log_has(cur, "Retrieving state for IB"));
    tp_plan_free(old);
    tp_plan_free(cur);
    /* Across nodes the groups are NCCL_P2P_SCHEDULE_GROUP_SIZE (8) ranks, cut to divide 4. */
    cur = plan_v100("2.30.7", 2);
    assert_true(helpers_log_has(cur, "ncclP2pSchedule: group size used is 4"));
    assert_true(helpers_log_has(cur, "Tuning P2P operations with maxP2pPeers = 8"));
    tp_plan_free(cur);
    /* NVLS on a DGX H100: 16 channels (sm90), 128 KiB chunks (NCCL 2.30.7's log of case
     * syn_dgx_h100); on 2 nodes, 4 p2p channels per peer (a 50 GB/s NIC at 14 GB/s a channel;
     * 2.27.5: 2; both versions' logs of case syn_dgx_h100_nodes2). */
    const char *xml = tp_builtin_xml("dgx-h100");
    static const char *const per_peer[] = {
        "16 coll channels, 16 collnet channels, 16 nvls channels, 16 p2p channels, 2 p2p channels "
        "per peer",
        "16 coll channels, 16 collnet channels, 16 nvls channels, 16 p2p channels, 4 p2p channels "
        "per peer",
    };
    for (int v = 0; v < 4; v++) {
        tp_config *cfg = NULL;
        tp_error err = {0};
        const char *const env[] = {NULL};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, v % 2 ? "2.30.7" : "2.27.5", &err), TP_OK);
        tp_job job = TP_JOB_INIT;
        job.n_nodes = v / 2 + 1;
        tp_plan *plan = NULL;
        assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "h100", &job, cfg, &err), TP_OK);
        if (v < 2)
            assert_int_equal(
                helpers_log_has(
                    plan, "NVLS tuning: nChannels 16 chunkSize 131072 treeMaxChunkSize 131072"),
                v);
        else
            assert_true(helpers_log_has(plan, per_peer[v % 2]));
        tp_plan_free(plan);
        tp_config_free(cfg);
    }
}

/* A plan of a fixture under `version` (one node). */
static tp_plan *plan_fixture(const char *fixture, const char *version)
{
    char *xml = helpers_fixture(fixture);
    tp_config *cfg = NULL;
    tp_error err = {0};
    const char *const env[] = {NULL};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, version, &err), TP_OK);
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), fixture, &job, cfg, &err), TP_OK);
    tp_config_free(cfg);
    free(xml);
    return plan;
}

/* 2.30.7 ncclTopoSetPaths takes the better path type first: V100s whose NVLinks have count 0
 * reach each other over NVLink at 0 GB/s (2.27.5: over PCI at 12), and the DEV nodes' routes set
 * maxBw (NCCL 2.30.7's and 2.27.5's logs of conformance case seed_v100_nv0). Also: 2.30.7 reads
 * maxBw from the DEVs' own routes, before the P2P rewrites. */
static void test_paths_type_first_2_30_7(void **state)
{
    (void)state;
    tp_plan *old = plan_fixture("v100_nv0.xml", "2.27.5"),
            *cur = plan_fixture("v100_nv0.xml", "2.30.7");
    assert_true(helpers_log_has(old, "=== System : maxBw 12.0 totalBw 12.0 ==="));
    assert_true(helpers_log_has(cur, "=== System : maxBw 0.0 totalBw 12.0 ==="));
    assert_true(helpers_log_has(
        cur, "GPU/0-1a000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1c000 (3/0.0/NVL) GPU/0-1d000 "
             "(3/0.0/NVL) GPU/0-1e000 (3/0.0/NVL) CPU/0-0 (3/12.0/PHB) NET/0-0 (5/1.2/PHB) "
             "DEV/0-1a000 (1/5000.0/LOC) DEV/0-1c000 (2/0.0/NVL) DEV/0-1d000 (2/0.0/NVL) "
             "DEV/0-1e000 (2/0.0/NVL) "));
    tp_plan_free(old);
    tp_plan_free(cur);
    /* One host of two GPU domains is two NCCL nodes: groups of 2 ranks, maxP2pPeers logged (NCCL
     * 2.30.7's log of case syn_pix_nic). */
    cur = plan_fixture("pix_nic_2s.xml", "2.30.7");
    assert_true(helpers_log_has(cur, "ncclP2pSchedule: group size used is 2"));
    assert_true(helpers_log_has(cur, "Tuning P2P operations with maxP2pPeers = 4"));
    tp_plan_free(cur);
}

/* 2.28 no longer raises the collective channels to the NVLS channel count: a DGX H100 with
 * NCCL_MAX_NCHANNELS=4 keeps 4 (2.27.5: 16; NCCL 2.30.7's log of case
 * tune_dgx_h100_max_nchannels_4). */
static void test_no_nvls_channel_copy_2_30_7(void **state)
{
    (void)state;
    const char *xml = tp_builtin_xml("dgx-h100");
    static const char *const lines[] = {
        "16 coll channels, 16 collnet channels, 16 nvls channels, 16 p2p channels, 16 p2p channels "
        "per peer",
        "4 coll channels, 4 collnet channels, 16 nvls channels, 4 p2p channels, 4 p2p channels per "
        "peer",
    };
    for (int v = 0; v < 2; v++) {
        tp_config *cfg = NULL;
        tp_error err = {0};
        const char *const env[] = {"NCCL_MAX_NCHANNELS=4", NULL};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, v ? "2.30.7" : "2.27.5", &err), TP_OK);
        tp_job job = TP_JOB_INIT;
        tp_plan *plan = NULL;
        assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "h100", &job, cfg, &err), TP_OK);
        assert_true(helpers_log_has(plan, lines[v]));
        tp_plan_free(plan);
        tp_config_free(cfg);
    }
}

/* 2.26 makes the ring search take 2 channels when there are exactly two NVLink domains: 4 A100
 * PCIe in NVLink bridge pairs, one per NUMA node (NCCL 2.27.5's and 2.30.7's logs of case
 * real_ncv4_preswap: 2 channels at 6 GB/s, not 1 at 12). */
static void test_split_nvlink_ring(void **state)
{
    (void)state;
    static const char *const versions[] = {"2.27.5", "2.30.7"};
    for (int v = 0; v < 2; v++) {
        tp_plan *plan = plan_fixture("ncv4_preswap.xml", versions[v]);
        assert_true(helpers_log_has(plan,
                                    "Pattern 4, crossNic 0, nChannels 2, bw 6.000000/6.000000, "
                                    "type SYS/PIX, sameChannels 1"));
        tp_plan_free(plan);
    }
}

/* The longest line `nccl-log` prints for the plan. */
static size_t longest_log_line(const tp_plan *plan)
{
    char *text = NULL;
    size_t len = 0, longest = 0, at = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(tp_report_nccl_log(out, plan, NULL), TP_OK);
    fclose(out);
    for (size_t i = 0; i <= len; i++) {
        if (i == len || text[i] == '\n') {
            longest = i - at > longest ? i - at : longest;
            at = i + 1;
        }
    }
    free(text);
    return longest;
}

/* 2.29.7 prints a message whole after its prefix (before: both cut to a char[1024]): a paths line
 * of 32 NETs and 8 DEVs keeps its 1023 characters after "[0] NCCL INFO " (NCCL 2.30.7's log of
 * case real_aws_p5_2026); 2.28 calls a node of one rank all direct (case
 * syn_hgx_a100_p2p_disable_shm_disable). */
static void test_log_lines_2_30_7(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        tp_plan *plan = plan_fixture("aws_p5_2026.xml", v ? "2.30.7" : "2.27.5");
        if (v)
            assert_int_equal(longest_log_line(plan), 14 + 1023);
        else
            assert_true(longest_log_line(plan) <= 1023);
        tp_plan_free(plan);
    }
    char *xml = helpers_fixture("hgx_a100.xml");
    for (int v = 0; v < 2; v++) {
        tp_config *cfg = NULL;
        tp_error err = {0};
        const char *const env[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", NULL};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, v ? "2.30.7" : "2.27.5", &err), TP_OK);
        tp_job job = TP_JOB_INIT;
        tp_plan *plan = NULL;
        assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "a100", &job, cfg, &err), TP_OK);
        assert_true(helpers_log_has(plan, v ? "Check P2P Type isAllDirectP2p 1 directMode 0 "
                                              "isAllCudaP2p 1"
                                            : "Check P2P Type isAllDirectP2p 0 directMode 0"));
        tp_plan_free(plan);
        tp_config_free(cfg);
    }
    free(xml);
}

/* 2.28.9 reads a NET's guid with strtoull(.., 16) ("1f" is 0x1f; 2.27.5's "0x%lx" scan gives 0),
 * 2.30.3 follows a dictionary fallback with two HINT lines (v100_nv2.xml with guid="1f" and a GPU's
 * empty link_speed, on 2 nodes). */
static void test_net_guid_and_hints_2_30_7(void **state)
{
    (void)state;
    char *xml = helpers_fixture("v100_nv2.xml");
    char *guid = strstr(xml, "guid=\"0x0\""), *speed = strstr(xml, "link_speed=\"");
    assert_non_null(guid);
    assert_non_null(speed);
    memcpy(guid, "guid=\"1f\" ", 10); /* same length: "0x0" + '"' -> "1f" + '"' + ' ' */
    speed += strlen("link_speed=\"");
    while (*speed != '"') /* the speed blanked: spaces are not in NCCL's dictionary either */
        *speed++ = ' ';
    static const char *const leaf[] = {"                + NET[1.2] - NET/0-0 (0/0/0/1.250000)",
                                       "                + NET[1.2] - NET/0-0 (0/1f/0/1.250000)"};
    for (int v = 0; v < 2; v++) {
        tp_config *cfg = NULL;
        tp_error err = {0};
        const char *const env[] = {NULL};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, v ? "2.30.7" : "2.27.5", &err), TP_OK);
        tp_job job = TP_JOB_INIT;
        job.n_nodes = 2;
        tp_plan *plan = NULL;
        assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "v100", &job, cfg, &err), TP_OK);
        assert_true(helpers_log_has(plan, leaf[v]));
        assert_int_equal(helpers_log_has(plan,
                                         "HINT: In many cases this issue indicates missing or "
                                         "faulty information in the provided topology file."),
                         v);
        tp_plan_free(plan);
        tp_config_free(cfg);
    }
    free(xml);
}

/* 2.30.7's tuning constants (v2.30.7-1 tuning.cc ncclTunerConstantsDefaults): 2.27.5's but the
 * measured Blackwell rows, NVLSTree's network latency and the NVLS cost model's tables. */
static void test_tune_constants_2_30_7(void **state)
{
    (void)state;
    const tp_tune_constants *k = tp_tune__constants(tp_nccl_profile__find("2.30.7"));
    const tp_tune_constants *base = tp_tune__constants(tp_nccl_profile__find("2.27.5"));
    assert_string_equal(k->nccl_version, "2.30.7");
    assert_int_equal(k->algo_count, 7);
    static const double ring_ll128[] = {40.0, 40.0, 40.0}, tree_ll128[] = {55.6, 31.67, 20.0},
                        tree[] = {70.0, 42.8, 24.0}, nvls_tree_h[] = {0.0, 57.7, 45.5},
                        nvls_tree_b[] = {0.0, 96.0, 80.0};
    for (int i = 0; i < TP_NODE_CLASSES; i++) {
        assert_true(k->ring_ll128_max_bw[TP_CC_BLACKWELL][i] == ring_ll128[i]);
        assert_true(k->tree_ll128_max_bw[TP_CC_BLACKWELL][i] == tree_ll128[i]);
        assert_true(k->tree_max_bw[TP_CC_BLACKWELL][i] == tree[i]);
        assert_true(k->nvls_tree_max_bw[TP_CC_HOPPER][i] == nvls_tree_h[i]);
        assert_true(k->nvls_tree_max_bw[TP_CC_BLACKWELL][i] == nvls_tree_b[i]);
        for (int cc = TP_CC_VOLTA; cc <= TP_CC_HOPPER; cc++) { /* unchanged up to Hopper */
            assert_true(k->ring_ll128_max_bw[cc][i] == base->ring_ll128_max_bw[cc][i]);
            assert_true(k->tree_max_bw[cc][i] == base->tree_max_bw[cc][i]);
        }
        assert_true(k->ll_max_bw[TP_CC_BLACKWELL][i] == base->ll_max_bw[TP_CC_BLACKWELL][i]);
    }
    assert_true(k->hw_lat[TP_HW_NET][TP_ALGO_NVLS_TREE][TP_PROTO_SIMPLE] == 20.9f);
    assert_true(base->hw_lat[TP_HW_NET][TP_ALGO_NVLS_TREE][TP_PROTO_SIMPLE] == 14.0f);
    assert_true(k->nvls_efficiency[TP_CC_HOPPER] == 0.85f);
    assert_true(k->nvls_efficiency[TP_CC_BLACKWELL] == 0.74f);
    assert_int_equal(k->ll128_mixed_min_cc, 90);
    assert_int_equal(base->ll128_mixed_min_cc, 0);
    assert_true(base->base_lat[TP_ALGO_TREE][TP_PROTO_SIMPLE] ==
                k->base_lat[TP_ALGO_TREE][TP_PROTO_SIMPLE]);
    /* The NVLS cost model of 2.28 on a DGX H100 (the NVLink share at 0.85 efficiency less one
     * channel, doubled for AllReduce): NVLS/Simple AllReduce 272.0, 2.27.5 266.7 (NCCL 2.30.7's
     * and 2.27.5's tables of case tune_dgx_h100). */
    const char *xml = tp_builtin_xml("dgx-h100");
    static const char *const rows[] = {
        "    AllReduce |     0.0/   0.0 |     0.0/   0.0 |    69.2/   0.0 |     0.0/   0.0 |     "
        "0.0/   "
        "0.0 |    25.0/ 266.7 |     0.0/   0.0 |     0.0/   0.0 |    25.0/   0.0 |",
        "    AllReduce |     0.0/   0.0 |     0.0/   0.0 |    69.2/   0.0 |     0.0/   0.0 |     "
        "0.0/   "
        "0.0 |    25.0/ 272.0 |     0.0/   0.0 |     0.0/   0.0 |    25.0/   0.0 |",
    };
    for (int v = 0; v < 2; v++) {
        tp_config *cfg = NULL;
        tp_error err = {0};
        const char *const env[] = {"NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,TUNING", NULL};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_set_nccl(cfg, v ? "2.30.7" : "2.27.5", &err), TP_OK);
        tp_job job = TP_JOB_INIT;
        tp_plan *plan = NULL;
        assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "h100", &job, cfg, &err), TP_OK);
        assert_true(helpers_log_has(plan, rows[v]));
        assert_false(helpers_log_has(plan, rows[!v]));
        tp_plan_free(plan);
        tp_config_free(cfg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_2_22_3_table),
        cmocka_unit_test(test_profile_2_27_5_table),
        cmocka_unit_test(test_profile_2_30_7_table),
        cmocka_unit_test(test_rule_predicates),
        cmocka_unit_test(test_profile_lookup),
        cmocka_unit_test(test_config_carries_the_profile),
        cmocka_unit_test(test_report_versions),
        cmocka_unit_test(test_search_reads_the_profile_ladder),
        cmocka_unit_test(test_log_formats_follow_the_profile),
        cmocka_unit_test(test_log_formats_2_30_7),
        cmocka_unit_test(test_paths_type_first_2_30_7),
        cmocka_unit_test(test_tune_constants_2_30_7),
        cmocka_unit_test(test_net_guid_and_hints_2_30_7),
        cmocka_unit_test(test_no_nvls_channel_copy_2_30_7),
        cmocka_unit_test(test_log_lines_2_30_7),
        cmocka_unit_test(test_split_nvlink_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
