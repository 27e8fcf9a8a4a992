# One device call: the invariance tax with the routes of the prefill tune (front.py, paths
# interleaved, 6 rounds), then the wheel's GPU tests (python/tests/test_gpu.py, among them the
# Python overrides' out= and in-place overloads) and the Python overrides' CPU tests on that
# machine's torch. Carried: .devx (bash bench/pack-subset.sh wheel: the wheel unpacked).
set -u
bash .devx/unpack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export PYTHONPATH=$PWD/.devx/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
t0=$(date +%s)
timeout 330 python3 bench/python/front.py --out $OUT/python_front.json --rounds 6 2>&1 \
  | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" \
  | tail -16
echo "front.py $(( $(date +%s) - t0 )) s"
export GEMM_AOT_REQUIRE_CUDA=1
cd python/tests
timeout 170 python3 -m unittest -v test_gpu 2>&1 | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert" | tail -60
timeout 50 python3 -m unittest -v test_python_overrides_cpu 2>&1 | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert" | tail -20
