"""topoplan: NCCL 2.22.3's topology decisions, predicted without a GPU.

A thin binding of the C library libtopoplan (ctypes, standard library only).
Load a topology, plan a job under an NCCL_* environment, then read its
graphs, channels and NIC choices as Python objects or as the JSON documents
the CLI prints:

    import topoplan
    with topoplan.plan("topo.xml", nodes=2, env={"NCCL_CROSS_NIC": "0"}) as p:
        ring = p.graph("ring")
        print(ring.n_channels, ring.bw_intra, p.channels.n_channels)
        print(p.nic(rank=0, channel=0).net_dev)
        doc = p.json("plan")

The shared library is found, in this order: the TOPOPLAN_LIBRARY environment
variable (a path to libtopoplan.so.0); libtopoplan.so.0 by the dynamic loader
(LD_LIBRARY_PATH, the ldconfig cache, /lib, /usr/lib); then the lib
directories of the usual install prefixes, where `make install PREFIX=...`
puts it: this Python's own prefix (a venv), ~/.local, /usr/local, /opt/topoplan,
/usr. Install the module with `pip install ./python`.
"""

import ctypes
import types
import json as _json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

__all__ = [
    "TopoplanError", "Plan", "System", "Node", "Link", "Path", "Graph", "GraphChannel",
    "Decision", "Channels", "RankChannel", "NicChoice", "RankNvls", "Comparison", "plan", "compare",
    "builtins", "version", "version_info", "nccl_version", "GRAPH_KINDS", "NODE_TYPES",
]

NODE_TYPES = ("GPU", "PCI", "NVS", "CPU", "NIC", "NET")
GRAPH_KINDS = ("ring", "tree", "collnet-chain", "collnet-direct", "nvls")
_FORMATS = {"text": 0, "json": 1, "dot": 2}
_TP_OK = 0


# ---- the C records (include/topoplan.h); the library fills at most their size ----

class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("source", ctypes.c_char * 256),
                ("line", ctypes.c_uint), ("column", ctypes.c_uint),
                ("message", ctypes.c_char * 512)]


class _Job(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("n_nodes", ctypes.c_int), ("rank", ctypes.c_int),
                ("node_topos", ctypes.POINTER(ctypes.c_char_p)), ("n_node_topos", ctypes.c_int)]


_JOB_VERSION = 2


class _JobInfo(ctypes.Structure):
    _fields_ = [("n_nodes", ctypes.c_int), ("n_ranks", ctypes.c_int), ("rank", ctypes.c_int),
                ("gpus_per_node", ctypes.c_int)]


class _NodeInfo(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("index", ctypes.c_int), ("id", ctypes.c_int64),
                ("label", ctypes.c_char * 40), ("n_links", ctypes.c_int),
                ("gpu_dev", ctypes.c_int), ("gpu_rank", ctypes.c_int),
                ("gpu_cuda_comp_cap", ctypes.c_int), ("gpu_gdr", ctypes.c_bool),
                ("net_dev", ctypes.c_int), ("net_asic", ctypes.c_uint64),
                ("net_port", ctypes.c_int), ("net_bw", ctypes.c_float),
                ("net_latency", ctypes.c_float), ("net_gdr", ctypes.c_bool),
                ("net_coll", ctypes.c_bool), ("net_max_channels", ctypes.c_int),
                ("cpu_arch", ctypes.c_int), ("cpu_vendor", ctypes.c_int),
                ("cpu_model", ctypes.c_int), ("pci_device", ctypes.c_uint64)]


class _LinkInfo(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("bw", ctypes.c_float), ("from_type", ctypes.c_int),
                ("from_index", ctypes.c_int), ("to_type", ctypes.c_int),
                ("to_index", ctypes.c_int)]


class _PathInfo(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("bw", ctypes.c_float), ("hops", ctypes.c_int),
                ("bottleneck_hop", ctypes.c_int)]


class _GraphSummary(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("pattern", ctypes.c_int), ("n_channels", ctypes.c_int),
                ("min_channels", ctypes.c_int), ("max_channels", ctypes.c_int),
                ("bw_intra", ctypes.c_float), ("bw_inter", ctypes.c_float),
                ("latency_inter", ctypes.c_float), ("type_intra", ctypes.c_int),
                ("type_inter", ctypes.c_int), ("cross_nic", ctypes.c_int),
                ("same_channels", ctypes.c_bool), ("n_gpus", ctypes.c_int),
                ("has_nets", ctypes.c_bool), ("n_decisions", ctypes.c_int)]


class _Decision(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("why", ctypes.c_char_p), ("bw_intra", ctypes.c_float),
                ("bw_inter", ctypes.c_float), ("type_intra", ctypes.c_int),
                ("type_inter", ctypes.c_int), ("same_channels", ctypes.c_bool),
                ("cross_nic", ctypes.c_int), ("pattern", ctypes.c_int),
                ("n_channels", ctypes.c_int)]


