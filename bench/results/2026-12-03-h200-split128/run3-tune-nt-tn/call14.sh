#!/bin/bash
# Device call 14 (session 2026-12-03c): the tuner over the narrow-deep list for nt and tn at
# m = 64-256, the 128-row splits among the candidates (is mid2s4's nn region also nt's and tn's?).
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d8/unpack; B=.device/d8/bin
for op in nt tn; do
timeout 100 $B/gemm-aot-tune --tier sm90a --shapes .device/deep3.toml --op $op --buckets 64,128,256 --out $R/scratch_$op.toml --json $R/tune_$op.json --time-limit 80 > $R/tune_$op.log 2>&1; st tune_$op $?
done
cat $S
