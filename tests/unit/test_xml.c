/* The element tree (xml.c): positions, attribute order, edits, NCCL-style writing. */
#include "helpers.h"

#include "xml/xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tp_xml *parse_ok(const char *text)
{
    tp_xml *doc = NULL;
    tp_error err = {0};
    if (tp_xml__parse(&doc, text, strlen(text), "<t>", &err) != TP_OK) {
        print_error("parse failed: %s\n", err.message);
        fail();
    }
    return doc;
}

static char *write_text(const tp_xml_elem *root)
{
    char *text = NULL;
    size_t len = 0;
    tp_error err = {0};
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(tp_xml__write(f, root, &err), TP_OK);
    fclose(f);
    return text;
}

static void test_positions_and_attribute_order(void **state)
{
    (void)state;
    tp_xml *doc = parse_ok("<system version=\"1\">\n"
                           "  <cpu numaid=\"0\" arch=\"x86_64\" affinity=\"ff\">\n"
                           "      <pci busid=\"0000:1a:00.0\"/>\n"
                           "  </cpu>\n"
                           "</system>\n");
    assert_string_equal(doc->source, "<t>");
    const tp_xml_elem *cpu = tp_xml__child(doc->root, "cpu");
    assert_non_null(cpu);
    assert_int_equal(doc->root->line, 1);
    assert_int_equal(doc->root->column, 1);
    assert_int_equal(cpu->line, 2);
    assert_int_equal(cpu->column, 3);
    const tp_xml_elem *pci = tp_xml__child(cpu, "pci");
    assert_int_equal(pci->line, 3);
    assert_int_equal(pci->column, 7);
    assert_ptr_equal(pci->parent, cpu);
    assert_int_equal(cpu->n_attrs, 3);
    assert_string_equal(cpu->attrs[0].name, "numaid");
    assert_string_equal(cpu->attrs[1].name, "arch");
    assert_string_equal(cpu->attrs[2].name, "affinity");
    assert_null(tp_xml__attr(cpu, "vendor"));
    assert_null(tp_xml__child(cpu, "nic"));
    tp_xml__free(doc);
}

/* NCCL's xmlSetAttr replaces in place or appends; xmlUnsetAttr shifts the rest. */
static void test_set_and_unset_keep_order(void **state)
{
    (void)state;
    tp_xml *doc = parse_ok("<gpu dev=\"0\" sm=\"70\" rank=\"3\"/>");
    tp_error err = {0};
    tp_xml_elem *gpu = doc->root;
    assert_int_equal(tp_xml__set_attr(gpu, "keep", "1", &err), TP_OK);
    assert_int_equal(tp_xml__set_attr(gpu, "rank", "0", &err), TP_OK);
    assert_int_equal(tp_xml__set_attr(gpu, "gdr", "1", &err), TP_OK);
    tp_xml__unset_attr(gpu, "keep");
    tp_xml__unset_attr(gpu, "absent");
    char *text = write_text(gpu);
    assert_string_equal(text, "<gpu dev=\"0\" sm=\"70\" rank=\"0\" gdr=\"1\"/>\n");
    free(text);
    tp_xml__free(doc);
}

static void test_writer_matches_nccl_dump_layout(void **state)
{
    (void)state;
    static const char text[] = "<system version=\"1\">\n"
                               "  <cpu numaid=\"0\">\n"
                               "    <nic>\n"
                               "      <net name=\"eth0\" dev=\"0\"/>\n"
                               "    </nic>\n"
                               "    <pci busid=\"0000:1a:00.0\" link_speed=\"\"/>\n"
                               "  </cpu>\n"
                               "</system>\n";
    tp_xml *doc = parse_ok(text);
    char *out = write_text(doc->root);
    assert_string_equal(out, text);
    free(out);
    tp_xml__free(doc);
}

/* An element written <nic></nic> has no children: NCCL's dump writes it <nic/>. */
static void test_writer_collapses_empty_elements(void **state)
{
    (void)state;
    tp_xml *doc = parse_ok("<system version=\"1\"><nic></nic><!-- note --></system>");
    char *out = write_text(doc->root);
    assert_string_equal(out, "<system version=\"1\">\n  <nic/>\n</system>\n");
    free(out);
    tp_xml__free(doc);
}

