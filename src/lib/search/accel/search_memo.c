/*
 * Memory of explored sub-searches, so that topoplan does not redo what
 * NCCL redoes. NCCL 2.22.3's search explores the next channel again after
 * every alternative of the previous ones, often from the very same link
 * state. When such a sub-search saved no graph, its only effect is the
 * number of steps it took from the budget: we keep that number and charge
 * it again instead of exploring. Results are identical to NCCL's
 * The sub-search memory is the `sub` hook of search_accel.h; its tables
 * also hold the pass memory (search_pass.c).
 */
#include "search/accel/accel.h"

#include <stdlib.h>
#include <string.h>

/* Small first: most tables of small searches hold a few entries (grown by doubling). */
#define MEMO_MIN_CAP 16

void tp_accel__table_reset(tp_memo_table *m)
{
    m->generation++;
    m->count = 0;
}

void tp_accel__table_free(tp_memo_table *m)
{
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static size_t slot_of(const tp_memo_table *m, uint64_t key)
{
    return (size_t)(key >> 7) & (m->cap - 1);
}

const tp_memo_entry *tp_accel__table_find(const tp_memo_table *m, uint64_t key, uint64_t check)
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

static int grow(tp_memo_table *m)
{
    size_t cap = m->cap ? m->cap * 2 : MEMO_MIN_CAP;
    tp_memo_entry *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return 0;
    tp_memo_table old = *m;
    m->slots = slots;
    m->cap = cap;
    m->count = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].generation == m->generation)
            tp_accel__table_store(m, old.slots[i].key, old.slots[i].check, old.slots[i].steps,
                                  old.slots[i].complete);
    free(old.slots);
    return 1;
}

void tp_accel__table_store(tp_memo_table *m, uint64_t key, uint64_t check, int steps, int complete)
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

/* Use a memory entry e for a sub-search: 1 when it settles it (budget charged). */
static int memo_apply(const tp_memo_entry *e, int *time)
{
    if (e->complete) {
        *time = *time > e->steps ? *time - e->steps : 0;
        return 1;
    }
    if (*time <= e->steps) {
        *time = 0; /* it ran out of budget with more than we have */
        return 1;
    }
    return 0;
}

/*
 * What a sub-search depends on, hashed: the bandwidth left (bw_hash1/2),
 * the channel count, the hops so far (ties) and `extra` (what else it
 * reads). Earlier channels only matter through those. Saved graphs only
 * get better during a pass, so a sub-search that saved none will save
 * none again from the same state: it is charged its step count instead of
 * being explored.
 */
static tp_status memo_free_channel(tp_accel *a, tp_graph *g, tp_search_sub kind, int n, int *time)
{
    tp_search_ctx *s = a->s;
    tp_memo *mm = &a->memo;
    /* The PCI-order reference try has its own budget: it runs even when ours is spent. */
    int own_budget =
        kind == TP_SUB_FREE_NET && g->n_channels == 0 && s->sys->nodes[TP_NODE_NVS].count == 0;
    if (*time <= 0 && !own_budget)
        return TP_OK; /* every step would return at once, with no effect */
    /* Starting afresh reads the previous channel only for crossNic's odd channels (its NET). */
    int c = g->n_channels;
    uint64_t extra =
        kind == TP_SUB_FREE_NET && g->cross_nic && (c & 1) ? (uint64_t)g->inter[(c - 1) * 2] : 0;
    uint64_t key = tp_accel__mix(mm->bw_hash1, extra);
    key = tp_accel__mix(key, ((uint64_t)(uint32_t)g->n_hops << 32) | (uint32_t)g->n_channels);
    key = tp_accel__mix(key, ((uint64_t)kind << 32) | (uint32_t)n);
    uint64_t check = tp_accel__mix(mm->bw_hash2 ^ 0x2545f4914f6cdd1dULL, key);
    const tp_memo_entry *e = tp_accel__table_find(&mm->table, key, check);
    if (e && *time <= 0)
        return TP_OK; /* any entry proves the own-budget part saves nothing */
    if (e && memo_apply(e, time))
        return TP_OK;
    int before = *time;
    unsigned long copies = mm->n_copies;
    tp_status st = tp_search__sub(s, g, kind, n, time);
    if (st == TP_OK && mm->n_copies == copies && *time >= 0)
        tp_accel__table_store(&mm->table, key, check, before - *time, *time > 0);
    return st;
}

/* What every next-channel key of g shares: the state, the channel count and hops, crossNic's NETs.
 */
static uint64_t next_base(const tp_memo *mm, const tp_graph *g)
{
    int c = g->n_channels;
    uint64_t k = tp_accel__mix(mm->bw_hash1, ((uint64_t)(uint32_t)g->n_hops << 32) | (uint32_t)c);
    /* crossNic's odd channels also read the previous channel's NETs. */
    if (g->cross_nic && (c & 1))
        k = tp_accel__mix(k, (uint64_t)g->inter[(c - 1) * 2] * 31 +
                                 (uint64_t)g->inter[(c - 1) * 2 + 1]);
    return k;
}

