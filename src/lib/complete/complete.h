/* topoplan complete: the completion record shared by complete.c and its report. */
#ifndef TP_COMPLETE_H
#define TP_COMPLETE_H

#include "provider/provider.h"

typedef struct tp_completion_add {
    char *element, *added, *reason; /* owned */
} tp_completion_add;

struct tp_completion {
    char sku[64];
    char mode[32];
    char *xml; /* owned: the completed text */
    tp_completion_add *adds;
    size_t n_adds, cap_adds;
    tp_addition view; /* what tp_completion_get() hands out */
    char **notes;     /* owned: what complete left as published, and why */
    size_t n_notes, cap_notes;
};

/* Index of the first addition with the same reason as addition i. */
size_t tp_completion__first_with_reason(const tp_completion *c, size_t i);

#endif
