/*
 * Mirrored domains. A job's GPUs often form several domains (one per CPU
 * socket on PCIe machines) whose systems differ only in names: the same
 * GPUs in the same order, the NICs listed in another order. NCCL 2.22.3
 * searches each domain; when the search provably cannot tell two systems
 * apart, the second domain's graphs are the first one's with GPU ranks and
 * NET ids renamed.
 *
 * Why it is exact: the search reads the system only through what
 * tp_search__ctx_init derives (and the link table of search_milli.c) and a few node fields. With
 * GPUs matched by index and NETs by a permutation, this module checks, in the second system's
 * terms: node counts, GPU compute capabilities, the NET fields the search reads (bw, latency,
 * CollNet support, which NETs share a port or an id), every route's type, bandwidth and length
 * (ncclTopoGetLocal, scores, local GPUs), every compiled route hop by hop with a consistent
 * matching of links and equal link bandwidths (reservations), the GPUs' PCI links, the local NET of
 * every GPU and channel, the local GPU of every NET and ncclTopoSelectNets for every typeInter.
 * Everything else the search computes is a function of these, so both searches take the same
 * branches in the same order, on matched nodes. The first domain's searches must have left its
 * bandwidths untouched (only milli passes: search_milli.c), so that it is compared as the search
 * saw it.
 */
#include "search/accel/accel.h"

#include <stdlib.h>
#include <string.h>

typedef struct iso {
    tp_search_ctx *a, *b;
    tp_accel *xa; /* a's link table (b's links are named by their bandwidth's address) */
    int *net_map; /* b NET index -> a NET index */
    /* b link -> a link index (-1 unseen), by the address of b's link bandwidth: tp_accel__link_slot
     */
    const float **link_key;
    int *link_map;
    size_t link_mask;
    const float **link_inv; /* a link index -> b link, NULL unseen */
    unsigned char *taken;   /* a NET index -> matched already */
    void *block;            /* the tables above, in one allocation */
} iso;

static int same_route(const tp_route *x, const tp_route *y)
{
    return x->count == y->count && x->bw == y->bw && x->type == y->type;
}

/* A NET of a that b's NET n may stand for: same routes to every GPU, same fields. */
static int net_match(const iso *m, int na, int nb)
{
    const tp_node *x = &m->a->sys->nodes[TP_NODE_NET].nodes[na];
    const tp_node *y = &m->b->sys->nodes[TP_NODE_NET].nodes[nb];
    if (x->net.bw != y->net.bw || x->net.latency != y->net.latency ||
        x->net.coll_support != y->net.coll_support)
        return 0;
    for (int g = 0; g < m->a->n_gpus; g++)
        if (!same_route(&x->paths[TP_NODE_GPU][g], &y->paths[TP_NODE_GPU][g]) ||
            !same_route(&m->a->sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET][na],
                        &m->b->sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET][nb]))
            return 0;
    return 1;
}

/*
 * First guess: the NETs the GPUs of b take on each channel stand for those the matching GPUs of
 * a take (same_gpus requires it). Pairs that disagree are dropped: the guess only orders the
 * candidates, every pair is still checked.
 */
static void seed_nets(iso *m, unsigned char *taken)
{
    int n = m->b->n_nets;
    for (int nb = 0; nb < n; nb++)
        m->net_map[nb] = -1;
    for (int i = 0; n > 0 && i < m->b->n_gpus * TP_MAXCHANNELS; i++) {
        int nb = m->b->local_net[i], na = m->a->local_net[i];
        if (nb < 0 || nb >= n || na < 0 || na >= n)
            continue;
        if (m->net_map[nb] < 0 && !taken[na] && net_match(m, na, nb)) {
            m->net_map[nb] = na;
            taken[na] = 1;
        }
    }
}

