/*
 * Comparison of two plans (diff / check): node matching, the differences of
 * each layer and their severities. The expected numbers are the pipeline's
 * own (`topoplan plan` on the same fixtures): the 4 x V100 NV2 seed fixture
 * searches 6 ring channels (12 collective); without the NVLinks of the pair
 * 1a000-1c000 it searches 4 (8 collective), its GPU pair path becomes NVB
 * (two NVLink hops through another GPU), or PIX over the PCI switch with
 * NCCL_NVB_DISABLE=1; a GPU link trained at x4 is 3.0 GB/s instead of 12.0.
 */
#include "helpers.h"

#include "compare/compare.h"

#include <stdlib.h>
#include <string.h>

static tp_plan *fixture_plan(const char *name, const char *env, int n_nodes)
{
    char *xml = helpers_fixture(name);
    const char *const envp[] = {env, NULL};
    tp_plan *plan = helpers_plan(xml, env ? envp : NULL, n_nodes, 0);
    free(xml);
    return plan;
}

/* Every occurrence of `from` in s replaced by `to` (caller frees). */
static char *replace_all(const char *s, const char *from, const char *to)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    for (const char *p = strstr(s, from); p; p = strstr(p + lf, from))
        n++;
    char *out = malloc(strlen(s) + n * lt + 1), *o = out;
    assert_non_null(out);
    for (const char *p; (p = strstr(s, from)); s = p + lf) {
        memcpy(o, s, (size_t)(p - s));
        o += p - s;
        memcpy(o, to, lt);
        o += lt;
    }
    strcpy(o, s);
    return out;
}

static tp_comparison *compare(const tp_plan *a, const tp_plan *b)
{
    tp_comparison *cmp = NULL;
    tp_error err = {0};
    assert_int_equal(tp_compare_plans(&cmp, a, b, &err), TP_OK);
    assert_non_null(cmp);
    return cmp;
}

/* s with the first `from` after `anchor` replaced by `to` (caller frees). */
static char *replace_after(const char *s, const char *anchor, const char *from, const char *to)
{
    const char *a = strstr(s, anchor);
    assert_non_null(a);
    const char *p = strstr(a, from);
    assert_non_null(p);
    char *out = malloc(strlen(s) - strlen(from) + strlen(to) + 1);
    assert_non_null(out);
    memcpy(out, s, (size_t)(p - s));
    strcpy(out + (p - s), to);
    strcat(out, p + strlen(from));
    return out;
}

static tp_comparison *compare_fixtures(const char *base, const char *other, const char *env,
                                       int n_nodes)
{
    tp_plan *a = fixture_plan(base, env, n_nodes), *b = fixture_plan(other, env, n_nodes);
    tp_comparison *cmp = compare(a, b);
    tp_plan_free(a);
    tp_plan_free(b);
    return cmp;
}

static const tp_difference *find_text(const tp_comparison *cmp, const char *text)
{
    for (size_t i = 0; i < tp_comparison_count(cmp); i++)
        if (strcmp(tp_comparison_get(cmp, i)->text, text) == 0)
            return tp_comparison_get(cmp, i);
    return NULL;
}

static size_t count_layer(const tp_comparison *cmp, tp_layer layer)
{
    size_t n = 0;
    for (size_t i = 0; i < tp_comparison_count(cmp); i++)
        n += tp_comparison_get(cmp, i)->layer == layer;
    return n;
}

static size_t count_kind(const tp_comparison *cmp, tp_diff_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < tp_comparison_count(cmp); i++)
        n += tp_comparison_get(cmp, i)->kind == kind;
    return n;
}

static void test_compare_identical_has_no_difference(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"v100_nv2.xml", NULL},
        {"pix_nic_2s.xml", NULL},
        {"dgx_h100.xml", NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        tp_comparison *cmp = compare_fixtures(cases[i][0], cases[i][0], cases[i][1], 2);
        assert_int_equal(tp_comparison_count(cmp), 0);
        assert_int_equal(tp_comparison_first_layer(cmp), -1);
        assert_string_equal(tp_comparison_why(cmp), "");
        tp_comparison_free(cmp);
    }
}

/* One expected difference of a fixture pair. */
typedef struct expect_row {
    const char *base, *other, *env;
    int n_nodes;
    tp_layer layer;
    tp_diff_kind kind;
    tp_severity severity;
    const char *title, *text;
} expect_row;

