"""The exceptions of gemm_aot. Every error the native module raises is a ``GemmError``
carrying the runtime's error ``kind`` (a stable snake_case name, as ``"overlap"`` or
``"no_driver"``); a call that is wrong is also a ``ValueError``, a device that cannot serve
it a ``RuntimeError``. A refused call enqueues nothing and leaves its output untouched."""


class GemmError(Exception):
    """A gemm_aot call failed; ``kind`` names why (the runtime's ``GemmError::kind``)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class RefusedError(GemmError, ValueError):
    """The call is wrong for the library: shapes, strides, dtypes, pointers, an output
    overlapping an input, or a (policy, op, dtype) no kernel serves."""


class UnsupportedError(RefusedError, NotImplementedError):
    """A dtype, layout or op the mode does not serve (it never falls back to cuBLAS unless
    asked)."""


class DeviceError(GemmError, RuntimeError):
    """No CUDA driver, no tier for the device, or a CUDA call that failed."""


_DEVICE_KINDS = {
    "no_driver",
    "no_cubins",
    "no_tier",
    "unknown_tier",
    "tier_not_runnable",
    "ptx_jit",
    "driver",
    "cublas",
}


def from_native(kind, message):
    """The exception for a runtime error of ``kind`` (called by the native module)."""
    if kind in _DEVICE_KINDS:
        return DeviceError(kind, message)
    if kind in ("no_route", "no_row_kernel", "columns_too_many", "no_conversion", "unsupported"):
        return UnsupportedError(kind, message)
    return RefusedError(kind, message)
