/*
 * verify: one plan per kind of rank, not one per rank.
 *
 * A rank's expected lines depend on its host's topology and settings, its local index and
 * where its channels lead (the ring and tree neighbours, NVLS heads: which host, relative to
 * its own, and which local rank). Ranks that agree on all of it (a "kind", its key from the
 * channels of one plan of the whole job) print the same lines up to their rank numbers: the
 * kind's first rank is planned, and every other rank's lines are the planned ones with each
 * rank number moved by the host distance. The second rank of a kind is planned too and must
 * equal its renumbered lines (and transports), or every rank of the kind is planned alone;
 * so is rank 0 (it alone prints some lines) and any job whose hosts differ in GPU count.
 */
#include "verify/verify.h"

#include "plan/plan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ints a neighbour takes in a key: host distance, local index, host kind. */
#define TP_KEY_PER_PEER 3

struct tp_vkind {
    int *key;
    size_t key_len;
    uint64_t hash;
    int rep;                   /* the rank planned for the kind */
    int state;                 /* 0: only rep planned, 1: renumbering checked, -1: plan each rank */
    char **lines[TP_VS_COUNT]; /* rep's normalized lines */
    size_t n_lines[TP_VS_COUNT];
    char *transport; /* rep's transports (per local rank), NULL when none */
    int *ring_net;   /* rep's ring NETs and proxies (host-relative), n_ring_net channels */
    int n_ring_net;
    char *net_names; /* rep's NET names, net_names_len bytes */
    size_t net_names_len;
    int n_net_names;
    int n_local, gdr;
    int plan_status;
};

/* The job plan the keys come from, and the kinds seen. */
struct tp_vkinds {
    tp_plan *job;
    int n_ranks, n_hosts, gpus; /* gpus: every host's rank count (uniform) */
    int special[3];             /* ranks planned alone: 0 and the dump ranks */
    tp_vkind *kinds;
    size_t n, cap;
    size_t *slots; /* open addressing (index + 1) */
    size_t n_slots;
    unsigned long planned, renumbered;
};

static void kind_clear(tp_vkind *k)
{
    free(k->key);
    for (int s = 0; s < TP_VS_COUNT; s++) {
        for (size_t i = 0; i < k->n_lines[s]; i++)
            free(k->lines[s][i]);
        free(k->lines[s]);
    }
    free(k->transport);
    free(k->ring_net);
    free(k->net_names);
}

void tp_verify__kinds_free(tp_vkinds *ks)
{
    if (!ks)
        return;
    for (size_t i = 0; i < ks->n; i++)
        kind_clear(&ks->kinds[i]);
    free(ks->kinds);
    free(ks->slots);
    tp_plan_free(ks->job);
    free(ks);
}

unsigned long tp_verify__kinds_planned(const tp_vkinds *ks, unsigned long *renumbered)
{
    *renumbered = ks ? ks->renumbered : 0;
    return ks ? ks->planned : 0;
}

/* The job's plan of rank 0 (every rank's channels), when its hosts have one GPU count. */
tp_status tp_verify__kinds_new(tp_vkinds **out, const tp_verify *v, tp_error *err)
{
    *out = NULL;
    tp_vkinds *ks = calloc(1, sizeof(*ks));
    if (!ks)
        return tp_fail_nomem(err);
    tp_job job = v->opt.job;
    job.version = TP_JOB_VERSION;
    job.n_nodes = v->n_nodes;
    job.rank = 0;
    job.node_topos = (const char *const *)v->node_topos;
    if (job.n_node_topos > job.n_nodes - 1)
        job.n_node_topos = job.n_nodes - 1;
    tp_status st =
        tp_plan_buffer(&ks->job, v->topo_text, v->topo_len, v->topo_source, &job, v->cfg, NULL);
    if (st != TP_OK || ks->job->status != TP_OK) {
        /* no job plan: every rank is planned alone (its own failure is reported there) */
        tp_verify__kinds_free(ks);
        return st == TP_ERR_NOMEM ? tp_fail_nomem(err) : TP_OK;
    }
    const tp_plan *p = ks->job;
    ks->n_ranks = p->facts.n_ranks;
    ks->n_hosts = p->job.n_nodes;
    ks->gpus = p->host_first_rank[1] - p->host_first_rank[0];
    for (int h = 0; h < ks->n_hosts; h++)
        if (p->host_first_rank[h + 1] - p->host_first_rank[h] != ks->gpus) {
            tp_verify__kinds_free(ks);
            return TP_OK;
        }
    ks->special[0] = 0;
    ks->special[1] = tp_config_int(v->cfg, TP_P_TOPO_DUMP_FILE_RANK);
    ks->special[2] = tp_config_int(v->cfg, TP_P_GRAPH_DUMP_FILE_RANK);
    *out = ks;
    return TP_OK;
}

