#!/usr/bin/env bash
# Session 51: the shipped routes at the head on whichever card the call got (the README's tables
# are the H200's, last measured at 86b00ec before sessions 46 and 48 changed 28 routes): NN over
# the model list, TF32 over it, the exact rows, the holdout list, TN and NT at m = 1024 and 4096. The bench binary is B's of
# call 1 (.devx/new/bins.tar.xz). Each step capped by what is left of END seconds.
#   COMMIT=<packed> END=480 bash call2-bench.sh      (carry [".devx"])
set -u
mkdir -p .sideB/bin && tar xJf .devx/new/bins.tar.xz -C .sideB/bin
B=$PWD/.sideB/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call2; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-480}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
timeout $(cap 110) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
timeout $(cap 150) $B/gemm-aot-bench --policy tensor-core --dtype f32 --shapes bench/shapes/models.toml --reps 10 --commit $C --out $R/tf32 > $R/bench_tf32.log 2>&1; st bench_tf32 $? $R/bench_tf32.log
timeout $(cap 90) $B/gemm-aot-bench --policy exact --commit $C --out $R/exact > $R/bench_exact.log 2>&1; st bench_exact $? $R/bench_exact.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --dtype bf16 --commit $C --out $R/holdout > $R/bench_holdout.log 2>&1; st bench_holdout $? $R/bench_holdout.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/nt > $R/bench_nt.log 2>&1; st bench_nt $? $R/bench_nt.log
cat $S