class _ChannelsInfo(ctypes.Structure):
    _fields_ = [("n_channels", ctypes.c_int), ("search_channels", ctypes.c_int),
                ("n_nvls_channels", ctypes.c_int), ("nvls_heads", ctypes.c_int),
                ("n_collnet_channels", ctypes.c_int), ("p2p_channels", ctypes.c_int),
                ("p2p_channels_per_peer", ctypes.c_int), ("nccl_nodes", ctypes.c_int)]


class _RankChannel(ctypes.Structure):
    _fields_ = [("ring_prev", ctypes.c_int), ("ring_next", ctypes.c_int),
                ("tree_up", ctypes.c_int), ("tree_down", ctypes.c_int * 3)]


class _NicChoice(ctypes.Structure):
    _fields_ = [("net_dev", ctypes.c_int), ("net_id", ctypes.c_int64),
                ("net_index", ctypes.c_int), ("proxy_rank", ctypes.c_int),
                ("gdr", ctypes.c_bool), ("role", ctypes.c_int),
                ("send_net_dev", ctypes.c_int), ("send_net_id", ctypes.c_int64),
                ("why", ctypes.c_char * 128)]


class _RankNvls(ctypes.Structure):
    _fields_ = [("n_heads", ctypes.c_int), ("head_rank", ctypes.c_int), ("down", ctypes.c_int),
                ("tree_up", ctypes.c_int), ("tree_down", ctypes.c_int * 3)]


class _TuneCall(ctypes.Structure):
    _fields_ = [("algorithm", ctypes.c_int), ("protocol", ctypes.c_int),
                ("time_us", ctypes.c_float), ("channels", ctypes.c_int),
                ("threads", ctypes.c_int), ("algbw_gbs", ctypes.c_double),
                ("busbw_gbs", ctypes.c_double), ("from_backup", ctypes.c_int)]


_DECISION_KINDS = ("try", "solution", "relax", "raise", "budget", "fallback", "loaded",
                   "bound", "settle", "improved", "dup", "done")


class _ProfileInfo(ctypes.Structure):
    """tp_nccl_profile_info (TP_NCCL_PROFILE_INFO_VERSION 1)."""
    _fields_ = [("nccl", ctypes.c_char_p), ("version_code", ctypes.c_int),
                ("exact", ctypes.c_bool), ("is_default", ctypes.c_bool),
                ("public_passed", ctypes.c_int), ("public_total", ctypes.c_int)]


# C integer types of the signatures and their ranges: ctypes would wrap a larger Python int
# silently (2**32 + 2 nodes planned as 2), so a value outside raises instead.
_INT_RANGES = {}
for _t in (ctypes.c_int, ctypes.c_int64):
    _INT_RANGES[_t] = (-(1 << (8 * ctypes.sizeof(_t) - 1)), (1 << (8 * ctypes.sizeof(_t) - 1)) - 1)
for _t in (ctypes.c_uint, ctypes.c_uint64, ctypes.c_size_t):
    _INT_RANGES[_t] = (0, (1 << (8 * ctypes.sizeof(_t))) - 1)


def _c_int(name: str, value, ctype=ctypes.c_int) -> int:
    """value as a C integer of ctype: TypeError if not an int, OverflowError if out of range."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    lo, hi = _INT_RANGES[ctype]
    if not lo <= value <= hi:
        raise OverflowError(f"{name}={value} is outside the C {ctype.__name__} range {lo}..{hi}")
    return value


def _range_checked(name, fn, args):
    """fn with every integer argument checked against its C type's range."""
    checks = [(i, t) for i, t in enumerate(args) if t in _INT_RANGES]
    if not checks:
        return fn

    def call(*values):
        for i, t in checks:
            if i < len(values) and isinstance(values[i], int):
                _c_int(f"{name} argument {i + 1}", values[i], t)
        return fn(*values)
    return call


_SONAME = "libtopoplan.so.0"


def _library_candidates():
    """Where `make install PREFIX=P` puts the library: P/lib, for the usual P."""
    prefixes = [sys.prefix, sys.base_prefix, os.path.expanduser("~/.local"), "/usr/local",
                "/opt/topoplan", "/usr"]
    seen, paths = set(), []
    for prefix in prefixes:
        for lib in ("lib", "lib64", "lib/" + _multiarch()):
            path = os.path.join(prefix, lib, _SONAME)
            if path not in seen:
                seen.add(path)
                paths.append(path)
    return paths


def _multiarch():
    return getattr(sys.implementation, "_multiarch", "") or ""


def _open_library():
    explicit = os.environ.get("TOPOPLAN_LIBRARY")
    if explicit:
        return ctypes.CDLL(explicit)  # asked for by path: its own error if it cannot load
    try:
        return ctypes.CDLL(_SONAME)
    except OSError:
        pass
    tried = _library_candidates()
    for path in tried:
        if os.path.exists(path):
            return ctypes.CDLL(path)
    raise ImportError(
        f"topoplan: {_SONAME} not found: install it (`make install PREFIX=/usr/local`, then "
        f"`sudo ldconfig` or LD_LIBRARY_PATH=PREFIX/lib), or set TOPOPLAN_LIBRARY to its path; "
        f"looked in the dynamic loader's path and {', '.join(os.path.dirname(p) for p in tried)}")


