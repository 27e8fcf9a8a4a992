# One device call over the routes of tune-mid-m.sh: NT at m = 1024 and 4096 over the model
# list's 50 (n, k), NT over Llama-3 8B's layers at m = 4096 and 32768, and the holdout list
# (bench/shapes/holdout.toml: models never tuned for, NN, m = 1-4096).
# Carried: .devx (bash bench/pack-subset.sh gemm-aot-bench).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
t0=$(date +%s)
timeout 110 $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit "${COMMIT:?set COMMIT}" $NK --out $OUT/nt-final > $OUT/bench_nt_final.log 2>&1
echo "bench_nt_final rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/bench_nt_final.log
timeout 90 $B/gemm-aot-bench --policy tensor-core --op nt --m 4096,32768 --dtype bf16 --reps 10 --commit "$COMMIT" \
  --nk 14336x4096,4096x14336,128256x4096,4096x4096,1024x4096 --out $OUT/nt-prefill > $OUT/bench_nt_prefill.log 2>&1
echo "bench_nt_prefill rc=$?"; tail -2 $OUT/bench_nt_prefill.log
t0=$(date +%s)
timeout 150 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --commit "$COMMIT" --out $OUT/holdout > $OUT/bench_holdout.log 2>&1
echo "bench_holdout rc=$? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/bench_holdout.log