static const expect_row rows[] = {
    /* x16 -> x4 on GPU 1c000: system and paths change, the plan does not (WARN). */
    {"v100_nv2.xml", "v100_nv2_x4.xml", NULL, 1, TP_LAYER_SYSTEM, TP_DIFF_LINK_BW, TP_SEVERITY_WARN,
     "PCIe link downgraded",
     "PCI link GPU 1 (0000:1c:00.0, GPU/0-1c000) -> PCIe switch 0000:18:00.0 (PCI/0-18000): PCIe "
     "Gen3 x16 -> x4, 12.0 -> 3.0 GB/s"},
    {"v100_nv2.xml", "v100_nv2_x4.xml", NULL, 1, TP_LAYER_PATHS, TP_DIFF_PATH, TP_SEVERITY_WARN,
     "GPU-CPU path worse",
     "GPU 1 (0000:1c:00.0, GPU/0-1c000) -> NUMA node 0 (CPU/0-0): PHB 12.0 GB/s, 2 hops -> PHB 3.0 "
     "GB/s, 2 hops"},
    /* NVLinks of the pair 1a000-1c000 removed. */
    {"v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1, TP_LAYER_SYSTEM, TP_DIFF_LINK_MISSING,
     TP_SEVERITY_ERROR, "missing NVLink",
     "NVL link GPU 0 (0000:1a:00.0, GPU/0-1a000) -> GPU 1 (0000:1c:00.0, GPU/0-1c000): 40.0 GB/s "
     "-> missing"},
    {"v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1, TP_LAYER_PATHS, TP_DIFF_PATH,
     TP_SEVERITY_ERROR, "GPU pair path worse",
     "GPU 0 (0000:1a:00.0, GPU/0-1a000) -> GPU 1 (0000:1c:00.0, GPU/0-1c000): NVL 40.0 GB/s, 1 hop "
     "-> NVB 40.0 GB/s, 2 hops"},
    {"v100_nv2.xml", "v100_nv2_no_nvl01.xml", "NCCL_NVB_DISABLE=1", 1, TP_LAYER_PATHS, TP_DIFF_PATH,
     TP_SEVERITY_ERROR, "GPU pair path worse",
     "GPU 0 (0000:1a:00.0, GPU/0-1a000) -> GPU 1 (0000:1c:00.0, GPU/0-1c000): NVL 40.0 GB/s, 1 hop "
     "-> PIX 12.0 GB/s, 2 hops"},
    {"v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1, TP_LAYER_GRAPHS, TP_DIFF_GRAPH,
     TP_SEVERITY_ERROR, "fewer graph channels", "ring: channels 6 -> 4"},
    {"v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1, TP_LAYER_CHANNELS, TP_DIFF_CHANNELS,
     TP_SEVERITY_ERROR, "fewer collective channels", "collective channels 12 -> 8"},
    {"v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1, TP_LAYER_CHANNELS, TP_DIFF_CHANNELS,
     TP_SEVERITY_WARN, "fewer P2P channels", "P2P channels 16 -> 8"},
    /* 2-node job, NIC mlx5_1 (bus 8a000, NET 1) missing. */
    {"pix_nic_2s.xml", "pix_nic_2s_no_nic1.xml", NULL, 2, TP_LAYER_SYSTEM, TP_DIFF_NODE_MISSING,
     TP_SEVERITY_ERROR, "missing NIC", "NIC mlx5_1 at 0000:8a:00.0 (NIC/0-8a000): removed"},
    {"pix_nic_2s.xml", "pix_nic_2s_no_nic1.xml", NULL, 2, TP_LAYER_SYSTEM, TP_DIFF_NODE_MISSING,
     TP_SEVERITY_ERROR, "missing NET device",
     "mlx5_1 (NET/1) (dev 1, port 1, guid 0x506b4b0300fa2e41, 12.5 GB/s): removed"},
    /* The same NIC moved under CPU 0's PCI switch. */
    {"pix_nic_2s.xml", "pix_nic_2s_nic1_numa0.xml", NULL, 2, TP_LAYER_SYSTEM, TP_DIFF_NODE_MOVED,
     TP_SEVERITY_WARN, "NIC on another PCI switch or NUMA node",
     "NIC mlx5_1 at 0000:8a:00.0 (NIC/0-8a000): under PCIe switch 0000:86:00.0 (PCI/0-86000), "
     "NUMA node 1 (CPU/0-1) -> under PCIe switch 0000:18:00.0 (PCI/0-18000), NUMA node 0 "
     "(CPU/0-0)"},
    {"pix_nic_2s.xml", "pix_nic_2s_nic1_numa0.xml", NULL, 2, TP_LAYER_PATHS, TP_DIFF_PATH,
     TP_SEVERITY_INFO, "path better",
     "GPU 0 (0000:1a:00.0, GPU/0-1a000) -> mlx5_1 (NET/1): SYS 10.0 GB/s, 6 hops -> PIX 12.0 GB/s, "
     "3 hops"},
    /* Bus ids renumbered: matched by position, harmless. */
    {"v100_nv2.xml", "v100_nv2_renumbered.xml", NULL, 1, TP_LAYER_SYSTEM, TP_DIFF_NODE_RENUMBERED,
     TP_SEVERITY_INFO, "renumbered device",
     "GPU 1 (0000:1c:00.0, GPU/0-1c000) -> GPU 1 (0000:3c:00.0, GPU/0-3c000): matched by "
     "position (another NCCL id)"},
};

