# One device call: the host cost of a call from C (bench/c/host_cost.c against libgemm_aot.so),
# then front.py (host cost from Python, row kernels, the invariance tax with the paths
# interleaved), shipped specs.
# Carried: .devx (bash bench/pack-subset.sh wheel ...: the wheel unpacked) and .device/c.tar.xz
# (c/libgemm_aot.so stripped, c/host_cost built against capi/include/gemm_aot.h).
set -u
bash .devx/unpack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== host cost from C"
mkdir -p .device && tar xJf .device/c.tar.xz -C .device
(cd .device/c && timeout 60 ./host_cost 2>&1 | tail -3)
echo "== the runtime's own share (gemm-aot bench --launch-overhead)"
timeout 60 .devx/bin/gemm-aot-bench --launch-overhead --commit 171ab60 --out $OUT/overhead 2>&1 | tail -12
echo "== front.py"
export PYTHONPATH=$PWD/.devx/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
timeout 480 python3 bench/python/front.py --out $OUT/python_front.json --rounds 6 2>&1 \
  | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" \
  | tail -40
