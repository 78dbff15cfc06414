#!/bin/sh
# Benchmarks: whole-plan time per public conformance case against NCCL's own
# reference figures (../shared/conformance/nccl-timings.tsv). Timings only.
set -e
make -s build/bench/bench_cases >/dev/null
build/bench/bench_cases ../shared/conformance/cases ../shared/conformance/nccl-timings.tsv "${RUNS:-5}"
make -s build/bench/bench_scale >/dev/null
echo
echo "scale: 4096 nodes x 8 GPUs (dgx-h100)"
build/bench/bench_scale 4096 dgx-h100 3
