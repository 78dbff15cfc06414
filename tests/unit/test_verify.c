/* verify: reading log lines as launchers write them, and a job's log against its plan. */
#include "helpers.h"

#include "verify/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The prefix forms of launchers and NCCL: host, pid and [dev] found, the text after the marker. */
static void test_split_prefixes(void **state)
{
    (void)state;
    static const struct {
        const char *raw, *host, *pid, *text;
        int dev;
        bool warn;
    } cases[] = {
        {"gpu-h-039:20020:20100 [3] NCCL INFO Ring 02 : 2 -> 3 -> 0", "gpu-h-039", "20020",
         "Ring 02 : 2 -> 3 -> 0", 3, false},
        {"[rank3]:node7:12:34 [5] NCCL INFO x", "node7", "12", "x", 5, false},
        {"[1,3]<stdout>:node7:12:34 [0] NCCL INFO y\r", "node7", "12", "y", 0, false},
        {"[2026-12-07 18:00:00.1] node7:12:34 [2] graph/search.cc:816 NCCL WARN Could not z",
         "node7", "12", "Could not z", 2, true},
        {"[0] NCCL INFO plain  ", "", "", "plain", 0, false},
        {"INFO normalized", "", "", "normalized", -1, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char raw[256];
        snprintf(raw, sizeof(raw), "%s", cases[i].raw);
        tp_vline l;
        tp_verify__split(raw, &l);
        assert_true(l.nccl);
        assert_int_equal(l.warn, cases[i].warn);
        assert_int_equal(l.dev, cases[i].dev);
        assert_int_equal(l.host_len, strlen(cases[i].host));
        assert_memory_equal(l.host, cases[i].host, l.host_len);
        assert_int_equal(l.pid_len, strlen(cases[i].pid));
        assert_string_equal(l.text, cases[i].text);
    }
    char other[] = "Epoch 0: loading data shards ...";
    tp_vline l;
    tp_verify__split(other, &l);
    assert_false(l.nccl);
}

/* The conformance normalizer: pointers, dropped lines, sections. */
static void test_normalize_and_sections(void **state)
{
    (void)state;
    char buf[256];
    assert_true(tp_verify__normalize("comm 0x7fffd0000b70 rank 3 nRanks 16 nNodes 2", false, buf,
                                     sizeof(buf)));
    assert_string_equal(buf, "INFO comm PTR rank 3 nRanks 16 nNodes 2");
    assert_false(tp_verify__normalize("NCCL version 2.22.3+cuda12.4", false, buf, sizeof(buf)));
    assert_false(
        tp_verify__normalize("NCCL_CROSS_NIC set by environment to 1.", false, buf, sizeof(buf)));
    static const struct {
        const char *line;
        int section;
    } cases[] = {
        {"INFO === System : maxBw 12.0 totalBw 120.0 ===", TP_VS_SYSTEM},
        {"INFO               + PCI[12.0] - GPU/0-6000 (8)", TP_VS_SYSTEM},
        {"INFO GPU/6000 :GPU/0-6000 (0/5000.0/LOC)", TP_VS_PATHS},
        {"INFO Pattern 4, crossNic 0, nChannels 8, bw 24.0/24.0, type NVL/PIX", TP_VS_SEARCH},
        {"INFO  0 : NET/0 GPU/0 GPU/3 NET/0", TP_VS_SEARCH},
        {"INFO Ring 02 : 2 -> 3 -> 0", TP_VS_CHANNELS},
        {"INFO Channel 00/08 :    0   1   2", TP_VS_CHANNELS},
        {"INFO 8 coll channels, 8 collnet channels, 0 nvls channels", TP_VS_CHANNELS},
        {"INFO threadThresholds 8/8/64 | 128/8/64 | 512 | 512", TP_VS_TUNING},
        {"INFO 1024 Bytes -> Algo 1 proto 0 time 12.5", TP_VS_TUNING},
        {"INFO Connected all rings", -1},
        {"INFO NET/IB : Using [0]mlx5_0:1/IB", -1},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        if (tp_verify__classify(cases[i].line, -1) != cases[i].section)
            fail_msg("%s: section %d, expected %d", cases[i].line,
                     tp_verify__classify(cases[i].line, -1), cases[i].section);
}

/* Most ranks of the jobs these tests write. */
#define TEST_MAX_RANKS 64

/*
 * Every rank's nccl-log of a builtin on n_nodes nodes, interleaved line by line as one launcher
 * writes them, each node a host; ring line `alter_ring` of rank alter_rank (-1: none) reversed.
 */
static char *job_log_nodes(const char *builtin, int n_nodes, int n_ranks, const char *version,
                           int alter_rank, const char *alter_ring)
{
    char *rank_text[TEST_MAX_RANKS] = {0};
    assert_true(n_ranks <= TEST_MAX_RANKS);
    for (int r = 0; r < n_ranks; r++) {
        tp_job job = TP_JOB_INIT;
        job.n_nodes = n_nodes;
        job.rank = r;
        tp_plan *plan = NULL;
        const char *xml = tp_builtin_xml(builtin);
        assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), builtin, &job, NULL, NULL), TP_OK);
        size_t len = 0;
        FILE *f = open_memstream(&rank_text[r], &len);
        assert_int_equal(tp_report_nccl_log(f, plan, NULL), TP_OK);
        fclose(f);
        tp_plan_free(plan);
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    fprintf(f, "host0:100:1 [0] NCCL INFO NCCL version %s+cuda12.4\nsome other program\n", version);
    char *pos[TEST_MAX_RANKS];
    for (int r = 0; r < n_ranks; r++)
        pos[r] = rank_text[r];
    if (alter_rank >= 0) {
        /* "Ring 01 : p -> r -> n" becomes "Ring 01 : n -> r -> p" */
        char *line = strstr(rank_text[alter_rank], alter_ring);
        assert_non_null(line);
        int c, p, me, n, width;
        assert_int_equal(sscanf(line, "Ring %d : %d -> %d -> %d%n", &c, &p, &me, &n, &width), 4);
        char swapped[64];
        int k = snprintf(swapped, sizeof(swapped), "Ring %02d : %d -> %d -> %d", c, n, me, p);
        assert_int_equal(k, width);
        memcpy(line, swapped, (size_t)k);
    }
    for (bool more = true; more;) {
        more = false;
        for (int r = 0; r < n_ranks; r++) {
            if (!*pos[r])
                continue;
            char *nl = strchr(pos[r], '\n');
            fprintf(f, "host%d:%d:1 %.*s\n", r * n_nodes / n_ranks, 100 + r, (int)(nl - pos[r]),
                    pos[r]);
            pos[r] = nl + 1;
            more = true;
        }
    }
    fclose(f);
    for (int r = 0; r < n_ranks; r++)
        free(rank_text[r]);
    return out;
}

