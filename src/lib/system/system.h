/*
 * Stage 2: element tree -> system: nodes and links with NCCL 2.22.3's
 * bandwidth rules, node order and ids. Paths (stage 3) are stored in the
 * nodes but computed and owned by paths.c.
 *
 * The layout follows NCCL's model closely on purpose: node arrays per type in
 * NCCL's order, links per node sorted as NCCL sorts them, links referencing
 * their remote node by pointer. Search order (and so fidelity) depends on it.
 */
#ifndef TP_SYSTEM_H
#define TP_SYSTEM_H

#include "config/config.h"
#include "common/arena.h"
#include "common/internal.h"
#include "common/names.h"
#include "xml/nccl_xml.h"
#include "xml/xml.h"

/* NCCL 2.22.3 limits (graph.h / topo.h). */
#define TP_MAX_NODES 256 /* nodes of one type */
#define TP_MAX_LINKS 128 /* links of one node */
/* Room for channels in every table: the largest MAXCHANNELS of the profiles (device.h: 32 in
 * 2.22.3, 64 from 2.25.1). A version's own limit is its profile's max_channels. */
#define TP_MAXCHANNELS 64

/* Bandwidths (GB/s) of NCCL 2.22.3, topo.h. */
#define TP_LOC_BW 5000.0f
#define TP_SM60_NVLINK_BW 18.0f
#define TP_SM70_NVLINK_BW 20.0f
#define TP_SM80_NVLINK_BW 20.0f
#define TP_SM90_NVLINK_BW 20.6f
#define TP_SM86_NVLINK_BW 12.0f
#define TP_PCI_BW 12.0f /* PCI Gen3 x16 */
#define TP_QPI_BW 6.0f
#define TP_AMD_BW 16.0f
#define TP_SKL_QPI_BW 10.0f
#define TP_ZPI_BW 6.0f
#define TP_YONGFENG_ZPI_BW 9.0f
#define TP_P9_BW 32.0f
#define TP_ARM_BW 6.0f
#define TP_NET_BW 12.0f /* 100 Gbit */

/* CPU arch / vendor / model codes of NCCL 2.22.3 (graph.h). */
#define TP_CPU_ARCH_X86 1
#define TP_CPU_ARCH_POWER 2
#define TP_CPU_ARCH_ARM 3
#define TP_CPU_ARCH_MIXED 4
#define TP_CPU_VENDOR_INTEL 1
#define TP_CPU_VENDOR_AMD 2
#define TP_CPU_VENDOR_ZHAOXIN 3
#define TP_CPU_VENDOR_MIXED 4
#define TP_CPU_TYPE_BDW 1
#define TP_CPU_TYPE_SKL 2
#define TP_CPU_TYPE_SRP 3 /* 2.26: Sapphire Rapids */
#define TP_CPU_TYPE_ERP 4 /* 2.26: Emerald Rapids */
#define TP_CPU_TYPE_YONGFENG 1

/* NCCL 2.22.3 NCCL_TOPO_UNDEF: a field the XML did not set. */
#define TP_TOPO_UNDEF (-1)
/* NCCL 2.22.3 ncclTopoPrint builds each tree line in a char[1024]. */
#define TP_SYSTEM_LINE_SIZE 1024
/* NCCL 2.22.3 limits of the topology XML it loads (xml/nccl_xml.h). */
#define TP_XML_MAX_NODES TP_NCCL_TOPO_XML_MAX_NODES
#define TP_XML_MAX_SUBS TP_NCCL_XML_MAX_SUBS
#define TP_XML_MAX_ATTRS TP_NCCL_XML_MAX_ATTRS
#define TP_TOPO_XML_VERSION TP_NCCL_XML_VERSION

/* NCCL ids carry the system (host) id in the top byte. */
#define TP_ID_SYSTEM_ID(id) ((int64_t)(id) >> 56)
#define TP_ID_LOCAL_ID(id) ((int64_t)(id)&0x00ffffffffffffffLL)
#define TP_ID(systemid, localid) (((int64_t)(systemid) << 56) + (localid))

