/*
 * verify: the most likely cause of a divergence, found by re-planning the
 * rank under candidate settings and hardware changes. A candidate is kept only
 * when its plan gives exactly the rank's lines, section by section.
 *
 * Hardware changes are tried on every node first (the job's topology edited), then on one
 * node alone (a degraded node among healthy ones: that node's topology edited, the others
 * as they are), on the nodes whose ranks diverge before the channels (their own system,
 * paths or search lines differ), or on each node of a small job whose log has no such lines.
 */
#include "verify/verify.h"

#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Nodes tried alone for a degraded node (those diverging before the channels come first). */
#define TP_VERIFY_CAUSE_NODES 8

/* Ranks whose causes are searched through every candidate; later ones try the causes found. */
#define TP_VERIFY_CAUSE_RANKS 16

/* Settings a job may have had without its log saying so, with the values worth trying. */
static const struct {
    const char *name;
    const char *values[7];
} setting_candidates[] = {
    {"NCCL_CROSS_NIC", {"0", "1", "2"}},
    {"NCCL_P2P_LEVEL", {"LOC", "NVL", "PIX", "PXB", "PHB", "SYS"}},
    {"NCCL_SHM_DISABLE", {"1"}},
    {"NCCL_NET_GDR_LEVEL", {"LOC", "PIX", "PXB", "PHB", "SYS"}},
    {"NCCL_NVLS_ENABLE", {"0"}},
    {"NCCL_PXN_DISABLE", {"1"}},
    {"NCCL_IB_MERGE_NICS", {"1"}},
};

typedef struct candidate {
    char what[200];  /* as the report names it */
    tp_config *cfg;  /* owned, or NULL: the job's */
    tp_mutation mut; /* kind and spec (spec in spec_buf) when mutated */
    char spec_buf[128];
    bool mutated;
    int node; /* the node edited alone, -1: every node */
} candidate;

/*
 * A job whose node `node` alone runs on an edited topology: the planner reads node topologies
 * from files, so the texts are handed over as anonymous in-memory files (/proc/self/fd/N).
 */
typedef struct node_variant {
    tp_vtopo topo;
    char **paths; /* hosts 1..n_nodes-1 */
    int fds[2];   /* the edited text, the job's main text (-1: none) */
    char fd_path[2][64];
} node_variant;

static bool reproduces(const tp_hashes exp[TP_VS_COUNT], const tp_vrank *r)
{
    for (int s = 0; s < TP_VS_COUNT; s++) {
        if (exp[s].n != r->actual[s].n)
            return false;
        if (exp[s].n && memcmp(exp[s].h, r->actual[s].h, exp[s].n * sizeof(uint64_t)) != 0)
            return false;
    }
    return true;
}

static tp_status mutated_text(const char *text, size_t len, const char *source, const candidate *c,
                              char **xml, size_t *xml_len, tp_error *err)
{
    *xml = NULL;
    *xml_len = 0;
    FILE *f = open_memstream(xml, xml_len);
    if (!f)
        return tp_fail_nomem(err);
    tp_status st = tp_mutate_buffer(f, text, len, source, &c->mut, 1, err);
    fclose(f);
    if (st != TP_OK) {
        free(*xml);
        *xml = NULL;
    }
    return st;
}

/* Host h's own topology text as the job plans it (host 0 and hosts without a file: the main). */
static tp_status host_text(const tp_verify *v, int h, char **text, size_t *len, bool *owned)
{
    *owned = false;
    if (h >= 1 && h - 1 < v->opt.job.n_node_topos && v->node_topos) {
        *owned = true;
        return tp_read_file(text, len, v->node_topos[h - 1], NULL);
    }
    *text = v->topo_text;
    *len = v->topo_len;
    return TP_OK;
}

static int memfd_of(const char *text, size_t len, char *path, size_t size)
{
    int fd = memfd_create("topoplan-verify", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, text + done, len - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, size, "/proc/self/fd/%d", fd);
    return fd;
}

static void variant_free(node_variant *nv)
{
    free(nv->paths);
    for (int i = 0; i < 2; i++)
        if (nv->fds[i] >= 0)
            close(nv->fds[i]);
}

