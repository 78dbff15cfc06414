/*
 * Stage 3: paths, as NCCL 2.22.3 computes them in src/graph/paths.cc.
 *
 * Every CPU, GPU, NET and NVS node is the root of a breadth-first search
 * that stores, in each node reached, the route back to it (links walked,
 * bottleneck bandwidth, worst path type). Policies then rewrite some routes:
 * through the CPU where P2P or GDR is not allowed, through a peer GPU for
 * PXN, or marked NET where neither P2P nor SHM can connect two GPUs.
 */
#include "paths/paths_impl.h"
#include "common/nccl_profile.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Route storage                                                       */
/* ------------------------------------------------------------------ */

/* route_reserve's slow path: a grown list moves to a new block of the system's arena. Only the
 * first hop of a new list needs clearing: hops past `count` are never read, the first one is
 * (a stale first hop stays, as in NCCL: set_reverse_link). */
tp_status tp_paths__route_grow(tp_system *sys, tp_route *r, int need, tp_error *err)
{
    int cap = r->cap ? r->cap : 4;
    while (cap < need)
        cap *= 2;
    tp_link **list = tp_arena_alloc(&sys->routes, (size_t)cap * sizeof(*list));
    if (!list)
        return tp_fail_nomem(err);
    if (r->cap > 0)
        memcpy(list, r->list, (size_t)r->cap * sizeof(*list));
    else
        list[0] = NULL;
    r->list = list;
    r->cap = cap;
    return TP_OK;
}

/* Room for `need` hops. */
static inline tp_status route_reserve(tp_system *sys, tp_route *r, int need, tp_error *err)
{
    return need <= r->cap ? TP_OK : tp_paths__route_grow(sys, r, need, err);
}

/* Hops every route gets with its node's routes: the search reaches every route of a connected
 * system, and most are short, so few grow (route_grow) past these. */
#define TP_ROUTE_FIRST_HOPS 8

/* Each route comes with room for its first hops, in the same block; its first hop is clear
 * (see tp_paths__route_grow). */
tp_status tp_paths__routes_alloc(tp_system *sys, tp_route **out, int count, bool disconnected,
                                 tp_error *err)
{
    size_t n = count > 0 ? (size_t)count : 1;
    _Static_assert(sizeof(tp_route) % _Alignof(tp_link *) == 0, "hops follow the routes");
    tp_route *routes = tp_arena_alloc(
        &sys->routes, n * (sizeof(*routes) + TP_ROUTE_FIRST_HOPS * sizeof(tp_link *)));
    if (!routes)
        return tp_fail_nomem(err);
    tp_link **hops = (tp_link **)(void *)(routes + n);
    int type = disconnected ? TP_PATH_DIS : TP_PATH_LOC;
    for (size_t i = 0; i < n; i++) {
        tp_link **list = hops + i * TP_ROUTE_FIRST_HOPS;
        list[0] = NULL;
        routes[i] = (tp_route){.list = list, .cap = TP_ROUTE_FIRST_HOPS, .type = type};
    }
    *out = routes;
    return TP_OK;
}

/* ------------------------------------------------------------------ */
/* Lookups (topo.h's ncclTopoIdToIndex and friends)                    */
/* ------------------------------------------------------------------ */

int tp_paths__id_to_index(const tp_system *sys, int type, int64_t id)
{
    for (int i = 0; i < sys->nodes[type].count; i++)
        if (sys->nodes[type].nodes[i].id == id)
            return i;
    return -1;
}

int tp_paths__rank_to_index(const tp_system *sys, int rank)
{
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++)
        if (sys->nodes[TP_NODE_GPU].nodes[i].gpu.rank == rank)
            return i;
    return -1;
}

tp_status tp_paths__internal(tp_error *err, const char *what)
{
    return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "paths: %s", what);
}

/* The route from node to the node of `type` at `index` (NULL when never computed). */
static tp_route *route_to(const tp_node *node, int type, int index)
{
    return node->paths[type] ? &node->paths[type][index] : NULL;
}

/* ------------------------------------------------------------------ */
/* The breadth-first search (ncclTopoSetPaths)                         */
/* ------------------------------------------------------------------ */

typedef struct bfs_state {
    tp_system *sys;
    tp_node *base;
    int base_index; /* where the routes to base are stored (first node with its id) */
    bool nvb_disable;
    bool type_first; /* TP_RULE_PATHS_TYPE_FIRST */
    tp_node **cur, **next;
    int n_cur, n_next;
    /* Per node (its slot): the last level that queued it. */
    unsigned *queued_at;
    tp_node_slots slots;
    unsigned level;
    tp_log *log;
} bfs_state;

/* NCCL 2.22.3: the path type a link adds, from the link type and its ends. */
static int step_type(const tp_node *node, const tp_link *link, const tp_route *path, int rem_count)
{
    int type = link->type == TP_LINK_NET ? TP_LINK_LOC : link->type;
    if (node->type == TP_NODE_PCI && link->rem->type == TP_NODE_PCI)
        type = TP_PATH_PXB;
    if (link->type == TP_LINK_PCI && (node->type == TP_NODE_CPU || link->rem->type == TP_NODE_CPU))
        type = TP_PATH_PHB;
    if (node->type == TP_NODE_GPU && path->type == TP_PATH_NVL && type == TP_PATH_NVL &&
        rem_count > 1)
        type = TP_PATH_NVB;
    return path->type > type ? path->type : type;
}

/* Point rem_path's first hop at the link from rem back to node (a stale one stays, as in NCCL). */
static tp_status set_reverse_link(bfs_state *s, tp_node *node, const tp_link *link,
                                  tp_route *rem_path, tp_error *err)
{
    tp_node *rem = link->rem;
    for (int l = 0; l < rem->n_links; l++) {
        if (rem->links[l].rem == node && rem->links[l].type == link->type) {
            rem_path->list[0] = &rem->links[l];
            break;
        }
    }
    if (rem_path->list[0])
        return TP_OK;
    tp_log_warn(s->log,
                "Failed to find reverse path from remNode %d/%llx nlinks %d to node %d/%llx",
                rem->type, (unsigned long long)rem->id, rem->n_links, node->type,
                (unsigned long long)node->id);
    return tp_fail(err, TP_ERR_TOPOLOGY, link->line ? s->sys->source : NULL, link->line,
                   link->column,
                   "%s/%llx has a link to %s/%llx without a link back (NCCL fails the path "
                   "computation)",
                   tp_node_type_name(node->type), (unsigned long long)node->id,
                   tp_node_type_name(rem->type), (unsigned long long)rem->id);
}

/* NCCL 2.22.3: only one GPU may be crossed, over NVLink, towards another GPU (NVB). */
static bool blocked_by_gpu(const bfs_state *s, const tp_node *node, const tp_link *link,
                           const tp_route *path)
{
    return node != s->base && node->type == TP_NODE_GPU &&
           (s->nvb_disable || link->type != TP_LINK_NVL || link->rem->type != TP_NODE_GPU ||
            path->count > 1);
}

/*
 * 2.30.7 (TP_RULE_PATHS_TYPE_FIRST): a better path type wins, then a wider route, then one of
 * strictly fewer hops (2.22.3: a wider route only, and only if not longer). Hop counts here lack
 * the DEV hops of 2.30.3, but both routes compared end at the same two nodes: they would gain the
 * same.
 */
static bool type_first_better(const tp_route *rem_path, const tp_route *path, int type, float bw)
{
    if (type != rem_path->type)
        return type < rem_path->type;
    return rem_path->bw < bw || (rem_path->bw == bw && rem_path->count > path->count + 1);
}

