/*
 * Loading a job: the topology of every host, grouped into kinds (hosts with
 * the same topology text share one pipeline run), and the rank numbering
 * NCCL uses: node by node, each node's GPUs in its local order.
 */
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

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
    if (job->n_node_topos < 0 || job->n_node_topos > job->n_nodes - 1 ||
        (job->n_node_topos > 0 && !job->node_topos))
        return tp_fail(err, TP_ERR_USAGE, "job.node_topos", 0, 0,
                       "%d node topologies for %d nodes (at most %d: node 0 uses the main one)",
                       job->n_node_topos, job->n_nodes, job->n_nodes - 1);
    for (int i = 0; i < job->n_node_topos; i++)
        if (!job->node_topos[i])
            return tp_fail(err, TP_ERR_ARGUMENT, "job.node_topos", 0, 0,
                           "entry %d (node %d's topology path) is NULL", i, i + 1);
    return TP_OK;
}

static int count_gpus(const tp_xml_elem *e)
{
    int n = tp_xml__is_tag(e, "gpu");
    for (size_t i = 0; i < e->n_children; i++)
        n += count_gpus(e->children[i]);
    return n;
}

/*
 * NCCL 2.22.3 ncclTopoGetXmlFromFile replayed on a kind's text (NCCL's own
 * parser, not expat): a file it refuses fails here, its WARN and back-trace
 * (down to ncclTopoGetSystem's call) kept in `nccl_lines` when not NULL.
 */
static tp_status replay_nccl_loader(tp_host_kind *k, tp_log *nccl_lines, tp_error *err)
{
    tp_log lines = {.enabled = true};
    tp_nccl_xml_result r;
    tp_nccl_xml_input in = {.text = k->text,
                            .len = k->text_len,
                            .kind = TP_NCCL_XML_TOPOLOGY,
                            .source = k->source,
                            .want_tree = true};
    tp_status st = tp_xml__nccl_load(&in, &lines, &r, err);
    k->topo_xml = r.tree; /* read as NCCL reads it, when plain: parse_kind has no more to do */
    if (st == TP_OK && r.outcome == TP_NCCL_XML_REJECTED) {
        tp_log_info_sub(&lines, TP_SUB_ALL, "graph/topo.cc:%d -> %d", TP_NCCL_LINE_TOPO_GET_XML,
                        r.code);
        if (nccl_lines)
            tp_xml__log_append(nccl_lines, &lines);
        st = tp_fail(err, r.malformed ? TP_ERR_XML : TP_ERR_TOPOLOGY, k->source, r.line, r.column,
                     "NCCL 2.22.3 refuses this topology file: %s", r.message);
    }
    tp_log_clear(&lines);
    return st;
}

/* Parse a kind's text and count its GPUs (a topology without GPU plans nothing). */
static tp_status parse_kind(tp_host_kind *k, tp_error *err)
{
    tp_status st =
        k->topo_xml ? TP_OK : tp_xml__parse(&k->topo_xml, k->text, k->text_len, k->source, err);
    if (st != TP_OK)
        return st;
    k->n_gpus = count_gpus(k->topo_xml->root);
    if (k->n_gpus == 0)
        return tp_xml__fail(err, TP_ERR_TOPOLOGY, k->topo_xml, k->topo_xml->root,
                            "no <gpu> element: nothing to plan");
    return TP_OK;
}

/* The kind of a node topology file: an earlier kind with the same text, or a new one. */
static tp_status kind_of_file(tp_plan *plan, const char *path, int *kind, tp_error *err)
{
    char *text = NULL;
    size_t len = 0;
    tp_status st = tp_xml__read_file(&text, &len, path, err);
    if (st != TP_OK)
        return st;
    for (int i = 0; i < plan->n_kinds; i++) {
        const tp_host_kind *k = &plan->kinds[i];
        if (k->text_len == len && memcmp(k->text, text, len) == 0) {
            free(text);
            *kind = i;
            return TP_OK;
        }
    }
    tp_host_kind *k = &plan->kinds[plan->n_kinds];
    k->text = text;
    k->text_len = len;
    tp_copy_str(k->source, sizeof(k->source), path);
    *kind = plan->n_kinds++;
    st = replay_nccl_loader(k, NULL, err);
    return st == TP_OK ? parse_kind(k, err) : st;
}

