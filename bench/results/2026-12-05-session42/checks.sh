# One device call: the bits of every tensor-core candidate (tcwide.widec2, sq192, sq192c2 never
# checked under perturbation) against the routed kernels, under timing perturbation and plain
# (NN, NT bf16; TN bf16 into f32 with beta = 1), then compute-sanitizer's memcheck and racecheck
# on the sq192 and widec2 launches of the TN test (beta = 1: the C-load path), only those
# kernels instrumented. If a candidate differs, nothing may route it.
# Carried: .devx (bash bench/pack-subset.sh gpu_tensor_core gpu_perturbed).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
compute-sanitizer --version | tail -1
t0=$(date +%s)
timeout 200 $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $OUT/perturbed.log 2>&1
echo "perturbed rc=$? $(( $(date +%s) - t0 )) s"; grep -E "test result|panicked|differ" $OUT/perturbed.log | head; grep -c "sq192\|widec2" $OUT/perturbed.log
t0=$(date +%s)
timeout 150 $B/gpu_tensor_core --ignored --test-threads 1 --nocapture tc_every_candidate_gives_the_routed_bits_nn_bf16 \
  tc_every_candidate_gives_the_routed_bits_nt_bf16 tc_every_candidate_gives_the_routed_bits_tn_f32 > $OUT/candidates.log 2>&1
echo "candidates rc=$? $(( $(date +%s) - t0 )) s"; grep -E "test result|panicked|differs" $OUT/candidates.log; grep -c sq192 $OUT/candidates.log
for tool in memcheck racecheck; do
  for tile in _sq192_ _widec2_; do
    t0=$(date +%s)
    timeout 80 compute-sanitizer --tool $tool --print-limit 5 --kernel-name kns=$tile \
      $B/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_f32 --test-threads 1 \
      > $OUT/sanitizer-$tool$tile.log 2>&1
    echo "$tool $tile rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result|panicked|rror" $OUT/sanitizer-$tool$tile.log | head -4
  done
done