static void queue_next(bfs_state *s, tp_node *node)
{
    size_t slot = tp_paths__slot(&s->slots, s->sys, node);
    if (s->queued_at[slot] == s->level)
        return; /* already queued for the next level */
    s->queued_at[slot] = s->level;
    s->next[s->n_next++] = node;
}

/* One link of node, whose route to the base is path. */
static tp_status visit_link(bfs_state *s, tp_node *node, const tp_route *path, tp_link *link,
                            tp_error *err)
{
    int bt = s->base->type;
    tp_node *rem = link->rem;
    tp_status st;
    if (!rem->paths[bt] &&
        (st = tp_paths__routes_alloc(s->sys, &rem->paths[bt], s->sys->nodes[bt].count, true,
                                     err)) != TP_OK)
        return st;
    tp_route *rem_path = &rem->paths[bt][s->base_index];
    float bw = link->bw < path->bw ? link->bw : path->bw;
    if (blocked_by_gpu(s, node, link, path))
        return TP_OK;
    int type = step_type(node, link, path, path->count + 1);
    if (!(s->type_first
              ? type_first_better(rem_path, path, type, bw)
              : (rem_path->bw == 0 || rem_path->count > path->count) && rem_path->bw < bw))
        return TP_OK;
    if ((st = route_reserve(s->sys, rem_path, path->count + 1, err)) != TP_OK)
        return st;
    if ((st = set_reverse_link(s, node, link, rem_path, err)) != TP_OK)
        return st;
    for (int i = 0; i < path->count; i++)
        rem_path->list[i + 1] = path->list[i];
    rem_path->count = path->count + 1;
    rem_path->bw = bw;
    rem_path->type = type;
    queue_next(s, rem);
    return TP_OK;
}

static tp_status set_paths(bfs_state *s, tp_node *base, tp_error *err)
{
    int bt = base->type;
    tp_status st;
    if (!base->paths[bt] &&
        (st = tp_paths__routes_alloc(s->sys, &base->paths[bt], s->sys->nodes[bt].count,
                                     s->type_first, err)) != TP_OK) /* 2.30.7 compares types */
        return st;
    s->base = base;
    s->base_index = tp_paths__id_to_index(s->sys, bt, base->id);
    tp_route *base_path = &base->paths[bt][s->base_index];
    base_path->count = 0;
    base_path->bw = TP_LOC_BW;
    base_path->type = TP_PATH_LOC;
    s->cur[0] = base;
    s->n_cur = 1;
    while (s->n_cur) {
        s->n_next = 0;
        s->level++;
        for (int n = 0; n < s->n_cur; n++) {
            tp_node *node = s->cur[n];
            const tp_route *path = &node->paths[bt][s->base_index];
            for (int l = 0; l < node->n_links; l++)
                if ((st = visit_link(s, node, path, &node->links[l], err)) != TP_OK)
                    return st;
        }
        tp_node **swap = s->cur;
        s->cur = s->next;
        s->next = swap;
        s->n_cur = s->n_next;
    }
    return TP_OK;
}

void tp_paths__number_nodes(const tp_system *sys, tp_node_slots *out)
{
    out->total = 0;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        out->first_of[t] = out->total;
        out->total += (size_t)sys->nodes[t].count;
    }
}

/* The root type of each search kind (TP_SEARCH_CPUS...); a failed search is reported by
 * ncclTopoComputePaths' check at that loop's line. */
static const int search_roots[TP_SEARCH_KINDS] = {TP_NODE_CPU, TP_NODE_GPU, TP_NODE_NET,
                                                  TP_NODE_NVS};
/* The searches the GPU domains read: from CPUs and GPUs. */
#define TP_DOMAIN_SEARCHES TP_SEARCH_NETS

tp_status tp_paths__searches(tp_system *sys, const tp_config *cfg, tp_log *log, int first, int last,
                             tp_error *err)
{
    const int *roots = search_roots;
    static const int check_lines[] = {TP_NCCL_LINE_PATHS_CPU, TP_NCCL_LINE_PATHS_GPU,
                                      TP_NCCL_LINE_PATHS_NET, TP_NCCL_LINE_PATHS_NVS};
    bfs_state s = {
        .sys = sys,
        .log = log,
        .nvb_disable = tp_config_int(cfg, TP_P_NVB_DISABLE) != 0,
        .type_first = tp_profile_has(tp_config__profile(cfg), TP_RULE_PATHS_TYPE_FIRST),
    };
    tp_paths__number_nodes(sys, &s.slots);
    size_t total = s.slots.total;
    /* One block: the two queues, then the levels (cleared: no node queued yet). */
    tp_node **block = calloc(total + 1, 2 * sizeof(*s.cur) + sizeof(*s.queued_at));
    if (!block)
        return tp_fail_nomem(err);
    s.cur = block;
    s.next = block + total + 1;
    s.queued_at = (unsigned *)(void *)(s.next + total + 1);
    tp_status st = TP_OK;
    for (int r = first; st == TP_OK && r < last; r++) {
        for (int i = 0; st == TP_OK && i < sys->nodes[roots[r]].count; i++)
            st = set_paths(&s, &sys->nodes[roots[r]].nodes[i], err);
        if (st == TP_ERR_TOPOLOGY)
            tp_log_info_sub(log, TP_SUB_ALL, "graph/paths.cc:%d -> %d", check_lines[r],
                            TP_NCCL_INTERNAL_ERROR);
    }
    free(block);
    return st;
}

/* ------------------------------------------------------------------ */
/* Route rewrites                                                      */
/* ------------------------------------------------------------------ */

/* getLocalCpu: the CPU with the fewest hops from GPU g (NCCL 2.22.3 skips 0-hop routes). */
static tp_status local_cpu(const tp_system *sys, int g, int *cpu, tp_log *log, tp_error *err)
{
    const tp_route *paths = sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_CPU];
    int min_hops = 0, best = -1;
    for (int c = 0; paths && c < sys->nodes[TP_NODE_CPU].count; c++) {
        if (min_hops == 0 || paths[c].count < min_hops) {
            best = c;
            min_hops = paths[c].count;
        }
    }
    if (best == -1) {
        tp_log_warn(log, "Error : could not find CPU close to GPU %d", g);
        return tp_paths__internal(err, "no CPU close to a GPU");
    }
    *cpu = best;
    return TP_OK;
}

/* addInterStep: route (t1,i1)->(t2,i2) becomes (t1,i1)->(tx,ix)->(t2,i2). */
static tp_status add_inter_step(tp_system *sys, int tx, int ix, int t1, int i1, int t2, int i2,
                                tp_error *err)
{
    tp_node *mid = &sys->nodes[tx].nodes[ix];
    tp_node *src = &sys->nodes[t1].nodes[i1];
    tp_route *r = route_to(src, t2, i2), *a = route_to(src, tx, ix), *b = route_to(mid, t2, i2);
    if (!r || !a || !b)
        return tp_paths__internal(err, "inter step on a route never computed");
    tp_status st = route_reserve(sys, r, a->count + b->count, err);
    if (st != TP_OK)
        return st;
    int l = 0;
    for (int i = 0; i < a->count; i++)
        r->list[l++] = a->list[i];
    for (int i = 0; i < b->count; i++)
        r->list[l++] = b->list[i];
    r->count = l;
    r->type = a->type > b->type ? a->type : b->type;
    if (tx == TP_NODE_GPU)
        r->type = TP_PATH_PXN;
    r->bw = b->bw < a->bw ? b->bw : a->bw;
    return TP_OK;
}

/* ------------------------------------------------------------------ */
/* P2P, NET and SHM checks                                             */
/* ------------------------------------------------------------------ */

/* ncclGetLevel(NCCL_P2P_DISABLE, NCCL_P2P_LEVEL): LOC when P2P is disabled, else the user's level.
 */