static void test_tree_edits(void **state)
{
    (void)state;
    tp_xml *doc = parse_ok("<system><a/><b><c/></b></system>");
    tp_error err = {0};
    tp_xml_elem *a = tp_xml__child(doc->root, "a");
    tp_xml_elem *b = tp_xml__child(doc->root, "b");
    tp_xml_elem *d = NULL;
    assert_int_equal(tp_xml__add_child(&d, a, "d", &err), TP_OK);
    assert_int_equal(d->line, 0);
    assert_ptr_equal(d->parent, a);
    assert_int_equal(tp_xml__move(tp_xml__child(b, "c"), a, &err), TP_OK);
    tp_xml__remove(b);
    char *out = write_text(doc->root);
    assert_string_equal(out, "<system>\n  <a>\n    <d/>\n    <c/>\n  </a>\n</system>\n");
    free(out);
    tp_xml__free(doc);
}

static void test_errors_have_positions(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        tp_status code;
        unsigned line;
    } rows[] = {
        {"<system>\n  <cpu>\n</system>\n", TP_ERR_XML, 3},
        {"", TP_ERR_XML, 1},
        {"<!DOCTYPE system [<!ENTITY x \"y\">]>\n<system/>", TP_ERR_XML, 1},
        {"<system a=\"1\" a=\"2\"/>", TP_ERR_XML, 1},
        {"<system>\n<cpu/>\n<cpu/>\n</system>\n<extra/>", TP_ERR_XML, 5},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        tp_xml *doc = NULL;
        tp_error err = {0};
        tp_status st = tp_xml__parse(&doc, rows[i].text, strlen(rows[i].text), "<t>", &err);
        assert_null(doc);
        assert_int_equal(st, rows[i].code);
        assert_int_equal(err.code, rows[i].code);
        if (err.line != rows[i].line)
            print_error("row %zu: line %u: %s\n", i, err.line, err.message);
        assert_int_equal(err.line, rows[i].line);
        assert_string_equal(err.source, "<t>");
    }
}

static void test_fail_names_the_element(void **state)
{
    (void)state;
    tp_xml *doc = parse_ok("<system>\n   <cpu/>\n</system>");
    tp_error err = {0};
    const tp_xml_elem *cpu = tp_xml__child(doc->root, "cpu");
    assert_int_equal(
        tp_xml__fail(&err, TP_ERR_TOPOLOGY, doc, cpu, "missing attribute %s", "numaid"),
        TP_ERR_TOPOLOGY);
    char msg[512];
    tp_error_format(&err, msg, sizeof(msg));
    assert_string_equal(msg, "<t>:2:4: <cpu>: missing attribute numaid");
    tp_xml__free(doc);
}

/*
 * Entities are decoded on reading; writing must escape them again so that the
 * dump re-parses, and so that it shows the text NCCL (which never decodes)
 * read and writes back.
 */
static void test_entities_round_trip(void **state)
{
    (void)state;
    static const char text[] = "<net name=\"a&amp;b&lt;&quot;\"/>\n";
    tp_xml *doc = parse_ok(text);
    assert_string_equal(tp_xml__attr(doc->root, "name"), "a&b<\"");
    char *out = write_text(doc->root);
    assert_string_equal(out, text);
    free(out);
    tp_xml__free(doc);
}

/* Files of /proc report no size and read a page at a time: read to their end all the same
 * (as stdio reads them), not to the first short read. */
static void test_read_file_without_size(void **state)
{
    (void)state;
    const char *path = "/proc/self/smaps";
    FILE *f = fopen(path, "r");
    if (!f)
        skip();
    size_t want = 0;
    char chunk[512];
    for (size_t n; (n = fread(chunk, 1, sizeof(chunk), f)) > 0;)
        want += n;
    fclose(f);
    char *text = NULL;
    size_t len = 0;
    tp_error err = {0};
    assert_int_equal(tp_xml__read_file(&text, &len, path, &err), TP_OK);
    /* The process may change a little between the reads: the same size, give or take. */
    assert_true(want > 8192 && len > want - want / 8 && len < want + want / 8);
    assert_int_equal(strlen(text), len);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positions_and_attribute_order),
        cmocka_unit_test(test_set_and_unset_keep_order),
        cmocka_unit_test(test_writer_matches_nccl_dump_layout),
        cmocka_unit_test(test_writer_collapses_empty_elements),
        cmocka_unit_test(test_tree_edits),
        cmocka_unit_test(test_errors_have_positions),
        cmocka_unit_test(test_fail_names_the_element),
        cmocka_unit_test(test_entities_round_trip),
        cmocka_unit_test(test_read_file_without_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
