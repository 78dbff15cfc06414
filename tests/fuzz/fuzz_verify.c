/*
 * Fuzz target: any bytes as an NCCL log read by verify: line splitting (prefixes,
 * CR, NUL bytes, overlong lines), stream and rank attribution, settings, the
 * version line, then the comparison with the 4-GPU builtin's plan (the input's
 * first byte chooses 1 or 2 nodes) and the log against itself; every report.
 */
#include "fuzz_common.h"

static void run(const char *text, size_t len, const char *builtin, int n_nodes)
{
    tp_verify_options opt = {.job = TP_JOB_INIT, .find_causes = 0};
    opt.job.n_nodes = n_nodes;
    if (builtin) {
        opt.topo_xml = tp_builtin_xml(builtin);
        opt.topo_len = strlen(opt.topo_xml);
        opt.topo_source = builtin;
    }
    tp_verify *v = NULL;
    tp_error err = {0};
    if (tp_verify_new(&v, &opt, &err) == TP_OK &&
        tp_verify_add_buffer(v, text, len, "fuzz.log", &err) == TP_OK &&
        tp_verify_run(v, &err) == TP_OK) {
        tp_report_verify(fuzz_sink(), v, TP_FORMAT_TEXT, &err);
        tp_report_verify(fuzz_sink(), v, TP_FORMAT_JSON, &err);
        tp_verify_write_topology(fuzz_sink(), v, &err);
        for (int i = 0; i < tp_verify_rank_count(v); i++) {
            tp_verify_rank_info info;
            tp_verify_rank(v, i, &info, sizeof(info));
        }
    }
    tp_verify_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    run(text, size, "v100-nv2", size && (data[0] & 1) ? 2 : 1);
    run(text, size, NULL, 0);
    free(text);
    return 0;
}