static int user_p2p_level(const tp_config *cfg)
{
    /* NCCL 2.22.3 ncclGetLevel: an int from strtol, disabled when it is 1. */
    if (tp_config_is_set(cfg, TP_P_P2P_DISABLE) && (int)tp_config_int(cfg, TP_P_P2P_DISABLE) == 1)
        return TP_PATH_LOC;
    return (int)tp_config_int(cfg, TP_P_P2P_LEVEL);
}

/* From 2.23 P2P stays below the CPU unless an AMD x86 host has at most 2 GPUs. */
static int default_p2p_level_pxb(const tp_system *sys)
{
    const tp_node *cpu = sys->nodes[TP_NODE_CPU].count ? &sys->nodes[TP_NODE_CPU].nodes[0] : NULL;
    if (cpu && cpu->cpu.arch == TP_CPU_ARCH_X86 && cpu->cpu.vendor == TP_CPU_VENDOR_AMD &&
        sys->nodes[TP_NODE_GPU].count <= 2)
        return TP_PATH_SYS;
    return TP_P2P_LEVEL_RESTRICTED;
}

/* NCCL 2.22.3: P2P is kept below the CPU on ARM, Intel and Zhaoxin CPUs. */
static int default_p2p_level(const tp_system *sys, const tp_config *cfg)
{
    if (tp_profile_has(tp_config__profile(cfg), TP_RULE_P2P_LEVEL_PXB))
        return default_p2p_level_pxb(sys);
    if (sys->nodes[TP_NODE_CPU].count == 0)
        return TP_P2P_LEVEL_DEFAULT;
    const tp_node *cpu = &sys->nodes[TP_NODE_CPU].nodes[0];
    if (cpu->cpu.arch == TP_CPU_ARCH_ARM)
        return TP_P2P_LEVEL_RESTRICTED;
    if (cpu->cpu.arch == TP_CPU_ARCH_X86 &&
        (cpu->cpu.vendor == TP_CPU_VENDOR_INTEL || cpu->cpu.vendor == TP_CPU_VENDOR_ZHAOXIN))
        return TP_P2P_LEVEL_RESTRICTED;
    return TP_P2P_LEVEL_DEFAULT;
}

/* The P2P level in force: the user's, else the CPU's default. */
static int p2p_level(const tp_system *sys, const tp_config *cfg)
{
    int level = user_p2p_level(cfg);
    return level == TP_LEVEL_UNSET ? default_p2p_level(sys, cfg) : level;
}

/* NCCL ncclTopoCheckP2p: P2P read only between GPUs of the profile's compute capability over
 * NVLink. */
static int p2p_read(const tp_nccl_profile *p, const tp_system *sys, int g1, int g2)
{
    const tp_node *gpu1 = &sys->nodes[TP_NODE_GPU].nodes[g1];
    const tp_node *gpu2 = &sys->nodes[TP_NODE_GPU].nodes[g2];
    const tp_route *path = route_to(gpu1, TP_NODE_GPU, g2);
    return path->type == TP_PATH_NVL && gpu1->gpu.cuda_comp_cap == gpu2->gpu.cuda_comp_cap &&
           gpu1->gpu.cuda_comp_cap == p->p2p_read_cc;
}

/* tp_paths__check_p2p on GPU indices g1, g2 (as the id lookups give them) at `level`. */
static tp_status check_p2p_at(const tp_system *sys, int level, int g1, int g2, int *p2p,
                              int *intermediate_rank, tp_error *err)
{
    const tp_node *gpu1 = &sys->nodes[TP_NODE_GPU].nodes[g1];
    const tp_route *path = route_to(gpu1, TP_NODE_GPU, g2);
    if (!path)
        return tp_paths__internal(err, "P2P check before the paths");
    if (path->count == 2 && path->list[0]->rem->type == TP_NODE_GPU && intermediate_rank)
        *intermediate_rank = path->list[0]->rem->gpu.rank;
    /* Every GPU pair is P2P-capable here (no NVML to say otherwise). */
    if (path->type <= level)
        *p2p = 1;
    return TP_OK;
}

tp_status tp_paths__check_p2p(const tp_system *sys, const tp_config *cfg, int64_t id1, int64_t id2,
                              int *p2p, int *read, int *intermediate_rank, tp_error *err)
{
    *p2p = 0;
    if (read)
        *read = 0;
    if (intermediate_rank)
        *intermediate_rank = -1;
    int g1 = tp_paths__id_to_index(sys, TP_NODE_GPU, id1);
    if (g1 < 0)
        return tp_paths__internal(err, "P2P check on an unknown GPU");
    int g2 = tp_paths__id_to_index(sys, TP_NODE_GPU, id2);
    if (g2 < 0)
        return TP_OK; /* NCCL 2.22.3: a GPU not in the system cannot use P2P */
    tp_status st = check_p2p_at(sys, p2p_level(sys, cfg), g1, g2, p2p, intermediate_rank, err);
    if (st == TP_OK && read)
        *read = p2p_read(tp_config__profile(cfg), sys, g1, g2);
    return st;
}

/* The best bandwidth from a GPU to a NET at PXB or better. */
static float best_close_net_bw(const tp_system *sys, const tp_node *gpu)
{
    float best = 0;
    for (int n = 0; gpu->paths[TP_NODE_NET] && n < sys->nodes[TP_NODE_NET].count; n++) {
        const tp_route *path = &gpu->paths[TP_NODE_NET][n];
        if (path->type <= TP_PATH_PXB && path->bw > best)
            best = path->bw;
    }
    return best;
}

/* NCCL 2.22.3: the network wins when both GPUs reach a close NIC faster than each other. */
static bool net_faster_at(const tp_system *sys, int g1, int g2)
{
    const tp_node *gpu1 = &sys->nodes[TP_NODE_GPU].nodes[g1];
    const tp_node *gpu2 = &sys->nodes[TP_NODE_GPU].nodes[g2];
    float speed = gpu1->paths[TP_NODE_GPU][g2].bw;
    return best_close_net_bw(sys, gpu1) > speed && best_close_net_bw(sys, gpu2) > speed;
}

tp_status tp_paths__check_net(const tp_system *sys, const tp_config *cfg, int64_t id1, int64_t id2,
                              int *net)
{
    if (tp_config_int(cfg, TP_P_NET_DISABLE_INTRA) == 1) {
        *net = 0;
        return TP_OK;
    }
    int g1 = tp_paths__id_to_index(sys, TP_NODE_GPU, id1);
    int g2 = tp_paths__id_to_index(sys, TP_NODE_GPU, id2);
    *net = g1 < 0 || g2 < 0 || net_faster_at(sys, g1, g2);
    return TP_OK;
}

/*
 * What the P2P and SHM checks of one path computation share: the P2P level,
 * and each GPU's index as the id lookups give it (the first GPU with its id),
 * found once instead of per pair.
 */
typedef struct pair_checks {
    tp_system *sys;
    const tp_config *cfg;
    int level;
    int *at;           /* per GPU index */
    unsigned *pending; /* tp_paths__compute_domains: the NET searches may wait (else NULL) */
    float net_link_bw; /* the widest link of a NET node: no route to a NET is wider */
    tp_log *log;
} pair_checks;

/* The widest link out of any NET node. A route to a NET starts (its search from the NET) on one
 * of the NET's links, and a route is no wider than any of its links. */
static float widest_net_link(const tp_system *sys)
{
    float widest = 0;
    const tp_node_set *nets = &sys->nodes[TP_NODE_NET];
    for (int n = 0; n < nets->count; n++)
        for (int l = 0; l < nets->nodes[n].n_links; l++)
            if (nets->nodes[n].links[l].bw > widest)
                widest = nets->nodes[n].links[l].bw;
    return widest;
}

