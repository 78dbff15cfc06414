/*
 * Stage 2, the data model: node storage, links, removal, sorting, printing
 * and the invariant checker, with NCCL 2.22.3's exact orders (topo.cc).
 * Building from XML is in system_build.c, XML preparation in system_xml.c.
 */
#include "system/system.h"

#include <limits.h>
#include <math.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

tp_status tp_system__new_sized(tp_system **out, const int caps[TP_NODE_TYPE_COUNT], tp_error *err)
{
    *out = NULL;
    /* Not cleared whole: the 2 KB of host hashes cost a small plan more than the rest. */
    tp_system *sys = malloc(sizeof(*sys));
    if (!sys)
        return tp_fail_nomem(err);
    memset(sys, 0, offsetof(tp_system, source));
    sys->profile = tp_nccl_profile__default();
    sys->source[0] = '\0';
    size_t total = 0;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        int cap = caps ? caps[t] : TP_MAX_NODES;
        sys->nodes[t].cap = cap < 1 ? 1 : cap > TP_MAX_NODES ? TP_MAX_NODES : cap;
        total += (size_t)sys->nodes[t].cap;
    }
    /* Only nodes below count are ever read, and create_node clears each one:
     * no need to clear the block up front. */
    sys->node_block = malloc(total * sizeof(tp_node));
    if (!sys->node_block) {
        free(sys);
        return tp_fail_nomem(err);
    }
    for (int t = 0, at = 0; t < TP_NODE_TYPE_COUNT; at += sys->nodes[t++].cap)
        sys->nodes[t].nodes = sys->node_block + at;
    sys->notes.enabled = true;
    *out = sys;
    return TP_OK;
}

tp_status tp_system__new(tp_system **out, tp_error *err)
{
    return tp_system__new_sized(out, NULL, err);
}

void tp_system__free_routes(tp_system *sys)
{
    if (!sys)
        return;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        for (int n = 0; n < sys->nodes[t].count; n++) {
            tp_node *node = &sys->nodes[t].nodes[n];
            memset(node->paths, 0, sizeof(node->paths));
        }
    }
    tp_arena_free(&sys->routes);
}

void tp_system__free(tp_system *sys)
{
    if (!sys)
        return;
    if (sys->node_block) {
        tp_system__free_routes(sys);
        for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
            for (int n = 0; n < sys->nodes[t].count; n++)
                if (!sys->nodes[t].nodes[n].links_shared)
                    free(sys->nodes[t].nodes[n].links);
    }
    free(sys->node_block);
    free(sys->link_block);
    tp_arena_free(&sys->routes);
    tp_log_clear(&sys->notes);
    free(sys);
}

/* The copy's node at the position `rem` has in the original (NULL stays NULL). */
static tp_node *repoint(const tp_system *from, tp_system *to, const tp_node *rem)
{
    if (!rem)
        return NULL;
    return to->nodes[rem->type].nodes + (rem - from->nodes[rem->type].nodes);
}

/* The node's link slots, stale ones included (as in NCCL), re-pointed into the copy; they go to
 * `room` in the copy's link block (a node that grows later moves to an array of its own). */
static void copy_links(const tp_system *from, tp_system *to, const tp_node *src, tp_node *dst,
                       tp_link *room)
{
    dst->n_slots = dst->slots_cap = 0;
    dst->links = NULL;
    dst->links_shared = false;
    if (src->n_slots == 0) /* no slots: links may be NULL, and memcpy(NULL, ...) is undefined */
        return;
    dst->links = room;
    dst->links_shared = true;
    memcpy(dst->links, src->links, (size_t)src->n_slots * sizeof(tp_link));
    dst->slots_cap = src->n_slots;
    dst->n_slots = src->n_slots;
    for (int l = 0; l < dst->n_slots; l++)
        dst->links[l].rem = repoint(from, to, dst->links[l].rem);
    return;
}

