/*
 * The log's number formatting shortcuts against printf itself: "%.1f" of a
 * float (tp_format_f1, tp_put_f1_right), "%f" (tp_format_fixed) and hexadecimal ids
 * (tp_buf_put_hex, tp_format_hex), and the in-place line pieces ("%*.1f", "%*s", "%*d"
 * by tp_put_f1, tp_put_str, tp_put_int then tp_put_right; tp_put_f1_right, tp_put_ll,
 * tp_put_spaces, tp_put_str_right), and log lines written in place (tp_log_begin_line,
 * tp_log_end_line).
 */
#include "helpers.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_f1(float v)
{
    char want[128], got[TP_F1_SIZE];
    snprintf(want, sizeof(want), "%.1f", (double)v);
    tp_format_f1(got, v);
    if (strcmp(want, got) != 0)
        print_error("%a: printf \"%s\", ours \"%s\"\n", (double)v, want, got);
    assert_string_equal(want, got);
}

static void test_f1_edges(void **state)
{
    (void)state;
    static const float edges[] = {0.0f,   -0.0f,  0.05f, 0.25f, 0.35f,  0.45f,  -0.25f,
                                  -0.04f, 1.25f,  2.5f,  12.0f, 20.6f,  370.8f, 5000.0f,
                                  1e13f,  -1e13f, 1e20f, 3e38f, 1e-40f, -1e-40f};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        check_f1(edges[i]);
    check_f1(INFINITY);
    check_f1(-INFINITY);
    check_f1(NAN);
    /* Every tie of tenths: x.x5 exactly representable. */
    for (int k = 0; k < 4096; k++)
        check_f1((float)k / 4.0f + 0.05f);
}

static void test_f1_random_bits(void **state)
{
    (void)state;
    uint32_t x = 12345;
    for (int i = 0; i < 200000; i++) {
        x = x * 1664525u + 1013904223u;
        float v;
        uint32_t bits = x & 0xcfffffffu; /* mostly moderate exponents, both signs */
        memcpy(&v, &bits, sizeof(v));
        check_f1(v);
        check_f1((float)(x % 1000000) / 1000.0f);
    }
}

static void test_padded_and_hex(void **state)
{
    (void)state;
    tp_buf b = {0};
    char want[256], cells[2 * TP_F1_SIZE];
    char *p = TP_PUT_LIT(tp_put_f1_right(cells, 3.25f, 8), "/");
    tp_put_f1_right(p, -12345.67f, 6);
    tp_buf_put(&b, cells);
    tp_buf_put(&b, "|");
    tp_buf_put_hex(&b, 0x1a000ULL, false);
    tp_buf_put(&b, " ");
    tp_buf_put_hex(&b, 0xFFFFFFFFFFFFFFFFULL, true);
    tp_buf_put(&b, " ");
    tp_buf_put_hex(&b, 0, false);
    snprintf(want, sizeof(want), "%8.1f/%6.1f|%llx %llX %llx", 3.25, (double)-12345.67f, 0x1a000ULL,
             0xFFFFFFFFFFFFFFFFULL, 0ULL);
    assert_string_equal(tp_buf_str(&b), want);
    tp_buf_free(&b);
}

/* "%f" (six decimals) of a float through tp_format_fixed, ties and random bits. */
static void test_fixed6(void **state)
{
    (void)state;
    uint32_t x = 777;
    char want[128], got[TP_F1_SIZE];
    for (int i = 0; i < 100000; i++) {
        x = x * 1664525u + 1013904223u;
        float v;
        uint32_t bits = x & 0xcfffffffu;
        memcpy(&v, &bits, sizeof(v));
        if (i % 2)
            v = (float)(x % 100000) / 1024.0f; /* exact binary fractions: decimal ties */
        snprintf(want, sizeof(want), "%f", (double)v);
        tp_format_fixed(got, v, 6);
        if (strcmp(want, got) != 0)
            print_error("%a: printf \"%s\", ours \"%s\"\n", (double)v, want, got);
        assert_string_equal(want, got);
    }
}

/* tp_format_hex against "%0*llx". */
static void test_hex_width(void **state)
{
    (void)state;
    static const unsigned long long values[] = {0, 1, 0xf, 0x10, 0x1a2b, 0xffffffffffffffffULL};
    char want[64], got[24];
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        for (int w = 1; w <= 6; w++) {
            snprintf(want, sizeof(want), "%0*llx", w, values[i]);
            assert_int_equal(tp_format_hex(got, values[i], w), (int)strlen(want));
            assert_string_equal(want, got);
        }
}

