//! The repack's plans over the shipped set's kernels (no device needed).
//!
//! A kernel whose family copies A transposed first (`prepass = "transpose-a"`): A is always
//! copied, `[k, m]` into `[m, k]` with a 16-byte leading dimension, by the tier's transposing
//! conversion; a misaligned B is repacked beside it; the scratch bound holds; and without the
//! copy the route's unaligned kernel runs (or, with none, the call is refused), never the kernel
//! on A as stored.
//!
//! A plain-load kernel with a vector path (`vector_bytes`): exactly the operands whose address
//! or row pitch is off it are copied, and the kernel itself runs either way; unless its route's
//! unaligned kernel has a vector path that takes both operands as they are: then nothing is
//! copied and that kernel runs.

use super::*;
use crate::table::{ConversionKind, Op, Operand, Prepass, RouteHit};
use gemm_core::{
    aligned_ld, NoRepack, OperandPath, PickError, Routed, StoredAb, StoredOperand, UnalignedWhy,
    REPACK_ALIGN_BYTES,
};

/// The shipped kernels that read A's transposed copy (said when there are none: the tests
/// over them then check nothing).
fn prepass_kernels() -> Vec<&'static KernelInfo> {
    let out: Vec<_> = shipped()
        .kernels()
        .iter()
        .filter(|k| k.prepass == Prepass::TransposeA)
        .collect();
    if out.is_empty() {
        eprintln!("skipped: the shipped specs have no prepass kernel");
    }
    out
}

/// A route to `k` with the unaligned kernel `unaligned`.
fn routed(k: &'static KernelInfo, unaligned: Option<&'static KernelInfo>) -> Routed {
    Routed {
        hit: RouteHit {
            kernel: k.id,
            rule: 1,
            unaligned: unaligned.map(|u| u.id),
            wave_fit: &[],
        },
        half_fallback: false,
        kernel: k,
        unaligned,
    }
}

/// A tn call's A and B as stored: A `[k, m]`, B `[k, n]`, at 256-byte aligned addresses.
fn tn_operands(m: u64, n: u64, k: u64, ldb: u64) -> StoredAb {
    StoredAb {
        a: Some(StoredOperand {
            address: 1 << 20,
            rows: k,
            cols: m,
            ld: m,
        }),
        b: Some(StoredOperand {
            address: 1 << 30,
            rows: k,
            cols: n,
            ld: ldb,
        }),
        dtype: Dtype::F32,
        a_transposed: false,
    }
}

fn round(bytes: u64) -> u64 {
    bytes.div_ceil(REPACK_ALIGN_BYTES) * REPACK_ALIGN_BYTES
}

#[test]
fn a_prepass_kernels_a_is_copied_transposed_within_the_bound() {
    let set = shipped();
    for k in prepass_kernels() {
        assert_eq!(k.op, Op::Tn, "{}", k.name);
        let r = routed(k, None);
        // m = 1000 and k = 777: the copy is [1000, 777] with rows of 780 f32 (16 bytes).
        let (m, n, depth) = (1000, 4096, 777);
        let ab = tn_operands(m, n, depth, n);
        let plan = r.repack(set, k.tier, &ab, u64::MAX).unwrap();
        let a = plan.a.unwrap();
        assert!(a.transposed && plan.b.is_none(), "{}", k.name);
        assert_eq!(a.shape(), (m, depth));
        assert_eq!(a.ld, aligned_ld(depth, Dtype::F32));
        assert_eq!(a.ld, 780);
        assert_eq!(plan.scratch_bytes, round(m * 780 * 4));
        let t = plan.transpose.unwrap();
        assert_eq!(t.kind, ConversionKind::Transpose);
        assert_eq!((t.from, t.to, t.tier), (Dtype::F32, Dtype::F32, k.tier));
        assert!(
            plan.conversion.is_none(),
            "no bit copy without a misaligned B"
        );
        assert!(std::ptr::eq(plan.conversion_of(&a).unwrap(), t));
        // One byte under what the copy takes: refused with both numbers, nothing planned.
        let limit = plan.scratch_bytes - 1;
        match r.repack(set, k.tier, &ab, limit) {
            Err(NoRepack::OverLimit { needed, limit: l }) => {
                assert_eq!((needed, l), (plan.scratch_bytes, limit))
            }
            other => panic!("{}: {other:?}", k.name),
        }
        // k = 0: nothing to copy, so the kernel cannot run.
        let mut empty = ab;
        empty.a = None;
        empty.b = None;
        assert!(matches!(
            r.repack(set, k.tier, &empty, u64::MAX),
            Err(NoRepack::NotAlignment(Operand::A, _))
        ));
    }
}

