/*
 * A replay of NCCL 2.22.3's XML loader (src/graph/xml.cc xmlLoadSub and its
 * tokenizer) over a file's bytes: which files it refuses and what it prints.
 * Our own structure: an explicit stack of open elements instead of NCCL's
 * recursion, one reusable node record, the back-trace printed while the
 * stack unwinds. Rules it follows, each as NCCL 2.22.3 has it:
 *  - only ' ', '\n', '\r' are blanks between nodes; a name ends at one of
 *    ' ', '>', '/', '\n', '\r' and is at most 253 bytes (254 for a key);
 *  - attributes are separated by exactly one ' ' (another blank makes an
 *    empty attribute); values open with '"' or '\'' but end at '"';
 *  - comments are "<!--" ... "-->"; nothing else (<?xml ?>, text, CDATA);
 *  - an element with no handler in its parent is skipped, logged when the
 *    parent has handlers; inside a skipped element any closing tag closes it
 *    (NCCL reads its children into the same node record, so the names always
 *    "match") and an unterminated one is reported with an empty name;
 *  - the node limit is checked before every node read, the child limit when
 *    a known child is added; the root element's version is read first.
 */
#include "xml/nccl_xml.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_XML_CC "graph/xml.cc"
#define NCCL_XML_H "graph/xml.h"
/* Deeper nesting makes NCCL recurse past what its stack may hold: not knowable. */
#define SCAN_MAX_DEPTH 10000

enum { NODE_NONE, NODE_OPEN, NODE_CLOSE, NODE_SINGLE };

typedef struct elem_rule {
    const char *name;
    int sub_line;            /* the handler's xmlLoadSub call */
    int version_line;        /* the root handler's version read; 0 for others */
    const char *children[4]; /* the elements its handler knows */
} elem_rule;

/* NCCL 2.22.3 xml.cc ncclTopoXmlLoad* handlers. */
static const elem_rule topo_rules[] = {
    {"system", TP_NCCL_LINE_XML_SYSTEM, TP_NCCL_LINE_XML_SYSTEM_VERSION, {"cpu"}},
    {"cpu", TP_NCCL_LINE_XML_CPU, 0, {"pci", "nic"}},
    {"pci", TP_NCCL_LINE_XML_PCI, 0, {"pci", "gpu", "nic", "pcilink"}},
    {"gpu", TP_NCCL_LINE_XML_GPU, 0, {"nvlink", "c2c"}},
    {"nic", TP_NCCL_LINE_XML_NIC, 0, {"net"}},
    {"net", TP_NCCL_LINE_XML_NET, 0, {NULL}},
    {"nvlink", TP_NCCL_LINE_XML_NVLINK, 0, {NULL}},
    {"pcilink", TP_NCCL_LINE_XML_PCILINK, 0, {NULL}},
    {"c2c", TP_NCCL_LINE_XML_C2C, 0, {NULL}},
};

/* NCCL 2.22.3 xml.cc ncclTopoXmlGraphLoad* handlers. */
static const elem_rule graph_rules[] = {
    {"graphs", TP_NCCL_LINE_XML_GRAPHS, TP_NCCL_LINE_XML_GRAPHS_VERSION, {"graph"}},
    {"graph", TP_NCCL_LINE_XML_GRAPH, 0, {"channel"}},
    {"channel", TP_NCCL_LINE_XML_CHANNEL, 0, {"net", "gpu"}},
    {"net", TP_NCCL_LINE_XML_GRAPH_NET, 0, {NULL}},
    {"gpu", TP_NCCL_LINE_XML_GRAPH_GPU, 0, {NULL}},
};

typedef struct profile {
    const elem_rule *rules;
    size_t n_rules;
    int file_line; /* the loader entry's xmlLoadSub call */
    int max_nodes;
    bool is_graph;
} profile;

static const profile profiles[] = {
    [TP_NCCL_XML_TOPOLOGY] = {topo_rules, ARRAY_LEN(topo_rules), TP_NCCL_LINE_XML_TOPO_FILE,
                              TP_NCCL_TOPO_XML_MAX_NODES, false},
    [TP_NCCL_XML_GRAPHS] = {graph_rules, ARRAY_LEN(graph_rules), TP_NCCL_LINE_XML_GRAPH_FILE,
                            TP_NCCL_GRAPH_XML_MAX_NODES, true},
};

/* NCCL's node record: a name and the first 16 attributes (a 17th slot takes the rest). Keys
 * and values are read where they stand in the text (not NUL-terminated: see lengths). */
