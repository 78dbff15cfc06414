/*
 * What `validate` reports besides success: the notes the system stage
 * recorded while building the topology (values NCCL 2.22.3 would substitute
 * without a word), each with its file position.
 */
#include "plan.h"

size_t tp_plan_note_count(const tp_plan *plan)
{
    return plan && plan->host_sys ? plan->host_sys->notes.n_lines : 0;
}

const char *tp_plan_note(const tp_plan *plan, size_t i)
{
    if (i >= tp_plan_note_count(plan))
        return NULL;
    return plan->host_sys->notes.lines[i].text;
}
