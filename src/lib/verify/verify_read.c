/* verify: reading log lines as launchers write them, and the conformance normalizer. */
#include "verify/verify.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

const char *tp_verify__section_name(int s)
{
    static const char *const names[TP_VS_COUNT + 1] = {"system",   "paths",  "search",
                                                       "channels", "tuning", "connections"};
    return s >= 0 && s <= TP_VS_CONNECTIONS ? names[s] : "?";
}

uint64_t tp_verify__hash(const char *s)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (const char *end = s + TP_VERIFY_HASHED; *s && s < end; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

/* The NCCL marker of a line: "NCCL INFO " / "NCCL WARN ", or a normalized line's own "INFO ". */
static const char *find_marker(const char *raw, bool *warn, size_t *skip)
{
    const char *info = strstr(raw, "NCCL INFO ");
    const char *wrn = strstr(raw, "NCCL WARN ");
    if (info || wrn) {
        *warn = wrn && (!info || wrn < info);
        *skip = 10;
        return *warn ? wrn : info;
    }
    /* The normalizer's own output (the conformance expected logs). */
    if (strncmp(raw, "INFO ", 5) == 0 || strncmp(raw, "WARN ", 5) == 0) {
        *warn = raw[0] == 'W';
        *skip = 5;
        return raw;
    }
    return NULL;
}

/* "[12]" -> 12; -1 when the word is not a bracketed number. */
static int bracket_number(const char *w, size_t len)
{
    if (len < 3 || w[0] != '[' || w[len - 1] != ']')
        return -1;
    int n = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        if (!isdigit((unsigned char)w[i]) || n > 1000000)
            return -1;
        n = n * 10 + (w[i] - '0');
    }
    return n;
}

/*
 * The prefix before the marker: [timestamp] [launcher:]host:pid:tid [dev] [file:line].
 * The host:pid:tid word is the one before the last [dev] word (else the last word).
 */
static void split_prefix(const char *start, const char *end, tp_vline *out)
{
    const char *words[64];
    size_t lens[64];
    int n = 0;
    for (const char *p = start; p < end && n < 64;) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (p < end && !isspace((unsigned char)*p))
            p++;
        if (p > w) {
            words[n] = w;
            lens[n++] = (size_t)(p - w);
        }
    }
    int host_word = n - 1;
    for (int i = n - 1; i >= 0; i--)
        if (bracket_number(words[i], lens[i]) >= 0) {
            out->dev = bracket_number(words[i], lens[i]);
            host_word = i - 1;
            break;
        }
    if (host_word < 0)
        return;
    /* host:pid:tid, maybe after a launcher's "[1,3]<stdout>:" or "[rank3]:" field. */
    const char *w = words[host_word], *we = w + lens[host_word];
    const char *c[3] = {NULL, NULL, NULL};
    int k = 0;
    for (const char *p = we - 1; p >= w && k < 3; p--)
        if (*p == ':')
            c[k++] = p;
    if (k < 2)
        return;
    const char *host_start = k == 3 ? c[2] + 1 : w;
    out->host = host_start;
    out->host_len = (size_t)(c[1] - host_start);
    out->pid = c[1] + 1;
    out->pid_len = (size_t)(c[0] - c[1] - 1);
}

void tp_verify__split(char *raw, tp_vline *out)
{
    *out = (tp_vline){.host = "", .pid = "", .dev = -1, .text = ""};
    size_t len = strlen(raw);
    while (len && (raw[len - 1] == '\r' || raw[len - 1] == '\n' || raw[len - 1] == ' ' ||
                   raw[len - 1] == '\t'))
        raw[--len] = '\0';
    bool warn = false;
    size_t skip = 0;
    const char *m = find_marker(raw, &warn, &skip);
    if (!m)
        return;
    out->nccl = true;
    out->warn = warn;
    out->text = m + skip;
    split_prefix(raw, m, out);
}