typedef struct xnode {
    int type;
    size_t start; /* offset of its '<' */
    char name[TP_NCCL_XML_MAX_STR_LEN + 1];
    const char *keys[TP_NCCL_XML_MAX_ATTRS + 1];
    const char *values[TP_NCCL_XML_MAX_ATTRS + 1];
    int n_attrs;
    size_t name_len, key_len[TP_NCCL_XML_MAX_ATTRS + 1], value_len[TP_NCCL_XML_MAX_ATTRS + 1];
    bool odd; /* its text is outside the plain subset (xml.h) though NCCL reads it */
    /* One bit per key by its length, first and last byte (no two keys of an element NCCL
     * writes share one), and the keys (bit a: key a) whose bit an earlier key had set: only
     * these may repeat one (which leaves the plain subset). */
    uint64_t key_bits;
    uint32_t clashing_keys;
    const struct elem_rule *rule; /* an open tag's: the profile's rule of that name, or NULL */
} xnode;

/* The most rules a profile has (topology: 9). */
#define SCAN_MAX_RULES 9

/* The keys the last element of a rule had, where they stand in the text (length 0: none, or not
 * plain). Elements of a kind repeat their keys, and comparing one whole costs less than reading
 * it byte by byte. */
typedef struct key_memo {
    const char *key[TP_NCCL_XML_MAX_ATTRS];
    size_t len[TP_NCCL_XML_MAX_ATTRS];
} key_memo;

/* An open element: its rule (NULL: skipped, or the top level when is_top). */
typedef struct frame {
    const elem_rule *rule;
    bool is_top;
    int n_subs;
    size_t start;
} frame;

/* The document tree as expat would build it, while the text stays plain (xml.h). */
typedef struct tree_builder {
    tp_xml *doc;          /* NULL: not wanted, or the text left the subset */
    tp_xml_text text;     /* the tree's strings stay in the document's copy of the text */
    tp_xml_elem *current; /* the innermost open element */
    unsigned depth;       /* of current */
    /* The line the cursor is on and where it starts: a plain text's line feeds are all in the
     * blanks between nodes and in comments (one anywhere else leaves the subset or fails). */
    unsigned line;
    size_t line_start;
    tp_status st; /* TP_ERR_NOMEM when building failed */
    tp_error *err;
} tree_builder;

typedef struct scan {
    const char *text;
    size_t len, pos;
    const profile *prof;
    tp_log *log;
    tp_nccl_xml_result *out;
    int code;     /* the ncclResult_t being returned */
    int n_nodes;  /* NCCL's xml->maxIndex */
    bool skipped; /* an element NCCL does not load (no handler takes it) */
    bool unknown;
    const char *token, *value;    /* the last token's name and value, in the text */
    size_t name_len, value_len;   /* their lengths */
    bool name_plain, value_plain; /* the last token's name and value are plain (xml.h) */
    tree_builder tree;
    key_memo memo[SCAN_MAX_RULES]; /* by rule */
    xnode node;
} scan;

/* ---- output ---- */

