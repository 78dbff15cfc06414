/*
 * Benchmarks the whole plan (load, system, paths, search, channels) of each
 * conformance case against NCCL 2.22.3's own reference total from
 * nccl-timings.tsv. Timings only: never pass/fail.
 *
 * usage: bench_cases CASES_DIR TIMINGS_TSV [RUNS] [--nccl VERSION] [--topoplan BIN] [--instructions
 * FILE]
 *                    [--process-instructions FILE]
 *        bench_cases CASES_DIR TIMINGS_TSV --count-instructions   (under callgrind)
 *
 * Per case: stage times and the in-process total (minimum of RUNS plans) next to
 * NCCL's; with --topoplan, BIN's `plan` run as a user runs it (a new process in
 * the case folder with the case's env): best wall time of RUNS and its peak
 * RSS; with --instructions, the instructions of one plan from FILE ("case
 * count" lines, written by bench/run.sh from a --count-instructions run:
 * stable on a noisy machine, the figure to compare across runs); with
 * --process-instructions, those of `topoplan plan` as a whole process (same
 * format, start-up and report included) and their ratio to one plan's.
 */
#include "topoplan.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

#define MAX_CASES 1024
#define MAX_ARGS 32

typedef struct options {
    const char *cases, *tsv, *topoplan, *instructions, *process_instructions;
    const char *nccl; /* the profile planned (NULL: the default), as the TSV's NCCL ran */
    const struct rss_spawner *spawner; /* runs the peak-RSS measures (NULL: none) */
    int runs;
    int count_instructions;
} options;

/* Sums over the cases timed. */
typedef struct totals {
    double search, nccl_search, total, nccl_total;
    int cases, at_10x;
    double worst_ratio;
    char worst[256];
    int process_cases, process_within_2x; /* process instructions against one plan's */
    double worst_process;
    char worst_process_case[256];
} totals;

/* One case as the runner sees it. */
typedef struct bench_case {
    char name[256];
    char dir[1024];
    char args[256];
    char nccl[32]; /* --nccl VERSION, "" for the default profile */
    int nodes;
    double ref[6]; /* NCCL: xml_load system_build paths search postset total (us) */
} bench_case;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* NCCL's reference row for the case and node count. */
static int nccl_row(const char *tsv, bench_case *c)
{
    FILE *f = fopen(tsv, "r");
    char line[1024];
    int found = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char name[256];
        int n;
        double r[6];
        if (sscanf(line, "%255s %d %lf %lf %lf %lf %lf %lf", name, &n, &r[0], &r[1], &r[2], &r[3],
                   &r[4], &r[5]) == 8 &&
            strcmp(name, c->name) == 0 && n == c->nodes) {
            memcpy(c->ref, r, sizeof(r));
            found = 1;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* The case's args line (--nodes N ...); rank 0 is reported, as in NCCL's figures. */
static int load_case(bench_case *c, const options *o, const char *name)
{
    const char *cases = o->cases, *tsv = o->tsv;
    snprintf(c->nccl, sizeof(c->nccl), "%s", o->nccl ? o->nccl : "");
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->dir, sizeof(c->dir), "%s/%s", cases, name);
    char path[1100];
    snprintf(path, sizeof(path), "%s/args", c->dir);
    c->args[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(c->args, sizeof(c->args), f))
            c->args[0] = '\0';
        fclose(f);
    }
    c->args[strcspn(c->args, "\r\n")] = '\0';
    const char *n = strstr(c->args, "--nodes ");
    c->nodes = n ? atoi(n + 8) : 1;
    return nccl_row(tsv, c);
}

/* The case's NCCL_* settings; a graph file is named relative to the case folder. */
static tp_config *case_config(const bench_case *c)
{
    char path[1100], line[1024];
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, none, &err) != TP_OK)
        return NULL;
    if (c->nccl[0] && tp_config_set_nccl(cfg, c->nccl, &err) != TP_OK) {
        fprintf(stderr, "bench_cases: %s\n", err.message);
        tp_config_free(cfg);
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/env", c->dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char value[2200];
        if (strcmp(line, "NCCL_GRAPH_FILE") == 0)
            snprintf(value, sizeof(value), "%s/%s", c->dir, eq + 1);
        else
            snprintf(value, sizeof(value), "%s", eq + 1);
        tp_config_set(cfg, line, value, &err);
    }
    if (f)
        fclose(f);
    return cfg;
}

