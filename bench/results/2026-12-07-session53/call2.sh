#!/usr/bin/env bash
# Session 53, call 2: the 32- and 64-row decode tiles (mma_decode_tma with m / 16 row tiles a
# warp). Bits first (every chunked kernel of both half types and TF32 against the routed one
# and float64), then the tuner's times of the new tiles against the routed kernels at m = 32-256
# over the narrow-deep (n, k), TF32 and bf16 (its routes files are scratch; the JSON is what is
# read), then every candidate of the unchunked contracts against the routed kernel, then the
# bf16 bench of the narrow-deep rows, as far as END seconds reach.
#   COMMIT=<head> END=420 bash call2.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call2; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-420}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
D=bench/results/2026-12-07-session53
timeout $(cap 90) $B/gpu_split_k --ignored --test-threads 1 --nocapture > $R/split_k.log 2>&1; st split_k $? $R/split_k.log
for dt in f32 bf16; do
  if [ $dt = f32 ]; then only=tcdec32.dec32,tcdec32.dec32m32,tcdec32split.dec16s4,tcdec32split.dec16s8,tcdec32split.dec32s4,tcdec32split.dec16s4m32,tcdec32split.dec16s8m32,tcdec32split.dec32s4m32,tcdec32split.dec16s4m64
  else only=tcdecsplit.dec64s4,tcdecsplit.dec64s8,tcdecsplit.dec64s4m32,tcdecsplit.dec64s8m32,tcdecsplit.dec64s4m64; fi
  TL=$(( $(cap 80) - 20 )); [ $TL -lt 5 ] && TL=5
  timeout $(cap 80) $B/gemm-aot-tune --tier sm90a --dtype $dt --op nn --shapes $D/narrow-deep-shapes.toml --buckets 32,64,128,256 --confirm 0 --reps 10 --time-limit $TL \
    --only $only --out $R/scratch-$dt.tuned.toml --json $R/tune-$dt.json > $R/tune-$dt.log 2>&1; st tune_$dt $? $R/tune-$dt.log
done
timeout $(cap 90) $B/gpu_tensor_core --ignored --test-threads 1 --nocapture every_candidate > $R/tensor_core_candidates.log 2>&1; st tensor_core_candidates $? $R/tensor_core_candidates.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --dtype bf16 --shapes bench/shapes/models.toml --filter narrow-deep --reps 10 --commit $C --out $R/bf16nd > $R/bench_bf16_nd.log 2>&1; st bench_bf16_nd $? $R/bench_bf16_nd.log
xz -9 $R/tune-*.json 2>/dev/null
cat $S
cd $OUT && tar cJf call2.tar.xz call2 && rm -rf call2
