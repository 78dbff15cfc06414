/* The NCCL_* parameter registry: defaults, parsing, errors, copies; name tables. */
#include "helpers.h"

#include "config/config.h"
#include "common/names.h"

#include <stdlib.h>
#include <string.h>

static tp_config *config_of(const char *const *env)
{
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    return cfg;
}

static void test_config_defaults_are_nccl_2_22_3(void **state)
{
    (void)state;
    const char *const env[] = {"PATH=/bin", "HOME=/root", NULL};
    tp_config *cfg = config_of(env);
    assert_int_equal(tp_config_int(cfg, TP_P_CROSS_NIC), 2);
    assert_int_equal(tp_config_int(cfg, TP_P_NVB_DISABLE), 0);
    assert_int_equal(tp_config_int(cfg, TP_P_P2P_PXN_LEVEL), 2);
    assert_int_equal(tp_config_int(cfg, TP_P_MIN_NCHANNELS), -2);
    assert_int_equal(tp_config_int(cfg, TP_P_P2P_LEVEL), TP_LEVEL_UNSET);
    assert_false(tp_config_is_set(cfg, TP_P_CROSS_NIC));
    assert_null(tp_config_str(cfg, TP_P_GRAPH_FILE));
    tp_config_free(cfg);
}

static void test_config_integers_use_any_base(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_CROSS_NIC=0", "NCCL_MAX_NCHANNELS=0x10",
                               "NCCL_MIN_NCHANNELS=010", NULL};
    tp_config *cfg = config_of(env);
    assert_int_equal(tp_config_int(cfg, TP_P_CROSS_NIC), 0);
    assert_true(tp_config_is_set(cfg, TP_P_CROSS_NIC));
    assert_int_equal(tp_config_int(cfg, TP_P_MAX_NCHANNELS), 16);
    assert_int_equal(tp_config_int(cfg, TP_P_MIN_NCHANNELS), 8);
    tp_config_free(cfg);
}

/* NCCL 2.22.3 levels: names LOC..SYS, or the old numbering 0=LOC 1=PIX 2=PXB 3=PHB 4=SYS. */
static void test_config_levels_names_and_old_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        int level;
    } rows[] = {{"LOC", TP_PATH_LOC}, {"NVL", TP_PATH_NVL}, {"PIX", TP_PATH_PIX},
                {"PXB", TP_PATH_PXB}, {"PHB", TP_PATH_PHB}, {"SYS", TP_PATH_SYS},
                {"0", TP_PATH_LOC},   {"1", TP_PATH_PIX},   {"2", TP_PATH_PXB},
                {"3", TP_PATH_PHB},   {"4", TP_PATH_SYS},   {"9", TP_PATH_SYS}};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        tp_config *cfg = config_of((const char *const[]){NULL});
        tp_error err = {0};
        assert_int_equal(tp_config_set(cfg, "NCCL_P2P_LEVEL", rows[i].value, &err), TP_OK);
        assert_int_equal(tp_config_int(cfg, TP_P_P2P_LEVEL), rows[i].level);
        tp_config_free(cfg);
    }
}

/* Values NCCL 2.22.3 reinterprets or ignores: read as NCCL does, with a warning naming them. */
static void test_config_bad_values_read_as_nccl(void **state)
{
    (void)state;
    static const struct {
        const char *env;
        tp_param_id id;
        bool is_set;
        int64_t value;
    } rows[] = {
        {"NCCL_CROSS_NIC=two", TP_P_CROSS_NIC, true, 0},        /* strtoll: no number is 0 */
        {"NCCL_MAX_NCHANNELS=4x", TP_P_MAX_NCHANNELS, true, 4}, /* trailing text dropped */
        {"NCCL_P2P_LEVEL=NEAR", TP_P_P2P_LEVEL, false, TP_LEVEL_UNSET},
        {"NCCL_NET_GDR_LEVEL=pix", TP_P_NET_GDR_LEVEL, false, TP_LEVEL_UNSET}, /* case matters */
        {"NCCL_MIN_NCHANNELS=99999999999999999999999", TP_P_MIN_NCHANNELS, false, -2},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const char *const env[] = {rows[i].env, NULL};
        tp_config *cfg = NULL;
        tp_error err = {0};
        assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
        assert_int_equal(tp_config_is_set(cfg, rows[i].id), rows[i].is_set);
        assert_int_equal(tp_config_int(cfg, rows[i].id), rows[i].value);
        assert_int_equal(tp_config_warning_count(cfg), 1);
        const char *eq = strchr(rows[i].env, '=');
        assert_int_equal(
            strncmp(tp_config_warning(cfg, 0), rows[i].env, (size_t)(eq - rows[i].env)), 0);
        tp_config_free(cfg);
    }
}

