"""The Python package on a GPU, through torch: results against float64, rows invariant over
the batch, every layout, out=/bias/addmm/linear/bmm, torch's current stream, CUDA graphs,
DLPack, each refusal with its output untouched, and the batch-invariant mode (torch's own
ops, autograd, the refusal of what it does not serve). Run on the GPU machine:
``python -m unittest -v test_gpu`` from this folder, against an installed wheel."""

import math
import os
import unittest

try:
    import torch
except ImportError:  # pragma: no cover - the GPU machine has torch
    torch = None

import gemm_aot

CUDA = torch is not None and torch.cuda.is_available()
if os.environ.get("GEMM_AOT_REQUIRE_CUDA") == "1" and not CUDA:
    # On the GPU machine a skip would read as a pass: bench/gpu-run.sh sets this.
    raise RuntimeError("GEMM_AOT_REQUIRE_CUDA=1, but torch with a CUDA device is not available")


def rand(*shape, dtype=None, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, generator=g, device="cuda", dtype=torch.float32).to(dtype or torch.bfloat16)


def same_bits(x, y):
    return x.dtype == y.dtype and x.shape == y.shape and torch.equal(
        x.contiguous().view(torch.int16 if x.element_size() == 2 else torch.int32),
        y.contiguous().view(torch.int16 if y.element_size() == 2 else torch.int32),
    )