/* Match b's NETs to a's: the GPUs' own NETs by channel, then each to the first free candidate. */
static int match_nets(iso *m)
{
    int n = m->a->n_nets;
    unsigned char *taken = m->taken;
    seed_nets(m, taken);
    int ok = 1;
    for (int nb = 0; nb < n && ok; nb++) {
        for (int na = 0; na < n && m->net_map[nb] < 0; na++)
            if (!taken[na] && net_match(m, na, nb))
                m->net_map[nb] = na;
        ok = m->net_map[nb] >= 0;
        if (ok)
            taken[m->net_map[nb]] = 1;
    }
    return ok;
}

/* The first NET (smallest index) of NET n's port: port groups list their NETs in index order. */
static int first_of_port(const tp_search_ctx *s, int n)
{
    return s->port_nets[s->port_first[n]];
}

/* The first NET (smallest index) with NET n's id. */
static int first_of_id(const tp_node *nets, int n)
{
    int j = 0;
    while (nets[j].id != nets[n].id)
        j++;
    return j;
}

/*
 * Which NETs share a port, and which share an id, correspond. Each relation sorts the NETs into
 * classes named by their first NET: b's classes map into a's when every NET of b maps into the
 * class of its class's first NET, and then onto them when both systems have as many classes.
 */
static int same_net_relations(const iso *m)
{
    const tp_node *xa = m->a->sys->nodes[TP_NODE_NET].nodes;
    const tp_node *xb = m->b->sys->nodes[TP_NODE_NET].nodes;
    int port_classes = 0, id_classes = 0; /* b's less a's */
    for (int i = 0; i < m->b->n_nets; i++) {
        int ia = m->net_map[i];
        int port_b = first_of_port(m->b, i), port_a = first_of_port(m->a, ia);
        int id_b = first_of_id(xb, i), id_a = first_of_id(xa, ia);
        if (first_of_port(m->a, m->net_map[port_b]) != port_a ||
            first_of_id(xa, m->net_map[id_b]) != id_a)
            return 0;
        port_classes += (port_b == i) - (port_a == ia);
        id_classes += (id_b == i) - (id_a == ia);
    }
    return port_classes == 0 && id_classes == 0;
}

/* The index in a of node i of type t of b. */
static int to_a(const iso *m, int t, int i)
{
    return t == TP_NODE_NET ? m->net_map[i] : i;
}

/* The slot of b's link lb in the link map (a new slot is unseen). */
static int *link_of_b(iso *m, const float *lb)
{
    size_t i = tp_accel__link_slot(m->link_key, m->link_mask, lb);
    if (!m->link_key[i]) {
        m->link_key[i] = lb;
        m->link_map[i] = -1;
    }
    return &m->link_map[i];
}

/* Link lb of b stands for link la of a, consistently, with the same bandwidth (compared when they
 * pair: no bandwidth changes during a comparison). */
static int same_link(iso *m, int la, const float *lb)
{
    int *at = link_of_b(m, lb);
    if (*at >= 0 || m->link_inv[la])
        return *at == la;
    if (*m->xa->milli.link_bw[la] != *lb)
        return 0;
    *at = la;
    m->link_inv[la] = lb;
    return 1;
}

/* Hop x of a's route and hop y of b's (routes with the same Intel flag: same_routes). */
static int same_hop(iso *m, const tp_hop *x, const tp_hop *y)
{
    const tp_mhop *mx = tp_accel__mhop(m->xa, x);
    if (x->pci != y->pci || x->rev_div8 != y->rev_div8 || x->rev_full != y->rev_full ||
        !x->rev != !y->rev)
        return 0;
    return same_link(m, mx->li, y->bw) && (!x->rev || same_link(m, mx->lri, y->rev));
}

/*
 * a's compiled route x and b's route (t1, i) -> (t2, j), compiled hop by hop as they are compared
 * (b's routes are read once: compiling them all first would cost more).
 */
