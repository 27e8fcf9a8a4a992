//! One GEMM launch planned from a route hit: which kernel runs (the route's, or its unaligned
//! kernel when TMA cannot take an operand or k is 0, or when a cp.async kernel's operands are
//! not 16-byte aligned), its tensor maps, its grid (one block a
//! tile, or persistent), its cluster, and its argument struct, filled by the generated
//! `bind(&ArgSources)` of the kernel's ABI. Everything that can fail does so here, before
//! anything is enqueued.

use crate::context::Context;
use crate::error::{GemmError, Operand};
use crate::fallback::{Operands, Placed};
use crate::launch::{ArgBlob, Geometry, LaunchArgs};
use crate::registry::Span;
use crate::table::{ArgSources, Dtype, KernelId, KernelInfo, KernelRef, RouteHit};
use crate::tensor_map::{TensorMapBytes, TensorMapKey, TmaProblem};
use crate::GemmArgs;
use cudarc::driver::LaunchConfig;

/// (field, byte offset, operand) of every tensor-map field of an ABI.
type MapFields = &'static [(&'static str, usize, Operand)];

/// A request's operands as stored: (rows, cols, ld) of A and B, C's ld; element types of A
/// and B, and of C (and the bias).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stored {
    pub a: (u64, u64, u64),
    pub b: (u64, u64, u64),
    pub ldc: u64,
    pub dtypes: (Dtype, Dtype),
}

/// What a call reports about its GEMM launch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanSummary {
    pub kernel: KernelId,
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
    pub cluster: (u32, u32, u32),
    pub unaligned: bool,
}

/// A GEMM launch, ready to enqueue.
pub(crate) struct GemmPlan {
    pub kernel: &'static KernelInfo,
    pub unaligned: bool,
    pub geometry: Geometry,
    pub args: LaunchArgs,
    /// Each tensor-map field of the struct (byte offset) with the key of the map it holds
    /// and the span that map points into (`None`: left empty).
    pub maps: Vec<(usize, Option<(TensorMapKey, Span)>)>,
}

impl GemmPlan {
    pub fn summary(&self) -> PlanSummary {
        PlanSummary {
            kernel: self.kernel.id,
            grid: self.geometry.cfg.grid_dim,
            block: self.geometry.cfg.block_dim,
            shared_bytes: self.geometry.cfg.shared_mem_bytes,
            cluster: self.geometry.cluster,
            unaligned: self.unaligned,
        }
    }
}

/// Whether A's and B's addresses and leading dimensions in bytes are multiples of `align`
/// (always, for `align` 0 or 1; an absent operand, at k = 0, has nothing to copy).
fn operands_aligned(align: u32, ops: &Operands, stored: Stored) -> bool {
    let align = u64::from(align.max(1));
    let elem = stored.dtypes.0.size_bytes();
    [(ops.a, stored.a.2), (ops.b, stored.b.2)]
        .iter()
        .all(|(placed, ld)| {
            placed.is_none_or(|p| {
                p.address.is_multiple_of(align) && (ld * elem).is_multiple_of(align)
            })
        })
}

/// `flags` bit: `c_map` describes C, so a kernel with a TMA-store epilogue may store through
/// it (the template's `kGemmFlagCTensorMap`).
const FLAG_C_TENSOR_MAP: u32 = 2;

/// One encoded map: the operand it describes, its key, its span, its bytes.
type Encoded = (Operand, TensorMapKey, Span, TensorMapBytes);

/// The argument struct of ABI `abi` bound from `s`, with the ABI's tensor-map fields. The
/// scalar GEMM ABI stays typed (the observer-free launch path passes it as a `DeviceRepr`);
/// every other ABI goes through the generated `bind_abi` as bytes.
fn bind(abi: &'static str, s: &ArgSources) -> Result<(LaunchArgs, MapFields), GemmError> {
    if abi == "GemmArgs" {
        return Ok((
            LaunchArgs::Gemm(GemmArgs::bind(s)),
            GemmArgs::TENSOR_MAP_FIELDS,
        ));
    }
    let bound = crate::generated::bind_abi(abi, s).ok_or(GemmError::UnknownAbi { abi })?;
    Ok((
        LaunchArgs::Blob(ArgBlob::new(abi, bound.pointer_fields, &bound.bytes)),
        bound.tensor_map_fields,
    ))
}