static void locate(scan *s, size_t offset)
{
    unsigned line = 1, col = 1;
    for (size_t i = 0; i < offset && i < s->len; i++) {
        if (s->text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    s->out->line = line;
    s->out->column = col;
}

/* Keep the WARN for the one-line error, bytes outside printable ASCII written as escapes. */
static void keep_message(scan *s, const char *text)
{
    size_t o = 0, cap = sizeof(s->out->message);
    for (const char *p = text; *p && o + 5 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c < 0x7f)
            s->out->message[o++] = (char)c;
        else
            o += (size_t)snprintf(s->out->message + o, cap - o, "\\x%02x", c);
    }
    s->out->message[o] = '\0';
}

/* NCCL's WARN: ends the replay with `code`, at `offset` of the text. */
static int warn(scan *s, int code, size_t offset, const char *fmt, ...) TP_PRINTF(4, 5);

static int warn(scan *s, int code, size_t offset, const char *fmt, ...)
{
    char text[2 * TP_NCCL_XML_MAX_STR_LEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    tp_log_warn(s->log, "%s", text);
    keep_message(s, text);
    locate(s, offset);
    s->code = code;
    return code;
}

/* The file is not XML as NCCL reads it (not a limit or a version): the scan goes on to warn(). */
static scan *syntax(scan *s)
{
    s->out->malformed = true;
    return s;
}

/* One NCCLCHECK back-trace line. */
static int trace(scan *s, const char *file, int line)
{
    tp_log_info_sub(s->log, TP_SUB_ALL, "%s:%d -> %d", file, line, s->code);
    return s->code;
}

static int undefined(scan *s, size_t offset, const char *why)
{
    s->unknown = true;
    s->out->unknown_why = why;
    locate(s, offset);
    return -1;
}

/* ---- the document tree, built from the nodes NCCL reads ---- */

/* The text left the plain subset: no tree (the caller reads the text itself). */
static void tree_drop(tree_builder *t)
{
    tp_xml__free(t->doc);
    t->doc = NULL;
}

/* A comment from its "<!--" to the cursor (after "-->"): its bytes are read nowhere else. */
static void tree_comment(scan *s, size_t start)
{
    tree_builder *t = &s->tree;
    const char *body = s->text + start + 4;
    size_t len = s->pos - start - 7;
    if (t->doc &&
        (s->pos - start < 7 || !tp_xml__plain_text(body, len) || !tp_xml__plain_comment(body, len)))
        tree_drop(t);
    const char *p = s->text + start, *end = s->text + s->pos;
    while (t->doc && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        t->line++;
        t->line_start = (size_t)(++p - s->text);
    }
}

/* Whether the node's key `a` repeats an earlier one. */
static bool repeats_key(const xnode *n, int a)
{
    for (int b = 0; b < a; b++)
        if (n->key_len[b] == n->key_len[a] &&
            tp_xml__same_bytes(n->keys[a], n->keys[b], n->key_len[a]))
            return true;
    return false;
}

/* Names and values plain (noted while reading them: odd), each key once (compared only when
 * two keys shared their bit). */
static bool plain_node(const xnode *n)
{
    if (n->odd)
        return false;
    for (uint32_t k = n->clashing_keys; k; k &= k - 1)
        if (repeats_key(n, __builtin_ctz(k)))
            return false;
    return true;
}

/* Note key `a` (at most the 17th) of the node in its key bits (see clashing_keys). */
static void note_key(xnode *n, int a)
{
    size_t len = n->key_len[a];
    unsigned first = (unsigned char)n->keys[a][0],
             last = len ? (unsigned char)n->keys[a][len - 1] : 0;
    uint64_t bit = 1ull << ((len + first * 3 + last) & 63);
    if (n->key_bits & bit)
        n->clashing_keys |= 1u << a;
    n->key_bits |= bit;
}

static void tree_open(scan *s, const xnode *n)
{
    tree_builder *t = &s->tree;
    tp_xml_range attrs[TP_NCCL_XML_MAX_ATTRS];
    for (int a = 0; a < n->n_attrs; a++)
        attrs[a] = (tp_xml_range){.name = n->keys[a],
                                  .value = n->values[a],
                                  .name_len = n->key_len[a],
                                  .value_len = n->value_len[a]};
    tp_xml_elem *e = NULL;
    const char *tag = s->text + n->start + 1; /* after the '<' */
    if ((t->st = tp_xml__open_elem_in_text(&e, t->current, &t->doc->arena, &t->text, tag,
                                           n->name_len, attrs, (size_t)n->n_attrs, t->err)) !=
        TP_OK) {
        tree_drop(t);
        return;
    }
    e->src_start = n->start;
    e->src_tag_len = s->pos - n->start;
    e->self_closing = n->type == NODE_SINGLE;
    e->line = t->line;
    e->column = (unsigned)(n->start - t->line_start + 1);
    if (!t->doc->root)
        t->doc->root = e;
    if (!e->self_closing && ++t->depth > TP_MAX_XML_DEPTH)
        tree_drop(t); /* read with tp_xml__parse, which names the limit */
    else if (!e->self_closing)
        t->current = e;
}

/* The node just read, into the tree: one root, end tags naming what they close. */
static void tree_node(scan *s)
{
    tree_builder *t = &s->tree;
    const xnode *n = &s->node;
    if (!t->doc)
        return;
    if (n->type == NODE_CLOSE) {
        if (!t->current || n->odd || strcmp(t->current->tag, n->name) != 0) {
            tree_drop(t);
            return;
        }
        t->current->src_close = n->start;
        t->current = t->current->parent;
        t->depth--;
    } else if ((!t->current && t->doc->root) || !plain_node(n)) {
        tree_drop(t);
    } else {
        tree_open(s, n);
    }
}

static const elem_rule *rule_named(const profile *p, const char *name);

/* ---- tokenizer (xml.cc xmlGetChar, xmlGetValue, xmlGetToken, xmlGetNode) ---- */

static bool next_byte(scan *s, char *c)
{
    if (s->pos >= s->len)
        return false;
    *c = s->text[s->pos++];
    return true;
}

static int eof(scan *s, int line)
{
    warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->len, "XML Parse : Unexpected EOF");
    return trace(s, NCCL_XML_CC, line);
}

/* A quoted value: opened by '"' or '\'', closed by '"'; then the byte after it. */
static int get_value(scan *s, char *last)
{
    char c;
    if (!next_byte(s, &c))
        return eof(s, TP_NCCL_LINE_XML_VALUE_OPEN);
    if (c != '"' && c != '\'')
        return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                    "XML Parse : Expected (double) quote.");
    s->node.odd |= c == '\''; /* expat would want a closing '\'' */
    /* NCCL stores bytes up to and with the '"' and has room for 256 of them. */
    const char *from = s->text + s->pos;
    size_t left = s->len - s->pos, room = TP_NCCL_XML_MAX_STR_LEN + 1;
    size_t scan_len = left < room ? left : room, n = 0;
    unsigned char cls = TP_XML_VALUE;
    while (n < scan_len && from[n] != '"')
        cls &= tp_xml__byte_class[(unsigned char)from[n++]];
    if (n == scan_len && left > room) {
        s->pos += TP_NCCL_XML_MAX_STR_LEN + 2;
        return undefined(s, s->pos - 1,
                         "an attribute value longer than 255 bytes overflows NCCL 2.22.3's "
                         "buffer (xml.cc xmlGetValue)");
    }
    if (n == scan_len) {
        s->pos = s->len;
        return eof(s, TP_NCCL_LINE_XML_VALUE_CHAR);
    }
    s->pos += n + 1;
    s->value = from;
    s->value_len = n;
    s->value_plain = cls != 0;
    return next_byte(s, last) ? 0 : eof(s, TP_NCCL_LINE_XML_VALUE_AFTER);
}

