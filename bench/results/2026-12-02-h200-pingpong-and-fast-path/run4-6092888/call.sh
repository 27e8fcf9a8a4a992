#!/bin/bash
# Device call 3 at 6092888: the shape list (NN), NT and TN rows over the retuned routes;
# gpu_tensor_core (every candidate, contract equivalence), the perturbed every-kind test (the
# ping-pong tiles among them), the tensor-core invariance sweeps.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d3/unpack; B=.device/d3/bin
timeout 70 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --m 1,16,64,256,1024,4096 --dtype bf16 --commit 6092888 --out $R > $R/bench.log 2>&1; st bench $?
timeout 45 $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --nk 6144x4096,1024x4096,4096x4096,14336x4096,28672x4096,4096x14336,128256x4096,10240x8192,1024x8192,8192x8192,28672x8192,8192x28672,128256x8192,4608x3584,512x3584,3584x3584,18944x3584,3584x18944,152064x3584,29568x8192,8192x29568,152064x8192,32000x4096,8192x3584,2048x3584,3584x4096,14336x3584,3584x14336,256000x3584,4096x2304,1024x2304,2304x2048,9216x2304,2304x9216,9216x3072,3072x3072,16384x3072,3072x8192,32064x3072,2304x768,768x768,3072x768,768x3072,50257x768,768x50257,4800x1600,1600x1600,6400x1600,1600x6400,50257x1600 --commit 6092888 --out $R/nt > $R/bench_nt.log 2>&1; st bench_nt $?
timeout 45 $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --nk 6144x4096,1024x4096,4096x4096,14336x4096,28672x4096,4096x14336,128256x4096,10240x8192,1024x8192,8192x8192,28672x8192,8192x28672,128256x8192,4608x3584,512x3584,3584x3584,18944x3584,3584x18944,152064x3584,29568x8192,8192x29568,152064x8192,32000x4096,8192x3584,2048x3584,3584x4096,14336x3584,3584x14336,256000x3584,4096x2304,1024x2304,2304x2048,9216x2304,2304x9216,9216x3072,3072x3072,16384x3072,3072x8192,32064x3072,2304x768,768x768,3072x768,768x3072,50257x768,768x50257,4800x1600,1600x1600,6400x1600,1600x6400,50257x1600 --commit 6092888 --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $?
(cd runtime && timeout 120 ../$B/gpu_tensor_core-* --include-ignored --test-threads=1 --nocapture) > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $?
(cd tests/timing && timeout 130 ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture perturbed_kernels_give_the_shipped_bits_for_every_kind) > $R/gpu_perturbed_every_kind.log 2>&1; st perturbed_every_kind $?
left=$(( 520 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && { (cd runtime && timeout $left ../$B/gpu_invariance-* --include-ignored --test-threads=1 --nocapture tc_) > $R/gpu_invariance_tc.log 2>&1; st gpu_invariance_tc $?; }
cat $S
