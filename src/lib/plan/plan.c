/*
 * The planner: NCCL 2.22.3's per-rank flow (init.cc initTransportsRank) from
 * the topology XMLs to the channels, for a job of hosts of one or more kinds
 * (plan_job.c loads them).
 *
 * Order of the reported rank's log, as init.cc prints it: system and paths
 * (ncclTopoPrint), NVLS support, ring / tree / NVLS graphs, then the channels
 * (tp_channels__build) and the P2P counts (tp_channels__p2p).
 */
#include "common/out_file.h"
#include "netdev/netdev.h"
#include "plan/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NCCL 2.22.3 init.cc: the ring search asks for up to MAXCHANNELS/2 channels. */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Add the time since *t0 to a stage and restart the clock. */
static void lap(tp_plan *plan, tp_stage stage, double *t0)
{
    double t = now_us();
    plan->stage_us[stage] += t - *t0;
    *t0 = t;
}

double tp_plan_stage_us(const tp_plan *plan, tp_stage stage)
{
    return plan && (int)stage >= 0 && stage < TP_STAGE_COUNT ? plan->stage_us[stage] : 0.0;
}

tp_status tp_job_init(tp_job *job, unsigned version)
{
    if (!job || version < 1 || version > TP_JOB_VERSION)
        return TP_ERR_ARGUMENT;
    /* Only the fields of the caller's version: its struct may end before later ones. */
    job->version = version;
    job->n_nodes = 1;
    job->rank = 0;
    if (version >= 2) {
        job->node_topos = NULL;
        job->n_node_topos = 0;
    }
    return TP_OK;
}

/* The caller's job with the fields its version does not have at their defaults. */
static tp_job job_of_version(const tp_job *job)
{
    tp_job full = {.version = job->version, .n_nodes = job->n_nodes, .rank = job->rank};
    if (job->version >= 2) {
        full.node_topos = job->node_topos;
        full.n_node_topos = job->n_node_topos;
    }
    return full;
}

static int n_ranks(const tp_plan *plan)
{
    return plan->host_first_rank[plan->job.n_nodes];
}

/* The job as the paths stage sees it from `rank` (a rank of kind k). */
static tp_job_view job_view(const tp_plan *plan, const tp_host_kind *k, int rank)
{
    tp_job_view view = {
        .n_ranks = n_ranks(plan),
        .n_nodes = plan->job.n_nodes,
        .rank = rank,
        .local_n_ranks = k->n_gpus,
        .rank_devs = plan->rank_devs,
    };
    return view;
}

/* NCCL 2.24+ init.cc: with NCCL_TOPO_DUMP_FILE, ncclTopoGetSystem runs a pass of its own for
 * the dump before the one the system comes from (rule nic-fusion). */
static bool dump_pass_first(const tp_plan *plan)
{
    return tp_config_str(plan->cfg, TP_P_TOPO_DUMP_FILE) &&
           tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_NIC_FUSION);
}

/* Prepare a freshly parsed topology XML as NCCL does on `host`; the lines
 * NCCL prints while loading go to `log` (may be NULL). Then the NET devices
 * the IB plugin reports (NCCL_IB_HCA, merging: netdev_xml.c), whose findings
 * go to `notes` (may be NULL), never to the NCCL log. */
static tp_status prepare_doc(tp_xml *doc, const tp_plan *plan, int host, tp_log *log, tp_log *notes,
                             int *net_devices, tp_error *err)
{
    /* 2.24+ ncclTopoGetSystem ran once already for NCCL_TOPO_DUMP_FILE (log_dump_pass). */
    const tp_prep_pass pass = {.net_state_known = dump_pass_first(plan),
                               .net_devices = net_devices};
    tp_status st = tp_system__prepare_xml_pass(doc, plan->cfg, plan->host_first_rank[host],
                                               plan->job.rank, &pass, log, err);
    if (st == TP_OK)
        st = tp_netdev__apply_env(doc, plan->cfg, notes, err);
    return st;
}

/* A fresh copy of the topology XML as NCCL_TOPO_DUMP_FILE shows it for `host` (from 2.24 a
 * pass of its own, with the plugins' physical NICs: no virtual ones). */
static tp_status prepared_xml(tp_xml **out, const tp_plan *plan, int host, tp_error *err)
{
    const tp_host_kind *k = tp_plan__kind_of_host(plan, host);
    tp_status st = tp_xml__parse(out, k->text, k->text_len, k->source, err);
    if (st == TP_OK)
        st = tp_system__prepare_xml_physical(*out, plan->cfg, plan->host_first_rank[host], err);
    if (st == TP_OK)
        st = tp_netdev__apply_env(*out, plan->cfg, NULL, err);
    return st;
}

/*
 * An empty graph as init.cc sets it up before ncclTopoCompute. Only the
 * channel slots of n_gpus GPUs are ever read: the rest stays unset.
 */
static void new_graph(tp_graph *g, int n_gpus, int id, int pattern, int coll_net, int min_ch,
                      int max_ch)
{
    tp_graph__set_settings(g, &(tp_graph_settings){0});
    memset(g->intra, 0, (size_t)TP_MAXCHANNELS * (size_t)n_gpus * sizeof(g->intra[0]));
    memset(g->inter, 0, sizeof(g->inter));
    g->events = NULL;
    g->n_events = g->events_cap = 0;
    g->id = id;
    g->pattern = pattern;
    g->coll_net = coll_net;
    g->min_channels = min_ch;
    g->max_channels = max_ch;
}

/* Graph i of the domain's block: each holds the channel rows of the domain's GPUs. */
static tp_graph *graph_in_block(const tp_domain *d, int i)
{
    size_t size = tp_graph__size(d->sys->nodes[TP_NODE_GPU].count);
    return (tp_graph *)(d->graph_block + (size_t)i * size);
}

/* The domain's graphs, in one block: they live and die together (and a plan's
 * heap then holds a few blocks, not many). */
static tp_status graph_room(tp_domain *d, tp_error *err)
{
    int n_gpus = d->sys->nodes[TP_NODE_GPU].count;
    if (!d->graph_block && !(d->graph_block = malloc(TP_GRAPH_COUNT * tp_graph__size(n_gpus))))
        return tp_fail_nomem(err);
    for (int i = 0; i < TP_GRAPH_COUNT; i++) {
        d->graphs[i] = graph_in_block(d, i);
        tp_graph__set_room(d->graphs[i], n_gpus);
    }
    return TP_OK;
}

static tp_status compute_graph(tp_plan *plan, tp_domain *d, int slot, tp_search_ctx **keep,
                               tp_log *log, tp_error *err)
{
    tp_status st = tp_search__compute_kept(keep, d->sys, d->graphs[slot], plan->cfg, log, err);
    if (st == TP_OK)
        tp_search__print_graph(log, d->sys, d->graphs[slot]);
    return st;
}

/*
 * Comparing two systems costs about as much as a short search: mirror only
 * from a domain whose searches walked more steps than that.
 */
static bool mirror_source(const tp_domain *e)
{
    return e->searched && e->search_work >= TP_MIRROR_MIN_WORK;
}

/* e's graphs may be renamed for d only when both search an NVLS graph or neither does. */
static bool worth_mirroring(const tp_domain *e, const tp_domain *d)
{
    return mirror_source(e) && e->nvls_support == d->nvls_support;
}

/*
 * A domain whose system is a renaming of an earlier domain's gets that
 * domain's graphs renamed instead of searched (tp_search__mirror: only when
 * provably identical to searching). Sets d->searched when done.
 */
