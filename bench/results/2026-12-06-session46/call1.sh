#!/usr/bin/env bash
# Device call 1 (session 46). The tile order's group as a tuning parameter (`group_rows`, new
# candidates wideg16, wideg32, mid2g16, sq192g16): first their bits, plainly (gpu_tensor_core's
# every-candidate tests: every kernel of the routed one's contract at shapes with more tiles
# than SMs) and under timing perturbation (gpu_perturbed); only if those pass, the tunes at
# m >= 1025 over the model list, NN then NT then TN, each rewriting specs/sm90a.tuned.toml in
# place. Everything in one archive, $OUT/call1.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-tune gpu_tensor_core gpu_perturbed; COMMIT=<packed>;
# run with carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-540}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout $(cap 120) $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/gpu_tensor_core.log 2>&1; rc1=$?; st gpu_tensor_core $rc1 $R/gpu_tensor_core.log
grep -oE "[^ ]*g(16|32)[^ ,]*" $R/gpu_tensor_core.log | sort | uniq -c | head -12 | tee -a $S
timeout $(cap 90) $B/gpu_perturbed --ignored --test-threads 1 --nocapture perturbed_candidates_give_the_routed_bits > $R/gpu_perturbed.log 2>&1; rc2=$?; st gpu_perturbed $rc2 $R/gpu_perturbed.log
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
  tune() {  # op limit
    l=$(cap $2); [ $l -lt 20 ] && { echo "tune_$1 not run: no time left" | tee -a $S; return; }
    timeout $(( l + 60 )) $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op $1 --from-m 1025 --reps 8 --time-limit $l \
      --out specs/sm90a.tuned.toml --json $R/tune_$1.json > $R/tune_$1.log 2>&1
    echo "tune_$1 rc=$? $(( $(date +%s) - t0 )) s, chosen $(grep -c chosen $R/tune_$1.log): $(tail -1 $R/tune_$1.log)" | tee -a $S
  }
  tune nn 170
  tune nt 110
  tune tn 110
  cp specs/sm90a.tuned.toml $R/
else
  echo "a candidate's bits differ: no tune" | tee -a $S
fi
tar cJf $OUT/call1.tar.xz -C $OUT call1
cat $S
