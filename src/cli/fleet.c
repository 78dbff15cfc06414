/*
 * Fleet check: `check --baseline BASE.xml NODE...` with several nodes or
 * folders. Every node is planned for the same job as the baseline and
 * compared with it (the same comparison as a one-node check), in parallel
 * threads; a deviating node is then planned as one node among baseline nodes
 * to measure what it costs a job. Results print in input order: one line
 * per node, then a table of deviation kinds (text), or one JSON object per
 * node and a summary object (--format json: JSON lines).
 *
 * Node files of one model differ from machine to machine mostly in their NIC
 * GUIDs. Nodes with the same tp_compare_key (the tree the plan reads, each
 * GUID standing for its class under NCCL's readings of it) provably have the
 * same plan and comparison: they share one check. A node whose key cannot be
 * made (a file the plan cannot read) shares nothing.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLEET_MAX_KINDS 64 /* distinct deviation titles counted in the summary */
#define FLEET_MAX_THREADS 64
#define FLEET_SCHEMA "topoplan.fleet-check" /* JSON lines: every line names it */
#define FLEET_SCHEMA_VERSION 2

typedef struct fleet_kind {
    const char *title; /* static (the comparison's titles) */
    int nodes, findings;
} fleet_kind;

/* One node's result. */
typedef struct fleet_node {
    const char *path;
    tp_status status; /* TP_OK, or why the node could not be checked */
    char message[320];
    int errors, warnings;
    int n_kinds;
    fleet_kind kinds[16];    /* this node's deviation titles, with counts */
    cli_job_effect_t effect; /* deviating nodes only */
    bool done;               /* checked (under lock): nodes of the same text wait for it */
    /* What `check` prints on stderr for the node: "lint: ...", "partial file: ..." and
     * "setting: ..." lines (owned by the node checked for this text, `kind`; NULL: none). */
    char *notes;
    size_t kind; /* the node whose check this one took (itself when checked on its own) */
} fleet_node;

/* A checked node's sharing key and the node that holds its result. */
typedef struct fleet_seen {
    uint64_t hash;
    char *canon; /* the key (owned) */
    size_t len;
    size_t node; /* index of the node checked for it */
} fleet_seen;

typedef struct fleet {
    const cli_input *baseline;
    const tp_plan *base_plan;
    tp_job job;
    cli_ctx *ctx;
    fleet_node *nodes;
    size_t n_nodes;
    size_t next;      /* next node to take (under lock) */
    fleet_seen *seen; /* checked keys (under lock) */
    size_t n_seen, cap_seen;
    size_t shared; /* nodes that took another node's result */
    pthread_mutex_t lock;
    pthread_cond_t cond; /* a node was checked */
} fleet;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool ends_with_xml(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".xml") == 0;
}

/* Append path (kept by the context) to the list. */
static int add_path(cli_ctx *ctx, const char ***list, size_t *n, size_t *cap, char *path)
{
    if (!path || cli_keep(ctx, path) != 0)
        return -1;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        const char **grown = realloc(*list, c * sizeof(*grown));
        if (!grown)
            return -1;
        *list = grown;
        *cap = c;
    }
    (*list)[(*n)++] = path;
    return 0;
}

/* The .xml files of a folder, sorted by name. */
static int add_folder(cli_ctx *ctx, const char ***list, size_t *n, size_t *cap, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_message("%s: cannot read the folder: %s", dir, strerror(errno));
        return CLI_EXIT_IO;
    }
    size_t first = *n;
    struct dirent *e;
    int st = 0;
    while (st == 0 && (errno = 0, e = readdir(d)) != NULL) {
        if (!ends_with_xml(e->d_name))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (p)
            snprintf(p, len, "%s/%s", dir, e->d_name);
        st = add_path(ctx, list, n, cap, p) ? CLI_EXIT_IO : 0;
    }
    if (st == 0 && errno != 0) {
        cli_message("%s: cannot read the folder: %s", dir, strerror(errno));
        st = CLI_EXIT_IO;
    }
    closedir(d);
    qsort(*list + first, *n - first, sizeof(**list), by_name);
    return st;
}

/* NODE arguments: files as given, folders expanded. */
static int node_list(cli_ctx *ctx, const cli_args *a, const char ***list, size_t *n)
{
    size_t cap = 0;
    *list = NULL;
    *n = 0;
    for (int i = 0; i < a->n_rest; i++) {
        struct stat sb;
        int st = 0;
        if (stat(a->rest[i], &sb) == 0 && S_ISDIR(sb.st_mode))
            st = add_folder(ctx, list, n, &cap, a->rest[i]);
        else if (add_path(ctx, list, n, &cap, strdup(a->rest[i])) != 0)
            st = CLI_EXIT_IO;
        if (st)
            return st;
    }
    return 0;
}

