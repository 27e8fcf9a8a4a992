//! The common torch call, read and launched on the native side: `mm`, `linear`, `bmm` and
//! the mode's overrides with no explicit policy or mode, no beta, tensors on the current
//! device. Python's per-call work (named tuples, a dozen checks, several frames) was half a
//! call's host cost; here a plain tensor is one call of the tensor reader
//! ([`crate::tensor_reader`]) where it is installed, else one DLPack export and `is_neg()`; a
//! subclass is five attribute reads.
//!
//! Anything else — a refusal to word, a copy to make, another device — is declined (`None`)
//! before anything is allocated or enqueued, and the Python path (`gemm_aot/__init__.py`)
//! takes the call as before, with its messages. The one decline that comes later is the
//! runtime's `no_route` (an op whose 16-bit output the tier routes only into f32): nothing is
//! enqueued, the output allocated for it is dropped, and the key is declined at once from then
//! on. The runtime call is the one the Python path makes, so the bits are the same.

use gemm_runtime::{Dtype, Mode, Op, Policy, RawGemm, RawMatrix};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCapsule, PyTuple};
use std::collections::HashSet;
use std::sync::Mutex;

/// What the fast path needs of torch, registered once by the Python layer (`torch` is never
/// imported from here).
pub(crate) struct TorchRefs {
    bf16: Py<PyAny>,
    f16: Py<PyAny>,
    f32: Py<PyAny>,
    /// `torch._C._cuda_getCurrentRawStream(device) -> int`.
    raw_stream: Py<PyAny>,
    /// `torch._C._cuda_getDevice() -> int`.
    current_device: Py<PyAny>,
    /// How many devices torch sees (0: not said). With one, every CUDA tensor is on the
    /// current device, and the fast path does not ask torch which device that is.
    devices: usize,
    /// `torch._C._to_dlpack` and the types whose tensors it reads (`torch.Tensor`,
    /// `torch.nn.Parameter`): one export gives what five attribute reads give, in less than
    /// half their time. A subclass, which may override what a read returns, is read
    /// attribute by attribute.
    export: Option<(Py<PyAny>, Vec<Py<PyAny>>)>,
    /// `torch.Tensor.is_neg`, the unbound method: a plain tensor's negation bit is read by
    /// calling it on the tensor, without looking the method up on the tensor first.
    is_neg: Option<Py<PyAny>>,
}

pub(crate) static TORCH: PyOnceLock<TorchRefs> = PyOnceLock::new();

/// (device, op, ab, c) the tier does not route with the tensor-core policy: the Python path
/// owns those calls (f32 scratch, or the tier's default policy), so they are declined at once.
type Declined = Mutex<HashSet<(usize, Op, Dtype, Dtype)>>;

fn declined() -> &'static Declined {
    static DECLINED: std::sync::OnceLock<Declined> = std::sync::OnceLock::new();
    DECLINED.get_or_init(Default::default)
}

/// Registers torch's dtypes and stream accessors, and how many devices torch sees (0: not
/// said); a second registration keeps the first.
#[pyfunction]
#[pyo3(signature = (bf16, f16, f32, raw_stream, current_device, devices=0, to_dlpack=None, plain_types=Vec::new(), is_neg=None))]
#[allow(clippy::too_many_arguments)]
pub fn torch_register(
    py: Python<'_>,
    bf16: Py<PyAny>,
    f16: Py<PyAny>,
    f32: Py<PyAny>,
    raw_stream: Py<PyAny>,
    current_device: Py<PyAny>,
    devices: usize,
    to_dlpack: Option<Py<PyAny>>,
    plain_types: Vec<Py<PyAny>>,
    is_neg: Option<Py<PyAny>>,
) {
    TORCH.get_or_init(py, || TorchRefs {
        bf16,
        f16,
        f32,
        raw_stream,
        current_device,
        devices,
        export: to_dlpack.map(|f| (f, plain_types)),
        is_neg,
    });
}

/// Dimensions a View holds (attention's scores, softmax's input, have 4).
const MAX_DIMS: usize = 4;

