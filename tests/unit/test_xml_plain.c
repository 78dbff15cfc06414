/*
 * The plain reader (xml_plain.c) against expat: on every file it takes, the
 * same tree (tags, attributes in order, positions, empty-element tags); on
 * every text outside its subset, it steps aside and expat decides.
 */
#include "helpers.h"

#include "xml/xml.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_same_elem(const tp_xml_elem *a, const tp_xml_elem *b, const char *what)
{
    if (strcmp(a->tag, b->tag) != 0 || a->n_attrs != b->n_attrs || a->n_children != b->n_children ||
        a->line != b->line || a->column != b->column || a->src_start != b->src_start ||
        a->src_tag_len != b->src_tag_len || a->src_close != b->src_close ||
        a->self_closing != b->self_closing) {
        print_error("%s: <%s> line %u col %u differs from expat's <%s> line %u col %u\n", what,
                    a->tag, a->line, a->column, b->tag, b->line, b->column);
        fail();
    }
    for (size_t i = 0; i < a->n_attrs; i++) {
        if (strcmp(a->attrs[i].name, b->attrs[i].name) != 0 ||
            strcmp(a->attrs[i].value, b->attrs[i].value) != 0) {
            print_error("%s: <%s> attribute %zu: %s=\"%s\" vs expat's %s=\"%s\"\n", what, a->tag, i,
                        a->attrs[i].name, a->attrs[i].value, b->attrs[i].name, b->attrs[i].value);
            fail();
        }
    }
    for (size_t i = 0; i < a->n_children; i++) {
        assert_ptr_equal(a->children[i]->parent, a);
        assert_same_elem(a->children[i], b->children[i], what);
    }
}

/* Whether the plain reader took the text; when it did, its tree is expat's. */
static bool plain_matches_expat(const char *text, size_t len, const char *what)
{
    tp_xml *plain = NULL, *expat = NULL;
    tp_error err = {0};
    assert_int_equal(tp_xml__parse_plain(&plain, text, len, what, &err), TP_OK);
    if (!plain)
        return false;
    if (tp_xml__parse_expat(&expat, text, len, what, &err) != TP_OK) {
        print_error("%s: the plain reader took a text expat refuses: %s\n", what, err.message);
        fail();
    }
    assert_same_elem(plain->root, expat->root, what);
    tp_xml__free(plain);
    tp_xml__free(expat);
    return true;
}

/* Every file matching pattern; returns how many the plain reader took. */
static int compare_files(const char *pattern, int *seen)
{
    glob_t g;
    int taken = 0;
    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *text = NULL;
        size_t len = 0;
        tp_error err = {0};
        if (tp_xml__read_file(&text, &len, g.gl_pathv[i], &err) != TP_OK)
            continue;
        (*seen)++;
        taken += plain_matches_expat(text, len, g.gl_pathv[i]);
        free(text);
    }
    globfree(&g);
    return taken;
}

static void test_public_files_read_as_expat_reads_them(void **state)
{
    (void)state;
    int seen = 0, taken = 0;
    int builtins_seen = 0;
    int builtins = compare_files("builtins/*.xml", &builtins_seen);
    /* The files NCCL itself writes are all in the subset: the fast path is the common one. */
    assert_true(builtins_seen > 0);
    assert_int_equal(builtins, builtins_seen);
    const char *patterns[] = {
        "tests/fixtures/*.xml",
        "tests/fuzz/corpus/*/*",
        "tests/fuzz/regress/*",
        "../shared/conformance/cases/*/topo.xml",
        "../shared/conformance/cases/*/*.graph.xml",
        "../shared/provider/*/*.xml",
    };
    for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
        taken += compare_files(patterns[i], &seen);
    print_message("plain reader: %d of %d files (builtins %d of %d)\n", taken, seen, builtins,
                  builtins_seen);
    assert_true(taken > 0);
}

static void test_subset_corners_match_expat(void **state)
{
    (void)state;
    const char *plain[] = {
        "<a/>",
        "<a></a>",
        "\n  <!-- c -->\n<a x='1' y = \"2\" >\t<b/>\n<!---->\n</a >\n<!-- after -->\n",
        "<a v=\"it's > 0\"><b w='say \"hi\"'/></a>",
        "<a-b.c_d e-f=\"\"/>",
    };
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        assert_true(plain_matches_expat(plain[i], strlen(plain[i]), plain[i]));
}

static void test_outside_the_subset_goes_to_expat(void **state)
{
    (void)state;
    const char *others[] = {
        "",                            /* no element: expat says so */
        "<?xml version=\"1.0\"?><a/>", /* declaration */
        "<!DOCTYPE a><a/>",            /* DOCTYPE */
        "<a v=\"&amp;\"/>",            /* a reference expat decodes */
        "<a v=\"x\ty\"/>",             /* a blank expat normalises */
        "<a v=\"1\" v=\"2\"/>",        /* repeated attribute */
        "<a:b/>",                      /* colon */
        "<a>text</a>",                 /* text */
        "<a><b></a></b>",              /* mismatched end tag */
        "<a/><b/>",                    /* two roots */
        "<a x=\"1\"y=\"2\"/>",         /* no blank between attributes */
        "<a>\r\n</a>",                 /* CR */
        "<a><!-- a -- b --></a>",      /* "--" in a comment */
        "<a v=\"\xc3\xa9\"/>",         /* non-ASCII */
        "<a><![CDATA[x]]></a>",        /* CDATA */
        "<a",                          /* truncated */
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        assert_false(plain_matches_expat(others[i], strlen(others[i]), others[i]));
    /* NUL inside the length: not plain text. */
    assert_false(plain_matches_expat("<a/>\0", 5, "nul"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_public_files_read_as_expat_reads_them),
        cmocka_unit_test(test_subset_corners_match_expat),
        cmocka_unit_test(test_outside_the_subset_goes_to_expat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
