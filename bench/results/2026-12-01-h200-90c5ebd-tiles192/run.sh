#!/usr/bin/env bash
# The 192-column tiles and the retuned routes: repack/tuned-region, tensor-core and tc invariance
# suites, then the shape-list bench.
set -u
root=$(pwd); bash .device/unpack; B=$root/.device/bin
export GEMM_TEST_SEED=${GEMM_TEST_SEED:-20261201}
sum=$OUT/summary.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) commit ${COMMIT:-?}" > $sum
t() { local name=$1 to=$2; shift 2; local s=$(date +%s)
  (cd $root/runtime && timeout $to $B/$name --include-ignored --test-threads=1 --nocapture "$@") > $OUT/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s) - s ))s $(grep -E '^test result' $OUT/$name.log | tail -1)" >> $sum; }
t gpu_repack 150
t gpu_tensor_core 120
t gpu_invariance 200 tc_
s=$(date +%s)
timeout 200 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --m 1,16,64,256,1024,4096 --dtype bf16,f16 --reps 15 --commit ${COMMIT:-wip} --out $OUT > $OUT/bench.log 2>&1
echo "bench rc=$? $(( $(date +%s) - s ))s $(tail -4 $OUT/bench.log | head -2 | tr '\n' ' ')" >> $sum
grep -h "tuned " $OUT/gpu_repack.log | grep bit-equal >> $sum
cat $sum