/* ---- keys ---- */

static bool push_int(int **key, size_t *n, size_t *cap, int x)
{
    if (*n == *cap && tp_grow((void **)key, cap, *n + 1, sizeof(int), NULL) != TP_OK)
        return false;
    (*key)[(*n)++] = x;
    return true;
}

/* A neighbour as the rank sees it: host distance, local index, kind of that host. */
static bool push_peer(const tp_vkinds *ks, int host, int peer, int **key, size_t *n, size_t *cap)
{
    if (peer < 0 || peer >= ks->n_ranks) /* none, or NVLS's virtual ranks: kept as they are */
        return push_int(key, n, cap, peer) && push_int(key, n, cap, -1) &&
               push_int(key, n, cap, -1);
    int ph = peer / ks->gpus;
    return push_int(key, n, cap, ((ph - host) % ks->n_hosts + ks->n_hosts) % ks->n_hosts) &&
           push_int(key, n, cap, peer % ks->gpus) && push_int(key, n, cap, ks->job->host_kind[ph]);
}

static bool rank_key(const tp_vkinds *ks, int rank, int **key, size_t *n)
{
    size_t cap = 0;
    *key = NULL;
    *n = 0;
    int host = rank / ks->gpus;
    tp_channels_info ch;
    bool ok = tp_plan_channels(ks->job, &ch, sizeof(ch)) == TP_OK &&
              push_int(key, n, &cap, ks->job->host_kind[host]) &&
              push_int(key, n, &cap, rank % ks->gpus);
    for (int c = 0; ok && c < ch.n_channels; c++) {
        tp_rank_channel rc;
        ok = tp_plan_rank_channel(ks->job, rank, c, &rc, sizeof(rc)) == TP_OK;
        int peers[6] = {rc.ring_prev,    rc.ring_next,    rc.tree_up,
                        rc.tree_down[0], rc.tree_down[1], rc.tree_down[2]};
        for (int i = 0; ok && i < 6; i++)
            ok = push_peer(ks, host, peers[i], key, n, &cap);
    }
    for (int c = 0; ok && c < ch.n_nvls_channels; c++) {
        tp_rank_nvls nv;
        if (tp_plan_rank_nvls(ks->job, rank, c, &nv, sizeof(nv)) != TP_OK)
            break;
        int peers[4] = {nv.tree_up, nv.tree_down[0], nv.tree_down[1], nv.tree_down[2]};
        ok = push_int(key, n, &cap, nv.head_rank) && push_int(key, n, &cap, nv.down);
        for (int i = 0; ok && i < 4; i++)
            ok = push_peer(ks, host, peers[i], key, n, &cap);
    }
    if (!ok) {
        free(*key);
        *key = NULL;
    }
    return ok;
}

static uint64_t key_hash(const int *key, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint64_t)(unsigned)key[i];
        h *= 1099511628211ull;
    }
    return h;
}

static bool rehash(tp_vkinds *ks)
{
    size_t n = ks->n_slots ? ks->n_slots * 2 : 64;
    size_t *slots = calloc(n, sizeof(*slots));
    if (!slots)
        return false;
    for (size_t i = 0; i < ks->n; i++) {
        size_t s = ks->kinds[i].hash & (n - 1);
        while (slots[s])
            s = (s + 1) & (n - 1);
        slots[s] = i + 1;
    }
    free(ks->slots);
    ks->slots = slots;
    ks->n_slots = n;
    return true;
}

