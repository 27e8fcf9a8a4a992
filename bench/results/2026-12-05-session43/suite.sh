#!/usr/bin/env bash
# Device call (session 43): the tensor-core suites over the shipped routes after the TN tune
# (8908bcd: the 192 x 192 tiles now routed in NN, NT and TN): gpu_tensor_core (every candidate's
# bits), the TN bench at m = 1024 and 4096 over the model list's 50 (n, k) after the tune, NN over
# the model list again on an H200 (the first call's JSON and plot did not come back), the full
# gpu_invariance sweep (last run at 6a4bb7d, before these tiles), then compute-sanitizer
# memcheck with only the sq192c2 kernels instrumented (not run under it before). Since d435293
# also the NT candidate tcwident.mid2n144 (128 x 144, C stored directly), never run yet: the
# every-candidate tests plain (gpu_tensor_core, first) and under timing perturbation
# (gpu_perturbed), and memcheck of its kernels; if any of these fails, it must not be routed.
# Pack: bash bench/pack-subset.sh gemm-aot-bench gpu_tensor_core gpu_invariance gpu_perturbed;
# COMMIT=<packed>;
# run with carry [".devx"] (git-ignored, so it travels only when carried).
# Everything lands in one archive, $OUT/suite.tar.xz (a call returns at most 8 files).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/suite; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result|targets met|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
left() { v=$(( $1 - ($(date +%s) - t0) )); [ $v -lt 5 ] && v=5; echo $v; }
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
(cd runtime && timeout 60 $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture) > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $? $R/gpu_tensor_core.log
grep -E "mid2n144" $R/gpu_tensor_core.log | head -5 | tee -a $S
timeout 40 $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $R/gpu_perturbed.log 2>&1; st gpu_perturbed $? $R/gpu_perturbed.log
grep -E "mid2n144" $R/gpu_perturbed.log | head -3 | tee -a $S
timeout 50 $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
if grep -q H200 $R/card.txt; then
  timeout 80 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
else
  echo "bench_nn skipped: not an H200 (the README's table is the H200's)" | tee -a $S
fi
(cd runtime && timeout $(left 430) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
(cd runtime && timeout $(left 470) compute-sanitizer --tool memcheck --kernel-name kns=_sq192c2_ --report-api-errors no --error-exitcode 9 \
  $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/memcheck_sq192c2.log 2>&1; st memcheck_sq192c2 $? $R/memcheck_sq192c2.log
grep -E "ERROR SUMMARY" $R/memcheck_sq192c2.log | tail -1 | tee -a $S
(cd runtime && timeout $(left 500) compute-sanitizer --tool memcheck --kernel-name kns=_mid2n144_ --report-api-errors no --error-exitcode 9 \
  $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nt) > $R/memcheck_mid2n144.log 2>&1; st memcheck_mid2n144 $? $R/memcheck_mid2n144.log
grep -E "ERROR SUMMARY" $R/memcheck_mid2n144.log | tail -1 | tee -a $S
tar cJf $OUT/suite.tar.xz -C $OUT suite
cat $S