#[test]
fn a_misaligned_b_is_repacked_beside_the_transposed_a() {
    let set = shipped();
    for k in prepass_kernels() {
        let r = routed(k, None);
        // n = 50257 f32 columns: B's rows are off 16 bytes, so B is copied as stored too.
        let (m, n, depth) = (512, 50257, 1024);
        let ab = tn_operands(m, n, depth, n);
        let plan = r.repack(set, k.tier, &ab, u64::MAX).unwrap();
        let (a, b) = (plan.a.unwrap(), plan.b.unwrap());
        assert!(a.transposed && !b.transposed, "{}", k.name);
        assert_eq!(b.shape(), (depth, n));
        assert_eq!(b.ld, 50260);
        assert_eq!(b.offset, round(a.bytes(Dtype::F32)));
        assert_eq!(plan.scratch_bytes, b.offset + round(b.bytes(Dtype::F32)));
        assert_eq!(plan.conversion.unwrap().kind, ConversionKind::Repack);
        assert_eq!(plan.transpose.unwrap().kind, ConversionKind::Transpose);
    }
}

#[test]
fn without_its_copy_a_prepass_kernel_never_reads_a_as_stored() {
    let set = shipped();
    for k in prepass_kernels() {
        // Any tn kernel of the same contract that reads A as stored stands in as the route's
        // unaligned kernel here.
        let unaligned = set
            .tier_kernels(k.tier)
            .iter()
            .find(|u| {
                u.op == Op::Tn
                    && u.contract == k.contract
                    && u.dtype == k.dtype
                    && u.prepass == Prepass::None
            })
            .unwrap_or_else(|| panic!("{}: no tn kernel of its contract", k.name));
        let ab = tn_operands(2048, 4096, 4096, 4096);
        let picked = routed(k, Some(unaligned)).pick(&ab).unwrap();
        assert!(std::ptr::eq(picked.kernel, unaligned), "{}", k.name);
        assert_eq!(picked.unaligned, Some(UnalignedWhy::NotCopied(Operand::A)));
        assert_eq!(
            routed(k, None).pick(&ab).err(),
            Some(PickError::NotCopied(Operand::A))
        );
        // With the copy (what the repack path passes), the kernel itself runs.
        let plan = routed(k, None).repack(set, k.tier, &ab, u64::MAX).unwrap();
        let copied = StoredAb {
            a: Some(plan.a.unwrap().stored(1 << 21)),
            a_transposed: true,
            ..ab
        };
        let picked = routed(k, None).pick(&copied).unwrap();
        assert!(std::ptr::eq(picked.kernel, k) && picked.unaligned.is_none());
    }
}

#[test]
fn the_transposing_conversion_launches_a_block_per_32_x_32_tile() {
    let set = shipped();
    let mut seen = 0;
    for t in set.tiers() {
        let Some(c) = set.transpose_for(t.id, Dtype::F32) else {
            continue;
        };
        seen += 1;
        assert_eq!(c.launch_grid(4096, 1000), (128 * 32, 1, 1));
        assert_eq!(c.launch_grid(33, 1), (2, 1, 1));
        assert_eq!(c.launch_grid(0, 0), (1, 1, 1));
        assert_eq!(
            c.launch_grid(1 << 20, 1 << 20).0 as u64,
            crate::table::ConversionInfo::MAX_BLOCKS
        );
        // The other conversions of the pair are not it.
        let repack = set.conversion_for(t.id, Dtype::F32, Dtype::F32).unwrap();
        assert_eq!(repack.kind, ConversionKind::Repack);
    }
    // Every tier with a prepass kernel has its conversion.
    for k in prepass_kernels() {
        assert!(
            set.transpose_for(k.tier, Dtype::F32).is_some(),
            "{}",
            k.name
        );
    }
    assert!(seen > 0 || prepass_kernels().is_empty());
}

/// The shipped kernels with a vector path (said when there are none).
fn vector_kernels() -> Vec<&'static KernelInfo> {
    let out: Vec<_> = shipped()
        .kernels()
        .iter()
        .filter(|k| k.vector_bytes > 0)
        .collect();
    if out.is_empty() {
        eprintln!("skipped: the shipped specs have no kernel with a vector path");
    }
    out
}

