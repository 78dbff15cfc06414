/*
 * The NCCL version profiles: each profile's table against values written here
 * (read from NCCL's source at the profile's tag), the rule predicates, the
 * lookup, and the configuration carrying the profile to the stages.
 */
#include "helpers.h"

#include "common/nccl_profile.h"
#include "config/config.h"
#include "paths/paths.h"
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

/* The NCCL_GRAPH_FILE back-trace lines: search.cc's call sites (dev, id, crossnic, pattern,
 * nchannels, speedintra, speedinter, samechannels, channel, graphs, compute file, compute
 * graphs), then xml.h's xmlGetAttrInt and xmlGetAttrFloat. */
static void assert_graph_file_lines(const tp_nccl_profile *p, const int want[14])
{
    const tp_graph_file_lines *l = p->graph_file_lines;
    assert_non_null(l);
    const int got[14] = {l->channel_dev,      l->graph_id,           l->graph_crossnic,
                         l->graph_pattern,    l->graph_nchannels,    l->graph_speedintra,
                         l->graph_speedinter, l->graph_samechannels, l->graph_channel,
                         l->graphs,           l->compute_file,       l->compute_graphs,
                         l->xml_get_int,      l->xml_get_float};
    for (int i = 0; i < 14; i++)
        assert_int_equal(got[i], want[i]);
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
    static const int lines[14] = {775, 796, 800, 804, 805, 806, 807,
                                  814, 816, 823, 942, 944, 108, 130};
    assert_graph_file_lines(p, lines);
}

static void test_profile_2_27_5_table(void **state)
{
    (void)state;
    const tp_nccl_profile *p = tp_nccl_profile__find("2.27.5");
    assert_non_null(p);
    assert_int_equal(p->id, TP_NCCL_2_27_5);
    assert_int_equal(p->version_code, 22705);
    assert_string_equal(p->tag, "v2.27.5-1");
    assert_true(p->exact); /* 166 of 166 public cases */
    assert_int_equal(p->public_total, 166);
    assert_int_equal(p->max_channels, 64);
    assert_int_equal(p->log_message_max, 985);
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
    static const int lines[14] = {816, 837, 841, 845,  846,  847, 848,
                                  857, 859, 866, 1002, 1004, 108, 136};
    assert_graph_file_lines(p, lines);
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
    assert_true(p->exact); /* 166 of 166 public cases */
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
    /* search.cc / xml.h of v2.30.7-1: the graph-file back-trace lines. */
    static const int lines[14] = {901, 931, 935, 939,  940,  941, 942,
                                  951, 953, 961, 1116, 1118, 114, 150};
    assert_graph_file_lines(p, lines);
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
        TP_RULE_NVLS_CHANNELS_BY_ARCH,
        TP_RULE_CROSS_NIC_RING_ALTERNATE,
        TP_RULE_GRAPH_LATENCY_INFO,
        TP_RULE_RING_SPLIT_NVLINK,
        TP_RULE_LOG_P2P_DISABLE,
        TP_RULE_LOG_COMM_CONFIG_ENV,
        TP_RULE_IB_MERGE_NICS_PER_DEVICE,
    };
    /* Rules of 2.28 .. 2.30.7: in 2.30.7 only. */
    static const tp_rule in_2_30_7[] = {
        TP_RULE_LOG_POPULATE_NICS_RAILS,
        TP_RULE_LOG_P2P_CUDA,
        TP_RULE_LOG_P2P_GROUP_SIZE,
        TP_RULE_LOG_NET_DEVICE_COUNTS,
        TP_RULE_GRAPH_DUMP_RANK,
        TP_RULE_DEV_NODES,
        TP_RULE_NETS_KEPT_ONE_NODE,
        TP_RULE_GDR_LOG_TRACE,
        TP_RULE_PATHS_TYPE_FIRST,
        TP_RULE_LOG_NVLS_TUNING,
        TP_RULE_LOG_P2P_MAX_PEERS,
        TP_RULE_P2P_CHANNELS_BY_NET_BW,
        TP_RULE_NVLS_MODEL_2_28,
        TP_RULE_LOG_TOPO_HINTS,
        TP_RULE_NET_GUID_HEX,
        TP_RULE_NO_NVLS_CHANNEL_COPY,
        TP_RULE_LOG_LINES_WHOLE,
        TP_RULE_LOG_TRACE_FUNCTION,
        TP_RULE_CROSS_NIC_RING_PER_RANK,
        TP_RULE_LOCAL_NET_START_MODULO,
        TP_RULE_GRAPH_FILE_RANK,
        TP_RULE_VNIC_FORCED_PARENT,
        TP_RULE_VNIC_PCI_UNDER_CPU,
        TP_RULE_VNIC_LINK_WIDTH,
        TP_RULE_VNIC_EIGHT_DEVS,
        TP_RULE_VNIC_ONE_NUMA,
        TP_RULE_NET_FUSION_ENV_FIRST,
        TP_RULE_NET_MERGE_POLICY,
        TP_RULE_NETDEVS_POLICY,
        TP_RULE_FALLBACK_LOCAL_NETS,
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
    /* The NVLS channel defaults are read only under their rule: a profile has both or neither. */
    for (int v = 0; v < TP_NCCL_COUNT; v++) {
        const tp_nccl_profile *q = v == TP_NCCL_2_22_3 ? old : p;
        bool by_arch = q->nvls_channels_sm90 > 0 && q->nvls_channels_sm100 > 0 &&
                       q->nvls_channels_sm100_one_node > 0;
        assert_int_equal(tp_profile_has(q, TP_RULE_NVLS_CHANNELS_BY_ARCH), by_arch);
    }
    assert_string_equal(tp_rule_name(TP_RULE_NVLS_CHANNELS_BY_ARCH), "nvls-channels-by-arch");
    assert_string_equal(tp_rule_source(TP_RULE_NVLS_CHANNELS_BY_ARCH), "2.25 nvls.cc ncclNvlsInit");
    assert_string_equal(tp_rule_name(TP_RULE_P2C_BEFORE_PXN), "p2c-before-pxn");
}

