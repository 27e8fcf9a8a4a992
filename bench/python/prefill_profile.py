"""Where the invariance tax of a prefill goes (issue 18): the GPU time of the front bench's
64 x 512 prefill (front.py's model: Llama-3-8B-shaped, 4 layers, eager attention, bf16) by
kernel, under torch's default and under the mode, side by side, grouped into what each kernel
does (GEMM, batched GEMM, row reductions, elementwise). Also the floor of a call from Python on
the machine: torch.empty and a trivial kernel (x.add_(0)).

    python3 bench/python/prefill_profile.py --out prefill_profile.json
"""
import argparse
import json
import re
import time
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

import gemm_aot.torch as mode
from front import llama

# What a kernel does, from its name: ours are gemm_<tier>_<family>_<op>... and
# convert_<tier>_<kind>_... (the row kernels among them: convert_sm90a_softmax_f32_f32); torch's
# and cuBLAS's by their usual names.
GROUPS = (
    ("gemm (ours)", r"^gemm_sm"),
    ("conversions and rows (ours)", r"^convert_"),
    ("gemm (cuBLAS)", r"(gemm|cutlass|sm90_xmma|nvjet|cublas)"),
    ("softmax (torch)", r"softmax"),
    ("reductions (torch)", r"reduce"),
    ("elementwise (torch)", r"elementwise|vectorized|unrolled|Elementwise"),
    ("copies (torch)", r"copy|Copy|cat"),
)


def group_of(name):
    for group, pattern in GROUPS:
        if re.search(pattern, name):
            return group
    return "other"


def gpu_time_by_kernel(model, ids, in_mode):
    ctx = mode.batch_invariant() if in_mode else torch.no_grad()
    with torch.no_grad(), ctx:
        for _ in range(2):
            model(ids, use_cache=False)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            model(ids, use_cache=False)
            torch.cuda.synchronize()
    kernels = defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = kernels[e.name]
            k[0] += e.time_range.elapsed_us() / 1e3
            k[1] += 1
    return {name: {"ms": ms, "launches": n} for name, (ms, n) in kernels.items()}


def floor(calls=4000):
    """Microseconds a call from Python of torch's cheapest CUDA calls on this host."""
    x = torch.zeros(1, 64, device="cuda")

    def per_call(fn):
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for i in range(calls):
            fn()
            if i % 200 == 199:
                torch.cuda.synchronize()
        return (time.perf_counter() - t) / calls * 1e6

    return {
        "torch.empty(1, 64) us": per_call(lambda: torch.empty(1, 64, device="cuda")),
        "x.add_(0) us (a trivial kernel)": per_call(lambda: x.add_(0)),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=4)
    a = p.parse_args()
    model = llama(a.layers)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 128256, (64, 512), generator=g).cuda()
    result = {"floor": floor(), "prefill": {}}
    for label, in_mode in (("torch", False), ("mode", True)):
        result["prefill"][label] = gpu_time_by_kernel(model, ids, in_mode)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print("host floor:", ", ".join("%s %.2f" % kv for kv in result["floor"].items()))
    for label, kernels in result["prefill"].items():
        total = sum(k["ms"] for k in kernels.values())
        groups = defaultdict(float)
        for name, k in kernels.items():
            groups[group_of(name)] += k["ms"]
        print("== %s: %.2f ms of GPU time" % (label, total))
        for gname, ms in sorted(groups.items(), key=lambda x: -x[1]):
            print("   %-22s %8.2f ms" % (gname, ms))
        for name, k in sorted(kernels.items(), key=lambda x: -x[1]["ms"])[:16]:
            print("   %8.3f ms %5d x  %s" % (k["ms"], k["launches"], name[:110]))


if __name__ == "__main__":
    main()
