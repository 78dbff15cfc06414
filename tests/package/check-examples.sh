#!/bin/sh
# The examples as a user builds them: against the staged install, with
# `pkg-config --cflags --libs topoplan` and nothing else; their figures must
# be the CLI's (its JSON reports) on the public conformance topologies, and
# the Python fleet check must print what the C one prints. Then the Python
# unit tests against the staged library.
#   check-examples.sh STAGE PREFIX BUILD
set -e
stage=$1 prefix=$2
cases=../shared/conformance/cases
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libdir=$stage$prefix/lib
cli=$stage$prefix/bin/topoplan
# The staged .pc says prefix=/usr: the sysroot maps its paths into the stage.
export PKG_CONFIG_PATH="$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
flags=$(pkg-config --cflags --libs topoplan)
for e in ring_channels nic_per_gpu fleet_check; do
    ${CC:-cc} -std=c17 -Wall -Wextra -Werror examples/$e.c $flags -o "$tmp/$e"
done
# No NCCL_* of the caller's environment: examples and CLI see the defaults.
run() { env -i PATH="$PATH" LD_LIBRARY_PATH="$libdir" "$@"; }
fail=0

if [ ! -d "$cases" ]; then
    echo "examples: built against the staged install; conformance cases not found, figures skipped"
    exit 0
fi

# The cases' topologies as one folder (seed, synthetic and real machines).
mkdir "$tmp/fleet"
for d in "$cases"/seed_* "$cases"/syn_* "$cases"/real_*; do
    [ -f "$d/topo.xml" ] && ln -s "$(cd "$d" && pwd)/topo.xml" "$tmp/fleet/$(basename "$d").xml"
done
n=$(ls "$tmp/fleet" | wc -l)

# The CLI's figures from its JSON reports, all files at once (one python3 run).
figures() {
    python3 - "$@" <<'PY'
import json, sys
kind, files = sys.argv[1], sys.argv[2:]
for path in files:
    d = json.load(open(path))
    if kind == "plan":
        ring = next(g for g in d["graphs"] if g["graph"] == "ring")
        print("ring graph: %d channels x %.1f/%.1f GB/s (%s/%s)" % (ring["n_channels"],
              ring["bw_intra"], ring["bw_inter"], ring["type_intra"], ring["type_inter"]))
        print("collective channels: %d" % d["channels"]["collective"])
        continue
    for r in d["ranks"]:
        for u in r["channels"]:
            end = "recv" if u["end"] == "entry" else "send"
            print("rank %d channel %d %s NET %d proxy %d gdr %d"
                  % (r["rank"], u["channel"], end, u["net"], u["proxy"], u["gdr"]))
        for p in r["p2p"]:
            for t in p["parts"]:
                print("rank %d peer %d part %d channel %d send NET %d proxy %d gdr %d"
                      % (r["rank"], p["peer"], t["part"], t["channel"], t["net"], t["proxy"],
                         t["gdr"]))
PY
}

# ring_channels and fleet_check against `topoplan --format json plan` (nic_per_gpu covers 2 nodes).
for nodes in 1; do
    : > "$tmp/ex.txt"
    rm -rf "$tmp/json" && mkdir "$tmp/json"
    i=0
    for f in "$tmp"/fleet/*.xml; do
        i=$((i + 1))
        run "$cli" --format json plan --nodes $nodes "$f" > "$tmp/json/$(printf %04d $i).json" \
            2>/dev/null || { rm -f "$tmp/json/$(printf %04d $i).json"; continue; }
        run "$tmp/ring_channels" "$f" $nodes >> "$tmp/ex.txt"
    done
    figures plan "$tmp"/json/*.json > "$tmp/cli.txt"
    if ! cmp -s "$tmp/cli.txt" "$tmp/ex.txt"; then
        echo "FAIL examples: ring_channels differs from the CLI at $nodes node(s):"
        diff "$tmp/cli.txt" "$tmp/ex.txt" | head -n 10; fail=1
    fi
    run "$tmp/fleet_check" "$tmp/fleet" $nodes > "$tmp/fleet_c.txt" || true
    run env TOPOPLAN_LIBRARY="$libdir/libtopoplan.so.0" PYTHONPATH=python \
        python3 examples/fleet_check.py "$tmp/fleet" $nodes > "$tmp/fleet_py.txt" || true
    if ! cmp -s "$tmp/fleet_c.txt" "$tmp/fleet_py.txt"; then
        echo "FAIL examples: fleet_check.py differs from fleet_check at $nodes node(s):"
        diff "$tmp/fleet_c.txt" "$tmp/fleet_py.txt" | head -n 10; fail=1
    fi
    # The fleet check's per-machine channel counts are the CLI's.
    grep -o '[0-9]* collective channels$' "$tmp/fleet_c.txt" | cut -d' ' -f1 > "$tmp/fc.txt"
    sed -n 's/^collective channels: //p' "$tmp/cli.txt" > "$tmp/cc.txt"
    if ! cmp -s "$tmp/fc.txt" "$tmp/cc.txt"; then
        echo "FAIL examples: fleet_check channel counts differ from the CLI at $nodes node(s)"; fail=1
    fi
done

# nic_per_gpu against `topoplan --format json nics --nodes 2`, on machines with NICs.
m=0
: > "$tmp/ex.txt"
rm -rf "$tmp/json" && mkdir "$tmp/json"
for f in "$tmp"/fleet/*.xml; do
    grep -q '<net ' "$f" || continue
    m=$((m + 1))
    out="$tmp/json/$(printf %04d $m).json"
    run "$cli" --format json nics --nodes 2 "$f" > "$out" 2>/dev/null || { rm -f "$out"; continue; }
    run "$tmp/nic_per_gpu" "$f" 2 >> "$tmp/ex.txt"
done
figures nics "$tmp"/json/*.json > "$tmp/cli.txt"
if ! cmp -s "$tmp/cli.txt" "$tmp/ex.txt"; then
    echo "FAIL examples: nic_per_gpu differs from the CLI's nics report:"
    diff "$tmp/cli.txt" "$tmp/ex.txt" | head -n 10; fail=1
fi

# The Python module's tests, against the staged library.
if ! run env TOPOPLAN_LIBRARY="$libdir/libtopoplan.so.0" PYTHONPATH=python \
        python3 -m unittest discover -s python/tests > "$tmp/py.txt" 2>&1; then
    echo "FAIL python: unit tests against the staged library:"; tail -n 20 "$tmp/py.txt"; fail=1
fi
[ $fail = 0 ] && echo "examples: built with pkg-config alone; ring_channels and fleet_check (C, Python) = CLI on $n topologies at 1 node, nic_per_gpu = CLI on $m with NICs at 2 nodes ($(wc -l < "$tmp/ex.txt") NIC choices); python: $(tail -n 1 "$tmp/py.txt")"
exit $fail
