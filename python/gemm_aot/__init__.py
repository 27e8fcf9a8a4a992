"""gemm_aot: batch-invariant GEMM on NVIDIA GPUs, from Python.

Every output row of these functions is a function of that row's inputs alone, whatever the
batch size, and identical run to run: the kernels are compiled ahead of time from the
gemm-aot specs and embedded in this package.

- ``mm``, ``addmm``, ``linear``, ``bmm`` take torch tensors (CUDA, bfloat16, float16 or
  float32), launch on torch's current stream, write into torch-allocated outputs, and take
  strided views whose inner stride is 1, transposes included, without copying them.
- The same functions take DLPack producers or capsules (``out=`` required), and ``gemm``
  takes raw device pointers, for code without torch.
- ``softmax``, ``log_softmax`` and ``mean`` along the last dimension: one block a row in a
  fixed tree (contract row-t256), so a row's result does not depend on the number of rows.
- ``gemm_aot.torch.set_batch_invariant_mode(True)`` routes torch's own ``mm``, ``addmm``,
  ``bmm``, ``mv``, ``_softmax``, ``_log_softmax`` and ``mean.dim`` (and so ``linear``,
  ``matmul``, RMSNorm, attention's softmax and autograd through linear) through these kernels.

torch is imported only when a torch tensor is passed. Every bad call raises a
``GemmError`` naming what is wrong, before anything is enqueued and with the output
untouched.
"""

import contextlib

from . import _fastpath, _native
from ._errors import DeviceError, GemmError, RefusedError, UnsupportedError
from ._operands import from_dlpack, from_torch, is_torch, output_ld, storage
from ._rows import log_softmax, mean, softmax

__version__ = _native.version()
__all__ = [
    "mm",
    "addmm",
    "linear",
    "bmm",
    "softmax",
    "log_softmax",
    "mean",
    "gemm",
    "tier",
    "driver_present",
    "GemmError",
    "RefusedError",
    "UnsupportedError",
    "DeviceError",
]

# (device, policy, mode, op, ab, c) the device's tier routes only with an f32 output: computed into
# an f32 scratch, then rounded into the output by torch's copy_ (round to nearest even,
# the kernels' own store, so the bits are those of a kernel storing the narrow type).
_F32_ONLY = set()

# (device, mode, op, ab) whose tier has no tensor-core route at all: 16-bit inputs there run
# the tier's default policy.
_NO_TENSOR_CORE = set()

# Reusable: entering it does nothing.
_NO_GUARD = contextlib.nullcontext()


def driver_present():
    """Whether a CUDA driver can be loaded on this machine."""
    return _native.driver_present()


def tier(device=0):
    """The name of the gemm-aot tier serving CUDA device ``device`` (as ``"sm90a"``)."""
    return _native.tier(device)


def _refuse(message):
    raise RefusedError("invalid_argument", message)


def gemm(a, b, c, m, n, k, *, op="nn", dtype="bf16", out_dtype="f32", lda=None, ldb=None,
         ldc=None, bias=None, beta=0.0, policy=None, mode=None, device=0, stream=0):
    """``C[m, n] = A · B (+ bias) (+ beta C)`` over raw device addresses (ints): ``op``
    ``"nn"`` (A ``[m, k]``, B ``[k, n]``), ``"nt"`` (B stored ``[n, k]``) or ``"tn"`` (A
    stored ``[k, m]``), every matrix row-major with its leading dimension (default: its row
    length). ``stream`` is a ``CUstream`` handle of ``device``'s primary context (0: the
    legacy default stream), which must stay alive while the kernel runs, as must the memory.
    Returns what was launched."""
    a_cols = m if op == "tn" else k
    b_cols = k if op == "nt" else n
    try:
        # The native call takes only non-negative ints for these (its argument conversion
        # refuses anything else before it does anything), so the common call pays no check
        # here; a refused conversion is worded below.
        return _native.gemm(
            device, stream, op, m, n, k, dtype, out_dtype,
            a, a_cols if lda is None else lda,
            b, b_cols if ldb is None else ldb,
            c, n if ldc is None else ldc,
            bias, beta, policy, mode,
        )
    except (TypeError, OverflowError):
        for label, v in (("m", m), ("n", n), ("k", k), ("lda", lda), ("ldb", ldb), ("ldc", ldc),
                         ("a", a), ("b", b), ("c", c), ("bias", bias), ("device", device),
                         ("stream", stream)):
            if v is not None and (not isinstance(v, int) or v < 0):
                raise RefusedError("invalid_argument",
                                   f"{label} = {v!r} must be a non-negative int") from None
        raise