static bool ends_name(char c)
{
    return c == ' ' || c == '>' || c == '/' || c == '\n' || c == '\r';
}

/* The name bytes from `from` to the cursor (n of them), NUL-terminated. */
static void keep_name(char *name, const char *from, size_t n)
{
    memcpy(name, from, n);
    name[n] = '\0';
}

/* A name (copied to `name`, NUL-terminated) or, want_value, a key (left in the text: s->token)
 * ended by '=' (*last: the caller reads the value) or not (an empty value); *last is the byte
 * that ended it. */
static int get_token(scan *s, char *name, bool want_value, char *last)
{
    const char *from = s->text + s->pos;
    size_t avail = s->len - s->pos, max = TP_NCCL_XML_MAX_STR_LEN - 1;
    size_t n = 0, limit = avail < max ? avail : max;
    unsigned char cls = TP_XML_NAME;
    for (; n < limit; n++) { /* one table read a byte: its end mark and its plain class */
        unsigned char k = tp_xml__byte_class[(unsigned char)from[n]];
        if (k & TP_XML_NCCL_TOKEN_END)
            break;
        cls &= k;
    }
    s->name_plain =
        n > 0 && (tp_xml__byte_class[(unsigned char)from[0]] & TP_XML_NAME_START) && cls;
    if (n == limit && avail <= max) {
        s->pos = s->len;
        return eof(s, TP_NCCL_LINE_XML_TOKEN_CHAR);
    }
    char c = from[n];
    s->pos += n + 1;
    if (name)
        keep_name(name, from, n);
    s->token = from;
    s->name_len = n;
    if (c == '=') {
        if (!want_value)
            return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                        "XML Parse : Unexpected value with name %s", name);
        *last = c;
        return 0;
    }
    if (n == max) { /* NCCL keeps 254 bytes of a name and fails on the next one */
        char key[TP_NCCL_XML_MAX_STR_LEN];
        if (!name)
            keep_name(name = key, from, n);
        return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                    "Error : name %s too long (max %d)", name, TP_NCCL_XML_MAX_STR_LEN);
    }
    if (want_value) { /* a key without '=': NCCL's cleared record gives it an empty value */
        s->value = "";
        s->value_len = 0;
        s->node.odd = true;
    }
    *last = c;
    return 0;
}

