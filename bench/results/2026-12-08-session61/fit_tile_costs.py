#!/usr/bin/env python3
"""The wave model's tile costs (`tile_ps_per_k` in specs/sm90a.toml) from `gemm-aot tune` JSON.

A persistent kernel runs its work units (tiles; with clusters along m, a cluster's tiles) in
rounds of as many as run at once (132 SMs, one CTA each for these tiles); the model's time is
rounds x tile_ps_per_k x k. For each kernel the cost is the median, over every (n, k, m) the
tuner timed, of ms / (rounds x k). Then, on a second JSON (another day and card), it compares
the kernel the model picks with the fastest timed one and with the tier's generic route, per m.

  python3 fit_tile_costs.py [--op=nt] [--check-op=nt] FIT.json [CHECK.json ...]   (JSON may be .xz;
  nn by default; --check-op checks another op with the costs fitted on --op, as the runtime does)
"""
import collections, json, lzma, math, statistics, sys

SMS = 132
OP = "nn"  # the op whose times fit the costs
CHECK_OP = None  # the op of the check JSONs (default: OP); sm90a ships the NN costs for NT too
MARGIN = 0.02  # gemm_core::WAVE_FIT_MARGIN_PERCENT
# the kernels routes' wave_fit names (the clustered tiles stay the tuner's alone: with them the
# model's picks were 1-1.5% slower on the check JSONs)
WAVE_FIT = ["tcwide.mid", "tcwide.mid64", "tcwide.mid2", "tcwide.wide", "tcwide.pp256",
            "tcwide.pp192", "tcwide.pp128", "tcwide.sq192", "tcwide.mid192", "tcwide.mid2n192"]
# tile m, n, cluster along m (the tcwide tiles of sm90a.toml)
TILES = {
    "tcwide.mid": (64, 128, 1), "tcwide.mid64": (64, 64, 1), "tcwide.mid2": (128, 128, 1),
    "tcwide.wide": (128, 256, 1), "tcwide.pp256": (64, 256, 1), "tcwide.pp192": (64, 192, 1),
    "tcwide.pp128": (64, 128, 1), "tcwide.sq192": (192, 192, 1), "tcwide.mid192": (64, 192, 1),
    "tcwide.mid2n192": (128, 192, 1), "tcwide.widec2": (128, 256, 2),
    "tcwide.sq192c2": (192, 192, 2), "tcwide.pp256c2": (64, 256, 2),
}


def load(path, op=None):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    meas = collections.defaultdict(dict)
    for x in d["measurements"]:
        if x["kernel"] in TILES and x["op"] == (op or OP):
            meas[(x["n"], x["k"], x["m"])][x["kernel"]] = x["ms"]
    return d.get("provenance", {}).get("device", "?"), meas


def rounds(kernel, m, n):
    tm, tn, cx = TILES[kernel]
    return math.ceil(math.ceil(m / (tm * cx)) * math.ceil(n / tn) / (SMS // cx))


def route(m, n):
    """sm90a's generic tensor-core routes above 128 rows before wave_fit (outside the chunked
    regions and the tuned (n, k))."""
    if m <= 256 and n <= 4096:
        return "tcwide.mid"
    if m <= 1024:
        return "tcwide.mid2" if n > 1024 else "tcwide.mid"
    return "tcwide.mid2" if n <= 8191 else "tcwide.wide"


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v))


def main():
    global OP, CHECK_OP
    while sys.argv[1].startswith("--"):
        key, _, val = sys.argv.pop(1)[2:].partition("=")
        if key == "op":
            OP = val
        elif key == "check-op":
            CHECK_OP = val
    device, fit = load(sys.argv[1])
    per = collections.defaultdict(list)
    for (n, k, m), v in fit.items():
        for kern, ms in v.items():
            per[kern].append(ms * 1e9 / (rounds(kern, m, n) * k))  # ps per k per round
    cost = {kern: round(statistics.median(v)) for kern, v in per.items()}
    print(f"fit on {sys.argv[1]} ({device}): tile_ps_per_k, median over (n, k, m); spread")
    for kern in sorted(cost, key=lambda x: cost[x]):
        v = per[kern]
        cv = statistics.pstdev(v) / statistics.mean(v)
        print(f"  {kern:18} {cost[kern]:6d}  cv {cv:.3f}  ({len(v)} shapes)")
    for path in sys.argv[2:]:
        device, check = load(path, CHECK_OP)
        print(f"check on {path} ({device}): time / the fastest timed kernel's, geometric mean")
        for m in sorted({m for (_, _, m) in check}):
            if m < 129:
                continue
            rr, mr, worse = [], [], []
            for (n, k, mm), v in check.items():
                if mm != m or route(m, n) not in v:
                    continue
                best = min(v.values())
                cands = [c for c in WAVE_FIT if c in v and c in cost]
                # the runtime's rule (gemm-core wave_fit.rs): another kernel only 2% sooner
                own = route(m, n)
                t = lambda c: rounds(c, m, n) * cost[c]
                other = min((c for c in cands if c != own), key=t, default=own)
                pick = other if t(other) <= (1 - MARGIN) * t(own) else own
                rr.append(v[route(m, n)] / best)
                mr.append(v[pick] / best)
                if v[pick] > 1.03 * v[route(m, n)]:
                    worse.append(f"{n}x{k} {pick} {v[pick] / v[route(m, n)]:.2f}")
            if rr:
                print(f"  m = {m:5d}: {len(rr)} (n, k); generic route {gm(rr):.3f}, wave model {gm(mr):.3f}, worst {max(mr):.2f}; >3% slower than the route: {worse or 'none'}")


main()
