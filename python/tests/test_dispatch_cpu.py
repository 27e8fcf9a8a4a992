"""The mode's native dispatch (``gemm_aot/csrc/dispatch.cpp``) with real torch and no GPU:
built against the torch installed, registered at torch's CPU key (where the native module
records each planned call and launches nothing), driven by torch's own ops. It checks the
C++ kernels read every layout into the call the fast path plans, hand everything else to the
Python overrides (whose exceptions reach the caller unchanged), leave torch's kernels in place
when removed, and that a failed build leaves the mode on its Python overrides.

Needs torch and a C++ compiler (skipped without them: CI has no torch). Run here and on the
GPU machine: ``python -m unittest -v test_dispatch_cpu`` from this folder, against an
installed wheel."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

try:
    import torch
except ImportError:  # pragma: no cover - CI has no torch
    torch = None

import gemm_aot
from gemm_aot import _dispatch, _native

import aten_table

COMPILER = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
READY = torch is not None and COMPILER is not None
_CACHE = None


def setUpModule():
    global _CACHE
    if READY and not os.environ.get("GEMM_AOT_DISPATCH_CACHE"):
        _CACHE = tempfile.mkdtemp(prefix="gemm-aot-dispatch-")
        os.environ["GEMM_AOT_DISPATCH_CACHE"] = _CACHE


def tearDownModule():
    if _CACHE:
        shutil.rmtree(_CACHE, ignore_errors=True)


def plan(op, m, n, k, ab, lda, ldb, ldc, bias=False, count=1, strides=(0, 0)):
    """The trace's tuple for a GEMM (as _native.torch_plan gives it)."""
    return (op, [m, n, k, int(bias)], (ab, ab), [lda, ldb, ldc], count, strides,
            None if ab == "f32" else "tensor-core")


