# One device call: NT bf16 at m = 1024 and 4096 over the 50 (n, k) of the model list, over the
# routes of this session's large-m tune, on the card session 39 measured before its retune (the
# H200), so the NT row's before and after are on one kind of card.
# Carried: .devx (bash bench/pack-subset.sh gemm-aot-bench).
set -u
bash .devx/unpack
B=.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
t0=$(date +%s)
timeout 120 $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit "${COMMIT:?set COMMIT to the commit the pack was built from}" $NK --out $OUT/nt-after > $OUT/bench_nt_after.log 2>&1
echo "bench_nt_after rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/bench_nt_after.log
