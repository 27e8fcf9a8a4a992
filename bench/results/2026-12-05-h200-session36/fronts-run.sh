# The fronts at the working tree packed by python/pack-device.sh (.device/fronts.tar.xz): the
# wheel's GPU tests, where the prefill's GPU time goes (bench/python/prefill_profile.py), the
# front's bench (host cost, row kernels, the invariance tax), and ncu on the f32 softmax.
# Usage (one device call): bash fronts-run.sh (.device/fronts holding the wheel alone also does)
[ -f .device/fronts.tar.xz ] && tar xJf .device/fronts.tar.xz -C .device
site=$(mktemp -d)/site
python3 -m pip install -q --no-deps --no-index --target "$site" .device/fronts/gemm_aot-*.whl
export PYTHONPATH=$site GEMM_AOT_DISPATCH_CACHE=$(dirname "$site")/cache GEMM_AOT_REQUIRE_CUDA=1
root=$(pwd)
(cd python/tests && timeout 120 python3 -m unittest test_gpu 2>&1 | tail -4)
cd bench/python
timeout 200 python3 prefill_profile.py --out "$OUT/prefill_profile.json" 2>&1 | grep -v Warning
timeout 200 python3 front.py --out "$OUT/python_front.json" 2>&1 | grep -v Warning | tail -40
cat > /tmp/sm.py <<'PY'
import torch, gemm_aot
x = torch.randn(131072, 512, device="cuda")
for _ in range(3): y = gemm_aot.softmax(x)
torch.cuda.synchronize()
PY
timeout 120 ncu --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:softmax -c 1 python3 /tmp/sm.py 2>&1 | grep -vE "^==PROF==|Warning" | grep -E "Registers|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|DRAM Throughput|Duration|Block Limit" 
