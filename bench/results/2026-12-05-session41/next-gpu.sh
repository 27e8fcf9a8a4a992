# One device call for the next session: every tensor-core candidate (tcwide.widec2, sq192 and
# sq192c2 new) checked bit for bit against the routed kernels under timing perturbation (at
# shapes with more tiles than SMs, beta = 1: the C-load path, whose third barrier lies past the
# slack with three consumers) and plain (NN, NT bf16; TN into f32), then NT at m = 1024 and 4096 over the
# model list (the routes of this session); about 450 s at most. The tune with the new tiles
# among the candidates is tune-large-m-nt.sh again, a call of its own.
# Carried: .devx (bash bench/pack-subset.sh gemm-aot-bench gpu_tensor_core gpu_perturbed).
# If a candidate differs, stop: nothing may route it.
set -u
bash .devx/unpack
B=.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 200 $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $OUT/perturbed.log 2>&1
echo "perturbed rc=$? $(( $(date +%s) - t0 )) s"; grep -E "test result|panicked|differ" $OUT/perturbed.log | head; grep -c "sq192\|widec2" $OUT/perturbed.log
t0=$(date +%s)
timeout 150 $B/gpu_tensor_core --ignored --test-threads 1 --nocapture tc_every_candidate_gives_the_routed_bits_nn_bf16 \
  tc_every_candidate_gives_the_routed_bits_nt_bf16 tc_every_candidate_gives_the_routed_bits_tn_f32 > $OUT/candidates.log 2>&1
echo "candidates rc=$? $(( $(date +%s) - t0 )) s"; grep -E "test result|panicked|differs" $OUT/candidates.log; grep -c sq192 $OUT/candidates.log
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
timeout 100 $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit "${COMMIT:?set COMMIT to the commit the pack was built from}" $NK --out $OUT/nt-after > $OUT/bench_nt_after.log 2>&1
echo "bench_nt_after rc=$?"; tail -2 $OUT/bench_nt_after.log
