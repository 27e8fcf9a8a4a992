#!/usr/bin/env bash
# Session 59, call 1: the exact policy's decode tiles after the fmadecs template's leaner slices
# (a whole aligned slice issued without per-piece checks, A read four k at a time), with five new
# fmadecs candidates (dec4s3, dec4k8, dec4k8s3, dec8, dec8k16) beside the routed dec4 and dec16:
# and five fmadecsplit candidates (the new kind: a column strip's K chunks shared by a cluster
# along z, for narrow n): (1) bits: gpu_exact (every exact kernel against the CPU model first,
# then the routed sweeps);
# (2) the tuner's times over the model list's (n, k) at m = 1, 4, 8, 16 (a scratch routes file;
# the JSON is what is read); (3) the exact bench: the default rows, then the model list at
# m = 1, 8, 16 against pedantic SGEMM. (4) TIMING=1: the timing suite's perturbed and sanitized
# steps (fmadecs's cases, and fmaw's 16 x 8 tile as its own code path: 1030 x 4100 x 603 f32 NN).
# Before the bench, the tuner's times of fmaw.w256k8t16 (16 x 8 a thread) against the routed
# exact kernels in NT, TN and NN at Llama-3 8B's (n, k), m = 1024 and 4096 (exact-large-shapes.toml).
#   bash bench/pack-subset.sh gemm-aot-tune gemm-aot-bench gpu_perturbed gpu_sanitized gpu_exact
#   COMMIT=<head> END=560 bash bench/results/2026-12-07-session59/call1.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-560}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
D=bench/results/2026-12-07-session59
(cd runtime && timeout $(cap 70) $B/gpu_exact --include-ignored --test-threads=1 --nocapture every_exact_kernel) > $R/gpu_exact_every.log 2>&1; st gpu_exact_every $? $R/gpu_exact_every.log
(cd runtime && timeout $(cap 120) $B/gpu_exact --include-ignored --test-threads=1 --nocapture --skip every_exact_kernel) > $R/gpu_exact.log 2>&1; st gpu_exact $? $R/gpu_exact.log
TL=$(( $(cap 110) - 15 )); [ $TL -lt 5 ] && TL=5
timeout $(cap 110) $B/gemm-aot-tune --tier sm90a --policy exact --dtype f32 --op nn --shapes $D/decode-shapes.toml --buckets 1,4,8,16 --confirm 0 --reps 10 --time-limit $TL \
  --only fmadecs.dec4,fmadecs.dec16,fmadecs.dec4s3,fmadecs.dec4k8,fmadecs.dec4k8s3,fmadecs.dec8,fmadecs.dec8k16,fmadecsplit.dec4c4,fmadecsplit.dec4c2,fmadecsplit.dec4c8,fmadecsplit.dec16c4,fmadecsplit.dec8c4 \
  --out $R/scratch-exact.tuned.toml --json $R/tune-exact.json > $R/tune-exact.log 2>&1; st tune_exact $? $R/tune-exact.log
timeout $(cap 60) $B/gemm-aot-tune --tier sm90a --policy exact --dtype f32 --op nt,tn,nn --shapes $D/exact-large-shapes.toml --buckets 1024 --confirm 0 --reps 5 --time-limit 40 \
  --only fmaw.w256k8t16,fmaw.w128 --out $R/scratch-exact-large.tuned.toml --json $R/tune-exact-large.json > $R/tune-exact-large.log 2>&1; st tune_exact_large $? $R/tune-exact-large.log
timeout $(cap 45) $B/gemm-aot-bench --policy exact --commit $C --out $R/exact > $R/bench_exact.log 2>&1; st bench_exact $? $R/bench_exact.log
timeout $(cap 70) $B/gemm-aot-bench --policy exact --shapes bench/shapes/models.toml --m 1,8,16 --commit $C --out $R/models_decode > $R/bench_exact_decode.log 2>&1; st bench_exact_decode $? $R/bench_exact_decode.log
if [ "${TIMING:-0}" = 1 ]; then
T=$(cap 260)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261211 SAN_TIMEOUT=170 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
rm -f $R/timing/racecheck_probe
fi
xz -9 $R/*.json $R/*/*.json 2>/dev/null
cat $S
cd $OUT && tar cJf call1.tar.xz call1 && rm -rf call1
