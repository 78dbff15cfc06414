/*
 * Stage 2, building: the prepared topology XML -> tp_system, as NCCL
 * 2.22.3's ncclTopoGetSystemFromXml does (topo.cc): CPUs and their PCI
 * trees, NICs and NETs, then NVLinks, C2C links and PCI links in separate
 * passes, BCM switch flattening, CPU interconnect and link sorting.
 *
 * Where NCCL silently substitutes a value we do the same (fidelity) and add
 * a note to sys->notes; where NCCL fails we fail with the element's position.
 */
#include "system/system.h"
#include "common/nccl_profile.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct build_ctx {
    tp_system *sys;
    const tp_nccl_profile *profile; /* the configuration's (the default one without) */
    const tp_xml *doc;
    tp_log *log; /* NCCL's own lines (may be NULL) */
    tp_error *err;
    /* The last GPU link_gpu found, by its bus id text and host: a GPU's links come in a row
     * (no GPU is created while links are added, so the pointer stays valid). */
    const char *gpu_bus;
    int gpu_sid;
    tp_node *gpu;
} build_ctx;

/* NCCL 2.22.3 kvDict: the first entry whose text is a prefix of the value wins. */
typedef struct kv_entry {
    const char *str; /* NULL ends the table; its value is the fallback */
    int value;
} kv_entry;

/* NCCL 2.22.3 kvDictPciClass. */
static const kv_entry pci_class_dict[] = {
    {"0x060400", TP_NODE_PCI}, {"0x068000", TP_NODE_NVS}, {"0x068001", TP_NODE_CPU},
    {"0x03", TP_NODE_GPU},     {"0x02", TP_NODE_NIC},     {NULL, TP_NODE_PCI},
};
/* NCCL 2.22.3 kvDictPciGen: per-lane rate in units of 100 Mb/s; Gen3 when unknown. */
static const kv_entry pci_gen_dict[] = {
    {"2.5 GT/s", 15},        {"5 GT/s", 30},          {"8 GT/s", 60},
    {"16 GT/s", 120},        {"32 GT/s", 240},        {"2.5 GT/s PCIe", 15},
    {"5.0 GT/s PCIe", 30},   {"8.0 GT/s PCIe", 60},   {"16.0 GT/s PCIe", 120},
    {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480}, {NULL, 60},
};
/* NCCL 2.22.3 kvDictCpuArch / kvDictCpuVendor. */
static const kv_entry cpu_arch_dict[] = {
    {"x86_64", TP_CPU_ARCH_X86},
    {"arm64", TP_CPU_ARCH_ARM},
    {"ppc64", TP_CPU_ARCH_POWER},
    {NULL, 0},
};
static const kv_entry cpu_vendor_dict[] = {
    {"GenuineIntel", TP_CPU_VENDOR_INTEL},
    {"AuthenticAMD", TP_CPU_VENDOR_AMD},
    {"CentaurHauls", TP_CPU_VENDOR_ZHAOXIN},
    {"  Shanghai  ", TP_CPU_VENDOR_ZHAOXIN},
    {NULL, 0},
};

/* NCCL 2.22.3: Intel family 6 from model 0x55 on is Skylake or later; Zhaoxin 7/0x5B is Yongfeng.
 */
#define TP_INTEL_SKL_FAMILY 6
#define TP_INTEL_SKL_MIN_MODEL 0x55
#define TP_ZHAOXIN_YONGFENG_FAMILY 7
#define TP_ZHAOXIN_YONGFENG_MODEL 0x5B
/* NCCL 2.22.3 ncclTopoAddNet: a NIC reporting no speed counts as 10 Gb/s. */
#define TP_NET_DEFAULT_MBPS 10000
/* NCCL 2.22.3 ncclTopoAddPci: link_width 0 (unknown) counts as x16. */
#define TP_PCI_DEFAULT_WIDTH 16
/* NCCL 2.22.3 ncclTopoAddNet: GB/s = speed (Mb/s) / 8000.0. */
#define TP_NET_MBPS_PER_GBS 8000.0
/* NCCL 2.22.3 ncclTopoAddPci: GB/s = link_width * per-lane rate (100 Mb/s units) / 80.0. */
#define TP_PCI_LANE_UNITS_PER_GBS 80.0
/* NCCL 2.22.3 ncclTopoAddC2c: GB/s = bw (MB/s) * count / 1000.0. */
#define TP_C2C_MBS_PER_GBS 1000.0
/* NCCL 2.22.3 ncclTopoAddPci: the functions of a NIC (bus id but its last digit) share its node. */
#define TP_NIC_FUNCTION_MASK 0xf
/* NCCL 2.22.3 ncclTopoAddPci: a switch's device word packs four 16-bit ids, vendor first. */
#define TP_PCI_ID_BITS 16

/*
 * A note on an element (sys->notes), begun with its place "SOURCE:LINE:COL: " and room for
 * `rest` more bytes: the caller writes the rest and ends the line (NULL: no line). Notes are
 * written piece by piece: a printf pass costs more than a small system's whole build.
 */
static char *begin_note(build_ctx *c, const tp_xml_elem *e, size_t rest)
{
    size_t max = strlen(c->doc->source) + 2 * TP_INT_SIZE + 8 + rest;
    char *p = tp_log_begin_line(&c->sys->notes, TP_SUB_ALL, max);
    if (!p)
        return NULL;
    p = TP_PUT_LIT(tp_put_ll(TP_PUT_LIT(tp_put_str(p, c->doc->source), ":"), e->line), ":");
    return TP_PUT_LIT(tp_put_ll(p, e->column), ": ");
}