struct tp_node;

typedef struct tp_link {
    int type; /* tp_link_type */
    float bw;
    struct tp_node *rem;
    unsigned line, column; /* the XML element that made it, for messages (0: none) */
} tp_link;

/* A path from a node to one node of some type: the links walked, in order. */
typedef struct tp_route {
    tp_link **list; /* owned array of borrowed link pointers */
    int count;      /* number of hops */
    int cap;
    float bw;
    int type; /* tp_path_type */
} tp_route;

typedef struct tp_node {
    tp_node_type type;
    int64_t id;
    /* GPU */
    struct {
        int dev;
        int rank;
        int cuda_comp_cap;
        int gdr_support;
    } gpu;
    /* NET */
    struct {
        int dev;
        uint64_t asic;
        int port;
        float bw;
        float latency;
        int gdr_support;
        int coll_support;
        int max_channels;
    } net;
    /* CPU */
    struct {
        int arch;
        int vendor;
        int model;
        char affinity[260]; /* the XML's affinity mask text */
    } cpu;
    /* PCI */
    struct {
        uint64_t device;
    } pci;
    int n_links;
    /*
     * The link slots (at most TP_MAX_LINKS, owned): n_slots of them were ever
     * written; as in NCCL's fixed array, slots past n_links may hold stale
     * links (after removals), and slots past n_slots count as empty. Kept
     * out of line so that a node is small: a system's pages are its cost.
     */
    tp_link *links;
    int n_slots, slots_cap;
    bool links_shared; /* links sit in the system's link_block (a clone's): never freed alone */
    /* Routes to every node of each type; owned by paths.c (NULL before). */
    tp_route *paths[TP_NODE_TYPE_COUNT];
    /* Used during search. */
    uint64_t used;
} tp_node;

typedef struct tp_node_set {
    int count;
    int cap;        /* room in nodes: at most TP_MAX_NODES, sized to the topology */
    tp_node *nodes; /* allocated once (pointers stay valid), in the system's node block */
} tp_node_set;

typedef struct tp_system {
    const tp_nccl_profile *profile; /* the version whose rules built it (its log formats) */
    /* NCCL_NETDEVS_POLICY where the profile reads it (rule netdevs-policy), else AUTO: how many
     * local NETs each GPU's channels use (ncclTopoGetLocalNet). */
    tp_netdevs_policy netdevs;
    int system_id;
    int n_hosts;
    tp_node_set nodes[TP_NODE_TYPE_COUNT];
    float max_bw;
    float total_bw;
    /* Non-fatal findings ("NCCL would default ..."): lines for reports. */
    tp_log notes;
    /* Every node's routes and their hop lists (paths.c): one arena, freed together. */
    tp_arena routes;
    tp_node *node_block; /* owned: every type's nodes */
    tp_link *link_block; /* owned: the link slots of nodes links_shared (clones, built systems) */
    tp_link *link_next;  /* link_block's slots not given to a node yet: link_free of them */
    int link_free;
    /* Last (a new system clears the fields above only): */
    char source[256];                   /* the XML it was built from, for messages */
    uint64_t host_hashes[TP_MAX_NODES]; /* the first n_hosts are set */
} tp_system;

/* An empty system with room for TP_MAX_NODES nodes of each type. */
tp_status tp_system__new(tp_system **out, tp_error *err);
/* The asic NCCL 2.22.3 reads from a <net guid="...">: sscanf "0x%lx" (0 without the prefix). */
uint64_t tp_system__guid_asic(const char *guid);
/* An empty system with room for caps[type] nodes of each type (at most TP_MAX_NODES):
 * a plan's systems hold a few nodes, and 256 of each type cost the heap ~660 KB a system. */
tp_status tp_system__new_sized(tp_system **out, const int caps[TP_NODE_TYPE_COUNT], tp_error *err);
/* Free every node's routes (stored in the nodes, computed by paths.c). */
void tp_system__free_routes(tp_system *sys);
/* Frees nodes, links and any paths. NULL-safe. */
void tp_system__free(tp_system *sys);
/* Deep copy (links re-pointed into the copy; paths are not copied). */
tp_status tp_system__clone(tp_system **out, const tp_system *sys, tp_error *err);

