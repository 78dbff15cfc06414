/*
 * Enumerations of NCCL's topology model and their names, as NCCL 2.22.3
 * numbers and prints them. The numeric order is meaningful: path types run
 * from best to worst, and link types share numbers with path types.
 */
#ifndef TP_NAMES_H
#define TP_NAMES_H

#include "topoplan.h"

/* The enumerations themselves (tp_node_type, tp_link_type, tp_path_type,
 * tp_pattern) are public: include/topoplan.h. */

/* Edits (insert, delete, replace) from a to b, for "did you mean": SIZE_MAX when either name
 * is longer than 63 bytes (such names are far from every known one). */
size_t tp_edit_distance(const char *a, const char *b);

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
