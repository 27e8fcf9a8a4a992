//! A strided batch (a `bmm`: every entry one shape, each operand's entries a fixed number of
//! elements apart) as one launch of a batched kernel (its kind's manifest says `batch`; grid z
//! walks the entries). The kernel implements the route's contract, so every entry gets the bits
//! its own [`Context::gemm`] would: only how many launches the batch takes changes. Where the
//! route has no batched kernel, or it would be much slower than the route's own kernel on
//! large entries, nothing is launched and the caller runs the batch entry by entry.
//!
//! A batch kernel that reads tensor maps (the wgmma kernel's) gets 3-D maps, the entry their
//! third coordinate, and is taken first where TMA takes every operand of the batch; where it
//! does not (an address, a leading dimension or a batch stride off 16 bytes, a negative
//! stride), the tier's batch kernel of the same contract that reads its operands as stored.

use crate::context::Context;
use crate::element::Element;
use crate::emit::RequestFacts;
use crate::error::GemmError;
use crate::launch_plan::{encode_maps, launch_grid, EncodedMaps, GemmPlan, MapEntries};
use crate::launcher::Geometry;
use crate::observer::NoObserver;
use crate::request::{checked_operands, dim, GemmRequest, Launch};
use crate::stream::Mode;
use crate::table::{ArgSources, Dtype, DtypeTriple, GridKind, KernelInfo, Operand};
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

/// The batched kernels that may run a batch on `routed`, in the order to try them: the route's
/// own kernel when it is a batch kernel; then, for entries small enough that one launch beats a
/// launch an entry, the tier's batch kernels (its `batch_kernels`) of the route's contract, op
/// and dtype, those reading tensor maps first (a tier lists at most one of each).
pub(crate) fn batched_kernels(
    set: &KernelSet,
    routed: &Routed,
    work: u64,
) -> Vec<&'static KernelInfo> {
    // A batch launches on the operands as stored: no kernel that reads a copy (validation
    // keeps those out of `batch_kernels` too).
    let usable = |k: &&'static KernelInfo| k.batch && k.prepass == crate::table::Prepass::None;
    let own: Vec<&'static KernelInfo> = Some(routed.kernel).filter(usable).into_iter().collect();
    if work > SMALL_ENTRY_WORK {
        return own;
    }
    let of = routed.kernel;
    let mut found: Vec<&'static KernelInfo> = set
        .kernels()
        .iter()
        .filter(|k| {
            usable(k)
                && k.tier == of.tier
                && (k.contract, k.op, k.dtype) == (of.contract, of.op, of.dtype)
                && !own.iter().any(|o| o.id == k.id)
        })
        .collect();
    found.sort_by_key(|k| k.tensor_maps.is_empty());
    own.into_iter().chain(found).collect()
}