tp_status tp_system__clone(tp_system **out, const tp_system *sys, tp_error *err)
{
    tp_system *copy = NULL;
    int caps[TP_NODE_TYPE_COUNT]; /* a copy only loses nodes (trimming) */
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        caps[t] = sys->nodes[t].count;
    tp_status st = tp_system__new_sized(&copy, caps, err);
    if (st != TP_OK)
        return st;
    copy->profile = sys->profile;
    copy->netdevs = sys->netdevs;
    copy->system_id = sys->system_id;
    copy->n_hosts = sys->n_hosts;
    memcpy(copy->host_hashes, sys->host_hashes, (size_t)sys->n_hosts * sizeof(*sys->host_hashes));
    copy->max_bw = sys->max_bw;
    copy->total_bw = sys->total_bw;
    memcpy(copy->source, sys->source, sizeof(copy->source));
    for (size_t i = 0; i < sys->notes.n_lines; i++)
        tp_log_put_sub(&copy->notes, TP_SUB_ALL, sys->notes.lines[i].text); /* as tp_log_info */
    size_t slots = 0;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int n = 0; n < sys->nodes[t].count; n++)
            slots += (size_t)sys->nodes[t].nodes[n].n_slots;
    /* Every node's link slots in one block: one allocation, not one per node. */
    tp_link *room = copy->link_block = malloc((slots + 1) * sizeof(tp_link));
    if (!room)
        st = tp_fail_nomem(err);
    for (int t = 0; t < TP_NODE_TYPE_COUNT && st == TP_OK; t++) {
        int count = sys->nodes[t].count;
        memcpy(copy->nodes[t].nodes, sys->nodes[t].nodes, (size_t)count * sizeof(tp_node));
        for (int n = 0; n < count; n++) {
            tp_node *node = copy->nodes[t].nodes + n;
            memset(node->paths, 0, sizeof(node->paths));
            node->links = NULL;
            node->slots_cap = 0;
        }
        copy->nodes[t].count = count;
        for (int n = 0; n < count; n++) {
            copy_links(sys, copy, &sys->nodes[t].nodes[n], &copy->nodes[t].nodes[n], room);
            room += sys->nodes[t].nodes[n].n_slots;
        }
    }
    if (st != TP_OK) {
        tp_system__free(copy);
        return st;
    }
    if (copy->notes.failed) {
        tp_system__free(copy);
        return tp_fail_nomem(err);
    }
    *out = copy;
    return TP_OK;
}

tp_node *tp_system__find(const tp_system *sys, int type, int64_t id)
{
    int i = tp_system__index_of(sys, type, id);
    return i < 0 ? NULL : sys->nodes[type].nodes + i;
}

int tp_system__index_of(const tp_system *sys, int type, int64_t id)
{
    for (int i = 0; i < sys->nodes[type].count; i++)
        if (sys->nodes[type].nodes[i].id == id)
            return i;
    return -1;
}

tp_status tp_system__reserve_links(tp_node *node, int slots, tp_error *err)
{
    if (slots > TP_MAX_LINKS)
        return tp_fail(err, TP_ERR_TOPOLOGY, NULL, 0, 0,
                       "too many links on %s/%" PRIx64 " (NCCL 2.22.3 allows %d)",
                       tp_node_type_name(node->type), (uint64_t)node->id, TP_MAX_LINKS);
    if (slots > node->slots_cap) {
        int cap = node->slots_cap ? node->slots_cap : 4;
        while (cap < slots)
            cap *= 2;
        if (cap > TP_MAX_LINKS)
            cap = TP_MAX_LINKS;
        tp_link *p = node->links_shared ? malloc((size_t)cap * sizeof(*p))
                                        : realloc(node->links, (size_t)cap * sizeof(*p));
        if (!p)
            return tp_fail_nomem(err);
        if (node->links_shared && node->n_slots > 0)
            memcpy(p, node->links, (size_t)node->n_slots * sizeof(*p));
        node->links_shared = false;
        node->links = p;
        node->slots_cap = cap;
    }
    /* Slots never written are empty, as in NCCL's zeroed array. */
    if (slots > node->n_slots) {
        memset(node->links + node->n_slots, 0, (size_t)(slots - node->n_slots) * sizeof(tp_link));
        node->n_slots = slots;
    }
    return TP_OK;
}

