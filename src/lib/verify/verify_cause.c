/*
 * verify: the most likely cause of a divergence, found by re-planning the
 * rank under candidate settings and hardware changes. A candidate is kept only
 * when its plan gives exactly the rank's lines, section by section.
 */
#include "verify/verify.h"

#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
} candidate;

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

static tp_status mutated_text(const tp_verify *v, const candidate *c, char **xml, size_t *len,
                              tp_error *err)
{
    *xml = NULL;
    *len = 0;
    FILE *f = open_memstream(xml, len);
    if (!f)
        return tp_fail_nomem(err);
    tp_status st = tp_mutate_buffer(f, v->topo_text, v->topo_len, v->topo_source, &c->mut, 1, err);
    fclose(f);
    if (st != TP_OK) {
        free(*xml);
        *xml = NULL;
    }
    return st;
}

/* Whether the candidate's plan of rank r gives the log's lines of r. */
static bool try_candidate(const tp_verify *v, const candidate *c, const tp_vrank *r)
{
    char *xml = NULL;
    size_t len = 0;
    if (c->mutated && mutated_text(v, c, &xml, &len, NULL) != TP_OK)
        return false;
    tp_hashes exp[TP_VS_COUNT];
    memset(exp, 0, sizeof(exp));
    int ps = 0;
    /* a connection's divergence: the candidate must also give the log's transport */
    bool conn = r->div_section == TP_VS_CONNECTIONS && r->div_actual;
    tp_vrank transports = {.rank = r->rank, .gdr = -1, .rings_connected = !r->div_ring_phase};
    tp_status st = tp_verify__expected(v, r->rank, c->cfg, xml, len, conn ? &transports : NULL, exp,
                                       -1, 0, NULL, &ps, NULL, NULL);
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
    free(xml);
    return ok;
}

/* AllReduce bus bandwidth at 1 MiB, 64 MiB, 1 GiB under a candidate (rank 0's model). */
static bool busbw_of(const tp_verify *v, const candidate *c, double out[3])
{
    char *xml = NULL;
    size_t len = 0;
    if (c && c->mutated && mutated_text(v, c, &xml, &len, NULL) != TP_OK)
        return false;
    tp_job job = v->opt.job;
    job.version = TP_JOB_VERSION;
    job.n_nodes = v->n_nodes;
    job.rank = 0;
    job.node_topos = (const char *const *)v->node_topos;
    if (job.n_node_topos > job.n_nodes - 1)
        job.n_node_topos = job.n_nodes - 1;
    tp_plan *plan = NULL;
    tp_status st = tp_plan_buffer(&plan, xml ? xml : v->topo_text, xml ? len : v->topo_len,
                                  v->topo_source, &job, c && c->cfg ? c->cfg : v->cfg, NULL);
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
    *index = (int)v->n_causes++;
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
            candidate c = {0};
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
                     const char *flag, const char *spec)
{
    candidate c = {.mutated = true};
    snprintf(c.spec_buf, sizeof(c.spec_buf), "%s", spec);
    c.mut = (tp_mutation){.kind = kind, .spec = NULL};
    snprintf(c.what, sizeof(c.what), "topoplan mutate %s %s", flag, spec);
    push_candidate(list, n, cap, c);
}

/* GPUs at PCIe x8 and x4, each NIC missing, each GPU with one NVLink down. */
static void hardware_list(const tp_verify *v, candidate **list, size_t *n, size_t *cap)
{
    tp_job job = TP_JOB_INIT;
    tp_plan *plan = NULL;
    if (tp_plan_buffer(&plan, v->topo_text, v->topo_len, v->topo_source, &job, v->cfg, NULL) !=
        TP_OK) {
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
        mutation(list, n, cap, TP_MUT_SET, "--set", spec);
        snprintf(spec, sizeof(spec), "%s:link_width=4", bus);
        mutation(list, n, cap, TP_MUT_SET, "--set", spec);
        mutation(list, n, cap, TP_MUT_NVLINK_DOWN, "--nvlink-down", bus);
    }
    for (int i = 0; i < tp_system_node_count(sys, TP_NODE_NIC); i++) {
        tp_node_info nic;
        if (tp_system_node(sys, TP_NODE_NIC, i, &nic, sizeof(nic)) != TP_OK)
            continue;
        busid_of(nic.id, bus, sizeof(bus));
        mutation(list, n, cap, TP_MUT_REMOVE, "--remove", bus);
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

tp_status tp_verify__find_causes(tp_verify *v, tp_error *err)
{
    candidate *list = NULL;
    size_t n = 0, cap = 0;
    setting_list(v, &list, &n, &cap);
    hardware_list(v, &list, &n, &cap);
    int searched = 0;
    tp_status st = TP_OK;
    for (int i = 0; st == TP_OK && i < v->n_ranks; i++) {
        tp_vrank *r = v->ranks[i];
        if (!r || !r->diverged || r->cut)
            continue;
        /* the causes found first: one job-wide setting usually explains every rank */
        size_t found = 0;
        candidate *known = calloc(v->n_causes + 1, sizeof(*known));
        for (size_t k = 0; known && k < v->n_causes; k++)
            for (size_t j = 0; j < n; j++)
                if (strcmp(list[j].what, v->causes[k].what) == 0)
                    known[found++] = list[j];
        st = known ? search_rank(v, r, known, found, err) : tp_fail_nomem(err);
        free(known);
        if (st == TP_OK && r->cause < 0 && searched++ < TP_VERIFY_CAUSE_RANKS)
            st = search_rank(v, r, list, n, err);
    }
    free_candidates(list, n);
    return st;
}