/* NCCL 2.22.3 checkNet between GPUs p and g (indices in the system): *use, after the NET
 * searches when they waited. */
static tp_status use_net(const pair_checks *pc, int p, int g, bool *use, tp_error *err)
{
    *use = false;
    tp_config__log_env(pc->cfg, TP_P_NET_DISABLE_INTRA,
                       pc->log); /* ncclTopoCheckNet's first read */
    if (tp_config_int(pc->cfg, TP_P_NET_DISABLE_INTRA) == 1)
        return TP_OK;
    if (pc->pending && (*pc->pending & TP_PATHS_NET_SEARCHES)) {
        /* No close NET can be faster than a GPU route at least as wide as every NET link: the
         * NET searches may wait still (a system trimmed next never needs them). */
        const tp_node *gp = &pc->sys->nodes[TP_NODE_GPU].nodes[pc->at[p]];
        if (gp->paths[TP_NODE_GPU][pc->at[g]].bw >= pc->net_link_bw)
            return TP_OK;
        tp_status st =
            tp_paths__searches(pc->sys, pc->cfg, pc->log, TP_DOMAIN_SEARCHES, TP_SEARCH_KINDS, err);
        if (st != TP_OK)
            return st;
        *pc->pending &= ~TP_PATHS_NET_SEARCHES;
    }
    *use = net_faster_at(pc->sys, pc->at[p], pc->at[g]);
    return TP_OK;
}

/*
 * The P2P transport's canConnect between GPUs p and g of this host (NCCL 2.22.3
 * p2p.cc): the P2P level, then "would NET be faster", unless the route
 * crosses an intermediate GPU. CUDA P2P and IPC always work here.
 */
static tp_status p2p_can_connect(const pair_checks *pc, int p, int g, int *ret, tp_error *err)
{
    int inter = -1;
    *ret = 0;
    tp_config__log_env(pc->cfg, TP_P_MNNVL_ENABLE, pc->log); /* p2pCanConnect's first read */
    tp_status st = check_p2p_at(pc->sys, pc->level, pc->at[p], pc->at[g], ret, &inter, err);
    if (st != TP_OK || *ret == 0 || inter != -1)
        return st;
    bool net;
    if ((st = use_net(pc, p, g, &net, err)) == TP_OK && net)
        *ret = 0;
    return st;
}

/* The SHM transport's canConnect (NCCL 2.22.3 shm.cc): same host, same /dev/shm here. */
static tp_status shm_can_connect(const pair_checks *pc, int p, int g, int *ret, tp_error *err)
{
    *ret = 0;
    tp_config__log_env(pc->cfg, TP_P_SHM_DISABLE, pc->log);
    if (tp_config_int(pc->cfg, TP_P_SHM_DISABLE) == 1)
        return TP_OK;
    bool net;
    tp_status st = use_net(pc, p, g, &net, err);
    *ret = st == TP_OK && !net;
    return st;
}

/* NCCL 2.22.3: GPU pairs without P2P go through the CPU local to the destination GPU. */
static tp_status divert_p2p(tp_system *sys, const pair_checks *pc, int g, tp_log *log,
                            tp_error *err)
{
    tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int p = 0; p < gpus->count; p++) {
        int p2p = 0, cpu;
        tp_status st = check_p2p_at(sys, pc->level, pc->at[p], pc->at[g], &p2p, NULL, err);
        if (st != TP_OK)
            return st;
        if (p2p)
            continue;
        if ((st = local_cpu(sys, g, &cpu, log, err)) != TP_OK)
            return st;
        if ((st = add_inter_step(sys, TP_NODE_CPU, cpu, TP_NODE_GPU, p, TP_NODE_GPU, g, err)))
            return st;
    }
    return TP_OK;
}

/* NCCL 2.22.3: peers neither P2P nor SHM can reach are marked NET (trimmed later). */
static tp_status mark_unreachable(tp_system *sys, const pair_checks *pc, int g, tp_error *err)
{
    tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    for (int p = 0; p < gpus->count; p++) {
        if (p == g)
            continue;
        int p2p, shm = 0;
        tp_status st = p2p_can_connect(pc, p, g, &p2p, err);
        if (st == TP_OK && p2p == 0)
            st = shm_can_connect(pc, p, g, &shm, err);
        if (st != TP_OK)
            return st;
        if (p2p == 0 && !shm)
            gpus->nodes[p].paths[TP_NODE_GPU][g].type = TP_PATH_NET;
    }
    return TP_OK;
}

/*
 * NCCL 2.22.3 ncclGetLevel's line for the P2P level the user sets (NCCL_P2P_DISABLE=1 reads
 * as LOC): printed at the first ncclTopoCheckP2p, in the first path computation, once
 * (the level is kept in a static); NCCL_NVB_DISABLE's, read in the same computation before.
 */
static void log_p2p_level(const tp_system *sys, const tp_config *cfg, tp_log *log)
{
    int level = user_p2p_level(cfg);
    if (!log || sys->nodes[TP_NODE_GPU].count == 0)
        return;
    /* read before it, by ncclTopoSetPaths as soon as a route goes on from a GPU */
    tp_config__log_env(cfg, TP_P_NVB_DISABLE, log);
    /* from 2.23 ncclGetLevel names the disabling variable itself (rule log-p2p-disable) */
    if (level == TP_PATH_LOC && tp_config_is_set(cfg, TP_P_P2P_DISABLE) &&
        (int)tp_config_int(cfg, TP_P_P2P_DISABLE) == 1 &&
        tp_profile_has(tp_config__profile(cfg), TP_RULE_LOG_P2P_DISABLE))
        tp_config__log_once(log, TP_SUB_ALL, "NCCL_P2P_DISABLE set by environment to 1");
    else
        tp_config__log_level(cfg, TP_P_P2P_LEVEL, level, log);
}

/* The GPUs' P2P and SHM rewrites, GPU by GPU (NCCL 2.22.3 ncclTopoComputePaths). */
static tp_status gpu_policies(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                              tp_log *log, unsigned *pending, tp_error *err)
{
    log_p2p_level(sys, cfg, log);
    int n = sys->nodes[TP_NODE_GPU].count;
    pair_checks pc = {.sys = sys,
                      .cfg = cfg,
                      .level = p2p_level(sys, cfg),
                      .pending = pending,
                      .net_link_bw = pending ? widest_net_link(sys) : 0,
                      .log = log};
    if (!(pc.at = malloc(((size_t)n + 1) * sizeof(int))))
        return tp_fail_nomem(err);
    for (int g = 0; g < n; g++)
        pc.at[g] = tp_paths__id_to_index(sys, TP_NODE_GPU, sys->nodes[TP_NODE_GPU].nodes[g].id);
    tp_status st = TP_OK;
    for (int g = 0; st == TP_OK && g < n; g++) {
        st = divert_p2p(sys, &pc, g, log, err);
        if (st == TP_OK && job)
            st = mark_unreachable(sys, &pc, g, err);
    }
    free(pc.at);
    return st;
}

/* ------------------------------------------------------------------ */
/* GDR and PXN                                                          */
/* ------------------------------------------------------------------ */

int tp_paths__pxn_disable(const tp_config *cfg)
{
    /* NCCL 2.22.3 ncclPxnDisable: the net plugin modelled is not v4. */
    return (int)tp_config_int(cfg, TP_P_PXN_DISABLE);
}

