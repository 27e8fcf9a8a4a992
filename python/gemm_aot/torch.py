"""Batch-invariant mode for PyTorch: torch's own ``aten::mm``, ``addmm``, ``bmm``, ``mv``,
``_softmax``, ``_log_softmax`` and ``mean.dim`` on CUDA tensors run gemm-aot's kernels (the
GEMMs, and the row kernels of contract row-t256 along the last dimension). ``linear`` and
``matmul`` lower to those, RMSNorm's mean and attention's softmax are those, and autograd's
backward calls the same GEMMs on transposed views, so model code, training steps through
linear and ``torch.compile`` in eager fallback all take them.

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

Not covered: reductions over other dimensions than the last (they raise); the backward of
softmax (``_softmax_backward_data``) and other reductions (``sum``, ``var``, norms); fused
attention kernels (SDPA, flash attention: use eager attention, whose matmuls and softmax are
covered); ``mm.out`` and the other ``out=`` overloads; ``baddbmm``, ``addmv``, ``addbmm``.
"""

import contextlib
import threading
import warnings

import torch

from . import _dispatch, _fastpath, _native, _torch_gemm, addmm as _addmm_fn
from ._rows import row_op
from ._errors import GemmError, UnsupportedError

_state = threading.Lock()
_library = None  # the Python overrides' torch.library.Library, when they are registered
_path = None  # "native" or "python" while the mode is on
_warned = False
_allow_fallback = False
_fallbacks = 0


def _fallback(op, error, run):
    """Runs ``run`` (cuBLAS, through an ``out=`` overload the mode leaves alone) when
    fallback is allowed; otherwise raises ``error`` naming the op."""
    global _fallbacks
    if not _allow_fallback:
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
        return _fallback("mm", e, lambda: torch.ops.aten.mm.out(a, b, out=out))


# The native fast path (linear's addmm with its bias is a decode step's every projection).
_fastpath.on()


def _addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if _fastpath.enabled and beta == 1 and alpha == 1:
        # A 1-D input of n elements is the bias; anything else is declined (None).
        done = _native.torch_mm(mat1, mat2, None, input)
        if done is not None:
            return done
    try:
        return _addmm_fn(input, mat1, mat2, beta=beta, alpha=alpha)
    except GemmError as e:
        out = mat1.new_empty((mat1.shape[0], mat2.shape[1]))
        return _fallback(
            "addmm", e,
            lambda: torch.ops.aten.addmm.out(input, mat1, mat2, beta=beta, alpha=alpha, out=out),
        )


def _bmm(a, b):
    try:
        return _torch_gemm(a, b, None, None, 0.0, None, None, batched=True)
    except GemmError as e:
        out = a.new_empty((a.shape[0], a.shape[1], b.shape[2]))
        return _fallback("bmm", e, lambda: torch.ops.aten.bmm.out(a, b, out=out))


def _mv(a, v):
    try:
        y = _torch_gemm(a, v.unsqueeze(1), None, None, 0.0, None, None, batched=False)
        return y.squeeze(1)
    except GemmError as e:
        out = a.new_empty((a.shape[0],))
        return _fallback("mv", e, lambda: torch.ops.aten.mv.out(a, v, out=out))


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


_softmax = _row("softmax", lambda *a, out: torch.ops.aten._softmax.out(*a, out=out))
_log_softmax = _row("log_softmax", lambda *a, out: torch.ops.aten._log_softmax.out(*a, out=out))


def _mean(x, dim, keepdim=False, *, dtype=None):
    try:
        if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
            raise UnsupportedError("unsupported", "mean over every dimension: gemm_aot's row kernels reduce the last dimension only")
        return row_op("mean", x, dim, dtype, keepdim)
    except GemmError as e:
        return _fallback("mean.dim", e, lambda: torch.ops.aten.mean.out(x, dim, keepdim, dtype=dtype, out=_mean_out(x, dim, keepdim, dtype)))


def _mean_out(x, dim, keepdim, dtype):
    dims = range(x.dim()) if not dim else [d % max(x.dim(), 1) for d in dim]
    shape = [1 if i in dims else s for i, s in enumerate(x.shape) if keepdim or i not in dims]
    return x.new_empty(shape, dtype=dtype or x.dtype)


_OVERRIDES = {
    "mm": _mm,
    "addmm": _addmm,
    "bmm": _bmm,
    "mv": _mv,
    "_softmax": _softmax,
    "_log_softmax": _log_softmax,
    "mean.dim": _mean,
}


def set_batch_invariant_mode(enabled=True, *, allow_fallback=False, dispatch=None):
    """Turns the mode on (registering its kernels at torch's CUDA dispatch key) or off
    (removing them). ``allow_fallback`` lets unserved calls run on cuBLAS with a warning.

    ``dispatch`` picks the kernels torch's dispatcher calls: ``"native"``, C++ kernels that
    reach the launch with no Python frame (``gemm_aot/_dispatch.py`` builds them once against
    this torch; raises ``RuntimeError`` if it cannot); ``"python"``, the Python overrides; or
    None, native where it can be built, else the Python overrides with a warning saying why.
    Both make the same calls, with the same bits; ``dispatch_path()`` says which runs."""
    global _library, _allow_fallback, _path, _warned
    if dispatch not in (None, "native", "python"):
        raise ValueError(f"dispatch {dispatch!r} is none of None, \"native\", \"python\"")
    with _state:
        _allow_fallback = bool(allow_fallback)
        if not enabled:
            _remove(_path)
            _path = None
            return
        if _path is not None and (dispatch is None or dispatch == _path):
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
                              f"a call: {_dispatch.status()}")
        if new is None:
            library = torch.library.Library("aten", "IMPL")
            for op, fn in _OVERRIDES.items():
                library.impl(op, fn, "CUDA")
            new = "python"
        _remove(_path)  # the other path's, if one was on
        if new == "python":
            _library = library
        _path = new


def _remove(path):
    """Removes the registration of ``path`` ("native" or "python"; None: nothing)."""
    global _library
    if path == "native":
        _dispatch.unregister()
    elif path == "python" and _library is not None:
        _library._destroy()
        _library = None


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
