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

/* NCCL's node record: a name and the first 16 attributes (a 17th slot takes the rest). */
typedef struct xnode {
    int type;
    size_t start; /* offset of its '<' */
    char name[TP_NCCL_XML_MAX_STR_LEN + 1];
    char keys[TP_NCCL_XML_MAX_ATTRS + 1][TP_NCCL_XML_MAX_STR_LEN + 1];
    char values[TP_NCCL_XML_MAX_ATTRS + 1][TP_NCCL_XML_MAX_STR_LEN + 1];
    int n_attrs;
} xnode;

/* An open element: its rule (NULL: skipped, or the top level when is_top). */
typedef struct frame {
    const elem_rule *rule;
    bool is_top;
    int n_subs;
    size_t start;
} frame;

typedef struct scan {
    const char *text;
    size_t len, pos;
    const profile *prof;
    tp_log *log;
    tp_nccl_xml_result *out;
    int code;    /* the ncclResult_t being returned */
    int n_nodes; /* NCCL's xml->maxIndex */
    bool unknown;
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
static int get_value(scan *s, char *value, char *last)
{
    char c;
    if (!next_byte(s, &c))
        return eof(s, TP_NCCL_LINE_XML_VALUE_OPEN);
    if (c != '"' && c != '\'')
        return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                    "XML Parse : Expected (double) quote.");
    size_t o = 0;
    do {
        if (!next_byte(s, &c))
            return eof(s, TP_NCCL_LINE_XML_VALUE_CHAR);
        if (o > TP_NCCL_XML_MAX_STR_LEN)
            return undefined(s, s->pos - 1,
                             "an attribute value longer than 255 bytes overflows NCCL 2.22.3's "
                             "buffer (xml.cc xmlGetValue)");
        value[o++] = c;
    } while (c != '"');
    value[o - 1] = '\0';
    return next_byte(s, last) ? 0 : eof(s, TP_NCCL_LINE_XML_VALUE_AFTER);
}

static bool ends_name(char c)
{
    return c == ' ' || c == '>' || c == '/' || c == '\n' || c == '\r';
}

/* A name (value NULL) or a key="value" pair; *last is the byte that ended it. */
static int get_token(scan *s, char *name, char *value, char *last)
{
    size_t o = 0;
    char c;
    do {
        if (!next_byte(s, &c))
            return eof(s, TP_NCCL_LINE_XML_TOKEN_CHAR);
        if (c == '=') {
            name[o] = '\0';
            if (!value)
                return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                            "XML Parse : Unexpected value with name %s", name);
            return get_value(s, value, last);
        }
        name[o] = c;
        if (o == TP_NCCL_XML_MAX_STR_LEN - 1) {
            name[o] = '\0';
            return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                        "Error : name %s too long (max %d)", name, TP_NCCL_XML_MAX_STR_LEN);
        }
        o++;
    } while (!ends_name(c));
    name[o - 1] = '\0';
    if (value) /* a key without '=': NCCL's cleared record gives it an empty value */
        value[0] = '\0';
    *last = c;
    return 0;
}

/* Skip to "-->", the bytes already read after "<!--" included. */
static int skip_comment(scan *s, const char *start, char next)
{
    char end[4] = "...";
    for (const char *p = start; *p; p++) {
        memmove(end, end + 1, 2);
        end[2] = *p;
    }
    memmove(end, end + 1, 2);
    end[2] = next;
    char c;
    while (strcmp(end, "-->") != 0) {
        if (!next_byte(s, &c))
            return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->len,
                        "XML Parse error : unterminated comment");
        memmove(end, end + 1, 2);
        end[2] = c;
    }
    return 0;
}

