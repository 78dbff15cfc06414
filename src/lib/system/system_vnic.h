#ifndef TP_SYSTEM_VNIC_H
#define TP_SYSTEM_VNIC_H
/*
 * NIC fusion into virtual NICs (TP_RULE_NIC_FUSION: NCCL 2.24+ topo.cc
 * ncclTopoProcessNet, ncclTopoMakeVNics, ncclTopoForceMerge, ncclTopoAutoMerge,
 * ncclTopoGetVNicParent, ncclTopoPopulateNics; the IB plugin's makeVDevice,
 * net_ib.cc ncclIbMakeVDeviceInternal), on the topology XML during its
 * preparation (system_xml.c), before the ranks' trees are trimmed and fused.
 * Internal to the system stage.
 */

#include "system/system.h"

/* The plugin's physical devices: device n's own <net> (its properties) and the <net> NCCL finds
 * by its name (the first of that name in document order), which NCCL fills. */
typedef struct tp_vnic_phys {
    tp_xml_elem *const *devs;
    tp_xml_elem *const *nodes;
    size_t count;
} tp_vnic_phys;

/* A NET device's pciPath as the conformance plugin reports it: the bus id of the <pci> holding
 * its <nic>, "" when the NIC hangs off a CPU. */
const char *tp_system__net_pci_path(const tp_xml_elem *net);

/* One device ncclTopoPopulateNics filled: device n in `net` (old_dev: its dev before, -1 none),
 * virtual when the plugin fused it. */
typedef struct tp_populated_net {
    const tp_xml_elem *net;
    int n;
    long old_dev;
    const char *name, *pci_path;
    bool is_virtual;
} tp_populated_net;

/* ncclTopoPopulateNics' lines for that device, in the profile's format. */
void tp_system__log_populated(tp_log *log, const tp_nccl_profile *profile,
                              const tp_populated_net *d);

/* NCCL_NET_MERGE_LEVEL as NCCL reads it (its lines for an unknown value go to log). */
int tp_system__vnic_merge_level(const tp_config *cfg, tp_log *log);

/* Whether NCCL_NET_MERGE_POLICY is RAIL (2.30.7 ncclTopoGetMergePolicy, its lines to log; false
 * without the net-merge-policy rule). */
bool tp_system__vnic_rail_policy(const tp_config *cfg, tp_log *log);

/*
 * ncclTopoMakeVNics and the virtual devices' ncclTopoPopulateNics: fuse the physical devices
 * (NCCL_NET_FORCE_MERGE groups, then every device with those at most NCCL_NET_MERGE_LEVEL from
 * it, 4 at most), mark the members keep="0", add each virtual NIC's <net> (dev n_phys, n_phys+1,
 * ...) where NCCL puts it, and log NCCL's lines; *n_made: the virtual NICs made. A failure NCCL
 * reports is TP_ERR_TOPOLOGY.
 */
tp_status tp_system__make_vnics(tp_xml *doc, const tp_vnic_phys *phys, const tp_config *cfg,
                                tp_log *log, int *n_made, tp_error *err);

#endif