/// One tensor as read: address, shape and strides, dtype, device.
pub(crate) struct View {
    pub ptr: u64,
    pub nd: usize,
    pub shape: [usize; MAX_DIMS],
    pub stride: [usize; MAX_DIMS],
    pub dtype: Dtype,
    pub device: usize,
    /// Read off torch's own tensor (a plain tensor's export, or the dispatcher's `at::Tensor`),
    /// not a subclass's attributes: it lies within torch's storage as torch itself assumes when
    /// its own kernels read it (torch checks a view against its storage when it makes it), so
    /// the call does not ask the driver for its allocation.
    pub in_storage: bool,
}

pub(crate) fn dtype_of(refs: &TorchRefs, d: &Bound<'_, PyAny>) -> Option<Dtype> {
    if d.is(&refs.bf16) {
        Some(Dtype::Bf16)
    } else if d.is(&refs.f16) {
        Some(Dtype::F16)
    } else if d.is(&refs.f32) {
        Some(Dtype::F32)
    } else {
        None
    }
}

fn ints<const N: usize>(t: &Bound<'_, PyAny>, nd: usize) -> Option<[usize; N]> {
    let t = t.cast::<PyTuple>().ok()?;
    if t.len() != nd || nd > N {
        return None;
    }
    let mut out = [0usize; N];
    for (i, v) in t.iter().enumerate() {
        // A negative stride fails to extract: declined, the Python path words it.
        out[i] = v.extract::<usize>().ok()?;
    }
    Some(out)
}

/// `t` as a View, `None` when it is not a CUDA tensor of a served dtype with at most
/// [`MAX_DIMS`] dimensions and non-negative strides.
pub(crate) fn view(refs: &TorchRefs, t: &Bound<'_, PyAny>) -> Option<View> {
    view_on(refs, t, false)
}

/// [`view`], or with `host` a CPU tensor too, read as on device 0 (for [`torch_plan`]'s
/// comparisons only: a host view is never launched).
fn view_on(refs: &TorchRefs, t: &Bound<'_, PyAny>, host: bool) -> Option<View> {
    read_view(refs, t, host, ReadBy::Fast)
}

/// How a tensor is read ([`read_view`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadBy {
    /// The fast path's way: a plain tensor through the installed reader
    /// ([`crate::tensor_reader`]), else through one export; any other by its attributes.
    Fast,
    /// Attribute by attribute (what the reader's check compares it with).
    Attributes,
}

/// `t` as a view, read `by` one of the ways ([`ReadBy`]).
pub(crate) fn read_view(
    refs: &TorchRefs,
    t: &Bound<'_, PyAny>,
    host: bool,
    by: ReadBy,
) -> Option<View> {
    if by == ReadBy::Fast && is_plain(refs, t) {
        if let Some(reader) = crate::tensor_reader::installed() {
            // torch's own sizes and strides, as the attributes give them.
            return reader.view(t, host);
        }
        if let Some((to_dlpack, _)) = &refs.export {
            match view_exported(refs, to_dlpack.bind(t.py()), t, host) {
                // The export may report the stride of a dimension of fewer than two elements as
                // 1. In a matrix such a stride moves no address, but an empty dimension can
                // change the layout read (k = 0), and a bmm's batch of one its batch stride:
                // those tensors are read by their attributes.
                Some(v) if v.shape[..v.nd].contains(&0) || (v.nd == 3 && v.shape[0] == 1) => {}
                other => return other,
            }
        }
    }
    view_attributes(refs, t, host)
}

/// `t` read attribute by attribute.
fn view_attributes(refs: &TorchRefs, t: &Bound<'_, PyAny>, host: bool) -> Option<View> {
    let py = t.py();
    let dtype = dtype_of(refs, &t.getattr(intern!(py, "dtype")).ok()?)?;
    if negated(t)? {
        return None;
    }
    let device: i64 = t
        .call_method0(intern!(py, "get_device"))
        .ok()?
        .extract()
        .ok()?;
    let shape = t.getattr(intern!(py, "shape")).ok()?;
    let nd = shape.len().ok()?;
    let shape = ints::<MAX_DIMS>(&shape, nd)?;
    let stride = ints::<MAX_DIMS>(&t.call_method0(intern!(py, "stride")).ok()?, nd)?;
    let ptr = t
        .call_method0(intern!(py, "data_ptr"))
        .ok()?
        .extract()
        .ok()?;
    Some(View {
        ptr,
        nd,
        shape,
        stride,
        dtype,
        device: if host && device == -1 {
            0
        } else {
            usize::try_from(device).ok()?
        },
        in_storage: false,
    })
}