static void test_profile_lookup(void **state)
{
    (void)state;
    assert_null(tp_nccl_profile__find("2.27"));
    assert_null(tp_nccl_profile__find("2.27.5-1"));
    assert_null(tp_nccl_profile__find(NULL));
    assert_ptr_equal(tp_nccl_profile__default(), tp_nccl_profile__find("2.22.3"));
    int defaults = 0; /* exactly one, whatever the others' status */
    for (int i = 0; i < TP_NCCL_COUNT; i++)
        defaults += tp_nccl_profile__at(i)->is_default;
    assert_int_equal(defaults, 1);
    assert_true(tp_nccl_profile__find("2.27.5")->exact);
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
    assert_true(info.exact);
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
        bool any_partial = false;
        for (int i = 0; i < tp_nccl_profile_count(); i++) {
            tp_nccl_profile_info info;
            assert_int_equal(tp_nccl_profile_info_at(i, &info, sizeof(info), NULL), TP_OK);
            any_partial |= !info.exact;
        }
        assert_true((strstr(text, fmt ? "\"status\": \"partial\"" : "partial") != NULL) ==
                    any_partial);
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
        tp_plan *plan = helpers_plan_xml_at(xml, v ? "2.27.5" : "2.22.3", NULL, 1);
        tp_graph_summary g;
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &g, sizeof(g)), TP_OK);
        bw[v] = g.bw_intra;
        tp_plan_free(plan);
    }
    assert_true(bw[0] == 30.0f);
    assert_true(bw[1] == 45.0f);
}

/* The ring of `builtin` on two nodes under NCCL `version`, NCCL_CROSS_NIC unset (2). */
static tp_plan *plan_two_nodes(const char *builtin, const char *version)
{
    const char *xml = tp_builtin_xml(builtin);
    assert_non_null(xml);
    return helpers_plan_xml_at(xml, version, NULL, 2);
}