/* NCCL's line for a value its dictionary lacks, and our note of it. */
static void log_kv_fallback(build_ctx *c, const tp_xml_elem *e, const char *attr, const char *str,
                            int value)
{
    size_t str_len = strlen(str);
    char *p = tp_log_begin_line(c->log, TP_SUB_GRAPH, str_len + 96);
    if (p) {
        p = TP_PUT_LIT(p, "KV Convert to int : could not find value of '");
        p = TP_PUT_LIT(tp_put_str(p, str), "' in dictionary, falling back to ");
        tp_log_end_line(c->log, tp_put_int(p, value, 0));
    }
    if (tp_profile_has(c->profile, TP_RULE_LOG_TOPO_HINTS)) { /* printMissingTopoDictValueHint */
        tp_log_info_sub(c->log, TP_SUB_GRAPH,
                        "HINT: In many cases this issue indicates missing or faulty information in "
                        "the provided topology file.");
        tp_log_info_sub(
            c->log, TP_SUB_GRAPH,
            "HINT: To confirm, set NCCL_TOPO_DUMP_FILE=topo.xml to produce the topology "
            "NCCL has detected and compare to the one provided.");
    }
    if (!(p = begin_note(c, e, strlen(e->tag) + strlen(attr) + str_len + 64)))
        return;
    p = TP_PUT_LIT(tp_put_str(TP_PUT_LIT(p, "<"), e->tag), "> ");
    p = TP_PUT_LIT(tp_put_str(TP_PUT_LIT(tp_put_str(p, attr), "=\""), str), "\" is unknown; ");
    tp_log_end_line(&c->sys->notes, tp_put_int(TP_PUT_LIT(p, "NCCL falls back to "), value, 0));
}

static int kv_convert(build_ctx *c, const tp_xml_elem *e, const char *attr, const char *str,
                      const kv_entry *dict)
{
    const kv_entry *d = dict;
    for (; d->str; d++) {
        const char *k = d->str, *v = str;
        while (*k && *k == *v)
            k++, v++;
        if (!*k)
            return d->value; /* d->str is a prefix of str */
    }
    log_kv_fallback(c, e, attr, str, d->value);
    return d->value;
}

/* NCCL 2.22.3 xmlGetAttrStr: a missing required attribute is a WARN and a failure. */
static tp_status req_str(build_ctx *c, const tp_xml_elem *e, const char *name, const char **out)
{
    *out = tp_xml__attr(e, name);
    if (*out)
        return TP_OK;
    tp_log_warn(c->log, "Attribute %s of node %s not found", name, e->tag);
    return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e, "missing attribute %s", name);
}

/* strtol(base 0) of the whole text (NCCL reads ints so); "" only where allowed (as 0). */
static tp_status parse_int(build_ctx *c, const tp_xml_elem *e, const char *name, const char *s,
                           bool allow_empty, int *out)
{
    long plain = 0;
    if (tp_system__plain_decimal(s, &plain)) {
        *out = (int)plain; /* at most 9 digits */
        return TP_OK;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 0);
    while (end && *end == ' ')
        end++;
    bool empty = end == s;
    if ((empty && !(allow_empty && s[0] == '\0')) || *end || errno || v < INT32_MIN ||
        v > INT32_MAX)
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                            "%s=\"%s\" is not a number (expected an integer)", name, s);
    *out = (int)v;
    return TP_OK;
}

static tp_status req_int(build_ctx *c, const tp_xml_elem *e, const char *name, int *out)
{
    const char *s = NULL;
    tp_status st = req_str(c, e, name, &s);
    return st != TP_OK ? st : parse_int(c, e, name, s, false, out);
}

static tp_status opt_int(build_ctx *c, const tp_xml_elem *e, const char *name, int dflt, int *out)
{
    const char *s = tp_xml__attr(e, name);
    *out = dflt;
    return s ? parse_int(c, e, name, s, false, out) : TP_OK;
}

static tp_status busid_of(build_ctx *c, const tp_xml_elem *e, const char *name, const char *s,
                          int64_t *out)
{
    int digits = 0;
    *out = tp_system__busid_to_int64(s, &digits);
    if (digits == 0)
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                            "%s=\"%s\" is not a PCI bus id (expected e.g. 0000:1a:00.0)", name, s);
    return TP_OK;
}

/* NCCL 2.22.3 ncclGetSystemId: hosts are told apart by the cpu's host_hash (0 if none). */
static tp_status get_system_id(build_ctx *c, const tp_xml_elem *cpu, int *out)
{
    const char *s = tp_xml__attr(cpu, "host_hash");
    uint64_t hash = s ? strtoull(s, NULL, 16) : 0;
    tp_system *sys = c->sys;
    int id = 0;
    while (id < sys->n_hosts && sys->host_hashes[id] != hash)
        id++;
    if (id == sys->n_hosts) {
        if (sys->n_hosts == TP_MAX_NODES)
            return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, cpu, "too many host hashes");
        sys->host_hashes[sys->n_hosts++] = hash;
    }
    *out = id;
    return TP_OK;
}

static tp_status connect_pair(tp_node *a, tp_node *b, int type, float bw, tp_error *err)
{
    tp_status st = tp_system__connect(a, b, type, bw, err);
    return st != TP_OK ? st : tp_system__connect(b, a, type, bw, err);
}

/* A text of 1 to max_digits hex digits and nothing else: true and its value (what strtoull
 * base 16 reads of it; the ids and guids of NCCL's files, read without its call). */
static bool plain_hex(const char *s, int max_digits, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    for (; n < max_digits && isxdigit((unsigned char)s[n]); n++)
        v = v << 4 | (uint64_t)(s[n] <= '9' ? s[n] - '0' : (s[n] | 0x20) - 'a' + 10);
    *out = v;
    return n > 0 && s[n] == '\0';
}

uint64_t tp_system__guid_asic(const char *guid)
{
    /* NCCL 2.22.3 scans "0x%lx": a guid without the 0x prefix leaves the asic 0. */
    uint64_t asic = 0;
    if (guid[0] == '0' && guid[1] == 'x')
        return plain_hex(guid + 2, 16, &asic) ? asic : strtoull(guid + 2, NULL, 16);
    return 0;
}

/* strtol(s, NULL, 0): PCI ids are "0x" and up to 8 hex digits. */
static long pci_id(const char *s)
{
    uint64_t v = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && plain_hex(s + 2, 8, &v))
        return (long)v;
    return strtol(s, NULL, 0);
}

/* strtof(s, NULL) for a latency: a zero written with or without decimals ("0.000000", as NCCL
 * writes an unknown one) is 0 without the call. */
static float latency_of(const char *s)
{
    const char *p = s;
    while (*p == '0')
        p++;
    if (p > s && *p == '.')
        while (*++p == '0')
            ;
    return p > s && *p == '\0' ? 0.0f : strtof(s, NULL);
}