/// Whether `t` is a lazily negated view, which holds its values' negation: the Python path
/// refuses it. (The conjugate bit is complex tensors' only, which no served dtype is.)
fn negated(t: &Bound<'_, PyAny>) -> Option<bool> {
    t.call_method0(intern!(t.py(), "is_neg"))
        .ok()?
        .extract::<bool>()
        .ok()
}

/// Whether `t`'s type is exactly one the fast path reads off torch's own tensor, through the
/// tensor reader or one export (`torch.Tensor`, `torch.nn.Parameter`).
pub(crate) fn is_plain(refs: &TorchRefs, t: &Bound<'_, PyAny>) -> bool {
    let ty = t.get_type();
    refs.export
        .as_ref()
        .is_some_and(|(_, plain)| plain.iter().any(|p| ty.is(p)))
}

/// [`view_on`] of a plain tensor through one `torch._C._to_dlpack` export (the capsule is
/// dropped at once, which releases the export). The export's strides of a dimension of fewer
/// than two elements may be normalized ([`view_on`] says where that matters).
fn view_exported(
    refs: &TorchRefs,
    to_dlpack: &Bound<'_, PyAny>,
    t: &Bound<'_, PyAny>,
    host: bool,
) -> Option<View> {
    // A plain tensor's type is exactly torch's, so its `is_neg` is torch's own.
    let negative = match &refs.is_neg {
        Some(is_neg) => is_neg
            .bind(t.py())
            .call1((t,))
            .ok()?
            .extract::<bool>()
            .ok()?,
        None => negated(t)?,
    };
    if negative {
        return None;
    }
    let capsule = to_dlpack.call1((t,)).ok()?;
    let e = crate::dlpack::exported::<MAX_DIMS>(capsule.cast::<PyCapsule>().ok()?)?;
    let dtype = match e.dtype {
        (4, 16, 1) => Dtype::Bf16,
        (2, 16, 1) => Dtype::F16,
        (2, 32, 1) => Dtype::F32,
        _ => return None,
    };
    // DLPack's device types: 2 CUDA, 1 CPU (a host view, for the plan's comparisons only).
    let device = match e.device {
        (2, id) => usize::try_from(id).ok()?,
        (1, _) if host => 0,
        _ => return None,
    };
    let (mut shape, mut stride) = ([0usize; MAX_DIMS], [0usize; MAX_DIMS]);
    for i in 0..e.nd {
        // A negative stride fails: declined, the Python path words it.
        shape[i] = usize::try_from(e.shape[i]).ok()?;
        stride[i] = usize::try_from(e.strides[i]).ok()?;
    }
    Some(View {
        ptr: e.address,
        nd: e.nd,
        shape,
        stride,
        dtype,
        device,
        in_storage: true,
    })
}

/// One matrix of a view (the last two dimensions): rows, cols, row stride, col stride, and
/// the batch stride (0 for a 2-D view).
#[derive(Clone, Copy)]
struct Mat {
    ptr: u64,
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
    batch: usize,
}

impl View {
    fn mat(&self, batched: bool) -> Option<Mat> {
        let s = |i: usize| (self.shape[i], self.stride[i]);
        let ((rows, rs), (cols, cs), batch) = match (self.nd, batched) {
            (2, false) => (s(0), s(1), 0),
            (3, true) => (s(1), s(2), self.stride[0]),
            _ => return None,
        };
        Some(Mat {
            ptr: self.ptr,
            rows,
            cols,
            rs,
            cs,
            batch,
        })
    }
}

/// How a matrix is stored, as `gemm_aot._operands.storage` says: `(transposed, ld)`;
/// `None` when no dimension is contiguous.
fn storage(m: &Mat) -> Option<(bool, usize)> {
    if m.cs == 1 || m.cols == 1 {
        Some((false, if m.rows > 1 { m.rs } else { m.cols }))
    } else if m.rs == 1 || m.rows == 1 {
        Some((true, if m.cols > 1 { m.cs } else { m.rows }))
    } else {
        None
    }
}