static int same_compiled(iso *m, const tp_cpath *x, int t1, int i, int t2, int j)
{
    tp_cpath y;
    tp_search__route_head(&y, m->b->sys, t1, i, t2, j);
    if (x->count != y.count || x->type != y.type || x->rev_type != y.rev_type ||
        x->intel != y.intel)
        return 0;
    tp_node *start = &m->b->sys->nodes[t1].nodes[i], *node = start;
    const tp_route *route = &start->paths[t2][j];
    for (int k = 0; k < x->count; k++) {
        tp_hop hop;
        tp_search__compile_hop(&hop, node, route->list[k], start);
        if (!same_hop(m, &x->hops[k], &hop))
            return 0;
        node = route->list[k]->rem;
    }
    return 1;
}

/* Routes of kind (t1, t2): as the paths stage left them, and compiled hop by hop. */
static int same_routes(iso *m, int t1, int t2)
{
    int n1 = m->b->sys->nodes[t1].count, n2 = m->b->sys->nodes[t2].count;
    const tp_cpath *ra = m->a->routes[t1][t2];
    for (int i = 0; i < n1; i++) {
        for (int j = 0; j < n2; j++) {
            int ia = to_a(m, t1, i), ja = to_a(m, t2, j);
            const tp_route *px = m->a->sys->nodes[t1].nodes[ia].paths[t2];
            const tp_route *py = m->b->sys->nodes[t1].nodes[i].paths[t2];
            if (!px != !py || (px && !same_route(&px[ja], &py[j])))
                return 0;
            /* Without a route both compile to an empty one of type DIS. */
            if (py && !same_compiled(m, &ra[ia * n2 + ja], t1, i, t2, j))
                return 0;
        }
    }
    return 1;
}

static int same_gpus(iso *m)
{
    const tp_node *ga = m->a->sys->nodes[TP_NODE_GPU].nodes;
    const tp_node *gb = m->b->sys->nodes[TP_NODE_GPU].nodes;
    for (int g = 0; g < m->b->n_gpus; g++) {
        if (ga[g].gpu.cuda_comp_cap != gb[g].gpu.cuda_comp_cap ||
            !m->a->pci_up[g] != !m->b->pci_up[g])
            return 0;
        const tp_milli *ma = &m->xa->milli;
        if (m->b->pci_up[g] &&
            (!same_link(m, (int)(ma->pci_up_m[g] - ma->link_m), m->b->pci_up[g]) ||
             !same_link(m, (int)(ma->pci_down_m[g] - ma->link_m), m->b->pci_down[g])))
            return 0;
        for (int c = 0; c < TP_MAXCHANNELS && m->b->n_nets; c++)
            if (m->net_map[m->b->local_net[g * TP_MAXCHANNELS + c]] !=
                m->a->local_net[g * TP_MAXCHANNELS + c])
                return 0;
    }
    return 1;
}

/*
 * ncclTopoGetLocalGpu and ncclTopoSelectNets correspond. A selection lists the GPU's own NETs,
 * then the others by route type, types in increasing order up to typeInter: the list of one
 * typeInter is the prefix of the list of every type that holds its NETs (the own NETs and those of
 * route types up to typeInter). b's own NETs and route types are a's (same_gpus, same_routes), so
 * equal lists of every type (the last typeInter slot) make equal lists of each typeInter.
 */
static int same_net_lists(iso *m)
{
    for (int n = 0; n < m->b->n_nets; n++)
        if (m->a->local_gpu[m->net_map[n]] != m->b->local_gpu[n])
            return 0;
    for (int g = -1; g < m->b->n_gpus && m->b->n_nets; g++) {
        const int *la, *lb;
        int ca, cb;
        if (tp_search__select_nets(m->a, TP_SEL_TYPES - 1, g, &la, &ca) != TP_OK ||
            tp_search__select_nets(m->b, TP_SEL_TYPES - 1, g, &lb, &cb) != TP_OK || ca != cb)
            return 0;
        for (int i = 0; i < cb; i++)
            if (m->net_map[lb[i]] != la[i])
                return 0;
    }
    return 1;
}