def _load():
    lib = _open_library()
    P, I, S, E = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(_Error)
    sigs = {
        "tp_version": (ctypes.c_uint, [ctypes.POINTER(I)] * 3),
        "tp_version_string": (ctypes.c_char_p, []),
        "tp_nccl_version_string": (ctypes.c_char_p, []),
        "tp_status_name": (ctypes.c_char_p, [I]),
        "tp_config_new": (I, [ctypes.POINTER(P), ctypes.POINTER(ctypes.c_char_p), E]),
        "tp_config_free": (None, [P]),
        "tp_config_set_nccl": (I, [P, ctypes.c_char_p, E]),
        "tp_config_nccl": (ctypes.c_char_p, [P]),
        "tp_nccl_profile_count": (I, []),
        "tp_nccl_profile_info_at": (I, [I, ctypes.POINTER(_ProfileInfo), S, E]),
        "tp_plan_buffer": (I, [ctypes.POINTER(P), ctypes.c_char_p, S, ctypes.c_char_p,
                               ctypes.POINTER(_Job), P, E]),
        "tp_plan_file": (I, [ctypes.POINTER(P), ctypes.c_char_p, ctypes.POINTER(_Job), P, E]),
        "tp_plan_free": (None, [P]),
        "tp_plan_status": (I, [P]),
        "tp_plan_job": (I, [P, ctypes.POINTER(_JobInfo), S]),
        "tp_plan_log_count": (I, [P]),
        "tp_plan_log_line": (ctypes.c_char_p, [P, I, ctypes.POINTER(ctypes.c_bool)]),
        "tp_plan_nic_note_count": (I, [P]),
        "tp_plan_nic_note": (ctypes.c_char_p, [P, I]),
        "tp_plan_system": (P, [P]),
        "tp_system_node_count": (I, [P, I]),
        "tp_system_node": (I, [P, I, I, ctypes.POINTER(_NodeInfo), S]),
        "tp_system_link": (I, [P, I, I, I, ctypes.POINTER(_LinkInfo), S]),
        "tp_system_path": (I, [P, I, I, I, I, ctypes.POINTER(_PathInfo), S]),
        "tp_system_path_hop": (I, [P, I, I, I, I, I, ctypes.POINTER(_LinkInfo), S]),
        "tp_plan_graph": (I, [P, I, ctypes.POINTER(_GraphSummary), S]),
        "tp_plan_graph_gpus": (ctypes.POINTER(I), [P, I, I, ctypes.POINTER(I)]),
        "tp_plan_graph_nets": (ctypes.POINTER(ctypes.c_int64), [P, I, I, ctypes.POINTER(I)]),
        "tp_plan_graph_decision": (I, [P, I, I, ctypes.POINTER(_Decision), S]),
        "tp_plan_channels": (I, [P, ctypes.POINTER(_ChannelsInfo), S]),
        "tp_plan_rank_channel": (I, [P, I, I, ctypes.POINTER(_RankChannel), S]),
        "tp_plan_ring": (ctypes.POINTER(I), [P, I, ctypes.POINTER(I)]),
        "tp_plan_nic": (I, [P, I, I, I, ctypes.POINTER(_NicChoice), S]),
        "tp_plan_rank_nvls": (I, [P, I, I, ctypes.POINTER(_RankNvls), S]),
        "tp_plan_p2p_channel": (I, [P, I, I, I]),
        "tp_plan_nic_findings": (I, [ctypes.POINTER(P), P, E]),
        "tp_findings_count": (I, [P]),
        "tp_findings_get": (ctypes.c_char_p, [P, I]),
        "tp_findings_free": (None, [P]),
        "tp_report_nccl_log": (I, [P, P, E]),
        "tp_report_tune": (I, [P, P, P, I, E]),
        "tp_plan_tune_call": (I, [P, I, ctypes.c_uint64, ctypes.POINTER(_TuneCall), S]),
        "tp_tune_coll_from_name": (I, [ctypes.c_char_p]),
        "tp_tune_algo_name": (ctypes.c_char_p, [I]),
        "tp_tune_proto_name": (ctypes.c_char_p, [I]),
        "tp_report_topology_xml": (I, [P, P, E]),
        "tp_report_plan": (I, [P, P, I, E]),
        "tp_report_paths": (I, [P, P, I, E]),
        "tp_report_search": (I, [P, P, I, E]),
        "tp_report_nics": (I, [P, P, I, E]),
        "tp_report_html": (I, [P, P, E]),
        "tp_compare_plans": (I, [ctypes.POINTER(P), P, P, E]),
        "tp_comparison_free": (None, [P]),
        "tp_comparison_count": (S, [P]),
        "tp_comparison_count_severity": (S, [P, I]),
        "tp_comparison_set_job": (I, [P, P, P, E]),
        "tp_comparison_why": (ctypes.c_char_p, [P]),
        "tp_report_diff": (I, [P, P, I, E]),
        "tp_report_check": (I, [P, P, I, E]),
        "tp_report_html_check": (I, [P, P, P, E]),
        "tp_builtin_count": (S, []),
        "tp_builtin_name": (ctypes.c_char_p, [S]),
        "tp_builtin_xml": (ctypes.c_char_p, [ctypes.c_char_p]),
    }
    funcs = {}
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
        funcs[name] = _range_checked(name, fn, args)
    return types.SimpleNamespace(**funcs)


