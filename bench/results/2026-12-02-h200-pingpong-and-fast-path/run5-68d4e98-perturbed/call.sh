#!/bin/bash
# Device call 4 at 68d4e98: the perturbed every-kind test (the ping-pong tiles among the kinds) and
# the perturbed batch kernels.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d4/unpack; B=.device/d4/bin
(cd tests/timing && timeout 200 ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture perturbed_kernels_give_the_shipped_bits_for_every_kind) > $R/gpu_perturbed_every_kind.log 2>&1; st perturbed_every_kind $?
cat $S