/* NCCL 2.22.3: pre-sm80 GDR reads only when the GPU has an NVLink peer (or is alone). */
static bool gdr_read_allowed(const tp_system *sys, const tp_config *cfg, int g)
{
    int param = (int)tp_config_int(cfg, TP_P_NET_GDR_READ); /* NCCL 2.22.3 keeps an int */
    const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
    if (param == 0)
        return false;
    if (param > 0 || gpu->gpu.cuda_comp_cap >= tp_config__profile(cfg)->gdr_read_min_cc)
        return true;
    if (sys->nodes[TP_NODE_GPU].count == 1)
        return true;
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++)
        if (i != g && gpu->paths[TP_NODE_GPU][i].type == TP_PATH_NVL)
            return true;
    return false;
}

/* ncclTopoCheckGdr's distance test: *distance is -1 when the NIC or GPU rules GDR out first. */
static tp_status gdr_decide(const tp_system *sys, const tp_config *cfg, int g, int n, int read,
                            int *use_gdr, int *distance_out, int *level_out, tp_error *err)
{
    *use_gdr = 0;
    *distance_out = -1;
    int64_t net_id = sys->nodes[TP_NODE_NET].nodes[n].id;
    const tp_node *net = &sys->nodes[TP_NODE_NET].nodes[n];
    const tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
    if (net->net.gdr_support == 0 || gpu->gpu.gdr_support == 0)
        return TP_OK;
    if (read && !gdr_read_allowed(sys, cfg, g))
        return TP_OK;
    int level = (int)tp_config_int(cfg, TP_P_NET_GDR_LEVEL);
    if (level == TP_LEVEL_UNSET)
        level = TP_NET_GDR_LEVEL_DEFAULT;
    int distance = gpu->paths[TP_NODE_NET][n].type;
    if (distance == TP_PATH_PXN) {
        /* NCCL 2.22.3: with PXN, the proxy GPU's distance to the NIC counts. */
        int proxy_rank, pg;
        tp_status st =
            tp_paths__get_intermediate_rank(sys, gpu->gpu.rank, net_id, &proxy_rank, NULL, err);
        if (st != TP_OK)
            return st;
        if ((pg = tp_paths__rank_to_index(sys, proxy_rank)) < 0)
            return tp_paths__internal(err, "PXN proxy rank not in the system");
        distance = sys->nodes[TP_NODE_GPU].nodes[pg].paths[TP_NODE_NET][n].type;
    }
    *distance_out = distance;
    *level_out = level;
    if (distance > level)
        return TP_OK;
    *use_gdr = 1;
    return TP_OK;
}

tp_status tp_paths__check_gdr(const tp_system *sys, const tp_config *cfg, int64_t bus_id,
                              int64_t net_id, int read, int *use_gdr, tp_error *err)
{
    *use_gdr = 0;
    int n = tp_paths__id_to_index(sys, TP_NODE_NET, net_id);
    int g = tp_paths__id_to_index(sys, TP_NODE_GPU, bus_id);
    if (n < 0 || g < 0)
        return tp_paths__internal(err, "GDR check on an unknown GPU or NET");
    int distance, level;
    return gdr_decide(sys, cfg, g, n, read, use_gdr, &distance, &level, err);
}

/* The "GPU Direct RDMA Enabled/Disabled" lines: NCCL_NET ones in 2.22.3 (not logged), also
 * NCCL_GRAPH from 2.26 on (TP_RULE_LOG_GDR_MODE), path types in the profile's numbering. */
/* Keep the place of the log's last line, a GDR line (a failed line leaves them incomplete). */
static void keep_gdr(tp_gdr_lines *kept, const tp_log *log)
{
    if (!kept || kept->failed || !log || !log->enabled)
        return;
    if (log->failed) {
        kept->failed = true;
        return;
    }
    if (kept->count == kept->cap) {
        int cap = kept->cap ? 2 * kept->cap : 64;
        size_t *grown = realloc(kept->at, (size_t)cap * sizeof(*grown));
        if (!grown) {
            kept->failed = true;
            return;
        }
        kept->at = grown;
        kept->cap = cap;
    }
    kept->at[kept->count++] = log->n_lines - 1;
}

static void log_gdr(tp_log *log, tp_gdr_lines *kept, const tp_nccl_profile *p, const tp_node *gpu,
                    int64_t net_id, int use_gdr, int distance, int level)
{
    if (!tp_profile_has(p, TP_RULE_LOG_GDR_MODE) || tp_profile_has(p, TP_RULE_GDR_LOG_TRACE) ||
        distance < 0)
        return;
    int d = tp_nccl_profile__path_number(p, tp_path_type_name(distance));
    int l = tp_nccl_profile__path_number(p, tp_path_type_name(level));
    if (use_gdr)
        tp_log_info_sub(log, TP_SUB_GRAPH,
                        "GPU Direct RDMA Enabled for GPU %d / HCA %llx (distance %d <= %d), read 0 "
                        "mode Default",
                        gpu->gpu.rank, (unsigned long long)net_id, d, l);
    else
        tp_log_info_sub(log, TP_SUB_GRAPH,
                        "GPU Direct RDMA Disabled for GPU %d / HCA %llx (distance %d > %d)",
                        gpu->gpu.rank, (unsigned long long)net_id, d, l);
    keep_gdr(kept, log);
}

void tp_paths__gdr_lines_free(tp_gdr_lines *l)
{
    free(l->at);
    *l = (tp_gdr_lines){0};
}

void tp_paths__log_gdr_lines(const tp_gdr_lines *l, tp_log *log)
{
    for (int i = 0; i < l->count; i++) {
        const tp_log_line *line = &log->lines[l->at[i]];
        tp_log_put_sub(log, line->sub, line->text); /* the text stays put as the log grows */
    }
}

/*
 * NCCL 2.22.3 asks ncclTopoGetLocalGpu for every (NET, GPU) pair; the answer for NET n
 * is kept while nothing it read changes (routes from the GPUs it read, from a NET), and so is
 * each GPU's list of local NETs, which the answers for the other NETs read again.
 */
typedef struct local_gpu_cache {
    int net;                  /* the NET index the answer is for; -1: none */
    int gpu;                  /* the answer */
    tp_local_nets_memo *memo; /* the GPUs' local NETs, and which ones the answer read */
} local_gpu_cache;

/* GPU g's route to a NET changed (any_gpu: a route from a NET too, which every answer reads). */
static void local_gpu_changed(local_gpu_cache *lc, int g, bool any_gpu)
{
    if (lc->net >= 0 && (any_gpu || tp_paths__local_nets_memo_read(lc->memo, g)))
        lc->net = -1;
    tp_paths__local_nets_memo_forget(lc->memo, any_gpu ? -1 : g);
}

static tp_status local_gpu_of(const tp_system *sys, local_gpu_cache *lc, int n, int *lg,
                              tp_error *err)
{
    if (lc->net == n) {
        *lg = lc->gpu;
        return TP_OK;
    }
    tp_status st =
        tp_paths__get_local_gpu_reads(sys, sys->nodes[TP_NODE_NET].nodes[n].id, lg, lc->memo, err);
    lc->net = st == TP_OK ? n : -1;
    lc->gpu = *lg;
    return st;
}

/* NCCL 2.22.3: send to NET n from GPU g through the NIC's own GPU over NVLink (PXN). */
static tp_status try_pxn(tp_system *sys, local_gpu_cache *lc, int n, int g, tp_error *err)
{
    tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
    int lg;
    tp_status st = local_gpu_of(sys, lc, n, &lg, err);
    if (st != TP_OK || lg == g || lg == -1)
        return st;
    const tp_node *peer = &sys->nodes[TP_NODE_GPU].nodes[lg];
    const tp_route *peer_net = &peer->paths[TP_NODE_NET][n];
    const tp_route *gpu_net = &gpu->paths[TP_NODE_NET][n];
    if (peer_net->type <= TP_PATH_PXB && peer->paths[TP_NODE_GPU][g].type <= TP_PATH_NVL &&
        TP_ID_SYSTEM_ID(peer->id) == TP_ID_SYSTEM_ID(gpu->id) &&
        (peer_net->bw > gpu_net->bw || gpu_net->type > TP_PATH_PXB)) {
        local_gpu_changed(lc, g, false); /* GPU g's route to NET n */
        return add_inter_step(sys, TP_NODE_GPU, lg, TP_NODE_GPU, g, TP_NODE_NET, n, err);
    }
    return TP_OK;
}

