#!/usr/bin/env bash
# The next GPU call for the exchange with asynchronous stores (`tcwidechunk.mid2xa2` and
# `mid2xa4`, exchange = 2), built in session 47 without a device (no device time was left).
# In order: their bits (gpu_tensor_core's every-candidate tests: every kernel of the routed
# one's contract, 9, 16 and 98 chunks, NN / NT / TN; gpu_perturbed's candidates under timing
# perturbation), gpu_split_k; only if those pass, the tune over the chunked (n, k) at m >= 513
# that may route them (rewrites specs/sm90a.tuned.toml in place; --only: the exchanges and the
# unsplit tiles), and each exchange's time over the fastest unsplit tile's (session 45's
# splits_vs_best.py); then compute-sanitizer over the every-candidate NN test with only the
# exchanges instrumented: memcheck for the new ones, racecheck and synccheck for them and for
# mid2x2 (never run). Everything in one archive, $OUT/call1.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-tune gpu_tensor_core gpu_perturbed gpu_split_k;
# COMMIT=<packed>; run with carry [".devx"], under a 560 s timeout (a hang must not eat the call).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
D=bench/results/2026-12-06-session45
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-500}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout $(cap 120) $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/gpu_tensor_core.log 2>&1; rc1=$?; st gpu_tensor_core $rc1 $R/gpu_tensor_core.log
grep -E "mid2xa" $R/gpu_tensor_core.log | head -6 | cut -c1-200 | tee -a $S
timeout $(cap 90) $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $R/gpu_perturbed.log 2>&1; rc2=$?; st gpu_perturbed $rc2 $R/gpu_perturbed.log
(cd runtime && timeout $(cap 60) $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; rc3=$?; st gpu_split_k $rc3 $R/gpu_split_k.log
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]; then
  l=$(cap 130)
  # Only the exchanges and the unsplit tiles splits_vs_best.py compares them with, besides the
  # routed kernels (--only): a fraction of a full run's timings.
  timeout $(( l + 60 )) $B/gemm-aot-tune --tier sm90a --shapes $D/chunked.toml --op nn,nt,tn --from-m 513 --reps 8 \
    --only mid2xa2,mid2xa4,mid2x2,mid64,mid,mid2,mid2n192,mid2ov \
    --time-limit $l --out specs/sm90a.tuned.toml --json $R/tune_chunked.json > $R/tune_chunked.log 2>&1
  echo "tune_chunked rc=$? $(( $(date +%s) - t0 )) s, chosen $(grep -c chosen $R/tune_chunked.log)" | tee -a $S
  python3 $D/splits_vs_best.py $R/tune_chunked.json mid2xa2,mid2xa4,mid2x2 2>&1 | tee -a $S
  cp specs/sm90a.tuned.toml $R/
else
  echo "a candidate's bits differ or a split test failed: no tune" | tee -a $S
fi
san() {  # tool kernel-name-filter
  (cd runtime && timeout $(cap 60) compute-sanitizer --tool $1 --kernel-name kns=$2 --report-api-errors no --error-exitcode 9 \
    $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nn_bf16) > $R/$1_$2.log 2>&1
  st $1_$2 $? $R/$1_$2.log
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/$1_$2.log | tail -1 | tee -a $S
}
san memcheck mid2xa
for k in mid2xa mid2x2; do san racecheck $k; san synccheck $k; done
tar cJf $OUT/call1.tar.xz -C $OUT call1
cat $S
