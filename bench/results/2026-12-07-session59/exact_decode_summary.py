#!/usr/bin/env python3
"""Summarises an exact bench log over the model list (ratio = cuBLAS pedantic SGEMM time / ours):
per m, the rows, geometric mean, the worst and how many reach 0.90 (the issue's target at m <= 16)."""
import math, re, sys
from collections import defaultdict

rows = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 10 and f[0] == "f32" and re.fullmatch(r"[0-9.]+", f[8]):
        rows[int(f[1])].append((float(f[8]), int(f[2]), int(f[3]), f[9].split("_")[3] + "." + f[9].split("_")[-2]))
for m, r in sorted(rows.items()):
    g = math.exp(sum(math.log(x[0]) for x in r) / len(r))
    worst = sorted(r)[:3]
    met = sum(x[0] >= 0.90 for x in r)
    al = [x for x in r if x[1] % 8 == 0 and x[2] % 8 == 0]
    ga = math.exp(sum(math.log(x[0]) for x in al) / len(al))
    print(f"m = {m:5}: {len(r)} rows, geometric mean {g:.3f}, {met} at >= 0.90; aligned (n, k multiples of 8) "
          f"{len(al)} rows, {ga:.3f}, {sum(x[0] >= 0.90 for x in al)} at >= 0.90, worst {min(al)[0]:.2f} at {min(al)[1]} x {min(al)[2]}; worst of all "
          + ", ".join(f"{x[0]:.2f} at {x[1]} x {x[2]} ({x[3]})" for x in worst))
