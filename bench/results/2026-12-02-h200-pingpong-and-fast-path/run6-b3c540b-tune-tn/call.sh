#!/bin/bash
# Device call 5 at b3c540b: gemm-aot tune --op tn (the ping-pong tiles among the candidates), 8
# timed launches a measurement (the device time left allows no more).
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d5/unpack; B=.device/d5/bin
cp specs/sm90a.tuned.toml $R/sm90a.tuned.before.toml
timeout 245 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op tn --reps 8 --out specs/sm90a.tuned.toml --json $R/tune_tn.json > $R/tune_tn.log 2>&1; st tune_tn $?
cp specs/sm90a.tuned.toml $R/sm90a.tuned.after_tn.toml
cat $S
