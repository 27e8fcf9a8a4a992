#!/usr/bin/env bash
# Session 58, call 1 (written in session 57): the chunk-group row tiles (mma_decode_tma chunk_groups: tcdecsplit.dec64cm32g2
# and dec64cm64g2, TF32 tcdec32split.dec32cm32g2 and dec32cm32g4). Bits first (gpu_split_k: every
# chunked kernel against the routed one and float64), then the tuner's times of the new tiles
# against the routed kernels and the other narrow-deep tiles at m = 32-1024 over the narrow-deep
# (n, k), TF32 then bf16 (scratch routes files; the JSON is what is read), then (PERTURBED=1)
# the perturbed build's candidate test (every candidate of each contract, the new tiles among them, under seeded
# delays against the plain routed bits).
#   bash bench/pack-subset.sh gemm-aot-tune gpu_split_k gpu_perturbed
#   COMMIT=<head> END=300 bash bench/results/2026-12-07-session58/call1.sh      (carry [".devx"])
# FMA=1 first runs bench/experiments/fma_exact.sh (session 58's fmawa tiles against fmaw and pedantic
# SGEMM; build it here first, carry .fmabuild/fma_exact and .fmabuild/ptxas.txt too).
# SPLIT_FILTER=<name part> runs only those gpu_split_k tests (the device time this session had left).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-380}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
D=bench/results/2026-12-07-session57
if [ "${FMA:-0}" = 1 ]; then
  (OUT=$R REPS=15 timeout $(cap 120) bash bench/experiments/fma_exact.sh run) > $R/fma_exact.out 2>&1; st fma_exact $? $R/fma_exact.out
fi
timeout $(cap 100) $B/gpu_split_k --ignored --test-threads 1 --nocapture ${SPLIT_FILTER:-} > $R/split_k.log 2>&1; st split_k $? $R/split_k.log
for dt in f32 bf16; do
  if [ $dt = f32 ]; then only=tcdec32split.dec32cm32,tcdec32split.dec32cm32g2,tcdec32split.dec32cm32g4,tcdec32split.dec16s4m64,tcwide32chunk.small,tcwide32chunk.small2,tcwide32chunk.small4,tcwide32chunk.narrow
  else only=tcdecsplit.dec64cm32,tcdecsplit.dec64cm32g2,tcdecsplit.dec64cm64g2,tcdecsplit.dec64s8m32,tcwidechunk.mid64,tcwidechunk.mid64s4dnf,tcwidechunk.mid64s2nf,tcwidechunk.mid2s4nf; fi
  TL=$(( $(cap 100) - 20 )); [ $TL -lt 5 ] && TL=5
  timeout $(cap 100) $B/gemm-aot-tune --tier sm90a --dtype $dt --op nn --shapes $D/narrow-deep-shapes.toml --buckets 32,64,128,256,512,1024 --confirm 0 --reps 10 --time-limit $TL \
    --only $only --out $R/scratch-$dt.tuned.toml --json $R/tune-$dt.json > $R/tune-$dt.log 2>&1; st tune_$dt $? $R/tune-$dt.log
done
if [ "${PERTURBED:-0}" = 1 ]; then
  (cd tests/timing && GEMM_TEST_SEED=20261210 timeout $(cap 100) $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates) > $R/perturbed_candidates.log 2>&1; st perturbed_candidates $? $R/perturbed_candidates.log
fi
xz -9 $R/tune-*.json 2>/dev/null
cat $S
cd $OUT && tar cJf call1.tar.xz call1 && rm -rf call1