static tp_status mirror_graphs(tp_plan *plan, tp_host_kind *k, tp_domain *d, tp_error *err)
{
    bool candidate = false;
    for (const tp_domain *e = k->domains; e < d; e++)
        candidate |= worth_mirroring(e, d);
    if (!candidate)
        return TP_OK;
    tp_status st = graph_room(d, err);
    if (st != TP_OK)
        return st;
    /* A mirror writes each graph whole (settings, channel slots, events); until then they own
     * no events, so that the domain releases them whatever happens. */
    for (int i = 0; i < TP_GRAPH_COUNT; i++) {
        d->graphs[i]->events = NULL;
        d->graphs[i]->n_events = d->graphs[i]->events_cap = 0;
    }
    for (tp_domain *e = k->domains; e < d; e++) {
        int done = 0;
        if (!worth_mirroring(e, d))
            continue;
        const tp_search_domain from = {e->sys, e->graphs}, to = {d->sys, d->graphs};
        st = tp_search__mirror(&k->mirrors, from, to, TP_GRAPH_COUNT, plan->cfg, &done, err);
        if (st != TP_OK || done) {
            d->searched = done;
            return st;
        }
    }
    for (int i = 0; i < TP_GRAPH_COUNT; i++) /* to be searched: the block is reused */
        d->graphs[i] = NULL;
    return TP_OK;
}

/* Ring, tree (as many channels as the ring), then CollNet (not computed) and NVLS graphs. */
static tp_status search_graphs(tp_plan *plan, tp_domain *d, tp_search_ctx **keep, tp_log *log,
                               tp_error *err)
{
    tp_status st = graph_room(d, err);
    if (st != TP_OK)
        return st;
    /* Graphs not set up yet are not released with the domain. */
    tp_graph *const *g = d->graphs;
    for (int i = TP_GRAPH_RING + 1; i < TP_GRAPH_COUNT; i++)
        d->graphs[i] = NULL;
    int n_gpus = d->sys->nodes[TP_NODE_GPU].count;
    const int max_channels = tp_config__profile(plan->cfg)->max_channels; /* MAXCHANNELS */
    new_graph(g[TP_GRAPH_RING], n_gpus, 0, TP_PATTERN_RING, 0, 1, max_channels / 2);
    if ((st = compute_graph(plan, d, TP_GRAPH_RING, keep, log, err)) != TP_OK)
        return st;
    int ring_n = g[TP_GRAPH_RING]->n_channels;
    d->graphs[TP_GRAPH_TREE] = graph_in_block(d, TP_GRAPH_TREE);
    new_graph(g[TP_GRAPH_TREE], n_gpus, 1, TP_PATTERN_BALANCED_TREE, 0, ring_n, ring_n);
    if ((st = compute_graph(plan, d, TP_GRAPH_TREE, keep, log, err)) != TP_OK)
        return st;
    for (int i = TP_GRAPH_TREE + 1; i < TP_GRAPH_COUNT; i++)
        d->graphs[i] = graph_in_block(d, i);
    new_graph(g[TP_GRAPH_COLLNET_CHAIN], n_gpus, 2, TP_PATTERN_TREE, 1, ring_n, ring_n);
    new_graph(g[TP_GRAPH_COLLNET_DIRECT], n_gpus,
              tp_config__profile(plan->cfg)->collnet_direct_graph_id, TP_PATTERN_COLLNET_DIRECT, 1,
              1, max_channels);
    new_graph(g[TP_GRAPH_NVLS], n_gpus, 3, TP_PATTERN_NVLS, 0, 1, max_channels);
    if (d->nvls_support)
        st = compute_graph(plan, d, TP_GRAPH_NVLS, keep, log, err);
    return st;
}

static tp_status compute_graphs(tp_plan *plan, tp_host_kind *k, tp_domain *d, tp_log *log,
                                tp_error *err)
{
    tp_status st = mirror_graphs(plan, k, d, err);
    if (st != TP_OK || d->searched)
        return st;
    /* The graphs of one system share what the search compiles of it. */
    tp_search_ctx *keep = NULL;
    st = search_graphs(plan, d, &keep, log, err);
    d->search_work = tp_search__work(keep);
    d->searched = st == TP_OK;
    /* Later domains are compared with this one on the tables its searches compiled. */
    bool later = false;
    for (int i = 0; i < k->n_gpus; i++)
        later |= k->domain_of[i] < 0;
    if (later && mirror_source(d))
        tp_search__mirrors_adopt(&k->mirrors, d->sys, keep);
    else
        tp_search__keep_free(keep);
    return st;
}

static const tp_node *gpu_of_rank(const tp_system *sys, int rank)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++)
        if (gpus->nodes[g].gpu.rank == rank)
            return &gpus->nodes[g];
    return NULL;
}

/* The conformance machine has NVLS multicast on sm90+ GPUs attached to an NVSwitch. */
static bool multicast_capable(const tp_node *gpu)
{
    if (gpu->gpu.cuda_comp_cap < 90)
        return false;
    for (int l = 0; l < gpu->n_links; l++)
        if (gpu->links[l].type == TP_LINK_NVL && gpu->links[l].rem->type == TP_NODE_NVS)
            return true;
    return false;
}

/* 2.25 ncclNvlsInit (rule nvls-channels-by-arch): a parameter not above 0 leaves the count to
 * the architecture (fewer channels for sm100 on one node); without the rule it stays as asked. */
static int nvls_default_channels(const tp_plan *plan, const tp_node *gpu, int asked)
{
    const tp_nccl_profile *p = tp_config__profile(plan->cfg);
    if (!tp_profile_has(p, TP_RULE_NVLS_CHANNELS_BY_ARCH))
        return asked;
    int n = gpu->gpu.cuda_comp_cap < 100 ? p->nvls_channels_sm90
            : plan->job.n_nodes > 1      ? p->nvls_channels_sm100
                                         : p->nvls_channels_sm100_one_node;
    return n > 0 ? n : asked;
}

/* ncclNvlsInit (NCCL 2.22.3 transport/nvls.cc): more than 2 GPUs, NCCL_NVLS_ENABLE. */
static void nvls_init(tp_plan *plan, tp_domain *d, int rank, tp_log *log)
{
    tp_config__log_env(plan->cfg, TP_P_NVLS_ENABLE, log); /* read first, in every case */
    int64_t enable = tp_config_int(plan->cfg, TP_P_NVLS_ENABLE);
    const tp_node *gpu = gpu_of_rank(d->sys, rank);
    d->nvls_support = d->nvls_channels = 0;
    if (!enable || d->sys->nodes[TP_NODE_GPU].count <= 2 || !gpu)
        return;
    d->nvls_support = enable == 2 ? multicast_capable(gpu) : 1;
    tp_log_info_sub(log, TP_SUB_INIT, "NVLS multicast support is %savailable on dev %d",
                    d->nvls_support ? "" : "not ", gpu->gpu.dev);
    if (!d->nvls_support)
        return;
    tp_config__log_env(plan->cfg, TP_P_NVLS_NCHANNELS, log);
    int n = (int)tp_config_int(plan->cfg, TP_P_NVLS_NCHANNELS);
    if (n <= 0)
        n = nvls_default_channels(plan, gpu, n);
    if (n > plan->max_ctas)
        n = plan->max_ctas;
    d->nvls_channels = n < plan->min_ctas ? plan->min_ctas : n;
}

