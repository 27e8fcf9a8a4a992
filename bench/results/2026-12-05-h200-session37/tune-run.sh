# NT routes up to a prefill's m, one device call: `gemm-aot tune --op nt` on Llama-3 8B's layers
# (bench/shapes/prefill-nt.toml, m up to 32768), and the host cost of one call from C
# (bench/c/host_cost.c against libgemm_aot.so).
# Usage: bash tune-run.sh   (.devx/bins.tar.xz from bench/pack-subset.sh gemm-aot-tune, and
# .device/c.tar.xz: c/{libgemm_aot.so,host_cost}, carried)
set -u
bash .devx/unpack
tar xJf .device/c.tar.xz -C .device
echo "== host cost from C"
(cd .device/c && timeout 60 ./host_cost 2>&1 | tail -3)
echo "== tune nt bf16, Llama-3 8B, m up to 32768"
timeout 450 .devx/bin/gemm-aot-tune --tier sm90a --shapes bench/shapes/prefill-nt.toml --op nt --dtype bf16 \
  --policy tensor-core --buckets 16,32,64,128,256,512,1024,2048,8192 --reps 10 \
  --out $OUT/sm90a.tuned-nt.toml --json $OUT/tune-nt.json --time-limit 400 2>&1 | tail -60
