/* Stage 1: expat -> element tree with positions; tree edits; NCCL-style writer. */
#include "xml/xml.h"

#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct parse_ctx {
    XML_Parser parser;
    tp_xml *doc;
    tp_xml_elem *current;
    tp_error *err;
    tp_status st;
    /* Positions counted here for plain ASCII text (expat recounts from its last query). */
    const char *text;
    bool ascii;
    tp_xml_lines lines;
    unsigned depth; /* of the current element */
} parse_ctx;

void tp_xml__free_elem(tp_xml_elem *e)
{
    if (!e)
        return;
    /* Heap children may hang under arena elements (tp_xml__move): walk them all. */
    for (size_t i = 0; i < e->n_children; i++)
        tp_xml__free_elem(e->children[i]);
    if (e->arena)
        return; /* freed with its arena */
    free(e->children);
    for (size_t i = 0; i < e->n_attrs; i++)
        free(e->attrs[i].name); /* the value shares its block */
    free(e->attrs);
    free(e);
}

void tp_xml__free(tp_xml *doc)
{
    if (!doc)
        return;
    tp_xml__free_elem(doc->root);
    tp_arena_free(&doc->arena);
    free(doc);
}

/* A block of the element's storage: from its arena, else the heap. */
static void *elem_alloc(const tp_xml_elem *e, size_t size)
{
    return e->arena ? tp_arena_alloc(e->arena, size) : malloc(size);
}

static void elem_release(const tp_xml_elem *e, void *block)
{
    if (!e->arena)
        free(block);
}

/* Room for `need` items in one of the element's arrays (items past the count are never read:
 * an arena's new room is not cleared). */
static tp_status elem_grow(const tp_xml_elem *e, void **ptr, size_t *cap, size_t need,
                           size_t elem_size, tp_error *err)
{
    if (!e->arena)
        return tp_grow(ptr, cap, need, elem_size, err);
    if (need <= *cap)
        return TP_OK;
    size_t n = *cap ? *cap * 2 : 4;
    while (n < need)
        n *= 2;
    char *p = tp_arena_alloc(e->arena, n * elem_size);
    if (!p)
        return tp_fail_nomem(err);
    if (*cap)
        memcpy(p, *ptr, *cap * elem_size);
    *ptr = p;
    *cap = n;
    return TP_OK;
}

/* One block "name\0value\0" per attribute, from ln and lv bytes. */
static tp_status make_attr_n(const tp_xml_elem *e, tp_xml_attr *a, const tp_xml_range *r,
                             tp_error *err)
{
    size_t ln = r->name_len, lv = r->value_len;
    char *block = elem_alloc(e, ln + lv + 2);
    if (!block)
        return tp_fail_nomem(err);
    memcpy(block, r->name, ln);
    block[ln] = '\0';
    memcpy(block + ln + 1, r->value, lv);
    block[ln + 1 + lv] = '\0';
    a->name = block;
    a->value = block + ln + 1;
    a->name_len = ln;
    return TP_OK;
}

static tp_status make_attr(const tp_xml_elem *e, tp_xml_attr *a, const char *name,
                           const char *value, tp_error *err)
{
    const char *v = value ? value : "";
    tp_xml_range r = {.name = name, .value = v, .name_len = strlen(name), .value_len = strlen(v)};
    return make_attr_n(e, a, &r, err);
}

tp_status tp_xml__append_attr(tp_xml_elem *e, const char *name, const char *value, tp_error *err)
{
    tp_status st =
        elem_grow(e, (void **)&e->attrs, &e->attrs_cap, e->n_attrs + 1, sizeof(*e->attrs), err);
    if (st == TP_OK && (st = make_attr(e, &e->attrs[e->n_attrs], name, value, err)) == TP_OK)
        e->n_attrs++;
    return st;
}

tp_status tp_xml__set_attr(tp_xml_elem *e, const char *name, const char *value, tp_error *err)
{
    int i = tp_xml__attr_index(e, name, strlen(name));
    if (i < 0)
        return tp_xml__append_attr(e, name, value, err);
    if (strcmp(e->attrs[i].value, value ? value : "") == 0)
        return TP_OK; /* often so (a NET's dev, a GPU's rank): no new block */
    tp_xml_attr fresh;
    tp_status st = make_attr(e, &fresh, name, value, err);
    if (st == TP_OK) {
        elem_release(e, e->attrs[i].name);
        e->attrs[i] = fresh;
    }
    return st;
}