_lib = _load()
_libc = ctypes.CDLL(None)
_libc.open_memstream.restype = ctypes.c_void_p
_libc.open_memstream.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
_libc.fclose.argtypes = [ctypes.c_void_p]
_libc.free.argtypes = [ctypes.c_void_p]


def _written(write) -> str:
    """What write(stream) (a tp_report_* call, returning (status, error)) wrote, as text."""
    buf, size = ctypes.c_void_p(), ctypes.c_size_t()
    stream = _libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not stream:
        raise MemoryError("open_memstream")
    try:
        st, err = write(stream)
    finally:
        _libc.fclose(stream)
    text = ctypes.string_at(buf, size.value).decode() if buf.value else ""
    _libc.free(buf)
    _check(st, err)
    return text


class TopoplanError(Exception):
    """A failure of the library: status name, source (file, variable or argument), message.

    `log` holds NCCL's log lines up to the failure when NCCL itself would
    have failed (a bad graph file, a topology NCCL rejects), else [].
    """

    def __init__(self, err: _Error, log: Optional[List[str]] = None):
        self.status = _lib.tp_status_name(err.code).decode()
        self.code = err.code
        self.source = err.source.decode(errors="replace")
        self.line, self.column = err.line, err.column
        self.message = err.message.decode(errors="replace")
        self.log = log or []
        where = self.source
        if where and self.line:
            where += f":{self.line}:{self.column}"
        super().__init__(f"{where}: {self.message}" if where else self.message)


def version() -> str:
    """The library's version, e.g. "0.2.0"."""
    return _lib.tp_version_string().decode()


def version_info():
    """(major, minor, patch) of the library."""
    parts = [ctypes.c_int() for _ in range(3)]
    _lib.tp_version(*[ctypes.byref(p) for p in parts])
    return tuple(p.value for p in parts)


def nccl_version() -> str:
    """The NCCL version whose decisions the library reproduces, "2.22.3"."""
    return _lib.tp_nccl_version_string().decode()


def versions() -> List[dict]:
    """The NCCL versions the library models (plan(..., nccl=VERSION)), oldest first: each
    {"nccl", "version_code", "status" ("exact" or "partial"), "default", "public_passed",
    "public_total"}."""
    out = []
    for i in range(_lib.tp_nccl_profile_count()):
        info, err = _ProfileInfo(), _Error()
        _check(_lib.tp_nccl_profile_info_at(i, ctypes.byref(info), ctypes.sizeof(info),
                                            ctypes.byref(err)), err)
        out.append({"nccl": info.nccl.decode(), "version_code": info.version_code,
                    "status": "exact" if info.exact else "partial",
                    "default": bool(info.is_default), "public_passed": info.public_passed,
                    "public_total": info.public_total})
    return out


def builtins() -> List[str]:
    """Names of the topologies compiled into the library."""
    return [_lib.tp_builtin_name(i).decode() for i in range(_lib.tp_builtin_count())]


# ---- the Python side of a plan: plain records ----

@dataclass
class Node:
    type: str
    index: int
    id: int
    label: str
    n_links: int
    gpu_dev: int = -1
    gpu_rank: int = -1
    gpu_cuda_comp_cap: int = -1
    net_dev: int = -1
    net_bw: float = 0.0
    net_port: int = -1
    gdr: bool = False


@dataclass
class Link:
    type: str
    bw: float
    src: str  # labels ("GPU/0-1a000")
    dst: str


@dataclass
class Path:
    type: str
    bw: float
    hops: List[Link]
    bottleneck: Optional[Link]


@dataclass
class Decision:
    kind: str
    why: str
    bw_intra: float
    bw_inter: float
    type_intra: str
    type_inter: str
    same_channels: bool
    cross_nic: int
    n_channels: int


@dataclass
class GraphChannel:
    gpus: List[int]            # ranks in the channel's order
    nets: List[int] = field(default_factory=list)  # NET ids in, out (multi-node)


@dataclass
class Graph:
    kind: str
    pattern: int
    n_channels: int
    bw_intra: float
    bw_inter: float
    type_intra: str
    type_inter: str
    cross_nic: int
    same_channels: bool
    channels: List[GraphChannel]
    decisions: List[Decision]


@dataclass
class Channels:
    n_channels: int
    search_channels: int
    n_nvls_channels: int
    nvls_heads: int
    n_collnet_channels: int
    p2p_channels: int
    p2p_channels_per_peer: int
    nccl_nodes: int