/* In-process: best total of `runs` plans and that run's stage times. */
static tp_status time_in_process(const bench_case *c, const tp_config *cfg, int runs, double *best,
                                 double stages[TP_STAGE_COUNT])
{
    char topo[1100];
    snprintf(topo, sizeof(topo), "%s/topo.xml", c->dir);
    tp_job job = {.n_nodes = c->nodes, .rank = 0};
    tp_status st = TP_OK;
    *best = 1e30;
    for (int r = 0; r < runs; r++) {
        tp_plan *plan = NULL;
        tp_error err = {0};
        double t0 = now_us();
        st = tp_plan_file(&plan, topo, &job, cfg, &err);
        double t = now_us() - t0;
        if (plan && t < *best) {
            *best = t;
            for (int s = 0; s < TP_STAGE_COUNT; s++)
                stages[s] = tp_plan_stage_us(plan, (tp_stage)s);
        }
        tp_plan_free(plan);
    }
    return st;
}

/* The environment of the child: ours, then the case's env lines over it. */
static char **case_environ(const bench_case *c, char *store, size_t size)
{
    extern char **environ;
    static char *envp[512];
    int n = 0;
    for (char **e = environ; *e && n < 256; e++)
        envp[n++] = *e;
    char path[1100], line[1024];
    snprintf(path, sizeof(path), "%s/env", c->dir);
    FILE *f = fopen(path, "r");
    size_t used = 0;
    while (f && n < 510 && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        size_t len = strlen(line) + 1;
        if (!strchr(line, '=') || used + len > size)
            continue;
        memcpy(store + used, line, len);
        envp[n++] = store + used;
        used += len;
    }
    if (f)
        fclose(f);
    envp[n] = NULL;
    return envp;
}

/*
 * `BIN plan topo.xml ARGS` in the case folder, output discarded; its pid or -1.
 * via_env: through /usr/bin/env, whose small image is what the kernel counts
 * as the child's peak RSS before BIN (a direct spawn would count ours).
 */
static pid_t spawn_plan(const bench_case *c, const char *bin, bool via_env)
{
    char args[256], env_store[8192], *argv[MAX_ARGS + 5];
    int n = 0;
    if (via_env)
        argv[n++] = "/usr/bin/env";
    argv[n++] = (char *)bin;
    char nccl[sizeof(c->nccl)];
    snprintf(nccl, sizeof(nccl), "%s", c->nccl);
    if (nccl[0]) {
        argv[n++] = "--nccl";
        argv[n++] = nccl;
    }
    argv[n++] = "plan";
    argv[n++] = "topo.xml";
    snprintf(args, sizeof(args), "%s", c->args);
    for (char *tok = strtok(args, " \t"); tok && n < MAX_ARGS; tok = strtok(NULL, " \t"))
        argv[n++] = tok;
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, c->dir);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    /* posix_spawn does not copy our memory: the child's peak RSS is its own. */
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, case_environ(c, env_store, sizeof(env_store))))
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* As a user runs it: best wall time (us) of `runs` processes. */
static void time_process(const bench_case *c, const char *bin, int runs, double *best)
{
    *best = -1;
    for (int r = 0; r < runs; r++) {
        double t0 = now_us();
        pid_t pid = spawn_plan(c, bin, false);
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid)
            return;
        double t = now_us() - t0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
            return;
        if (*best < 0 || t < *best)
            *best = t;
    }
}

/*
 * The peak RSS of a `plan` process is measured by a small process forked
 * before any plan: the kernel starts a spawned child's peak from its
 * parent's memory, and ours grows with every case planned in process.
 */
typedef struct rss_spawner {
    pid_t pid; /* -1: none */
    int req, resp;
} rss_spawner;

/* The spawner's side: a case in, the peak RSS (KB, -1 when the run failed) out. */
static void spawner_loop(int req, int resp, const char *bin)
{
    bench_case c;
    while (read(req, &c, sizeof(c)) == (ssize_t)sizeof(c)) {
        long rss = -1;
        pid_t pid = spawn_plan(&c, bin, true);
        int status = 0;
        struct rusage ru;
        if (pid >= 0 && wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) &&
            WEXITSTATUS(status) != 127)
            rss = ru.ru_maxrss;
        if (write(resp, &rss, sizeof(rss)) != (ssize_t)sizeof(rss))
            break;
    }
    _exit(0);
}

static void spawner_start(rss_spawner *s, const char *bin)
{
    int req[2], resp[2];
    s->pid = -1;
    if (!bin || pipe(req) != 0)
        return;
    if (pipe(resp) != 0) {
        close(req[0]);
        close(req[1]);
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(req[1]);
        close(resp[0]);
        spawner_loop(req[0], resp[1], bin);
    }
    close(req[0]);
    close(resp[1]);
    if (pid < 0) {
        close(req[1]);
        close(resp[0]);
        return;
    }
    *s = (rss_spawner){.pid = pid, .req = req[1], .resp = resp[0]};
}

