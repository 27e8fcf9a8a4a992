#!/usr/bin/env bash
# Session 60, call 1 (steps run in the order (1), (2) odd, (5), (6), (3), (4), (2) default, the
# later ones as time allows): (1) gpu_repack's exact vector-path test: the decode routes' unaligned
# kernels (f32 operands off 16 bytes copied 4 bytes a lane) against the route's kernel on the same
# values with 16-byte rows, and the copies elsewhere; (2) the exact bench over the model list's odd
# (n, k) at m = 1-32 (odd-shapes.toml), then its default rows; (3) gpu_exact's routed sweeps and
# the TF32 bound test; (4) gpu_invariance's exact f32 sweep; (5) the exact bench over the model
# list at m = 1, 8, 16 (session 59's routes by n and this session's at m <= 4 by k and n, not yet
# benched); (6) the timing suite's
# perturbed and sanitized steps (new cases: the unaligned decode kernels).
#   bash bench/pack-subset.sh gemm-aot-bench gpu_repack gpu_perturbed gpu_sanitized gpu_exact gpu_invariance
#   COMMIT=<head> END=330 bash bench/results/2026-12-07-session60/call1.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
H=bench/results/2026-12-07-session60
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-330}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout $(cap 40) $B/gpu_repack --include-ignored --test-threads=1 --nocapture exact_vector_kernels) > $R/gpu_repack.log 2>&1; st gpu_repack $? $R/gpu_repack.log
timeout $(cap 45) $B/gemm-aot-bench --policy exact --shapes $H/odd-shapes.toml --reps 5 --commit $C --out $R/odd > $R/bench_exact_odd.log 2>&1; st bench_exact_odd $? $R/bench_exact_odd.log
timeout $(cap 60) $B/gemm-aot-bench --policy exact --shapes bench/shapes/models.toml --m 1,8,16 --reps 5 --commit $C --out $R/models_decode > $R/bench_exact_decode.log 2>&1; st bench_exact_decode $? $R/bench_exact_decode.log
T=$(cap 120)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261213 SAN_TIMEOUT=60 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
(cd runtime && timeout $(cap 70) $B/gpu_exact --include-ignored --test-threads=1 --nocapture f32_to_f32_all_ops bf16_to_bf16_nn_nt f16_to_f16_nn_nt bf16_to_f32_all_ops f16_to_f32_all_ops tc_bound_tf32_nn_nt_tn) > $R/gpu_exact.log 2>&1; st gpu_exact $? $R/gpu_exact.log
(cd runtime && timeout $(cap 50) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture nn_nt_f32) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
timeout $(cap 30) $B/gemm-aot-bench --policy exact --commit $C --out $R/exact > $R/bench_exact.log 2>&1; st bench_exact $? $R/bench_exact.log
rm -f $R/timing/racecheck_probe
xz -9 $R/*/*.json 2>/dev/null
cat $S
cd $OUT && tar cJf call1.tar.xz call1 && rm -rf call1
