#!/usr/bin/env python3
"""From a tuner JSON of the exact decode tiles (call 1's tune-exact.json.xz): for each timed m,
the best rule of at most three n ranges (n <= t1, t1 < n <= t2, n > t2), each one kernel, by the
geometric mean over the list's (n, k) of time / the fastest tile's time; against the routed one."""
import itertools, json, lzma, math, sys
from collections import defaultdict

d = json.load(lzma.open(sys.argv[1]))
routed = {1: "fmadecs.dec4", 4: "fmadecs.dec4", 8: "fmadecs.dec16", 16: "fmadecs.dec16"}
t = defaultdict(dict)
for r in d["measurements"]:
    if r["kernel"].startswith("fmadec"):
        t[(r["m"], r["n"], r["k"])][r["kernel"]] = r["ms"]
for m in sorted(routed):
    rows = {(n, k): v for (mm, n, k), v in t.items() if mm == m}
    kernels = sorted(set.intersection(*(set(v) for v in rows.values())))
    best = {nk: min(v.values()) for nk, v in rows.items()}
    ns = sorted({n for n, _ in rows})
    def score(rule):
        s = 0.0
        for (n, k), v in rows.items():
            kk = rule[0][1] if n <= rule[0][0] else rule[1][1] if n <= rule[1][0] else rule[2][1]
            s += math.log(v[kk] / best[(n, k)])
        return math.exp(s / len(rows))
    base = score(((0, routed[m]), (0, routed[m]), (0, routed[m])))
    top = sorted(kernels, key=lambda kk: score(((0, kk),) * 3))[:7]
    found = min(
        (score(((t1, a), (t2, b), (0, c))), t1, a, t2, b, c)
        for a, b, c in itertools.product(top, repeat=3)
        for t1 in ns for t2 in ns if t2 >= t1
    )
    g, t1, a, t2, b, c = found
    print(f"m = {m}: routed {routed[m]} {base:.3f} of the fastest (geomean over {len(rows)} (n, k)); "
          f"rule n <= {t1}: {a}, n <= {t2}: {b}, above: {c} -> {g:.3f}")
    for kk in top:
        print(f"   {kk:24} alone {score(((0, kk),) * 3):.3f}")
