"""Attention's batched products through ``gemm_aot.bmm`` against torch.bmm (cuBLAS), in one
process on a GPU (writes JSON): Q K^T (nt) and P V (nn) of a Llama-3-8B-shaped model (32 heads,
head_dim 128, bf16) at a 64 x 512 prefill and at batch-1 decode steps, CUDA events, median of
``--reps`` (inputs rotated over copies that together outgrow L2); also torch.bmm itself under
the batch-invariant mode (what attention's matmul runs). Before timing, each shape's
bits are checked: every entry of the batch against ``gemm_aot.mm`` on that entry alone (the
route's own kernel), and rows against the same rows computed in a batch of one query.

    python bench/python/bmm.py --out bench-out/bmm.json
"""

import argparse
import json
import statistics

import torch

import gemm_aot
import gemm_aot.torch as mode

HEADS, HEAD_DIM = 32, 128


def shapes():
    """(name, op, entries, m, n, k): the prefill's (64 sequences x 32 heads, 512 tokens) and a
    decode step's (32 heads, one query, a KV cache of `ctx` tokens)."""
    out = [
        ("prefill q k^T", "nt", 64 * HEADS, 512, 512, HEAD_DIM),
        ("prefill p v", "nn", 64 * HEADS, 512, HEAD_DIM, 512),
    ]
    for ctx in (512, 4096):
        out.append((f"decode q k^T, ctx {ctx}", "nt", HEADS, 1, ctx, HEAD_DIM))
        out.append((f"decode p v, ctx {ctx}", "nn", HEADS, 1, HEAD_DIM, ctx))
    return out


def operands(op, entries, m, n, k, copies):
    """`copies` sets of (A, B) as attention holds them: A [entries, m, k]; B [entries, k, n]
    for nn, K^T's view of [entries, n, k] for nt."""
    sets = []
    for _ in range(copies):
        a = torch.randn(entries, m, k, device="cuda", dtype=torch.bfloat16)
        if op == "nt":
            b = torch.randn(entries, n, k, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        else:
            b = torch.randn(entries, k, n, device="cuda", dtype=torch.bfloat16)
        sets.append((a, b))
    return sets


def bits_ok(a, b):
    """Every entry (up to 64 spread over the batch) against gemm_aot.mm on it alone, and the
    first rows against a batch of those rows alone."""
    out = gemm_aot.bmm(a, b)
    entries = a.shape[0]
    for e in sorted(set(range(0, entries, max(1, entries // 64))) | {entries - 1}):
        one = gemm_aot.mm(a[e], b[e])
        if not torch.equal(one.view(torch.int16), out[e].view(torch.int16)):
            return False, f"entry {e} differs from its own mm"
    rows = min(3, a.shape[1])
    few = gemm_aot.bmm(a[:, :rows].contiguous(), b)
    if not torch.equal(few.view(torch.int16), out[:, :rows].view(torch.int16)):
        return False, f"rows 0..{rows} differ when computed alone"
    return True, "every checked entry its own mm's bits; rows alone the same bits"


def timed(fn, sets, reps):
    for a, b in sets[:2]:
        fn(a, b)
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        a, b = sets[i % len(sets)]
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(a, b)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "shapes": []}
    for name, op, entries, m, n, k in shapes():
        size = entries * (m * k + k * n) * 2
        copies = max(2, min(8, -(-3 * l2 // size)))
        sets = operands(op, entries, m, n, k, copies)
        ok, why = bits_ok(*sets[0])
        torch_us = timed(torch.bmm, sets, args.reps)
        ours_us = timed(gemm_aot.bmm, sets, args.reps)
        # torch.bmm itself under the batch-invariant mode (its native dispatch), as attention's
        # matmul reaches it.
        mode.set_batch_invariant_mode(True)
        try:
            mode_us = timed(torch.bmm, sets, args.reps)
        finally:
            mode.set_batch_invariant_mode(False)
        flops = 2 * entries * m * n * k
        row = {
            "name": name,
            "op": op,
            "entries": entries,
            "m": m,
            "n": n,
            "k": k,
            "torch_us": torch_us,
            "ours_us": ours_us,
            "torch_bmm_under_mode_us": mode_us,
            "ratio": torch_us / ours_us,
            "ours_tflops": flops / ours_us / 1e6,
            "bits_ok": ok,
            "bits": why,
        }
        result["shapes"].append(row)
        print(
            f"{name:28s} {op} {entries}x{m}x{n}x{k}: torch {torch_us:8.1f} us, ours {ours_us:8.1f} us,"
            f" under the mode {mode_us:8.1f} us, ratio {row['ratio']:.2f},"
            f" bits {'ok' if ok else 'DIFFER'} ({why})",
            flush=True,
        )
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
