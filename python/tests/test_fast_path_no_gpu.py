"""The native fast path for torch calls (python/src/torch_fast.rs) makes the call the Python
path makes, or declines it: without torch or a GPU, over the stand-in torch (``fake_torch/``).
For each layout, the plan the native side reads off the tensors (``_native.torch_plan``) is
compared with the arguments the Python path passes to a recording stand-in for the native
GEMM; where the Python path refuses, copies or takes another route, the native side must
decline (``None``), so the Python path keeps every message and special case.

Runs in its own process (tests/python_front.rs), twice: with the tensors read attribute by
attribute, and (``GEMM_AOT_FAST_PATH_READS=dlpack``) through one DLPack export each, as plain
torch tensors are read; the stand-in must not meet test_no_gpu.py."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch"))

import torch  # noqa: E402  (the stand-in)

import gemm_aot  # noqa: E402
from gemm_aot import GemmError, _native  # noqa: E402

T = torch.Tensor
bf16, f16, f32, f64 = torch.bfloat16, torch.float16, torch.float32, torch.float64


class CpuTensor(T):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.device, self.is_cuda = torch.device("cpu", None), False

    def get_device(self):
        return -1


class FastPath(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The stand-in torch lacks _cuda_getDevice, so the package keeps its Python path;
        # the native side is registered here with the stand-in's dtypes.
        assert gemm_aot._fastpath.on() is False
        cls.dlpack = os.environ.get("GEMM_AOT_FAST_PATH_READS") == "dlpack"
        if cls.dlpack:
            # Plain tensors (exactly the stand-in's Tensor) through one export; a subclass
            # such as CpuTensor by its attributes.
            _native.torch_register(bf16, f16, f32, torch._C._cuda_getCurrentRawStream,
                                   lambda: 0, 0, torch._C._to_dlpack, [T], T.is_neg)
        else:
            _native.torch_register(bf16, f16, f32, torch._C._cuda_getCurrentRawStream, lambda: 0)

    def python_call(self, a, b, out=None, bias=None, batched=False):
        """The arguments the Python path gives the native GEMM, in torch_plan's form, or the
        exception it raises."""
        seen = []

        def gemm(device, stream, op, m, n, k, ab, c, a_, lda, b_, ldb, c_, ldc, bias=None,
                 beta=0.0, policy=None, mode=None, count=1, strides=(0, 0, 0)):
            seen.append((op, [m, n, k, int(bias is not None)], (ab, c), [lda, ldb, ldc], count,
                         tuple(strides[:2]), policy))
            return {}

        real, _native.gemm = _native.gemm, gemm
        try:
            gemm_aot._torch_gemm(a, b, out, bias, 0.0, None, None, batched)
        except GemmError as e:
            return e
        finally:
            _native.gemm = real
        self.assertEqual(len(seen), 1, seen)
        return seen[0]

    def same(self, a, b, out=None, bias=None, batched=False):
        plan = _native.torch_plan(a, b, out, bias, batched)
        self.assertIsNotNone(plan, "the native side declined a common call")
        self.assertEqual(plan, self.python_call(a, b, out, bias, batched))
        return plan

    def declines(self, a, b, out=None, bias=None, batched=False):
        self.assertIsNone(_native.torch_plan(a, b, out, bias, batched))

    def test_layouts_read_as_the_python_path_reads_them(self):
        x, w = T((33, 64), bf16), T((96, 64), bf16)
        self.assertEqual(self.same(x, w.t())[0], "nt")
        self.assertEqual(self.same(x, T((64, 96), bf16))[0], "nn")
        self.assertEqual(self.same(T((64, 33), bf16).t(), T((64, 96), bf16))[0], "tn")
        # Row-sliced operands keep their leading dimension; a one-row matrix its width.
        sliced = T((5, 64), f16, stride=(200, 1))
        self.assertEqual(self.same(sliced, T((64, 8), f16))[3][0], 200)
        self.same(T((1, 64), bf16, stride=(7, 1)), w.t())
        # f32 inputs keep the tier's default policy; 16-bit ones name tensor cores.
        self.assertEqual(self.same(T((4, 8), f32), T((8, 3), f32))[6], None)
        self.assertEqual(self.same(x, w.t())[6], "tensor-core")

    def test_the_reads_taken(self):
        """Registered with the export, plain tensors are read through it (and only they)."""
        before = torch._C.exports
        self.same(T((33, 64), bf16), T((64, 96), bf16))
        self.assertEqual(torch._C.exports - before, 2 if self.dlpack else 0)
        before = torch._C.exports
        self.declines(CpuTensor((33, 64), bf16), CpuTensor((64, 96), bf16))
        self.assertEqual(torch._C.exports - before, 0, "a subclass was exported")
        # Where the export's normalized strides could reach the plan (an empty dimension, a
        # batch of one), the tensor is read by its attributes: the plans still agree.
        self.same(T((33, 0), bf16, stride=(1, 33)), T((0, 96), bf16))
        self.same(T((1, 8, 64), bf16, stride=(4096, 64, 1)), T((1, 64, 16), bf16), batched=True)

    def test_only_torchs_own_tensors_skip_the_bounds_queries(self):
        """A call whose operands were all read off torch's own tensors (exports of plain
        tensors) registers them without the driver's bounds queries; anything read by its
        attributes (a subclass, the attribute reads, the export's fallbacks) keeps them."""
        x, w = T((33, 64), bf16), T((64, 96), bf16)

        class Sub(T):
            pass

        in_storage = _native.torch_plan_in_storage
        self.assertEqual(in_storage(x, w), self.dlpack)
        self.assertEqual(in_storage(x, w, out=T((33, 96), bf16)), self.dlpack)
        self.assertEqual(in_storage(x, w, bias=T((96,), bf16)), self.dlpack)
        self.assertFalse(in_storage(Sub((33, 64), bf16), w))
        self.assertFalse(in_storage(x, w, out=Sub((33, 96), bf16)))
        self.assertFalse(in_storage(x, w, bias=Sub((96,), bf16)))
        # A batch of one is read by its attributes.
        self.assertFalse(in_storage(T((1, 8, 64), bf16), T((1, 64, 16), bf16), batched=True))
        self.assertEqual(in_storage(T((2, 8, 64), bf16), T((2, 64, 16), bf16), batched=True),
                         self.dlpack)
        self.assertIsNone(in_storage(x, T((65, 96), bf16)), "a declined call has no plan")

    def test_negated_views_are_declined(self):
        x, w = T((33, 64), bf16), T((96, 64), bf16)
        self.declines(T((33, 64), bf16, neg=True), w.t())
        self.declines(x, w.t(), out=T((33, 96), bf16, neg=True))

    def test_outputs_and_bias(self):
        x, w = T((33, 64), bf16), T((96, 64), bf16)
        self.same(x, w.t(), out=T((33, 96), f32))
        self.same(x, w.t(), out=T((33, 96), bf16, stride=(128, 1)))
        self.same(x, w.t(), bias=T((96,), bf16))
        self.assertEqual(self.same(x, w.t(), bias=T((96,), bf16))[1][3], 1)

    def test_batches(self):
        a, b = T((6, 8, 64), bf16), T((6, 64, 16), bf16)
        plan = self.same(a, b, batched=True)
        self.assertEqual((plan[4], plan[5]), (6, (8 * 64, 64 * 16)))
        # Attention's scores: k transposed in each matrix (nt), a padded batch stride.
        k = T((6, 16, 64), bf16, stride=(2048, 64, 1))
        q = T((6, 8, 64), bf16)
        self.assertEqual(self.same(q, k_t(k), batched=True)[0], "nt")

    def test_what_the_python_path_refuses_or_reroutes_is_declined(self):
        x, w = T((33, 64), bf16), T((96, 64), bf16)
        cases = {
            "both transposed (the Python path copies a)": (T((64, 33), bf16).t(), w),
            "k does not match": (x, T((65, 96), bf16)),
            "dtypes differ": (x, T((64, 96), f16)),
            "a dtype with no kernels": (T((33, 64), f64), T((64, 96), f64)),
            "a CPU tensor": (CpuTensor((33, 64), bf16), T((64, 96), bf16)),
            "no contiguous dimension": (T((33, 64), bf16, stride=(128, 2)), T((64, 96), bf16)),
            "a negative stride": (T((33, 64), bf16, stride=(-64, 1)), T((64, 96), bf16)),
            "a 3-D operand to mm": (T((2, 33, 64), bf16), T((64, 96), bf16)),
        }
        for name, (a, b) in cases.items():
            with self.subTest(name):
                self.declines(a, b)
        outs = {
            "a transposed output": T((96, 33), bf16).t(),
            "an output of the wrong shape": T((33, 95), bf16),
        }
        for name, out in outs.items():
            with self.subTest(name):
                self.declines(x, w.t(), out=out)
                self.assertIsInstance(self.python_call(x, w.t(), out=out), GemmError)
        biases = {
            "a bias of another dtype": T((96,), f32),
            "a bias of the wrong length": T((95,), bf16),
            "a strided bias": T((96,), bf16, stride=(2,)),
            "a 2-D bias": T((1, 96), bf16),
        }
        for name, bias in biases.items():
            with self.subTest(name):
                self.declines(x, w.t(), bias=bias)
        self.declines(T((6, 8, 64), bf16), T((5, 64, 16), bf16), batched=True)
        self.declines(T((0, 64), bf16), T((64, 96), bf16))


def k_t(k):
    """``k.transpose(1, 2)`` of a 3-D stand-in."""
    s = k._stride
    return T((k.shape[0], k.shape[2], k.shape[1]), k.dtype, stride=(s[0], s[2], s[1]), address=k._address)


if __name__ == "__main__":
    unittest.main()
