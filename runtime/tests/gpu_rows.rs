//! Row kernels on the GPU (contract row-t256, docs/fronts.md): every (op, from, to) the tier
//! builds, at row lengths below, at and far above the block, checked for
//! - the same bits for a row whatever the number of rows (alone, in 3, in 300) and whichever
//!   block takes it (rows beyond the grid's cap loop);
//! - mean bit for bit against the CPU model of the tree (`reference::row_mean`);
//! - softmax and log_softmax against float64 (the device's expf and logf are not modelled
//!   bit for bit on the CPU);
//! - outputs poisoned first, nothing written past a row, refusals before the device;
//! - softmax and log_softmax of a row on each warp-path kernel (at most its `warp_cols`
//!   columns) bit for bit against the block path (the row padded with -inf to one column more
//!   than the longest warp path).

mod common;
use common::*;
use gemm_runtime::*;

// Both paths of row_reduce.cuh: a warp a row up to a kernel's warp_cols (512, and 1024 for
// softmax and log_softmax's second kernel), a block a row beyond.
const COLS: [usize; 11] = [1, 7, 255, 256, 512, 513, 700, 1024, 1025, 4096, 50257];
const ROWS: usize = 300;

fn f64_row(op: RowOp, x: &[f64]) -> Vec<f64> {
    let max = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = x.iter().map(|v| (v - max).exp()).sum();
    match op {
        RowOp::Softmax => x.iter().map(|v| (v - max).exp() / sum).collect(),
        RowOp::LogSoftmax => x.iter().map(|v| (v - max) - sum.ln()).collect(),
        RowOp::Mean => vec![x.iter().sum::<f64>() / x.len() as f64],
    }
}

/// Runs `op` over `rows` rows starting at row `first` of `src` into a fresh poisoned buffer;
/// the output's elements as f32 bits.
fn run<F: Element, T: Element>(
    ctx: &Context,
    op: RowOp,
    src: &DeviceBuffer<F>,
    (first, rows, cols): (usize, usize, usize),
) -> Vec<u32> {
    let out_cols = op.outputs_per_row(cols as u64) as usize;
    let dst = ctx
        .upload(&vec![poison::<T>(); rows * out_cols + 1])
        .unwrap();
    let elem = std::mem::size_of::<F>() as u64;
    ctx.rows_raw(&RawRows {
        op,
        from: F::DTYPE,
        to: T::DTYPE,
        src: RawMatrix {
            ptr: src.span().base() + (first * cols) as u64 * elem,
            ld: cols,
        },
        dst: RawMatrix {
            ptr: dst.span().base(),
            ld: out_cols,
        },
        rows,
        cols,
    })
    .unwrap_or_else(|e| {
        panic!(
            "{op} {}->{} rows {rows} cols {cols}: {e}",
            F::DTYPE,
            T::DTYPE
        )
    });
    let host: Vec<T> = ctx.download(&dst).unwrap();
    assert!(
        host[rows * out_cols].to_f32().is_nan(),
        "{op}: wrote past its rows"
    );
    host[..rows * out_cols].iter().map(|v| bits(*v)).collect()
}

/// Whether the tier builds the row kernel `op` from `from` to `to`; says SKIPPED when not.
fn builds(ctx: &Context, op: RowOp, from: Dtype, to: Dtype) -> bool {
    let built = ctx
        .kernels()
        .row_kernel(ctx.tier().id, op, from, to, 1)
        .is_some();
    if !built {
        eprintln!(
            "SKIPPED {op} {from}->{to}: tier {} builds none",
            ctx.tier().name
        );
    }
    built
}

