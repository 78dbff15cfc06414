#!/bin/sh
# Benchmarks: whole-plan time per public conformance case against NCCL's own
# reference figures (../shared/conformance/nccl-timings.tsv), the instructions of
# one plan (callgrind: repeatable on a noisy machine; INSTRUCTIONS=0 skips it),
# `topoplan plan` as a process (its instructions against one plan's, wall time,
# peak RSS), then a large job.
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
    # `topoplan plan` as a user runs it, start-up and report included: one process per
    # case, in its folder with its env (the cases NCCL timed: those of $TSV).
    vg=$(command -v valgrind)
    top=$PWD
    tail -n +2 "$TSV" | cut -f1 | while read -r name; do
        dir="$CASES/$name"
        [ -d "$dir" ] || continue
        # shellcheck disable=SC2046
        (cd "$dir" && env $(cat env 2>/dev/null) "$vg" -q --tool=callgrind \
            --callgrind-out-file="$tmp/proc.out" "$top/build/topoplan" plan topo.xml \
            $(cat args 2>/dev/null) >/dev/null 2>&1) || true
        awk -v name="$name" '/^totals: /{print name, $2}' "$tmp/proc.out" 2>/dev/null
        rm -f "$tmp/proc.out"
    done >"$tmp/process.txt"
    instr="$instr --process-instructions $tmp/process.txt"
fi
# shellcheck disable=SC2086
# In process: the best of RUNS warm plans (30: on the shared machine, 5 left the first,
# colder plans of a case in the figure; a library planning repeatedly runs warm).
build/bench/bench_cases "$CASES" "$TSV" "${RUNS:-30}" --topoplan "$PWD/build/topoplan" $instr
# Every other profile against that NCCL version's own timings (in process only: the
# figures issue 24 asks for, >= 10x each version's planner on every timed case).
for suite in ../shared/conformance/nccl-*/; do
    version=$(basename "$suite")
    version=${version#nccl-}
    [ -f "$suite/nccl-timings.tsv" ] || continue
    if ! build/topoplan versions | grep -q "^  $version "; then
        echo
        echo "NCCL $version: no profile yet, not timed"
        continue
    fi
    echo
    build/bench/bench_cases "$suite/cases" "$suite/nccl-timings.tsv" "${RUNS:-30}" --nccl "$version" |
        grep -v '^ *$'
done
echo
echo "scale: 4096 nodes x 8 GPUs (dgx-h100)"
build/bench/bench_scale 4096 dgx-h100 3
echo
sh bench/fleet.sh
