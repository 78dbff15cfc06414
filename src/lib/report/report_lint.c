/* Provider-file lints of the topology a plan loaded (its own text, not the file again). */
#include "plan/plan.h"

tp_status tp_lint_plan(tp_lints **out, const tp_plan *plan, const char *sku, tp_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !plan)
        return tp_fail_arg(err, "tp_lint_plan", !out ? "out is NULL" : "plan is NULL");
    if (plan->n_kinds < 1 || !plan->kinds[0].text)
        return tp_fail_arg(err, "tp_lint_plan", "the plan holds no topology");
    const tp_host_kind *k = &plan->kinds[0];
    return tp_lint_buffer(out, k->text, k->text_len, k->source, sku, err);
}
