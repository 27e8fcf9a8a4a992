#!/usr/bin/env bash
# Session 48: the shipped routes (c18bbb3) on an H200, the card of the README's tables: NN over
# the model list, TN and NT at m = 1024 and 4096, the holdout list. Each step capped by what is
# left of END seconds. Pack: call 7's (gemm-aot-bench among it); COMMIT=<packed>; carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call8; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-330}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
timeout $(cap 100) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/nt > $R/bench_nt.log 2>&1; st bench_nt $? $R/bench_nt.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --dtype bf16 --commit $C --out $R/holdout > $R/bench_holdout.log 2>&1; st bench_holdout $? $R/bench_holdout.log
tar cJf $OUT/call8.tar.xz -C $OUT call8
cat $S