/* ---- NICs and NETs (ncclTopoAddNic / ncclTopoAddNet) ---- */

static tp_status net_attrs(build_ctx *c, const tp_xml_elem *e, tp_node *net)
{
    int mbps = 0;
    tp_status st = opt_int(c, e, "speed", 0, &mbps);
    if (st != TP_OK)
        return st;
    if (mbps <= 0) {
        tp_log_info(&c->sys->notes, "%s:%u:%u: <net> speed %d: NCCL counts it as %d Mb/s",
                    c->doc->source, e->line, e->column, mbps, TP_NET_DEFAULT_MBPS);
        mbps = TP_NET_DEFAULT_MBPS;
    }
    net->net.bw = (float)(mbps / TP_NET_MBPS_PER_GBS);
    const char *lat = tp_xml__attr(e, "latency");
    if (lat) {
        net->net.latency = latency_of(lat);
    } else {
        /* NCCL 2.22.3 reads it with warnings turned into GRAPH info lines. */
        tp_log_info_sub(c->log, TP_SUB_GRAPH, "Attribute latency of node net not found");
        net->net.latency = 0;
    }
    if ((st = opt_int(c, e, "port", 0, &net->net.port)) != TP_OK ||
        (st = opt_int(c, e, "gdr", 0, &net->net.gdr_support)) != TP_OK ||
        (st = opt_int(c, e, "maxconn", c->profile->max_channels, &net->net.max_channels)) ||
        (st = opt_int(c, e, "coll", 0, &net->net.coll_support)) != TP_OK)
        return st;
    return TP_OK;
}

static tp_status add_net(build_ctx *c, const tp_xml_elem *e, tp_node *nic, int sid)
{
    int dev = 0;
    tp_status st = req_int(c, e, "dev", &dev);
    tp_node *net = NULL;
    if (st != TP_OK ||
        (st = tp_system__create_node(c->sys, &net, TP_NODE_NET, TP_ID(sid, dev), c->err)) != TP_OK)
        return st;
    net->net.dev = dev;
    const char *guid = tp_xml__attr(e, "guid");
    if (tp_profile_has(c->profile, TP_RULE_NET_GUID_HEX)) /* strtoull(guid, 16), else the id */
        net->net.asic = guid ? strtoull(guid, NULL, 16) : (uint64_t)TP_ID(sid, dev);
    else
        net->net.asic = guid ? tp_system__guid_asic(guid) : (uint64_t)(int64_t)dev;
    if ((st = net_attrs(c, e, net)) != TP_OK)
        return st;
    return connect_pair(nic, net, TP_LINK_NET, net->net.bw, c->err);
}

static tp_status add_nic(build_ctx *c, const tp_xml_elem *e, tp_node *nic, int sid)
{
    for (size_t s = 0; s < e->n_children; s++) {
        const tp_xml_elem *sub = e->children[s];
        if (!tp_xml__is_tag(sub, "net") || !tp_xml__attr(sub, "dev"))
            continue;
        tp_status st = add_net(c, sub, nic, sid);
        if (st != TP_OK)
            return st;
    }
    return TP_OK;
}

/* ---- PCI trees (ncclTopoAddPci) ---- */

static tp_status add_gpu(build_ctx *c, const tp_xml_elem *e, tp_node *gpu)
{
    tp_status st;
    if ((st = req_int(c, e, "sm", &gpu->gpu.cuda_comp_cap)) != TP_OK ||
        (st = req_int(c, e, "rank", &gpu->gpu.rank)) != TP_OK ||
        (st = req_int(c, e, "dev", &gpu->gpu.dev)) != TP_OK ||
        (st = req_int(c, e, "gdr", &gpu->gpu.gdr_support)) != TP_OK)
        return st;
    return TP_OK;
}

/* NCCL 2.22.3: the switch's vendor, device, subsystem vendor and device packed 16 bits each. */
static uint64_t pci_device_word(const tp_xml_elem *e)
{
    static const char *const names[] = {"vendor", "device", "subsystem_vendor", "subsystem_device"};
    uint64_t word = 0;
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        const char *s = tp_xml__attr(e, names[i]);
        if (s)
            word += (uint64_t)pci_id(s) << (TP_PCI_ID_BITS * (ARRAY_LEN(names) - 1 - i));
    }
    return word;
}

/* The PCI link bandwidth: width x per-lane rate (NCCL 2.22.3 ncclTopoAddPci). */
static tp_status pci_link_bw(build_ctx *c, const tp_xml_elem *e, float *bw)
{
    const char *ws = NULL, *speed_text = NULL;
    int width = 0;
    tp_status st = req_str(c, e, "link_width", &ws);
    if (st != TP_OK || (st = parse_int(c, e, "link_width", ws, true, &width)) != TP_OK ||
        (st = req_str(c, e, "link_speed", &speed_text)) != TP_OK)
        return st;
    if (width < 0)
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                            "link_width=\"%s\" is negative (a PCIe lane count)", ws);
    char *p = width == 0 ? begin_note(c, e, strlen(ws) + 48) : NULL;
    if (p) {
        p = TP_PUT_LIT(tp_put_str(TP_PUT_LIT(p, "<pci> link_width \""), ws), "\": NCCL assumes x");
        tp_log_end_line(&c->sys->notes, tp_put_int(p, TP_PCI_DEFAULT_WIDTH, 0));
    }
    if (width == 0)
        width = TP_PCI_DEFAULT_WIDTH;
    int speed = kv_convert(c, e, "link_speed", speed_text, pci_gen_dict);
    /* in double: no int overflow on absurd widths */
    *bw = (float)((double)width * speed / TP_PCI_LANE_UNITS_PER_GBS);
    return TP_OK;
}

static tp_status add_pci(build_ctx *c, const tp_xml_elem *e, tp_node *parent, int sid);

static tp_status add_pci_children(build_ctx *c, const tp_xml_elem *e, tp_node *node, int sid)
{
    for (size_t s = 0; s < e->n_children; s++) {
        if (tp_xml__is_tag(e->children[s], "pcilink"))
            continue; /* added in their own pass */
        tp_status st = add_pci(c, e->children[s], node, sid);
        if (st != TP_OK)
            return st;
    }
    return TP_OK;
}

