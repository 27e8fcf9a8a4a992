# One device call. A: session 49's head (.devx), B: this session's host-path work (.devx/new);
# each side's wheel, bench and C library, made by `bash bench/pack-subset.sh wheel gemm-aot-bench`
# plus c.tar.xz (c/libgemm_aot.so stripped, c/host_cost built against capi/include/gemm_aot.h).
#  1. On B: the native dispatch's messages built as strings (cb27948): test_dispatch_cpu.py
#     whole, and session 49's probe `bias.addmm_(x, w)` under the mode at the CUDA key (it
#     crashed), with the three other statements of that probe.
#  2. The host cost, A B A B on one machine: from C, the runtime's launch overhead, the Python
#     call's pieces.
#  3. On B: the wheel's GPU tests and the CPU tests that need torch (test_gpu after round 1).
#   COMMIT_A=... COMMIT_B=... bash call1-ab.sh
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
export GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
quiet() { grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel"; }
echo "=== 1. B: test_dispatch_cpu, then the in-place probe at the CUDA key"
(cd python/tests && PYTHONPATH=$root/.sideB/site timeout 150 python3 -m unittest -v test_dispatch_cpu 2>&1 | quiet | tail -45)
sed -n '/^cat > \/tmp\/inplace.py/,/^PY$/p' bench/results/2026-12-06-session49/call4-segv.sh | sed '1d;$d' > /tmp/inplace.py
for i in 3 0; do
  PYTHONPATH=$root/.sideB/site timeout 60 python3 /tmp/inplace.py CUDA $i 2>&1 | grep "^==\|raised\|returned"
  echo "exit ${PIPESTATUS[0]}"
done
side_round() {
  local side=$1 round=$2 d=$root/.side$1 c=COMMIT_$1
  echo "=== 2. round $round, side $side (${!c})"
  echo "== host cost from C"
  (cd $d/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1)
  echo "== the runtime's launch overhead"
  mkdir -p $OUT/$side$round
  timeout 120 $d/bin/gemm-aot-bench --launch-overhead --commit ${!c} --out $OUT/$side$round 2>&1 | tail -14
  echo "== the Python call's pieces"
  PYTHONPATH=$d/site timeout 240 python3 bench/python/host_breakdown.py --out $OUT/$side$round/host_breakdown.json 2>&1 \
    | quiet | tail -30
}
wheel_test() {
  echo "== $1 (B)"
  (cd python/tests && PYTHONPATH=$root/.sideB/site GEMM_AOT_REQUIRE_CUDA=1 timeout 200 python3 -m unittest -v $1 2>&1 \
    | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert|skipped" | tail -60)
}
# Ordered so that a call cut short still says the most: one round each, B's GPU tests, the
# second round, the rest of B's tests.
side_round A 1; side_round B 1
echo "=== 3. the wheel's tests on B"
wheel_test test_gpu
side_round A 2; side_round B 2
for t in test_python_overrides_cpu test_real_client; do wheel_test $t; done
