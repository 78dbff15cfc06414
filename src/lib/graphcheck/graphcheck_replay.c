/*
 * Replay of the bandwidth NCCL 2.22.3's search reserves for a graph's
 * channels (search.cc: ncclTopoSearchRecNet / RecGpu / TryNvls /
 * TryCollnetDirect call ncclTopoFollowPath hop by hop). The search stops at
 * the first link that is short; the replay goes on, so that every short
 * link is found, and keeps its books beside the system, which stays
 * untouched.
 */
#include "graphcheck/graphcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct replay {
    tp_graph_check *chk;
    tp_gc_graph *g;
    const tp_system *sys;
    const void **keys; /* per g->links entry: the tp_link or NET node it tracks */
    size_t keys_cap;
    int channel;
    tp_error *err;
} replay;

/* Written without printf: a replay labels every link it books. */
void tp_graphcheck__label(char *buf, size_t size, const tp_node *node)
{
    char text[96];
    size_t n = 0;
    if (node->type == TP_NODE_GPU || node->type == TP_NODE_NET) {
        memcpy(text, node->type == TP_NODE_GPU ? "GPU/" : "NET/", 4);
        n = 4 + (size_t)tp_format_int(text + 4,
                                      node->type == TP_NODE_GPU ? node->gpu.rank : node->net.dev);
    } else { /* NCCL's label, as in its path dumps: TYPE/%llx-%llx */
        const char *type = tp_node_type_name(node->type);
        n = strlen(type) < 32 ? strlen(type) : 32;
        memcpy(text, type, n);
        text[n++] = '/';
        n += (size_t)tp_format_hex(text + n, (unsigned long long)TP_ID_SYSTEM_ID(node->id), 1);
        text[n++] = '-';
        n += (size_t)tp_format_hex(text + n, (unsigned long long)TP_ID_LOCAL_ID(node->id), 1);
    }
    if (size == 0)
        return;
    n = n < size - 1 ? n : size - 1; /* cut as snprintf would */
    memcpy(buf, text, n);
    buf[n] = '\0';
}

/* NCCL 2.22.3 SUB_ROUND: subtract, then round to 1/1000 to cancel float drift. */
static float sub_round(float a, float b)
{
    return roundf((a - b) * TP_GC_ROUND_SCALE) / TP_GC_ROUND_SCALE;
}

/* What a bookkeeping entry tracks: a link from -> to, or a NET port (to is NULL). */
typedef struct book_key {
    const void *key; /* the tp_link, or the port's first NET node */
    const tp_node *from, *to;
    int type; /* tp_link_type, or TP_GC_NET_PORT */
    float capacity;
} book_key;

/* The bookkeeping entry of k->key, added on first use. */
static tp_status book_entry(replay *r, const book_key *k, tp_gc_link **out)
{
    tp_gc_graph *g = r->g;
    for (size_t i = 0; i < g->n_links; i++) {
        if (r->keys[i] == k->key) {
            *out = &g->links[i];
            return TP_OK;
        }
    }
    tp_status st =
        tp_grow((void **)&g->links, &g->links_cap, g->n_links + 1, sizeof(*g->links), r->err);
    if (st == TP_OK)
        st = tp_grow((void **)&r->keys, &r->keys_cap, g->n_links + 1, sizeof(*r->keys), r->err);
    if (st != TP_OK)
        return st;
    tp_gc_link *l = &g->links[g->n_links];
    r->keys[g->n_links++] = k->key;
    tp_graphcheck__label(l->from, sizeof(l->from), k->from);
    l->from_node = k->from;
    l->to_node = k->to;
    if (k->to)
        tp_graphcheck__label(l->to, sizeof(l->to), k->to);
    l->type = k->type;
    l->capacity = l->left = k->capacity;
    *out = l;
    return TP_OK;
}

/* Take bw from link (from -> link->rem); short when less than bw is left, as NCCL tests it. */
static tp_status reserve_link(replay *r, const tp_link *link, const tp_node *from, float bw)
{
    tp_gc_link *l;
    book_key k = {
        .key = link, .from = from, .to = link->rem, .type = link->type, .capacity = link->bw};
    tp_status st = book_entry(r, &k, &l);
    if (st != TP_OK)
        return st;
    if (l->left < bw)
        l->over = true;
    l->left = sub_round(l->left, bw);
    l->reserved += bw;
    l->channels |= 1ULL << r->channel;
    return TP_OK;
}

