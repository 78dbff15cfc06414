#!/bin/sh
# Benchmark (not a pass/fail test): `plan --job` of a job whose N nodes are all distinct node
# files (each DGX H100 with its own NIC GUIDs; every 10th node with a GPU link at x8), for
# N = 25 50 100 200 2000 (or the sizes given after the binary). Who-limits-the-job
# must scale like the plan itself (issue 25 item 5).
# usage: sh bench/job_kinds.sh build/topoplan [N...]
bin=$1
shift
sizes=${*:-25 50 100 200 2000}
base=tests/fixtures/dgx_h100.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
max=0
for n in $sizes; do [ "$n" -gt "$max" ] && max=$n; done
"$bin" --no-env mutate "$base" --set 0000:1b:00.0:link_width=8 >"$tmp/x8.xml" || exit 1
awk -v n="$max" -v dir="$tmp" -v x8="$tmp/x8.xml" '
    FNR == 1 { file++ }
    file == 1 { plain[++np] = $0 }
    file == 2 { slow[++ns] = $0 }
    END {
        for (i = 1; i <= n; i++) {
            f = sprintf("%s/node%05d.xml", dir, i)
            for (k = 1; k <= (i % 10 ? np : ns); k++) {
                s = i % 10 ? plain[k] : slow[k]
                gsub(/946dae03008c/, sprintf("%012x", i), s)
                print s > f
            }
            close(f)
        }
    }' "$base" "$tmp/x8.xml"
for n in $sizes; do
    job="$tmp/job$n.txt"
    : >"$job"
    i=1
    while [ $i -le "$n" ]; do
        printf '1 x %s/node%05d.xml\n' "$tmp" "$i" >>"$job"
        i=$((i + 1))
    done
    # CPU time (the machine is shared: wall time says more about the neighbours)
    /usr/bin/time -f "%U %S %e" -o "$tmp/time" timeout 600 "$bin" --no-env plan --job "$job" \
        >"$tmp/out$n.txt" 2>&1
    code=$?
    [ -n "$KEEP" ] && cp "$tmp/out$n.txt" "$KEEP.$n"
    /usr/bin/time -f "%U %S %e" -o "$tmp/time_log" "$bin" --no-env nccl-log --job "$job" \
        >/dev/null 2>&1
    read -r u s e <"$tmp/time"
    read -r lu ls le <"$tmp/time_log"
    awk -v n="$n" -v u="$u" -v s="$s" -v e="$e" -v lu="$lu" -v ls="$ls" -v c="$code" 'BEGIN {
        printf "%6d distinct nodes: plan --job %7.2f s cpu (%7.2f s wall, exit %d); ", n, u + s, e, c
        printf "nccl-log of the job %6.2f s cpu\n", lu + ls }'
done
