/*
 * Times the whole plan (load, system, paths, search, channels) of each
 * conformance case, minimum of several runs, next to NCCL 2.22.3's own
 * reference total from nccl-timings.tsv. Timings only: never pass/fail.
 * usage: bench_cases CASES_DIR TIMINGS_TSV [RUNS]
 */
#include "topoplan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* NCCL's reference row: xml_load system_build paths search postset total (us). */
static int nccl_row(const char *tsv, const char *name, int nodes, double v[6])
{
    FILE *f = fopen(tsv, "r");
    char line[1024];
    int found = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char c[256];
        int n;
        double r[6];
        if (sscanf(line, "%255s %d %lf %lf %lf %lf %lf %lf", c, &n, &r[0], &r[1], &r[2], &r[3],
                   &r[4], &r[5]) == 8 && strcmp(c, name) == 0 && n == nodes) {
            memcpy(v, r, sizeof(r));
            found = 1;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* The case's job from its args file (--nodes N), seen from rank 0 as NCCL's figures are. */
static tp_job case_job(const char *dir)
{
    char path[1100], args[256] = "";
    snprintf(path, sizeof(path), "%s/args", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(args, sizeof(args), f))
            args[0] = '\0';
        fclose(f);
    }
    const char *n = strstr(args, "--nodes ");
    tp_job job = {.n_nodes = n ? atoi(n + 8) : 1, .rank = 0};
    return job;
}

/* The case's NCCL_* settings; a graph file is named relative to the case folder. */
static tp_config *case_config(const char *dir)
{
    char path[1100], line[1024];
    const char *const none[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, none, &err) != TP_OK)
        return NULL;
    snprintf(path, sizeof(path), "%s/env", dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char value[2200];
        if (strcmp(line, "NCCL_GRAPH_FILE") == 0)
            snprintf(value, sizeof(value), "%s/%s", dir, eq + 1);
        else
            snprintf(value, sizeof(value), "%s", eq + 1);
        tp_config_set(cfg, line, value, &err);
    }
    if (f)
        fclose(f);
    return cfg;
}

/* Sums over the cases timed: search and whole-plan times, ours and NCCL's. */
typedef struct totals {
    double search, nccl_search, total, nccl_total;
    int cases, search_10x;
} totals;

static void bench_case(const char *cases, const char *name, const char *tsv, int runs,
                       totals *sum)
{
    char dir[1024], topo[1100];
    snprintf(dir, sizeof(dir), "%s/%s", cases, name);
    snprintf(topo, sizeof(topo), "%s/topo.xml", dir);
    tp_job job = case_job(dir);
    int nodes = job.n_nodes;
    double ref[6];
    tp_config *cfg = nccl_row(tsv, name, nodes, ref) ? case_config(dir) : NULL;
    if (!cfg)
        return;
    tp_error err = {0};
    double best = 1e30, stages[TP_STAGE_COUNT] = {0};
    tp_status st = TP_OK;
    for (int r = 0; r < runs; r++) {
        tp_plan *plan = NULL;
        double t0 = now_us();
        st = tp_plan_file(&plan, topo, &job, cfg, &err);
        double t = now_us() - t0;
        if (plan && t < best) {
            best = t;
            for (int s = 0; s < TP_STAGE_COUNT; s++)
                stages[s] = tp_plan_stage_us(plan, (tp_stage)s);
        }
        tp_plan_free(plan);
    }
    tp_config_free(cfg);
    if (st == TP_OK) {
        sum->search += stages[TP_STAGE_SEARCH];
        sum->nccl_search += ref[3];
        sum->total += best;
        sum->nccl_total += ref[5];
        sum->cases++;
        sum->search_10x += ref[3] >= 10 * stages[TP_STAGE_SEARCH];
    }
    printf("%-36s %2d %7.1f/%-7.1f %7.1f/%-7.1f %7.1f/%-7.1f %8.1f/%-8.1f %8.1f/%-8.1f %6.1fx%s\n",
           name, nodes, stages[TP_STAGE_XML], ref[0], stages[TP_STAGE_SYSTEM], ref[1],
           stages[TP_STAGE_PATHS], ref[2], stages[TP_STAGE_SEARCH], ref[3], best, ref[5],
           ref[5] / best, st == TP_OK ? "" : "  (plan failed)");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CASES_DIR TIMINGS_TSV [RUNS]\n", argv[0]);
        return 2;
    }
    int runs = argc > 3 ? atoi(argv[3]) : 5;
    DIR *d = opendir(argv[1]);
    if (!d)
        return 1;
    char *names[1024];
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) && n < 1024)
        if (ent->d_name[0] != '.')
            names[n++] = strdup(ent->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof(*names), cmp_str);
    printf("times in us, topoplan/NCCL 2.22.3 (NCCL: ../shared/conformance/nccl-timings.tsv)\n");
    printf("%-36s %2s %15s %15s %15s %17s %17s %7s\n", "case", "n", "xml", "system", "paths",
           "search", "total", "speedup");
    totals t = {0};
    for (int i = 0; i < n; i++) {
        bench_case(argv[1], names[i], argv[2], runs, &t);
        free(names[i]);
    }
    if (t.cases && t.search > 0 && t.total > 0)
        printf("all %d cases: search %.0f/%.0f us (%.1fx), whole plan %.0f/%.0f us (%.1fx); "
               "search at least 10x faster on %d cases\n",
               t.cases, t.search, t.nccl_search, t.nccl_search / t.search, t.total, t.nccl_total,
               t.nccl_total / t.total, t.search_10x);
    return 0;
}
