/*
 * The routes of a trimmed copy of a host's system, taken from the host's.
 *
 * NCCL 2.22.3 computes every route again after trimming the system to a
 * rank's GPU domain: with one GPU per domain (P2P and SHM off) that is a
 * whole set of searches per GPU. Trimming removes only GPUs and NETs. Where
 * none of the removed nodes ever updates a route in the host's searches (a
 * GPU leads on only to a GPU over NVLink, a node with one link only back to
 * where its route came from), a search from a node of the copy updates the
 * same routes in the same order as on the host, minus the removed nodes: the
 * copy takes the host's routes to CPUs, NETs and NVSwitches hop for hop, and
 * the routes arrays NCCL's searches leave (which nodes hold routes to a
 * type, and whether a route no search set reads DIS or LOC). The host's routes
 * between GPUs were rewritten by its P2P and SHM checks: the copy runs its GPU
 * searches itself, then the rewrites.
 */
#include "paths/paths_impl.h"

#include <stdlib.h>
#include <string.h>

/* The root types whose searches the copies take from the host. */
enum { TAKEN_CPU, TAKEN_NET, TAKEN_NVS, TAKEN_TYPES };
static const int taken_type[TAKEN_TYPES] = {TP_NODE_CPU, TP_NODE_NET, TP_NODE_NVS};

/* No search of that root type reaches the node. */
#define NO_ROOT TP_MAX_NODES

/* A node a search reached: its slot and its route. */
struct reached {
    const tp_route *route;
    unsigned slot;
    unsigned first_hop; /* the route's first link, by its place in the link block */
};

struct tp_host_routes {
    tp_system *sys; /* owned: routes to CPUs, NETs and NVSwitches as the searches left them */
    bool nvb_disable;
    tp_node_slots slots;
    size_t n_links; /* the link slots of sys's link block */
    /*
     * Per taken type and node slot: the first root whose search started at the
     * node or reached it. The searches of the roots before it left the node's
     * neighbours no route to that type.
     */
    int *first_root[TAKEN_TYPES];
    /*
     * The nodes each root's search reached (roots of the taken types in order,
     * root_no[k] the first of type k), fewest hops first: a route is a hop onto
     * the route of a node before it. Root n's are reached[reached_at[n] ..
     * reached_at[n + 1]).
     */
    int root_no[TAKEN_TYPES];
    struct reached *reached;
    size_t *reached_at;
};

/* Each node of a type has its own id: a search's routes go to its own slot (the first node
 * with its id), independent of the searches before it, and copies match nodes by id. */
static bool ids_distinct(const tp_node_set *set)
{
    for (int i = 0; i < set->count; i++)
        for (int j = 0; j < i; j++)
            if (set->nodes[j].id == set->nodes[i].id)
                return false;
    return true;
}

/* The host's links all sit in its link block (a clone's): a hop's place there names it. */
static bool links_in_block(const tp_system *sys, size_t *n_links)
{
    *n_links = 0;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        for (int i = 0; i < sys->nodes[t].count; i++) {
            const tp_node *node = &sys->nodes[t].nodes[i];
            if (node->n_slots == 0)
                continue;
            if (!node->links_shared || !sys->link_block)
                return false;
            size_t end = (size_t)(node->links - sys->link_block) + (size_t)node->n_slots;
            if (end > *n_links)
                *n_links = end;
        }
    }
    return true;
}

/* A node trimmed away updates no route of a search that does not start at it: a GPU goes on
 * only to a GPU over NVLink, and a node reached over its only link can only lead back. */
static bool inert(const tp_node *node, bool nvb_disable)
{
    if (node->n_links <= 1 || (node->type == TP_NODE_GPU && nvb_disable))
        return true;
    if (node->type != TP_NODE_GPU)
        return false;
    for (int l = 0; l < node->n_links; l++)
        if (node->links[l].type == TP_LINK_NVL && node->links[l].rem->type == TP_NODE_GPU)
            return false;
    return true;
}

