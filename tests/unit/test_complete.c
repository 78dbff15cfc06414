/* topoplan complete, the SKU catalogue and the provider lints. */
#include "helpers.h"

#include "provider/sku.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tp_completion *complete(const char *xml, const tp_complete_options *opts)
{
    tp_completion *c = NULL;
    tp_error err = {0};
    tp_status st = tp_complete_buffer(&c, xml, strlen(xml), "<test>", opts, &err);
    if (st != TP_OK)
        fail_msg("complete: %s", err.message);
    return c;
}

/* Is `part` found in `whole` once the bytes complete may drop ('/' of an opened tag) are skipped?
 */
static int kept_in_order(const char *part, const char *whole)
{
    const char *w = whole;
    for (const char *p = part; *p; p++) {
        if (*p == '/' && p[1] == '>')
            continue; /* "<pci .../>" may open to "<pci ...>" */
        w = strchr(w, *p);
        if (!w)
            return 0;
        w++;
    }
    return 1;
}

static const char odd_layout[] = "<?xml version=\"1.0\"?>\n"
                                 "<!-- published comment -->\n"
                                 "<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\">\n"
                                 "    <pci busid=\"0000:10:00.0\" class=\"0x030200\" "
                                 "link_speed=\"16 GT/s\" link_width=\"16\" /> <!-- GPU 0 -->\n"
                                 "    <pci busid=\"0000:11:00.0\" class=\"0x030200\" "
                                 "link_speed=\"16 GT/s\" link_width=\"16\"></pci>\n"
                                 "    <pci busid=\"0000:12:00.0\" class=\"0x020700\" "
                                 "link_speed=\"16 GT/s\" link_width=\"16\"/></cpu>\n"
                                 "</system>\n";