/* The <nic> of a PCI device: functions of one device (bus id but the last digit) share a NIC
 * (2.24 ncclTopoAddPci, rule nic-fusion: each function is a NIC of its own). */
static tp_status add_pci_nic(build_ctx *c, const tp_xml_elem *xml_nic, int64_t bus_id, int sid,
                             tp_node **node)
{
    bool own_function = tp_profile_has(c->profile, TP_RULE_NIC_FUSION);
    int64_t id = TP_ID(sid, own_function ? bus_id : bus_id & ~(int64_t)TP_NIC_FUNCTION_MASK);
    tp_node *nic = tp_system__find(c->sys, TP_NODE_NIC, id);
    if (!nic) {
        tp_status st = tp_system__create_node(c->sys, &nic, TP_NODE_NIC, id, c->err);
        if (st != TP_OK)
            return st;
        *node = nic;
    }
    return add_nic(c, xml_nic, nic, sid);
}

static tp_status add_pci(build_ctx *c, const tp_xml_elem *e, tp_node *parent, int sid)
{
    const char *cls = NULL, *bus = NULL;
    int64_t bus_id = 0;
    tp_status st = req_str(c, e, "class", &cls);
    if (st != TP_OK)
        return st;
    int type = kv_convert(c, e, "class", cls, pci_class_dict);
    if ((st = req_str(c, e, "busid", &bus)) != TP_OK ||
        (st = busid_of(c, e, "busid", bus, &bus_id)) != TP_OK)
        return st;
    tp_node *node = NULL;
    const tp_xml_elem *xml_gpu = tp_xml__child(e, "gpu");
    const tp_xml_elem *xml_nic = tp_xml__child(e, "nic");
    if (xml_gpu) {
        type = TP_NODE_GPU;
        if (!tp_xml__attr(xml_gpu, "rank"))
            return TP_OK; /* NCCL 2.22.3: a GPU without a rank is not ours */
        if ((st = tp_system__create_node(c->sys, &node, TP_NODE_GPU, TP_ID(sid, bus_id), c->err)) !=
                TP_OK ||
            (st = add_gpu(c, xml_gpu, node)) != TP_OK)
            return st;
        node->pci.device = pci_device_word(e); /* 2.30.3 prints it on the GPU's DEV node */
    }
    if (xml_nic) {
        if ((st = add_pci_nic(c, xml_nic, bus_id, sid, &node)) != TP_OK)
            return st;
    } else if (type == TP_NODE_PCI) {
        if ((st = tp_system__create_node(c->sys, &node, TP_NODE_PCI, TP_ID(sid, bus_id), c->err)) !=
            TP_OK)
            return st;
        node->pci.device = pci_device_word(e);
        if ((st = add_pci_children(c, e, node, sid)) != TP_OK)
            return st;
    }
    if (!node)
        return TP_OK;
    float bw = 0;
    if ((st = pci_link_bw(c, e, &bw)) != TP_OK)
        return st;
    return connect_pair(node, parent, TP_LINK_PCI, bw, c->err);
}

/* ---- CPUs (ncclTopoAddCpu) ---- */

static tp_status cpu_model(build_ctx *c, const tp_xml_elem *e, tp_node *cpu)
{
    const char *s = NULL;
    tp_status st = req_str(c, e, "arch", &s);
    if (st != TP_OK)
        return st;
    cpu->cpu.arch = kv_convert(c, e, "arch", s, cpu_arch_dict);
    if (cpu->cpu.arch != TP_CPU_ARCH_X86)
        return TP_OK;
    if ((st = req_str(c, e, "vendor", &s)) != TP_OK)
        return st;
    cpu->cpu.vendor = kv_convert(c, e, "vendor", s, cpu_vendor_dict);
    if (cpu->cpu.vendor != TP_CPU_VENDOR_INTEL && cpu->cpu.vendor != TP_CPU_VENDOR_ZHAOXIN)
        return TP_OK;
    int family = 0, model = 0;
    if ((st = req_int(c, e, "familyid", &family)) != TP_OK ||
        (st = req_int(c, e, "modelid", &model)) != TP_OK)
        return st;
    const tp_nccl_profile *p = c->profile;
    if (cpu->cpu.vendor == TP_CPU_VENDOR_INTEL && family == TP_INTEL_SKL_FAMILY &&
        p->intel_erp_min_model && model >= p->intel_erp_min_model)
        cpu->cpu.model = TP_CPU_TYPE_ERP;
    else if (cpu->cpu.vendor == TP_CPU_VENDOR_INTEL && family == TP_INTEL_SKL_FAMILY &&
             p->intel_srp_min_model && model >= p->intel_srp_min_model)
        cpu->cpu.model = TP_CPU_TYPE_SRP;
    else if (cpu->cpu.vendor == TP_CPU_VENDOR_INTEL)
        cpu->cpu.model = family == TP_INTEL_SKL_FAMILY && model >= TP_INTEL_SKL_MIN_MODEL
                             ? TP_CPU_TYPE_SKL
                             : TP_CPU_TYPE_BDW;
    else if (family == TP_ZHAOXIN_YONGFENG_FAMILY && model == TP_ZHAOXIN_YONGFENG_MODEL)
        cpu->cpu.model = TP_CPU_TYPE_YONGFENG;
    return TP_OK;
}

/*
 * A <nic> right under a <cpu>: NCCL 2.22.3 looks for the NIC with id 0 (not
 * the host's id 0) and, only when creating it, links it to this CPU. The
 * <nic>s of later CPUs thus join the first CPU's NIC.
 */
static tp_status add_cpu_nic(build_ctx *c, const tp_xml_elem *e, tp_node *cpu, int sid)
{
    tp_node *nic = tp_system__find(c->sys, TP_NODE_NIC, 0);
    if (!nic) {
        tp_status st = tp_system__create_node(c->sys, &nic, TP_NODE_NIC, TP_ID(sid, 0), c->err);
        if (st != TP_OK || (st = connect_pair(cpu, nic, TP_LINK_PCI, TP_LOC_BW, c->err)) != TP_OK)
            return st;
    }
    return add_nic(c, e, nic, sid);
}