static void count_kind(fleet_node *r, const char *title)
{
    for (int i = 0; i < r->n_kinds; i++) {
        if (strcmp(r->kinds[i].title, title) == 0) {
            r->kinds[i].findings++;
            return;
        }
    }
    if (r->n_kinds < (int)(sizeof(r->kinds) / sizeof(r->kinds[0])))
        r->kinds[r->n_kinds++] = (fleet_kind){.title = title, .nodes = 1, .findings = 1};
}

static uint64_t hash_text(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The node already checked with this key, or SIZE_MAX (then the key is recorded for i). */
static size_t seen_or_claim(fleet *f, char **canon, size_t len, size_t i)
{
    uint64_t h = hash_text(*canon, len);
    size_t found = SIZE_MAX;
    pthread_mutex_lock(&f->lock);
    for (size_t k = 0; k < f->n_seen && found == SIZE_MAX; k++)
        if (f->seen[k].hash == h && f->seen[k].len == len &&
            memcmp(f->seen[k].canon, *canon, len) == 0)
            found = f->seen[k].node;
    if (found == SIZE_MAX && f->n_seen == f->cap_seen) {
        size_t cap = f->cap_seen ? 2 * f->cap_seen : 16;
        fleet_seen *grown = realloc(f->seen, cap * sizeof(*grown));
        if (grown) {
            f->seen = grown;
            f->cap_seen = cap;
        }
    }
    if (found == SIZE_MAX && f->n_seen < f->cap_seen) {
        f->seen[f->n_seen++] = (fleet_seen){.hash = h, .canon = *canon, .len = len, .node = i};
        *canon = NULL; /* the table owns it */
    }
    pthread_mutex_unlock(&f->lock);
    return found;
}

/* Append one "PREFIX: TEXT" line to a node's notes. */
static void add_note(char **notes, size_t *len, const char *prefix, const char *text)
{
    size_t add = strlen(prefix) + strlen(text) + 3;
    char *grown = realloc(*notes, *len + add + 1);
    if (!grown)
        return; /* advisory: a note lost to memory */
    *notes = grown;
    *len += (size_t)snprintf(grown + *len, add + 1, "%s: %s\n", prefix, text);
}

/* The node's provider-file lints and setting notes, as a one-node check prints them. */
static char *node_notes(const fleet *f, const tp_plan *plan)
{
    char *notes = NULL;
    size_t len = 0;
    tp_lints *l = NULL;
    tp_findings *s = NULL;
    tp_error err = {0};
    if (tp_lint_plan(&l, plan, NULL, &err) == TP_OK)
        for (size_t i = 0; i < tp_lints_count(l); i++)
            add_note(&notes, &len, tp_lints_is_partial(l, i) ? "partial file" : "lint",
                     tp_lints_message(l, i));
    if (tp_setting_notes(&s, f->ctx->cfg, plan, &err) == TP_OK)
        for (int i = 0; i < tp_findings_count(s); i++)
            add_note(&notes, &len, "setting", tp_findings_get(s, i));
    tp_lints_free(l);
    tp_findings_free(s);
    return notes;
}

/* Plan one node, compare it with the baseline; a deviating node gets its job effect. */
static void check_text(fleet *f, fleet_node *r, const char *text, size_t len)
{
    tp_plan *plan = NULL;
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    r->status = tp_plan_buffer(&plan, text, len, r->path, &f->job, f->ctx->cfg, &err);
    if (r->status == TP_OK) {
        r->notes = node_notes(f, plan);
        r->status = tp_compare_plans(&cmp, f->base_plan, plan, &err);
    }
    if (r->status != TP_OK) {
        cli_name_flag(&err);
        tp_error_format(&err, r->message, sizeof(r->message));
    }
    /* A deviating node's cost to a job rates its root causes (tp_comparison_set_job). */
    if (r->status == TP_OK && tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR) +
                                      tp_comparison_count_severity(cmp, TP_SEVERITY_WARN) >
                                  0)
        cli_job_effect(&r->effect, f->baseline, r->path, f->job.n_nodes, f->ctx, cmp);
    for (size_t i = 0; r->status == TP_OK && i < tp_comparison_count(cmp); i++) {
        const tp_difference *d = tp_comparison_get(cmp, i);
        if (d->severity == TP_SEVERITY_INFO || d->consequence)
            continue;
        r->errors += d->severity == TP_SEVERITY_ERROR;
        r->warnings += d->severity == TP_SEVERITY_WARN;
        count_kind(r, d->title);
    }
    tp_comparison_free(cmp);
    tp_plan_free(plan);
}

