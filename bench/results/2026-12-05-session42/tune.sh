# One device call: racecheck on long-routed wgmma tiles (mid2, wide, pp256), to tell whether
# the sanitizer's "failed to handle a hardware exception" of checks.sh is the new tiles' or the
# tool's; then `gemm-aot tune --op nt` with tcwide.sq192 and sq192c2 among the candidates at a
# prefill's m (Llama-3 8B, bench/shapes/prefill-nt.toml, --from-m 2049, the bucket edge at 8192
# of session 40's run) and at m 2048-4096 over the model list's aligned (n, k)
# (../2026-12-05-session41/large-m-nt.toml, --from-m 1025), each rewriting the tier's routes
# file in place. Carried: .devx (bash bench/pack-subset.sh gemm-aot-tune gpu_tensor_core).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for tile in _mid2_m128n128 _wide_m128n256 _pp256_m64n256; do
  t0=$(date +%s)
  timeout 60 compute-sanitizer --tool racecheck --print-limit 5 --kernel-name kns=$tile \
    $B/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_f32 --test-threads 1 \
    > $OUT/racecheck$tile.log 2>&1
  echo "racecheck $tile rc=$? $(( $(date +%s) - t0 )) s"; grep -E "RACECHECK SUMMARY|test result|Internal" $OUT/racecheck$tile.log | head -3
done
t0=$(date +%s)
timeout 220 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/prefill-nt.toml --op nt --from-m 2049 \
  --buckets 16,32,64,128,256,512,1024,2048,8192 --reps 8 --time-limit 150 \
  --out specs/sm90a.tuned.toml --json $OUT/tune_prefill_nt.json > $OUT/tune_prefill_nt.log 2>&1
echo "tune_prefill_nt rc=$? $(( $(date +%s) - t0 )) s"; grep chosen $OUT/tune_prefill_nt.log; tail -1 $OUT/tune_prefill_nt.log
t0=$(date +%s)
timeout 260 $B/gemm-aot-tune --tier sm90a --shapes bench/results/2026-12-05-session41/large-m-nt.toml --op nt --from-m 1025 \
  --reps 8 --time-limit 200 --out specs/sm90a.tuned.toml --json $OUT/tune_large_m_nt.json > $OUT/tune_large_m_nt.log 2>&1
echo "tune_large_m_nt rc=$? $(( $(date +%s) - t0 )) s"; grep chosen $OUT/tune_large_m_nt.log; tail -1 $OUT/tune_large_m_nt.log
cp specs/sm90a.tuned.toml $OUT/
