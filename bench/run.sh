#!/bin/sh
# Benchmarks: whole-plan time per public conformance case against NCCL's own
# reference figures (../shared/conformance/nccl-timings.tsv), the instructions of
# one plan (callgrind: repeatable on a noisy machine; INSTRUCTIONS=0 skips it),
# `topoplan plan` as a process (wall time, peak RSS), then a large job.
# Timings only: never pass/fail.
set -e
CASES=../shared/conformance/cases
TSV=../shared/conformance/nccl-timings.tsv
make -s build/bench/bench_cases build/bench/bench_scale build/topoplan >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
instr=""
if [ "${INSTRUCTIONS:-1}" != 0 ] && command -v valgrind >/dev/null 2>&1; then
    valgrind -q --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/cg.out" \
        build/bench/bench_cases "$CASES" "$TSV" --count-instructions >/dev/null 2>&1 || true
    # Each dump is named after its case: "desc: Trigger: Client Request: NAME", then "totals: N".
    for f in "$tmp"/cg.out.*; do
        [ -f "$f" ] || continue
        awk '/^desc: Trigger: Client Request: /{name=$5} /^totals: /{n=$2}
             END{if (name != "") print name, n}' "$f"
    done >"$tmp/instructions.txt"
    instr="--instructions $tmp/instructions.txt"
fi
# shellcheck disable=SC2086
build/bench/bench_cases "$CASES" "$TSV" "${RUNS:-5}" --topoplan "$PWD/build/topoplan" $instr
echo
echo "scale: 4096 nodes x 8 GPUs (dgx-h100)"
build/bench/bench_scale 4096 dgx-h100 3
echo
sh bench/fleet.sh