/* Rule cross-nic-ring-alternate (2.23 ncclTopoCompute / ncclTopoSearchRecGpu / RecNet): the DGX
 * H100 ring needs the crossNic retry. 2.22.3 retries at crossNic 1, 2.27.5 at crossNic 2; both
 * alternate: an odd channel enters by the previous channel's exit NET and leaves by its entry. */
static void test_search_cross_nic_retry(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        tp_plan *plan = plan_two_nodes("dgx-h100", v ? "2.27.5" : "2.22.3");
        tp_graph_summary g;
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &g, sizeof(g)), TP_OK);
        assert_int_equal(g.cross_nic, v ? 2 : 1);
        assert_true(g.n_channels >= 2);
        for (int c = 1; c < g.n_channels; c += 2) {
            int count = 0, prev_count = 0;
            const int64_t *nets = tp_plan_graph_nets(plan, TP_GRAPH_RING, c, &count);
            const int64_t *prev = tp_plan_graph_nets(plan, TP_GRAPH_RING, c - 1, &prev_count);
            assert_int_equal(count, 2);
            assert_int_equal(prev_count, 2);
            assert_true(nets[0] == prev[1]);
            assert_true(nets[1] == prev[0]);
        }
        tp_plan_free(plan);
    }
}

/* Rule recnet-local-gpu-first (2.27.5 ncclTopoSearchRecNet): on AWS p5 (8 H100, 32 NICs, four
 * per GPU) an NVLS head whose GPU already heads a channel is passed over, its NET bandwidth given
 * back, and the search goes on to the next NET: 8 heads, one per GPU, at 1.2 GB/s (NCCL 2.27.5's
 * own log of conformance case real_aws_p5_2026_nodes_2); 2.22.3's loop stops at the duplicate. */
static void test_search_nvls_heads_skip_duplicates(void **state)
{
    (void)state;
    char *xml = helpers_fixture("aws_p5_2026.xml");
    tp_plan *plan = helpers_plan_xml_at(xml, "2.27.5", NULL, 2);
    tp_graph_summary g;
    assert_int_equal(tp_plan_graph(plan, TP_GRAPH_NVLS, &g, sizeof(g)), TP_OK);
    assert_int_equal(g.n_channels, 8);
    assert_true(g.bw_inter == 1.2f);
    int heads = 0;
    for (int c = 0; c < g.n_channels; c++) {
        int count = 0;
        const int *ranks = tp_plan_graph_gpus(plan, TP_GRAPH_NVLS, c, &count);
        assert_non_null(ranks);
        assert_false(heads & (1 << ranks[0])); /* each GPU heads one channel */
        heads |= 1 << ranks[0];
    }
    tp_plan_free(plan);
    free(xml);
}

/* MAXCHANNELS is the profile's (32 in 2.22.3, 64 in 2.27.5): one A100 and its NIC (conformance
 * case real_simai_1a100) searches MAXCHANNELS/2 ring channels, which postset doubles up to
 * MAXCHANNELS; NCCL 2.27.5's debug log keeps 985 bytes of the Trees line. */
static void test_max_channels_follow_the_profile(void **state)
{
    (void)state;
    char *xml = helpers_fixture("a100_single.xml");
    for (int v = 0; v < 2; v++) {
        const tp_nccl_profile *p = tp_nccl_profile__at(v);
        tp_plan *plan = helpers_plan_xml_at(xml, p->version, NULL, 1);
        tp_graph_summary g;
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &g, sizeof(g)), TP_OK);
        assert_int_equal(g.max_channels, v ? 32 : 16);
        assert_int_equal(g.n_channels, v ? 32 : 16);
        assert_int_equal(plan->channels.n_channels, v ? 64 : 32);
        size_t trees = 0;
        for (size_t i = 0; i < plan->log.n_lines; i++)
            if (strncmp(plan->log.lines[i].text, "Trees ", 6) == 0)
                trees = strlen(plan->log.lines[i].text);
        assert_int_equal(trees, v ? 985 : 20 * 10 + 21 * 22 + 5); /* [0]-[9], [10]-[31] */
        tp_plan_free(plan);
    }
    free(xml);
}

