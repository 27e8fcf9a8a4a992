"""Batch-invariant mode for PyTorch: torch's own ``aten::mm``, ``addmm``, ``bmm``, ``mv``,
``dot``, ``vdot``, ``_softmax``, ``_log_softmax`` and ``mean.dim`` on CUDA tensors run
gemm-aot's kernels (the GEMMs, and the row kernels of contract row-t256 along the last
dimension); ``baddbmm``, ``addmv`` and ``_addmm_activation`` run the GEMM into f32 and their
epilogue elementwise in f32, converted to the output's type at the end. ``linear`` and ``matmul`` lower to those, RMSNorm's mean
and attention's softmax are those, and autograd's backward calls the same GEMMs on transposed
views, so model code, training steps through linear and ``torch.compile`` in eager fallback
all take them.

    import gemm_aot.torch
    gemm_aot.torch.set_batch_invariant_mode(True)
    with gemm_aot.torch.batch_invariant():   # or for a block only
        logits = model(input_ids).logits

torch's dispatcher reaches the kernels through C++ kernels built once against the torch
installed (``gemm_aot/_dispatch.py``; a C++ compiler and torch's headers are needed), with
no Python frame between torch and the launch; where they cannot be built, through Python
overrides that make the same calls with the same bits, about 8 us slower a call.

A dtype, layout or argument the kernels do not serve raises ``gemm_aot.UnsupportedError``
naming the op: falling back to cuBLAS silently is the failure this mode exists to prevent.
``allow_fallback=True`` runs such calls on cuBLAS instead, with a warning, and counts them
(``fallback_count()``).

The ``out_dtype`` overloads (``mm.dtype``, ``bmm.dtype``, ``addmm.dtype``, ``baddbmm.dtype``)
are served too; through the C++ kernels also every ``out=`` overload of these ops (``mm.out``,
..., what inductor's generated code calls), into ``out`` directly where it is the output torch
would allocate, else by copy of the functional result, and the in-place ``addmm_``,
``baddbmm_``, ``addmv_`` and ``addbmm_`` (the functional result copied into ``self``). An allowed fallback reaches torch's own
``out=`` kernels through ``gemm_aot_torch::<op>_out`` (``_torch_out``).

Not covered: reductions over other dimensions than the last (they raise); ``addbmm`` (it
raises: its sum over the batch is a reduction no contract states); the backward of softmax
(``_softmax_backward_data``) and other reductions (``sum``, ``var``, norms); fused attention
kernels (SDPA, flash attention: use eager attention, whose matmuls and softmax are covered).
The Python overrides (no C++ compiler) take the ``out=`` and in-place overloads too, by copy
of the functional result, unless ``allow_fallback`` is on: then those stay torch's (cuBLAS,
uncounted), since a fallback reaches torch's kernels through them.
"""

import contextlib
import threading
import warnings

import torch

from . import _dispatch, _fastpath, _native, _torch_gemm, addmm as _addmm_fn
from ._rows import row_op
from ._errors import GemmError, RefusedError, UnsupportedError

_state = threading.Lock()
_library = None  # the Python overrides' torch.library.Library, when they are registered
_path = None  # "native" or "python" while the mode is on
_warned = False
_allow_fallback = False
_fallbacks = 0
_out_library = None  # the Python overrides of the out= and in-place overloads, when registered


def _torch_out(op, overload="out"):
    """torch's own kernel of aten ``op``'s ``out=`` overload (``out``, or ``dtype_out``): the
    aten overload while the mode leaves it alone (its Python overrides), else, since the native
    dispatch serves the ``out=`` overloads too, ``gemm_aot_torch::<op>_<overload>``, which
    calls torch's kernel directly."""
    if _dispatch.serves_out():
        return getattr(torch.ops.gemm_aot_torch, f"{op}_{overload}")
    return getattr(getattr(torch.ops.aten, op), overload)