/* NCCL shifts every byte it reads into a window of three and stops when the window is "-->":
 * the comment ends at the first "-->" among the bytes after "<!--" (the name's bytes up to a
 * NUL, then `next`, then the text). We shift only the name's bytes and search the text. */
static int skip_comment(scan *s, const char *start, char next)
{
    char w[3] = {'.', '.', '.'}; /* the last three bytes NCCL has seen */
    for (const char *p = start; *p; p++) {
        w[0] = w[1];
        w[1] = w[2];
        w[2] = *p;
    }
    w[0] = w[1];
    w[1] = w[2];
    w[2] = next;
    if (w[0] == '-' && w[1] == '-' && w[2] == '>')
        return 0;
    const char *text = s->text + s->pos, *end = s->text + s->len;
    if (w[1] == '-' && w[2] == '-' && text < end && text[0] == '>') {
        s->pos += 1;
        return 0;
    }
    if (w[2] == '-' && end - text >= 2 && text[0] == '-' && text[1] == '>') {
        s->pos += 2;
        return 0;
    }
    /* A '>' two bytes or more into the text, after "--" (memchr: comments have few '>'). */
    const char *close = NULL;
    for (const char *p = text + 2; p < end && (p = memchr(p, '>', (size_t)(end - p))); p++)
        if (p[-1] == '-' && p[-2] == '-') {
            close = p - 2;
            break;
        }
    if (!close) {
        s->pos = s->len;
        return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->len,
                    "XML Parse error : unterminated comment");
    }
    s->pos = (size_t)(close + 3 - s->text);
    return 0;
}

/* get_token for a key="value" pair whose key the text repeats from `known` (len bytes, plain)
 * up to an '=': false (nothing read) when it does not. */
static bool repeated_key(scan *s, const char *known, size_t len)
{
    if (len == 0 || s->len - s->pos <= len || s->text[s->pos + len] != '=' ||
        !tp_xml__same_bytes(s->text + s->pos, known, len))
        return false;
    s->token = s->text + s->pos;
    s->name_len = len;
    s->name_plain = true;
    s->pos += len + 1;
    return true;
}

/* Attribute `a` of a node whose keys `memo` remembers (may be NULL): a key="value" pair. */
static int get_pair(scan *s, key_memo *memo, int a, char *c)
{
    if (a >= TP_NCCL_XML_MAX_ATTRS)
        memo = NULL;
    bool known = memo && repeated_key(s, memo->key[a], memo->len[a]);
    int r = known ? 0 : get_token(s, NULL, true, c);
    if (r == 0 && memo) {
        memo->key[a] = s->token;
        memo->len[a] = s->name_plain ? s->name_len : 0;
    }
    return r == 0 && (known || *c == '=') ? get_value(s, c) : r;
}

/* The attributes of an open tag, then its end ('/>' or '>'). */
static int get_attrs(scan *s, xnode *n, char c)
{
    int a = 0, r;
    key_memo *memo = n->rule ? &s->memo[n->rule - s->prof->rules] : NULL;
    while (c == ' ') {
        if ((r = get_pair(s, memo, a, &c)) != 0)
            return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_ATTR);
        n->keys[a] = s->token;
        n->key_len[a] = s->name_len;
        n->values[a] = s->value;
        n->value_len[a] = s->value_len;
        n->odd |= !s->name_plain || !s->value_plain;
        note_key(n, a);
        if (a == TP_NCCL_XML_MAX_ATTRS) {
            tp_log_info_sub(s->log, TP_SUB_GRAPH, "XML Parse : Ignoring extra attributes (max %d)",
                            TP_NCCL_XML_MAX_ATTRS);
            n->odd = true;
        } else {
            a++;
        }
    }
    n->n_attrs = a;
    if (c == '/') {
        n->type = NODE_SINGLE;
        char rest[TP_NCCL_XML_MAX_STR_LEN];
        if ((r = get_token(s, rest, false, &c)) != 0)
            return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_SINGLE);
        n->odd |= s->name_len != 0;
    }
    if (c != '>')
        return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                    "XML Parse : expected >, got '%c'", c);
    return 0;
}

/* Where the spaces from p on end: a word at a time (indentation runs are a dozen bytes). */
static const char *skip_spaces(const char *p, const char *end)
{
    const uint64_t spaces = 0x2020202020202020ULL;
    for (; end - p >= (ptrdiff_t)sizeof(uint64_t); p += sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, p, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w); /* the first byte lowest */
#endif
        if (w != spaces)
            return p + __builtin_ctzll(w ^ spaces) / 8;
    }
    while (p < end && *p == ' ')
        p++;
    return p;
}