static void test_put_right(void **state)
{
    (void)state;
    static const float values[] = {0.0f, -2.5f, 12.25f, 370.8f, 1e20f, 3e38f, -3e38f};
    char want[256], got[256];
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        for (int w = 0; w <= 48; w += 6) {
            /* Pieces after a prefix, as the tuning table writes them. */
            snprintf(want, sizeof(want), "ab%*.1f|%*s|%*d", w, (double)values[i], w, "LL128", w,
                     -(int)i * 977);
            char *p = tp_put_str(got, "ab");
            p = tp_put_right(p, tp_put_f1(p, values[i]), w);
            *p++ = '|';
            p = tp_put_right(p, tp_put_str(p, "LL128"), w);
            *p++ = '|';
            p = tp_put_right(p, tp_put_int(p, -(int)i * 977, 0), w);
            assert_string_equal(want, got);
            assert_int_equal((int)(p - got), (int)strlen(want));
        }
}

static void test_put_int_and_literal(void **state)
{
    (void)state;
    char want[64], got[64];
    for (int v = -120; v <= 1200; v++)
        for (int w = 0; w <= 3; w++) {
            if (w)
                snprintf(want, sizeof(want), "x%0*d", w, v);
            else
                snprintf(want, sizeof(want), "x%d", v);
            char *p = tp_put_int(TP_PUT_LIT(got, "x"), v, w);
            assert_string_equal(want, got);
            assert_int_equal((int)(p - got), (int)strlen(want));
        }
    char *p = TP_PUT_LIT(TP_PUT_LIT(got, " -> "), "");
    assert_string_equal(got, " -> ");
    assert_ptr_equal(p, got + 4);
}

/* "%*d" written in place against printf: signs, digit counts, extremes, widths 0..15. */
static void test_int_right(void **state)
{
    (void)state;
    static const int values[] = {0, 7, -7, 9, 10, -10, 99, 100, 12345, -98765, INT_MAX, INT_MIN};
    char want[64], got[64];
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        for (int w = 0; w <= 15; w++) {
            snprintf(want, sizeof(want), "|%*d", w, values[i]);
            char *p = tp_put_int_right(TP_PUT_LIT(got, "|"), values[i], w);
            assert_string_equal(want, got);
            assert_int_equal((int)(p - got), (int)strlen(want));
        }
}

/* "%*.1f" written in place against printf: random bits, ties, every width up to 12. */
static void test_f1_right(void **state)
{
    (void)state;
    uint32_t x = 4242;
    char want[160], got[160];
    for (int i = 0; i < 100000; i++) {
        x = x * 1664525u + 1013904223u;
        float v;
        uint32_t bits = x & 0xcfffffffu;
        memcpy(&v, &bits, sizeof(v));
        if (i % 3 == 1)
            v = (float)((int)(x % 2000001) - 1000000) / 4.0f + 0.05f; /* tenths ties */
        if (i % 3 == 2)
            v = (float)(x % 100) - 50.0f;
        int w = (int)(x >> 28) % 13;
        snprintf(want, sizeof(want), "ab%*.1f|", w, (double)v);
        char *p = tp_put_f1_right(TP_PUT_LIT(got, "ab"), v, w);
        *p++ = '|';
        *p = '\0';
        if (strcmp(want, got) != 0)
            print_error("%a width %d: printf \"%s\", ours \"%s\"\n", (double)v, w, want, got);
        assert_string_equal(want, got);
    }
    static const float edges[] = {0.0f, -0.0f, -0.04f, 1e20f, -3e38f, INFINITY, NAN};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        snprintf(want, sizeof(want), "%8.1f", (double)edges[i]);
        assert_ptr_equal(tp_put_f1_right(got, edges[i], 8), got + strlen(want));
        assert_string_equal(want, got);
    }
}