def _fallback(op, error, run):
    """Runs ``run`` (cuBLAS, through torch's own ``out=`` kernel: ``_torch_out``) when
    fallback is allowed; otherwise raises ``error`` naming the op."""
    global _fallbacks
    # Under the Python overrides of the out= overloads a fallback would come back into them
    # (it runs torch's out= kernels, which they replace): refused while they are registered.
    if not _allow_fallback or _out_library is not None:
        raise UnsupportedError(
            getattr(error, "kind", "unsupported"),
            f"aten::{op} under gemm_aot's batch-invariant mode: {error}",
        ) from error
    with _state:
        _fallbacks += 1
    warnings.warn(f"gemm_aot: aten::{op} fell back to cuBLAS (not batch-invariant): {error}")
    return run()


def _mm(a, b):
    try:
        return _torch_gemm(a, b, None, None, 0.0, None, None, batched=False)
    except GemmError as e:
        out = a.new_empty((a.shape[0], b.shape[1]))
        return _fallback("mm", e, lambda: _torch_out("mm")(a, b, out=out))


# The native fast path (linear's addmm with its bias is a decode step's every projection).
_fastpath.on()


def _addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if _fastpath.enabled and beta == 1 and alpha == 1:
        # A 1-D input of n elements is the bias; anything else is declined (None).
        done = _native.torch_mm(mat1, mat2, None, input)
        if done is not None:
            return done
    try:
        if alpha != 1 and mat1.dim() == 2 and mat2.dim() == 2:
            # The kernels' epilogue takes no alpha: the product into f32, then the epilogue
            # elementwise, as baddbmm's.
            shape = (mat1.shape[0], mat2.shape[1])
            _check_input("addmm", input, shape, mat1.dtype)
            acc = torch.empty(shape, dtype=torch.float32, device=mat1.device)
            _torch_gemm(mat1, mat2, acc, None, 0.0, None, None, batched=False)
            return _epilogue(acc, input, beta, alpha, mat1.dtype)
        return _addmm_fn(input, mat1, mat2, beta=beta, alpha=alpha)
    except GemmError as e:
        out = mat1.new_empty((mat1.shape[0], mat2.shape[-1]))
        return _fallback(
            "addmm", e,
            lambda: _torch_out("addmm")(input, mat1, mat2, beta=beta, alpha=alpha, out=out),
        )


def _bmm(a, b):
    try:
        return _torch_gemm(a, b, None, None, 0.0, None, None, batched=True)
    except GemmError as e:
        out = a.new_empty((a.shape[0], a.shape[1], b.shape[2]))
        return _fallback("bmm", e, lambda: _torch_out("bmm")(a, b, out=out))


def _mv(a, v):
    try:
        y = _torch_gemm(a, v.unsqueeze(1), None, None, 0.0, None, None, batched=False)
        return y.squeeze(1)
    except GemmError as e:
        # aten::mv.out calls addmv.out: torch's mm kernel into the output as one column.
        out = a.new_empty((a.shape[0], 1))
        return _fallback("mv", e, lambda: _torch_out("mm")(a, v.unsqueeze(1), out=out).squeeze(1))


def _row(op, fallback):
    """The override of aten ``_softmax`` or ``_log_softmax`` (``op``), or its fallback."""

    def impl(x, dim, half_to_float):
        out_dtype = torch.float32 if half_to_float else None
        try:
            return row_op(op, x, dim, out_dtype)
        except GemmError as e:
            out = x.new_empty(x.shape, dtype=out_dtype or x.dtype)
            return _fallback("_" + op, e, lambda: fallback(x, dim, half_to_float, out=out))

    return impl


_softmax = _row("softmax", lambda *a, out: _torch_out("_softmax")(*a, out=out))
_log_softmax = _row("log_softmax", lambda *a, out: _torch_out("_log_softmax")(*a, out=out))


