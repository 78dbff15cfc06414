/*
 * Enumerations of NCCL's topology model and their names, as NCCL 2.22.3
 * numbers and prints them. The numeric order is meaningful: path types run
 * from best to worst, and link types share numbers with path types.
 */
#ifndef TP_NAMES_H
#define TP_NAMES_H

/* Node types (NCCL 2.22.3 order: GPU PCI NVS CPU NIC NET). */
typedef enum tp_node_type {
    TP_NODE_GPU,
    TP_NODE_PCI,
    TP_NODE_NVS,
    TP_NODE_CPU, /* a NUMA domain */
    TP_NODE_NIC,
    TP_NODE_NET,
    TP_NODE_TYPE_COUNT
} tp_node_type;

/* Link types share values with the path type they produce. */
typedef enum tp_link_type {
    TP_LINK_LOC = 0,
    TP_LINK_NVL = 1,
    TP_LINK_PCI = 3,
    TP_LINK_SYS = 7,
    TP_LINK_NET = 8,
} tp_link_type;

/* Path types, best to worst. */
typedef enum tp_path_type {
    TP_PATH_LOC,
    TP_PATH_NVL,
    TP_PATH_NVB,
    TP_PATH_PIX,
    TP_PATH_PXB,
    TP_PATH_PXN,
    TP_PATH_PHB,
    TP_PATH_SYS,
    TP_PATH_NET,
    TP_PATH_DIS,
    TP_PATH_TYPE_COUNT
} tp_path_type;

/* Graph patterns of NCCL 2.22.3 (graph.h), 1..6. */
enum {
    TP_PATTERN_BALANCED_TREE = 1,
    TP_PATTERN_SPLIT_TREE = 2,
    TP_PATTERN_TREE = 3,
    TP_PATTERN_RING = 4,
    TP_PATTERN_NVLS = 5,
    TP_PATTERN_COLLNET_DIRECT = 6,
};

/* "balanced tree", "ring", ...; "?" for an unknown pattern. */
const char *tp_pattern_name(int pattern);
/* "GPU", "PCI", ... */
const char *tp_node_type_name(int type);
/* "LOC", "NVL", "", "PCI", "", "", "", "SYS", "NET" (NCCL prints links by these). */
const char *tp_link_type_name(int type);
/* "LOC" .. "DIS". */
const char *tp_path_type_name(int type);
/* Path type by name (exact, upper case); -1 when unknown. */
int tp_path_type_from_name(const char *name);

#endif
