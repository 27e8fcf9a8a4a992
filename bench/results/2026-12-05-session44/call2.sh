#!/usr/bin/env bash
# Device call 2 (session 44), over the routes call 1's tunes wrote (shipped in the packed commit):
# NN and NT over the chunked (n, k) the tunes moved to tcwidechunk.mid2ov (m = 256-4096), the
# full gpu_invariance sweep (every row of every routed kernel at every batch size, last run at
# 6a4bb7d), TN at m = 1024 and 4096 over the model list's 50 (n, k), and, on an H200 only (the
# README's table is the H200's), NN over the model list (550 rows; JSON and SVG plot). Each step
# capped by what is left of END seconds.
# Everything in one archive, $OUT/call2.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-bench gpu_invariance gpu_split_k; COMMIT=<packed>; carry [".devx"].
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
CK=512x3584,768x3072,1024x2304,1024x4096,1024x8192,1600x6400,2304x9216
END=${END:-560}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
# The chunked contract's kernels bitwise equal at (1024, 4096) and more, and every routed m's
# rows equal to m = 1100's (mid2ov's routes at m >= 1025 among them): gpu_split_k.
(cd runtime && timeout $(cap 90) $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; st gpu_split_k $? $R/gpu_split_k.log
# The rows the tunes changed (any card): NN and NT over the chunked (n, k), m = 256-4096.
timeout $(cap 40) $B/gemm-aot-bench --policy tensor-core --op nn --m 256,512,1024,2048,4096 --dtype bf16 --commit $C --nk $CK --out $R/chunked_nn > $R/bench_chunked_nn.log 2>&1; st bench_chunked_nn $? $R/bench_chunked_nn.log
timeout $(cap 40) $B/gemm-aot-bench --policy tensor-core --op nt --m 256,512,1024,2048,4096 --dtype bf16 --commit $C --nk $CK --out $R/chunked_nt > $R/bench_chunked_nt.log 2>&1; st bench_chunked_nt $? $R/bench_chunked_nt.log
# The tensor-core sweeps of gpu_invariance (TC=tc_; the exact policy's routes did not change),
# or all of it (TC= ).
(cd runtime && timeout $(cap 360) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture ${TC-tc_}) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
timeout $(cap 50) $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
if grep -q H200 $R/card.txt; then
  timeout $(cap 90) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
fi
tar cJf $OUT/call2.tar.xz -C $OUT call2
cat $S