void tp_xml__unset_attr(tp_xml_elem *e, const char *name)
{
    int i = tp_xml__attr_index(e, name, strlen(name));
    if (i < 0)
        return;
    elem_release(e, e->attrs[i].name);
    memmove(&e->attrs[i], &e->attrs[i + 1], (e->n_attrs - (size_t)i - 1) * sizeof(*e->attrs));
    e->n_attrs--;
}

static tp_status append_child(tp_xml_elem *parent, tp_xml_elem *child, tp_error *err)
{
    tp_status st = elem_grow(parent, (void **)&parent->children, &parent->children_cap,
                             parent->n_children + 1, sizeof(*parent->children), err);
    if (st != TP_OK)
        return st;
    parent->children[parent->n_children++] = child;
    child->parent = parent;
    return TP_OK;
}

/* The element and its tag (len bytes) in one block. */
static tp_xml_elem *new_elem(tp_arena *arena, const char *tag, size_t len)
{
    size_t size = sizeof(tp_xml_elem) + len + 1;
    tp_xml_elem *e = arena ? tp_arena_alloc(arena, size) : malloc(size);
    if (!e)
        return NULL;
    memset(e, 0, sizeof(*e));
    e->arena = arena;
    e->tag = (char *)(e + 1);
    memcpy(e->tag, tag, len);
    e->tag[len] = '\0';
    return e;
}

/* A new element named by tag_len bytes: a child of parent, or (parent NULL) a root in arena. */
static tp_status open_elem(tp_xml_elem **out, tp_xml_elem *parent, tp_arena *arena, const char *tag,
                           size_t tag_len, tp_error *err)
{
    *out = NULL;
    tp_xml_elem *e = new_elem(parent ? parent->arena : arena, tag, tag_len);
    if (!e)
        return tp_fail_nomem(err);
    if (parent) {
        tp_status st = append_child(parent, e, err);
        if (st != TP_OK) {
            tp_xml__free_elem(e);
            return st;
        }
    }
    *out = e;
    return TP_OK;
}

tp_status tp_xml__new_root(tp_xml_elem **out, tp_arena *arena, const char *tag, tp_error *err)
{
    return open_elem(out, NULL, arena, tag, strlen(tag), err);
}

tp_status tp_xml__add_child(tp_xml_elem **out, tp_xml_elem *parent, const char *tag, tp_error *err)
{
    return open_elem(out, parent, NULL, tag, strlen(tag), err);
}

/* The strings of n attributes in one arena block (a reader's element: freed together). */
static tp_status append_packed(tp_xml_elem *e, const tp_xml_range *attrs, size_t n, tp_error *err)
{
    size_t size = 0;
    for (size_t i = 0; i < n; i++)
        size += attrs[i].name_len + attrs[i].value_len + 2;
    char *p = tp_arena_alloc(e->arena, size);
    if (!p)
        return tp_fail_nomem(err);
    for (size_t i = 0; i < n; i++) {
        tp_xml_attr *a = &e->attrs[e->n_attrs++];
        a->name = p;
        a->name_len = attrs[i].name_len;
        memcpy(p, attrs[i].name, attrs[i].name_len);
        p += attrs[i].name_len;
        *p++ = '\0';
        a->value = p;
        memcpy(p, attrs[i].value, attrs[i].value_len);
        p += attrs[i].value_len;
        *p++ = '\0';
    }
    return TP_OK;
}

tp_status tp_xml__append_ranges(tp_xml_elem *e, const tp_xml_range *attrs, size_t n, tp_error *err)
{
    if (n == 0)
        return TP_OK;
    tp_status st =
        elem_grow(e, (void **)&e->attrs, &e->attrs_cap, e->n_attrs + n, sizeof(*e->attrs), err);
    if (st == TP_OK && e->arena)
        return append_packed(e, attrs, n, err);
    for (size_t i = 0; st == TP_OK && i < n; i++)
        if ((st = make_attr_n(e, &e->attrs[e->n_attrs], &attrs[i], err)) == TP_OK)
            e->n_attrs++;
    return st;
}

char *tp_xml__keep_text(tp_xml *doc, const char *text, size_t len)
{
    char *copy = tp_arena_alloc(&doc->arena, len + 1);
    if (copy) {
        memcpy(copy, text, len);
        copy[len] = '\0';
    }
    return copy;
}

