"""Operands as the native call takes them: a device address, a row-major storage and its
leading dimension. A 2-D view whose inner stride is 1 is row-major; one whose outer stride
is 1 is a transpose of a row-major matrix (``x.t()``), which the ``nt`` and ``tn`` kernels
read as stored. Nothing is copied here."""

from collections import namedtuple

from ._errors import RefusedError, UnsupportedError

# One matrix view: device address, rows, columns, strides (elements), dtype word, device.
Matrix = namedtuple("Matrix", "address rows cols row_stride col_stride dtype device owner")

_TORCH_DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "f16", "torch.float32": "f32"}
# DLPack (code, bits, lanes): kDLFloat = 2, kDLBfloat = 4.
_DLPACK_DTYPES = {(2, 32, 1): "f32", (4, 16, 1): "bf16", (2, 16, 1): "f16"}
_DLPACK_CUDA = 2
_DLPACK_DEVICES = {1: "CPU memory", 3: "pinned host memory", 13: "CUDA managed memory"}


# Per type: whether it is a torch tensor (looked up once a type: a call's host cost counts).
_IS_TORCH = {}


def is_torch(x):
    t = type(x)
    known = _IS_TORCH.get(t)
    if known is None:
        known = _IS_TORCH[t] = t.__module__.split(".")[0] == "torch" and hasattr(x, "data_ptr")
    return known


# torch dtype object -> dtype word (None: not served), filled as dtypes are met.
_BY_TORCH_DTYPE = {}


def _refuse(message):
    raise RefusedError("invalid_argument", message)


def from_torch(t, name):
    """A torch tensor as a Matrix (1-D tensors are one row). Refuses a tensor not on a CUDA
    device and a dtype without kernels."""
    if t.is_neg():
        # A lazily negated view (torch's negative bit, e.g. the imaginary part of a conjugate):
        # its memory holds the values' negation, which the kernels would read as they are.
        # (torch's own ops resolve it before the mode's kernels see it.)
        _refuse(f"{name} is a negated view (is_neg()): call .resolve_neg() first")
    if not t.is_cuda:
        _refuse(f"{name} is a {t.device.type.upper()} tensor: gemm_aot needs CUDA tensors")
    dtype = _BY_TORCH_DTYPE.get(t.dtype, False)
    if dtype is False:
        dtype = _BY_TORCH_DTYPE[t.dtype] = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise UnsupportedError(
            "no_route",
            f"{name} has dtype {t.dtype}, which gemm_aot does not serve "
            "(torch.bfloat16, torch.float16, torch.float32)",
        )
    return _matrix(t.data_ptr(), tuple(t.shape), t.stride(), dtype, ("cuda", t.get_device()), name, t)


def from_dlpack(x, name):
    """An object with ``__dlpack__`` (or a DLPack capsule) as a Matrix. The producer keeps
    the memory; the capsule is read, not consumed."""
    from . import _native

    capsule = x.__dlpack__() if hasattr(x, "__dlpack__") else x
    info = _native.dlpack_tensor(capsule)
    if info["device_type"] != _DLPACK_CUDA:
        kind = info["device_type"]
        where = _DLPACK_DEVICES.get(kind, "memory of another device")
        _refuse(f"{name} is in {where} (DLPack device type {kind}): gemm_aot needs CUDA device memory")
    dtype = _DLPACK_DTYPES.get(tuple(info["dtype"]))
    if dtype is None:
        raise UnsupportedError(
            "no_route",
            f"{name} has DLPack dtype (code, bits, lanes) = {tuple(info['dtype'])}, which "
            "gemm_aot does not serve (bf16, f16, f32)",
        )
    return _matrix(
        info["address"],
        tuple(info["shape"]),
        tuple(info["strides"]),
        dtype,
        ("cuda", info["device_id"]),
        name,
        capsule,
    )


def _matrix(address, shape, stride, dtype, device, name, owner):
    if len(shape) == 1:
        shape, stride = (1, shape[0]), (shape[0], stride[0])
    if len(shape) != 2:
        _refuse(f"{name} has {len(shape)} dimensions where a matrix (2) is needed")
    if min(stride) < 0:
        _refuse(f"{name} has strides {tuple(stride)}: negative strides are not served")
    return Matrix(address, shape[0], shape[1], stride[0], stride[1], dtype, device, owner)


def storage(m, name):
    """How ``m`` is stored: ``(transposed, ld)``, ``transposed`` when it is the transpose
    of a row-major matrix (its outer stride is 1). Refuses a view with no stride of 1."""
    if m.col_stride == 1 or m.cols == 1:
        return False, (m.row_stride if m.rows > 1 else m.cols)
    if m.row_stride == 1 or m.rows == 1:
        return True, (m.col_stride if m.cols > 1 else m.rows)
    _refuse(
        f"{name} has strides ({m.row_stride}, {m.col_stride}) and shape ({m.rows}, {m.cols}): "
        "no dimension is contiguous; gemm_aot takes views whose inner stride is 1 "
        "(transposes included). Call .contiguous() first"
    )


def output_ld(m, name):
    """The leading dimension of an output, which must be row-major."""
    transposed, ld = storage(m, name)
    # The kernels write each row's n elements contiguously: a one-row view with a column
    # stride is no row-major output either.
    if transposed and m.cols > 1:
        _refuse(
            f"{name} has strides ({m.row_stride}, {m.col_stride}): an output must be "
            "row-major (inner stride 1)"
        )
    return ld
