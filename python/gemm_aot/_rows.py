"""Row kernels over torch tensors: softmax, log_softmax and mean along the last dimension,
each row reduced by one block in a fixed tree (contract row-t256), so a row's result does not
depend on how many rows the tensor has. The input is viewed as ``[rows, cols]`` without a
copy (its last stride 1, its leading dimensions collapsible); the output is a new contiguous
tensor."""

from . import _fastpath, _native
from ._errors import RefusedError, UnsupportedError
from ._operands import _TORCH_DTYPES, is_torch


def _refuse(message):
    raise RefusedError("invalid_argument", message)


def _dtype_word(dtype, name):
    word = _TORCH_DTYPES.get(str(dtype))
    if word is None:
        raise UnsupportedError(
            "no_row_kernel",
            f"{name} has dtype {dtype}, which gemm_aot's row kernels do not serve "
            "(torch.bfloat16, torch.float16, torch.float32)",
        )
    return word


def row_op(op, x, dim=-1, out_dtype=None, keepdim=False):
    """``op`` (``"softmax"``, ``"log_softmax"``, ``"mean"``) of torch tensor ``x`` along
    ``dim``, which must be its last dimension; the result in ``out_dtype`` (default x's)."""
    last = dim[0] if type(dim) in (list, tuple) and len(dim) == 1 else dim
    if last == -1 and is_torch(x) and (_fastpath.enabled or _fastpath.on()):
        # The common call, read and launched natively; None: declined, nothing done.
        done = _native.torch_rows(op, x, out_dtype, keepdim)
        if done is not None:
            return done
    if not is_torch(x):
        _refuse(f"{op} takes a torch tensor")
    import torch

    if x.device.type != "cuda":
        _refuse(f"x is a {x.device.type.upper()} tensor: gemm_aot needs CUDA tensors")
    nd = max(x.dim(), 1)
    if isinstance(dim, (list, tuple)):
        if len(dim) != 1:
            raise UnsupportedError("unsupported", f"{op} over dimensions {list(dim)}: gemm_aot's row kernels reduce the last dimension only")
        dim = dim[0]
    if not -nd <= dim < nd:
        raise IndexError(f"dimension {dim} is out of range for a {x.dim()}-D tensor")
    if dim % nd != nd - 1:
        raise UnsupportedError("unsupported", f"{op} over dimension {dim} of a {x.dim()}-D tensor: gemm_aot's row kernels reduce the last dimension only")
    out_dtype = x.dtype if out_dtype is None else out_dtype
    src_word, dst_word = _dtype_word(x.dtype, "x"), _dtype_word(out_dtype, "the output")
    cols = x.shape[-1] if x.dim() else 1
    if cols > 1 and x.stride(-1) != 1:
        _refuse(f"x has stride {x.stride(-1)} in its last dimension: a row must be contiguous")
    try:
        x2 = x.reshape(1, 1) if x.dim() == 0 else x.view(-1, cols)
    except RuntimeError:
        _refuse(f"x of shape {tuple(x.shape)} and strides {x.stride()} cannot be viewed as rows without a copy")
    rows = x2.shape[0]
    lead = tuple(x.shape[:-1])
    if op == "mean":
        shape = lead + ((1,) if keepdim else ())
        out_cols = 1
    else:
        shape = tuple(x.shape)
        out_cols = cols
    out = torch.empty(shape, dtype=out_dtype, device=x.device)
    if rows == 0:
        return out
    if cols == 0:
        return out.fill_(float("nan")) if op == "mean" else out
    ld_src = x2.stride(0) if rows > 1 else cols
    from . import _current_stream, _device_guard

    with _device_guard(torch, x.device):
        stream = _current_stream(torch, x.device)
        _native.rows(x.device.index or 0, stream, op, src_word, dst_word, x2.data_ptr(), ld_src,
                     out.data_ptr(), out_cols, rows, cols)
    return out


def softmax(x, dim=-1, *, dtype=None):
    """``torch.softmax(x, dim)`` along the last dimension, batch-invariant."""
    return row_op("softmax", x, dim, dtype)


def log_softmax(x, dim=-1, *, dtype=None):
    """``torch.log_softmax(x, dim)`` along the last dimension, batch-invariant."""
    return row_op("log_softmax", x, dim, dtype)


def mean(x, dim=-1, keepdim=False, *, dtype=None):
    """``torch.mean(x, dim, keepdim)`` over the last dimension, batch-invariant."""
    return row_op("mean", x, dim, dtype, keepdim)
