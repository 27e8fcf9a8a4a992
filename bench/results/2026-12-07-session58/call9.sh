#!/usr/bin/env bash
# Session 58, call 9: the exact bench at 8f1b197 (w256k8t16 below 2048 rows only to n = 8192):
# the default rows (Llama-3 8B's (n, k), m = 1-4096), then f32 NN over bench/shapes/models.toml
# at m = 1024 and 4096, against cuBLAS SGEMM in pedantic math.
#   bash bench/pack-subset.sh gemm-aot-bench
#   COMMIT=<head> bash bench/results/2026-12-07-session58/call9.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call9; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
timeout 60 $B/gemm-aot-bench --policy exact --commit $C --out $R/exact > $R/bench_exact.log 2>&1; echo "bench_exact rc=$?" | tee $R/summary.txt
timeout 170 $B/gemm-aot-bench --policy exact --shapes bench/shapes/models.toml --m 1024,4096 --commit $C --out $R/models > $R/bench_exact_models.log 2>&1; echo "bench_exact_models rc=$?" | tee -a $R/summary.txt
xz -9 $R/*/*.json 2>/dev/null
cat $R/bench_exact.log; grep -iE "geometric|mean" $R/bench_exact_models.log
cd $OUT && tar cJf call9.tar.xz call9 && rm -rf call9