/* NCCL 2.22.3 ncclTopoCreateNode: per-type fields start undefined. */
static void init_node(tp_node *n, int type, int64_t id)
{
    memset(n, 0, sizeof(*n));
    n->type = type;
    n->id = id;
    if (type == TP_NODE_GPU) {
        n->gpu.dev = TP_TOPO_UNDEF;
        n->gpu.rank = TP_TOPO_UNDEF;
        n->gpu.cuda_comp_cap = TP_TOPO_UNDEF;
    } else if (type == TP_NODE_CPU) {
        n->cpu.arch = TP_TOPO_UNDEF;
        n->cpu.vendor = TP_TOPO_UNDEF;
        n->cpu.model = TP_TOPO_UNDEF;
    } else if (type == TP_NODE_NET) {
        n->net.port = TP_TOPO_UNDEF;
    }
}

tp_status tp_system__create_node(tp_system *sys, tp_node **out, int type, int64_t id, tp_error *err)
{
    *out = NULL;
    tp_node_set *set = &sys->nodes[type];
    if (set->count == TP_MAX_NODES)
        return tp_fail(err, TP_ERR_TOPOLOGY, NULL, 0, 0,
                       "too many %s nodes (NCCL 2.22.3 allows %d of one type)",
                       tp_node_type_name(type), TP_MAX_NODES);
    if (set->count == set->cap)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                       "%s node storage sized for %d nodes is full (a bug)",
                       tp_node_type_name(type), set->cap);
    tp_node *n = set->nodes + set->count++;
    init_node(n, type, id);
    if (sys->link_free >= TP_FIRST_LINK_SLOTS) {
        n->links = sys->link_next;
        n->slots_cap = TP_FIRST_LINK_SLOTS;
        n->links_shared = true;
        sys->link_next += TP_FIRST_LINK_SLOTS;
        sys->link_free -= TP_FIRST_LINK_SLOTS;
    }
    *out = n;
    return TP_OK;
}

tp_status tp_system__reserve_link_block(tp_system *sys, int n_nodes, tp_error *err)
{
    if (sys->link_block || n_nodes <= 0)
        return TP_OK; /* a clone's block, or no node */
    /* Not cleared: a node's slots are cleared as it takes them (tp_system__reserve_links). */
    size_t slots = (size_t)n_nodes * TP_FIRST_LINK_SLOTS;
    if (!(sys->link_block = malloc(slots * sizeof(tp_link))))
        return tp_fail_nomem(err);
    sys->link_next = sys->link_block;
    sys->link_free = (int)slots;
    return TP_OK;
}

/*
 * NCCL 2.22.3 ncclTopoRemoveNode: drop links to the node, shift pointers to
 * later nodes of the same type down by one. Like NCCL, the link arrays are
 * not cleared past n_links.
 */
static void unlink_node(tp_node *node, const tp_node *del, tp_node_type type)
{
    for (int l = 0; l < node->n_links; l++) {
        while (l < node->n_links && node->links[l].rem == del) {
            memmove(node->links + l, node->links + l + 1,
                    (size_t)(node->n_links - l - 1) * sizeof(tp_link));
            node->n_links--;
        }
        tp_link *link = node->links + l;
        if (l < node->n_links && link->rem->type == type && link->rem >= del)
            link->rem--;
    }
}

