/* The NCCL_DEBUG=INFO log report: NCCL_DEBUG_SUBSYS parsing and filtering. */
#include "helpers.h"

#include "common/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL 2.22.3 ncclDebugInit, debug.cc: expected masks of NCCL_DEBUG_SUBSYS values. */
static void test_subsys_mask_parses_like_nccl(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t mask;
    } cases[] = {
        {NULL, TP_SUB_INIT | TP_SUB_ENV | TP_SUB_GRAPH}, /* the reference outputs' setting */
        {"", 0},
        {"GRAPH", TP_SUB_GRAPH},
        {"graph", TP_SUB_GRAPH},
        {"Init,Env", TP_SUB_INIT | TP_SUB_ENV},
        {"INIT,,GRAPH,", TP_SUB_INIT | TP_SUB_GRAPH},
        {"INIT,BOGUS", TP_SUB_INIT},
        {"GRAPHS", 0},
        {"INIT ", 0},
        {"ALL", TP_SUB_ALL},
        {"^GRAPH", ~TP_SUB_GRAPH},
        {"^graph,init", ~(TP_SUB_GRAPH | TP_SUB_INIT)},
        {"^", TP_SUB_ALL},
        {"^ALL", 0},
        {"INIT,^GRAPH", TP_SUB_INIT},
        {"NVLS,PROFILE,BOOTSTRAP,REG",
         TP_SUB_NVLS | TP_SUB_PROFILE | TP_SUB_BOOTSTRAP | TP_SUB_REG},
        {"COLL,P2P,SHM,NET,TUNING,ALLOC,CALL,PROXY",
         0x2 | 0x4 | 0x8 | 0x10 | 0x40 | 0x100 | 0x200 | 0x400},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        uint64_t got = tp_log__subsys_mask(cases[i].text);
        if (got != cases[i].mask)
            fail_msg("NCCL_DEBUG_SUBSYS=\"%s\": mask %llx, expected %llx",
                     cases[i].text ? cases[i].text : "(unset)", (unsigned long long)got,
                     (unsigned long long)cases[i].mask);
    }
}

/* The nccl-log report of fixture `name` under env (caller frees). */
static char *report_of(const char *name, const char *const *env)
{
    char *xml = helpers_fixture(name);
    tp_plan *plan = helpers_plan(xml, env, 1, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    tp_error err = {0};
    assert_int_equal(tp_report_nccl_log(out, plan, &err), TP_OK);
    fclose(out);
    tp_plan_free(plan);
    free(xml);
    return text;
}

static void test_subsys_filters_info_lines(void **state)
{
    (void)state;
    const char *const init[] = {"NCCL_DEBUG_SUBSYS=INIT", NULL};
    char *text = report_of("v100_nv2.xml", init);
    assert_non_null(strstr(text, "NCCL INFO Trees ["));     /* INFO(NCCL_INIT) */
    assert_non_null(strstr(text, "NCCL INFO Channel 00/")); /* INFO(NCCL_INIT) */
    assert_null(strstr(text, "NCCL INFO Ring 00 :"));       /* INFO(NCCL_GRAPH) */
    assert_null(strstr(text, "NCCL INFO === System :"));    /* INFO(NCCL_GRAPH) */
    free(text);
    const char *const graph[] = {"NCCL_DEBUG_SUBSYS=^INIT", NULL};
    text = report_of("v100_nv2.xml", graph);
    assert_null(strstr(text, "NCCL INFO Trees ["));
    assert_non_null(strstr(text, "NCCL INFO Ring 00 :"));
    assert_non_null(strstr(text, "NCCL INFO === System :"));
    free(text);
}

/* WARN lines carry NCCL_ALL: any non-empty mask keeps them, an empty one drops them. */
static void test_subsys_warn_needs_any_bit(void **state)
{
    (void)state;
    const char *const env_net[] = {"NCCL_DEBUG_SUBSYS=NET", NULL};
    char *text = report_of("v100_weak.xml", env_net);
    assert_non_null(strstr(text, "NCCL WARN "));
    assert_null(strstr(text, "NCCL INFO "));
    free(text);
    const char *const env_none[] = {"NCCL_DEBUG_SUBSYS=^ALL", NULL};
    text = report_of("v100_weak.xml", env_none);
    assert_string_equal(text, "");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subsys_mask_parses_like_nccl),
        cmocka_unit_test(test_subsys_filters_info_lines),
        cmocka_unit_test(test_subsys_warn_needs_any_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
