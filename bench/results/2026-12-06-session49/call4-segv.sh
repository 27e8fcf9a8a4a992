# One device call: where the native dispatch's in-place addmm_ crashes (call 3: a segfault in
# test_dispatch_cpu's `bias.addmm_(x, w)` on both wheels, on this machine's torch 2.11 and
# Python 3.12; the same test passed on a CPU machine with Python 3.11). The statement alone at
# torch's CPU key, then the CUDA key, with a native backtrace (bench/debug/segv_backtrace.c).
set -u
root=$PWD
mkdir -p .sideB/site && tar xJf .devx/new/site.tar.xz -C .sideB/site
c++ --version | head -1; python3 --version
cc -shared -fPIC -O1 -o /tmp/segv_backtrace.so bench/debug/segv_backtrace.c
export PYTHONPATH=$root/.sideB/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
cat > /tmp/inplace.py <<'PY'
import sys, torch, gemm_aot, gemm_aot.torch as mode
from gemm_aot import _dispatch
key = sys.argv[1]
dev = "cpu" if key == "CPU" else "cuda"
if key == "CPU":
    assert _dispatch.register(torch, mode._OVERRIDES, "CPU"), _dispatch.status()
    from gemm_aot import _native
    _native.dispatch_trace(True, launch=False)
else:
    mode.set_batch_invariant_mode(True, dispatch="native")
x, w = torch.randn(4, 6, device=dev).bfloat16(), torch.randn(6, 3, device=dev).bfloat16()
bias = torch.full((3,), 7.0, device=dev).bfloat16()
c = torch.randn(4, 3, device=dev).bfloat16()
for label, f in [("c.addmm_(x, w)", lambda: c.addmm_(x, w)),
                 ("torch.addmm(bias, x, w)", lambda: torch.addmm(bias, x, w)),
                 ("bias.addmm_(x, w)", lambda: bias.addmm_(x, w))]:
    print("==", key, label, flush=True)
    try:
        f()
        print("   returned", flush=True)
    except Exception as e:
        print("   raised", type(e).__name__, str(e).splitlines()[0][:200], flush=True)
PY
for key in CPU CUDA; do
  LD_PRELOAD=/tmp/segv_backtrace.so timeout 120 python3 /tmp/inplace.py $key 2>&1 \
    | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" | tail -45
  echo "exit ${PIPESTATUS[0]}"
done
