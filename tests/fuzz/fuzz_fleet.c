/*
 * Fuzz target: the fleet check's sharing (tp_compare_key). The input is a node
 * topology A, or A and B separated by a NUL byte; without B, B is A with every
 * hex digit of its guid values shifted by one (a renaming NCCL may or may not
 * read alike: "0x01" and "0x1" are one value, "0x12" and "0x2" are not). Both
 * are checked against the DGX H100 builtin on 2 nodes; whenever their keys are
 * equal their checks must be too (status, each difference's layer, severity
 * and title), or the target aborts: a shared result would be wrong.
 */
#include "fuzz_common.h"

/* guid="..." values' hex digits shifted (0->1 ... f->0; a 0x prefix kept), the rest as it is
 * (caller frees). */
static char *shifted_guids(const char *a, size_t len)
{
    static const char digits[] = "0123456789abcdef0";
    char *b = malloc(len + 1), *end = b ? b + len : NULL;
    if (!b)
        return NULL;
    memcpy(b, a, len + 1);
    for (char *p = b; (p = memmem(p, (size_t)(end - p), "guid=\"", 6)) != NULL;) {
        p += 6;
        if (p + 1 < end && p[0] == '0' && p[1] == 'x')
            p += 2;
        for (; p < end && *p != '"'; p++) {
            const char *d = *p ? strchr(digits, *p) : NULL;
            if (d)
                *p = d[1];
        }
    }
    return b;
}

/* The check of one node: its plan's status and comparison with the baseline. */
typedef struct node_check {
    tp_status status;
    size_t n;
    char *summary; /* layer/severity/title of every difference, one per line */
} node_check;

static void check_node(node_check *c, const tp_plan *base, const char *xml, size_t len,
                       const tp_job *job, const tp_config *cfg)
{
    tp_plan *plan = NULL;
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    c->status = tp_plan_buffer(&plan, xml, len, "<node>", job, cfg, &err);
    fuzz_require_no_bug(c->status);
    if (c->status == TP_OK)
        c->status = tp_compare_plans(&cmp, base, plan, &err);
    fuzz_require_no_bug(c->status);
    for (size_t i = 0; f && c->status == TP_OK && i < tp_comparison_count(cmp); i++) {
        const tp_difference *d = tp_comparison_get(cmp, i);
        fprintf(f, "%d %d %s\n", (int)d->layer, (int)d->severity, d->title);
    }
    c->n = cmp ? tp_comparison_count(cmp) : 0;
    if (f)
        fclose(f);
    c->summary = buf;
    tp_comparison_free(cmp);
    tp_plan_free(plan);
}

static bool same_key(const tp_plan *base, const char *a, size_t la, const char *b, size_t lb)
{
    char *ka = NULL, *kb = NULL;
    size_t na = 0, nb = 0;
    tp_error err = {0};
    tp_status sa = tp_compare_key(&ka, &na, base, a, la, &err);
    tp_status sb = tp_compare_key(&kb, &nb, base, b, lb, &err);
    fuzz_require_no_bug(sa);
    fuzz_require_no_bug(sb);
    bool same = sa == TP_OK && sb == TP_OK && na == nb && memcmp(ka, kb, na) == 0;
    free(ka);
    free(kb);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tp_plan *base;
    static tp_config *cfg;
    tp_job job = TP_JOB_INIT;
    job.n_nodes = 2;
    tp_error err = {0};
    if (!cfg && tp_config_new(&cfg, NULL, &err) != TP_OK)
        return 0;
    const char *h100 = tp_builtin_xml("dgx-h100");
    if (!base && tp_plan_buffer(&base, h100, strlen(h100), "<base>", &job, cfg, &err) != TP_OK)
        abort();
    const char *text = (const char *)data, *nul = memchr(data, '\0', size);
    size_t la = nul ? (size_t)(nul - text) : size;
    char *a = fuzz_text(data, la);
    char *b = nul ? fuzz_text((const uint8_t *)nul + 1, size - la - 1) : shifted_guids(a, la);
    size_t lb = nul ? size - la - 1 : la;
    if (a && b && same_key(base, a, la, b, lb)) {
        node_check ca, cb;
        check_node(&ca, base, a, la, &job, cfg);
        check_node(&cb, base, b, lb, &job, cfg);
        bool same = ca.status == cb.status && ca.n == cb.n &&
                    strcmp(ca.summary ? ca.summary : "", cb.summary ? cb.summary : "") == 0;
        free(ca.summary);
        free(cb.summary);
        if (!same)
            abort(); /* equal keys, different checks: the fleet would share a wrong result */
    }
    free(a);
    free(b);
    return 0;
}
