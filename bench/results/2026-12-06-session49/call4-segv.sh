# One device call: where the native dispatch's in-place addmm_ crashes (call 3: a segfault in
# test_dispatch_cpu's `bias.addmm_(x, w)` on both wheels, on this machine's torch 2.11 and
# Python 3.12; the same test passed on a CPU machine with Python 3.11). The statement alone at
# torch's CPU key, then the CUDA key, with a native backtrace (bench/debug/segv_backtrace.c);
# before it an out= call whose out has the wrong dtype (another error the dispatch's code raises).
set -u
root=$PWD
mkdir -p .sideB/site && tar xJf .devx/new/site.tar.xz -C .sideB/site
c++ --version | head -1; python3 --version
cc -shared -fPIC -O1 -o /tmp/segv_backtrace.so bench/debug/segv_backtrace.c
export PYTHONPATH=$root/.sideB/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
cat > /tmp/inplace.py <<'PY'
import sys, torch, gemm_aot, gemm_aot.torch as mode
from gemm_aot import _dispatch
key, only = sys.argv[1], int(sys.argv[2])
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
wrong = torch.empty(4, 3, device=dev, dtype=torch.float16)
for label, f in [("torch.mm(x, w, out=<an f16 out>)", lambda: torch.mm(x, w, out=wrong)),
                 ("c.addmm_(x, w)", lambda: c.addmm_(x, w)),
                 ("torch.addmm(bias, x, w)", lambda: torch.addmm(bias, x, w)),
                 ("bias.addmm_(x, w)", lambda: bias.addmm_(x, w))][only:only + 1]:
    print("==", key, label, flush=True)
    try:
        f()
        print("   returned", flush=True)
    except Exception as e:
        print("   raised", type(e).__name__, str(e).splitlines()[0][:200], flush=True)
PY
# Each statement in its own process: a crash stops only its own.
for key in CPU CUDA; do
  for i in 0 1 2 3; do
    LD_PRELOAD=/tmp/segv_backtrace.so timeout 60 python3 /tmp/inplace.py $key $i 2>&1 \
      | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" | tail -30
    echo "exit ${PIPESTATUS[0]}"
  done
done
