"""The mode's Python overrides (the path without a C++ compiler) with real torch and no GPU:
registered at torch's CPU key, where every call they take is refused (the kernels serve
CUDA tensors), so a call that reaches them raises gemm_aot's error naming the op, and one
that does not runs torch's kernel. It checks that they take every ``out=`` and in-place
overload torch dispatches by backend, unless ``allow_fallback`` leaves those to torch, and
how a result is written into ``out`` and ``self``.

Needs torch (skipped without it: CI has no torch). Run here and on the GPU machine:
``python -m unittest -v test_python_overrides_cpu`` from this folder, against an installed
wheel."""

import unittest
import warnings

try:
    import torch
except ImportError:  # pragma: no cover - CI has no torch
    torch = None

import gemm_aot

import aten_table


def _calls():
    """One call of each out= and in-place overload the mode serves, on CPU tensors: (name,
    call, the tensor the call would write)."""
    a, b = torch.randn(4, 8), torch.randn(8, 3)
    x, v = torch.randn(2, 4, 8), torch.randn(2, 8, 3)
    s = torch.randn(4, 3)
    out = lambda *shape: torch.full(shape, 7.0)  # noqa: E731 - a sentinel nothing may touch
    o2, o3, o1, ov = out(4, 3), out(2, 4, 3), out(4), out(4, 8)
    sb, sv, sadd = torch.randn(2, 4, 3), torch.randn(4), torch.randn(4, 3)
    return [
        ("mm.out", lambda: torch.mm(a, b, out=o2), o2),
        ("bmm.out", lambda: torch.bmm(x, v, out=o3), o3),
        ("addmm.out", lambda: torch.addmm(s, a, b, out=o2), o2),
        ("baddbmm.out", lambda: torch.baddbmm(sb, x, v, out=o3), o3),
        ("addmv.out", lambda: torch.addmv(sv, a, b[:, 0], out=o1), o1),
        ("_softmax.out", lambda: torch._softmax(a, -1, False, out=ov), ov),
        ("_log_softmax.out", lambda: torch._log_softmax(a, -1, False, out=ov), ov),
        ("mean.out", lambda: torch.mean(a, -1, out=o1), o1),
        ("mv.out", lambda: torch.mv(a, b[:, 0], out=o1), o1),
        ("addmm_", lambda: sadd.addmm_(a, b), sadd),
        ("baddbmm_", lambda: sb.baddbmm_(x, v), sb),
        ("addmv_", lambda: sv.addmv_(a, b[:, 0]), sv),
    ]


