#!/usr/bin/env bash
# Device call 3 (session 45). The K splits new for m >= 1024 at narrow n on the GPU (run 1, at
# 1b1c6e6: the relays mid2r2, mid2r4, midr2, midr4, whose fold travels from rank to rank; run 2:
# the exchanges mid2x2, mid2x4, midx2, midx4, whose ranks each fold their own columns):
# first their bits, plainly (gpu_tensor_core's every-candidate tests: every kernel of the
# routed one's contract at shapes with more tiles than SMs, 9, 16 and 98 chunks) and under
# timing perturbation (gpu_perturbed), and gpu_split_k (the chunked contract's kernels, every
# routed m against the full batch). Only if those pass, the tunes that may route them, each
# rewriting specs/sm90a.tuned.toml in place: NN, NT and TN over the chunked (n, k) at m >= 513;
# TN over 256000 x 3584 (the LM head no TN tune reached). Then compute-sanitizer memcheck of
# the every-candidate tests with only the new splits instrumented, and NT with only mid2n144.
# Everything in one archive, $OUT/call3.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-tune gpu_tensor_core gpu_perturbed [gpu_split_k];
# COMMIT=<packed>; run with carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
D=bench/results/2026-12-06-session45
R=$OUT/call3; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-480}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout $(cap 120) $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/gpu_tensor_core.log 2>&1; rc1=$?; st gpu_tensor_core $rc1 $R/gpu_tensor_core.log
grep -E "candidates give" $R/gpu_tensor_core.log | grep -oE "^[a-z]+ [^ ]+ [0-9x]+ .{0,60}|mid2r2[^,]*" | head -12 | tee -a $S
timeout $(cap 90) $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $R/gpu_perturbed.log 2>&1; rc2=$?; st gpu_perturbed $rc2 $R/gpu_perturbed.log
# (Packed only when the call's 64 MiB allow it: the every-candidate tests cover the relays.)
rc3=0
if [ -x $B/gpu_split_k ]; then
  (cd runtime && timeout $(cap 60) $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; rc3=$?; st gpu_split_k $rc3 $R/gpu_split_k.log
fi
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]; then
  tune() {  # name shapes op from-m limit
    l=$(cap $5); [ $l -lt 20 ] && { echo "tune_$1 not run: no time left" | tee -a $S; return; }
    timeout $(( l + 60 )) $B/gemm-aot-tune --tier sm90a --shapes $2 --op $3 --from-m $4 --reps 8 --time-limit $l \
      --out specs/sm90a.tuned.toml --json $R/tune_$1.json > $R/tune_$1.log 2>&1
    echo "tune_$1 rc=$? $(( $(date +%s) - t0 )) s, chosen $(grep -c chosen $R/tune_$1.log): $(tail -1 $R/tune_$1.log)" | tee -a $S
  }
  tune chunked $D/chunked.toml nn,nt,tn 513 130
  [ -n "${SKIP_TN256000:-}" ] || tune tn256000 $D/tn-256000.toml tn 513 40  # (run 2: run 1 tuned it)
  cp specs/sm90a.tuned.toml $R/
else
  echo "a candidate's bits differ or a split test failed: no tune" | tee -a $S
fi
for f in ${KNS:-x2_m x4_m}; do
  (cd runtime && timeout $(cap 60) compute-sanitizer --tool memcheck --kernel-name kns=$f --report-api-errors no --error-exitcode 9 \
    $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nn_bf16) > $R/memcheck_$f.log 2>&1; st memcheck_$f $? $R/memcheck_$f.log
  grep -E "ERROR SUMMARY" $R/memcheck_$f.log | tail -1 | tee -a $S
done
(cd runtime && timeout $(cap 60) compute-sanitizer --tool memcheck --kernel-name kns=_mid2n144_ --report-api-errors no --error-exitcode 9 \
  $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nt_bf16) > $R/memcheck_mid2n144.log 2>&1; st memcheck_mid2n144 $? $R/memcheck_mid2n144.log
grep -E "ERROR SUMMARY" $R/memcheck_mid2n144.log | tail -1 | tee -a $S
tar cJf $OUT/call3.tar.xz -C $OUT call3
cat $S