static const tp_link *find_rev_link(replay *r, const tp_node *from, const tp_node *to, int type)
{
    for (int l = 0; l < to->n_links; l++)
        if (to->links[l].rem == from && to->links[l].type == type)
            return &to->links[l];
    tp_fail(r->err, TP_ERR_INTERNAL, NULL, 0, 0, "graph check: no reverse link %d/%lld -> %d/%lld",
            from->type, (long long)from->id, to->type, (long long)to->id);
    return NULL;
}

/* NCCL 2.22.3 followPath: a PHB path from a GPU through an Intel x86 CPU pays the overhead. */
static bool intel_overhead(const tp_route *path, const tp_node *start)
{
    if (path->type != TP_PATH_PHB || start->type != TP_NODE_GPU)
        return false;
    for (int step = 0; step < path->count; step++) {
        const tp_node *n = path->list[step]->rem;
        if (n->type == TP_NODE_CPU && n->cpu.arch == TP_CPU_ARCH_X86 &&
            n->cpu.vendor == TP_CPU_VENDOR_INTEL)
            return true;
    }
    return false;
}

/*
 * NCCL 2.22.3 followPath over a whole path: bw on each link (more on PCI
 * links under the Intel overhead), plus the reverse-link shares of
 * pre-Ampere GPUs entered from a non-GPU (1/8) and of POWER CPUs over NVLink.
 */
static tp_status follow_route(replay *r, const tp_route *path, const tp_node *start, float bw)
{
    float pci_bw = bw;
    if (intel_overhead(path, start))
        pci_bw = bw * TP_GC_INTEL_OVERHEAD_MUL / TP_GC_INTEL_OVERHEAD_DIV;
    const tp_node *node = start;
    tp_status st = TP_OK;
    for (int step = 0; step < path->count && st == TP_OK; step++) {
        const tp_link *link = path->list[step], *rev = NULL;
        const tp_node *rem = link->rem;
        float fw_bw = link->type == TP_LINK_PCI ? pci_bw : bw, rev_bw = 0;
        bool old_gpu = rem->type == TP_NODE_GPU && rem->gpu.cuda_comp_cap < TP_GC_REV_SHARE_MAX_CC;
        bool power_nvl = rem->type == TP_NODE_CPU && rem->cpu.arch == TP_CPU_ARCH_POWER &&
                         link->type == TP_LINK_NVL;
        if (old_gpu && start->type != TP_NODE_GPU)
            rev_bw += fw_bw / TP_GC_REV_SHARE_DIV;
        if (power_nvl)
            rev_bw += fw_bw;
        if (rev_bw != 0 && !(rev = find_rev_link(r, node, rem, link->type)))
            return TP_ERR_INTERNAL;
        st = reserve_link(r, link, node, fw_bw);
        if (st == TP_OK && rev)
            st = reserve_link(r, rev, rem, rev_bw);
        node = rem;
    }
    return st;
}

/* One direction of a hop: the path from -> to, and whether it is an intra-node one. */
typedef struct hop_leg {
    const tp_node *from, *to;
    const tp_route *path;
    bool intra; /* GPU/NVS pair: the graph's intra settings apply */
} hop_leg;

static tp_gc_where replay_at(const replay *r)
{
    return (tp_gc_where){.graph = r->g, .channel = r->channel};
}

/* NCCL 2.22.3 ncclTopoFollowPath's type test: a path no worse than the graph's type. */
static void check_type(replay *r, const hop_leg *leg, int type, const char *what)
{
    if (leg->path->type <= type)
        return;
    char la[48], lb[48];
    tp_graphcheck__label(la, sizeof(la), leg->from);
    tp_graphcheck__label(lb, sizeof(lb), leg->to);
    const char *decl = leg->intra ? "typeintra" : "typeinter";
    if (leg->path->type >= TP_PATH_DIS)
        tp_graphcheck__add(r->chk, TP_GC_ERROR, replay_at(r), "%s -> %s%s: no path", la, lb, what);
    else
        tp_graphcheck__add(r->chk, TP_GC_ERROR, replay_at(r),
                           "%s -> %s%s: path type %s is worse than %s %s", la, lb, what,
                           tp_path_type_name(leg->path->type), decl, tp_path_type_name(type));
}

