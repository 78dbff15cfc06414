/*
 * A bump allocator: many small blocks that live and die together (a
 * system's routes, an XML tree) cost one allocation per chunk instead of one
 * each, and are freed at once.
 */
#ifndef TP_ARENA_H
#define TP_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct tp_arena_chunk tp_arena_chunk;

typedef struct tp_arena {
    tp_arena_chunk *chunks; /* owned; the newest first */
    char *next;             /* free room of the newest chunk */
    size_t left;
} tp_arena;

/* A new chunk holding size bytes (already rounded): tp_arena_alloc's slow path. */
void *tp_arena__grow(tp_arena *a, size_t size);

/* size bytes aligned for any object, not cleared; NULL when out of memory. (Inline: the
 * common case is a bump of the newest chunk, taken per route and per XML attribute.) */
static inline void *tp_arena_alloc(tp_arena *a, size_t size)
{
    size_t align = _Alignof(max_align_t);
    size = size ? (size + align - 1) / align * align : align;
    if (size > a->left)
        return tp_arena__grow(a, size);
    void *p = a->next;
    a->next += size;
    a->left -= size;
    return p;
}
/* Give back the room of the newest block from `end` on (end inside it): a block sized for the
 * most its text could take keeps only what was written. The arena stays aligned. */
static inline void tp_arena_shrink(tp_arena *a, void *end)
{
    uintptr_t align = _Alignof(max_align_t);
    char *keep = (char *)(((uintptr_t)end + align - 1) & ~(align - 1));
    a->left += (size_t)(a->next - keep);
    a->next = keep;
}
/* As tp_arena_alloc, cleared. */
void *tp_arena_zalloc(tp_arena *a, size_t size);
/* Free every block (the arena is empty and usable again). */
void tp_arena_free(tp_arena *a);

#endif
