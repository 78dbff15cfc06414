/*
 * Reports: readable views of a plan (text, JSON, DOT). The last stage: it
 * may read every earlier stage's data and never changes it.
 */
#ifndef TP_REPORT_H
#define TP_REPORT_H

#include "explain/explain.h"
#include "plan/plan.h"

#include <stdio.h>

/* NCCL's node label, e.g. "GPU/0-1a000", "NET/0-3". */
void tp_report__node_label(char *buf, size_t size, const tp_node *node);
/* A short label: "GPU/0" (GPU index = rank order), "NET/3", "CPU/1". */
void tp_report__node_short(char *buf, size_t size, const tp_system *sys, const tp_node *node);
/*
 * A device as an operator knows it, next to NCCL's id where that helps to read
 * NCCL's log: "GPU 3 (0000:5f:00.0, GPU/0-5f000)", "mlx5_3 (NET/3)", "NIC
 * mlx5_3 at 0000:5e:00.0 (NIC/0-5e000)", "PCIe switch 0000:5d:00.0
 * (PCI/0-5d000)", "NVSwitch", "NUMA node 0 (CPU/0-0)". xml (may be NULL:
 * fewer names) is the topology the node's system was built from.
 */
void tp_report__device_name(char *buf, size_t size, const tp_xml *xml, const tp_node *node);
/* The same as separate fields: the operator's short name ("GPU 3", "mlx5_3"), the bus id of PCI
 * devices, NCCL's id (findings' structured device). */
void tp_report__device_fields(tp_diff_device *out, const tp_xml *xml, const tp_node *node);
/* A finding's structured fields as JSON: , "device": {...}|null, "peer": ..., "values": [...]. */
void tp_report__json_finding_fields(FILE *out, const tp_difference *d);
/* "0000:5f:00.0" of a PCI-addressed node's NCCL id. */
void tp_report__bus_id(char *buf, size_t size, int64_t id);
/*
 * A node's PCIe link as its <pci> element gives it ("PCIe Gen5 x16"), or ""
 * when xml has no such element or attributes.
 */
void tp_report__pcie_link(char *buf, size_t size, const tp_xml *xml, const tp_node *node);
/* The same as numbers (lanes, GT/s); false when the <pci> element lacks either attribute. */
bool tp_report__pcie_numbers(const tp_xml *xml, const tp_node *node, int *width, double *gts);
/* Write s as a JSON string literal. */
void tp_report__json_str(FILE *out, const char *s);
/* ... or null when s is NULL. */
void tp_report__json_opt_str(FILE *out, const char *s);
/* Write n strings as a JSON array: ["a", "b"]. */
void tp_report__json_str_array(FILE *out, const char *const *items, size_t n);
/* Write a JSON object of n string fields: {"keys[0]": "values[0]", ...}. */
void tp_report__json_str_fields(FILE *out, const char *const *keys, const char *const *values,
                                size_t n);
/* Write an explanation as a JSON array of {"step", "text"} objects. */
void tp_report__json_why(FILE *out, const tp_graph_why *w);
/* The version of a JSON schema ("topoplan.plan"), 0 when unknown. */
int tp_report__schema_version(const char *schema);
/* The job a report was computed for, as its first line ("Job: 2 nodes x 8 GPUs = 16 ranks;
 * reported rank 0 ..."): the commands' default --nodes differ (nics: 2), so each says it. */
void tp_report__job_line(FILE *out, const tp_plan *plan);
/* The same for JSON: "nodes", "gpus_per_node", "ranks" and "rank" keys (one line). */
void tp_report__json_job(FILE *out, const tp_plan *plan);
/* Open a JSON document: "{", its schema name and version; the caller adds fields. */
/* "{", the schema, its version and the NCCL version the document models (tp_config_nccl). */
void tp_report__json_begin(FILE *out, const char *schema, const char *nccl_version);
/* The plan's picture (Graphviz): the system, ring and tree channels (channel < 0: all), a legend.
 */
tp_status tp_report__plan_dot(FILE *out, const tp_plan *plan, int channel, tp_error *err);
/* Fail with TP_ERR_IO when the stream has an error. */
tp_status tp_report__check_stream(FILE *out, tp_error *err);

#endif
