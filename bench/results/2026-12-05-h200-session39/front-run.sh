# One device call: front.py (host cost, row kernels, the invariance tax with the paths
# interleaved) against the wheel in .device/fronts (python3 -m pip wheel --no-deps -w
# .device/fronts ./python), shipped specs.
set -u
site=$(mktemp -d)/site
python3 -m pip install -q --no-deps --no-index --target "$site" .device/fronts/gemm_aot-*.whl
export PYTHONPATH=$site GEMM_AOT_DISPATCH_CACHE=$(dirname "$site")/cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 560 python3 bench/python/front.py --out $OUT/python_front.json --rounds 6 2>&1 \
  | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" \
  | tail -40
