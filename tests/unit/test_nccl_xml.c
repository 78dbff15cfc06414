/*
 * The replay of NCCL 2.22.3's XML loader (nccl_xml.c) on the inputs where
 * NCCL's reader differs from XML. The failures and their back-traces are the
 * catalogue of tests/nccl-errors; these are the quirks of what it accepts.
 */
#include "helpers.h"

#include "xml/nccl_xml.h"

#include <stdlib.h>
#include <string.h>

typedef struct replay {
    tp_nccl_xml_result r;
    tp_log log;
} replay;

static replay *run(const char *text, tp_nccl_xml_kind kind)
{
    replay *p = calloc(1, sizeof(*p));
    assert_non_null(p);
    p->log.enabled = true;
    tp_error err = {0};
    tp_nccl_xml_input in = {.text = text, .len = strlen(text), .kind = kind};
    assert_int_equal(tp_xml__nccl_load(&in, &p->log, &p->r, &err), TP_OK);
    return p;
}

static int count_lines(const replay *p, const char *text)
{
    int n = 0;
    for (size_t i = 0; i < p->log.n_lines; i++)
        n += strcmp(p->log.lines[i].text, text) == 0;
    return n;
}

static void done(replay *p)
{
    tp_log_clear(&p->log);
    free(p);
}

/* Inside an element NCCL skips, any closing tag closes it (one node record for both). */
static void test_skipped_element_closes_on_any_tag(void **state)
{
    (void)state;
    replay *p = run("<system version=\"1\"><foo><bar></baz></foo></system>", TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_ACCEPTED);
    assert_int_equal(p->r.n_roots, 1);
    assert_int_equal(count_lines(p, "Ignoring element foo"), 1);
    assert_int_equal(count_lines(p, "Ignoring element bar"), 0); /* foo has no handlers */
    done(p);
}

/* xmlGetToken: a 253-byte name is read, a 254-byte one is too long. */
static void test_name_length_limit(void **state)
{
    (void)state;
    char text[600];
    char name[300];
    memset(name, 'n', 254);
    name[253] = '\0';
    snprintf(text, sizeof(text), "<system version=\"1\"><%s/></system>", name);
    replay *p = run(text, TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_ACCEPTED);
    done(p);
    name[253] = 'n';
    name[254] = '\0';
    snprintf(text, sizeof(text), "<system version=\"1\"><%s/></system>", name);
    p = run(text, TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_REJECTED);
    assert_int_equal(p->r.code, TP_NCCL_INTERNAL_ERROR);
    assert_true(p->r.malformed);
    done(p);
}

/* xmlGetValue: 255 bytes fit NCCL's buffer; 256 overflow it (undefined: not replayed). */
static void test_value_length_limit(void **state)
{
    (void)state;
    char text[700];
    char value[300];
    memset(value, 'v', 255);
    value[255] = '\0';
    snprintf(text, sizeof(text), "<system version=\"1\" name=\"%s\"/>", value);
    replay *p = run(text, TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_ACCEPTED);
    done(p);
    snprintf(text, sizeof(text), "<system version=\"1\" name=\"%sv\"/>", value);
    p = run(text, TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_UNKNOWN);
    assert_non_null(p->r.unknown_why);
    done(p);
}

/* 16 attributes are kept; each extra one is logged, and two blanks make an empty one. */
static void test_attribute_count(void **state)
{
    (void)state;
    const char *line = "XML Parse : Ignoring extra attributes (max 16)";
    char text[600] = "<system version=\"1\"><cpu";
    for (int i = 0; i < 15; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), " a%d=\"0\"", i);
    strcat(text, "/></system>");
    replay *p = run(text, TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(count_lines(p, line), 0);
    done(p);
    /* the same 15 attributes and one more blank: 17 with the empty one */
    char *second = strstr(text, " a1=");
    memmove(second + 1, second, strlen(second) + 1);
    strcpy(strstr(text, "/></system>"), " b=\"1\"/></system>");
    p = run(text, TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_ACCEPTED);
    assert_int_equal(count_lines(p, line), 1);
    done(p);
}

/* The version is read with strtol(base 0): "0x1" is 1. */
static void test_version_any_base(void **state)
{
    (void)state;
    replay *p = run("<graphs version=\"0x1\" name=\"t\"></graphs>", TP_NCCL_XML_GRAPHS);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_ACCEPTED);
    assert_int_equal(count_lines(p, "Loading graphs for topology t"), 1);
    done(p);
}

/* A key without '=' has an empty value (not one left from an earlier node): version 0. */
static void test_key_without_value_is_empty(void **state)
{
    (void)state;
    replay *p = run("<foo version=\"1\"/><graphs version></graphs>", TP_NCCL_XML_GRAPHS);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_REJECTED);
    assert_int_equal(p->r.code, TP_NCCL_INVALID_USAGE);
    assert_int_equal(count_lines(p, "XML Graph has wrong version 0, 1 needed"), 1);
    done(p);
}

/* After '/', xmlGetNode reads a whole token: <graph/junk> is an empty element. */
static void test_junk_after_slash(void **state)
{
    (void)state;
    replay *p = run("<graphs version=\"1\"><graph/junk></graphs>", TP_NCCL_XML_GRAPHS);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_ACCEPTED);
    done(p);
}

