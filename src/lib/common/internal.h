/* Helpers shared by every library module: errors, arrays, the log sink. */
#ifndef TP_INTERNAL_H
#define TP_INTERNAL_H

#include "common/arena.h"
#include "topoplan.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define TP_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define TP_PRINTF(fmt_idx, arg_idx)
#endif

/* Fill err (if not NULL) and return code. line/col may be 0. */
tp_status tp_fail(tp_error *err, tp_status code, const char *source, unsigned line, unsigned col,
                  const char *fmt, ...) TP_PRINTF(6, 7);
/* A NULL or out-of-range argument of public function `fn` (TP_ERR_ARGUMENT). */
tp_status tp_fail_arg(tp_error *err, const char *fn, const char *what);
/* Shorthand for an out-of-memory failure. */
tp_status tp_fail_nomem(tp_error *err);

/* Grow *ptr (an array of elem_size items with capacity *cap) to hold at least
 * `need` items. New memory is zeroed. */
tp_status tp_grow(void **ptr, size_t *cap, size_t need, size_t elem_size, tp_error *err);

/* strdup that reports through err. */
tp_status tp_strdup(char **out, const char *s, tp_error *err);

/*
 * The log sink: the lines NCCL would print at NCCL_DEBUG=INFO, collected in
 * memory (the library never prints). A NULL sink, or a disabled one, drops
 * lines: only the reported rank's pipeline logs.
 */
typedef enum tp_log_level { TP_LOG_INFO, TP_LOG_WARN } tp_log_level;

/*
 * NCCL 2.22.3 debug subsystems (nccl_common.h ncclDebugLogSubSys): every INFO
 * line carries the flags of its INFO(flags, ...) call and prints only if they
 * meet the NCCL_DEBUG_SUBSYS mask; WARN and back-traces use NCCL_ALL.
 */
#define TP_SUB_INIT UINT64_C(0x1)
#define TP_SUB_COLL UINT64_C(0x2)
#define TP_SUB_P2P UINT64_C(0x4)
#define TP_SUB_SHM UINT64_C(0x8)
#define TP_SUB_NET UINT64_C(0x10)
#define TP_SUB_GRAPH UINT64_C(0x20)
#define TP_SUB_TUNING UINT64_C(0x40)
#define TP_SUB_ENV UINT64_C(0x80)
#define TP_SUB_ALLOC UINT64_C(0x100)
#define TP_SUB_CALL UINT64_C(0x200)
#define TP_SUB_PROXY UINT64_C(0x400)
#define TP_SUB_NVLS UINT64_C(0x800)
#define TP_SUB_BOOTSTRAP UINT64_C(0x1000)
#define TP_SUB_REG UINT64_C(0x2000)
#define TP_SUB_PROFILE UINT64_C(0x4000)
#define TP_SUB_ALL UINT64_MAX

typedef struct tp_log_line {
    tp_log_level level;
    uint64_t sub; /* TP_SUB_* flags of NCCL's INFO/WARN call */
    char *text;   /* in the log's text arena, without the "NCCL INFO " prefix */
} tp_log_line;

typedef struct tp_log {
    tp_log_line *lines;
    size_t n_lines, cap;
    tp_arena text; /* every line's text: one allocation per chunk, not per line */
    bool enabled;
    bool failed; /* an allocation failed: lines are incomplete */
} tp_log;

/* An NCCL INFO line with the subsystem flags of NCCL's INFO call. */
void tp_log_info_sub(tp_log *log, uint64_t sub, const char *fmt, ...) TP_PRINTF(3, 4);
/* An INFO line tagged TP_SUB_ALL: notes and findings, never filtered. */
void tp_log_info(tp_log *log, const char *fmt, ...) TP_PRINTF(2, 3);
/* NCCL 2.22.3 WARN: always NCCL_ALL. */
void tp_log_warn(tp_log *log, const char *fmt, ...) TP_PRINTF(2, 3);
void tp_log_vadd(tp_log *log, tp_log_level level, uint64_t sub, const char *fmt, va_list ap);
/* An INFO line already formatted (no printf pass: lines printed by the hundred). */
void tp_log_put_sub(tp_log *log, uint64_t sub, const char *text);
/* tp_log_begin_line's slow path: the line table grows. */
char *tp_log__begin_line_grow(tp_log *log, uint64_t sub, size_t max);
/* An INFO line written in place (no copy): room for `max` bytes, its NUL included, or NULL
 * when the log is off or out of memory (skip the line). End it with tp_log_end_line before
 * the next line. (Inline: a bump of the line table and of the text arena, taken per line.) */
