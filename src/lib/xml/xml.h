/*
 * Stage 1: XML text -> element tree, with the file position of every
 * element. The tree is mutable because NCCL edits its topology XML
 * (fills defaults, fuses switches) before building the system.
 */
#ifndef TP_XML_H
#define TP_XML_H

#include "common/arena.h"
#include "common/internal.h"

#include <stdio.h>
#include <string.h>

typedef struct tp_xml_attr {
    char *name;      /* heap element: owned, one block holding the name, then the value */
    char *value;     /* heap element: points into name's block */
    size_t name_len; /* strlen(name): a lookup passes most attributes on their length alone */
} tp_xml_attr;

/*
 * An element lives in its document's arena (arena set: the element, its tag,
 * attributes and arrays are freed with the document; removing it only
 * detaches it) or on the heap (arena NULL: a tree built without a document,
 * freed with tp_xml__free_elem). Children take their parent's arena.
 */
typedef struct tp_xml_elem {
    char *tag; /* owned (in the element's block) */
    tp_arena *arena;
    tp_xml_attr *attrs;
    size_t n_attrs, attrs_cap;
    struct tp_xml_elem **children; /* owned */
    size_t n_children, children_cap;
    struct tp_xml_elem *parent; /* borrowed; NULL for the root */
    unsigned line, column;      /* where the start tag is; 0 for added elements */
    /* Byte offsets in the parsed text (0 for added elements): the start tag's
     * '<' and length, and the end tag's '<' (self_closing: none). */
    size_t src_start, src_tag_len, src_close;
    bool self_closing;
    /* Scratch for one walk over the tree (e.g. the element's index in a table of the walk's
     * own, saving a lookup by address): set and read by that walk only, never kept. */
    size_t walk_index;
} tp_xml_elem;

typedef struct tp_xml {
    tp_xml_elem *root; /* owned; the document element */
    char source[256];  /* file name or "<buffer>" for messages */
    tp_arena arena;    /* the parsed elements and those added under them */
    /* Built by NCCL's replayed loader (nccl_xml.h) from a text it accepts, with no element it
     * skips: what NCCL's parser keeps, within its limits. The preparation (system_xml.c
     * check_root) then skips its four walks of what the parser would cut: the attributes past
     * the 16th, the unknown elements, the <gpu> among them, and the node and child limits
     * (the replay refuses a text past a limit, and builds no tree past 16 attributes). */
    bool nccl_read;
} tp_xml;

/* Parse a document. Rejects DOCTYPE/entity declarations. Caller owns *out. */
tp_status tp_xml__parse(tp_xml **out, const char *text, size_t len, const char *source,
                        tp_error *err);
/* As tp_xml__parse, always through expat (the plain reader's reference, for tests). */
tp_status tp_xml__parse_expat(tp_xml **out, const char *text, size_t len, const char *source,
                              tp_error *err);
/*
 * The plain reader (xml_plain.c): the tree of a document written in the
 * subset of XML that NCCL's files use (ASCII, no entities, references, CR,
 * DOCTYPE or processing instructions; whitespace-free attribute values),
 * the same tree expat builds. Outside the subset *out stays NULL and the
 * status is TP_OK: the caller reads the text with expat. Fails only on memory.
 */
tp_status tp_xml__parse_plain(tp_xml **out, const char *text, size_t len, const char *source,
                              tp_error *err);

/* Text of bytes 0x01-0x7f without CR: lines end at LF, a column is a byte. */
bool tp_xml__plain_ascii(const char *text, size_t len);
/* Plain ASCII with no control byte but TAB and LF: what a plain reader's text must be (no
 * other control byte can stand anywhere in a plain document). */
bool tp_xml__plain_text(const char *text, size_t len);

/* What a byte may be in the plain subset: a name's first byte, a name byte, an
 * attribute value byte (bytes 0x80-0xff: none); and, for the replay of NCCL's
 * tokenizer (nccl_xml.c), whether it ends a name or a key there (' ', '>', '/',
 * LF, CR, '='). */