/* Spaces in word stores write exactly their columns; "%*s" right-aligned. */
static void test_spaces_and_str_right(void **state)
{
    (void)state;
    char buf[64], want[64];
    for (int n = -2; n <= 20; n++) {
        memset(buf, 'x', sizeof(buf));
        char *end = tp_put_spaces(buf + 1, n);
        int cols = n > 0 ? n : 0;
        assert_ptr_equal(end, buf + 1 + cols);
        assert_int_equal(buf[0], 'x');
        for (int i = 0; i < cols; i++)
            assert_int_equal(buf[1 + i], ' ');
        assert_int_equal(buf[1 + cols], 'x');
    }
    static const char *const names[] = {"", "LL", "Simple", "ReduceScatter", "CollNetDirect!!"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        for (int w = 0; w <= 18; w++) {
            snprintf(want, sizeof(want), "%*s|", w, names[i]);
            char *p = tp_put_str_right(buf, names[i], w);
            *p++ = '|';
            *p = '\0';
            assert_string_equal(want, buf);
        }
}

static void test_put_ll(void **state)
{
    (void)state;
    static const long long values[] = {0, 7, -7, 10, -10, 123456789012LL, INT64_MAX, INT64_MIN};
    char want[64], got[64];
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        snprintf(want, sizeof(want), "%lld", values[i]);
        assert_ptr_equal(tp_put_ll(got, values[i]), got + strlen(want));
        assert_string_equal(want, got);
    }
}

/* Lines written in place keep their text while many more follow (the arena's room given back
 * and its chunks grown), a line wider than a chunk included; a disabled log gives no room. */
static void test_log_lines_in_place(void **state)
{
    (void)state;
    tp_log log = {.enabled = true};
    char want[64];
    for (int i = 0; i < 3000; i++) {
        size_t room = i == 1500 ? 20000 : 64;
        char *p = tp_log_begin_line(&log, TP_SUB_GRAPH, room);
        assert_non_null(p);
        tp_log_end_line(&log, tp_put_int(TP_PUT_LIT(p, "line "), i, 0));
    }
    assert_int_equal(log.n_lines, 3000);
    for (int i = 0; i < 3000; i++) {
        snprintf(want, sizeof(want), "line %d", i);
        assert_string_equal(log.lines[i].text, want);
        assert_true(log.lines[i].sub == TP_SUB_GRAPH);
    }
    tp_log_clear(&log);
    log.enabled = false;
    assert_null(tp_log_begin_line(&log, TP_SUB_GRAPH, 64));
    assert_int_equal(log.n_lines, 0);
}

/* Untrusted text for a terminal: control bytes escaped, the rest (UTF-8 too) kept. */
static void test_printable(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(tp_printable(buf, sizeof(buf), "a\033[31mb\n\x7f"),
                        "a\\x1b[31mb\\x0a\\x7f");
    assert_string_equal(tp_printable(buf, sizeof(buf),
                                     "caf\xc3\xa9 \xc2\x9b"
                                     "1m"),
                        "caf\xc3\xa9 \\xc2\\x9b1m"); /* U+009B (CSI) escaped, U+00E9 kept */
    assert_string_equal(tp_printable(buf, 8, "\001\002\003"), ""); /* no room: cut whole */
    assert_string_equal(tp_printable(buf, 12, "abc\001"), "abc");
}

/* JSON strings stay valid JSON whatever the bytes: not UTF-8 -> \ufffd. */
static void test_json_string(void **state)
{
    (void)state;
    char out[256] = {0};
    FILE *f = fmemopen(out, sizeof(out) - 1, "w");
    assert_non_null(f);
    tp_json_write_string(f, "a\"\\\001\xff\xc3(\xc3\xa9\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82");
    fclose(f);
    assert_string_equal(out, "\"a\\\"\\\\\\u0001\\ufffd\\ufffd(\xc3\xa9\\ufffd\\ufffd\\ufffd"
                             "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f1_edges),
        cmocka_unit_test(test_f1_random_bits),
        cmocka_unit_test(test_padded_and_hex),
        cmocka_unit_test(test_fixed6),
        cmocka_unit_test(test_hex_width),
        cmocka_unit_test(test_put_right),
        cmocka_unit_test(test_put_int_and_literal),
        cmocka_unit_test(test_f1_right),
        cmocka_unit_test(test_int_right),
        cmocka_unit_test(test_put_ll),
        cmocka_unit_test(test_spaces_and_str_right),
        cmocka_unit_test(test_log_lines_in_place),
        cmocka_unit_test(test_printable),
        cmocka_unit_test(test_json_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
