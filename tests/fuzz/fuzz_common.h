/*
 * Shared by the fuzz targets (each is built alone with the library): plan a
 * topology under an environment and write every report of the plan to a sink.
 */
#ifndef TP_FUZZ_COMMON_H
#define TP_FUZZ_COMMON_H

#include "topoplan.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reports go nowhere; opened once per process. */
static inline FILE *fuzz_sink(void)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    return sink;
}

/* The input as a NUL-terminated string (caller frees). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = '\0';
    }
    return text;
}

/*
 * The text's lines as an environment (NULL-terminated, at most max - 1 lines;
 * the array points into text). NCCL_GRAPH_FILE lines are dropped when asked:
 * a file named by the fuzzer would read any file (fuzz_graphfile covers them).
 */
static inline void fuzz_env_lines(char *text, const char **env, size_t max, bool no_graph_file)
{
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n + 1 < max; line = strtok(NULL, "\n"))
        if (!no_graph_file || strncmp(line, "NCCL_GRAPH_FILE", 15) != 0)
            env[n++] = line;
    env[n] = NULL;
}

/* A broken invariant (exit 5) is a finding like a crash: no input may cause one. */
static inline void fuzz_require_no_bug(tp_status st)
{
    if (st == TP_ERR_INTERNAL)
        abort();
}

/* Every report a plan feeds, in every format it has. */
static inline void fuzz_reports(const tp_plan *plan)
{
    FILE *out = fuzz_sink();
    tp_error err = {0};
    if (!out || !plan)
        return;
    fuzz_require_no_bug(tp_report_nccl_log(out, plan, &err));
    if (tp_plan_status(plan) != TP_OK)
        return; /* the log up to an NCCL-reported failure is all there is */
    fuzz_require_no_bug(tp_report_nccl_log_sizes(out, plan, &err));
    fuzz_require_no_bug(tp_report_topology_xml(out, plan, &err));
    fuzz_require_no_bug(tp_report_html(out, plan, &err));
    for (int f = TP_FORMAT_TEXT; f <= TP_FORMAT_DOT; f++) {
        fuzz_require_no_bug(tp_report_paths(out, plan, (tp_format)f, &err));
        fuzz_require_no_bug(tp_report_search(out, plan, (tp_format)f, &err));
        fuzz_require_no_bug(tp_report_plan(out, plan, (tp_format)f, &err));
        fuzz_require_no_bug(tp_report_nics(out, plan, (tp_format)f, &err));
    }
}

/* Plan an XML text for n_nodes under cfg, report it, free it. */
static inline void fuzz_plan(const char *xml, size_t len, int n_nodes, int rank, const tp_config *cfg)
{
    tp_job job = TP_JOB_INIT;
    job.n_nodes = n_nodes;
    job.rank = rank;
    tp_plan *plan = NULL;
    tp_error err = {0};
    fuzz_require_no_bug(tp_plan_buffer(&plan, xml, len, "<fuzz>", &job, cfg, &err));
    fuzz_reports(plan);
    tp_plan_free(plan);
}

/*
 * The builtin a graph file is replayed on: one with NET devices when the file
 * names NETs, else one without (stable under mutations elsewhere in the input).
 */
static inline const char *fuzz_builtin_for_graph(const uint8_t *data, size_t size)
{
    int want_net = memmem(data, size, "<net", 4) != NULL;
    for (size_t i = 0; i < tp_builtin_count(); i++) {
        const char *xml = tp_builtin_xml(tp_builtin_name(i));
        if (xml && (strstr(xml, "<net") != NULL) == want_net)
            return tp_builtin_name(i);
    }
    return tp_builtin_count() ? tp_builtin_name(0) : NULL;
}

/* Plan a builtin under cfg on 1 and 2 nodes. */
static inline void fuzz_plan_builtin(const char *name, const tp_config *cfg)
{
    const char *xml = tp_builtin_xml(name);
    if (!xml)
        return;
    fuzz_plan(xml, strlen(xml), 1, 0, cfg);
    fuzz_plan(xml, strlen(xml), 2, 1, cfg);
}

#endif
