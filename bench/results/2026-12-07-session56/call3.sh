#!/usr/bin/env bash
# Session 56, call 3: the shipped routes after call 2 (TF32 narrow-deep at m 33-512 on
# tcdec32split.dec32cm32). The narrow-deep bench, TF32 and bf16, against cuBLAS; gpu_invariance's
# tensor-core sweeps; the timing suite's perturbed and sanitized steps (its TF32 100 x 1024 x 8192
# case now runs dec32cm32), as far as END seconds reach.
#   bash bench/pack-subset.sh gemm-aot-bench gpu_invariance gpu_perturbed gpu_sanitized gemm-aot-tune
#   COMMIT=<head> END=420 bash bench/results/2026-12-07-session56/call3.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call3; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-420}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
for dt in f32 bf16; do
  timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --dtype $dt --shapes bench/shapes/models.toml --filter narrow-deep --reps 10 --commit $C --out $R/${dt}nd > $R/bench_${dt}_nd.log 2>&1; st bench_${dt}_nd $? $R/bench_${dt}_nd.log
done
(cd runtime && timeout $(cap 110) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture tc_) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
T=$(cap 220)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261209 SAN_TIMEOUT=150 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
rm -f $R/timing/racecheck_probe
cd $OUT && tar cJf call3.tar.xz call3 && rm -rf call3