/* The attributes of an open tag, then its end ('/>' or '>'). */
static int get_attrs(scan *s, xnode *n, char c)
{
    int a = 0, r;
    while (c == ' ') {
        if ((r = get_token(s, n->keys[a], n->values[a], &c)) != 0)
            return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_ATTR);
        if (a == TP_NCCL_XML_MAX_ATTRS)
            tp_log_info_sub(s->log, TP_SUB_GRAPH, "XML Parse : Ignoring extra attributes (max %d)",
                            TP_NCCL_XML_MAX_ATTRS);
        else
            a++;
    }
    n->n_attrs = a;
    if (c == '/') {
        n->type = NODE_SINGLE;
        char rest[TP_NCCL_XML_MAX_STR_LEN];
        if ((r = get_token(s, rest, NULL, &c)) != 0)
            return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_SINGLE);
    }
    if (c != '>')
        return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                    "XML Parse : expected >, got '%c'", c);
    return 0;
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
        char c = ' ';
        while (c == ' ' || c == '\n' || c == '\r')
            if (!next_byte(s, &c))
                return 0; /* NODE_NONE */
        n->start = s->pos - 1;
        if (c != '<')
            return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                        "XML Parse error : expecting '<', got '%c'", c);
        int r = get_token(s, n->name, NULL, &c);
        if (r != 0)
            return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_NAME);
        if (strncmp(n->name, "!--", 3) == 0) {
            if ((r = skip_comment(s, n->name + 3, c)) != 0)
                return trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_COMMENT);
            continue;
        }
        if (n->name[0] == '\0' && c == '/') {
            n->type = NODE_CLOSE;
            if ((r = get_token(s, n->name, NULL, &c)) != 0)
                return r < 0 ? r : trace(s, NCCL_XML_CC, TP_NCCL_LINE_XML_NODE_CLOSE);
            if (c != '>')
                return warn(syntax(s), TP_NCCL_INTERNAL_ERROR, s->pos - 1,
                            "XML Parse error : unexpected trailing %c in closing tag %s", c,
                            n->name);
            return 0;
        }
        n->type = NODE_OPEN;
        return get_attrs(s, n, c);
    }
}

/* ---- the loader (xml.cc xmlLoadSub and the handlers) ---- */

static const elem_rule *rule_named(const profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_rules; i++)
        if (strcmp(p->rules[i].name, name) == 0)
            return &p->rules[i];
    return NULL;
}

/* The rule of a child the frame's handler knows, or NULL. */
static const elem_rule *known_child(const scan *s, const frame *f, const char *name)
{
    if (f->is_top)
        return strcmp(name, s->prof->rules[0].name) == 0 ? &s->prof->rules[0] : NULL;
    for (size_t i = 0; f->rule && i < ARRAY_LEN(f->rule->children) && f->rule->children[i]; i++)
        if (strcmp(f->rule->children[i], name) == 0)
            return rule_named(s->prof, name);
    return NULL;
}

static bool has_handlers(const frame *f)
{
    return f->is_top || (f->rule && f->rule->children[0]);
}

/* NCCL's first 16 attributes only; the first with that key. */
static const char *node_attr(const xnode *n, const char *key)
{
    for (int a = 0; a < n->n_attrs; a++)
        if (strncmp(n->keys[a], key, TP_NCCL_XML_MAX_STR_LEN) == 0)
            return n->values[a];
    return NULL;
}

/* The root handler's header: xmlGetAttrInt(version), then (graphs) "Loading graphs". */
static int open_root(scan *s, const elem_rule *rule, const xnode *n)
{
    const char *v = node_attr(n, "version");
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
        const char *name = node_attr(n, "name");
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
    tp_status rc = tp_grow((void **)&st->frames, &st->cap, st->n + 1, sizeof(*st->frames), err);
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
    const elem_rule *rule = known_child(s, f, n->name);
    if (!rule && has_handlers(f))
        tp_log_info_sub(s->log, TP_SUB_GRAPH, "Ignoring element %s", n->name);
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

tp_status tp_xml__nccl_load(const char *text, size_t len, tp_nccl_xml_kind kind, tp_log *log,
                            tp_nccl_xml_result *out, tp_error *err)
{
    memset(out, 0, sizeof(*out));
    /* Not cleared: get_node sets what it reads of the ~9 KB node record. */
    scan *s = malloc(sizeof(*s));
    if (!s)
        return tp_fail_nomem(err);
    memset(s, 0, offsetof(scan, node));
    s->text = text;
    s->len = len;
    s->prof = &profiles[kind];
    s->log = log;
    s->out = out;
    stack st = {0};
    tp_status mem = push(&st, (frame){.is_top = true}, err);
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