/* A plan of fixture `name` on `nodes` nodes under NCCL `version`. */
static tp_plan *plan_fixture_as(const char *name, int nodes, const char *version)
{
    return helpers_plan_fixture_at(name, version, NULL, nodes);
}

/* Rule local-net-start-modulo (2.30.7 ncclTopoGetLocalNetType): on an AWS p5 (4 NETs per GPU, no
 * NET shared) every GPU's channel 0 takes its first local NET (dev % 1 = 0); 2.27.5 starts at
 * the mirrored device number, GPU dev 1 at its third NET (real_aws_p5_2026_nodes_2's ring ends). */
static void test_local_net_start_modulo(void **state)
{
    (void)state;
    static const char *const versions[] = {"2.27.5", "2.30.7"};
    for (int v = 0; v < 2; v++) {
        tp_plan *plan = plan_fixture_as("aws_p5_2026.xml", 2, versions[v]);
        const tp_system *sys = plan->sys;
        for (int g = 0; g < sys->nodes[TP_NODE_GPU].count; g++) {
            const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
            int nets[TP_MAX_NODES], n_nets = 0;
            tp_paths__get_local(sys, TP_NODE_GPU, g, TP_NODE_NET, nets, &n_nets, NULL);
            assert_int_equal(n_nets, 4);
            int64_t id = -1;
            tp_error err = {0};
            assert_int_equal(tp_paths__get_local_net(sys, gpu->gpu.rank, 0, &id, NULL, &err),
                             TP_OK);
            int want = v == 1 ? 0 : tp_paths__mirror_bits(gpu->gpu.dev % 4, 4);
            assert_true(id == sys->nodes[TP_NODE_NET].nodes[nets[want]].id);
            if (v == 0 && gpu->gpu.dev == 1)
                assert_int_equal(want, 2);
        }
        tp_plan_free(plan);
    }
}

/* Rule ladder-min-max-path (2.25 ncclTopoCompute): the path-type ladder starts at the best type
 * the GPUs have. AWS p5.48xlarge without NVLink elements (conformance case real_p5_48xl_nodes_2):
 * 2.27.5 starts GPU-to-GPU at PHB and finds the ring at PHB/PIX, the tree at PHB/PIX after the
 * simpler-tree rung (sm90); 2.22.3 climbs from NVL, reaching PHB GPU-to-GPU only with PHB to the
 * NICs, where the balanced tree is found first. */
static void test_search_ladder_from_min_path(void **state)
{
    (void)state;
    static const struct {
        const char *nccl;
        tp_path_type inter;
        tp_pattern tree;
    } want[] = {{"2.22.3", TP_PATH_PHB, TP_PATTERN_BALANCED_TREE},
                {"2.27.5", TP_PATH_PIX, TP_PATTERN_TREE}};
    for (int v = 0; v < 2; v++) {
        tp_plan *plan = plan_fixture_as("p5_48xl_no_nvlink.xml", 2, want[v].nccl);
        tp_graph_summary ring, tree;
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &ring, sizeof(ring)), TP_OK);
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_TREE, &tree, sizeof(tree)), TP_OK);
        assert_int_equal(ring.type_intra, TP_PATH_PHB);
        assert_int_equal(ring.type_inter, want[v].inter);
        assert_int_equal(tree.type_inter, want[v].inter);
        assert_int_equal(tree.pattern, want[v].tree);
        tp_plan_free(plan);
    }
}

