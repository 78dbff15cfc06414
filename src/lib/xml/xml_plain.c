/*
 * The plain reader: one pass over a document in the subset of XML that
 * NCCL's topology and graph files are written in, building the tree expat
 * would build (same elements, attributes, positions). Anything outside the
 * subset, well-formed or not, goes back to expat, which reads it or says
 * what is wrong. The subset:
 *  - ASCII without control bytes but TAB and LF (tp_xml__plain_text); blanks
 *    are ' ', '\t', '\n';
 *  - names of letters, digits, '_', '-', '.' (no ':'), not starting with a
 *    digit, '-' or '.';
 *  - attribute values without '<', '&' or control bytes (expat would
 *    decode or normalise them), each name once per element;
 *  - between tags only blanks and comments without "--" in them; no
 *    declaration, DOCTYPE, processing instruction, CDATA or text;
 *  - elements nested at most TP_MAX_XML_DEPTH deep.
 * tests/unit/test_xml.c compares its trees with expat's on every public file.
 */
#include "xml/xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL's files have at most 16 attributes an element; more go back to expat. */
#define PLAIN_MAX_ATTRS 32

typedef struct reader {
    const char *text;
    size_t len, pos;
    tp_xml *doc;
    tp_xml_text copy;     /* the tree's strings stay in the document's copy of the text */
    tp_xml_elem *current; /* the innermost open element */
    unsigned depth;       /* of current */
    tp_xml_lines lines;
    tp_xml_range attrs[PLAIN_MAX_ATTRS];
    size_t n_attrs;
} reader;

/* What a step found: go on, the text leaves the subset, or out of memory. */
typedef enum step { STEP_OK, STEP_NOT_PLAIN, STEP_NOMEM } step;

#define S_ (TP_XML_NAME_START | TP_XML_NAME | TP_XML_VALUE)
#define N_ (TP_XML_NAME | TP_XML_VALUE)
#define V_ TP_XML_VALUE
#define E_ TP_XML_NCCL_TOKEN_END
/* clang-format off */
const unsigned char tp_xml__byte_class[256] = {
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  E_, 0,  0,  E_, 0,  0,  /* control bytes, LF, CR */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
    V_|E_, V_, V_, V_, V_, V_, 0, V_, V_, V_, V_, V_, V_, N_, N_, V_|E_, /*  !"#$%&'()*+,-./ */
    N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, V_, V_, 0, V_|E_, V_|E_, V_, /* 0-9 :;<=>? */
    V_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, /* @A-O */
    S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, V_, V_, V_, V_, S_, /* P-Z [\]^_ */
    V_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, /* `a-o */
    S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, S_, V_, V_, V_, V_, V_, /* p-z {|}~ DEL */
    /* 0x80-0xff: 0 (outside the subset) */
};
/* clang-format on */
#undef S_
#undef N_
#undef V_
#undef E_

