/*
 * NET devices as NCCL 2.22.3's IB plugin discovers them (src/transport/
 * net_ib.cc, src/misc/utils.cc): the NCCL_IB_HCA filter and port merging
 * (NCCL_IB_MERGE_NICS). Runs before the system stage.
 */
#ifndef TP_NETDEV_H
#define TP_NETDEV_H

#include "config/config.h"
#include "common/internal.h"
#include "xml/xml.h"

/* NCCL 2.22.3 limits: MAX_IB_DEVS entries in a filter, 2 ports per merged NIC. */
#define TP_HCA_MAX_ENTRIES 32
#define TP_IB_MAX_PORTS_PER_NIC 2
#define TP_IB_NAME_MAX 64

typedef struct tp_hca_entry {
    char prefix[TP_IB_NAME_MAX];
    int port; /* -1: any port */
} tp_hca_entry;

typedef struct tp_hca_filter {
    bool exclude; /* leading '^' */
    bool exact;   /* leading '=' (after '^') */
    int n_entries;
    tp_hca_entry entries[TP_HCA_MAX_ENTRIES];
} tp_hca_filter;

/* Parse an NCCL_IB_HCA value as NCCL does (NULL or "" selects everything). */
void tp_hca__parse(tp_hca_filter *f, const char *text);
/* Whether NCCL would use port `port` of device `name` under the filter. */
bool tp_hca__selects(const tp_hca_filter *f, const char *name, int port);
/*
 * The prefix trap: a non-exact entry that selects a device whose name only
 * starts with it and continues with a digit ("mlx5_1" -> "mlx5_10").
 * Returns the entry index that traps `name`, or -1.
 */
int tp_hca__trap(const tp_hca_filter *f, const char *name, int port);

/* One active IB port as the plugin sees it. */
typedef struct tp_ib_port_info {
    const char *name;     /* "mlx5_0" */
    int port;             /* ibv port number, from 1 */
    const char *pci_path; /* merged per NCCL: same PCI device for all ports */
    uint64_t guid;        /* sys_image_guid */
    int link_layer;       /* 1 InfiniBand, 2 Ethernet (ibverbs values) */
    int speed;            /* Mb/s */
} tp_ib_port_info;

/* A logical NET device after merging. */
typedef struct tp_ib_logical {
    char name[TP_IB_NAME_MAX * TP_IB_MAX_PORTS_PER_NIC + TP_IB_MAX_PORTS_PER_NIC];
    int n_ports;
    int ports[TP_IB_MAX_PORTS_PER_NIC]; /* indices into the selected ports */
    int speed;                          /* sum of the ports' speeds */
} tp_ib_logical;

/* What the IB plugin would report for a list of ports. */
typedef struct tp_ib_discovery {
    tp_ib_logical *devs; /* n_devs logical devices (owned: free(devs)) */
    int n_devs;
    int selected[TP_HCA_MAX_ENTRIES]; /* the i-th selected port's index into the port list */
    int n_selected;
    bool merge_disabled; /* the mix rule turned merging off */
} tp_ib_discovery;

/*
 * Select ports with the filter, then merge them as NCCL 2.22.3 does: ports of
 * the same PCI path, GUID and link layer share a logical device of at most two
 * ports; a mix of single- and multi-port devices turns merging off.
 */
tp_status tp_ib__discover(tp_ib_discovery *out, const tp_ib_port_info *ports, int n_ports,
                          const tp_hca_filter *filter, bool merge_nics, tp_error *err);

/*
 * Apply NCCL_IB_HCA (when set) and NCCL_IB_MERGE_NICS=1 (only when set
 * explicitly: an XML dumped by NCCL 2.22.3 already lists merged devices) to a
 * topology XML prepared by tp_system__prepare_xml: drop the <net> elements the
 * IB plugin would not report, merge ports into logical devices, renumber the
 * NET devices. Findings go to notes (may be NULL), never to NCCL's log.
 */
/* A port's GUID as the IB plugin's merging reads a <net guid="..."> (strtoull base 16). */
uint64_t tp_netdev__port_guid(const char *guid);
tp_status tp_netdev__apply_env(tp_xml *doc, const tp_config *cfg, tp_log *notes, tp_error *err);
/* *found: NCCL's IB plugin finds a device among the XML's <net> ports, one NCCL_IB_HCA selects
 * (any port when it is unset). */
tp_status tp_netdev__plugin_finds_device(const tp_xml *doc, const tp_config *cfg, bool *found,
                                         tp_error *err);

#endif