/* The path carries bw, mult times the graph's speed. */
static void check_bw(replay *r, const hop_leg *leg, float bw, float mult)
{
    const tp_route *path = leg->path;
    if (path->count == 0 || !(path->bw < bw))
        return;
    char la[48], lb[48];
    tp_graphcheck__label(la, sizeof(la), leg->from);
    tp_graphcheck__label(lb, sizeof(lb), leg->to);
    const char *decl = leg->intra ? "speedintra" : "speedinter";
    float speed = leg->intra ? r->g->bw_intra : r->g->bw_inter;
    if (mult == 1)
        tp_graphcheck__add(r->chk, TP_GC_ERROR, replay_at(r),
                           "%s -> %s: path bandwidth %g GB/s is below %s %g GB/s", la, lb, path->bw,
                           decl, speed);
    else
        tp_graphcheck__add(r->chk, TP_GC_ERROR, replay_at(r),
                           "%s -> %s: path bandwidth %g GB/s is below the %g GB/s it carries "
                           "(%s %g x %g)",
                           la, lb, path->bw, bw, decl, speed, mult);
}

static bool is_tree(int pattern)
{
    return pattern == TP_PATTERN_BALANCED_TREE || pattern == TP_PATTERN_TREE ||
           pattern == TP_PATTERN_SPLIT_TREE;
}

/*
 * NCCL 2.22.3 ncclTopoFollowPath from (t1, i1) to (t2, i2) with mult times
 * the graph's speed: GPU/NVS pairs use the intra settings, hops with a NET
 * the inter ones; trees also need the reverse path to fit the type.
 */
static tp_status hop(replay *r, int t1, int i1, int t2, int i2, float mult)
{
    const tp_node *n1 = &r->sys->nodes[t1].nodes[i1], *n2 = &r->sys->nodes[t2].nodes[i2];
    if (!n1->paths[t2] || !n2->paths[t1])
        return tp_fail(r->err, TP_ERR_INTERNAL, NULL, 0, 0, "graph check: paths not computed");
    const tp_route *path = &n1->paths[t2][i2], *rev = &n2->paths[t1][i1];
    bool intra =
        (t1 == TP_NODE_GPU || t1 == TP_NODE_NVS) && (t2 == TP_NODE_GPU || t2 == TP_NODE_NVS);
    float bw = intra ? r->g->bw_intra : r->g->bw_inter;
    int type = intra ? r->g->type_intra : r->g->type_inter;
    bw *= mult;
    const hop_leg fwd = {.from = n1, .to = n2, .path = path, .intra = intra};
    const hop_leg back = {.from = n2, .to = n1, .path = rev, .intra = intra};
    check_type(r, &fwd, type, "");
    if (is_tree(r->g->pattern))
        check_type(r, &back, type, " (reverse direction, which trees also use)");
    check_bw(r, &fwd, bw, mult);
    return follow_route(r, path, n1, bw);
}

/*
 * NCCL 2.22.3 ncclTopoSearchRecNet: a channel entering from NET n takes
 * (int)bwInter from n's port (every NET with n's asic and port).
 */
static tp_status net_port(replay *r, int n)
{
    const tp_node *nets = r->sys->nodes[TP_NODE_NET].nodes, *net = &nets[n];
    int bw = (int)r->g->bw_inter;
    int lead = n;
    for (int i = 0; i < n; i++) {
        if (nets[i].net.asic == net->net.asic && nets[i].net.port == net->net.port) {
            lead = i;
            break;
        }
    }
    tp_gc_link *l;
    book_key k = {.key = &nets[lead], .from = net, .type = TP_GC_NET_PORT, .capacity = net->net.bw};
    tp_status st = book_entry(r, &k, &l);
    if (st != TP_OK)
        return st;
    if (l->left < bw)
        l->over = true;
    l->left -= bw;
    l->reserved += bw;
    l->channels |= 1ULL << r->channel;
    return TP_OK;
}

/* NCCL 2.22.3 ncclTopoSearchTryNvls: the head needs twice the bw to and from the NVSwitch. */
static tp_status nvls_hops(replay *r, int head)
{
    int n = r->sys->nodes[TP_NODE_GPU].count;
    tp_status st = TP_OK;
    if (head < 0 || r->sys->nodes[TP_NODE_NVS].count == 0)
        return TP_OK;
    for (int d = 0; d < n && st == TP_OK; d++)
        st = hop(r, TP_NODE_NVS, 0, TP_NODE_GPU, d, d == head ? 2 : 1);
    for (int d = 0; d < n && st == TP_OK; d++)
        st = hop(r, TP_NODE_GPU, d, TP_NODE_NVS, 0, d == head ? 2 : 1);
    return st;
}

