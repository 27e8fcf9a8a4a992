"""A stand-in for torch with only what gemm_aot's mm path touches, for test_policy_no_gpu.py
(no torch, no GPU): tensors are shapes, strides, dtypes and made-up device addresses."""

import ctypes
import itertools

_addresses = itertools.count(0x7000_0000_0000, 0x10_0000)


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__


bfloat16, float16, float32, float64 = (dtype(n) for n in ("bfloat16", "float16", "float32", "float64"))


class device:
    def __init__(self, type, index):
        self.type, self.index = type, index


class Tensor:
    def __init__(self, shape, dtype, stride=None, address=None, neg=False):
        self.shape, self.dtype = tuple(shape), dtype
        if stride is None:  # row-major
            stride, acc = [], 1
            for d in reversed(self.shape):
                stride.insert(0, acc)
                acc *= d
        self._stride = tuple(stride)
        self._address = address or next(_addresses)
        self.device, self.is_cuda = device("cuda", 0), True
        self.copied_from = None  # what copy_ took, for the tests to see
        self._neg = neg  # a lazily negated view (torch._neg_view)

    def dim(self):
        return len(self.shape)

    def stride(self, i=None):
        return self._stride if i is None else self._stride[i]

    def data_ptr(self):
        return self._address

    def get_device(self):
        return 0

    def is_neg(self):
        return self._neg

    def __getitem__(self, i):
        # An int index only: the i-th matrix of a batch (2 bytes an element: the stand-in's
        # addresses are labels, not memory).
        return Tensor(self.shape[1:], self.dtype, self._stride[1:], self._address + 2 * i * self._stride[0])

    def t(self):
        return Tensor(self.shape[::-1], self.dtype, self._stride[::-1], self._address)

    def float(self):
        return Tensor(self.shape, float32)

    def contiguous(self):
        return Tensor(self.shape, self.dtype)

    def copy_(self, other):
        self.copied_from = other
        return self


def empty(shape, dtype=None, device=None):
    return Tensor(shape, dtype)


class cuda:
    @staticmethod
    def current_device():
        return 0


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_DL_CODES = {"bfloat16": (4, 16), "float16": (2, 16), "float32": (2, 32), "float64": (2, 64)}
_CAPSULE_NAME = ctypes.c_char_p(b"dltensor")  # outlives every capsule
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_exported = []  # the structs behind the capsules, kept for the process (a test stand-in)


class _C:
    # How many tensors _to_dlpack exported (the tests check which reads the fast path took).
    exports = 0

    @staticmethod
    def _cuda_getCurrentRawStream(index):
        return 0

    @staticmethod
    def _to_dlpack(t):
        """A real DLPack capsule ("dltensor") describing the stand-in tensor, with torch's
        normalization: the stride of a dimension of fewer than two elements reads 1."""
        _C.exports += 1
        nd = len(t.shape)
        shape = (ctypes.c_int64 * max(nd, 1))(*t.shape)
        strides = (ctypes.c_int64 * max(nd, 1))(
            *(1 if d < 2 else s for d, s in zip(t.shape, t._stride)))
        code, bits = _DL_CODES[t.dtype.name]
        cuda = t.device.type == "cuda"
        m = _DLManagedTensor()
        m.dl_tensor = _DLTensor(t._address, _DLDevice(2 if cuda else 1, 0), nd,
                                _DLDataType(code, bits, 1), shape, strides, 0)
        _exported.append((m, shape, strides))
        return _capsule_new(ctypes.addressof(m), _CAPSULE_NAME, None)