/* Every local rank whose GPU is in d's trimmed system belongs to domain `idx`. */
static void mark_domain(const tp_plan *plan, tp_host_kind *k, const tp_domain *d, int idx)
{
    int base = plan->host_first_rank[k->rep_host];
    const tp_node_set *gpus = &d->sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++) {
        int local = gpus->nodes[g].gpu.rank - base;
        if (local >= 0 && local < k->n_gpus && k->domain_of[local] < 0)
            k->domain_of[local] = idx;
    }
}

/* Some GPU is outside the first GPU's domain: each domain's ranks trim the system. */
static bool several_domains(const tp_gpu_domains *dom)
{
    for (int g = 0; g < dom->n_gpus; g++)
        if (dom->domain[g] != 0)
            return true;
    return false;
}

/*
 * The host kind's GPU domains from its first rank's paths on the whole
 * system: those paths do not depend on the rank, so later ranks skip them and
 * trim a fresh copy with the same domains (tp_paths__trim_domains). With
 * several domains, every domain's copy takes its routes from these
 * (k->host_routes keeps *sys, and the first rank gets a fresh copy too).
 */
static tp_status host_domains(const tp_plan *plan, tp_host_kind *k, tp_system **sys,
                              const tp_job_view *view, tp_log *log, bool *computed,
                              unsigned *pending, tp_gdr_lines *gdr, tp_error *err)
{
    *computed = false;
    *pending = 0;
    if (k->host_domains)
        return TP_OK;
    /* Only what the domains read: a trimmed copy computes its routes anew. */
    tp_status st = tp_paths__compute_domains(*sys, plan->cfg, view, log, pending, err);
    /* From 2.26 the first ComputePaths logs its GDR decisions for every NET (trimmed away
     * next on one node): it runs whole, as NCCL runs it. */
    if (st == TP_OK && *pending &&
        tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_LOG_GDR_MODE))
        st = tp_paths__finish(*sys, plan->cfg, log, pending, gdr, err);
    *computed = st == TP_OK;
    if (st == TP_OK && !(k->host_domains = malloc(sizeof(*k->host_domains))))
        st = tp_fail_nomem(err);
    if (st == TP_OK && (st = tp_paths__domains(*sys, k->host_domains, err)) != TP_OK) {
        free(k->host_domains);
        k->host_domains = NULL;
    }
    if (st != TP_OK || !several_domains(k->host_domains))
        return st;
    st = tp_paths__keep_host_routes(&k->host_routes, sys, plan->cfg, log, pending, err);
    if (st == TP_OK && k->host_routes) {
        *computed = false;
        *pending = 0;
        st = tp_system__clone(sys, k->host_sys, err);
    }
    return st;
}

/*
 * ncclTopoSearchInit of one rank. From 2.30.3 (TP_RULE_DEV_NODES) the search starts from the
 * GPUs' DEV nodes, whose routes are the host kind's raw routes (computed once per kind on the
 * whole host system, before any trim).
 */
static tp_status search_init(const tp_plan *plan, tp_host_kind *k, tp_domain *d, tp_error *err)
{
    if (!tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_DEV_NODES))
        return tp_search__init(d->sys, err);
    tp_status st = TP_OK;
    if (!k->dev_routes)
        st = tp_paths__raw_routes(&k->dev_routes, k->host_sys, plan->cfg, err);
    return st == TP_OK ? tp_search__init_devs(d->sys, k->dev_routes, err) : st;
}

/* Paths, trim, paths again and search init of one rank (init.cc order). */
static tp_status rank_paths(tp_plan *plan, tp_host_kind *k, tp_domain *d, int rank, tp_log *log,
                            tp_error *err)
{
    tp_job_view view = job_view(plan, k, rank);
    bool computed = false;
    unsigned pending = 0;
    tp_gdr_lines gdr = {0};
    tp_status st = tp_system__clone(&d->sys, k->host_sys, err);
    if (st == TP_OK)
        st = host_domains(plan, k, &d->sys, &view, log, &computed, &pending, &gdr, err);
    int gpus = st == TP_OK ? d->sys->nodes[TP_NODE_GPU].count : 0;
    int nets = st == TP_OK ? d->sys->nodes[TP_NODE_NET].count : 0;
    if (st == TP_OK)
        st = tp_paths__trim_domains(d->sys, k->host_domains, &view, err);
    /* A trim that removed nothing leaves the system whose paths were just computed (with no
     * line logged, as they succeeded): computing them again would give the same routes. */
    bool same = computed && gpus == d->sys->nodes[TP_NODE_GPU].count &&
                nets == d->sys->nodes[TP_NODE_NET].count;
    /* From 2.26 the second ComputePaths logs its GDR decisions again, trimmed or not: on the
     * same routes, the lines the first one kept (computed again only when it kept none). */
    bool gdr_lines =
        log->enabled && tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_LOG_GDR_MODE);
    if (same && gdr_lines && !gdr.kept)
        same = false;
    if (st == TP_OK && !same && k->host_routes)
        st = tp_paths__compute_trimmed(d->sys, k->host_routes, plan->cfg, &view, log, err);
    else if (st == TP_OK && !same)
        st = tp_paths__compute(d->sys, plan->cfg, &view, log, err);
    else if (st == TP_OK && pending)
        st = tp_paths__finish(d->sys, plan->cfg, log, &pending, NULL, err);
    if (st == TP_OK && same && gdr_lines)
        tp_paths__log_gdr_lines(&gdr, log);
    tp_paths__gdr_lines_free(&gdr);
    return st == TP_OK ? search_init(plan, k, d, err) : st;
}

/*
 * NCCL 2.22.3 ncclTopoGetSystem, after the XML is prepared: with NCCL_TOPO_DUMP_FILE set
 * the dump rank is read (NCCL_TOPO_DUMP_FILE_RANK's ENV line), and that rank says it dumps.
 */
static void log_topo_dump(const tp_plan *plan, tp_log *log)
{
    if (!tp_config_str(plan->cfg, TP_P_TOPO_DUMP_FILE))
        return;
    tp_config__log_env(plan->cfg, TP_P_TOPO_DUMP_FILE_RANK, log);
    if (plan->job.rank == tp_config_int(plan->cfg, TP_P_TOPO_DUMP_FILE_RANK))
        tp_config__log_env(plan->cfg, TP_P_TOPO_DUMP_FILE, log);
}

/* NCCL 2.22.3 init.cc after the searches: the graph dump rank is read, and that rank dumps. */
static void log_graph_dump(const tp_plan *plan, tp_log *log)
{
    tp_config__log_env(plan->cfg, TP_P_GRAPH_DUMP_FILE_RANK, log);
    if (plan->job.rank == tp_config_int(plan->cfg, TP_P_GRAPH_DUMP_FILE_RANK))
        tp_config__log_env(plan->cfg, TP_P_GRAPH_DUMP_FILE, log); /* search.cc DumpGraphs */
}

/*
 * ncclTopoPrint for the logged rank. 2.28.7 keeps a one-host job's NETs
 * (TP_RULE_NETS_KEPT_ONE_NODE: system->inter 0, where 2.22.3 removes them): the printed copy is
 * trimmed of other GPU domains only, its routes computed with the NETs, while the search's system
 * has none. 2.30.3's DEV nodes (TP_RULE_DEV_NODES) are shown from the routes the search gives the
 * GPUs.
 */