static void test_compare_expected_differences(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const expect_row *r = &rows[i];
        tp_comparison *cmp = compare_fixtures(r->base, r->other, r->env, r->n_nodes);
        const tp_difference *d = find_text(cmp, r->text);
        if (!d)
            print_error("row %zu: no difference \"%s\"\n", i, r->text);
        assert_non_null(d);
        assert_int_equal(d->layer, r->layer);
        assert_int_equal(d->kind, r->kind);
        assert_int_equal(d->severity, r->severity);
        assert_string_equal(d->title, r->title);
        tp_comparison_free(cmp);
    }
}

static void test_compare_pcie_x4_keeps_the_plan(void **state)
{
    (void)state;
    tp_comparison *cmp = compare_fixtures("v100_nv2.xml", "v100_nv2_x4.xml", NULL, 1);
    assert_int_equal(count_layer(cmp, TP_LAYER_SYSTEM), 1);
    assert_int_equal(count_layer(cmp, TP_LAYER_PATHS), 1);
    assert_int_equal(count_layer(cmp, TP_LAYER_GRAPHS), 0);
    assert_int_equal(count_layer(cmp, TP_LAYER_CHANNELS), 0);
    assert_int_equal(tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR), 0);
    assert_int_equal(tp_comparison_first_layer(cmp), TP_LAYER_SYSTEM);
    assert_string_equal(tp_comparison_why(cmp), "");
    tp_comparison_free(cmp);
}

/* The value a difference compares under `quantity`, NULL when it has none. */
static const tp_diff_value *value_of(const tp_difference *d, const char *quantity)
{
    for (int i = 0; i < d->n_values; i++)
        if (strcmp(d->values[i].quantity, quantity) == 0)
            return &d->values[i];
    return NULL;
}

