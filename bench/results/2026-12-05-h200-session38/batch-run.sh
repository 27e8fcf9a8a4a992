# Session 38's copy of ../2026-12-05-h200-session37/batch-run.sh, timeouts fitted to one 600 s call, test_gpu verbose.
# The wgmma batch kernel (tcwide.batch: 3-D maps) on the GPU, one device call: the runtime's
# strided-batch tests (bench/pack-subset.sh gpu_raw), attention's products through the wheel
# (bench/python/bmm.py: bits, then time against torch.bmm), the wheel's GPU tests, the fronts'
# bench (the invariance tax), memcheck of the batch with a shared B.
# Usage: bash batch-run.sh   (.devx/bins.tar.xz and .device/fronts/<wheel> carried)
set -u
root=$(pwd)
bash .devx/unpack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu_raw strided batches"
(cd runtime && timeout 100 "$root/.devx/bin/gpu_raw" --ignored --test-threads 1 strided_batch --nocapture 2>&1 | grep -vE "^\s*$" | tail -40)
site=$(mktemp -d)/site
python3 -m pip install -q --no-deps --no-index --target "$site" .device/fronts/gemm_aot-*.whl
export PYTHONPATH=$site GEMM_AOT_DISPATCH_CACHE=$(dirname "$site")/cache GEMM_AOT_REQUIRE_CUDA=1
echo "== bmm.py"
timeout 90 python3 bench/python/bmm.py --out "$OUT/bmm.json" 2>&1 | grep -v Warning
echo "== test_gpu"
(cd python/tests && timeout 150 python3 -m unittest -v test_gpu 2>&1 | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert" | tail -60)
echo "== front.py"
(cd bench/python && timeout 190 python3 front.py --out "$OUT/python_front.json" 2>&1 | grep -v Warning | tail -30)
echo "== memcheck: a strided batch with a shared B"
(cd runtime && timeout 50 compute-sanitizer --tool memcheck "$root/.devx/bin/gpu_raw" --ignored a_strided_batch_gives_each_entry 2>&1 | tail -4)
