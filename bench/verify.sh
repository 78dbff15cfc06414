#!/bin/sh
# `topoplan verify` on a 4,096-rank interleaved job log (512 nodes of the public syn_dgx1v
# case, 8 GPUs each): wall time and peak RSS. A benchmark, not a test (shared machines).
#   sh bench/verify.sh [NODES]   (from the repository root, after make build/topoplan)
set -e
nodes=${1:-512}
topo=../shared/conformance/cases/syn_dgx1v/topo.xml
make -s build/bench/verify_log
log=build/bench/verify_${nodes}.log
[ -f "$log" ] || build/bench/verify_log "$topo" "$nodes" "$log"
gzip -kf "$log"
echo "log: $(wc -l <"$log") lines, $(du -m "$log" | cut -f1) MB ($(du -m "$log.gz" | cut -f1) MB gzip)"
for f in "$log" "$log.gz"; do
    /usr/bin/time -f "verify $(basename "$f"): %e s wall, %U s user, peak RSS %M KB" \
        build/topoplan --no-env verify "$f" --topo "$topo" --no-causes | tail -n 1
done