/* Rule ring-split-nvlink (2.26 ncclTopoCompute, ncclTopoSplitNvLink): Azure NC A100 v4, two
 * NVLink-bridged pairs of PCIe A100s (conformance case real_ncv4_preswap): 2.27.5 searches at
 * least 2 ring channels (6 GB/s each), and the tree follows; 2.22.3 takes 1 channel at 12. */
static void test_search_split_nvlink_two_channels(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        tp_plan *plan = plan_fixture_as("ncv4_nvlink_pairs.xml", 1, v ? "2.27.5" : "2.22.3");
        tp_graph_summary ring, tree;
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_RING, &ring, sizeof(ring)), TP_OK);
        assert_int_equal(tp_plan_graph(plan, TP_GRAPH_TREE, &tree, sizeof(tree)), TP_OK);
        assert_int_equal(ring.min_channels, v ? 2 : 1);
        assert_int_equal(ring.n_channels, v ? 2 : 1);
        assert_true(ring.bw_intra == (v ? 6.0f : 12.0f));
        assert_int_equal(tree.n_channels, ring.n_channels);
        tp_plan_free(plan);
    }
}

/* A plan of tests/fixtures/v100_nv2.xml (4 V100, NVLink all-to-all, one NIC) under `version`. */
static tp_plan *plan_v100(const char *version, int nodes)
{
    return helpers_plan_fixture_at("v100_nv2.xml", version, NULL, nodes);
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
        tp_plan *plan = helpers_plan_xml_at(xml, v % 2 ? "2.30.7" : "2.27.5", NULL, v / 2 + 1);
        if (v < 2)
            assert_int_equal(
                helpers_log_has(
                    plan, "NVLS tuning: nChannels 16 chunkSize 131072 treeMaxChunkSize 131072"),
                v);
        else
            assert_true(helpers_log_has(plan, per_peer[v % 2]));
        tp_plan_free(plan);
    }
}

/* A plan of a fixture under `version` (one node). */
static tp_plan *plan_fixture(const char *fixture, const char *version)
{
    return helpers_plan_fixture_at(fixture, version, NULL, 1);
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
        const char *const env[] = {"NCCL_MAX_NCHANNELS=4", NULL};
        tp_plan *plan = helpers_plan_xml_at(xml, v ? "2.30.7" : "2.27.5", env, 1);
        assert_true(helpers_log_has(plan, lines[v]));
        tp_plan_free(plan);
    }
}

/* Rule p2p-channels-by-net-bw (2.29 topo.cc getLocalNetCountByBw): the NETs counted are those
 * ncclTopoGetLocalNet's channels walk, the local NETs divided among the GPUs local to them
 * (NETDEVS policy AUTO). OCI BM.GPU4.8: 2 GPUs share 2 x 12.5 GB/s NICs, so one NET, one
 * channel per peer, not two for the GPU's 24 GB/s (real_oci_gpu4_8_nodes_2's NCCL 2.30.7 log). */
static void test_p2p_per_peer_nets_per_gpu(void **state)
{
    (void)state;
    char *xml = helpers_fixture("oci_gpu4_8.xml");
    tp_plan *plan = helpers_plan_xml_at(xml, "2.30.7", NULL, 2);
    assert_true(helpers_log_has(plan, "16 coll channels, 16 collnet channels, 0 nvls channels, 16 "
                                      "p2p channels, 1 p2p channels per peer"));
    tp_plan_free(plan);
    free(xml);
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
        const char *const env[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", NULL};
        tp_plan *plan = helpers_plan_xml_at(xml, v ? "2.30.7" : "2.27.5", env, 1);
        assert_true(helpers_log_has(plan, v ? "Check P2P Type isAllDirectP2p 1 directMode 0 "
                                              "isAllCudaP2p 1"
                                            : "Check P2P Type isAllDirectP2p 0 directMode 0"));
        tp_plan_free(plan);
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
        tp_plan *plan = helpers_plan_xml_at(xml, v ? "2.30.7" : "2.27.5", NULL, 2);
        assert_true(helpers_log_has(plan, leaf[v]));
        assert_int_equal(helpers_log_has(plan,
                                         "HINT: In many cases this issue indicates missing or "
                                         "faulty information in the provided topology file."),
                         v);
        tp_plan_free(plan);
    }
    free(xml);
}

