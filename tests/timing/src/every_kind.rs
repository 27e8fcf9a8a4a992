//! What "every kernel kind of sm90a" means for `gpu_perturbed`, read from the tier's routes
//! rather than listed by hand: a retune that moves a region to another tile keeps the list
//! true, and a route to a kind no case reaches fails here on the CPU (`every_kind_cover`)
//! before it fails on a GPU.
//!
//! A kernel's kind ([`kind_of`]) is its family (one template, one contract, one op and dtype
//! set) and the code paths a tile switches on inside it: clusters along M or N (B multicast,
//! the TMA-store epilogue), a K split over a cluster (partials folded through distributed
//! shared memory), ping-pong consumers, and chunk groups (warp groups running a CTA's chunks
//! side by side, folded through shared memory), and 4-byte copies (an exact decode tile reading
//! f32 operands off 16 bytes, a route's unaligned kernel). Tiles that differ only in size are
//! one kind.

use crate::case::dtypes::{BF16, BF16_F32, F16, F16_F32, F32};
use crate::case::Case;
use gemm_runtime::{
    Dtype, DtypeTriple, KernelInfo, KernelSet, Op, Policy, StoredAb, StoredOperand, TierId,
};
use std::collections::{BTreeMap, BTreeSet};

const TC: Policy = Policy::TensorCore;
const EX: Policy = Policy::Exact;

/// The kind of a kernel: `tcwide`, `tcwide (cluster)`, `tcdecsplit (K split)`,
/// `tcwide (ping-pong)`, `tcdec32split (chunk groups)`, ...
pub fn kind_of(k: &KernelInfo) -> String {
    let mut s = k.family.to_string();
    if k.cluster.0 * k.cluster.1 > 1 {
        s += " (cluster)";
    }
    if k.cluster.2 > 1 {
        s += " (K split)";
    }
    if k.tile.param("pingpong").unwrap_or(0) != 0 {
        s += " (ping-pong)";
    }
    if k.tile.param("chunk_groups").unwrap_or(1) > 1 {
        s += " (chunk groups)";
    }
    if k.tile.param("copy_bytes") == Some(4) && k.vector_bytes == 4 {
        s += " (4-byte copies)";
    }
    // (fma_warp_gemm's thread_m; the exact decode kinds use the name for their own rows.)
    if k.template == "fma_warp_gemm" && k.tile.param("thread_m").unwrap_or(8) > 8 {
        s += " (16 x 8 a thread)";
    }
    s
}

/// Every kind a route of `tier` launches (its `kernel`, not its unaligned kernel: operands off
/// TMA's alignment are repacked for the routed kernel, so only k = 0 reaches those, and the
/// cases name them by hand), with one route of each (`sm90a.tuned.toml:120`) to say where.
pub fn routed_kinds(set: &KernelSet, tier: TierId) -> BTreeMap<String, &'static str> {
    let mut kinds = BTreeMap::new();
    for r in set.routes().iter().filter(|r| r.tier == tier) {
        if let Some(k) = set.kernel(r.kernel) {
            kinds.entry(kind_of(k)).or_insert(r.location);
            // An unaligned kernel with a narrower vector path runs operands as stored
            // (`Routed::narrower_unaligned`), a code path of its own.
            if let Some(u) = r.unaligned.and_then(|id| set.kernel(id)) {
                if k.vector_bytes > 0 && u.vector_bytes > 0 && u.vector_bytes < k.vector_bytes {
                    kinds.entry(kind_of(u)).or_insert(r.location);
                }
            }
        }
    }
    kinds
}

