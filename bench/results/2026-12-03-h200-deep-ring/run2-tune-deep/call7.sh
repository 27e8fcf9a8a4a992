#!/bin/bash
# Device call 7 (session 2026-12-03b): tiles mid64s4d and mid64s8d (deeper rings, fewer slots) as tuning
# candidates: the candidate tests (routed bits), then the tuner over a narrow-deep list of the list.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d5/unpack; B=.device/d5/bin
(cd runtime && timeout 60 ../$B/gpu_tensor_core-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $?
(cd tests/timing && timeout 90 ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture perturbed_candidates_give_the_routed_bits) > $R/perturbed_candidates.log 2>&1; st perturbed_candidates $?
timeout 200 $B/gemm-aot-tune --tier sm90a --shapes .device/deep.toml --buckets 16,32,64,128,256 --out $R/scratch_nn.toml --json $R/tune_nn.json --time-limit 180 > $R/tune_nn.log 2>&1; st tune_nn $?
cat $S
