set -x
bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
nvidia-smi --query-gpu=name,driver_version --format=csv
cd runtime
timeout 120 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_nn_tf32 tc_every_candidate_gives_the_routed_bits_nt_tf32 --nocapture --test-threads 1 2>&1 | tail -40
cd ..
timeout 150 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --reps 20 --out $OUT 2>&1 | tail -20
timeout 120 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --op nn --m 1,16,64,128,256,512,1024,2048 --nk 4096x4096,1024x4096 --reps 20 --out $OUT/nn 2>&1 | tail -24
cd runtime
timeout 120 ../.devx/bin/gpu_invariance --ignored --exact tc_tf32_rows_follow_the_batch 2>&1 | tail -8