def _op(A, B):
    """The kernel op reading A and B as stored, with their leading dimensions; ``None``
    when both are transposes (no kernel reads that)."""
    ta, lda = storage(A, "a")
    tb, ldb = storage(B, "b")
    if ta and tb:
        return None
    return ("tn" if ta else "nt" if tb else "nn"), lda, ldb


def _check_shapes(A, B, out_shape, bias_len, batch=None):
    if A.cols != B.rows:
        _refuse(f"a is ({A.rows}, {A.cols}) and b is ({B.rows}, {B.cols}): a's columns must equal b's rows")
    if A.dtype != B.dtype:
        _refuse(f"a is {A.dtype} and b is {B.dtype}: both inputs need one dtype")
    if A.device != B.device:
        _refuse(f"a is on {A.device} and b on {B.device}: the inputs must be on one device")
    if out_shape is not None and tuple(out_shape) != (A.rows, B.cols):
        _refuse(f"out is {tuple(out_shape)} where ({A.rows}, {B.cols}) is needed")
    if bias_len is not None and bias_len != B.cols:
        _refuse(f"bias has {bias_len} elements where {B.cols} (n) are needed")


def _native_call(A, B, C, ldc, bias, beta, policy, mode, stream, count=1, strides=(0, 0, 0), op=None):
    op, lda, ldb = op or _op(A, B)
    return _native.gemm(
        A.device[1], stream, op, A.rows, B.cols, A.cols, A.dtype, C.dtype,
        A.address, lda, B.address, ldb, C.address, ldc,
        bias=bias, beta=beta, policy=policy, mode=mode, count=count, strides=strides,
    )


def _device_guard(torch, device):
    """Makes ``device`` current for the call when it is not: the native call binds the
    device's primary context to the thread, and torch's guard restores the thread's device
    (and context) after it."""
    current = torch.cuda.current_device()
    if device.index is None or device.index == current:
        return _NO_GUARD
    return torch.cuda.device(device.index)


def _current_stream(torch, device):
    """torch's current stream on ``device`` as a raw ``CUstream`` (the cheap accessor where
    this torch has it)."""
    raw = _RAW_STREAM.get("f", False)
    if raw is False:
        raw = _RAW_STREAM["f"] = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device.index if device.index is not None else torch.cuda.current_device())
    return torch.cuda.current_stream(device).cuda_stream


# Looked up once: torch's raw current-stream accessor (None where this torch lacks it).
_RAW_STREAM = {}


