//! The repack of a call's A or B that the route's TMA kernel cannot take for its address or
//! leading dimension alone (gemm-core's [`Routed::repack`]): each such operand is copied, bits
//! unchanged, into the stream's scratch with a 16-byte leading dimension, and the route's own
//! kernel reads the copy. The same kernel on the same values: the same bits as without the
//! copy (and as the unaligned kernel of the contract, which ran here before, at a fraction of
//! the speed).
//!
//! The copies are launches of their own (`LaunchKind::OperandRepack`), recorded and packaged
//! like the half fallback's conversions. Scratch is bounded per call by the stream's repack
//! limit ([`Context::set_repack_limit`]); over it, while a captured graph freezes the scratch
//! smaller than needed, or while another library captures the stream, the call runs the
//! unaligned kernel (or a plain-load kernel's element-by-element path) instead. For a weight that
//! does not change, [`Context::prepare_weight`] makes the copy once.

use crate::context::Context;
use crate::conversion::Conversion;
use crate::emit::RequestFacts;
use crate::error::GemmError;
use crate::launch_plan::{plan_gemm, PlanSummary};
use crate::observer::{LaunchKind, Observer};
use crate::request::{Operands, Placed, Repacked, Stored, StoredMatrix};
use crate::table::KernelRef;
use cudarc::driver::sys::CUstreamCaptureStatus as CaptureStatus;
use gemm_core::{RepackPlan, Routed};

impl Context {
    /// Launches a validated request on its routed kernel: through aligned copies of A or B
    /// where the kernel cannot take them as stored and the stream's bound allows, else as
    /// stored (the planner then picks the unaligned kernel where the route has one). The one
    /// path of `Context::gemm` and `Context::gemm_on_kernel`.
    pub(crate) fn launch_routed<O: Observer>(
        &self,
        observer: &mut O,
        routed: &Routed,
        facts: RequestFacts,
        ops: &Operands,
        stored: Stored,
        beta: f32,
    ) -> Result<(PlanSummary, Option<Repacked>), GemmError> {
        let ab = stored.ab(ops);
        let tier = self.tier().id;
        if let Ok(repack) = routed.repack(self.kernels(), tier, &ab, self.repack_limit()) {
            if let Some(summary) =
                self.repacked_gemm(observer, routed, facts, ops, stored, beta, &repack)?
            {
                let repacked = Repacked {
                    a: repack.a.is_some(),
                    b: repack.b.is_some(),
                    scratch_bytes: repack.scratch_bytes,
                };
                return Ok((summary, Some(repacked)));
            }
        }
        let plan = plan_gemm(self, routed, facts.shape, ops, stored, beta)?;
        let summary = plan.summary();
        #[cfg(not(gemm_observer_stripped))]
        if O::ENABLED {
            observer.reserve(1)?;
        }
        self.emit_gemm(observer, &plan, facts, ops)?;
        Ok((summary, None))
    }

    /// Scratch bytes one call on this stream may take for aligned copies of its operands
    /// (default 1 GiB, `stream::DEFAULT_REPACK_LIMIT`).
    pub fn repack_limit(&self) -> u64 {
        self.own.repack_limit()
    }

    /// Bounds the scratch one call may take for aligned copies of A or B. A call whose copies
    /// would need more runs the route's unaligned kernel (the same bits, slower); 0 turns the
    /// repack off.
    pub fn set_repack_limit(&self, bytes: u64) {
        self.own.set_repack_limit(bytes)
    }

    /// Runs a validated request through aligned copies of the operands `plan` names, or
    /// returns `Ok(None)` (nothing enqueued) when the scratch may not grow to hold them.
    #[allow(clippy::too_many_arguments)]
    fn repacked_gemm<O: Observer>(
        &self,
        observer: &mut O,
        routed: &Routed,
        facts: RequestFacts,
        ops: &Operands,
        stored: Stored,
        beta: f32,
        plan: &RepackPlan,
    ) -> Result<Option<PlanSummary>, GemmError> {
        let (m, n, k) = facts.shape;
        // A stream another library is capturing (torch.cuda.graph) would bake the scratch's
        // address into a graph nothing here pins, and a growth then would allocate during the
        // capture: no copy, as with a frozen scratch (the same bits by the other kernel).
        if self.stream().capture_status()? != CaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Ok(None);
        }
        let guard = match self.scratch_for(plan.scratch_bytes.div_ceil(4) as usize) {
            Ok(g) => g,
            Err(GemmError::ScratchFrozen { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let span = guard.span;
        let region = |offset: u64| Placed {
            address: span.base + offset,
            span,
            offset,
        };
        let mut steps = Vec::with_capacity(2);
        let mut scratch_ops = *ops;
        let mut scratch_stored = stored;
        for copy in plan.copies() {
            let (operand, matrix) = match copy.operand {
                gemm_core::Operand::A => (&mut scratch_ops.a, &mut scratch_stored.a),
                _ => (&mut scratch_ops.b, &mut scratch_stored.b),
            };
            let Some(source) = *operand else { continue };
            let info = plan.conversion_of(&copy).ok_or(GemmError::NoConversion {
                tier: self.tier().name,
                from: stored.dtypes.0,
                to: stored.dtypes.0,
            })?;
            steps.push(Conversion {
                kind: LaunchKind::OperandRepack,
                info,
                // The source's own rows and columns; a transposition writes them swapped.
                rows: copy.from.rows,
                cols: copy.from.cols,
                ld_src: copy.from.ld,
                ld_dst: copy.ld,
                operand: source,
                region: copy.offset as usize,
            });
            *operand = Some(region(copy.offset));
            let (rows, cols) = copy.shape();
            *matrix = StoredMatrix {
                rows,
                cols,
                ld: copy.ld,
            };
            if copy.transposed {
                scratch_stored.a_transposed = true;
            }
        }
        // Planned (maps encoded, grid) before the first launch: a failure enqueues nothing.
        let gemm = plan_gemm(self, routed, (m, n, k), &scratch_ops, scratch_stored, beta)?;
        let summary = gemm.summary();
        #[cfg(not(gemm_observer_stripped))]
        if O::ENABLED {
            observer.reserve(steps.len() + 1)?;
        }
        for step in &steps {
            self.function(KernelRef::Conversion(step.info.id))?;
        }
        self.function(KernelRef::Gemm(summary.kernel))?;
        for step in &steps {
            let dst = region(step.region as u64);
            self.emit_conversion(observer, facts, step, Some(step.operand), Some(dst))?;
        }
        self.emit_gemm(observer, &gemm, facts, &scratch_ops)?;
        drop(guard);
        Ok(Some(summary))
    }
}