static tp_status print_system(tp_plan *plan, tp_host_kind *k, tp_domain *d, int rank, tp_log *log,
                              tp_error *err)
{
    const tp_nccl_profile *prof = tp_config__profile(plan->cfg);
    tp_system *shown = d->sys, *copy = NULL;
    tp_status st = TP_OK;
    if (tp_profile_has(prof, TP_RULE_NETS_KEPT_ONE_NODE) &&
        k->host_sys->nodes[TP_NODE_NET].count > d->sys->nodes[TP_NODE_NET].count) {
        tp_log quiet = {.enabled = false};
        tp_job_view view = job_view(plan, k, rank);
        view.keep_nets = true;
        st = tp_system__clone(&copy, k->host_sys, err);
        if (st == TP_OK)
            st = tp_paths__trim_domains(copy, k->host_domains, &view, err);
        if (st == TP_OK)
            st = tp_paths__compute(copy, plan->cfg, &view, &quiet, err);
        tp_log_clear(&quiet);
        if (st == TP_OK) { /* maxBw/totalBw of the search (system->inter 0: between GPUs) */
            copy->max_bw = d->sys->max_bw;
            copy->total_bw = d->sys->total_bw;
            shown = copy;
        }
    }
    bool devs = tp_profile_has(prof, TP_RULE_DEV_NODES);
    if (st == TP_OK) { /* 2.30.3: the DEVs of GPUs trimmed away stay, printed without a GPU */
        tp_system__print_kept(log, devs ? k->host_sys : shown, shown);
        tp_paths__print(log, shown, devs ? k->dev_routes : NULL);
    }
    tp_system__free(copy);
    return st;
}

/* The pipeline of local rank `local` of kind k's representative host; a new domain. */
static tp_status run_domain(tp_plan *plan, tp_host_kind *k, int local, bool logged, tp_error *err)
{
    tp_log quiet = {.enabled = false};
    tp_log *log = logged ? &plan->log : &quiet;
    int rank = plan->host_first_rank[k->rep_host] + local;
    int idx = k->n_domains++;
    tp_domain *d = &k->domains[idx];
    double t0 = now_us();
    tp_status st = rank_paths(plan, k, d, rank, log, err);
    lap(plan, TP_STAGE_PATHS, &t0);
    if (st != TP_OK)
        return st;
    mark_domain(plan, k, d, idx);
    if (k->domain_of[local] != idx)
        /* Reached by files whose <gpu> rank attributes disagree with the GPU order
         * (a GPU without rank among GPUs with ranks): not a model topoplan has. */
        return tp_fail(err, TP_ERR_TOPOLOGY, d->sys->source, 0, 0,
                       "rank %d: its GPU falls outside the GPU domain planned for its node "
                       "(are some <gpu> rank attributes missing or out of order?)",
                       rank);
    if (logged && (st = print_system(plan, k, d, rank, log, err)) != TP_OK)
        return st;
    nvls_init(plan, d, rank, log);
    t0 = now_us();
    st = compute_graphs(plan, k, d, log, err);
    lap(plan, TP_STAGE_SEARCH, &t0);
    if (st == TP_OK && logged)
        log_graph_dump(plan, log);
    return st;
}

/* The kinds as the channel builder sees them; *views_out and *kinds_out are the caller's to free.
 */
static tp_status builder_views(const tp_plan *plan, tp_domain_view **views_out,
                               tp_kind_view **kinds_out, int *n_domains, tp_error *err)
{
    int nd = 0;
    for (int i = 0; i < plan->n_kinds; i++)
        nd += plan->kinds[i].n_domains;
    tp_domain_view *views = *views_out = calloc((size_t)nd + 1, sizeof(*views));
    tp_kind_view *kinds = *kinds_out = calloc((size_t)plan->n_kinds + 1, sizeof(*kinds));
    if (!views || !kinds)
        return tp_fail_nomem(err);
    for (int i = 0; i < plan->n_kinds; i++) {
        const tp_host_kind *k = &plan->kinds[i];
        for (int j = 0; j < k->n_domains; j++) {
            const tp_domain *d = &k->domains[j];
            tp_domain_view *v = &views[k->domain_base + j];
            v->n_gpus = d->sys->nodes[TP_NODE_GPU].count;
            for (int a = 0; a < TP_GRAPH_COUNT; a++)
                v->graphs[a] = d->graphs[a];
            v->nvls_channels = d->nvls_channels;
        }
        kinds[i] = (tp_kind_view){.n_ranks = k->n_gpus,
                                  .rep_host = k->rep_host,
                                  .domain_of = k->domain_of,
                                  .cpu_arch = k->cpu_arch,
                                  .cpu_vendor = k->cpu_vendor};
    }
    *n_domains = nd;
    return TP_OK;
}

/* The job's domain numbering (kinds in order) and every domain_of in it. */
static void number_domains(tp_plan *plan, int **global_of)
{
    int base = 0;
    for (int i = 0; i < plan->n_kinds; i++) {
        tp_host_kind *k = &plan->kinds[i];
        k->domain_base = base;
        for (int l = 0; l < k->n_gpus; l++)
            global_of[i][l] = base + k->domain_of[l];
        base += k->n_domains;
    }
}

/* NCCL's algorithm order (Tree, Ring, CollNetDirect, CollNetChain, NVLS,
 * NVLSTree, PAT) to our graph slots: NVLS and NVLSTree share the NVLS graph,
 * PAT runs on the Tree graph (2.23 init.cc). */
static const int tune_slot[TP_ALGO_COUNT] = {
    TP_GRAPH_TREE, TP_GRAPH_RING, TP_GRAPH_COLLNET_DIRECT, TP_GRAPH_COLLNET_CHAIN, TP_GRAPH_NVLS,
    TP_GRAPH_NVLS, TP_GRAPH_TREE};

/*
 * The tuning record of the job, from rank 0's view: the combined graphs with
 * the pattern and network latency of rank 0's own, rank 0's CPU, the job's.
 */
static void tune_job(const tp_plan *plan, tp_tune_job *tj)
{
    const tp_channels *ch = &plan->channels;
    /* Rank 0: local index 0 of host 0, planned with its kind. */
    const tp_host_kind *k0 = tp_plan__kind_of_host(plan, 0);
    const tp_domain *d0 = &k0->domains[k0->domain_of[0]];
    memset(tj, 0, sizeof(*tj));
    tj->n_ranks = ch->n_ranks;
    tj->n_nodes = ch->n_nodes;
    tj->rank = plan->job.rank;
    tj->cpu_arch = k0->cpu_arch;
    tj->cpu_vendor = k0->cpu_vendor;
    tj->comm_cpu_arch = plan->facts.cpu_arch;
    tj->comm_cpu_vendor = plan->facts.cpu_vendor;
    tj->min_comp_cap = plan->facts.min_comp_cap;
    tj->max_comp_cap = plan->facts.max_comp_cap;
    for (int a = 0; a < TP_ALGO_COUNT; a++) {
        const tp_graph_info *gi = &ch->combined[tune_slot[a]];
        const tp_graph *own = d0->graphs[tune_slot[a]];
        tp_tune_graph *g = &tj->graphs[a];
        g->pattern = own->pattern;
        g->latency_inter = own->latency_inter;
        g->n_channels = gi->n_channels;
        g->same_channels = gi->same_channels;
        g->bw_intra = gi->bw_intra;
        g->bw_inter = gi->bw_inter;
        g->type_intra = gi->type_intra;
        g->type_inter = gi->type_inter;
    }
    /* init.cc: Ring and Tree keep the smaller channel count of the two. */
    tj->graphs[TP_ALGO_RING].n_channels = tj->graphs[TP_ALGO_TREE].n_channels = ch->search_channels;
    tj->graphs[TP_ALGO_PAT].n_channels = ch->search_channels; /* the Tree graph itself */
    tj->n_channels = ch->n_channels;
    tj->local_ranks = ch->local_ranks;
    tj->nvls_channels = ch->n_nvls_channels;
    tj->nvls_support = d0->nvls_support && ch->combined[TP_GRAPH_NVLS].n_channels > 0;
    tj->collnet_support = 0;
}

