#!/bin/sh
# Every report that takes --nodes states the job size it used in its first line
# (text) and at its top level (JSON): the defaults differ (nics plans 2 nodes,
# the others 1), so a reader never has to guess. nccl-log is NCCL's own log
# and is not a report of ours.
#   job_line.sh BUILD/topoplan
bin=$1
fail=0; n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check_one() {  # NAME ARGS...: default job, then --nodes 3
    name=$1; shift
    "$bin" --no-env "$@" > "$tmp/out" 2>/dev/null
    first=$(head -n 1 "$tmp/out")
    echo "$first" | grep -Eq '\b[0-9]+ (NCCL )?nodes?\b' ||
        { echo "FAIL job line: $name: first line names no job size: $first"; fail=1; }
    "$bin" --no-env "$@" --nodes 3 > "$tmp/out" 2>/dev/null
    first=$(head -n 1 "$tmp/out")
    echo "$first" | grep -Eq '\b3 (NCCL )?nodes\b' ||
        { echo "FAIL job line: $name --nodes 3: first line does not say 3 nodes: $first"; fail=1; }
    "$bin" --no-env --format json "$@" --nodes 3 > "$tmp/out" 2>/dev/null
    head -n 6 "$tmp/out" | grep -Eq '"(nccl_)?nodes": 3\b' ||
        { echo "FAIL job line: $name --nodes 3 --format json: no top-level \"nodes\": 3"; fail=1; }
    n=$((n + 1))
}
for c in plan matrix paths search tune nics validate; do
    check_one "$c" "$c" --builtin dgx-h100
done
check_one check check --builtin dgx-h100 --baseline dgx-a100
check_one graph-check graph-check tests/fixtures/graph_v100_nv2_exact.xml tests/fixtures/v100_nv2.xml
check_one diff diff --builtin dgx-h100 --env-a NCCL_CROSS_NIC=0 --env-b NCCL_CROSS_NIC=1
[ $fail = 0 ] && echo "job line: $n reports state their job size (text first line, JSON top level)"
exit $fail
