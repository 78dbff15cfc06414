/*
 * Paths (NCCL 2.22.3 paths.cc): the BFS rules, NVB, the P2P/SHM/GDR/PXN
 * policies, trimming and the path lines. Systems are built by hand here so
 * that the rules are tested apart from the system builder; the expected
 * values come from seed 000 (4 x V100-SXM2 fixtures) and from the NCCL
 * 2.22.3 logs of the conformance cases named next to each test.
 */
#include "helpers.h"

#include "paths/paths.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* A tiny system builder                                               */
/* ------------------------------------------------------------------ */

static tp_system *fx_new(void)
{
    tp_system *sys = calloc(1, sizeof(*sys));
    assert_non_null(sys);
    sys->profile = tp_nccl_profile__find("2.22.3");
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        sys->nodes[t].nodes = calloc(TP_MAX_NODES, sizeof(tp_node));
        assert_non_null(sys->nodes[t].nodes);
    }
    return sys;
}

static void fx_free(tp_system *sys)
{
    tp_system__free_routes(sys);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        for (int n = 0; n < sys->nodes[t].count; n++)
            free(sys->nodes[t].nodes[n].links);
        free(sys->nodes[t].nodes);
    }
    free(sys);
}

static tp_node *fx_node(tp_system *sys, int type, int64_t id)
{
    tp_node *n = &sys->nodes[type].nodes[sys->nodes[type].count++];
    n->type = type;
    n->id = id;
    return n;
}

/* One direction, kept sorted by bandwidth as ncclTopoConnectNodes does. */
static void fx_link1(tp_node *a, tp_node *b, int type, float bw)
{
    tp_error err = {0};
    assert_int_equal(tp_system__reserve_links(a, a->n_links + 1, &err), TP_OK);
    int l = a->n_links++;
    tp_link save = {.type = type, .bw = bw, .rem = b};
    while (l > 0 && a->links[l - 1].bw < bw) {
        a->links[l] = a->links[l - 1];
        l--;
    }
    a->links[l] = save;
}

static void fx_link(tp_node *a, tp_node *b, int type, float bw)
{
    fx_link1(a, b, type, bw);
    fx_link1(b, a, type, bw);
}

static tp_node *fx_cpu(tp_system *sys, int64_t numa, int vendor)
{
    tp_node *cpu = fx_node(sys, TP_NODE_CPU, numa);
    cpu->cpu.arch = TP_CPU_ARCH_X86;
    cpu->cpu.vendor = vendor;
    cpu->cpu.model = TP_CPU_TYPE_SKL;
    return cpu;
}

static tp_node *fx_gpu(tp_system *sys, int64_t bus, int rank, int cc, int gdr)
{
    tp_node *gpu = fx_node(sys, TP_NODE_GPU, bus);
    gpu->gpu.dev = rank;
    gpu->gpu.rank = rank;
    gpu->gpu.cuda_comp_cap = cc;
    gpu->gpu.gdr_support = gdr;
    return gpu;
}

/* A NIC and its NET (id = dev): bandwidths of the NET and of the NIC's PCI link. */
typedef struct fx_nic {
    int64_t nic_id;
    int dev;
    float bw, pci_bw;
    int gdr;
} fx_nic;

static tp_node *fx_net(tp_system *sys, tp_node *parent, fx_nic spec)
{
    tp_node *nic = fx_node(sys, TP_NODE_NIC, spec.nic_id);
    fx_link(parent, nic, TP_LINK_PCI, spec.pci_bw);
    tp_node *net = fx_node(sys, TP_NODE_NET, spec.dev);
    net->net.dev = spec.dev;
    net->net.bw = spec.bw;
    net->net.gdr_support = spec.gdr;
    fx_link(nic, net, TP_LINK_NET, spec.bw);
    return net;
}

/* The seed's 4 x V100-SXM2 host: one PCIe switch, NVLinks per nvl[i][j] (GB/s, <0: none). */
static const int64_t seed_bus[4] = {0x1a000, 0x1c000, 0x1d000, 0x1e000};

static tp_system *fx_seed(float gpu_pci_bw, const float nvl[4][4])
{
    tp_system *sys = fx_new();
    tp_node *cpu = fx_cpu(sys, 0, TP_CPU_VENDOR_INTEL);
    tp_node *sw = fx_node(sys, TP_NODE_PCI, 0x18000);
    fx_net(sys, cpu, (fx_nic){.nic_id = 0, .dev = 0, .bw = 1.25f, .pci_bw = TP_LOC_BW, .gdr = 0});
    for (int g = 0; g < 4; g++)
        fx_link(sw, fx_gpu(sys, seed_bus[g], g, 70, 0), TP_LINK_PCI, gpu_pci_bw);
    fx_link(cpu, sw, TP_LINK_PCI, 12.0f);
    for (int g = 0; g < 4; g++)
        for (int p = 0; p < 4; p++)
            if (g != p && nvl[g][p] >= 0)
                fx_link1(&sys->nodes[TP_NODE_GPU].nodes[g], &sys->nodes[TP_NODE_GPU].nodes[p],
                         TP_LINK_NVL, nvl[g][p]);
    return sys;
}

static tp_config *fx_config(const char *const *env)
{
    tp_config *cfg = NULL;
    tp_error err = {0};
    const char *const none[] = {NULL};
    assert_int_equal(tp_config_new(&cfg, env ? env : none, &err), TP_OK);
    return cfg;
}

static const tp_job_view one_host4 = {.n_ranks = 4, .n_nodes = 1, .rank = 0, .local_n_ranks = 4};

/* Paths, then trim, then paths again: NCCL 2.22.3 init.cc's order. */
static void fx_pipeline(tp_system *sys, const char *const *env, const tp_job_view *job)
{
    tp_config *cfg = fx_config(env);
    tp_error err = {0};
    tp_log log = {.enabled = true};
    assert_int_equal(tp_paths__compute(sys, cfg, job, &log, &err), TP_OK);
    assert_int_equal(tp_paths__trim(sys, cfg, job, &err), TP_OK);
    assert_int_equal(tp_paths__compute(sys, cfg, job, &log, &err), TP_OK);
    tp_log_clear(&log);
    tp_config_free(cfg);
}

typedef struct path_row {
    int from, to; /* GPU indexes */
    int count;
    float bw;
    int type;
} path_row;

static void check_route(const tp_route *r, int count, float bw, int type, const char *what)
{
    if (r->count != count || r->bw != bw || r->type != type)
        print_error("%s: got %d/%.1f/%s, expected %d/%.1f/%s\n", what, r->count, (double)r->bw,
                    tp_path_type_name(r->type), count, (double)bw, tp_path_type_name(type));
    assert_int_equal(r->count, count);
    assert_true(r->bw == bw);
    assert_int_equal(r->type, type);
}

/* The listed GPU pairs. */
static void check_gpu_matrix(const tp_system *sys, const path_row *rows, size_t n_rows)
{
    for (size_t i = 0; i < n_rows; i++) {
        char what[64];
        snprintf(what, sizeof(what), "GPU%d->GPU%d", rows[i].from, rows[i].to);
        const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[rows[i].from];
        check_route(&gpu->paths[TP_NODE_GPU][rows[i].to], rows[i].count, rows[i].bw, rows[i].type,
                    what);
    }
}