/*
 * 2.27 transport.cc ncclTransportCheckP2pType (rank 0 only): whether every pair of the node's
 * local ranks connects by P2P without an intermediate rank; directMode is 0, one process per GPU.
 */
static tp_status log_p2p_type(tp_plan *plan, tp_error *err)
{
    const tp_node_set *gpus = &plan->sys->nodes[TP_NODE_GPU];
    /* 2.28: a node of one rank has no pair that is not direct (2.27: reported as not direct). */
    bool all_direct = plan->channels.local_ranks > 1 ||
                      tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_LOG_P2P_CUDA);
    for (int i = 0; all_direct && i < gpus->count; i++) {
        for (int j = i + 1; all_direct && j < gpus->count; j++) {
            int p2p = 0, inter = -1;
            tp_status st = tp_paths__check_p2p(plan->sys, plan->cfg, gpus->nodes[i].id,
                                               gpus->nodes[j].id, &p2p, NULL, &inter, err);
            if (st != TP_OK)
                return st;
            all_direct = p2p && inter == -1;
        }
    }
    /* 2.28 adds whether every pair has CUDA P2P at any distance: the suite's machines do. */
    if (tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_LOG_P2P_CUDA))
        tp_log_info_sub(&plan->log, TP_SUB_INIT,
                        "Check P2P Type isAllDirectP2p %d directMode 0 isAllCudaP2p 1",
                        all_direct ? 1 : 0);
    else
        tp_log_info_sub(&plan->log, TP_SUB_INIT, "Check P2P Type isAllDirectP2p %d directMode 0",
                        all_direct ? 1 : 0);
    return TP_OK;
}

/* The NET devices of rank r's host: its plugin's devices (the physical ones and the virtual NICs
 * fused from them), else the host system's NETs. */
static int host_nets_of_rank(const tp_plan *plan, int r)
{
    int h = 0;
    while (h + 1 < plan->job.n_nodes && plan->host_first_rank[h + 1] <= r)
        h++;
    const tp_host_kind *k = tp_plan__kind_of_host(plan, h);
    return k->net_devices >= 0 ? k->net_devices : k->host_sys->nodes[TP_NODE_NET].count;
}

/* 2.30.3 init.cc (AllGather3): the logged rank's Net and CollNet device counts (no CollNet
 * plugin: 0), then on rank 0 their range across ranks and the ranks below the most; a mismatch
 * is ignored (NCCL_IGNORE_NET_MISMATCH 1). */
static void log_net_device_counts(tp_plan *plan)
{
    int rank = plan->job.rank, n_ranks = plan->host_first_rank[plan->job.n_nodes];
    tp_log_info_sub(&plan->log, TP_SUB_INIT, "Rank %d: %d Net devices", rank,
                    host_nets_of_rank(plan, rank));
    tp_log_info_sub(&plan->log, TP_SUB_INIT, "Rank %d: 0 CollNet devices", rank);
    if (rank != 0)
        return;
    int lo = host_nets_of_rank(plan, 0), hi = lo;
    for (int r = 1; r < n_ranks; r++) {
        int n = host_nets_of_rank(plan, r);
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    tp_log_info_sub(&plan->log, TP_SUB_INIT, "Local Net device counts across ranks: min %d max %d",
                    lo, hi);
    tp_log_info_sub(&plan->log, TP_SUB_INIT,
                    "Local CollNet device counts across ranks: min 0 max 0");
    if (lo == hi)
        return;
    for (int r = 0; r < n_ranks; r++)
        if (host_nets_of_rank(plan, r) < hi)
            tp_log_info_sub(&plan->log, TP_SUB_INIT, "Rank %d has %d local Net devices (max %d).",
                            r, host_nets_of_rank(plan, r), hi);
    tp_log_info_sub(&plan->log, TP_SUB_INIT,
                    "Detected mixed local Net device counts across ranks (min %d, max %d). "
                    "Ignoring due to NCCL_IGNORE_NET_MISMATCH.",
                    lo, hi);
}

/* From the domains' graphs to the channels of every rank. */
static tp_status build_channels(tp_plan *plan, tp_error *err)
{
    tp_domain_view *views = NULL;
    tp_kind_view *kinds = NULL;
    int nd = 0;
    int **global_of = calloc((size_t)plan->n_kinds, sizeof(*global_of));
    tp_status st = global_of ? TP_OK : tp_fail_nomem(err);
    for (int i = 0; st == TP_OK && i < plan->n_kinds; i++)
        if (!(global_of[i] = malloc((size_t)plan->kinds[i].n_gpus * sizeof(int))))
            st = tp_fail_nomem(err);
    if (st == TP_OK) {
        number_domains(plan, global_of);
        st = builder_views(plan, &views, &kinds, &nd, err);
    }
    if (st == TP_OK) {
        for (int i = 0; i < plan->n_kinds; i++)
            kinds[i].domain_of = global_of[i];
        tp_channels_job cj = {
            .n_hosts = plan->job.n_nodes,
            .host_kind = plan->host_kind,
            .n_kinds = plan->n_kinds,
            .kinds = kinds,
            .rank = plan->job.rank,
            .n_domains = nd,
            .domains = views,
            .min_comp_cap = plan->facts.min_comp_cap,
            .min_ctas = plan->min_ctas,
            .max_ctas = plan->max_ctas,
            .counts_only = plan->counts_only,
        };
        if (!plan->counts_only &&
            tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_LOG_NET_DEVICE_COUNTS))
            log_net_device_counts(plan);
        st = tp_channels__build(&plan->channels, &cj, plan->cfg, &plan->log, err);
    }
    for (int i = 0; global_of && i < plan->n_kinds; i++)
        free(global_of[i]);
    free(global_of);
    free(views);
    free(kinds);
    if (st == TP_OK && !plan->counts_only) {
        plan->facts.cpu_arch = plan->channels.cpu_arch;
        plan->facts.cpu_vendor = plan->channels.cpu_vendor;
        const tp_nccl_profile *prof = tp_config__profile(plan->cfg);
        /* 2.30.3 paths.cc ncclTopoComputeP2pChannels: across nodes, the peers per channel
         * (maxP2pPeers unset: every rank). */
        if (tp_profile_has(prof, TP_RULE_LOG_P2P_MAX_PEERS) && plan->channels.n_nodes > 1)
            tp_log_info_sub(&plan->log, TP_SUB_INIT, "Tuning P2P operations with maxP2pPeers = %d",
                            plan->host_first_rank[plan->job.n_nodes]);
        /* 2.28 logs it on every rank (2.27: rank 0 only). */
        if (tp_profile_has(prof, TP_RULE_LOG_P2P_TYPE) &&
            (plan->job.rank == 0 || tp_profile_has(prof, TP_RULE_LOG_P2P_CUDA)))
            st = log_p2p_type(plan, err);
        if (st == TP_OK && tp_profile_has(prof, TP_RULE_LOG_P2P_GROUP_SIZE))
            tp_log_info_sub(&plan->log, TP_SUB_GRAPH, "ncclP2pSchedule: group size used is %d",
                            plan->channels.p2p_group_size);
    }
    if (st == TP_OK) {
        /* init.cc: the tuning model runs just before the "coll channels" line. */
        tp_tune_job tj;
        tune_job(plan, &tj);
        tp_tune__model(&plan->tuning, &tj, plan->cfg, &plan->log);
        if (plan->tuning.env_invalid) /* 2.24 parseList: NCCL's init fails (ncclInvalidUsage) */
            return tp_fail(err, TP_ERR_CONFIG, "NCCL_ALGO/NCCL_PROTO", 0, 0,
                           "NCCL rejects the list (see its WARN line)");
        plan->tuned = true;
        st = tp_channels__p2p(&plan->channels, plan->sys, plan->cfg, &plan->log, err);
    }
    return st;
}

