//! One GEMM launch made ready from a route: the kernel the planner picks (the route's, or its
//! unaligned kernel when the operands do not suit it; [`gemm_core::Routed::pick`]), its tensor
//! maps encoded (C's only where C can take TMA), its grid (one block a tile, or persistent
//! under the device's occupancy and the stream's cap), and its argument struct, filled by the
//! set's own generated bind. Everything that can fail does so here, before anything is
//! enqueued.

use crate::context::Context;
use crate::error::GemmError;
use crate::launcher::Geometry;
use crate::registry::Span;
use crate::request::{Operands, Placed, Stored};
use crate::table::{AbiInfo, ArgBytes, ArgSources, GridKind, KernelId, KernelInfo, Operand};
use crate::tensor_map_cache::TensorMapBytes;
use gemm_core::{persistent_limit, GridProblem, PickError, Routed, TensorMapKey};

/// What a call reports about its GEMM launch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanSummary {
    pub kernel: KernelId,
    pub geometry: Geometry,
    pub unaligned: bool,
}

/// A GEMM launch, ready to enqueue.
pub(crate) struct GemmPlan {
    pub kernel: &'static KernelInfo,
    pub unaligned: bool,
    pub geometry: Geometry,
    pub args: ArgBytes,
    /// The kernel's argument struct (the observer reads its pointer and map fields).
    pub abi: &'static AbiInfo,
    /// The key and span of each map the struct holds (the observer's record hashes the keys).
    pub maps: MapKeys,
}

impl GemmPlan {
    pub fn summary(&self) -> PlanSummary {
        PlanSummary {
            kernel: self.kernel.id,
            geometry: self.geometry,
            unaligned: self.unaligned,
        }
    }
}

/// Slot of an operand in [`EncodedMaps`] and [`MapKeys`].
fn slot(operand: Operand) -> usize {
    match operand {
        Operand::A => 0,
        Operand::B => 1,
        Operand::C => 2,
        Operand::Bias => 3,
    }
}

/// One encoded map: its key, its span, its bytes.
#[derive(Clone, Copy)]
pub(crate) struct EncodedMap {
    pub key: TensorMapKey,
    pub span: Span,
    pub map: TensorMapBytes,
}

/// The maps a launch's kernel reads, by operand, held inline: a call plans its launch without
/// a heap allocation (a map is 128-byte aligned, and a `Vec` of them an aligned allocation).
#[derive(Clone, Copy, Default)]
pub(crate) struct EncodedMaps([Option<EncodedMap>; 4]);

impl EncodedMaps {
    /// The map of `operand`'s bytes, if the kernel reads one.
    pub fn map(&self, operand: Operand) -> Option<TensorMapBytes> {
        self.0[slot(operand)].as_ref().map(|e| e.map)
    }

    /// Each map's key and span, by operand.
    pub fn keys(&self) -> MapKeys {
        MapKeys(self.0.map(|e| e.map(|e| (e.key, e.span))))
    }
}

/// The key and span of each map a launch's struct holds, by operand.
#[derive(Clone, Copy, Default)]
pub(crate) struct MapKeys([Option<(TensorMapKey, Span)>; 4]);

/// Each tensor-map field of `abi`'s struct (byte offset) with the key and span of the map of
/// its operand (`None`: left empty): what the observer's record hashes.
pub(crate) fn map_fields(
    abi: &AbiInfo,
    maps: &MapKeys,
) -> Vec<(usize, Option<(TensorMapKey, Span)>)> {
    abi.tensor_map_fields()
        .map(|(_, offset, operand)| (offset, maps.0[slot(operand)]))
        .collect()
}

/// A strided batch as a batch kernel's 3-D maps see it: how many entries one launch takes and
/// each operand's batch stride in elements (0: every entry reads the same one).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MapEntries {
    pub entries: u64,
    pub a: u64,
    pub b: u64,
    pub c: u64,
}

impl MapEntries {
    fn of(&self, operand: Operand) -> Option<gemm_core::MapBatch> {
        let stride = match operand {
            Operand::A => self.a,
            Operand::B => self.b,
            Operand::C => self.c,
            Operand::Bias => return None,
        };
        Some(gemm_core::MapBatch {
            entries: if stride == 0 { 1 } else { self.entries },
            stride,
        })
    }
}

/// CTAs of `info` that run at once on `ctx`, the wave model's slots
/// ([`gemm_core::wave_time`]): a persistent kernel's grid cap (co-resident, capped by the
/// stream's cap), else the co-resident count. `None` where the device cannot say.
pub(crate) fn concurrent_ctas(ctx: &Context, info: &'static KernelInfo) -> Option<u32> {
    let coresident = ctx.device.coresident(ctx.stream(), info).ok()?;
    Some(match info.grid {
        GridKind::Persistent => persistent_limit(
            coresident,
            ctx.max_persistent_ctas(),
            info.cluster.0 * info.cluster.2,
        ),
        GridKind::Tiles => coresident,
    })
}