/* All 16 pairs of the 4-GPU fixtures: adjacent (i-j odd) and diagonal (i-j even) classes. */
static void check_seed_matrix(const tp_system *sys, path_row adjacent, path_row diagonal,
                              float cpu_bw)
{
    path_row rows[16];
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            path_row r = (i == j) ? (path_row){0, 0, 0, TP_LOC_BW, TP_PATH_LOC}
                                  : ((i - j) % 2 ? adjacent : diagonal);
            r.from = i;
            r.to = j;
            rows[n++] = r;
        }
    }
    check_gpu_matrix(sys, rows, n);
    for (int g = 0; g < 4; g++)
        check_route(&sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_CPU][0], 2, cpu_bw, TP_PATH_PHB,
                    "GPU->CPU");
}

/* ------------------------------------------------------------------ */
/* Seed 000: the five fixtures                                         */
/* ------------------------------------------------------------------ */

#define ALL(v)                                                                                     \
    {                                                                                              \
        {v, v, v, v}, {v, v, v, v}, {v, v, v, v},                                                  \
        {                                                                                          \
            v, v, v, v                                                                             \
        }                                                                                          \
    }

static void test_paths_seed_fixtures(void **state)
{
    (void)state;
    static const float nv2[4][4] = ALL(40.0f), nv1[4][4] = ALL(20.0f), nv0[4][4] = ALL(0.0f);
    static const float ring[4][4] = {
        {-1, 40, -1, 40}, {40, -1, 40, -1}, {-1, 40, -1, 40}, {40, -1, 40, -1}};
    static const struct {
        const char *name;
        float pci_bw;
        const float (*nvl)[4];
        path_row adjacent, diagonal;
    } fixtures[] = {
        {"native NV2", 12.0f, nv2, {0, 0, 1, 40.0f, TP_PATH_NVL}, {0, 0, 1, 40.0f, TP_PATH_NVL}},
        {"all-pair NV1", 12.0f, nv1, {0, 0, 1, 20.0f, TP_PATH_NVL}, {0, 0, 1, 20.0f, TP_PATH_NVL}},
        {"sparse NV2 ring",
         12.0f,
         ring,
         {0, 0, 1, 40.0f, TP_PATH_NVL},
         {0, 0, 2, 40.0f, TP_PATH_NVB}},
        {"PCIe x16 view", 12.0f, nv0, {0, 0, 2, 12.0f, TP_PATH_PIX}, {0, 0, 2, 12.0f, TP_PATH_PIX}},
        {"PCIe x4 view", 3.0f, nv0, {0, 0, 2, 3.0f, TP_PATH_PIX}, {0, 0, 2, 3.0f, TP_PATH_PIX}},
    };
    for (size_t f = 0; f < ARRAY_LEN(fixtures); f++) {
        print_message("fixture %s\n", fixtures[f].name);
        tp_system *sys = fx_seed(fixtures[f].pci_bw, fixtures[f].nvl);
        fx_pipeline(sys, NULL, &one_host4);
        check_seed_matrix(sys, fixtures[f].adjacent, fixtures[f].diagonal, fixtures[f].pci_bw);
        fx_free(sys);
    }
}

/* seed_v100_sparse_ring_nvb_disable: without NVB the diagonals fall back to the switch. */
static void test_paths_nvb_disable(void **state)
{
    (void)state;
    static const float ring[4][4] = {
        {-1, 40, -1, 40}, {40, -1, 40, -1}, {-1, 40, -1, 40}, {40, -1, 40, -1}};
    const char *const env[] = {"NCCL_NVB_DISABLE=1", NULL};
    tp_system *sys = fx_seed(12.0f, ring);
    fx_pipeline(sys, env, &one_host4);
    check_seed_matrix(sys, (path_row){0, 0, 1, 40.0f, TP_PATH_NVL},
                      (path_row){0, 0, 2, 12.0f, TP_PATH_PIX}, 12.0f);
    fx_free(sys);
}

/* The invariant checkers pass a computed system and find each kind of breakage. */
static void test_paths_invariants(void **state)
{
    (void)state;
    static const float ring[4][4] = {
        {-1, 40, -1, 40}, {40, -1, 40, -1}, {-1, 40, -1, 40}, {40, -1, 40, -1}};
    tp_system *sys = fx_seed(12.0f, ring);
    fx_pipeline(sys, NULL, &one_host4);
    tp_error err = {0};
    assert_int_equal(tp_system__check(sys, &err), TP_OK);
    assert_int_equal(tp_paths__check(sys, &err), TP_OK);
    tp_node *gpu0 = &sys->nodes[TP_NODE_GPU].nodes[0];
    tp_route *to_gpu1 = &gpu0->paths[TP_NODE_GPU][1];
    assert_true(to_gpu1->count > 0);
    /* A hop that is not a link of the node reached. */
    tp_link *hop = to_gpu1->list[0];
    to_gpu1->list[0] = &sys->nodes[TP_NODE_GPU].nodes[2].links[0];
    assert_int_equal(tp_paths__check(sys, &err), TP_ERR_INTERNAL);
    assert_non_null(strstr(err.message, "paths invariant"));
    to_gpu1->list[0] = hop;
    /* A route claiming more than its narrowest link. */
    float bw = to_gpu1->bw;
    to_gpu1->bw = hop->bw * 2;
    assert_int_equal(tp_paths__check(sys, &err), TP_ERR_INTERNAL);
    to_gpu1->bw = bw;
    assert_int_equal(tp_paths__check(sys, &err), TP_OK);
    /* A PCI link whose reverse is gone (its type changed), then a negative bandwidth. */
    int l = 0;
    while (l < gpu0->n_links && gpu0->links[l].type != TP_LINK_PCI)
        l++;
    assert_true(l < gpu0->n_links);
    tp_node *cpu = gpu0->links[l].rem;
    for (int r = 0; r < cpu->n_links; r++)
        if (cpu->links[r].rem == gpu0)
            cpu->links[r].type = TP_LINK_SYS;
    assert_int_equal(tp_system__check(sys, &err), TP_ERR_INTERNAL);
    assert_non_null(strstr(err.message, "reverse"));
    for (int r = 0; r < cpu->n_links; r++)
        if (cpu->links[r].rem == gpu0)
            cpu->links[r].type = TP_LINK_PCI;
    assert_int_equal(tp_system__check(sys, &err), TP_OK);
    gpu0->links[l].bw = -1.0f;
    assert_int_equal(tp_system__check(sys, &err), TP_ERR_INTERNAL);
    assert_non_null(strstr(err.message, "negative"));
    fx_free(sys);
}

/* seed_v100_nv2_p2p_level_loc: every GPU pair is diverted through the CPU. */
static void test_paths_p2p_level_loc(void **state)
{
    (void)state;
    static const float nv2[4][4] = ALL(40.0f);
    static const char *const envs[][2] = {
        {"NCCL_P2P_LEVEL=LOC", NULL}, {"NCCL_P2P_DISABLE=1", NULL}, {"NCCL_P2P_LEVEL=0", NULL}};
    for (size_t e = 0; e < ARRAY_LEN(envs); e++) {
        tp_system *sys = fx_seed(12.0f, nv2);
        fx_pipeline(sys, envs[e], &one_host4);
        check_seed_matrix(sys, (path_row){0, 0, 4, 12.0f, TP_PATH_PHB},
                          (path_row){0, 0, 4, 12.0f, TP_PATH_PHB}, 12.0f);
        /* The route really walks GPU -> switch -> CPU -> switch -> GPU. */
        const tp_route *r = &sys->nodes[TP_NODE_GPU].nodes[0].paths[TP_NODE_GPU][1];
        assert_int_equal(r->list[1]->rem->type, TP_NODE_CPU);
        assert_ptr_equal(r->list[3]->rem, &sys->nodes[TP_NODE_GPU].nodes[1]);
        fx_free(sys);
    }
}

