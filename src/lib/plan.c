/*
 * The planner: NCCL 2.22.3's per-rank flow (init.cc initTransportsRank) from
 * the topology XML to the channels, for a job of identical hosts.
 *
 * Order of the reported rank's log, as init.cc prints it: system and paths
 * (ncclTopoPrint), NVLS support, ring / tree / NVLS graphs, then the channels
 * (tp_channels__build) and the P2P counts (tp_channels__p2p).
 */
#include "netdev.h"
#include "plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NCCL 2.22.3 init.cc: the ring search asks for up to MAXCHANNELS/2 channels. */
#define TP_RING_MAX_CHANNELS (TP_MAXCHANNELS / 2)

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

/* Errors name the job's fields as the library knows them; the CLI maps them to its flags. */
static tp_status check_job(const tp_job *job, tp_error *err)
{
    if (job->version > TP_JOB_VERSION)
        return tp_fail(err, TP_ERR_ARGUMENT, "job.version", 0, 0,
                       "unknown version %u (this library knows up to %d)", job->version,
                       TP_JOB_VERSION);
    if (job->n_nodes < 1 || job->n_nodes > TP_MAX_JOB_NODES)
        return tp_fail(err, TP_ERR_USAGE, "job.n_nodes", 0, 0,
                       "%d nodes out of range (1..%d, topoplan's limit)", job->n_nodes,
                       TP_MAX_JOB_NODES);
    if (job->rank < 0)
        return tp_fail(err, TP_ERR_USAGE, "job.rank", 0, 0, "invalid value %d (expected >= 0)",
                       job->rank);
    return TP_OK;
}

tp_status tp_job_init(tp_job *job, unsigned version)
{
    if (!job || version < 1 || version > TP_JOB_VERSION)
        return TP_ERR_ARGUMENT;
    *job = (tp_job){.version = version, .n_nodes = 1, .rank = 0};
    return TP_OK;
}

static int count_gpus(const tp_xml_elem *e)
{
    int n = strcmp(e->tag, "gpu") == 0;
    for (size_t i = 0; i < e->n_children; i++)
        n += count_gpus(e->children[i]);
    return n;
}

static int n_ranks(const tp_plan *plan)
{
    return plan->n_gpus_per_node * plan->job.n_nodes;
}

/* The job as the paths stage sees it from `rank`. */
static tp_job_view job_view(const tp_plan *plan, int rank)
{
    tp_job_view view = {
        .n_ranks = n_ranks(plan),
        .n_nodes = plan->job.n_nodes,
        .rank = rank,
        .local_n_ranks = plan->n_gpus_per_node,
    };
    return view;
}

/* Prepare a freshly parsed topology XML as NCCL does on `host`; the lines
 * NCCL prints while loading go to `log` (may be NULL). Then the NET devices
 * the IB plugin reports (NCCL_IB_HCA, merging: netdev_xml.c), whose findings
 * go to `notes` (may be NULL), never to the NCCL log. */
static tp_status prepare_doc(tp_xml *doc, const tp_plan *plan, int host, tp_log *log,
                             tp_log *notes, tp_error *err)
{
    tp_status st = tp_system__prepare_xml_log(doc, plan->cfg, host * plan->n_gpus_per_node,
                                              plan->job.rank, log, err);
    if (st == TP_OK)
        st = tp_netdev__apply_env(doc, plan->cfg, notes, err);
    return st;
}

/* A fresh copy of the topology XML, prepared for `host` (another host's dump). */
static tp_status prepared_xml(tp_xml **out, const tp_plan *plan, int host, tp_log *log,
                              tp_log *notes, tp_error *err)
{
    tp_status st = tp_xml__parse(out, plan->text, plan->text_len, plan->source, err);
    if (st == TP_OK)
        st = prepare_doc(*out, plan, host, log, notes, err);
    return st;
}

/*
 * An empty graph as init.cc sets it up before ncclTopoCompute. Only the
 * channel slots of n_gpus GPUs are ever read: the rest stays unset.
 */
