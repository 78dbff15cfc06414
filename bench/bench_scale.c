/*
 * Times planning a large job of identical nodes (the scale issue: 4096 nodes
 * x 8 GPUs in under a second, memory linear in ranks x channels). Timings
 * only: never pass/fail.
 * usage: bench_scale [NODES] [BUILTIN] [RUNS]   (defaults: 4096 dgx-h100 3)
 */
#include "topoplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One plan of rank 0 of the job; -1 on failure. */
static double time_plan(const char *xml, int nodes, const tp_config *cfg)
{
    tp_job job = {.n_nodes = nodes, .rank = 0};
    tp_plan *plan = NULL;
    tp_error err = {0};
    double t0 = now_s();
    tp_status st = tp_plan_buffer(&plan, xml, strlen(xml), "<builtin>", &job, cfg, &err);
    double t = now_s() - t0;
    tp_plan_free(plan);
    if (st != TP_OK) {
        char msg[1024];
        tp_error_format(&err, msg, sizeof(msg));
        fprintf(stderr, "bench_scale: %s\n", msg);
        return -1;
    }
    return t;
}

int main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 4096;
    const char *name = argc > 2 ? argv[2] : "dgx-h100";
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    const char *xml = tp_builtin_xml(name);
    if (!xml || nodes < 1 || runs < 1) {
        fprintf(stderr, "usage: bench_scale [NODES] [BUILTIN] [RUNS]\n");
        return 2;
    }
    const char *const env[] = {NULL};
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, env, &err) != TP_OK)
        return 1;
    double best = -1;
    for (int i = 0; i < runs; i++) {
        double t = time_plan(xml, nodes, cfg);
        if (t < 0) {
            tp_config_free(cfg);
            return 1;
        }
        if (best < 0 || t < best)
            best = t;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s x %d nodes: plan %.3f s (best of %d), peak RSS %ld MB\n", name, nodes, best, runs,
           ru.ru_maxrss / 1024);
    tp_config_free(cfg);
    return 0;
}