/* The blanks NCCL passes before a node (' ', LF, CR), lines counted: where they end. */
static const char *skip_blanks(scan *s)
{
    const char *p = s->text + s->pos, *end = s->text + s->len;
    for (;;) {
        p = skip_spaces(p, end);
        if (p < end && *p == '\n') {
            s->tree.line++;
            s->tree.line_start = (size_t)(++p - s->text);
        } else if (p < end && *p == '\r') {
            tree_drop(&s->tree); /* expat reads CR LF as one line feed: not plain */
            p++;
        } else {
            return p;
        }
    }
}

/* One node, comments skipped (NCCL recurses after a comment; we loop). */
static int get_node(scan *s, xnode *n)
{
    for (;;) {
        /* The fields every node sets or reads first: clearing the whole ~9 KB record per
         * node cost more than the rest of the replay. Strings are read only once written. */
        n->type = NODE_NONE;
        n->start = 0;
        n->name[0] = '\0';
        n->n_attrs = 0;
        n->odd = false;
        n->key_bits = 0;
        n->clashing_keys = 0;
        n->rule = NULL;
        const char *p = skip_blanks(s);
        if (p == s->text + s->len) {
            s->pos = s->len;
            return 0; /* NODE_NONE */
        }
        char c = *p;
        s->pos = (size_t)(p - s->text) + 1;
        n->start = s->pos - 1;
        if (c != '<')
            return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                        "XML Parse error : expecting '<', got '%c'", c);
        int r = get_token(s, n->name, false, &c);
        if (r != 0)
            return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_NAME);
        n->name_len = s->name_len;
        if (strncmp(n->name, "!--", 3) == 0) {
            if ((r = skip_comment(s, n->name + 3, c)) != 0)
                return trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_COMMENT);
            tree_comment(s, n->start);
            continue;
        }
        if (n->name[0] == '\0' && c == '/') {
            /* "</", or bytes from a NUL on before the '/' (NCCL's name is a C string) */
            bool bytes_before = s->name_len != 0;
            n->type = NODE_CLOSE;
            if ((r = get_token(s, n->name, false, &c)) != 0)
                return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_CLOSE);
            n->name_len = s->name_len;
            n->odd |= bytes_before || !s->name_plain; /* a NUL, which strcmp would not see */
            if (c != '>')
                return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                            "XML Parse error : unexpected trailing %c in closing tag %s", c,
                            n->name);
            return 0;
        }
        n->type = NODE_OPEN;
        n->odd |= !s->name_plain;
        n->rule = rule_named(s->prof, n->name);
        return get_attrs(s, n, c);
    }
}

/* ---- the loader (xml.cc xmlLoadSub and the handlers) ---- */

static const elem_rule *rule_named(const profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_rules; i++)
        if (p->rules[i].name[0] == name[0] && tp_xml__name_eq(p->rules[i].name, name))
            return &p->rules[i];
    return NULL;
}

/* The rule of a child (its own rule: `rule`) the frame's handler knows, or NULL. */
static const elem_rule *known_child(const scan *s, const frame *f, const elem_rule *rule)
{
    if (!rule || f->is_top)
        return rule == &s->prof->rules[0] ? rule : NULL;
    for (size_t i = 0; f->rule && i < ARRAY_LEN(f->rule->children) && f->rule->children[i]; i++)
        if (tp_xml__same_text(f->rule->children[i], rule->name))
            return rule;
    return NULL;
}

static bool has_handlers(const frame *f)
{
    return f->is_top || (f->rule && f->rule->children[0]);
}

/* NCCL's first 16 attributes only; the first with that key, keys and values as the C strings
 * NCCL holds (up to a NUL). The value goes to buf (TP_NCCL_XML_MAX_STR_LEN + 1 bytes). */
static const char *node_attr(const xnode *n, const char *key, char *buf)
{
    size_t key_len = strlen(key);
    for (int a = 0; a < n->n_attrs; a++) {
        if (strnlen(n->keys[a], n->key_len[a]) != key_len || memcmp(n->keys[a], key, key_len))
            continue;
        size_t len = strnlen(n->values[a], n->value_len[a]);
        memcpy(buf, n->values[a], len);
        buf[len] = '\0';
        return buf;
    }
    return NULL;
}