def _mean(x, dim, keepdim=False, *, dtype=None):
    try:
        if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
            raise UnsupportedError("unsupported", "mean over every dimension: gemm_aot's row kernels reduce the last dimension only")
        return row_op("mean", x, dim, dtype, keepdim)
    except GemmError as e:
        return _fallback("mean.dim", e, lambda: _torch_out("mean")(x, dim, keepdim, dtype=dtype, out=_mean_out(x, dim, keepdim, dtype)))


def _mean_out(x, dim, keepdim, dtype):
    dims = range(x.dim()) if not dim else [d % max(x.dim(), 1) for d in dim]
    shape = [1 if i in dims else s for i, s in enumerate(x.shape) if keepdim or i not in dims]
    return x.new_empty(shape, dtype=dtype or x.dtype)


def _dot_like(op):
    """The override of aten ``dot`` or ``vdot`` (``matmul`` of two vectors): a 1 x 1 product,
    0-dimensional. Real dtypes only (``vdot`` conjugates nothing there)."""

    def impl(a, b):
        try:
            if a.dim() != 1 or b.dim() != 1:
                raise RefusedError("invalid_argument", f"{op} takes two 1-D tensors, not {a.dim()}-D and {b.dim()}-D")
            y = _torch_gemm(a.unsqueeze(0), b.unsqueeze(1), None, None, 0.0, None, None, batched=False)
            return y.reshape(())
        except GemmError as e:
            # torch's mm kernel (dot.out and vdot.out call dot and vdot again: this).
            def cublas():
                first = a.conj() if op == "vdot" else a
                out = torch.empty((1, 1), dtype=torch.result_type(a, b), device=a.device)
                return _torch_out("mm")(first.unsqueeze(0), b.unsqueeze(1), out=out).reshape(())

            return _fallback(op, e, cublas)

    return impl


def _check_input(op, input, shape, dtype):
    """torch's checks of ``input`` (``self``) in an op with an epilogue, made whatever beta
    is: it broadcasts to the output's ``shape`` and has the operands' ``dtype``."""
    try:
        fits = tuple(torch.broadcast_shapes(tuple(input.shape), tuple(shape))) == tuple(shape)
    except RuntimeError:
        fits = False
    if not fits:
        raise RefusedError("invalid_argument", f"{op}: self of shape {tuple(input.shape)} does not broadcast to the output's {tuple(shape)}")
    if input.dtype != dtype:
        raise RefusedError("invalid_argument", f"{op}: self is {input.dtype} where the operands' {dtype} is needed")


def _epilogue(acc, input, beta, alpha, dtype):
    """``alpha * acc + beta * input`` computed in f32 (``acc`` is, and is overwritten), then
    converted to ``dtype``; beta 0 ignores ``input``'s values (as torch: NaN and inf too).
    Elementwise: a row of the result depends on that row alone."""
    if alpha != 1:
        acc.mul_(alpha)
    if beta != 0:
        acc.add_(input.to(torch.float32), alpha=beta)
    return acc.to(dtype)


def _scaled_fallback(op, e, call, shape, like):
    """The fallback of an op with an epilogue: torch's own ``out=`` kernel of it."""

    def cublas():
        out = like.new_empty(shape)
        return call(out)

    return _fallback(op, e, cublas)


def _baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    shape = None
    try:
        if batch1.dim() != 3 or batch2.dim() != 3:
            raise RefusedError("invalid_argument", f"baddbmm takes 3-D batches, not {batch1.dim()}-D and {batch2.dim()}-D")
        shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
        _check_input("baddbmm", input, shape, batch1.dtype)
        acc = torch.empty(shape, dtype=torch.float32, device=batch1.device)
        _torch_gemm(batch1, batch2, acc, None, 0.0, None, None, batched=True)
        return _epilogue(acc, input, beta, alpha, batch1.dtype)
    except GemmError as e:
        return _scaled_fallback(
            "baddbmm", e,
            lambda out: _torch_out("baddbmm")(input, batch1, batch2, beta=beta, alpha=alpha, out=out),
            shape or (0,), batch1)