/* Lowest and highest compute capability of a system's GPUs. */
static void comp_caps(const tp_system *sys, int *lo, int *hi)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    *lo = *hi = gpus->count ? gpus->nodes[0].gpu.cuda_comp_cap : 0;
    for (int g = 1; g < gpus->count; g++) {
        int cc = gpus->nodes[g].gpu.cuda_comp_cap;
        *lo = cc < *lo ? cc : *lo;
        *hi = cc > *hi ? cc : *hi;
    }
}

/* The lines of 2.24+'s dump pass on kind k's host (physical NICs), then the dump's own. */
static tp_status log_dump_pass(tp_plan *plan, const tp_host_kind *k, tp_log *log, tp_error *err)
{
    tp_xml *doc = NULL;
    const tp_prep_pass dump = {.physical_nics = true};
    tp_status st = tp_xml__parse(&doc, k->text, k->text_len, k->source, err);
    if (st == TP_OK)
        st = tp_system__prepare_xml_pass(doc, plan->cfg, plan->host_first_rank[k->rep_host],
                                         plan->job.rank, &dump, log, err);
    tp_xml__free(doc);
    if (st == TP_OK)
        log_topo_dump(plan, log);
    return st;
}

/* Kind k's XML prepared on its representative host, and its system. */
static tp_status build_kind_system(tp_plan *plan, tp_host_kind *k, bool logged, tp_error *err)
{
    tp_log quiet = {.enabled = false};
    tp_log *log = logged ? &plan->log : &quiet;
    tp_status st = TP_OK;
    if (logged && dump_pass_first(plan)) /* its lines, then the dump's */
        st = log_dump_pass(plan, k, log, err);
    else if (logged)
        log_topo_dump(plan, log);
    if (st == TP_OK)
        st = prepare_doc(k->topo_xml, plan, k->rep_host, log, logged ? &plan->nic_notes : NULL,
                         &k->net_devices, err);
    if (st == TP_OK && logged && !dump_pass_first(plan))
        log_topo_dump(plan, log); /* at the end of ncclTopoGetSystem's XML preparation */
    if (st == TP_OK)
        st = tp_system__from_xml_log(&k->host_sys, k->topo_xml, plan->cfg, (uint64_t)k->rep_host,
                                     log, err);
    if (st != TP_OK)
        return st;
    tp_system__cpu_type(k->host_sys, &k->cpu_arch, &k->cpu_vendor, &k->cpu_model);
    comp_caps(k->host_sys, &k->min_comp_cap, &k->max_comp_cap);
    k->domains = calloc((size_t)k->n_gpus, sizeof(*k->domains));
    k->domain_of = malloc((size_t)k->n_gpus * sizeof(int));
    if (!k->domains || !k->domain_of)
        return tp_fail_nomem(err);
    for (int i = 0; i < k->n_gpus; i++)
        k->domain_of[i] = -1;
    return TP_OK;
}

/* Every domain of kind k; `first` (a local index) runs first and logged when logged. */
static tp_status run_kind(tp_plan *plan, tp_host_kind *k, int first, bool logged, tp_error *err)
{
    tp_status st = run_domain(plan, k, first, logged, err);
    for (int i = 0; i < k->n_gpus && st == TP_OK; i++)
        if (k->domain_of[i] < 0)
            st = run_domain(plan, k, i, false, err);
    tp_search__mirrors_free(k->mirrors);
    k->mirrors = NULL;
    tp_paths__host_routes_free(k->host_routes);
    k->host_routes = NULL;
    return st;
}

/* With several kinds, the CUDA device of every rank (PXN queries read other hosts' devs). */
static tp_status fill_rank_devs(tp_plan *plan, tp_error *err)
{
    if (plan->n_kinds < 2)
        return TP_OK;
    if (!(plan->rank_devs = malloc((size_t)n_ranks(plan) * sizeof(int))))
        return tp_fail_nomem(err);
    for (int h = 0; h < plan->job.n_nodes; h++) {
        const tp_host_kind *k = tp_plan__kind_of_host(plan, h);
        const tp_node_set *gpus = &k->host_sys->nodes[TP_NODE_GPU];
        for (int l = 0; l < k->n_gpus; l++)
            plan->rank_devs[plan->host_first_rank[h] + l] = -1;
        for (int g = 0; g < gpus->count; g++) {
            int l = gpus->nodes[g].gpu.rank - plan->host_first_rank[k->rep_host];
            if (l >= 0 && l < k->n_gpus)
                plan->rank_devs[plan->host_first_rank[h] + l] = gpus->nodes[g].gpu.dev;
        }
    }
    return TP_OK;
}

/* The home kind's fields the rest of the library reads from the plan. */
static void borrow_home(tp_plan *plan)
{
    tp_host_kind *k = &plan->kinds[plan->home_kind];
    plan->n_gpus_per_node = k->n_gpus;
    plan->topo_xml = k->topo_xml;
    plan->host_sys = k->host_sys;
    plan->domains = k->domains;
    plan->domain_of = k->domain_of;
    tp_copy_str(plan->source, sizeof(plan->source), k->source);
}

/* Systems of every kind (the home kind's logged), then the job's facts. */
static tp_status build_systems(tp_plan *plan, tp_error *err)
{
    double t0 = now_us();
    tp_host_kind *home = &plan->kinds[plan->home_kind];
    tp_status st = home->borrowed ? TP_OK : build_kind_system(plan, home, true, err);
    for (int i = 0; i < plan->n_kinds && st == TP_OK; i++)
        if (i != plan->home_kind && !plan->kinds[i].borrowed)
            st = build_kind_system(plan, &plan->kinds[i], false, err);
    lap(plan, TP_STAGE_SYSTEM, &t0);
    borrow_home(plan);
    if (st != TP_OK)
        return st;
    tp_job_facts *f = &plan->facts;
    f->n_ranks = n_ranks(plan);
    f->n_hosts = plan->job.n_nodes;
    f->min_comp_cap = plan->kinds[0].min_comp_cap;
    f->max_comp_cap = plan->kinds[0].max_comp_cap;
    for (int i = 1; i < plan->n_kinds; i++) {
        const tp_host_kind *k = &plan->kinds[i];
        f->min_comp_cap = k->min_comp_cap < f->min_comp_cap ? k->min_comp_cap : f->min_comp_cap;
        f->max_comp_cap = k->max_comp_cap > f->max_comp_cap ? k->max_comp_cap : f->max_comp_cap;
    }
    return fill_rank_devs(plan, err);
}

/*
 * init.cc commAlloc: ncclNetInit runs the IB plugin first, on the reported rank's host. From 2.24
 * (ib-merge-nics-per-device) it reads NCCL_IB_MERGE_NICS at its first device: with none (an
 * NCCL_IB_HCA that keeps no port) there is no ENV line.
 */
