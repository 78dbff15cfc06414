/*
 * Memory of explored sub-searches, so that topoplan does not redo what
 * NCCL redoes. NCCL 2.22.3's search explores the next channel again after
 * every alternative of the previous ones, often from the very same link
 * state. When such a sub-search saved no graph, its only effect is the
 * number of steps it took from the budget: we keep that number and charge
 * it again instead of exploring. Results are identical to NCCL's
 * (see tp_search__memo_* in search_int.h for the rules).
 */
#include "search/search_int.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_MIN_CAP 256

uint64_t tp_search__mix(uint64_t h, uint64_t v)
{
    /* splitmix64 finaliser over the combination. */
    uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tp_search__memo_reset(tp_search_memo *m)
{
    m->generation++;
    m->count = 0;
}

void tp_search__memo_free(tp_search_memo *m)
{
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static size_t slot_of(const tp_search_memo *m, uint64_t key)
{
    return (size_t)(key >> 7) & (m->cap - 1);
}

const tp_memo_entry *tp_search__memo_find(const tp_search_memo *m, uint64_t key, uint64_t check)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        const tp_memo_entry *e = &m->slots[i];
        if (e->generation != m->generation)
            return NULL;
        if (e->key == key && e->check == check)
            return e;
    }
}

static int grow(tp_search_memo *m)
{
    size_t cap = m->cap ? m->cap * 2 : MEMO_MIN_CAP;
    tp_memo_entry *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return 0;
    tp_search_memo old = *m;
    m->slots = slots;
    m->cap = cap;
    m->count = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].generation == m->generation)
            tp_search__memo_store(m, old.slots[i].key, old.slots[i].check, old.slots[i].steps,
                                  old.slots[i].complete);
    free(old.slots);
    return 1;
}

void tp_search__memo_store(tp_search_memo *m, uint64_t key, uint64_t check, int steps, int complete)
{
    /* Keep the load under one half; a failed allocation only loses memory. */
    if ((m->count + 1) * 2 > m->cap && !grow(m))
        return;
    size_t i = slot_of(m, key);
    while (m->slots[i].generation == m->generation) {
        tp_memo_entry *e = &m->slots[i];
        if (e->key == key && e->check == check) {
            if (complete || !e->complete) {
                e->steps = steps;
                e->complete = complete;
            }
            return;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->slots[i] = (tp_memo_entry){.key = key,
                                  .check = check,
                                  .steps = steps,
                                  .complete = complete,
                                  .generation = m->generation};
    m->count++;
}
