#!/bin/sh
# Fleet check benchmark: NODES (default 10000) DGX H100 node files generated in
# a temporary folder (each with its own NIC GUIDs, as real dumps have; every
# 500th with GPU 0's PCIe link at x8), checked against the baseline with
# `topoplan check --baseline`. Prints the wall time and the rate. Timing only.
set -e
NODES=${NODES:-10000}
BASE=tests/fixtures/dgx_h100.xml
make -s build/topoplan >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v n="$NODES" -v dir="$tmp" '
    { line[NR] = $0 }
    END {
        for (i = 1; i <= n; i++) {
            f = sprintf("%s/node%05d.xml", dir, i)
            for (k = 1; k <= NR; k++) {
                s = line[k]
                gsub(/946dae03008c/, sprintf("%012x", i), s)
                if (i % 500 == 0 && s ~ /busid="0000:1b:00.0"/)
                    sub(/link_width="16"/, "link_width=\"8\"", s)
                print s > f
            }
            close(f)
        }
    }' "$BASE"
echo "fleet: $NODES node files, $(nproc) cores"
start=$(date +%s.%N)
build/topoplan check --baseline "$BASE" "$tmp" >"$tmp.out" || true
end=$(date +%s.%N)
tail -n 5 "$tmp.out"
rm -f "$tmp.out"
awk -v s="$start" -v e="$end" -v n="$NODES" \
    'BEGIN { printf "fleet check: %.2f s for %d nodes (%.0f nodes/s)\n", e - s, n, n / (e - s) }'