static long spawner_rss(const rss_spawner *s, const bench_case *c)
{
    long rss = -1;
    if (!s || s->pid < 0 || write(s->req, c, sizeof(*c)) != (ssize_t)sizeof(*c) ||
        read(s->resp, &rss, sizeof(rss)) != (ssize_t)sizeof(rss))
        return -1;
    return rss;
}

static void spawner_stop(rss_spawner *s)
{
    if (s->pid < 0)
        return;
    close(s->req);
    close(s->resp);
    waitpid(s->pid, NULL, 0);
    s->pid = -1;
}

/* The instructions of one plan of the case, from the --instructions file (-1: none). */
static double instructions_of(const char *file, const char *name)
{
    FILE *f = file ? fopen(file, "r") : NULL;
    char line[512], n[256];
    double count = -1, v;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "%255s %lf", n, &v) == 2 && strcmp(n, name) == 0)
            count = v;
    if (f)
        fclose(f);
    return count;
}

static void add_totals(totals *sum, const bench_case *c, const double stages[], double best)
{
    double ratio = c->ref[5] / best;
    sum->search += stages[TP_STAGE_SEARCH];
    sum->nccl_search += c->ref[3];
    sum->total += best;
    sum->nccl_total += c->ref[5];
    sum->cases++;
    sum->at_10x += ratio >= 10;
    if (!sum->worst[0] || ratio < sum->worst_ratio) {
        sum->worst_ratio = ratio;
        snprintf(sum->worst, sizeof(sum->worst), "%s", c->name);
    }
}

/* `topoplan plan` as a process over one in-process plan, in instructions (-1: unknown). */
static double process_ratio(totals *sum, const bench_case *c, double instr, double proc_instr)
{
    if (instr <= 0 || proc_instr <= 0)
        return -1;
    double ratio = proc_instr / instr;
    sum->process_cases++;
    sum->process_within_2x += ratio <= 2;
    if (!sum->worst_process_case[0] || ratio > sum->worst_process) {
        sum->worst_process = ratio;
        snprintf(sum->worst_process_case, sizeof(sum->worst_process_case), "%s", c->name);
    }
    return ratio;
}

static void bench_case_run(const bench_case *c, const options *o, totals *sum)
{
    tp_config *cfg = case_config(c);
    if (!cfg)
        return;
    double best, stages[TP_STAGE_COUNT] = {0}, proc = -1;
    long rss = 0;
    tp_status st = time_in_process(c, cfg, o->runs, &best, stages);
    tp_config_free(cfg);
    if (o->topoplan) {
        time_process(c, o->topoplan, o->runs, &proc);
        rss = spawner_rss(o->spawner, c);
    }
    double instr = instructions_of(o->instructions, c->name);
    double proc_instr = instructions_of(o->process_instructions, c->name);
    double proc_ratio = process_ratio(sum, c, instr, proc_instr);
    if (st == TP_OK)
        add_totals(sum, c, stages, best);
    printf("%-36s %2d %6.0f/%-6.0f %6.0f/%-6.0f %6.0f/%-6.0f %7.0f/%-7.0f %7.0f/%-7.0f %6.1fx%s",
           c->name, c->nodes, stages[TP_STAGE_XML], c->ref[0], stages[TP_STAGE_SYSTEM], c->ref[1],
           stages[TP_STAGE_PATHS], c->ref[2], stages[TP_STAGE_SEARCH], c->ref[3], best, c->ref[5],
           c->ref[5] / best, c->ref[5] / best < 10 ? "<" : " ");
    printf(" %7.2f %7.2f %6.2f %7.2f %6.1f", instr >= 0 ? instr / 1e6 : -1.0,
           proc_instr >= 0 ? proc_instr / 1e6 : -1.0, proc_ratio, proc >= 0 ? proc / 1e3 : -1.0,
           rss >= 0 ? rss / 1024.0 : -1.0);
    printf("%s\n", st == TP_OK ? "" : "  (plan failed)");
}

#ifdef HAVE_CALLGRIND
/* Under callgrind (--collect-atstart=no): one warm plan, then one counted plan dumped
 * under the case's name. */
