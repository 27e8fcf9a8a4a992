#!/usr/bin/env python3
"""Wave fit on against off: two `gemm-aot bench` JSONs of the same rows (the second run with
--no-wave-fit), per m: geometric means of the ratio to cuBLAS on each side, of our time off /
on (> 1: the wave model's kernels are faster), and the rows where the kernel differs.

  python3 ab_summary.py ON.json OFF.json
"""
import json, lzma, math, sys, collections


def load(p):
    with (lzma.open if p.endswith(".xz") else open)(p, "rt") as f:
        return {(r["op"], r["dtype"], r["m"], r["n"], r["k"]): r for r in json.load(f)["rows"]}


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


on, off = load(sys.argv[1]), load(sys.argv[2])
by_m = collections.defaultdict(list)
for key, a in on.items():
    b = off.get(key)
    if b:
        by_m[key[2]].append((key, a, b))
short = lambda k: k.split("_")[-2] if k else "-"
print("m      rows  changed  ratio on  ratio off  ours off/on (changed rows)")
for m in sorted(by_m):
    rows = by_m[m]
    ch = [(k, a, b) for k, a, b in rows if a["kernel"] != b["kernel"]]
    print(f"{m:5d} {len(rows):5d} {len(ch):8d}  {gm([a['ratio_to_cublas'] for _, a, _ in rows]):8.3f}  {gm([b['ratio_to_cublas'] for _, _, b in rows]):9.3f}  "
          f"{gm([b['ours_ms'] / a['ours_ms'] for _, a, b in ch]):.3f}")
    for k, a, b in ch:
        print(f"        {k[3]}x{k[4]}: {short(b['kernel'])} {b['ours_ms']*1e3:.1f} us -> {short(a['kernel'])} {a['ours_ms']*1e3:.1f} us "
              f"({b['ours_ms'] / a['ours_ms']:.3f}x); ratio {b['ratio_to_cublas']:.3f} -> {a['ratio_to_cublas']:.3f}")
allr = [(a, b) for rows in by_m.values() for _, a, b in rows]
print(f"all {len(allr)} rows: ratio on {gm([a['ratio_to_cublas'] for a, _ in allr]):.3f}, off {gm([b['ratio_to_cublas'] for _, b in allr]):.3f}; "
      f"ours off/on {gm([b['ours_ms'] / a['ours_ms'] for a, b in allr]):.3f}")
