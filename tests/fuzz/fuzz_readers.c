/*
 * Fuzz target: the plain reader and the tree NCCL's replayed loader builds,
 * against expat. Any bytes: whenever one of them gives a tree, expat reads
 * the text and gives the same tree (an abort otherwise).
 */
#include "fuzz_common.h"

#include "xml/nccl_xml.h"
#include "xml/xml.h"

static void check_tree(tp_xml *tree, const char *text, size_t size)
{
    if (!tree)
        return;
    tp_xml *expat = NULL;
    tp_error err = {0};
    const tp_xml_elem *where = NULL;
    if (tp_xml__parse_expat(&expat, text, size, "fuzz", &err) != TP_OK ||
        !tp_xml__same_tree(tree->root, expat->root, &where))
        abort();
    tp_xml__free(expat);
    tp_xml__free(tree);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    tp_error err = {0};
    tp_xml *plain = NULL;
    if (tp_xml__parse_plain(&plain, text, size, "fuzz", &err) != TP_OK)
        return 0;
    check_tree(plain, text, size);
    for (int kind = TP_NCCL_XML_TOPOLOGY; kind <= TP_NCCL_XML_GRAPHS; kind++) {
        tp_log log = {.enabled = true};
        tp_nccl_xml_result r;
        tp_nccl_xml_input in = {.text = text,
                                .len = size,
                                .kind = (tp_nccl_xml_kind)kind,
                                .source = "fuzz",
                                .want_tree = true};
        if (tp_xml__nccl_load(&in, &log, &r, &err) == TP_OK)
            check_tree(r.tree, text, size);
        tp_log_clear(&log);
    }
    return 0;
}