/* NCCL 2.22.3's P2P level: PXB on Intel (PCI paths through the CPU lose P2P), SYS on AMD. */
static void test_paths_p2p_default_level_by_cpu(void **state)
{
    (void)state;
    static const struct {
        int vendor;
        const char *env;
        int p2p;
    } rows[] = {
        {TP_CPU_VENDOR_INTEL, NULL, 0},
        {TP_CPU_VENDOR_AMD, NULL, 1},
        {TP_CPU_VENDOR_INTEL, "NCCL_P2P_LEVEL=PHB", 1},
        {TP_CPU_VENDOR_AMD, "NCCL_P2P_LEVEL=PXB", 0},
        {TP_CPU_VENDOR_AMD, "NCCL_P2P_DISABLE=1", 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        tp_system *sys = fx_new();
        tp_node *cpu = fx_cpu(sys, 0, rows[i].vendor);
        fx_link(cpu, fx_gpu(sys, 0x1000, 0, 80, 1), TP_LINK_PCI, 24.0f);
        fx_link(cpu, fx_gpu(sys, 0x2000, 1, 80, 1), TP_LINK_PCI, 24.0f);
        const char *const env[] = {rows[i].env, NULL};
        tp_config *cfg = fx_config(env);
        tp_error err = {0};
        const tp_job_view job = {.n_ranks = 2, .n_nodes = 1, .rank = 0, .local_n_ranks = 2};
        assert_int_equal(tp_paths__compute(sys, cfg, &job, NULL, &err), TP_OK);
        int p2p = -1;
        assert_int_equal(tp_paths__check_p2p(sys, cfg, 0x1000, 0x2000, &p2p, NULL, NULL, &err),
                         TP_OK);
        assert_int_equal(p2p, rows[i].p2p);
        /* GPU->CPU->GPU is PHB either way: diverting through the same CPU changes nothing. */
        check_route(&sys->nodes[TP_NODE_GPU].nodes[0].paths[TP_NODE_GPU][1], 2, 24.0f, TP_PATH_PHB,
                    "GPU0->GPU1");
        tp_config_free(cfg);
        fx_free(sys);
    }
}

/* ------------------------------------------------------------------ */
/* NET: GDR, the NET mark and trimming (syn_pix_nic cases)             */
/* ------------------------------------------------------------------ */

/* Two Skylake sockets; per socket a switch with two V100s and a 100G NIC. */
static tp_system *fx_pix_nic(void)
{
    static const int64_t sw_bus[2] = {0x18000, 0x86000}, nic_bus[2] = {0x1c000, 0x8a000};
    static const int64_t gpu_bus[4] = {0x1a000, 0x1b000, 0x88000, 0x89000};
    tp_system *sys = fx_new();
    tp_node *cpu[2], *sw[2];
    for (int s = 0; s < 2; s++) {
        cpu[s] = fx_cpu(sys, s, TP_CPU_VENDOR_INTEL);
        sw[s] = fx_node(sys, TP_NODE_PCI, sw_bus[s]);
    }
    for (int s = 0; s < 2; s++) {
        fx_link(sw[s], fx_gpu(sys, gpu_bus[2 * s], 2 * s, 70, 1), TP_LINK_PCI, 12.0f);
        fx_link(sw[s], fx_gpu(sys, gpu_bus[2 * s + 1], 2 * s + 1, 70, 1), TP_LINK_PCI, 12.0f);
        fx_net(sys, sw[s],
               (fx_nic){.nic_id = nic_bus[s], .dev = s, .bw = 12.5f, .pci_bw = 12.0f, .gdr = 1});
        fx_link(cpu[s], sw[s], TP_LINK_PCI, 12.0f);
    }
    fx_link(cpu[0], cpu[1], TP_LINK_SYS, TP_SKL_QPI_BW);
    return sys;
}

static char *log_text(const tp_log *log)
{
    size_t len = 1;
    for (size_t i = 0; i < log->n_lines; i++)
        len += strlen(log->lines[i].text) + 1;
    char *text = calloc(1, len);
    assert_non_null(text);
    for (size_t i = 0; i < log->n_lines; i++) {
        strcat(text, log->lines[i].text);
        strcat(text, "\n");
    }
    return text;
}

static void check_print(const tp_system *sys, const char *expected)
{
    tp_log log = {.enabled = true};
    tp_paths__print(&log, sys, NULL);
    char *text = log_text(&log);
    assert_string_equal(text, expected);
    free(text);
    tp_log_clear(&log);
}

/*
 * syn_pix_nic: one host, 4 ranks. The NICs (PIX, 12 GB/s) beat the
 * cross-socket GPU path (SYS, 10 GB/s), so GPUs of the other socket are
 * marked NET and trimmed, and NETs stay since the host lost ranks.
 */
static void test_paths_net_beats_sys_and_trim(void **state)
{
    (void)state;
    tp_system *sys = fx_pix_nic();
    fx_pipeline(sys, NULL, &one_host4);
    assert_int_equal(sys->nodes[TP_NODE_GPU].count, 2);
    assert_int_equal(sys->nodes[TP_NODE_NET].count, 2);
    check_print(
        sys, "GPU/1A000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1b000 (2/12.0/PIX) CPU/0-0 (2/12.0/PHB) "
             "CPU/0-1 (3/10.0/SYS) NET/0-0 (3/12.0/PIX) NET/0-1 (6/10.0/SYS) \n"
             "GPU/1B000 :GPU/0-1a000 (2/12.0/PIX) GPU/0-1b000 (0/5000.0/LOC) CPU/0-0 (2/12.0/PHB) "
             "CPU/0-1 (3/10.0/SYS) NET/0-0 (3/12.0/PIX) NET/0-1 (6/10.0/SYS) \n"
             "NET/0 :GPU/0-1a000 (3/12.0/PIX) GPU/0-1b000 (3/12.0/PIX) CPU/0-0 (3/12.0/PHB) "
             "CPU/0-1 (4/10.0/SYS) NET/0-0 (0/5000.0/LOC) NET/0-1 (7/10.0/SYS) \n"
             "NET/1 :GPU/0-1a000 (6/10.0/SYS) GPU/0-1b000 (6/10.0/SYS) CPU/0-0 (4/10.0/SYS) "
             "CPU/0-1 (3/12.0/PHB) NET/0-0 (7/10.0/SYS) NET/0-1 (0/5000.0/LOC) \n");
    fx_free(sys);
}

/* NCCL_NET_DISABLE_INTRA=1: the network never wins; all four GPUs stay, NETs go. */
static void test_paths_net_disable_intra_keeps_gpus(void **state)
{
    (void)state;
    const char *const env[] = {"NCCL_NET_DISABLE_INTRA=1", NULL};
    tp_system *sys = fx_pix_nic();
    fx_pipeline(sys, env, &one_host4);
    assert_int_equal(sys->nodes[TP_NODE_GPU].count, 4);
    assert_int_equal(sys->nodes[TP_NODE_NET].count, 0);
    /* Intel: no P2P through the CPUs, the route goes through GPU 2's CPU. */
    check_route(&sys->nodes[TP_NODE_GPU].nodes[0].paths[TP_NODE_GPU][2], 5, 10.0f, TP_PATH_SYS,
                "GPU0->GPU2");
    fx_free(sys);
}

/* GDR levels on the PIX NIC (syn_pix_nic_nodes2_gdr_*): off -> through the CPU, 5 hops PHB. */
static void test_paths_gdr_levels(void **state)
{
    (void)state;
    static const struct {
        const char *env;
        int count, type;
    } rows[] = {
        {NULL, 3, TP_PATH_PIX},
        {"NCCL_NET_GDR_LEVEL=PIX", 3, TP_PATH_PIX},
        {"NCCL_NET_GDR_LEVEL=LOC", 5, TP_PATH_PHB},
        {"NCCL_NET_GDR_LEVEL=0", 5, TP_PATH_PHB},
        {"NCCL_NET_GDR_LEVEL=SYS", 3, TP_PATH_PIX},
    };
    const tp_job_view job = {.n_ranks = 8, .n_nodes = 2, .rank = 0, .local_n_ranks = 4};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const char *const env[] = {rows[i].env, NULL};
        tp_system *sys = fx_pix_nic();
        fx_pipeline(sys, env, &job);
        const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[0];
        const tp_node *net = &sys->nodes[TP_NODE_NET].nodes[0];
        check_route(&gpu->paths[TP_NODE_NET][0], rows[i].count, 12.0f, rows[i].type, "GPU->NET");
        check_route(&net->paths[TP_NODE_GPU][0], rows[i].count, 12.0f, rows[i].type, "NET->GPU");
        tp_config *cfg = fx_config(env);
        int gdr = -1;
        tp_error err = {0};
        assert_int_equal(tp_paths__check_gdr(sys, cfg, gpu->id, net->id, 0, &gdr, &err), TP_OK);
        assert_int_equal(gdr, rows[i].type == TP_PATH_PIX);
        tp_config_free(cfg);
        fx_free(sys);
    }
}

