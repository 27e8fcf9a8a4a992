# One device call: `gemm-aot tune --op nn --from-m 513` over bench/shapes/models.toml, so that
# tcwide.sq192 and sq192c2 compete with the routed NN kernels at m = 1024-4096 (the holdout list
# at m = 1024 ran mid2 at 0.80-0.96 of cuBLAS); rewrites the tier's routes file in place.
# Carried: .devx (bash bench/pack-subset.sh gemm-aot-tune).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 300 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op nn --from-m 513 \
  --reps 8 --time-limit 220 --out specs/sm90a.tuned.toml --json $OUT/tune_nn.json > $OUT/tune_nn.log 2>&1
echo "tune_nn rc=$? $(( $(date +%s) - t0 )) s"; grep chosen $OUT/tune_nn.log; grep -c "^\[" $OUT/tune_nn.log; tail -1 $OUT/tune_nn.log
cp specs/sm90a.tuned.toml $OUT/
