bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
cd runtime
echo "== gpu_split_k tf32"
timeout 150 ../.devx/bin/gpu_split_k --ignored --exact chunked_kernels_agree_bitwise_nn_tf32 chunked_kernels_agree_bitwise_nt_tf32 --nocapture --test-threads 1 2>&1 | grep -E "equal bits|differ from|skipped|panicked|does not route|test result" | cut -c1-400
echo "== gpu_tensor_core tf32 candidates"
timeout 100 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_nn_tf32 tc_every_candidate_gives_the_routed_bits_nt_tf32 --nocapture --test-threads 1 2>&1 | grep -E "candidates give|skipped|panicked|test result" | cut -c1-300
cd ..
echo "== tune narrow-deep"
timeout 200 .devx/bin/gemm-aot-tune --tier sm90a --shapes bench/shapes/tf32-narrow-tune.toml --op nn --dtype f32 --policy tensor-core --out $OUT/tf32-narrow.tuned.toml --json $OUT/tf32-narrow-tune.json --time-limit 150 2>&1 | grep -v "^\[" | tail -40