/* The root handler's header: xmlGetAttrInt(version), then (graphs) "Loading graphs". */
static int open_root(scan *s, const elem_rule *rule, const xnode *n)
{
    char buf[TP_NCCL_XML_MAX_STR_LEN + 1];
    const char *v = node_attr(n, "version", buf);
    if (!v) {
        warn(s, TP_NCCL_INTERNAL_ERROR, n->start, "Attribute version of node %s not found",
             n->name);
        trace(s, NCCL_XML_H, TP_NCCL_LINE_XML_GET_INT);
        return trace(s, NCCL_XML_CC, rule->version_line);
    }
    int version = (int)strtol(v, NULL, 0);
    if (version != TP_NCCL_XML_VERSION && s->prof->is_graph)
        return warn(s, TP_NCCL_INVALID_USAGE, n->start, "XML Graph has wrong version %d, %d needed",
                    version, TP_NCCL_XML_VERSION);
    if (version != TP_NCCL_XML_VERSION)
        return warn(s, TP_NCCL_INVALID_USAGE, n->start,
                    "XML Topology has wrong version %d, %d needed", version, TP_NCCL_XML_VERSION);
    if (s->prof->is_graph) {
        const char *name = node_attr(n, "name", buf);
        if (name)
            tp_log_info_sub(s->log, TP_SUB_GRAPH, "Loading graphs for topology %s", name);
        else
            tp_log_info_sub(s->log, TP_SUB_GRAPH, "Loading graphs");
    }
    return 0;
}

typedef struct stack {
    frame *frames;
    size_t n, cap;
} stack;

static tp_status push(stack *st, frame f, tp_error *err)
{
    tp_status rc = st->n < st->cap ? TP_OK
                                   : tp_grow((void **)&st->frames, &st->cap, st->n + 1,
                                             sizeof(*st->frames), err);
    if (rc == TP_OK)
        st->frames[st->n++] = f;
    return rc;
}

/* The back-trace of every open load, innermost first, then the loader entry. */
static void unwind(scan *s, const stack *st)
{
    for (size_t i = st->n - 1; i > 0; i--) {
        const frame *f = &st->frames[i];
        if (f->rule) {
            trace(s, NCCL_XML_CC, f->rule->sub_line);
            trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_SUB_HANDLER);
        } else {
            trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_SUB_SKIP);
        }
    }
    trace(s, NCCL_XML_CC, s->prof->file_line);
}

/* A node of the top frame's load that is not its closing tag. */
static int take_child(scan *s, stack *st, tp_status *mem, tp_error *err)
{
    frame *f = &st->frames[st->n - 1];
    xnode *n = &s->node;
    /* A closing tag reaches here at the top only, where NCCL reads it as an element. */
    const elem_rule *own = n->type == NODE_CLOSE ? rule_named(s->prof, n->name) : n->rule;
    const elem_rule *rule = known_child(s, f, own);
    if (!rule && has_handlers(f))
        tp_log_info_sub(s->log, TP_SUB_GRAPH, "Ignoring element %s", n->name);
    s->skipped |= !rule;
    if (rule) {
        if (!f->is_top && f->n_subs == TP_NCCL_XML_MAX_SUBS)
            return warn(s, TP_NCCL_INTERNAL_ERROR, n->start,
                        "Error : XML parser is limited to %d subnodes", TP_NCCL_XML_MAX_SUBS);
        f->n_subs++;
        s->n_nodes++;
        s->out->n_roots += f->is_top;
        int r = rule->version_line ? open_root(s, rule, n) : 0;
        if (r != 0)
            return trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_SUB_HANDLER);
    }
    if (n->type == NODE_SINGLE)
        return 0;
    if (st->n > SCAN_MAX_DEPTH)
        return undefined(s, n->start,
                         "elements nested this deep make NCCL 2.22.3 recurse past what its "
                         "stack may hold");
    *mem = push(st, (frame){.rule = rule, .start = n->start}, err);
    return 0;
}

/* Append to the kept message the name of the element whose '<' is at `start`. */
static void name_open_element(scan *s, size_t start)
{
    size_t end = start + 1;
    while (end < s->len && end - start <= TP_NCCL_XML_MAX_STR_LEN && !ends_name(s->text[end]))
        end++;
    size_t used = strlen(s->out->message);
    snprintf(s->out->message + used, sizeof(s->out->message) - used, "(<%.*s> is not closed)",
             (int)(end - start - 1), s->text + start + 1);
}

