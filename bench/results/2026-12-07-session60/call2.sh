#!/usr/bin/env bash
# Session 60, call 2: gpu_exact's routed sweeps and TF32 bound test after the f64 bound's fix for
# results in f16's subnormal range (call 1's one failure).
#   bash bench/pack-subset.sh gpu_exact
#   bash bench/results/2026-12-07-session60/call2.sh      (carry [".devx"])
set -u
bash .devx/unpack
R=$OUT/call2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
(cd runtime && timeout 150 ../.devx/bin/gpu_exact --include-ignored --test-threads=1 --nocapture f32_to_f32_all_ops bf16_to_bf16_nn_nt f16_to_f16_nn_nt bf16_to_f32_all_ops f16_to_f32_all_ops tc_bound_tf32_nn_nt_tn) > $R/gpu_exact.log 2>&1
echo "gpu_exact rc=$? $(grep 'test result' $R/gpu_exact.log)" | tee $R/summary.txt
