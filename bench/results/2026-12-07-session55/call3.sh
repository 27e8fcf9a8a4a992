#!/usr/bin/env bash
# For the next session: the routes of the 32- and 64-row decode tiles (0782ec9) on a GPU. The
# narrow-deep bench, bf16 and TF32, against cuBLAS at the new routes; then the timing suite's
# perturbed step (the every-kind cases now read from the tier's routes) and its sanitized step
# (the row tiles among the cases), as far as END seconds reach.
#   bash bench/pack-subset.sh gemm-aot-bench gpu_perturbed gpu_sanitized
#   COMMIT=<head> END=400 bash bench/results/2026-12-07-session55/call3.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call3; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-400}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
for dt in bf16 f32; do
  timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --dtype $dt --shapes bench/shapes/models.toml --filter narrow-deep --reps 10 --commit $C --out $R/${dt}nd > $R/bench_${dt}_nd.log 2>&1; st bench_${dt}_nd $? $R/bench_${dt}_nd.log
done
T=$(cap 240)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261208 SAN_TIMEOUT=150 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
rm -f $R/timing/racecheck_probe
cd $OUT && tar cJf call3.tar.xz call3 && rm -rf call3
