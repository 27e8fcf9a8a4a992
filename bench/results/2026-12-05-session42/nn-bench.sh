# One short device call (what was left of the session's device time): NN over
# bench/shapes/models.toml at m = 1024, 2048 and 4096 (150 rows) on the routes of the NN tune
# (tune-nn.sh), against cuBLAS in one process. Carried: .devx (bash bench/pack-subset.sh gemm-aot-bench).
set -u
bash .devx/unpack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 .devx/bin/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --m 1024,2048,4096 --dtype bf16 --reps 10 \
  --commit "${COMMIT:?set COMMIT}" --out $OUT/nn > $OUT/bench_nn.log 2>&1
echo "bench_nn rc=$?"; tail -3 $OUT/bench_nn.log