/* Findings carry the device and the numbers they compare as fields, not only in their text. */
static void test_compare_structured_fields(void **state)
{
    (void)state;
    tp_comparison *cmp = compare_fixtures("v100_nv2.xml", "v100_nv2_x4.xml", NULL, 1);
    const tp_difference *d = NULL;
    for (size_t i = 0; i < tp_comparison_count(cmp) && !d; i++)
        if (tp_comparison_get(cmp, i)->kind == TP_DIFF_LINK_BW)
            d = tp_comparison_get(cmp, i);
    assert_non_null(d);
    assert_string_equal(d->device.name, "GPU 1");
    assert_string_equal(d->device.bus_id, "0000:1c:00.0");
    assert_string_equal(d->device.nccl_id, "GPU/0-1c000");
    assert_true(d->peer.name[0] != '\0');
    const tp_diff_value *w = value_of(d, "link_width"), *bw = value_of(d, "bandwidth");
    assert_non_null(w);
    assert_non_null(bw);
    assert_string_equal(w->unit, "lanes");
    assert_true(w->before == 16 && w->after == 4);
    assert_true(bw->before == 12.0 && bw->after == 3.0);
    tp_comparison_free(cmp);
    /* A missing link has a bandwidth before and none after. */
    cmp = compare_fixtures("v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1);
    for (size_t i = 0; i < tp_comparison_count(cmp); i++) {
        d = tp_comparison_get(cmp, i);
        if (d->kind != TP_DIFF_LINK_MISSING)
            continue;
        assert_string_equal(d->device.name, "GPU 0");
        assert_string_equal(d->peer.name, "GPU 1");
        bw = value_of(d, "bandwidth");
        assert_non_null(bw);
        assert_true(bw->has_before && !bw->has_after);
    }
    tp_comparison_free(cmp);
}

static void test_compare_missing_nvlink_why(void **state)
{
    (void)state;
    tp_comparison *cmp = compare_fixtures("v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1);
    assert_string_equal(tp_comparison_why(cmp),
                        "collective channels 12 -> 8: ring search 6 x 20.0 -> 4 x 20.0 GB/s");
    /* One NVLink pair: listed once, not per direction. */
    assert_int_equal(count_kind(cmp, TP_DIFF_LINK_MISSING), 1);
    assert_int_equal(count_layer(cmp, TP_LAYER_PATHS), 1);
    tp_comparison_free(cmp);
}

/* The reverse comparison: the links and the channels come back. */
static void test_compare_reverse_direction(void **state)
{
    (void)state;
    tp_comparison *cmp = compare_fixtures("v100_nv2_no_nvl01.xml", "v100_nv2.xml", NULL, 1);
    const tp_difference *d = find_text(cmp, "NVL link GPU 0 (0000:1a:00.0, GPU/0-1a000) -> GPU 1 "
                                            "(0000:1c:00.0, GPU/0-1c000): none -> 40.0 GB/s");
    assert_non_null(d);
    assert_int_equal(d->kind, TP_DIFF_LINK_EXTRA);
    assert_int_equal(d->severity, TP_SEVERITY_WARN);
    d = find_text(cmp, "collective channels 8 -> 12");
    assert_non_null(d);
    assert_int_equal(d->severity, TP_SEVERITY_INFO);
    assert_string_equal(tp_comparison_why(cmp),
                        "collective channels 8 -> 12: ring search 4 x 20.0 -> 6 x 20.0 GB/s");
    tp_comparison_free(cmp);
}

static void test_compare_renumbered_gpus_match_by_position(void **state)
{
    (void)state;
    tp_comparison *cmp = compare_fixtures("v100_nv2.xml", "v100_nv2_renumbered.xml", NULL, 2);
    /* 4 GPUs and the PCI switch, nothing else: the plan is the same. */
    assert_int_equal(tp_comparison_count(cmp), 5);
    assert_int_equal(count_kind(cmp, TP_DIFF_NODE_RENUMBERED), 5);
    assert_int_equal(tp_comparison_count_severity(cmp, TP_SEVERITY_INFO), 5);
    assert_non_null(find_text(
        cmp, "PCIe switch 0000:18:00.0 (PCI/0-18000) -> PCIe switch 0000:38:00.0 (PCI/0-38000): "
             "matched by position (another NCCL id)"));
    tp_comparison_free(cmp);
}

/* Renumbered and one GPU fewer: 4 against 3 unmatched GPUs, no positional guess. */
static void test_compare_renumbered_unequal_counts_do_not_match(void **state)
{
    (void)state;
    char *base = helpers_fixture("v100_nv2.xml");
    char *renum = helpers_fixture("v100_nv2_renumbered.xml");
    /* Drop GPU 3e000 (its <pci> element, 7 lines) and the NVLinks to it. */
    char *start = strstr(renum, "      <pci busid=\"0000:3e:00.0\"");
    assert_non_null(start);
    char *end = strstr(start, "      </pci>\n") + strlen("      </pci>\n");
    memmove(start, end, strlen(end) + 1);
    char *fewer =
        replace_all(renum, "<nvlink target=\"0000:3e:00.0\" count=\"2\" tclass=\"0x030200\"/>", "");
    tp_plan *a = helpers_plan(base, NULL, 1, 0), *b = helpers_plan(fewer, NULL, 1, 0);
    tp_comparison *cmp = compare(a, b);
    size_t missing_gpus = 0, extra_gpus = 0;
    for (size_t i = 0; i < tp_comparison_count(cmp); i++) {
        const tp_difference *d = tp_comparison_get(cmp, i);
        missing_gpus += d->kind == TP_DIFF_NODE_MISSING && strncmp(d->text, "GPU ", 4) == 0;
        extra_gpus += d->kind == TP_DIFF_NODE_EXTRA && strncmp(d->text, "GPU ", 4) == 0;
    }
    assert_int_equal(missing_gpus, 4);
    assert_int_equal(extra_gpus, 3);
    assert_non_null(find_text(cmp, "GPU 0 (0000:1a:00.0, GPU/0-1a000) (dev 0, sm 70): removed"));
    tp_comparison_free(cmp);
    tp_plan_free(a);
    tp_plan_free(b);
    free(fewer);
    free(renum);
    free(base);
}

static void test_compare_missing_nic_two_nodes(void **state)
{
    (void)state;
    tp_comparison *cmp = compare_fixtures("pix_nic_2s.xml", "pix_nic_2s_no_nic1.xml", NULL, 2);
    /* The NET goes with its NIC: one root cause, the NET its consequence. */
    assert_int_equal(tp_comparison_count_severity(cmp, TP_SEVERITY_ERROR), 1);
    assert_int_equal(count_kind(cmp, TP_DIFF_NODE_MISSING), 2);
    const tp_difference *net = find_text(
        cmp, "mlx5_1 (NET/1) (dev 1, port 1, guid 0x506b4b0300fa2e41, 12.5 GB/s): removed");
    assert_non_null(net);
    assert_true(net->consequence);
    assert_int_equal(tp_comparison_first_layer(cmp), TP_LAYER_SYSTEM);
    tp_comparison_free(cmp);
}

/* When NIC 0 goes, NET 1 becomes NET 0: matched through its NIC, not by id. */
static void test_compare_net_follows_its_nic(void **state)
{
    (void)state;
    char *base = helpers_fixture("pix_nic_2s.xml");
    char *start = strstr(base, "      <pci busid=\"0000:1c:00.0\"");
    assert_non_null(start);
    char *other = strdup(base);
    char *o = other + (start - base);
    char *end = strstr(o, "      </pci>\n") + strlen("      </pci>\n");
    memmove(o, end, strlen(end) + 1);
    tp_plan *a = helpers_plan(base, NULL, 2, 0), *b = helpers_plan(other, NULL, 2, 0);
    tp_comparison *cmp = compare(a, b);
    assert_non_null(find_text(
        cmp, "mlx5_1 (NET/1) -> mlx5_1 (NET/0): same NIC and port, another device index"));
    const tp_difference *d = find_text(
        cmp, "mlx5_0 (NET/0) (dev 0, port 1, guid 0x506b4b0300fa2e40, 12.5 GB/s): removed");
    assert_non_null(d);
    assert_int_equal(d->severity, TP_SEVERITY_ERROR);
    tp_comparison_free(cmp);
    tp_plan_free(a);
    tp_plan_free(b);
    free(other);
    free(base);
}

/*
 * DGX H100, 2 nodes, GPU 1b000 at x8 (24 GB/s instead of 48): the ring search
 * loses a channel (8 -> 7) but postset's sm90 doubling then applies (14 < 16
 * channels), so the job gets more collective channels (16 -> 28).
 */
static void test_compare_why_names_postset_steps(void **state)
{
    (void)state;
    char *base = helpers_fixture("dgx_h100.xml");
    char *x8 =
        replace_after(base, "busid=\"0000:1b:00.0\"", "link_width=\"16\"", "link_width=\"8\"");
    tp_plan *a = helpers_plan(base, NULL, 2, 0), *b = helpers_plan(x8, NULL, 2, 0);
    tp_comparison *cmp = compare(a, b);
    assert_string_equal(tp_comparison_why(cmp),
                        "collective channels 16 -> 28: ring search 8 x 48.0/48.0 -> 7 x 48.0/48.0 "
                        "GB/s (intra/inter); then the sm90 multi-node doubling (ring bw above 45 "
                        "GB/s, fewer than 16 channels) applies: 16 -> 28");
    const tp_difference *d = find_text(cmp, "ring: channels 8 -> 7");
    assert_non_null(d);
    assert_int_equal(d->severity, TP_SEVERITY_ERROR);
    d = find_text(cmp, "PCI link GPU 0 (0000:1b:00.0, GPU/0-1b000) -> PCIe switch 0000:15:00.0 "
                       "(PCI/0-15000): PCIe Gen5 x16 -> x8, 48.0 -> 24.0 GB/s");
    assert_non_null(d);
    assert_int_equal(d->severity, TP_SEVERITY_WARN);
    tp_comparison_free(cmp);
    tp_plan_free(a);
    tp_plan_free(b);
    free(x8);
    free(base);
}

/* The fleet check's sharing key of a text (NULL when it has none). */
static char *key_of(const tp_plan *base, const char *xml, size_t *len)
{
    char *key = NULL;
    tp_error err = {0};
    tp_status st = tp_compare_key(&key, len, base, xml, strlen(xml), &err);
    assert_true(st == TP_OK || key == NULL);
    return key;
}

static bool same_key(const tp_plan *base, const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *ka = key_of(base, a, &la), *kb = key_of(base, b, &lb);
    assert_non_null(ka);
    assert_non_null(kb);
    bool same = la == lb && memcmp(ka, kb, la) == 0;
    free(ka);
    free(kb);
    return same;
}

/* Keys are equal only where NCCL reads the GUIDs alike (issue 25 items 1-2). */
static void test_compare_key_reads_guids_as_nccl(void **state)
{
    (void)state;
    char *xml = helpers_fixture("dgx_h100.xml");
    tp_plan *base = helpers_plan(xml, NULL, 1, 0);
    char *other = replace_all(xml, "0x946dae03008c", "0x123456789abc");
    char *no_prefix = replace_all(xml, "0x946dae03008c", "946dae03008c");
    char *upper = replace_all(xml, "0x946dae03008c", "0X946dae03008c");
    char *padded = replace_all(xml, "0x946dae03008c", "0x0000946dae03008c");
    char *one_port = replace_all(xml, "guid=\"0x946dae03008c4f11\"", "guid=\"0x946dae03008c4f10\"");
    char *empty = replace_all(xml, "guid=\"0x946dae03008c4f11\"", "guid=\"\"");
    char *short_guid = replace_all(xml, "guid=\"0x946dae03008c4f11\"", "guid=\"1\"");
    char *junk = replace_all(xml, "guid=\"0x946dae03008c4f11\"", "guid=\"0x946dae03008c4f11&\"");
    assert_true(same_key(base, xml, xml));
    assert_true(same_key(base, xml, padded));     /* the same numbers */
    assert_false(same_key(base, xml, other));     /* the baseline's GUIDs are kept as they are */
    assert_false(same_key(base, xml, no_prefix)); /* asic 0: one port for NCCL */
    assert_false(same_key(base, xml, upper));     /* "0X": sscanf "0x%lx" reads nothing */
    assert_false(same_key(base, xml, one_port));
    assert_false(same_key(base, xml, empty));
    /* "" and "1" both leave the asic 0 and read as a port GUID of their own: alike */
    assert_true(same_key(base, empty, short_guid));
    size_t len = 0;
    assert_null(key_of(base, junk, &len)); /* unreadable: no key, shares nothing */
    char *key = NULL;
    tp_error err = {0};
    assert_int_equal(tp_compare_key(&key, &len, NULL, xml, strlen(xml), &err), TP_ERR_ARGUMENT);
    free(junk);
    free(short_guid);
    free(empty);
    free(one_port);
    free(padded);
    free(upper);
    free(no_prefix);
    free(other);
    tp_plan_free(base);
    free(xml);
}

/* Two machines of the model other than the baseline's: their GUIDs differ, the key does not. */
static void test_compare_key_shares_other_machines(void **state)
{
    (void)state;
    char *xml = helpers_fixture("dgx_h100.xml");
    tp_plan *base = helpers_plan(xml, NULL, 1, 0);
    char *a = replace_all(xml, "0x946dae03008c", "0x123456789abc");
    char *b = replace_all(xml, "0x946dae03008c", "0xfedcba987654");
    char *b_no_prefix = replace_all(xml, "0x946dae03008c", "fedcba987654");
    assert_true(same_key(base, a, b));
    assert_false(same_key(base, a, b_no_prefix));
    free(b_no_prefix);
    free(b);
    free(a);
    tp_plan_free(base);
    free(xml);
}

static void test_compare_reports_parse(void **state)
{
    (void)state;
    tp_comparison *cmp = compare_fixtures("v100_nv2.xml", "v100_nv2_no_nvl01.xml", NULL, 1);
    char *buf = NULL;
    size_t len = 0;
    tp_error err = {0};
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(tp_report_diff(f, cmp, TP_FORMAT_TEXT, &err), TP_OK);
    assert_int_equal(tp_report_check(f, cmp, TP_FORMAT_JSON, &err), TP_OK);
    assert_int_equal(tp_report_diff(f, cmp, TP_FORMAT_DOT, &err), TP_ERR_CONFIG);
    fclose(f);
    assert_non_null(strstr(buf, "first difference at system"));
    assert_non_null(strstr(buf, "why: collective channels 12 -> 8"));
    /* One root cause (the NVLink); graphs, channels and the tuning layer's slower choices and
     * lower predicted busbw are its 19 consequences. */
    assert_non_null(strstr(buf, "\"healthy\": false, \"errors\": 1, \"warnings\": 0, \"infos\": 0, "
                                "\"consequences\": 19"));
    assert_non_null(strstr(buf, "the 8 GiB AllReduce: 107402.98 -> 161090.06 us, busbw 120.0 -> "
                                "80.0 GB/s"));
    free(buf);
    tp_comparison_free(cmp);
}

/* The V100 seed fixture planned on 2 nodes with NCCL version `nccl`. */
static tp_plan *versioned_plan_of(const char *xml, const char *nccl)
{
    const char *const empty[] = {NULL};
    tp_config *cfg = NULL;
    tp_plan *plan = NULL;
    tp_error err = {0};
    assert_int_equal(tp_config_new(&cfg, empty, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, nccl, &err), TP_OK);
    tp_job job = {.n_nodes = 2, .rank = 0};
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "<test>", &job, cfg, &err), TP_OK);
    tp_config_free(cfg);
    return plan;
}

