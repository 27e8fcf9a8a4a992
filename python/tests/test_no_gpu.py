"""What the package does without a GPU: it imports (without importing torch), knows its
version, refuses every bad call it can see without a device, with the exception and message
that name the problem, and says clearly when no driver is there. CI runs this against the
wheel it builds (tests/python_front.rs); numpy supplies DLPack producers."""

import os
import sys
import unittest

import gemm_aot
from gemm_aot import _native

A, B, C = 0x10_0000, 0x20_0000, 0x30_0000  # addresses; never dereferenced on the host


class Package(unittest.TestCase):
    def test_import_does_not_import_torch(self):
        self.assertNotIn("torch", sys.modules)

    def test_version_is_the_crate_version(self):
        expected = os.environ.get("GEMM_AOT_EXPECTED_VERSION")
        if expected is None:
            self.skipTest("GEMM_AOT_EXPECTED_VERSION is not set")
        self.assertEqual(gemm_aot.__version__, expected)

    def test_errors_are_exceptions_of_both_kinds(self):
        self.assertTrue(issubclass(gemm_aot.RefusedError, ValueError))
        self.assertTrue(issubclass(gemm_aot.UnsupportedError, gemm_aot.RefusedError))
        self.assertTrue(issubclass(gemm_aot.DeviceError, RuntimeError))
        for cls in (gemm_aot.RefusedError, gemm_aot.DeviceError):
            self.assertTrue(issubclass(cls, gemm_aot.GemmError))