tp_status tp_system__remove_node(tp_system *sys, int type, int index, tp_error *err)
{
    tp_node_set *set = &sys->nodes[type];
    if (index < 0 || index >= set->count)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "remove_node: no %s node %d",
                       tp_node_type_name(type), index);
    tp_node *del = set->nodes + index;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        for (int n = 0; n < sys->nodes[t].count; n++) {
            tp_node *node = sys->nodes[t].nodes + n;
            if (node != del)
                unlink_node(node, del, type);
        }
    }
    if (!del->links_shared)
        free(del->links);
    memmove(del, del + 1, (size_t)(set->count - index - 1) * sizeof(tp_node));
    set->count--;
    return TP_OK;
}

tp_status tp_system__remove_nodes(tp_system *sys, int type, const bool *gone, tp_error *err)
{
    (void)err;
    tp_node_set *set = &sys->nodes[type];
    int moved_to[TP_MAX_NODES]; /* a set holds at most TP_MAX_NODES */
    int kept = 0;
    for (int i = 0; i < set->count; i++)
        moved_to[i] = gone[i] ? -1 : kept++;
    tp_node *old = set->nodes;
    /* Links to a removed node go, the others follow their node to its new place. */
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        for (int n = 0; n < sys->nodes[t].count; n++) {
            tp_node *node = sys->nodes[t].nodes + n;
            if (t == type && gone[n])
                continue;
            int w = 0;
            for (int l = 0; l < node->n_links; l++) {
                tp_link link = node->links[l];
                if ((int)link.rem->type == type) {
                    int at = moved_to[link.rem - old];
                    if (at < 0)
                        continue;
                    link.rem = old + at;
                }
                node->links[w++] = link;
            }
            node->n_links = w;
        }
    }
    for (int i = 0; i < set->count; i++) {
        if (gone[i]) {
            if (!old[i].links_shared)
                free(old[i].links);
        } else if (moved_to[i] != i)
            old[moved_to[i]] = old[i];
    }
    set->count = kept;
    return TP_OK;
}

/*
 * NCCL 2.22.3 ncclTopoConnectNodes: add bw to an existing link of that type
 * to rem (links end at the first empty slot), else append; then move the link
 * up past every link with a strictly smaller bw.
 */
tp_status tp_system__connect(tp_node *node, tp_node *rem, int type, float bw, tp_error *err)
{
    int l = 0;
    while (l < node->n_slots && node->links[l].rem &&
           !(node->links[l].rem == rem && node->links[l].type == type))
        l++;
    tp_status st = tp_system__reserve_links(node, l + 1, err);
    if (st != TP_OK)
        return st;
    if (!node->links[l].rem) {
        node->n_links++;
        node->links[l].bw = 0;
    }
    node->links[l].type = type;
    node->links[l].rem = rem;
    node->links[l].bw += bw;
    tp_link save = node->links[l];
    while (l > 0 && node->links[l - 1].bw < save.bw) {
        node->links[l] = node->links[l - 1];
        l--;
    }
    node->links[l] = save;
    return TP_OK;
}

float tp_system__nvlink_bw(const tp_nccl_profile *p, int cuda_comp_cap)
{
    /* NCCL ncclTopoNVLinkBw; unknown (old) GPUs get the SM80 rate. Blackwell has its own rate
     * from 2.25.1 on. */
    if (p->sm100_nvlink_bw > 0 && cuda_comp_cap >= 100)
        return p->sm100_nvlink_bw;
    if (cuda_comp_cap >= 90)
        return TP_SM90_NVLINK_BW;
    if (cuda_comp_cap == 86)
        return TP_SM86_NVLINK_BW;
    if (cuda_comp_cap >= 80)
        return TP_SM80_NVLINK_BW;
    if (cuda_comp_cap >= 70)
        return TP_SM70_NVLINK_BW;
    if (cuda_comp_cap >= 60)
        return TP_SM60_NVLINK_BW;
    return TP_SM80_NVLINK_BW;
}

/*
 * NCCL 2.22.3 ncclTopoSort: move the link to the parent last (shifting the
 * following links down to the first empty slot, which may lie past n_links
 * after removals, as in NCCL), then sort the PCI children.
 */
