#!/usr/bin/env bash
# Session 52, call 3: the refined TF32 decode routes (m <= 32). The TF32 bench first (550
# rows), bits again (every candidate, the chunked kernels, rows over the batch), the holdout
# list, and the tuner's times of the decode tiles at m = 32-256 against the routed wgmma tiles
# (its routes file is scratch; the JSON is what is read).
#   COMMIT=<head> END=400 bash call3.sh      (carry [".devx"])
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
D=bench/results/2026-12-06-session52
timeout $(cap 120) $B/gemm-aot-bench --policy tensor-core --dtype f32 --shapes bench/shapes/models.toml --reps 10 --commit $C --out $R/tf32 > $R/bench_tf32.log 2>&1; st bench_tf32 $? $R/bench_tf32.log
timeout $(cap 90) $B/gpu_tensor_core --ignored --test-threads 1 --nocapture tf32 > $R/tensor_core_tf32.log 2>&1; st tensor_core_tf32 $? $R/tensor_core_tf32.log
timeout $(cap 90) $B/gpu_split_k --ignored --test-threads 1 --nocapture tf32 > $R/split_k_tf32.log 2>&1; st split_k_tf32 $? $R/split_k_tf32.log
timeout $(cap 90) $B/gpu_invariance --ignored --test-threads 1 --nocapture tc_tf32_rows_follow_the_batch > $R/invariance_tf32.log 2>&1; st invariance_tf32 $? $R/invariance_tf32.log
timeout $(cap 40) $B/gemm-aot-bench --policy tensor-core --dtype f32 --shapes bench/shapes/holdout.toml --reps 10 --commit $C --out $R/holdout > $R/bench_tf32_holdout.log 2>&1; st bench_tf32_holdout $? $R/bench_tf32_holdout.log
TL=$(( $(cap 150) - 25 )); [ $TL -lt 5 ] && TL=5
timeout $(cap 150) $B/gemm-aot-tune --tier sm90a --dtype f32 --op nn --shapes $D/mid-tune-shapes.toml --buckets 32,64,128 --confirm 0 --reps 10 --time-limit $TL \
  --only tcdec32.dec16,tcdec32.dec32,tcdec32split.dec16c,tcdec32split.dec16s2,tcdec32split.dec16s4,tcdec32split.dec16s8,tcdec32split.dec32s4 \
  --out $R/scratch.tuned.toml --json $R/mid-tune.json > $R/tune.log 2>&1; st tune $? $R/tune.log
xz -9 $R/mid-tune.json 2>/dev/null
cat $S
cd $OUT && tar cJf call3.tar.xz call3 && rm -rf call3
