bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd runtime
echo "== gpu_split_k (all)"
timeout 200 ../.devx/bin/gpu_split_k --ignored --test-threads 1 --nocapture 2>&1 | grep -E "equal bits|differ from|skipped|panicked|does not route|^test |test result" | cut -c1-600
echo "== gpu_tensor_core (all)"
timeout 200 ../.devx/bin/gpu_tensor_core --ignored --test-threads 1 --nocapture 2>&1 | grep -E "candidates give|panicked|^test |test result" | cut -c1-300
echo "== memcheck: tf32 candidates (13 x 1000 x 50000 on the K splits)"
timeout 200 compute-sanitizer --tool memcheck --print-limit 5 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_nn_tf32 tc_every_candidate_gives_the_routed_bits_nt_tf32 --test-threads 1 2>&1 | grep -E "ERROR SUMMARY|test result|panicked"
echo "== gpu_invariance (tf32, twenty runs)"
timeout 150 ../.devx/bin/gpu_invariance --ignored --exact tc_tf32_rows_follow_the_batch tc_twenty_runs_give_identical_bits --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
cd ..
echo "== bench: the issue's TF32 rows"
timeout 100 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --reps 20 --commit $1 --out $OUT/rows 2>&1 | grep -v "^  warning"
echo "== bench: the shape list, TF32"
timeout 200 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --shapes bench/shapes/models.toml --reps 10 --commit $1 --out $OUT/shapes 2>&1 | grep -v "^  warning" | tail -5
