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
/* Write s as a JSON string literal. */
void tp_report__json_str(FILE *out, const char *s);
/* Write an explanation as a JSON array of {"step", "text"} objects. */
void tp_report__json_why(FILE *out, const tp_graph_why *w);
/* The version of a JSON schema ("topoplan.plan"), 0 when unknown. */
int tp_report__schema_version(const char *schema);
/* Open a JSON document: "{", its schema name and version; the caller adds fields. */
/* "{", the schema, its version and the NCCL version the document models (tp_config_nccl). */
void tp_report__json_begin(FILE *out, const char *schema, const char *nccl_version);
/* The plan's picture (Graphviz): the system, ring and tree channels (channel < 0: all), a legend.
 */
tp_status tp_report__plan_dot(FILE *out, const tp_plan *plan, int channel, tp_error *err);
/* Fail with TP_ERR_IO when the stream has an error. */
tp_status tp_report__check_stream(FILE *out, tp_error *err);

#endif
