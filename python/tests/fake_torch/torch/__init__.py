"""A stand-in for torch with only what gemm_aot's mm path touches, for test_policy_no_gpu.py
(no torch, no GPU): tensors are shapes, strides, dtypes and made-up device addresses."""

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
    def __init__(self, shape, dtype, stride=None, address=None):
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

    def dim(self):
        return len(self.shape)

    def stride(self, i=None):
        return self._stride if i is None else self._stride[i]

    def data_ptr(self):
        return self._address

    def get_device(self):
        return 0

    def is_neg(self):
        return False

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


class _C:
    @staticmethod
    def _cuda_getCurrentRawStream(index):
        return 0