/* A misspelt name is named with its nearest known variable; sources are kept. */
static void test_config_names_and_sources(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_CROSSNIC=1", "NCCL_CROSS_NIC=0", "HOME=/x", NULL};
    tp_config *cfg = config_of(env);
    assert_int_equal(tp_config_warning_count(cfg), 1);
    assert_non_null(strstr(tp_config_warning(cfg, 0), "did you mean NCCL_CROSS_NIC?"));
    assert_string_equal(tp_config_source(cfg, "NCCL_CROSS_NIC"), "environment");
    tp_error err = {0};
    assert_int_equal(tp_config_set_from(cfg, "NCCL_CROSS_NIC", "1", "--env", &err), TP_OK);
    assert_string_equal(tp_config_source(cfg, "NCCL_CROSS_NIC"), "--env");
    assert_null(tp_config_source(cfg, "NCCL_P2P_LEVEL"));
    assert_null(tp_config_warning(cfg, 5));
    tp_config_free(cfg);
}

static void test_config_copy_is_independent(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_GRAPH_FILE=g.xml", "NCCL_CROSS_NIC=1", NULL};
    tp_config *cfg = config_of(env), *copy = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config__copy(&copy, cfg, &err), TP_OK);
    assert_int_equal(tp_config_set(cfg, "NCCL_GRAPH_FILE", "other.xml", &err), TP_OK);
    assert_string_equal(tp_config_str(copy, TP_P_GRAPH_FILE), "g.xml");
    assert_int_equal(tp_config_int(copy, TP_P_CROSS_NIC), 1);
    assert_int_equal(tp_config_set(cfg, "NOT_NCCL", "x", &err), TP_OK);      /* ignored */
    assert_int_equal(tp_config_set(cfg, "NCCL_CROSS_NIC", "", &err), TP_OK); /* NCCL: unset */
    assert_false(tp_config_is_set(cfg, TP_P_CROSS_NIC));
    assert_int_equal(tp_config_int(cfg, TP_P_CROSS_NIC), 2);
    tp_config_free(copy);
    tp_config_free(cfg);
}

static void test_config_names_tables_are_complete(void **state)
{
    (void)state;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        assert_string_not_equal(tp_node_type_name(t), "?");
    for (int t = 0; t < TP_PATH_TYPE_COUNT; t++) {
        assert_string_not_equal(tp_path_type_name(t), "?");
        assert_int_equal(tp_path_type_from_name(tp_path_type_name(t)), t);
    }
    for (int p = TP_PATTERN_BALANCED_TREE; p <= TP_PATTERN_COLLNET_DIRECT; p++)
        assert_string_not_equal(tp_pattern_name(p), "?");
    assert_string_equal(tp_link_type_name(TP_LINK_NVL), "NVL");
    assert_string_equal(tp_link_type_name(TP_LINK_NET), "NET");
    for (int i = 0; i < TP_PARAM_COUNT; i++)
        assert_int_equal(strncmp(tp_config_name((tp_param_id)i), "NCCL_", 5), 0);
}

static void test_env_text_lines_comments_crlf(void **state)
{
    (void)state;
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, NULL, &err), TP_OK);
    static const char text[] = "# comment\r\n\nNCCL_CROSS_NIC=0\r\nNCCL_MAX_CTAS=7";
    assert_int_equal(tp_config_load_env_text(cfg, text, strlen(text), "e.env", &err), TP_OK);
    assert_int_equal(tp_config_int(cfg, TP_P_CROSS_NIC), 0);
    assert_int_equal(tp_config_int(cfg, TP_P_MAX_CTAS), 7);
    static const char bad[] = "NCCL_CROSS_NIC=1\nNCCL_MAX_CTAS\n";
    assert_int_equal(tp_config_load_env_text(cfg, bad, strlen(bad), "e.env", &err), TP_ERR_CONFIG);
    assert_string_equal(err.source, "e.env");
    assert_int_equal(err.line, 2);
    tp_config_free(cfg);
}