static tp_plan *versioned_plan(const char *nccl)
{
    char *xml = helpers_fixture("v100_nv2.xml");
    tp_plan *plan = versioned_plan_of(xml, nccl);
    free(xml);
    return plan;
}

/* The report of a version diff as text (caller frees). */
static char *diff_text_of(const tp_comparison *cmp)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tp_error err = {0};
    assert_int_equal(tp_report_diff(f, cmp, TP_FORMAT_TEXT, &err), TP_OK);
    fclose(f);
    return buf;
}

/*
 * A version diff lists exactly the rules one profile follows and the other
 * does not (the profiles' raw rule bits), each named in the report with its
 * source, and each with a stage; the same version on both sides lists none.
 */
static void test_compare_version_diff_lists_differing_rules(void **state)
{
    (void)state;
    const tp_nccl_profile *pa = tp_nccl_profile__find("2.22.3");
    const tp_nccl_profile *pb = tp_nccl_profile__find("2.27.5");
    assert_non_null(pa);
    assert_non_null(pb);
    tp_plan *a = versioned_plan("2.22.3"), *b = versioned_plan("2.27.5");
    tp_comparison *cmp = compare(a, b);
    uint64_t all = TP_RULE_COUNT >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << TP_RULE_COUNT) - 1;
    assert_true((pa->rules ^ pb->rules) != 0);
    assert_true(cmp->rules_differ == ((pa->rules ^ pb->rules) & all));
    assert_true(tp_compare__is_version_diff(cmp));
    char *text = diff_text_of(cmp);
    assert_non_null(strstr(text, "[NCCL 2.22.3 -> 2.27.5]"));
    for (int r = 0; r < TP_RULE_COUNT; r++) {
        assert_true(tp_compare__rule_stages((tp_rule)r) != 0); /* every rule has a stage */
        char line[160];
        snprintf(line, sizeof(line), "\n  %s ", tp_rule_name((tp_rule)r));
        bool differs = tp_profile_has(pa, (tp_rule)r) != tp_profile_has(pb, (tp_rule)r);
        assert_int_equal(strstr(text, line) != NULL, differs);
        if (differs)
            assert_non_null(strstr(text, tp_rule_source((tp_rule)r)));
    }
    free(text);
    tp_comparison_free(cmp);
    tp_plan *b2 = versioned_plan("2.22.3");
    cmp = compare(a, b2);
    assert_true(cmp->rules_differ == 0);
    assert_false(tp_compare__is_version_diff(cmp));
    tp_comparison_free(cmp);
    tp_plan_free(a);
    tp_plan_free(b);
    tp_plan_free(b2);
}