/* The <cpu> elements of cpu's host (its siblings with the same host_hash), cpu included. */
static int host_cpus(const tp_xml_elem *cpu)
{
    const char *hash = tp_xml__attr(cpu, "host_hash");
    int n = 0;
    for (size_t i = 0; cpu->parent && i < cpu->parent->n_children; i++) {
        const tp_xml_elem *sib = cpu->parent->children[i];
        const char *h = tp_xml__attr(sib, "host_hash");
        if (tp_xml__is_tag(sib, "cpu") && (h == hash || (h && hash && strcmp(h, hash) == 0)))
            n++;
    }
    return n ? n : 1;
}

static tp_status add_cpu(build_ctx *c, const tp_xml_elem *e)
{
    int numa = 0, sid = 0;
    tp_node *cpu = NULL;
    tp_status st = req_int(c, e, "numaid", &numa);
    /* NCCL 2.22.3 adds numaid to the host's id (NCCL_TOPO_ID): a negative one borrows from the
     * host bits, so the CPU lands on another host and no CPU link joins it to its host's other
     * CPUs. Alone on its host it is harmless (NCCL itself writes -1 when sysfs has no NUMA node).
     */
    int others = numa < 0 ? host_cpus(e) - 1 : 0;
    if (st == TP_OK && others > 0)
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                            "numaid=%d beside %d other <cpu> of its host: NCCL 2.22.3 would put "
                            "this CPU on another host (its node id borrows from the host bits), "
                            "joined to no other CPU; expected 0 or more",
                            numa, others);
    if (st != TP_OK || (st = get_system_id(c, e, &sid)) != TP_OK ||
        (st = tp_system__create_node(c->sys, &cpu, TP_NODE_CPU, TP_ID(sid, numa), c->err)))
        return st;
    const char *aff = tp_xml__attr(e, "affinity");
    if (aff)
        tp_copy_str(cpu->cpu.affinity, sizeof(cpu->cpu.affinity), aff);
    if ((st = cpu_model(c, e, cpu)) != TP_OK)
        return st;
    for (size_t s = 0; s < e->n_children && st == TP_OK; s++) {
        const tp_xml_elem *sub = e->children[s];
        if (tp_xml__is_tag(sub, "pci"))
            st = add_pci(c, sub, cpu, sid);
        else if (tp_xml__is_tag(sub, "nic"))
            st = add_cpu_nic(c, sub, cpu, sid);
    }
    return st;
}

/* ---- NVLink, C2C and PCI link passes ---- */

/*
 * NCCL 2.22.3 findLocalCpu: follow PCI links to PCI switches and CPUs, first
 * match wins. NCCL does not remember where it came from (and can loop); we
 * skip the link back, which gives NCCL's answer whenever NCCL has one.
 */
static tp_node *find_local_cpu(tp_node *node, const tp_node *from, int depth)
{
    if (node->type == TP_NODE_CPU)
        return node;
    if (depth > TP_MAX_NODES)
        return NULL;
    for (int l = 0; l < node->n_links; l++) {
        tp_node *rem = node->links[l].rem;
        if (node->links[l].type != TP_LINK_PCI || rem == from ||
            (rem->type != TP_NODE_PCI && rem->type != TP_NODE_CPU))
            continue;
        tp_node *cpu = find_local_cpu(rem, node, depth + 1);
        if (cpu)
            return cpu;
    }
    return NULL;
}

/* The GPU an <nvlink>/<c2c> belongs to (NCCL fails when it is not in the system). */
static tp_status link_gpu(build_ctx *c, const tp_xml_elem *e, const char *parent_bus, int sid,
                          tp_node **gpu)
{
    int64_t bus_id = 0;
    if (parent_bus && parent_bus == c->gpu_bus && sid == c->gpu_sid) {
        *gpu = c->gpu;
        return TP_OK;
    }
    tp_status st = parent_bus ? busid_of(c, e, "busid", parent_bus, &bus_id)
                              : tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                                             "no enclosing <pci busid=...>");
    if (st != TP_OK)
        return st;
    *gpu = tp_system__find(c->sys, TP_NODE_GPU, TP_ID(sid, bus_id));
    if (*gpu) {
        c->gpu_bus = parent_bus;
        c->gpu_sid = sid;
        c->gpu = *gpu;
        return TP_OK;
    }
    tp_log_warn(c->log, "Add NVLink error : could not find GPU %" PRIx64,
                (uint64_t)TP_ID(sid, bus_id));
    return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                        "GPU %s is not in the system (its <gpu> has no rank)", parent_bus);
}

static tp_status nvlink_remote(build_ctx *c, const tp_xml_elem *e, tp_node *gpu, int sid,
                               tp_node **remote)
{
    const char *tclass = NULL, *target = NULL;
    tp_status st = req_str(c, e, "tclass", &tclass);
    if (st != TP_OK)
        return st;
    int type = kv_convert(c, e, "tclass", tclass, pci_class_dict);
    *remote = NULL;
    if (type == TP_NODE_GPU) {
        int64_t bus_id = 0;
        if ((st = req_str(c, e, "target", &target)) != TP_OK ||
            (st = busid_of(c, e, "target", target, &bus_id)) != TP_OK)
            return st;
        *remote = tp_system__find(c->sys, TP_NODE_GPU, TP_ID(sid, bus_id));
        if (!*remote)
            tp_log_info(&c->sys->notes,
                        "%s:%u:%u: <nvlink> target %s is not a GPU of the "
                        "system: NCCL ignores the link",
                        c->doc->source, e->line, e->column, target);
    } else if (type == TP_NODE_CPU) {
        *remote = find_local_cpu(gpu, NULL, 0);
    } else if (c->sys->nodes[TP_NODE_NVS].count == 0) {
        /* NCCL 2.22.3: any other class is the (single) NVSwitch, id 0. */
        st = tp_system__create_node(c->sys, remote, TP_NODE_NVS, 0, c->err);
    } else {
        *remote = c->sys->nodes[TP_NODE_NVS].nodes;
    }
    return st;
}

