#!/bin/bash
# Device call 6 (session 2026-12-03b): tiles in clusters of 2 along M (B multicast) as tuning
# candidates: the candidate tests (routed bits), then the tuner over a mid-m subset of the list.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d4/unpack; B=.device/d4/bin
(cd runtime && timeout 60 ../$B/gpu_tensor_core-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $?
(cd tests/timing && timeout 90 ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture perturbed_candidates_give_the_routed_bits) > $R/perturbed_candidates.log 2>&1; st perturbed_candidates $?
timeout 330 $B/gemm-aot-tune --tier sm90a --shapes .device/midm.toml --buckets 64,128,256,512,1024,2048 --out $R/scratch_nn.toml --json $R/tune_nn.json --time-limit 300 > $R/tune_nn.log 2>&1; st tune_nn $?
cat $S
