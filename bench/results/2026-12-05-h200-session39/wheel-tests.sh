# One device call: the wheel's GPU tests (python/tests/test_gpu.py; among them the Python
# overrides' out= and in-place overloads, written this session) and the Python overrides' CPU
# tests against the wheel on that machine's torch. Carried: .devx (bash bench/pack-subset.sh wheel).
set -u
bash .devx/unpack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export PYTHONPATH=$PWD/.devx/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d) GEMM_AOT_REQUIRE_CUDA=1
cd python/tests
timeout 200 python3 -m unittest -v test_gpu 2>&1 | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert" | tail -60
timeout 60 python3 -m unittest -v test_python_overrides_cpu 2>&1 | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert" | tail -20