@dataclass
class RankChannel:
    ring_prev: int
    ring_next: int
    tree_up: int
    tree_down: List[int]


@dataclass
class NicChoice:
    """The NIC a rank uses on a channel; role "none" (net_dev -1) when it opens none there."""
    net_dev: int
    net_id: int
    proxy_rank: int  # != rank: PXN
    gdr: bool
    role: str = "send"  # "none", "receive", "send", "receive+send"
    why: str = ""
    send_net_dev: int = -1  # role "receive+send": the NET it sends on


@dataclass
class RankNvls:
    """A rank's NVLS connections on a channel (NCCL's "NVLS Trees" line for that rank)."""
    n_heads: int
    head_rank: int  # -1: the rank heads no NVLS channel
    down: int
    tree_up: int
    tree_down: List[int]


@dataclass
class TuneCall:
    """NCCL 2.22.3's choice for one call (rank 0's tuning model)."""
    algorithm: str
    protocol: str
    time_us: float  # the predicted time NCCL compares
    channels: int
    threads: int
    algbw_gbs: float
    busbw_gbs: float  # algbw x nccl-tests' factor of the collective
    from_backup: bool


def _check(st: int, err: _Error):
    if st != _TP_OK:
        raise TopoplanError(err)


def _path_name(t: int) -> str:
    names = ("LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS")
    return names[t] if 0 <= t < len(names) else "?"


_LINK_NAMES = {0: "LOC", 1: "NVL", 3: "PCI", 7: "SYS", 8: "NET"}


def _type_index(node_type: str) -> int:
    try:
        return NODE_TYPES.index(node_type.upper())
    except ValueError:
        raise ValueError(f"unknown node type {node_type!r} (one of {', '.join(NODE_TYPES)})")


def _kind_index(kind: str) -> int:
    try:
        return GRAPH_KINDS.index(kind)
    except ValueError:
        raise ValueError(f"unknown graph {kind!r} (one of {', '.join(GRAPH_KINDS)})")


class System:
    """The reported rank's system: nodes by type, links, paths (valid while its plan lives)."""

    def __init__(self, plan: "Plan"):
        self._plan = plan
        self._handle = _lib.tp_plan_system(plan._live())

    @property
    def _sys(self):
        """The system's handle; ValueError once its plan is closed (the handle is freed)."""
        self._plan._live()
        return self._handle

    def count(self, node_type: str) -> int:
        return _lib.tp_system_node_count(self._sys, _type_index(node_type))

    def node(self, node_type: str, index: int) -> Node:
        info = _NodeInfo()
        t = _type_index(node_type)
        if _lib.tp_system_node(self._sys, t, index, ctypes.byref(info), ctypes.sizeof(info)):
            raise IndexError(f"no {node_type} {index}")
        return Node(NODE_TYPES[info.type], info.index, info.id, info.label.decode(),
                    info.n_links, info.gpu_dev, info.gpu_rank, info.gpu_cuda_comp_cap,
                    info.net_dev, info.net_bw, info.net_port,
                    bool(info.gpu_gdr if t == 0 else info.net_gdr))

    def nodes(self, node_type: str) -> List[Node]:
        return [self.node(node_type, i) for i in range(self.count(node_type))]

    def _label(self, t: int, i: int) -> str:
        return self.node(NODE_TYPES[t], i).label

    def _link(self, li: _LinkInfo) -> Link:
        return Link(_LINK_NAMES.get(li.type, "?"), li.bw,
                    self._label(li.from_type, li.from_index), self._label(li.to_type, li.to_index))

    def links(self, node_type: str, index: int) -> List[Link]:
        n, t = self.node(node_type, index).n_links, _type_index(node_type)
        out = []
        for k in range(n):
            li = _LinkInfo()
            _lib.tp_system_link(self._sys, t, index, k, ctypes.byref(li), ctypes.sizeof(li))
            out.append(self._link(li))
        return out

    def path(self, src, dst) -> Path:
        """Path from src to dst, each a (type, index) pair, e.g. ("GPU", 0), ("NET", 3)."""
        a, b = (_type_index(src[0]), src[1]), (_type_index(dst[0]), dst[1])
        info = _PathInfo()
        if _lib.tp_system_path(self._sys, *a, *b, ctypes.byref(info), ctypes.sizeof(info)):
            raise IndexError(f"no path from {src} to {dst}")
        hops = []
        for h in range(info.hops):
            li = _LinkInfo()
            _lib.tp_system_path_hop(self._sys, *a, *b, h, ctypes.byref(li), ctypes.sizeof(li))
            hops.append(self._link(li))
        neck = hops[info.bottleneck_hop] if info.bottleneck_hop >= 0 else None
        return Path(_path_name(info.type), info.bw, hops, neck)


