/*
 * The plain reader (xml_plain.c) and the tree NCCL's replayed loader builds
 * (nccl_xml.c) against expat: on every file they take, the same tree (tags,
 * attributes in order, positions, empty-element tags); on every text outside
 * the subset, they step aside and expat decides.
 */
#include "helpers.h"

#include "xml/nccl_xml.h"
#include "xml/xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tree (consumed) is expat's tree of the same text. */
static void assert_expat_tree(tp_xml *tree, const char *text, size_t len, const char *what)
{
    tp_xml *expat = NULL;
    tp_error err = {0};
    if (tp_xml__parse_expat(&expat, text, len, what, &err) != TP_OK) {
        print_error("%s: a tree of a text expat refuses: %s\n", what, err.message);
        fail();
    }
    const tp_xml_elem *where = NULL;
    if (!tp_xml__same_tree(tree->root, expat->root, &where)) {
        print_error("%s: <%s> at line %u col %u is not as expat reads it\n", what, where->tag,
                    where->line, where->column);
        fail();
    }
    tp_xml__free(tree);
    tp_xml__free(expat);
}

/* Whether the plain reader took the text; when it did, its tree is expat's. */
static bool plain_matches_expat(const char *text, size_t len, const char *what)
{
    tp_xml *plain = NULL;
    tp_error err = {0};
    assert_int_equal(tp_xml__parse_plain(&plain, text, len, what, &err), TP_OK);
    if (!plain)
        return false;
    assert_expat_tree(plain, text, len, what);
    return true;
}

/* Whether NCCL's replayed loader gave a tree; when it did, it is expat's. */
static bool replay_matches_expat(const char *text, size_t len, tp_nccl_xml_kind kind,
                                 const char *what)
{
    tp_log log = {.enabled = true};
    tp_nccl_xml_result r;
    tp_error err = {0};
    tp_nccl_xml_input in = {
        .text = text, .len = len, .kind = kind, .source = what, .want_tree = true};
    assert_int_equal(tp_xml__nccl_load(&in, &log, &r, &err), TP_OK);
    tp_log_clear(&log);
    if (!r.tree)
        return false;
    assert_int_equal(r.outcome, TP_NCCL_XML_ACCEPTED);
    assert_expat_tree(r.tree, text, len, what);
    return true;
}

/* Both readers on one text: the plain reader's verdict. */
static bool readers_match_expat(const char *text, size_t len, const char *what, int *replayed)
{
    *replayed += replay_matches_expat(text, len, TP_NCCL_XML_TOPOLOGY, what);
    *replayed += replay_matches_expat(text, len, TP_NCCL_XML_GRAPHS, what);
    return plain_matches_expat(text, len, what);
}

/* Files read by each reader. */
typedef struct tally {
    int seen, plain, replayed;
} tally;

typedef struct compare_ctx {
    tally *t;
    int taken;
} compare_ctx;

static void compare_file(const char *path, const char *text, size_t len, void *ctx)
{
    compare_ctx *c = ctx;
    c->t->seen++;
    c->taken += readers_match_expat(text, len, path, &c->t->replayed);
}

/* Every file matching pattern; returns how many the plain reader took. */
static int compare_files(const char *pattern, tally *t)
{
    compare_ctx c = {t, 0};
    helpers_each_file(pattern, compare_file, &c);
    return c.taken;
}

