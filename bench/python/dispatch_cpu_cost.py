"""The mode's dispatch cost on a machine without a GPU: the wall time of ``F.linear(x, w,
bias)`` (1x64 by 64x64, bf16, CPU tensors) through the native dispatch registered at torch's
CPU key (each call planned by the native module and recorded, not launched), against a
Python override that only allocates its output (a lower bound of the Python path's dispatch)
and torch's own kernels. A proxy for what the native dispatch saves per call; the GPU machine's
figures come from bench/python/front.py.

    python bench/python/dispatch_cpu_cost.py
"""

import platform
import statistics
import time
import warnings

import torch

import gemm_aot
import gemm_aot._dispatch as dispatch
import gemm_aot._native as native
import gemm_aot.torch as mode


def per_call(fn, calls, rounds=7):
    """Median over rounds of microseconds a call."""
    for _ in range(min(calls, 2000)):
        fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def main():
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 64, generator=g).bfloat16()
    w = torch.randn(64, 64, generator=g).bfloat16()
    bias = torch.randn(64, generator=g).bfloat16()
    linear = torch.nn.functional.linear
    rows = {}
    rows["torch's F.linear (its CPU kernel computes)"] = per_call(lambda: linear(x, w, bias), 20000)
    rows["x.add_(0)"] = per_call(lambda: x.add_(0), 20000)

    def allocate_only(inp, m1, m2, *, beta=1, alpha=1):
        return m1.new_empty((m1.shape[0], m2.shape[1]))

    library = torch.library.Library("aten", "IMPL")
    library.impl("addmm", allocate_only, "CPU")
    rows["F.linear, a Python override that only allocates"] = per_call(lambda: linear(x, w, bias), 20000)
    library._destroy()
    if not dispatch.register(torch, mode._OVERRIDES, "CPU"):
        raise SystemExit(dispatch.status())
    native.dispatch_trace(True, launch=False)
    rows["F.linear, the native dispatch (planned, recorded)"] = per_call(lambda: linear(x, w, bias), 2000)
    traced = native.dispatch_trace(False)
    dispatch.unregister()
    assert traced and traced[0][0] == "nt", traced[:1]
    print(f"{platform.processor() or platform.machine()}, {platform.python_version()}, "
          f"torch {torch.__version__}, gemm_aot {gemm_aot.__version__}, 1 thread, median of 7 rounds")
    for name, us in rows.items():
        print(f"{us:7.2f} us  {name}")


if __name__ == "__main__":
    main()