/*
 * A link's count or bandwidth below 0: NCCL 2.22.3 multiplies it into the link's bandwidth,
 * and a negative bandwidth has no meaning in its search (it adds and compares them).
 */
static tp_status refuse_negative(build_ctx *c, const tp_xml_elem *e, const char *name, int v)
{
    if (v >= 0)
        return TP_OK;
    return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                        "%s=%d: negative, NCCL 2.22.3 would give the link a negative bandwidth; "
                        "expected 0 or more",
                        name, v);
}

static tp_status add_nvlink(build_ctx *c, const tp_xml_elem *e, const char *parent_bus, int sid)
{
    tp_node *gpu = NULL, *remote = NULL;
    int count = 0;
    tp_status st = link_gpu(c, e, parent_bus, sid, &gpu);
    if (st != TP_OK || (st = req_int(c, e, "count", &count)) != TP_OK ||
        (st = refuse_negative(c, e, "count", count)) != TP_OK ||
        (st = nvlink_remote(c, e, gpu, sid, &remote)) != TP_OK || !remote)
        return st;
    float bw = (float)count * tp_system__nvlink_bw(c->profile, gpu->gpu.cuda_comp_cap);
    if ((st = tp_system__connect(gpu, remote, TP_LINK_NVL, bw, c->err)) != TP_OK)
        return st;
    for (int l = 0; l < gpu->n_links; l++) {
        if (gpu->links[l].rem == remote && gpu->links[l].type == TP_LINK_NVL) {
            gpu->links[l].line = e->line; /* where a one-sided link is reported (paths.c) */
            gpu->links[l].column = e->column;
        }
    }
    /* GPU peers list their own links; switches and CPUs get the reverse here. */
    if (remote->type != TP_NODE_GPU)
        st = tp_system__connect(remote, gpu, TP_LINK_NVL, bw, c->err);
    return st;
}

static tp_status add_c2c(build_ctx *c, const tp_xml_elem *e, const char *parent_bus, int sid)
{
    tp_node *gpu = NULL;
    int count = 0, bw = 0;
    tp_status st = link_gpu(c, e, parent_bus, sid, &gpu);
    if (st != TP_OK || (st = req_int(c, e, "count", &count)) != TP_OK ||
        (st = req_int(c, e, "bw", &bw)) != TP_OK ||
        (st = refuse_negative(c, e, "count", count)) != TP_OK ||
        (st = refuse_negative(c, e, "bw", bw)) != TP_OK)
        return st;
    tp_node *cpu = find_local_cpu(gpu, NULL, 0);
    if (!cpu)
        return TP_OK;
    return connect_pair(gpu, cpu, TP_LINK_NVL, (float)((bw * count) / TP_C2C_MBS_PER_GBS), c->err);
}

static tp_status add_pcilink(build_ctx *c, const tp_xml_elem *e, const char *parent_bus, int sid)
{
    int64_t bus_id = 0, target_id = 0;
    const char *target = NULL;
    tp_status st = parent_bus ? busid_of(c, e, "busid", parent_bus, &bus_id)
                              : tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                                             "no enclosing <pci busid=...>");
    if (st != TP_OK)
        return st;
    tp_node *pci = tp_system__find(c->sys, TP_NODE_PCI, TP_ID(sid, bus_id));
    if (!pci) {
        tp_log_warn(c->log, "Add PCI Link error : could not find PCI SW %" PRIx64,
                    (uint64_t)TP_ID(sid, bus_id));
        return tp_xml__fail(c->err, TP_ERR_TOPOLOGY, c->doc, e,
                            "<pcilink> parent %s is not a PCI switch of the system", parent_bus);
    }
    if ((st = req_str(c, e, "target", &target)) != TP_OK ||
        (st = busid_of(c, e, "target", target, &target_id)) != TP_OK)
        return st;
    tp_node *remote = tp_system__find(c->sys, TP_NODE_PCI, TP_ID(sid, target_id));
    return remote ? tp_system__connect(pci, remote, TP_LINK_LOC, TP_LOC_BW, c->err) : TP_OK;
}

/* A link element with the bus id of its closest enclosing element that has one, and its host. */
typedef struct link_elem {
    const tp_xml_elem *e;
    const char *parent_bus;
    int sid;
} link_elem;

/* The <nvlink>, <c2c> and <pcilink> elements in document order, each kind in its own list. */
typedef struct link_lists {
    link_elem *items[3];
    size_t count[3], cap[3];
} link_lists;

/* A tag's value in a small table (names stored in the table: no pointer read per entry). */
typedef struct tag_value {
    char name[8];
    int value;
} tag_value;

/* The value of `tag` in the table, or -1 (tags are tested per element of every walk). */
static int value_of_tag(const char *tag, const tag_value *table, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tag[0] == table[i].name[0] && tp_xml__name_eq(tag, table[i].name))
            return table[i].value;
    return -1;
}

/* The link list of a tag: 0 nvlink, 1 c2c, 2 pcilink, -1 none. */
static int link_kind(const char *tag)
{
    static const tag_value kinds[] = {{"nvlink", 0}, {"c2c", 1}, {"pcilink", 2}};
    return value_of_tag(tag, kinds, ARRAY_LEN(kinds));
}

/*
 * NCCL 2.22.3 walks the whole tree once per link kind, tracking host and bus
 * id: one walk collecting the three kinds' elements in document order gives
 * the same visits, in the same order, kind by kind.
 */
static tp_status collect_links(build_ctx *c, const tp_xml_elem *e, link_lists *out,
                               const char *parent_bus, int sid)
{
    int k = link_kind(e->tag);
    if (k >= 0) {
        tp_status st = tp_grow((void **)&out->items[k], &out->cap[k], out->count[k] + 1,
                               sizeof(link_elem), c->err);
        if (st == TP_OK)
            out->items[k][out->count[k]++] = (link_elem){e, parent_bus, sid};
        return st;
    }
    tp_status st = TP_OK;
    if (tp_xml__is_tag(e, "cpu") && (st = get_system_id(c, e, &sid)) != TP_OK)
        return st;
    const char *bus = tp_xml__attr(e, "busid");
    for (size_t s = 0; s < e->n_children && st == TP_OK; s++)
        st = collect_links(c, e->children[s], out, bus ? bus : parent_bus, sid);
    return st;
}