static tp_status new_graph(tp_graph **out, int n_gpus, int id, int pattern, int coll_net,
                           int min_ch, int max_ch, tp_error *err)
{
    tp_graph *g = malloc(sizeof(*g));
    *out = g;
    if (!g)
        return tp_fail_nomem(err);
    memset(g, 0, offsetof(tp_graph, intra));
    memset(g->intra, 0, (size_t)TP_MAXCHANNELS * (size_t)n_gpus * sizeof(g->intra[0]));
    memset(g->inter, 0, sizeof(g->inter));
    g->events = NULL;
    g->n_events = g->events_cap = 0;
    g->id = id;
    g->pattern = pattern;
    g->coll_net = coll_net;
    g->min_channels = min_ch;
    g->max_channels = max_ch;
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

/* init.cc: ring, tree, CollNet (skipped: no CollNet plugin) and NVLS graphs. */
/*
 * Comparing two systems costs about as much as a short search: mirror only
 * from a domain whose searches walked more steps than that.
 */
static bool worth_mirroring(const tp_domain *e, const tp_domain *d)
{
    return e->searched && e->search_work >= TP_MIRROR_MIN_WORK &&
           e->nvls_support == d->nvls_support;
}

/*
 * A domain whose system is a renaming of an earlier domain's gets that
 * domain's graphs renamed instead of searched (tp_search__mirror: only when
 * provably identical to searching). Sets d->searched when done.
 */
static tp_status mirror_graphs(tp_plan *plan, tp_domain *d, tp_error *err)
{
    bool candidate = false;
    for (const tp_domain *e = plan->domains; e < d; e++)
        candidate |= worth_mirroring(e, d);
    if (!candidate)
        return TP_OK;
    for (int i = 0; i < TP_GRAPH_COUNT; i++)
        if (!(d->graphs[i] = calloc(1, sizeof(*d->graphs[i]))))
            return tp_fail_nomem(err);
    for (tp_domain *e = plan->domains; e < d; e++) {
        int done = 0;
        if (!worth_mirroring(e, d))
            continue;
        tp_status st = tp_search__mirror(e->sys, e->graphs, d->sys, d->graphs, TP_GRAPH_COUNT,
                                         plan->cfg, &done, err);
        if (st != TP_OK || done) {
            d->searched = done;
            return st;
        }
    }
    for (int i = 0; i < TP_GRAPH_COUNT; i++) {
        free(d->graphs[i]);
        d->graphs[i] = NULL;
    }
    return TP_OK;
}

/* Ring, tree (as many channels as the ring), then CollNet (not computed) and NVLS graphs. */
static tp_status search_graphs(tp_plan *plan, tp_domain *d, tp_search_ctx **keep, tp_log *log,
                               tp_error *err)
{
    tp_graph **g = d->graphs;
    int n_gpus = d->sys->nodes[TP_NODE_GPU].count;
    tp_status st =
        new_graph(&g[TP_GRAPH_RING], n_gpus, 0, TP_PATTERN_RING, 0, 1, TP_RING_MAX_CHANNELS, err);
    if (st == TP_OK)
        st = compute_graph(plan, d, TP_GRAPH_RING, keep, log, err);
    if (st != TP_OK)
        return st;
    int ring_n = g[TP_GRAPH_RING]->n_channels;
    if ((st = new_graph(&g[TP_GRAPH_TREE], n_gpus, 1, TP_PATTERN_BALANCED_TREE, 0, ring_n, ring_n,
                        err)) != TP_OK ||
        (st = compute_graph(plan, d, TP_GRAPH_TREE, keep, log, err)) != TP_OK)
        return st;
    if ((st = new_graph(&g[TP_GRAPH_COLLNET_CHAIN], n_gpus, 2, TP_PATTERN_TREE, 1, ring_n, ring_n,
                        err)) != TP_OK ||
        (st = new_graph(&g[TP_GRAPH_COLLNET_DIRECT], n_gpus, 2, TP_PATTERN_COLLNET_DIRECT, 1, 1,
                        TP_MAXCHANNELS, err)) != TP_OK ||
        (st = new_graph(&g[TP_GRAPH_NVLS], n_gpus, 3, TP_PATTERN_NVLS, 0, 1, TP_MAXCHANNELS, err)) !=
            TP_OK)
        return st;
    if (d->nvls_support)
        st = compute_graph(plan, d, TP_GRAPH_NVLS, keep, log, err);
    return st;
}

static tp_status compute_graphs(tp_plan *plan, tp_domain *d, tp_log *log, tp_error *err)
{
    tp_status st = mirror_graphs(plan, d, err);
    if (st != TP_OK || d->searched)
        return st;
    /* The graphs of one system share what the search compiles of it. */
    tp_search_ctx *keep = NULL;
    st = search_graphs(plan, d, &keep, log, err);
    d->search_work = tp_search__work(keep);
    tp_search__keep_free(keep);
    d->searched = st == TP_OK;
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

/* ncclNvlsInit (NCCL 2.22.3 transport/nvls.cc): more than 2 GPUs, NCCL_NVLS_ENABLE. */
static void nvls_init(tp_plan *plan, tp_domain *d, int rank, tp_log *log)
{
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
    int n = (int)tp_config_int(plan->cfg, TP_P_NVLS_NCHANNELS);
    if (n > plan->max_ctas)
        n = plan->max_ctas;
    d->nvls_channels = n < plan->min_ctas ? plan->min_ctas : n;
}

/* Every local rank whose GPU is in d's trimmed system belongs to domain `idx`. */
static void mark_domain(tp_plan *plan, const tp_domain *d, int idx)
{
    int base = plan->home_host * plan->n_gpus_per_node;
    const tp_node_set *gpus = &d->sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++) {
        int local = gpus->nodes[g].gpu.rank - base;
        if (local >= 0 && local < plan->n_gpus_per_node && plan->domain_of[local] < 0)
            plan->domain_of[local] = idx;
    }
}

/* Paths, trim, paths again and search init of one rank (init.cc order). */
static tp_status rank_paths(tp_plan *plan, tp_domain *d, int rank, tp_log *log, tp_error *err)
{
    tp_job_view view = job_view(plan, rank);
    tp_status st = tp_system__clone(&d->sys, plan->host_sys, err);
    if (st == TP_OK)
        st = tp_paths__compute(d->sys, plan->cfg, &view, log, err);
    if (st == TP_OK)
        st = tp_paths__trim(d->sys, plan->cfg, &view, err);
    if (st == TP_OK)
        st = tp_paths__compute(d->sys, plan->cfg, &view, log, err);
    if (st == TP_OK)
        st = tp_search__init(d->sys, err);
    return st;
}

/* The pipeline of the home host's local rank `local`; a new domain. */
static tp_status run_domain(tp_plan *plan, int local, bool logged, tp_error *err)
{
    tp_log quiet = {.enabled = false};
    tp_log *log = logged ? &plan->log : &quiet;
    int rank = plan->home_host * plan->n_gpus_per_node + local;
    int idx = plan->n_domains++;
    tp_domain *d = &plan->domains[idx];
    double t0 = now_us();
    tp_status st = rank_paths(plan, d, rank, log, err);
    lap(plan, TP_STAGE_PATHS, &t0);
    if (st != TP_OK)
        return st;
    mark_domain(plan, d, idx);
    if (plan->domain_of[local] != idx)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "rank %d: its GPU was trimmed", rank);
    if (logged) {
        tp_system__print(log, d->sys);
        tp_paths__print(log, d->sys);
    }
    nvls_init(plan, d, rank, log);
    t0 = now_us();
    st = compute_graphs(plan, d, log, err);
    lap(plan, TP_STAGE_SEARCH, &t0);
    return st;
}

