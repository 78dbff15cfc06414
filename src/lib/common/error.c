/* Error records, allocation helpers, the log sink and text buffers. */
#include "common/internal.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
    [TP_OK] = "ok",
    [TP_ERR_NOMEM] = "out of memory",
    [TP_ERR_IO] = "i/o error",
    [TP_ERR_XML] = "malformed xml",
    [TP_ERR_TOPOLOGY] = "invalid topology",
    [TP_ERR_CONFIG] = "invalid configuration",
    [TP_ERR_GRAPH] = "graph error",
    [TP_ERR_INTERNAL] = "internal error",
    [TP_ERR_ARGUMENT] = "invalid argument",
    [TP_ERR_USAGE] = "usage error",
};

const char *tp_status_name(tp_status st)
{
    if ((size_t)st < ARRAY_LEN(status_names) && status_names[st])
        return status_names[st];
    return "unknown status";
}

void tp_error_format(const tp_error *err, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    if (!err) {
        snprintf(buf, size, "(no error record)");
        return;
    }
    if (err->source[0] && err->line)
        snprintf(buf, size, "%s:%u:%u: %s", err->source, err->line, err->column, err->message);
    else if (err->source[0])
        snprintf(buf, size, "%s: %s", err->source, err->message);
    else
        snprintf(buf, size, "%s", err->message);
}

tp_status tp_fail(tp_error *err, tp_status code, const char *source, unsigned line, unsigned col,
                  const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    snprintf(err->source, sizeof(err->source), "%s", source ? source : "");
    err->line = line;
    err->column = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return code;
}

tp_status tp_fail_arg(tp_error *err, const char *fn, const char *what)
{
    return tp_fail(err, TP_ERR_ARGUMENT, fn, 0, 0, "%s", what);
}

