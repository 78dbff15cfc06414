/*
 * nic_per_gpu: which NIC each GPU of node 0 uses, per ring channel that
 * crosses to another node (recv: from the previous node, send: to the next)
 * and for each part of its P2P sends to every rank of node 1 (on the channel
 * NCCL's p2p schedule gives it), with the rank whose proxy drives the NIC
 * (another rank: PXN).
 *
 *   cc nic_per_gpu.c $(pkg-config --cflags --libs topoplan) -o nic_per_gpu
 *   ./nic_per_gpu topo.xml 2
 */
#include <topoplan.h>

#include <stdio.h>
#include <stdlib.h>

extern char **environ;

static void print_nic(const tp_plan *plan, int rank, int channel, int peer, const char *what)
{
    tp_nic_choice nic;
    if (tp_plan_nic(plan, rank, channel, peer, &nic, sizeof(nic)) == TP_OK)
        printf("rank %d %s NET %d proxy %d gdr %d\n", rank, what, nic.net_dev, nic.proxy_rank,
               nic.gdr);
}

/* Ring channels whose previous (recv) or next (send) rank is on another node. */
static void ring_nics(const tp_plan *plan, int rank, int per_node, int n_channels)
{
    char what[64];
    for (int c = 0; c < n_channels; c++) {
        tp_rank_channel rc;
        tp_plan_rank_channel(plan, rank, c, &rc, sizeof(rc));
        if (rc.ring_prev / per_node != rank / per_node) {
            snprintf(what, sizeof(what), "channel %d recv", c);
            print_nic(plan, rank, c, -1, what);
        }
        if (rc.ring_next / per_node != rank / per_node) {
            snprintf(what, sizeof(what), "channel %d send", c);
            print_nic(plan, rank, c, -1, what);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s TOPO.xml NODES (2 or more: NICs join nodes)\n", argv[0]);
        return 2;
    }
    tp_job job = TP_JOB_INIT;
    job.n_nodes = atoi(argv[2]);
    tp_error err = {0};
    tp_config *cfg = NULL;
    tp_plan *plan = NULL;
    if (tp_config_new(&cfg, (const char *const *)environ, &err) != TP_OK ||
        tp_plan_file(&plan, argv[1], &job, cfg, &err) != TP_OK) {
        char msg[1024];
        tp_error_format(&err, msg, sizeof(msg));
        fprintf(stderr, "nic_per_gpu: %s\n", msg);
        tp_plan_free(plan);
        tp_config_free(cfg);
        return 3;
    }
    tp_job_info info;
    tp_channels_info ch;
    tp_plan_job(plan, &info, sizeof(info));
    tp_plan_channels(plan, &ch, sizeof(ch));
    int per = info.gpus_per_node;
    for (int rank = 0; rank < per && info.n_nodes > 1; rank++) {
        ring_nics(plan, rank, per, ch.n_channels);
        char what[64];
        for (int peer = per; peer < 2 * per; peer++) {
            int channel;
            for (int part = 0; (channel = tp_plan_p2p_channel(plan, rank, peer, part)) >= 0;
                 part++) {
                snprintf(what, sizeof(what), "peer %d part %d channel %d send", peer, part,
                         channel);
                print_nic(plan, rank, channel, peer, what);
            }
        }
    }
    tp_plan_free(plan);
    tp_config_free(cfg);
    return 0;
}
