/*
 * Fuzz target: any bytes as the topology `diff` and `check` compare with each
 * builtin (both ways, 1 and 2 nodes, text, JSON and HTML reports).
 */
#include "fuzz_common.h"

static void compare(const tp_plan *a, const tp_plan *b)
{
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    tp_status st = tp_compare_plans(&cmp, a, b, &err);
    fuzz_require_no_bug(st);
    if (st == TP_OK) {
        for (int f = TP_FORMAT_TEXT; f <= TP_FORMAT_JSON; f++) {
            tp_report_diff(fuzz_sink(), cmp, (tp_format)f, &err);
            tp_report_check(fuzz_sink(), cmp, (tp_format)f, &err);
        }
        fuzz_require_no_bug(tp_report_compare_html(fuzz_sink(), cmp, a, b, true, &err));
        for (size_t i = 0; i < tp_comparison_count(cmp); i++)
            (void)tp_comparison_get(cmp, i);
        (void)tp_comparison_first_layer(cmp);
        (void)tp_comparison_why(cmp);
    }
    tp_comparison_free(cmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, NULL, &err) != TP_OK)
        return 0;
    for (int nodes = 1; nodes <= 2; nodes++) {
        tp_job job = TP_JOB_INIT;
        job.n_nodes = nodes;
        tp_plan *fuzzed = NULL;
        tp_status st = tp_plan_buffer(&fuzzed, (const char *)data, size, "<fuzz>", &job, cfg, &err);
        fuzz_require_no_bug(st);
        if (st == TP_OK) {
            for (size_t i = 0; i < tp_builtin_count(); i++) {
                const char *xml = tp_builtin_xml(tp_builtin_name(i));
                tp_plan *builtin = NULL;
                if (tp_plan_buffer(&builtin, xml, strlen(xml), "<builtin>", &job, cfg, &err) ==
                    TP_OK) {
                    compare(builtin, fuzzed);
                    compare(fuzzed, builtin);
                }
                tp_plan_free(builtin);
            }
        }
        tp_plan_free(fuzzed);
    }
    tp_config_free(cfg);
    return 0;
}
