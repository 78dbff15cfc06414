/*
 * Benchmark input for `topoplan verify` (not a test): the NCCL_DEBUG=INFO log of a whole
 * job of N nodes of one public topology, every rank's lines interleaved round-robin as a
 * launcher writes them ("nodeHHHH:PID:TID [dev] NCCL INFO ..."), with a version line.
 *   verify_log TOPO.xml NODES OUT.log   (bench/verify.sh times verify on it)
 */
#include "topoplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: verify_log TOPO.xml NODES OUT.log\n");
        return 2;
    }
    tp_job job = TP_JOB_INIT;
    job.n_nodes = atoi(argv[2]);
    tp_plan *plan = NULL;
    tp_error err = {0};
    if (tp_plan_file(&plan, argv[1], &job, NULL, &err) != TP_OK) {
        fprintf(stderr, "verify_log: %s\n", err.message);
        return 3;
    }
    tp_job_info info;
    tp_plan_job(plan, &info, sizeof(info));
    tp_plan_free(plan);
    int n = info.n_ranks, per_node = info.gpus_per_node;
    char **text = calloc((size_t)n, sizeof(char *)), **pos = calloc((size_t)n, sizeof(char *));
    for (int r = 0; r < n; r++) {
        job.rank = r;
        size_t len = 0;
        FILE *f = open_memstream(&text[r], &len);
        if (tp_plan_file(&plan, argv[1], &job, NULL, &err) != TP_OK ||
            tp_report_nccl_log(f, plan, &err) != TP_OK)
            return 3;
        fclose(f);
        tp_plan_free(plan);
        pos[r] = text[r];
    }
    FILE *out = fopen(argv[3], "w");
    if (!out)
        return 4;
    fprintf(out, "node0000:20000:20100 [0] NCCL INFO NCCL version 2.22.3+cuda12.4\n");
    for (int more = 1; more;) {
        more = 0;
        for (int r = 0; r < n; r++) {
            if (!*pos[r])
                continue;
            char *nl = strchr(pos[r], '\n');
            fprintf(out, "node%04d:%d:%d %.*s\n", r / per_node, 20000 + r % per_node,
                    20100 + r % per_node, (int)(nl - pos[r]), pos[r]);
            pos[r] = nl + 1;
            more = 1;
        }
    }
    for (int r = 0; r < n; r++)
        free(text[r]);
    free(text);
    free(pos);
    return fclose(out) == 0 ? 0 : 4;
}