/* Node i: read it; a node whose key was checked waits for and takes that result. */
static void check_node(fleet *f, size_t i)
{
    fleet_node *r = &f->nodes[i];
    char *text = NULL, *canon = NULL;
    size_t len = 0, clen = 0, same = SIZE_MAX;
    tp_error err = {0}, unshared = {0};
    r->status = tp_read_file(&text, &len, r->path, &err);
    if (r->status == TP_OK &&
        tp_compare_key(&canon, &clen, f->base_plan, text, len, &unshared) == TP_OK)
        same = seen_or_claim(f, &canon, clen, i);
    if (r->status != TP_OK) {
        tp_error_format(&err, r->message, sizeof(r->message));
    } else if (same == SIZE_MAX) {
        check_text(f, r, text, len);
        pthread_mutex_lock(&f->lock);
        r->done = true;
        pthread_cond_broadcast(&f->cond);
        pthread_mutex_unlock(&f->lock);
    } else {
        pthread_mutex_lock(&f->lock);
        while (!f->nodes[same].done)
            pthread_cond_wait(&f->cond, &f->lock);
        bool shared = f->nodes[same].status == TP_OK;
        f->shared += shared;
        pthread_mutex_unlock(&f->lock);
        const char *path = r->path;
        if (shared)
            *r = f->nodes[same];
        r->path = path;
        r->kind = shared ? same : i;
        if (!shared)
            r->notes = NULL;
        if (!shared) /* errors name their own file */
            check_text(f, r, text, len);
    }
    free(canon);
    free(text);
}

static void *worker(void *arg)
{
    fleet *f = arg;
    for (;;) {
        pthread_mutex_lock(&f->lock);
        size_t i = f->next++;
        pthread_mutex_unlock(&f->lock);
        if (i >= f->n_nodes)
            return NULL;
        f->nodes[i].kind = i;
        check_node(f, i);
    }
}

static int thread_count(size_t n_nodes)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long n = cpus < 1 ? 1 : cpus > FLEET_MAX_THREADS ? FLEET_MAX_THREADS : cpus;
    return (int)((size_t)n < n_nodes ? (size_t)n : (n_nodes ? n_nodes : 1));
}

static void run_threads(fleet *f)
{
    pthread_t threads[FLEET_MAX_THREADS];
    int n = thread_count(f->n_nodes), started = 0;
    for (int i = 0; i < n; i++)
        started += pthread_create(&threads[started], NULL, worker, f) == 0;
    if (started == 0)
        worker(f); /* no thread could start: do the work here */
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
}

/* ---- output ---- */