static int min_comp_cap(const tp_system *sys)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int cc = gpus->count ? gpus->nodes[0].gpu.cuda_comp_cap : 0;
    for (int g = 1; g < gpus->count; g++)
        if (gpus->nodes[g].gpu.cuda_comp_cap < cc)
            cc = gpus->nodes[g].gpu.cuda_comp_cap;
    return cc;
}

/* The first CPU of a system: ncclTopoCpuType and ncclTopoComputeCommCPU. */
static void cpu_of(const tp_system *sys, int *arch, int *vendor)
{
    int model;
    tp_system__cpu_type(sys, arch, vendor, &model);
}

static void comp_cap_range(const tp_system *sys, int *min, int *max)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int g = 0; g < gpus->count; g++) {
        int cc = gpus->nodes[g].gpu.cuda_comp_cap;
        if (cc < *min)
            *min = cc;
        if (cc > *max)
            *max = cc;
    }
}

/* NCCL 2.22.3 algorithm order (Tree, Ring, CollNetDirect, CollNetChain, NVLS,
 * NVLSTree) to our graph slots: NVLS and NVLSTree share the NVLS graph. */
static const int tune_slot[TP_ALGO_COUNT] = {TP_GRAPH_TREE,          TP_GRAPH_RING,
                                             TP_GRAPH_COLLNET_DIRECT, TP_GRAPH_COLLNET_CHAIN,
                                             TP_GRAPH_NVLS,          TP_GRAPH_NVLS};

