#!/usr/bin/env python3
"""Reads a tuner JSON (call 1's tune-exact.json.xz) and prints, for each m, every kernel's time
against the fastest at each (n, k), and the geometric mean of that ratio over the list: which
fmadecs tile a route should name, by m and by n (the grid is n / 32 blocks)."""
import json, lzma, math, sys
from collections import defaultdict

d = json.load(lzma.open(sys.argv[1]) if sys.argv[1].endswith(".xz") else open(sys.argv[1]))
t = defaultdict(dict)  # (m, n, k) -> kernel -> ms
for r in d["measurements"]:
    t[(r["m"], r["n"], r["k"])][r["kernel"]] = r["ms"]
kernels = sorted({k for v in t.values() for k in v if k.startswith("fmadec")})
short = [k.split(".")[-1] for k in kernels]
for m in sorted({m for m, _, _ in t}):
    print(f"\nm = {m}: time / fastest at (n, k); GB/s of the fastest")
    print(f"{'n':>7} {'k':>6} " + " ".join(f"{s:>8}" for s in short) + "   best     GB/s")
    logs = defaultdict(list)
    for (mm, n, k), v in sorted(t.items()):
        v = {kk: x for kk, x in v.items() if kk in kernels}
        if mm != m or len(v) < len(kernels):
            continue
        best = min(v.values())
        bk = min(v, key=v.get)
        for kk in kernels:
            logs[kk].append(math.log(v[kk] / best))
        gbs = 4.0 * n * k / (best * 1e-3) / 1e9
        print(f"{n:>7} {k:>6} " + " ".join(f"{v[kk] / best:8.3f}" for kk in kernels) + f"   {bk.split('.')[-1]:8} {gbs:6.0f}")
    print(f"{'geomean':>14} " + " ".join(f"{math.exp(sum(logs[kk]) / len(logs[kk])):8.3f}" for kk in kernels))