static void sort_rec(tp_node *node, const tp_node *up, int depth)
{
    if (up) {
        int l = 0;
        while (l < node->n_slots && node->links[l].rem != up)
            l++;
        if (l == node->n_slots)
            return;
        tp_link up_link = node->links[l];
        while (l + 1 < node->n_slots && node->links[l + 1].rem) {
            node->links[l] = node->links[l + 1];
            l++;
        }
        node->links[l] = up_link;
    }
    /* A PCI tree is at most a few levels deep; the bound only guards cycles. */
    if (depth > TP_MAX_NODES * TP_NODE_TYPE_COUNT)
        return;
    for (int l = 0; l < node->n_links; l++) {
        tp_link *link = node->links + l;
        if (link->type == TP_LINK_PCI && link->rem != up)
            sort_rec(link->rem, node, depth + 1);
    }
}

tp_status tp_system__sort(tp_system *sys, tp_error *err)
{
    (void)err;
    for (int n = 0; n < sys->nodes[TP_NODE_CPU].count; n++)
        sort_rec(sys->nodes[TP_NODE_CPU].nodes + n, NULL, 0);
    return TP_OK;
}

void tp_system__cpu_type(const tp_system *sys, int *arch, int *vendor, int *model)
{
    /* NCCL 2.22.3 ncclTopoCpuType reads the first CPU (there is always one). */
    const tp_node *cpu = sys->nodes[TP_NODE_CPU].nodes;
    bool any = sys->nodes[TP_NODE_CPU].count > 0;
    *arch = any ? cpu->cpu.arch : TP_TOPO_UNDEF;
    *vendor = any ? cpu->cpu.vendor : TP_TOPO_UNDEF;
    *model = any ? cpu->cpu.model : TP_TOPO_UNDEF;
}

/* ---- printing (NCCL 2.22.3 ncclTopoPrint / ncclTopoPrintRec) ---- */

/*
 * One printed line under construction: NCCL reuses one char[1024], a line's indent being what
 * the line above it left there. A piece is written whole, then cut where snprintf into that
 * buffer would have cut (PRINT_PIECE_MAX: room past the buffer for the longest piece).
 */
#define PRINT_PIECE_MAX 256
typedef struct print_line {
    char text[TP_SYSTEM_LINE_SIZE + PRINT_PIECE_MAX];
} print_line;

/* The line cut at the end of NCCL's buffer: its length. */
static int cut(print_line *pl, char *end)
{
    int at = (int)(end - pl->text);
    if (at > TP_SYSTEM_LINE_SIZE - 1)
        at = TP_SYSTEM_LINE_SIZE - 1;
    pl->text[at] = '\0';
    return at;
}

/* The line (len bytes) as a log line: tp_log_put_sub would measure the text again, and the
 * tree prints a line per node and link. */
static void put_line(tp_log *log, const print_line *pl, int len)
{
    char *text = tp_log_begin_line(log, TP_SUB_GRAPH, (size_t)len + 1);
    if (text)
        memcpy(text, pl->text, (size_t)len + 1);
}

/* The type a node prints as: 2.30.3 (TP_RULE_DEV_NODES) links GPUs' neighbours to their DEV. */
static const char *print_type_name(const tp_node *n, bool dev_view)
{
    return dev_view && n->type == TP_NODE_GPU ? "DEV" : tp_node_type_name(n->type);
}

/* "NAME/SYS-LOCAL" (ids in lower-case hex). */
static char *put_name_sys_id(char *p, const tp_node *n, bool dev_view)
{
    p = TP_PUT_LIT(tp_put_str(p, print_type_name(n, dev_view)), "/");
    p = tp_put_hex(p, (unsigned long long)TP_ID_SYSTEM_ID(n->id), 1, false);
    return tp_put_hex(TP_PUT_LIT(p, "-"), (unsigned long long)TP_ID_LOCAL_ID(n->id), 1, false);
}