/*
 * The tuning record of the job, from rank 0's view: the combined graphs with
 * the pattern and network latency of rank 0's own, rank 0's CPU, the job's.
 */
static void tune_job(const tp_plan *plan, tp_tune_job *tj)
{
    const tp_channels *ch = &plan->channels;
    const tp_domain *d0 = &plan->domains[plan->domain_of[0]];
    memset(tj, 0, sizeof(*tj));
    tj->n_ranks = ch->n_ranks;
    tj->n_nodes = ch->n_nodes;
    tj->rank = plan->job.rank;
    cpu_of(d0->sys, &tj->cpu_arch, &tj->cpu_vendor);
    tj->comm_cpu_arch = tj->cpu_arch;
    tj->comm_cpu_vendor = tj->cpu_vendor;
    for (int i = 0; i < plan->n_domains; i++) {
        int arch, vendor;
        cpu_of(plan->domains[i].sys, &arch, &vendor);
        if (arch != tj->comm_cpu_arch)
            tj->comm_cpu_arch = TP_CPU_ARCH_MIXED;
        if (vendor != tj->comm_cpu_vendor)
            tj->comm_cpu_vendor = TP_CPU_VENDOR_MIXED;
    }
    tj->min_comp_cap = INT32_MAX;
    tj->max_comp_cap = INT32_MIN;
    comp_cap_range(plan->host_sys, &tj->min_comp_cap, &tj->max_comp_cap);
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
    tj->graphs[TP_ALGO_RING].n_channels = tj->graphs[TP_ALGO_TREE].n_channels =
        ch->search_channels;
    tj->n_channels = ch->n_channels;
    tj->nvls_channels = ch->n_nvls_channels;
    tj->nvls_support = d0->nvls_support && ch->combined[TP_GRAPH_NVLS].n_channels > 0;
    tj->collnet_support = 0;
}

/* From the domains' graphs to the channels of every rank. */
static tp_status build_channels(tp_plan *plan, tp_error *err)
{
    tp_domain_view *views = calloc((size_t)plan->n_domains, sizeof(*views));
    if (!views)
        return tp_fail_nomem(err);
    for (int i = 0; i < plan->n_domains; i++) {
        const tp_domain *d = &plan->domains[i];
        views[i].n_gpus = d->sys->nodes[TP_NODE_GPU].count;
        for (int a = 0; a < TP_GRAPH_COUNT; a++)
            views[i].graphs[a] = d->graphs[a];
        views[i].nvls_channels = d->nvls_channels;
    }
    tp_channels_job cj = {
        .n_hosts = plan->job.n_nodes,
        .ranks_per_host = plan->n_gpus_per_node,
        .rank = plan->job.rank,
        .home_host = plan->home_host,
        .n_domains = plan->n_domains,
        .domains = views,
        .domain_of = plan->domain_of,
        .min_comp_cap = min_comp_cap(plan->host_sys),
        .min_ctas = plan->min_ctas,
        .max_ctas = plan->max_ctas,
    };
    tp_status st = tp_channels__build(&plan->channels, &cj, plan->cfg, &plan->log, err);
    free(views);
    if (st == TP_OK) {
        /* init.cc: the tuning model runs just before the "coll channels" line. */
        tp_tune_job tj;
        tune_job(plan, &tj);
        tp_tune__model(&plan->tuning, &tj, plan->cfg, &plan->log);
        plan->tuned = true;
        st = tp_channels__p2p(&plan->channels, plan->sys, plan->cfg, &plan->log, err);
    }
    return st;
}