/* The kind of a rank (found or added, *added true), NULL for a rank planned alone. */
static tp_vkind *kind_of(tp_vkinds *ks, int rank, bool *added)
{
    *added = false;
    for (int i = 0; i < 3; i++)
        if (rank == ks->special[i])
            return NULL;
    int *key;
    size_t n;
    if (!rank_key(ks, rank, &key, &n))
        return NULL;
    uint64_t h = key_hash(key, n);
    for (size_t s = ks->n_slots ? h & (ks->n_slots - 1) : 0; ks->n_slots && ks->slots[s];
         s = (s + 1) & (ks->n_slots - 1)) {
        tp_vkind *k = &ks->kinds[ks->slots[s] - 1];
        if (k->hash == h && k->key_len == n && memcmp(k->key, key, n * sizeof(int)) == 0) {
            free(key);
            return k;
        }
    }
    if (((ks->n + 1) * 2 > ks->n_slots && !rehash(ks)) ||
        (ks->n == ks->cap &&
         tp_grow((void **)&ks->kinds, &ks->cap, ks->n + 1, sizeof(*ks->kinds), NULL) != TP_OK)) {
        free(key);
        return NULL;
    }
    tp_vkind *k = &ks->kinds[ks->n];
    *k = (tp_vkind){.key = key, .key_len = n, .hash = h, .rep = rank};
    size_t s = h & (ks->n_slots - 1);
    while (ks->slots[s])
        s = (s + 1) & (ks->n_slots - 1);
    ks->slots[s] = ++ks->n;
    *added = true;
    return k;
}

/* ---- renumbering ---- */

typedef struct renumber {
    int shift; /* hosts */
    const tp_vkinds *ks;
} renumber;

static int moved(const renumber *m, long x)
{
    const tp_vkinds *ks = m->ks;
    if (x < 0 || x >= ks->n_ranks)
        return (int)x;
    int h = (int)(x / ks->gpus);
    return ((h + m->shift) % ks->n_hosts) * ks->gpus + (int)(x % ks->gpus);
}

/* Copy [p, end) of the line, each integer moved (or, in brackets, kept). */
static char *move_ints(const renumber *m, const char *p, char *o, char *end, bool keep_bracketed)
{
    bool bracket = false;
    while (*p && o + 16 < end) {
        bool start = isdigit((unsigned char)*p) || (*p == '-' && isdigit((unsigned char)p[1]));
        if (!start) {
            bracket = *p == '[' ? true : *p == ']' ? false : bracket;
            *o++ = *p++;
            continue;
        }
        char *after;
        long x = strtol(p, &after, 10);
        o += sprintf(o, "%d", keep_bracketed && bracket ? (int)x : moved(m, x));
        p = after;
    }
    *o = '\0';
    return o;
}

/* The "(rank)" of a system line's GPU, and the GPU/rank tokens of a search channel line. */
static void move_gpu_tokens(const renumber *m, const char *p, char *o, char *end, bool system)
{
    while (*p && o + 16 < end) {
        if (strncmp(p, "GPU/", 4) != 0) {
            *o++ = *p++;
            continue;
        }
        memcpy(o, p, 4);
        o += 4;
        p += 4;
        const char *q = p;
        if (system) { /* GPU/<hex>-<hex> (rank) */
            while (isxdigit((unsigned char)*q) || *q == '-')
                q++;
            if (strncmp(q, " (", 2) != 0)
                continue;
            q += 2;
        }
        char *after;
        long x = strtol(q, &after, 10);
        if (after == q || (system ? *after != ')' : (*after != ' ' && *after)))
            continue;
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        o += sprintf(o, "%d", moved(m, x));
        p = after;
    }
    *o = '\0';
}

/* " 0 : NET/0 GPU/3 ...": a search channel line. */
static bool search_channel_line(const char *body)
{
    while (*body == ' ')
        body++;
    if (!isdigit((unsigned char)*body))
        return false;
    while (isdigit((unsigned char)*body))
        body++;
    return strncmp(body, " : ", 3) == 0;
}