def _addmv(input, mat, vec, *, beta=1, alpha=1):
    shape = None
    try:
        if mat.dim() != 2 or vec.dim() != 1:
            raise RefusedError("invalid_argument", f"addmv takes a matrix and a vector, not {mat.dim()}-D and {vec.dim()}-D")
        shape = (mat.shape[0],)
        _check_input("addmv", input, shape, mat.dtype)
        acc = torch.empty((mat.shape[0], 1), dtype=torch.float32, device=mat.device)
        _torch_gemm(mat, vec.unsqueeze(1), acc, None, 0.0, None, None, batched=False)
        return _epilogue(acc.squeeze(1), input, beta, alpha, mat.dtype)
    except GemmError as e:
        return _scaled_fallback(
            "addmv", e,
            lambda out: _torch_out("addmv")(input, mat, vec, beta=beta, alpha=alpha, out=out),
            shape or (0,), mat)


def _addmm_activation(input, mat1, mat2, *, beta=1, alpha=1, use_gelu=False):
    """addmm then ReLU, or GELU's tanh form (what torch's fused epilogue computes)."""
    shape = None
    try:
        if mat1.dim() != 2 or mat2.dim() != 2:
            raise RefusedError("invalid_argument", "_addmm_activation takes two matrices")
        shape = (mat1.shape[0], mat2.shape[1])
        _check_input("_addmm_activation", input, shape, mat1.dtype)
        acc = torch.empty(shape, dtype=torch.float32, device=mat1.device)
        _torch_gemm(mat1, mat2, acc, None, 0.0, None, None, batched=False)
        y = _epilogue(acc, input, beta, alpha, torch.float32)
        y = torch.nn.functional.gelu(y, approximate="tanh") if use_gelu else torch.relu(y)
        return y.to(mat1.dtype)
    except GemmError as e:
        return _scaled_fallback(
            "_addmm_activation", e,
            lambda out: _torch_out("_addmm_activation")(
                input, mat1, mat2, beta=beta, alpha=alpha, use_gelu=use_gelu, out=out),
            shape or (0,), mat1)


def _check_out_dtype(op, operand, out_dtype):
    """The ``out_dtype`` overloads' rule (torch's): the operands' dtype, or f32 from 16-bit
    operands."""
    if out_dtype != operand.dtype and not (
            out_dtype == torch.float32 and operand.dtype in (torch.bfloat16, torch.float16)):
        raise RefusedError("invalid_argument", f"{op}: out_dtype {out_dtype} is neither the operands' {operand.dtype} nor float32 from a 16-bit dtype")


def _gemm_dtype(op, batched):
    """The override of aten ``mm.dtype`` or ``bmm.dtype`` (``op``): the product rounded once
    to ``out_dtype``."""

    def impl(a, b, out_dtype):
        try:
            _check_out_dtype(op, a, out_dtype)
            if a.dim() != (3 if batched else 2) or b.dim() != a.dim():
                raise RefusedError("invalid_argument", f"{op} takes {3 if batched else 2}-D operands, not {a.dim()}-D and {b.dim()}-D")
            shape = (a.shape[0], a.shape[1], b.shape[2]) if batched else (a.shape[0], b.shape[1])
            out = torch.empty(shape, dtype=out_dtype, device=a.device)
            _torch_gemm(a, b, out, None, 0.0, None, None, batched=batched)
            return out
        except GemmError as e:
            name = op.split(".")[0]
            # torch's dtype_out kernels write out as it is (they do not resize it): its shape.
            shape = (a.shape[0], a.shape[1], b.shape[-1]) if batched else (a.shape[0], b.shape[-1])

            def torchs():
                out = torch.empty(shape, dtype=out_dtype, device=a.device)
                return _torch_out(name, "dtype_out")(a, b, out_dtype, out=out)

            return _fallback(op, e, torchs)

    return impl