/* The whole flow: home host system, domains (reported rank's first), channels. */
static tp_status run_job(tp_plan *plan, tp_error *err)
{
    int per = plan->n_gpus_per_node, me = plan->job.rank % per;
    tp_status st;
    /* NCCL 2.22.3 init.cc: MNNVL forced on across hosts fails (no fabric here). */
    if (plan->job.n_nodes > 1 && tp_config_int(plan->cfg, TP_P_MNNVL_ENABLE) == 1) {
        tp_log_warn(&plan->log, "MNNVL is not supported on this system");
        return tp_fail(err, TP_ERR_GRAPH, "NCCL_MNNVL_ENABLE", 0, 0,
                       "MNNVL is not supported on this system");
    }
    plan->home_host = plan->job.rank / per;
    plan->domains = calloc((size_t)per, sizeof(*plan->domains));
    plan->domain_of = malloc((size_t)per * sizeof(int));
    if (!plan->domains || !plan->domain_of)
        return tp_fail_nomem(err);
    for (int i = 0; i < per; i++)
        plan->domain_of[i] = -1;
    double t0 = now_us();
    /* plan_text parsed the XML once; the home host prepares that copy. */
    if ((st = prepare_doc(plan->topo_xml, plan, plan->home_host, &plan->log, &plan->nic_notes,
                          err)) != TP_OK ||
        (st = tp_system__from_xml_log(&plan->host_sys, plan->topo_xml, plan->cfg,
                                      (uint64_t)plan->home_host, &plan->log, err)) != TP_OK)
        return st;
    lap(plan, TP_STAGE_SYSTEM, &t0);
    st = run_domain(plan, me, true, err);
    const tp_domain *mine = &plan->domains[0];
    plan->sys = mine->sys;
    memcpy(plan->graphs, mine->graphs, sizeof(plan->graphs));
    for (int i = 0; i < per && st == TP_OK; i++)
        if (plan->domain_of[i] < 0)
            st = run_domain(plan, i, false, err);
    t0 = now_us();
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
    return st == TP_ERR_TOPOLOGY || st == TP_ERR_CONFIG || st == TP_ERR_GRAPH;
}

/* The plan up to the job run: XML parsed, configuration copied, job checked. */
static tp_status plan_setup(tp_plan *plan, const tp_job *job, const tp_config *cfg,
                            tp_error *err)
{
    tp_xml *doc = NULL;
    double t0 = now_us();
    tp_status st = tp_xml__parse(&doc, plan->text, plan->text_len, plan->source, err);
    lap(plan, TP_STAGE_XML, &t0);
    if (st != TP_OK)
        return st;
    plan->topo_xml = doc; /* the plan owns it now */
    plan->n_gpus_per_node = count_gpus(doc->root);
    if (cfg)
        st = tp_config__copy(&plan->cfg, cfg, err);
    else
        st = tp_config_new(&plan->cfg, NULL, err);
    if (st != TP_OK)
        return st;
    if (plan->n_gpus_per_node == 0)
        return tp_xml__fail(err, TP_ERR_TOPOLOGY, doc, doc->root,
                            "no <gpu> element: nothing to plan");
    if (job->rank >= n_ranks(plan))
        return tp_fail(err, TP_ERR_USAGE, "job.rank", 0, 0,
                       "rank %d out of range (job has %d ranks)", job->rank, n_ranks(plan));
    tp_channels__ctas(plan->cfg, &plan->log, &plan->min_ctas, &plan->max_ctas);
    return TP_OK;
}

/* Takes ownership of text. */
static tp_status plan_text(tp_plan **out, char *text, size_t len, const char *source,
                           const tp_job *job, const tp_config *cfg, tp_error *err)
{
    tp_status st = check_job(job, err);
    tp_plan *plan = st == TP_OK ? calloc(1, sizeof(*plan)) : NULL;
    if (!plan) {
        free(text);
        return st == TP_OK ? tp_fail_nomem(err) : st;
    }
    plan->text = text;
    plan->text_len = len;
    snprintf(plan->source, sizeof(plan->source), "%s", source);
    plan->job = *job;
    plan->job.version = TP_JOB_VERSION;
    plan->log.enabled = true;
    plan->nic_notes.enabled = true;
    st = plan_setup(plan, job, cfg, err);
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

tp_status tp_plan_buffer(tp_plan **out, const char *xml, size_t len, const char *source,
                         const tp_job *job, const tp_config *cfg, tp_error *err)
{
    if (!out || !xml || !job)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "tp_plan_buffer: %s is NULL",
                       !out ? "out" : !xml ? "xml" : "job");
    *out = NULL;
    char *text = malloc(len + 1);
    if (!text)
        return tp_fail_nomem(err);
    memcpy(text, xml, len);
    text[len] = '\0';
    return plan_text(out, text, len, source ? source : "<buffer>", job, cfg, err);
}