tp_status tp_plan__read_topology(tp_xml **out, const char *text, size_t len, tp_error *err)
{
    tp_host_kind k = {.text = malloc(len + 1), .text_len = len};
    *out = NULL;
    if (!k.text)
        return tp_fail_nomem(err);
    memcpy(k.text, text, len);
    k.text[len] = '\0';
    tp_copy_str(k.source, sizeof(k.source), "<buffer>");
    tp_status st = replay_nccl_loader(&k, NULL, err);
    if (st == TP_OK)
        st = parse_kind(&k, err);
    if (st == TP_OK)
        *out = k.topo_xml;
    else
        tp_xml__free(k.topo_xml);
    free(k.text);
    return st;
}

/* First rank of every host; the home host (the reported rank's) and its kind. */
static tp_status number_ranks(tp_plan *plan, const tp_job *job, tp_error *err)
{
    int n = job->n_nodes;
    long long total = 0;
    plan->host_first_rank[0] = 0;
    for (int h = 0; h < n; h++) {
        total += plan->kinds[plan->host_kind[h]].n_gpus;
        if (total > INT32_MAX / 2)
            return tp_fail(err, TP_ERR_USAGE, "job.n_nodes", 0, 0, "too many ranks");
        plan->host_first_rank[h + 1] = (int)total;
    }
    if (job->rank >= total)
        return tp_fail(err, TP_ERR_USAGE, "job.rank", 0, 0,
                       "rank %d out of range (job has %lld ranks)", job->rank, total);
    int home = 0;
    while (plan->host_first_rank[home + 1] <= job->rank)
        home++;
    plan->home_host = home;
    plan->home_kind = plan->host_kind[home];
    for (int i = 0; i < plan->n_kinds; i++)
        plan->kinds[i].rep_host = -1;
    plan->kinds[plan->home_kind].rep_host = home;
    for (int h = 0; h < n; h++)
        if (plan->kinds[plan->host_kind[h]].rep_host < 0)
            plan->kinds[plan->host_kind[h]].rep_host = h;
    return TP_OK;
}

tp_status tp_plan__load_job(tp_plan *plan, char *text, size_t len, const char *source,
                            const tp_job *job, tp_error *err)
{
    /* Every field checked before it sizes a block (n_node_topos = -1 would size none). */
    tp_status st = check_job(job, err);
    if (st != TP_OK) {
        free(text);
        return st;
    }
    int n = job->n_nodes;
    plan->kinds = calloc((size_t)job->n_node_topos + 1, sizeof(*plan->kinds));
    plan->host_kind = calloc((size_t)n, sizeof(int));
    plan->host_first_rank = calloc((size_t)n + 1, sizeof(int));
    if (!plan->kinds) {
        free(text);
        return tp_fail_nomem(err);
    }
    tp_host_kind *main_kind = &plan->kinds[plan->n_kinds++];
    main_kind->text = text;
    main_kind->text_len = len;
    tp_copy_str(main_kind->source, sizeof(main_kind->source), source);
    if (!plan->host_kind || !plan->host_first_rank)
        return tp_fail_nomem(err);
    /* The reported rank prints NCCL's lines for the main topology when it is on node 0 or
     * every node reads that file; another node's file it never reads. */
    bool main_logged = job->rank == 0 || job->n_node_topos == 0;
    if ((st = replay_nccl_loader(main_kind, main_logged ? &plan->load_log : NULL, err)) != TP_OK ||
        (st = parse_kind(main_kind, err)) != TP_OK)
        return st;
    for (int i = 0; i < job->n_node_topos && st == TP_OK; i++)
        st = kind_of_file(plan, job->node_topos[i], &plan->host_kind[i + 1], err);
    if (st == TP_OK)
        st = number_ranks(plan, job, err);
    return st;
}

/* Kind i of `from` runs again exactly as it ran there: borrow it. */
static bool same_run(const tp_plan *plan, const tp_host_kind *k, const tp_plan *from, int i)
{
    const tp_host_kind *src = &from->kinds[i];
    int rep = src->rep_host;
    /* from's home kind ran its domains from the reported rank's local index */
    bool from_zero = i != from->home_kind || from->job.rank == from->host_first_rank[rep];
    return src->host_sys && src->domain_of && from_zero && k->rep_host == rep &&
           plan->host_first_rank[rep] == from->host_first_rank[rep];
}

