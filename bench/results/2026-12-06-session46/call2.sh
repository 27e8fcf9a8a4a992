#!/usr/bin/env bash
# Device call 2 (session 46). The routes of call 1's tunes (wideg16, wideg32, sq192g16 among
# them) against cuBLAS: NN over the model list, TN and NT at m = 1024 / 4096 over the tuned
# (n, k), the holdout list. Then the group of 4 (wideg4, mid2g4, sq192g4, widec2g4): its bits
# (every-candidate tests) and, if they pass, the NN and NT tunes at m >= 1025 again, rewriting
# specs/sm90a.tuned.toml in place. Everything in one archive, $OUT/call2.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-bench gemm-aot-tune gpu_tensor_core; COMMIT=<packed>;
# run with carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call2; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-560}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
(cd runtime && timeout $(cap 120) $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/gpu_tensor_core.log 2>&1; rc1=$?; st gpu_tensor_core $rc1 $R/gpu_tensor_core.log
grep -oE "[^ ]*g4_[^ ,]*" $R/gpu_tensor_core.log | sort | uniq -c | head -12 | tee -a $S
timeout $(cap 90) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
timeout $(cap 50) $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
timeout $(cap 50) $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/nt > $R/bench_nt.log 2>&1; st bench_nt $? $R/bench_nt.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --dtype bf16 --commit $C --out $R/holdout > $R/bench_holdout.log 2>&1; st bench_holdout $? $R/bench_holdout.log
if [ $rc1 -eq 0 ]; then
  tune() {  # op limit
    l=$(cap $2); [ $l -lt 20 ] && { echo "tune_$1 not run: no time left" | tee -a $S; return; }
    timeout $(( l + 60 )) $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op $1 --from-m 1025 --reps 8 --time-limit $l \
      --out specs/sm90a.tuned.toml --json $R/tune_$1.json > $R/tune_$1.log 2>&1
    echo "tune_$1 rc=$? $(( $(date +%s) - t0 )) s, chosen $(grep -c chosen $R/tune_$1.log): $(tail -1 $R/tune_$1.log)" | tee -a $S
  }
  tune nn 170
  tune nt 100
  cp specs/sm90a.tuned.toml $R/
else
  echo "a candidate's bits differ: no tune" | tee -a $S
fi
tar cJf $OUT/call2.tar.xz -C $OUT call2
cat $S
