#!/bin/bash
# Device call 11 (session 2026-12-03c): split tiles mid2s4, mid2s8 (128 x 64) and mid64s2 as tuning
# candidates, the split's C staging dropped: the candidate tests (routed bits, CPU model), the
# split suite, then the tuner over the narrow-deep list at m = 32-512.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d7/unpack; B=.device/d7/bin
(cd runtime && timeout 60 ../$B/gpu_tensor_core-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $?
(cd runtime && timeout 30 ../$B/gpu_split_k-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; st gpu_split_k $?
(cd tests/timing && timeout 90 ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture perturbed_candidates_give_the_routed_bits) > $R/perturbed_candidates.log 2>&1; st perturbed_candidates $?
timeout 300 $B/gemm-aot-tune --tier sm90a --shapes .device/deep2.toml --buckets 32,64,128,256,512 --out $R/scratch_nn.toml --json $R/tune_nn.json --time-limit 280 > $R/tune_nn.log 2>&1; st tune_nn $?
xz -k $R/tune_nn.json 2>/dev/null
cat $S