/// A call's A and B as `op` stores them, at `address` and `address + 1 GiB`, with leading
/// dimensions `lda` and `ldb`.
fn stored_ab(
    op: Op,
    (m, n, k): (u64, u64, u64),
    (lda, ldb): (u64, u64),
    address: u64,
    dtype: Dtype,
) -> StoredAb {
    let (a_rows, a_cols) = if op == Op::Tn { (k, m) } else { (m, k) };
    let (b_rows, b_cols) = if op == Op::Nt { (n, k) } else { (k, n) };
    StoredAb {
        a: Some(StoredOperand {
            address,
            rows: a_rows,
            cols: a_cols,
            ld: lda,
        }),
        b: Some(StoredOperand {
            address: address + (1 << 30),
            rows: b_rows,
            cols: b_cols,
            ld: ldb,
        }),
        dtype,
        a_transposed: false,
    }
}

#[test]
fn a_vector_kernels_operands_off_its_alignment_are_copied_and_no_others() {
    let set = shipped();
    let kernels = vector_kernels();
    for k in &kernels {
        let r = routed(k, None);
        let dtype = k.dtype.ab;
        let elem = dtype.size_bytes();
        let vb = u64::from(k.vector_bytes);
        assert!(vb.is_power_of_two() && vb <= 16, "{}: {vb}", k.name);
        let (m, n, depth) = (7, 4096, 2048);
        if vb <= elem {
            // Every element starts on the path (an f32 kernel copying 4 bytes a lane): an
            // operand one element off is read as it is.
            for (da, shift) in [(1, 0), (0, elem)] {
                let mut ab = stored_ab(k.op, (m, n, depth), (depth + da, n), 1 << 20, dtype);
                ab.b = ab.b.map(|b| StoredOperand {
                    address: b.address + shift,
                    ..b
                });
                assert_eq!(
                    r.repack(set, k.tier, &ab, u64::MAX).err(),
                    Some(NoRepack::NotNeeded),
                    "{}",
                    k.name
                );
            }
            continue;
        }
        let dense = |op: Op| {
            let lda = if op == Op::Tn { m } else { depth };
            let ldb = if op == Op::Nt { depth } else { n };
            (lda, ldb)
        };
        // Aligned (tn's A of 7 rows a k is off any vector: padded to 8 or 16 bytes' worth).
        let (lda, ldb) = dense(k.op);
        let lda = if k.op == Op::Tn { 16 } else { lda };
        let ab = stored_ab(k.op, (m, n, depth), (lda, ldb), 1 << 20, dtype);
        assert_eq!(
            r.repack(set, k.tier, &ab, u64::MAX).err(),
            Some(NoRepack::NotNeeded),
            "{}",
            k.name
        );
        // A's rows one element longer: A alone is copied, its rows rounded up to 16 bytes.
        let odd = stored_ab(k.op, (m, n, depth), (lda + 1, ldb), 1 << 20, dtype);
        let plan = r.repack(set, k.tier, &odd, u64::MAX).unwrap();
        let a = plan.a.unwrap();
        assert!(plan.b.is_none() && !a.transposed, "{}", k.name);
        assert_eq!(a.shape(), (odd.a.unwrap().rows, odd.a.unwrap().cols));
        assert!((a.ld * elem).is_multiple_of(16) && a.ld >= a.shape().1);
        assert_eq!(plan.conversion.unwrap().kind, ConversionKind::Repack);
        assert!(plan.transpose.is_none());
        // B's base one element in: B alone; both: both, B after A.
        let shifted = StoredAb {
            b: ab.b.map(|b| StoredOperand {
                address: b.address + elem,
                ..b
            }),
            ..ab
        };
        let plan = r.repack(set, k.tier, &shifted, u64::MAX).unwrap();
        assert!(plan.a.is_none() && plan.b.is_some(), "{}", k.name);
        let both = StoredAb {
            a: odd.a,
            ..shifted
        };
        let plan = r.repack(set, k.tier, &both, u64::MAX).unwrap();
        let (a, b) = (plan.a.unwrap(), plan.b.unwrap());
        assert_eq!(b.offset, round(a.bytes(dtype)));
        // Over the bound: refused with both numbers; k = 0: nothing to copy.
        assert!(matches!(
            r.repack(set, k.tier, &both, plan.scratch_bytes - 1),
            Err(NoRepack::OverLimit { .. })
        ));
        let empty = StoredAb {
            a: None,
            b: None,
            ..both
        };
        assert_eq!(
            r.repack(set, k.tier, &empty, u64::MAX).err(),
            Some(NoRepack::NotNeeded)
        );
        // The kernel runs on operands as stored too (element by element): no unaligned kernel.
        let picked = r.pick(&both).unwrap();
        assert!(std::ptr::eq(picked.kernel, *k) && picked.unaligned.is_none());
    }
    // Every kind whose manifest names a vector path is a plain-load kind.
    for k in &kernels {
        assert_eq!(k.operands, OperandPath::Loads, "{}", k.name);
    }
}

