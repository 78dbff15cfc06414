/*
 * The planner: runs the pipeline for every rank NCCL would run it for
 * (identical nodes share results) and keeps what reports need.
 */
#ifndef TP_PLAN_H
#define TP_PLAN_H

#include "channels.h"

struct tp_plan {
    tp_config *cfg; /* own copy */
    tp_job job;
    int n_gpus_per_node;
    tp_xml *topo_xml;           /* the topology XML as NCCL holds it (for NCCL_TOPO_DUMP_FILE) */
    tp_system *sys;             /* reported rank's system: trimmed, with paths */
    tp_graph *graphs[TP_GRAPH_COUNT]; /* reported rank's graphs (owned) */
    tp_channels channels;
    tp_log log;                 /* the NCCL lines of the reported rank */
    tp_status status;           /* failure NCCL itself reports, TP_OK otherwise */
};

#endif
