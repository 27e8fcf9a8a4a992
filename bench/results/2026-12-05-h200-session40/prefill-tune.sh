# One device call: every tensor-core candidate's bits against the routed kernel's (NN, NT bf16;
# tcwide.widec2 is new), NT and TN at m = 1024 and 4096 over the routes retuned in session 39
# (the ratio after that tune), then `gemm-aot tune --op nt --from-m 2049` on Llama-3 8B's layers
# up to a prefill's m (bench/shapes/prefill-nt.toml, m = 32768), rewriting the tier's routes file
# in place. Carried: .devx (bash bench/pack-subset.sh gemm-aot-tune gemm-aot-bench gpu_tensor_core).
set -u
bash .devx/unpack
B=.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 150 $B/gpu_tensor_core --ignored --test-threads 1 tc_every_candidate_gives_the_routed_bits_nn_bf16 tc_every_candidate_gives_the_routed_bits_nt_bf16 > $OUT/candidates.log 2>&1
echo "candidates rc=$?"; grep -E "test result|panicked|differs" $OUT/candidates.log; grep -c widec2 $OUT/candidates.log
echo "candidates $(( $(date +%s) - t0 )) s"
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
for op in nt tn; do
  timeout 70 $B/gemm-aot-bench --policy tensor-core --op $op --m 1024,4096 --dtype bf16 --commit "${COMMIT:?set COMMIT to the commit the pack was built from}" $NK --out $OUT/$op-after > $OUT/bench_${op}_after.log 2>&1
  echo "bench_${op}_after rc=$?"; tail -2 $OUT/bench_${op}_after.log
done
t0=$(date +%s)
timeout 200 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/prefill-nt.toml --op nt --from-m 2049 --reps 8 --time-limit 150 \
  --out specs/sm90a.tuned.toml --json $OUT/tune_prefill_nt.json > $OUT/tune_prefill_nt.log 2>&1
rc=$?
cp specs/sm90a.tuned.toml $OUT/
echo "tune_prefill_nt rc=$rc $(( $(date +%s) - t0 )) s"; grep chosen $OUT/tune_prefill_nt.log; tail -2 $OUT/tune_prefill_nt.log