/* A NIC or GPU without GDR support never uses it; reads need NVLink before sm80. */
static void test_paths_gdr_support_and_read(void **state)
{
    (void)state;
    const tp_job_view job = {.n_ranks = 8, .n_nodes = 2, .rank = 0, .local_n_ranks = 4};
    tp_system *sys = fx_pix_nic();
    fx_pipeline(sys, NULL, &job);
    tp_config *cfg = fx_config(NULL);
    tp_error err = {0};
    int gdr = -1;
    tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[0];
    int64_t net_id = sys->nodes[TP_NODE_NET].nodes[0].id;
    /* sm70 without an NVLink peer: no GDR read by default. */
    assert_int_equal(tp_paths__check_gdr(sys, cfg, gpu->id, net_id, 1, &gdr, &err), TP_OK);
    assert_int_equal(gdr, 0);
    tp_config_free(cfg);
    const char *const env[] = {"NCCL_NET_GDR_READ=1", NULL};
    cfg = fx_config(env);
    assert_int_equal(tp_paths__check_gdr(sys, cfg, gpu->id, net_id, 1, &gdr, &err), TP_OK);
    assert_int_equal(gdr, 1);
    gpu->gpu.gdr_support = 0;
    assert_int_equal(tp_paths__check_gdr(sys, cfg, gpu->id, net_id, 0, &gdr, &err), TP_OK);
    assert_int_equal(gdr, 0);
    tp_config_free(cfg);
    fx_free(sys);
}

/* ------------------------------------------------------------------ */
/* PXN (syn_dgx_h100_nodes2 / _pxn_disable)                             */
/* ------------------------------------------------------------------ */

/* Two H100s on NVLink, each with a 400G NIC on its own switch, one CPU. */
static tp_system *fx_rail(void)
{
    tp_system *sys = fx_new();
    tp_node *cpu = fx_cpu(sys, 0, TP_CPU_VENDOR_INTEL);
    tp_node *gpu[2];
    for (int i = 0; i < 2; i++) {
        tp_node *sw = fx_node(sys, TP_NODE_PCI, 0x10000 * (i + 1));
        gpu[i] = fx_gpu(sys, 0x10000 * (i + 1) + 0x1000, i, 90, 1);
        fx_link(sw, gpu[i], TP_LINK_PCI, 48.0f);
        fx_net(sys, sw,
               (fx_nic){.nic_id = 0x10000 * (i + 1) + 0x2000,
                        .dev = i,
                        .bw = 50.0f,
                        .pci_bw = 48.0f,
                        .gdr = 1});
        fx_link(cpu, sw, TP_LINK_PCI, 48.0f);
    }
    fx_link(gpu[0], gpu[1], TP_LINK_NVL, 370.8f);
    return sys;
}

static void test_paths_pxn(void **state)
{
    (void)state;
    static const struct {
        const char *env;
        int count, type;
        float bw;
    } rows[] = {
        {NULL, 4, TP_PATH_PXN, 48.0f},
        {"NCCL_PXN_DISABLE=1", 5, TP_PATH_PHB, 48.0f},
        {"NCCL_PXN_DISABLE=2", 4, TP_PATH_PXN, 48.0f},
    };
    const tp_job_view job = {.n_ranks = 4, .n_nodes = 2, .rank = 0, .local_n_ranks = 2};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const char *const env[] = {rows[i].env, NULL};
        tp_system *sys = fx_rail();
        fx_pipeline(sys, env, &job);
        tp_node *gpu0 = &sys->nodes[TP_NODE_GPU].nodes[0];
        check_route(&gpu0->paths[TP_NODE_NET][0], 3, 48.0f, TP_PATH_PIX, "GPU0->NET0");
        check_route(&gpu0->paths[TP_NODE_NET][1], rows[i].count, rows[i].bw, rows[i].type,
                    "GPU0->NET1");
        /* PXN is one-way: NET1 reaches GPU0 through the CPU. */
        check_route(&sys->nodes[TP_NODE_NET].nodes[1].paths[TP_NODE_GPU][0], 5, 48.0f, TP_PATH_PHB,
                    "NET1->GPU0");
        tp_config *cfg = fx_config(env);
        tp_error err = {0};
        int proxy = -1, gdr = -1;
        assert_int_equal(tp_paths__get_intermediate_rank(sys, 0, 1, &proxy, NULL, &err), TP_OK);
        assert_int_equal(proxy, rows[i].type == TP_PATH_PXN ? 1 : 0);
        /* GDR on a PXN route takes the proxy's distance (PIX). */
        assert_int_equal(tp_paths__check_gdr(sys, cfg, gpu0->id, 1, 0, &gdr, &err), TP_OK);
        assert_int_equal(gdr, rows[i].type == TP_PATH_PXN);
        tp_config_free(cfg);
        fx_free(sys);
    }
}

/* ------------------------------------------------------------------ */
/* Queries                                                              */
/* ------------------------------------------------------------------ */

