#!/usr/bin/env bash
# Device call 1 (session 44). First the bits of every candidate, plainly (gpu_tensor_core: NN,
# NT and TN, every kernel of a contract against the routed one, at a shape with more tiles than
# SMs) and under timing perturbation (gpu_perturbed): new since the last run are the
# overlapped-fold tiles tcwidechunk.mid64ov / midov / mid2ov and tcwident.mid2n144. Only if both
# pass, the tunes that may route them, each rewriting specs/sm90a.tuned.toml in place (the next
# one reads it as its earlier routing):
#   NN and NT over the chunked (n, k) (chunked.toml, m >= 129), the overlapped-fold tiles among
#   the candidates; NT over n = 2304 and 4608 (nt144.toml, m >= 513), mid2n144 among them; TN
#   over the three LM heads session 43's TN tune did not reach (tn-rest.toml, m >= 513).
# Then compute-sanitizer memcheck of the every-candidate NN test with only the new kernels
# instrumented, and of sq192c2's. Everything in one archive, $OUT/call1.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-tune gpu_tensor_core gpu_perturbed; COMMIT=<packed>;
# run with carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
D=bench/results/2026-12-05-session44
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-470}  # seconds of the call's own time for all of it (the device budget is short)
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout $(cap 150) $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture) > $R/gpu_tensor_core.log 2>&1; rc1=$?; st gpu_tensor_core $rc1 $R/gpu_tensor_core.log
grep -E "ov_|mid2n144" $R/gpu_tensor_core.log | head -8 | tee -a $S
timeout $(cap 90) $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $R/gpu_perturbed.log 2>&1; rc2=$?; st gpu_perturbed $rc2 $R/gpu_perturbed.log
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
  tune() {  # name shapes op from-m limit
    l=$(cap $5); [ $l -lt 20 ] && { echo "tune_$1 not run: no time left" | tee -a $S; return; }
    timeout $(( l + 60 )) $B/gemm-aot-tune --tier sm90a --shapes $2 --op $3 --from-m $4 --reps 8 --time-limit $l \
      --out specs/sm90a.tuned.toml --json $R/tune_$1.json > $R/tune_$1.log 2>&1
    echo "tune_$1 rc=$? $(( $(date +%s) - t0 )) s, chosen $(grep -c chosen $R/tune_$1.log): $(tail -1 $R/tune_$1.log)" | tee -a $S
  }
  tune chunked $D/chunked.toml nn,nt 129 110
  tune nt144 $D/nt144.toml nt 513 35
  tune tn_rest bench/results/2026-12-05-session43/tn-rest.toml tn 513 50
  cp specs/sm90a.tuned.toml $R/
else
  echo "a candidate's bits differ: no tune" | tee -a $S
fi
(cd runtime && timeout $(cap 80) compute-sanitizer --tool memcheck --kernel-name kns=ov_ --report-api-errors no --error-exitcode 9 \
  $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nn) > $R/memcheck_ov.log 2>&1; st memcheck_ov $? $R/memcheck_ov.log
grep -E "ERROR SUMMARY" $R/memcheck_ov.log | tail -1 | tee -a $S
(cd runtime && timeout $(cap 120) compute-sanitizer --tool memcheck --kernel-name kns=_sq192c2_ --report-api-errors no --error-exitcode 9 \
  $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nn) > $R/memcheck_sq192c2.log 2>&1; st memcheck_sq192c2 $? $R/memcheck_sq192c2.log
grep -E "ERROR SUMMARY" $R/memcheck_sq192c2.log | tail -1 | tee -a $S
tar cJf $OUT/call1.tar.xz -C $OUT call1
cat $S