@unittest.skipUnless(torch is not None, "needs torch")
class PythonOverridesOnCpu(unittest.TestCase):
    def setUp(self):
        import gemm_aot.torch as mode

        self.mode = mode
        self.libraries = []

    def tearDown(self):
        for library in self.libraries:
            library._destroy()

    def register(self, allow_fallback):
        self.libraries = [self.mode._python_library("CPU")]
        if not allow_fallback:
            self.libraries.append(self.mode._python_out_library("CPU"))

    def test_every_overload_torch_dispatches_by_backend_is_taken(self):
        """The same table the native dispatch's test derives from torch's ops: each out= and
        in-place overload of an op the mode serves that has a kernel of its own."""
        taken = set(self.mode._out_and_inplace_overrides("CPU"))
        for name in aten_table.overloads_with_kernels(torch, self.mode._OVERRIDES, "CPU"):
            if name.split(".")[0].endswith("_") or name.endswith("out"):
                self.assertIn(name, taken, f"aten::{name} is left to torch")
        self.assertIn("mm.out", taken)
        self.assertIn("addmm_", taken)
        # mv.out has no kernel of its own (torch runs it as addmv.out): taken as mv's.
        self.assertIn("mv.out", taken)

    def test_out_and_inplace_calls_reach_the_overrides_and_leave_the_output(self):
        self.register(allow_fallback=False)
        for name, call, written in _calls():
            with self.subTest(name):
                before = written.clone()
                with self.assertRaises(gemm_aot.GemmError) as caught:
                    call()
                self.assertIn("aten::", str(caught.exception))
                self.assertTrue(torch.equal(written, before), f"{name} wrote its output")

    def test_with_fallback_allowed_they_stay_torchs(self):
        a, b = torch.randn(4, 8), torch.randn(8, 3)
        expected = torch.mm(a, b)  # torch's kernel, before the overrides are registered
        self.register(allow_fallback=True)
        out = torch.empty(4, 3)
        torch.mm(a, b, out=out)
        self.assertTrue(torch.equal(out, expected))
        with self.assertRaises(gemm_aot.GemmError):
            torch.mm(a, b)  # the functional op is still the mode's: refused on the CPU

    def test_a_result_is_written_as_torchs_out_kernels_write(self):
        into = self.mode._into
        r = torch.randn(2, 3)
        same = torch.empty(2, 3)
        self.assertIs(into(same, r, "mm.out"), same)
        self.assertTrue(torch.equal(same, r))
        # Another dtype: torch's error, out untouched.
        wrong = torch.full((2, 3), 7.0, dtype=torch.float64)
        with self.assertRaisesRegex(RuntimeError, "mm.out: expected out tensor to have dtype"):
            into(wrong, r, "mm.out")
        self.assertTrue(bool((wrong == 7.0).all()))
        # Other sizes: resized, with torch's warning only when it held elements.
        empty = torch.empty(0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            into(empty, r, "mm.out")
        self.assertTrue(torch.equal(empty, r))
        held = torch.empty(5)
        with self.assertWarnsRegex(UserWarning, "was resized"):
            into(held, r, "mm.out")
        self.assertTrue(torch.equal(held, r))

    def test_out_overrides_take_torchs_rules_before_anything_runs(self):
        seen = []

        def functional(*args, **kwargs):
            seen.append(kwargs)
            return torch.zeros(4, dtype=kwargs.get("dtype") or torch.float32)

        mean_out = self.mode._out_override("mean.out", functional)
        x = torch.randn(4, 8, dtype=torch.bfloat16)
        # torch's mean.out computes in out's dtype when no dtype is given.
        out = torch.empty(4)
        mean_out(x, [-1], False, out=out)
        self.assertEqual(seen[-1]["dtype"], torch.float32)
        mean_out(x, [-1], False, dtype=torch.float32, out=out)
        self.assertEqual(seen[-1]["dtype"], torch.float32)
        # An out on another device than the inputs: torch's error, nothing run.
        calls = len(seen)
        with self.assertRaisesRegex(RuntimeError, "out is on meta where the inputs are on cpu"):
            mean_out(x, [-1], False, out=torch.empty(4, device="meta"))
        self.assertEqual(len(seen), calls)

    def test_a_fallback_is_refused_while_the_out_overrides_are_registered(self):
        mode = self.mode
        ran = []
        was = (mode._allow_fallback, mode._out_library)
        try:
            mode._allow_fallback, mode._out_library = True, object()
            with self.assertRaises(gemm_aot.UnsupportedError):
                mode._fallback("mm", gemm_aot.UnsupportedError("unsupported", "f64"), lambda: ran.append(1))
            mode._out_library = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mode._fallback("mm", gemm_aot.UnsupportedError("unsupported", "f64"), lambda: ran.append(1))
            self.assertEqual(ran, [1])
        finally:
            mode._allow_fallback, mode._out_library = was

    def test_the_out_overrides_follow_allow_fallback_and_a_failed_switch_changes_nothing(self):
        mode = self.mode
        from gemm_aot import _dispatch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                mode.set_batch_invariant_mode(True, dispatch="python")
                self.assertIsNotNone(mode._out_library)
                functional = mode._library
                mode.set_batch_invariant_mode(True, allow_fallback=True)
                self.assertEqual((mode.dispatch_path(), mode._allow_fallback), ("python", True))
                self.assertIsNone(mode._out_library)
                self.assertIs(mode._library, functional, "the functional overrides stay")
                mode.set_batch_invariant_mode(True)
                self.assertIsNotNone(mode._out_library)
                self.assertFalse(mode._allow_fallback)
                # Asking for a native dispatch that cannot be built changes nothing.
                register = _dispatch.register
                _dispatch.register = lambda *a, **k: False
                try:
                    with self.assertRaises(RuntimeError):
                        mode.set_batch_invariant_mode(True, allow_fallback=True, dispatch="native")
                finally:
                    _dispatch.register = register
                self.assertEqual((mode.dispatch_path(), mode._allow_fallback), ("python", False))
                self.assertIsNotNone(mode._out_library)
            finally:
                mode.set_batch_invariant_mode(False)
        self.assertIsNone(mode._out_library)
        self.assertIsNone(mode._library)

    def test_in_place_never_resizes_self(self):
        grow = self.mode._inplace_override("addmm_", lambda s, *a, **k: torch.ones(4, 3))
        small = torch.full((1, 3), 7.0)
        with self.assertRaisesRegex(RuntimeError, "does not resize self"):
            grow(small, None, None)
        self.assertTrue(bool((small == 7.0).all()))
        fits = torch.zeros(4, 3)
        self.assertIs(grow(fits, None, None), fits)
        self.assertTrue(bool((fits == 1.0).all()))


if __name__ == "__main__":
    unittest.main()
