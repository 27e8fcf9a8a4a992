"""Why the decode step under the native dispatch ran 1.5x torch's while the Python overrides
ran 1.08x (batch-run.log): the aten ops one decode step calls (by overload), the native
dispatch's served/declined counts a step, and the step's time on each path, python first."""
import collections, statistics, sys, time
import torch
from torch.utils._python_dispatch import TorchDispatchMode
sys.path.insert(0, "bench/python")
import front  # noqa: E402
import gemm_aot.torch as mode

model = front.llama(4)
g = torch.Generator().manual_seed(1)
prompt = torch.randint(0, 128256, (1, 512), generator=g).cuda()
step = torch.randint(0, 128256, (1, 1), generator=g).cuda()


class Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.seen = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen[str(func)] += 1
        return func(*args, **(kwargs or {}))


with torch.no_grad():
    for path in ("python", "native", None):
        ctx = mode.batch_invariant(dispatch=path) if path else torch.no_grad()
        with ctx:
            cache = model(prompt, use_cache=True).past_key_values
            for _ in range(3):
                model(step, past_key_values=cache, use_cache=True)
            torch.cuda.synchronize()
            before = mode.dispatch_counts()
            times = []
            for _ in range(20):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                t0 = time.perf_counter()
                s.record()
                model(step, past_key_values=cache, use_cache=True)
                e.record()
                host = (time.perf_counter() - t0) * 1e3
                e.synchronize()
                times.append((s.elapsed_time(e), host))
            after = mode.dispatch_counts()
            print(f"{path or 'torch'}: step {statistics.median(t for t, _ in times):.3f} ms (host {statistics.median(h for _, h in times):.3f} ms); native served {(after[0] - before[0]) / 20:.1f}, declined {(after[1] - before[1]) / 20:.1f} a step")
            if path == "native":
                ops = Ops()
                with ops:
                    model(step, past_key_values=cache, use_cache=True)
                for name, n in sorted(ops.seen.items()):
                    print(f"   {n:4d} {name}")
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
                    model(step, past_key_values=cache, use_cache=True)
                    torch.cuda.synchronize()
                print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25))
