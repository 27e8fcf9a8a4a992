#!/usr/bin/env python3
"""Time of each overlapped-fold tile over its plain twin (mid64ov / mid64, midov / mid,
mid2ov / mid2) at every (op, n, k, m) a tune's JSON measured, from call1/tune_chunked.json:
below 1 the overlapped fold is faster. Usage: python3 ov_pairs.py [JSON]"""
import json, math, sys
from collections import defaultdict

path = sys.argv[1] if len(sys.argv) > 1 else "call1/tune_chunked.json"
t = {}
for r in json.load(open(path))["measurements"]:
    t[(r["op"], r["n"], r["k"], r["m"], r["kernel"].split(".")[1])] = r["ms"]
pairs = [("mid64ov", "mid64"), ("midov", "mid"), ("mid2ov", "mid2")]
by = defaultdict(list)
print("op   n     k     m     " + "  ".join(f"{a}/{b}" for a, b in pairs))
for key in sorted({k[:4] for k in t}):
    cells = []
    for a, b in pairs:
        if (*key, a) in t and (*key, b) in t:
            q = t[(*key, a)] / t[(*key, b)]
            by[(a, key[3])].append(q)
            cells.append(f"{q:.3f}")
        else:
            cells.append("-")
    print(f"{key[0]}  {key[1]:<5} {key[2]:<5} {key[3]:<5} " + "  ".join(f"{c:>11}" for c in cells))
print("\ngeometric mean by m")
for a, _ in pairs:
    for m in sorted({k[1] for k in by if k[0] == a}):
        v = by[(a, m)]
        print(f"{a:8} m={m:<5} {math.exp(sum(map(math.log, v)) / len(v)):.3f} over {len(v)}")
