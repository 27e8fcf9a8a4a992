# The planned last run of this step (never ran). Expects .devx/bins.tar.xz holding the stripped
# release executables gpu_tensor_core, gpu_invariance and gemm-aot-bench, and .devx/unpack
# (mkdir -p .devx/bin && tar xJf .devx/bins.tar.xz -C .devx/bin). Usage: bash next-run.sh <commit>
bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd runtime
echo "== gpu_tensor_core (tf32 candidates: tn, nn, nt)"
timeout 40 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_tf32 tc_every_candidate_gives_the_routed_bits_nn_tf32 tc_every_candidate_gives_the_routed_bits_nt_tf32 --nocapture --test-threads 1 2>&1 | grep -E "candidates give|skipped|panicked|test result" | cut -c1-330
[ ${PIPESTATUS[0]} = 124 ] && { echo HANG; exit 1; }
echo "== memcheck (tn tf32 candidates)"
timeout 40 compute-sanitizer --tool memcheck --print-limit 5 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_tf32 --test-threads 1 2>&1 | grep -E "ERROR SUMMARY|test result|panicked"
echo "== gpu_invariance tc_tf32_rows_follow_the_batch"
timeout 90 ../.devx/bin/gpu_invariance --ignored --exact tc_tf32_rows_follow_the_batch --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
cd ..
echo "== bench: the issue's TF32 rows"
timeout 50 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --reps 10 --commit $1 --out $OUT/rows 2>&1 | grep -v "^  warning"
echo "== bench: TN rows"
timeout 40 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --op tn --m 512,1024,4096 --nk 4096x4096,14336x4096,4096x14336,1024x4096,2304x768 --reps 10 --commit $1 --out $OUT/tn 2>&1 | grep -v "^  warning"