/* The key of the next channel's search after reading `depth` GPUs (prefix: their hash). */
static void next_key(const tp_memo *mm, uint64_t base, int depth, uint64_t prefix, uint64_t *key,
                     uint64_t *check)
{
    uint64_t k =
        tp_accel__mix(base, prefix ^ (((uint64_t)TP_SUB_NEXT_CHANNEL << 32) | (uint32_t)depth));
    *key = k;
    *check = tp_accel__mix(mm->bw_hash2 ^ 0x2545f4914f6cdd1dULL, k);
}

/* Hashes of the first d GPUs of channel c, d = 0..n. */
static void prefix_hashes(const tp_search_ctx *s, const tp_graph *g, int c, uint64_t *ph, int from,
                          int to)
{
    if (from == 0)
        ph[0] = 0x5bd1e995ULL;
    for (int d = from > 0 ? from : 1; d <= to && d <= s->n_gpus; d++)
        ph[d] = tp_accel__mix(ph[d - 1], (uint64_t)(uint32_t)g->intra[c * s->n_gpus + d - 1]);
}

/*
 * The next channel's search, through the memory. It depends on the state
 * and on the previous channel only through what its replay reads: the first
 * d GPUs, in order (TP_READ_PREV_CHANNEL records d). An entry made with d
 * GPUs read holds for any previous channel with the same first d GPUs,
 * since until it would read the next one the search takes the same
 * branches. Entries are looked up for each d recorded so far in the pass.
 */
static tp_status memo_next_channel(tp_accel *a, tp_graph *g, int *time)
{
    tp_search_ctx *s = a->s;
    tp_memo *mm = &a->memo;
    if (*time <= 0)
        return TP_OK; /* every step would return at once, with no effect */
    uint64_t ph[TP_MAX_NODES + 1], key, check;
    int known = mm->dep_max < s->n_gpus ? mm->dep_max : s->n_gpus;
    prefix_hashes(s, g, g->n_channels - 1, ph, 0, known);
    const uint64_t base = next_base(mm, g);
    for (int d = 0; d <= known; d++) {
        next_key(mm, base, d, ph[d], &key, &check);
        const tp_memo_entry *e = tp_accel__table_find(&mm->table, key, check);
        if (e && memo_apply(e, time))
            return TP_OK;
    }
    int outer_chan = mm->dep_chan, outer_depth = mm->dep_depth;
    mm->dep_chan = g->n_channels - 1;
    mm->dep_depth = 0;
    int before = *time;
    unsigned long copies = mm->n_copies;
    tp_status st = tp_search__rec(s, g, time);
    int d = mm->dep_depth;
    mm->dep_chan = outer_chan;
    mm->dep_depth = outer_depth;
    if (st != TP_OK || mm->n_copies != copies || *time < 0)
        return st;
    if (d > known)
        prefix_hashes(s, g, g->n_channels - 1, ph, known + 1, d);
    next_key(mm, next_base(mm, g), d, ph[d], &key, &check); /* the state as the search left it */
    tp_accel__table_store(&mm->table, key, check, before - *time, *time > 0);
    if (d > mm->dep_max)
        mm->dep_max = d;
    return st;
}

tp_status tp_accel__memo_sub(tp_accel *a, tp_graph *g, tp_search_sub kind, int n, int *time)
{
    if (kind == TP_SUB_NEXT_CHANNEL && a->dead.next_dead)
        return tp_accel__dead_next_channel(a, g);
    if (!a->memo.on)
        return tp_search__sub(a->s, g, kind, n, time);
    if (kind == TP_SUB_NEXT_CHANNEL)
        return memo_next_channel(a, g, time);
    return memo_free_channel(a, g, kind, n, time);
}

void tp_accel__memo_begin(tp_accel *a, const tp_graph *g)
{
    tp_memo *mm = &a->memo;
    /* The memory holds within one pass (same settings) only. */
    tp_accel__table_reset(&mm->table);
    mm->bw_hash1 = mm->bw_hash2 = 0; /* the hashes are relative to the pass start */
    mm->dep_chan = -1;
    mm->dep_depth = mm->dep_max = 0;
    mm->on = (a->use & TP_ACCEL_MEMO) && !tp_search__head_pattern(g->pattern);
}

void tp_accel__memo_read(tp_accel *a, int depth, int channel)
{
    /* The next-channel memory keys on the part of the previous channel read. */
    if (channel == a->memo.dep_chan && depth > a->memo.dep_depth)
        a->memo.dep_depth = depth;
}