/* "NAME/ID": ids in upper-case hex (2.22.3), "NAME/SYS-LOCAL" with TP_RULE_LOG_SYSTEM_IDS. */
static char *put_name_id(char *p, const tp_node *n, const tp_nccl_profile *prof)
{
    if (tp_profile_has(prof, TP_RULE_LOG_SYSTEM_IDS))
        return put_name_sys_id(p, n, tp_profile_has(prof, TP_RULE_DEV_NODES));
    p = TP_PUT_LIT(tp_put_str(p, tp_node_type_name(n->type)), "/");
    return tp_put_hex(p, (unsigned long long)n->id, 1, true);
}

/* "NAME/SYS-LOCAL" (ids in lower-case hex), then the type's details: the line's length. */
static int print_node_head(print_line *pl, int offset, const tp_node *n, bool dev_view)
{
    char *p = put_name_sys_id(pl->text + offset, n, dev_view);
    if (n->type == TP_NODE_GPU && dev_view) { /* the DEV: its PCI device word */
        p = tp_put_hex(TP_PUT_LIT(p, " ("), n->pci.device, 1, false);
        p = TP_PUT_LIT(p, ")");
    } else if (n->type == TP_NODE_GPU) {
        p = TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, " ("), n->gpu.rank, 0), ")");
    } else if (n->type == TP_NODE_CPU) {
        p = TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, " ("), n->cpu.arch, 0), "/");
        p = TP_PUT_LIT(tp_put_int(p, n->cpu.vendor, 0), "/");
        p = TP_PUT_LIT(tp_put_int(p, n->cpu.model, 0), ")");
    } else if (n->type == TP_NODE_PCI) {
        p = tp_put_hex(TP_PUT_LIT(p, " ("), n->pci.device, 1, false);
        p = TP_PUT_LIT(p, ")");
    }
    return cut(pl, p);
}

/* "NAME/ID", a NET with its asic, port and speed ("%f"): the line's length. */
static int print_leaf(print_line *pl, int offset, const tp_node *rem, const tp_nccl_profile *prof)
{
    char *p = put_name_id(pl->text + offset, rem, prof);
    if (rem->type == TP_NODE_NET && tp_profile_has(prof, TP_RULE_LOG_NET_COLL)) {
        p = TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, " ("), rem->net.coll_support, 0), "/");
        p = tp_put_hex(p, rem->net.asic, 1, false);
        p = TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, "/"), rem->net.port, 0), "/");
        p += tp_format_fixed(p, rem->net.bw, 6);
        p = TP_PUT_LIT(p, ")");
    } else if (rem->type == TP_NODE_NET) {
        p = tp_put_hex(TP_PUT_LIT(p, " ("), rem->net.asic, 1, false);
        p = TP_PUT_LIT(tp_put_int(TP_PUT_LIT(p, "/"), rem->net.port, 0), "/");
        p += tp_format_fixed(p, rem->net.bw, 6);
        p = TP_PUT_LIT(p, ")");
    }
    return cut(pl, p);
}

/* "+ LINK[BW] - " ("%2.1f": never narrower than 3 characters) from offset: the length. */
static int print_link_head(print_line *pl, int offset, const tp_link *link)
{
    char *p = TP_PUT_LIT(pl->text + offset, "+ ");
    p = TP_PUT_LIT(tp_put_str(p, tp_link_type_name(link->type)), "[");
    return cut(pl, TP_PUT_LIT(tp_put_f1(p, link->bw), "] - "));
}

/* A DEV's LOC link to its GPU (2.30.3 TP_RULE_DEV_NODES). */
static void print_dev_loc(tp_log *log, print_line *pl, int offset, const tp_node *node)
{
    char *p = TP_PUT_LIT(pl->text + offset, "+ LOC[");
    p = TP_PUT_LIT(tp_put_f1(p, TP_LOC_BW), "] - GPU/");
    p = tp_put_hex(p, (unsigned long long)TP_ID_SYSTEM_ID(node->id), 1, false);
    p = tp_put_hex(TP_PUT_LIT(p, "-"), (unsigned long long)TP_ID_LOCAL_ID(node->id), 1, false);
    put_line(log, pl, cut(pl, p));
}