typedef tp_status link_pass_fn(build_ctx *c, const tp_xml_elem *e, const char *parent_bus, int sid);

/* NVLinks, then C2C links, then PCI links, as NCCL's three passes add them. */
static tp_status link_passes(build_ctx *c, const tp_xml_elem *top)
{
    static link_pass_fn *const add[3] = {add_nvlink, add_c2c, add_pcilink};
    link_lists lists = {0};
    tp_status st = collect_links(c, top, &lists, NULL, 0);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < lists.count[k] && st == TP_OK; i++) {
            const link_elem *l = &lists.items[k][i];
            st = add[k](c, l->e, l->parent_bus, l->sid);
        }
        free(lists.items[k]);
    }
    return st;
}

/* ---- whole-system passes ---- */

/* NCCL getBcmGen: Broadcom Gen4/Gen5 switches by their packed device word. */
static int bcm_gen(const tp_nccl_profile *p, uint64_t device, int level)
{
    if ((device & p->bcm_id_mask) == p->bcm_gen4_id)
        return 4;
    if ((device & p->bcm_id_mask) == (p->bcm_gen5_id | (uint64_t)level * p->bcm_level))
        return 5;
    return 0;
}

/* Move the links of sub switch `sub` (except the one to `sw`) onto `sw`; marks it gone. */
static tp_status absorb_sub_switch(tp_system *sys, tp_node *sw, int64_t sub_id, bool *gone,
                                   tp_error *err)
{
    /* The first one with that id not absorbed yet (NCCL's index of it, the absorbed ones gone). */
    const tp_node_set *pcis = &sys->nodes[TP_NODE_PCI];
    int index = 0;
    while (index < pcis->count && (gone[index] || pcis->nodes[index].id != sub_id))
        index++;
    if (index == pcis->count)
        return tp_fail(err, TP_ERR_INTERNAL, NULL, 0, 0, "BCM sub switch vanished");
    gone[index] = true;
    tp_node *sub = sys->nodes[TP_NODE_PCI].nodes + index;
    for (int l = 0; l < sub->n_links; l++) {
        tp_node *rem = sub->links[l].rem;
        if (rem == sw)
            continue;
        if (sw->n_links == TP_MAX_LINKS)
            return tp_fail(err, TP_ERR_TOPOLOGY, NULL, 0, 0, "too many links (max %d)",
                           TP_MAX_LINKS);
        tp_status st = tp_system__reserve_links(sw, sw->n_links + 1, err);
        if (st != TP_OK)
            return st;
        sw->links[sw->n_links++] = sub->links[l];
        for (int rl = 0; rl < rem->n_links; rl++) {
            if (rem->links[rl].rem == sub) {
                rem->links[rl].rem = sw;
                break;
            }
        }
    }
    return TP_OK;
}

/* Whether a link still leads to a node marked gone (absorbing re-points the links it finds). */
static bool links_to_gone(const tp_system *sys, const bool *gone)
{
    const tp_node *pci = sys->nodes[TP_NODE_PCI].nodes;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        for (int n = 0; n < sys->nodes[t].count; n++)
            for (int l = 0; l < sys->nodes[t].nodes[n].n_links; l++) {
                const tp_node *rem = sys->nodes[t].nodes[n].links[l].rem;
                if (rem->type == TP_NODE_PCI && gone[rem - pci])
                    return true;
            }
    return false;
}

/*
 * NCCL removes each sub switch once absorbed, one by one (ncclTopoRemoveNode), which is what
 * removing them one by one after the last absorb leaves. When no link leads to them any more,
 * that removal only moves nodes: one pass does it (tp_system__remove_nodes); otherwise the
 * links it drops must leave NCCL's stale slots behind, one removal at a time.
 */
static tp_status remove_sub_switches(tp_system *sys, const int64_t *sub_ids, int n_subs,
                                     const bool *gone, tp_error *err)
{
    if (!links_to_gone(sys, gone))
        return tp_system__remove_nodes(sys, TP_NODE_PCI, gone, err);
    tp_status st = TP_OK;
    for (int s = 0; s < n_subs && st == TP_OK; s++)
        st = tp_system__remove_node(sys, TP_NODE_PCI,
                                    tp_system__index_of(sys, TP_NODE_PCI, sub_ids[s]), err);
    return st;
}

/* NCCL 2.22.3 ncclTopoFlattenBcmSwitches for one switch: unlink its same-gen sub switches. */
static tp_status flatten_switch(const tp_nccl_profile *p, tp_system *sys, tp_node *sw, int gen,
                                tp_error *err)
{
    int64_t sub_ids[TP_MAX_LINKS];
    int n_subs = 0;
    for (int l = 0; l < sw->n_links; l++) {
        tp_node *sub = sw->links[l].rem;
        if (sub->type != TP_NODE_PCI || bcm_gen(p, sub->pci.device, 1) != gen)
            continue;
        sub_ids[n_subs++] = sub->id;
        memmove(sw->links + l, sw->links + l + 1, (size_t)(sw->n_links - l - 1) * sizeof(tp_link));
        sw->n_links--;
        l--;
    }
    bool gone[TP_MAX_NODES]; /* by PCI node index: a set holds at most TP_MAX_NODES */
    memset(gone, 0, (size_t)sys->nodes[TP_NODE_PCI].count * sizeof(bool));
    sw->pci.device |= p->bcm_flattened;
    tp_status st = TP_OK;
    for (int s = 0; s < n_subs && st == TP_OK; s++)
        st = absorb_sub_switch(sys, sw, sub_ids[s], gone, err);
    if (st == TP_OK && n_subs)
        st = remove_sub_switches(sys, sub_ids, n_subs, gone, err);
    return st;
}

static tp_status flatten_bcm_switches(const tp_nccl_profile *p, tp_system *sys, tp_error *err)
{
    for (int s = 0; s < sys->nodes[TP_NODE_PCI].count; s++) {
        tp_node *sw = sys->nodes[TP_NODE_PCI].nodes + s;
        int gen = bcm_gen(p, sw->pci.device, 0);
        if (!gen)
            continue;
        /* `sw` stays in place: its sub switches come after it. */
        tp_status st = flatten_switch(p, sys, sw, gen, err);
        if (st != TP_OK)
            return st;
        /* NCCL 2.22.3 restarts with s = 0, which the loop increment turns into 1. */
        s = 0;
    }
    return TP_OK;
}