def _scaled_dtype(op, batched):
    """The override of aten ``addmm.dtype`` or ``baddbmm.dtype`` (``op``): the product into f32,
    the epilogue elementwise in f32, rounded once to ``out_dtype``."""

    def impl(input, mat1, mat2, out_dtype, *, beta=1, alpha=1):
        shape = None
        try:
            _check_out_dtype(op, mat1, out_dtype)
            if mat1.dim() != (3 if batched else 2) or mat2.dim() != mat1.dim():
                raise RefusedError("invalid_argument", f"{op} takes {3 if batched else 2}-D operands, not {mat1.dim()}-D and {mat2.dim()}-D")
            shape = (mat1.shape[0], mat1.shape[1], mat2.shape[2]) if batched else (mat1.shape[0], mat2.shape[1])
            _check_input(op, input, shape, mat1.dtype)
            acc = torch.empty(shape, dtype=torch.float32, device=mat1.device)
            _torch_gemm(mat1, mat2, acc, None, 0.0, None, None, batched=batched)
            return _epilogue(acc, input, beta, alpha, out_dtype)
        except GemmError as e:
            name = op.split(".")[0]
            return _scaled_fallback(
                op, e,
                lambda out: _torch_out(name, "dtype_out")(input, mat1, mat2, out_dtype, beta=beta, alpha=alpha, out=out),
                shape or (0,), mat1.new_empty((0,), dtype=out_dtype))

    return impl


def _addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """Not served: the sum over the batch is a reduction the kernels' contracts do not state."""
    error = UnsupportedError(
        "unsupported", "addbmm sums products over the batch, a reduction gemm_aot does not serve")
    return _scaled_fallback(
        "addbmm", error,
        lambda out: _torch_out("addbmm")(input, batch1, batch2, beta=beta, alpha=alpha, out=out),
        (0,), batch1)


_OVERRIDES = {
    "mm": _mm,
    "addmm": _addmm,
    "bmm": _bmm,
    "mv": _mv,
    "dot": _dot_like("dot"),
    "vdot": _dot_like("vdot"),
    "baddbmm": _baddbmm,
    "addmv": _addmv,
    "_addmm_activation": _addmm_activation,
    "addbmm": _addbmm,
    "_softmax": _softmax,
    "_log_softmax": _log_softmax,
    "mean.dim": _mean,
    "mm.dtype": _gemm_dtype("mm.dtype", batched=False),
    "bmm.dtype": _gemm_dtype("bmm.dtype", batched=True),
    "addmm.dtype": _scaled_dtype("addmm.dtype", batched=False),
    "baddbmm.dtype": _scaled_dtype("baddbmm.dtype", batched=True),
}


def _into(out, result, name):
    """``result`` into ``out`` as torch's ``out=`` kernels write: ``out``'s dtype must be the
    result's (checked before ``out`` is touched), and an ``out`` of other sizes is resized, with
    torch's warning when it held elements."""
    if out.device != result.device:
        raise RuntimeError(f"{name}: out is on {out.device} where the result is on {result.device}")
    if out.dtype != result.dtype:
        raise RuntimeError(f"{name}: expected out tensor to have dtype {result.dtype}, "
                           f"but got {out.dtype} instead")
    if out.shape != result.shape:
        if out.numel() != 0:
            warnings.warn(f"{name}: an output with one or more elements was resized since it had "
                          f"shape {list(out.shape)}, which does not match the required output "
                          f"shape {list(result.shape)}")
        out.resize_(result.shape)
    out.copy_(result)
    return out


def _out_override(name, functional):
    """The Python overrides' kernel of an ``out=`` overload: the functional override's result
    copied into ``out`` (the native dispatch plans into ``out`` directly where it can)."""
    def impl(*args, out, **kwargs):
        # torch's devices rule first: nothing runs for an out on another device.
        inputs = [t for t in args if isinstance(t, torch.Tensor)]
        if inputs and out.device != inputs[0].device:
            raise RuntimeError(f"{name}: out is on {out.device} where the inputs are on "
                               f"{inputs[0].device}")
        if name == "mean.out" and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype  # torch's mean.out computes in out's dtype
        return _into(out, functional(*args, **kwargs), name)
    return impl


