/*
 * Setting notes: the NCCL_* values NCCL 2.22.3 would misread or that leave
 * the job on a fallback, each in one line with its consequence for the job
 * (the plan re-planned without the setting, compared in NCCL's tuning model).
 * A CLI prints them for every command; a library user reads them here.
 */
#include "common/names.h"
#include "netdev/netdev.h"
#include "plan/plan.h"
#include "query/query.h"
#include "tuning/tuning_table.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Room for one note: the setting, what NCCL does, the cost of four calls. */
#define NOTE_MAX 1536

typedef struct notes_ctx {
    tp_findings *f;
    const tp_config *cfg;
    const tp_plan *plan;     /* NULL: the configuration alone */
    tp_finding_cost pending; /* the cost of the note being written (at 0: none) */
} notes_ctx;

/* Lower-case copy of a short name (for the edit distance, which NCCL's strcasecmp ignores). */
static void lower_copy(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < size; i++)
        dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = '\0';
}

static const char *nearest_name(const char *token, const char *const *names, int n)
{
    char a[64], b[64];
    lower_copy(a, sizeof(a), token);
    size_t best = (size_t)-1;
    const char *nearest = names[0];
    for (int i = 0; i < n; i++) {
        lower_copy(b, sizeof(b), names[i]);
        size_t d = tp_edit_distance(a, b);
        if (d < best)
            best = d, nearest = names[i];
    }
    return nearest;
}

/* Append to a note, keeping it NUL-terminated within NOTE_MAX. */
static void put(char *note, const char *fmt, ...) TP_PRINTF(2, 3);
static void put(char *note, const char *fmt, ...)
{
    size_t used = strlen(note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + used, NOTE_MAX - used, fmt, ap);
    va_end(ap);
}

/* The unknown names of an NCCL_ALGO / NCCL_PROTO list (NCCL's parseList ignores them). */
static int unknown_names(char *note, const char *text, const char *const *names, int n,
                         const char *what)
{
    char copy[512];
    snprintf(copy, sizeof(copy), "%s", text[0] == '^' ? text + 1 : text);
    int n_unknown = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        bool known = false;
        for (int i = 0; i < n && !known; i++)
            known = strcasecmp(tok, names[i]) == 0;
        if (known)
            continue;
        put(note, "%s\"%s\" is no %s NCCL 2.22.3 knows (nearest: %s)", n_unknown ? "; " : "", tok,
            what, nearest_name(tok, names, n));
        n_unknown++;
    }
    if (n_unknown)
        put(note, ": NCCL ignores %s", n_unknown == 1 ? "it" : "them");
    return n_unknown;
}

/* "Ring and Tree", "Ring, Tree and NVLS" of the set entries. */
static void put_set(char *note, const int *on, const char *const *names, int n)
{
    int total = 0, done = 0;
    for (int i = 0; i < n; i++)
        total += on[i] != 0;
    for (int i = 0; i < n; i++)
        if (on[i]) {
            done++;
            put(note, "%s%s", done == 1 ? "" : done == total ? " and " : ", ", names[i]);
        }
}

/* The cost of the setting: the plan against itself re-planned without it. */
static void put_cost(char *note, notes_ctx *c, tp_param_id id)
{
    if (!c->plan)
        return;
    tp_config *without = NULL;
    tp_plan *alt = NULL;
    tp_error ignored = {0};
    tp_job_cost cost;
    if (tp_config__copy(&without, c->plan->cfg, &ignored) == TP_OK) {
        tp_config__unset(without, id);
        if (tp_plan__replan(&alt, c->plan, without, NULL, &ignored) == TP_OK &&
            tp_plan_cost(&cost, alt, c->plan, &ignored) == TP_OK) {
            char text[900];
            tp_job_cost_text(&cost, text, sizeof(text));
            c->pending =
                (tp_finding_cost){.at = strlen(note), .worst_change_pct = cost.worst_change_pct};
            put(note, "; against no %s (NCCL's tuning model, %d node%s): %s", tp_config_name(id),
                c->plan->job.n_nodes, c->plan->job.n_nodes == 1 ? "" : "s", text);
        }
    }
    tp_plan_free(alt);
    tp_config_free(without);
}

static void add(notes_ctx *c, const char *note)
{
    if (c->pending.at && c->f->n_costs < TP_FINDING_COSTS) {
        c->pending.line = c->f->lines.n_lines;
        c->f->costs[c->f->n_costs++] = c->pending;
    }
    c->pending = (tp_finding_cost){0};
    tp_log_info(&c->f->lines, "%s", note);
}

