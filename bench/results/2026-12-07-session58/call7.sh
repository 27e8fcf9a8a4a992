#!/usr/bin/env bash
# Session 58, call 7: the exact f32 NN route to fmaw.w256k8t16 (16 x 8 a thread). Bits first:
# gpu_exact (every exact kernel against the CPU model of fma-k256, the new tile's 13 (op, dtype)
# kernels among them, and the routed kernels at large shapes), then gpu_invariance's f32 NN/NT
# sweep (rows of m = 1-300, 512, 1000 against m = 4096, which w256k8t16 now runs at n = k = 4096),
# then the exact bench (Llama-3 8B's (n, k), m = 1-4096, against cuBLAS SGEMM in pedantic math).
#   bash bench/pack-subset.sh gemm-aot-bench gpu_exact gpu_invariance
#   COMMIT=<head> bash bench/results/2026-12-07-session58/call7.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call7; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
timeout 200 $B/gpu_exact --ignored --test-threads 1 --nocapture > $R/gpu_exact.log 2>&1; st gpu_exact $? $R/gpu_exact.log
timeout 120 $B/gpu_invariance --ignored --test-threads 1 --nocapture nn_nt_f32 > $R/invariance_f32.log 2>&1; st invariance_f32 $? $R/invariance_f32.log
timeout 100 $B/gemm-aot-bench --policy exact --commit $C --out $R/exact > $R/bench_exact.log 2>&1; st bench_exact $? $R/bench_exact.log
xz -9 $R/exact/*.json 2>/dev/null
grep -E "kernels|w256" $R/invariance_f32.log | head -5
cat $R/bench_exact.log
cat $S
cd $OUT && tar cJf call7.tar.xz call7 && rm -rf call7
