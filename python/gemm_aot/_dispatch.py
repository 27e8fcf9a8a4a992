"""The batch-invariant mode's native dispatch: ``csrc/dispatch.cpp``, built on first use
against the torch installed and cached, registers C++ kernels for the mode's aten ops, so
torch's dispatcher reaches gemm-aot's launch with no Python frame in between (the Python
overrides cost about 8 us a call in torch's dispatch alone). Calls it declines go to the
Python overrides, through the ops ``gemm_aot::<op>_fallback`` defined here, so every refusal
is worded, and every result computed, as before.

It needs a C++ compiler (``$CXX``, else ``c++``) and torch's headers, which torch's wheels
ship. Without them the mode registers the Python overrides instead and ``status()`` says why;
a failed build is not retried in the same process. ``GEMM_AOT_NATIVE_DISPATCH=0`` turns it
off (and with it the tensor reader, ``_fastpath.py``, which the library carries where Python's
headers are installed). The library is cached under ``$GEMM_AOT_DISPATCH_CACHE`` (default
``~/.cache/gemm_aot``), keyed by the sources, torch's version, build and location, the
compiler's version and where Python's headers are, so the build (7 s on 2 cores of this
project's build machine; longer on slow disks) happens once per torch. A library built without
the reader because the reader's build failed stays cached as it is: remove the cache folder to
try again.
"""

import atexit

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from . import _native

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "dispatch.cpp")
# The tensor reader (python/src/tensor_reader.rs), built into the same library where Python's
# headers are installed (it reads a Python tensor object with torch's own header).
_READER = os.path.join(os.path.dirname(_SOURCE), "tensor_reader.cpp")
# Every file the build reads (dispatch.cpp includes the next two): the cache key hashes them all.
_SOURCES = [_SOURCE, os.path.join(os.path.dirname(_SOURCE), "torch_out.h"),
            os.path.join(os.path.dirname(_SOURCE), "view_abi.h"), _READER]