/* NCCL 2.22.3: without GDR, NIC traffic goes through the CPU local to the GPU, both ways. */
static tp_status check_gdr_route(tp_system *sys, const tp_config *cfg, local_gpu_cache *lc, int n,
                                 int g, tp_log *log, tp_gdr_lines *kept, tp_error *err)
{
    tp_node *gpu = &sys->nodes[TP_NODE_GPU].nodes[g];
    if (gpu->paths[TP_NODE_NET][n].type >= TP_PATH_PHB)
        return TP_OK;
    int gdr, cpu, distance, level;
    tp_status st = gdr_decide(sys, cfg, g, n, 0, &gdr, &distance, &level, err);
    if (st == TP_OK && distance >= 0 && tp_config_is_set(cfg, TP_P_NET_GDR_LEVEL))
        tp_config__log_level(cfg, TP_P_NET_GDR_LEVEL, level, log); /* ncclGetLevel, first read */
    if (st == TP_OK)
        log_gdr(log, kept, tp_config__profile(cfg), gpu, sys->nodes[TP_NODE_NET].nodes[n].id, gdr,
                distance, level);
    if (st != TP_OK || gdr)
        return st;
    if ((st = local_cpu(sys, g, &cpu, log, err)) != TP_OK)
        return st;
    local_gpu_changed(lc, g, true); /* a route from a NET changes */
    if ((st = add_inter_step(sys, TP_NODE_CPU, cpu, TP_NODE_NET, n, TP_NODE_GPU, g, err)))
        return st;
    return add_inter_step(sys, TP_NODE_CPU, cpu, TP_NODE_GPU, g, TP_NODE_NET, n, err);
}

static tp_status net_policies(tp_system *sys, const tp_config *cfg, tp_log *log, tp_gdr_lines *kept,
                              tp_error *err)
{
    bool pxn = tp_paths__pxn_disable(cfg) != 1;
    /* ncclPxnDisable reads it at the first (NET, GPU) pair, once (a static) */
    bool pairs = sys->nodes[TP_NODE_NET].count > 0 && sys->nodes[TP_NODE_GPU].count > 0;
    /* 2.28 ncclTopoGetNetDevsPolicy's line comes at the first ncclTopoGetLocalNet: PXN's first
     * ncclTopoGetLocalGpu, else the local GPUs computed after this loop */
    bool policy_line = pairs && tp_profile_has(tp_config__profile(cfg), TP_RULE_NETDEVS_POLICY);
    if (pairs)
        tp_config__log_env(cfg, TP_P_PXN_DISABLE, log);
    if (policy_line && pxn)
        tp_config__log_netdevs_policy(cfg, log);
    local_gpu_cache lc = {.net = -1, .memo = tp_paths__local_nets_memo_new(sys)};
    if (!lc.memo)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    for (int n = 0; n < sys->nodes[TP_NODE_NET].count && st == TP_OK; n++) {
        for (int g = 0; g < sys->nodes[TP_NODE_GPU].count && st == TP_OK; g++) {
            if (!sys->nodes[TP_NODE_GPU].nodes[g].paths[TP_NODE_NET]) {
                st = tp_fail(err, TP_ERR_TOPOLOGY, NULL, 0, 0,
                             "GPU %d cannot reach any NET: a link on every way has no "
                             "bandwidth",
                             sys->nodes[TP_NODE_GPU].nodes[g].gpu.dev);
                break;
            }
            if (pxn)
                st = try_pxn(sys, &lc, n, g, err);
            if (st == TP_OK)
                st = check_gdr_route(sys, cfg, &lc, n, g, log, kept, err);
        }
    }
    tp_paths__local_nets_memo_free(lc.memo);
    if (st == TP_OK && policy_line && !pxn)
        tp_config__log_netdevs_policy(cfg, log);
    return st;
}

/* Debug builds (make check-san): every test that computes paths checks the system and routes. */
static tp_status check_invariants(const tp_system *sys, tp_status st, tp_error *err)
{
#ifdef TP_CHECK_INVARIANTS
    if (st == TP_OK && (st = tp_system__check(sys, err)) == TP_OK)
        st = tp_paths__check(sys, err);
#else
    (void)sys;
    (void)err;
#endif
    return st;
}

tp_status tp_paths__rewrites(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                             tp_log *log, tp_error *err)
{
    tp_status st = gpu_policies(sys, cfg, job, log, NULL, err);
    if (st == TP_OK)
        st = net_policies(sys, cfg, log, NULL, err);
    return check_invariants(sys, st, err);
}

tp_status tp_paths__compute(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                            tp_log *log, tp_error *err)
{
    tp_system__free_routes(sys);
    tp_status st = tp_paths__searches(sys, cfg, log, 0, TP_SEARCH_KINDS, err);
    return st == TP_OK ? tp_paths__rewrites(sys, cfg, job, log, err) : st;
}

/* node's links all have bandwidth and a link back (so set_reverse_link always finds one). */
static bool links_sound(const tp_node *node)
{
    for (int l = 0; l < node->n_links; l++) {
        const tp_link *link = &node->links[l];
        const tp_node *rem = link->rem;
        bool back = false;
        for (int r = 0; !back && r < rem->n_links; r++)
            back = rem->links[r].rem == node && rem->links[r].type == link->type;
        if (!back || !(link->bw > 0))
            return false;
    }
    return true;
}

/* A node the searches from CPUs and NETs cross: not a GPU (no route goes on from one to a
 * node of another type) nor an NVSwitch (reached through GPUs only). */
static bool crossed(const tp_node *node)
{
    return node->type != TP_NODE_GPU && node->type != TP_NODE_NVS;
}

/*
 * No search can fail and the NET rewrites find every route they read: sound
 * links, the crossed nodes joined among themselves, every GPU hanging off one
 * of them, a CPU (getLocalCpu). The NET searches and rewrites then neither
 * fail nor log: left undone on a system that is trimmed next, nothing shows.
 */
static tp_status searches_reach_all(const tp_system *sys, bool *all, tp_error *err)
{
    *all = false;
    tp_node_slots slots;
    tp_paths__number_nodes(sys, &slots);
    size_t total = slots.total;
    if (sys->nodes[TP_NODE_CPU].count == 0)
        return TP_OK;
    const tp_node **queue = malloc((total + 1) * sizeof(*queue));
    bool *seen = calloc(total + 1, sizeof(*seen));
    if (!queue || !seen) {
        free(queue);
        free(seen);
        return tp_fail_nomem(err);
    }
    bool ok = true;
    size_t n = 0, reached = 0;
    size_t others =
        total - (size_t)sys->nodes[TP_NODE_GPU].count - (size_t)sys->nodes[TP_NODE_NVS].count;
    for (int t = 0; ok && t < TP_NODE_TYPE_COUNT; t++) {
        for (int i = 0; ok && i < sys->nodes[t].count; i++) {
            const tp_node *node = &sys->nodes[t].nodes[i];
            bool hangs = false;
            for (int l = 0; l < node->n_links; l++)
                hangs |= crossed(node->links[l].rem);
            ok = links_sound(node) && (t != TP_NODE_GPU || hangs);
        }
    }
    /* The crossed nodes reached from the first CPU through crossed nodes. */
    if (ok) {
        queue[n++] = &sys->nodes[TP_NODE_CPU].nodes[0];
        seen[slots.first_of[TP_NODE_CPU]] = true;
    }
    while (ok && reached < n) {
        const tp_node *node = queue[reached++];
        for (int l = 0; l < node->n_links; l++) {
            const tp_node *rem = node->links[l].rem;
            size_t slot = tp_paths__slot(&slots, sys, rem);
            if (crossed(rem) && !seen[slot]) {
                seen[slot] = true;
                queue[n++] = rem;
            }
        }
    }
    free(queue);
    free(seen);
    *all = ok && n == others;
    return TP_OK;
}