static void text_node(FILE *out, const fleet_node *r, const char *base)
{
    char path[1100]; /* file names may hold control bytes: escaped for the terminal */
    tp_printable(path, sizeof(path), r->path);
    if (r->status != TP_OK) {
        fprintf(out, "%s: ERROR ", path);
        cli_put_printable(out, r->message);
        fputc('\n', out);
        return;
    }
    if (r->errors + r->warnings == 0) {
        fprintf(out, "%s: ok\n", path);
        return;
    }
    fprintf(out, "%s: DEVIATES (%d error%s, %d warning%s):", path, r->errors,
            r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s");
    for (int i = 0; i < r->n_kinds; i++)
        fprintf(out, "%s %s x%d", i ? "," : "", r->kinds[i].title, r->kinds[i].findings);
    fputc('\n', out);
    fputs("  ", out);
    cli_job_effect_text(out, &r->effect, base, path);
}

/* Paths and titles as JSON strings: bytes of a name that are not UTF-8 as \\ufffd. */
static void json_str(FILE *out, const char *s)
{
    tp_json_write_string(out, s);
}

/* , "lints": [{"partial", "message"}], "setting_notes": [...]: the node's notes. */
static void json_notes(FILE *out, const char *notes)
{
    static const char *const keys[2] = {"lints", "setting_notes"};
    for (int k = 0; k < 2; k++) {
        fprintf(out, ", \"%s\": [", keys[k]);
        bool any = false;
        for (const char *p = notes; p && *p;) {
            const char *nl = strchr(p, '\n'), *colon = strstr(p, ": ");
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            char line[2048];
            snprintf(line, sizeof(line), "%.*s", (int)n, p);
            p += n + (nl != NULL);
            bool setting = strncmp(line, "setting: ", 9) == 0;
            if (!colon || setting != (k == 1))
                continue;
            fputs(any ? ", " : "", out);
            any = true;
            const char *msg = strstr(line, ": ") + 2;
            if (k == 0)
                fprintf(out, "{\"partial\": %s, \"message\": ",
                        strncmp(line, "partial file: ", 14) == 0 ? "true" : "false");
            json_str(out, msg);
            if (k == 0)
                fputc('}', out);
        }
        fputc(']', out);
    }
}

static void json_node(FILE *out, const fleet_node *r, const char *nccl)
{
    fprintf(out,
            "{\"schema\": \"%s\", \"schema_version\": %d, \"nccl_version\": \"%s\", \"node\": ",
            FLEET_SCHEMA, FLEET_SCHEMA_VERSION, nccl);
    json_str(out, r->path);
    if (r->status != TP_OK) {
        fputs(", \"status\": \"error\", \"message\": ", out);
        json_str(out, r->message);
        fputs("}\n", out);
        return;
    }
    bool bad = r->errors + r->warnings > 0;
    fprintf(out, ", \"status\": \"%s\", \"errors\": %d, \"warnings\": %d, \"deviations\": {",
            bad ? "deviates" : "ok", r->errors, r->warnings);
    for (int i = 0; i < r->n_kinds; i++) {
        fputs(i ? ", " : "", out);
        json_str(out, r->kinds[i].title);
        fprintf(out, ": %d", r->kinds[i].findings);
    }
    fputc('}', out);
    json_notes(out, r->notes);
    if (bad && r->effect.known)
        fprintf(out,
                ", \"job\": {\"nodes\": %d, \"search_channels\": [%d, %d], "
                "\"collective_channels\": [%d, %d], \"search_channels_cost\": %d, "
                "\"worst_busbw_change_pct\": %.2f}",
                r->effect.n_nodes, r->effect.search_base, r->effect.search_odd,
                r->effect.channels_base, r->effect.channels_odd,
                r->effect.search_base - r->effect.search_odd, r->effect.cost.worst_change_pct);
    fputs("}\n", out);
}

/* Sum the nodes' deviation kinds; returns the number of kinds. */
static int summary_kinds(const fleet *f, fleet_kind *kinds)
{
    int n = 0;
    for (size_t i = 0; i < f->n_nodes; i++) {
        const fleet_node *r = &f->nodes[i];
        for (int k = 0; k < r->n_kinds; k++) {
            int j = 0;
            while (j < n && strcmp(kinds[j].title, r->kinds[k].title) != 0)
                j++;
            if (j == n && n == FLEET_MAX_KINDS)
                continue;
            if (j == n)
                kinds[n++] = (fleet_kind){.title = r->kinds[k].title};
            kinds[j].nodes++;
            kinds[j].findings += r->kinds[k].findings;
        }
    }
    return n;
}

static void write_summary(FILE *out, const fleet *f, tp_format fmt, int ok, int bad, int failed)
{
    fleet_kind kinds[FLEET_MAX_KINDS];
    int n = summary_kinds(f, kinds);
    if (fmt == TP_FORMAT_JSON) {
        fprintf(out,
                "{\"schema\": \"%s\", \"schema_version\": %d, \"nccl_version\": \"%s\", "
                "\"summary\": {\"checked\": %zu, "
                "\"planned\": %zu, \"ok\": %d, \"deviating\": %d, \"failed\": %d, "
                "\"kinds\": [",
                FLEET_SCHEMA, FLEET_SCHEMA_VERSION, tp_config_nccl(f->ctx->cfg), f->n_nodes,
                f->n_nodes - f->shared, ok, bad, failed);
        for (int i = 0; i < n; i++) {
            fputs(i ? ", " : "", out);
            fputs("{\"kind\": ", out);
            json_str(out, kinds[i].title);
            fprintf(out, ", \"deviating_nodes\": %d, \"n_findings\": %d}", kinds[i].nodes,
                    kinds[i].findings);
        }
        fputs("]}}\n", out);
        return;
    }
    char base[1100];
    tp_printable(base, sizeof(base),
                 f->baseline->builtin ? f->baseline->builtin : f->baseline->path);
    fprintf(out, "\nSummary: %zu node%s against %s: %d ok, %d deviate, %d could not be checked\n",
            f->n_nodes, f->n_nodes == 1 ? "" : "s", base, ok, bad, failed);
    fprintf(out,
            "  %zu node%s checked on their own; %zu took the result of a node whose file gives "
            "the same plan (it differs at most in NIC GUID values NCCL reads alike)\n",
            f->n_nodes - f->shared, f->n_nodes - f->shared == 1 ? "" : "s", f->shared);
    if (n > 0)
        fprintf(out, "  %-40s %7s %9s\n", "deviation", "nodes", "findings");
    for (int i = 0; i < n; i++)
        fprintf(out, "  %-40s %7d %9d\n", kinds[i].title, kinds[i].nodes, kinds[i].findings);
}

/* Node i's note lines once per kind of node (the nodes sharing one check), naming its nodes,
 * on stderr as `check` prints them for one node; setting notes the baseline printed are not
 * repeated. */
static void print_notes(const fleet *f)
{
    for (size_t i = 0; i < f->n_nodes; i++) {
        const fleet_node *r = &f->nodes[i];
        if (r->kind != i || !r->notes)
            continue;
        char names[1200] = "", path[300];
        size_t n = 0, at = 0;
        for (size_t j = i; j < f->n_nodes; j++) {
            if (f->nodes[j].kind != i || f->nodes[j].notes != r->notes)
                continue;
            if (n++ < 3 && at < sizeof(names)) {
                tp_printable(path, sizeof(path), f->nodes[j].path);
                at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s", n > 1 ? ", " : "",
                                       path);
            }
        }
        if (n > 3 && at < sizeof(names))
            snprintf(names + at, sizeof(names) - at, " and %zu more nodes like them", n - 3);
        for (const char *p = r->notes; *p;) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            char line[2048], shown[2048];
            snprintf(line, sizeof(line), "%.*s", (int)len, p);
            p += len + (nl != NULL);
            if (strncmp(line, "setting: ", 9) == 0 && !cli_setting_note_new(f->ctx, line + 9))
                continue;
            tp_printable(shown, sizeof(shown), line);
            cli_message("%s: %s", names, shown);
        }
    }
}