/// The call a torch `mm`/`bmm` with these operands makes, before its output exists.
#[derive(Clone)]
pub(crate) struct Plan {
    pub call: RawGemm,
    pub count: usize,
    /// Batch strides of a, b (elements); c's is fixed once the output is known.
    pub strides: (u64, u64),
    pub device: usize,
    /// C's batch stride (elements) when the output is given; `None`: allocate `[count,] m, n`.
    pub c_batch: Option<usize>,
    /// Every operand was read off torch's own tensor ([`View::in_storage`]); set when planned
    /// and, for an output the fast path allocates, by [`Plan::allocated_output`].
    in_storage: bool,
}

impl Plan {
    /// Launches the plan on `stream` of its device, C's batch stride `stride_c`: `Ok(true)`
    /// when enqueued, `Ok(false)` when the tier does not route the key (`no_route`, nothing
    /// enqueued; the key is declined from then on), else the runtime's error and the batch
    /// entry it names (`None`: a single call). Call without the GIL.
    pub(crate) fn launch(
        &self,
        stride_c: usize,
        stream: usize,
    ) -> Result<bool, (gemm_runtime::GemmError, Option<usize>)> {
        let entry = |i: usize| (self.count > 1).then_some(i);
        if self.count == 1 && self.in_storage {
            let ctx = crate::contexts::on_stream(self.device, stream).map_err(|e| (e, None))?;
            // SAFETY: every operand was read off torch's own tensor (`in_storage`): it lies
            // within torch's storage as torch itself assumes when its kernels read it (torch
            // checks a view against its storage when it makes it), and the caller holds the
            // tensors for the call.
            return match unsafe { ctx.gemm_raw_in_bounds(&self.call) } {
                Ok(_) => Ok(true),
                Err(e) => self.refused(e, None),
            };
        }
        // gemm_raw_batch checks every entry without the device before it launches any.
        let calls = match self.count {
            // One call: its own entry, nothing allocated.
            1 => None,
            count => Some(
                self.call
                    .strided(count, (self.strides.0, self.strides.1, stride_c as u64))
                    .map_err(|e| (e, None))?,
            ),
        };
        let calls = calls.as_deref().unwrap_or(std::slice::from_ref(&self.call));
        let ctx = crate::contexts::on_stream(self.device, stream).map_err(|e| (e, None))?;
        match ctx.gemm_raw_batch(calls) {
            Ok(_) => Ok(true),
            Err(f) => self.refused(f.error, entry(f.entry)),
        }
    }

    /// The output the fast path allocated (`new_empty`) at `ptr`: C's address, and whether it
    /// too was read off torch's own tensor (`plain`: its type is exactly torch's; a torch
    /// function mode may hand back anything).
    pub(crate) fn allocated_output(&mut self, ptr: u64, plain: bool) {
        self.call.c.ptr = ptr;
        self.in_storage &= plain;
    }

    /// Whether the plan's call goes without the driver's bounds queries (for the CPU tests).
    pub(crate) fn in_storage(&self) -> bool {
        self.in_storage
    }

    /// A refusal of the runtime's: `Ok(false)` for `no_route` (refused before anything was
    /// enqueued: the Python path serves this key from now on), else the error and its entry.
    fn refused(
        &self,
        error: gemm_runtime::GemmError,
        entry: Option<usize>,
    ) -> Result<bool, (gemm_runtime::GemmError, Option<usize>)> {
        if error.kind() != "no_route" {
            return Err((error, entry));
        }
        let c = &self.call;
        declined()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((self.device, c.op, c.ab, c.c_dtype));
        Ok(false)
    }
}

fn plan(
    refs: &TorchRefs,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    bias: Option<&Bound<'_, PyAny>>,
    batched: bool,
) -> Option<Plan> {
    plan_on(refs, (a, b, out, bias), batched, false)
}