/* NCCL 2.22.3 ncclTopoSearchTryCollnetDirect: the head and every GPU, both ways, 1/(n-1) each. */
static tp_status collnet_hops(replay *r, int head)
{
    int n = r->sys->nodes[TP_NODE_GPU].count;
    tp_status st = TP_OK;
    if (head < 0 || n < 2)
        return TP_OK;
    float mul = 1.0 / (float)(n - 1);
    for (int d = 0; d < n && st == TP_OK; d++)
        st = hop(r, TP_NODE_GPU, head, TP_NODE_GPU, d, mul);
    for (int d = 0; d < n && st == TP_OK; d++)
        st = hop(r, TP_NODE_GPU, d, TP_NODE_GPU, head, mul);
    return st;
}

static int gpu_at(const tp_gc_channel *ch, int step)
{
    return step < ch->n_gpus ? ch->gpus[step] : -1;
}

/*
 * NCCL 2.22.3 ncclTopoSearchParams and ncclTopoSearchRecGpu: GPU after GPU;
 * with NETs the channel leaves at step backToNet (rings: the last GPU,
 * split trees: the second, other trees: the first; balanced trees leave
 * from the first two with half the bw each); without NETs rings close
 * back to their first GPU.
 */
static tp_status chain_hops(replay *r, const tp_gc_channel *ch, int x)
{
    int n = r->sys->nodes[TP_NODE_GPU].count, p = r->g->pattern;
    bool has_net = r->sys->nodes[TP_NODE_NET].count > 0;
    int back_to_net = -1, back_to_first = -1;
    if (has_net)
        back_to_net = p == TP_PATTERN_RING ? n - 1 : p == TP_PATTERN_SPLIT_TREE ? 1 : 0;
    else if (p == TP_PATTERN_RING)
        back_to_first = n - 1;
    bool balanced = has_net && p == TP_PATTERN_BALANCED_TREE;
    tp_status st = TP_OK;
    for (int step = 0; step < n && st == TP_OK; step++) {
        int gi = gpu_at(ch, step);
        bool leave = step == back_to_net || (balanced && step == 1);
        if (leave && x >= 0 && gi >= 0)
            st = hop(r, TP_NODE_GPU, gi, TP_NODE_NET, x, balanced ? 0.5f : 1.0f);
        int next = step < n - 1 ? gpu_at(ch, step + 1) : step == back_to_first ? gpu_at(ch, 0) : -1;
        if (st == TP_OK && gi >= 0 && next >= 0)
            st = hop(r, TP_NODE_GPU, gi, TP_NODE_GPU, next, 1);
    }
    return st;
}

/* One channel, in the order the search reserves it. */
static tp_status replay_channel(replay *r, const tp_gc_channel *ch)
{
    bool has_net = r->sys->nodes[TP_NODE_NET].count > 0;
    int p = r->g->pattern, head = gpu_at(ch, 0);
    int entry = has_net ? ch->nets[0] : -1, exit = has_net ? ch->nets[1] : -1;
    tp_status st = TP_OK;
    if (entry >= 0) {
        st = net_port(r, entry);
        if (st == TP_OK && head >= 0)
            st = hop(r, TP_NODE_NET, entry, TP_NODE_GPU, head, 1);
    }
    if (st != TP_OK)
        return st;
    if (p != TP_PATTERN_NVLS && p != TP_PATTERN_COLLNET_DIRECT)
        return chain_hops(r, ch, exit);
    if (exit >= 0 && head >= 0)
        st = hop(r, TP_NODE_GPU, head, TP_NODE_NET, exit, 1);
    if (st != TP_OK)
        return st;
    return p == TP_PATTERN_NVLS ? nvls_hops(r, head) : collnet_hops(r, head);
}

tp_status tp_graphcheck__replay(tp_graph_check *chk, tp_gc_graph *g, const tp_system *sys,
                                const tp_gc_channel *channels, int n, tp_error *err)
{
    replay r = {.chk = chk, .g = g, .sys = sys, .err = err};
    tp_status st = TP_OK;
    for (int c = 0; c < n && st == TP_OK; c++) {
        size_t before = g->n_findings;
        r.channel = c;
        st = replay_channel(&r, &channels[c]);
        /* Hop findings point at their channel's element. */
        for (size_t i = before; i < g->n_findings; i++) {
            g->findings[i].line = channels[c].line;
            g->findings[i].column = channels[c].column;
        }
    }
    free(r.keys);
    g->replayed = n > 0;
    return st;
}