static bool has_class(char c, int cls)
{
    return tp_xml__byte_class[(unsigned char)c] & cls;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

static bool is_name_start(char c)
{
    return has_class(c, TP_XML_NAME_START);
}

static bool is_name_char(char c)
{
    return has_class(c, TP_XML_NAME);
}

static bool at(const reader *r, const char *lit, size_t n)
{
    return r->len - r->pos >= n && memcmp(r->text + r->pos, lit, n) == 0;
}

static void skip_blanks(reader *r)
{
    while (r->pos < r->len && is_blank(r->text[r->pos]))
        r->pos++;
}

/* A name at the cursor: its length (0: none). */
static size_t take_name(reader *r)
{
    size_t start = r->pos;
    if (r->pos >= r->len || !is_name_start(r->text[r->pos]))
        return 0;
    while (++r->pos < r->len && is_name_char(r->text[r->pos]))
        ;
    return r->pos - start;
}

bool tp_xml__plain_name(const char *s, size_t n)
{
    if (n == 0 || !is_name_start(s[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!is_name_char(s[i]))
            return false;
    return true;
}

bool tp_xml__plain_value(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!has_class(s[i], TP_XML_VALUE))
            return false;
    return true;
}

/* The text has no control byte but blanks (tp_xml__plain_text): only "--" matters. */
bool tp_xml__plain_comment(const char *body, size_t n)
{
    const char *end = body + n;
    for (const char *p = body; p < end && (p = memchr(p, '-', (size_t)(end - p))); p++)
        if (p + 1 == end || p[1] == '-') /* "--", or "--->" ends with "--" in the body */
            return false;
    return true;
}

/* A comment at "<!--": up to the first "--", which must end it. */
static step skip_comment(reader *r)
{
    const char *body = r->text + r->pos + 4, *end = r->text + r->len;
    for (const char *p = body; p + 1 < end; p++) {
        if (p[0] == '-' && p[1] == '-') {
            if (p + 2 >= end || p[2] != '>' || !tp_xml__plain_comment(body, (size_t)(p - body)))
                return STEP_NOT_PLAIN;
            r->pos = (size_t)(p + 3 - r->text);
            return STEP_OK;
        }
    }
    return STEP_NOT_PLAIN;
}

/* Blanks and comments, as before and after the root element and between tags. */
static step skip_misc(reader *r)
{
    for (;;) {
        skip_blanks(r);
        if (!at(r, "<!--", 4))
            return STEP_OK;
        if (skip_comment(r) != STEP_OK)
            return STEP_NOT_PLAIN;
    }
}

/* name S? '=' S? quoted value; the name's first byte is at the cursor. */
static step take_attr(reader *r)
{
    if (r->n_attrs == PLAIN_MAX_ATTRS)
        return STEP_NOT_PLAIN;
    tp_xml_range *a = &r->attrs[r->n_attrs];
    a->name = r->text + r->pos;
    if ((a->name_len = take_name(r)) == 0)
        return STEP_NOT_PLAIN;
    skip_blanks(r);
    if (r->pos >= r->len || r->text[r->pos] != '=')
        return STEP_NOT_PLAIN;
    r->pos++;
    skip_blanks(r);
    if (r->pos >= r->len || (r->text[r->pos] != '"' && r->text[r->pos] != '\''))
        return STEP_NOT_PLAIN;
    char quote = r->text[r->pos++];
    a->value = r->text + r->pos;
    const char *close = memchr(a->value, quote, r->len - r->pos);
    if (!close)
        return STEP_NOT_PLAIN;
    a->value_len = (size_t)(close - a->value);
    if (!tp_xml__plain_value(a->value, a->value_len))
        return STEP_NOT_PLAIN;
    r->pos += a->value_len + 1;
    for (size_t i = 0; i < r->n_attrs; i++) /* expat refuses a repeated name */
        if (r->attrs[i].name_len == a->name_len &&
            memcmp(r->attrs[i].name, a->name, a->name_len) == 0)
            return STEP_NOT_PLAIN;
    r->n_attrs++;
    return STEP_OK;
}

/* The attributes up to '>' or "/>" (left at the cursor). */
static step take_attrs(reader *r)
{
    r->n_attrs = 0;
    for (;;) {
        size_t before = r->pos;
        skip_blanks(r);
        if (r->pos >= r->len)
            return STEP_NOT_PLAIN;
        char c = r->text[r->pos];
        if (c == '>' || (c == '/' && at(r, "/>", 2)))
            return STEP_OK;
        if (r->pos == before) /* an attribute must follow a blank */
            return STEP_NOT_PLAIN;
        if (take_attr(r) != STEP_OK)
            return STEP_NOT_PLAIN;
    }
}

/* A start tag at '<': the element added under the current one (or as the root). */
static step start_tag(reader *r, tp_error *err)
{
    size_t start = r->pos++;
    const char *tag = r->text + r->pos;
    size_t tag_len = take_name(r);
    if (tag_len == 0 || take_attrs(r) != STEP_OK)
        return STEP_NOT_PLAIN;
    tp_xml_elem *e = NULL;
    if (tp_xml__open_elem_in_text(&e, r->current, &r->doc->arena, &r->copy, tag, tag_len, r->attrs,
                                  r->n_attrs, err) != TP_OK)
        return STEP_NOMEM;
    if (!r->doc->root)
        r->doc->root = e;
    e->self_closing = r->text[r->pos] == '/';
    r->pos += e->self_closing ? 2 : 1;
    e->src_start = start;
    e->src_tag_len = r->pos - start;
    tp_xml__locate(&r->lines, r->text, start, &e->line, &e->column);
    if (!e->self_closing && ++r->depth > TP_MAX_XML_DEPTH)
        return STEP_NOT_PLAIN; /* expat reads it and names the limit */
    if (!e->self_closing)
        r->current = e;
    return STEP_OK;
}

/* An end tag at "</": it must close the current element. */
static step end_tag(reader *r)
{
    size_t start = r->pos;
    r->pos += 2;
    const char *name = r->text + r->pos;
    size_t n = take_name(r);
    tp_xml_elem *e = r->current;
    if (n == 0 || strlen(e->tag) != n || memcmp(e->tag, name, n) != 0)
        return STEP_NOT_PLAIN;
    skip_blanks(r);
    if (r->pos >= r->len || r->text[r->pos] != '>')
        return STEP_NOT_PLAIN;
    r->pos++;
    e->src_close = start;
    r->current = e->parent;
    r->depth--;
    return STEP_OK;
}

/* The root element and everything in it. */
static step read_tree(reader *r, tp_error *err)
{
    step s = STEP_OK;
    do {
        if (r->doc->root && (s = skip_misc(r)) != STEP_OK)
            return s;
        if (r->pos >= r->len || r->text[r->pos] != '<')
            return STEP_NOT_PLAIN;
        if (r->pos + 1 < r->len && r->text[r->pos + 1] == '/')
            s = r->current ? end_tag(r) : STEP_NOT_PLAIN;
        else
            s = start_tag(r, err);
    } while (s == STEP_OK && r->current);
    return s;
}

tp_status tp_xml__parse_plain(tp_xml **out, const char *text, size_t len, const char *source,
                              tp_error *err)
{
    *out = NULL;
    if (len > TP_MAX_INPUT_BYTES || !tp_xml__plain_text(text, len))
        return TP_OK;
    tp_xml *doc = calloc(1, sizeof(*doc));
    if (!doc)
        return tp_fail_nomem(err);
    tp_copy_str(doc->source, sizeof(doc->source), source ? source : "<buffer>");
    reader r = {.text = text, .len = len, .doc = doc, .lines = {.line = 1}};
    r.copy = (tp_xml_text){text, tp_xml__keep_text(doc, text, len)};
    if (!r.copy.copy) {
        tp_xml__free(doc);
        return tp_fail_nomem(err);
    }
    step s = skip_misc(&r);
    if (s == STEP_OK)
        s = read_tree(&r, err);
    if (s == STEP_OK)
        s = skip_misc(&r);
    if (s == STEP_OK && r.pos == len) {
        *out = doc;
        return TP_OK;
    }
    tp_xml__free(doc);
    return s == STEP_NOMEM ? TP_ERR_NOMEM : TP_OK; /* the error is already in err */
}