fn check<F: Element, T: Element>(ctx: &Context, op: RowOp, rng: &mut Rng) -> bool {
    if !builds(ctx, op, F::DTYPE, T::DTYPE) {
        return false;
    }
    for cols in COLS {
        let host: Vec<F> = (0..ROWS * cols)
            .map(|_| F::from_f32(4.0 * rng.value()))
            .collect();
        let src = ctx.upload(&host).unwrap();
        let out_cols = op.outputs_per_row(cols as u64) as usize;
        let all = run::<F, T>(ctx, op, &src, (0, ROWS, cols));
        for r in [0, 1, 150, ROWS - 1] {
            let alone = run::<F, T>(ctx, op, &src, (r, 1, cols));
            let in_batch = &all[r * out_cols..(r + 1) * out_cols];
            assert_eq!(
                alone,
                in_batch,
                "{op} {}->{} cols {cols}: row {r} alone differs",
                F::DTYPE,
                T::DTYPE
            );
        }
        let three = run::<F, T>(ctx, op, &src, (1, 3, cols));
        assert_eq!(
            three,
            all[out_cols..4 * out_cols],
            "{op}: rows 1..4 differ in a batch of 3"
        );
        for r in [0, ROWS - 1] {
            let row = &host[r * cols..(r + 1) * cols];
            let got = &all[r * out_cols..(r + 1) * out_cols];
            if op == RowOp::Mean {
                let want = T::from_f32(reference::row_mean(row, 256));
                assert_eq!(
                    got[0],
                    bits(want),
                    "mean cols {cols} row {r}: not the contract's tree"
                );
                continue;
            }
            let x: Vec<f64> = row.iter().map(|v| v.to_f32() as f64).collect();
            let want = f64_row(op, &x);
            let tol = if T::DTYPE == Dtype::F32 { 1e-5 } else { 1e-2 };
            // Below f16's smallest normal (2^-14) its steps are 2^-24 apart, so there a
            // softmax output is held to that absolute step rather than to a relative bound.
            let floor = if T::DTYPE == Dtype::F16 {
                2f64.powi(-14)
            } else {
                1e-30
            };
            for (c, (&g, w)) in got.iter().zip(&want).enumerate() {
                let g = f32::from_bits(g) as f64;
                let scale = if op == RowOp::Softmax {
                    w.abs().max(floor)
                } else {
                    w.abs().max(1.0)
                };
                assert!(
                    ((g - w) / scale).abs() < tol,
                    "{op} cols {cols} row {r} col {c}: {g} vs {w}"
                );
            }
        }
    }
    eprintln!(
        "{op} {}->{}: {} row lengths, rows alone = in batches, within bounds",
        F::DTYPE,
        T::DTYPE,
        COLS.len()
    );
    true
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_row_kernel_gives_a_row_the_same_bits_whatever_the_rows() {
    let ctx = device_context();
    let mut rng = Rng::fresh("gpu_rows");
    let mut ran = 0;
    for op in RowOp::ALL {
        ran += check::<f32, f32>(&ctx, op, &mut rng) as usize;
        ran += check::<bf16, bf16>(&ctx, op, &mut rng) as usize;
        ran += check::<f16, f16>(&ctx, op, &mut rng) as usize;
        ran += check::<bf16, f32>(&ctx, op, &mut rng) as usize;
        ran += check::<f16, f32>(&ctx, op, &mut rng) as usize;
    }
    assert!(ran > 0, "the tier builds no row kernel");
}

/// The warp-path lengths of the tier's `op` kernels from `from` to `to`, ascending.
fn warp_lengths(ctx: &Context, op: RowOp, from: Dtype, to: Dtype) -> Vec<usize> {
    let mut v: Vec<usize> = ctx
        .kernels()
        .tier_conversions(ctx.tier().id)
        .iter()
        .filter(|c| c.kind == ConversionKind::Row(op) && (c.from, c.to) == (from, to))
        .map(|c| c.warp_cols as usize)
        .collect();
    v.sort_unstable();
    v
}

/// A row on each warp-path kernel (at most its warp_cols columns, more than the next shorter
/// one's) and the same row padded with -inf to one column more than the longest warp path
/// (the block path): -inf leaves the maximum as it is and adds exactly +0 to its thread's sum,
/// so each of the row's outputs must be the same bits if the paths compute one tree.
fn paths_agree<F: Element, T: Element>(ctx: &Context, op: RowOp, rng: &mut Rng) -> bool {
    if !builds(ctx, op, F::DTYPE, T::DTYPE) {
        return false;
    }
    let lengths = warp_lengths(ctx, op, F::DTYPE, T::DTYPE);
    let wide = lengths.last().copied().unwrap_or(0) + 1;
    let mut all_cols = vec![1, 31, 256];
    let mut below = 0;
    for &l in &lengths {
        all_cols.extend([below + 1, (below + l) / 2 + 44, l]);
        below = l;
    }
    all_cols.sort_unstable();
    all_cols.dedup();
    for cols in all_cols {
        let rows = 40;
        let short: Vec<F> = (0..rows * cols)
            .map(|_| F::from_f32(6.0 * rng.value()))
            .collect();
        let mut padded = vec![F::from_f32(f32::NEG_INFINITY); rows * wide];
        for r in 0..rows {
            padded[r * wide..r * wide + cols].copy_from_slice(&short[r * cols..(r + 1) * cols]);
        }
        let warp = run::<F, T>(ctx, op, &ctx.upload(&short).unwrap(), (0, rows, cols));
        let block = run::<F, T>(ctx, op, &ctx.upload(&padded).unwrap(), (0, rows, wide));
        for r in 0..rows {
            assert_eq!(
                warp[r * cols..(r + 1) * cols],
                block[r * wide..r * wide + cols],
                "{op} {}->{} cols {cols} row {r}: the warp path and the block path differ",
                F::DTYPE,
                T::DTYPE
            );
        }
    }
    true
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_warp_path_and_the_block_path_give_the_same_bits() {
    let ctx = device_context();
    let mut rng = Rng::fresh("gpu_rows paths");
    let mut ran = 0;
    for op in [RowOp::Softmax, RowOp::LogSoftmax] {
        ran += paths_agree::<f32, f32>(&ctx, op, &mut rng) as usize;
        ran += paths_agree::<bf16, bf16>(&ctx, op, &mut rng) as usize;
        ran += paths_agree::<bf16, f32>(&ctx, op, &mut rng) as usize;
        ran += paths_agree::<f16, f32>(&ctx, op, &mut rng) as usize;
    }
    assert!(ran > 0, "the tier builds no softmax row kernel");
    eprintln!("{ran} (op, from, to): the warp path's bits are the block path's");
}

/// Enough rows to fill the GPU on both paths (a block per 8 rows of 512 or 1000 columns, the
/// latter on softmax's second warp-path kernel; a block a row of 4096): rows taken alone give
/// the bits they have in the full launch.
#[test]
#[ignore = "needs a CUDA device"]
fn rows_alone_match_a_launch_that_fills_the_gpu() {
    let ctx = device_context();
    let mut rng = Rng::fresh("gpu_rows full");
    let mut ran = 0;
    for (rows, cols) in [(32768, 512), (16384, 1000), (2048, 4096)] {
        let host: Vec<f32> = (0..rows * cols).map(|_| 4.0 * rng.value()).collect();
        let src = ctx.upload(&host).unwrap();
        for op in RowOp::ALL {
            if !builds(&ctx, op, Dtype::F32, Dtype::F32) {
                continue;
            }
            ran += 1;
            let out_cols = op.outputs_per_row(cols as u64) as usize;
            let all = run::<f32, f32>(&ctx, op, &src, (0, rows, cols));
            for r in [0, 1, rows / 2 + 3, rows - 1] {
                let alone = run::<f32, f32>(&ctx, op, &src, (r, 1, cols));
                assert_eq!(
                    alone,
                    all[r * out_cols..(r + 1) * out_cols],
                    "{op} {rows} x {cols}: row {r} alone differs from the full launch"
                );
            }
        }
    }
    assert!(ran > 0, "the tier builds no f32 row kernel");
    eprintln!("{ran} (op, shape): rows alone = rows in a GPU-filling launch");
}

#[test]
#[ignore = "needs a CUDA device"]
fn refused_row_calls_enqueue_nothing() {
    let ctx = device_context();
    let src = ctx.upload(&vec![1.0f32; 64]).unwrap();
    let call = RawRows {
        op: RowOp::Softmax,
        from: Dtype::F32,
        to: Dtype::Bf16, // no f32 -> bf16 softmax is built
        src: RawMatrix {
            ptr: src.span().base(),
            ld: 64,
        },
        dst: RawMatrix {
            ptr: src.span().base() + 1024,
            ld: 64,
        },
        rows: 1,
        cols: 64,
    };
    match ctx.rows_raw(&call) {
        Err(GemmError::NoRowKernel { .. }) => {}
        other => panic!("expected NoRowKernel, got {other:?}"),
    }
    let over = RawRows {
        to: Dtype::F32,
        dst: call.src,
        ..call
    };
    assert!(matches!(
        ctx.rows_raw(&over),
        Err(GemmError::Overlap { .. })
    ));
}