static char *job_log(const char *builtin, int n_ranks, const char *version)
{
    return job_log_nodes(builtin, 1, n_ranks, version, -1, NULL);
}

static tp_verify *verify_nodes(const char *text, const char *builtin, int n_nodes, tp_status want)
{
    tp_verify_options opt = {.job = TP_JOB_INIT, .find_causes = 1};
    if (builtin) {
        opt.topo_xml = tp_builtin_xml(builtin);
        opt.topo_len = strlen(opt.topo_xml);
        opt.topo_source = builtin;
    }
    opt.job.n_nodes = n_nodes;
    tp_verify *v = NULL;
    tp_error err = {0};
    assert_int_equal(tp_verify_new(&v, &opt, &err), TP_OK);
    assert_int_equal(tp_verify_add_buffer(v, text, strlen(text), "job.log", &err), TP_OK);
    assert_int_equal(tp_verify_run(v, &err), want);
    return v;
}

static tp_verify *verify_text(const char *text, const char *builtin, tp_status want)
{
    return verify_nodes(text, builtin, 1, want);
}

/* Ranks of a kind share one plan; a renumbered rank that diverges is found as itself. */
static void test_kinds_plan_once(void **state)
{
    (void)state;
    /* 16 nodes of 4 GPUs: most ranks are renumbered from their kind's plan */
    char *log = job_log_nodes("v100-nv2", 16, 64, "2.22.3", -1, NULL);
    tp_verify *v = verify_nodes(log, "v100-nv2", 16, TP_OK);
    assert_int_equal(tp_verify_divergences(v), 0);
    unsigned long renumbered = 0, planned = tp_verify__kinds_planned(v->kinds, &renumbered);
    assert_true(renumbered > 0);
    assert_true(planned + renumbered <= 64 && planned < 64 / 2);
    tp_verify_free(v);
    free(log);
    log = job_log_nodes("v100-nv2", 16, 64, "2.22.3", 45, "Ring 01 :");
    v = verify_nodes(log, "v100-nv2", 16, TP_OK);
    assert_int_equal(tp_verify_divergences(v), 1);
    tp_verify_rank_info info;
    assert_int_equal(tp_verify_rank(v, 45, &info, sizeof(info)), TP_OK);
    assert_int_equal(info.verdict, TP_VERIFY_DIVERGE);
    assert_string_equal(info.stage, "channels");
    assert_non_null(strstr(info.expected, "Ring 01 :"));
    tp_verify_free(v);
    free(log);
}

