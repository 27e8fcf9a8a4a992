"""Where a Python call's host time goes (writes JSON): the pieces of ``gemm_aot.mm(a, b,
out=o)`` on a 1 x 64 x 64 bf16 product, each timed alone on this host, beside torch's own
calls. ``front.py`` measures whole calls; this says which part of one to work on.

Each row is the median over rounds of the wall time a call (loops of 200 calls; the stream
drained between loops for rows that launch). Rows that launch nothing are the reads and the
planning the native fast path does before its launch.

    python bench/python/host_breakdown.py --out bench-out/host_breakdown.json
"""

import argparse
import json

import torch

import gemm_aot
from gemm_aot import _native
from host_timing import per_call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    a = torch.randn(1, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(1, 64, device="cuda", dtype=torch.bfloat16)
    gemm_aot.mm(a, b, out=out)  # registers torch with the fast path
    gemm_aot.mm(a, b, out=out)  # the first call that reads a stream checks the reader's
    from gemm_aot import _fastpath

    # The tensor reader (since session 51; older wheels have none).
    reader = getattr(_fastpath, "reader", "none in this wheel")
    in_use = _native.torch_reader_installed() if hasattr(_native, "torch_reader_installed") else None
    print(f"tensor reader: {reader}; (installed, stream in use): {in_use}", flush=True)
    stream = torch.cuda.current_stream().cuda_stream
    ptrs = (a.data_ptr(), b.data_ptr(), out.data_ptr())
    raw_stream = torch._C._cuda_getCurrentRawStream
    get_device = torch._C._cuda_getDevice
    to_dlpack = getattr(torch._C, "_to_dlpack", None)

    def reads(t):
        return (t.dtype, t.is_neg(), t.get_device(), t.shape, t.stride(), t.data_ptr())

    rows = [
        # Reads and planning (nothing launched).
        ("empty Python loop body", lambda: None, False),
        ("a native call, no arguments (_native.version)", _native.version, False),
        ("t.dtype", lambda: a.dtype, False),
        ("t.is_neg()", lambda: a.is_neg(), False),
        ("t.get_device()", lambda: a.get_device(), False),
        ("t.shape", lambda: a.shape, False),
        ("t.stride()", lambda: a.stride(), False),
        ("t.data_ptr()", lambda: a.data_ptr(), False),
        ("the six reads of one tensor, from Python", lambda: reads(a), False),
        ("torch._C._to_dlpack(t)", (lambda: to_dlpack(a)) if to_dlpack else None, False),
        ("torch._C._cuda_getDevice()", get_device, False),
        ("torch._C._cuda_getCurrentRawStream(0)", lambda: raw_stream(0), False),
        ("_native.torch_plan(a, b, out): the fast path's reads and plan",
         lambda: _native.torch_plan(a, b, out), False),
        # Whole calls (each launches one kernel).
        ("gemm_aot.mm(a, b, out=out)", lambda: gemm_aot.mm(a, b, out=out), True),
        ("_native.torch_mm(a, b, out): the fast path without the Python wrapper",
         lambda: _native.torch_mm(a, b, out, None, False), True),
        ("gemm_aot.mm(a, b): a new output", lambda: gemm_aot.mm(a, b), True),
        ("gemm_aot.gemm over raw pointers",
         lambda: gemm_aot.gemm(*ptrs, 1, 64, 64, dtype="bf16", out_dtype="bf16", stream=stream),
         True),
        ("_native.gemm over raw pointers, positional",
         lambda: _native.gemm(0, stream, "nn", 1, 64, 64, "bf16", "bf16", ptrs[0], 64, ptrs[1],
                              64, ptrs[2], 64, None, 0.0, None, None, 1, (0, 0, 0)), True),
        ("torch.mm(a, b, out=out)", lambda: torch.mm(a, b, out=out), True),
        ("out.add_(0): a trivial torch kernel", lambda: out.add_(0), True),
        ("torch.empty(1, 64) on the device",
         lambda: torch.empty(1, 64, device="cuda", dtype=torch.bfloat16), False),
    ]
    # torch's own calls under the batch-invariant mode, through its native dispatch (C++
    # kernels at torch's dispatcher, built on first use).
    import gemm_aot.torch as mode

    x = torch.randn(1, 1, 64, device="cuda", dtype=torch.bfloat16)
    w, bias = b.t().contiguous(), torch.randn(64, device="cuda", dtype=torch.bfloat16)
    linear = torch.nn.functional.linear
    moded = [
        ("torch.mm(a, b) under the mode", lambda: torch.mm(a, b)),
        ("F.linear(x, w, bias) under the mode", lambda: linear(x, w, bias)),
    ]
    result = {"card": torch.cuda.get_device_name(), "torch": torch.__version__,
              "gemm_aot": gemm_aot.__version__, "tensor_reader": reader,
              "reader_in_use": in_use, "rows": {}}
    for name, fn, launches in rows:
        if fn is None:
            result["rows"][name] = None
            continue
        us = per_call(fn, calls=4000, drain=launches)["us_per_call_median"]
        result["rows"][name] = us
        print(f"{us:8.3f} us  {name}", flush=True)
    try:
        mode.set_batch_invariant_mode(True, dispatch="native")
        for name, fn in moded:
            us = per_call(fn, calls=4000)["us_per_call_median"]
            result["rows"][name] = us
            print(f"{us:8.3f} us  {name}", flush=True)
    except RuntimeError as e:  # no native dispatch on this machine: said, not timed
        print(f"the mode's rows not timed: {e}")
    finally:
        mode.set_batch_invariant_mode(False)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