tp_status tp_paths__compute_domains(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                                    tp_log *log, unsigned *pending, tp_error *err)
{
    *pending = 0;
    bool all;
    tp_status st = searches_reach_all(sys, &all, err);
    if (st != TP_OK || !all)
        return st != TP_OK ? st : tp_paths__compute(sys, cfg, job, log, err);
    tp_system__free_routes(sys);
    *pending = TP_PATHS_NET_SEARCHES | TP_PATHS_NET_POLICIES;
    st = tp_paths__searches(sys, cfg, log, 0, TP_DOMAIN_SEARCHES, err);
    if (st == TP_OK)
        st = gpu_policies(sys, cfg, job, log, pending, err);
    return st;
}

tp_status tp_paths__finish(tp_system *sys, const tp_config *cfg, tp_log *log, unsigned *pending,
                           tp_gdr_lines *gdr, tp_error *err)
{
    tp_status st = TP_OK;
    if (*pending & TP_PATHS_NET_SEARCHES)
        st = tp_paths__searches(sys, cfg, log, TP_DOMAIN_SEARCHES, TP_SEARCH_KINDS, err);
    if (st == TP_OK && (*pending & TP_PATHS_NET_POLICIES)) {
        st = net_policies(sys, cfg, log, gdr, err);
        if (gdr)
            gdr->kept = st == TP_OK && !gdr->failed;
    }
    if (*pending)
        st = check_invariants(sys, st, err);
    *pending = 0;
    return st;
}

/* ------------------------------------------------------------------ */
/* Trimming (ncclTopoTrimSystem)                                       */
/* ------------------------------------------------------------------ */

/* Domains: GPUs joined by anything better than NET (the same for every rank). */
tp_status tp_paths__domains(const tp_system *sys, tp_gpu_domains *out, tp_error *err)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    out->n_gpus = gpus->count;
    for (int g = 0; g < gpus->count; g++) {
        const tp_node *gpu = &gpus->nodes[g];
        if (!gpu->paths[TP_NODE_GPU])
            return tp_paths__internal(err, "trim before the paths");
        out->domain[g] = g;
        for (int p = 0; p < g; p++)
            if (gpu->paths[TP_NODE_GPU][p].type < TP_PATH_NET && out->domain[p] < out->domain[g])
                out->domain[g] = out->domain[p];
        out->ids[g] = gpu->id;
    }
    return TP_OK;
}

/* The job rank's domain: that of its GPU (the last one with that rank), else 0. */
static int domain_of_rank(const tp_system *sys, const tp_gpu_domains *dom, int rank)
{
    int mine = 0;
    for (int g = 0; g < dom->n_gpus && g < sys->nodes[TP_NODE_GPU].count; g++)
        if (sys->nodes[TP_NODE_GPU].nodes[g].gpu.rank == rank)
            mine = dom->domain[g];
    return mine;
}

tp_status tp_paths__trim_domains(tp_system *sys, const tp_gpu_domains *dom, const tp_job_view *job,
                                 tp_error *err)
{
    if (sys->nodes[TP_NODE_GPU].count != dom->n_gpus)
        return tp_paths__internal(err, "trim with the domains of another system");
    int mine = domain_of_rank(sys, dom, job->rank);
    /* NCCL removes the GPUs one by one, each found by id: the first one left with that id. All
     * go in one pass (tp_system__remove_nodes leaves what one-by-one removal leaves). */
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    int n_nets = sys->nodes[TP_NODE_NET].count;
    bool *gone = calloc((size_t)(gpus->count > n_nets ? gpus->count : n_nets) + 1, sizeof(bool));
    if (!gone)
        return tp_fail_nomem(err);
    tp_status st = TP_OK;
    int left = gpus->count;
    for (int i = 0; i < dom->n_gpus && st == TP_OK; i++) {
        if (dom->domain[i] == mine)
            continue;
        int g = 0;
        while (g < gpus->count && (gone[g] || gpus->nodes[g].id != dom->ids[i]))
            g++;
        if (g == gpus->count)
            st = tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "Could not find id %llx",
                         (unsigned long long)dom->ids[i]);
        else
            gone[g] = true, left--;
    }
    bool drop_nets = left == job->n_ranks && n_nets > 0 && !job->keep_nets;
    /* Routes are recomputed after trimming: drop them before nodes move (a trim that removes
     * nothing keeps them: the recomputation would give them again). */
    if (st == TP_OK && (left < gpus->count || drop_nets))
        tp_system__free_routes(sys);
    if (st == TP_OK && left < gpus->count)
        st = tp_system__remove_nodes(sys, TP_NODE_GPU, gone, err);
    /* NCCL 2.22.3: a job entirely on this host needs no NET. */
    if (st == TP_OK && drop_nets) {
        for (int n = 0; n < n_nets; n++)
            gone[n] = true;
        st = tp_system__remove_nodes(sys, TP_NODE_NET, gone, err);
    }
    free(gone);
    return st;
}

tp_status tp_paths__trim(tp_system *sys, const tp_config *cfg, const tp_job_view *job,
                         tp_error *err)
{
    (void)cfg;
    tp_gpu_domains *dom = malloc(sizeof(*dom));
    if (!dom)
        return tp_fail_nomem(err);
    tp_status st = tp_paths__domains(sys, dom, err);
    if (st == TP_OK)
        st = tp_paths__trim_domains(sys, dom, job, err);
    free(dom);
    return st;
}

/* ------------------------------------------------------------------ */
/* Printing (ncclTopoPrintPaths)                                        */
/* ------------------------------------------------------------------ */

/* One printed line, cut as NCCL's char[1024] cuts it; pieces appended without printf. */
typedef struct path_line {
    char *text; /* TP_PATHS_LINE_SIZE bytes, in the log */
    size_t len;
} path_line;

/* Room for one route entry of the line. */
#define TP_PATHS_ENTRY_SIZE (2 * TP_F1_SIZE + 96)
/* Room for the start of an entry: "TYPE/sys-local (", two ids of at most 16 digits. */
#define TP_PATHS_HEAD_SIZE 48

/*
 * Every line lists the routes to the same nodes: the start of each node's
 * entries, "TYPE/sys-local (" as NCCL's "%s/%lx-%lx (" prints it, formatted
 * once per print for the nodes routes go to (the search roots).
 */
typedef struct route_heads {
    tp_node_slots slots;
    char (*text)[TP_PATHS_HEAD_SIZE]; /* per node slot */
    unsigned char *len;
} route_heads;

static bool heads_alloc(route_heads *h, const tp_system *sys)
{
    tp_paths__number_nodes(sys, &h->slots);
    h->text = malloc((h->slots.total + 1) * sizeof(*h->text));
    h->len = malloc(h->slots.total + 1);
    if (!h->text || !h->len)
        return false;
    for (int k = 0; k < TP_SEARCH_KINDS; k++) {
        int t = search_roots[k];
        for (int n = 0; n < sys->nodes[t].count; n++) {
            size_t slot = h->slots.first_of[t] + (size_t)n;
            int64_t id = sys->nodes[t].nodes[n].id;
            char *p = tp_put_str(h->text[slot], tp_node_type_name(t));
            *p++ = '/';
            p = tp_put_hex(p, (unsigned long long)TP_ID_SYSTEM_ID(id), 1, false);
            *p++ = '-';
            p = tp_put_hex(p, (unsigned long long)TP_ID_LOCAL_ID(id), 1, false);
            h->len[slot] = (unsigned char)(TP_PUT_LIT(p, " (") - h->text[slot]);
        }
    }
    return true;
}