@unittest.skipUnless(CUDA, "needs torch with a CUDA device")
class Functions(unittest.TestCase):
    def check_close(self, got, a, b, bias=None):
        ref = a.double() @ b.double()
        if bias is not None:
            ref = ref + bias.double()
        mag = a.double().abs() @ b.double().abs()
        err = ((got.double() - ref).abs() / mag.clamp_min(1e-30)).max().item()
        tol = 2.0 ** -7 if got.dtype != torch.float32 else 2.0 ** -10
        self.assertLess(err, tol, f"error {err} relative to sum |a b|")

    def test_mm_against_float64_and_rows_over_the_batch(self):
        for dtype in (torch.bfloat16, torch.float16):
            for (n, k) in ((1000, 4096), (4096, 4096), (50257, 1024), (1024, 14336)):
                b = rand(k, n, dtype=dtype, seed=1) / math.sqrt(k)
                big = rand(256, k, dtype=dtype, seed=2)
                y = gemm_aot.mm(big, b)
                self.check_close(y.float(), big, b)
                for m in (1, 7, 33):
                    rows = gemm_aot.mm(big[:m], b)
                    self.assertTrue(same_bits(rows, y[:m]), f"{dtype} n={n} k={k}: m={m} rows differ from m=256")

    def test_every_layout_gives_the_same_bits(self):
        # (n, k) outside the chunked contract's regions: every op runs tc-k16 here.
        x, w = rand(33, 1024, seed=3), rand(1536, 1024, seed=4)
        ref = gemm_aot.mm(x, w.t().contiguous())  # nn
        nt = gemm_aot.mm(x, w.t())  # w stored [n, k]
        tn = gemm_aot.mm(x.t().contiguous().t(), w.t().contiguous())  # x stored [k, m]
        tt = gemm_aot.mm(x.t().contiguous().t(), w.t())  # a copied, then nt
        for name, got in (("nt", nt), ("tn", tn), ("tt", tt)):
            self.assertTrue(same_bits(got, ref), f"{name} differs from nn")

    def test_out_bias_addmm_linear_bmm(self):
        x, w, bias = rand(17, 512, seed=5), rand(384, 512, seed=6), rand(384, seed=7)
        out = torch.full((17, 384), float("nan"), device="cuda", dtype=torch.float32)
        gemm_aot.mm(x, w.t(), out=out, bias=bias.float())
        self.check_close(out, x, w.t(), bias.float())
        y = gemm_aot.linear(x.view(1, 17, 512), w, bias)
        self.assertEqual(tuple(y.shape), (1, 17, 384))
        self.assertTrue(same_bits(y.view(17, 384), gemm_aot.addmm(bias, x, w.t())))
        c = rand(17, 384, seed=8)
        got = gemm_aot.addmm(c, x, w.t(), beta=0.5)
        ref = 0.5 * c.double() + x.double() @ w.t().double()
        # A bf16 output: within a unit of its last place (2^-7 relative) of the float64 sum.
        mag = 0.5 * c.double().abs() + x.double().abs() @ w.t().double().abs()
        self.assertLess(((got.double() - ref).abs() / mag.clamp_min(1e-30)).max().item(), 2.0 ** -7)
        a, b = rand(6, 40, 64, seed=9), rand(6, 80, 64, seed=10).transpose(1, 2)
        z = gemm_aot.bmm(a, b)
        for i in range(6):
            self.assertTrue(same_bits(z[i], gemm_aot.mm(a[i], b[i])), f"bmm entry {i}")

    def test_the_current_stream(self):
        x, w = rand(64, 1024, seed=11), rand(1024, 1024, seed=12)
        ref = gemm_aot.mm(x, w)
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            got = gemm_aot.mm(x, w)
        side.synchronize()
        self.assertTrue(same_bits(got, ref))

    def test_the_tensor_reader_reads_as_torch_and_launches_on_the_current_stream(self):
        """Where the native library has the tensor reader (Python's headers installed), the
        fast path reads plain tensors through it: every view as its attributes read it, and
        the call on torch's current stream (a side stream's pending write of an operand is
        seen; on another stream it would race)."""
        from gemm_aot import _dispatch, _fastpath, _native

        x, w = rand(64, 1024, seed=21), rand(1024, 256, seed=22)
        out = torch.empty(64, 256, device="cuda", dtype=torch.bfloat16)
        gemm_aot.mm(x, w, out=out)
        gemm_aot.mm(x, w, out=out)  # the first call that reads a stream checks the reader's
        if _dispatch._python_include() is None:
            self.skipTest(f"no tensor reader here: {_fastpath.reader}")
        self.assertEqual(_fastpath.reader, "installed")
        self.assertEqual(_native.torch_reader_installed()[0], True)
        big = rand(6, 8, 12, dtype=torch.float16, seed=23)
        views = [x, x.t(), x[3:, 5:900], x[::2], big.permute(1, 0, 2), big[2], big[:, :0],
                 big[:1], torch.nn.Parameter(w.clone()), w.float(), big.double()]
        for t in views:
            got, want = _native.torch_view(t, "fast"), _native.torch_view(t, "attributes")
            self.assertEqual(got is None, want is None, f"{t.shape} {t.stride()}")
            if got is not None:
                self.assertEqual(got[:5], want[:5])
                self.assertTrue(got[5], "read off torch's own tensor: no bounds queries")
        # An operand written on a side stream just before the call, after a long wait there.
        ref = gemm_aot.mm(x, w)
        pending = torch.zeros_like(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)
            pending.copy_(x)
            got = gemm_aot.mm(pending, w, out=torch.empty_like(out))
        side.synchronize()
        self.assertTrue(same_bits(got, ref), "the call did not run on the side stream after the write")
        # Checked at installation where CUDA was up, else on that side-stream call: in use now.
        self.assertEqual(_native.torch_reader_installed(), (True, True))

    def test_cuda_graph_replay(self):
        x, w = rand(8, 2048, seed=13), rand(2048, 2048, seed=14)
        out = torch.empty(8, 2048, device="cuda", dtype=torch.bfloat16)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            gemm_aot.mm(x, w, out=out)  # warm-up: modules loaded before capture
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            gemm_aot.mm(x, w, out=out)
        ref = gemm_aot.mm(x, w)
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(same_bits(out, ref))

    def test_dlpack_inputs(self):
        x, w = rand(16, 256, seed=15), rand(256, 128, seed=16)
        out = torch.zeros(16, 128, device="cuda", dtype=torch.float32)
        gemm_aot.mm(x.__dlpack__(), w.__dlpack__(), out=out.__dlpack__(),
                    stream=torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        self.assertTrue(same_bits(out, gemm_aot.mm(x, w, out=torch.empty_like(out))))

    def test_refusals_leave_the_output_untouched(self):
        x, w = rand(8, 64, seed=17), rand(64, 32, seed=18)
        poison = torch.full((8, 32), float("nan"), device="cuda", dtype=torch.bfloat16)
        cases = [
            ("CPU tensor", lambda o: gemm_aot.mm(x.cpu(), w, out=o), gemm_aot.RefusedError),
            ("float64", lambda o: gemm_aot.mm(x.double(), w.double(), out=o), gemm_aot.UnsupportedError),
            ("shapes", lambda o: gemm_aot.mm(x, w[:63], out=o), gemm_aot.RefusedError),
            ("inner stride", lambda o: gemm_aot.mm(rand(8, 128)[:, ::2], w, out=o), gemm_aot.RefusedError),
            ("out shape", lambda o: gemm_aot.mm(x, w, out=o[:, :31]), gemm_aot.RefusedError),
            ("out not row-major", lambda o: gemm_aot.mm(x, w, out=torch.empty(32, 8, device="cuda", dtype=torch.bfloat16).t()), gemm_aot.RefusedError),
            ("dtypes", lambda o: gemm_aot.mm(x, w.half(), out=o), gemm_aot.RefusedError),
        ]
        for name, call, cls in cases:
            out = poison.clone()
            with self.assertRaises(cls, msg=name) as caught:
                call(out)
            self.assertTrue(torch.isnan(out).all().item(), f"{name}: the refused call wrote its output")
            print(f"{name}: {type(caught.exception).__name__}: {caught.exception}")
        # Out over an input.
        buf = rand(8, 64, seed=19)
        with self.assertRaises(gemm_aot.RefusedError) as caught:
            gemm_aot.mm(buf, rand(64, 64, seed=20), out=buf)
        self.assertEqual(caught.exception.kind, "overlap")


@unittest.skipUnless(CUDA, "needs torch with a CUDA device")
class Rows(unittest.TestCase):
    def test_rows_are_invariant_and_close_to_torch(self):
        for dtype in (torch.float32, torch.bfloat16):
            for cols in (7, 256, 1000, 4096, 50257):  # 1000: the second warp-path kernel
                x = rand(300, cols, dtype=dtype, seed=cols) * 4
                for name, ours, ref in (
                    ("softmax", gemm_aot.softmax, lambda t: torch.softmax(t.double(), -1)),
                    ("log_softmax", gemm_aot.log_softmax, lambda t: torch.log_softmax(t.double(), -1)),
                    ("mean", lambda t: gemm_aot.mean(t, -1, keepdim=True), lambda t: t.double().mean(-1, keepdim=True)),
                ):
                    y = ours(x)
                    for r in (0, 1, 299):
                        self.assertTrue(same_bits(ours(x[r:r + 1]), y[r:r + 1]), f"{name} {dtype} {cols}: row {r}")
                    # Relative to the result where it is above 1 (log_softmax reaches -30
                    # here, where a bf16 unit of the last place is 0.125), absolute below.
                    want = ref(x)
                    err = ((y.double() - want).abs() / want.abs().clamp_min(1.0)).max().item()
                    self.assertLess(err, 2.0 ** -7 if dtype == torch.bfloat16 else 1e-5, f"{name} {dtype} {cols}")

    def test_a_3d_tensor_and_refusals(self):
        x = rand(2, 5, 64, dtype=torch.float32, seed=30)
        self.assertEqual(tuple(gemm_aot.mean(x, -1).shape), (2, 5))
        self.assertEqual(tuple(gemm_aot.softmax(x).shape), (2, 5, 64))
        with self.assertRaises(gemm_aot.UnsupportedError):
            gemm_aot.softmax(x, dim=1)
        with self.assertRaises(gemm_aot.RefusedError):
            gemm_aot.softmax(x.transpose(1, 2))


@unittest.skipUnless(CUDA, "needs torch with a CUDA device")
class FastPath(unittest.TestCase):
    """The native fast path (python/src/torch_fast.rs, rows_fast.rs) serves the common call;
    an explicit policy (GEMMs) or a positive dim (rows) takes the Python path. Both give the
    same bits, and what the fast path declines is refused as before."""

    def test_gemms_take_it_with_the_python_paths_bits(self):
        self.assertTrue(gemm_aot._fastpath.on())
        x, w = rand(33, 1024, seed=40), rand(1536, 1024, seed=41)
        layouts = {
            "nn": (x, w.t().contiguous()),
            "nt": (x, w.t()),
            "tn": (x.t().contiguous().t(), w.t().contiguous()),
            "row slice": (rand(64, 1024, seed=42)[5:38], w.t()),
        }
        for name, (a, b) in layouts.items():
            for od in (torch.bfloat16, torch.float32):
                fast = gemm_aot.mm(a, b, out=torch.full((33, 1536), float("nan"), device="cuda", dtype=od))
                slow = gemm_aot.mm(a, b, out=torch.full((33, 1536), float("nan"), device="cuda", dtype=od),
                                   policy="tensor-core")
                self.assertTrue(same_bits(fast, slow), f"{name} {od}")
        bias = rand(1536, seed=43)
        self.assertTrue(same_bits(gemm_aot.mm(x, w.t(), bias=bias),
                                  gemm_aot.mm(x, w.t(), bias=bias, policy="tensor-core")))
        a, b = rand(6, 40, 64, seed=44), rand(6, 80, 64, seed=45).transpose(1, 2)
        self.assertTrue(same_bits(gemm_aot.bmm(a, b), gemm_aot.bmm(a, b, policy="tensor-core")))

    def test_rows_take_it_with_the_python_paths_bits(self):
        x = rand(2, 3, 5, 64, dtype=torch.float32, seed=46) * 3
        for view in (x, x[1:2], x[:, :, 2:3], x[0, 1:2]):
            for name, fn in (("softmax", gemm_aot.softmax), ("log_softmax", gemm_aot.log_softmax)):
                self.assertTrue(same_bits(fn(view), fn(view, dim=view.dim() - 1)), f"{name} {tuple(view.shape)}")
            self.assertTrue(same_bits(gemm_aot.mean(view, -1, keepdim=True),
                                      gemm_aot.mean(view, view.dim() - 1, keepdim=True)))
            self.assertTrue(same_bits(gemm_aot.softmax(view.bfloat16(), dtype=torch.float32),
                                      gemm_aot.softmax(view.bfloat16(), dim=view.dim() - 1, dtype=torch.float32)))
        # Leading dimensions that do not collapse: declined, then refused by the Python path.
        for view in (x.transpose(0, 1), x[:, :, 1:4], x[:, 1]):
            with self.assertRaises(gemm_aot.RefusedError):
                gemm_aot.softmax(view)


@unittest.skipUnless(CUDA, "needs torch with a CUDA device")
class Mode(unittest.TestCase):
    def setUp(self):
        import gemm_aot.torch as mode

        self.mode = mode

    def tearDown(self):
        self.mode.set_batch_invariant_mode(False)

    def test_torch_ops_run_the_kernels(self):
        x, w = rand(33, 1024, seed=21), rand(1024, 1024, seed=22)
        ref = gemm_aot.mm(x, w)
        cublas = torch.mm(x, w)
        with self.mode.batch_invariant():
            got = torch.mm(x, w)
            lin = torch.nn.functional.linear(x, w.t())
            one = torch.matmul(x[:1], w)
        self.assertTrue(same_bits(got, ref))
        self.assertTrue(same_bits(lin, ref))
        self.assertTrue(same_bits(one, ref[:1]))
        self.assertFalse(self.mode.is_batch_invariant_mode())
        print("cuBLAS equal to ours:", same_bits(cublas, ref))

    def test_torch_row_reductions_run_the_row_kernels(self):
        x = rand(33, 4096, dtype=torch.float32, seed=31)
        with self.mode.batch_invariant():
            sm = torch.softmax(x, -1)
            lsm = torch.nn.functional.log_softmax(x, dim=-1)
            mu = x.pow(2).mean(-1, keepdim=True)
            one = x[:1].pow(2).mean(-1, keepdim=True)
        self.assertTrue(same_bits(sm, gemm_aot.softmax(x)))
        self.assertTrue(same_bits(lsm, gemm_aot.log_softmax(x)))
        self.assertTrue(same_bits(mu, gemm_aot.mean(x.pow(2), -1, keepdim=True)))
        self.assertTrue(same_bits(one, mu[:1]))

    def test_torch_compile_in_eager_fallback_runs_the_kernels(self):
        # backend "eager" runs the captured graph's torch calls, "aot_eager" the aten ops
        # AOTAutograd traced them into: both reach the mode's kernels at the CUDA key, with
        # the bits of the uncompiled call (inductor's generated code calls the out= overloads:
        # test_inductor_calls_the_out_overloads).
        x, w, b = rand(33, 512, seed=25), rand(256, 512, seed=26), rand(256, seed=27)

        def block(x):
            y = torch.nn.functional.linear(x, w, b)
            return torch.softmax(y.float(), -1), y.float().pow(2).mean(-1, keepdim=True)

        with self.mode.batch_invariant():
            want = block(x)
        for backend in ("eager", "aot_eager"):
            torch._dynamo.reset()
            compiled = torch.compile(block, backend=backend, dynamic=False)
            with self.mode.batch_invariant():
                before = self.mode.dispatch_counts()
                got = compiled(x)
                after, path = self.mode.dispatch_counts(), self.mode.dispatch_path()
            for g, e in zip(got, want):
                self.assertTrue(same_bits(g, e), backend)
            if path == "native":
                # linear's addmm, softmax and mean, each served natively.
                self.assertGreaterEqual(after[0] - before[0], 3, backend)
        torch._dynamo.reset()

    def test_autograd_through_linear(self):
        x = rand(16, 256, seed=23).requires_grad_()
        w = rand(128, 256, seed=24).requires_grad_()
        with self.mode.batch_invariant():
            y = torch.nn.functional.linear(x, w)
            y.float().square().sum().backward()
        g = (2 * y.float()).to(torch.bfloat16)
        self.assertTrue(same_bits(x.grad, gemm_aot.mm(g, w.detach())))
        self.assertTrue(same_bits(w.grad, gemm_aot.mm(g.t(), x.detach())))

    def test_native_and_python_dispatch_give_the_same_bits(self):
        """The mode's C++ kernels (gemm_aot/_dispatch.py) serve the common calls natively,
        with the bits of its Python overrides, on torch's current stream and under capture."""
        x, w, bias = rand(33, 1024, seed=50), rand(1536, 1024, seed=51), rand(1536, seed=52)
        q, k = rand(2, 8, 17, 64, seed=53), rand(2, 8, 40, 64, seed=54)
        h = rand(3, 11, 4096, dtype=torch.float32, seed=55)
        s4 = rand(2, 4, 33, 700, dtype=torch.float32, seed=56)
        calls = {
            "linear": lambda: torch.nn.functional.linear(x, w, bias),
            "mm nt": lambda: torch.mm(x, w.t()),
            "matmul (bmm)": lambda: torch.matmul(q, k.transpose(-1, -2)),
            "bmm expanded": lambda: torch.bmm(x[:5].expand(3, 5, 1024), w[:64].t().expand(3, 1024, 64)),
            "mv": lambda: torch.mv(w, x[0]),
            "mv strided": lambda: torch.mv(w[:, :33], x[:, 7]),
            "softmax f32": lambda: torch.softmax(h, -1),
            "softmax 4-D (a warp a row)": lambda: torch.softmax(s4, -1),
            "softmax f16 to f32": lambda: torch.softmax(h.half(), -1, dtype=torch.float32),
            "log_softmax": lambda: torch.log_softmax(h, -1),
            "rmsnorm's mean": lambda: h.pow(2).mean(-1, keepdim=True),
        }
        # Declined natively and served by the Python override: a tn product into bf16, which
        # sm90a routes into f32 only (the Python path computes it into f32 and rounds once).
        declined = {"mm tn": lambda: torch.mm(x.t().contiguous().t(), w.t().contiguous())}
        got = {}
        for path in ("python", "native"):
            before = self.mode.dispatch_counts()
            with self.mode.batch_invariant(dispatch=path):
                self.assertEqual(self.mode.dispatch_path(), path)
                got[path] = {name: fn() for name, fn in {**calls, **declined}.items()}
                # On a side stream behind a long wait: a launch on another stream would read
                # x2 before the clone wrote it.
                main, side = torch.cuda.current_stream(), torch.cuda.Stream()
                side.wait_stream(main)
                with torch.cuda.stream(side):
                    torch.cuda._sleep(50_000_000)
                    x2 = x.clone()
                    on_side = torch.nn.functional.linear(x2, w, bias)
                main.wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    captured = torch.nn.functional.linear(x, w, bias)
                graph.replay()
            torch.cuda.synchronize()
            served = self.mode.dispatch_counts()[0] - before[0]
            handed = self.mode.dispatch_counts()[1] - before[1]
            if path == "native":
                self.assertEqual((served, handed), (len(calls) + 2, len(declined)), "native: served, declined")
            else:
                self.assertEqual((served, handed), (0, 0))
            self.assertTrue(same_bits(on_side, got[path]["linear"]), f"{path}: side stream")
            self.assertTrue(same_bits(captured, got[path]["linear"]), f"{path}: graph replay")
        for name in got["native"]:
            self.assertTrue(same_bits(got["native"][name], got["python"][name]), name)
        self.assertTrue(same_bits(got["native"]["linear"], gemm_aot.linear(x, w, bias)))

    def test_the_other_gemm_ops_run_the_kernels_or_raise(self):
        """dot and vdot (matmul of two vectors) are a 1 x 1 product; baddbmm, addmv and
        _addmm_activation a product into f32 and an elementwise epilogue, rounded once, so a
        row is the same alone and in a batch; addbmm is refused, naming the op."""
        v1, v2 = rand(4096, seed=60), rand(4096, seed=61)
        b1, b2, c = rand(6, 33, 256, seed=62), rand(6, 256, 80, seed=63), rand(6, 33, 80, seed=64)
        w, x, bias = rand(1024, 512, seed=65), rand(512, seed=66), rand(1024, seed=67)
        m1, m2, mb = rand(33, 512, seed=68), rand(512, 256, seed=69), rand(256, seed=70)
        for path in ("native", "python"):
            with self.mode.batch_invariant(dispatch=path):
                dot, vdot = torch.matmul(v1, v2), torch.vdot(v1, v2)
                bad = torch.baddbmm(c, b1, b2, beta=0.5, alpha=0.25)
                bad_one = torch.baddbmm(c[:, :1], b1[:, :1], b2, beta=0.5, alpha=0.25)
                mv = torch.addmv(bias, w, x, beta=2, alpha=0.5)
                act = torch._addmm_activation(mb, m1, m2, use_gelu=True)
                act_one = torch._addmm_activation(mb, m1[:1], m2, use_gelu=True)
                scaled = torch.addmm(mb, m1, m2, beta=2, alpha=0.5)
                with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                    torch.addbmm(c[0], b1, b2)
                self.assertIn("aten::addbmm", str(caught.exception))
            want = gemm_aot.mm(v1[None], v2[:, None]).reshape(())
            self.assertTrue(same_bits(dot, want) and same_bits(vdot, want), f"{path}: dot")
            acc = torch.empty(6, 33, 80, device="cuda")
            gemm_aot.bmm(b1, b2, out=acc)
            self.assertTrue(same_bits(bad, (acc * 0.25 + c.float() * 0.5).bfloat16()), f"{path}: baddbmm")
            self.assertTrue(same_bits(bad_one, bad[:, :1]), f"{path}: baddbmm's row alone")
            self.check_rows_close(bad, 0.25 * (b1.double() @ b2.double()) + 0.5 * c.double())
            acc = torch.empty(1024, 1, device="cuda")
            gemm_aot.mm(w, x[:, None], out=acc)
            self.assertTrue(same_bits(mv, (acc[:, 0] * 0.5 + bias.float() * 2).bfloat16()), f"{path}: addmv")
            self.assertTrue(same_bits(act_one, act[:1]), f"{path}: _addmm_activation's row alone")
            acc = torch.empty(33, 256, device="cuda")
            gemm_aot.mm(m1, m2, out=acc)
            self.assertTrue(same_bits(scaled, (acc * 0.5 + mb.float() * 2).bfloat16()), f"{path}: addmm, alpha 0.5")

    def test_python_overrides_take_out_and_inplace_without_fallback(self):
        """The Python overrides (the path without a C++ compiler) take the out= and in-place
        overloads too while fallback is not allowed: the functional calls' bits, and what the
        mode does not serve raises naming the op, out untouched. With fallback allowed those
        overloads stay torch's."""
        x, w, bias = rand(33, 1024, seed=90), rand(1024, 768, seed=91), rand(768, seed=92)
        h = rand(5, 700, dtype=torch.float32, seed=93)
        want = gemm_aot.mm(x, w)
        with self.mode.batch_invariant(dispatch="python"):
            got = {
                "mm": torch.mm(x, w, out=torch.empty_like(want)),
                "mm into an empty out": torch.mm(x, w, out=torch.empty(0, device="cuda", dtype=torch.bfloat16)),
                "addmm (linear's)": torch.addmm(bias, x, w, out=torch.empty_like(want)),
                "softmax": torch.ops.aten._softmax.out(h, -1, False, out=torch.empty_like(h)),
                "addmm_ (in place)": want.clone().addmm_(x, w, beta=0.5),
                "addmm, 2-D input": torch.addmm(want, x, w, beta=0.5),
            }
            a = torch.randn(8, 8, device="cuda", dtype=torch.float64)
            out = torch.full_like(a, 7.0)
            with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                torch.mm(a, a, out=out)
            self.assertIn("aten::mm", str(caught.exception))
            self.assertTrue(bool((out == 7.0).all()))
        for name in ("mm", "mm into an empty out"):
            self.assertTrue(same_bits(got[name], want), name)
        self.assertTrue(same_bits(got["addmm (linear's)"], gemm_aot.linear(x, w.t(), bias)))
        self.assertTrue(same_bits(got["softmax"], gemm_aot.softmax(h)))
        self.assertTrue(same_bits(got["addmm_ (in place)"], got["addmm, 2-D input"]))
        before = self.mode.fallback_count()
        with self.mode.batch_invariant(allow_fallback=True, dispatch="python"):
            torch.mm(a, a, out=out)  # torch's own kernel: not the mode's, no fallback counted
        self.assertTrue(torch.allclose(out, a @ a))
        self.assertEqual(self.mode.fallback_count(), before)
        # mv.out is taken as mv's (torch runs it as addmv.out): torch.mv's bits.
        vec = rand(1024, seed=94)
        with self.mode.batch_invariant(dispatch="python"):
            mv = torch.mv(x, vec)
            mv_out = torch.mv(x, vec, out=torch.empty(33, device="cuda", dtype=torch.bfloat16))
        self.assertTrue(same_bits(mv_out, mv))

    def test_out_and_out_dtype_overloads_run_the_kernels(self):
        """Through the native dispatch the out= overloads (torch.mm(a, b, out=c), what
        inductor's generated code calls), the out_dtype ones and the in-place ones give the
        functional calls' bits, into out directly or by copy; what the mode does not serve raises, and allowed,
        runs torch's own CUDA kernel into out."""
        x, w, bias = rand(33, 1024, seed=80), rand(1024, 768, seed=81), rand(768, seed=82)
        q, k = rand(2, 4, 17, 64, seed=83), rand(2, 4, 40, 64, seed=84)
        h = rand(5, 700, dtype=torch.float32, seed=85)
        want = gemm_aot.mm(x, w)
        want32 = torch.empty(33, 768, device="cuda")
        gemm_aot.mm(x, w, out=want32)
        with self.mode.batch_invariant(dispatch="native"):
            if self.mode.dispatch_path() != "native":
                self.skipTest("no native dispatch here")
            scores = torch.matmul(q, k.transpose(-1, -2))
            got = {
                "mm": torch.mm(x, w, out=torch.empty_like(want)),
                "mm into an empty out": torch.mm(x, w, out=torch.empty(0, device="cuda", dtype=torch.bfloat16)),
                "mm into a transposed out": torch.mm(x, w, out=torch.empty(768, 33, device="cuda", dtype=torch.bfloat16).t()),
                "matmul 4-D": torch.matmul(q, k.transpose(-1, -2), out=torch.empty_like(scores)),
                "addmm (linear's)": torch.addmm(bias, x, w, out=torch.empty_like(want)),
                "mm, out_dtype f32": torch.mm(x, w, out_dtype=torch.float32),
                "mm, out_dtype f32, out=": torch.mm(x, w, out_dtype=torch.float32, out=torch.empty_like(want32)),
                "softmax": torch.ops.aten._softmax.out(h, -1, False, out=torch.empty_like(h)),
                "mean": torch.mean(h, -1, keepdim=True, out=torch.empty(5, 1, device="cuda")),
                "addmm_ (in place)": want.clone().addmm_(x, w, beta=0.5),
                "addmm, 2-D input": torch.addmm(want, x, w, beta=0.5),
            }
            a = torch.randn(8, 8, device="cuda", dtype=torch.float64)
            with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                torch.mm(a, a, out=torch.empty_like(a))
            self.assertIn("aten::mm", str(caught.exception))
        for name in ("mm", "mm into an empty out", "mm into a transposed out"):
            self.assertTrue(same_bits(got[name], want), name)
        self.assertTrue(same_bits(got["matmul 4-D"], scores))
        self.assertTrue(same_bits(got["addmm (linear's)"], gemm_aot.linear(x, w.t(), bias)))
        self.assertTrue(same_bits(got["mm, out_dtype f32"], want32))
        self.assertTrue(same_bits(got["mm, out_dtype f32, out="], want32))
        self.assertTrue(same_bits(got["softmax"], gemm_aot.softmax(h)))
        self.assertTrue(same_bits(got["mean"], gemm_aot.mean(h, -1, keepdim=True)))
        self.assertTrue(same_bits(got["addmm_ (in place)"], got["addmm, 2-D input"]))
        before = self.mode.fallback_count()
        out = torch.empty_like(a)
        with self.mode.batch_invariant(allow_fallback=True, dispatch="native"):
            with self.assertWarns(UserWarning):
                torch.mm(a, a, out=out)
        self.assertTrue(torch.allclose(out, a @ a))
        self.assertEqual(self.mode.fallback_count(), before + 1)
        # The out_dtype overloads' fallbacks, torch's CUDA kernels (which write out as it is,
        # unresized): an operand with no contiguous dimension, which gemm_aot refuses.
        xs, ws = x[:, ::2], w[::2, ::2]
        with self.mode.batch_invariant(allow_fallback=True, dispatch="native"):
            with self.assertWarns(UserWarning):
                mm32 = torch.mm(xs, ws, out_dtype=torch.float32)
            with self.assertWarns(UserWarning):
                bmm32 = torch.bmm(xs.expand(2, 33, 512), ws.expand(2, 512, 384), out_dtype=torch.float32)
        want = xs.float() @ ws.float()
        self.assertEqual((tuple(mm32.shape), mm32.dtype), ((33, 384), torch.float32))
        self.assertLess((mm32 - want).abs().max().item(), 1e-2 * want.abs().max().item())
        self.assertLess((bmm32 - want.expand(2, 33, 384)).abs().max().item(), 1e-2 * want.abs().max().item())
        self.assertEqual(self.mode.fallback_count(), before + 3)

    def test_inductor_calls_the_out_overloads(self):
        """torch.compile's default backend computes a matmul by aten::mm.out into its own
        buffer: under the native dispatch that is ours, with the eager call's bits."""
        x, w = rand(33, 1024, seed=86), rand(1024, 512, seed=87)
        torch._dynamo.reset()
        compiled = torch.compile(lambda x: x @ w, dynamic=False)
        with self.mode.batch_invariant(dispatch="native"):
            if self.mode.dispatch_path() != "native":
                self.skipTest("no native dispatch here")
            want = x @ w
            before = self.mode.dispatch_counts()
            got = compiled(x)
            after = self.mode.dispatch_counts()
        torch._dynamo.reset()
        self.assertTrue(same_bits(got, want))
        self.assertGreaterEqual(after[0] - before[0], 1)

    def check_rows_close(self, got, ref):
        err = ((got.double() - ref).abs() / ref.abs().clamp_min(1.0)).max().item()
        self.assertLess(err, 2.0 ** -6, f"error {err}")

    def test_unserved_calls_raise_naming_the_op(self):
        a = torch.randn(8, 8, device="cuda", dtype=torch.float64)
        with self.mode.batch_invariant():
            with self.assertRaises(gemm_aot.UnsupportedError) as caught:
                torch.mm(a, a)
        self.assertIn("aten::mm", str(caught.exception))
        before = self.mode.fallback_count()
        with self.mode.batch_invariant(allow_fallback=True):
            with self.assertWarns(UserWarning):
                torch.mm(a, a)
        self.assertEqual(self.mode.fallback_count(), before + 1)


if __name__ == "__main__":
    unittest.main()