/* 2.30.7's tuning constants (v2.30.7-1 tuning.cc ncclTunerConstantsDefaults): 2.27.5's but the
 * measured Blackwell rows, NVLSTree's network latency and the NVLS cost model's tables. */
/* A version's own Simple latency cell over the shared table, -1 when it has none. */
static float lat_cell(const tp_tune_constants *k, int hw, tp_algo algo)
{
    for (int i = 0; i < k->n_lat_cells; i++)
        if (k->lat_cells[i].hw == hw && k->lat_cells[i].algo == algo &&
            k->lat_cells[i].proto == TP_PROTO_SIMPLE)
            return k->lat_cells[i].us;
    return -1;
}

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
        assert_true(k->blackwell->ring_ll128_max_bw[i] == ring_ll128[i]);
        assert_true(k->blackwell->tree_ll128_max_bw[i] == tree_ll128[i]);
        assert_true(k->blackwell->tree_max_bw[i] == tree[i]);
        assert_true(k->nvls_tree_max_bw[TP_CC_HOPPER][i] == nvls_tree_h[i]);
        assert_true(k->nvls_tree_max_bw[TP_CC_BLACKWELL][i] == nvls_tree_b[i]);
        assert_true(k->blackwell->ll_max_bw[i] == base->blackwell->ll_max_bw[i]);
    }
    assert_ptr_equal(k->shared, base->shared); /* unchanged up to Hopper */
    assert_true(lat_cell(k, TP_HW_NET, TP_ALGO_NVLS_TREE) == 20.9f);
    assert_true(lat_cell(base, TP_HW_NET, TP_ALGO_NVLS_TREE) < 0); /* the shared 14 */
    assert_true(lat_cell(k, TP_HW_NVLINK, TP_ALGO_PAT) == 4.0f);
    assert_true(k->nvls_efficiency[TP_CC_HOPPER] == 0.85f);
    assert_true(k->nvls_efficiency[TP_CC_BLACKWELL] == 0.74f);
    assert_int_equal(k->ll128_mixed_min_cc, 90);
    assert_int_equal(base->ll128_mixed_min_cc, 0);
    assert_true(lat_cell(base, TP_TUNE_BASE_LAT, TP_ALGO_TREE) ==
                lat_cell(k, TP_TUNE_BASE_LAT, TP_ALGO_TREE));
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
        const char *const env[] = {"NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,TUNING", NULL};
        tp_plan *plan = helpers_plan_xml_at(xml, v ? "2.30.7" : "2.27.5", env, 1);
        assert_true(helpers_log_has(plan, rows[v]));
        assert_false(helpers_log_has(plan, rows[!v]));
        tp_plan_free(plan);
    }
}

/* The index of the log line `text` in plan's log, -1 when absent. */
static long log_index(const tp_plan *plan, const char *text)
{
    for (size_t i = 0; i < plan->log.n_lines; i++)
        if (strcmp(plan->log.lines[i].text, text) == 0)
            return (long)i;
    return -1;
}

/* A plan under 2.30.7 of v100_nv0.xml whose first NVLink (GPU 1a000 to 1c000) has `count`. */
static tp_plan *plan_nv0_first_count(const char *count)
{
    char *fixture = helpers_fixture("v100_nv0.xml");
    const char *at = strstr(fixture, "count=\"0\"");
    assert_non_null(at);
    size_t head = (size_t)(at - fixture) + strlen("count=\"");
    size_t len = strlen(fixture) + strlen(count) + 1;
    char *xml = malloc(len);
    assert_non_null(xml);
    snprintf(xml, len, "%.*s%s%s", (int)head, fixture, count, at + strlen("count=\"0"));
    tp_plan *plan = helpers_plan_xml_at(xml, "2.30.7", NULL, 1);
    free(xml);
    free(fixture);
    return plan;
}