static void count_case(const bench_case *c)
{
    tp_config *cfg = case_config(c);
    if (!cfg)
        return;
    char topo[1100];
    snprintf(topo, sizeof(topo), "%s/topo.xml", c->dir);
    tp_job job = {.n_nodes = c->nodes, .rank = 0};
    for (int r = 0; r < 2; r++) {
        tp_plan *plan = NULL;
        tp_error err = {0};
        if (r == 1)
            CALLGRIND_TOGGLE_COLLECT;
        tp_plan_file(&plan, topo, &job, cfg, &err);
        tp_plan_free(plan);
        if (r == 1)
            CALLGRIND_TOGGLE_COLLECT;
    }
    CALLGRIND_DUMP_STATS_AT(c->name);
    tp_config_free(cfg);
}
#else
static void count_case(const bench_case *c)
{
    (void)c;
}
#endif

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int parse_options(options *o, int argc, char **argv)
{
    *o = (options){.runs = 5};
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--topoplan") == 0 && i + 1 < argc)
            o->topoplan = argv[++i];
        else if (strcmp(argv[i], "--nccl") == 0 && i + 1 < argc)
            o->nccl = argv[++i];
        else if (strcmp(argv[i], "--instructions") == 0 && i + 1 < argc)
            o->instructions = argv[++i];
        else if (strcmp(argv[i], "--process-instructions") == 0 && i + 1 < argc)
            o->process_instructions = argv[++i];
        else if (strcmp(argv[i], "--count-instructions") == 0)
            o->count_instructions = 1;
        else if (pos == 0 && ++pos)
            o->cases = argv[i];
        else if (pos == 1 && ++pos)
            o->tsv = argv[i];
        else if (pos == 2 && ++pos)
            o->runs = atoi(argv[i]);
        else
            return -1;
    }
    return o->cases && o->tsv && o->runs > 0 ? 0 : -1;
}

static int list_cases(const char *dir, char **names)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) && n < MAX_CASES)
        if (ent->d_name[0] != '.')
            names[n++] = strdup(ent->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof(*names), cmp_str);
    return n;
}

static void print_header(const options *o)
{
    const char *v = o->nccl ? o->nccl : "2.22.3";
    printf("times in us, topoplan/NCCL %s, each planning as NCCL %s (NCCL: %s);\n", v, v, o->tsv);
    printf(
        "speedup: NCCL's total / ours in process ('<': under 10x); Minstr: instructions of\n"
        "one plan (callgrind); proc Mi: of `topoplan plan` as a process (start-up, lint and\n"
        "report included), xplan: proc Mi / Minstr; proc ms, RSS MB: that process (best wall)\n");
    printf("%-36s %2s %13s %13s %13s %15s %15s %7s %7s %7s %6s %7s %6s\n", "case", "n", "xml",
           "system", "paths", "search", "total", "speedup", "Minstr", "proc Mi", "xplan", "proc ms",
           "RSS MB");
}

static void print_totals(const totals *t)
{
    if (!t->cases || t->search <= 0 || t->total <= 0)
        return;
    printf("all %d cases: search %.0f/%.0f us (%.1fx), whole plan %.0f/%.0f us (%.1fx)\n", t->cases,
           t->search, t->nccl_search, t->nccl_search / t->search, t->total, t->nccl_total,
           t->nccl_total / t->total);
    printf("whole plan at least 10x faster on %d of %d cases, under 10x on %d (slowest: %s "
           "%.1fx)\n",
           t->at_10x, t->cases, t->cases - t->at_10x, t->worst, t->worst_ratio);
    if (t->process_cases)
        printf("topoplan plan as a process within 2x of one plan's instructions on %d of %d "
               "cases (most: %s %.2fx)\n",
               t->process_within_2x, t->process_cases, t->worst_process_case, t->worst_process);
}

int main(int argc, char **argv)
{
    /*
     * One process plans case after case, as a long-running user of the library does.
     * glibc gives back the top of the heap past 128 KiB on every free: a case whose
     * plans end up at the top of a heap the cases before it shaped would grow and
     * shrink it on every plan, and pay the page faults (syn_hgx_a100_p2p_disable_shm_disable
     * under 2.27.5, after 32 other cases: 5x its time alone). Keep the heap instead.
     */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    options o;
    if (parse_options(&o, argc, argv) != 0) {
        fprintf(stderr,
                "usage: %s CASES_DIR TIMINGS_TSV [RUNS] [--nccl VERSION] [--topoplan BIN] "
                "[--instructions FILE] [--process-instructions FILE] [--count-instructions]\n",
                argv[0]);
        return 2;
    }
    char *names[MAX_CASES];
    int n = list_cases(o.cases, names);
    if (n < 0)
        return 1;
    totals t = {0};
    rss_spawner spawner = {.pid = -1};
    if (!o.count_instructions) {
        spawner_start(&spawner, o.topoplan);
        o.spawner = &spawner;
        print_header(&o);
    }
    for (int i = 0; i < n; i++) {
        bench_case c;
        if (load_case(&c, &o, names[i])) {
            if (o.count_instructions)
                count_case(&c);
            else
                bench_case_run(&c, &o, &t);
        }
        free(names[i]);
    }
    spawner_stop(&spawner);
    if (!o.count_instructions)
        print_totals(&t);
    return 0;
}
