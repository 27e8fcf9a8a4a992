#!/usr/bin/env bash
# Device call 2 (session 44), over the routes call 1's tunes wrote (shipped in the packed commit):
# the full gpu_invariance sweep (every row of every routed kernel at every batch size, last run
# at 6a4bb7d), then the bench: NN over the model list (550 rows; JSON and SVG plot, on an H200
# only: the README's table is the H200's), NT and TN at m = 1024 and 4096 over its 50 (n, k).
# Everything in one archive, $OUT/call2.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-bench gpu_invariance; COMMIT=<packed>; carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call2; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
if grep -q H200 $R/card.txt; then
  timeout 90 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
else
  echo "bench_nn skipped: not an H200" | tee -a $S
fi
timeout 60 $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/nt > $R/bench_nt.log 2>&1; st bench_nt $? $R/bench_nt.log
timeout 50 $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
left=$(( 575 - ($(date +%s) - t0) )); [ $left -lt 10 ] && left=10
(cd runtime && timeout $left $B/gpu_invariance --include-ignored --test-threads=1 --nocapture) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
tar cJf $OUT/call2.tar.xz -C $OUT call2
cat $S
