/*
 * ring_channels: how many ring channels NCCL 2.22.3 finds on a machine, and
 * how many collective channels the job ends up with.
 *
 *   cc ring_channels.c $(pkg-config --cflags --libs topoplan) -o ring_channels
 *   NCCL_MAX_NCHANNELS=8 ./ring_channels topo.xml 2
 */
#include <topoplan.h>

#include <stdio.h>
#include <stdlib.h>

extern char **environ;

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s TOPO.xml [NODES]\n", argv[0]);
        return 2;
    }
    tp_job job = TP_JOB_INIT;
    job.n_nodes = argc == 3 ? atoi(argv[2]) : 1;
    tp_error err = {0};
    tp_config *cfg = NULL;
    tp_plan *plan = NULL;
    /* NCCL_* variables of the environment apply, as they would to NCCL. */
    if (tp_config_new(&cfg, (const char *const *)environ, &err) != TP_OK ||
        tp_plan_file(&plan, argv[1], &job, cfg, &err) != TP_OK) {
        char msg[1024];
        tp_error_format(&err, msg, sizeof(msg));
        fprintf(stderr, "ring_channels: %s\n", msg);
        tp_plan_free(plan); /* NULL, or a plan NCCL itself failed */
        tp_config_free(cfg);
        return 3;
    }
    tp_graph_summary ring;
    tp_channels_info ch;
    tp_plan_graph(plan, TP_GRAPH_RING, &ring, sizeof(ring));
    tp_plan_channels(plan, &ch, sizeof(ch));
    printf("ring graph: %d channels x %.1f/%.1f GB/s (%s/%s)\n", ring.n_channels, ring.bw_intra,
           ring.bw_inter, tp_path_type_str(ring.type_intra), tp_path_type_str(ring.type_inter));
    printf("collective channels: %d\n", ch.n_channels);
    tp_plan_free(plan);
    tp_config_free(cfg);
    return 0;
}
