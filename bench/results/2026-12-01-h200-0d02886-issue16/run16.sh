#!/usr/bin/env bash
# Issue 16's GPU checks, in two parts: `a` (runtime suites, downstream, examples, launch overhead),
# `b` (invariance subset, tests/timing). Logs under $OUT/logs, packed into $OUT/logs.tgz.
set -u
root=$(pwd)
part=${1:-a}
L=$OUT/logs; mkdir -p "$L"
t0=$(date +%s)
bash .device/unpack
b() { ls "$root"/.device/bin/$1-* 2>/dev/null | head -1; }
sum=$L/summary_$part.txt
echo "# part $part: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) unpack $(( $(date +%s) - t0 )) s" > $sum
run() { # name dir timeout exe args...
  local name=$1 dir=$2 to=$3 exe=$4; shift 4
  local s=$(date +%s)
  (cd "$root/$dir" && timeout $to "$exe" --include-ignored --test-threads=1 --nocapture "$@") > "$L/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - s ))s $(grep -E '^test result' "$L/$name.log" | tail -1)" >> $sum
}
export GEMM_TEST_SEED=${GEMM_TEST_SEED:-20261201}
if [ $part = a ]; then
  run gpu_exact runtime 200 "$(b gpu_exact)"
  run gpu_tensor_core runtime 60 "$(b gpu_tensor_core)"
  run gpu_validation runtime 60 "$(b gpu_validation)"
  run gpu_graph runtime 60 "$(b gpu_graph)"
  run gpu_serving runtime 90 "$(b gpu_serving)"
  run generated_tables runtime 60 "$(b generated_tables)"
  run downstream_kernel_set examples/downstream 60 "$(b kernel_set)"
  run downstream_gpu examples/downstream 60 "$(b gpu)"
  (timeout 60 .device/bin/gemm-downstream-example) > $L/downstream_example.log 2>&1; echo "downstream example rc=$? $(tail -1 $L/downstream_example.log)" >> $sum
  (timeout 60 .device/bin/gemm-mlp-example) > $L/mlp_example.log 2>&1; echo "mlp example rc=$? $(tail -1 $L/mlp_example.log)" >> $sum
  run gpu_portable runtime 90 "$(b gpu_portable)"
  (timeout 60 .device/bin/gemm-aot-bench --commit "${COMMIT:-?}" --launch-overhead --out $L) > $L/launch_overhead.log 2>&1; echo "launch overhead rc=$? $(grep -E 'NoObserver|Recorder|bare' $L/launch_overhead.log | tr -s ' ' | tr '\n' ';')" >> $sum
else
  run gpu_invariance_tc runtime 150 "$(b gpu_invariance)" tc_
  run gpu_invariance_exact runtime 150 "$(b gpu_invariance)" twenty_runs_give_identical_bits tn_matches_its_contract_for_every_batch
  (STEPS="perturbed stress sanitized" OUT=$L/timing DEVICE_DIR=.device timeout 330 bash tests/timing/run.sh) > $L/timing_run.log 2>&1; echo "tests/timing rc=$?" >> $sum; tail -12 $L/timing_run.log >> $sum
fi
echo "# total $(( $(date +%s) - t0 )) s" >> $sum
cat $sum
tar czf $OUT/logs_$part.tgz -C $OUT logs
