# One device call: where a call's host time goes, for two builds side by side (A: .devx, the
# commit before; B: .devx/new), interleaved A B A B on one machine. Each round: the C library's
# call (bench/c/host_cost.c), the runtime's launch overhead with the bare launch of the fronts'
# kernel through both driver entries (gemm-aot bench --launch-overhead), and the Python call's
# pieces (bench/python/host_breakdown.py).
# Carried: .devx and .devx/new, each made by `bash bench/pack-subset.sh wheel gemm-aot-bench`
# plus c.tar.xz (c/libgemm_aot.so stripped, c/host_cost built against capi/include/gemm_aot.h).
#   COMMIT_A=... COMMIT_B=... bash call1-breakdown.sh
set -u
: "${COMMIT_A:?}" "${COMMIT_B:?}"
root=$PWD
for side in A B; do
  src=$root/.devx; [ $side = B ] && src=$root/.devx/new
  d=$root/.side$side; mkdir -p $d/bin $d/site $d/cc
  tar xJf $src/bins.tar.xz -C $d/bin; tar xJf $src/site.tar.xz -C $d/site; tar xJf $src/c.tar.xz -C $d/cc
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)|max MHz"
for t in perf py-spy ltrace gdb; do command -v $t || echo "no $t"; done
for round in 1 2; do
  for side in A B; do
    d=$root/.side$side; c=COMMIT_$side
    echo "=== round $round, side $side (${!c})"
    echo "== host cost from C"
    (cd $d/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1)
    echo "== the runtime's launch overhead"
    mkdir -p $OUT/$side$round
    timeout 120 $d/bin/gemm-aot-bench --launch-overhead --commit ${!c} --out $OUT/$side$round 2>&1 | tail -12
    echo "== the Python call's pieces"
    PYTHONPATH=$d/site timeout 240 python3 bench/python/host_breakdown.py --out $OUT/$side$round/host_breakdown.json 2>&1 | tail -30
  done
done
