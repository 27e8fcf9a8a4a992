#!/usr/bin/env bash
# Session 54, call 1: session 53's call 2 (the 32- and 64-row decode tiles: bits of every chunked
# kernel, the tuner's times against the routed kernels at m = 32-256 over the narrow-deep (n, k),
# every candidate against the routed kernel, the bf16 narrow-deep bench) within END seconds, then
# the timing suite's perturbed and sanitized steps (tests/timing/run.sh), whose cases now include
# the TF32 mma.sync decode tiles (plain and split), with a sanitized run's bits compared to the
# plain run's.
#   COMMIT=<head> END=380 bash call1.sh      (carry [".devx"])
set -u
: "${COMMIT:?set COMMIT}"
COMMIT=$COMMIT END=${END:-380} bash bench/results/2026-12-07-session53/call2.sh 2>&1 | tail -12
OUT=$OUT/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261207 SAN_TIMEOUT=200 \
  timeout 300 bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $OUT/timing/timing.log
cd $OUT && tar cJf timing.tar.xz timing && rm -rf timing
