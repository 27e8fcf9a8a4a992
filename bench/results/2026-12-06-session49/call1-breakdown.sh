# One device call: where a call's host time goes. The C library's call (bench/c/host_cost.c),
# the runtime's launch overhead with the bare launch of the fronts' kernel through both driver
# entries (gemm-aot bench --launch-overhead), and the Python call's pieces
# (bench/python/host_breakdown.py), each twice where cheap, so the spread shows.
# Carried: .devx (bash bench/pack-subset.sh wheel gemm-aot-bench, and .devx/c.tar.xz:
# c/libgemm_aot.so stripped, c/host_cost built against capi/include/gemm_aot.h).
set -u
: "${COMMIT:?the packed commit}"
bash .devx/unpack
mkdir -p .devx/cc && tar xJf .devx/c.tar.xz -C .devx/cc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)|max MHz"
for t in perf py-spy ltrace gdb; do command -v $t || echo "no $t"; done
echo "== host cost from C (twice)"
for r in 1 2; do (cd .devx/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1); done
echo "== the runtime's launch overhead (twice)"
for r in 1 2; do
  mkdir -p $OUT/overhead$r
  timeout 120 .devx/bin/gemm-aot-bench --launch-overhead --commit $COMMIT --out $OUT/overhead$r 2>&1 | tail -12
done
echo "== the Python call's pieces"
export PYTHONPATH=$PWD/.devx/site
timeout 240 python3 bench/python/host_breakdown.py --out $OUT/host_breakdown.json 2>&1 | tail -30
