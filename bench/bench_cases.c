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

static double nccl_total(const char *tsv, const char *name, int nodes)
{
    FILE *f = fopen(tsv, "r");
    char line[1024];
    double total = -1;
    while (f && fgets(line, sizeof(line), f)) {
        char c[256];
        int n;
        double v[6];
        if (sscanf(line, "%255s %d %lf %lf %lf %lf %lf %lf", c, &n, &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5]) == 8 && strcmp(c, name) == 0 && n == nodes)
            total = v[5];
    }
    if (f)
        fclose(f);
    return total;
}

static int case_nodes(const char *dir)
{
    char path[1100], args[256] = "";
    snprintf(path, sizeof(path), "%s/args", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(args, sizeof(args), f))
            args[0] = '\0';
        fclose(f);
    }
    const char *p = strstr(args, "--nodes ");
    return p ? atoi(p + 8) : 1;
}

static void bench_case(const char *cases, const char *name, const char *tsv, int runs)
{
    char dir[1024], topo[1100];
    snprintf(dir, sizeof(dir), "%s/%s", cases, name);
    snprintf(topo, sizeof(topo), "%s/topo.xml", dir);
    int nodes = case_nodes(dir);
    double ref = nccl_total(tsv, name, nodes);
    if (ref < 0)
        return;
    const char *const env[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    tp_config_new(&cfg, env, &err);
    tp_job job = {.n_nodes = nodes, .rank = 0};
    double best = 1e30;
    tp_status st = TP_OK;
    for (int r = 0; r < runs; r++) {
        tp_plan *plan = NULL;
        double t0 = now_us();
        st = tp_plan_file(&plan, topo, &job, cfg, &err);
        double t = now_us() - t0;
        tp_plan_free(plan);
        if (t < best)
            best = t;
    }
    tp_config_free(cfg);
    printf("%-40s %5d %12.1f %12.1f %8.1fx%s\n", name, nodes, best, ref, ref / best,
           st == TP_OK ? "" : "  (plan failed)");
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
    printf("%-40s %5s %12s %12s %9s\n", "case", "nodes", "topoplan_us", "nccl_us", "speedup");
    for (int i = 0; i < n; i++) {
        bench_case(argv[1], names[i], argv[2], runs);
        free(names[i]);
    }
    return 0;
}