/* One step of the top frame's load: 0 go on, 1 done, -1 stop (unknown), >1 failed. */
static int step(scan *s, stack *st, tp_status *mem, tp_error *err)
{
    frame *f = &st->frames[st->n - 1];
    xnode *n = &s->node;
    if (s->n_nodes == s->prof->max_nodes)
        return warn(s, TP_NCCL_INTERNAL_ERROR, s->pos, "Error : XML parser is limited to %d nodes",
                    s->prof->max_nodes);
    int r = get_node(s, n);
    if (r != 0)
        return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_SUB_NODE);
    if (n->type != NODE_NONE)
        tree_node(s);
    if (n->type == NODE_NONE) {
        if (f->is_top)
            return 1;
        warn(syntax(s), TP_NCCL_INTERNAL_ERROR, f->start, "XML Parse : unterminated %s",
             f->rule ? f->rule->name : "");
        if (!f->rule) /* NCCL's message lost the name: say which element is open */
            name_open_element(s, f->start);
        return s->code;
    }
    if (!f->is_top && n->type == NODE_CLOSE) {
        if (f->rule && strcmp(n->name, f->rule->name) != 0)
            return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, n->start, "XML Mismatch : %s / %s",
                        f->rule->name, n->name);
        st->n--;
        return 0;
    }
    return take_child(s, st, mem, err);
}

/* The tree for the caller: the text was accepted and stayed plain to its end. */
static tp_status keep_tree(scan *s, tp_nccl_xml_result *out)
{
    tree_builder *t = &s->tree;
    if (t->st != TP_OK)
        return t->st;
    if (t->doc && out->outcome == TP_NCCL_XML_ACCEPTED && t->doc->root && !t->current) {
        out->tree = t->doc;
        out->tree->nccl_read = !s->skipped;
        t->doc = NULL;
    }
    tree_drop(t);
    return TP_OK;
}

static tp_status start_tree(scan *s, const tp_nccl_xml_input *in, tp_error *err)
{
    tree_builder *t = &s->tree;
    t->err = err;
    t->line = 1;
    /* No pass of its own over the text for plainness (tp_xml__plain_text): the scan reads every
     * byte, classing names, keys and values, dropping the tree on a CR between nodes and on a
     * comment that is not plain; any other byte fails NCCL's parse. */
    if (!in->want_tree || in->len > TP_MAX_INPUT_BYTES)
        return TP_OK;
    if (!(t->doc = calloc(1, sizeof(*t->doc))))
        return tp_fail_nomem(err);
    tp_copy_str(t->doc->source, sizeof(t->doc->source), in->source ? in->source : "<buffer>");
    t->text = (tp_xml_text){in->text, tp_xml__keep_text(t->doc, in->text, in->len)};
    return t->text.copy ? TP_OK : tp_fail_nomem(err);
}

tp_status tp_xml__nccl_load(const tp_nccl_xml_input *in, tp_log *log, tp_nccl_xml_result *out,
                            tp_error *err)
{
    memset(out, 0, sizeof(*out));
    /* Not cleared: get_node sets what it reads of the ~9 KB node record. */
    scan *s = malloc(sizeof(*s));
    if (!s)
        return tp_fail_nomem(err);
    memset(s, 0, offsetof(scan, node));
    s->text = in->text;
    s->len = in->len;
    s->prof = &profiles[in->kind];
    s->log = log;
    s->out = out;
    stack st = {0};
    tp_status mem = start_tree(s, in, err);
    if (mem == TP_OK)
        mem = push(&st, (frame){.is_top = true}, err);
    int r = 0;
    while (mem == TP_OK && r == 0)
        r = step(s, &st, &mem, err);
    if (mem == TP_OK && r > 1) {
        unwind(s, &st);
        out->outcome = TP_NCCL_XML_REJECTED;
        out->code = s->code;
    } else if (mem == TP_OK && r < 0) {
        out->outcome = TP_NCCL_XML_UNKNOWN;
    }
    if (mem == TP_OK)
        mem = keep_tree(s, out);
    tree_drop(&s->tree);
    free(st.frames);
    free(s);
    return mem;
}

void tp_xml__log_append(tp_log *to, const tp_log *from)
{
    for (size_t i = 0; i < from->n_lines; i++) {
        const tp_log_line *l = &from->lines[i];
        if (l->level == TP_LOG_WARN)
            tp_log_warn(to, "%s", l->text);
        else
            tp_log_info_sub(to, l->sub, "%s", l->text);
    }
}
