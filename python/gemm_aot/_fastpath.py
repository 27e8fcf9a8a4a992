"""Whether the native fast path (``python/src/torch_fast.rs``, ``rows_fast.rs``) serves the
common torch call: ``enabled`` is None until the first torch call registers torch's dtypes and
stream accessors with it, False where this torch lacks those accessors (the Python path then
serves every call)."""

from . import _native

enabled = None


def on():
    """Registers torch with the native fast path once; whether it is on."""
    global enabled
    if enabled is None:
        import torch

        c = getattr(torch, "_C", None)
        raw = getattr(c, "_cuda_getCurrentRawStream", None)
        device = getattr(c, "_cuda_getDevice", None)
        enabled = raw is not None and device is not None
        if enabled:
            # How many devices torch sees, once CUDA is up (before, CUDA_VISIBLE_DEVICES may
            # still change it; 0: not said): with one, the fast path skips asking for the
            # current device on every call. Plain tensors are read through one DLPack export.
            devices = torch.cuda.device_count() if torch.cuda.is_initialized() else 0
            _native.torch_register(torch.bfloat16, torch.float16, torch.float32, raw, device,
                                   devices, getattr(c, "_to_dlpack", None),
                                   [torch.Tensor, torch.nn.Parameter],
                                   getattr(torch.Tensor, "is_neg", None))
    return enabled