/* The len bytes at `at` of the text, as a string of the copy. */
static char *string_in_copy(const tp_xml_text *t, const char *at, size_t len)
{
    char *s = t->copy + (at - t->text);
    s[len] = '\0';
    return s;
}

tp_status tp_xml__open_elem_in_text(tp_xml_elem **out, tp_xml_elem *parent, tp_arena *arena,
                                    const tp_xml_text *t, const char *tag, size_t tag_len,
                                    const tp_xml_range *attrs, size_t n, tp_error *err)
{
    *out = NULL;
    tp_arena *a = parent ? parent->arena : arena;
    tp_xml_elem *e = tp_arena_alloc(a, sizeof(*e) + n * sizeof(tp_xml_attr));
    if (!e)
        return tp_fail_nomem(err);
    *e = (tp_xml_elem){.tag = string_in_copy(t, tag, tag_len),
                       .arena = a,
                       .attrs = n ? (tp_xml_attr *)(e + 1) : NULL,
                       .n_attrs = n,
                       .attrs_cap = n};
    for (size_t i = 0; i < n; i++)
        e->attrs[i] =
            (tp_xml_attr){string_in_copy(t, attrs[i].name, attrs[i].name_len),
                          string_in_copy(t, attrs[i].value, attrs[i].value_len), attrs[i].name_len};
    tp_status st = parent ? append_child(parent, e, err) : TP_OK;
    if (st == TP_OK)
        *out = e;
    return st; /* a failed element stays in the arena, unreachable */
}

static void detach(tp_xml_elem *child)
{
    tp_xml_elem *p = child->parent;
    if (!p)
        return;
    for (size_t i = 0; i < p->n_children; i++) {
        if (p->children[i] == child) {
            memmove(&p->children[i], &p->children[i + 1],
                    (p->n_children - i - 1) * sizeof(*p->children));
            p->n_children--;
            break;
        }
    }
    child->parent = NULL;
}

void tp_xml__remove(tp_xml_elem *child)
{
    detach(child);
    tp_xml__free_elem(child);
}

tp_status tp_xml__move(tp_xml_elem *child, tp_xml_elem *new_parent, tp_error *err)
{
    detach(child);
    return append_child(new_parent, child, err);
}

tp_xml_elem *tp_xml__child(const tp_xml_elem *e, const char *tag)
{
    for (size_t i = 0; i < e->n_children; i++)
        if (tp_xml__is_tag(e->children[i], tag))
            return e->children[i];
    return NULL;
}

static bool same_elem(const tp_xml_elem *a, const tp_xml_elem *b)
{
    if (strcmp(a->tag, b->tag) != 0 || a->n_attrs != b->n_attrs || a->n_children != b->n_children ||
        a->line != b->line || a->column != b->column || a->src_start != b->src_start ||
        a->src_tag_len != b->src_tag_len || a->src_close != b->src_close ||
        a->self_closing != b->self_closing)
        return false;
    for (size_t i = 0; i < a->n_attrs; i++)
        if (strcmp(a->attrs[i].name, b->attrs[i].name) != 0 ||
            strcmp(a->attrs[i].value, b->attrs[i].value) != 0)
            return false;
    return true;
}

bool tp_xml__same_tree(const tp_xml_elem *a, const tp_xml_elem *b, const tp_xml_elem **where)
{
    *where = a;
    if (!same_elem(a, b))
        return false;
    for (size_t i = 0; i < a->n_children; i++)
        if (a->children[i]->parent != a ||
            !tp_xml__same_tree(a->children[i], b->children[i], where))
            return false;
    return true;
}

tp_status tp_xml__fail(tp_error *err, tp_status code, const tp_xml *doc, const tp_xml_elem *e,
                       const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return tp_fail(err, code, doc ? doc->source : NULL, e ? e->line : 0, e ? e->column : 0,
                   "<%s>: %s", e ? e->tag : "?", msg);
}

static void stop_parse(parse_ctx *ctx, tp_status st)
{
    ctx->st = st;
    XML_StopParser(ctx->parser, XML_FALSE);
}

/*
 * The attributes of a start tag, appended in order: expat has already refused
 * duplicates, so no lookup per attribute (linear in the attribute count).
 */