/* Where the rule list's line `line` has its "->" and its NCCL source (the first digit after
 * the arrow: names, yes/no and stage names have none). */
static void rule_line_columns(const char *line, long *arrow, long *source)
{
    const char *a = strstr(line, " -> ");
    assert_non_null(a);
    const char *src = strpbrk(a, "0123456789");
    assert_non_null(src);
    *arrow = (long)(a - line);
    *source = (long)(src - line);
}

/*
 * The version diff's rule list keeps its columns in line for every pair of versions: each rule's
 * "->" and NCCL source start at the same column, which is as wide as the longest rule name and
 * stage list printed (2.27.5 -> 2.30.7's local-net-start-modulo acts on "graphs, channels").
 */
static void test_compare_version_diff_rule_columns_aligned(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"2.22.3", "2.27.5"}, {"2.27.5", "2.30.7"}, {"2.22.3", "2.30.7"}};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        tp_plan *a = versioned_plan(pairs[i][0]), *b = versioned_plan(pairs[i][1]);
        tp_comparison *cmp = compare(a, b);
        char *text = diff_text_of(cmp);
        const char *at = strstr(text, "\nrules that differ between NCCL ");
        assert_non_null(at);
        at = strchr(at + 1, '\n') + 1;
        long arrow0 = -1, source0 = -1, longest_name = 0, longest_stage = 0;
        int lines = 0;
        for (; *at == ' '; at = strchr(at, '\n') + 1, lines++) {
            long arrow, source;
            rule_line_columns(at, &arrow, &source);
            if (arrow0 < 0) {
                arrow0 = arrow;
                source0 = source;
            }
            assert_int_equal(arrow, arrow0);
            assert_int_equal(source, source0);
            long name_len = (long)strcspn(at + 2, " ");
            longest_name = name_len > longest_name ? name_len : longest_name;
            const char *stage = at + arrow + 4 + 3 + 2; /* " -> ", yes/no, two spaces */
            long stage_len = source - (stage - at) - 1;
            while (stage_len > 0 && stage[stage_len - 1] == ' ')
                stage_len--;
            longest_stage = stage_len > longest_stage ? stage_len : longest_stage;
        }
        assert_true(lines > 0);
        /* Sized from the longest: one space after the longest name and stage list. */
        assert_int_equal(arrow0, 2 + longest_name + 1 + 3);
        assert_int_equal(source0, arrow0 + 4 + 3 + 2 + longest_stage + 1);
        free(text);
        tp_comparison_free(cmp);
        tp_plan_free(a);
        tp_plan_free(b);
    }
}

