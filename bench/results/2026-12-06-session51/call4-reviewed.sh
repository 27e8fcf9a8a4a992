#!/usr/bin/env bash
# Session 51, call 4: the tensor reader after review (the wheel of the commit given), alone:
#  1. a fresh process that imports gemm_aot.torch before CUDA is up (the reader's stream then
#     checked on the first side-stream call), then calls on the default and a side stream;
#  2. the wheel's tests (test_gpu with GEMM_AOT_REQUIRE_CUDA=1, test_dispatch_cpu);
#  3. the host cost (the Python call's pieces, from C) on this host.
#   COMMIT=<wheel's commit> bash call4-reviewed.sh     (carry [".devx"]; .devx/new's wheel and C library)
set -u
root=$PWD
d=$root/.sideB; mkdir -p $d/site $d/cc
tar xJf .devx/new/site.tar.xz -C $d/site; tar xJf .devx/new/c.tar.xz -C $d/cc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
quiet() { grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel"; }
echo "=== 1. the reader installed before CUDA is up"
PYTHONPATH=$d/site timeout 120 python3 - <<'PY' 2>&1 | quiet
import torch, gemm_aot, gemm_aot.torch
from gemm_aot import _fastpath, _native
print("after import:", _fastpath.reader, _native.torch_reader_installed(), "cuda up:", torch.cuda.is_initialized())
a = torch.randn(8, 64, device="cuda", dtype=torch.bfloat16); b = torch.randn(64, 32, device="cuda", dtype=torch.bfloat16)
o = gemm_aot.mm(a, b); o = gemm_aot.mm(a, b)
print("after default-stream calls:", _native.torch_reader_installed())
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    p = gemm_aot.mm(a, b)
s.synchronize()
print("after a side-stream call:", _native.torch_reader_installed(), "same bits:", torch.equal(o, p))
PY
echo "=== 2. the wheel's tests"
for t in test_gpu test_dispatch_cpu; do
  (cd python/tests && PYTHONPATH=$d/site GEMM_AOT_REQUIRE_CUDA=1 timeout 200 python3 -m unittest -v $t 2>&1 \
    | quiet | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert|skipped" | tail -40)
done
echo "=== 3. host cost"
(cd $d/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1)
mkdir -p $OUT/call4
PYTHONPATH=$d/site timeout 150 python3 bench/python/host_breakdown.py --out $OUT/call4/host_breakdown.json 2>&1 | quiet | tail -30