/* A stray closing tag at the top is read as a new element of that name. */
static void test_stray_closing_tag_is_an_element(void **state)
{
    (void)state;
    replay *p = run("<system version=\"1\"></system></system>", TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_REJECTED);
    assert_false(p->r.malformed);
    assert_int_equal(count_lines(p, "Attribute version of node system not found"), 1);
    assert_int_equal(p->r.n_roots, 2);
    done(p);
}

/* The tree says whether NCCL loads every element of it (the preparation then drops nothing). */
static void tree_read(const char *text, bool whole)
{
    tp_error err = {0};
    tp_log log = {.enabled = true};
    tp_nccl_xml_result r;
    tp_nccl_xml_input in = {
        .text = text, .len = strlen(text), .kind = TP_NCCL_XML_TOPOLOGY, .want_tree = true};
    assert_int_equal(tp_xml__nccl_load(&in, &log, &r, &err), TP_OK);
    assert_non_null(r.tree);
    assert_int_equal(r.tree->nccl_read, whole);
    tp_xml__free(r.tree);
    tp_log_clear(&log);
}

static void test_tree_knows_what_nccl_skips(void **state)
{
    (void)state;
    tree_read("<system version=\"1\"><cpu numaid=\"0\"><nic/></cpu></system>", true);
    tree_read("<system version=\"1\"><cpu numaid=\"0\"><foo/></cpu></system>", false);
    tree_read("<system version=\"1\"><cpu numaid=\"0\"><nic><net><x/></net></nic></cpu></system>",
              false); /* under an element without handlers: skipped silently */
}

/* A topology of CPUs holding this many <pci/> each (n_cpus of them, the last one `last`). */
static char *cpus_of_pcis(int n_cpus, int per_cpu, int last)
{
    char *text = malloc(64 + (size_t)n_cpus * (32 + (size_t)per_cpu * 16));
    assert_non_null(text);
    size_t len = (size_t)sprintf(text, "<system version=\"1\">");
    for (int c = 0; c < n_cpus; c++) {
        len += (size_t)sprintf(text + len, "<cpu numaid=\"%d\">", c);
        for (int i = 0; i < (c == n_cpus - 1 ? last : per_cpu); i++)
            len += (size_t)sprintf(text + len, "<pci/>");
        len += (size_t)sprintf(text + len, "</cpu>");
    }
    strcpy(text + len, "</system>");
    return text;
}

/* The replay's tree skips the preparation's limits (check_root): so it must exist only where
 * every limit holds, and the replay must refuse what the limits refuse. */
static void test_tree_only_within_limits(void **state)
{
    (void)state;
    char attrs[600] = "<system version=\"1\"><cpu";
    for (int i = 0; i < 16; i++) /* 16 attributes: kept whole */
        snprintf(attrs + strlen(attrs), sizeof(attrs) - strlen(attrs), " a%d=\"0\"", i);
    strcat(attrs, "/></system>");
    tree_read(attrs, true);
    strcpy(strstr(attrs, "/></system>"), " b=\"1\"/></system>"); /* a 17th: cut, so no tree */
    tp_error err = {0};
    tp_log log = {.enabled = true};
    tp_nccl_xml_result r;
    tp_nccl_xml_input in = {
        .text = attrs, .len = strlen(attrs), .kind = TP_NCCL_XML_TOPOLOGY, .want_tree = true};
    assert_int_equal(tp_xml__nccl_load(&in, &log, &r, &err), TP_OK);
    assert_int_equal(r.outcome, TP_NCCL_XML_ACCEPTED);
    assert_null(r.tree);
    tp_log_clear(&log);
    /* 255 elements (2 CPUs of 126 <pci>) are read, 256 are not; 128 children are, 129 not */
    static const struct {
        int n_cpus, per_cpu, last;
        bool accepted;
    } cases[] = {
        {2, 126, 126, true}, {2, 126, 127, false}, {1, 128, 128, true}, {1, 129, 129, false}};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *text = cpus_of_pcis(cases[i].n_cpus, cases[i].per_cpu, cases[i].last);
        if (cases[i].accepted) {
            tree_read(text, true);
        } else {
            replay *p = run(text, TP_NCCL_XML_TOPOLOGY);
            assert_int_equal(p->r.outcome, TP_NCCL_XML_REJECTED);
            done(p);
        }
        free(text);
    }
}

/* Deeper than NCCL's recursion can be trusted: not replayed, and no stack growth here. */
static void test_deep_nesting_is_unknown(void **state)
{
    (void)state;
    size_t depth = 20000, len = 0;
    char *text = malloc(depth * 3 + 32);
    assert_non_null(text);
    len += (size_t)sprintf(text, "<system version=\"1\">");
    for (size_t i = 0; i < depth; i++)
        len += (size_t)sprintf(text + len, "<a>");
    replay *p = run(text, TP_NCCL_XML_TOPOLOGY);
    assert_int_equal(p->r.outcome, TP_NCCL_XML_UNKNOWN);
    done(p);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skipped_element_closes_on_any_tag),
        cmocka_unit_test(test_name_length_limit),
        cmocka_unit_test(test_value_length_limit),
        cmocka_unit_test(test_attribute_count),
        cmocka_unit_test(test_version_any_base),
        cmocka_unit_test(test_key_without_value_is_empty),
        cmocka_unit_test(test_junk_after_slash),
        cmocka_unit_test(test_stray_closing_tag_is_an_element),
        cmocka_unit_test(test_deep_nesting_is_unknown),
        cmocka_unit_test(test_tree_knows_what_nccl_skips),
        cmocka_unit_test(test_tree_only_within_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