/* Copies can take the host's routes: nodes matched by id, hops named by place, and whatever
 * the trim removes (GPUs, NETs) inert. */
static bool host_fits(const tp_system *sys, bool nvb_disable, size_t *n_links)
{
    static const int matched[] = {TP_NODE_CPU, TP_NODE_GPU, TP_NODE_NET, TP_NODE_NVS};
    for (size_t k = 0; k < ARRAY_LEN(matched); k++)
        if (!ids_distinct(&sys->nodes[matched[k]]))
            return false;
    static const int trimmed[] = {TP_NODE_GPU, TP_NODE_NET};
    for (size_t k = 0; k < ARRAY_LEN(trimmed); k++)
        for (int i = 0; i < sys->nodes[trimmed[k]].count; i++)
            if (!inert(&sys->nodes[trimmed[k]].nodes[i], nvb_disable))
                return false;
    return links_in_block(sys, n_links);
}

/* The first root each node's routes to the taken types were set from (or started at). */
static void note_first_roots(tp_host_routes *h)
{
    const tp_system *sys = h->sys;
    for (int k = 0; k < TAKEN_TYPES; k++) {
        int bt = taken_type[k];
        for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
            for (int i = 0; i < sys->nodes[t].count; i++) {
                const tp_route *r = sys->nodes[t].nodes[i].paths[bt];
                int first = 0;
                while (r && first < sys->nodes[bt].count && !(r[first].bw > 0))
                    first++;
                h->first_root[k][h->slots.first_of[t] + (size_t)i] =
                    r && first < sys->nodes[bt].count ? first : NO_ROOT;
            }
        }
    }
}

/* Root r's (type bt) reached nodes into out, by hops (a counting sort): their number.
 * per_hops: slots.total + 1 counters, zeroed. */
static size_t list_reached(const tp_host_routes *h, int bt, int r, struct reached *out,
                           size_t *per_hops)
{
    const tp_system *sys = h->sys;
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
            for (int i = 0; i < sys->nodes[t].count; i++) {
                const tp_node *node = &sys->nodes[t].nodes[i];
                const tp_route *route = node->paths[bt] ? &node->paths[bt][r] : NULL;
                if (!route || !(route->bw > 0) || route->count == 0)
                    continue;
                if (pass == 0)
                    per_hops[route->count]++, n++;
                else
                    out[per_hops[route->count]++] =
                        (struct reached){.route = route,
                                         .slot = (unsigned)(h->slots.first_of[t] + (size_t)i),
                                         .first_hop = (unsigned)(route->list[0] - sys->link_block)};
            }
        }
        /* per_hops[c]: from the count of routes of c hops to where they go. */
        size_t at = 0;
        for (size_t c = 0; pass == 0 && c <= h->slots.total; c++) {
            size_t here = per_hops[c];
            per_hops[c] = at;
            at += here;
        }
    }
    return n;
}

/* Every taken root's reached nodes, by hops. */
static tp_status note_reached(tp_host_routes *h, tp_error *err)
{
    const tp_system *sys = h->sys;
    int roots = 0;
    for (int k = 0; k < TAKEN_TYPES; k++) {
        h->root_no[k] = roots;
        roots += sys->nodes[taken_type[k]].count;
    }
    h->reached = malloc(((size_t)roots * h->slots.total + 1) * sizeof(*h->reached));
    h->reached_at = malloc(((size_t)roots + 1) * sizeof(*h->reached_at));
    size_t *per_hops = malloc((h->slots.total + 1) * sizeof(*per_hops));
    if (!h->reached || !h->reached_at || !per_hops) {
        free(per_hops);
        return tp_fail_nomem(err);
    }
    size_t n = 0;
    for (int k = 0; k < TAKEN_TYPES; k++) {
        for (int r = 0; r < sys->nodes[taken_type[k]].count; r++) {
            h->reached_at[h->root_no[k] + r] = n;
            memset(per_hops, 0, (h->slots.total + 1) * sizeof(*per_hops));
            n += list_reached(h, taken_type[k], r, h->reached + n, per_hops);
        }
    }
    h->reached_at[roots] = n;
    free(per_hops);
    return TP_OK;
}