static int report(FILE *out, const fleet *f, tp_format fmt)
{
    int ok = 0, bad = 0, failed = 0;
    char base[1100];
    tp_printable(base, sizeof(base),
                 f->baseline->builtin ? f->baseline->builtin : f->baseline->path);
    for (size_t i = 0; i < f->n_nodes; i++) {
        const fleet_node *r = &f->nodes[i];
        if (fmt == TP_FORMAT_JSON)
            json_node(out, r, tp_config_nccl(f->ctx->cfg));
        else
            text_node(out, r, base);
        failed += r->status != TP_OK;
        bad += r->status == TP_OK && r->errors + r->warnings > 0;
        ok += r->status == TP_OK && r->errors + r->warnings == 0;
    }
    write_summary(out, f, fmt, ok, bad, failed);
    print_notes(f);
    return bad || failed ? CLI_EXIT_NEGATIVE : CLI_EXIT_OK;
}

int cli_fleet_check(const cli_args *a, const cli_input *baseline, cli_ctx *ctx)
{
    const char **paths = NULL;
    size_t n = 0;
    int code = node_list(ctx, a, &paths, &n);
    fleet f = {.baseline = baseline, .job = a->in.job, .ctx = ctx, .n_nodes = n};
    tp_plan *base_plan = NULL;
    if (code == 0)
        code = cli_plan(&base_plan, baseline, ctx);
    f.base_plan = base_plan;
    f.nodes = code == 0 ? calloc(n + 1, sizeof(*f.nodes)) : NULL;
    if (code == 0 && !f.nodes)
        code = CLI_EXIT_IO;
    if (code == 0 && pthread_mutex_init(&f.lock, NULL) != 0)
        code = CLI_EXIT_INTERNAL;
    if (code == 0 && pthread_cond_init(&f.cond, NULL) != 0) {
        pthread_mutex_destroy(&f.lock);
        code = CLI_EXIT_INTERNAL;
    }
    if (code == 0) {
        for (size_t i = 0; i < n; i++)
            f.nodes[i].path = paths[i];
        run_threads(&f);
        pthread_cond_destroy(&f.cond);
        pthread_mutex_destroy(&f.lock);
        code = report(ctx->out, &f, ctx->format);
    }
    for (size_t i = 0; f.nodes && i < n; i++)
        if (f.nodes[i].kind == i)
            free(f.nodes[i].notes);
    for (size_t i = 0; i < f.n_seen; i++)
        free(f.seen[i].canon);
    free(f.seen);
    free(f.nodes);
    free(paths);
    tp_plan_free(base_plan);
    return code;
}