static void test_public_files_read_as_expat_reads_them(void **state)
{
    (void)state;
    tally builtins = {0}, all = {0}, topologies = {0};
    int taken = compare_files("builtins/*.xml", &builtins);
    /* The files NCCL itself writes are all in the subset: the fast paths are the common ones. */
    assert_true(builtins.seen > 0);
    assert_int_equal(taken, builtins.seen);
    assert_int_equal(builtins.replayed, 2 * builtins.seen);
    taken = compare_files("../shared/conformance/cases/*/topo.xml", &topologies);
    assert_int_equal(taken, topologies.seen);
    assert_int_equal(topologies.replayed, 2 * topologies.seen);
    const char *patterns[] = {
        "tests/fixtures/*.xml",       "tests/fuzz/corpus/*/*",
        "tests/fuzz/regress/*",       "../shared/conformance/cases/*/*.graph.xml",
        "../shared/provider/*/*.xml",
    };
    for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
        taken += compare_files(patterns[i], &all);
    print_message("plain reader: %d of %d files; NCCL's loader gave %d trees (topology and graph "
                  "rules)\n",
                  taken, all.seen + topologies.seen, all.replayed + topologies.replayed);
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
    /* NCCL's loader reads only single blanks between attributes, and no blank before '>'. */
    const char *nccl[] = {
        "<system version=\"1\"><cpu a=\"x\"/><!-- c --><foo b=\"\" c=\"'\"></foo></system>",
        "\n<!---->\n<graphs version=\"1\">\n  <graph id=\"0\"/>\n</graphs>\n",
    };
    for (size_t i = 0; i < sizeof(nccl) / sizeof(nccl[0]); i++) {
        int replayed = 0;
        assert_true(readers_match_expat(nccl[i], strlen(nccl[i]), nccl[i], &replayed));
        assert_int_equal(replayed, 2);
    }
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
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        int replayed = 0;
        assert_false(readers_match_expat(others[i], strlen(others[i]), others[i], &replayed));
        assert_int_equal(replayed, 0);
    }
    /* Read by NCCL, but not as expat would: no tree from the replay. */
    const char *nccl_only[] = {
        "<system version=\"1\" a='x\"/>",       /* closed by the other quote */
        "<system version=\"1\" a/>",            /* a key without a value */
        "<system version=\"1\"><x/y></system>", /* bytes after '/' */
    };
    for (size_t i = 0; i < sizeof(nccl_only) / sizeof(nccl_only[0]); i++)
        assert_false(replay_matches_expat(nccl_only[i], strlen(nccl_only[i]), TP_NCCL_XML_TOPOLOGY,
                                          nccl_only[i]));
    /* NUL inside the length: not plain text. */
    assert_false(plain_matches_expat("<a/>\0", 5, "nul"));
}

/* `depth` nested <a> elements, as a heap string. */
static char *nested(int depth)
{
    char *text = malloc((size_t)depth * 7 + 1), *p = text;
    assert_non_null(text);
    for (int i = 0; i < depth; i++, p += 3)
        memcpy(p, "<a>", 3);
    for (int i = 0; i < depth; i++, p += 4)
        memcpy(p, "</a>", 4);
    *p = '\0';
    return text;
}

/* TP_MAX_XML_DEPTH: every reader takes a tree that deep; one more level is refused by
 * name (the fast readers step aside, expat names the limit). */
static void test_nesting_limit(void **state)
{
    (void)state;
    char *ok = nested(TP_MAX_XML_DEPTH), *deep = nested(TP_MAX_XML_DEPTH + 1);
    int replayed = 0;
    assert_true(readers_match_expat(ok, strlen(ok), "ok", &replayed));
    assert_int_equal(replayed, 2);
    assert_false(readers_match_expat(deep, strlen(deep), "deep", &replayed));
    assert_int_equal(replayed, 2);
    tp_xml *doc = NULL;
    tp_error err = {0};
    assert_int_equal(tp_xml__parse(&doc, deep, strlen(deep), "deep", &err), TP_ERR_XML);
    assert_null(doc);
    assert_non_null(strstr(err.message, "nested deeper than 256"));
    assert_int_equal(err.column, 3 * TP_MAX_XML_DEPTH + 1);
    free(ok);
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_public_files_read_as_expat_reads_them),
        cmocka_unit_test(test_subset_corners_match_expat),
        cmocka_unit_test(test_outside_the_subset_goes_to_expat),
        cmocka_unit_test(test_nesting_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
