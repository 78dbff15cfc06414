/*
 * Fuzz target: any bytes as a partial provider file, through the lints and
 * `complete` (recognised SKU, an NVSwitch SKU with missing GPUs, a mesh SKU).
 * A completion must itself be a well-formed topology file.
 */
#include "fuzz_common.h"

static void complete_with(const uint8_t *data, size_t size, const char *sku)
{
    tp_complete_options opts = {.sku = sku};
    tp_completion *c = NULL;
    tp_error err = {0};
    if (tp_complete_buffer(&c, (const char *)data, size, "<fuzz>", &opts, &err) == TP_OK) {
        const char *xml = tp_completion_xml(c);
        tp_lints *again = NULL;
        if (tp_lint_buffer(&again, xml, strlen(xml), "<completed>", sku, &err) != TP_OK)
            abort(); /* complete wrote text that does not parse */
        tp_lints_free(again);
        tp_report_completion(fuzz_sink(), c, TP_FORMAT_JSON, &err);
        tp_report_completion(fuzz_sink(), c, TP_FORMAT_TEXT, &err);
    }
    tp_completion_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tp_lints *l = NULL;
    tp_error err = {0};
    tp_lint_buffer(&l, (const char *)data, size, "<fuzz>", NULL, &err);
    tp_lints_free(l);
    complete_with(data, size, NULL);
    complete_with(data, size, "aws-p5.48xlarge");
    complete_with(data, size, "azure-nd40rs-v2");
    return 0;
}
