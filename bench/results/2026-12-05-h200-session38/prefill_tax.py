"""The 64 x 512 prefill's invariance tax on the shipped specs (no wgmma batch tile), the paths
interleaved: 3 rounds, each running torch's default, the native dispatch and the Python
overrides in a rotated order (3 warm-up forwards, then the median of 5); per path the median
over rounds."""
import statistics, sys
import torch
sys.path.insert(0, "bench/python")
import front  # noqa: E402
import gemm_aot.torch as mode

model = front.llama(4)
g = torch.Generator().manual_seed(1)
ids = torch.randint(0, 128256, (64, 512), generator=g).cuda()
paths = [None, "native", "python"]
got = {p: [] for p in paths}
with torch.no_grad():
    for r in range(3):
        for p in paths[r % 3:] + paths[:r % 3]:
            ctx = mode.batch_invariant(dispatch=p) if p else torch.no_grad()
            with ctx:
                got[p].append(front.timed(lambda: model(ids, use_cache=False), 5))
for p in paths:
    print(f"{p or 'torch':7s} rounds {['%.2f' % t for t in got[p]]} ms, median {statistics.median(got[p]):.2f} ms")
t = statistics.median(got[None])
for p in ("native", "python"):
    print(f"prefill tax, {p}: {statistics.median(got[p]) / t:.3f}x")
