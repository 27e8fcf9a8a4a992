#!/usr/bin/env bash
# Session 48: the slotted splits without the per-lane fence (split_fence = 0: mid64s2nf,
# mid64s4dnf, mid2s4nf): their bits (every-candidate NN / NT / TN, perturbed), gpu_split_k,
# memcheck and synccheck of the NN every-candidate test with only them instrumented; then the
# tune over the list's chunked (n, k) at m >= 33 (else 129) with --only them, their twins and
# the kernels routed there, and each one's time over its twin's (pairs.py; run as
# pairs_nf.py, the same script with those pairs built in, since merged into it).
# Pack: bash bench/pack-subset.sh gemm-aot-tune gpu_tensor_core gpu_perturbed gpu_split_k;
# COMMIT=<packed>; carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
H=bench/results/2026-12-06-session48
R=$OUT/call6; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout 150 $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/gpu_tensor_core.log 2>&1; rc1=$?; st gpu_tensor_core $rc1 $R/gpu_tensor_core.log
for t in mid64s2nf mid64s4dnf mid2s4nf; do echo "$t: in $(grep -c "_${t}_m" $R/gpu_tensor_core.log) candidate lists" | tee -a $S; done
timeout 90 $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $R/gpu_perturbed.log 2>&1; rc2=$?; st gpu_perturbed $rc2 $R/gpu_perturbed.log
(cd runtime && timeout 60 $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; rc3=$?; st gpu_split_k $rc3 $R/gpu_split_k.log
san() {  # tool
  (cd runtime && timeout 90 compute-sanitizer --tool $1 --kernel-name kns=nf_m --report-api-errors no --error-exitcode 9 \
    $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nn_bf16) > $R/$1_nf.log 2>&1
  st $1_nf $? $R/$1_nf.log
  grep -E "ERROR SUMMARY" $R/$1_nf.log | tail -1 | tee -a $S
}
san memcheck
san synccheck
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]; then
  tune() {
    timeout 300 $B/gemm-aot-tune --tier sm90a --shapes bench/results/2026-12-06-session45/chunked.toml --op nn,nt,tn --from-m $1 --reps 8 \
      --only mid64s2nf,mid64s4dnf,mid2s4nf,mid64s2,mid64s4d,mid2s4,mid64s4,mid64s8,mid64s8d,mid2s8,mid64,mid64d,mid,midd,mid2 \
      --time-limit 200 --out specs/sm90a.tuned.toml --json $R/tune_splits.json > $R/tune_splits.log 2>&1
    rc=$?; echo "tune_splits from m = $1: rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $S
  }
  tune 33
  if [ $rc -ne 0 ] && grep -q "from-m keeps" $R/tune_splits.log; then tail -2 $R/tune_splits.log | tee -a $S; tune 129; fi
  grep -E "chosen|wrote|no kernel" $R/tune_splits.log | tee -a $S
  python3 $H/pairs.py $R/tune_splits.json mid64s2nf:mid64s2,mid64s4dnf:mid64s4d,mid2s4nf:mid2s4 2>&1 | tee -a $S
  cp specs/sm90a.tuned.toml $R/
else
  echo "a candidate's bits differ or a split test failed: no tune" | tee -a $S
fi
tar cJf $OUT/call6.tar.xz -C $OUT call6
cat $S