/* Node lookup by type and id; NULL when absent. */
tp_node *tp_system__find(const tp_system *sys, int type, int64_t id);
/* Index of the node of `type` with `id`, or -1. */
int tp_system__index_of(const tp_system *sys, int type, int64_t id);
/* Room for `slots` link slots on the node (fails past TP_MAX_LINKS); new slots are empty. */
tp_status tp_system__reserve_links(tp_node *node, int slots, tp_error *err);
/* A built system's nodes take their first TP_FIRST_LINK_SLOTS link slots from one block made
 * here for n_nodes nodes (instead of one allocation each); nodes past it allocate their own. */
#define TP_FIRST_LINK_SLOTS 4
tp_status tp_system__reserve_link_block(tp_system *sys, int n_nodes, tp_error *err);
/* Append a node (fails past TP_MAX_NODES). */
tp_status tp_system__create_node(tp_system *sys, tp_node **out, int type, int64_t id,
                                 tp_error *err);
/* Remove node `index` of `type`, dropping links to it and fixing pointers. */
tp_status tp_system__remove_node(tp_system *sys, int type, int index, tp_error *err);
/* Remove every node of `type` whose gone[index] is set, in one pass: the system (nodes,
 * links, their order) is as removing them one by one leaves it. */
tp_status tp_system__remove_nodes(tp_system *sys, int type, const bool *gone, tp_error *err);
/* Add bw to the node->rem link of `type` (created if absent), kept sorted by bw as NCCL does. */
tp_status tp_system__connect(tp_node *node, tp_node *rem, int type, float bw, tp_error *err);

/*
 * A PCI bus id as NCCL 2.22.3's busIdToInt64 reads it: the hex digits up to
 * the first character that is neither hex nor ':' / '.' ("0000:1a:00.0" ->
 * 0x1a000). *n_digits (may be NULL) gets how many digits were used.
 */
int64_t tp_system__busid_to_int64(const char *busid, int *n_digits);

/*
 * strtol(s, &end, 0) with nothing after the number, for the plain decimals ("0", or up to 9
 * digits not starting with 0: no sign, space or octal/hex prefix) XML attributes mostly hold:
 * true and *out when s is one (others go to strtol itself). Inline: read per attribute.
 */
static inline bool tp_system__plain_decimal(const char *s, long *out)
{
    if (s[0] == '0' && s[1] == '\0') {
        *out = 0;
        return true;
    }
    if (s[0] < '1' || s[0] > '9')
        return false;
    long v = 0;
    int n = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < 9)
        v = v * 10 + (s[n++] - '0');
    *out = v;
    return s[n] == '\0';
}

/* NVLink bandwidth per link for a compute capability (NCCL 2.22.3). */
float tp_system__nvlink_bw(const tp_nccl_profile *p, int cuda_comp_cap);

/*
 * Build the system of one host from NCCL's topology XML, as NCCL 2.22.3's
 * ncclTopoGetSystemFromXml does (the XML must already be in the state NCCL
 * reaches before that call: see tp_system__prepare_xml). host_hash names the
 * local host; GPUs are given the ranks the job assigns.
 */
tp_status tp_system__from_xml(tp_system **out, tp_xml *doc, const tp_config *cfg,
                              uint64_t host_hash, tp_error *err);

/* Same, logging the lines NCCL prints while building (KV fallbacks, warnings). */
tp_status tp_system__from_xml_log(tp_system **out, tp_xml *doc, const tp_config *cfg,
                                  uint64_t host_hash, tp_log *log, tp_error *err);

/*
 * Bring a loaded topology XML to the state NCCL 2.22.3 reaches in
 * ncclTopoGetSystem before building the system: GPU and NIC fill from the XML
 * itself (no NVML, no sysfs), ranks of the job, NIC/NET ordering, switch
 * fusion. `first_rank` is the global rank of the host's first GPU.
 */