tp_status tp_paths__keep_host_routes(tp_host_routes **out, tp_system **sys, const tp_config *cfg,
                                     tp_log *log, unsigned *pending, tp_error *err)
{
    *out = NULL;
    size_t n_links;
    bool nvb_disable = tp_config_int(cfg, TP_P_NVB_DISABLE) != 0;
    /* Nothing pending: some search could fail or miss, and the NET rewrites are done. */
    if (!(*pending & TP_PATHS_NET_POLICIES) || !host_fits(*sys, nvb_disable, &n_links))
        return TP_OK;
    tp_status st = TP_OK;
    if (*pending & TP_PATHS_NET_SEARCHES)
        st = tp_paths__searches(*sys, cfg, log, TP_SEARCH_NETS, TP_SEARCH_KINDS, err);
    if (st != TP_OK)
        return st;
    *pending &= ~(unsigned)TP_PATHS_NET_SEARCHES;
    tp_host_routes *h = calloc(1, sizeof(*h));
    if (!h)
        return tp_fail_nomem(err);
    h->sys = *sys;
    h->nvb_disable = nvb_disable;
    h->n_links = n_links;
    tp_paths__number_nodes(h->sys, &h->slots);
    int *block = malloc((TAKEN_TYPES * h->slots.total + 1) * sizeof(int));
    for (int k = 0; block && k < TAKEN_TYPES; k++)
        h->first_root[k] = block + (size_t)k * h->slots.total;
    st = block ? note_reached(h, err) : tp_fail_nomem(err);
    if (st != TP_OK) {
        h->sys = NULL; /* still the caller's */
        tp_paths__host_routes_free(h);
        return st;
    }
    note_first_roots(h);
    *sys = NULL;
    *out = h;
    return TP_OK;
}

void tp_paths__host_routes_free(tp_host_routes *h)
{
    if (!h)
        return;
    tp_system__free(h->sys);
    free(h->first_root[0]);
    free(h->reached);
    free(h->reached_at);
    free(h);
}

/* ------------------------------------------------------------------ */
/* A copy's nodes and links in the host                                */
/* ------------------------------------------------------------------ */

typedef struct trim_map {
    const tp_host_routes *host;
    tp_system *sys; /* the trimmed copy */
    tp_node_slots slots;
    size_t *host_slot; /* per node slot of the copy: that node's slot in the host */
    tp_node **copy_of; /* per host node slot: the copy's node, NULL when trimmed away */
    tp_link **link_of; /* per host link (its place in the link block): the copy's, or NULL */
    bool fits;         /* the copy can take the host's routes */
} trim_map;

/* The copy's nodes of each type are the host's in order, minus inert ones trimmed away; the
 * copy has every root of a taken type or none. */
static void map_nodes(trim_map *m)
{
    const tp_system *host = m->host->sys;
    for (int t = 0; t < TP_NODE_TYPE_COUNT && m->fits; t++) {
        const tp_node_set *hs = &host->nodes[t];
        tp_node_set *cs = &m->sys->nodes[t];
        int j = 0;
        for (int i = 0; i < hs->count && m->fits; i++) {
            size_t slot = m->host->slots.first_of[t] + (size_t)i;
            tp_node *copy =
                j < cs->count && cs->nodes[j].id == hs->nodes[i].id ? &cs->nodes[j] : NULL;
            m->copy_of[slot] = copy;
            if (copy)
                m->host_slot[m->slots.first_of[t] + (size_t)j++] = slot;
            else
                m->fits = inert(&hs->nodes[i], m->host->nvb_disable);
        }
        m->fits &= j == cs->count;
        if (t == TP_NODE_CPU || t == TP_NODE_NET || t == TP_NODE_NVS)
            m->fits &= cs->count == 0 || cs->count == hs->count;
    }
}