const tp_finding_cost *tp_findings__cost(const tp_findings *f, size_t i)
{
    for (int k = 0; f && k < f->n_costs; k++)
        if (f->costs[k].line == i)
            return &f->costs[k];
    return NULL;
}

static bool any_on(const int *on, int n)
{
    for (int i = 0; i < n; i++)
        if (on[i])
            return true;
    return false;
}

/* NCCL's algorithm or protocol names into names[] (room for TP_ALGO_COUNT); their count. */
static int names_of(const tp_config *cfg, tp_param_id id, const char **names)
{
    /* the profile's algorithms: PAT from 2.23 on */
    int n =
        id == TP_P_ALGO ? tp_tune__constants(tp_config__profile(cfg))->algo_count : TP_PROTO_COUNT;
    for (int i = 0; i < n; i++)
        names[i] = id == TP_P_ALGO ? tp_tune__algo_name(i) : tp_tune__proto_name(i);
    return n;
}

/* An NCCL_ALGO / NCCL_PROTO value read as NCCL's parseList reads it. */
typedef struct name_list {
    const char *text;
    const char *names[TP_ALGO_COUNT];
    int n;
    int asked[TP_ALGO_COUNT];
    int unknown; /* names NCCL ignores */
} name_list;

/*
 * NCCL_ALGO: a list that leaves no algorithm the job can use (NCCL then
 * enables Ring and Tree: tuning.cc, no CollNet). Whether it says so.
 */
static bool algo_fallback(const notes_ctx *c, const name_list *l, char *note)
{
    bool tuned = c->plan && c->plan->tuned && c->plan->tuning.modelled;
    /* AllReduce's row (2.22.3: every row alike) */
    const int *on = tuned ? c->plan->tuning.algo_enable[TP_COLL_ALLREDUCE] : NULL;
    bool used = false;
    for (int a = 0; on && a < l->n; a++)
        used = used || (l->asked[a] && on[a]);
    if (l->text[0] == '^' || (tuned ? used : any_on(l->asked, l->n)))
        return false;
    put(note, "%sthe list leaves no algorithm this job can use, so NCCL falls back to ",
        l->unknown ? "; " : "");
    if (on)
        put_set(note, on, l->names, l->n);
    else
        put(note, "Ring and Tree");
    return true;
}

/* NCCL_PROTO: a list that leaves no protocol (every call fails). Whether it says so. */
static bool no_protocol(const notes_ctx *c, const name_list *l, char *note)
{
    (void)c;
    if (any_on(l->asked, l->n))
        return false;
    put(note,
        "%sno protocol is left: NCCL 2.22.3 fails every collective (\"no "
        "algorithm/protocol available\")",
        l->unknown ? "; " : "");
    return true;
}

/* The name-list settings: their names' kind and what a list can leave the job without. */
static const struct name_list_setting {
    tp_param_id id;
    const char *what;
    bool (*consequence)(const notes_ctx *c, const name_list *l, char *note);
} name_list_settings[] = {
    {TP_P_ALGO, "algorithm", algo_fallback},
    {TP_P_PROTO, "protocol", no_protocol},
};

/* One name-list setting's note: unknown names and the consequence, with the cost. */
static void name_list_note(notes_ctx *c, const struct name_list_setting *s)
{
    name_list l = {.text = tp_config_str(c->cfg, s->id)};
    if (!l.text)
        return;
    l.n = names_of(c->cfg, s->id, l.names);
    char note[NOTE_MAX];
    snprintf(note, sizeof(note), "%s=%s: ", tp_config_name(s->id), l.text);
    l.unknown = unknown_names(note, l.text, l.names, l.n, s->what);
    tp_tune__parse_list(l.text, l.names, l.n, l.asked);
    if (!s->consequence(c, &l, note) && !l.unknown)
        return;
    put_cost(note, c, s->id);
    add(c, note);
}

/* The <net> ports of a topology text: name and port, as the IB plugin lists them. */
typedef struct net_port {
    const char *name;
    int port;
    double gbs;
} net_port;

static void collect_ports(const tp_xml_elem *e, net_port *ports, int *n, int max)
{
    if (strcmp(e->tag, "net") == 0 && *n < max) {
        const char *name = tp_xml__attr(e, "name"), *port = tp_xml__attr(e, "port");
        const char *speed = tp_xml__attr(e, "speed");
        if (name)
            ports[(*n)++] =
                (net_port){name, port ? atoi(port) : 1, speed ? atof(speed) / 8000.0 : 0.0};
    }
    for (size_t i = 0; i < e->n_children; i++)
        collect_ports(e->children[i], ports, n, max);
}

