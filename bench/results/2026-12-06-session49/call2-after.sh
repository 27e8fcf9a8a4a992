# One device call: the host-cost work of this session against the commit before it (A: .devx,
# 941c517; B: .devx/new, the commit named), interleaved A B A B on one machine, as call 1;
# then the wheel's GPU tests and the CPU tests that need torch, on B's wheel.
# Carried: .devx and .devx/new, each made by `bash bench/pack-subset.sh wheel gemm-aot-bench`
# plus c.tar.xz (c/libgemm_aot.so stripped, c/host_cost built against capi/include/gemm_aot.h).
#   COMMIT_A=... COMMIT_B=... bash call2-after.sh
set -u
: "${COMMIT_A:?}" "${COMMIT_B:?}"
root=$PWD
for side in A B; do
  src=$root/.devx; [ $side = B ] && src=$root/.devx/new
  d=$root/.side$side; mkdir -p $d/bin $d/site $d/cc
  tar xJf $src/bins.tar.xz -C $d/bin; tar xJf $src/site.tar.xz -C $d/site; tar xJf $src/c.tar.xz -C $d/cc
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name"
# One build of the native dispatch (dispatch.cpp is the same on both sides) for both.
export GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
for round in 1 2; do
  for side in A B; do
    d=$root/.side$side; c=COMMIT_$side
    echo "=== round $round, side $side (${!c})"
    echo "== host cost from C"
    (cd $d/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1)
    echo "== the runtime's launch overhead"
    mkdir -p $OUT/$side$round
    timeout 120 $d/bin/gemm-aot-bench --launch-overhead --commit ${!c} --out $OUT/$side$round 2>&1 | tail -14
    echo "== the Python call's pieces"
    PYTHONPATH=$d/site timeout 240 python3 bench/python/host_breakdown.py --out $OUT/$side$round/host_breakdown.json 2>&1 \
      | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" | tail -30
  done
done
echo "=== the wheel's tests on B"
export PYTHONPATH=$root/.sideB/site GEMM_AOT_REQUIRE_CUDA=1
cd python/tests
for t in test_gpu test_dispatch_cpu test_python_overrides_cpu test_real_client; do
  echo "== $t"
  timeout 200 python3 -m unittest -v $t 2>&1 | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert|skipped" | tail -60
done
