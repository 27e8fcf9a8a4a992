#!/usr/bin/env bash
# Session 48, the deep-ring candidates of the chunked regions (mid64d, mid64c2d, midd, mid64s2d):
# their bits (every-candidate tests, NN / NT / TN; perturbed), gpu_split_k, then the tune over
# the list's chunked (n, k) at m >= 129 (or 513) with --only those and the kernels they would replace, and
# each new tile's time over its shallower twin's and over the fastest of the rest (pairs.py).
# Pack: bash bench/pack-subset.sh gemm-aot-tune gpu_tensor_core gpu_perturbed gpu_split_k;
# COMMIT=<packed>; carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
H=bench/results/2026-12-06-session48
R=$OUT/call3; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout 150 $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/gpu_tensor_core.log 2>&1; rc1=$?; st gpu_tensor_core $rc1 $R/gpu_tensor_core.log
for t in mid64d mid64c2d midd mid64s2d; do echo "$t: in $(grep -c "_${t}_m" $R/gpu_tensor_core.log) candidate lists" | tee -a $S; done
timeout 90 $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $R/gpu_perturbed.log 2>&1; rc2=$?; st gpu_perturbed $rc2 $R/gpu_perturbed.log
(cd runtime && timeout 60 $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; rc3=$?; st gpu_split_k $rc3 $R/gpu_split_k.log
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]; then
  tune() {  # from-m: below it the routes stay (refused where a route changes kernel inside a bucket)
    timeout 300 $B/gemm-aot-tune --tier sm90a --shapes bench/results/2026-12-06-session45/chunked.toml --op nn,nt,tn --from-m $1 --reps 8 \
      --only mid64d,mid64c2d,midd,mid64s2d,mid64,mid,mid2,mid2ov,mid2n192,mid64s2,mid64s4d,mid2s4 \
      --time-limit 240 --out specs/sm90a.tuned.toml --json $R/tune_chunked.json > $R/tune_chunked.log 2>&1
    rc=$?; echo "tune_chunked from m = $1: rc=$rc $(( $(date +%s) - t0 )) s, $(grep -c . $R/tune_chunked.log) lines" | tee -a $S
  }
  tune 129
  if [ $rc -ne 0 ] && grep -q "from-m keeps" $R/tune_chunked.log; then tail -2 $R/tune_chunked.log | tee -a $S; tune 513; fi
  tail -3 $R/tune_chunked.log | tee -a $S
  python3 $H/pairs.py $R/tune_chunked.json 2>&1 | tee -a $S
  cp specs/sm90a.tuned.toml $R/
else
  echo "a candidate's bits differ or a split test failed: no tune" | tee -a $S
fi
tar cJf $OUT/call3.tar.xz -C $OUT call3
cat $S