static inline char *tp_log_begin_line(tp_log *log, uint64_t sub, size_t max)
{
    if (!log || !log->enabled)
        return NULL;
    if (log->n_lines == log->cap)
        return tp_log__begin_line_grow(log, sub, max);
    char *text = tp_arena_alloc(&log->text, max);
    if (!text) {
        log->failed = true;
        return NULL;
    }
    tp_log_line *line = &log->lines[log->n_lines++];
    line->level = TP_LOG_INFO;
    line->sub = sub;
    return line->text = text;
}
/* The line begun last ends at `end` (where its NUL is or goes); its unused room is given back. */
static inline void tp_log_end_line(tp_log *log, char *end)
{
    *end = '\0';
    tp_arena_shrink(&log->text, end + 1);
}
void tp_log_clear(tp_log *log);
/* The NCCL_DEBUG_SUBSYS mask (TP_SUB_*) of a value; NULL: INIT,ENV,GRAPH. */
uint64_t tp_log__subsys_mask(const char *text);

/*
 * A growable text buffer, for building NCCL lines piece by piece.
 * `limit` (0: none) reproduces NCCL's fixed-size line buffers: text past
 * limit-1 bytes is cut, as snprintf into a char[limit] would.
 */
typedef struct tp_buf {
    char *data;
    size_t len, cap, limit;
    bool failed;
} tp_buf;

void tp_buf_printf(tp_buf *b, const char *fmt, ...) TP_PRINTF(2, 3);
/* Append s, or v in decimal: no formatting on hot report paths. */
void tp_buf_put(tp_buf *b, const char *s);
void tp_buf_put_int(tp_buf *b, long long v);
#define TP_F1_SIZE 64
/* printf's "%d" of v into out (at least TP_INT_SIZE bytes), its length returned. */
#define TP_INT_SIZE 12
int tp_format_int(char *out, int v);
/*
 * printf's "%*.*f" of a float at p: decimals 0..6, right-aligned in `width`
 * columns (room for width and TP_F1_SIZE bytes). The float times 10^decimals
 * is exact in a double, so rounding it to an integer (ties to even) is
 * printf's rounding; very large values, infinities and NaNs go through
 * snprintf. Written in place, its length known first (log lines print
 * hundreds): the end returned.
 */
char *tp_put_fixed_right(char *p, float v, int decimals, int width);
/* printf's "%.Nf" of a float into out (TP_F1_SIZE bytes), N = decimals: its length. */
static inline int tp_format_fixed(char *out, float v, int decimals)
{
    return (int)(tp_put_fixed_right(out, v, decimals, 0) - out);
}
/* tp_put_fixed_right with one decimal ("%*.1f"): paths, system and tuning lines. */
char *tp_put_f1_right(char *p, float v, int width);
/* printf's "%.1f" into out (TP_F1_SIZE bytes): its length. */
static inline int tp_format_f1(char *out, float v)
{
    return (int)(tp_put_f1_right(out, v, 0) - out);
}
/* printf's "%0Nllx" (N = min_digits) of v into out (at least 24 bytes), its length returned. */
int tp_format_hex(char *out, unsigned long long v, int min_digits);

/* The bits of a float: hash keys, and +0.0 is the one float whose bits are all 0. */
static inline uint32_t tp_float_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return bits;
}

/* snprintf(dst, size, "%s", src) without printf (size > 0): src cut to size - 1 bytes. */
static inline void tp_copy_str(char *dst, size_t size, const char *src)
{
    size_t n = 0;
    for (; n + 1 < size && src[n]; n++)
        dst[n] = src[n];
    dst[n] = '\0';
}

/*
 * Line pieces written at p (room assumed; a NUL follows), the end returned:
 * log lines come by the hundred, and printf would be most of their cost.
 */