enum { TP_XML_NAME_START = 1, TP_XML_NAME = 2, TP_XML_VALUE = 4, TP_XML_NCCL_TOKEN_END = 8 };
extern const unsigned char tp_xml__byte_class[256];

/* The plain subset's pieces: an XML name, an attribute value as expat keeps
 * it byte for byte, a comment body (between "<!--" and "-->") of a text that
 * passed tp_xml__plain_text. */
bool tp_xml__plain_name(const char *s, size_t n);
bool tp_xml__plain_value(const char *s, size_t n);
bool tp_xml__plain_comment(const char *body, size_t n);

/* Line counting over plain text, forward only. */
typedef struct tp_xml_lines {
    size_t counted;    /* bytes before this index are counted */
    unsigned line;     /* line of index `counted` (start at 1) */
    size_t line_start; /* index of that line's first byte */
} tp_xml_lines;
/* Line and column (1-based, as expat counts them) of byte `at` (at least the last one asked). */
void tp_xml__locate(tp_xml_lines *l, const char *text, size_t at, unsigned *line, unsigned *column);

/* For readers: an attribute as byte ranges of the text. */
typedef struct tp_xml_range {
    const char *name, *value;
    size_t name_len, value_len;
} tp_xml_range;
/*
 * A reader's view of a document's text: the text it reads, and the document's
 * copy of it (tp_xml__keep_text) where the tree's strings stay.
 */
typedef struct tp_xml_text {
    const char *text;
    char *copy;
} tp_xml_text;
/* A copy of the text in the document's arena (NUL-terminated), or NULL when out of memory. */
char *tp_xml__keep_text(tp_xml *doc, const char *text, size_t len);
/*
 * A new element (a child of parent, or with parent NULL a root in arena) with its attribute
 * ranges (tp_xml__append_ranges; tag and ranges point into t->text), for an arena element whose
 * strings stay where they stand in t->copy: the byte after each (a delimiter the reader has passed)
 * becomes its NUL. The element and its attribute array are one block.
 */
tp_status tp_xml__open_elem_in_text(tp_xml_elem **out, tp_xml_elem *parent, tp_arena *arena,
                                    const tp_xml_text *t, const char *tag, size_t tag_len,
                                    const tp_xml_range *attrs, size_t n, tp_error *err);
/* Append n attributes in order (their names already known to be distinct). */
tp_status tp_xml__append_ranges(tp_xml_elem *e, const tp_xml_range *attrs, size_t n, tp_error *err);
/* Read a whole file into a NUL-terminated buffer the caller frees. */
tp_status tp_xml__read_file(char **out, size_t *len_out, const char *path, tp_error *err);
/* Read and parse a file. */
tp_status tp_xml__parse_file(tp_xml **out, const char *path, tp_error *err);
void tp_xml__free(tp_xml *doc);

/* Whether len bytes at a and b are the same, read a word at a time, each word within the len
 * bytes (no memcmp call: names are a few bytes, and calls cost more than the compare). */
static inline bool tp_xml__same_bytes(const char *a, const char *b, size_t len)
{
    if (len >= sizeof(uint64_t)) {
        uint64_t x, y;
        for (size_t k = 0; k + sizeof(x) < len; k += sizeof(x)) {
            memcpy(&x, a + k, sizeof(x));
            memcpy(&y, b + k, sizeof(y));
            if (x != y)
                return false;
        }
        memcpy(&x, a + len - sizeof(x), sizeof(x));
        memcpy(&y, b + len - sizeof(y), sizeof(y));
        return x == y;
    }
    if (len >= sizeof(uint32_t)) {
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, a, sizeof(x0));
        memcpy(&y0, b, sizeof(y0));
        memcpy(&x1, a + len - sizeof(x1), sizeof(x1));
        memcpy(&y1, b + len - sizeof(y1), sizeof(y1));
        return x0 == y0 && x1 == y1;
    }
    for (size_t k = 0; k < len; k++)
        if (a[k] != b[k])
            return false;
    return true;
}
/* Whether an attribute is named `name` (len bytes): most attributes differ in length. */
static inline bool tp_xml__attr_named(const tp_xml_attr *a, const char *name, size_t len)
{
    return a->name_len == len && tp_xml__same_bytes(a->name, name, len);
}
/* The index of the attribute `name` (len bytes), or -1. */
static inline int tp_xml__attr_index(const tp_xml_elem *e, const char *name, size_t len)
{
    for (size_t i = 0; i < e->n_attrs; i++)
        if (tp_xml__attr_named(&e->attrs[i], name, len))
            return (int)i;
    return -1;
}
/* Attribute value, or NULL. Inline: every stage looks attributes up per element, mostly by
 * literal names, whose length is then a constant and their compare a few word loads. */
