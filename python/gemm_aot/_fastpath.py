"""Whether the native fast path (``python/src/torch_fast.rs``, ``rows_fast.rs``) serves the
common torch call: ``enabled`` is None until the first torch call registers torch's dtypes and
stream accessors with it, False where this torch lacks those accessors (the Python path then
serves every call).

With it comes the tensor reader (``python/src/tensor_reader.rs``, ``csrc/tensor_reader.cpp``):
C functions, built into the native dispatch's library (``_dispatch.py``, once per torch, cached),
that read a plain tensor and torch's current stream with no Python call. It is installed only
after its reads of a set of tensors matched their attribute reads; ``reader`` says whether it
was, or why not."""

from . import _native

enabled = None
reader = "not tried yet"


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
            _install_reader(torch)
    return enabled


def _install_reader(torch):
    """Installs the tensor reader where the native library has it and its reads check out."""
    global reader
    from . import _dispatch

    if _dispatch.load(torch) is None:
        reader = f"no native library: {_dispatch.status()}"
        return
    addresses = _dispatch.reader_addresses()
    if addresses is None:
        reader = f"not in the native library: {_dispatch.reader_status()}"
        return
    read, stream = addresses
    try:
        problem = _reads_differ(torch, read)
    except Exception as e:  # a torch too unlike the one checked for: not installed
        problem = f"its check raised {type(e).__name__}: {e}"
    if problem is not None:
        reader = f"not installed: {problem}"
        return
    # The stream function is checked against torch's own answer on the first call that reads
    # a stream (python/src/tensor_reader.rs), where CUDA is up.
    _native.torch_set_reader(read, stream)
    reader = "installed"


def _reads_differ(torch, read):
    """What the reader at ``read`` reads differently from the attribute reads, over host
    tensors of every kind the fast path meets and some it declines; None where nothing."""
    x = torch.arange(60, dtype=torch.float32, device="cpu").reshape(6, 10)
    cases = {
        "a matrix": x,
        "its transpose": x.t(),
        "an offset window": x[1:, 2:7],
        "a row step": x[::2],
        "a bf16 permuted 3-D view": x.to(torch.bfloat16).reshape(2, 3, 10).permute(1, 0, 2),
        "an f16 row": x.half()[0],
        "a parameter": torch.nn.Parameter(x.clone()),
        "a batch of one": x.reshape(1, 6, 10),
        "an empty matrix": x[:0],
        "an int64 matrix": x.to(torch.int64),
        "five dimensions": x.reshape(1, 1, 1, 6, 10),
    }
    if hasattr(torch, "_neg_view"):
        cases["a negated view"] = torch._neg_view(x)
    for name, t in cases.items():
        got = _native.torch_view(t, "reader", True, read)
        want = _native.torch_view(t, "attributes", True)
        if (got is None) != (want is None) or (got is not None and got[:5] != want[:5]):
            return f"{name} reads {got} where its attributes read {want}"
    return None
