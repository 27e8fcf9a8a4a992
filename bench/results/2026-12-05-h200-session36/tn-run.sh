# TF32 TN on its new routes (tcwide32tncopy at every m): bits, invariance, the repack tests, and
# the bench at the tuned (n, k) and at (n, k) it was not tuned on. Pack first:
#   bash bench/pack-subset.sh gpu_tensor_core gpu_repack gpu_invariance gemm-aot-bench
# Usage (one device call): bash tn-run.sh <commit>
bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd runtime
echo "== gpu_tensor_core (tf32 tn candidates against the routed bits)"
timeout 60 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_tf32 --nocapture --test-threads 1 2>&1 | grep -E "candidates give|skipped|panicked|test result" | cut -c1-200
echo "== gpu_repack"
timeout 60 ../.devx/bin/gpu_repack --ignored --test-threads 1 2>&1 | grep -E "^test |panicked|test result"
echo "== gpu_invariance tc_tf32_rows_follow_the_batch"
timeout 90 ../.devx/bin/gpu_invariance --ignored --exact tc_tf32_rows_follow_the_batch --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
cd ..
echo "== bench: TN TF32 (tuned (n, k), then others)"
timeout 120 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --op tn --m 1,16,256,1024,4096 --nk 4096x4096,14336x4096,4096x14336,1024x4096,2304x768,512x3584,3584x3584,18944x3584,8192x8192,768x3072,3072x3072,5120x5120 --reps 10 --commit $1 --out $OUT/tn 2>&1 | grep -v "^  warning"