def _torch_gemm(a, b, out, bias, beta, policy, mode, batched):
    """mm / bmm over torch tensors (``a`` and ``b`` 2-D, or 3-D when ``batched``)."""
    if policy is None and mode is None and beta == 0 and (_fastpath.enabled or _fastpath.on()):
        # The common call, read and launched natively; None: declined, nothing done.
        done = _native.torch_mm(a, b, out, bias, batched)
        if done is not None:
            return done
    import torch

    def matrices(t, name):
        if batched:
            if t.dim() != 3:
                _refuse(f"{name} has {t.dim()} dimensions where bmm needs 3")
            return from_torch(t[0] if t.shape[0] > 0 else t.new_empty(t.shape[1:]), name), t.stride(0)
        if t.dim() != 2:
            _refuse(f"{name} has {t.dim()} dimensions where mm needs 2")
        return from_torch(t, name), 0

    if not (is_torch(a) and is_torch(b)):
        _refuse("a and b must both be torch tensors, or both DLPack producers")
    A, sa = matrices(a, "a")
    B, sb = matrices(b, "b")
    if batched and a.shape[0] != b.shape[0]:
        _refuse(f"a has {a.shape[0]} matrices and b {b.shape[0]}: bmm needs as many of each")
    op = _op(A, B)
    if op is None:
        # Both transposes: no kernel reads that; a row-major copy of a (documented).
        a = a.contiguous()
        A, sa = matrices(a, "a")
        op = _op(A, B)
    # Tensor cores for 16-bit inputs, named: left to the runtime's default, an op whose 16-bit
    # output the tier does not route (tn) would run the exact policy's half fallback, another
    # contract; named, it comes back unrouted and is computed into f32 by the tensor-core
    # kernel and rounded once (the bits of every other layout). A tier without tensor-core
    # routes for the op and type gets its default policy, remembered per key.
    implicit = policy is None and A.dtype != "f32" and (A.device, mode, op[0], A.dtype) not in _NO_TENSOR_CORE
    if implicit:
        policy = "tensor-core"
    count = a.shape[0] if batched else 1
    m, n = A.rows, B.cols
    shape = (count, m, n) if batched else (m, n)
    if out is not None:
        if not is_torch(out):
            _refuse("out must be a torch tensor when the inputs are")
        if tuple(out.shape) != shape:
            _refuse(f"out is {tuple(out.shape)} where {shape} is needed")
    if bias is not None and (not is_torch(bias) or bias.dim() != 1):
        _refuse("bias must be a 1-D torch tensor of n elements")
    _check_shapes(A, B, None, None if bias is None else bias.shape[0])
    out_dtype = a.dtype if out is None else out.dtype
    if bias is not None and bias.dtype != out_dtype:
        _refuse(f"bias is {bias.dtype} where the output's {out_dtype} is needed")
    if out is None:
        out = torch.empty(shape, dtype=out_dtype, device=a.device)
    O, so = matrices(out, "out")
    ldc = output_ld(O, "out")
    if bias is not None:
        if from_torch(bias, "bias").device != A.device:
            _refuse("bias is on another device than the inputs")
        if bias.stride(0) != 1 and bias.shape[0] > 1:
            _refuse(f"bias has stride {bias.stride(0)}: it must be contiguous")
    if O.device != A.device:
        _refuse(f"out is on {O.device} and the inputs on {A.device}")
    if count == 0 or m == 0 or n == 0:
        return out
    bias_ptr = None if bias is None else bias.data_ptr()
    with _device_guard(torch, a.device):
        stream = _current_stream(torch, a.device)
        key = (A.device, policy, mode, op[0], A.dtype, O.dtype)
        try:
            if key not in _F32_ONLY:
                try:
                    _native_call(A, B, O, ldc, bias_ptr, beta, policy, mode, stream, count,
                                 (sa, sb, so), op)
                    return out
                except UnsupportedError as e:
                    if e.kind != "no_route" or O.dtype == "f32":
                        raise
                    _F32_ONLY.add(key)
            # The tier serves this op and input dtype with an f32 output only.
            wide = out.float() if beta != 0 else torch.empty(shape, dtype=torch.float32, device=a.device)
            W, sw = matrices(wide, "out")
            # Held until the launch is enqueued (the caching allocator orders reuse on this stream).
            wide_bias = None if bias is None else bias.float()
            _native_call(A, B, W, output_ld(W, "out"), None if wide_bias is None else wide_bias.data_ptr(),
                         beta, policy, mode, stream, count, (sa, sb, sw), op)
            out.copy_(wide)
            return out
        except UnsupportedError as e:
            if not implicit or e.kind != "no_route":
                raise
            _NO_TENSOR_CORE.add((A.device, mode, op[0], A.dtype))
        # No tensor-core route for this op and input type: the tier's default policy.
        _native_call(A, B, O, ldc, bias_ptr, beta, None, mode, stream, count, (sa, sb, so), op)
    return out


def _dlpack_gemm(a, b, out, bias, beta, policy, mode, stream):
    if out is None:
        _refuse("out= is required for DLPack inputs (gemm_aot allocates only torch tensors)")
    A, B, O = from_dlpack(a, "a"), from_dlpack(b, "b"), from_dlpack(out, "out")
    Bias = None if bias is None else from_dlpack(bias, "bias")
    _check_shapes(A, B, (O.rows, O.cols), None if Bias is None else Bias.rows * Bias.cols)
    if O.device != A.device:
        _refuse(f"out is on {O.device} and the inputs on {A.device}")
    if Bias is not None:
        if Bias.device != A.device:
            _refuse(f"bias is on {Bias.device} and the inputs on {A.device}")
        if Bias.dtype != O.dtype:
            _refuse(f"bias is {Bias.dtype} where the output's {O.dtype} is needed")
        if Bias.rows != 1 or (Bias.cols > 1 and Bias.col_stride != 1):
            _refuse("bias must be n contiguous elements")
    if _op(A, B) is None:
        _refuse("a and b are both transposed views, which no kernel reads: make one row-major")
    ldc = output_ld(O, "out")
    return _native_call(A, B, O, ldc, None if Bias is None else Bias.address, beta, policy,
                        mode, stream)


