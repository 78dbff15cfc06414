/* The bump allocator of arena.h. */
#include "common/arena.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* The first chunk is small (most arenas hold little); later ones double. */
#define TP_ARENA_FIRST_CHUNK 4096
#define TP_ARENA_MAX_CHUNK (256 * 1024)

struct tp_arena_chunk {
    tp_arena_chunk *next;
    size_t size;
    alignas(max_align_t) char data[];
};

void *tp_arena__grow(tp_arena *a, size_t size)
{
    size_t chunk = a->chunks ? a->chunks->size * 2 : TP_ARENA_FIRST_CHUNK;
    if (chunk > TP_ARENA_MAX_CHUNK)
        chunk = TP_ARENA_MAX_CHUNK;
    if (chunk < size)
        chunk = size;
    tp_arena_chunk *c = malloc(sizeof(*c) + chunk);
    if (!c)
        return NULL;
    c->next = a->chunks;
    c->size = chunk;
    a->chunks = c;
    a->next = c->data + size;
    a->left = chunk - size;
    return c->data;
}

void *tp_arena_zalloc(tp_arena *a, size_t size)
{
    void *p = tp_arena_alloc(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

void tp_arena_free(tp_arena *a)
{
    while (a->chunks) {
        tp_arena_chunk *next = a->chunks->next;
        free(a->chunks);
        a->chunks = next;
    }
    a->next = NULL;
    a->left = 0;
}