def _inplace_override(name, functional):
    """The Python overrides' kernel of an in-place overload (``addmm_``, ...): the functional
    result copied into ``self``, which is never resized."""
    def impl(self, *args, **kwargs):
        result = functional(self, *args, **kwargs)
        if result.shape != self.shape:
            raise RuntimeError(f"{name}: the result is {tuple(result.shape)} where self is "
                               f"{tuple(self.shape)}; an in-place op does not resize self")
        self.copy_(result)
        return self
    return impl


def _functional_of(packet, overload):
    """The key in ``_OVERRIDES`` of the functional form of aten ``packet.overload`` (an out= or
    in-place overload), or None: ``mm.out`` -> ``mm``, ``mean.out`` -> ``mean.dim``,
    ``mm.dtype_out`` -> ``mm.dtype``, ``addmm_`` -> ``addmm``."""
    if packet.endswith("_") and overload == "default":
        return packet[:-1] if packet[:-1] in _OVERRIDES else None
    if overload == "dtype_out":
        return packet + ".dtype" if packet + ".dtype" in _OVERRIDES else None
    if overload == "out":
        if packet in _OVERRIDES:
            return packet
        named = [op for op in _OVERRIDES if op.startswith(packet + ".") and not op.endswith(".dtype")]
        return named[0] if len(named) == 1 else None
    return None


def _out_and_inplace_overrides(key="CUDA"):
    """The Python overrides of every ``out=`` and in-place overload of the ops the mode serves
    that torch dispatches by backend (a kernel of its own at ``key``), as the native dispatch
    registers them: {"mm.out": impl, "addmm_": impl, ...}."""
    found = {}
    for base in sorted({op.split(".")[0] for op in _OVERRIDES}):
        for packet in (base, base + "_"):
            if not hasattr(torch.ops.aten, packet):
                continue
            for overload in getattr(torch.ops.aten, packet).overloads():
                functional = _functional_of(packet, overload)
                if functional is None:
                    continue
                op = getattr(getattr(torch.ops.aten, packet), overload)
                if not torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), key):
                    continue
                name = packet if overload == "default" else f"{packet}.{overload}"
                make = _inplace_override if packet.endswith("_") else _out_override
                found[name] = make(name, _OVERRIDES[functional])
    # torch's mv.out has no kernel of its own (it is addmv.out with beta 0): taken as mv's,
    # as the native dispatch does, so it gives torch.mv's bits under the mode.
    if _dispatch.has_aten_op(torch, "mv.out"):
        found["mv.out"] = _out_override("mv.out", _OVERRIDES["mv"])
    return found


def _library_of(overrides, key):
    """A ``torch.library.Library`` with ``overrides`` at ``key``; nothing stays registered if
    one of them cannot be."""
    library = torch.library.Library("aten", "IMPL")
    try:
        for op, fn in overrides.items():
            if _dispatch.has_aten_op(torch, op):
                library.impl(op, fn, key)
    except BaseException:
        library._destroy()
        raise
    return library


def _python_library(key="CUDA"):
    """The Python overrides of the functional ops at ``key``."""
    return _library_of(_OVERRIDES, key)


def _python_out_library(key="CUDA"):
    """The Python overrides of the ``out=`` and in-place overloads at ``key``: registered only
    while fallback is not allowed, since an allowed fallback reaches torch's kernels through
    those overloads, which Python cannot call past an override of its own (the native
    dispatch can)."""
    return _library_of(_out_and_inplace_overrides(key), key)


