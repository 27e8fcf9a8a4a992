#!/bin/bash
# Device call 2 at b2b2fd9: every candidate kernel of a contract (the ping-pong tiles among
# them) against the routed bits; the fronts' raw-path host cost; `gemm-aot tune --op nn`, then
# --op nt in what time is left.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d2/unpack; B=.device/d2/bin
(cd runtime && timeout 150 ../$B/gpu_tensor_core-* --include-ignored --test-threads=1 --nocapture every_candidate) > $R/every_candidate.log 2>&1; rc=$?; st every_candidate $rc
timeout 40 $B/gemm-aot-bench --launch-overhead --commit b2b2fd9 --out $R > $R/launch_overhead.log 2>&1; st launch_overhead $?
if [ $rc != 0 ]; then cat $S; exit 0; fi
cp specs/sm90a.tuned.toml $R/sm90a.tuned.before.toml
timeout 330 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op nn --out specs/sm90a.tuned.toml --json $R/tune_nn.json > $R/tune_nn.log 2>&1; st tune_nn $?
cp specs/sm90a.tuned.toml $R/sm90a.tuned.after_nn.toml
left=$(( 555 - ($(date +%s) - t0) ))
if [ $left -gt 120 ]; then
  timeout $left $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op nt --reps 12 --out specs/sm90a.tuned.toml --json $R/tune_nt.json > $R/tune_nt.log 2>&1; st tune_nt $?
  cp specs/sm90a.tuned.toml $R/sm90a.tuned.after_nt.toml
fi
cat $S
