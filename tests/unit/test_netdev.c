/* NCCL_IB_HCA matching and port merging (seed 001, "HCA Filter" and "Port Merging"). */
#include "helpers.h"

#include "netdev/netdev.h"

#include <stdlib.h>
#include <string.h>

static const tp_ib_port_info seed_ports[] = {
    {"mlx5_0", 1, "/pci/0000:18:00.0", 0xa, 1, 100000},
    {"mlx5_0", 2, "/pci/0000:18:00.0", 0xa, 1, 100000},
    {"mlx5_1", 1, "/pci/0000:19:00.0", 0xb, 1, 100000},
    {"mlx5_10", 1, "/pci/0000:1a:00.0", 0xc, 1, 100000},
};

static int count_selected(const char *filter)
{
    int n = 0;
    for (size_t i = 0; i < ARRAY_LEN(seed_ports); i++)
        n += tp_hca_selects(filter, seed_ports[i].name, seed_ports[i].port);
    return n;
}

/* The seed's table: devices mlx5_0:1, mlx5_0:2, mlx5_1:1, mlx5_10:1. */
static void test_netdev_seed_hca_table(void **state)
{
    (void)state;
    static const struct {
        const char *filter;
        int selected;
    } rows[] = {
        {"", 4},       {"mlx5_1", 2},  {"=mlx5_1", 1},   {"=mlx5_0:1", 1}, {"=mlx5_0:1,mlx5_0:2", 2},
        {"^mlx5_1", 2}, {"^=mlx5_1", 3}, {"^=mlx5_0:2", 3},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        if (count_selected(rows[i].filter) != rows[i].selected)
            print_error("filter \"%s\"\n", rows[i].filter);
        assert_int_equal(count_selected(rows[i].filter), rows[i].selected);
    }
    assert_int_equal(count_selected(NULL), 4);
}

static void test_netdev_parse_ports_and_empty_entries(void **state)
{
    (void)state;
    tp_hca_filter f;
    tp_hca__parse(&f, "^=mlx5_0:2,,mlx5_3");
    assert_true(f.exclude);
    assert_true(f.exact);
    assert_int_equal(f.n_entries, 2);
    assert_string_equal(f.entries[0].prefix, "mlx5_0");
    assert_int_equal(f.entries[0].port, 2);
    assert_string_equal(f.entries[1].prefix, "mlx5_3");
    assert_int_equal(f.entries[1].port, -1);
}

static void test_netdev_prefix_trap(void **state)
{
    (void)state;
    char entry[64];
    assert_true(tp_hca_prefix_trap("mlx5_1", "mlx5_10", 1, entry, sizeof(entry)));
    assert_string_equal(entry, "mlx5_1");
    assert_false(tp_hca_prefix_trap("mlx5_1", "mlx5_1", 1, entry, sizeof(entry)));
    assert_false(tp_hca_prefix_trap("=mlx5_1", "mlx5_10", 1, entry, sizeof(entry)));
    /* An exclusion entry catches the longer name too (issue 9: hca warns as nics does). */
    assert_true(tp_hca_prefix_trap("^mlx5_1", "mlx5_10", 1, entry, sizeof(entry)));
    assert_string_equal(entry, "mlx5_1");
    assert_false(tp_hca_prefix_trap("^=mlx5_1", "mlx5_10", 1, entry, sizeof(entry)));
    assert_false(tp_hca_prefix_trap("mlx5", "mlx5_10", 1, entry, sizeof(entry)));
}

static int discover(const tp_ib_port_info *ports, int n, bool merge, tp_ib_logical **devs,
                    bool *disabled)
{
    tp_ib_discovery d;
    tp_hca_filter all;
    tp_hca__parse(&all, NULL);
    tp_error err = {0};
    assert_int_equal(tp_ib__discover(&d, ports, n, &all, merge, &err), TP_OK);
    *devs = d.devs;
    *disabled = d.merge_disabled;
    return d.n_devs;
}

static void test_netdev_merge_two_ports(void **state)
{
    (void)state;
    static const tp_ib_port_info dual[] = {
        {"mlx5_0", 1, "/p0", 0xa, 1, 100000}, {"mlx5_0", 2, "/p0", 0xa, 1, 100000},
        {"mlx5_1", 1, "/p1", 0xb, 1, 100000}, {"mlx5_1", 2, "/p1", 0xb, 1, 100000},
    };
    tp_ib_logical *devs = NULL;
    bool disabled = true;
    assert_int_equal(discover(dual, 4, true, &devs, &disabled), 2);
    assert_false(disabled);
    assert_string_equal(devs[0].name, "mlx5_0+mlx5_0");
    assert_int_equal(devs[0].speed, 200000);
    assert_int_equal(devs[1].n_ports, 2);
    free(devs);
    assert_int_equal(discover(dual, 4, false, &devs, &disabled), 4);
    free(devs);
}

static void test_netdev_any_difference_prevents_merge(void **state)
{
    (void)state;
    static const tp_ib_port_info cases[][2] = {
        {{"a", 1, "/p0", 0xa, 1, 100}, {"a", 2, "/p1", 0xa, 1, 100}}, /* PCI path */
        {{"a", 1, "/p0", 0xa, 1, 100}, {"a", 2, "/p0", 0xb, 1, 100}}, /* GUID */
        {{"a", 1, "/p0", 0xa, 1, 100}, {"a", 2, "/p0", 0xa, 2, 100}}, /* link layer */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        tp_ib_logical *devs = NULL;
        bool disabled;
        assert_int_equal(discover(cases[i], 2, true, &devs, &disabled), 2);
        free(devs);
    }
}

static void test_netdev_mixed_port_counts_disable_merging(void **state)
{
    (void)state;
    static const tp_ib_port_info mixed[] = {
        {"mlx5_0", 1, "/p0", 0xa, 1, 100}, {"mlx5_0", 2, "/p0", 0xa, 1, 100},
        {"mlx5_1", 1, "/p1", 0xb, 1, 100},
    };
    tp_ib_logical *devs = NULL;
    bool disabled = false;
    assert_int_equal(discover(mixed, 3, true, &devs, &disabled), 3);
    assert_true(disabled);
    assert_string_equal(devs[1].name, "mlx5_0");
    free(devs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_netdev_seed_hca_table),
        cmocka_unit_test(test_netdev_parse_ports_and_empty_entries),
        cmocka_unit_test(test_netdev_prefix_trap),
        cmocka_unit_test(test_netdev_merge_two_ports),
        cmocka_unit_test(test_netdev_any_difference_prevents_merge),
        cmocka_unit_test(test_netdev_mixed_port_counts_disable_merging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
