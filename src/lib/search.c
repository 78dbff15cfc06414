/* Stage 4 (placeholder until the search lands). */
#include "search.h"

#include <stdlib.h>

tp_status tp_search__init(tp_system *sys, tp_error *err)
{
    (void)sys;
    return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "search not implemented yet");
}

void tp_search__graph_release(tp_graph *graph)
{
    free(graph->events);
    graph->events = NULL;
    graph->n_events = graph->events_cap = 0;
}