class RawPointerRefusals(unittest.TestCase):
    """gemm() over raw addresses: each refusal comes before a device is needed."""

    def refused(self, cls, kind, needle, **kw):
        args = dict(a=A, b=B, c=C, m=4, n=64, k=32)
        args.update(kw)
        with self.assertRaises(cls) as caught:
            gemm_aot.gemm(**args)
        self.assertEqual(caught.exception.kind, kind)
        self.assertIn(needle, str(caught.exception))

    def test_numbers_that_are_no_sizes_or_addresses(self):
        self.refused(gemm_aot.RefusedError, "invalid_argument",
                     "m = -1 must be a non-negative int", m=-1)
        self.refused(gemm_aot.RefusedError, "invalid_argument",
                     "lda = 32.0 must be a non-negative int", lda=32.0)
        self.refused(gemm_aot.RefusedError, "invalid_argument",
                     "stream = '0' must be a non-negative int", stream="0")

    def test_bad_words(self):
        self.refused(gemm_aot.RefusedError, "invalid_argument", 'op "tt"', op="tt")
        self.refused(gemm_aot.RefusedError, "invalid_argument", 'dtype "f64"', dtype="f64")
        self.refused(gemm_aot.RefusedError, "invalid_argument", 'policy "fast"', policy="fast")
        self.refused(gemm_aot.RefusedError, "invalid_argument", 'mode "turbo"', mode="turbo")

    def test_shapes_and_leading_dimensions(self):
        self.refused(gemm_aot.RefusedError, "leading_dimension",
                     "leading dimension of A is 31, less than the 32", lda=31)
        self.refused(gemm_aot.RefusedError, "leading_dimension", "of C is 8", ldc=8)
        self.refused(gemm_aot.RefusedError, "dimension_overflow", "m = 2147483648", m=1 << 31)

    def test_pointers(self):
        self.refused(gemm_aot.RefusedError, "null_pointer", "B is a null pointer", b=0)
        self.refused(gemm_aot.RefusedError, "misaligned", "not aligned to 4 bytes", c=C + 2)
        self.refused(gemm_aot.RefusedError, "misaligned", "not aligned to 2 bytes", a=A + 1)

    def test_output_overlapping_an_input(self):
        self.refused(gemm_aot.RefusedError, "overlap", "overlaps input A", c=A + 16)
        self.refused(gemm_aot.RefusedError, "overlap", "overlaps input bias", bias=C + 64)

    def test_a_batch_entry_is_named(self):
        with self.assertRaises(gemm_aot.RefusedError) as caught:
            _native.gemm(0, 0, "nn", 4, 64, 32, "bf16", "f32", A, 32, B, 64, A - 0x1000, 64,
                         count=2, strides=(0, 0, 0x1000 // 4))
        self.assertTrue(str(caught.exception).startswith("batch entry 1:"), str(caught.exception))

    def test_no_driver_is_a_device_error(self):
        if gemm_aot.driver_present():
            self.skipTest("a driver is present")
        with self.assertRaises(gemm_aot.DeviceError) as caught:
            gemm_aot.gemm(A, B, C, 4, 64, 32)
        self.assertEqual(caught.exception.kind, "no_driver")
        self.assertIn("no CUDA driver found", str(caught.exception))
        with self.assertRaises(gemm_aot.DeviceError):
            gemm_aot.tier(0)


class Layouts(unittest.TestCase):
    """How a view's strides pick the kernel op, checked on plain Matrix values (no device)."""

    def m(self, rows, cols, rs, cs):
        from gemm_aot._operands import Matrix

        return Matrix(0x1000, rows, cols, rs, cs, "bf16", ("cuda", 0), None)

    def test_row_major_and_transposed_views(self):
        from gemm_aot import _op

        x, w = self.m(33, 64, 64, 1), self.m(64, 128, 128, 1)
        self.assertEqual(_op(x, w), ("nn", 64, 128))
        # w.t() of a [128, 64] weight: stored [n, k] with ld 64.
        self.assertEqual(_op(x, self.m(64, 128, 1, 64)), ("nt", 64, 64))
        # x.t() of a [64, 33] matrix: A stored [k, m] with ld 33.
        self.assertEqual(_op(self.m(33, 64, 1, 33), w), ("tn", 33, 128))
        self.assertIsNone(_op(self.m(33, 64, 1, 33), self.m(64, 128, 1, 64)))
        # A padded row stride is a leading dimension; one row or one column needs none.
        self.assertEqual(_op(self.m(33, 64, 80, 1), w)[1], 80)
        self.assertEqual(_op(self.m(1, 64, 999, 1), w)[1], 64)
        self.assertEqual(_op(x, self.m(64, 1, 1, 1)), ("nn", 64, 1))

    def test_views_without_a_contiguous_dimension_are_refused(self):
        from gemm_aot import _op

        with self.assertRaises(gemm_aot.RefusedError) as caught:
            _op(self.m(33, 64, 128, 2), self.m(64, 8, 8, 1))
        self.assertIn("no dimension is contiguous", str(caught.exception))

    def test_outputs_must_be_row_major(self):
        from gemm_aot._operands import output_ld

        self.assertEqual(output_ld(self.m(4, 64, 96, 1), "out"), 96)
        for bad in (self.m(4, 64, 1, 4), self.m(1, 64, 128, 2)):
            with self.assertRaises(gemm_aot.RefusedError):
                output_ld(bad, "out")

    def test_raw_arguments_must_be_non_negative_ints(self):
        with self.assertRaises(gemm_aot.RefusedError) as caught:
            gemm_aot.gemm(A, B, C, 4, 64, 32, lda=-1)
        self.assertIn("lda = -1", str(caught.exception))


class RowRefusals(unittest.TestCase):
    """The row kernels' native call refuses without a device as gemm() does."""

    def refused(self, kind, needle, **kw):
        args = dict(op="softmax", src_dtype="f32", dst_dtype="f32", src=A, ld_src=64, dst=C,
                    ld_dst=64, rows=4, cols=64)
        args.update(kw)
        with self.assertRaises(gemm_aot.GemmError) as caught:
            _native.rows(0, 0, **args)
        self.assertEqual(caught.exception.kind, kind)
        self.assertIn(needle, str(caught.exception))

    def test_bad_calls(self):
        self.refused("invalid_argument", 'row op "sum"', op="sum")
        self.refused("invalid_argument", 'dtype "f64"', src_dtype="f64")
        self.refused("leading_dimension", "leading dimension of A is 63", ld_src=63)
        self.refused("overlap", "overlaps input A", dst=A + 64)
        self.refused("null_pointer", "A is a null pointer", src=0)

    def test_no_driver(self):
        if gemm_aot.driver_present():
            self.skipTest("a driver is present")
        self.refused("no_driver", "no CUDA driver found")

    def test_the_functions_take_torch_tensors(self):
        with self.assertRaises(gemm_aot.RefusedError):
            gemm_aot.softmax([1.0, 2.0])


class DlpackRefusals(unittest.TestCase):
    def setUp(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy is not installed")
        self.np = numpy

    def test_host_memory_is_refused(self):
        np = self.np
        a, b, c = np.ones((4, 32), np.float32), np.ones((32, 64), np.float32), np.zeros((4, 64), np.float32)
        with self.assertRaises(gemm_aot.RefusedError) as caught:
            gemm_aot.mm(a, b, out=c)
        self.assertIn("a is in CPU memory (DLPack device type 1)", str(caught.exception))
        self.assertTrue((c == 0).all(), "a refused call wrote its output")

    def test_out_is_required(self):
        np = self.np
        with self.assertRaises(gemm_aot.RefusedError) as caught:
            gemm_aot.mm(np.ones((4, 32), np.float32), np.ones((32, 64), np.float32))
        self.assertIn("out= is required", str(caught.exception))

    def test_a_capsule_is_read_and_not_consumed(self):
        np = self.np
        x = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
        capsule = x.__dlpack__()
        info = _native.dlpack_tensor(capsule)
        self.assertEqual(info["shape"], [3, 2])
        self.assertEqual(info["strides"], [4, 2])
        self.assertEqual(tuple(info["dtype"]), (2, 32, 1))
        self.assertEqual(info["device_type"], 1)
        self.assertEqual(info["address"], x.__array_interface__["data"][0])
        # Not consumed: it can be read again.
        self.assertEqual(_native.dlpack_tensor(capsule)["shape"], [3, 2])

    def test_not_a_capsule(self):
        with self.assertRaises(TypeError):
            _native.dlpack_tensor(object())


class TorchModuleWithoutTorch(unittest.TestCase):
    def test_the_mode_needs_torch(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError):
                import gemm_aot.torch  # noqa: F401
        else:
            self.skipTest("torch is installed")


class NativeDispatchWithoutTorch(unittest.TestCase):
    """The native dispatch's parts that need no torch: its source ships in the wheel, every
    functional aten op it registers has a fallback schema (the Python override it hands
    declined calls to), every out= overload its route to torch's own kernel, and the native
    module's table is there. Building and calling it needs torch:
    test_dispatch_cpu.py."""

    def test_the_source_ships_and_names_the_fallbacks_schemas_ops(self):
        import re

        from gemm_aot import _dispatch

        with open(_dispatch._SOURCE) as f:
            source = f.read()
        registered = set(re.findall(r'library->impl\("([^"]+)"', source))
        functional = {op for op in registered if not op.endswith(("out", "_"))}
        self.assertEqual(functional, set(_dispatch.FALLBACK_SCHEMAS))
        for op, schema in _dispatch.FALLBACK_SCHEMAS.items():
            name = schema.split("(")[0]
            self.assertEqual(name, op.replace(".", "_") + "_fallback")
            self.assertIn(f'fallback("{op.replace(".", "_")}")', source)
        # mv.out's kernel copies mv's result where it cannot plan into out; the others', and
        # the fallbacks, reach torch's own out= kernels through gemm_aot_torch::<op>_<overload>,
        # defined in the other file the build reads, which ships too.
        with open(_dispatch._SOURCES[1]) as f:
            routes = f.read()
        for op in {op for op in registered if op.endswith("out")} - {"mv.out"}:
            self.assertIn('"{}('.format(op.replace(".", "_")), routes, op)

    def test_the_table_has_an_address(self):
        self.assertGreater(_native.dispatch_api(), 0)
        self.assertEqual(_native.dispatch_trace(False), [])


class NativeBuildWithoutTorch(unittest.TestCase):
    """How ``_dispatch._build`` builds the native library, over a stand-in torch (a folder
    with torch's header's name) and a stand-in compiler that records its calls: the tensor
    reader is built in where Python's headers are, a build that fails in the reader's source
    is made again without it, any other failure is raised, and each result is cached."""

    def setUp(self):
        import tempfile
        import types

        from gemm_aot import _dispatch

        self.d = _dispatch
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        os.makedirs(os.path.join(root, "torch", "include", "torch"))
        open(os.path.join(root, "torch", "include", "torch", "library.h"), "w").close()
        self.torch = types.SimpleNamespace(__file__=os.path.join(root, "torch", "__init__.py"),
                                           __version__="0.0-stand-in", _C=types.SimpleNamespace())
        self.calls = os.path.join(root, "calls")
        cxx = os.path.join(root, "cxx")
        with open(cxx, "w") as f:
            f.write(f"""#!/bin/sh
[ "$1" = --version ] && {{ echo stand-in 1; exit 0; }}
echo "$@" >> {self.calls}
case "$*" in *tensor_reader.cpp*) [ -n "$FAIL_READER" ] && {{ echo "$FAIL_READER" >&2; exit 1; }};; esac
[ -n "$FAIL_ALL" ] && {{ echo "dispatch.cpp:1: error: no" >&2; exit 1; }}
while [ $# -gt 0 ]; do [ "$1" = -o ] && : > "$2"; shift; done
""")
        os.chmod(cxx, 0o755)
        self.env = {k: os.environ.get(k) for k in ("CXX", "GEMM_AOT_DISPATCH_CACHE", "FAIL_READER", "FAIL_ALL")}
        os.environ["CXX"] = cxx
        os.environ["GEMM_AOT_DISPATCH_CACHE"] = os.path.join(root, "cache")
        self.include = _dispatch._python_include
        self.reason = _dispatch._reader_reason

    def tearDown(self):
        for k, v in self.env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.d._python_include = self.include
        self.d._reader_reason = self.reason
        self.tmp.cleanup()

    def compiles(self):
        if not os.path.exists(self.calls):
            return []
        with open(self.calls) as f:
            return f.read().splitlines()

    def test_the_reader_is_built_in_where_pythons_headers_are(self):
        self.d._python_include = lambda: self.tmp.name
        path = self.d._build(self.torch)
        self.assertFalse(path.endswith("-noreader.so"), path)
        self.assertEqual(self.d._reader_reason, "built in")
        (call,) = self.compiles()
        self.assertIn("tensor_reader.cpp", call)
        self.assertIn("-ltorch_python", call)
        self.assertEqual(self.d._build(self.torch), path)
        self.assertEqual(len(self.compiles()), 1, "the second build ran the compiler")

    def test_a_failed_build_with_the_reader_leaves_the_dispatch(self):
        self.d._python_include = lambda: self.tmp.name
        # A compile error in the reader's source, and a link error that names no source.
        for message in ("tensor_reader.cpp:9: error: no", "ld: cannot find -ltorch_python"):
            with self.subTest(message=message):
                os.environ["GEMM_AOT_DISPATCH_CACHE"] = os.path.join(self.tmp.name, message[:2])
                if os.path.exists(self.calls):
                    os.unlink(self.calls)
                os.environ["FAIL_READER"] = message
                path = self.d._build(self.torch)
                self.assertTrue(path.endswith("-noreader.so"), path)
                self.assertTrue(self.d._reader_reason.startswith("the build with the tensor reader failed"))
                self.assertIn(message, self.d._reader_reason)
                first, second = self.compiles()
                self.assertIn("tensor_reader.cpp", first)
                self.assertNotIn("tensor_reader.cpp", second)
                self.assertEqual(self.d._build(self.torch), path)
                self.assertEqual(len(self.compiles()), 2, "the second build ran the compiler")
                self.assertIn("an earlier build", self.d._reader_reason)

    def test_without_pythons_headers_the_dispatch_is_built_alone(self):
        self.d._python_include = lambda: None
        path = self.d._build(self.torch)
        self.assertTrue(path.endswith("-noreader.so"), path)
        self.assertIn("Python.h", self.d._reader_reason)
        (call,) = self.compiles()
        self.assertNotIn("tensor_reader.cpp", call)

    def test_a_failure_without_the_reader_too_is_raised(self):
        self.d._python_include = lambda: self.tmp.name
        os.environ["FAIL_ALL"] = "1"
        with self.assertRaisesRegex(RuntimeError, "dispatch.cpp:1: error"):
            self.d._build(self.torch)
        first, second = self.compiles()
        self.assertNotIn("tensor_reader.cpp", second)

    def test_a_library_without_the_reader_loads_and_the_fast_path_says_why(self):
        """A library built without the reader (here a stand-in with the dispatch's entry
        points alone) loads; the fast path then reads as before, and says why."""
        import shutil
        import subprocess

        from gemm_aot import _fastpath

        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            self.skipTest("no C compiler to build the stand-in library")
        src, lib = os.path.join(self.tmp.name, "stub.c"), os.path.join(self.tmp.name, "stub.so")
        with open(src, "w") as f:
            f.write("""#include <stdint.h>
uint32_t gemm_aot_dispatch_abi(void) { return 1; }
int32_t gemm_aot_dispatch_register(const void* api, const char* key) { return 1; }
void gemm_aot_dispatch_unregister(void) {}
void gemm_aot_dispatch_counts(uint64_t* out) { out[0] = out[1] = 0; }
const char* gemm_aot_dispatch_error(void) { return "stand-in"; }
""")
        subprocess.run([cc, "-shared", "-fPIC", src, "-o", lib], check=True)
        saved = (self.d._build, self.d._lib, self.d._failed, self.d._reason, _fastpath.reader)
        try:
            self.d._build, self.d._lib, self.d._failed = (lambda torch: lib), None, False
            self.d._reader_reason = "built in"  # what a build with the reader would say
            self.assertIsNotNone(self.d.load(self.torch))
            self.assertEqual(self.d.reader_status(), "the library has no tensor reader")
            self.assertIsNone(self.d.reader_addresses())
            _fastpath._install_reader(self.torch)
            self.assertEqual(_fastpath.reader, "not in the native library: the library has no tensor reader")
            self.assertEqual(_native.torch_reader_installed(), (False, False))
        finally:
            self.d._build, self.d._lib, self.d._failed, self.d._reason, _fastpath.reader = saved


if __name__ == "__main__":
    unittest.main()
