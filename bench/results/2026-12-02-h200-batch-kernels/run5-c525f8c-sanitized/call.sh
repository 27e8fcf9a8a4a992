#!/bin/bash
# The batch kernels under compute-sanitizer: gpu_raw's strided-batch tests (every entry's bits
# against its own call) under memcheck, synccheck and racecheck.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d10/unpack; B=.device/d10/bin
for tool in memcheck synccheck racecheck; do
  timeout 130 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu_raw --ignored --test-threads=1 --nocapture strided_batch > $R/gpu_raw_$tool.log 2>&1; st "gpu_raw under $tool" $?
done
cat $S