@unittest.skipUnless(READY, "needs torch and a C++ compiler")
class NativeDispatchOnCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import gemm_aot.torch as mode

        cls.mode = mode
        if not _dispatch.register(torch, mode._OVERRIDES, "CPU"):
            raise RuntimeError(_dispatch.status())

    @classmethod
    def tearDownClass(cls):
        _dispatch.unregister()
        _native.dispatch_trace(False)

    def setUp(self):
        _native.dispatch_trace(True, launch=False)
        # The trace also covers CUDA calls (recorded, not launched): never left on.
        self.addCleanup(_native.dispatch_trace, False)

    def traced(self, fn):
        _native.dispatch_trace(True, launch=False)
        fn()
        return _native.dispatch_trace(True, launch=False)

    def registered(self):
        """The aten overloads the native dispatch registers (its source's library->impl)."""
        import re

        with open(_dispatch._SOURCE) as f:
            return set(re.findall(r'library->impl\("([^"]+)"', f.read()))

    def test_every_override_has_a_native_kernel_and_a_fallback_op(self):
        functional = {op for op in self.registered() if not op.endswith(("out", "_"))}
        self.assertEqual(set(self.mode._OVERRIDES), functional)
        self.assertEqual(set(self.mode._OVERRIDES), set(_dispatch.FALLBACK_SCHEMAS))

    def test_every_overload_torch_dispatches_by_backend_is_served(self):
        """Each overload of an op the mode serves, or of its in-place form, that has a CUDA
        kernel of its own (out=, out_dtype, their out= forms: torch.compile's generated code
        calls the out= ones; addmm_, ...) is
        registered natively, so none of them reaches cuBLAS unseen; the composite ones
        (mv.out, dot.out, ...) call these. Each out= overload has its route to torch's own
        kernel, gemm_aot_torch::<op>_<overload>, with the same arguments."""
        registered = self.registered()
        for name in aten_table.overloads_with_kernels(torch, self.mode._OVERRIDES, "CUDA"):
            self.assertIn(name, registered, f"aten::{name} has a CUDA kernel the mode does not replace")
        for name in sorted(n for n in registered if n.endswith("out") and n != "mv.out"):
            with self.subTest(name):
                op, overload = name.split(".")
                route = getattr(torch.ops.gemm_aot_torch, f"{op}_{overload}").default._schema
                aten = getattr(getattr(torch.ops.aten, op), overload)._schema
                self.assertEqual([a.name for a in route.arguments], [a.name for a in aten.arguments])

    def test_gemm_layouts_are_planned_as_the_fast_path_plans_them(self):
        """Each call's recorded plan is the one written here, and the one the fast path
        (``_native.torch_plan``, which the Python overrides' calls go through) makes for the
        GEMM the op is."""
        self.assertTrue(gemm_aot._fastpath.on())
        g = torch.Generator().manual_seed(0)

        def r(*s, dtype=torch.bfloat16):
            return torch.randn(*s, generator=g).to(dtype)

        a, b, w, bias, v = r(5, 7), r(7, 3), r(3, 7), r(3), r(7)
        big, x3 = r(20, 9), r(2, 4, 7)
        h1, h2 = r(2, 5, 7, dtype=torch.half), r(2, 7, 4, dtype=torch.half)
        b1, b2 = r(2, 5, 7), r(2, 4, 7)
        f = torch.nn.functional
        # (name, the call, the GEMM it is: a, b, bias, batched; the plan expected)
        cases = [
            ("nn", lambda: torch.mm(a, b), (a, b, None, False), plan("nn", 5, 3, 7, "bf16", 7, 3, 3)),
            ("tn", lambda: torch.mm(a.t().contiguous().t(), b), (a.t().contiguous().t(), b, None, False),
             plan("tn", 5, 3, 7, "bf16", 5, 3, 3)),
            ("nt", lambda: torch.mm(a, w.t()), (a, w.t(), None, False), plan("nt", 5, 3, 7, "bf16", 7, 7, 3)),
            ("row slice", lambda: torch.mm(big[5:10, 1:8], b), (big[5:10, 1:8], b, None, False),
             plan("nn", 5, 3, 7, "bf16", 9, 3, 3)),
            ("linear", lambda: f.linear(a, w, bias), (a, w.t(), bias, False),
             plan("nt", 5, 3, 7, "bf16", 7, 7, 3, bias=True)),
            ("linear 3-D", lambda: f.linear(x3, w, bias), (x3.reshape(8, 7), w.t(), bias, False),
             plan("nt", 8, 3, 7, "bf16", 7, 7, 3, bias=True)),
            ("f32", lambda: torch.mm(a.float(), b.float()), (a.float(), b.float(), None, False),
             plan("nn", 5, 3, 7, "f32", 7, 3, 3)),
            ("f16 bmm", lambda: torch.bmm(h1, h2), (h1, h2, None, True),
             plan("nn", 5, 4, 7, "f16", 7, 4, 4, count=2, strides=(35, 28))),
            ("bmm transposed", lambda: torch.bmm(b1, b2.transpose(1, 2)), (b1, b2.transpose(1, 2), None, True),
             plan("nt", 5, 4, 7, "bf16", 7, 7, 4, count=2, strides=(35, 28))),
            ("bmm expanded", lambda: torch.bmm(a.expand(3, 5, 7), b2[0].t().expand(3, 7, 4)),
             (a.expand(3, 5, 7), b2[0].t().expand(3, 7, 4), None, True),
             plan("nt", 5, 4, 7, "bf16", 7, 7, 4, count=3, strides=(0, 0))),
            ("mv", lambda: torch.mv(a, v), (a, v.unsqueeze(1), None, False), plan("nn", 5, 1, 7, "bf16", 7, 1, 1)),
            ("mv strided", lambda: torch.mv(a, big[:7, 0]), (a, big[:7, 0].unsqueeze(1), None, False),
             plan("nn", 5, 1, 7, "bf16", 7, 9, 1)),
            ("matmul 1 row", lambda: torch.matmul(a[:1], b), (a[:1], b, None, False), plan("nn", 1, 3, 7, "bf16", 7, 3, 3)),
            ("dot (matmul of two vectors)", lambda: torch.matmul(v, a[0]), (v.unsqueeze(0), a[0].unsqueeze(1), None, False),
             plan("nn", 1, 1, 7, "bf16", 7, 1, 1)),
            ("vdot, strided", lambda: torch.vdot(big[:7, 0], v), (big[:7, 0].unsqueeze(0), v.unsqueeze(1), None, False),
             plan("tn", 1, 1, 7, "bf16", 9, 1, 1)),
        ]
        for name, call, (ga, gb, gbias, batched), expected in cases:
            with self.subTest(name):
                self.assertEqual(self.traced(call), [expected])
                self.assertEqual(
                    _native.torch_plan(ga, gb, bias=gbias, batched=batched, host=True), expected)

    def test_the_output_is_what_torch_would_allocate(self):
        a, b = torch.randn(5, 7), torch.randn(7, 3)
        y = torch.mm(a, b)
        self.assertEqual((tuple(y.shape), y.dtype, y.is_contiguous()), ((5, 3), torch.float32, True))
        y = torch.bmm(a.expand(4, 5, 7), b.expand(4, 7, 3))
        self.assertEqual(tuple(y.shape), (4, 5, 3))
        self.assertEqual(tuple(torch.mv(a, b[:, 0]).shape), (5,))
        self.assertEqual(tuple(a.mean(-1).shape), (5,))
        self.assertEqual(tuple(a.mean(-1, keepdim=True).shape), (5, 1))
        self.assertEqual(torch.softmax(a.bfloat16(), -1, dtype=torch.float32).dtype, torch.float32)

    def test_row_ops_are_planned_along_the_last_dimension(self):
        x = torch.randn(2, 3, 64)
        cases = [
            ("softmax", lambda: torch.softmax(x, -1), ("rows", "softmax", "f32", "f32", [6, 64, 64, 64])),
            ("softmax, dim = nd - 1", lambda: torch.softmax(x, 2), ("rows", "softmax", "f32", "f32", [6, 64, 64, 64])),
            ("log_softmax bf16", lambda: torch.log_softmax(x.bfloat16(), -1),
             ("rows", "log_softmax", "bf16", "bf16", [6, 64, 64, 64])),
            ("half_to_float", lambda: torch._softmax(x.half(), -1, True),
             ("rows", "softmax", "f16", "f32", [6, 64, 64, 64])),
            ("mean keepdim", lambda: x.pow(2).mean(-1, keepdim=True), ("rows", "mean", "f32", "f32", [6, 64, 64, 1])),
            ("mean of a slice", lambda: x[:, 1:2].mean(-1), ("rows", "mean", "f32", "f32", [2, 64, 192, 1])),
            ("mean into f32", lambda: x.bfloat16().mean(-1, dtype=torch.float32),
             ("rows", "mean", "bf16", "f32", [6, 64, 64, 1])),
        ]
        for name, call, expected in cases:
            with self.subTest(name):
                self.assertEqual(self.traced(call), [expected])

    def test_what_it_declines_reaches_the_python_overrides(self):
        a = torch.randn(4, 4)
        declined = [
            ("mm, both transposed", "aten::mm", lambda: torch.mm(a.t(), a.t())),
            ("mm of int32", "aten::mm", lambda: torch.mm(a.int(), a.int())),
            ("mm of float64", "aten::mm", lambda: torch.mm(a.double(), a.double())),
            ("addmm with beta 2", "aten::addmm", lambda: torch.addmm(a, a, a, beta=2)),
            ("addmm with a 2-D input", "aten::addmm", lambda: torch.addmm(a, a, a)),
            ("softmax over dim 0", "aten::_softmax", lambda: torch.softmax(a, 0)),
            ("log_softmax over dim 0", "aten::_log_softmax", lambda: torch.log_softmax(a, 0)),
            ("mean over two dims", "aten::mean.dim", lambda: a.mean((0, 1))),
            ("softmax of a 5-D tensor", "aten::_softmax", lambda: torch.softmax(torch.randn(1, 1, 1, 2, 4), -1)),
            # Served by their Python overrides (a GEMM into f32 and an elementwise epilogue),
            # which refuse CPU tensors; addbmm is refused everywhere.
            ("baddbmm", "aten::baddbmm", lambda: torch.baddbmm(a.expand(2, 4, 4), a.expand(2, 4, 4), a.expand(2, 4, 4))),
            ("addmv", "aten::addmv", lambda: torch.addmv(a[0], a, a[1], alpha=0.5)),
            ("_addmm_activation", "aten::_addmm_activation", lambda: torch._addmm_activation(a, a, a, use_gelu=True)),
            ("addbmm", "aten::addbmm", lambda: torch.addbmm(a, a.expand(2, 4, 4), a.expand(2, 4, 4))),
            ("dot of 2-D tensors", "aten::dot", lambda: torch.ops.aten.dot(a, a)),
            ("baddbmm, self not broadcasting", "does not broadcast",
             lambda: torch.baddbmm(a[:3, :3], a.expand(2, 4, 4), a.expand(2, 4, 4), beta=0)),
            ("addmv, self of another dtype", "self is torch.float64",
             lambda: torch.addmv(a[0].double(), a, a[1])),
        ]
        for name, op, call in declined:
            with self.subTest(name):
                before = _dispatch.counts()
                # The Python override refuses CPU tensors: its exception arrives unchanged.
                with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                    call()
                self.assertIn(op, str(caught.exception))
                self.assertEqual(_native.dispatch_trace(True, launch=False), [])
                self.assertEqual(_dispatch.counts()[1], before[1] + 1)

    def test_out_overloads_write_into_out(self):
        """An out= call whose out is what torch would allocate is planned into it directly
        (nothing is launched at this key, so out keeps what it held); a matmul, a linear and
        the row ops with out= reach the same kernels."""
        g = torch.Generator().manual_seed(1)

        def r(*s, dtype=torch.bfloat16):
            return torch.randn(*s, generator=g).to(dtype)

        a, b, w, bias, v = r(5, 7), r(7, 3), r(3, 7), r(3), r(7)
        b1, b2, x = r(2, 5, 7), r(2, 7, 4), r(2, 3, 64)

        def held(*shape, dtype=torch.bfloat16):
            return torch.full(shape, 7.0, dtype=dtype)

        # (name, out, the call, the plan expected)
        cases = [
            ("mm", held(5, 3), lambda o: torch.mm(a, b, out=o), plan("nn", 5, 3, 7, "bf16", 7, 3, 3)),
            ("matmul", held(5, 3), lambda o: torch.matmul(a, b, out=o), plan("nn", 5, 3, 7, "bf16", 7, 3, 3)),
            ("mm into a row slice", held(9, 3)[2:7], lambda o: torch.mm(a, b, out=o), plan("nn", 5, 3, 7, "bf16", 7, 3, 3)),
            ("bmm", held(2, 5, 4), lambda o: torch.bmm(b1, b2, out=o),
             plan("nn", 5, 4, 7, "bf16", 7, 4, 4, count=2, strides=(35, 28))),
            ("addmm with a bias", held(5, 3), lambda o: torch.addmm(bias, a, w.t(), out=o),
             plan("nt", 5, 3, 7, "bf16", 7, 7, 3, bias=True)),
            ("mv", held(5), lambda o: torch.mv(a, v, out=o), plan("nn", 5, 1, 7, "bf16", 7, 1, 1)),
            ("mm into f32 (out_dtype)", held(5, 3, dtype=torch.float32),
             lambda o: torch.mm(a, b, out_dtype=torch.float32, out=o),
             plan("nn", 5, 3, 7, "bf16", 7, 3, 3)[:2] + (("bf16", "f32"),) + plan("nn", 5, 3, 7, "bf16", 7, 3, 3)[3:]),
            ("softmax", held(2, 3, 64), lambda o: torch.ops.aten._softmax.out(x, -1, False, out=o),
             ("rows", "softmax", "bf16", "bf16", [6, 64, 64, 64])),
            ("mean into f32, out's dtype", held(2, 3, dtype=torch.float32), lambda o: torch.mean(x, -1, out=o),
             ("rows", "mean", "bf16", "f32", [6, 64, 64, 1])),
        ]
        for name, out, call, expected in cases:
            with self.subTest(name):
                before = _dispatch.counts()
                got = call(out)
                self.assertEqual(_native.dispatch_trace(True, launch=False), [expected])
                self.assertIs(got, out)
                self.assertTrue(bool((out == 7.0).all()), "out was written (copied into), not planned into")
                self.assertEqual(_dispatch.counts(), (before[0] + 1, before[1]))

    def test_the_functional_out_dtype_overloads_are_served(self):
        a, b = torch.randn(5, 7).bfloat16(), torch.randn(7, 3).bfloat16()
        y = torch.mm(a, b, out_dtype=torch.float32)
        self.assertEqual((tuple(y.shape), y.dtype), ((5, 3), torch.float32))
        y = torch.bmm(a.expand(2, 5, 7), b.expand(2, 7, 3), out_dtype=torch.bfloat16)
        self.assertEqual((tuple(y.shape), y.dtype), ((2, 5, 3), torch.bfloat16))
        self.assertEqual(len(_native.dispatch_trace(True, launch=False)), 2)
        # addmm's and baddbmm's go to their Python overrides (an epilogue in f32), which refuse
        # CPU tensors, naming the op.
        for op, call in [("addmm.dtype", lambda: torch.addmm(b[0, :3], a, b, out_dtype=torch.float32)),
                         ("mm.dtype", lambda: torch.mm(a, b, out_dtype=torch.float16))]:
            with self.subTest(op):
                with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                    call()
                self.assertIn("aten::" + op, str(caught.exception))

    def test_out_overloads_copy_what_they_cannot_plan_into(self):
        """An out of other sizes is resized (torch's warning when it held elements), an out
        overlapping an input or strided in a way the kernels do not write gets the result by
        copy: the functional kernel runs (planned once) and nothing is refused. A dtype
        mismatch is torch's error."""
        a, b = torch.randn(4, 4).bfloat16(), torch.randn(4, 4).bfloat16()
        cases = [
            ("other sizes, resized", torch.full((2, 8), 7.0).bfloat16(), True),
            ("empty, resized silently", torch.empty(0).bfloat16(), False),
            ("a transposed out", torch.full((4, 4), 7.0).bfloat16().t(), False),
        ]
        for name, out, warns in cases:
            with self.subTest(name):
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    got = torch.mm(a, b, out=out)
                self.assertIs(got, out)
                self.assertEqual(tuple(out.shape), (4, 4))
                self.assertEqual(_native.dispatch_trace(True, launch=False), [plan("nn", 4, 4, 4, "bf16", 4, 4, 4)])
                self.assertEqual(any("resized" in str(w.message) for w in seen), warns)
        # out is an input: planned for a new output, copied.
        got = torch.mm(a, b, out=a)
        self.assertEqual(_native.dispatch_trace(True, launch=False), [plan("nn", 4, 4, 4, "bf16", 4, 4, 4)])
        with self.assertRaisesRegex(RuntimeError, "expected out tensor to have dtype"):
            torch.mm(a, b, out=torch.empty(4, 4))
        with self.assertRaisesRegex(RuntimeError, "expected out tensor to have dtype"):
            torch.ops.aten._softmax.out(a, -1, False, out=torch.empty(4, 4))

    def test_out_overloads_refuse_what_the_functional_op_refuses(self):
        """What the mode does not serve raises through an out= overload too, naming the op,
        with out untouched; allowed, it runs torch's own kernel into out, counted once."""
        a = torch.randn(4, 6, dtype=torch.float64)
        b = torch.randn(6, 3, dtype=torch.float64)
        out = torch.full((4, 3), 7.0, dtype=torch.float64)
        for name, call in [("mm", lambda: torch.mm(a, b, out=out)),
                           ("bmm", lambda: torch.bmm(a.expand(2, 4, 6), b.expand(2, 6, 3), out=out.expand(2, 4, 3).clone())),
                           ("_softmax", lambda: torch.ops.aten._softmax.out(a, -1, False, out=a.clone())),
                           ("addmm", lambda: torch.addmm(out, a, b, out=out.clone()))]:
            with self.subTest(name):
                with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                    call()
                self.assertIn("aten::" + name, str(caught.exception))
        self.assertTrue(bool((out == 7.0).all()))
        before = self.mode.fallback_count()
        self.mode._allow_fallback = True
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = torch.mm(a, b, out=out)
                rows = torch.ops.aten._softmax.out(a, -1, False, out=torch.empty(0, dtype=torch.float64))
        finally:
            self.mode._allow_fallback = False
        self.assertIs(got, out)
        # The reference without mm, which this class overrides.
        self.assertTrue(torch.allclose(out, (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)))
        e = (a - a.max(-1, keepdim=True).values).exp()
        self.assertTrue(torch.allclose(rows, e / e.sum(-1, keepdim=True)))
        self.assertEqual(self.mode.fallback_count(), before + 2)
        self.assertEqual(sum("fell back to cuBLAS" in str(w.message) for w in seen), 2)

    def test_out_is_checked_before_anything_runs(self):
        """An out of another dtype is torch's error before the op runs: no refusal, no
        fallback counted, even for an op the mode does not serve."""
        a = torch.randn(4, 6, dtype=torch.float64)
        b = torch.randn(6, 3, dtype=torch.float64)
        before = self.mode.fallback_count()
        self.mode._allow_fallback = True
        try:
            with self.assertRaisesRegex(RuntimeError, "expected out tensor to have dtype"):
                torch.mm(a, b, out=torch.empty(4, 3))
        finally:
            self.mode._allow_fallback = False
        self.assertEqual(self.mode.fallback_count(), before)
        self.assertEqual(_native.dispatch_trace(True, launch=False), [])

    def test_an_out_apart_from_a_strided_input_is_planned_into(self):
        """A view that is not dense (every other row of a buffer) shares no storage with out:
        out is written directly, not through a copy."""
        big, b = torch.randn(10, 7).bfloat16(), torch.randn(7, 3).bfloat16()
        out = torch.full((5, 3), 7.0).bfloat16()
        torch.mm(big[::2], b, out=out)
        self.assertEqual(_native.dispatch_trace(True, launch=False), [plan("nn", 5, 3, 7, "bf16", 14, 3, 3)])
        self.assertTrue(bool((out == 7.0).all()))

    def test_addbmms_fallback_adds_each_entry_past_the_mode(self):
        """torch's addbmm kernel adds entry by entry through addmm_, which the mode serves: its
        allowed fallback runs the loop on torch's addmm kernel instead, counted once."""
        c = torch.randn(4, 3, dtype=torch.float64)
        b1 = torch.randn(3, 4, 6, dtype=torch.float64)
        b2 = torch.randn(3, 6, 3, dtype=torch.float64)
        before = self.mode.fallback_count()
        self.mode._allow_fallback = True
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = torch.addbmm(c, b1, b2, beta=0.5, alpha=2)
        finally:
            self.mode._allow_fallback = False
        want = 0.5 * c + 2 * (b1.unsqueeze(3) * b2.unsqueeze(1)).sum(2).sum(0)
        self.assertTrue(torch.allclose(got, want))
        self.assertEqual(self.mode.fallback_count(), before + 1)
        self.assertEqual(sum("fell back" in str(w.message) for w in seen), 1)

    def test_in_place_overloads_run_the_functional_kernel(self):
        """x.addmm_(a, b) and the other in-place forms: the functional op (refused here, where
        its Python override refuses CPU tensors, naming it), its result copied into self."""
        a = torch.randn(4, 6, dtype=torch.float64)
        b = torch.randn(6, 3, dtype=torch.float64)
        c = torch.randn(4, 3, dtype=torch.float64)
        for name, call in [("addmm", lambda t: t.addmm_(a, b, beta=0.5)),
                           ("baddbmm", lambda t: t.unsqueeze(0).baddbmm_(a[None], b[None])),
                           ("addmv", lambda t: t[:, 0].addmv_(a, b[:, 0])),
                           ("addbmm", lambda t: t.addbmm_(a[None], b[None]))]:
            with self.subTest(name):
                t = c.clone()
                with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                    call(t)
                self.assertIn("aten::" + name, str(caught.exception))
                self.assertTrue(torch.equal(t, c), "self was written")
        self.mode._allow_fallback = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = c.clone()
                got = t.addmm_(a, b, beta=0.5)
        finally:
            self.mode._allow_fallback = False
        self.assertIs(got, t)
        self.assertTrue(torch.allclose(t, 0.5 * c + (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)))
        # self is never resized: a 1-D self (the functional op's bias) is torch's error.
        x, w = torch.randn(4, 6).bfloat16(), torch.randn(6, 3).bfloat16()
        bias = torch.full((3,), 7.0).bfloat16()
        with self.assertRaisesRegex(RuntimeError, "does not match self's"):
            bias.addmm_(x, w)
        self.assertEqual(tuple(bias.shape), (3,))
        self.assertTrue(bool((bias == 7.0).all()))

    def test_negated_views_are_resolved_by_torch_or_refused(self):
        """torch resolves a negated view before the mode's kernels see it; a direct call
        refuses one (its memory holds the negation), and the fast path declines it."""
        a = torch.randn(4, 4).bfloat16()
        self.assertEqual(self.traced(lambda: torch.mm(torch._neg_view(a), a)),
                         [plan("nn", 4, 4, 4, "bf16", 4, 4, 4)])
        with self.assertRaises(gemm_aot.RefusedError) as caught:
            gemm_aot.mm(torch._neg_view(a), a)
        self.assertIn("negated view", str(caught.exception))
        self.assertTrue(gemm_aot._fastpath.on())
        self.assertIsNone(_native.torch_plan(torch._neg_view(a), a, host=True))
        self.assertIsNotNone(_native.torch_plan(a, a, host=True))

    def test_allowed_fallback_runs_torchs_kernel(self):
        a = torch.randint(-5, 5, (4, 6), dtype=torch.int32)
        b = torch.randint(-5, 5, (6, 3), dtype=torch.int32)
        self.mode._allow_fallback = True
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = torch.mm(a, b)
        finally:
            self.mode._allow_fallback = False
        # The reference without mm, which this class overrides.
        self.assertTrue(torch.equal(got, (a.long().unsqueeze(2) * b.long().unsqueeze(0)).sum(1).int()))
        self.assertTrue(any("fell back to cuBLAS" in str(w.message) for w in seen))
        # dot.out and vdot.out call dot and vdot again: their fallback must not come back here.
        u, v = torch.randn(9, dtype=torch.float64), torch.randn(9, dtype=torch.float64)
        z, y = torch.randn(9, dtype=torch.complex64), torch.randn(9, dtype=torch.complex64)
        self.mode._allow_fallback = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got_dot, got_vdot = torch.dot(u, v), torch.vdot(z, y)
        finally:
            self.mode._allow_fallback = False
        self.assertAlmostEqual(got_dot.item(), (u * v).sum().item(), places=9)
        self.assertAlmostEqual(complex(got_vdot), complex((z.conj() * y).sum()), places=4)

    def test_registering_again_never_lets_torchs_kernel_run(self):
        """Calls on other threads while the kernels are registered again, 40 times: each is
        recorded (ours ran), none reaches torch's own kernel in between."""
        import threading

        a, b = torch.randn(4, 8).bfloat16(), torch.randn(8, 4).bfloat16()
        stop, counts = threading.Event(), []

        def calls():
            n = 0
            while not stop.is_set():
                torch.mm(a, b)
                n += 1
            counts.append(n)

        threads = [threading.Thread(target=calls) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for _ in range(40):
                self.assertTrue(_dispatch.register(torch, self.mode._OVERRIDES, "CPU"))
        finally:
            stop.set()
            for t in threads:
                t.join()
        self.assertEqual(len(_native.dispatch_trace(True, launch=False)), sum(counts))

    def test_the_build_is_cached(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "calls")
            wrapper = os.path.join(tmp, "cxx")
            with open(wrapper, "w") as f:
                f.write(f'#!/bin/sh\necho "$@" >> {log}\nexec {COMPILER} "$@"\n')
            os.chmod(wrapper, 0o755)
            old = os.environ.get("CXX")
            os.environ["CXX"] = wrapper
            try:
                path = _dispatch._build(torch)
                open(log, "w").close()
                self.assertEqual(_dispatch._build(torch), path)
            finally:
                if old is None:
                    del os.environ["CXX"]
                else:
                    os.environ["CXX"] = old
            with open(log) as f:
                calls = [line for line in f if "--version" not in line]
        self.assertEqual(calls, [], "the second build ran the compiler")


@unittest.skipUnless(READY, "needs torch and a C++ compiler")
class RemovedAndFailed(unittest.TestCase):
    def test_removing_it_restores_torchs_kernels(self):
        import gemm_aot.torch as mode

        self.assertTrue(_dispatch.register(torch, mode._OVERRIDES, "CPU"))
        _dispatch.unregister()
        _native.dispatch_trace(True, launch=False)
        a, b = torch.randn(6, 5, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)
        got = torch.mm(a, b)
        self.assertEqual(_native.dispatch_trace(False), [])
        self.assertTrue(torch.allclose(got, (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)))

    def test_a_failed_build_leaves_the_python_overrides(self):
        script = """
import os, warnings, torch, gemm_aot._dispatch as d, gemm_aot.torch as mode
assert d.load(torch) is None
assert "could not be built" in d.status() and "failed" in d.status(), d.status()
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    mode.set_batch_invariant_mode(True)
assert mode.dispatch_path() == "python", mode.dispatch_path()
assert any("Python overrides" in str(w.message) and "out= and in-place" in str(w.message) for w in seen)
# A switch to native that fails leaves the Python overrides registered.
try:
    mode.set_batch_invariant_mode(True, dispatch="native")
    raise SystemExit("dispatch='native' did not raise")
except RuntimeError as e:
    assert "no native dispatch" in str(e), e
assert mode.dispatch_path() == "python", mode.dispatch_path()
mode.set_batch_invariant_mode(False)
assert not mode.is_batch_invariant_mode()
# The failed build was tried once in this process: with the tensor reader where Python's
# headers are, then without it.
with open(os.environ["CALLS"]) as f:
    builds = [line for line in f if "--version" not in line]
assert len(builds) == (2 if d._python_include() else 1), builds
print("ok")
"""
        with tempfile.TemporaryDirectory() as tmp:
            calls, wrapper = os.path.join(tmp, "calls"), os.path.join(tmp, "cxx")
            with open(wrapper, "w") as f:
                f.write(f'#!/bin/sh\necho "$@" >> {calls}\n[ "$1" = --version ] && exec {COMPILER} "$@"\nexit 1\n')
            os.chmod(wrapper, 0o755)
            env = dict(os.environ, CXX=wrapper, CALLS=calls, GEMM_AOT_DISPATCH_CACHE=os.path.join(tmp, "cache"))
            done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("ok", done.stdout)

    def test_it_can_be_turned_off(self):
        script = """
import warnings, torch, gemm_aot._dispatch as d, gemm_aot.torch as mode
assert d.load(torch) is None and d.status().startswith("turned off"), d.status()
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    mode.set_batch_invariant_mode(True)
assert mode.dispatch_path() == "python"
assert not any("Python overrides" in str(w.message) for w in seen)
mode.set_batch_invariant_mode(False)
print("ok")
"""
        env = dict(os.environ, GEMM_AOT_NATIVE_DISPATCH="0")
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)


if __name__ == "__main__":
    unittest.main()
