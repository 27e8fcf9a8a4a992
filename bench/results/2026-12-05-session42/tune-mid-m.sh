# One device call: `gemm-aot tune --op nt --from-m 513` over mid-m-nt.toml (this folder: the NT
# model list's (n, k) but Llama-3 8B's five, worst first), so that tcwide.sq192 and sq192c2
# compete at m = 1024 too, and at m >= 1025 for the (n, k) that session 41's list left out;
# rewrites the tier's routes file in place. Carried: .devx (bash bench/pack-subset.sh gemm-aot-tune).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 400 $B/gemm-aot-tune --tier sm90a --shapes bench/results/2026-12-05-session42/mid-m-nt.toml --op nt --from-m 513 \
  --reps 8 --time-limit 320 --out specs/sm90a.tuned.toml --json $OUT/tune_mid_m_nt.json > $OUT/tune_mid_m_nt.log 2>&1
echo "tune_mid_m_nt rc=$? $(( $(date +%s) - t0 )) s"; grep chosen $OUT/tune_mid_m_nt.log; grep -c "^\[" $OUT/tune_mid_m_nt.log; tail -1 $OUT/tune_mid_m_nt.log
cp specs/sm90a.tuned.toml $OUT/