static tp_status log_net_init(tp_plan *plan, tp_error *err)
{
    bool merge_nics_read = true;
    tp_status st = TP_OK;
    if (tp_profile_has(tp_config__profile(plan->cfg), TP_RULE_IB_MERGE_NICS_PER_DEVICE))
        st = tp_netdev__plugin_finds_device(plan->kinds[plan->home_kind].topo_xml, plan->cfg,
                                            &merge_nics_read, err);
    if (st == TP_OK)
        tp_config__log_ib_plugin(plan->cfg, merge_nics_read, &plan->log);
    return st;
}

/* The whole flow: systems, the home kind's domains (reported rank's first), other kinds, channels.
 */
static tp_status run_job(tp_plan *plan, tp_error *err)
{
    tp_status st = log_net_init(plan, err);
    if (st != TP_OK)
        return st;
    /* NCCL 2.22.3 init.cc: MNNVL forced on across hosts fails (no fabric here). */
    if (plan->job.n_nodes > 1)
        tp_config__log_env(plan->cfg, TP_P_MNNVL_ENABLE, &plan->log);
    if (plan->job.n_nodes > 1 && tp_config_int(plan->cfg, TP_P_MNNVL_ENABLE) == 1) {
        tp_log_warn(&plan->log, "MNNVL is not supported on this system");
        return tp_fail(err, TP_ERR_GRAPH, "NCCL_MNNVL_ENABLE", 0, 0,
                       "MNNVL is not supported on this system");
    }
    st = build_systems(plan, err);
    if (st != TP_OK)
        return st;
    tp_host_kind *home = &plan->kinds[plan->home_kind];
    if (!home->borrowed)
        st = run_kind(plan, home, plan->job.rank - plan->host_first_rank[plan->home_host], true,
                      err);
    plan->n_domains = home->n_domains;
    if (home->n_domains > 0) {
        plan->sys = home->domains[0].sys;
        memcpy(plan->graphs, home->domains[0].graphs, sizeof(plan->graphs));
    }
    for (int i = 0; i < plan->n_kinds && st == TP_OK; i++)
        if (i != plan->home_kind && !plan->kinds[i].borrowed)
            st = run_kind(plan, &plan->kinds[i], 0, false, err);
    double t0 = now_us();
    if (st == TP_OK)
        st = build_channels(plan, err);
    lap(plan, TP_STAGE_CHANNELS, &t0);
    return st;
}

/*
 * Whether a failed plan goes back to the caller: only for failures NCCL itself
 * reports while planning (its log up to the failure is part of the answer).
 * Our own failures (memory, bugs) give no plan.
 */
static bool keep_failed_plan(tp_status st)
{
    /* TP_ERR_IO: an NCCL_GRAPH_FILE NCCL cannot open (its WARN is in the log). */
    return st == TP_ERR_TOPOLOGY || st == TP_ERR_CONFIG || st == TP_ERR_GRAPH || st == TP_ERR_IO;
}

/* The plan up to the job run: the job's topologies loaded, configuration copied. */
static tp_status plan_config(tp_plan *plan, const tp_config *cfg, tp_error *err)
{
    tp_status st;
    if (cfg)
        st = tp_config__copy(&plan->cfg, cfg, err);
    else
        st = tp_config_new(&plan->cfg, NULL, err);
    if (st != TP_OK)
        return st;
    tp_channels__ctas(plan->cfg, &plan->log, &plan->min_ctas, &plan->max_ctas);
    return TP_OK;
}

/* A fresh plan of a job (its topologies still to load). */
static tp_plan *new_plan(const tp_job *job)
{
    tp_plan *plan = calloc(1, sizeof(*plan));
    if (!plan)
        return NULL;
    plan->job = *job;
    plan->job.version = TP_JOB_VERSION;
    plan->job.node_topos = NULL; /* the kinds hold the topologies */
    plan->job.n_node_topos = 0;
    plan->log.enabled = true;
    plan->load_log.enabled = true;
    plan->nic_notes.enabled = true;
    return plan;
}

/*
 * A topology file NCCL itself refuses or cannot open: the plan goes back
 * with NCCL's lines (after the configuration's, as init.cc prints them).
 */
static tp_status keep_load_failure(tp_plan **out, tp_plan *plan, tp_status st, const tp_config *cfg)
{
    tp_error ignored = {0};
    if (plan_config(plan, cfg, &ignored) != TP_OK) {
        tp_plan_free(plan);
        return st;
    }
    tp_xml__log_append(&plan->log, &plan->load_log);
    plan->status = st;
    *out = plan;
    return st;
}

/* Configure and run a plan whose job is loaded (st: the loading's status); consumes plan. */
static tp_status plan_run(tp_plan **out, tp_plan *plan, tp_status st, const tp_config *cfg,
                          tp_error *err)
{
    if (st != TP_OK && plan->load_log.n_lines > 0)
        return keep_load_failure(out, plan, st, cfg);
    if (st == TP_OK)
        st = plan_config(plan, cfg, err);
    if (st == TP_OK) {
        st = run_job(plan, err);
        plan->status = st;
        if (st == TP_OK || keep_failed_plan(st)) {
            *out = plan;
            return st;
        }
    }
    tp_plan_free(plan);
    return st;
}

tp_status tp_plan__replan(tp_plan **out, const tp_plan *plan, const tp_config *cfg,
                          const int *host_kind, tp_error *err)
{
    *out = NULL;
    tp_plan *p = new_plan(&plan->job);
    if (!p)
        return tp_fail_nomem(err);
    double t0 = now_us();
    /* Other kinds may change the rank count: the re-planned job reports rank 0. */
    if (host_kind)
        p->job.rank = 0;
    tp_status st = tp_plan__copy_job(p, plan, host_kind, err);
    lap(p, TP_STAGE_XML, &t0);
    return plan_run(out, p, st, cfg ? cfg : plan->cfg, err);
}

tp_status tp_plan__replan_counts(tp_plan **out, const tp_plan *plan, const int *host_kind,
                                 tp_error *err)
{
    *out = NULL;
    tp_plan *p = new_plan(&plan->job);
    if (!p)
        return tp_fail_nomem(err);
    p->job.rank = 0; /* other kinds may change the rank count */
    p->counts_only = true;
    tp_status st = tp_plan__borrow_job(p, plan, host_kind, err);
    return plan_run(out, p, st, plan->cfg, err);
}

/* Takes ownership of text. */
static tp_status plan_text(tp_plan **out, char *text, size_t len, const char *source,
                           const tp_job *job, const tp_config *cfg, tp_error *err)
{
    tp_job full = job_of_version(job);
    tp_plan *plan = new_plan(&full);
    *out = NULL;
    if (!plan) {
        free(text);
        return tp_fail_nomem(err);
    }
    double t0 = now_us();
    tp_status st = tp_plan__load_job(plan, text, len, source, &full, err);
    lap(plan, TP_STAGE_XML, &t0);
    return plan_run(out, plan, st, cfg, err);
}

tp_status tp_plan_buffer(tp_plan **out, const char *xml, size_t len, const char *source,
                         const tp_job *job, const tp_config *cfg, tp_error *err)
{
    if (!out || !xml || !job)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "tp_plan_buffer: %s is NULL",
                       !out   ? "out"
                       : !xml ? "xml"
                              : "job");
    *out = NULL;
    char *text = malloc(len + 1);
    if (!text)
        return tp_fail_nomem(err);
    memcpy(text, xml, len);
    text[len] = '\0';
    return plan_text(out, text, len, source ? source : "<buffer>", job, cfg, err);
}

