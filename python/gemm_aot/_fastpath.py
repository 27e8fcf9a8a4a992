"""Whether the native fast path (``python/src/torch_fast.rs``, ``rows_fast.rs``) serves the
common torch call: ``enabled`` is None until the first torch call registers torch's dtypes and
stream accessors with it, False where this torch lacks those accessors (the Python path then
serves every call).

With it comes the tensor reader (``python/src/tensor_reader.rs``, ``csrc/tensor_reader.cpp``):
C functions, built into the native dispatch's library (``_dispatch.py``, once per torch, cached),
that read a plain tensor and torch's current stream with no Python call. It is installed only
after its reads of a set of tensors matched their attribute reads, and its stream function used
only once it gave torch's own answer on a stream other than the default; ``reader`` says whether
it was installed, or why not."""

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
    """Installs the tensor reader where the native library has it and its reads check out.
    Never raises: the reader only saves time, and ``reader`` says why it is not installed."""
    global reader
    try:
        reader = _installed_reader(torch)
    except Exception as e:  # noqa: BLE001 - whatever went wrong, the reads stay as they were
        reader = f"not installed: {type(e).__name__}: {e}"


def _installed_reader(torch):
    from . import _dispatch

    if _dispatch.load(torch) is None:
        return f"no native library: {_dispatch.status()}"
    addresses = _dispatch.reader_addresses()
    if addresses is None:
        return f"not in the native library: {_dispatch.reader_status()}"
    read, stream = addresses
    problem = _reads_differ(torch, read)
    if problem is not None:
        return f"not installed: {problem}"
    # The stream function is checked here where CUDA is up (on the default stream and on
    # another); otherwise on the first call that reads a stream other than the legacy default
    # (python/src/tensor_reader.rs), where torch's answer tells the two apart.
    verified = _streams_agree(torch, _dispatch.reader_stream_function())
    if verified is False:
        stream = 0
    _native.torch_set_reader(read, stream, bool(verified))
    return "installed" if stream else "installed (views only: its stream disagreed with torch's)"


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
    declined = {"an int64 matrix", "five dimensions", "a negated view"}
    for name, t in cases.items():
        got = _native.torch_view(t, "reader", True, read)
        want = _native.torch_view(t, "attributes", True)
        if (got is None) != (want is None) or (got is not None and got[:5] != want[:5]):
            return f"{name} reads {got} where its attributes read {want}"
        if (got is None) != (name in declined):
            return f"{name} reads {got}, where it should be {'declined' if name in declined else 'read'}"
    return None


def _streams_agree(torch, fn):
    """Whether the reader's stream function gives torch's current stream, on the default
    stream and inside another; None where CUDA is not up (checking would start it)."""
    if not torch.cuda.is_initialized():
        return None
    import ctypes

    device = torch.cuda.current_device()

    def agree():
        out = ctypes.c_uint64()
        return fn(device, ctypes.byref(out)) == 0 and out.value == torch._C._cuda_getCurrentRawStream(device)

    if not agree():
        return False
    with torch.cuda.stream(torch.cuda.Stream(device)):
        return agree()