/// [`plan`], with `host` over CPU tensors too ([`view_on`]).
#[allow(clippy::type_complexity)]
fn plan_on(
    refs: &TorchRefs,
    (a, b, out, bias): (
        &Bound<'_, PyAny>,
        &Bound<'_, PyAny>,
        Option<&Bound<'_, PyAny>>,
        Option<&Bound<'_, PyAny>>,
    ),
    batched: bool,
    host: bool,
) -> Option<Plan> {
    let vo = match out {
        Some(o) => Some(view_on(refs, o, host)?),
        None => None,
    };
    let vbias = match bias {
        Some(t) => Some(view_on(refs, t, host)?),
        None => None,
    };
    plan_views(
        &view_on(refs, a, host)?,
        &view_on(refs, b, host)?,
        vo.as_ref(),
        vbias.as_ref(),
        batched,
    )
}

/// The plan of [`plan`] over views already read (the native dispatch reads them in C++).
pub(crate) fn plan_views(
    va: &View,
    vb: &View,
    out: Option<&View>,
    bias: Option<&View>,
    batched: bool,
) -> Option<Plan> {
    let (ma, mb) = (va.mat(batched)?, vb.mat(batched)?);
    let count = if batched { va.shape[0] } else { 1 };
    if (batched && vb.shape[0] != count) || va.dtype != vb.dtype || va.device != vb.device {
        return None;
    }
    let (m, n, k) = (ma.rows, mb.cols, ma.cols);
    if mb.rows != k || count == 0 || m == 0 || n == 0 {
        return None;
    }
    let ((ta, lda), (tb, ldb)) = (storage(&ma)?, storage(&mb)?);
    let op = match (ta, tb) {
        (false, false) => Op::Nn,
        (false, true) => Op::Nt,
        (true, false) => Op::Tn,
        (true, true) => return None,
    };
    let (c_dtype, c_out) = match out {
        Some(vo) => {
            let mo = vo.mat(batched)?;
            if (batched && vo.shape[0] != count) || (mo.rows, mo.cols) != (m, n) {
                return None;
            }
            let (to, ldc) = storage(&mo)?;
            if (to && n > 1) || vo.device != va.device {
                return None;
            }
            (vo.dtype, Some((mo.ptr, ldc, mo.batch)))
        }
        None => (va.dtype, None),
    };
    let bias_ptr = match bias {
        Some(vb) => {
            let unit = vb.nd == 1 && vb.shape[0] == n && (vb.stride[0] == 1 || n == 1);
            if !unit || vb.dtype != c_dtype || vb.device != va.device {
                return None;
            }
            Some(vb.ptr)
        }
        None => None,
    };
    // 16-bit inputs run the tensor-core policy, named, as the Python path does; f32 inputs the
    // tier's default. A key the tier declined is the Python path's.
    let policy = (va.dtype != Dtype::F32).then_some(Policy::TensorCore);
    if policy.is_some()
        && declined()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&(va.device, op, va.dtype, c_dtype))
    {
        return None;
    }
    let (c_ptr, ldc) = c_out.map_or((0, n), |(p, ld, _)| (p, ld));
    Some(Plan {
        call: RawGemm {
            op,
            m,
            n,
            k,
            ab: va.dtype,
            c_dtype,
            a: RawMatrix {
                ptr: ma.ptr,
                ld: lda,
            },
            b: RawMatrix {
                ptr: mb.ptr,
                ld: ldb,
            },
            c: RawMatrix {
                ptr: c_ptr,
                ld: ldc,
            },
            bias: bias_ptr,
            beta: 0.0,
            policy,
            mode: Some(Mode::Deterministic),
        },
        count,
        strides: (ma.batch as u64, mb.batch as u64),
        device: va.device,
        c_batch: c_out.map(|(_, _, s)| s),
        in_storage: va.in_storage
            && vb.in_storage
            && out.is_none_or(|v| v.in_storage)
            && bias.is_none_or(|v| v.in_storage),
    })
}

/// Whether `device` is torch's current device (else the Python path makes it current around
/// the call).
pub(crate) fn is_current(refs: &TorchRefs, py: Python<'_>, device: usize) -> bool {
    if refs.devices == 1 {
        // One device: it is the current one (a view's device was read as a CUDA ordinal).
        return device == 0;
    }
    let current = refs
        .current_device
        .bind(py)
        .call0()
        .and_then(|d| d.extract::<usize>());
    current.is_ok_and(|d| d == device)
}

