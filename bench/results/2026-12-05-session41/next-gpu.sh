# One device call for the next session: the new three-consumer tiles (tcwide.sq192, sq192c2)
# checked bit for bit against the routed kernels (NN, NT bf16; TN into f32 with beta 1, the
# C-load path whose third barrier lies past the slack), then NT at m = 1024 and 4096 over the
# model list (the routes of this session), then `gemm-aot tune --op nt --from-m 1025` over
# large-m-nt.toml with the new tiles among the candidates. Rewrites the tier's routes file.
# Carried: .devx (bash bench/pack-subset.sh gemm-aot-tune gemm-aot-bench gpu_tensor_core).
set -u
bash .devx/unpack
B=.devx/bin
D=bench/results/2026-12-05-session41
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 200 $B/gpu_tensor_core --ignored --test-threads 1 --nocapture tc_every_candidate_gives_the_routed_bits_nn_bf16 \
  tc_every_candidate_gives_the_routed_bits_nt_bf16 tc_every_candidate_gives_the_routed_bits_tn_f32 > $OUT/candidates.log 2>&1
echo "candidates rc=$? $(( $(date +%s) - t0 )) s"; grep -E "test result|panicked|differs" $OUT/candidates.log; grep -c sq192 $OUT/candidates.log
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
timeout 120 $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit "${COMMIT:?set COMMIT to the commit the pack was built from}" $NK --out $OUT/nt-after > $OUT/bench_nt_after.log 2>&1
echo "bench_nt_after rc=$?"; tail -2 $OUT/bench_nt_after.log
t0=$(date +%s)
timeout 260 $B/gemm-aot-tune --tier sm90a --shapes $D/large-m-nt.toml --op nt --from-m 1025 --reps 8 --time-limit 200 \
  --out specs/sm90a.tuned.toml --json $OUT/tune_sq192.json > $OUT/tune_sq192.log 2>&1
rc=$?
cp specs/sm90a.tuned.toml $OUT/
echo "tune_sq192 rc=$rc $(( $(date +%s) - t0 )) s"; grep chosen $OUT/tune_sq192.log; tail -2 $OUT/tune_sq192.log
