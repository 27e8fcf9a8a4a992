bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
cd runtime
timeout 60 ../.devx/bin/gpu_tensor_core --ignored --exact zz_debug_tf32_shapes --nocapture 2>&1 | grep -E "wrong|result"
timeout 120 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_nn_tf32 tc_every_candidate_gives_the_routed_bits_nt_tf32 --nocapture --test-threads 1 2>&1 | grep -v "^  " | tail -30
cd ..
timeout 200 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --op nn --m 128,256,512,1024,2048,4096 --nk 4096x4096,1024x4096,14336x4096,4096x14336 --reps 20 --out $OUT/nn 2>&1 | grep -v warning | tail -26
