#!/usr/bin/env bash
# Session 56, call 5: mma_decode_tma loading every fragment of a stage before the stage's mma
# steps (the decode kernels, bf16 and TF32, row tiles and splits). Bits first (gpu_split_k: every
# chunked kernel; every unchunked candidate), then the bench against cuBLAS (the narrow-deep rows in
# TF32 and bf16; the whole model list in bf16, whose m <= 16 rows are decode kernels), then the
# timing suite's perturbed and sanitized steps, as far as END seconds reach.
#   bash bench/pack-subset.sh gemm-aot-bench gemm-aot-tune gpu_split_k gpu_tensor_core gpu_perturbed gpu_sanitized
#   COMMIT=<head> END=420 bash bench/results/2026-12-07-session56/call5.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call5; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-420}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
timeout $(cap 90) $B/gpu_split_k --ignored --test-threads 1 --nocapture > $R/split_k.log 2>&1; st split_k $? $R/split_k.log
timeout $(cap 90) $B/gpu_tensor_core --ignored --test-threads 1 --nocapture every_candidate > $R/tensor_core_candidates.log 2>&1; st tensor_core_candidates $? $R/tensor_core_candidates.log
for dt in f32 bf16; do
  timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --dtype $dt --shapes bench/shapes/models.toml --filter narrow-deep --reps 10 --commit $C --out $R/${dt}nd > $R/bench_${dt}_nd.log 2>&1; st bench_${dt}_nd $? $R/bench_${dt}_nd.log
done
timeout $(cap 120) $B/gemm-aot-bench --policy tensor-core --dtype bf16 --shapes bench/shapes/models.toml --reps 10 --commit $C --out $R/bf16 > $R/bench_bf16.log 2>&1; st bench_bf16 $? $R/bench_bf16.log
T=$(cap 220)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261210 SAN_TIMEOUT=150 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
rm -f $R/timing/racecheck_probe
cd $OUT && tar cJf call5.tar.xz call5 && rm -rf call5