/// Every shipped route whose kernel has a vector path and names an unaligned kernel: a call
/// whose B is off the kernel's path (an odd vocabulary, B's ld 50257) but on the unaligned
/// kernel's copies nothing and runs the unaligned kernel; one off both (16-bit elements at an
/// odd ld, where the unaligned kernel's path stays 16 bytes) is copied for the route's kernel.
#[test]
fn a_vector_routes_unaligned_kernel_reads_what_its_path_takes_uncopied() {
    let set = shipped();
    let mut seen = 0;
    for route in set.routes() {
        let (Some(k), Some(u)) = (
            set.kernel(route.kernel),
            route.unaligned.and_then(|id| set.kernel(id)),
        ) else {
            continue;
        };
        if k.vector_bytes == 0 {
            continue;
        }
        assert_eq!(u.operands, OperandPath::Loads, "{}", u.name);
        assert!(u.vector_bytes <= k.vector_bytes, "{} {}", k.name, u.name);
        let r = routed(k, Some(u));
        let dtype = k.dtype.ab;
        let elem = dtype.size_bytes();
        let (m, n, depth) = (8, 50257, 768);
        let dense = stored_ab(k.op, (m, n, depth), (depth, 50264), 1 << 20, dtype);
        assert_eq!(
            r.repack(set, k.tier, &dense, u64::MAX).err(),
            Some(NoRepack::NotNeeded)
        );
        assert!(std::ptr::eq(r.pick(&dense).unwrap().kernel, k));
        let odd = stored_ab(k.op, (m, n, depth), (depth, n), 1 << 20, dtype);
        let off_u = !(n * elem).is_multiple_of(u64::from(u.vector_bytes.max(1)));
        let picked = r.pick(&odd).unwrap();
        if u.vector_bytes > 0 && !off_u {
            assert_eq!(
                r.repack(set, k.tier, &odd, u64::MAX).err(),
                Some(NoRepack::UnalignedKernel(Operand::B)),
                "{} at {}",
                k.name,
                route.location
            );
            assert!(std::ptr::eq(picked.kernel, u), "{}", route.location);
            assert_eq!(picked.unaligned, Some(UnalignedWhy::Misaligned(Operand::B)));
            seen += 1;
        } else {
            let plan = r.repack(set, k.tier, &odd, u64::MAX).unwrap();
            assert!(plan.a.is_none() && plan.b.is_some(), "{}", route.location);
            assert!(std::ptr::eq(picked.kernel, k) && picked.unaligned.is_none());
        }
    }
    let any_narrow = set
        .routes()
        .iter()
        .filter_map(|r| r.unaligned.and_then(|id| set.kernel(id)))
        .any(|u| u.vector_bytes > 0 && u.vector_bytes < 16);
    assert_eq!(
        seen > 0,
        any_narrow,
        "routes to a narrower vector path: {seen}"
    );
    if !any_narrow {
        eprintln!("skipped: no shipped route's unaligned kernel has a narrower vector path");
    }
}

#[test]
fn a_transposed_copy_never_reaches_the_unaligned_kernel() {
    let set = shipped();
    for k in prepass_kernels() {
        let unaligned = set
            .tier_kernels(k.tier)
            .iter()
            .find(|u| u.op == Op::Tn && u.contract == k.contract && u.prepass == Prepass::None)
            .unwrap();
        let ab = tn_operands(512, 4096, 1024, 4096);
        let plan = routed(k, None).repack(set, k.tier, &ab, u64::MAX).unwrap();
        // The copy made, but B off 16 bytes (no repack of it here): the unaligned kernel would
        // read the [m, k] copy as tn's A, so the call is refused instead.
        let copied = StoredAb {
            a: Some(plan.a.unwrap().stored(1 << 21)),
            b: ab.b.map(|b| StoredOperand {
                address: b.address + 4,
                ..b
            }),
            a_transposed: true,
            ..ab
        };
        match routed(k, Some(unaligned)).pick(&copied) {
            Err(PickError::Tma(Operand::B, _)) => {}
            other => panic!("{}: {other:?}", k.name),
        }
        // A copy whose rows would not fit i32 (k = 2^31 - 1 rounds up past it) is not planned.
        let deep = tn_operands(16, 4096, gemm_core::DIM_MAX, 4096);
        assert_eq!(
            routed(k, None).repack(set, k.tier, &deep, u64::MAX).err(),
            Some(NoRepack::TooWide(Operand::A)),
            "{}",
            k.name
        );
    }
}
