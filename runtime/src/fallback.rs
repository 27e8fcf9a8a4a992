//! The half fallback: a request in half types that no route serves runs as conversions around
//! the f32 route. Half inputs (A, B, a half bias, and a half C when beta != 0) are widened into
//! f32 scratch, the f32 kernel computes into f32 scratch, and the result is rounded into C.
//! Widening is exact and the one rounding happens where a native kernel's store would round,
//! so the fallback gives the bits a native half kernel of the same contract would.
//!
//! Each conversion is its own launch, recorded with its own kind (`InputUpcast`,
//! `OutputDowncast`) next to the GEMM's; all are counted before the first is enqueued.

use crate::context::Context;
use crate::error::GemmError;
use crate::launch::{describe, Geometry, LaunchArgs, RequestFacts, Target};
use crate::observer::{LaunchKind, Observer};
use crate::plan::{PlanSummary, Stored};
use crate::registry::Span;
use crate::scratch::layout;
use crate::table::{self, ArgSources, Dtype, KernelRef, RouteHit};
use crate::ConvertArgs;
use cudarc::driver::LaunchConfig;

/// A checked operand: its device address, and where that lies in the registry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub address: u64,
    pub span: Span,
    /// Byte offset of `address` into `span`.
    pub offset: u64,
}

impl Placed {
    fn target(this: Option<Placed>) -> Option<(Span, u64)> {
        this.map(|p| (p.span, p.offset))
    }
}

/// The operands of a validated request (`None`: no elements, or no bias).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operands {
    pub a: Option<Placed>,
    pub b: Option<Placed>,
    pub bias: Option<Placed>,
    pub c: Option<Placed>,
}

impl Operands {
    /// The GEMM argument struct's pointer fields and where they point.
    pub fn targets(&self) -> [Target; 4] {
        [
            ("a", Placed::target(self.a)),
            ("b", Placed::target(self.b)),
            ("bias", Placed::target(self.bias)),
            ("c", Placed::target(self.c)),
        ]
    }
}

/// Stored shapes of a request: (rows, cols, ld) of A and B as stored, C's ld, and beta.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FallbackShape {
    pub a: (u64, u64, u64),
    pub b: (u64, u64, u64),
    pub ldc: u64,
    pub beta: f32,
}

/// One conversion of the fallback: a `rows x cols` matrix between a request operand and a
/// scratch region.
struct Conversion {
    kind: LaunchKind,
    info: &'static table::ConversionInfo,
    rows: u64,
    cols: u64,
    /// The request's operand and its leading dimension.
    operand: Placed,
    ld: u64,
    /// Element offset of the scratch region.
    region: usize,
}

impl Context {
    fn conversion(
        &self,
        from: Dtype,
        to: Dtype,
    ) -> Result<&'static table::ConversionInfo, GemmError> {
        self.kernels
            .conversion_for(self.tier.id, from, to)
            .ok_or(GemmError::NoConversion {
                tier: self.tier.name,
                from,
                to,
            })
    }

    /// Runs (or hands to `observer`) the fallback launches of a validated request whose f32
    /// route is `hit`. Everything that can refuse (a missing conversion, the observer's
    /// capacity, scratch that may not grow, the GEMM's plan) does so before the first launch.
    pub(crate) fn half_fallback<O: Observer>(
        &self,
        observer: &mut O,
        hit: RouteHit,
        facts: RequestFacts,
        ops: &Operands,
        shape: FallbackShape,
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
            a_up.map_or(0, |_| elems(shape.a.0, shape.a.1)),
            b_up.map_or(0, |_| elems(shape.b.0, shape.b.1)),
            bias_up.map_or(0, |_| n as usize),
            if half_c { elems(m, n) } else { 0 },
        ]);
        let mut steps: Vec<Conversion> = Vec::with_capacity(4);
        let mut up = |operand: Option<Placed>, (rows, cols, ld): (u64, u64, u64), region, from| {
            if let Some(operand) = operand {
                let info = self.conversion(from, Dtype::F32)?;
                steps.push(Conversion {
                    kind: LaunchKind::InputUpcast,
                    info,
                    rows,
                    cols,
                    operand,
                    ld,
                    region,
                });
            }
            Ok::<(), GemmError>(())
        };
        up(a_up, shape.a, offsets[0], ab)?;
        up(b_up, shape.b, offsets[1], ab)?;
        up(bias_up, (1, n, n), offsets[2], c_type)?;
        if half_c && shape.beta != 0.0 {
            up(ops.c, (m, n, shape.ldc), offsets[3], c_type)?;
        }
        let downcast = match (half_c, ops.c) {
            (true, Some(c)) => Some(Conversion {
                kind: LaunchKind::OutputDowncast,
                info: self.conversion(Dtype::F32, c_type)?,
                rows: m,
                cols: n,
                operand: c,
                ld: shape.ldc,
                region: offsets[3],
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
        let stored = Stored {
            a: (
                shape.a.0,
                shape.a.1,
                if a_up.is_some() { shape.a.1 } else { shape.a.2 },
            ),
            b: (
                shape.b.0,
                shape.b.1,
                if b_up.is_some() { shape.b.1 } else { shape.b.2 },
            ),
            ldc: if half_c { n } else { shape.ldc },
            dtypes: (Dtype::F32, Dtype::F32),
        };
        let plan = self.plan_gemm(hit, (m, n, k), &scratch_ops, stored, shape.beta)?;
        let summary = plan.summary();
        self.function(KernelRef::Gemm(summary.kernel))?;
        for step in &steps {
            let dst = region(step.region);
            self.emit_conversion(observer, facts, step, Some(step.operand), dst)?;
        }
        self.emit_gemm(observer, plan, facts, &scratch_ops)?;
        if let Some(step) = &downcast {
            let src = region(step.region);
            self.emit_conversion(observer, facts, step, src, Some(step.operand))?;
        }
        drop(guard);
        Ok(summary)
    }

    /// One conversion launch from `src` to `dst` (one of them a scratch region, whose leading
    /// dimension is the step's column count).
    fn emit_conversion<O: Observer>(
        &self,
        observer: &mut O,
        facts: RequestFacts,
        step: &Conversion,
        src: Option<Placed>,
        dst: Option<Placed>,
    ) -> Result<(), GemmError> {
        let (Some(src), Some(dst)) = (src, dst) else {
            // Regions exist for every planned step; an empty matrix has no step.
            return Ok(());
        };
        let upcast = step.kind == LaunchKind::InputUpcast;
        let (ld_src, ld_dst) = if upcast {
            (step.ld, step.cols)
        } else {
            (step.cols, step.ld)
        };
        let args = ConvertArgs::bind(&ArgSources {
            src: src.address,
            dst: dst.address,
            rows: step.rows as i32,
            cols: step.cols as i32,
            ld_src: ld_src as i32,
            ld_dst: ld_dst as i32,
            ..ArgSources::default()
        });
        let cfg = LaunchConfig {
            grid_dim: step.info.grid_for(step.rows * step.cols),
            block_dim: (step.info.block_threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let kernel = KernelRef::Conversion(step.info.id);
        let geometry = Geometry::plain(cfg);
        self.emit(
            observer,
            kernel,
            geometry,
            LaunchArgs::Convert(args),
            |args| {
                describe(
                    self,
                    facts,
                    (step.kind, kernel, (step.info.from, step.info.to)),
                    &geometry,
                    args,
                    &[
                        ("src", Some((src.span, src.offset))),
                        ("dst", Some((dst.span, dst.offset))),
                    ],
                    &[],
                )
            },
        )
    }
}