/* 2.27.5's NVLS channel defaults by GPU architecture are a named rule of the channels stage,
 * which a version diff lists with its NCCL source. */
static void test_compare_version_diff_names_nvls_channels_rule(void **state)
{
    (void)state;
    tp_plan *a = versioned_plan("2.22.3"), *b = versioned_plan("2.27.5");
    tp_comparison *cmp = compare(a, b);
    assert_true(cmp->rules_differ & (UINT64_C(1) << TP_RULE_NVLS_CHANNELS_BY_ARCH));
    assert_int_equal(tp_compare__rule_stages(TP_RULE_NVLS_CHANNELS_BY_ARCH),
                     1u << TP_LAYER_CHANNELS);
    char *text = diff_text_of(cmp);
    assert_non_null(strstr(text, "  nvls-channels-by-arch    no  -> yes  channels         "
                                 "2.25 nvls.cc ncclNvlsInit\n"));
    const char *channels = strstr(text, "\nchannels: ");
    assert_non_null(channels);
    const char *rules = strstr(channels, "  rules that differ here: ");
    assert_non_null(rules);
    assert_true(strstr(rules, "nvls-channels-by-arch") < strchr(rules, '\n'));
    free(text);
    tp_comparison_free(cmp);
    tp_plan_free(a);
    tp_plan_free(b);
}

/* 2.22.3 -> 2.27.5 on a dual-port NIC: each port is said to be fused into the virtual NIC
 * (rule nic-fusion), not missing. */