static void test_complete_keeps_every_published_byte(void **state)
{
    (void)state;
    tp_complete_options opts = {.sku = "aws-p4d.24xlarge"};
    tp_completion *c = complete(odd_layout, &opts);
    const char *out = tp_completion_xml(c);
    /* every published byte but the XML declaration, which NCCL 2.22.3's parser refuses
     * ("XML Parse : expected >, got '?'"): complete drops it and says so in its header */
    const char *published = strchr(odd_layout, '\n') + 1;
    assert_true(kept_in_order(published, out));
    assert_int_equal(strncmp(out, "<!--\n  COMPLETED NCCL topology", 30), 0);
    assert_non_null(strstr(out, "but the <?xml ...?> declaration"));
    /* a same-line comment ends up first inside the opened element */
    assert_non_null(strstr(out, "link_width=\"16\" > <!-- GPU 0 -->\n      <gpu dev=\"0\""));
    /* an empty open/close pair gains its children before the end tag */
    assert_non_null(strstr(out, "<gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">"));
    assert_non_null(strstr(out, "<net name=\"rdmap18s0\" dev=\"0\""));
    /* the result plans as written: 2 GPUs joined over the NVSwitch fabric, 1 NET (2 nodes: one
     * node's job has its NETs trimmed) */
    tp_plan *plan = helpers_plan(out, NULL, 2, 0);
    assert_int_equal(plan->sys->nodes[TP_NODE_GPU].count, 2);
    assert_int_equal(plan->sys->nodes[TP_NODE_NET].count, 1);
    assert_int_equal(plan->sys->nodes[TP_NODE_GPU].nodes[0].paths[TP_NODE_GPU][1].type,
                     TP_PATH_NVL);
    tp_plan_free(plan);
    tp_completion_free(c);
}

static void test_complete_lists_each_addition_with_a_reason(void **state)
{
    (void)state;
    tp_complete_options opts = {.sku = "aws-p4d.24xlarge", .sm = 86, .nvlinks = -1};
    tp_completion *c = complete(odd_layout, &opts);
    assert_string_equal(tp_completion_sku(c), "aws-p4d.24xlarge");
    assert_string_equal(tp_completion_mode(c), "");
    size_t gpus = 0;
    for (size_t i = 0; i < tp_completion_count(c); i++) {
        const tp_addition *a = tp_completion_get(c, i);
        assert_true(a->reason[0] != '\0');
        gpus += strstr(a->added, "<gpu ") != NULL;
        assert_null(strstr(a->added, "<nvlink")); /* nvlinks = -1: none */
    }
    assert_int_equal(gpus, 2);
    assert_non_null(strstr(tp_completion_xml(c), "sm=\"86\""));
    assert_null(tp_completion_get(c, tp_completion_count(c)));
    /* 2 of the SKU's 8 GPUs: said, not invented */
    assert_int_equal(tp_completion_note_count(c), 1);
    assert_non_null(strstr(tp_completion_note(c, 0), "the file has 2 GPUs"));
    assert_null(tp_completion_note(c, 1));
    tp_completion_free(c);
}

static void test_complete_refuses_bad_arguments(void **state)
{
    (void)state;
    tp_completion *c = NULL;
    tp_error err = {0};
    assert_int_equal(tp_complete_buffer(NULL, "x", 1, NULL, NULL, &err), TP_ERR_ARGUMENT);
    assert_int_equal(tp_complete_buffer(&c, NULL, 0, NULL, NULL, &err), TP_ERR_ARGUMENT);
    tp_complete_options opts = {.sku = "no-such-machine"};
    assert_int_equal(tp_complete_buffer(&c, odd_layout, strlen(odd_layout), "<t>", &opts, &err),
                     TP_ERR_CONFIG);
    assert_null(c);
    assert_null(tp_completion_xml(NULL));
    assert_int_equal(tp_completion_count(NULL), 0);
}

static void test_sku_catalogue_is_embedded(void **state)
{
    (void)state;
    assert_true(tp_sku_count() >= 9);
    char title[256];
    tp_error err = {0};
    for (size_t i = 0; i < tp_sku_count(); i++) {
        assert_int_equal(tp_sku_title(i, title, sizeof(title), &err), TP_OK);
        assert_true(strlen(title) > 10);
    }
    assert_null(tp_sku_name(tp_sku_count()));
}

/* The lines split at build time (embed-skus.sh) are those tp_sku__parse reads in skus/NAME.conf. */
static void test_embedded_skus_split_as_parsed(void **state)
{
    (void)state;
    tp_error err = {0};
    for (size_t i = 0; i < tp_sku_texts_count; i++) {
        char path[256];
        snprintf(path, sizeof(path), "skus/%s.conf", tp_sku_texts[i].name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static char text[1 << 16];
        size_t len = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[len] = '\0';
        assert_string_equal(text, tp_sku_texts[i].text);
        tp_sku *parsed = NULL, *embedded = NULL;
        assert_int_equal(tp_sku__parse(&parsed, text, path, &err), TP_OK);
        assert_int_equal(tp_sku__load(&embedded, tp_sku_texts[i].name, &err), TP_OK);
        assert_string_equal(embedded->name, parsed->name);
        assert_true(parsed->n_entries > 5);
        assert_int_equal(embedded->n_entries, parsed->n_entries);
        for (size_t k = 0; k < parsed->n_entries; k++) {
            assert_string_equal(embedded->entries[k].key, parsed->entries[k].key);
            assert_string_equal(embedded->entries[k].value, parsed->entries[k].value);
        }
        tp_sku__free(parsed);
        tp_sku__free(embedded);
    }
}

static void test_lints_say_partial_and_defects(void **state)
{
    (void)state;
    tp_lints *l = NULL;
    tp_error err = {0};
    assert_int_equal(tp_lint_buffer(&l, odd_layout, strlen(odd_layout), "<t>", NULL, &err), TP_OK);
    size_t partial = 0;
    for (size_t i = 0; i < tp_lints_count(l); i++)
        partial += tp_lints_is_partial(l, i);
    assert_true(partial >= 2); /* GPUs without <gpu>, NIC without <net> */
    tp_lints_free(l);
    char *xml = helpers_fixture("provider/defects.xml");
    assert_int_equal(tp_lint_buffer(&l, xml, strlen(xml), "<t>", NULL, &err), TP_OK);
    assert_int_equal(tp_lints_count(l), 2);
    assert_false(tp_lints_is_partial(l, 0));
    assert_non_null(strstr(tp_lints_message(l, 0), "ONE NIC port"));
    assert_non_null(strstr(tp_lints_message(l, 1), "to itself"));
    tp_lints_free(l);
    free(xml);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_complete_keeps_every_published_byte),
        cmocka_unit_test(test_complete_lists_each_addition_with_a_reason),
        cmocka_unit_test(test_complete_refuses_bad_arguments),
        cmocka_unit_test(test_sku_catalogue_is_embedded),
        cmocka_unit_test(test_embedded_skus_split_as_parsed),
        cmocka_unit_test(test_lints_say_partial_and_defects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
