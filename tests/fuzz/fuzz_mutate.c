/*
 * Fuzz target: lines "K SPEC" as mutate edits (K: 0 --set, 1 --set-net,
 * 2 --set-cpu, 3 --remove, 4 --remove-net, 5 --nvlink) on every builtin; the
 * edited XML must parse again and is planned.
 */
#include "fuzz_common.h"

static void edit_and_plan(const char *topo, const tp_mutation *muts, size_t n,
                          const tp_config *cfg)
{
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);
    if (!mem)
        return;
    tp_error err = {0};
    tp_status st = tp_mutate_buffer(mem, topo, strlen(topo), "<builtin>", muts, n, &err);
    fclose(mem);
    fuzz_require_no_bug(st);
    if (st == TP_OK) {
        tp_job job = TP_JOB_INIT;
        tp_plan *plan = NULL;
        st = tp_plan_buffer(&plan, out, len, "<mutated>", &job, cfg, &err);
        if (st == TP_ERR_XML) /* an accepted edit must write well-formed XML */
            abort();
        fuzz_require_no_bug(st);
        fuzz_reports(plan);
        tp_plan_free(plan);
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    tp_mutation muts[16];
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n < 16; line = strtok(NULL, "\n")) {
        if (line[0] < '0' || line[0] > '5' || line[1] != ' ')
            continue;
        muts[n++] = (tp_mutation){.kind = (tp_mutation_kind)(line[0] - '0'), .spec = line + 2};
    }
    tp_config *cfg = NULL;
    tp_error err = {0};
    if (tp_config_new(&cfg, NULL, &err) == TP_OK)
        for (size_t i = 0; i < tp_builtin_count(); i++)
            edit_and_plan(tp_builtin_xml(tp_builtin_name(i)), muts, n, cfg);
    tp_config_free(cfg);
    free(text);
    return 0;
}