/// The kind of the kernel `case`'s route names on `tier` (the same planner the runtime routes
/// with), or `None` where no kernel runs (m or n zero) or none serves it.
pub fn routed_kind(set: &KernelSet, tier: TierId, case: &Case) -> Option<String> {
    if case.m == 0 || case.n == 0 {
        return None;
    }
    let dtype = DtypeTriple::new(case.ab, case.c, Dtype::F32);
    let (m, n, k) = (case.m as u64, case.n as u64, case.k as u64);
    let routed = set.route(tier, case.policy, case.op, dtype, m, n, k).ok()?;
    // The operands as the case stores them (A `a_offset` elements into a fresh allocation):
    // where the route's unaligned kernel reads them uncopied, it runs.
    let [(ar, ac), (br, bc), _] = case.stored();
    let elem = case.ab.size_bytes();
    let operand = |address: u64, rows: usize, cols: usize| StoredOperand {
        address,
        rows: rows as u64,
        cols: cols as u64,
        ld: (cols + case.pad) as u64,
    };
    let ab = StoredAb {
        a: Some(operand((1 << 20) | (case.a_offset as u64 * elem), ar, ac)),
        b: Some(operand(1 << 30, br, bc)),
        dtype: case.ab,
        a_transposed: false,
    };
    match (routed.vector_unaligned(&ab), routed.unaligned) {
        (Some(_), Some(u)) => Some(kind_of(u)),
        _ => Some(kind_of(routed.kernel)),
    }
}