static inline char *tp_put_str(char *p, const char *s)
{
    while ((*p = *s++))
        p++;
    return p;
}
/* n bytes of s at p, then a NUL: the end returned. */
static inline char *tp_put_n(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    p[n] = '\0';
    return p + n;
}
/* A string literal at p, its length known when compiled (a few moves, no byte loop). */
#define TP_PUT_LIT(p, lit) tp_put_n((p), "" lit, sizeof(lit) - 1)
/* printf's "%d", or "%0Nd" for zero_width N > 0. */
static inline char *tp_put_int(char *p, int v, int zero_width)
{
    if (v >= 0 && v < 100 && zero_width <= 2) { /* ranks, channels: mostly one or two digits */
        if (v >= 10 || zero_width == 2)
            *p++ = (char)('0' + v / 10);
        p[0] = (char)('0' + v % 10);
        p[1] = '\0';
        return p + 1;
    }
    if (v > -10 && v < 0 && zero_width <= 1) { /* -1: no peer */
        p[0] = '-';
        p[1] = (char)('0' - v);
        p[2] = '\0';
        return p + 2;
    }
    char digits[TP_INT_SIZE], *d = digits + sizeof(digits);
    unsigned u = v < 0 ? 0U - (unsigned)v : (unsigned)v;
    do {
        *--d = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    int len = (int)(digits + sizeof(digits) - d);
    if (v < 0)
        *p++ = '-';
    for (int pad = len + (v < 0); pad < zero_width; pad++)
        *p++ = '0';
    while (d < digits + sizeof(digits))
        *p++ = *d++;
    *p = '\0';
    return p;
}
/* n spaces at p (no NUL; none when n <= 0), in overlapping word stores rather than a byte loop
 * the compiler makes a memset call of: the end. */
static inline char *tp_put_spaces(char *p, int n)
{
    if (n >= 4) {
        for (int i = 0; i + 4 < n; i += 4)
            memcpy(p + i, "    ", 4);
        memcpy(p + n - 4, "    ", 4);
    } else if (n >= 2) {
        memcpy(p, "  ", 2);
        memcpy(p + n - 2, "  ", 2);
    } else if (n == 1) {
        *p = ' ';
    }
    return n > 0 ? p + n : p;
}
/* The length of printf's "%d" of v. */
static inline int tp_int_len(int v)
{
    int len = 1 + (v < 0);
    for (unsigned u = v < 0 ? 0U - (unsigned)v : (unsigned)v; u >= 10; u /= 10)
        len++;
    return len;
}
/* printf's "%*d" at p: right-aligned in `width` columns, its length known first (no shifting):
 * the end. */
static inline char *tp_put_int_right(char *p, int v, int width)
{
    return tp_put_int(tp_put_spaces(p, width - tp_int_len(v)), v, 0);
}
/* s right-aligned in `width` columns ("%*s"): the end. */
static inline char *tp_put_str_right(char *p, const char *s, int width)
{
    int len = 0;
    while (s[len])
        len++;
    return tp_put_str(tp_put_spaces(p, width - len), s);
}
/* printf's "%lld". */
static inline char *tp_put_ll(char *p, long long v)
{
    char digits[24], *d = digits + sizeof(digits);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--d = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--d = '-';
    while (d < digits + sizeof(digits))
        *p++ = *d++;
    *p = '\0';
    return p;
}
/* printf's "%0Nllx" (upper: "%0NllX"), N = min_digits. */
static inline char *tp_put_hex(char *p, unsigned long long v, int min_digits, bool upper)
{
    const char *digit = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char digits[24], *d = digits + sizeof(digits);
    do {
        *--d = digit[v & 0xf];
        v >>= 4;
        min_digits--;
    } while (v || min_digits > 0);
    while (d < digits + sizeof(digits))
        *p++ = *d++;
    *p = '\0';
    return p;
}
/* printf's "%.1f" of v at p: the end. */
static inline char *tp_put_f1(char *p, float v)
{
    return tp_put_f1_right(p, v, 0);
}
/* The text from start to p right-aligned in `width` columns ("%*s"): its new end. */
static inline char *tp_put_right(char *start, char *p, int width)
{
    int len = (int)(p - start), pad = width - len;
    if (pad <= 0)
        return p;
    for (int i = len; i >= 0; i--) /* the NUL too */
        start[i + pad] = start[i];
    for (int i = 0; i < pad; i++)
        start[i] = ' ';
    return p + pad;
}
/* v in hexadecimal as %llx (upper: %llX) prints it. */
void tp_buf_put_hex(tp_buf *b, unsigned long long v, bool upper);
void tp_buf_clear(tp_buf *b);
void tp_buf_free(tp_buf *b);
/* The text so far ("" when empty); valid until the next change. */
const char *tp_buf_str(const tp_buf *b);

#endif