static tp_status take_attrs(tp_xml_elem *e, const XML_Char **attrs, tp_error *err)
{
    size_t n = 0;
    while (attrs[2 * n])
        n++;
    if (n == 0)
        return TP_OK;
    tp_status st = elem_grow(e, (void **)&e->attrs, &e->attrs_cap, n, sizeof(*e->attrs), err);
    for (size_t i = 0; st == TP_OK && i < n; i++)
        if ((st = make_attr(e, &e->attrs[e->n_attrs], attrs[2 * i], attrs[2 * i + 1], err)) ==
            TP_OK)
            e->n_attrs++;
    return st;
}

/*
 * Text of bytes 0x01-0x7f without CR: a line is what ends at LF and a column
 * is one byte, as expat counts them; other text keeps expat's own count.
 */
bool tp_xml__plain_ascii(const char *text, size_t len)
{
    /* Eight bytes at a time: a high bit, a zero byte, or a zero byte after xor with CRs. */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    const uint64_t crs = ones * '\r';
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, text + i, sizeof(w));
        uint64_t cr = w ^ crs;
        if ((w & highs) || ((w - ones) & ~w & highs) || ((cr - ones) & ~cr & highs))
            return false;
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == 0 || c >= 0x80 || c == '\r')
            return false;
    }
    return true;
}

bool tp_xml__plain_text(const char *text, size_t len)
{
    /* Eight bytes at a time, exactly: a high bit, or a byte under 0x20 that is not TAB or LF
     * (with the high bits clear, adding 0x60 to a byte carries into its high bit iff >= 0x20). */
    const uint64_t lows = 0x7f7f7f7f7f7f7f7fULL, highs = 0x8080808080808080ULL;
    const uint64_t ones = 0x0101010101010101ULL;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, text + i, sizeof(w));
        if (!(((w - ones * 0x20) | w) & highs))
            continue; /* the common word: every byte in 0x20-0x7f */
        uint64_t low = w & lows, tab = low ^ (ones * '\t'), lf = low ^ (ones * '\n');
        uint64_t is_tab = ~((tab + lows) | tab) & highs, is_lf = ~((lf + lows) | lf) & highs;
        uint64_t control = ~(low + ones * 0x60) & highs;
        if ((w & highs) || (control & ~is_tab & ~is_lf))
            return false;
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80 || (c < 0x20 && c != '\t' && c != '\n'))
            return false;
    }
    return true;
}

void tp_xml__locate(tp_xml_lines *l, const char *text, size_t at, unsigned *line, unsigned *column)
{
    const char *p = text + l->counted, *end = text + at;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        l->line++;
        l->line_start = (size_t)(++p - text);
    }
    l->counted = at;
    *line = l->line;
    *column = (unsigned)(at - l->line_start + 1);
}

/* The start tag's line and column (1-based), counting only the bytes since the last one. */
static void locate(parse_ctx *ctx, tp_xml_elem *e)
{
    if (!ctx->ascii) {
        e->line = (unsigned)XML_GetCurrentLineNumber(ctx->parser);
        e->column = (unsigned)XML_GetCurrentColumnNumber(ctx->parser) + 1;
        return;
    }
    tp_xml__locate(&ctx->lines, ctx->text, e->src_start, &e->line, &e->column);
}

static void XMLCALL on_start(void *data, const XML_Char *tag, const XML_Char **attrs)
{
    parse_ctx *ctx = data;
    if (ctx->st != TP_OK)
        return;
    if (!ctx->current && ctx->doc->root) {
        stop_parse(ctx, TP_ERR_INTERNAL);
        return;
    }
    if (++ctx->depth > TP_MAX_XML_DEPTH) {
        stop_parse(ctx, tp_fail(ctx->err, TP_ERR_XML, ctx->doc->source,
                                (unsigned)XML_GetCurrentLineNumber(ctx->parser),
                                (unsigned)XML_GetCurrentColumnNumber(ctx->parser) + 1,
                                "<%s>: elements nested deeper than %d (topoplan's limit)", tag,
                                TP_MAX_XML_DEPTH));
        return;
    }
    tp_xml_elem *e = NULL;
    tp_status st = ctx->current ? tp_xml__add_child(&e, ctx->current, tag, ctx->err)
                                : tp_xml__new_root(&e, &ctx->doc->arena, tag, ctx->err);
    if (st != TP_OK) {
        stop_parse(ctx, st);
        return;
    }
    e->src_start = (size_t)XML_GetCurrentByteIndex(ctx->parser);
    locate(ctx, e);
    e->src_tag_len = (size_t)XML_GetCurrentByteCount(ctx->parser);
    if (!ctx->doc->root)
        ctx->doc->root = e;
    ctx->current = e;
    if ((st = take_attrs(e, attrs, ctx->err)) != TP_OK)
        stop_parse(ctx, st);
}