impl Context {
    /// Plans the GEMM launch of a validated request whose route is `hit`.
    pub(crate) fn plan_gemm(
        &self,
        hit: RouteHit,
        (m, n, k): (u64, u64, u64),
        ops: &Operands,
        stored: Stored,
        beta: f32,
    ) -> Result<GemmPlan, GemmError> {
        let primary = self
            .kernels
            .kernel(hit.kernel)
            .ok_or(GemmError::UnknownKernel(KernelRef::Gemm(hit.kernel)))?;
        // A kernel that copies A and B in aligned chunks (cp.async) hands other operands to
        // the route's unaligned kernel, of the same contract (without one it runs itself, its
        // element-by-element copy: same bits). Decided by addresses and leading dimensions,
        // never by m.
        let unaligned_kernel = match hit.unaligned {
            Some(id) if !operands_aligned(primary.operand_align, ops, stored) => Some(
                self.kernels
                    .kernel(id)
                    .ok_or(GemmError::UnknownKernel(KernelRef::Gemm(id)))?,
            ),
            _ => None,
        };
        let maps = match unaligned_kernel {
            Some(kernel) => self
                .encode_maps(kernel, ops, stored, (m, n))
                .map(|maps| (kernel, maps, true)),
            None => self
                .encode_maps(primary, ops, stored, (m, n))
                .map(|maps| (primary, maps, false)),
        };
        let (kernel, maps, unaligned) = match maps {
            Ok(planned) => planned,
            // TMA cannot take an operand (its address or leading dimension; k = 0 leaves A
            // and B without elements): the route's unaligned kernel, of the same contract.
            Err(GemmError::Tma { operand, problem }) if problem.is_operand() => {
                let id = hit.unaligned.ok_or(GemmError::Tma { operand, problem })?;
                let kernel = self
                    .kernels
                    .kernel(id)
                    .ok_or(GemmError::UnknownKernel(KernelRef::Gemm(id)))?;
                (kernel, self.encode_maps(kernel, ops, stored, (m, n))?, true)
            }
            Err(e) => return Err(e),
        };
        let address = |p: Option<Placed>| p.map_or(0, |p| p.address);
        let mut sources = ArgSources {
            a: address(ops.a),
            b: address(ops.b),
            bias: address(ops.bias),
            c: address(ops.c),
            m: m as i32,
            n: n as i32,
            k: k as i32,
            lda: stored.a.2 as i32,
            ldb: stored.b.2 as i32,
            ldc: stored.ldc as i32,
            beta,
            flags: u32::from(ops.bias.is_some())
                | if maps.iter().any(|(o, ..)| *o == Operand::C) {
                    FLAG_C_TENSOR_MAP
                } else {
                    0
                },
            ..ArgSources::default()
        };
        for (operand, _, _, map) in &maps {
            match operand {
                Operand::A => sources.a_map = *map,
                Operand::B => sources.b_map = *map,
                Operand::C | Operand::Bias => sources.c_map = *map,
            }
        }
        let (args, map_fields) = bind(kernel.abi, &sources)?;
        let maps = map_fields
            .iter()
            .map(|&(_, offset, operand)| {
                let encoded = maps.iter().find(|(o, ..)| *o == operand);
                (offset, encoded.map(|(_, key, span, _)| (*key, *span)))
            })
            .collect();
        let geometry = Geometry {
            cfg: LaunchConfig {
                grid_dim: self.launch_grid(kernel, m, n)?,
                block_dim: (kernel.block_threads, 1, 1),
                shared_mem_bytes: kernel.shared_bytes,
            },
            cluster: kernel.cluster,
        };
        Ok(GemmPlan {
            kernel,
            unaligned,
            geometry,
            args,
            maps,
        })
    }

    /// The tensor maps `kernel` reads, each checked against TMA's rules and encoded (or taken
    /// from the cache). An operand without elements (k = 0) has no map: a `Dimension` problem.
    fn encode_maps(
        &self,
        kernel: &'static KernelInfo,
        ops: &Operands,
        stored: Stored,
        (m, n): (u64, u64),
    ) -> Result<Vec<Encoded>, GemmError> {
        let mut maps = Vec::with_capacity(kernel.tensor_maps.len());
        for plan in kernel.tensor_maps {
            let (placed, (rows, cols, ld), dtype) = match plan.operand {
                Operand::A => (ops.a, stored.a, stored.dtypes.0),
                Operand::B => (ops.b, stored.b, stored.dtypes.0),
                Operand::C => (ops.c, (m, n, stored.ldc), stored.dtypes.1),
                Operand::Bias => (ops.bias, (1, n, n), stored.dtypes.1),
            };
            let Some(placed) = placed else {
                return Err(GemmError::Tma {
                    operand: plan.operand,
                    problem: TmaProblem::Dimension { rows, cols },
                });
            };
            let encoded = self.tensor_map_for(
                plan.operand,
                (placed.span, placed.offset),
                (rows, cols, ld, dtype),
                (plan.box_inner, plan.box_outer, plan.swizzle_bytes),
            );
            let (key, map) = match encoded {
                // C's map is optional: without it the kernel stores C directly (same bits).
                // Whether TMA takes C depends on its address and ldc, never on m.
                Err(GemmError::Tma { problem, .. })
                    if plan.operand == Operand::C && problem.is_operand() =>
                {
                    continue
                }
                other => other?,
            };
            maps.push((plan.operand, key, placed.span, map));
        }
        Ok(maps)
    }
}