def mm(a, b, *, out=None, bias=None, policy=None, mode=None, stream=0):
    """``a @ b (+ bias)``: ``a`` ``[m, k]``, ``b`` ``[k, n]``, the result ``[m, n]`` in
    ``a``'s dtype unless ``out`` (row-major, possibly float32 for 16-bit inputs) says
    otherwise. ``policy``: ``None`` (tensor cores for 16-bit torch inputs, exact FMA for
    float32; DLPack inputs take the runtime's default), ``"exact"`` or ``"tensor-core"``.
    ``mode``: ``None``/``"deterministic"``, or ``"cublas"`` to compare against cuBLAS (not
    batch-invariant). ``stream`` is used only
    for DLPack inputs (torch tensors run on torch's current stream). Returns ``out``."""
    if policy is None and mode is None and _fastpath.enabled:
        # The common torch call, read and launched natively with no Python frame between
        # (None: declined, nothing done; the paths below take it, with their messages).
        done = _native.torch_mm(a, b, out, bias, False)
        if done is not None:
            return done
    if is_torch(a) or is_torch(b):
        return _torch_gemm(a, b, out, bias, 0.0, policy, mode, batched=False)
    return _dlpack_gemm(a, b, out, bias, 0.0, policy, mode, stream)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None, policy=None, mode=None):
    """``beta * input + alpha * (mat1 @ mat2)`` as torch.addmm computes it, for ``alpha``
    1: a 1-D ``input`` (or ``[1, n]``) with ``beta`` 1 is the kernels' bias; a ``[m, n]``
    ``input`` is read as C with ``beta``."""
    if alpha != 1:
        raise UnsupportedError("unsupported", f"addmm with alpha = {alpha}: gemm_aot serves alpha = 1")
    if beta == 0:
        return mm(mat1, mat2, out=out, policy=policy, mode=mode)
    if not (is_torch(input) and is_torch(mat1) and is_torch(mat2)):
        _refuse("addmm takes torch tensors")
    if mat1.dim() != 2 or mat2.dim() != 2:
        _refuse(f"addmm takes 2-D mat1 and mat2; got {mat1.dim()}-D and {mat2.dim()}-D")
    m, n = mat1.shape[0], mat2.shape[-1]
    if input.dim() in (1, 2) and input.numel() == n and input.shape[-1] == n and beta == 1:
        bias = input.reshape(-1)
        if bias.shape[0] != n:
            _refuse(f"input has {bias.shape[0]} elements where {n} are needed")
        if bias.stride(0) != 1:
            bias = bias.contiguous()
        if out is not None and bias.dtype != out.dtype:
            bias = bias.to(out.dtype)
        return _torch_gemm(mat1, mat2, out, bias, 0.0, policy, mode, batched=False)
    import torch

    try:
        c = torch.broadcast_to(input, (m, n))
    except RuntimeError:
        _refuse(f"input of shape {tuple(input.shape)} does not broadcast to ({m}, {n})")
    dtype = input.dtype if out is None else out.dtype
    # A fresh C, so a refused call leaves `out` (and `input`) untouched.
    c = c.to(dtype=dtype, memory_format=torch.contiguous_format, copy=True)
    _torch_gemm(mat1, mat2, c, None, float(beta), policy, mode, batched=False)
    if out is None:
        return c
    out.copy_(c)
    return out


def linear(x, weight, bias=None, *, out=None, policy=None, mode=None):
    """``x @ weight.T (+ bias)`` with torch's ``[out_features, in_features]`` weight, ``x``
    of shape ``[..., in_features]`` (its leading dimensions must collapse into one without a
    copy: any contiguous or row-sliced tensor does)."""
    if not is_torch(x):
        _refuse("linear takes torch tensors (use mm with DLPack inputs)")
    if x.dim() < 1 or weight.dim() != 2:
        _refuse(f"linear takes x [..., in] and weight [out, in]; got {tuple(x.shape)} and {tuple(weight.shape)}")
    if x.shape[-1] != weight.shape[1]:
        _refuse(f"x has {x.shape[-1]} input features and weight {weight.shape[1]}")
    lead = tuple(x.shape[:-1])
    try:
        x2 = x.view(-1, x.shape[-1])
    except RuntimeError:
        _refuse(f"x of shape {tuple(x.shape)} and strides {x.stride()} cannot be viewed as a matrix without a copy")
    out2 = None
    if out is not None:
        try:
            out2 = out.view(-1, weight.shape[0])
        except RuntimeError:
            _refuse("out cannot be viewed as a [rows, out_features] matrix without a copy")
    y = _torch_gemm(x2, weight.t(), out2, bias, 0.0, policy, mode, batched=False)
    return out if out is not None else y.view(*lead, weight.shape[0])


def bmm(a, b, *, out=None, policy=None, mode=None):
    """``a @ b`` for ``a`` ``[B, m, k]`` and ``b`` ``[B, k, n]``: B GEMMs, each matrix a
    strided view (batch stride any, inner stride 1 or a transpose)."""
    return _torch_gemm(a, b, out, None, 0.0, policy, mode, batched=True)