static void test_paths_local_net_and_gpu(void **state)
{
    (void)state;
    const tp_job_view job = {.n_ranks = 4, .n_nodes = 2, .rank = 0, .local_n_ranks = 2};
    tp_system *sys = fx_rail();
    fx_pipeline(sys, NULL, &job);
    tp_error err = {0};
    int64_t id = -1;
    int dev = -1, g = -2, count = 0;
    for (int rank = 0; rank < 2; rank++) {
        assert_int_equal(tp_paths__get_local_net(sys, rank, 0, &id, &dev, &err), TP_OK);
        assert_int_equal(id, rank);
        assert_int_equal(dev, rank);
        assert_int_equal(tp_paths__get_local_gpu(sys, rank, &g, &err), TP_OK);
        assert_int_equal(g, rank);
        /* NCCL 2.22.3 takes the GPU bandwidth from a direct CPU link: none here, so 0. */
        tp_paths__local_net_count_by_bw(sys, rank, &count);
        assert_int_equal(count, 0);
    }
    int ranks[4], n = -1;
    tp_config *cfg = fx_config(NULL);
    /* Rank 0 talks to rank 3 (GPU 1 of the other host) through GPU 1's NIC, proxied by rank 1. */
    int proxy = -1;
    assert_int_equal(tp_paths__get_net_dev(sys, cfg, &job, 0, 0, 3, &id, &dev, &proxy, NULL, &err),
                     TP_OK);
    assert_int_equal(id, 1);
    assert_int_equal(proxy, 1);
    assert_int_equal(tp_paths__get_pxn_ranks(sys, cfg, &job, ranks, &n, NULL, &err), TP_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ranks[0], 1);
    assert_int_equal(tp_paths__all_nvlink(sys), 1);
    tp_config_free(cfg);
    fx_free(sys);
}

static void test_paths_nvb_gpus_and_all_nvlink(void **state)
{
    (void)state;
    static const float ring[4][4] = {
        {-1, 40, -1, 40}, {40, -1, 40, -1}, {-1, 40, -1, 40}, {40, -1, 40, -1}};
    static const float nv0[4][4] = ALL(0.0f);
    tp_system *sys = fx_seed(12.0f, ring);
    fx_pipeline(sys, NULL, &one_host4);
    int ranks[4];
    assert_int_equal(tp_paths__get_nvb_gpus(sys, 1, ranks), 1);
    assert_int_equal(ranks[0], 3);
    assert_int_equal(tp_paths__all_nvlink(sys), 1);
    fx_free(sys);
    sys = fx_seed(12.0f, nv0);
    fx_pipeline(sys, NULL, &one_host4);
    assert_int_equal(tp_paths__all_nvlink(sys), 0);
    fx_free(sys);
}

/* ------------------------------------------------------------------ */
/* Printing and failures                                                */
/* ------------------------------------------------------------------ */

/* seed_v100_nv2: the exact path lines (NETs trimmed on one host). */
static void test_paths_print_seed(void **state)
{
    (void)state;
    static const float nv2[4][4] = ALL(40.0f);
    tp_system *sys = fx_seed(12.0f, nv2);
    fx_pipeline(sys, NULL, &one_host4);
    assert_int_equal(sys->nodes[TP_NODE_NET].count, 0);
    check_print(sys, "GPU/1A000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1c000 (1/40.0/NVL) GPU/0-1d000 "
                     "(1/40.0/NVL) GPU/0-1e000 (1/40.0/NVL) CPU/0-0 (2/12.0/PHB) \n"
                     "GPU/1C000 :GPU/0-1a000 (1/40.0/NVL) GPU/0-1c000 (0/5000.0/LOC) GPU/0-1d000 "
                     "(1/40.0/NVL) GPU/0-1e000 (1/40.0/NVL) CPU/0-0 (2/12.0/PHB) \n"
                     "GPU/1D000 :GPU/0-1a000 (1/40.0/NVL) GPU/0-1c000 (1/40.0/NVL) GPU/0-1d000 "
                     "(0/5000.0/LOC) GPU/0-1e000 (1/40.0/NVL) CPU/0-0 (2/12.0/PHB) \n"
                     "GPU/1E000 :GPU/0-1a000 (1/40.0/NVL) GPU/0-1c000 (1/40.0/NVL) GPU/0-1d000 "
                     "(1/40.0/NVL) GPU/0-1e000 (0/5000.0/LOC) CPU/0-0 (2/12.0/PHB) \n");
    fx_free(sys);
}

/* seed_v100_nv2_nodes2: NET kept; 1.25 GB/s prints as 1.2 (printf's rounding to even). */
static void test_paths_print_seed_two_nodes(void **state)
{
    (void)state;
    static const float nv2[4][4] = ALL(40.0f);
    const tp_job_view job = {.n_ranks = 8, .n_nodes = 2, .rank = 0, .local_n_ranks = 4};
    tp_system *sys = fx_seed(12.0f, nv2);
    fx_pipeline(sys, NULL, &job);
    tp_log log = {.enabled = true};
    tp_paths__print(&log, sys, NULL);
    assert_int_equal(log.n_lines, 5);
    assert_string_equal(log.lines[4].text,
                        "NET/0 :GPU/0-1a000 (4/1.2/PHB) GPU/0-1c000 (4/1.2/PHB) GPU/0-1d000 "
                        "(4/1.2/PHB) GPU/0-1e000 (4/1.2/PHB) CPU/0-0 (2/1.2/PHB) NET/0-0 "
                        "(0/5000.0/LOC) ");
    tp_log_clear(&log);
    fx_free(sys);
}

/* NCCL builds each line in char[1024]: long lines are cut at 1023 bytes, mid-entry. */
static void test_paths_print_truncates(void **state)
{
    (void)state;
    tp_system *sys = fx_new();
    tp_node *cpu = fx_cpu(sys, 0, TP_CPU_VENDOR_AMD);
    tp_node *sw = fx_node(sys, TP_NODE_PCI, 0x1000);
    fx_link(sw, fx_gpu(sys, 0x2000, 0, 80, 1), TP_LINK_PCI, 24.0f);
    for (int n = 0; n < 60; n++)
        fx_net(sys, sw,
               (fx_nic){.nic_id = 0x100000 + n, .dev = n, .bw = 25.0f, .pci_bw = 24.0f, .gdr = 1});
    fx_link(cpu, sw, TP_LINK_PCI, 24.0f);
    const tp_job_view job = {.n_ranks = 2, .n_nodes = 2, .rank = 0, .local_n_ranks = 1};
    fx_pipeline(sys, NULL, &job);
    tp_log log = {.enabled = true};
    tp_paths__print(&log, sys, NULL);
    assert_int_equal(log.n_lines, 61);
    for (size_t i = 0; i < log.n_lines; i++)
        assert_int_equal(strlen(log.lines[i].text), TP_PATHS_LINE_SIZE - 1);
    /* GPU line: 57 bytes, 16 NETs of 21 bytes, 28 of 22, then NET/0-2c is cut. */
    assert_non_null(strstr(log.lines[0].text, "NET/0-0 (3/24.0/PIX) NET/0-1 (3/24.0/PIX)"));
    assert_non_null(strstr(log.lines[0].text, "NET/0-2b (3/24.0/PIX) NET/0-2c (3/2"));
    assert_null(strstr(log.lines[0].text, "NET/0-2d"));
    tp_log_clear(&log);
    fx_free(sys);
}

/* NCCL 2.22.3 fails on a link without a link back (one-sided <nvlink>) when it first routes over
 * it. */
