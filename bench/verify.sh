#!/bin/sh
# `topoplan verify` on a 4,096-rank interleaved job log (512 nodes of the public syn_dgx1v
# case, 8 GPUs each): wall time, user time and peak RSS. A benchmark, not a test (shared
# machines). verify plans once per kind of rank (verify_kinds.c), so the time is mostly
# reading the log; BEFORE=path/to/an/older/topoplan times that build on the same log too and
# says whether both reports (text and JSON) are the same bytes.
#   sh bench/verify.sh [NODES]   (from the repository root, after make build/topoplan)
set -e
nodes=${1:-512}
topo=../shared/conformance/cases/syn_dgx1v/topo.xml
make -s build/bench/verify_log
log=build/bench/verify_${nodes}.log
[ -f "$log" ] || build/bench/verify_log "$topo" "$nodes" "$log"
gzip -kf "$log"
echo "log: $(wc -l <"$log") lines, $(du -m "$log" | cut -f1) MB ($(du -m "$log.gz" | cut -f1) MB gzip)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for bin in build/topoplan ${BEFORE:+"$BEFORE"}; do
    name=$(basename "$(dirname "$bin")")/$(basename "$bin")
    for f in "$log" "$log.gz"; do
        /usr/bin/time -f "$name verify $(basename "$f"): %e s wall, %U s user, %S s sys, peak RSS %M KB" \
            "$bin" --no-env verify "$f" --topo "$topo" --no-causes >"$tmp/out" 2>"$tmp/time" || true
        tail -n 1 "$tmp/out"
        cat "$tmp/time"
    done
    for fmt in text json; do
        "$bin" --no-env --format $fmt verify "$log" --topo "$topo" >"$tmp/$(echo "$bin" | tr / _).$fmt" || true
    done
done
if [ -n "$BEFORE" ]; then
    for fmt in text json; do
        if cmp -s "$tmp/build_topoplan.$fmt" "$tmp/$(echo "$BEFORE" | tr / _).$fmt"; then
            echo "$fmt report: the same bytes as $BEFORE's"
        else
            echo "$fmt report: DIFFERS from $BEFORE's"
        fi
    done
fi
