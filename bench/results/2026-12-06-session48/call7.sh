#!/usr/bin/env bash
# Device call 7 (session 48), over the routes calls 3 and 6 wrote (the splits without the fence routed at m 33-128) (shipped in the packed
# commit): gpu_split_k (the chunked contract's kernels bitwise equal, every routed m's rows
# equal to the full batch's), the tensor-core sweeps of gpu_invariance (every row of every
# routed kernel at 303 batch sizes; TC= for all of it), the chunked (n, k) against cuBLAS (NN,
# NT and TN, m = 256-4096), the every-candidate tests over the final candidate set, and NN over
# the model list. Each step capped by what is left of END seconds.
# Everything in one archive, $OUT/call7.tar.xz.
# Pack: bash bench/pack-subset.sh gemm-aot-bench gpu_invariance gpu_split_k gpu_tensor_core; COMMIT=<packed>; carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call7; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E '^test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
CK=512x3584,768x3072,1024x2304,1024x4096,1024x8192,1600x6400,2304x9216
END=${END:-540}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
(cd runtime && timeout $(cap 40) $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate) > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $? $R/gpu_tensor_core.log
(cd runtime && timeout $(cap 60) $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; st gpu_split_k $? $R/gpu_split_k.log
for op in nn nt tn; do
  timeout $(cap 40) $B/gemm-aot-bench --policy tensor-core --op $op --m 32,64,128,256,512,1024,2048,4096 --dtype bf16 --commit $C --nk $CK --out $R/chunked_$op > $R/bench_chunked_$op.log 2>&1; st bench_chunked_$op $? $R/bench_chunked_$op.log
done
(cd runtime && timeout $(cap 60) compute-sanitizer --tool racecheck --kernel-name kns=nf_m --report-api-errors no --error-exitcode 9 $B/gpu_tensor_core --include-ignored --test-threads=1 --nocapture every_candidate_gives_the_routed_bits_nn_bf16) > $R/racecheck_nf.log 2>&1; st racecheck_nf $? $R/racecheck_nf.log; grep -E "RACECHECK SUMMARY|Internal" $R/racecheck_nf.log | tail -2 | tee -a $S
(cd runtime && timeout $(cap 150) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture ${TC-tc_}) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
if true; then  # the NN model list on whichever card came
  timeout $(cap 90) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
fi
tar cJf $OUT/call7.tar.xz -C $OUT call7
cat $S