static void test_paths_one_sided_link_fails(void **state)
{
    (void)state;
    tp_system *sys = fx_new();
    tp_node *cpu = fx_cpu(sys, 0, TP_CPU_VENDOR_INTEL);
    tp_node *g0 = fx_gpu(sys, 0x1000, 0, 70, 0), *g1 = fx_gpu(sys, 0x2000, 1, 70, 0);
    fx_link(cpu, g0, TP_LINK_PCI, 12.0f);
    fx_link(cpu, g1, TP_LINK_PCI, 12.0f);
    fx_link1(g0, g1, TP_LINK_NVL, 20.0f);
    tp_config *cfg = fx_config(NULL);
    tp_error err = {0};
    tp_log log = {.enabled = true};
    const tp_job_view job = {.n_ranks = 2, .n_nodes = 1, .rank = 0, .local_n_ranks = 2};
    assert_int_not_equal(tp_paths__compute(sys, cfg, &job, &log, &err), TP_OK);
    assert_int_equal(log.n_lines, 2);
    assert_int_equal(log.lines[0].level, TP_LOG_WARN);
    assert_string_equal(log.lines[0].text,
                        "Failed to find reverse path from remNode 0/2000 nlinks 1 to node 0/1000");
    /* NCCL's back-trace of the check in ncclTopoComputePaths' GPU loop. */
    assert_string_equal(log.lines[1].text, "graph/paths.cc:557 -> 3");
    tp_log_clear(&log);
    tp_config_free(cfg);
    fx_free(sys);
}

