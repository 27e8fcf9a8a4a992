//! The half fallback: a request in half types that no route serves runs as conversions around
//! the f32 route. Half inputs (A, B, a half bias, and a half C when beta != 0) are widened into
//! f32 scratch, the f32 kernel computes into f32 scratch, and the result is rounded into C.
//! Widening is exact and the one rounding happens where a native kernel's store would round,
//! so the fallback gives the bits a native half kernel of the same contract would.
//!
//! Each conversion is its own launch, recorded with its own kind (`InputUpcast`,
//! `OutputDowncast`) next to the GEMM's; all are counted before the first is enqueued.

use crate::context::Context;
use crate::conversion::Conversion;
use crate::emit::RequestFacts;
use crate::error::GemmError;
use crate::launch_plan::{plan_gemm, PlanSummary};
use crate::observer::{LaunchKind, Observer};
use crate::request::{Operands, Placed, Stored, StoredMatrix};
use crate::scratch::{layout, ScratchGuard};
use crate::table::{self, Dtype, KernelRef};
use gemm_core::Routed;

impl Context {
    pub(crate) fn conversion(
        &self,
        from: Dtype,
        to: Dtype,
    ) -> Result<&'static table::ConversionInfo, GemmError> {
        self.kernels()
            .conversion_for(self.tier().id, from, to)
            .ok_or(GemmError::NoConversion {
                tier: self.tier().name,
                from,
                to,
            })
    }

    /// The fallback's scratch, at least `elements` f32 long (grown unless a graph froze it),
    /// held by this caller until the guard drops.
    pub(crate) fn scratch_for(&self, elements: usize) -> Result<ScratchGuard<'_>, GemmError> {
        self.own
            .scratch
            .lock_for(elements, |n| self.alloc::<f32>(n))
    }

    /// Runs (or hands to `observer`) the fallback launches of a validated request whose f32
    /// route is `routed`. Everything that can refuse (a missing conversion, the observer's
    /// capacity, scratch that may not grow, the GEMM's plan) does so before the first launch.
    pub(crate) fn half_fallback<O: Observer>(
        &self,
        observer: &mut O,
        routed: &Routed,
        facts: RequestFacts,
        ops: &Operands,
        shape: Stored,
        beta: f32,
    ) -> Result<PlanSummary, GemmError> {
        let (ab, c_type) = facts.logical;
        let (m, n, k) = facts.shape;
        let half_ab = ab != Dtype::F32;
        let half_c = c_type != Dtype::F32;
        let elems = |rows: u64, cols: u64| (rows * cols) as usize;
        // Scratch regions: A, B, bias, C (f32, contiguous); empty where not needed.
        let a_up = ops.a.filter(|_| half_ab);
        let b_up = ops.b.filter(|_| half_ab);
        let bias_up = ops.bias.filter(|_| half_c);
        let (offsets, total) = layout([
            a_up.map_or(0, |_| elems(shape.a.rows, shape.a.cols)),
            b_up.map_or(0, |_| elems(shape.b.rows, shape.b.cols)),
            bias_up.map_or(0, |_| n as usize),
            if half_c { elems(m, n) } else { 0 },
        ]);
        let mut steps: Vec<Conversion> = Vec::with_capacity(4);
        let mut up = |operand: Option<Placed>, s: StoredMatrix, region, from| {
            if let Some(operand) = operand {
                let info = self.conversion(from, Dtype::F32)?;
                steps.push(Conversion {
                    kind: LaunchKind::InputUpcast,
                    info,
                    rows: s.rows,
                    cols: s.cols,
                    ld_src: s.ld,
                    ld_dst: s.cols,
                    operand,
                    region: region * 4,
                });
            }
            Ok::<(), GemmError>(())
        };
        up(a_up, shape.a, offsets[0], ab)?;
        up(b_up, shape.b, offsets[1], ab)?;
        let row = |rows, cols, ld| StoredMatrix { rows, cols, ld };
        up(bias_up, row(1, n, n), offsets[2], c_type)?;
        if half_c && beta != 0.0 {
            up(ops.c, row(m, n, shape.ldc), offsets[3], c_type)?;
        }
        let downcast = match (half_c, ops.c) {
            (true, Some(c)) => Some(Conversion {
                kind: LaunchKind::OutputDowncast,
                info: self.conversion(Dtype::F32, c_type)?,
                rows: m,
                cols: n,
                ld_src: n,
                ld_dst: shape.ldc,
                operand: c,
                region: offsets[3] * 4,
            }),
            _ => None,
        };
        #[cfg(not(gemm_observer_stripped))]
        if O::ENABLED {
            observer.reserve(steps.len() + 1 + usize::from(downcast.is_some()))?;
        }
        // Every function loaded before the first launch: a failure leaves nothing enqueued.
        for step in steps.iter().chain(&downcast) {
            self.function(KernelRef::Conversion(step.info.id))?;
        }
        // Held until the last launch is enqueued (see `ScratchGuard`).
        let guard = if total > 0 {
            Some(self.scratch_for(total)?)
        } else {
            None
        };
        let scratch = guard.as_ref().map(|g| g.span);
        let region = |offset: usize| -> Option<Placed> {
            scratch.map(|s| Placed {
                address: s.base + offset as u64 * 4,
                span: s,
                offset: offset as u64 * 4,
            })
        };
        // The f32 GEMM on scratch (or on the request's own f32 operands), planned before the
        // first launch.
        let scratch_ops = Operands {
            a: if a_up.is_some() {
                region(offsets[0])
            } else {
                ops.a
            },
            b: if b_up.is_some() {
                region(offsets[1])
            } else {
                ops.b
            },
            bias: if bias_up.is_some() {
                region(offsets[2])
            } else {
                ops.bias
            },
            c: if half_c { region(offsets[3]) } else { ops.c },
        };
        // Scratch copies are dense: their leading dimension is their column count.
        let dense = |s: StoredMatrix, upcast: bool| StoredMatrix {
            ld: if upcast { s.cols } else { s.ld },
            ..s
        };
        let stored = Stored {
            a: dense(shape.a, a_up.is_some()),
            // A prepass kernel's copy is made on the repack path only; here its route's
            // unaligned kernel runs (Routed::pick).
            a_transposed: false,
            b: dense(shape.b, b_up.is_some()),
            ldc: if half_c { n } else { shape.ldc },
            dtypes: (Dtype::F32, Dtype::F32),
        };
        let plan = plan_gemm(self, routed, (m, n, k), &scratch_ops, stored, beta)?;
        let summary = plan.summary();
        self.function(KernelRef::Gemm(summary.kernel))?;
        for step in &steps {
            let dst = region(step.region / 4);
            self.emit_conversion(observer, facts, step, Some(step.operand), dst)?;
        }
        self.emit_gemm(observer, &plan, facts, &scratch_ops)?;
        if let Some(step) = &downcast {
            let src = region(step.region / 4);
            self.emit_conversion(observer, facts, step, src, Some(step.operand))?;
        }
        drop(guard);
        Ok(summary)
    }
}
