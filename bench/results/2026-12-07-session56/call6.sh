#!/usr/bin/env bash
# Session 56, call 6: TF32 over the whole model list and the holdout list at the shipped routes
# (4a1eb4f: the TF32 narrow-deep routes of call 2; the decode template as validated in call 3).
#   bash bench/pack-subset.sh gemm-aot-bench
#   COMMIT=<head> END=200 bash bench/results/2026-12-07-session56/call6.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call6; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-200}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
timeout $(cap 120) $B/gemm-aot-bench --policy tensor-core --dtype f32 --shapes bench/shapes/models.toml --reps 10 --commit $C --out $R/tf32 > $R/bench_tf32.log 2>&1; st bench_tf32 $? $R/bench_tf32.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --dtype f32 --shapes bench/shapes/holdout.toml --reps 10 --commit $C --out $R/holdout > $R/bench_tf32_holdout.log 2>&1; st bench_tf32_holdout $? $R/bench_tf32_holdout.log
cd $OUT && tar cJf call6.tar.xz call6 && rm -rf call6