static void print_rec(tp_log *log, const tp_nccl_profile *prof, const tp_system *kept,
                      const tp_node *node, const tp_node *prev, print_line *pl, int offset,
                      int depth)
{
    bool dev_view = tp_profile_has(prof, TP_RULE_DEV_NODES);
    put_line(log, pl, print_node_head(pl, offset, node, dev_view));
    memset(pl->text, ' ', (size_t)offset);
    /* The DEV's LOC link to its GPU, its first: ncclTopoConnectNodes keeps links by bandwidth,
     * so only faster ones (B200's NVLinks to the NVSwitch, 5052.6) come before it. */
    bool loc_due =
        dev_view && node->type == TP_NODE_GPU && tp_system__find(kept, TP_NODE_GPU, node->id);
    for (int l = 0; l < node->n_links; l++) {
        const tp_link *link = node->links + l;
        if (loc_due && !(link->bw > TP_LOC_BW)) {
            print_dev_loc(log, pl, offset, node);
            loc_due = false;
        }
        if (link->type == TP_LINK_PCI && link->rem == prev)
            continue;
        int next = print_link_head(pl, offset, link);
        if (link->type == TP_LINK_LOC)
            put_line(log, pl, cut(pl, put_name_id(pl->text + next, link->rem, prof)));
        else if (link->type == TP_LINK_PCI && depth < TP_MAX_NODES)
            print_rec(log, prof, kept, link->rem, node, pl, next, depth + 1);
        else
            put_line(log, pl, print_leaf(pl, next, link->rem, prof));
    }
    if (loc_due)
        print_dev_loc(log, pl, offset, node);
}

void tp_system__print(tp_log *log, const tp_system *sys)
{
    tp_system__print_kept(log, sys, sys);
}

void tp_system__print_kept(tp_log *log, const tp_system *sys, const tp_system *kept)
{
    /* "=== System : maxBw %2.1f totalBw %2.1f ===" ("%.1f" writes 3 characters or more) */
    char *p = tp_log_begin_line(log, TP_SUB_GRAPH, 64 + 2 * TP_F1_SIZE);
    if (!p)
        return;
    p = TP_PUT_LIT(tp_put_f1(TP_PUT_LIT(p, "=== System : maxBw "), kept->max_bw), " totalBw ");
    tp_log_end_line(log, TP_PUT_LIT(tp_put_f1(p, kept->total_bw), " ==="));
    print_line pl;
    for (int n = 0; n < sys->nodes[TP_NODE_CPU].count; n++)
        print_rec(log, sys->profile, kept, sys->nodes[TP_NODE_CPU].nodes + n, NULL, &pl, 0, 0);
    tp_log_put_sub(log, TP_SUB_GRAPH, "==========================================");
}

/* ---- invariant checker ---- */

static bool in_system(const tp_system *sys, const tp_node *n)
{
    if (!n || n->type < 0 || n->type >= TP_NODE_TYPE_COUNT)
        return false;
    const tp_node_set *set = &sys->nodes[n->type];
    return n >= set->nodes && n < set->nodes + set->count;
}

static bool has_link_to(const tp_node *from, const tp_node *to, int type)
{
    for (int l = 0; l < from->n_links; l++)
        if (from->links[l].rem == to && from->links[l].type == type)
            return true;
    return false;
}

