/*
 * Writing an output file without destroying it: the text goes to a new file
 * beside the target (same folder, so the rename is atomic), renamed over the
 * target only when everything was written; a failure leaves the target as it
 * was. A target that exists and is not a regular file (a terminal, /dev/null,
 * a FIFO) is written in place: it cannot be replaced.
 */
#ifndef TP_OUT_FILE_H
#define TP_OUT_FILE_H

#include "common/internal.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct tp_out_file {
    FILE *f;
    char target[4096]; /* where the file goes (a symbolic link resolved) */
    char temp[4096];   /* the new file beside it; "" when written in place */
} tp_out_file;

/* Open a new file for `path` (o->f); TP_ERR_IO naming the path on failure. */
tp_status tp_out_file__open(tp_out_file *o, const char *path, tp_error *err);
/* Close it: keep (rename over the target) when `keep` and every write succeeded, otherwise
 * remove the new file. TP_ERR_IO naming the path when a write failed (kept or not). */
tp_status tp_out_file__close(tp_out_file *o, bool keep, tp_error *err);

#endif