/* NCCL 2.22.3 ncclTopoGetInterCpuBw: the SMP interconnect by CPU arch, vendor and model. */
static float inter_cpu_bw(const tp_nccl_profile *p, const tp_node *cpu)
{
    if (cpu->cpu.arch == TP_CPU_ARCH_POWER)
        return TP_P9_BW;
    if (cpu->cpu.arch == TP_CPU_ARCH_ARM)
        return TP_ARM_BW;
    if (cpu->cpu.arch != TP_CPU_ARCH_X86)
        return TP_LOC_BW;
    if (cpu->cpu.vendor == TP_CPU_VENDOR_INTEL)
        return cpu->cpu.model == TP_CPU_TYPE_ERP   ? p->erp_qpi_bw
               : cpu->cpu.model == TP_CPU_TYPE_SRP ? p->srp_qpi_bw
               : cpu->cpu.model == TP_CPU_TYPE_SKL ? TP_SKL_QPI_BW
                                                   : TP_QPI_BW;
    if (cpu->cpu.vendor == TP_CPU_VENDOR_AMD)
        return TP_AMD_BW;
    if (cpu->cpu.vendor == TP_CPU_VENDOR_ZHAOXIN)
        return cpu->cpu.model == TP_CPU_TYPE_YONGFENG ? TP_YONGFENG_ZPI_BW : TP_ZPI_BW;
    return TP_LOC_BW;
}

static tp_status connect_cpus(tp_system *sys, tp_error *err)
{
    tp_node_set *cpus = &sys->nodes[TP_NODE_CPU];
    for (int n = 0; n < cpus->count; n++) {
        tp_node *a = cpus->nodes + n;
        for (int p = 0; p < cpus->count; p++) {
            tp_node *b = cpus->nodes + p;
            if (n == p || TP_ID_SYSTEM_ID(a->id) != TP_ID_SYSTEM_ID(b->id))
                continue;
            tp_status st =
                tp_system__connect(a, b, TP_LINK_SYS, inter_cpu_bw(sys->profile, a), err);
            if (st != TP_OK)
                return st;
        }
    }
    return TP_OK;
}

static tp_status build(build_ctx *c, const tp_xml_elem *top, uint64_t host_hash)
{
    tp_status st = TP_OK;
    for (size_t s = 0; s < top->n_children && st == TP_OK; s++)
        if (tp_xml__is_tag(top->children[s], "cpu"))
            st = add_cpu(c, top->children[s]);
    if (st != TP_OK)
        return st;
    for (int id = 0; id < c->sys->n_hosts; id++)
        if (c->sys->host_hashes[id] == host_hash)
            c->sys->system_id = id;
    if ((st = link_passes(c, top)) != TP_OK ||
        (st = flatten_bcm_switches(c->profile, c->sys, c->err)) != TP_OK ||
        (st = connect_cpus(c->sys, c->err)) != TP_OK)
        return st;
    return tp_system__sort(c->sys, c->err);
}

/* The node type an element of `tag` makes: <gpu>, <pci>, <cpu>, <nic>, <net>; -1 others. */
static int node_type_of_tag(const char *tag)
{
    static const tag_value types[] = {{"gpu", TP_NODE_GPU},
                                      {"pci", TP_NODE_PCI},
                                      {"cpu", TP_NODE_CPU},
                                      {"nic", TP_NODE_NIC},
                                      {"net", TP_NODE_NET}};
    return value_of_tag(tag, types, ARRAY_LEN(types));
}

/* Upper bounds of the nodes the build creates: one at most per element of the type's tag,
 * one NVSwitch. */
static void count_elements(const tp_xml_elem *e, int caps[TP_NODE_TYPE_COUNT])
{
    int t = node_type_of_tag(e->tag);
    if (t >= 0)
        caps[t]++;
    for (size_t i = 0; i < e->n_children; i++)
        count_elements(e->children[i], caps);
}

tp_status tp_system__from_xml_log(tp_system **out, tp_xml *doc, const tp_config *cfg,
                                  uint64_t host_hash, tp_log *log, tp_error *err)
{
    *out = NULL;
    if (!doc || !doc->root || strcmp(doc->root->tag, "system") != 0)
        return tp_xml__fail(err, TP_ERR_TOPOLOGY, doc, doc ? doc->root : NULL,
                            "not a topology (expected a <system> root element)");
    tp_system *sys = NULL;
    int caps[TP_NODE_TYPE_COUNT] = {[TP_NODE_NVS] = 1};
    count_elements(doc->root, caps);
    tp_status st = tp_system__new_sized(&sys, caps, err);
    if (st != TP_OK)
        return st;
    int n_nodes = 0;
    for (int t = 0; t < TP_NODE_TYPE_COUNT; t++)
        n_nodes += caps[t];
    if ((st = tp_system__reserve_link_block(sys, n_nodes, err)) != TP_OK) {
        tp_system__free(sys);
        return st;
    }
    build_ctx c = {.sys = sys,
                   .profile = cfg ? tp_config__profile(cfg) : tp_nccl_profile__default(),
                   .doc = doc,
                   .log = log,
                   .err = err};
    tp_copy_str(sys->source, sizeof(sys->source), doc->source);
    sys->profile = c.profile;
    if (cfg && tp_profile_has(c.profile, TP_RULE_NETDEVS_POLICY))
        sys->netdevs = tp_config__netdevs_policy(cfg);
    st = build(&c, doc->root, host_hash);
    if (st == TP_OK && sys->notes.failed)
        st = tp_fail_nomem(err);
    if (st != TP_OK) {
        tp_system__free(sys);
        return st;
    }
    *out = sys;
    return TP_OK;
}

tp_status tp_system__from_xml(tp_system **out, tp_xml *doc, const tp_config *cfg,
                              uint64_t host_hash, tp_error *err)
{
    return tp_system__from_xml_log(out, doc, cfg, host_hash, NULL, err);
}
