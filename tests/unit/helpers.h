/* Shared helpers of the unit tests (cmocka). */
#ifndef TP_TEST_HELPERS_H
#define TP_TEST_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plan/plan.h"

/*
 * Plan an inline topology XML. env: NULL-terminated "KEY=VALUE" list or NULL.
 * Fails the test on any error unless expect_status says otherwise.
 */
tp_plan *helpers_plan(const char *xml, const char *const *env, int n_nodes, int rank);
/* Same, returning the status and the error instead of failing the test. */
tp_status helpers_try_plan(tp_plan **out, const char *xml, const char *const *env, int n_nodes,
                           int rank, tp_error *err);
/* Topology text xml planned on n_nodes nodes (rank 0) under NCCL `nccl` with env (NULL: none);
 * fails the test on any error. */
tp_plan *helpers_plan_xml_at(const char *xml, const char *nccl, const char *const *env,
                             int n_nodes);
/* The fixture tests/fixtures/NAME planned the same way. */
tp_plan *helpers_plan_fixture_at(const char *name, const char *nccl, const char *const *env,
                                 int n_nodes);
/* The fixture file tests/fixtures/NAME read into memory (caller frees). */
char *helpers_fixture(const char *name);
/* GPU index of the system's GPU with this bus id (e.g. 0x1a000), failing the test if absent. */
int helpers_gpu_index(const tp_system *sys, int64_t bus_id);
/* True when some line of the plan's log equals text. */
int helpers_log_has(const tp_plan *plan, const char *text);
/* check(path, text, len, ctx) on every readable file matching the glob pattern; how many. */
int helpers_each_file(const char *pattern,
                      void (*check)(const char *path, const char *text, size_t len, void *ctx),
                      void *ctx);

#endif