static const int route_kinds[][2] = {
    {TP_NODE_GPU, TP_NODE_GPU}, {TP_NODE_GPU, TP_NODE_NET}, {TP_NODE_NET, TP_NODE_GPU},
    {TP_NODE_GPU, TP_NODE_NVS}, {TP_NODE_NVS, TP_NODE_GPU},
};

/* What the systems must share before their search tables are worth deriving. */
static int same_outline(const tp_system *sa, const tp_system *sb)
{
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        if (sa->nodes[t].count != sb->nodes[t].count)
            return 0;
    const tp_node_set *ca = &sa->nodes[TP_NODE_CPU], *cb = &sb->nodes[TP_NODE_CPU];
    return sa->max_bw == sb->max_bw && sa->total_bw == sb->total_bw &&
           (!ca->count || (ca->nodes[0].cpu.arch == cb->nodes[0].cpu.arch &&
                           ca->nodes[0].cpu.vendor == cb->nodes[0].cpu.vendor));
}

static int same_system(iso *m)
{
    if (!match_nets(m) || !same_net_relations(m))
        return 0;
    for (size_t k = 0; k < ARRAY_LEN(route_kinds); k++)
        if (!same_routes(m, route_kinds[k][0], route_kinds[k][1]))
            return 0;
    return same_gpus(m) && same_net_lists(m);
}

/* GPU ranks are the search's names for GPUs: they must be distinct. */
static int distinct_ranks(const tp_system *sys)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int i = 0; i < gpus->count; i++)
        for (int j = i + 1; j < gpus->count; j++)
            if (gpus->nodes[i].gpu.rank == gpus->nodes[j].gpu.rank)
                return 0;
    return 1;
}

static int64_t rename_rank(const iso *m, int64_t rank)
{
    const tp_node_set *ga = &m->a->sys->nodes[TP_NODE_GPU], *gb = &m->b->sys->nodes[TP_NODE_GPU];
    for (int i = 0; i < ga->count; i++)
        if (ga->nodes[i].gpu.rank == rank)
            return gb->nodes[i].gpu.rank;
    return rank;
}

static int64_t rename_net(const iso *m, int64_t id)
{
    const tp_node *na = m->a->sys->nodes[TP_NODE_NET].nodes;
    const tp_node *nb = m->b->sys->nodes[TP_NODE_NET].nodes;
    for (int i = 0; i < m->b->n_nets; i++)
        if (na[m->net_map[i]].id == id)
            return nb[i].id;
    return id;
}

/* b's graph: a's, with ranks and NET ids renamed, and its own copy of the trace. */
static tp_status rename_graph(const iso *m, const tp_graph *x, tp_graph *y, tp_error *err)
{
    tp_graph__copy_settings(y, x);
    int n_gpus = m->b->n_gpus;
    /* The slots a search zeroes and fills (NVLS prints untouched ones); the rest is never read. */
    memcpy(y->intra, x->intra, (size_t)TP_MAXCHANNELS * (size_t)n_gpus * sizeof(y->intra[0]));
    memcpy(y->inter, x->inter, sizeof(y->inter));
    for (int i = 0; i < x->n_channels * n_gpus; i++)
        y->intra[i] = (int)rename_rank(m, x->intra[i]);
    for (int i = 0; i < x->n_channels * 2 && m->b->n_nets; i++)
        y->inter[i] = rename_net(m, x->inter[i]);
    /* y's own trace buffer (none, or one a graph renamed into y before) is reused. */
    y->n_events = 0;
    if (x->n_events > y->events_cap) {
        tp_search_event *events = realloc(y->events, x->n_events * sizeof(*events));
        if (!events)
            return tp_fail_nomem(err);
        y->events = events;
        y->events_cap = x->n_events;
    }
    if (x->n_events)
        memcpy(y->events, x->events, x->n_events * sizeof(*y->events));
    y->n_events = x->n_events;
    return TP_OK;
}