static void test_compare_version_diff_names_fused_nics(void **state)
{
    (void)state;
    static const char *const xml =
        "<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\" arch=\"x86_64\" "
        "vendor=\"AuthenticAMD\"><pci busid=\"0000:12:00.0\" class=\"0x030200\" "
        "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"><gpu dev=\"0\" sm=\"90\" rank=\"0\" "
        "gdr=\"1\"/></pci><pci busid=\"0000:11:00.0\" class=\"0x020000\" "
        "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"><nic>"
        "<net name=\"mlx5_0\" dev=\"0\" speed=\"100000\" port=\"1\" guid=\"0xaa\" gdr=\"1\"/>"
        "<net name=\"mlx5_1\" dev=\"1\" speed=\"100000\" port=\"2\" guid=\"0xaa\" gdr=\"1\"/>"
        "</nic></pci></cpu></system>";
    tp_plan *a = versioned_plan_of(xml, "2.22.3"), *b = versioned_plan_of(xml, "2.27.5");
    tp_comparison *cmp = compare(a, b);
    for (int port = 0; port < 2; port++) {
        char text[160];
        snprintf(text, sizeof(text),
                 "mlx5_%d (NET/%d): fused into the virtual NIC mlx5_0+mlx5_1 (NET/2) (rule "
                 "nic-fusion)",
                 port, port);
        const tp_difference *d = find_text(cmp, text);
        assert_non_null(d);
        assert_int_equal(d->severity, TP_SEVERITY_INFO);
    }
    assert_int_equal(count_kind(cmp, TP_DIFF_NODE_MISSING), 0);
    tp_comparison_free(cmp);
    tp_plan_free(a);
    tp_plan_free(b);
}

/* Under 2.27.5 on both sides, a virtual NIC that only changed its index is renumbered, not
 * "fused" into itself; one that lost a port names it. */
static void test_compare_same_virtual_nic_renumbered(void **state)
{
    (void)state;
#define NIC2(bus, a, b)                                                                            \
    "<pci busid=\"0000:" bus "\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" "                \
    "link_width=\"16\"><nic><net name=\"" a "\" dev=\"0\" speed=\"100000\" port=\"1\" "            \
    "guid=\"0xaa\" gdr=\"1\"/>" b "</nic></pci>"
#define PORT2(name) "<net name=\"" name "\" dev=\"0\" speed=\"100000\" port=\"2\" guid=\"0xaa\"/>"
#define TOPO(nics)                                                                                 \
    "<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\" arch=\"x86_64\" "                     \
    "vendor=\"AuthenticAMD\"><pci busid=\"0000:12:00.0\" class=\"0x030200\" "                      \
    "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"><gpu dev=\"0\" sm=\"90\" rank=\"0\" "         \
    "gdr=\"1\"/></pci>" nics "</cpu></system>"
    static const char *const base =
        TOPO(NIC2("11:00.0", "mlx5_0", PORT2("mlx5_1")) NIC2("21:00.0", "mlx5_2", PORT2("mlx5_3")));
    static const char *const node =
        TOPO(NIC2("11:00.0", "mlx5_0", "") NIC2("21:00.0", "mlx5_2", PORT2("mlx5_3")));
#undef TOPO
#undef PORT2
#undef NIC2
    tp_plan *a = versioned_plan_of(base, "2.27.5"), *b = versioned_plan_of(node, "2.27.5");
    tp_comparison *cmp = compare(a, b);
    assert_non_null(find_text(cmp, "mlx5_2+mlx5_3 (NET/5) -> mlx5_2+mlx5_3 (NET/3): same NIC and "
                                   "port, another device index"));
    /* the other lost a port: said by name */
    assert_non_null(find_text(cmp, "mlx5_0+mlx5_1 (NET/4) -> mlx5_0 (NET/0): mlx5_1 no longer in "
                                   "it (missing or not fused: rule nic-fusion)"));
    tp_comparison_free(cmp);
    tp_plan_free(a);
    tp_plan_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_identical_has_no_difference),
        cmocka_unit_test(test_compare_expected_differences),
        cmocka_unit_test(test_compare_pcie_x4_keeps_the_plan),
        cmocka_unit_test(test_compare_structured_fields),
        cmocka_unit_test(test_compare_missing_nvlink_why),
        cmocka_unit_test(test_compare_reverse_direction),
        cmocka_unit_test(test_compare_renumbered_gpus_match_by_position),
        cmocka_unit_test(test_compare_renumbered_unequal_counts_do_not_match),
        cmocka_unit_test(test_compare_missing_nic_two_nodes),
        cmocka_unit_test(test_compare_net_follows_its_nic),
        cmocka_unit_test(test_compare_why_names_postset_steps),
        cmocka_unit_test(test_compare_reports_parse),
        cmocka_unit_test(test_compare_key_reads_guids_as_nccl),
        cmocka_unit_test(test_compare_key_shares_other_machines),
        cmocka_unit_test(test_compare_version_diff_lists_differing_rules),
        cmocka_unit_test(test_compare_version_diff_names_nvls_channels_rule),
        cmocka_unit_test(test_compare_version_diff_rule_columns_aligned),
        cmocka_unit_test(test_compare_version_diff_names_fused_nics),
        cmocka_unit_test(test_compare_same_virtual_nic_renumbered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