static void XMLCALL on_end(void *data, const XML_Char *tag)
{
    (void)tag;
    parse_ctx *ctx = data;
    ctx->depth--;
    if (ctx->st == TP_OK && ctx->current) {
        /* An empty-element tag ends with no bytes of its own. */
        int n = XML_GetCurrentByteCount(ctx->parser);
        ctx->current->self_closing = n == 0;
        ctx->current->src_close = n == 0 ? 0 : (size_t)XML_GetCurrentByteIndex(ctx->parser);
        ctx->current = ctx->current->parent;
    }
}

static void XMLCALL on_doctype(void *data, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal;
    parse_ctx *ctx = data;
    tp_fail(ctx->err, TP_ERR_XML, ctx->doc->source, (unsigned)XML_GetCurrentLineNumber(ctx->parser),
            (unsigned)XML_GetCurrentColumnNumber(ctx->parser) + 1,
            "DOCTYPE declarations are not allowed in topology files");
    stop_parse(ctx, TP_ERR_XML);
}

static tp_status expat_error(parse_ctx *ctx)
{
    return tp_fail(ctx->err, TP_ERR_XML, ctx->doc->source,
                   (unsigned)XML_GetCurrentLineNumber(ctx->parser),
                   (unsigned)XML_GetCurrentColumnNumber(ctx->parser) + 1, "malformed XML: %s",
                   XML_ErrorString(XML_GetErrorCode(ctx->parser)));
}