/* The normalizer's dropped lines: they depend on the machine, the process or paths. */
static bool dropped(const char *t)
{
    static const char *const starts[] = {
        "NCCL version ",
        "Loading topology file ",
        "Setting affinity for GPU ",
        "NVLS multicast support is ",
        "P2P Chunksize set to ",
        "ncclTopoGetCpuAffinity: Affinity for GPU ",
        "PROFILER/Plugin: Could not find",
        "Symmetric memory is ",
    };
    for (size_t i = 0; i < ARRAY_LEN(starts); i++)
        if (strncmp(t, starts[i], strlen(starts[i])) == 0)
            return true;
    if (strcmp(t, "Loading unnamed topology") == 0 || strstr(t, " set by environment to ") ||
        strstr(t, "Could not find real path "))
        return true;
    size_t len = strlen(t);
    const char *tail = " channels loaded from XML graph";
    if (len >= strlen(tail) && strcmp(t + len - strlen(tail), tail) == 0)
        return true;
    /* the calling program's back-trace: init.cc...:<line> -> <code> */
    if (strncmp(t, "init.cc", 7) == 0 && strstr(t, " -> "))
        return true;
    return false;
}

bool tp_verify__normalize(const char *text, bool warn, char *buf, size_t size)
{
    if (!warn && dropped(text))
        return false;
    size_t n = (size_t)snprintf(buf, size, "%s ", warn ? "WARN" : "INFO");
    for (const char *p = text; *p && n + 1 < size;) {
        if (strncmp(p, "comm 0x", 7) == 0 && isxdigit((unsigned char)p[7])) {
            p += 7;
            while (isxdigit((unsigned char)*p))
                p++;
            n += (size_t)snprintf(buf + n, size - n, "comm PTR");
            continue;
        }
        buf[n++] = *p++;
    }
    buf[n < size ? n : size - 1] = '\0';
    while (n > 0 && n < size && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        buf[--n] = '\0';
    return true;
}

static bool starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static const char *skip_digits(const char *s)
{
    while (isdigit((unsigned char)*s))
        s++;
    return s;
}

/* "GPU/1A000 :", "NET/0 :", "CPU/0-1 :": a paths line. */
static bool path_line(const char *t)
{
    const char *p = t;
    while (isupper((unsigned char)*p))
        p++;
    if (p == t || *p != '/')
        return false;
    const char *h = ++p;
    while (isxdigit((unsigned char)*p))
        p++;
    if (p == h)
        return false;
    if (*p == '-') {
        const char *h2 = ++p;
        while (isxdigit((unsigned char)*p))
            p++;
        if (p == h2)
            return false;
    }
    return p[0] == ' ' && p[1] == ':';
}

static bool system_line(const char *t)
{
    if (starts(t, "=== System : ") || starts(t, "=========="))
        return true;
    if (starts(t, "CPU/") && strstr(t, " ("))
        return true;
    const char *p = t;
    while (*p == ' ')
        p++;
    if (p[0] == '+' && p[1] == ' ') {
        const char *q = p + 2;
        while (isupper((unsigned char)*q) || isdigit((unsigned char)*q))
            q++;
        if (q > p + 2 && *q == '[')
            return true;
    }
    static const char *const pre[] = {"TOPO/NET : ",
                                      "Retrieving state for ",
                                      "Initialized state ",
                                      "ncclTopoPopulateNics : ",
                                      "Topology detection: ",
                                      "Local Net device counts",
                                      "Local CollNet device counts"};
    for (size_t i = 0; i < ARRAY_LEN(pre); i++)
        if (starts(t, pre[i]))
            return true;
    if (starts(t, "Rank ")) {
        const char *q = skip_digits(t + 5);
        return q > t + 5 && (strstr(q, " Net devices") || strstr(q, " CollNet devices") ||
                             strstr(q, " local Net devices"));
    }
    return false;
}

static bool search_line(const char *t, bool warn)
{
    if (!warn) {
        if (starts(t, "Pattern ") && strstr(t, ", crossNic "))
            return true;
        const char *p = t;
        while (*p == ' ')
            p++;
        const char *q = skip_digits(p);
        if (p > t && q > p && starts(q, " : "))
            return true;
        return starts(t, "Loading graphs");
    }
    static const char *const w[] = {"Could not find a path for pattern",
                                    "XML Import Channel",
                                    "XML Export Channel",
                                    "XML Graph has wrong version",
                                    "Could not open XML graph file",
                                    "No path computed",
                                    "Could not find NIC for rank"};
    for (size_t i = 0; i < ARRAY_LEN(w); i++)
        if (starts(t, w[i]))
            return true;
    return false;
}

static bool channels_line(const char *t, bool warn)
{
    if (warn)
        return starts(t, "User asked for a minimum ") || starts(t, "User asked for a maximum ");
    if (starts(t, "comm PTR ") || starts(t, "NVLS Head") || starts(t, "NVLS Trees") ||
        starts(t, "CPUs with mixed ") || starts(t, "Tuning P2P operations") ||
        starts(t, "Check P2P Type") || starts(t, "ncclP2pSchedule: ") ||
        strstr(t, " coll channels, "))
        return true;
    if (starts(t, "Tree ") || starts(t, "Ring ")) {
        const char *q = skip_digits(t + 5);
        return q > t + 5 && starts(q, " : ");
    }
    if (starts(t, "Channel ")) {
        const char *q = skip_digits(t + 8);
        if (q == t + 8 || *q != '/')
            return false;
        const char *r = skip_digits(q + 1);
        /* "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM": a run-time connection, not a ring */
        return r > q + 1 && starts(r, " :") && !strstr(r, " via ");
    }
    return strcmp(t, "Trees") == 0 || starts(t, "Trees ");
}

static bool tuning_line(const char *t, bool warn)
{
    if (starts(t, "Invalid NCCL_NTHREADS ") || starts(t, "Invalid NCCL_LL128_NTHREADS ") ||
        starts(t, "Error : no algorithm/protocol available") ||
        starts(t, "No algorithm/protocol available"))
        return true;
    if (warn)
        return false;
    static const char *const heads[] = {"  Algorithm   |",
                                        "  Protocol    |",
                                        " Max NThreads |",
                                        "threadThresholds ",
                                        "Enabled NCCL Func/Proto/Algo Matrix",
                                        "NVLS tuning: "};
    for (size_t i = 0; i < ARRAY_LEN(heads); i++)
        if (starts(t, heads[i]))
            return true;
    const char *p = t;
    while (*p == ' ')
        p++;
    static const char *const colls[] = {"Broadcast ", "Reduce ", "AllGather ", "ReduceScatter ",
                                        "AllReduce "};
    for (size_t i = 0; i < ARRAY_LEN(colls); i++)
        if (starts(p, colls[i])) {
            const char *q = p + strlen(colls[i]);
            while (*q == ' ')
                q++;
            if (*q == '|')
                return true;
        }
    const char *q = skip_digits(t);
    return q > t && starts(q, " Bytes -> Algo ");
}

int tp_verify__classify(const char *norm, int current)
{
    bool warn = norm[0] == 'W';
    const char *t = norm + 5;
    if (!warn && system_line(t))
        return TP_VS_SYSTEM;
    if (!warn && (path_line(t) || starts(t, "GPU Direct RDMA ")))
        return TP_VS_PATHS;
    if (starts(t, "P2P is disabled between") || starts(t, "Could not find intermediate GPU") ||
        starts(t, "Failed to find reverse path") || starts(t, "Error : could not find CPU close"))
        return TP_VS_PATHS;
    if (search_line(t, warn))
        return TP_VS_SEARCH;
    if (channels_line(t, warn))
        return TP_VS_CHANNELS;
    if (tuning_line(t, warn))
        return TP_VS_TUNING;
    return current;
}

tp_status tp_hashes_push(tp_hashes *a, uint64_t h, tp_error *err)
{
    if (a->n == a->cap && tp_grow((void **)&a->h, &a->cap, a->n + 1, sizeof(*a->h), err) != TP_OK)
        return TP_ERR_NOMEM;
    a->h[a->n++] = h;
    return TP_OK;
}

bool tp_verify__note(tp_verify *v, const char *fmt, ...)
{
    if (v->n_notes == v->cap_notes && tp_grow((void **)&v->notes, &v->cap_notes, v->n_notes + 1,
                                              sizeof(*v->notes), NULL) != TP_OK)
        return false;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    v->notes[v->n_notes++] = s;
    return true;
}

/* Lines of one buffer; a line over TP_VERIFY_LINE_MAX is cut there (the rest skipped). */
static tp_status buffer_lines(tp_verify *v, size_t input, tp_vline_fn *fn, void *arg, char *line,
                              tp_error *err)
{
    tp_vinput *in = &v->inputs[input];
    const char *p = in->text, *end = in->text + in->len;
    unsigned no = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t len = (size_t)(e - p);
        if (len >= TP_VERIFY_LINE_MAX)
            len = TP_VERIFY_LINE_MAX - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        if (memchr(line, '\0', len))
            line[strlen(line)] = '\0'; /* a NUL byte ends the line's text */
        in->crlf |= len && line[len - 1] == '\r';
        in->truncated = !nl;
        tp_status st = fn(v, input, ++no, line, arg, err);
        if (st != TP_OK)
            return st;
        p = nl ? nl + 1 : end;
    }
    in->n_lines = no;
    return TP_OK;
}