static void heads_free(route_heads *h)
{
    free(h->text);
    free(h->len);
}

/* One "TYPE/sys-local (hops/bw/PATH) " entry at p, as NCCL's "%s/%lx-%lx (%d/%.1f/%s) ", its
 * start from the heads: its end. */
/* One entry: "TYPE/sys-local (" (head) then "%d/%.1f/%s) ". */
typedef struct route_entry {
    const char *head;
    size_t head_len;
    int count;
    float bw;
    int type;
} route_entry;

static char *put_route(char *p, const route_entry *e)
{
    memcpy(p, e->head, e->head_len);
    p += e->head_len;
    p = tp_put_int(p, e->count, 0);
    *p++ = '/';
    p = tp_put_f1(p, e->bw);
    *p++ = '/';
    p = tp_put_str(p, tp_path_type_name(e->type));
    return TP_PUT_LIT(p, ") ");
}

/* The entry appended to the line: in place while the line has room for any entry, else cut
 * where NCCL's char[1024] ends (nothing once it is full). */
static void append_route(path_line *l, const route_entry *e)
{
    if (l->len + TP_PATHS_ENTRY_SIZE <= TP_PATHS_LINE_SIZE - 1) {
        l->len = (size_t)(put_route(l->text + l->len, e) - l->text);
        return;
    }
    if (l->len >= TP_PATHS_LINE_SIZE - 1)
        return;
    char entry[TP_PATHS_ENTRY_SIZE];
    size_t n = (size_t)(put_route(entry, e) - entry), room = TP_PATHS_LINE_SIZE - 1 - l->len;
    if (n > room)
        n = room;
    memcpy(l->text + l->len, entry, n);
    l->len += n;
    l->text[l->len] = '\0';
}

/*
 * 2.30.3 (TP_RULE_DEV_NODES): each GPU hangs off its DEV node by a LOC link, the DEV holding the
 * GPU's links, so a route gains a hop at each GPU end and two at a PXN relay (entered and left
 * over its LOC link); routes crossing a GPU (NVB) cross its DEV instead, at no extra hop.
 */
static int dev_hops(const tp_node *from, int to_type, const tp_route *r)
{
    if (r->count == 0)
        return 0;
    return (from->type == TP_NODE_GPU) + (to_type == TP_NODE_GPU) + 2 * (r->type == TP_PATH_PXN);
}

/* The routes to the DEV nodes, one per GPU of raw (the untrimmed system: 2.30.3 removes a GPU of
 * another domain but keeps its DEV): the searches' routes to the GPUs (raw: before the P2P, GDR
 * and PXN rewrites) less the GPU's LOC hop; a GPU's own DEV is one LOC hop away. */
static void append_dev_routes(path_line *l, const tp_system *raw, const tp_node *node)
{
    int row = tp_paths__id_to_index(raw, node->type, node->id);
    const tp_route *routes = row >= 0 ? raw->nodes[node->type].nodes[row].paths[TP_NODE_GPU] : NULL;
    for (int g = 0; routes && g < raw->nodes[TP_NODE_GPU].count; g++) {
        const tp_node *gpu = &raw->nodes[TP_NODE_GPU].nodes[g];
        char head[TP_PATHS_HEAD_SIZE];
        char *p = tp_put_hex(TP_PUT_LIT(head, "DEV/"), (unsigned long long)TP_ID_SYSTEM_ID(gpu->id),
                             1, false);
        p = tp_put_hex(TP_PUT_LIT(p, "-"), (unsigned long long)TP_ID_LOCAL_ID(gpu->id), 1, false);
        p = TP_PUT_LIT(p, " (");
        route_entry e = {.head = head,
                         .head_len = (size_t)(p - head),
                         .count = routes[g].count,
                         .bw = routes[g].bw,
                         .type = routes[g].type};
        if (node->type == TP_NODE_GPU && routes[g].count == 0)
            e.count = 1;
        else
            e.count += node->type == TP_NODE_GPU;
        append_route(l, &e);
    }
}

static void print_node_paths(tp_log *log, const tp_system *sys, const tp_system *raw,
                             const route_heads *h, const tp_node *node)
{
    path_line line = {.text = tp_log_begin_line(log, TP_SUB_GRAPH, TP_PATHS_LINE_SIZE)};
    if (!line.text)
        return;
    char *p = tp_put_str(line.text, tp_node_type_name(node->type));
    *p++ = '/';
    if (tp_profile_has(sys->profile, TP_RULE_LOG_SYSTEM_IDS)) { /* 2.23 printNodePaths */
        p = tp_put_hex(p, (unsigned long long)TP_ID_SYSTEM_ID(node->id), 1, false);
        p = tp_put_hex(TP_PUT_LIT(p, "-"), (unsigned long long)TP_ID_LOCAL_ID(node->id), 1, false);
    } else {
        p = tp_put_hex(p, (unsigned long long)node->id, 1, true);
    }
    line.len = (size_t)(TP_PUT_LIT(p, " :") - line.text);
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        if (!node->paths[t])
            continue;
        for (int n = 0; n < sys->nodes[t].count; n++) {
            size_t slot = h->slots.first_of[t] + (size_t)n;
            const tp_route *r = &node->paths[t][n];
            route_entry e = {.head = h->text[slot],
                             .head_len = h->len[slot],
                             .count = r->count,
                             .bw = r->bw,
                             .type = r->type};
            if (raw)
                e.count += dev_hops(node, t, r);
            append_route(&line, &e);
        }
    }
    if (raw)
        append_dev_routes(&line, raw, node);
    tp_log_end_line(log, line.text + line.len);
}

void tp_paths__print(tp_log *log, const tp_system *sys, const tp_system *raw)
{
    if (!log || !log->enabled)
        return;
    route_heads heads;
    if (!heads_alloc(&heads, sys)) {
        log->failed = true; /* the lines are left out, as when the log runs out of memory */
        heads_free(&heads);
        return;
    }
    for (int i = 0; i < sys->nodes[TP_NODE_GPU].count; i++)
        print_node_paths(log, sys, raw, &heads, &sys->nodes[TP_NODE_GPU].nodes[i]);
    for (int i = 0; i < sys->nodes[TP_NODE_NET].count; i++)
        print_node_paths(log, sys, raw, &heads, &sys->nodes[TP_NODE_NET].nodes[i]);
    heads_free(&heads);
}

tp_status tp_paths__raw_routes(tp_system **out, const tp_system *sys, const tp_config *cfg,
                               tp_error *err)
{
    tp_log quiet = {.enabled = false};
    tp_status st = tp_system__clone(out, sys, err);
    if (st == TP_OK)
        st = tp_paths__searches(*out, cfg, &quiet, TP_SEARCH_GPUS, TP_SEARCH_NETS + 1, err);
    tp_log_clear(&quiet);
    return st;
}

tp_status tp_paths__fresh_copy(tp_system **out, const tp_system *host_sys, const tp_config *cfg,
                               const tp_job_view *job, tp_error *err)
{
    tp_status st = tp_system__clone(out, host_sys, err);
    if (st == TP_OK)
        st = tp_paths__compute(*out, cfg, job, NULL, err);
    if (st == TP_OK)
        st = tp_paths__trim(*out, cfg, job, err);
    if (st == TP_OK)
        st = tp_paths__compute(*out, cfg, job, NULL, err);
    return st;
}