def set_batch_invariant_mode(enabled=True, *, allow_fallback=False, dispatch=None):
    """Turns the mode on (registering its kernels at torch's CUDA dispatch key) or off
    (removing them). ``allow_fallback`` lets unserved calls run on cuBLAS with a warning.

    ``dispatch`` picks the kernels torch's dispatcher calls: ``"native"``, C++ kernels that
    reach the launch with no Python frame (``gemm_aot/_dispatch.py`` builds them once against
    this torch; raises ``RuntimeError`` if it cannot); ``"python"``, the Python overrides; or
    None, native where it can be built, else the Python overrides with a warning saying why.
    Both make the same calls, with the same bits; ``dispatch_path()`` says which runs."""
    global _library, _out_library, _allow_fallback, _path, _warned
    if dispatch not in (None, "native", "python"):
        raise ValueError(f"dispatch {dispatch!r} is none of None, \"native\", \"python\"")
    allow = bool(allow_fallback)
    with _state:
        if not enabled:
            _remove(_path)
            _path = None
            _allow_fallback = allow
            return
        if _path is not None and (dispatch is None or dispatch == _path):
            _set_fallback(allow)
            return
        # The new path is registered before the old one goes (the newest registration wins),
        # so torch's own kernels never run in between, and a failure leaves the old one on.
        new = None
        if dispatch != "python":
            if _dispatch.register(torch, _OVERRIDES, "CUDA"):
                new = "native"
            elif dispatch == "native":
                raise RuntimeError(f"gemm_aot: no native dispatch: {_dispatch.status()}")
            elif not _warned and not _dispatch.status().startswith("turned off"):
                _warned = True
                warnings.warn(f"gemm_aot: the mode runs its Python overrides, about 8 us slower "
                              f"a call; with allow_fallback they leave the out= and in-place "
                              f"overloads (mm.out, addmm_, ...) to torch: {_dispatch.status()}")
        library = out_library = None
        if new is None:
            library = _python_library("CUDA")
            if not allow:  # the out= and in-place ones too, before the old path goes
                try:
                    out_library = _python_out_library("CUDA")
                except BaseException:
                    library._destroy()
                    raise
            new = "python"
        _remove(_path)  # the other path's registrations
        _path, _library, _out_library, _allow_fallback = new, library, out_library, allow


def _set_fallback(allow):
    """Sets ``allow_fallback`` for the path already on, with ``_state`` held. On the Python path the
    out= and in-place overrides are registered exactly while fallback is not allowed: they
    go before fallback is allowed, and come after it is refused."""
    global _allow_fallback, _out_library
    if _path != "python":
        _allow_fallback = allow
    elif allow:
        if _out_library is not None:
            _out_library._destroy()
            _out_library = None
        _allow_fallback = True
    else:
        _allow_fallback = False
        if _out_library is None:
            _out_library = _python_out_library("CUDA")


def _remove(path):
    """Removes the registrations of ``path`` ("native" or "python"; None: nothing)."""
    global _library, _out_library
    if path == "native":
        _dispatch.unregister()
    elif path == "python":
        for library in (_out_library, _library):
            if library is not None:
                library._destroy()
        _out_library = _library = None


def is_batch_invariant_mode():
    """Whether the mode is on."""
    return _path is not None


def dispatch_path():
    """How the mode's calls reach gemm-aot while it is on: ``"native"`` (C++ kernels at torch's
    dispatcher) or ``"python"`` (Python overrides); None while it is off."""
    return _path


def dispatch_counts():
    """(calls the native dispatch served, calls it handed to the Python overrides)."""
    return _dispatch.counts()


def fallback_count():
    """How many calls fell back to cuBLAS under ``allow_fallback``."""
    return _fallbacks


@contextlib.contextmanager
def batch_invariant(allow_fallback=False, dispatch=None):
    """The mode for a block; the previous state is restored after it."""
    was, was_fallback, was_path = is_batch_invariant_mode(), _allow_fallback, _path
    set_batch_invariant_mode(True, allow_fallback=allow_fallback, dispatch=dispatch)
    try:
        yield
    finally:
        set_batch_invariant_mode(was, allow_fallback=was_fallback, dispatch=was_path)
