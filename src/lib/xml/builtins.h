/* Topologies compiled into the library (the builtins folder, embedded at build time). */
#ifndef TP_BUILTINS_H
#define TP_BUILTINS_H

#include <stddef.h>

typedef struct tp_builtin {
    const char *name;
    const char *about;
    const char *xml;
} tp_builtin;

extern const tp_builtin tp_builtins[];
extern const size_t tp_builtins_count;

#endif