tp_status tp_fail_nomem(tp_error *err)
{
    return tp_fail(err, TP_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

tp_status tp_grow(void **ptr, size_t *cap, size_t need, size_t elem_size, tp_error *err)
{
    if (need <= *cap)
        return TP_OK;
    size_t new_cap = *cap ? *cap : 8;
    while (new_cap < need)
        new_cap *= 2;
    char *p = realloc(*ptr, new_cap * elem_size);
    if (!p)
        return tp_fail_nomem(err);
    memset(p + *cap * elem_size, 0, (new_cap - *cap) * elem_size);
    *ptr = p;
    *cap = new_cap;
    return TP_OK;
}

tp_status tp_strdup(char **out, const char *s, tp_error *err)
{
    *out = strdup(s ? s : "");
    return *out ? TP_OK : tp_fail_nomem(err);
}

/* Room for more lines: a plan logs a hundred or two, so start there; every slot is written
 * before it is read (no clearing). */
static bool grow_lines(tp_log *log)
{
    size_t cap = log->cap ? 2 * log->cap : 256;
    tp_log_line *lines = realloc(log->lines, cap * sizeof(*lines));
    if (!lines)
        return false;
    log->lines = lines;
    log->cap = cap;
    return true;
}

/* A new line of the log with room for `size` bytes of text (NULL: out of memory, noted). */
static char *new_line(tp_log *log, tp_log_level level, uint64_t sub, size_t size)
{
    char *text = NULL;
    if ((log->n_lines == log->cap && !grow_lines(log)) ||
        !(text = tp_arena_alloc(&log->text, size))) {
        log->failed = true;
        return NULL;
    }
    log->lines[log->n_lines].level = level;
    log->lines[log->n_lines].sub = sub;
    log->lines[log->n_lines].text = text;
    log->n_lines++;
    return text;
}

void tp_log_vadd(tp_log *log, tp_log_level level, uint64_t sub, const char *fmt, va_list ap)
{
    if (!log || !log->enabled)
        return;
    /* Most lines fit the stack buffer: one formatting pass, then a copy into the arena. */
    char small[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    char *text = n < 0 ? NULL : new_line(log, level, sub, (size_t)n + 1);
    if (text && (size_t)n < sizeof(small))
        memcpy(text, small, (size_t)n + 1);
    else if (text)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    else
        log->failed = true;
    va_end(again);
}

void tp_log_put_sub(tp_log *log, uint64_t sub, const char *text)
{
    if (!log || !log->enabled)
        return;
    size_t n = strlen(text) + 1;
    char *copy = tp_log_begin_line(log, sub, n);
    if (copy)
        memcpy(copy, text, n);
}

char *tp_log__begin_line_grow(tp_log *log, uint64_t sub, size_t max)
{
    return new_line(log, TP_LOG_INFO, sub, max);
}

void tp_log_info_sub(tp_log *log, uint64_t sub, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tp_log_vadd(log, TP_LOG_INFO, sub, fmt, ap);
    va_end(ap);
}

void tp_log_info(tp_log *log, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tp_log_vadd(log, TP_LOG_INFO, TP_SUB_ALL, fmt, ap);
    va_end(ap);
}

void tp_log_warn(tp_log *log, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tp_log_vadd(log, TP_LOG_WARN, TP_SUB_ALL, fmt, ap);
    va_end(ap);
}

void tp_log_clear(tp_log *log)
{
    if (!log)
        return;
    tp_arena_free(&log->text);
    free(log->lines);
    log->lines = NULL;
    log->n_lines = log->cap = 0;
}

/* Account for `add` more bytes written at b->data + b->len (room known), within the limit. */
static void buf_commit(tp_buf *b, size_t add)
{
    if (b->limit && b->len + add > b->limit - 1)
        add = b->len < b->limit - 1 ? b->limit - 1 - b->len : 0;
    b->len += add;
    b->data[b->len] = '\0';
}

/* A buffer's first room: a line's worth, rather than growing 8, 16, 32... bytes at a time. */
#define TP_BUF_FIRST_ROOM 256

/* Room for `add` more bytes and a NUL (false: out of memory). */
static bool buf_room(tp_buf *b, size_t add)
{
    size_t need = b->len + add + 1;
    if (need <= b->cap)
        return true;
    if (b->cap == 0 && need < TP_BUF_FIRST_ROOM)
        need = TP_BUF_FIRST_ROOM;
    return tp_grow((void **)&b->data, &b->cap, need, 1, NULL) == TP_OK;
}

void tp_buf_printf(tp_buf *b, const char *fmt, ...)
{
    if (b->failed || !buf_room(b, 0)) {
        b->failed = true;
        return;
    }
    /* Format in place; when the room is short, grow once and format again. */
    for (int round = 0; round < 2; round++) {
        size_t room = b->cap > b->len ? b->cap - b->len : 0;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0)
            break;
        if ((size_t)n < room) {
            buf_commit(b, (size_t)n);
            return;
        }
        if (!buf_room(b, (size_t)n))
            break;
    }
    b->failed = true;
}

void tp_buf_put(tp_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->failed)
        return;
    if (!buf_room(b, n)) {
        b->failed = true;
        return;
    }
    memcpy(b->data + b->len, s, n);
    buf_commit(b, n);
}

void tp_buf_put_int(tp_buf *b, long long v)
{
    char digits[24];
    tp_put_ll(digits, v);
    tp_buf_put(b, digits);
}

int tp_format_int(char *out, int v)
{
    return (int)(tp_put_int(out, v, 0) - out);
}

/* Round x (0 <= x < 2^32) to an integer, to nearest with ties to even as printf rounds: adding
 * 2^52 leaves no fraction bit, so the sum is rounded that way (no libm call). */
static uint32_t round_even(double x)
{
    return (uint32_t)((x + 0x1p52) - 0x1p52);
}

/* tp_put_fixed_right, inlined in its entry points: one decimal folds to straight code. */
__attribute__((always_inline)) static inline char *put_fixed(char *p, float v, int decimals,
                                                             int width)
{
    static const double scale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    static const uint32_t pow10[] = {1,      10,      100,      1000,      10000,
                                     100000, 1000000, 10000000, 100000000, 1000000000};
    /* Exact: a 24-bit mantissa times 10^6 (5^6: 14 bits) fits a double's 53. */
    double scaled = fabs((double)v * scale[decimals]);
    if (!(scaled < 4e9)) /* beyond 32 bits (rare), infinite or NaN */
        return tp_put_right(p, p + snprintf(p, TP_F1_SIZE, "%.*f", decimals, (double)v), width);
    uint32_t n = round_even(scaled);
    /* The length first, then the digits from the end: no shifting, no copy. */
    int digits = decimals + 1;
    while (digits < (int)ARRAY_LEN(pow10) && n >= pow10[digits])
        digits++;
    int sign = signbit(v) != 0, len = sign + digits + (decimals > 0);
    char *end = tp_put_spaces(p, width - len) + len, *d = end;
    *d = '\0';
    for (int i = 0; i < decimals; i++, n /= 10)
        *--d = (char)('0' + n % 10);
    if (decimals > 0)
        *--d = '.';
    do {
        *--d = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    if (sign)
        *--d = '-';
    return end;
}

char *tp_put_fixed_right(char *p, float v, int decimals, int width)
{
    return put_fixed(p, v, decimals, width);
}

char *tp_put_f1_right(char *p, float v, int width)
{
    return put_fixed(p, v, 1, width);
}

int tp_format_hex(char *out, unsigned long long v, int min_digits)
{
    return (int)(tp_put_hex(out, v, min_digits, false) - out);
}

void tp_buf_put_hex(tp_buf *b, unsigned long long v, bool upper)
{
    char text[24];
    tp_put_hex(text, v, 1, upper);
    tp_buf_put(b, text);
}

void tp_buf_clear(tp_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void tp_buf_free(tp_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

const char *tp_buf_str(const tp_buf *b)
{
    return b->data ? b->data : "";
}

char *tp_printable(char *buf, size_t size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!buf || size == 0)
        return buf;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && o + 9 < size; p++) {
        bool c1 = *p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f; /* U+0080..U+009F */
        if (*p >= 0x20 && *p != 0x7f && !c1) {
            buf[o++] = (char)*p;
            continue;
        }
        for (int i = 0; i <= (int)c1; i++) {
            unsigned char b = p[i];
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[b >> 4];
            buf[o++] = hex[b & 15];
        }
        p += c1;
    }
    buf[o] = '\0';
    return buf;
}
