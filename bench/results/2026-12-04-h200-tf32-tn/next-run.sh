# The planned next run of this step. Expects .devx/bins.tar.xz and .devx/unpack from
# bench/pack-subset.sh, packed for the call (a call carries 64 MiB at most): for `bits`,
# bash bench/pack-subset.sh gpu_tensor_core gpu_repack gpu_invariance gpu_graph gpu_serving gpu_rows;
# for `times`, bash bench/pack-subset.sh gemm-aot-tune gemm-aot-bench.
# Usage, three device calls (each under 10 minutes): bash next-run.sh <commit> bits; then
# bash next-run.sh <commit> times; then bash next-run.sh <commit> fronts (after
# python/pack-device.sh put .device/fronts.tar.xz here: the Python tests, the native
# dispatch's among them, the real client through both dispatch paths, and the front's bench).
# First the bits of the TN candidates, tcwide32tncopy's (A transposed into scratch, then the NN
# kernel) among them; the exact kernels' copies of odd operands (their vector path); then the
# tuner's times of every TN candidate at the six (n, k); then the one-process bench.
step=${2:-bits}
if [ "$step" = fronts ]; then
  OUT=$OUT bash bench/gpu-run.sh "$1" fronts
  cat "$OUT/fronts.log" | grep -E "rc=|^Ran|^OK|^FAILED|ERROR|FAIL:|dispatch|tax|us_per_call" | head -60
  exit 0
fi
bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "$step" = bits ]; then
cd runtime
echo "== gpu_tensor_core (tf32 candidates: tn, nn, nt)"
timeout 60 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_tf32 tc_every_candidate_gives_the_routed_bits_nn_tf32 tc_every_candidate_gives_the_routed_bits_nt_tf32 --nocapture --test-threads 1 2>&1 | grep -E "candidates give|skipped|panicked|test result" | cut -c1-400
[ ${PIPESTATUS[0]} = 124 ] && { echo HANG; exit 1; }
echo "== gpu_repack (the transposed copy of A; the exact kernels' aligned copies; all of it)"
timeout 60 ../.devx/bin/gpu_repack --ignored --nocapture --test-threads 1 2>&1 | grep -E "routed bits|give the bits|vector path|skipped|panicked|test result|^test "
[ ${PIPESTATUS[0]} = 124 ] && { echo HANG; exit 1; }
echo "== gpu_graph, gpu_serving (one launch a GEMM with the repack off)"
timeout 60 ../.devx/bin/gpu_graph --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
timeout 60 ../.devx/bin/gpu_serving --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
echo "== memcheck (tn tf32 candidates)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 5 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_tf32 --test-threads 1 2>&1 | grep -E "ERROR SUMMARY|test result|panicked"
echo "== gpu_rows (row kernels: a warp a row up to 1024 columns, a block a row beyond)"
timeout 60 ../.devx/bin/gpu_rows --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
echo "== memcheck and racecheck gpu_rows (the tests compare bits within the run: paths, rows alone)"
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 ../.devx/bin/gpu_rows --ignored --test-threads 1 --skip fills_the_gpu 2>&1 | grep -E "ERROR SUMMARY|test result|panicked"
timeout 120 compute-sanitizer --tool racecheck --print-limit 5 ../.devx/bin/gpu_rows --ignored --test-threads 1 --exact the_warp_path_and_the_block_path_give_the_same_bits 2>&1 | grep -E "ERROR SUMMARY|test result|panicked"
echo "== gpu_invariance tc_tf32_rows_follow_the_batch"
timeout 90 ../.devx/bin/gpu_invariance --ignored --exact tc_tf32_rows_follow_the_batch --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
cd ..
fi
if [ "$step" = times ]; then
echo "== tune tn (every candidate, tcwide32tncopy's included)"
timeout 170 .devx/bin/gemm-aot-tune --tier sm90a --shapes bench/shapes/tf32-tune.toml --op tn --dtype f32 --policy tensor-core --buckets 256,512,1024,2048 --out $OUT/tn.tuned.toml --json $OUT/tn-tune.json --time-limit 150 2>&1 | tail -30
echo "== bench: TN rows"
timeout 40 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --op tn --m 512,1024,4096 --nk 4096x4096,14336x4096,4096x14336,1024x4096,2304x768 --reps 10 --commit $1 --out $OUT/tn 2>&1 | grep -v "^  warning"
echo "== bench: the exact odd rows (the copies per call included)"
timeout 60 .devx/bin/gemm-aot-bench --policy exact --dtype f32 --shapes bench/shapes/models.toml --filter odd --m 1,16,64,1024 --reps 10 --commit $1 --out $OUT/exact-odd 2>&1 | grep -v "^  warning"
fi
