/* The tuning reports (text, JSON, SVG): one sweep of NCCL's choices shared by all. */
#ifndef TP_REPORT_TUNE_H
#define TP_REPORT_TUNE_H

#include "report/report.h"

/* One size of one collective: NCCL's choice and nccl-tests' bandwidths (GB/s). */
typedef struct tune_row {
    uint64_t bytes;
    bool ok; /* false: NCCL finds no algorithm/protocol */
    tp_tune_choice choice;
    double algbw, busbw;
} tune_row;

typedef struct tune_sweep {
    const tp_tuning *tuning;
    tp_coll colls[TP_COLL_COUNT];
    int n_colls;
    int n_sizes;    /* powers of two from the first size */
    tune_row *rows; /* n_colls x n_sizes (owned; NULL for a one-rank job) */
} tune_sweep;

tp_status tp_report__tune_sweep(tune_sweep *s, const tp_plan *plan, const tp_tune_options *opt,
                                const char *fn, tp_error *err);
void tp_report__tune_sweep_free(tune_sweep *s);
/* Whether the choice changes from prev to r. */
bool tp_report__tune_crossover(const tune_row *prev, const tune_row *r);
/* "8 B", "512 KiB", "8 GiB". */
void tp_report__size_name(char *buf, size_t size, uint64_t bytes);

#endif