/// torch's current stream on `device`, as a raw `CUstream`: read by the installed reader
/// where it reads streams ([`crate::tensor_reader`]), else asked of torch from here.
pub(crate) fn current_stream(refs: &TorchRefs, py: Python<'_>, device: usize) -> PyResult<usize> {
    let ask = || -> PyResult<usize> { refs.raw_stream.bind(py).call1((device,))?.extract() };
    if let Some(reader) = crate::tensor_reader::installed() {
        if let Some(s) = reader.stream(device, || ask().ok()) {
            return Ok(s);
        }
    }
    ask()
}

/// `mm`/`bmm` of torch tensors (`out` and `bias` optional), launched on torch's current
/// stream; returns the output, or `None` when the call is not the common case (nothing
/// allocated, nothing enqueued: the Python path takes it).
#[pyfunction]
#[pyo3(signature = (a, b, out=None, bias=None, batched=false))]
pub fn torch_mm<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    bias: Option<&Bound<'py, PyAny>>,
    batched: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(refs) = TORCH.get(py) else {
        return Ok(None);
    };
    let Some(mut p) = plan(refs, a, b, out, bias, batched) else {
        return Ok(None);
    };
    if !is_current(refs, py, p.device) {
        return Ok(None);
    }
    let (m, n) = (p.call.m, p.call.n);
    let (out, stride_c) = match (out, p.c_batch) {
        (Some(o), Some(s)) => (o.clone(), s),
        _ => {
            let shape = if batched {
                PyTuple::new(py, [p.count, m, n])?
            } else {
                PyTuple::new(py, [m, n])?
            };
            let o = a.call_method1(intern!(py, "new_empty"), (shape,))?;
            let ptr = o.call_method0(intern!(py, "data_ptr"))?.extract()?;
            p.allocated_output(ptr, is_plain(refs, &o));
            (o, m * n)
        }
    };
    let stream = current_stream(refs, py, p.device)?;
    match py.detach(|| p.launch(stride_c, stream)) {
        Ok(true) => Ok(Some(out)),
        Ok(false) => Ok(None),
        Err((e, entry)) => Err(crate::errors::in_batch(py, &e, entry)),
    }
}

/// The call the fast path would make for these operands, without launching (`None`: it
/// declines): `(op, m, n, k, ab, c, lda, ldb, ldc, count, (stride_a, stride_b), policy)`.
/// For the CPU tests, which compare it with the Python path's and the native dispatch's
/// (`host`: CPU tensors planned as if on device 0).
#[pyfunction]
#[pyo3(signature = (a, b, out=None, bias=None, batched=false, host=false))]
pub fn torch_plan<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    bias: Option<&Bound<'py, PyAny>>,
    batched: bool,
    host: bool,
) -> Option<PlanTuple> {
    Some(describe(&plan_on(
        TORCH.get(py)?,
        (a, b, out, bias),
        batched,
        host,
    )?))
}

/// Whether the call [`torch_plan`] plans for these operands would go without the driver's
/// bounds queries (every operand read off torch's own tensor), `None` when it declines; for
/// the CPU tests. An output the fast path allocates counts only when torch hands back a plain
/// tensor (not seen here).
#[pyfunction]
#[pyo3(signature = (a, b, out=None, bias=None, batched=false))]
pub fn torch_plan_in_storage<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    bias: Option<&Bound<'py, PyAny>>,
    batched: bool,
) -> Option<bool> {
    plan(TORCH.get(py)?, a, b, out, bias, batched).map(|p| p.in_storage())
}

/// `(op, [m, n, k, bias], (ab, c), [lda, ldb, ldc], count, (stride_a, stride_b), policy)`.
pub(crate) type PlanTuple = (
    &'static str,
    [usize; 4],
    (&'static str, &'static str),
    [usize; 3],
    usize,
    (u64, u64),
    Option<&'static str>,
);

/// What [`torch_plan`] and the native dispatch's trace say of a plan.
pub(crate) fn describe(p: &Plan) -> PlanTuple {
    let c = &p.call;
    (
        c.op.as_str(),
        [c.m, c.n, c.k, usize::from(c.bias.is_some())],
        (c.ab.as_str(), c.c_dtype.as_str()),
        [c.a.ld, c.b.ld, c.c.ld],
        p.count,
        p.strides,
        c.policy.map(|p| p.as_str()),
    )
}