/* The job with node `node` on `xml` and every other node on its own topology. */
static bool variant_of(const tp_verify *v, int node, const char *xml, size_t len, node_variant *nv)
{
    *nv = (node_variant){.fds = {-1, -1}};
    int n = v->n_nodes - 1;
    if (n < 1 || !(nv->paths = calloc((size_t)n, sizeof(char *))))
        return false;
    nv->fds[0] = memfd_of(xml, len, nv->fd_path[0], sizeof(nv->fd_path[0]));
    nv->fds[1] = memfd_of(v->topo_text, v->topo_len, nv->fd_path[1], sizeof(nv->fd_path[1]));
    if (nv->fds[0] < 0 || nv->fds[1] < 0) {
        variant_free(nv);
        return false;
    }
    for (int h = 1; h <= n; h++)
        nv->paths[h - 1] = h == node                         ? nv->fd_path[0]
                           : h - 1 < v->opt.job.n_node_topos ? v->node_topos[h - 1]
                                                             : nv->fd_path[1];
    nv->topo = (tp_vtopo){.xml = node == 0 ? xml : v->topo_text,
                          .len = node == 0 ? len : v->topo_len,
                          .node_topos = (const char *const *)nv->paths,
                          .n_node_topos = n};
    return true;
}

/* The candidate's topologies: the job's edited (every node) or one node's (a variant). */
static bool candidate_topo(const tp_verify *v, const candidate *c, char **xml, size_t *len,
                           node_variant *nv, tp_vtopo *topo, const tp_vtopo **use)
{
    *xml = NULL;
    *use = NULL;
    nv->paths = NULL;
    nv->fds[0] = nv->fds[1] = -1;
    if (!c->mutated)
        return true;
    char *base;
    size_t base_len;
    bool owned;
    int host = c->node < 0 ? 0 : c->node;
    if (host_text(v, host, &base, &base_len, &owned) != TP_OK)
        return false;
    tp_status st = mutated_text(base, base_len, v->topo_source, c, xml, len, NULL);
    if (owned)
        free(base);
    if (st != TP_OK)
        return false;
    if (c->node < 0) {
        *topo = (tp_vtopo){.xml = *xml, .len = *len};
        *use = topo;
        return true;
    }
    if (!variant_of(v, c->node, *xml, *len, nv))
        return false;
    *use = &nv->topo;
    return true;
}

/* Whether the candidate's plan of rank r gives the log's lines of r. */
static bool try_candidate(const tp_verify *v, const candidate *c, const tp_vrank *r)
{
    char *xml = NULL;
    size_t len = 0;
    node_variant nv;
    tp_vtopo topo;
    const tp_vtopo *use;
    if (!candidate_topo(v, c, &xml, &len, &nv, &topo, &use)) {
        free(xml);
        return false;
    }
    tp_hashes exp[TP_VS_COUNT];
    memset(exp, 0, sizeof(exp));
    int ps = 0;
    /* a connection's divergence: the candidate must also give the log's transport */
    bool conn = r->div_section == TP_VS_CONNECTIONS && r->div_actual;
    tp_vrank transports = {.rank = r->rank, .gdr = -1, .rings_connected = !r->div_ring_phase};
    tp_status st = tp_verify__expected(v, r->rank, c->cfg, use, conn ? &transports : NULL, exp, -1,
                                       0, NULL, &ps, NULL, NULL);
    char why[300];
    bool ok =
        (st == TP_OK || ps != TP_OK) && reproduces(exp, r) &&
        (!conn || (transports.transport &&
                   tp_verify__check_connection(&transports, r->div_actual, why, sizeof(why))));
    free(transports.transport);
    free(transports.ring_net);
    free(transports.net_names);
    for (int s = 0; s < TP_VS_COUNT; s++)
        free(exp[s].h);
    variant_free(&nv);
    free(xml);
    return ok;
}

