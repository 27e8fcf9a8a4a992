"""How ``gemm_aot.mm`` picks the policy and the output path for torch tensors, without torch
or a GPU: a stand-in torch (``fake_torch/``) and a recording stand-in for the native call,
which serves the routes a test names and refuses the rest with ``no_route``, as a tier does.

- 16-bit inputs with ``policy=None`` run the tensor-core policy, named;
- an op whose 16-bit output that policy does not route (sm90a's ``tn``) is computed into f32
  by the tensor-core kernel and rounded once into the output, and remembered;
- a tier with no tensor-core route for the op gets its default policy, remembered;
- an explicit policy is never replaced; f32 inputs keep the default policy.

Runs in its own process (tests/python_front.rs): the stand-in must not meet test_no_gpu.py."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch"))

import torch  # noqa: E402  (the stand-in)

import gemm_aot  # noqa: E402
from gemm_aot import UnsupportedError, _native  # noqa: E402


class Policy(unittest.TestCase):
    def setUp(self):
        self.real = _native.gemm
        self.calls = []
        gemm_aot._F32_ONLY.clear()
        gemm_aot._NO_TENSOR_CORE.clear()
        self.x = torch.Tensor((33, 64), torch.bfloat16)
        self.w = torch.Tensor((64, 32), torch.bfloat16)
        self.xt = torch.Tensor((64, 33), torch.bfloat16).t()  # stored [k, m]: tn

    def tearDown(self):
        _native.gemm = self.real

    def serve(self, *routes):
        """The native call serving (policy, op, ab, c) of `routes` (policy None: the tier's
        default), refusing the rest."""

        def gemm(device, stream, op, m, n, k, ab, c, *args, policy=None, **kw):
            self.calls.append((op, ab, c, policy))
            if (policy, op, ab, c) not in routes:
                raise UnsupportedError("no_route", f"no route {policy} {op} {ab}->{c}")
            return {}

        _native.gemm = gemm

    def test_sm90a_like_tier(self):
        self.serve(("tensor-core", "nn", "bf16", "bf16"), ("tensor-core", "tn", "bf16", "f32"))
        gemm_aot.mm(self.x, self.w)
        self.assertEqual(self.calls, [("nn", "bf16", "bf16", "tensor-core")])
        self.calls.clear()
        out = gemm_aot.mm(self.xt, self.w)
        self.assertEqual(self.calls, [("tn", "bf16", "bf16", "tensor-core"), ("tn", "bf16", "f32", "tensor-core")])
        self.assertIsNotNone(out.copied_from, "the f32 result was not rounded into the output")
        self.calls.clear()
        gemm_aot.mm(self.xt, self.w)
        self.assertEqual(self.calls, [("tn", "bf16", "f32", "tensor-core")], "the f32-only op was not remembered")

    def test_tier_without_tensor_core_routes(self):
        self.serve((None, "nn", "bf16", "bf16"), (None, "tn", "bf16", "bf16"))
        gemm_aot.mm(self.x, self.w)
        self.assertEqual(self.calls[-1], ("nn", "bf16", "bf16", None))
        self.calls.clear()
        gemm_aot.mm(self.x, self.w)
        self.assertEqual(self.calls, [("nn", "bf16", "bf16", None)], "the tier's lack was not remembered")
        gemm_aot.mm(self.xt, self.w)
        self.assertEqual(self.calls[-1], ("tn", "bf16", "bf16", None))

    def test_an_explicit_policy_is_kept(self):
        self.serve((None, "nn", "bf16", "bf16"))
        with self.assertRaises(UnsupportedError):
            gemm_aot.mm(self.x, self.w, policy="tensor-core")
        self.assertTrue(all(c[3] == "tensor-core" for c in self.calls), self.calls)

    def test_f32_inputs_keep_the_default(self):
        self.serve((None, "nn", "f32", "f32"))
        gemm_aot.mm(torch.Tensor((3, 4), torch.float32), torch.Tensor((4, 5), torch.float32))
        self.assertEqual(self.calls, [("nn", "f32", "f32", None)])


if __name__ == "__main__":
    unittest.main()