static tp_status run_expat(parse_ctx *ctx, const char *text, size_t len)
{
    XML_SetUserData(ctx->parser, ctx);
    XML_SetElementHandler(ctx->parser, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(ctx->parser, on_doctype);
    if (len > TP_MAX_INPUT_BYTES)
        return tp_fail(ctx->err, TP_ERR_XML, ctx->doc->source, 0, 0,
                       "input larger than %u MiB (topoplan's limit for an input file)",
                       TP_MAX_INPUT_BYTES >> 20);
    if (XML_Parse(ctx->parser, text, (int)len, XML_TRUE) == XML_STATUS_ERROR)
        return ctx->st != TP_OK ? ctx->st : expat_error(ctx);
    if (ctx->st != TP_OK)
        return ctx->st;
    if (!ctx->doc->root)
        return tp_fail(ctx->err, TP_ERR_XML, ctx->doc->source, 1, 1, "no XML element found");
    return TP_OK;
}

tp_status tp_xml__parse(tp_xml **out, const char *text, size_t len, const char *source,
                        tp_error *err)
{
    /* The plain reader takes NCCL's own files at a fraction of expat's cost
     * (expat hashes every name and normalises every value); expat reads the rest. */
    tp_status st = tp_xml__parse_plain(out, text, len, source, err);
    if (st != TP_OK || *out)
        return st;
    return tp_xml__parse_expat(out, text, len, source, err);
}

tp_status tp_xml__parse_expat(tp_xml **out, const char *text, size_t len, const char *source,
                              tp_error *err)
{
    *out = NULL;
    tp_xml *doc = calloc(1, sizeof(*doc));
    if (!doc)
        return tp_fail_nomem(err);
    tp_copy_str(doc->source, sizeof(doc->source), source ? source : "<buffer>");
    parse_ctx ctx = {.parser = XML_ParserCreate(NULL),
                     .doc = doc,
                     .err = err,
                     .st = TP_OK,
                     .text = text,
                     .ascii = tp_xml__plain_ascii(text, len),
                     .lines = {.line = 1}};
    if (!ctx.parser) {
        free(doc);
        return tp_fail_nomem(err);
    }
    tp_status st = run_expat(&ctx, text, len);
    XML_ParserFree(ctx.parser);
    if (st != TP_OK) {
        tp_xml__free(doc);
        return st;
    }
    *out = doc;
    return TP_OK;
}

/*
 * Open for reading without blocking on a FIFO that has no writer (it then
 * reads as empty); reads block again once open. *sb: what the file is.
 */
static int open_input(const char *path, struct stat *sb, tp_error *err, tp_status *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, sb) != 0) {
        *st = tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (S_ISDIR(sb->st_mode)) {
        close(fd);
        *st = tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot read: %s", strerror(EISDIR));
        return -1;
    }
    int flags = S_ISREG(sb->st_mode) ? 0 : fcntl(fd, F_GETFL); /* files never block */
    if (flags == -1 || (flags && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1)) {
        *st = tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Room for the next read: the file's size and one byte when known, else doubling. */
static tp_status read_room(char **buf, size_t *cap, size_t len, size_t hint, tp_error *err)
{
    if (len + 1 < *cap)
        return TP_OK;
    size_t want = *cap ? 2 * *cap : (hint ? hint + 2 : 65536);
    char *p = realloc(*buf, want);
    if (!p)
        return tp_fail_nomem(err);
    *buf = p;
    *cap = want;
    return TP_OK;
}

/* Every byte up to the end (or past the input limit) into *buf. */
static tp_status read_all(int fd, const struct stat *sb, const char *path, char **buf, size_t *len,
                          tp_error *err)
{
    bool regular = S_ISREG(sb->st_mode);
    size_t hint = regular && sb->st_size <= TP_MAX_INPUT_BYTES ? (size_t)sb->st_size : 0, cap = 0;
    tp_status st = TP_OK;
    for (;;) {
        if ((st = read_room(buf, &cap, *len, hint, err)) != TP_OK)
            return st;
        size_t room = cap - *len - 1;
        ssize_t n = read(fd, *buf + *len, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot read: %s", strerror(errno));
        *len += (size_t)n;
        if (*len > TP_MAX_INPUT_BYTES)
            return tp_fail(err, TP_ERR_XML, path, 0, 0,
                           "file larger than %u MiB (topoplan's limit for an input file)",
                           TP_MAX_INPUT_BYTES >> 20);
        /* A regular file read to its size is at its end: no read just to see 0 (files of
         * /proc and /sys give no size, or a wrong one: they are read to a 0). */
        if (n == 0 || (regular && hint > 0 && *len >= hint && (size_t)n < room))
            return TP_OK;
    }
}

tp_status tp_xml__read_file(char **out, size_t *len_out, const char *path, tp_error *err)
{
    *out = NULL;
    tp_status st = TP_OK;
    struct stat sb;
    int fd = open_input(path, &sb, err, &st);
    if (fd < 0)
        return st;
    char *buf = NULL;
    size_t len = 0;
    st = read_all(fd, &sb, path, &buf, &len, err);
    close(fd);
    if (st != TP_OK) {
        free(buf);
        return st;
    }
    buf[len] = '\0';
    *out = buf;
    *len_out = len;
    return TP_OK;
}

tp_status tp_read_file(char **out, size_t *len, const char *path, tp_error *err)
{
    if (!out || !len || !path)
        return tp_fail_arg(err, "tp_read_file",
                           !out   ? "out is NULL"
                           : !len ? "len is NULL"
                                  : "path is NULL");
    return tp_xml__read_file(out, len, path, err);
}

tp_status tp_xml__parse_file(tp_xml **out, const char *path, tp_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st == TP_OK)
        st = tp_xml__parse(out, text, len, path, err);
    free(text);
    return st;
}

/* Attribute text as it was in the file: expat decoded the entities, NCCL never does. */
static void write_value(FILE *out, const char *v)
{
    for (; *v; v++) {
        if (*v == '&')
            fputs("&amp;", out);
        else if (*v == '<')
            fputs("&lt;", out);
        else if (*v == '"')
            fputs("&quot;", out);
        else
            fputc(*v, out);
    }
}

static void write_elem(FILE *out, const tp_xml_elem *e, int indent)
{
    fprintf(out, "%*s<%s", indent, "", e->tag);
    for (size_t i = 0; i < e->n_attrs; i++) {
        fprintf(out, " %s=\"", e->attrs[i].name);
        write_value(out, e->attrs[i].value);
        fputc('"', out);
    }
    if (e->n_children == 0) {
        fputs("/>\n", out);
        return;
    }
    fputs(">\n", out);
    for (size_t i = 0; i < e->n_children; i++)
        write_elem(out, e->children[i], indent + 2);
    fprintf(out, "%*s</%s>\n", indent, "", e->tag);
}

tp_status tp_xml__write(FILE *out, const tp_xml_elem *root, tp_error *err)
{
    write_elem(out, root, 0);
    if (ferror(out))
        return tp_fail(err, TP_ERR_IO, NULL, 0, 0, "write error: %s", strerror(errno));
    return TP_OK;
}