# Fallback op schemas: each the schema of the aten op whose Python override is its kernel.
FALLBACK_SCHEMAS = {
    "mm": "mm_fallback(Tensor self, Tensor mat2) -> Tensor",
    "addmm": "addmm_fallback(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "bmm": "bmm_fallback(Tensor self, Tensor mat2) -> Tensor",
    "mv": "mv_fallback(Tensor self, Tensor vec) -> Tensor",
    "dot": "dot_fallback(Tensor self, Tensor tensor) -> Tensor",
    "vdot": "vdot_fallback(Tensor self, Tensor other) -> Tensor",
    "baddbmm": "baddbmm_fallback(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "addmv": "addmv_fallback(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "_addmm_activation": "_addmm_activation_fallback(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False) -> Tensor",
    "addbmm": "addbmm_fallback(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "_softmax": "_softmax_fallback(Tensor self, int dim, bool half_to_float) -> Tensor",
    "_log_softmax": "_log_softmax_fallback(Tensor self, int dim, bool half_to_float) -> Tensor",
    "mean.dim": "mean_dim_fallback(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "mm.dtype": "mm_dtype_fallback(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "bmm.dtype": "bmm_dtype_fallback(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "addmm.dtype": "addmm_dtype_fallback(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "baddbmm.dtype": "baddbmm_dtype_fallback(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
}

_lib = None  # the loaded ctypes library
_failed = False  # a build or load failed: not retried in this process
_reason = "not loaded yet"
_reader_reason = "not built yet"  # why the library has no tensor reader, or "built in"
_BUILD_TIMEOUT_S = 900  # one compiler run; past it the build counts as failed
_fallbacks = None  # the torch.library.Library defining gemm_aot::*_fallback
_fallback_keys = set()
_registered = False  # the native kernels are registered (the out= overloads among them)


def _cache_dir():
    root = os.environ.get("GEMM_AOT_DISPATCH_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "gemm_aot")
    return root


def _compiler():
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        raise RuntimeError("no C++ compiler found (set CXX, or install g++)")
    return cxx


def _compiler_version(cxx):
    try:
        done = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
        return (done.stdout or done.stderr).splitlines()[0] if done.returncode == 0 else ""
    except (OSError, IndexError, subprocess.SubprocessError):
        return ""


def _has_cuda(lib_dir):
    """Whether the torch installed has CUDA kernels (libtorch_cuda) to link against."""
    return os.path.isfile(os.path.join(lib_dir, "libtorch_cuda.so"))


def _python_include():
    """The directory of Python's headers, where Python.h is installed there; else None."""
    for name in ("include", "platinclude"):
        d = sysconfig.get_paths().get(name)
        if d and os.path.isfile(os.path.join(d, "Python.h")):
            return d
    return None


def _build(torch):
    """The path of the built library, building it when the cache lacks it. The tensor reader
    is built in where Python's headers are installed; where that build fails, for whatever
    reason, the library is built again without it (``_reader_reason`` says why), and only
    that build's failure is raised."""
    global _reader_reason
    source = b""
    for path in _SOURCES:
        with open(path, "rb") as f:
            source += f.read()
    cxx = _compiler()
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    include = os.path.join(torch_dir, "include")
    if not os.path.isfile(os.path.join(include, "torch", "library.h")):
        raise RuntimeError(f"torch's C++ headers are not in {include}")
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    python_include = _python_include()
    key = hashlib.sha256(
        b"\0".join([source, torch.__version__.encode(), torch_dir.encode(), str(abi).encode(),
                    sysconfig.get_platform().encode(), _compiler_version(cxx).encode(),
                    str(python_include).encode(),
                    str(getattr(getattr(torch, "version", None), "git_version", "")).encode()])
    ).hexdigest()[:16]
    out_dir = _cache_dir()
    lib_dir = os.path.join(torch_dir, "lib")
    base = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
            "-I", include, "-I", os.path.join(include, "torch", "csrc", "api", "include")]
    libs = ["-L", lib_dir, "-lc10", "-ltorch_cpu", f"-Wl,-rpath,{lib_dir}"]
    if _has_cuda(lib_dir):
        # The fallbacks' route to torch's own CUDA out= kernels (torch_out.h, at::cuda::), and
        # to its out_dtype ones where this torch has them (2.8 and later).
        base += ["-DGEMM_AOT_TORCH_CUDA=1"]
        libs += ["-ltorch_cuda"]
        if has_aten_op(torch, "mm.dtype"):
            base += ["-DGEMM_AOT_TORCH_OUT_DTYPE=1"]
    builds = []  # (the library's name, its sources and flags), tried in turn
    if python_include is not None:
        builds.append((f"dispatch-{key}.so", ["-I", python_include, _SOURCE, _READER], ["-ltorch_python"]))
    builds.append((f"dispatch-{key}-noreader.so", [_SOURCE], []))
    for name, sources, _ in builds:
        path = os.path.join(out_dir, name)
        if os.path.isfile(path):
            _reader_reason = "built in" if _READER in sources else _no_reader(python_include)
            return path
    os.makedirs(out_dir, exist_ok=True)
    print(f"gemm_aot: building the native dispatch for torch {torch.__version__} "
          f"(once; cached in {out_dir})", file=sys.stderr, flush=True)
    for i, (name, sources, extra) in enumerate(builds):
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=out_dir)
        os.close(fd)
        try:
            done = subprocess.run(base + sources + ["-o", tmp] + libs + extra, capture_output=True,
                                  text=True, errors="replace", timeout=_BUILD_TIMEOUT_S)
            if done.returncode != 0:
                output = (done.stderr or done.stdout).strip()
                tail = "\n".join(output.splitlines()[-12:])
                if _READER in sources and i + 1 < len(builds):
                    _reader_reason = f"the build with the tensor reader failed:\n{tail}"
                    continue
                raise RuntimeError(f"{os.path.basename(cxx)} failed ({done.returncode}):\n{tail}")
            os.replace(tmp, os.path.join(out_dir, name))  # atomic: another process may build the same key
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        if _READER in sources:
            _reader_reason = "built in"
        elif python_include is None:
            _reader_reason = _no_reader(None)
        return os.path.join(out_dir, name)
    raise AssertionError("unreachable: the last build raises or returns")


def _no_reader(python_include):
    if python_include is None:
        return "Python's headers (Python.h) are not installed"
    return "the build with the tensor reader failed (an earlier build; remove the cache to retry)"


def load(torch):
    """The native dispatch library, built and loaded once; None (``status()`` says why) when
    it cannot be."""
    global _lib, _reason, _failed, _reader_reason
    if _lib is not None:
        return _lib
    if _failed:
        return None
    if os.environ.get("GEMM_AOT_NATIVE_DISPATCH", "1") == "0":
        _reason = "turned off by GEMM_AOT_NATIVE_DISPATCH=0"
        return None
    try:
        lib = ctypes.CDLL(_build(torch))
        lib.gemm_aot_dispatch_abi.restype = ctypes.c_uint32
        lib.gemm_aot_dispatch_register.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.gemm_aot_dispatch_register.restype = ctypes.c_int32
        lib.gemm_aot_dispatch_unregister.restype = None
        lib.gemm_aot_dispatch_counts.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        lib.gemm_aot_dispatch_counts.restype = None
        lib.gemm_aot_dispatch_error.restype = ctypes.c_char_p
    except (OSError, RuntimeError, AttributeError, subprocess.SubprocessError) as e:
        _reason = f"the native dispatch could not be built or loaded: {e}"
        _failed = True
        return None
    _lib = lib
    _reason = "loaded"
    # Removed before the interpreter (and the fallbacks' Python kernels) goes.
    atexit.register(unregister)
    if not hasattr(lib, "gemm_aot_read_tensor") and _reader_reason == "built in":
        _reader_reason = "the library has no tensor reader"
    return lib


def has_aten_op(torch, op):
    """Whether the torch installed has aten ``op`` ("name" or "name.overload"): the
    ``out_dtype`` overloads are newer than some torch this package takes."""
    name, _, overload = op.partition(".")
    try:
        packet = getattr(torch.ops.aten, name)
        return not overload or overload in packet.overloads()
    except (AttributeError, RuntimeError):
        return False


def define_fallbacks(torch, overrides, key):
    """Defines ``gemm_aot::<op>_fallback`` once, each with its Python override as its kernel
    at dispatch key ``key``."""
    global _fallbacks
    if _fallbacks is None:
        library = torch.library.Library("gemm_aot", "DEF")
        for schema in FALLBACK_SCHEMAS.values():
            library.define(schema)
        _fallbacks = library
    if key not in _fallback_keys:
        for op, fn in overrides.items():
            _fallbacks.impl(FALLBACK_SCHEMAS[op].split("(")[0], fn, key)
        _fallback_keys.add(key)


def register(torch, overrides, key="CUDA"):
    """Registers the native kernels at ``key``, their fallbacks the Python ``overrides``;
    whether it did (``status()`` says why not)."""
    global _reason
    lib = load(torch)
    if lib is None:
        return False
    try:
        define_fallbacks(torch, overrides, key)
    except RuntimeError as e:  # torch refused the schemas: the Python overrides serve
        _reason = f"the fallback ops could not be defined: {e}"
        return False
    global _registered
    if lib.gemm_aot_dispatch_register(_native.dispatch_api(), key.encode()) != 0:
        _reason = "registration failed: " + lib.gemm_aot_dispatch_error().decode(errors="replace")
        return False
    _reason = "registered"
    _registered = True
    return True


def unregister():
    """Removes the native kernels (torch's own run again)."""
    global _registered
    if _lib is not None:
        _lib.gemm_aot_dispatch_unregister()
    _registered = False


def serves_out():
    """Whether the native kernels are registered: they serve the ``out=`` overloads too, so
    torch's own ``out=`` kernels are reached through ``gemm_aot_torch::<op>_out``."""
    return _registered


def counts():
    """(calls served natively, calls handed to the Python overrides) since the process began."""
    if _lib is None:
        return (0, 0)
    out = (ctypes.c_uint64 * 2)()
    _lib.gemm_aot_dispatch_counts(out)
    return (out[0], out[1])


def status():
    """Where the native dispatch stands: "loaded", "registered", or why it is not used."""
    return _reason


def reader_addresses():
    """(gemm_aot_read_tensor, gemm_aot_current_stream) of the loaded library, as addresses;
    None where it is not loaded or has no tensor reader (``reader_status()`` says why)."""
    if _lib is None or _reader_reason != "built in":
        return None
    try:
        read, stream = _lib.gemm_aot_read_tensor, _lib.gemm_aot_current_stream
        abi = _lib.gemm_aot_reader_abi
    except AttributeError:
        return None
    abi.restype = ctypes.c_uint32
    if abi() != 1:
        return None
    return (ctypes.cast(read, ctypes.c_void_p).value, ctypes.cast(stream, ctypes.c_void_p).value)


def reader_stream_function():
    """The loaded library's ``gemm_aot_current_stream`` as a ctypes function (the reader's
    check at installation calls it)."""
    fn = _lib.gemm_aot_current_stream
    fn.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_uint64)]
    fn.restype = ctypes.c_int32
    return fn


def reader_status():
    """Whether the library has the tensor reader ("built in"), or why not."""
    return _reader_reason if _lib is not None or _failed else "not built yet"
