/*
 * A bump allocator: many small blocks that live and die together (a
 * system's routes, an XML tree) cost one allocation per chunk instead of one
 * each, and are freed at once.
 */
#ifndef TP_ARENA_H
#define TP_ARENA_H

#include <stddef.h>

typedef struct tp_arena_chunk tp_arena_chunk;

typedef struct tp_arena {
    tp_arena_chunk *chunks; /* owned; the newest first */
    char *next;             /* free room of the newest chunk */
    size_t left;
} tp_arena;

/* size bytes aligned for any object, not cleared; NULL when out of memory. */
void *tp_arena_alloc(tp_arena *a, size_t size);
/* As tp_arena_alloc, cleared. */
void *tp_arena_zalloc(tp_arena *a, size_t size);
/* Free every block (the arena is empty and usable again). */
void tp_arena_free(tp_arena *a);

#endif
