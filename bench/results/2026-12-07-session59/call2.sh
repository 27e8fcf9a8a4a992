#!/usr/bin/env bash
# Session 59, call 2: the routes chosen from call 1 (exact NN at m 5-16 by n on fmadecs.dec4s3,
# dec8k16, dec8, dec16; NT f32 on fmaw.w256k8t16 in NN's boxes): (1) the exact bench's default
# rows; (2) gpu_exact's routed exact sweeps and the TF32 bound test (its contract check fixed);
# (3) gpu_invariance's exact f32 sweep (rows of m = 1-1000 against m = 4096, the new decode
# routes among them); (4) the exact bench over the model list at m = 1, 8, 16 against pedantic
# SGEMM; (5) with what time is left, the timing suite's perturbed and sanitized steps (its
# m = 12 case now runs fmadecs.dec8).
#   bash bench/pack-subset.sh gemm-aot-tune gemm-aot-bench gpu_perturbed gpu_sanitized gpu_exact gpu_invariance
#   COMMIT=<head> END=300 bash bench/results/2026-12-07-session59/call2.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call2; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-300}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
timeout $(cap 30) $B/gemm-aot-bench --policy exact --commit $C --out $R/exact > $R/bench_exact.log 2>&1; st bench_exact $? $R/bench_exact.log
(cd runtime && timeout $(cap 70) $B/gpu_exact --include-ignored --test-threads=1 --nocapture f32_to_f32_all_ops bf16_to_bf16_nn_nt f16_to_f16_nn_nt bf16_to_f32_all_ops f16_to_f32_all_ops tc_bound_tf32_nn_nt_tn) > $R/gpu_exact.log 2>&1; st gpu_exact $? $R/gpu_exact.log
(cd runtime && timeout $(cap 60) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture nn_nt_f32) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
timeout $(cap 60) $B/gemm-aot-bench --policy exact --shapes bench/shapes/models.toml --m 1,8,16 --reps 5 --commit $C --out $R/models_decode > $R/bench_exact_decode.log 2>&1; st bench_exact_decode $? $R/bench_exact_decode.log
T=$(cap 110)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261212 SAN_TIMEOUT=60 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
rm -f $R/timing/racecheck_probe
xz -9 $R/*/*.json 2>/dev/null
cat $S
cd $OUT && tar cJf call2.tar.xz call2 && rm -rf call2
