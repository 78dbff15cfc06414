#!/bin/sh
# Benchmarks: whole-plan time per public conformance case against NCCL's own
# reference figures (../shared/conformance/nccl-timings.tsv). Timings only.
set -e
make -s build/bench/bench_cases >/dev/null
build/bench/bench_cases ../shared/conformance/cases ../shared/conformance/nccl-timings.tsv "${RUNS:-5}"