/* A kind's own copy of src: its text, parsed again. */
static tp_status copy_kind(tp_host_kind *k, const tp_host_kind *src, tp_error *err)
{
    int rep = k->rep_host;
    memset(k, 0, sizeof(*k));
    k->rep_host = rep;
    if (!(k->text = malloc(src->text_len + 1)))
        return tp_fail_nomem(err);
    memcpy(k->text, src->text, src->text_len + 1);
    k->text_len = src->text_len;
    memcpy(k->source, src->source, sizeof(k->source));
    return parse_kind(k, err);
}

tp_status tp_plan__borrow_job(tp_plan *plan, const tp_plan *from, const int *host_kind,
                              tp_error *err)
{
    int n = from->job.n_nodes, rank = plan->job.rank;
    plan->job = from->job;
    plan->job.rank = rank;
    plan->kinds = calloc((size_t)from->n_kinds, sizeof(*plan->kinds));
    plan->host_kind = malloc((size_t)n * sizeof(int));
    plan->host_first_rank = calloc((size_t)n + 1, sizeof(int));
    int *renumber = malloc((size_t)from->n_kinds * sizeof(int));
    int *source = malloc((size_t)from->n_kinds * sizeof(int));
    tp_status st = TP_OK;
    if (!plan->kinds || !plan->host_kind || !plan->host_first_rank || !renumber || !source)
        st = tp_fail_nomem(err);
    for (int i = 0; st == TP_OK && i < from->n_kinds; i++)
        renumber[i] = -1;
    for (int h = 0; st == TP_OK && h < n; h++)
        renumber[host_kind[h]] = 0;
    /* Every kind borrowed first (its GPU count numbers the ranks), then those that would
     * run otherwise than in `from` get their own copy. */
    for (int i = 0; st == TP_OK && i < from->n_kinds; i++) {
        if (renumber[i] < 0)
            continue;
        source[plan->n_kinds] = i;
        renumber[i] = plan->n_kinds;
        plan->kinds[plan->n_kinds] = from->kinds[i];
        plan->kinds[plan->n_kinds++].borrowed = true;
    }
    for (int h = 0; st == TP_OK && h < n; h++)
        plan->host_kind[h] = renumber[host_kind[h]];
    if (st == TP_OK)
        st = number_ranks(plan, &plan->job, err);
    for (int i = 0; st == TP_OK && i < plan->n_kinds; i++)
        if (!same_run(plan, &plan->kinds[i], from, source[i]))
            st = copy_kind(&plan->kinds[i], &from->kinds[source[i]], err);
    free(renumber);
    free(source);
    return st;
}

tp_status tp_plan__copy_job(tp_plan *plan, const tp_plan *from, const int *host_kind, tp_error *err)
{
    int n = from->job.n_nodes;
    const int *wanted = host_kind ? host_kind : from->host_kind;
    int rank = plan->job.rank;
    plan->job = from->job;
    plan->job.rank = rank;
    plan->kinds = calloc((size_t)from->n_kinds, sizeof(*plan->kinds));
    plan->host_kind = malloc((size_t)n * sizeof(int));
    plan->host_first_rank = calloc((size_t)n + 1, sizeof(int));
    int *renumber = malloc((size_t)from->n_kinds * sizeof(int));
    if (!plan->kinds || !plan->host_kind || !plan->host_first_rank || !renumber) {
        free(renumber);
        return tp_fail_nomem(err);
    }
    /* Kinds no host uses any more are left out; the others keep their order. */
    for (int i = 0; i < from->n_kinds; i++)
        renumber[i] = -1;
    for (int h = 0; h < n; h++)
        renumber[wanted[h]] = 0;
    tp_status st = TP_OK;
    for (int i = 0; i < from->n_kinds && st == TP_OK; i++) {
        const tp_host_kind *src = &from->kinds[i];
        if (renumber[i] < 0)
            continue;
        renumber[i] = plan->n_kinds;
        tp_host_kind *k = &plan->kinds[plan->n_kinds++];
        if (!(k->text = malloc(src->text_len + 1)))
            return tp_fail_nomem(err);
        memcpy(k->text, src->text, src->text_len + 1);
        k->text_len = src->text_len;
        memcpy(k->source, src->source, sizeof(k->source));
        st = parse_kind(k, err);
    }
    for (int h = 0; h < n; h++)
        plan->host_kind[h] = renumber[wanted[h]];
    free(renumber);
    if (st == TP_OK)
        st = number_ranks(plan, &plan->job, err);
    return st;
}