/* Whether one entry of a filter (alone, as a selection) matches a port. */
static bool entry_matches(const tp_hca_filter *f, int entry, const net_port *p)
{
    tp_hca_filter one = {.exact = f->exact, .n_entries = 1};
    one.entries[0] = f->entries[entry];
    return tp_hca__selects(&one, p->name, p->port);
}

static void ib_fallback_note(notes_ctx *c, const char *hca, const net_port *ports, int n)
{
    char note[NOTE_MAX];
    snprintf(note, sizeof(note),
             "NCCL_IB_HCA=%s: selects none of the topology's %d IB port%s (%s ... %s): NCCL's "
             "IB plugin finds no device and NCCL falls back to its Socket transport (TCP over "
             "the host's IP interfaces, NCCL_SOCKET_IFNAME); NCCL 2.22.3 then keeps none of "
             "these NETs (no keep mark: ncclTopoTrimXml drops their PCI branches) and adds the "
             "socket interfaces in their place, which this topology does not describe",
             hca, n, n == 1 ? "" : "s", ports[0].name, ports[n - 1].name);
    tp_graph_summary ring;
    if (c->plan->job.n_nodes > 1 &&
        tp_plan_graph(c->plan, TP_GRAPH_RING, &ring, sizeof(ring)) == TP_OK)
        put(note,
            "; this plan assumes otherwise: %d ring channel%s at %.1f GB/s over these NETs, "
            "where the real job moves inter-node traffic over TCP sockets at the Ethernet "
            "interfaces' speed",
            ring.n_channels, ring.n_channels == 1 ? "" : "s", ring.bw_inter);
    else
        put(note, "; in a one-node job no traffic crosses the network");
    add(c, note);
}

/* NCCL_IB_HCA: no device selected (socket fallback), or entries that select nothing. */
static void hca_note(notes_ctx *c)
{
    const char *hca = tp_config_str(c->cfg, TP_P_IB_HCA);
    if (!hca || !hca[0] || !c->plan || c->plan->n_kinds < 1)
        return;
    const tp_host_kind *k = &c->plan->kinds[0];
    tp_xml *doc = NULL;
    tp_error ignored = {0};
    net_port ports[256];
    int n = 0;
    if (tp_xml__parse(&doc, k->text, k->text_len, k->source, &ignored) != TP_OK || !doc->root) {
        tp_xml__free(doc);
        return;
    }
    collect_ports(doc->root, ports, &n, (int)ARRAY_LEN(ports));
    tp_hca_filter f;
    tp_hca__parse(&f, hca);
    int selected = 0;
    for (int i = 0; i < n; i++)
        selected += tp_hca__selects(&f, ports[i].name, ports[i].port);
    if (n > 0 && selected == 0) {
        ib_fallback_note(c, hca, ports, n);
    } else if (n > 0) {
        for (int e = 0; e < f.n_entries; e++) {
            int hits = 0;
            for (int i = 0; i < n; i++)
                hits += entry_matches(&f, e, &ports[i]);
            if (hits)
                continue;
            char note[NOTE_MAX];
            snprintf(note, sizeof(note),
                     "NCCL_IB_HCA=%s: entry \"%s\" %s none of the topology's %d IB ports: NCCL "
                     "uses the %d port%s the other entries leave",
                     hca, f.entries[e].prefix, f.exclude ? "excludes" : "selects", n, selected,
                     selected == 1 ? "" : "s");
            add(c, note);
        }
    }
    tp_xml__free(doc);
}

tp_status tp_setting_notes(tp_findings **out, const tp_config *cfg, const tp_plan *plan,
                           tp_error *err)
{
    if (!out)
        return tp_fail_arg(err, "tp_setting_notes", "out is NULL");
    *out = NULL;
    if (plan && tp_plan__check_done(plan, "tp_setting_notes", err) != TP_OK)
        plan = NULL; /* a failed plan: the configuration's notes only */
    if (!cfg && !plan)
        return tp_fail_arg(err, "tp_setting_notes", "cfg and plan are NULL");
    tp_findings *f = calloc(1, sizeof(*f));
    if (!f)
        return tp_fail_nomem(err);
    f->lines.enabled = true;
    notes_ctx c = {.f = f, .cfg = cfg ? cfg : plan->cfg, .plan = plan};
    for (size_t i = 0; i < ARRAY_LEN(name_list_settings); i++)
        name_list_note(&c, &name_list_settings[i]);
    hca_note(&c);
    *out = f;
    return TP_OK;
}