class _Owned:
    """A C object this one owns: freed by close(), a `with` block or the collector."""

    _kind = "object"

    def __init__(self, handle):
        self._handle = handle

    def _release(self, handle):
        raise NotImplementedError

    def close(self):
        if self._handle:
            self._release(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _live(self):
        if not self._handle:
            raise ValueError(f"the {self._kind} was closed")
        return self._handle


class Plan(_Owned):
    """A planned job. Free it with close() or a `with` block (also freed when collected)."""

    _kind = "plan"

    def _release(self, handle):
        _lib.tp_plan_free(handle)

    @property
    def job(self) -> Dict[str, int]:
        info = _JobInfo()
        _lib.tp_plan_job(self._live(), ctypes.byref(info), ctypes.sizeof(info))
        return {f: getattr(info, f) for f, _ in _JobInfo._fields_}

    @property
    def log(self) -> List[str]:
        """NCCL's log lines of the reported rank (before NCCL_DEBUG filtering)."""
        h = self._live()
        return [_lib.tp_plan_log_line(h, i, None).decode() for i in range(_lib.tp_plan_log_count(h))]

    @property
    def nic_notes(self) -> List[str]:
        h = self._live()
        return [_lib.tp_plan_nic_note(h, i).decode()
                for i in range(_lib.tp_plan_nic_note_count(h))]

    @property
    def nic_findings(self) -> List[str]:
        """The nics report's findings in plain words (rails, PXN, GDR, NCCL_IB_HCA)."""
        f, err = ctypes.c_void_p(), _Error()
        _check(_lib.tp_plan_nic_findings(ctypes.byref(f), self._live(), ctypes.byref(err)), err)
        try:
            return [_lib.tp_findings_get(f, i).decode() for i in range(_lib.tp_findings_count(f))]
        finally:
            _lib.tp_findings_free(f)

    @property
    def system(self) -> System:
        return System(self)

    def graph(self, kind: str) -> Graph:
        h, k = self._live(), _kind_index(kind)
        g = _GraphSummary()
        _lib.tp_plan_graph(h, k, ctypes.byref(g), ctypes.sizeof(g))
        channels = []
        for c in range(g.n_channels):
            n = ctypes.c_int()
            gpus = _lib.tp_plan_graph_gpus(h, k, c, ctypes.byref(n))
            ch = GraphChannel([gpus[i] for i in range(n.value)])
            nets = _lib.tp_plan_graph_nets(h, k, c, ctypes.byref(n))
            ch.nets = [nets[i] for i in range(n.value)]
            channels.append(ch)
        decisions = []
        for i in range(g.n_decisions):
            d = _Decision()
            _lib.tp_plan_graph_decision(h, k, i, ctypes.byref(d), ctypes.sizeof(d))
            kind_name = _DECISION_KINDS[d.kind] if d.kind < len(_DECISION_KINDS) else str(d.kind)
            decisions.append(Decision(kind_name, (d.why or b"").decode(), d.bw_intra, d.bw_inter,
                                      _path_name(d.type_intra), _path_name(d.type_inter),
                                      bool(d.same_channels), d.cross_nic, d.n_channels))
        return Graph(kind, g.pattern, g.n_channels, g.bw_intra, g.bw_inter,
                     _path_name(g.type_intra), _path_name(g.type_inter), g.cross_nic,
                     bool(g.same_channels), channels, decisions)

    @property
    def graphs(self) -> Dict[str, Graph]:
        return {k: self.graph(k) for k in GRAPH_KINDS}

    @property
    def channels(self) -> Channels:
        info = _ChannelsInfo()
        _lib.tp_plan_channels(self._live(), ctypes.byref(info), ctypes.sizeof(info))
        return Channels(*[getattr(info, f) for f, _ in _ChannelsInfo._fields_])

    def rank_channel(self, rank: int, channel: int) -> RankChannel:
        rc = _RankChannel()
        if _lib.tp_plan_rank_channel(self._live(), rank, channel, ctypes.byref(rc),
                                     ctypes.sizeof(rc)):
            raise IndexError(f"no channel {channel} of rank {rank}")
        return RankChannel(rc.ring_prev, rc.ring_next, rc.tree_up, list(rc.tree_down))

    @property
    def rings(self) -> List[List[int]]:
        h, out = self._live(), []
        for c in range(self.channels.n_channels):
            n = ctypes.c_int()
            r = _lib.tp_plan_ring(h, c, ctypes.byref(n))
            out.append([r[i] for i in range(n.value)])
        return out

    def nic(self, rank: int, channel: int, peer: Optional[int] = None) -> NicChoice:
        """The NIC `rank` uses on collective channel `channel`, or for P2P sends to `peer`."""
        v = _NicChoice()
        if _lib.tp_plan_nic(self._live(), rank, channel, -1 if peer is None else peer,
                            ctypes.byref(v), ctypes.sizeof(v)):
            raise IndexError(f"no NIC for rank {rank}, channel {channel}, peer {peer}")
        role = ("none", "receive", "send", "receive+send")[v.role]
        return NicChoice(v.net_dev, v.net_id, v.proxy_rank, bool(v.gdr), role,
                         v.why.decode(), v.send_net_dev)

    def nvls(self, rank: int, channel: int) -> RankNvls:
        """NVLS up/down of `rank` on `channel` (ValueError/IndexError without NVLS or out of range)."""
        v = _RankNvls()
        if _lib.tp_plan_rank_nvls(self._live(), rank, channel, ctypes.byref(v), ctypes.sizeof(v)):
            raise IndexError(f"no NVLS channel {channel} of rank {rank}")
        return RankNvls(v.n_heads, v.head_rank, v.down, v.tree_up, list(v.tree_down))

    def p2p_channels(self, rank: int, peer: int) -> List[int]:
        """The channels of the parts of rank's P2P sends to peer (NCCL's p2p schedule)."""
        h, out = self._live(), []
        while True:
            c = _lib.tp_plan_p2p_channel(h, rank, peer, len(out))
            if c < 0:
                return out
            out.append(c)

    def tune(self, coll: str, n_bytes: int) -> TuneCall:
        """The algorithm/protocol NCCL picks for one `coll` call of n_bytes (NCCL's nBytes)."""
        c = _lib.tp_tune_coll_from_name(coll.encode())
        if c < 0:
            raise ValueError(f"unknown collective {coll!r}")
        v = _TuneCall()
        st = _lib.tp_plan_tune_call(self._live(), c, n_bytes, ctypes.byref(v), ctypes.sizeof(v))
        if st != _TP_OK:
            raise ValueError(f"no algorithm/protocol for {coll} of {n_bytes} bytes "
                             f"({_lib.tp_status_name(st).decode()})")
        return TuneCall(_lib.tp_tune_algo_name(v.algorithm).decode(),
                        _lib.tp_tune_proto_name(v.protocol).decode(), v.time_us, v.channels,
                        v.threads, v.algbw_gbs, v.busbw_gbs, bool(v.from_backup))

    def report(self, name: str, format: str = "text") -> str:
        """A CLI report as text: plan, paths, search, nics, tune (any format), nccl-log, topology-xml."""
        h = self._live()
        fmt = _FORMATS.get(format)
        if fmt is None:
            raise ValueError(f"unknown format {format!r}")
        fns = {"plan": _lib.tp_report_plan, "paths": _lib.tp_report_paths,
               "search": _lib.tp_report_search, "nics": _lib.tp_report_nics}
        if name not in fns and name not in ("nccl-log", "tune", "topology-xml"):
            raise ValueError(f"unknown report {name!r}")

        def write(stream):
            err = _Error()
            if name == "nccl-log":
                st = _lib.tp_report_nccl_log(stream, h, ctypes.byref(err))
            elif name == "tune":
                st = _lib.tp_report_tune(stream, h, None, fmt, ctypes.byref(err))
            elif name == "topology-xml":
                st = _lib.tp_report_topology_xml(stream, h, ctypes.byref(err))
            else:
                st = fns[name](stream, h, fmt, ctypes.byref(err))
            return st, err
        return _written(write)

    def json(self, name: str = "plan"):
        """The JSON document of a report (plan, paths, search, nics, tune) as Python data."""
        return _json.loads(self.report(name, "json"))

    def html(self) -> str:
        """The plan as one self-contained HTML page (`topoplan report`)."""
        h = self._live()

        def write(stream):
            err = _Error()
            return _lib.tp_report_html(stream, h, ctypes.byref(err)), err
        return _written(write)

    def to_dict(self) -> dict:
        """Graphs, channels, rings and each local rank's NIC per ring channel, as plain data."""
        job = self.job
        doc = {"job": job, "graphs": {k: asdict(g) for k, g in self.graphs.items()},
               "channels": asdict(self.channels), "rings": self.rings}
        if self.system.count("NET") > 0:
            node = job["rank"] // job["gpus_per_node"]
            doc["nics"] = {r: [asdict(self.nic(r, c)) for c in range(self.channels.n_channels)]
                           for r in range(node * job["gpus_per_node"],
                                          (node + 1) * job["gpus_per_node"])}
        return doc


_SEVERITIES = {"info": 0, "warn": 1, "error": 2}


class Comparison(_Owned):
    """Two plans compared layer by layer (`topoplan diff`; with the first as a baseline,
    `topoplan check`). Made by compare(); owns its C comparison (close() or a with block);
    the plans must stay open while its reports are written."""

    _kind = "comparison"

    def __init__(self, handle, first: "Plan", second: "Plan"):
        super().__init__(handle)
        self._first, self._second = first, second

    def _release(self, handle):
        _lib.tp_comparison_free(handle)

    def __len__(self) -> int:
        return _lib.tp_comparison_count(self._live())

    def count(self, severity: str) -> int:
        """Root causes of a severity: "info", "warn" or "error"."""
        if severity not in _SEVERITIES:
            raise ValueError(f"unknown severity {severity!r}")
        return _lib.tp_comparison_count_severity(self._live(), _SEVERITIES[severity])

    def set_job(self, job_base: "Plan", job_node: "Plan"):
        """What the second plan's node costs a job (a health check): job_base a job of
        baseline nodes, job_node the same job with the node among them (or the node alone).
        Sets every root cause's severity from NCCL's tuning model; up to two job sizes."""
        err = _Error()
        _check(_lib.tp_comparison_set_job(self._live(), job_base._live(), job_node._live(),
                                          ctypes.byref(err)), err)

    @property
    def why(self) -> str:
        """Why the channel counts differ, in one line ("" when they do not)."""
        return (_lib.tp_comparison_why(self._live()) or b"").decode()

    def _report(self, fn, format: str) -> str:
        fmt = _FORMATS.get(format)
        if fmt is None or format == "dot":
            raise ValueError(f"unknown format {format!r}")
        h = self._live()

        def write(stream):
            err = _Error()
            return fn(stream, h, fmt, ctypes.byref(err)), err
        return _written(write)

    def diff(self, format: str = "text") -> str:
        """`topoplan diff`'s report (text or json)."""
        return self._report(_lib.tp_report_diff, format)

    def check(self, format: str = "text") -> str:
        """`topoplan check`'s report: the differences as findings, errors first."""
        return self._report(_lib.tp_report_check, format)

    def html(self) -> str:
        """The second plan's HTML page with this comparison as its health-check panel."""
        h, plan = self._live(), self._second._live()

        def write(stream):
            err = _Error()
            return _lib.tp_report_html_check(stream, plan, h, ctypes.byref(err)), err
        return _written(write)


def compare(first: "Plan", second: "Plan") -> Comparison:
    """Compare two plans of the same job; the first is the reference (a health check's
    baseline). Both plans must have succeeded."""
    out, err = ctypes.c_void_p(), _Error()
    _check(_lib.tp_compare_plans(ctypes.byref(out), first._live(), second._live(),
                                 ctypes.byref(err)), err)
    return Comparison(out, first, second)


def _config(env: Optional[Mapping[str, str]], nccl: Optional[str] = None):
    items = [f"{k}={v}".encode() for k, v in (env or {}).items()]
    arr = (ctypes.c_char_p * (len(items) + 1))(*items, None)
    cfg, err = ctypes.c_void_p(), _Error()
    _check(_lib.tp_config_new(ctypes.byref(cfg), arr, ctypes.byref(err)), err)
    if nccl is not None:
        st = _lib.tp_config_set_nccl(cfg, nccl.encode(), ctypes.byref(err))
        if st != _TP_OK:
            _lib.tp_config_free(cfg)
            raise TopoplanError(err)
    return cfg


def plan(topology: Optional[str] = None, *, xml: Optional[str] = None,
         builtin: Optional[str] = None, nodes: int = 1, rank: int = 0,
         env: Optional[Mapping[str, str]] = None,
         node_topos: Sequence[str] = (), nccl: Optional[str] = None) -> Plan:
    """Plan a job of `nodes` nodes, reported at `rank`.

    node_topos: node 1 is planned on the first file, node 2 on the next, ...
    (the other nodes on the topology); ranks are numbered node by node.

    The topology is a file path, an XML text (xml=) or a builtin name
    (builtin=). `env` holds the NCCL_* variables (the process environment is
    not read: pass os.environ to use it). `nccl` selects the NCCL version
    modelled ("2.27.5"; versions() lists them; default: the newest exact one;
    the plan's .nccl names it). Raises TopoplanError on bad input,
    or when NCCL itself would fail (then .log has NCCL's lines up to it).
    """
    if sum(x is not None for x in (topology, xml, builtin)) != 1:
        raise ValueError("give exactly one of topology, xml=, builtin=")
    source = "<xml>"
    if builtin is not None:
        text = _lib.tp_builtin_xml(builtin.encode())
        if text is None:
            raise ValueError(f"unknown builtin {builtin!r} (see topoplan.builtins())")
        xml, source = text.decode(), builtin
    job = _Job(_JOB_VERSION, _c_int("nodes", nodes), _c_int("rank", rank), None,
               _c_int("len(node_topos)", len(node_topos)))
    topos = (ctypes.c_char_p * (len(node_topos) + 1))(*[os.fsencode(t) for t in node_topos])
    job.node_topos = topos
    cfg = _config(env, nccl)
    modelled = _lib.tp_config_nccl(cfg).decode()
    handle, err = ctypes.c_void_p(), _Error()
    try:
        if xml is not None:
            data = xml.encode()
            st = _lib.tp_plan_buffer(ctypes.byref(handle), data, len(data),
                                     source.encode(),
                                     ctypes.byref(job), cfg, ctypes.byref(err))
        else:
            st = _lib.tp_plan_file(ctypes.byref(handle), os.fsencode(topology),
                                   ctypes.byref(job), cfg, ctypes.byref(err))
    finally:
        _lib.tp_config_free(cfg)
    if st != _TP_OK:
        failed = Plan(handle.value) if handle.value else None
        log = failed.log if failed else []
        if failed:
            failed.close()
        raise TopoplanError(err, log)
    result = Plan(handle.value)
    result.nccl = modelled
    return result
