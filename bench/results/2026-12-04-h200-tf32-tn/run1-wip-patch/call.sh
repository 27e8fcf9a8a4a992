bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd runtime
echo "== gpu_tensor_core tn tf32 candidates"
timeout 60 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_tf32 --nocapture --test-threads 1 2>&1 | grep -E "candidates give|skipped|panicked|test result|differ|wrong" | cut -c1-400
rc=${PIPESTATUS[0]}; echo "rc=$rc"
cd ..
echo "== tune tn"
timeout 300 .devx/bin/gemm-aot-tune --tier sm90a --shapes bench/shapes/tf32-tune.toml --op tn --dtype f32 --policy tensor-core --buckets 16,32,64,128,256,512,1024,2048 --out $OUT/tn.tuned.toml --json $OUT/tn-tune.json --time-limit 240 2>&1 | tail -80