/* Lines of a file through zlib (which reads plain files as they are). */
static tp_status file_lines(tp_verify *v, size_t input, tp_vline_fn *fn, void *arg, char *line,
                            tp_error *err)
{
    tp_vinput *in = &v->inputs[input];
    FILE *probe = fopen(in->path, "rb");
    if (!probe)
        return tp_fail(err, TP_ERR_IO, in->path, 0, 0, "cannot open: %s", strerror(errno));
    unsigned char magic[2] = {0, 0};
    in->gzip = fread(magic, 1, 2, probe) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    fclose(probe);
    gzFile gz = gzopen(in->path, "rb");
    if (!gz)
        return tp_fail(err, TP_ERR_IO, in->path, 0, 0, "cannot open: %s", strerror(errno));
    gzbuffer(gz, 1u << 17);
    unsigned no = 0;
    tp_status st = TP_OK;
    while (st == TP_OK && gzgets(gz, line, TP_VERIFY_LINE_MAX)) {
        size_t len = strlen(line);
        bool whole = len && line[len - 1] == '\n';
        if (!whole && len == TP_VERIFY_LINE_MAX - 1) {
            /* an overlong line: keep its start, skip the rest */
            char rest[512];
            while (gzgets(gz, rest, sizeof(rest)) && rest[strlen(rest) - 1] != '\n')
                ;
            whole = true;
        }
        in->truncated = !whole;
        in->crlf |= len >= 2 && line[len - 2] == '\r';
        st = fn(v, input, ++no, line, arg, err);
    }
    int zerr = 0;
    const char *msg = gzerror(gz, &zerr);
    if (st == TP_OK && zerr != Z_OK && zerr != Z_STREAM_END)
        st = tp_fail(err, TP_ERR_IO, in->path, no + 1, 0, "cannot read: %s",
                     zerr == Z_ERRNO ? strerror(errno) : msg);
    gzclose(gz);
    in->n_lines = no;
    return st;
}

tp_status tp_verify__each_line(tp_verify *v, tp_vline_fn *fn, void *arg, tp_error *err)
{
    char *line = malloc(TP_VERIFY_LINE_MAX);
    if (!line)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    for (size_t i = 0; st == TP_OK && i < v->n_inputs; i++)
        st = v->inputs[i].text ? buffer_lines(v, i, fn, arg, line, err)
                               : file_lines(v, i, fn, arg, line, err);
    free(line);
    return st;
}
