/*
 * The NCCL version profiles: each profile's table against values written here
 * (read from NCCL's source at the profile's tag), the rule predicates, the
 * lookup, and the configuration carrying the profile to the stages.
 */
#include "helpers.h"

#include "common/nccl_profile.h"
#include "config/config.h"

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
        TP_RULE_LOG_P2P_DISABLE,
        TP_RULE_LOG_COMM_CONFIG_ENV,
    };
    assert_int_equal(sizeof(in_2_27_5) / sizeof(in_2_27_5[0]), TP_RULE_COUNT);
    for (size_t i = 0; i < sizeof(in_2_27_5) / sizeof(in_2_27_5[0]); i++) {
        assert_false(tp_profile_has(old, in_2_27_5[i]));
        assert_true(tp_profile_has(p, in_2_27_5[i]));
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
    assert_null(tp_nccl_profile__at(TP_NCCL_COUNT));
    char list[64];
    tp_nccl_profile__list(list, sizeof(list));
    assert_string_equal(list, "2.22.3, 2.27.5");
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
    assert_non_null(strstr(err.message, "supported: 2.22.3, 2.27.5"));
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
                                           "tests/conformance-pass-2.27.5.txt"};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_2_22_3_table),
        cmocka_unit_test(test_profile_2_27_5_table),
        cmocka_unit_test(test_rule_predicates),
        cmocka_unit_test(test_profile_lookup),
        cmocka_unit_test(test_config_carries_the_profile),
        cmocka_unit_test(test_report_versions),
        cmocka_unit_test(test_search_reads_the_profile_ladder),
        cmocka_unit_test(test_log_formats_follow_the_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