/* AllReduce bus bandwidth at 1 MiB, 64 MiB, 1 GiB under a candidate (rank 0's model). */
static bool busbw_of(const tp_verify *v, const candidate *c, double out[3])
{
    char *xml = NULL;
    size_t len = 0;
    node_variant nv = {.fds = {-1, -1}};
    tp_vtopo topo;
    const tp_vtopo *use = NULL;
    if (c && !candidate_topo(v, c, &xml, &len, &nv, &topo, &use)) {
        free(xml);
        return false;
    }
    tp_job job = tp_verify__job(v, 0, use);
    tp_plan *plan = NULL;
    bool own = use && use->xml;
    tp_status st =
        tp_plan_buffer(&plan, own ? use->xml : v->topo_text, own ? use->len : v->topo_len,
                       v->topo_source, &job, c && c->cfg ? c->cfg : v->cfg, NULL);
    variant_free(&nv);
    free(xml);
    static const uint64_t sizes[3] = {UINT64_C(1) << 20, UINT64_C(1) << 26, UINT64_C(1) << 30};
    bool ok = st == TP_OK;
    for (int i = 0; ok && i < 3; i++) {
        tp_tune_call call;
        ok = tp_plan_tune_call(plan, tp_tune_coll_from_name("AllReduce"), sizes[i], &call,
                               sizeof(call)) == TP_OK;
        out[i] = ok ? call.busbw_gbs : 0;
    }
    tp_plan_free(plan);
    return ok;
}

static tp_status keep_cause(tp_verify *v, const candidate *c, const tp_vrank *r, int *index,
                            tp_error *err)
{
    if (v->n_causes == v->cap_causes && tp_grow((void **)&v->causes, &v->cap_causes,
                                                v->n_causes + 1, sizeof(*v->causes), err) != TP_OK)
        return TP_ERR_NOMEM;
    tp_vcause *k = &v->causes[v->n_causes];
    *k = (tp_vcause){.ranks = 0, .lines = r->n_lines};
    if (tp_strdup(&k->what, c->what, err) != TP_OK)
        return TP_ERR_NOMEM;
    if (asprintf(&k->detail, "re-planned with %s: reproduces all %zu lines of rank %d", c->what,
                 r->n_lines, r->rank) < 0)
        return tp_fail_nomem(err);
    k->has_busbw = busbw_of(v, NULL, k->busbw_expected) && busbw_of(v, c, k->busbw_cause);
    k->node = c->node;
    k->host = NULL;
    *index = (int)v->n_causes++;
    if (c->node >= 0) {
        /* the node's host as the log names it: any of its ranks' stream */
        int per = v->n_ranks / v->n_nodes;
        const char *host = "";
        for (int i = c->node * per; i < (c->node + 1) * per && !host[0]; i++)
            if (v->ranks[i] && v->ranks[i]->host)
                host = v->ranks[i]->host;
        if (tp_strdup(&k->host, host, err) != TP_OK)
            return TP_ERR_NOMEM;
    }
    return TP_OK;
}

static void free_candidates(candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tp_config_free(c[i].cfg);
    free(c);
}

static bool push_candidate(candidate **list, size_t *n, size_t *cap, candidate c)
{
    if (*n == *cap && tp_grow((void **)list, cap, *n + 1, sizeof(**list), NULL) != TP_OK) {
        tp_config_free(c.cfg);
        return false;
    }
    (*list)[(*n)++] = c;
    return true;
}

static void setting_list(const tp_verify *v, candidate **list, size_t *n, size_t *cap)
{
    for (size_t i = 0; i < ARRAY_LEN(setting_candidates); i++)
        for (size_t k = 0; k < ARRAY_LEN(setting_candidates[i].values); k++) {
            const char *name = setting_candidates[i].name, *val = setting_candidates[i].values[k];
            if (!val)
                break;
            candidate c = {.node = -1};
            if (tp_config_copy(&c.cfg, v->cfg, NULL) != TP_OK)
                return;
            if (tp_config_set_from(c.cfg, name, val, "verify", NULL) != TP_OK) {
                tp_config_free(c.cfg);
                continue;
            }
            snprintf(c.what, sizeof(c.what), "%s=%s", name, val);
            push_candidate(list, n, cap, c);
        }
}

