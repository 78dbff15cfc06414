/*
 * Fuzz target: `tune` with a random job, environment and sizes. The first line is
 * "BUILTIN NODES COLL MIN MAX" (numbers as strtoull reads them; any may be missing or
 * garbage), the other lines "KEY=VALUE" as the environment. The plan then goes through the
 * tune report (text, JSON, SVG) and one tp_plan_tune_call per collective at MIN and MAX.
 */
#include "fuzz_common.h"

/* Parsed head line; out-of-range numbers are kept so the library's checks are fuzzed too. */
typedef struct tune_head {
    const char *builtin;
    int nodes;
    tp_tune_options opt;
} tune_head;

static unsigned long long next_number(char **p)
{
    char *end = NULL;
    unsigned long long v = strtoull(*p, &end, 0);
    *p = end && end != *p ? end : *p + strcspn(*p, " ");
    *p += strspn(*p, " ");
    return v;
}

static void parse_head(char *line, tune_head *h)
{
    size_t n = tp_builtin_count();
    char *p = line;
    h->builtin = n ? tp_builtin_name(next_number(&p) % n) : NULL;
    /* Bounded: a big job is planned like a small one, only slower (issue 25 item 5's area). */
    h->nodes = (int)(next_number(&p) % 64) + 1;
    h->opt.coll = (int)(long long)next_number(&p);
    h->opt.min_bytes = next_number(&p);
    h->opt.max_bytes = next_number(&p);
}

static void tune_plan(const tp_plan *plan, const tp_tune_options *opt)
{
    FILE *out = fuzz_sink();
    tp_error err = {0};
    if (!out)
        return;
    fuzz_require_no_bug(tp_report_tune(out, plan, opt, TP_FORMAT_TEXT, &err));
    fuzz_require_no_bug(tp_report_tune(out, plan, opt, TP_FORMAT_JSON, &err));
    fuzz_require_no_bug(tp_report_tune_svg(out, plan, opt, &err));
    fuzz_require_no_bug(tp_report_nccl_log_sizes(out, plan, &err));
    for (int coll = -1; coll <= 5; coll++) {
        tp_tune_call call;
        fuzz_require_no_bug(tp_plan_tune_call(plan, coll, opt->min_bytes, &call, sizeof(call)));
        fuzz_require_no_bug(tp_plan_tune_call(plan, coll, opt->max_bytes, &call, sizeof(call)));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char *rest = strchr(text, '\n');
    if (rest)
        *rest++ = '\0';
    tune_head head = {0};
    parse_head(text, &head);
    const char *env[64];
    fuzz_env_lines(rest ? rest : text + strlen(text), env, 64, true);
    tp_config *cfg = NULL;
    tp_error err = {0};
    const char *xml = head.builtin ? tp_builtin_xml(head.builtin) : NULL;
    if (xml && tp_config_new(&cfg, env, &err) == TP_OK) {
        tp_job job = TP_JOB_INIT;
        job.n_nodes = head.nodes;
        tp_plan *plan = NULL;
        fuzz_require_no_bug(tp_plan_buffer(&plan, xml, strlen(xml), head.builtin, &job, cfg, &err));
        if (plan && tp_plan_status(plan) == TP_OK)
            tune_plan(plan, &head.opt);
        tp_plan_free(plan);
    }
    tp_config_free(cfg);
    free(text);
    return 0;
}