static void test_job_agrees_then_diverges(void **state)
{
    (void)state;
    char *log = job_log("dgx-a100", 8, "2.22.3");
    tp_verify *v = verify_text(log, "dgx-a100", TP_OK);
    assert_int_equal(tp_verify_rank_count(v), 8);
    assert_int_equal(tp_verify_divergences(v), 0);
    tp_verify_rank_info info;
    for (int r = 0; r < 8; r++) {
        assert_int_equal(tp_verify_rank(v, r, &info, sizeof(info)), TP_OK);
        assert_int_equal(info.verdict, TP_VERIFY_AGREE);
        assert_true(info.n_lines > 10);
    }
    assert_int_not_equal(tp_verify_rank(v, 8, &info, sizeof(info)), TP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(tp_report_verify(f, v, TP_FORMAT_JSON, NULL), TP_OK);
    assert_int_equal(tp_verify_write_topology(f, v, NULL), TP_OK);
    fclose(f);
    assert_non_null(strstr(text, "\"schema\": \"topoplan.verify\""));
    assert_non_null(strstr(text, "<gpu dev="));
    free(text);
    tp_verify_free(v);

    /* rank 5's "Ring 00" line altered: rank 5 diverges in channels, and the ring check sees it */
    char *ring = strstr(log, "host0:105:1 [");
    ring = ring ? strstr(ring, "Ring 00 : 4 -> 5 -> 6") : NULL;
    assert_non_null(ring);
    memcpy(ring, "Ring 00 : 6 -> 5 -> 4", 21);
    v = verify_text(log, "dgx-a100", TP_OK);
    assert_int_equal(tp_verify_divergences(v), 1);
    assert_int_equal(tp_verify_rank(v, 5, &info, sizeof(info)), TP_OK);
    assert_int_equal(info.verdict, TP_VERIFY_DIVERGE);
    assert_string_equal(info.stage, "channels");
    assert_string_equal(info.actual, "INFO Ring 00 : 6 -> 5 -> 4");
    assert_string_equal(info.expected, "INFO Ring 00 : 4 -> 5 -> 6");
    assert_non_null(strstr(info.where, "job.log:"));
    assert_null(info.cause);
    assert_true(tp_verify_note_count(v) >= 1);
    assert_non_null(strstr(tp_verify_note(v, 0), "ring 00"));
    assert_null(tp_verify_note(v, 999));
    tp_verify_free(v);

    /* the same log without a topology: the log against itself finds the ring */
    v = verify_text(log, NULL, TP_OK);
    assert_true(tp_verify_divergences(v) >= 1);
    assert_int_equal(tp_verify_rank(v, 0, &info, sizeof(info)), TP_OK);
    assert_int_equal(info.verdict, TP_VERIFY_SELF);
    tp_verify_free(v);
    free(log);
}

static void test_other_version_and_not_a_log(void **state)
{
    (void)state;
    /* another version's log is compared with that version's profile, with a note when the
     * profile is partial, without when it is exact */
    static const char *const versions_noted[] = {"2.30.7", "2.27.5"};
    char *log = NULL;
    tp_verify *v = NULL;
    for (int k = 0; k < 2; k++) {
        free(log);
        log = job_log("dgx-a100", 2, versions_noted[k]);
        v = verify_text(log, "dgx-a100", TP_OK);
        assert_string_equal(tp_verify_nccl(v), versions_noted[k]);
        tp_nccl_profile_info info = {0};
        for (int i = 0; i < tp_nccl_profile_count(); i++)
            if (tp_nccl_profile_info_at(i, &info, sizeof(info), NULL) == TP_OK &&
                strcmp(info.nccl, versions_noted[k]) == 0)
                break;
        bool noted = false;
        for (size_t i = 0; i < tp_verify_note_count(v); i++)
            noted |= strstr(tp_verify_note(v, i), "profile, which is partial") != NULL;
        assert_true(noted == !info.exact);
        tp_verify_free(v);
    }
    /* the version is an input: the option names the one the job ran; one without a
     * profile cannot be checked */
    static const char *const versions[] = {"2.22.3", "2.27.5", "2.99.1"};
    for (int i = 0; i < 3; i++) {
        tp_verify_options opt = {.job = TP_JOB_INIT, .nccl_version = versions[i]};
        tp_error err = {0};
        assert_int_equal(tp_verify_new(&v, &opt, &err), TP_OK);
        assert_int_equal(tp_verify_add_buffer(v, log, strlen(log), "job.log", &err), TP_OK);
        assert_int_equal(tp_verify_run(v, &err), i < 2 ? TP_OK : TP_ERR_CONFIG);
        if (i < 2)
            assert_string_equal(tp_verify_nccl(v), versions[i]);
        else
            assert_non_null(strstr(err.message, "NCCL 2.99.1"));
        tp_verify_free(v);
    }
    free(log);
    v = verify_text("hello\nworld\n", "dgx-a100", TP_ERR_CONFIG);
    tp_verify_free(v);
    tp_verify_options opt = {0};
    tp_verify *w = NULL;
    assert_int_equal(tp_verify_new(&w, &opt, NULL), TP_OK);
    assert_int_equal(tp_verify_add_file(w, "/nonexistent/job.log", NULL), TP_ERR_IO);
    assert_int_equal(tp_verify_run(w, NULL), TP_ERR_ARGUMENT); /* no input */
    tp_verify_free(w);
    tp_verify_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_prefixes),
        cmocka_unit_test(test_normalize_and_sections),
        cmocka_unit_test(test_job_agrees_then_diverges),
        cmocka_unit_test(test_kinds_plan_once),
        cmocka_unit_test(test_other_version_and_not_a_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
