/* Rings from the prev/next arrays (NCCL 2.22.3 rings.cc ncclBuildRings). */
#include "channels/channels_impl.h"

#include <stdlib.h>
#include <string.h>

/* Ring successor of rank r on final channel k, or -1 when out of range. */
static int ring_next(const tp_chan_ctx *x, int k, int r)
{
    int base = x->src[k] % x->nc;
    int next = x->ring_next[(size_t)base * (size_t)x->n_ranks + (size_t)r];
    return next >= 0 && next < x->n_ranks ? next : -1;
}

/* Walk channel k from `start`; returns the rank reached after n_ranks steps. */
static int walk(const tp_chan_ctx *x, int k, int start, int *out)
{
    int current = start;
    for (int i = 0; i < x->n_ranks; i++) {
        out[i] = current;
        if (current < 0)
            continue;
        current = ring_next(x, k, current);
    }
    return current;
}

/*
 * NCCL 2.22.3 rings.cc dumpLine: a space-filled line, the prefix cut to its
 * first 15 characters, then " %3d" for at most 20 ranks at 4-character steps
 * from strlen(prefix) (wider numbers overlap the next one). Written in place:
 * the prefix and the ranks' contiguous steps cover every byte before the last
 * rank's NUL, so only a line without ranks needs the spaces.
 */
static void log_ring(const tp_chan_ctx *x, int k, const int *ring)
{
    char *line = tp_log_begin_line(x->log, TP_SUB_INIT, TP_RING_LINE_LEN + 1);
    if (!line)
        return;
    /* "Channel %02d/%02d : " */
    char *p = tp_put_int(TP_PUT_LIT(line, "Channel "), k, 2);
    p = TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, "/"), x->n_channels, 2), " : ");
    /* The prefix past its 15 characters: the line's spaces, in 4-byte stores (the ranks, or the
     * spaces of a line without ranks, cover any overshoot). */
    for (char *cut = line + TP_RING_PREFIX_LEN; cut < p; cut += 4)
        memcpy(cut, "    ", 4);
    char *end = line + TP_RING_LINE_LEN, *at = p;
    for (int i = 0; i < x->n_ranks && i < TP_RING_MAX_WIDTH; i++) {
        at = p + TP_RING_RANK_STEP * (size_t)i;
        if (at + 1 + TP_INT_SIZE > line + TP_RING_LINE_LEN + 1)
            break;
        *at++ = ' ';
        end = tp_put_int_right(at, ring[i], 3);
    }
    if (end == line + TP_RING_LINE_LEN)
        memset(at, ' ', (size_t)(end - at));
    tp_log_end_line(x->log, end);
}

/* Longest ring line of 2.23's dumpLine (its buffer, NUL included). */
#define TP_RING_DIGITS_LINE 128

/*
 * 2.23 rings.cc dumpLine (TP_RULE_LOG_RING_DIGITS): "Channel %02d/%02d :", then " %*d" per rank
 * at the width of nranks-1's digits; a line that would pass 127 characters ends in "...".
 */
static void log_ring_digits(const tp_chan_ctx *x, int k, const int *ring)
{
    char line[TP_RING_DIGITS_LINE + 2 + TP_INT_SIZE];
    char *p = tp_put_int(TP_PUT_LIT(line, "Channel "), k, 2);
    p = TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, "/"), x->n_channels, 2), " :");
    char digits[TP_INT_SIZE];
    int width = (int)(tp_put_int(digits, x->n_ranks - 1, 0) - digits);
    bool cut = false;
    for (int i = 0; i < x->n_ranks && p - line < TP_RING_DIGITS_LINE - 1; i++) {
        *p++ = ' ';
        p = tp_put_int_right(p, ring[i], width);
        if (p - line >= TP_RING_DIGITS_LINE) {
            cut = true;
            break;
        }
    }
    if (cut) {
        p = line + TP_RING_DIGITS_LINE - 4;
        p = TP_PUT_LIT(p, "...");
    }
    *p = '\0';
    tp_log_put_sub(x->log, TP_SUB_INIT, line);
}

/* NCCL's checks of one ring from the reported rank: it loops back, it holds every rank. */
static tp_status check_ring(const tp_chan_ctx *x, int k, const int *ring, int end,
                            unsigned char *seen, tp_error *err)
{
    int me = x->job->rank;
    if (end != me) {
        tp_log_warn(x->log, "Error : ring %d does not loop back to start (%d != %d)", k, end, me);
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "ring %d does not loop back", k);
    }
    memset(seen, 0, (size_t)x->n_ranks);
    for (int i = 0; i < x->n_ranks; i++)
        if (ring[i] >= 0)
            seen[ring[i]] = 1;
    for (int r = 0; r < x->n_ranks; r++) {
        if (!seen[r]) {
            tp_log_warn(x->log, "Error : ring %d does not contain rank %d", k, r);
            return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "ring %d misses rank %d", k, r);
        }
    }
    return TP_OK;
}

tp_status tp_chan__build_rings(tp_chan_ctx *x, tp_error *err)
{
    size_t nr = (size_t)x->n_ranks;
    tp_channels *ch = x->ch;
    int *mine = tp_chan__alloc(x, nr, sizeof(int));
    unsigned char *seen = tp_chan__alloc(x, nr, 1);
    ch->rings = malloc(((size_t)x->n_channels * nr + 1) * sizeof(int));
    if (!mine || !seen || !ch->rings)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    int me = x->job->rank;
    for (int k = 0; k < x->n_channels && st == TP_OK; k++) {
        /* Reports show every ring from rank 0, as rank 0 prints it; another rank checks the
         * ring from itself. */
        int *ring = ch->rings + (size_t)k * nr, end = walk(x, k, 0, ring);
        if (me != 0)
            end = walk(x, k, me, ring = mine);
        else if (tp_profile_has(tp_config__profile(x->cfg), TP_RULE_LOG_RING_DIGITS))
            log_ring_digits(x, k, ring);
        else
            log_ring(x, k, ring);
        st = check_ring(x, k, ring, end, seen, err);
    }
    return st;
}