/*
 * NCCL 2.22.3 ncclTopoGetXmlFromFile on an NCCL_TOPO_FILE it cannot open:
 * a WARN, then it goes on detecting the machine (nothing topoplan can
 * follow): the failed plan carries the WARN. A file it opens but cannot
 * read (a directory) it takes as empty, silently.
 */
static tp_status unopened_topology(tp_plan **out, const char *path, const tp_job *job,
                                   const tp_config *cfg, tp_status st)
{
    FILE *f = fopen(path, "r");
    int e = errno;
    if (f) {
        fclose(f);
        return st;
    }
    tp_job full = job_of_version(job);
    tp_plan *plan = new_plan(&full);
    if (!plan)
        return st;
    plan->load_log.enabled = true;
    tp_log_warn(&plan->load_log, "Could not open XML topology file %s : %s", path, strerror(e));
    return keep_load_failure(out, plan, st, cfg);
}

tp_status tp_plan_file(tp_plan **out, const char *path, const tp_job *job, const tp_config *cfg,
                       tp_error *err)
{
    if (!out || !path || !job)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "tp_plan_file: %s is NULL",
                       !out    ? "out"
                       : !path ? "path"
                               : "job");
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st != TP_OK)
        return unopened_topology(out, path, job, cfg, st);
    return plan_text(out, text, len, path, job, cfg, err);
}

static void free_domain(tp_domain *d)
{
    for (int i = 0; i < TP_GRAPH_COUNT; i++)
        if (d->graphs[i])
            tp_search__graph_release(d->graphs[i]);
    free(d->graph_block);
    tp_system__free(d->sys);
}

static void free_kind(tp_host_kind *k)
{
    if (k->borrowed) /* the re-planned plan's */
        return;
    for (int i = 0; i < k->n_domains; i++)
        free_domain(&k->domains[i]);
    free(k->domains);
    free(k->domain_of);
    tp_system__free(k->host_sys);
    tp_system__free(k->dev_routes);
    tp_paths__host_routes_free(k->host_routes);
    free(k->host_domains);
    tp_xml__free(k->topo_xml);
    free(k->text);
}

void tp_plan_free(tp_plan *plan)
{
    if (!plan)
        return;
    for (int i = 0; i < plan->n_kinds; i++)
        free_kind(&plan->kinds[i]);
    free(plan->kinds);
    free(plan->host_kind);
    free(plan->host_first_rank);
    free(plan->rank_devs);
    tp_channels__free(&plan->channels);
    tp_config_free(plan->cfg);
    tp_log_clear(&plan->log);
    tp_log_clear(&plan->load_log);
    tp_log_clear(&plan->nic_notes);
    free(plan);
}

/* Close a dump: kept (over the old file) only when every write succeeded; a failed write or
 * close names the file and the system error. */
static tp_status close_dump(tp_out_file *o, const char *path, tp_status st, tp_error *err)
{
    int e = errno;
    tp_status closed = tp_out_file__close(o, st == TP_OK, st == TP_OK ? err : NULL);
    if (st == TP_ERR_IO)
        return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot write: %s", strerror(e ? e : EIO));
    return st == TP_OK ? closed : st;
}

/* Host of a rank of the job (0 <= rank < facts.n_ranks). */
int tp_plan__host_of_rank(const tp_plan *plan, int rank)
{
    int h = 0;
    while (h + 1 < plan->job.n_nodes && plan->host_first_rank[h + 1] <= rank)
        h++;
    return h;
}

/* NCCL_TOPO_DUMP_FILE: the XML as rank NCCL_TOPO_DUMP_FILE_RANK prepared it. */
static tp_status write_topo_dump(const tp_plan *plan, tp_error *err)
{
    const char *path = tp_config_str(plan->cfg, TP_P_TOPO_DUMP_FILE);
    int64_t rank = tp_config_int(plan->cfg, TP_P_TOPO_DUMP_FILE_RANK);
    if (!path || !plan->host_first_rank || rank < 0 || rank >= n_ranks(plan))
        return TP_OK;
    tp_xml *doc = NULL;
    tp_error ignored = {0};
    /* NCCL dumps before building the system: no dump when the preparation fails. */
    if (prepared_xml(&doc, plan, tp_plan__host_of_rank(plan, (int)rank), &ignored) != TP_OK) {
        tp_xml__free(doc);
        return TP_OK;
    }
    tp_out_file o;
    tp_status st = tp_out_file__open(&o, path, err);
    if (st == TP_OK) {
        st = tp_xml__write(o.f, doc->root, err);
        st = close_dump(&o, path, st, err);
    }
    tp_xml__free(doc);
    return st;
}

/* NCCL_GRAPH_DUMP_FILE: the graphs of rank NCCL_GRAPH_DUMP_FILE_RANK, as searched. */
static tp_status write_graph_dump(const tp_plan *plan, tp_error *err)
{
    const char *path = tp_config_str(plan->cfg, TP_P_GRAPH_DUMP_FILE);
    int64_t rank = tp_config_int(plan->cfg, TP_P_GRAPH_DUMP_FILE_RANK);
    if (!path || !plan->host_first_rank || rank < 0 || rank >= n_ranks(plan))
        return TP_OK;
    int host = tp_plan__host_of_rank(plan, (int)rank);
    const tp_host_kind *k = tp_plan__kind_of_host(plan, host);
    int dom = k->domain_of ? k->domain_of[rank - plan->host_first_rank[host]] : -1;
    if (dom < 0 || !k->domains[dom].searched)
        return TP_OK;
    const tp_domain *d = &k->domains[dom];
    /* NCCL 2.22.3 init.cc dump order: ring, tree, CollNet direct, CollNet chain, NVLS. */
    tp_graph *const graphs[5] = {d->graphs[TP_GRAPH_RING], d->graphs[TP_GRAPH_TREE],
                                 d->graphs[TP_GRAPH_COLLNET_DIRECT],
                                 d->graphs[TP_GRAPH_COLLNET_CHAIN], d->graphs[TP_GRAPH_NVLS]};
    tp_out_file o;
    tp_status st = tp_out_file__open(&o, path, err);
    if (st == TP_OK)
        st = close_dump(&o, path, tp_search__dump_graphs(o.f, d->sys, graphs, 5, err), err);
    return st;
}

tp_status tp_plan_write_dumps(const tp_plan *plan, tp_error *err)
{
    if (!plan)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "tp_plan_write_dumps: plan is NULL");
    tp_status st = write_topo_dump(plan, err);
    if (st == TP_OK)
        st = write_graph_dump(plan, err);
    return st;
}

tp_status tp_plan__check_done(const tp_plan *plan, const char *fn, tp_error *err)
{
    if (!plan)
        return tp_fail_arg(err, fn, "plan is NULL");
    if (plan->status != TP_OK || !plan->sys || !plan->domain_of)
        return tp_fail_arg(err, fn, "the plan failed: only its NCCL log can be reported");
    return TP_OK;
}

tp_status tp_report_topology_xml(FILE *out, const tp_plan *plan, tp_error *err)
{
    if (!out || !plan)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "tp_report_topology_xml: %s is NULL",
                       !out ? "out" : "plan");
    /* A fresh copy prepared as NCCL_TOPO_DUMP_FILE's: the system build reads the plan's. */
    tp_xml *doc = NULL;
    tp_status st = prepared_xml(&doc, plan, plan->home_host, err);
    if (st == TP_OK)
        st = tp_xml__write(out, doc->root, err);
    tp_xml__free(doc);
    return st;
}
