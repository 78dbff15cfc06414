/*
 * fleet_check: plan every topology of a folder (NAME.xml files, or NAME/topo.xml
 * as dumped per machine) and flag the machines whose job gets fewer collective
 * channels than most of the fleet, or that NCCL would reject.
 * Exit status 0 when every machine matches the fleet, 1 otherwise.
 *
 *   cc fleet_check.c $(pkg-config --cflags --libs topoplan) -o fleet_check
 *   ./fleet_check /var/lib/topologies 2
 */
#include <topoplan.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

typedef struct machine {
    char name[256];
    int channels; /* collective channels, -1: planning failed */
} machine;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const machine *)a)->name, ((const machine *)b)->name);
}

/* The topology file of a folder entry, or 0 when it has none. */
static int topology_path(const char *dir, const char *entry, char *path, size_t size)
{
    size_t n = strlen(entry);
    if (entry[0] == '.')
        return 0;
    if (n > 4 && strcmp(entry + n - 4, ".xml") == 0)
        return snprintf(path, size, "%s/%s", dir, entry) < (int)size;
    snprintf(path, size, "%s/%s/topo.xml", dir, entry);
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

static void plan_one(machine *m, const char *path, const tp_job *job, const tp_config *cfg)
{
    tp_plan *plan = NULL;
    tp_error err = {0};
    tp_graph_summary ring;
    tp_channels_info ch;
    m->channels = -1;
    if (tp_plan_file(&plan, path, job, cfg, &err) != TP_OK) {
        char msg[1024];
        tp_error_format(&err, msg, sizeof(msg));
        printf("%s: error: %s\n", m->name, msg);
    } else {
        tp_plan_graph(plan, TP_GRAPH_RING, &ring, sizeof(ring));
        tp_plan_channels(plan, &ch, sizeof(ch));
        m->channels = ch.n_channels;
        printf("%s: ring %d x %.1f GB/s, %d collective channels\n", m->name, ring.n_channels,
               ring.bw_intra, ch.n_channels);
    }
    tp_plan_free(plan);
}

/* The collective channel count most machines have (the larger one on a tie). */
static int fleet_norm(const machine *ms, int n)
{
    int best = -1, best_count = 0;
    for (int i = 0; i < n; i++) {
        int count = 0;
        for (int j = 0; j < n; j++)
            count += ms[j].channels == ms[i].channels;
        if (ms[i].channels >= 0 &&
            (count > best_count || (count == best_count && ms[i].channels > best))) {
            best = ms[i].channels;
            best_count = count;
        }
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s DIR [NODES]\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 4;
    }
    machine *ms = NULL;
    int n = 0, cap = 0;
    char path[4096];
    for (struct dirent *e; (e = readdir(d));) {
        if (!topology_path(argv[1], e->d_name, path, sizeof(path)))
            continue;
        if (n == cap) {
            machine *more = realloc(ms, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(*ms));
            if (!more) {
                free(ms);
                closedir(d);
                return 4;
            }
            ms = more;
        }
        snprintf(ms[n++].name, sizeof(ms[0].name), "%s", e->d_name);
    }
    closedir(d);
    if (n > 0)
        qsort(ms, (size_t)n, sizeof(*ms), by_name);
    tp_job job = TP_JOB_INIT;
    job.n_nodes = argc == 3 ? atoi(argv[2]) : 1;
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, (const char *const *)environ, &err) != TP_OK) {
        fprintf(stderr, "fleet_check: %s: %s\n", err.source, err.message);
        free(ms);
        return 3;
    }
    for (int i = 0; i < n; i++) {
        topology_path(argv[1], ms[i].name, path, sizeof(path));
        plan_one(&ms[i], path, &job, cfg);
    }
    int norm = fleet_norm(ms, n), odd = 0;
    for (int i = 0; i < n; i++)
        odd += ms[i].channels != norm;
    printf("fleet: %d machines, %d with the usual %d collective channels, %d to look at\n", n,
           n - odd, norm, odd);
    tp_config_free(cfg);
    free(ms);
    return odd > 0;
}
