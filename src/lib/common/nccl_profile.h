#ifndef TP_NCCL_PROFILE_H
#define TP_NCCL_PROFILE_H
/*
 * The NCCL version topoplan reproduces, and the numbers of its topology
 * rules that have no name of their own elsewhere: NCCL 2.22.3 (tag
 * v2.22.3-1, commit 178b6b759074597777ce13438efb0e0ba625e429). Each names
 * the NCCL source file it comes from; following a later NCCL version starts
 * here. Constants owned by one module (budgets in search.h, buffer sizes in
 * channels.h, NET limits in netdev.h, ...) stay there, also with their source.
 * The literals keep NCCL's types (double thresholds compared with floats).
 */

#define TP_NCCL_VERSION "2.22.3"

/* ---- src/graph/search.cc ---- */

/* Compute capability from which the sm90 speed ladders, the simpler-tree rung and NVLS apply. */
#define TP_NCCL_SM90_CC 90
/* ncclTopoDupChannels: channels are duplicated only from this bwIntra (GB/s) up, */
#define TP_NCCL_DUP_MIN_BW 25.0
/* ... and above this compute capability, not below TP_NCCL_DUP_FAST_BW with more than */
#define TP_NCCL_DUP_FAST_CC 80
#define TP_NCCL_DUP_FAST_BW 50.0
/* ... this many channels. */
#define TP_NCCL_DUP_FAST_MAX_CHANNELS 4
/* ncclTopoCompute: a lower speed is tried only while it keeps more than this share of the found
 * bwInter. */
#define TP_NCCL_LOWER_BW_MIN_SHARE .49
/* ncclTopoCompute: bwIntra and bwInter of the simple-order fallback graph. */
#define TP_NCCL_FALLBACK_BW 0.1

/* ---- src/graph/paths.cc ---- */

/* ncclTopoCheckP2p: P2P read between GPUs of this compute capability over NVLink. */
#define TP_NCCL_P2P_READ_CC 80

/* ---- src/graph/topo.cc ---- */

/* getBcmGen: a PCI switch's packed device word (vendor, device, subsystem vendor, subsystem
 * device; 16 bits each) under this mask names a Broadcom Gen4 switch, */
#define TP_NCCL_BCM_ID_MASK 0xfffffffffffff000ULL
#define TP_NCCL_BCM_GEN4_ID 0x1000c0101000a000ULL
/* ... or a Gen5 switch at a level (1 for a sub switch): this ORed with level * TP_NCCL_BCM_LEVEL.
 */
#define TP_NCCL_BCM_GEN5_ID 0x1000c03010000000ULL
#define TP_NCCL_BCM_LEVEL 0x1000
/* ncclTopoFlattenBcmSwitches: bits set in a flattened switch's device word, so that it no
 * longer matches and is never flattened again. */
#define TP_NCCL_BCM_FLATTENED 0xffff

#endif