/* P2P and SHM both disabled (syn_hgx_a100_p2p_disable_shm_disable): peers marked NET, trimmed. */
static void test_paths_p2p_and_shm_disabled(void **state)
{
    (void)state;
    static const float nv2[4][4] = ALL(40.0f);
    const char *const env[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", NULL};
    tp_system *sys = fx_seed(12.0f, nv2);
    tp_config *cfg = fx_config(env);
    tp_error err = {0};
    assert_int_equal(tp_paths__compute(sys, cfg, &one_host4, NULL, &err), TP_OK);
    check_route(&sys->nodes[TP_NODE_GPU].nodes[1].paths[TP_NODE_GPU][0], 4, 12.0f, TP_PATH_NET,
                "GPU1->GPU0");
    const tp_job_view rank2 = {.n_ranks = 4, .n_nodes = 1, .rank = 2, .local_n_ranks = 4};
    assert_int_equal(tp_paths__trim(sys, cfg, &rank2, &err), TP_OK);
    assert_int_equal(sys->nodes[TP_NODE_GPU].count, 1);
    assert_int_equal(sys->nodes[TP_NODE_GPU].nodes[0].gpu.rank, 2);
    assert_int_equal(sys->nodes[TP_NODE_NET].count, 1);
    tp_config_free(cfg);
    fx_free(sys);
}

/*
 * Shared domains: trimming a fresh copy of the host's system with the domains
 * of another rank's first paths gives the same system and path lines as each
 * rank's own paths, trim and paths (what the planner does for later ranks).
 */
static void path_lines(tp_system *sys, tp_log *log)
{
    tp_log_clear(log);
    log->enabled = true;
    tp_paths__print(log, sys, NULL);
    tp_log_info(log, "GPUs %d NETs %d", sys->nodes[TP_NODE_GPU].count,
                sys->nodes[TP_NODE_NET].count);
}

/* Two systems print the same path lines. */
static void assert_same_path_lines(tp_system *x, tp_system *y)
{
    tp_log a = {.enabled = true}, b = {.enabled = true};
    path_lines(x, &a);
    path_lines(y, &b);
    assert_int_equal(a.n_lines, b.n_lines);
    for (size_t i = 0; i < a.n_lines; i++)
        assert_string_equal(a.lines[i].text, b.lines[i].text);
    tp_log_clear(&a);
    tp_log_clear(&b);
}

static void check_shared_domains(const tp_system *host, const tp_config *cfg, int n_nodes)
{
    int n = host->nodes[TP_NODE_GPU].count;
    tp_error err = {0};
    tp_system *first = NULL;
    tp_job_view v0 = {.n_ranks = n * n_nodes, .n_nodes = n_nodes, .rank = 0, .local_n_ranks = n};
    tp_gpu_domains dom;
    assert_int_equal(tp_system__clone(&first, host, &err), TP_OK);
    assert_int_equal(tp_paths__compute(first, cfg, &v0, NULL, &err), TP_OK);
    assert_int_equal(tp_paths__domains(first, &dom, &err), TP_OK);
    for (int r = 0; r < n; r++) {
        tp_job_view v = v0;
        v.rank = host->nodes[TP_NODE_GPU].nodes[r].gpu.rank;
        tp_system *own = NULL, *shared = NULL;
        assert_int_equal(tp_system__clone(&own, host, &err), TP_OK);
        assert_int_equal(tp_paths__compute(own, cfg, &v, NULL, &err), TP_OK);
        assert_int_equal(tp_paths__trim(own, cfg, &v, &err), TP_OK);
        assert_int_equal(tp_paths__compute(own, cfg, &v, NULL, &err), TP_OK);
        assert_int_equal(tp_system__clone(&shared, host, &err), TP_OK);
        assert_int_equal(tp_paths__trim_domains(shared, &dom, &v, &err), TP_OK);
        assert_int_equal(tp_paths__compute(shared, cfg, &v, NULL, &err), TP_OK);
        assert_same_path_lines(own, shared);
        tp_system__free(own);
        tp_system__free(shared);
    }
    tp_system__free(first);
}

/* check(host system, config) on each fixture planned in each environment of the paths tests
 * (default, P2P and SHM off, P2P at PIX). */
static void for_each_fixture_env(const char *const *fixtures, size_t n_fixtures,
                                 void (*check)(tp_system *host, const tp_config *cfg))
{
    static const char *const p2p_off[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", NULL};
    static const char *const pix[] = {"NCCL_P2P_LEVEL=PIX", NULL};
    const char *const *envs[] = {NULL, p2p_off, pix};
    for (size_t f = 0; f < n_fixtures; f++) {
        char *xml = helpers_fixture(fixtures[f]);
        for (size_t e = 0; e < ARRAY_LEN(envs); e++) {
            tp_plan *plan = helpers_plan(xml, envs[e], 1, 0);
            check(plan->kinds[plan->home_kind].host_sys, plan->cfg);
            tp_plan_free(plan);
        }
        free(xml);
    }
}

static void check_shared_domains_1_2(tp_system *host, const tp_config *cfg)
{
    check_shared_domains(host, cfg, 1);
    check_shared_domains(host, cfg, 2);
}

static void test_paths_shared_domains_match_own_trim(void **state)
{
    (void)state;
    static const char *const fixtures[] = {"v100_nv2.xml", "dgx_h100.xml", "pix_nic_2s.xml",
                                           "pcie_2s_8gpu.xml", "v100_sparse_ring.xml"};
    for_each_fixture_env(fixtures, ARRAY_LEN(fixtures), check_shared_domains_1_2);
}

/* A hop's link by its place in its system's link block (both systems clones of one host). */
static long hop_at(const tp_system *sys, const tp_link *link)
{
    return link ? (long)(link - sys->link_block) : -1;
}

/* Two systems hold the same routes: the same arrays, and every route the same hop by hop, its
 * first hop too when it has none (NCCL's stale first hop). */
static void assert_same_routes(const tp_system *x, const tp_system *y)
{
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        assert_int_equal(x->nodes[t].count, y->nodes[t].count);
        for (int i = 0; i < x->nodes[t].count; i++) {
            for (int u = 0; u < TP_NODE_TYPE_COUNT; u++) {
                const tp_route *a = x->nodes[t].nodes[i].paths[u];
                const tp_route *b = y->nodes[t].nodes[i].paths[u];
                assert_int_equal(a == NULL, b == NULL);
                for (int j = 0; a && j < x->nodes[u].count; j++) {
                    assert_int_equal(a[j].count, b[j].count);
                    assert_true(a[j].bw == b[j].bw);
                    assert_int_equal(a[j].type, b[j].type);
                    assert_int_equal(hop_at(x, a[j].list[0]), hop_at(y, b[j].list[0]));
                    for (int h = 1; h < a[j].count; h++)
                        assert_int_equal(hop_at(x, a[j].list[h]), hop_at(y, b[j].list[h]));
                }
            }
        }
    }
}

/*
 * Routes taken from the host's: every rank's trimmed copy holds the routes
 * its own paths, trim and paths give (the host's kept whenever it can serve).
 */
static void check_trimmed_routes(const tp_system *host, const tp_config *cfg, int n_nodes)
{
    int n = host->nodes[TP_NODE_GPU].count;
    tp_error err = {0};
    tp_system *first = NULL;
    tp_job_view v0 = {.n_ranks = n * n_nodes, .n_nodes = n_nodes, .rank = 0, .local_n_ranks = n};
    tp_gpu_domains dom;
    unsigned pending = 0;
    tp_host_routes *kept = NULL;
    assert_int_equal(tp_system__clone(&first, host, &err), TP_OK);
    assert_int_equal(tp_paths__compute_domains(first, cfg, &v0, NULL, &pending, &err), TP_OK);
    assert_int_equal(tp_paths__domains(first, &dom, &err), TP_OK);
    assert_int_equal(tp_paths__keep_host_routes(&kept, &first, cfg, NULL, &pending, &err), TP_OK);
    assert_true(kept != NULL || first != NULL);
    for (int r = 0; kept && r < n; r++) {
        tp_job_view v = v0;
        v.rank = host->nodes[TP_NODE_GPU].nodes[r].gpu.rank;
        tp_system *own = NULL, *taken = NULL;
        assert_int_equal(tp_paths__fresh_copy(&own, host, cfg, &v, &err), TP_OK);
        assert_int_equal(tp_system__clone(&taken, host, &err), TP_OK);
        assert_int_equal(tp_paths__trim_domains(taken, &dom, &v, &err), TP_OK);
        assert_int_equal(tp_paths__compute_trimmed(taken, kept, cfg, &v, NULL, &err), TP_OK);
        assert_same_routes(own, taken);
        tp_system__free(own);
        tp_system__free(taken);
    }
    tp_paths__host_routes_free(kept);
    tp_system__free(first);
}

static void check_trimmed_routes_1_2(tp_system *host, const tp_config *cfg)
{
    check_trimmed_routes(host, cfg, 1);
    check_trimmed_routes(host, cfg, 2);
}

/* hgx_a100: one domain per GPU with P2P and SHM off, each copy taking the host's routes;
 * v100_nv2: GPUs joined over NVLink (a trimmed GPU could carry routes: not kept). */
static void test_paths_trimmed_copies_take_host_routes(void **state)
{
    (void)state;
    static const char *const fixtures[] = {"hgx_a100.xml", "v100_nv2.xml", "pix_nic_2s.xml",
                                           "pcie_2s_8gpu.xml", "dgx_h100.xml"};
    for_each_fixture_env(fixtures, ARRAY_LEN(fixtures), check_trimmed_routes_1_2);
}

/*
 * The paths as far as the domains read them, then finished, are the whole
 * stage's: same path lines and domains; the NET searches wait (pending)
 * only where no search can fail or miss a route. Returns the parts left.
 */
static unsigned check_deferred_paths(const tp_system *host, const tp_config *cfg)
{
    int n = host->nodes[TP_NODE_GPU].count;
    tp_job_view v = {.n_ranks = n, .n_nodes = 1, .rank = 0, .local_n_ranks = n};
    tp_error err = {0};
    tp_system *whole = NULL, *part = NULL;
    tp_gpu_domains da, db;
    unsigned pending = 0, left;
    assert_int_equal(tp_system__clone(&whole, host, &err), TP_OK);
    assert_int_equal(tp_system__clone(&part, host, &err), TP_OK);
    tp_status st = tp_paths__compute(whole, cfg, &v, NULL, &err);
    /* A system the stage fails on fails the same way, with nothing left for later. */
    assert_int_equal(tp_paths__compute_domains(part, cfg, &v, NULL, &pending, &err), st);
    left = pending;
    if (st != TP_OK) {
        assert_int_equal(pending, 0);
        tp_system__free(whole);
        tp_system__free(part);
        return 0;
    }
    assert_int_equal(tp_paths__domains(whole, &da, &err), TP_OK);
    assert_int_equal(tp_paths__domains(part, &db, &err), TP_OK);
    assert_memory_equal(da.domain, db.domain, (size_t)n * sizeof(da.domain[0]));
    assert_int_equal(tp_paths__finish(part, cfg, NULL, &pending, NULL, &err), TP_OK);
    assert_int_equal(pending, 0);
    assert_same_path_lines(whole, part);
    tp_system__free(whole);
    tp_system__free(part);
    return left;
}

static void check_deferred_and_unsound(tp_system *host, const tp_config *cfg)
{
    unsigned left = check_deferred_paths(host, cfg);
    /* Sound systems leave the NET rewrites (and, without a P2P/SHM check on NETs, the
     * NET searches) for later. */
    assert_true(left & TP_PATHS_NET_POLICIES);
    /* A link without bandwidth: a search might not reach everything; all run at once. */
    tp_link *link = &host->nodes[TP_NODE_GPU].nodes[0].links[0];
    float bw = link->bw;
    link->bw = 0;
    assert_int_equal(check_deferred_paths(host, cfg), 0);
    link->bw = bw;
}

static void test_paths_deferred_net_searches(void **state)
{
    (void)state;
    static const char *const fixtures[] = {"v100_nv2.xml", "dgx_h100.xml", "pix_nic_2s.xml",
                                           "pcie_2s_8gpu.xml", "hgx_a100.xml"};
    for_each_fixture_env(fixtures, ARRAY_LEN(fixtures), check_deferred_and_unsound);
}

static void check_net_searches_wait(tp_system *host, const tp_config *cfg)
{
    /* NVLink routes between every pair of GPUs, wider than any NIC: no P2P or SHM check asks
     * for the NET searches, which wait (and finish to the whole stage's paths). */
    if (tp_config_int(cfg, TP_P_P2P_DISABLE) != 1)
        assert_true(check_deferred_paths(host, cfg) & TP_PATHS_NET_SEARCHES);
}

static void test_paths_net_searches_wait_behind_wide_routes(void **state)
{
    (void)state;
    static const char *const fixtures[] = {"dgx_h100.xml"};
    for_each_fixture_env(fixtures, ARRAY_LEN(fixtures), check_net_searches_wait);
}

/* ------------------------------------------------------------------ */
/* End to end from the topology XML (fixtures from the conformance cases) */
/* ------------------------------------------------------------------ */

static void check_plan_lines(const char *fixture, const char *const *env, int n_nodes,
                             const char *const *lines, size_t n_lines)
{
    char *xml = helpers_fixture(fixture);
    tp_plan *plan = helpers_plan(xml, env, n_nodes, 0);
    for (size_t i = 0; i < n_lines; i++) {
        if (!helpers_log_has(plan, lines[i]))
            print_error("%s: missing line \"%s\"\n", fixture, lines[i]);
        assert_true(helpers_log_has(plan, lines[i]));
    }
    tp_plan_free(plan);
    free(xml);
}

/* Plan fixture's rank 0 under NCCL version nccl; lines of its log that contain text. */
static int count_version_lines(const char *fixture, const char *nccl, int n_nodes, const char *text)
{
    char *xml = helpers_fixture(fixture);
    tp_config *cfg = NULL;
    tp_error err = {0};
    const char *const none[] = {NULL};
    assert_int_equal(tp_config_new(&cfg, none, &err), TP_OK);
    assert_int_equal(tp_config_set_nccl(cfg, nccl, &err), TP_OK);
    tp_job job = {.n_nodes = n_nodes, .rank = 0};
    tp_plan *plan = NULL;
    assert_int_equal(tp_plan_buffer(&plan, xml, strlen(xml), "<test>", &job, cfg, &err), TP_OK);
    int count = 0;
    for (size_t i = 0; i < plan->log.n_lines; i++)
        count += strstr(plan->log.lines[i].text, text) != NULL;
    tp_plan_free(plan);
    tp_config_free(cfg);
    free(xml);
    return count;
}

/* 2.27.5 init.cc: both ComputePaths (before and after the trim) log each GPU/NET GDR decision,
 * also when the trim keeps every node (several nodes); 2.22.3 logs none of them. */
static void test_paths_gdr_log_both_passes(void **state)
{
    (void)state;
    const char *line = "GPU Direct RDMA Enabled for GPU 0 / HCA 0 ";
    assert_int_equal(count_version_lines("dgx_h100.xml", "2.27.5", 2, line), 2);
    assert_int_equal(count_version_lines("dgx_h100.xml", "2.27.5", 1, line), 1);
    assert_int_equal(count_version_lines("dgx_h100.xml", "2.22.3", 2, line), 0);
}

/* 2.23 ncclTopoCheckP2p: P2P stays below the CPU by default even on AMD hosts of more than 2
 * GPUs (pxb_2level: GPU pairs across the CPU), so not every local pair is direct P2P. */
static void test_paths_p2p_level_pxb_from_2_23(void **state)
{
    (void)state;
    const char *no = "Check P2P Type isAllDirectP2p 0 directMode 0";
    assert_int_equal(count_version_lines("pxb_2level.xml", "2.27.5", 1, no), 1);
    assert_int_equal(count_version_lines("rtx4090_4numa.xml", "2.27.5", 1, no), 1);
    assert_int_equal(count_version_lines("pxb_2level.xml", "2.22.3", 1, "Check P2P Type"), 0);
}

/* seed_v100_sparse_ring(_nvb_disable). */
static void test_paths_xml_sparse_ring(void **state)
{
    (void)state;
    static const char *const nvb[] = {
        "GPU/1A000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1c000 (1/40.0/NVL) GPU/0-1d000 (2/40.0/NVB) "
        "GPU/0-1e000 (1/40.0/NVL) CPU/0-0 (2/12.0/PHB) ",
        "GPU/1D000 :GPU/0-1a000 (2/40.0/NVB) GPU/0-1c000 (1/40.0/NVL) GPU/0-1d000 (0/5000.0/LOC) "
        "GPU/0-1e000 (1/40.0/NVL) CPU/0-0 (2/12.0/PHB) ",
    };
    static const char *const pix[] = {
        "GPU/1C000 :GPU/0-1a000 (1/40.0/NVL) GPU/0-1c000 (0/5000.0/LOC) GPU/0-1d000 (1/40.0/NVL) "
        "GPU/0-1e000 (2/12.0/PIX) CPU/0-0 (2/12.0/PHB) ",
    };
    const char *const env[] = {"NCCL_NVB_DISABLE=1", NULL};
    check_plan_lines("v100_sparse_ring.xml", NULL, 1, nvb, ARRAY_LEN(nvb));
    check_plan_lines("v100_sparse_ring.xml", env, 1, pix, ARRAY_LEN(pix));
}

/* syn_pix_nic / syn_pix_nic_nodes2_gdr_loc. */
static void test_paths_xml_pix_nic(void **state)
{
    (void)state;
    static const char *const one[] = {
        "NET/1 :GPU/0-1a000 (6/10.0/SYS) GPU/0-1b000 (6/10.0/SYS) CPU/0-0 (4/10.0/SYS) "
        "CPU/0-1 (3/12.0/PHB) NET/0-0 (7/10.0/SYS) NET/0-1 (0/5000.0/LOC) ",
    };
    static const char *const loc[] = {
        "GPU/1B000 :GPU/0-1a000 (2/12.0/PIX) GPU/0-1b000 (0/5000.0/LOC) CPU/0-0 (2/12.0/PHB) "
        "CPU/0-1 (3/10.0/SYS) NET/0-0 (5/12.0/PHB) NET/0-1 (6/10.0/SYS) ",
    };
    const char *const env[] = {"NCCL_NET_GDR_LEVEL=LOC", NULL};
    check_plan_lines("pix_nic_2s.xml", NULL, 1, one, ARRAY_LEN(one));
    check_plan_lines("pix_nic_2s.xml", env, 2, loc, ARRAY_LEN(loc));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_seed_fixtures),
        cmocka_unit_test(test_paths_nvb_disable),
        cmocka_unit_test(test_paths_p2p_level_loc),
        cmocka_unit_test(test_paths_p2p_default_level_by_cpu),
        cmocka_unit_test(test_paths_net_beats_sys_and_trim),
        cmocka_unit_test(test_paths_net_disable_intra_keeps_gpus),
        cmocka_unit_test(test_paths_gdr_levels),
        cmocka_unit_test(test_paths_gdr_support_and_read),
        cmocka_unit_test(test_paths_pxn),
        cmocka_unit_test(test_paths_local_net_and_gpu),
        cmocka_unit_test(test_paths_nvb_gpus_and_all_nvlink),
        cmocka_unit_test(test_paths_print_seed),
        cmocka_unit_test(test_paths_print_seed_two_nodes),
        cmocka_unit_test(test_paths_print_truncates),
        cmocka_unit_test(test_paths_one_sided_link_fails),
        cmocka_unit_test(test_paths_p2p_and_shm_disabled),
        cmocka_unit_test(test_paths_shared_domains_match_own_trim),
        cmocka_unit_test(test_paths_trimmed_copies_take_host_routes),
        cmocka_unit_test(test_paths_deferred_net_searches),
        cmocka_unit_test(test_paths_net_searches_wait_behind_wide_routes),
        cmocka_unit_test(test_paths_gdr_log_both_passes),
        cmocka_unit_test(test_paths_p2p_level_pxb_from_2_23),
        cmocka_unit_test(test_paths_xml_sparse_ring),
        cmocka_unit_test(test_paths_xml_pix_nic),
        cmocka_unit_test(test_paths_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