static void busid_of(int64_t id, char *buf, size_t size)
{
    snprintf(buf, size, "%04llx:%02llx:%02llx.%llx", (unsigned long long)(id >> 20),
             (unsigned long long)((id >> 12) & 0xff), (unsigned long long)((id >> 4) & 0xff),
             (unsigned long long)(id & 0xf));
}

static void mutation(candidate **list, size_t *n, size_t *cap, tp_mutation_kind kind,
                     const char *flag, const char *spec, int node)
{
    candidate c = {.mutated = true, .node = node};
    snprintf(c.spec_buf, sizeof(c.spec_buf), "%s", spec);
    c.mut = (tp_mutation){.kind = kind, .spec = NULL};
    if (node >= 0)
        snprintf(c.what, sizeof(c.what), "node %d alone: topoplan mutate %s %s", node, flag, spec);
    else
        snprintf(c.what, sizeof(c.what), "topoplan mutate %s %s", flag, spec);
    push_candidate(list, n, cap, c);
}

/* GPUs at PCIe x8 and x4, each NIC missing, each GPU with one NVLink down: on every node
 * (node -1, the job's topology) or on node `node` alone (its own topology). */
static void hardware_list(const tp_verify *v, int node, candidate **list, size_t *n, size_t *cap)
{
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    char *text;
    size_t len;
    bool owned;
    if (host_text(v, node < 0 ? 0 : node, &text, &len, &owned) != TP_OK)
        return;
    tp_status st = tp_plan_buffer(&plan, text, len, v->topo_source, &job, v->cfg, NULL);
    if (owned)
        free(text);
    if (st != TP_OK) {
        tp_plan_free(plan);
        return;
    }
    const tp_system *sys = tp_plan_system(plan);
    char bus[64], spec[128];
    for (int i = 0; i < tp_system_node_count(sys, TP_NODE_GPU); i++) {
        tp_node_info g;
        if (tp_system_node(sys, TP_NODE_GPU, i, &g, sizeof(g)) != TP_OK)
            continue;
        busid_of(g.id, bus, sizeof(bus));
        snprintf(spec, sizeof(spec), "%s:link_width=8", bus);
        mutation(list, n, cap, TP_MUT_SET, "--set", spec, node);
        snprintf(spec, sizeof(spec), "%s:link_width=4", bus);
        mutation(list, n, cap, TP_MUT_SET, "--set", spec, node);
        mutation(list, n, cap, TP_MUT_NVLINK_DOWN, "--nvlink-down", bus, node);
    }
    for (int i = 0; i < tp_system_node_count(sys, TP_NODE_NIC); i++) {
        tp_node_info nic;
        if (tp_system_node(sys, TP_NODE_NIC, i, &nic, sizeof(nic)) != TP_OK)
            continue;
        busid_of(nic.id, bus, sizeof(bus));
        mutation(list, n, cap, TP_MUT_REMOVE, "--remove", bus, node);
    }
    tp_plan_free(plan);
}

static tp_status search_rank(tp_verify *v, tp_vrank *r, candidate *list, size_t n, tp_error *err)
{
    for (size_t i = 0; i < n; i++) {
        list[i].mut.spec = list[i].spec_buf;
        if (!try_candidate(v, &list[i], r))
            continue;
        for (size_t k = 0; k < v->n_causes; k++)
            if (strcmp(v->causes[k].what, list[i].what) == 0) {
                r->cause = (int)k;
                v->causes[k].ranks++;
                return TP_OK;
            }
        if (keep_cause(v, &list[i], r, &r->cause, err) != TP_OK)
            return TP_ERR_NOMEM;
        v->causes[r->cause].ranks++;
        return TP_OK;
    }
    return TP_OK;
}

