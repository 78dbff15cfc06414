/* Access to the built-in topologies. */
#include "xml/builtins.h"

#include "common/internal.h"
#include "common/names.h"

#include <stdint.h>
#include <string.h>

size_t tp_builtin_count(void)
{
    return tp_builtins_count;
}

const char *tp_builtin_name(size_t i)
{
    return i < tp_builtins_count ? tp_builtins[i].name : NULL;
}

const char *tp_builtin_about(size_t i)
{
    return i < tp_builtins_count ? tp_builtins[i].about : NULL;
}

const char *tp_builtin_xml(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < tp_builtins_count; i++)
        if (strcmp(tp_builtins[i].name, name) == 0)
            return tp_builtins[i].xml;
    return NULL;
}

const char *tp_builtin_nearest(const char *name)
{
    const char *nearest = NULL;
    size_t best = SIZE_MAX;
    for (size_t i = 0; name && i < tp_builtins_count; i++) {
        size_t d = tp_edit_distance(name, tp_builtins[i].name);
        if (d < best)
            best = d, nearest = tp_builtins[i].name;
    }
    return nearest;
}