/* A normalized line of the kind's rank as another rank of the kind prints it. */
static void renumber_line(const renumber *m, const char *in, char *out, size_t size)
{
    char *end = out + size;
    const char *body = in + 5; /* after "INFO " / "WARN " */
    if (strncmp(in, "INFO ", 5) != 0 || m->shift == 0) {
        snprintf(out, size, "%s", in);
        return;
    }
    static const struct {
        const char *head;
        int skip; /* integers of the head kept as they are (a channel) */
    } rank_lines[] = {{"comm PTR rank ", 0}, {"Ring ", 1}, {"Tree ", 1}, {"NVLS Trees : ", 0}};
    for (size_t i = 0; i < ARRAY_LEN(rank_lines); i++) {
        size_t n = strlen(rank_lines[i].head);
        if (strncmp(body, rank_lines[i].head, n) != 0)
            continue;
        const char *p = body + n;
        if (strncmp(rank_lines[i].head, "comm", 4) == 0) {
            /* only the rank: nRanks and the rest stay */
            char *after;
            long x = strtol(p, &after, 10);
            snprintf(out, size, "%.*s%d%s", (int)(p - in), in, moved(m, x), after);
            return;
        }
        if (rank_lines[i].skip)
            p += strspn(p, "0123456789");
        char *o = out + snprintf(out, size, "%.*s", (int)(p - in), in);
        move_ints(m, p, o, end, false);
        return;
    }
    if (strncmp(body, "Trees", 5) == 0) {
        char *o = out + snprintf(out, size, "INFO Trees");
        move_ints(m, body + 5, o, end, true);
    } else if (search_channel_line(body) || strstr(body, " - GPU/")) {
        move_gpu_tokens(m, in, out, end, !search_channel_line(body));
    } else {
        snprintf(out, size, "%s", in);
    }
}

static tp_status renumbered_hashes(const tp_vkinds *ks, const tp_vkind *k, int rank,
                                   tp_hashes out[TP_VS_COUNT], tp_error *err)
{
    renumber m = {.shift = ((rank / ks->gpus - k->rep / ks->gpus) % ks->n_hosts + ks->n_hosts) %
                           ks->n_hosts,
                  .ks = ks};
    char buf[TP_VERIFY_LINE_MAX + 64];
    for (int s = 0; s < TP_VS_COUNT; s++)
        for (size_t i = 0; i < k->n_lines[s]; i++) {
            renumber_line(&m, k->lines[s][i], buf, sizeof(buf));
            if (tp_hashes_push(&out[s], tp_verify__hash(buf), err) != TP_OK)
                return TP_ERR_NOMEM;
        }
    return TP_OK;
}

/* ---- the kinds at work ---- */

static size_t names_len(const tp_vrank *r)
{
    size_t len = 0;
    for (int d = 0; r->net_names && d < r->n_net_names; d++)
        len += strlen(r->net_names + len) + 1;
    return len;
}

/* The NETs of rank r's ring channels and its host's NET names, from (to) the kind. */
static tp_status copy_nets(int **ring_net, int *n_ring_net, char **names, int *n_names,
                           const int *from_net, int from_n, const char *from_names,
                           size_t names_bytes, int from_n_names, tp_error *err)
{
    *n_ring_net = from_n;
    *n_names = from_n_names;
    if (from_net && !(*ring_net = malloc(2 * (size_t)from_n * sizeof(int))))
        return tp_fail_nomem(err);
    if (from_net)
        memcpy(*ring_net, from_net, 2 * (size_t)from_n * sizeof(int));
    if (from_names && !(*names = malloc(names_bytes)))
        return tp_fail_nomem(err);
    if (from_names)
        memcpy(*names, from_names, names_bytes);
    return TP_OK;
}