/* The causes found so far that are in the list: tried first on every diverging rank. */
static tp_status known_first(tp_verify *v, tp_vrank *r, const candidate *list, size_t n,
                             tp_error *err)
{
    size_t found = 0;
    candidate *known = calloc(v->n_causes + 1, sizeof(*known));
    for (size_t k = 0; known && k < v->n_causes; k++)
        for (size_t j = 0; j < n; j++)
            if (strcmp(list[j].what, v->causes[k].what) == 0)
                known[found++] = list[j];
    tp_status st = known ? search_rank(v, r, known, found, err) : tp_fail_nomem(err);
    free(known);
    return st;
}

/* Every diverging rank against the list: the causes found, then (first ranks) the list. */
static tp_status search_ranks(tp_verify *v, candidate *list, size_t n, int *searched, tp_error *err)
{
    tp_status st = TP_OK;
    for (int i = 0; st == TP_OK && i < v->n_ranks; i++) {
        tp_vrank *r = v->ranks[i];
        if (!r || !r->diverged || r->cut || r->cause >= 0)
            continue;
        /* the causes found first: one job-wide setting usually explains every rank */
        st = known_first(v, r, list, n, err);
        if (st == TP_OK && r->cause < 0 && (*searched)++ < TP_VERIFY_CAUSE_RANKS)
            st = search_rank(v, r, list, n, err);
    }
    return st;
}

/*
 * The nodes to edit alone, in order: those with a rank diverging before the channels (its own
 * hardware shows), then, in a job of few nodes, the others with a diverging rank.
 */
static int degraded_nodes(const tp_verify *v, int *nodes)
{
    int n = 0, per = v->n_nodes > 0 ? v->n_ranks / v->n_nodes : 0;
    if (v->n_nodes < 2 || per < 1 || v->n_ranks % v->n_nodes != 0)
        return 0;
    for (int pass = 0; pass < 2; pass++)
        for (int h = 0; h < v->n_nodes && n < TP_VERIFY_CAUSE_NODES; h++) {
            bool early = false, any = false, taken = false;
            for (int k = 0; k < n; k++)
                taken |= nodes[k] == h;
            for (int i = h * per; i < (h + 1) * per; i++) {
                const tp_vrank *r = v->ranks[i];
                any |= r && r->diverged && !r->cut && r->cause < 0;
                early |=
                    r && r->diverged && !r->cut && r->cause < 0 && r->div_section < TP_VS_CHANNELS;
            }
            if (!taken && any && (pass == 0 ? early : v->n_nodes <= TP_VERIFY_CAUSE_NODES))
                nodes[n++] = h;
        }
    return n;
}

/* Each candidate node's hardware edits, on the node's first uncaused diverging rank. */
static tp_status search_nodes(tp_verify *v, tp_error *err)
{
    int nodes[TP_VERIFY_CAUSE_NODES];
    int n_nodes = degraded_nodes(v, nodes), per = v->n_nodes ? v->n_ranks / v->n_nodes : 0;
    tp_status st = TP_OK;
    for (int k = 0; st == TP_OK && k < n_nodes; k++) {
        tp_vrank *first = NULL;
        for (int i = nodes[k] * per; !first && i < (nodes[k] + 1) * per; i++)
            if (v->ranks[i] && v->ranks[i]->diverged && !v->ranks[i]->cut && v->ranks[i]->cause < 0)
                first = v->ranks[i];
        if (!first)
            continue;
        candidate *list = NULL;
        size_t n = 0, cap = 0;
        hardware_list(v, nodes[k], &list, &n, &cap);
        st = search_rank(v, first, list, n, err);
        int searched = TP_VERIFY_CAUSE_RANKS; /* the other ranks try the cause found only */
        if (st == TP_OK && first->cause >= 0)
            st = search_ranks(v, list, n, &searched, err);
        free_candidates(list, n);
    }
    return st;
}

tp_status tp_verify__find_causes(tp_verify *v, tp_error *err)
{
    candidate *list = NULL;
    size_t n = 0, cap = 0;
    setting_list(v, &list, &n, &cap);
    hardware_list(v, -1, &list, &n, &cap);
    int searched = 0;
    tp_status st = search_ranks(v, list, n, &searched, err);
    free_candidates(list, n);
    return st == TP_OK ? search_nodes(v, err) : st;
}
