#!/usr/bin/env python3
"""fleet_check.py: the C example fleet_check.c in Python, line for line.

Plan every topology of a folder (NAME.xml, or NAME/topo.xml) and flag the
machines whose job gets fewer collective channels than most of the fleet, or
that NCCL would reject. Exit status 0 when every machine matches, 1 otherwise.

    python3 fleet_check.py /var/lib/topologies 2
"""
import os
import sys
from collections import Counter

import topoplan


def topology_path(folder, entry):
    if entry.startswith("."):
        return None
    if entry.endswith(".xml"):
        return os.path.join(folder, entry)
    path = os.path.join(folder, entry, "topo.xml")
    return path if os.path.isfile(path) else None


def main(argv):
    if len(argv) not in (2, 3):
        print(f"usage: {argv[0]} DIR [NODES]", file=sys.stderr)
        return 2
    folder, nodes = argv[1], int(argv[2]) if len(argv) == 3 else 1
    env = {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}
    channels = {}
    for name in sorted(os.listdir(folder), key=os.fsencode):
        path = topology_path(folder, name)
        if path is None:
            continue
        try:
            with topoplan.plan(path, nodes=nodes, env=env) as plan:
                ring, ch = plan.graph("ring"), plan.channels
                channels[name] = ch.n_channels
                print(f"{name}: ring {ring.n_channels} x {ring.bw_intra:.1f} GB/s, "
                      f"{ch.n_channels} collective channels")
        except topoplan.TopoplanError as e:
            channels[name] = -1
            print(f"{name}: error: {e}")
    # The count most machines have (the larger one on a tie).
    counts = Counter(c for c in channels.values() if c >= 0)
    norm = max(counts, key=lambda c: (counts[c], c)) if counts else -1
    odd = sum(1 for c in channels.values() if c != norm)
    print(f"fleet: {len(channels)} machines, {len(channels) - odd} with the usual {norm} "
          f"collective channels, {odd} to look at")
    return 1 if odd else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