static inline const char *tp_xml__attr(const tp_xml_elem *e, const char *name)
{
    int i = tp_xml__attr_index(e, name, strlen(name));
    return i < 0 ? NULL : e->attrs[i].value;
}
/* Set (add or replace) an attribute. */
tp_status tp_xml__set_attr(tp_xml_elem *e, const char *name, const char *value, tp_error *err);
/* Append an attribute the element does not have yet (not checked). */
tp_status tp_xml__append_attr(tp_xml_elem *e, const char *name, const char *value, tp_error *err);
/* Remove an attribute if present. */
void tp_xml__unset_attr(tp_xml_elem *e, const char *name);
/* New child appended at the end of parent's children (parent may be NULL for a root). */
tp_status tp_xml__add_child(tp_xml_elem **out, tp_xml_elem *parent, const char *tag, tp_error *err);
/* A new root element in `arena` (NULL: on the heap), e.g. a document's own. */
tp_status tp_xml__new_root(tp_xml_elem **out, tp_arena *arena, const char *tag, tp_error *err);
/* Detach child from its parent and free it with its subtree. */
void tp_xml__remove(tp_xml_elem *child);
/* Detach child (without freeing) and append it to new_parent. The child keeps its storage:
 * an arena element must stay within its document's lifetime. */
tp_status tp_xml__move(tp_xml_elem *child, tp_xml_elem *new_parent, tp_error *err);
/* Whether two names (tags, rule names) are equal: compared inline, no call (names are short
 * and tested per element). */
static inline bool tp_xml__name_eq(const char *a, const char *b)
{
    while (*b && *a == *b)
        a++, b++;
    return *a == *b;
}
/* Whether two texts are equal: often the same pointer (views borrow an element's strings), or
 * different from the first character on (names, values). */
static inline bool tp_xml__same_text(const char *a, const char *b)
{
    return a == b || (a[0] == b[0] && strcmp(a, b) == 0);
}
/* Whether the element's tag is `tag`. */
static inline bool tp_xml__is_tag(const tp_xml_elem *e, const char *tag)
{
    return tp_xml__name_eq(e->tag, tag);
}
/* First child with this tag, or NULL. */
tp_xml_elem *tp_xml__child(const tp_xml_elem *e, const char *tag);
/* Free an element subtree that has no parent. */
void tp_xml__free_elem(tp_xml_elem *e);

/*
 * Whether two trees are the same as read: tags, attributes in order, children,
 * positions and empty-element tags. *where: the first element that differs.
 */
bool tp_xml__same_tree(const tp_xml_elem *a, const tp_xml_elem *b, const tp_xml_elem **where);

/* Fail with the element's position: "source:line:col: <tag>: message". */
tp_status tp_xml__fail(tp_error *err, tp_status code, const tp_xml *doc, const tp_xml_elem *e,
                       const char *fmt, ...) TP_PRINTF(5, 6);

/*
 * Write the tree as NCCL writes its XML files: two-space indentation,
 * attributes in stored order, empty elements as <tag .../>.
 */
tp_status tp_xml__write(FILE *out, const tp_xml_elem *root, tp_error *err);

#endif
