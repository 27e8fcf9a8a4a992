"""The real client: Hugging Face transformers models nobody here wrote, built from a config
with random weights (no download), bf16, eager attention, an odd vocabulary (50257), GQA.
Under gemm_aot's batch-invariant mode:

- a prompt's logits are bitwise identical alone and inside a batch of 8 and of 33, and so
  are a decode step's on the KV cache (alone and in a batch of 8);
- greedy generation with the KV cache gives the same tokens alone and batched;
- a forward captured in a torch CUDA graph replays to the same bits;
- a training step through ``linear`` gives a sample the same gradients alone and in a batch
  (its input's gradient, and the weights' gradient of its own loss).

Both ways the mode reaches the kernels are run: its native dispatch (C++ kernels at torch's
dispatcher) and its Python overrides. Without the mode the same comparisons find differences (printed), which shows the test can
fail. Run on the GPU machine: ``python -m unittest -v test_real_client``."""

import os
import unittest

try:
    import torch
    import transformers
except ImportError:  # pragma: no cover
    torch = None

import gemm_aot

CUDA = torch is not None and torch.cuda.is_available()
if os.environ.get("GEMM_AOT_REQUIRE_CUDA") == "1" and not CUDA:
    # On the GPU machine a skip would read as a pass: bench/gpu-run.sh sets this.
    raise RuntimeError("GEMM_AOT_REQUIRE_CUDA=1, but torch, transformers and a CUDA device are not available")

SEQ = 24


def bits_equal(x, y):
    return x.shape == y.shape and torch.equal(x.view(torch.int16), y.view(torch.int16))


def build(kind):
    common = dict(
        vocab_size=50257,
        # Widths where a one-row GEMM has few output tiles for the SMs (cuBLAS then splits
        # K), so torch's default shows its differences at decode.
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=2,
        num_attention_heads=16,
        num_key_value_heads=4,
        max_position_embeddings=256,
        attn_implementation="eager",
    )
    torch.manual_seed(0)
    if kind == "llama":
        config = transformers.LlamaConfig(**common)
        model = transformers.LlamaForCausalLM(config)
    else:
        config = transformers.Qwen2Config(**common)
        model = transformers.Qwen2ForCausalLM(config)
    return model.to(device="cuda", dtype=torch.bfloat16).eval()


def prompts(batch, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 50257, (batch, SEQ), generator=g).cuda()


def comparisons(model):
    """Each check's outcome: name -> whether row 0 alone equals row 0 in the batch."""
    out = {}
    with torch.no_grad():
        others = prompts(33, 1)
        alone = model(others[:1]).logits[0]
        for b in (8, 33):
            out[f"logits alone = in a batch of {b}"] = bits_equal(alone, model(others[:b]).logits[0])
        # One decode step on a KV cache (one row a sequence): its logits alone and in a batch.
        step = others[:8, :1].clone()
        cache1 = model(others[:1], use_cache=True).past_key_values
        cache8 = model(others[:8], use_cache=True).past_key_values
        one_step = model(step[:1], past_key_values=cache1, use_cache=True).logits[0, -1]
        eight_step = model(step, past_key_values=cache8, use_cache=True).logits[0, -1]
        out["decode-step logits alone = in a batch of 8"] = bits_equal(one_step, eight_step)
        gen = dict(max_new_tokens=12, do_sample=False, use_cache=True, pad_token_id=0)
        one = model.generate(others[:1], **gen)[0]
        many = model.generate(others[:8], **gen)[0]
        out["greedy tokens alone = in a batch of 8"] = torch.equal(one, many)
        # A CUDA graph of a forward (static input), replayed. The causal mask is made before
        # capture and passed in 4-D (transformers then uses it as it is): building it inside
        # the model copies a CPU scalar, which capture forbids.
        static = others[:4].clone()
        low = torch.finfo(torch.bfloat16).min
        mask = torch.full((SEQ, SEQ), low, device="cuda", dtype=torch.bfloat16).triu(1)
        mask = mask[None, None].expand(static.shape[0], 1, SEQ, SEQ).contiguous()

        def forward():
            return model(static, attention_mask=mask, use_cache=False).logits

        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                forward()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            captured = forward()
        eager = forward().clone()
        g.replay()
        torch.cuda.synchronize()
        out["graph replay = eager forward"] = bits_equal(captured, eager)
    return out


def training(seed):
    """Gradients of sample 0 alone and in a batch of 16 (its loss only), through linear."""
    torch.manual_seed(seed)
    layers = torch.nn.Sequential(
        torch.nn.Linear(2048, 8192), torch.nn.SiLU(), torch.nn.Linear(8192, 2048)
    ).to(device="cuda", dtype=torch.bfloat16)
    x_all = torch.randn(16, 2048, device="cuda", dtype=torch.bfloat16)

    def grads(x):
        layers.zero_grad()
        x = x.clone().requires_grad_()
        y = layers(x)
        mask = torch.zeros(x.shape[0], 1, device="cuda", dtype=torch.float32)
        mask[0] = 1
        (y.float().square() * mask).sum().backward()
        return x.grad[0].clone(), [p.grad.clone() for p in layers.parameters()]

    gx1, gw1 = grads(x_all[:1])
    gx16, gw16 = grads(x_all)
    return {
        "input gradient alone = in a batch of 16": bits_equal(gx1, gx16),
        "weight gradients of its loss alone = in a batch of 16": all(
            bits_equal(a, b) for a, b in zip(gw1, gw16)
        ),
    }


@unittest.skipUnless(CUDA, "needs torch, transformers and a CUDA device")
class RealClient(unittest.TestCase):
    def setUp(self):
        import gemm_aot.torch as mode

        self.mode = mode

    def tearDown(self):
        self.mode.set_batch_invariant_mode(False)

    def run_all(self, kind):
        model = build(kind)
        results = comparisons(model)
        results.update(training(1))
        return results

    def check(self, kind):
        without = self.run_all(kind)
        # Both ways the mode reaches the kernels: its C++ kernels at torch's dispatcher
        # (built here against this torch) and its Python overrides.
        for path in ("native", "python"):
            with self.mode.batch_invariant(dispatch=path):
                self.assertEqual(self.mode.dispatch_path(), path)
                under = self.run_all(kind)
            for name in under:
                print(f"{kind}: {name}: mode ({path} dispatch) {under[name]}, torch's default {without[name]}")
            failed = [n for n, ok in under.items() if not ok]
            self.assertFalse(failed, f"{kind} under the mode, {path} dispatch: {failed}")
        self.assertFalse(all(without.values()), f"{kind}: without the mode nothing differed, so the test shows nothing")

    def test_llama(self):
        self.check("llama")

    def test_qwen2(self):
        self.check("qwen2")


if __name__ == "__main__":
    unittest.main()
