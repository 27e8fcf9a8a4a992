"""The refined TF32 decode routes' projection in README.md here (not a measurement): call 2's
bench rows at m <= 32, each whose kernel the current routes change scaled by the ratio of the
two kernels' times in call 1's tuner run at that (n, k) and m (m = 17's for m = 32).
Run from the repository root after `cargo build --release -p gemm-codegen --bin gemm-aot`."""
import json, lzma, math, re, subprocess
from collections import defaultdict

HERE = "bench/results/2026-12-06-session52"
tune = json.load(lzma.open(f"{HERE}/call1-8c80899-h100/decode-tune.json.xz"))
times = defaultdict(dict)
for t in tune["measurements"]:
    if t.get("ms"):
        times[(t["n"], t["k"], t["m"])][t["kernel"]] = t["ms"]
bench = json.load(open(f"{HERE}/call2-8c80899-h100/tf32/2026-12-06-nvidia-h100-80gb-hbm3-8c80899-shapes.json"))
regime = {(s["n"], s["k"]): s["regime"] for s in bench["shapes"]}
NAME = re.compile(r"gemm_sm90a_([a-z0-9]+)_nn_f32_f32_f32_([a-z0-9]+)_m")


def short(full):
    m = NAME.search(full or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def routed(m, n, k):
    out = subprocess.run(["./target/release/gemm-aot", "explain", "--tier", "sm90a", "--policy", "tensor-core",
                          "--op", "nn", "--dtype", "f32", "-m", str(m), "-n", str(n), "-k", str(k)],
                         capture_output=True, text=True, check=True).stdout
    return short(out)


groups, every, changed = defaultdict(list), [], 0
for r in bench["rows"]:
    m, n, k = r["m"], r["n"], r["k"]
    ratio = r["cublas_ms"] / r["ours_ms"]
    if m <= 32:
        old, new = short(r.get("kernel")), routed(m, n, k)
        at = times.get((n, k, m if m <= 16 else 17), {})
        if old != new and old in at and new in at:
            ratio *= at[old] / at[new]
            changed += 1
    bucket = "<= 16" if m <= 16 else ("32-512" if m <= 512 else ">= 1024")
    groups[(regime[(n, k)], bucket)].append(ratio)
    every.append(ratio)
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print(f"{changed} rows change kernel; geometric mean over {len(every)} rows {geo(every):.3f}")
for key in sorted(groups):
    print(f"  {key[0]:12s} {key[1]:8s} {len(groups[key]):3d} rows {geo(groups[key]):.3f}")