/* A line over the limit is refused whole: its tail never becomes a second assignment. */
static void test_env_text_long_line_refused_not_split(void **state)
{
    (void)state;
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, NULL, &err), TP_OK);
    size_t pad = TP_ENV_FILE_MAX_LINE;
    char *text = malloc(pad + 64);
    assert_non_null(text);
    memcpy(text, "NCCL_ALGO=", 10);
    memset(text + 10, 'x', pad - 10);
    strcpy(text + pad, "NCCL_MAX_CTAS=3\n");
    assert_int_equal(tp_config_load_env_text(cfg, text, strlen(text), "l.env", &err),
                     TP_ERR_CONFIG);
    assert_int_equal(err.line, 1);
    assert_false(tp_config_is_set(cfg, TP_P_MAX_CTAS));
    free(text);
    tp_config_free(cfg);
}

static void test_env_text_nul_byte_refused(void **state)
{
    (void)state;
    tp_config *cfg = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, NULL, &err), TP_OK);
    static const char text[] = "NCCL_CROSS_NIC=0\nNCCL_\0MAX_CTAS=3\n";
    assert_int_equal(tp_config_load_env_text(cfg, text, sizeof(text) - 1, "n.env", &err),
                     TP_ERR_CONFIG);
    assert_int_equal(err.line, 2);
    tp_config_free(cfg);
}

/* The text of cfg's warnings, one per line, in `out`. */
static void warnings_text(const tp_config *cfg, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t w = 0; w < tp_config_warning_count(cfg); w++) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s\n", tp_config_warning(cfg, w));
    }
}

/*
 * A parameter only newer NCCL reads is a silent trap under an older one:
 * NCCL_NETDEVS_POLICY (2.28 on) set with NCCL 2.22.3 or 2.27.5 modelled is
 * said to have no effect, naming the version; selecting 2.30.7 takes the
 * warning back.
 */
static void test_config_unread_parameters(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_NETDEVS_POLICY=MAX:1", NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    char text[2048];
    assert_int_equal(tp_config_new(&cfg, env, &err), TP_OK);
    warnings_text(cfg, text, sizeof(text));
    assert_non_null(strstr(text, "NCCL_NETDEVS_POLICY=MAX:1 has no effect: NCCL 2.22.3 does not "
                                 "read it"));
    assert_int_equal(tp_config_set_nccl(cfg, "2.27.5", &err), TP_OK);
    warnings_text(cfg, text, sizeof(text));
    assert_non_null(strstr(text, "NCCL 2.27.5 does not read it"));
    assert_null(strstr(text, "2.22.3"));
    assert_int_equal(tp_config_set_nccl(cfg, "2.30.7", &err), TP_OK);
    assert_int_equal(tp_config_warning_count(cfg), 0);
    assert_int_equal(tp_config_set_nccl(cfg, "2.22.3", &err), TP_OK);
    assert_int_equal(tp_config_warning_count(cfg), 1);
    assert_null(tp_config_warning(cfg, 1));
    tp_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_unread_parameters),
        cmocka_unit_test(test_config_defaults_are_nccl_2_22_3),
        cmocka_unit_test(test_env_text_lines_comments_crlf),
        cmocka_unit_test(test_env_text_long_line_refused_not_split),
        cmocka_unit_test(test_env_text_nul_byte_refused),
        cmocka_unit_test(test_config_integers_use_any_base),
        cmocka_unit_test(test_config_levels_names_and_old_numbers),
        cmocka_unit_test(test_config_bad_values_read_as_nccl),
        cmocka_unit_test(test_config_names_and_sources),
        cmocka_unit_test(test_config_copy_is_independent),
        cmocka_unit_test(test_config_names_tables_are_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
