"""Diagnostics for the fronts (issue 18): layouts' bits, the host cost's profile, the calls a
forward makes under the mode, and a prefill's GPU time by kernel."""
import cProfile, io, pstats, sys, time, json
import torch, transformers
import gemm_aot, gemm_aot.torch as mode
from gemm_aot import _native

def same(x, y):
    v = lambda t: t.contiguous().view(torch.int16 if t.element_size() == 2 else torch.int32)
    return torch.equal(v(x), v(y))

print("== layouts: 33x1536x1024 bf16")
g = torch.Generator(device="cuda").manual_seed(3)
x = torch.randn(33, 1024, generator=g, device="cuda").bfloat16()
w = torch.randn(1536, 1024, generator=g, device="cuda").bfloat16()
B = w.t().contiguous()
xt40 = torch.zeros(1024, 40, device="cuda", dtype=torch.bfloat16); xt40[:, :33] = x.t()
variants = {"nn": (x, B), "nt": (x, w.t()), "tn ld33": (x.t().contiguous().t(), B),
            "tn ld40": (xt40[:, :33].t(), B)}
for od in (torch.float32, torch.bfloat16):
    outs = {}
    for name, (a, b) in variants.items():
        try:
            outs[name] = gemm_aot.mm(a, b, out=torch.full((33, 1536), float("nan"), device="cuda", dtype=od))
        except Exception as e:
            print(od, name, "raised", type(e).__name__, e)
    for name, o in outs.items():
        d = (o.float() - outs["nn"].float()).abs()
        print(od, name, "same bits as nn:", same(o, outs["nn"]), "max |diff|", d.max().item(), "differing", int((d > 0).sum()))
nn32 = gemm_aot.mm(x, B, out=torch.empty(33, 1536, device="cuda"))
nn16 = gemm_aot.mm(x, B)
print("nn bf16 output = nn f32 output rounded by torch:", same(nn16, nn32.bfloat16()))

print("== host cost profile: 20000 calls of gemm_aot.mm(1x64 @ 64x64)")
a = torch.randn(1, 64, device="cuda", dtype=torch.bfloat16)
b = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
o = torch.empty(1, 64, device="cuda", dtype=torch.bfloat16)
for _ in range(500): gemm_aot.mm(a, b, out=o)
torch.cuda.synchronize()
pr = cProfile.Profile(); pr.enable()
for i in range(20000):
    gemm_aot.mm(a, b, out=o)
    if i % 200 == 0: torch.cuda.synchronize()
pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18); print(s.getvalue())
def per_call(fn, n=4000):
    for _ in range(200): fn()
    torch.cuda.synchronize(); t = time.perf_counter()
    for i in range(n):
        fn()
        if i % 200 == 199: torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6
stream = torch.cuda.current_stream().cuda_stream
raw = lambda: _native.gemm(0, stream, "nn", 1, 64, 64, "bf16", "bf16", a.data_ptr(), 64, b.data_ptr(), 64, o.data_ptr(), 64)
print("us per call: gemm_aot.mm %.2f, _native.gemm alone %.2f, torch.mm %.2f, torch.empty %.2f, empty kernel (x.add_(0)) %.2f" % (
    per_call(lambda: gemm_aot.mm(a, b, out=o)), per_call(raw), per_call(lambda: torch.mm(a, b, out=o)),
    per_call(lambda: torch.empty(1, 64, device="cuda")), per_call(lambda: o.add_(0))))
with mode.batch_invariant():
    # torch.mm without out= (the mode leaves mm.out to cuBLAS, as documented).
    print("us per call under the mode: torch.mm %.2f, F.linear %.2f" % (
        per_call(lambda: torch.mm(a, b)), per_call(lambda: torch.nn.functional.linear(a, b))))

print("== calls a forward makes under the mode (Llama-3-8B-shaped, 2 layers)")
config = transformers.LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
    num_hidden_layers=2, num_attention_heads=32, num_key_value_heads=8, attn_implementation="eager")
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.LlamaForCausalLM(config).to(torch.bfloat16).eval()
calls = []
orig_gemm, orig_rows = _native.gemm, _native.rows
def counting_gemm(*args, **kw):
    count = kw.get("count", 1)
    r = orig_gemm(*args, **kw)
    # A batch that ran as one batched launch returns that launch (grid z = its entries);
    # one run entry by entry returns its last entry's.
    z = r.get("grid", (0, 0, 0))[2]
    launches = -(-count // 65535) if count > 1 and z == min(count, 65535) else count
    calls.append(("gemm", args[2], args[3], args[4], args[5], count, launches))
    return r
def counting_rows(*args, **kw):
    calls.append(("rows", args[2], args[3], args[4]))
    return orig_rows(*args, **kw)
# The native fast path (python/src/torch_fast.rs, rows_fast.rs): one launch a call (a batch
# goes to the tier's batch kernel); a declined call (None) is counted by the Python path's.
orig_fast_mm, orig_fast_rows = _native.torch_mm, _native.torch_rows
def counting_fast_mm(a, b, out=None, bias=None, batched=False):
    r = orig_fast_mm(a, b, out, bias, batched)
    if r is not None:
        count = a.shape[0] if batched else 1
        op = "tn" if a.stride(-2) == 1 and a.shape[-1] > 1 else "nt" if b.stride(-2) == 1 and b.shape[-1] > 1 else "nn"
        calls.append(("gemm (fast)", op, a.shape[-2], b.shape[-1], a.shape[-1], count, -(-count // 65535)))
    return r
def counting_fast_rows(op, x, dtype=None, keepdim=False):
    r = orig_fast_rows(op, x, dtype, keepdim)
    if r is not None:
        calls.append(("rows (fast)", op, str(x.dtype), str(r.dtype)))
    return r
_native.gemm, _native.rows = counting_gemm, counting_rows
_native.torch_mm, _native.torch_rows = counting_fast_mm, counting_fast_rows
ids = torch.randint(0, 128256, (1, 64), device="cuda")
with torch.no_grad(), mode.batch_invariant():
    cache = model(ids, use_cache=True).past_key_values
    calls.clear()
    model(ids[:, :1], past_key_values=cache, use_cache=True)
_native.gemm, _native.rows = orig_gemm, orig_rows
_native.torch_mm, _native.torch_rows = orig_fast_mm, orig_fast_rows
from collections import Counter
gemms = [c for c in calls if c[0].startswith("gemm")]
print("decode step: %d native calls, %d GEMM entries, %d GEMM launches" % (
    len(calls), sum(c[-2] for c in gemms), sum(c[-1] for c in gemms)))
for c, n in Counter(calls).most_common(20): print("  ", n, "x", c)

print("== a 8x512 prefill's GPU time by kernel, torch default vs the mode")
ids = torch.randint(0, 128256, (8, 512), device="cuda")
from torch.profiler import profile, ProfilerActivity
for label, ctx in (("torch", None), ("mode", mode.batch_invariant)):
    with torch.no_grad():
        cm = ctx() if ctx else torch.no_grad()
        with cm:
            for _ in range(2): model(ids, use_cache=False)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                model(ids, use_cache=False); torch.cuda.synchronize()
    print("--", label)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=14, max_name_column_width=70))
