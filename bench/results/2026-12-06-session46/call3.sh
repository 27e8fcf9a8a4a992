#!/usr/bin/env bash
# Device call 3 (session 46). The shipped routes after the group experiment was taken out again:
# session 45's routes with call 1's H100 times chosen again without the group tiles
# (`gemm-aot tune --recorded`). Their bits first: gpu_split_k (the chunked regions' routed m
# against the full batch) and gpu_invariance's tensor-core sweeps; then against cuBLAS: NN over
# the model list, TN and NT at m = 1024 / 4096 over the tuned (n, k), the holdout list.
# Everything in one archive, $OUT/call3.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-bench gpu_invariance gpu_split_k; COMMIT=<packed>;
# run with carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call3; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-420}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
timeout $(cap 90) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
timeout $(cap 50) $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
timeout $(cap 50) $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/nt > $R/bench_nt.log 2>&1; st bench_nt $? $R/bench_nt.log
timeout $(cap 60) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --dtype bf16 --commit $C --out $R/holdout > $R/bench_holdout.log 2>&1; st bench_holdout $? $R/bench_holdout.log
(cd runtime && timeout $(cap 60) $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; st gpu_split_k $? $R/gpu_split_k.log
(cd runtime && timeout $(cap 150) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture tc_) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
tar cJf $OUT/call3.tar.xz -C $OUT call3
cat $S
