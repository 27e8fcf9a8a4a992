#!/usr/bin/env python3
"""The tile order's group in the tuner's times: each tile walking groups of 4, 16 or 32 tile rows
against the same tile with the shipped 8, over every (op, n, k, m) both were timed at.

    python3 groups_vs_8.py > groups_vs_8.txt

Reads call1-12d3da7/tune_{nn,nt,tn}.json.xz and call2-d8f888b/tune_{nn,nt}.json.xz (one H100
each); prints per call and op the geometric mean, range and count of time(group 8) /
time(group g): above 1, the other group is faster.
"""
import json
import lzma
import math
import pathlib
from collections import defaultdict

PAIRS = {"wideg4": "wide", "wideg16": "wide", "wideg32": "wide", "mid2g4": "mid2",
         "mid2g16": "mid2", "sq192g4": "sq192", "sq192g16": "sq192", "widec2g4": "widec2"}
here = pathlib.Path(__file__).parent
for call, ops in (("call1-12d3da7", "nn nt tn"), ("call2-d8f888b", "nn nt")):
    for op in ops.split():
        d = json.loads(lzma.open(here / call / f"tune_{op}.json.xz").read())
        times = defaultdict(dict)
        for r in d["measurements"]:
            if r.get("ms") is not None:
                times[(r["n"], r["k"], r["m"])][r["kernel"].split(".")[-1]] = r["ms"]
        for other, base in PAIRS.items():
            v = [t[base] / t[other] for t in times.values() if other in t and base in t]
            if v:
                g = math.exp(sum(map(math.log, v)) / len(v))
                print(f"{call} {op} {other:9} vs {base:6}: {g:.3f} ({min(v):.2f}-{max(v):.2f}) over {len(v)}")