/// The launch grid of `info` for an `m x n` output on `ctx`: one block a tile, or, for a
/// persistent kernel, the co-resident CTAs capped by the stream's cap ([`persistent_limit`]);
/// whole clusters.
pub(crate) fn launch_grid(
    ctx: &Context,
    info: &'static KernelInfo,
    m: u64,
    n: u64,
) -> Result<(u32, u32, u32), GemmError> {
    let max_ctas = match info.grid {
        GridKind::Tiles => u32::MAX,
        GridKind::Persistent => persistent_limit(
            ctx.device.coresident(ctx.stream(), info)?,
            ctx.max_persistent_ctas(),
            info.cluster.0 * info.cluster.2,
        ),
    };
    info.launch_grid(m, n, max_ctas).map_err(|p| match p {
        GridProblem::TooLarge | GridProblem::Unschedulable => GemmError::GridTooLarge {
            kernel: info.name,
            m,
            n,
        },
        GridProblem::ClusterShape { grid, cluster } => GemmError::ClusterShape {
            kernel: info.name,
            grid,
            cluster,
        },
    })
}

/// Plans the GEMM launch of a validated request whose route is `routed`.
pub(crate) fn plan_gemm(
    ctx: &Context,
    routed: &Routed,
    (m, n, k): (u64, u64, u64),
    ops: &Operands,
    stored: Stored,
    beta: f32,
) -> Result<GemmPlan, GemmError> {
    let picked = routed.pick(&stored.ab(ops)).map_err(|e| match e {
        PickError::Tma(operand, problem) => GemmError::Tma { operand, problem },
        PickError::NotCopied(operand) => GemmError::CopyNotMade {
            kernel: routed.kernel.name,
            operand,
        },
    })?;
    let kernel = picked.kernel;
    // A batch kernel reads 3-D maps whatever it runs: one GEMM is its batch of one entry
    // (the argument struct's batch strides are 0, so every coordinate z is 0).
    let one_entry = (kernel.batch && !kernel.tensor_maps.is_empty()).then_some(MapEntries {
        entries: 1,
        a: 0,
        b: 0,
        c: 0,
    });
    let mut maps = EncodedMaps::default();
    encode_maps(ctx, kernel, ops, stored, (m, n), one_entry, &mut maps)?;
    let address = |p: Option<Placed>| p.map_or(0, |p| p.address);
    let map_of = |o: Operand| maps.map(o);
    let sources = ArgSources {
        a: address(ops.a),
        b: address(ops.b),
        bias: address(ops.bias),
        c: address(ops.c),
        a_map: map_of(Operand::A),
        b_map: map_of(Operand::B),
        c_map: map_of(Operand::C),
        m: m as i32,
        n: n as i32,
        k: k as i32,
        lda: stored.a.ld as i32,
        ldb: stored.b.ld as i32,
        ldc: stored.ldc as i32,
        beta,
        ..ArgSources::default()
    };
    let abi = ctx
        .kernels()
        .abi(kernel.abi)
        .ok_or(GemmError::UnknownAbi { abi: kernel.abi })?;
    let args = (abi.bind)(&sources);
    let geometry = Geometry {
        grid: launch_grid(ctx, kernel, m, n)?,
        block: (kernel.block_threads, 1, 1),
        shared_bytes: kernel.shared_bytes,
        cluster: kernel.cluster,
    };
    Ok(GemmPlan {
        kernel,
        unaligned: picked.unaligned.is_some(),
        geometry,
        args,
        abi,
        maps: maps.keys(),
    })
}

/// The tensor maps `kernel` reads, encoded (or taken from the device's cache). The planner
/// picked a kernel whose maps of A and B TMA takes; C's map is optional (without it the kernel
/// stores C directly, the same bits), encoded only where C can take TMA, decided by C's
/// address and ldc, never by m. `batch`: a batch kernel's launch, its maps 3-D. Written into
/// `maps` (the caller's, so the maps are not moved).
pub(crate) fn encode_maps(
    ctx: &Context,
    kernel: &'static KernelInfo,
    ops: &Operands,
    stored: Stored,
    (m, n): (u64, u64),
    batch: Option<MapEntries>,
    maps: &mut EncodedMaps,
) -> Result<(), GemmError> {
    for plan in kernel.tensor_maps {
        let (placed, (rows, cols, ld), dtype) = match plan.operand {
            Operand::A => (
                ops.a,
                (stored.a.rows, stored.a.cols, stored.a.ld),
                stored.dtypes.0,
            ),
            Operand::B => (
                ops.b,
                (stored.b.rows, stored.b.cols, stored.b.ld),
                stored.dtypes.0,
            ),
            Operand::C => (ops.c, (m, n, stored.ldc), stored.dtypes.1),
            Operand::Bias => (ops.bias, (1, n, n), stored.dtypes.1),
        };
        let Some(placed) = placed else {
            if plan.optional {
                continue;
            }
            return Err(GemmError::Tma {
                operand: plan.operand,
                problem: gemm_core::TmaProblem::Dimension { rows, cols },
            });
        };
        let encoded = ctx.device.maps.map_for(
            ctx.registry(),
            plan.operand,
            (placed.span, placed.offset),
            (rows, cols, ld, dtype),
            (plan.box_inner, plan.box_outer, plan.swizzle_bytes),
            batch.and_then(|b| b.of(plan.operand)),
        );
        let (key, map) = match encoded {
            Err(GemmError::Tma { problem, .. }) if plan.optional && problem.is_operand() => {
                continue
            }
            other => other?,
        };
        maps.0[slot(plan.operand)] = Some(EncodedMap {
            key,
            span: placed.span,
            map,
        });
    }
    Ok(())
}