/// The 3-D maps of a batch kernel that reads tensor maps, for `entries` entries from the
/// operands `operands` at `strides`; `Ok(None)` when TMA cannot take them (a negative stride,
/// an address, leading dimension or stride TMA refuses, or a map the driver would not encode):
/// the next batch kernel runs it (and reports any problem of the operands themselves).
fn batch_maps(
    ctx: &Context,
    kernel: &'static KernelInfo,
    operands: &crate::request::Operands,
    stored: crate::request::Stored,
    (m, n): (u64, u64),
    entries: usize,
    strides: Strides,
) -> Result<Option<EncodedMaps>, GemmError> {
    let unsigned = |s: i64| u64::try_from(s).ok();
    let (Some(a), Some(b), Some(c)) = (
        unsigned(strides.a),
        unsigned(strides.b),
        unsigned(strides.c),
    ) else {
        return Ok(None);
    };
    let batch = MapEntries {
        entries: entries as u64,
        a,
        b,
        c,
    };
    let mut maps = EncodedMaps::default();
    match encode_maps(
        ctx,
        kernel,
        operands,
        stored,
        (m, n),
        Some(batch),
        &mut maps,
    ) {
        Ok(()) => Ok(Some(maps)),
        // A box or swizzle TMA refuses is the kernel table's error, which no fallback hides.
        Err(e) if matches!(&e, GemmError::Tma { problem, .. } if !problem.is_operand()) => Err(e),
        Err(_) => Ok(None),
    }
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
        let candidates = batched_kernels(
            self.kernels(),
            &routed,
            m.saturating_mul(n).saturating_mul(k),
        );
        // The first candidate that takes the batch: one reading tensor maps only where TMA
        // takes every operand (checked on the first launch's entries: later launches start a
        // multiple of the strides further, which keeps their alignment).
        let first_z = count.min(MAX_Z);
        let mut chosen = None;
        for kernel in candidates {
            if kernel.tensor_maps.is_empty() {
                chosen = Some(kernel);
                break;
            }
            if batch_maps(self, kernel, &operands, stored, (m, n), first_z, strides)?.is_some() {
                chosen = Some(kernel);
                break;
            }
        }
        let Some(kernel) = chosen else {
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
        // A persistent kernel's x CTAs walk one entry's tiles: the device's co-resident CTAs
        // (under the stream's cap) shared among the launch's entries, at least 1 an entry and
        // at most the entry's tiles (launch_grid's x for one entry).
        let device_ctas = match kernel.grid {
            GridKind::Persistent => gemm_core::persistent_limit(
                self.device.coresident(self.stream(), kernel)?,
                self.max_persistent_ctas(),
                kernel.cluster.0 * kernel.cluster.2,
            ),
            GridKind::Tiles => 0,
        };
        let mut launched = (0, y, 0);
        let mut start = 0usize;
        while start < count {
            let z = (count - start).min(MAX_Z);
            // Entry `start`'s addresses (every entry was checked to lie in its span).
            let moved = |base: u64, stride: i64, elem: i64| {
                (base as i64).wrapping_add((start as i64).wrapping_mul(stride).wrapping_mul(elem))
                    as u64
            };
            let bias = address(operands.bias);
            // This launch's operands (entry `start`'s), for its maps.
            let shifted = |p: Option<crate::request::Placed>, stride: i64, elem: i64| {
                p.map(|p| {
                    let address = moved(p.address, stride, elem);
                    crate::request::Placed {
                        address,
                        span: p.span,
                        offset: p.offset.wrapping_add(address.wrapping_sub(p.address)),
                    }
                })
            };
            let launch_operands = crate::request::Operands {
                a: shifted(operands.a, strides.a, ea),
                b: shifted(operands.b, strides.b, ea),
                bias: shifted(operands.bias, strides.bias, ec),
                c: shifted(operands.c, strides.c, ec),
            };
            let maps = if kernel.tensor_maps.is_empty() {
                EncodedMaps::default()
            } else {
                batch_maps(self, kernel, &launch_operands, stored, (m, n), z, strides)?.ok_or(
                    GemmError::Tma {
                        operand: Operand::A,
                        problem: gemm_core::TmaProblem::EntryStride {
                            stride: strides.a.unsigned_abs(),
                            entries: z as u64,
                        },
                    },
                )?
            };
            let map_of = |o: Operand| maps.map(o);
            let x = match kernel.grid {
                GridKind::Persistent => (device_ctas / z as u32).clamp(1, x.max(1)),
                GridKind::Tiles => x,
            };
            let sources = ArgSources {
                a_map: map_of(Operand::A),
                b_map: map_of(Operand::B),
                c_map: map_of(Operand::C),
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
                maps: maps.keys(),
            };
            self.emit_gemm(&mut NoObserver, &plan, facts, &operands)?;
            if start == 0 {
                launched.0 = x; // the first launch's grid, as `Launch::grid` says
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{DtypeTriple, Op, Policy};
    use gemm_codegen::pipeline::{template_files, validate_and_catalog};
    use gemm_codegen::Templates;
    use std::path::Path;

    /// The tensor-core fixture (tests/fixtures/tc) lists a wgmma batch kernel (3-D maps) and a
    /// plain-load one under its contract: a batch tries the TMA one first, the other next, and
    /// entries over SMALL_ENTRY_WORK take neither (the route's wide kernel is no batch kernel).
    #[test]
    fn a_batch_tries_the_tma_batch_kernel_first_then_the_one_reading_as_stored() {
        let templates = template_files(&Templates::Shipped).unwrap();
        let (catalog, _) = validate_and_catalog(
            Path::new("../tests/fixtures/tc/specs"),
            &[],
            &templates,
            false,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let set = gemm_codegen::memory_set::kernel_set(&catalog);
        let tier = set.tiers()[0].id;
        let dtype: DtypeTriple = "bf16.bf16.f32".parse().unwrap();
        let routed = set
            .route(tier, Policy::TensorCore, Op::Nn, dtype, 1000, 4096, 4096)
            .unwrap();
        assert!(!routed.kernel.batch, "{}", routed.kernel.name);
        let names = |work| {
            batched_kernels(set, &routed, work)
                .iter()
                .map(|k| (k.name, !k.tensor_maps.is_empty()))
                .collect::<Vec<_>>()
        };
        let small = names(512 * 512 * 128);
        assert_eq!(small.len(), 2, "{small:?}");
        assert!(small[0].1 && !small[1].1, "TMA first: {small:?}");
        assert!(small[0].0.contains("_tcwide_") && small[0].0.contains("_batch_"));
        assert!(small[1].0.contains("_tcmma_"));
        assert!(names(SMALL_ENTRY_WORK + 1).is_empty());
    }
}