/* Each copy node's links are its host node's, in order, minus those to nodes trimmed away. */
static void map_links(trim_map *m)
{
    const tp_system *host = m->host->sys;
    for (int t = 0; t < TP_NODE_TYPE_COUNT && m->fits; t++) {
        for (int i = 0; i < host->nodes[t].count && m->fits; i++) {
            const tp_node *hn = &host->nodes[t].nodes[i];
            tp_node *cn = m->copy_of[m->host->slots.first_of[t] + (size_t)i];
            if (!cn)
                continue;
            int w = 0;
            for (int l = 0; l < hn->n_links && m->fits; l++) {
                const tp_link *hl = &hn->links[l];
                tp_node *rem = m->copy_of[tp_paths__slot(&m->host->slots, host, hl->rem)];
                if (!rem)
                    continue;
                m->fits =
                    w < cn->n_links && cn->links[w].rem == rem && cn->links[w].type == hl->type;
                m->link_of[hl - host->link_block] = &cn->links[w++];
            }
            m->fits &= w == cn->n_links;
        }
    }
}

static tp_status map_alloc(trim_map *m, tp_error *err)
{
    const tp_host_routes *h = m->host;
    tp_paths__number_nodes(m->sys, &m->slots);
    m->host_slot = malloc((m->slots.total + 1) * sizeof(*m->host_slot));
    m->copy_of = malloc((h->slots.total + 1) * sizeof(*m->copy_of));
    m->link_of = calloc(h->n_links + 1, sizeof(*m->link_of));
    return m->host_slot && m->copy_of && m->link_of ? TP_OK : tp_fail_nomem(err);
}

static void map_free(trim_map *m)
{
    free(m->host_slot);
    free(m->copy_of);
    free(m->link_of);
}

/* ------------------------------------------------------------------ */
/* Taking the routes                                                   */
/* ------------------------------------------------------------------ */

/* Per taken type: the first root whose search reaches a neighbour of node (or starts there),
 * which allocates node's routes to that type. */
static void first_searches(const trim_map *m, const tp_node *node, int first[TAKEN_TYPES])
{
    for (int k = 0; k < TAKEN_TYPES; k++)
        first[k] = NO_ROOT;
    for (int l = 0; l < node->n_links; l++) {
        size_t hs = m->host_slot[tp_paths__slot(&m->slots, m->sys, node->links[l].rem)];
        for (int k = 0; k < TAKEN_TYPES; k++)
            if (m->host->first_root[k][hs] < first[k])
                first[k] = m->host->first_root[k][hs];
    }
}

/*
 * node's routes to the taken type k, as the first search reaching a neighbour
 * (`first`) or node's own search allocates them: DIS, or LOC when node's own
 * search comes first.
 */
static tp_status alloc_routes(trim_map *m, tp_node *node, int k, int first, tp_error *err)
{
    int bt = taken_type[k], count = m->sys->nodes[bt].count;
    int self = (int)node->type == bt ? (int)(node - m->sys->nodes[bt].nodes) : -1;
    if (count == 0 || (self < 0 && first == NO_ROOT))
        return TP_OK;
    bool dis = self < 0 || first < self;
    return tp_paths__routes_alloc(m->sys, &node->paths[bt], count, dis, err);
}

static tp_status alloc_all(trim_map *m, tp_error *err)
{
    tp_status st = TP_OK;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        for (int i = 0; i < m->sys->nodes[t].count && st == TP_OK; i++) {
            tp_node *node = &m->sys->nodes[t].nodes[i];
            int first[TAKEN_TYPES];
            first_searches(m, node, first);
            for (int k = 0; k < TAKEN_TYPES && st == TP_OK; k++)
                st = alloc_routes(m, node, k, first[k], err);
        }
    }
    return st;
}

