/* Name tables for the model's enumerations. */
#include "common/names.h"

#include "common/internal.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

static const char *const node_type_names[] = {
    [TP_NODE_GPU] = "GPU", [TP_NODE_PCI] = "PCI", [TP_NODE_NVS] = "NVS",
    [TP_NODE_CPU] = "CPU", [TP_NODE_NIC] = "NIC", [TP_NODE_NET] = "NET",
};
static_assert(ARRAY_LEN(node_type_names) == TP_NODE_TYPE_COUNT, "node names out of sync");

/* NCCL 2.22.3 names link types with the path names of the same value. */
static const char *const link_type_names[] = {
    [TP_LINK_LOC] = "LOC",
    [1] = "NVL",
    [2] = "",
    [TP_LINK_PCI] = "PCI",
    [4] = "",
    [5] = "",
    [6] = "",
    [TP_LINK_SYS] = "SYS",
    [TP_LINK_NET] = "NET",
};

static const char *const path_type_names[] = {
    [TP_PATH_LOC] = "LOC", [TP_PATH_NVL] = "NVL", [TP_PATH_NVB] = "NVB", [TP_PATH_PIX] = "PIX",
    [TP_PATH_PXB] = "PXB", [TP_PATH_PXN] = "PXN", [TP_PATH_PHB] = "PHB", [TP_PATH_SYS] = "SYS",
    [TP_PATH_NET] = "NET", [TP_PATH_DIS] = "DIS",
};
static_assert(ARRAY_LEN(path_type_names) == TP_PATH_TYPE_COUNT, "path names out of sync");

const char *tp_node_type_name(int type)
{
    return type >= 0 && type < TP_NODE_TYPE_COUNT ? node_type_names[type] : "?";
}

const char *tp_link_type_name(int type)
{
    return type >= 0 && (size_t)type < ARRAY_LEN(link_type_names) ? link_type_names[type] : "?";
}

const char *tp_path_type_name(int type)
{
    return type >= 0 && type < TP_PATH_TYPE_COUNT ? path_type_names[type] : "?";
}

int tp_path_type_from_name(const char *name)
{
    for (int i = 0; i < TP_PATH_TYPE_COUNT; i++)
        if (strcmp(name, path_type_names[i]) == 0)
            return i;
    return -1;
}

const char *tp_pattern_name(int pattern)
{
    static const char *const names[] = {
        [TP_PATTERN_BALANCED_TREE] = "balanced tree",
        [TP_PATTERN_SPLIT_TREE] = "split tree",
        [TP_PATTERN_TREE] = "tree",
        [TP_PATTERN_RING] = "ring",
        [TP_PATTERN_NVLS] = "nvls",
        [TP_PATTERN_COLLNET_DIRECT] = "collnet direct",
    };
    if (pattern < 0 || (size_t)pattern >= ARRAY_LEN(names) || !names[pattern])
        return "?";
    return names[pattern];
}

size_t tp_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return SIZE_MAX;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}
