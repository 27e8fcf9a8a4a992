"""The decode step's invariance tax with the paths interleaved: 4 rounds, each running torch's
default, the native dispatch and the Python overrides in a rotated order, each on a fresh
512-token cache (3 warm-up steps, then the median of 20 timed steps); per path the median over
rounds. front.py times each path once in a fixed order, which a host-bound step does not bear."""
import statistics, sys
import torch
sys.path.insert(0, "bench/python")
import front  # noqa: E402
import gemm_aot.torch as mode

model = front.llama(4)
g = torch.Generator().manual_seed(1)
prompt = torch.randint(0, 128256, (1, 512), generator=g).cuda()
step = torch.randint(0, 128256, (1, 1), generator=g).cuda()
paths = [None, "native", "python"]
got = {p: [] for p in paths}
with torch.no_grad():
    for r in range(4):
        for p in paths[r % 3:] + paths[:r % 3]:
            ctx = mode.batch_invariant(dispatch=p) if p else torch.no_grad()
            with ctx:
                cache = model(prompt, use_cache=True).past_key_values
                got[p].append(front.timed(lambda: model(step, past_key_values=cache, use_cache=True), 20))
for p in paths:
    print(f"{p or 'torch':7s} rounds {['%.3f' % t for t in got[p]]} ms, median {statistics.median(got[p]):.3f} ms")
t = statistics.median(got[None])
for p in ("native", "python"):
    print(f"decode tax, {p}: {statistics.median(got[p]) / t:.3f}x")
