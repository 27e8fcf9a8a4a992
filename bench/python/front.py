"""The Python front's costs, measured in one process on a GPU (writes JSON):

- host cost: the wall time of one ``gemm_aot.mm`` call (validation and launch, no GPU
  work to wait for: a 1 x 64 x 64 product, the stream drained every 200 calls), median of
  rounds, against torch.mm's own; and torch's own calls under the mode, through its native
  dispatch (C++ kernels at torch's dispatcher) and through its Python overrides;
- the invariance tax, end to end: a Llama-3-8B-shaped model (hidden 4096, 32 heads, 8 KV
  heads, MLP 14336, vocab 128256; ``--layers`` layers, random bf16 weights, eager
  attention), forward time under ``gemm_aot.torch``'s mode (either dispatch) against torch's default, at a
  batch-1 decode step (KV cache of ``--context`` tokens) and at a 64 x 512 prefill; the
  three paths interleaved in ``--rounds`` rounds of rotated order, CUDA events, the median
  of ``--reps`` a round and the median over rounds.

    python bench/python/front.py --out bench-out/python_front.json
"""

import argparse
import contextlib
import json
import statistics

import torch
import transformers

import gemm_aot
import gemm_aot.torch as mode
from host_timing import per_call


def host_cost(calls=2000, rounds=7):
    """Microseconds a call from Python, for gemm_aot's calls and torch's own: mm (the native
    fast path, and the Python path a named policy takes), softmax, and F.linear with torch's
    default and under the mode (a decode step's every projection)."""
    a = torch.randn(1, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(1, 64, device="cuda", dtype=torch.bfloat16)
    w, bias = b.t().contiguous(), torch.randn(64, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(1, 1, 64, device="cuda", dtype=torch.bfloat16)
    linear = torch.nn.functional.linear
    # The same product over raw addresses (no torch tensor to inspect), on torch's stream.
    ptrs = (a.data_ptr(), b.data_ptr(), out.data_ptr())
    stream = torch.cuda.current_stream().cuda_stream

    def raw():
        return gemm_aot.gemm(*ptrs, 1, 64, 64, dtype="bf16", out_dtype="bf16", stream=stream)
    # The mode's column: None (off), "native" (its C++ kernels at torch's dispatcher) or
    # "python" (its Python overrides).
    cases = (
        ("gemm_aot.mm", None, lambda: gemm_aot.mm(a, b, out=out)),
        ("gemm_aot.mm, Python path", None, lambda: gemm_aot.mm(a, b, out=out, policy="tensor-core")),
        ("gemm_aot.gemm, raw pointers", None, raw),
        ("torch.mm", None, lambda: torch.mm(a, b, out=out)),
        ("torch.mm, new output", None, lambda: torch.mm(a, b)),
        ("torch.mm under the mode", "native", lambda: torch.mm(a, b)),
        ("torch.mm under the mode, Python overrides", "python", lambda: torch.mm(a, b)),
        ("gemm_aot.softmax", None, lambda: gemm_aot.softmax(out)),
        ("torch.softmax", None, lambda: torch.softmax(out, -1)),
        ("torch.softmax under the mode", "native", lambda: torch.softmax(out, -1)),
        ("torch F.linear", None, lambda: linear(x, w, bias)),
        ("F.linear under the mode", "native", lambda: linear(x, w, bias)),
        ("F.linear under the mode, Python overrides", "python", lambda: linear(x, w, bias)),
    )
    result = {}
    for name, in_mode, fn in cases:
        try:
            mode.set_batch_invariant_mode(in_mode is not None, dispatch=in_mode)
        except RuntimeError as e:  # no native dispatch here: said, not timed
            result[name] = {"error": str(e)}
            continue
        try:
            before = mode.dispatch_counts()
            result[name] = per_call(fn, calls, rounds)
            after = mode.dispatch_counts()
            # What the native dispatch served and declined while timed (a silent decline to
            # the Python overrides would show here).
            result[name]["native_served"] = after[0] - before[0]
            result[name]["native_declined"] = after[1] - before[1]
        finally:
            mode.set_batch_invariant_mode(False)
    return result


def row_speed(reps=20):
    """GPU time of the row kernels against torch's own, per shape (CUDA events, median of
    ``reps``): attention's softmax over short rows (the warp path, up to 1024 columns) and long
    ones, RMSNorm's mean and a loss's log_softmax over a vocabulary."""
    g = torch.Generator(device="cuda").manual_seed(3)

    def x(rows, cols, dtype):
        return torch.randn(rows, cols, device="cuda", generator=g).to(dtype)

    cases = (
        ("softmax f32, 131072 x 512 (8x512 prefill, 32 heads)", x(131072, 512, torch.float32),
         lambda t: torch.softmax(t, -1), gemm_aot.softmax),
        ("softmax f32, 1048576 x 512 (64x512 prefill, 32 heads)", x(1048576, 512, torch.float32),
         lambda t: torch.softmax(t, -1), gemm_aot.softmax),
        ("softmax f32, 32768 x 1000", x(32768, 1000, torch.float32),
         lambda t: torch.softmax(t, -1), gemm_aot.softmax),
        ("softmax f32, 16384 x 4096", x(16384, 4096, torch.float32),
         lambda t: torch.softmax(t, -1), gemm_aot.softmax),
        ("softmax f32, 32 x 512 (a decode step's heads)", x(32, 512, torch.float32),
         lambda t: torch.softmax(t, -1), gemm_aot.softmax),
        ("mean bf16, 32768 x 4096 (RMSNorm)", x(32768, 4096, torch.bfloat16),
         lambda t: t.mean(-1, keepdim=True), lambda t: gemm_aot.mean(t, -1, keepdim=True)),
        ("log_softmax bf16 to f32, 512 x 128256", x(512, 128256, torch.bfloat16),
         lambda t: torch.log_softmax(t, -1, dtype=torch.float32),
         lambda t: gemm_aot.log_softmax(t, dtype=torch.float32)),
    )
    out = {}
    for name, t, theirs, ours in cases:
        row = {"torch_us": timed(lambda: theirs(t), reps) * 1e3, "ours_us": timed(lambda: ours(t), reps) * 1e3}
        row["ratio"] = row["torch_us"] / row["ours_us"]
        out[name] = row
    return out


def llama(layers):
    config = transformers.LlamaConfig(
        vocab_size=128256, hidden_size=4096, intermediate_size=14336,
        num_hidden_layers=layers, num_attention_heads=32, num_key_value_heads=8,
        max_position_embeddings=8192, attn_implementation="eager",
    )
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = transformers.LlamaForCausalLM(config).to(torch.bfloat16)
    return model.eval()


def timed(fn, reps):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


_nothing = contextlib.nullcontext


def tax(layers, context, reps, rounds):
    """Each shape's forward under torch's default, the native dispatch and the Python overrides,
    interleaved: `rounds` rounds, each running the three paths in a rotated order (a decode
    step is host-bound and drifts across a process, so a fixed order biases whichever path
    runs last); per path the median over rounds of each round's median of `reps`."""
    model = llama(layers)
    g = torch.Generator().manual_seed(1)
    prefill_ids = torch.randint(0, 128256, (64, 512), generator=g).cuda()
    prompt = torch.randint(0, 128256, (1, context), generator=g).cuda()
    step = torch.randint(0, 128256, (1, 1), generator=g).cuda()
    paths = (("torch_ms", None), ("mode_ms", "native"), ("mode_python_ms", "python"))
    rows = {}
    with torch.no_grad():
        for name in ("decode_step_batch1", "prefill_64x512"):
            per_round = {label: [] for label, _ in paths}
            errors = {}
            for r in range(rounds):
                for label, path in paths[r % 3:] + paths[:r % 3]:
                    if label in errors:
                        continue
                    try:
                        ctx = mode.batch_invariant(dispatch=path) if path else _nothing()
                        ctx.__enter__()
                    except RuntimeError as e:  # no native dispatch here
                        errors[label] = str(e)
                        continue
                    try:
                        if name == "prefill_64x512":
                            t = timed(lambda: model(prefill_ids, use_cache=False), reps)
                        else:
                            # A fresh cache of `context` tokens; each timed step appends one.
                            cache = model(prompt, use_cache=True).past_key_values
                            t = timed(lambda: model(step, past_key_values=cache, use_cache=True), reps)
                    finally:
                        ctx.__exit__(None, None, None)
                    per_round[label].append(t)
            ms = {label: statistics.median(v) if v else float("nan") for label, v in per_round.items()}
            rows[name] = dict(ms, rounds_ms=per_round, tax=ms["mode_ms"] / ms["torch_ms"] - 1,
                              tax_python=ms["mode_python_ms"] / ms["torch_ms"] - 1)
            if errors:
                rows[name]["errors"] = errors
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--context", type=int, default=512)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    result = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "gemm_aot": gemm_aot.__version__,
        "tier": gemm_aot.tier(0),
        "host_cost": host_cost(),
        "row_kernels": row_speed(),
        "dispatch": mode._dispatch.status(),
        "invariance_tax": tax(a.layers, a.context, a.reps, a.rounds),
        "model": f"Llama-3-8B-shaped, {a.layers} layers, eager attention, bf16",
        "timing": f"paths interleaved: {a.rounds} rounds in rotated order, median of {a.reps} a round",
    }
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    print(table(result))


def table(result):
    """The README's rows: the invariance tax and the host cost, against their targets."""
    lines = [
        f"{result['model']}, {result['device']}, torch {result['torch']}, tier {result['tier']}",
        "",
        "| measure | torch default | batch-invariant mode | ratio | Python overrides | target |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, row in result["invariance_tax"].items():
        lines.append(
            f"| {name} | {row['torch_ms']:.3f} ms | {row['mode_ms']:.3f} ms | "
            f"{1 + row['tax']:.3f}x | {1 + row['tax_python']:.3f}x | <= 1.10x |"
        )
    host = result["host_cost"]

    def us(name):
        return host[name].get("us_per_call_median", float("nan"))

    lines.append(
        f"| host cost of one call (1x64x64) | torch.mm {us('torch.mm'):.2f} us | "
        f"gemm_aot.mm {us('gemm_aot.mm'):.2f} us | | | <= 5 us |"
    )
    for label, torch_name, mode_name in (
        ("torch.mm from Python (1x64 by 64x64)", "torch.mm, new output", "torch.mm under the mode"),
        ("F.linear from Python (1x64 by 64x64, bias)", "torch F.linear", "F.linear under the mode"),
    ):
        lines.append(
            f"| {label} | {us(torch_name):.2f} us | {us(mode_name):.2f} us | "
            f"{us(mode_name) / us(torch_name):.2f}x | {us(mode_name + ', Python overrides'):.2f} us | |"
        )
    lines += ["", "| row kernel | torch | ours | torch / ours |", "| --- | --- | --- | --- |"]
    for name, row in result.get("row_kernels", {}).items():
        lines.append(f"| {name} | {row['torch_us']:.1f} us | {row['ours_us']:.1f} us | {row['ratio']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
