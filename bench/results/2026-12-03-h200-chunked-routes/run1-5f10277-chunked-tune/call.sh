#!/bin/bash
# Device call 2 (session 2026-12-03): the GPU suites over the routes of 5d74c21 with the new
# tuning candidate tcwidechunk.mid2n192 in the tier, then the tuner's times of every chunked
# candidate at the chunked (n, k) of the shape list and four untuned ones (nn, then nt, tn).
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
left() { v=$(( $1 - ($(date +%s) - t0) )); [ $v -lt 5 ] && v=5; echo $v; }
bash .device/d2/unpack; B=.device/d2/bin
(cd runtime && timeout 150 ../$B/gpu_tensor_core-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $?
(cd tests/timing && timeout 100 ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_perturbed.log 2>&1; st gpu_perturbed $?
(cd runtime && timeout 40 ../$B/gpu_split_k-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; st gpu_split_k $?
timeout $(left 330) $B/gemm-aot-tune --tier sm90a --shapes .device/chunked.toml --op nn --reps 12 --out $R/scratch_nn.toml --json $R/tune_nn.json > $R/tune_nn.log 2>&1; st tune_nn $?
timeout $(left 450) $B/gemm-aot-tune --tier sm90a --shapes .device/chunked.toml --op nt --reps 10 --time-limit $(left 420) --out $R/scratch_nt.toml --json $R/tune_nt.json > $R/tune_nt.log 2>&1; st tune_nt $?
timeout $(left 560) $B/gemm-aot-tune --tier sm90a --shapes .device/chunked.toml --op tn --reps 10 --time-limit $(left 530) --out $R/scratch_tn.toml --json $R/tune_tn.json > $R/tune_tn.log 2>&1; st tune_tn $?
cat $S
