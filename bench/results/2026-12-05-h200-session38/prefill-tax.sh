# One device call: prefill_tax.py against the wheel in .device/fronts.
set -u
site=$(mktemp -d)/site
python3 -m pip install -q --no-deps --no-index --target "$site" .device/fronts/gemm_aot-*.whl
export PYTHONPATH=$site GEMM_AOT_DISPATCH_CACHE=$(dirname "$site")/cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 400 python3 bench/results/2026-12-05-h200-session38/prefill_tax.py 2>&1 | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel"