/// The cases `gpu_perturbed` runs to reach every kind of sm90a, at shapes that fill the GPU
/// and at ragged ones, with bias, beta and the odd layouts among them. The comments say which
/// kernels the tuned routes sent each to when it was written; [`routed_kinds`] is what is
/// required of them.
pub fn sm90a_cases() -> Vec<Case> {
    vec![
        // TMA decode: the reported step's two GEMMs (the first now routed to pp256 by the
        // tuned routes), the wide-n decode and the deep one.
        Case::new(TC, Op::Nn, BF16, (5, 18944, 3584)),
        Case::new(TC, Op::Nn, BF16, (5, 9000, 2048)),
        Case::new(TC, Op::Nn, BF16, (5, 3584, 18944)),
        Case::new(TC, Op::Nt, F16, (16, 264, 200)).beta(0.5),
        Case::new(TC, Op::Tn, BF16_F32, (9, 1000, 136)).bias(),
        // Persistent wgmma: mid64, mid, mid2, and wide in clusters of 2 (TMA-store epilogue).
        Case::new(TC, Op::Nn, BF16_F32, (64, 4096, 1024)),
        Case::new(TC, Op::Nt, BF16, (100, 4096, 512)).bias(),
        Case::new(TC, Op::Nn, BF16, (200, 8192, 1024)),
        Case::new(TC, Op::Nn, BF16, (1000, 4096, 2048)),
        // The tier sends the wide tile (clusters of 2 here) n >= 8192 above m = 1024.
        Case::new(TC, Op::Nn, BF16, (1500, 8192, 512)),
        Case::new(TC, Op::Tn, BF16_F32, (520, 1000, 264)).beta(1.0),
        Case::new(TC, Op::Nt, F16_F32, (777, 2048, 520))
            .bias()
            .beta(-0.5),
        // Ping-pong (consumers on alternate tiles) where the tuned routes name it: mid m over a
        // wide n, large m over GPT-2's short reductions (nt), the odd vocabulary (B repacked).
        Case::new(TC, Op::Nn, BF16, (40, 18944, 3584)),
        Case::new(TC, Op::Nt, BF16, (1100, 2304, 768)).bias(),
        Case::new(TC, Op::Nn, BF16, (1000, 50257, 768)),
        // The N-major B tile of NT (tcwident) at m 513-1024 of Gemma-2 2B's QKV.
        Case::new(TC, Op::Nt, BF16, (600, 2304, 2048)).bias(),
        // The unaligned kernel (plain loads).
        Case::new(TC, Op::Nn, F16, (33, 65, 47)).pad(3),
        Case::new(TC, Op::Nn, BF16_F32, (300, 1024, 512)).a_offset(1),
        // Those two are now repacked for the TMA kernels; k = 0 still takes the plain loads.
        Case::new(TC, Op::Nt, BF16_F32, (7, 64, 0)).bias(),
        // The chunked contract (tc-k16-c512) off the tuned shapes, so the tier's region routes
        // pick: the decode splits, the wgmma splits, the chunked mid64, mid, mid2 and mid2n192
        // (128 x 192, n above 2048 at m 513-1024).
        Case::new(TC, Op::Nn, BF16, (5, 1000, 8200)),
        Case::new(TC, Op::Nt, BF16_F32, (9, 2000, 9000)).bias(),
        Case::new(TC, Op::Nn, BF16_F32, (64, 1000, 8200)).beta(0.5),
        Case::new(TC, Op::Nn, BF16, (40, 500, 3000)),
        Case::new(TC, Op::Tn, BF16_F32, (200, 1000, 8200)).beta(1.0),
        Case::new(TC, Op::Nn, BF16, (700, 1000, 8200)).bias(),
        Case::new(TC, Op::Nn, BF16, (1500, 1000, 8200)),
        Case::new(TC, Op::Nt, BF16, (700, 2200, 7000)).bias(),
        // TF32: the mma.sync decode, the 64 x 64, 128 x 64 and 256 x 128 wgmma tiles (C^T =
        // B^T A^T); TN through a transposed copy of A; the unaligned kernel.
        Case::new(TC, Op::Nn, F32, (16, 1024, 512)),
        Case::new(TC, Op::Nt, F32, (200, 512, 256)).bias(),
        Case::new(TC, Op::Nn, F32, (256, 4096, 1024)).beta(0.5),
        Case::new(TC, Op::Nn, F32, (1500, 4096, 2048)),
        Case::new(TC, Op::Tn, F32, (600, 512, 320)).beta(1.0),
        Case::new(TC, Op::Nn, F32, (33, 65, 47)).pad(3),
        // The TF32 TMA kernels take that one repacked; k = 0 keeps the plain loads.
        Case::new(TC, Op::Nt, F32, (7, 64, 0)).bias(),
        // TF32 chunked (tc-tf32-k8-c512): the mma.sync decode with its chunks folded in
        // registers (no split) and split over a cluster, 64 x 64
        // in a split of 8 (a last round some ranks sit out), 128 x 64 with a second
        // accumulator set.
        Case::new(TC, Op::Nn, F32, (20, 1000, 3000)).beta(0.5),
        Case::new(TC, Op::Nn, F32, (5, 1000, 8200)),
        Case::new(TC, Op::Nt, F32, (40, 700, 8200)).bias(),
        Case::new(TC, Op::Nn, F32, (700, 1000, 8200)),
        // Exact: the cp.async-staged decode, the transposed decode, the warp-tiled kernels (8 x 8
        // a thread, and 16 x 8 on a grid of 165 tiles with a short last k-tile), NT's mid tile,
        // and the K split over a cluster of 8 (fmaws).
        Case::new(EX, Op::Nn, BF16, (4, 18944, 3584)),
        Case::new(EX, Op::Nn, F32, (12, 4096, 2048)),
        Case::new(EX, Op::Nt, BF16_F32, (8, 1024, 1024)),
        Case::new(EX, Op::Nn, F32, (100, 1024, 1024)),
        Case::new(EX, Op::Tn, BF16_F32, (512, 512, 768)).bias(),
        Case::new(EX, Op::Nt, F32, (100, 1024, 1024)).bias(),
        Case::new(EX, Op::Nn, F32, (128, 1024, 4096)),
        Case::new(EX, Op::Nn, F32, (1030, 4100, 603)).bias(),
        // The decode routes' unaligned kernel, copying 4 bytes a lane: an odd vocabulary's B
        // (ld 5001), and A one element off 16 bytes.
        Case::new(EX, Op::Nn, F32, (6, 5001, 1000)).bias(),
        Case::new(EX, Op::Nn, F32, (13, 264, 1000)).a_offset(1),
    ]
}

/// The kinds a route of `tier` launches that none of `reached` is, each with a route naming it.
pub fn unreached(
    set: &KernelSet,
    tier: TierId,
    reached: &BTreeSet<String>,
) -> Vec<(String, &'static str)> {
    routed_kinds(set, tier)
        .into_iter()
        .filter(|(kind, _)| !reached.contains(kind))
        .collect()
}