static tp_status keep_rep(tp_vkind *k, const tp_vrank *r, char **lines[TP_VS_COUNT],
                          const size_t n_lines[TP_VS_COUNT], tp_error *err)
{
    for (int s = 0; s < TP_VS_COUNT; s++) {
        k->lines[s] = lines[s];
        k->n_lines[s] = n_lines[s];
    }
    k->plan_status = r->plan_status;
    k->n_local = r->n_local;
    k->gdr = r->gdr;
    if (r->transport && tp_strdup(&k->transport, r->transport, err) != TP_OK)
        return TP_ERR_NOMEM;
    k->net_names_len = names_len(r);
    return copy_nets(&k->ring_net, &k->n_ring_net, &k->net_names, &k->n_net_names, r->ring_net,
                     r->n_ring_net, r->net_names, k->net_names_len, r->n_net_names, err);
}

static bool same_transports(const tp_vkind *k, const tp_vrank *r)
{
    if (!k->transport || !r->transport)
        return !k->transport && !r->transport;
    bool nets = k->n_ring_net == r->n_ring_net && !k->ring_net == !r->ring_net &&
                (!k->ring_net ||
                 memcmp(k->ring_net, r->ring_net, 2 * (size_t)k->n_ring_net * sizeof(int)) == 0) &&
                k->n_net_names == r->n_net_names && k->net_names_len == names_len(r) &&
                (!k->net_names || memcmp(k->net_names, r->net_names, k->net_names_len) == 0);
    return nets && strcmp(k->transport, r->transport) == 0 && k->gdr == r->gdr &&
           k->n_local == r->n_local;
}

/* The second rank of a kind, planned: does the kind's renumbering give its lines? */
static tp_status check_kind(tp_vkinds *ks, tp_vkind *k, const tp_vrank *r, tp_error *err)
{
    tp_hashes h[TP_VS_COUNT];
    memset(h, 0, sizeof(h));
    tp_status st = renumbered_hashes(ks, k, r->rank, h, err);
    bool same =
        st == TP_OK && r->plan_status == TP_OK && k->plan_status == TP_OK && same_transports(k, r);
    for (int s = 0; s < TP_VS_COUNT; s++) {
        same = same && h[s].n == r->expected[s].n &&
               (!h[s].n || memcmp(h[s].h, r->expected[s].h, h[s].n * sizeof(uint64_t)) == 0);
        free(h[s].h);
    }
    k->state = same ? 1 : -1;
    return st;
}

tp_status tp_verify__plan_by_kind(tp_verify *v, tp_vrank *r, bool *done, tp_error *err)
{
    tp_vkinds *ks = v->kinds;
    *done = false;
    bool added = false;
    tp_vkind *k = ks ? kind_of(ks, r->rank, &added) : NULL;
    if (!k || k->state < 0)
        return TP_OK; /* planned alone */
    if (added || k->state == 0) {
        /* plan it, keeping the lines (the representative) or checking them (the witness) */
        char **lines[TP_VS_COUNT] = {0};
        size_t n_lines[TP_VS_COUNT] = {0};
        ks->planned++;
        tp_status st = tp_verify__expected_lines(v, r, added ? lines : NULL, n_lines, err);
        *done = true;
        if (st == TP_OK && added)
            return keep_rep(k, r, lines, n_lines, err);
        if (st == TP_OK)
            return check_kind(ks, k, r, err);
        k->state = -1; /* a failure is the rank's own: its kind is planned rank by rank */
        for (int s = 0; s < TP_VS_COUNT; s++) {
            for (size_t i = 0; i < n_lines[s]; i++)
                free(lines[s][i]);
            free(lines[s]);
        }
        return st;
    }
    ks->renumbered++;
    *done = true;
    r->planned = true;
    r->expected_ok = true;
    r->plan_status = k->plan_status;
    if (renumbered_hashes(ks, k, r->rank, r->expected, err) != TP_OK)
        return TP_ERR_NOMEM;
    if (!k->transport)
        return TP_OK;
    r->first_local = r->rank / ks->gpus * ks->gpus;
    r->n_local = k->n_local;
    r->gdr = k->gdr;
    if (tp_strdup(&r->transport, k->transport, err) != TP_OK)
        return TP_ERR_NOMEM;
    return copy_nets(&r->ring_net, &r->n_ring_net, &r->net_names, &r->n_net_names, k->ring_net,
                     k->n_ring_net, k->net_names, k->net_names_len, k->n_net_names, err);
}