/* 2.30.3 (dev-nodes): a DEV's links stay in ncclTopoConnectNodes' bandwidth order, so an NVLink
 * faster than the LOC link to its GPU (5000) prints before it (the B200s of conformance case
 * real_modal_b200: 5052.6 GB/s to the NVSwitch), a slower one after it. */
static void test_dev_loc_link_in_bw_order(void **state)
{
    (void)state;
    static const char *const loc = "                            + LOC[5000.0] - GPU/0-1a000";
    tp_plan *fast = plan_nv0_first_count("300"); /* 300 x 20 GB/s */
    long nvl = log_index(fast, "                            + NVL[6000.0] - DEV/0-1c000");
    assert_true(nvl >= 0 && log_index(fast, loc) == nvl + 1);
    tp_plan_free(fast);
    tp_plan *slow = plan_nv0_first_count("2");
    nvl = log_index(slow, "                            + NVL[40.0] - DEV/0-1c000");
    assert_true(nvl >= 1 && log_index(slow, loc) == nvl - 1);
    tp_plan_free(slow);
}

/*
 * Rule fallback-local-nets (2.29.2 ncclTopoCompute): the dual-port fixture's
 * tree finds no path on 2 nodes; its simple-order channel entered and left
 * at NET id 0 up to 2.27.5, and from 2.29.2 at GPU 0's first NET (the fused
 * NIC of its own switch, NET/0-4) and the last GPU's (NET/0-5), as
 * ncclTopoSelectNets lists them.
 */
static void test_fallback_nets_follow_the_profile(void **state)
{
    (void)state;
    static const struct {
        const char *nccl;
        int64_t in, out;
    } runs[] = {{"2.27.5", 0, 0}, {"2.30.7", 4, 5}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        tp_plan *plan = helpers_plan_fixture_at("dual_port_nics.xml", runs[i].nccl, NULL, 2);
        const tp_graph *tree = plan->graphs[TP_GRAPH_TREE];
        assert_int_equal(tree->n_channels, 1);
        assert_true(tree->bw_intra == 0.1f);
        assert_int_equal(tree->inter[0], runs[i].in);
        assert_int_equal(tree->inter[1], runs[i].out);
        tp_plan_free(plan);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_2_22_3_table),
        cmocka_unit_test(test_profile_2_27_5_table),
        cmocka_unit_test(test_profile_2_30_7_table),
        cmocka_unit_test(test_fallback_nets_follow_the_profile),
        cmocka_unit_test(test_rule_predicates),
        cmocka_unit_test(test_profile_lookup),
        cmocka_unit_test(test_config_carries_the_profile),
        cmocka_unit_test(test_report_versions),
        cmocka_unit_test(test_search_reads_the_profile_ladder),
        cmocka_unit_test(test_search_cross_nic_retry),
        cmocka_unit_test(test_search_nvls_heads_skip_duplicates),
        cmocka_unit_test(test_max_channels_follow_the_profile),
        cmocka_unit_test(test_search_ladder_from_min_path),
        cmocka_unit_test(test_search_split_nvlink_two_channels),
        cmocka_unit_test(test_log_formats_follow_the_profile),
        cmocka_unit_test(test_log_formats_2_30_7),
        cmocka_unit_test(test_paths_type_first_2_30_7),
        cmocka_unit_test(test_dev_loc_link_in_bw_order),
        cmocka_unit_test(test_tune_constants_2_30_7),
        cmocka_unit_test(test_net_guid_and_hints_2_30_7),
        cmocka_unit_test(test_no_nvls_channel_copy_2_30_7),
        cmocka_unit_test(test_log_lines_2_30_7),
        cmocka_unit_test(test_split_nvlink_ring),
        cmocka_unit_test(test_local_net_start_modulo),
        cmocka_unit_test(test_p2p_per_peer_nets_per_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
