/*
 * A system as the page draws it: every node with its place (rows as an
 * operator pictures the machine), every link once per pair of nodes with the
 * paths and channels that use it, and each graph channel's route.
 */
#ifndef TP_HTML_MODEL_H
#define TP_HTML_MODEL_H

#include "html/html.h"

/* Paths named in a link's details (the rest are counted). */
#define TP_HTML_PATHS_NAMED 6

typedef struct pic_node {
    const tp_node *n;
    int type, index;
    int row, column;   /* column: a NET port's place in its line */
    double x, y, w, h; /* centre and size */
    double ideal;      /* where its neighbours pull it (layout) */
    int numa;          /* NUMA id of its closest CPU, -1 when none */
    char name[64];     /* what the picture writes on it */
    char label[48];    /* tp_graphcheck__label: how explanations name it */
    char sub[40];      /* a second line: "dev 0, sm90", "NET/3, 50 GB/s", "NUMA 1" */
    char nccl[48];     /* NCCL's label ("GPU/0-1c000"), as comparisons name nodes */
    bool changed;      /* the other side of a comparison lacks it or has it otherwise */
    float net_bw;      /* a NET's own speed, before the searches */
} pic_node;

typedef struct pic_link {
    int a, b; /* node numbers, a drawn first */
    int type; /* tp_link_type */
    float bw, bw_back;
    int paths;                             /* GPU/NET paths that walk it (either way) */
    int path_ends[TP_HTML_PATHS_NAMED][2]; /* the first paths' ends (node numbers) */
    bool changed;                          /* the other side of a comparison differs */
    uint64_t channels[TP_GRAPH_COUNT];     /* bit c: channel c of that graph walks it */
} pic_link;

/* One graph channel: the nodes in its order and the links its route walks. */
typedef struct pic_route {
    int graph, channel;
    int seq[2 * TP_MAX_NODES + 2];
    int n_seq;
    int *links; /* owned */
    int n_links, cap;
} pic_route;

typedef struct pic_model {
    const tp_system *sys;
    pic_node *nodes;
    int n_nodes;
    int first[TP_NODE_TYPE_COUNT]; /* number of a type's first node */
    pic_link *links;
    int n_links, links_cap;
    pic_route *routes;
    int n_routes;
    int n_rows, gpu_row, net_row; /* net_row: the first line of NET ports */
    double width, height, top;    /* top: room above the first row for arcs */
} pic_model;

tp_status tp_html__model(pic_model *m, const tp_html_pic *pic, tp_error *err);
void tp_html__model_free(pic_model *m);
/* The link between nodes a and b (either order), -1 when none. */
int tp_html__link_of(const pic_model *m, int a, int b);
/* The number of a system node in the model. */
int tp_html__node_of(const pic_model *m, const tp_node *n);

#endif
