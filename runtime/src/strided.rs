//! A strided batch (a `bmm`: every entry one shape, each operand's entries a fixed number of
//! elements apart) as one launch of a batched kernel (its kind's manifest says `batch`; grid z
//! walks the entries). The kernel implements the route's contract, so every entry gets the bits
//! its own [`Context::gemm`] would: only how many launches the batch takes changes. Where the
//! route has no batched kernel, or it would be much slower than the route's own kernel on
//! large entries, nothing is launched and the caller runs the batch entry by entry.

use crate::context::Context;
use crate::element::Element;
use crate::emit::RequestFacts;
use crate::error::GemmError;
use crate::launch_plan::{launch_grid, GemmPlan};
use crate::launcher::Geometry;
use crate::observer::NoObserver;
use crate::request::{checked_operands, dim, GemmRequest, Launch};
use crate::stream::Mode;
use crate::table::{ArgSources, Dtype, DtypeTriple, KernelInfo};
use gemm_core::KernelSet;
use gemm_core::Routed;

/// Each operand's distance from one entry to the next, in elements (0: every entry reads the
/// same one; C's is never 0 in a batch the caller checked for overlaps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Strides {
    pub a: i64,
    pub b: i64,
    pub c: i64,
    pub bias: i64,
}

/// An entry's multiply-adds (m n k) above which a batch does not trade the route's own kernel
/// for a slower batched one: there one launch an entry costs less than the slower kernel.
/// (The bits are the same either way; this only picks the faster path.)
pub(crate) const SMALL_ENTRY_WORK: u64 = 1 << 28;

/// Entries one launch takes: the grid's z limit.
const MAX_Z: usize = 65_535;

/// The batched kernel that runs a batch on `routed`: the route's own kernel when it is a batch
/// kernel; else, for entries small enough that one launch beats a launch an entry, the tier's
/// batch kernel (its `batch_kernels`) of the route's contract, op and dtype. Kernels that read
/// tensor maps are never taken (their maps describe one entry).
pub(crate) fn batched_kernel(
    set: &KernelSet,
    routed: &Routed,
    work: u64,
) -> Option<&'static KernelInfo> {
    // A batch launches on the operands as stored: no kernel that reads a copy (validation
    // keeps those out of `batch_kernels` too).
    let usable = |k: &&'static KernelInfo| {
        k.batch && k.tensor_maps.is_empty() && k.prepass == crate::table::Prepass::None
    };
    if let Some(k) = Some(routed.kernel).filter(usable) {
        return Some(k);
    }
    if work > SMALL_ENTRY_WORK {
        return None;
    }
    let of = routed.kernel;
    set.kernels().iter().find(|k| {
        usable(k)
            && k.tier == of.tier
            && (k.contract, k.op, k.dtype) == (of.contract, of.op, of.dtype)
    })
}

impl Context {
    /// Runs `count` entries of `first`'s shape, entry e's operands `e * strides` elements past
    /// `first`'s, as one launch (or one a 65535 entries) of a batched kernel. The caller has
    /// checked every entry (each inside a registered span, no output overlapping another entry's
    /// operands). `Ok(None)`, with nothing enqueued, when the batch has no batched path (no such
    /// kernel on the route, the half fallback, a vendor mode): the caller goes entry by entry.
    pub(crate) fn gemm_strided<A: Element, C: Element>(
        &self,
        first: GemmRequest<'_, A, C>,
        count: usize,
        strides: Strides,
    ) -> Result<Option<Launch>, GemmError> {
        let (m, n, k) = (dim("m", first.m)?, dim("n", first.n)?, dim("k", first.k)?);
        let (operands, stored) = checked_operands(self, &first, (m, n, k))?;
        let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, Dtype::F32);
        let policy_from_context = first.policy.is_none();
        let policy = first
            .policy
            .unwrap_or_else(|| self.policy_for(first.op, dtype));
        let mode = first.mode.unwrap_or_else(|| self.mode());
        if mode != Mode::Deterministic || count == 0 {
            return Ok(None);
        }
        let tier = self.tier();
        let routed = self
            .kernels()
            .route(tier.id, policy, first.op, dtype, m, n, k)
            .map_err(|r| GemmError::refused(r, tier.name, policy, first.op, dtype))?;
        if routed.half_fallback {
            return Ok(None);
        }
        if m == 0 || n == 0 {
            return Ok(Some(Launch::none(policy, mode)));
        }
        let Some(kernel) = batched_kernel(
            self.kernels(),
            &routed,
            m.saturating_mul(n).saturating_mul(k),
        ) else {
            return Ok(None);
        };
        let abi = self
            .kernels()
            .abi(kernel.abi)
            .ok_or(GemmError::UnknownAbi { abi: kernel.abi })?;
        let facts = RequestFacts::of(&first, (m, n, k), policy, policy_from_context);
        let (ea, ec) = (size_of::<A>() as i64, size_of::<C>() as i64);
        let address = |p: Option<crate::request::Placed>| p.map_or(0, |p| p.address);
        let (x, y, _) = launch_grid(self, kernel, m, n)?;
        let mut launched = (x, y, 0);
        let mut start = 0usize;
        while start < count {
            let z = (count - start).min(MAX_Z);
            // Entry `start`'s addresses (every entry was checked to lie in its span).
            let moved = |base: u64, stride: i64, elem: i64| {
                (base as i64).wrapping_add((start as i64).wrapping_mul(stride).wrapping_mul(elem))
                    as u64
            };
            let bias = address(operands.bias);
            let sources = ArgSources {
                a: moved(address(operands.a), strides.a, ea),
                b: moved(address(operands.b), strides.b, ea),
                bias: if bias == 0 {
                    0
                } else {
                    moved(bias, strides.bias, ec)
                },
                c: moved(address(operands.c), strides.c, ec),
                m: m as i32,
                n: n as i32,
                k: k as i32,
                lda: stored.a.ld as i32,
                ldb: stored.b.ld as i32,
                ldc: stored.ldc as i32,
                beta: first.beta,
                a_batch_stride: strides.a,
                b_batch_stride: strides.b,
                c_batch_stride: strides.c,
                bias_batch_stride: strides.bias,
                ..ArgSources::default()
            };
            let plan = GemmPlan {
                kernel,
                unaligned: false,
                geometry: Geometry {
                    grid: (x, y, z as u32),
                    block: (kernel.block_threads, 1, 1),
                    shared_bytes: kernel.shared_bytes,
                    cluster: kernel.cluster,
                },
                args: (abi.bind)(&sources),
                abi,
                maps: Vec::new(),
            };
            self.emit_gemm(&mut NoObserver, plan, facts, &operands)?;
            launched.2 = launched.2.max(z as u32);
            start += z;
        }
        Ok(Some(Launch {
            kernel: Some(kernel.id),
            rule: routed.hit.rule,
            grid: launched,
            block: (kernel.block_threads, 1, 1),
            shared_bytes: kernel.shared_bytes,
            vendor: false,
            half_fallback: false,
            policy,
            mode,
            cluster: kernel.cluster,
            unaligned: false,
            repacked: None,
        }))
    }
}
