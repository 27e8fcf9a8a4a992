# One device call: NT and TN at m = 1024 and 4096 over the shape list's 50 (n, k) with the
# routes tuned in tune-nt.sh and tune-tn.sh (specs/sm90a.tuned.toml), against the same
# baseline runs (nt-before, tn-before). Carried: .devx (bash bench/pack-subset.sh gemm-aot-bench).
set -u
bash .devx/unpack
B=.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for op in nt tn; do
  timeout 70 $B/gemm-aot-bench --policy tensor-core --op $op --m 1024,4096 --dtype bf16 --commit "${COMMIT:?set COMMIT to the commit the pack was built from}" --nk 6144x4096,1024x4096,4096x4096,14336x4096,28672x4096,4096x14336,128256x4096,10240x8192,1024x8192,8192x8192,28672x8192,8192x28672,128256x8192,4608x3584,512x3584,3584x3584,18944x3584,3584x18944,152064x3584,29568x8192,8192x29568,152064x8192,32000x4096,8192x3584,2048x3584,3584x4096,14336x3584,3584x14336,256000x3584,4096x2304,1024x2304,2304x2048,9216x2304,2304x9216,9216x3072,3072x3072,16384x3072,3072x8192,32064x3072,2304x768,768x768,3072x768,768x3072,50257x768,768x50257,4800x1600,1600x1600,6400x1600,1600x6400,50257x1600 --out $OUT/$op-after > $OUT/bench_${op}_after.log 2>&1
  echo "bench_${op}_after rc=$?"; tail -2 $OUT/bench_${op}_after.log
done
# The tax again with the retuned routes (the prefill's projections are NT; the wheel in
# .devx/site, bash bench/pack-subset.sh wheel gemm-aot-bench).
export PYTHONPATH=$PWD/.devx/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
timeout 300 python3 bench/python/front.py --out $OUT/python_front.json --rounds 6 2>&1 \
  | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" \
  | tail -16
