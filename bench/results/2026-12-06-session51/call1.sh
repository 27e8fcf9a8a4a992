#!/usr/bin/env bash
# Session 51, call 1: B's gpu_raw (the gemm_raw_in_bounds bits check of session 50), then
# session 50's call1-ab.sh: A = c66873c (.devx), B = the head (.devx/new: wheel, bench, gpu_raw,
# C library and host_cost).   COMMIT_A=c66873c COMMIT_B=<head> bash call1.sh   (carry [".devx"])
set -u
mkdir -p .sideB/bin && tar xJf .devx/new/bins.tar.xz -C .sideB/bin
echo "=== 0. B: gpu_raw"
timeout 120 .sideB/bin/gpu_raw --include-ignored 2>&1 | grep -E "^test |test result|panicked|assert" | tail -40
bash bench/results/2026-12-06-session50/call1-ab.sh
