# One device call for the next session, over the shipped routes (this session's four tunes, all
# timed on H100s): NN over bench/shapes/models.toml (550 rows), NT and TN at m = 1024 and 4096
# over the model list's 50 (n, k), the holdout list, the invariance tax (front.py, 6 rounds, a
# wheel of these routes), then `gemm-aot tune --op tn --from-m 513` with the 192 x 192 tiles
# among the candidates (TN into f32 was 0.927 on an H100), rewriting the routes file in place;
# 580 s if every step ran to its cap (about 420 s expected: session 42 took 5, 25, 25, 5 and
# 139 s for the like steps). On the H200 if it comes: the README's tables are the H200's.
# Carried: .devx (bash bench/pack-subset.sh gemm-aot-bench gemm-aot-tune gpu_perturbed wheel).
# First the timing-perturbed candidates test, which since this session also runs NT bf16 at a
# shape with more tiles than SMs (the new tiles' NT kernels ran under perturbation only at a
# small one): pack gpu_perturbed too. If it fails, the NT routes of the tile it names go.
set -u
bash .devx/unpack
B=$PWD/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
C="${COMMIT:?set COMMIT to the commit the pack was built from}"
timeout 40 $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $OUT/perturbed.log 2>&1
echo "perturbed rc=$?"; grep -E "test result|panicked|differ" $OUT/perturbed.log | head
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
t0=$(date +%s)
timeout 90 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $OUT/nn > $OUT/bench_nn.log 2>&1
echo "bench_nn rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/bench_nn.log | head -1
for op in nt tn; do
  timeout 50 $B/gemm-aot-bench --policy tensor-core --op $op --m 1024,4096 --dtype bf16 --commit $C $NK --out $OUT/$op > $OUT/bench_$op.log 2>&1
  echo "bench_$op rc=$?"; tail -2 $OUT/bench_$op.log | head -1
done
timeout 30 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --commit $C --out $OUT/holdout > $OUT/bench_holdout.log 2>&1
echo "bench_holdout rc=$?"; tail -3 $OUT/bench_holdout.log | head -1
t0=$(date +%s)
timeout 170 bash bench/python/front-tax.sh $OUT/python_front.json 6
echo "front.py $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 150 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op tn --from-m 513 --reps 8 --time-limit 120 \
  --out specs/sm90a.tuned.toml --json $OUT/tune_tn.json > $OUT/tune_tn.log 2>&1
echo "tune_tn rc=$? $(( $(date +%s) - t0 )) s"; grep -c chosen $OUT/tune_tn.log; tail -1 $OUT/tune_tn.log
cp specs/sm90a.tuned.toml $OUT/