tp_status tp_system__prepare_xml(tp_xml *doc, const tp_config *cfg, int first_rank, tp_error *err);
/*
 * Same, logging the lines NCCL prints while loading ("Ignoring element ...");
 * report_rank (-1: none) is the rank whose own lines (its GPU's sysfs reads)
 * are logged.
 */
tp_status tp_system__prepare_xml_log(tp_xml *doc, const tp_config *cfg, int first_rank,
                                     int report_rank, tp_log *log, tp_error *err);
/*
 * NCCL 2.24+ (rule nic-fusion) prepares the XML twice with NCCL_TOPO_DUMP_FILE set: a pass
 * for the dump (ncclTopoProcessNet with usePhysicalDevices: no virtual NICs), then the one the
 * system is built from, the IB plugin's state then known (no "Initialized state" line).
 */
typedef struct tp_prep_pass {
    bool physical_nics;   /* the dump's pass */
    bool net_state_known; /* a pass after the dump's */
    int *net_devices;     /* set: where to put the NET plugin's device count (physical and
                           * virtual: its devices()), -1 when the plugin is not modelled */
} tp_prep_pass;
tp_status tp_system__prepare_xml_pass(tp_xml *doc, const tp_config *cfg, int first_rank,
                                      int report_rank, const tp_prep_pass *pass, tp_log *log,
                                      tp_error *err);
/* The dump's pass without its lines. */
tp_status tp_system__prepare_xml_physical(tp_xml *doc, const tp_config *cfg, int first_rank,
                                          tp_error *err);
/* Same, each rank's tree trimmed by a walk of its own (no shared trim): for tests. */
tp_status tp_system__prepare_xml_plain(tp_xml *doc, int first_rank, tp_error *err);

/* Log NCCL's "=== System : ..." tree (ncclTopoPrint's first part). */
void tp_system__print(tp_log *log, const tp_system *sys);
/* The same tree, its bandwidths those of kept, a trimmed copy of sys: 2.30.3 (TP_RULE_DEV_NODES)
 * keeps the DEV node of a GPU trimmed away, shown without its GPU. */
void tp_system__print_kept(tp_log *log, const tp_system *sys, const tp_system *kept);

/* Sort every node's links as NCCL's ncclTopoSortSystem does. */
tp_status tp_system__sort(tp_system *sys, tp_error *err);

/* CPU arch/vendor/model of the system (NCCL's ncclTopoCpuType). */
void tp_system__cpu_type(const tp_system *sys, int *arch, int *vendor, int *model);

/*
 * Invariant checker: every link has a reverse, node indices dense, etc.
 * Returns TP_ERR_INTERNAL with the broken rule.
 */
tp_status tp_system__check(const tp_system *sys, tp_error *err);

/* Device names (system_names.c). "0000:5f:00.0" of a PCI-addressed node's NCCL id. */
void tp_system__bus_id(char *buf, size_t size, int64_t id);
/* The first element under e named `tag` whose attribute `attr` is `value` (case-insensitive). */
const tp_xml_elem *tp_system__xml_find(const tp_xml_elem *e, const char *tag, const char *attr,
                                       const char *value);
/* The <pci> element of a GPU, NIC or PCI switch (by bus id), NULL when xml has none. */
const tp_xml_elem *tp_system__pci_elem(const tp_xml *xml, const tp_node *node);
/* The name of the first <net> of a NIC ("mlx5_3"), NULL when xml has none. */
const char *tp_system__nic_net_name(const tp_xml *xml, const tp_node *nic);
/*
 * A device as an operator knows it, with `label` (NCCL's id as the caller's log names it):
 * "GPU 3 (0000:5f:00.0, LABEL)", "mlx5_3 (LABEL)", "NIC mlx5_3 at 0000:5e:00.0 (LABEL)",
 * "PCIe switch 0000:5d:00.0 (LABEL)", "NVSwitch", "NUMA node 0 (LABEL)". xml may be NULL.
 */
void tp_system__device_name(char *buf, size_t size, const tp_xml *xml, const tp_node *node,
                            const char *label);

#endif