/* dst, the route to root r of type bt the host's search left node e: its first hop onto the
 * route of the node it leads to, already taken (m->fits false when the copy differs). */
static tp_status take_route(trim_map *m, tp_route *dst, const struct reached *e, int bt, int r,
                            tp_error *err)
{
    const tp_route *src = e->route;
    tp_link *hop = m->link_of[e->first_hop];
    const tp_route *rest = hop && hop->rem->paths[bt] ? &hop->rem->paths[bt][r] : NULL;
    if (!rest || rest->count != src->count - 1) {
        m->fits = false;
        return TP_OK;
    }
    tp_status st;
    if (src->count > dst->cap && (st = tp_paths__route_grow(m->sys, dst, src->count, err)))
        return st;
    tp_link **list = dst->list;
    list[0] = hop;
    for (int h = 0; h < rest->count; h++)
        list[h + 1] = rest->list[h];
    dst->count = src->count;
    dst->bw = src->bw;
    dst->type = src->type;
    return TP_OK;
}

/* The routes root r of type k's search leaves, in the host's order (fewest hops first). */
static tp_status take_search(trim_map *m, int k, int r, tp_error *err)
{
    const tp_host_routes *h = m->host;
    int bt = taken_type[k];
    const tp_route *host_own = &h->sys->nodes[bt].nodes[r].paths[bt][r];
    tp_route *own = &m->sys->nodes[bt].nodes[r].paths[bt][r];
    own->count = host_own->count;
    own->bw = host_own->bw;
    own->type = host_own->type;
    tp_status st = TP_OK;
    size_t n = (size_t)h->root_no[k] + (size_t)r;
    for (size_t e = h->reached_at[n]; e < h->reached_at[n + 1] && st == TP_OK && m->fits; e++) {
        tp_node *node = m->copy_of[h->reached[e].slot];
        if (!node)
            continue; /* trimmed away: inert, no route of the copy goes through it */
        if (!node->paths[bt])
            m->fits = false;
        else
            st = take_route(m, &node->paths[bt][r], &h->reached[e], bt, r, err);
    }
    return st;
}

static tp_status take_all(trim_map *m, tp_error *err)
{
    tp_status st = alloc_all(m, err);
    for (int k = 0; k < TAKEN_TYPES && st == TP_OK; k++)
        for (int r = 0; r < m->sys->nodes[taken_type[k]].count && st == TP_OK && m->fits; r++)
            st = take_search(m, k, r, err);
    return st;
}

/* sys's routes to CPUs, NETs and NVSwitches from the host's; *fits false when they differ. */
static tp_status take_host_routes(tp_system *sys, const tp_host_routes *host, bool *fits,
                                  tp_error *err)
{
    trim_map m = {.host = host, .sys = sys, .fits = true};
    tp_status st = map_alloc(&m, err);
    if (st == TP_OK)
        map_nodes(&m);
    if (st == TP_OK && m.fits)
        map_links(&m);
    if (st == TP_OK && m.fits)
        st = take_all(&m, err);
    map_free(&m);
    *fits = m.fits;
    return st;
}

tp_status tp_paths__compute_trimmed(tp_system *sys, const tp_host_routes *host,
                                    const tp_config *cfg, const tp_job_view *job, tp_log *log,
                                    tp_error *err)
{
    tp_system__free_routes(sys);
    bool fits = false;
    tp_status st = take_host_routes(sys, host, &fits, err);
    if (st != TP_OK || !fits)
        return st != TP_OK ? st : tp_paths__compute(sys, cfg, job, log, err);
    st = tp_paths__searches(sys, cfg, log, TP_SEARCH_GPUS, TP_SEARCH_GPUS + 1, err);
    return st == TP_OK ? tp_paths__rewrites(sys, cfg, job, log, err) : st;
}