static int mirrorable(const tp_system *a, tp_graph *const *ga, const tp_system *b, int n,
                      const tp_config *cfg)
{
    if (tp_config_str(cfg, TP_P_GRAPH_FILE) || !same_outline(a, b) || !distinct_ranks(a) ||
        !distinct_ranks(b))
        return 0;
    for (int i = 0; i < n; i++)
        if (ga[i] && ga[i]->search_state == TP_SEARCH_CHANGED)
            return 0;
    return 1;
}

/* One system's search tables, as the comparison reads them. */
typedef struct mirror_side {
    tp_system *sys;
    tp_search_ctx *ctx;
    /* The link table: its own (no accelerator attached: made when first compared as a, the
     * earlier system; NULL before), or the kept search's */
    tp_accel *links;
    tp_search_ctx own;
    int kept; /* ctx is a kept search context (its accelerators are `links`) */
} mirror_side;

/* The tables of the systems compared so far (a domain is compared with each earlier one). */
struct tp_search_mirrors {
    mirror_side **sides;
    int n, cap;
};

static void side_free(mirror_side *side)
{
    if (!side)
        return;
    if (side->kept) {
        tp_search__keep_free(side->ctx); /* and its accelerators */
    } else {
        tp_accel__free(side->links);
        tp_search__ctx_free(&side->own);
    }
    free(side);
}

static mirror_side *side_new(tp_system *sys, tp_error *err)
{
    mirror_side *side = calloc(1, sizeof(*side));
    if (!side)
        return NULL;
    side->sys = sys;
    side->ctx = &side->own;
    if (tp_search__ctx_tables(&side->own, sys, err) != TP_OK) {
        free(side);
        return NULL;
    }
    return side;
}

/* The link table of a side compared as a, on its compiled routes (b's are read from its system). */
static tp_status side_links(mirror_side *side, tp_error *err)
{
    const tp_accel_opts links_only = {.use = 0, .cut_cap = -1};
    if (side->links)
        return TP_OK;
    tp_status st = side->own.hop_pool ? TP_OK : tp_search__compile_routes(&side->own, err);
    return st == TP_OK ? tp_accel__new(&side->own, &links_only, &side->links, err) : st;
}

void tp_search__mirrors_free(tp_search_mirrors *cache)
{
    if (!cache)
        return;
    for (int i = 0; i < cache->n; i++)
        side_free(cache->sides[i]);
    free(cache->sides);
    free(cache);
}

/* Room for one more side in the cache. */
static int cache_room(tp_search_mirrors *c)
{
    if (c->n < c->cap)
        return 1;
    int cap = c->cap ? 2 * c->cap : 8;
    mirror_side **sides = realloc(c->sides, (size_t)cap * sizeof(*sides));
    if (!sides)
        return 0;
    c->sides = sides;
    c->cap = cap;
    return 1;
}

/*
 * sys's tables: from the cache (a system is not changed while its domain is
 * compared: its searches left its bandwidths as they were, see mirrorable)
 * or new, and then kept there. Without a cache, the caller frees them.
 */
static mirror_side *side_of(tp_search_mirrors **cache, tp_system *sys, tp_error *err)
{
    if (!cache)
        return side_new(sys, err);
    if (!*cache && !(*cache = calloc(1, sizeof(**cache))))
        return NULL;
    tp_search_mirrors *c = *cache;
    for (int i = 0; i < c->n; i++)
        if (c->sides[i]->sys == sys)
            return c->sides[i];
    if (!cache_room(c))
        return NULL;
    mirror_side *side = side_new(sys, err);
    if (side)
        c->sides[c->n++] = side;
    return side;
}

/*
 * A searched system's kept context becomes its tables in the cache: it compiled
 * what a comparison reads (and its searches left the system as it was, or no
 * comparison reads it: mirrorable), so none is compiled again.
 */
