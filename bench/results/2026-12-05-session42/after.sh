# One device call over the routes of tune.sh (tcwide.sq192 and sq192c2 routed at m >= 1025 and
# at a prefill's m; widec2's prefill routes partly kept): NT at m = 1024 and 4096 over the model
# list's 50 (n, k) (the ratio after the tune, against session 40's 0.976 on an H100), NT over
# Llama-3 8B's layers at m = 4096 and 32768, then the invariance tax (front.py, paths
# interleaved, 6 rounds) with a wheel of these routes.
# Carried: .devx (bash bench/pack-subset.sh gemm-aot-bench wheel).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
t0=$(date +%s)
timeout 110 $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit "${COMMIT:?set COMMIT}" $NK --out $OUT/nt-after > $OUT/bench_nt_after.log 2>&1
echo "bench_nt_after rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/bench_nt_after.log
t0=$(date +%s)
timeout 90 $B/gemm-aot-bench --policy tensor-core --op nt --m 4096,32768 --dtype bf16 --reps 10 --commit "$COMMIT" \
  --nk 14336x4096,4096x14336,128256x4096,4096x4096,1024x4096 --out $OUT/nt-prefill > $OUT/bench_nt_prefill.log 2>&1
echo "bench_nt_prefill rc=$? $(( $(date +%s) - t0 )) s"; tail -12 $OUT/bench_nt_prefill.log
export PYTHONPATH=$PWD/.devx/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
t0=$(date +%s)
timeout 330 python3 bench/python/front.py --out $OUT/python_front.json --rounds 6 2>&1 \
  | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" \
  | tail -16
echo "front.py $(( $(date +%s) - t0 )) s"
