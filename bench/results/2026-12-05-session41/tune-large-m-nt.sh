# One device call: `gemm-aot tune --op nt --from-m 1025` over large-m-nt.toml (this folder), so
# that tcwide.widec2 (128 x 256 in clusters of 2) competes at m = 2048 and 4096 for the aligned
# (n, k) of the model list, worst first; the m ranges below 1025 keep their routes. Rewrites the
# tier's routes file in place. Carried: .devx (bash bench/pack-subset.sh gemm-aot-tune).
set -u
bash .devx/unpack
B=.devx/bin
D=bench/results/2026-12-05-session41
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 260 $B/gemm-aot-tune --tier sm90a --shapes $D/large-m-nt.toml --op nt --from-m 1025 --reps 8 --time-limit 200 \
  --out specs/sm90a.tuned.toml --json $OUT/tune_large_m_nt.json > $OUT/tune_large_m_nt.log 2>&1
rc=$?
cp specs/sm90a.tuned.toml $OUT/
echo "tune_large_m_nt rc=$rc $(( $(date +%s) - t0 )) s"; grep -c chosen $OUT/tune_large_m_nt.log; grep chosen $OUT/tune_large_m_nt.log | grep -c widec2; tail -3 $OUT/tune_large_m_nt.log