static tp_status check_node(const tp_system *sys, const tp_node *n, tp_node_type t, int i,
                            tp_error *err)
{
    if (n->type != t || n->n_links < 0 || n->n_links > n->n_slots || n->n_slots > TP_MAX_LINKS)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "%s node %d: bad type or link count",
                       tp_node_type_name(t), i);
    for (int l = 0; l < n->n_links; l++) {
        const tp_link *link = n->links + l;
        if (!in_system(sys, link->rem))
            return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                           "%s/%" PRIx64 " link %d points outside the system", tp_node_type_name(t),
                           (uint64_t)n->id, l);
        /* Zero is NCCL's: an <nvlink count="0"> makes a link of no bandwidth. */
        if (!(link->bw >= 0.0f) || !isfinite(link->bw))
            return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                           "%s/%" PRIx64 " link %d has a negative or infinite bandwidth",
                           tp_node_type_name(t), (uint64_t)n->id, l);
        /* PCI, SYS and NET links always come in pairs in NCCL's model. */
        bool paired =
            link->type == TP_LINK_PCI || link->type == TP_LINK_SYS || link->type == TP_LINK_NET;
        if (paired && !has_link_to(link->rem, n, link->type))
            return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0,
                           "%s/%" PRIx64 " %s link has no reverse", tp_node_type_name(t),
                           (uint64_t)n->id, tp_link_type_name(link->type));
    }
    return TP_OK;
}

tp_status tp_system__check(const tp_system *sys, tp_error *err)
{
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++) {
        if (sys->nodes[t].count < 0 || sys->nodes[t].count > TP_MAX_NODES)
            return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "bad %s node count %d",
                           tp_node_type_name(t), sys->nodes[t].count);
        for (int i = 0; i < sys->nodes[t].count; i++) {
            tp_status st = check_node(sys, sys->nodes[t].nodes + i, t, i, err);
            if (st != TP_OK)
                return st;
        }
    }
    return TP_OK;
}

/* A bus id's bytes: a hex digit's value + 1, BUSID_SKIP for the '.' and ':' between digits, 0 for
 * what ends it (NUL included): one table read a byte. */
#define BUSID_SKIP 17
/* clang-format off */
static const unsigned char busid_bytes[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
    ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
    ['.'] = BUSID_SKIP, [':'] = BUSID_SKIP,
};
/* clang-format on */

/* Append the hex digit at p[i] to *v: false (nothing read past it) when it is none. */
static inline bool busid_digit(const unsigned char *p, int i, uint64_t *v)
{
    unsigned k = busid_bytes[p[i]] - 1u; /* 0-15 for a digit; others wrap past 15 */
    if (k >= 16)
        return false;
    *v = *v << 4 | k;
    return true;
}

/* NCCL's own form "dddd:bb:dd.f", then a byte that ends it: its nine digits read at their
 * places, each byte only after the one before matched (bus ids are read per <pci> by both
 * the preparation and the build). */
static bool canonical_busid(const unsigned char *p, uint64_t *v)
{
    *v = 0;
    return busid_digit(p, 0, v) && busid_digit(p, 1, v) && busid_digit(p, 2, v) &&
           busid_digit(p, 3, v) && p[4] == ':' && busid_digit(p, 5, v) && busid_digit(p, 6, v) &&
           p[7] == ':' && busid_digit(p, 8, v) && busid_digit(p, 9, v) && p[10] == '.' &&
           busid_digit(p, 11, v) && busid_bytes[p[12]] == 0;
}

int64_t tp_system__busid_to_int64(const char *busid, int *n_digits)
{
    uint64_t canonical = 0;
    if (canonical_busid((const unsigned char *)busid, &canonical)) {
        if (n_digits)
            *n_digits = 9;
        return (int64_t)canonical; /* 36 bits: no saturation */
    }
    /* NCCL 2.22.3 keeps at most 16 hex digits (skipping '.' and ':') and converts with
     * strtol: saturated at LONG_MAX (16 digits fit 64 bits). */
    uint64_t v = 0;
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)busid; n < 16; p++) {
        unsigned k = busid_bytes[*p];
        if (k == 0)
            break;
        if (k == BUSID_SKIP)
            continue;
        v = v << 4 | (k - 1);
        n++;
    }
    if (n_digits)
        *n_digits = n;
    return v > (uint64_t)LONG_MAX ? (int64_t)LONG_MAX : (int64_t)v;
}