tp_status tp_plan_file(tp_plan **out, const char *path, const tp_job *job, const tp_config *cfg,
                       tp_error *err)
{
    if (!out || !path || !job)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "tp_plan_file: %s is NULL",
                       !out ? "out" : !path ? "path" : "job");
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st != TP_OK)
        return st;
    return plan_text(out, text, len, path, job, cfg, err);
}

static void free_domain(tp_domain *d)
{
    for (int i = 0; i < TP_GRAPH_COUNT; i++) {
        if (d->graphs[i])
            tp_search__graph_release(d->graphs[i]);
        free(d->graphs[i]);
    }
    tp_system__free(d->sys);
}

void tp_plan_free(tp_plan *plan)
{
    if (!plan)
        return;
    for (int i = 0; i < plan->n_domains; i++)
        free_domain(&plan->domains[i]);
    free(plan->domains);
    free(plan->domain_of);
    tp_channels__free(&plan->channels);
    tp_system__free(plan->host_sys);
    tp_xml__free(plan->topo_xml);
    tp_config_free(plan->cfg);
    tp_log_clear(&plan->log);
    tp_log_clear(&plan->nic_notes);
    free(plan->text);
    free(plan);
}

/* Close a dump file; a failed write or close names the file and the system error. */
static tp_status close_dump(FILE *f, const char *path, tp_status st, tp_error *err)
{
    int e = errno;
    if (fclose(f) != 0 && st == TP_OK) {
        st = TP_ERR_IO;
        e = errno;
    }
    if (st == TP_ERR_IO)
        st = tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot write: %s", strerror(e));
    return st;
}

/* NCCL_TOPO_DUMP_FILE: the XML as rank NCCL_TOPO_DUMP_FILE_RANK prepared it. */
static tp_status write_topo_dump(const tp_plan *plan, tp_error *err)
{
    const char *path = tp_config_str(plan->cfg, TP_P_TOPO_DUMP_FILE);
    int64_t rank = tp_config_int(plan->cfg, TP_P_TOPO_DUMP_FILE_RANK);
    if (!path || rank < 0 || rank >= n_ranks(plan))
        return TP_OK;
    tp_xml *doc = NULL;
    tp_error ignored = {0};
    /* NCCL dumps before building the system: no dump when the preparation fails. */
    if (prepared_xml(&doc, plan, (int)rank / plan->n_gpus_per_node, NULL, NULL, &ignored) != TP_OK) {
        tp_xml__free(doc);
        return TP_OK;
    }
    tp_status st = TP_OK;
    FILE *f = fopen(path, "w");
    if (!f)
        st = tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    else {
        st = tp_xml__write(f, doc->root, err);
        st = close_dump(f, path, st, err);
    }
    tp_xml__free(doc);
    return st;
}

/* NCCL_GRAPH_DUMP_FILE: the graphs of rank NCCL_GRAPH_DUMP_FILE_RANK, as searched. */
static tp_status write_graph_dump(const tp_plan *plan, tp_error *err)
{
    const char *path = tp_config_str(plan->cfg, TP_P_GRAPH_DUMP_FILE);
    int64_t rank = tp_config_int(plan->cfg, TP_P_GRAPH_DUMP_FILE_RANK);
    if (!path || rank < 0 || rank >= n_ranks(plan) || !plan->domain_of)
        return TP_OK;
    int dom = plan->domain_of[rank % plan->n_gpus_per_node];
    if (dom < 0 || !plan->domains[dom].searched)
        return TP_OK;
    const tp_domain *d = &plan->domains[dom];
    /* NCCL 2.22.3 init.cc dump order: ring, tree, CollNet direct, CollNet chain, NVLS. */
    tp_graph *const graphs[5] = {d->graphs[TP_GRAPH_RING], d->graphs[TP_GRAPH_TREE],
                                 d->graphs[TP_GRAPH_COLLNET_DIRECT],
                                 d->graphs[TP_GRAPH_COLLNET_CHAIN], d->graphs[TP_GRAPH_NVLS]};
    FILE *f = fopen(path, "w");
    if (!f)
        return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    tp_status st = tp_search__dump_graphs(f, d->sys, graphs, 5, err);
    return close_dump(f, path, st, err);
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
    tp_status st = prepared_xml(&doc, plan, plan->home_host, NULL, NULL, err);
    if (st == TP_OK)
        st = tp_xml__write(out, doc->root, err);
    tp_xml__free(doc);
    return st;
}
