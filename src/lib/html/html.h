/*
 * The plan as one self-contained HTML page (tp_report_html): the system drawn
 * as an operator pictures the machine with its channels to pick, each
 * graph's explanation beside it, the path matrix as a heat map, the tuning
 * model on log axes, and for jobs of nodes that differ the node that limits
 * the job beside a good one. Everything inline (CSS, script, SVG), no
 * network, the same bytes for the same plan; the SVG is complete without the
 * script, which only adds picking and hovering.
 */
#ifndef TP_HTML_H
#define TP_HTML_H

#include "report/job_limits.h"
#include "report/report_tune.h"

#include <stdio.h>

/* Write s as HTML text (also fit for attribute values in double quotes). */
void tp_html__text(FILE *out, const char *s);

/* Write s as a JSON string that is safe inside a <script> element (no "<", ">" or "&"). */
void tp_html__json_str(FILE *out, const char *s);

/* " The NCCL 2.27.5 profile is partial: 115 of 166 ..." when p is not exact, else nothing. */
void tp_html__partial_note(FILE *out, const tp_nccl_profile *p);

/* What one system picture draws. */
typedef struct tp_html_pic {
    const char *id;           /* element id prefix, unique in the page */
    const char *title;        /* the picture's heading */
    const tp_system *sys;     /* the system drawn (its node, trimmed, with paths) */
    const tp_system *host;    /* the same before the searches (NIC and link speeds), or NULL */
    tp_graph *const *graphs;  /* TP_GRAPH_COUNT graphs of that system, may be NULL */
    const tp_plan *nic_plan;  /* non-NULL: GPUs list the plan's NIC per channel */
    const tp_graph_why *whys; /* TP_GRAPH_COUNT explanations shown beside, or NULL */
    const tp_xml_elem *xml;   /* the topology's XML root, for NIC names (may be NULL) */
    bool fold_whys;           /* the explanations folded (pictures side by side) */
    /* Marks of a comparison (NULL: none): a node or link the other side lacks or differs in. */
    bool (*node_changed)(const void *ctx, const tp_node *n);
    bool (*link_changed)(const void *ctx, const tp_node *from, const tp_link *l);
    bool (*channel_differs)(const void *ctx, int graph, int channel);
    const void *change_ctx;
} tp_html_pic;

/* The last part of a path ("dir/node1.xml" -> "node1.xml"). */
const char *tp_html__base_name(const char *path);

/* The picture with its channel picker, hover panel, link table and explanations. */
tp_status tp_html__system(FILE *out, const tp_html_pic *pic, tp_error *err);
/* The GPU x GPU / GPU x NET path matrix of sys as a heat map table. */
void tp_html__paths(FILE *out, const tp_system *sys, const tp_xml_elem *xml);
/* The tuning model: log-scale busbw plots per collective and a table of common sizes. */
tp_status tp_html__tune(FILE *out, const tp_plan *plan, tp_error *err);
/* Jobs of nodes that differ: who limits the job, what it costs, the nodes side by side. */
tp_status tp_html__job(FILE *out, const tp_plan *plan, tp_error *err);
/* A comparison's findings: root causes graded, the node's cost to a job, the consequences
 * folded under them (check: a health check; else a diff's differences). Buttons mark the
 * devices a finding names; with `drawn`, only those of that system (NULL: both sides drawn). */
void tp_html__comparison_findings(FILE *out, const tp_comparison *cmp, bool check,
                                  const tp_system *drawn);
/* The plan page's findings section: a health check against a baseline (check, may be NULL),
 * the setting notes and the topology file's lints; nothing when there are none. Whether it
 * wrote the section. */
bool tp_html__plan_findings(FILE *out, const tp_plan *plan, const tp_comparison *check);
/* The page's style sheet and script. */
void tp_html__style(FILE *out);
void tp_html__script(FILE *out);

#endif