void tp_search__mirrors_adopt(tp_search_mirrors **cache, tp_system *sys, tp_search_ctx *keep)
{
    /* A kept context of tp_search__compute_kept carries the accelerators (tp_accel). */
    tp_accel *links = keep ? keep->accel_state : NULL;
    mirror_side *side = NULL;
    for (int i = 0; links && *cache && i < (*cache)->n; i++)
        if ((*cache)->sides[i]->sys == sys)
            links = NULL; /* compared before its search: its tables are there */
    if (links && (*cache || (*cache = calloc(1, sizeof(**cache)))) && cache_room(*cache))
        side = calloc(1, sizeof(*side));
    if (!side) {
        tp_search__keep_free(keep); /* the comparison compiles its own tables */
        return;
    }
    /* The search memories are not read again: only the tables stay. */
    tp_accel__table_free(&links->memo.table);
    tp_accel__pass_free(links);
    *side = (mirror_side){.sys = sys, .ctx = keep, .links = links, .kept = 1};
    (*cache)->sides[(*cache)->n++] = side;
}

/* The comparison's tables in one block: NULL when the allocation fails. */
static void *iso_tables(iso *m, size_t nn, size_t na, size_t size)
{
    size_t bytes = 0;
    size_t net_map = tp_search__place(&bytes, nn * sizeof(*m->net_map));
    size_t taken = tp_search__place(&bytes, nn);
    size_t link_key = tp_search__place(&bytes, size * sizeof(*m->link_key));
    size_t link_map = tp_search__place(&bytes, size * sizeof(*m->link_map));
    size_t link_inv = tp_search__place(&bytes, na * sizeof(*m->link_inv));
    char *block = malloc(bytes);
    if (!block)
        return NULL;
    m->net_map = (int *)(block + net_map);
    m->taken = (unsigned char *)memset(block + taken, 0, nn);
    m->link_key = (const float **)memset(block + link_key, 0, size * sizeof(*m->link_key));
    m->link_map = (int *)(block + link_map);
    m->link_inv = (const float **)memset(block + link_inv, 0, na * sizeof(*m->link_inv));
    return block;
}

/* Compare the tables of both systems: 1 when b mirrors a. */
static int compare(iso *m, mirror_side *sa, mirror_side *sb, tp_error *err)
{
    m->a = sa->ctx;
    m->b = sb->ctx;
    m->a->err = m->b->err = err;
    m->xa = sa->links;
    size_t nn = (size_t)(m->b->n_nets > 0 ? m->b->n_nets : 1);
    size_t na = (size_t)(m->xa->milli.n_links + 1);
    /* b's links in the map: one per link of a (same_link pairs them), and the one that fails;
     * the map at most half full. */
    size_t size = 1;
    while (size < 2 * (na + 1))
        size *= 2;
    m->link_mask = size - 1;
    if (!(m->block = iso_tables(m, nn, na, size)))
        return -1;
    return same_system(m);
}

tp_status tp_search__mirror(tp_search_mirrors **cache, tp_search_domain da, tp_search_domain db,
                            int n, const tp_config *cfg, int *done, tp_error *err)
{
    tp_system *a = da.sys, *b = db.sys;
    tp_graph *const *ga = da.graphs, *const *gb = db.graphs;
    *done = 0;
    if (!mirrorable(a, ga, b, n, cfg))
        return TP_OK;
    mirror_side *sa = side_of(cache, a, err), *sb = sa ? side_of(cache, b, err) : NULL;
    iso m = {0};
    int same = sa && sb && side_links(sa, err) == TP_OK ? compare(&m, sa, sb, err) : -1;
    tp_status st = same < 0 ? tp_fail_nomem(err) : TP_OK;
    for (int i = 0; i < n && same > 0 && st == TP_OK; i++)
        if (ga[i] && gb[i])
            st = rename_graph(&m, ga[i], gb[i], err);
    *done = same > 0 && st == TP_OK;
    free(m.block);
    if (!cache) {
        side_free(sa);
        side_free(sb);
    }
    return st;
}
