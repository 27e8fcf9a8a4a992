//! The conversion kernels on the CPU: every conversion of the shipped specs whose kind's manifest
//! says `host_emulation = true` (the half fallback's widening and narrowing, the repack's bit
//! copy, the transposing copy of a `prepass = "transpose-a"` family, the row kernels of the
//! fronts' mode) is compiled by the host C++ compiler from the generator's own entry
//! (`emit::cuda::conversion_entry`) against `host/cuda_host_shim.h`, and run a block at a time,
//! its threads as fibers meeting at each barrier (and shuffle) in a new shuffled order. A
//! function-scope `__shared__` array is one static array here: one a block, as the blocks run
//! one after another. Each runs on the grid the runtime launches (`gemm_core::conversion_grid`)
//! and on a grid of 3 blocks (the grid-stride loop), over shapes with partial 32 x 32 tiles, row
//! lengths on both sides of the row kernels' warp path, and padded leading dimensions on both
//! sides. Its output must be the conversion's model bit for bit (a bit copy, its transposition,
//! the value rounded to nearest even once, or the row-t256 tree), with the destination's padding
//! left as it was. A transposition that reads the tile before the barrier, and a row kernel whose
//! warp path folds in another order, must fail the same check, so the check can fail.

use gemm_codegen::catalog::{CatalogConversion, KernelCatalog};
use gemm_codegen::emit::cuda::{config_name, conversion_entry};
use gemm_core::table::{conversion_grid, ConversionKind};
use gemm_core::vocab::Dtype;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The conversions to emulate: every one of a host-emulated kind (elementwise, transposing, row
/// kernels), one of each distinct entry (the tiers build the same conversions).
fn host_conversions(catalog: &KernelCatalog) -> Vec<&CatalogConversion> {
    let mut seen = std::collections::BTreeMap::new();
    for c in &catalog.conversions {
        let conv = &catalog.specs.conversions[&c.conversion];
        if !conv.kind.host_emulation {
            continue;
        }
        let key = conversion_entry(&catalog.specs, c)
            .replace(&c.name, "KERNEL")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        seen.entry(key).or_insert(c);
    }
    seen.into_values().collect()
}

/// One conversion the driver runs: a `rows x cols` source into its destination, on `blocks`.
#[derive(Clone, Copy, Debug)]
struct Job {
    rows: usize,
    cols: usize,
    ld_src: usize,
    ld_dst: usize,
    blocks: u32,
}

impl Job {
    /// Rows and columns of the destination.
    fn dst_shape(&self, kind: ConversionKind) -> (usize, usize) {
        match kind {
            ConversionKind::Transpose => (self.cols, self.rows),
            ConversionKind::Row(op) => (self.rows, op.outputs_per_row(self.cols as u64) as usize),
            _ => (self.rows, self.cols),
        }
    }
}

/// Row kernels' shapes: both paths (a warp a row up to the kernel's warp-path length, a block a
/// row beyond), partial chains of 256 and a row count that leaves a block's last warps idle;
/// each kernel also at its own length, one below and one above it.
fn row_shapes(warp_cols: usize) -> Vec<(usize, usize)> {
    let mut v = vec![
        (1, 1),
        (5, 7),
        (9, 255),
        (3, 256),
        (17, 257),
        (9, 511),
        (2, 512),
        (3, 513),
        (2, 1025),
    ];
    v.extend([(9, warp_cols - 1), (2, warp_cols), (3, warp_cols + 1)]);
    v.sort_unstable();
    v.dedup();
    v
}

fn jobs(c: &CatalogConversion) -> Vec<Job> {
    let mut out = Vec::new();
    let shapes: Vec<(usize, usize)> = match c.kind {
        ConversionKind::Row(_) => row_shapes(c.warp_cols as usize),
        _ => vec![(1, 1), (33, 65), (100, 37), (64, 32)],
    };
    for &(rows, cols) in &shapes {
        for pad in [0, 3] {
            let probe = Job {
                rows,
                cols,
                ld_src: cols + pad,
                ld_dst: 0,
                blocks: 0,
            };
            let ld_dst = probe.dst_shape(c.kind).1 + pad;
            let full = conversion_grid(c.kind, c.threads, c.warp_cols, rows as u64, cols as u64).0;
            for blocks in [full, 3] {
                out.push(Job {
                    ld_dst,
                    blocks,
                    ..probe
                });
            }
        }
    }
    out
}

/// The element's size in bytes.
fn size(d: Dtype) -> usize {
    d.size_bytes() as usize
}

/// `x`'s bits as a `to` value (rounded to nearest even once where narrower, exact where wider).
fn convert(from: Dtype, to: Dtype, bits: u32) -> u32 {
    let v = match from {
        Dtype::F32 => f32::from_bits(bits),
        Dtype::Bf16 => half::bf16::from_bits(bits as u16).to_f32(),
        Dtype::F16 => half::f16::from_bits(bits as u16).to_f32(),
    };
    match to {
        Dtype::F32 => v.to_bits(),
        Dtype::Bf16 => u32::from(half::bf16::from_f32(v).to_bits()),
        Dtype::F16 => u32::from(half::f16::from_f32(v).to_bits()),
    }
}

fn read(bytes: &[u8], d: Dtype, i: usize) -> u32 {
    let s = size(d);
    let mut b = [0u8; 4];
    b[..s].copy_from_slice(&bytes[i * s..(i + 1) * s]);
    u32::from_le_bytes(b)
}

fn write(bytes: &mut [u8], d: Dtype, i: usize, v: u32) {
    let s = size(d);
    bytes[i * s..(i + 1) * s].copy_from_slice(&v.to_le_bytes()[..s]);
}

/// Random finite values of `d` (never zero), as stored.
fn fill(d: Dtype, n: usize, seed: &mut u64) -> Vec<u8> {
    let mut out = vec![0u8; n * size(d)];
    for i in 0..n {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let u = ((*seed >> 40) as f32 + 0.5) / (1u64 << 24) as f32;
        write(
            &mut out,
            d,
            i,
            convert(Dtype::F32, d, (2.0 * u - 1.0).to_bits()),
        );
    }
    out
}

/// A NaN pattern of `d` that no conversion writes (the destination's poison).
fn poison(d: Dtype) -> u32 {
    match d {
        Dtype::F32 => 0x7fc0_dead,
        _ => 0x7fed,
    }
}

const HOST_MAIN: &str = r#"};

int main(int argc, char** argv) {
    if (argc != 4) { fprintf(stderr, "usage: driver KERNEL JOBS OUT\n"); return 2; }
    const Entry* e = nullptr;
    for (const Entry& x : kEntries) if (std::string(x.name) == argv[1]) e = &x;
    if (!e) { fprintf(stderr, "no conversion %s\n", argv[1]); return 2; }
    FILE* in = fopen(argv[2], "rb");
    FILE* out = fopen(argv[3], "wb");
    if (!in || !out) { fprintf(stderr, "cannot open the job or output file\n"); return 2; }
    int h[5];  // rows cols ld_src ld_dst blocks
    while (fread(h, sizeof h, 1, in) == 1) {
        int64_t lens[2];  // bytes of src and dst
        if (fread(lens, sizeof lens, 1, in) != 1) return 3;
        auto read = [&](int64_t bytes) {
            std::vector<unsigned char> v((size_t)bytes);
            if (bytes && fread(v.data(), 1, (size_t)bytes, in) != (size_t)bytes) exit(3);
            return v;
        };
        std::vector<unsigned char> src = read(lens[0]), dst = read(lens[1]);
        ConvertArgs p{};
        p.src = src.data(); p.dst = dst.data();
        p.rows = h[0]; p.cols = h[1]; p.ld_src = h[2]; p.ld_dst = h[3];
        GemmHostBlock block;
        const std::function<void()> body = [&] { e->fn(p); };
        gridDim = make_uint3(h[4], 1, 1);
        for (int bx = 0; bx < h[4]; ++bx)
            block.run(e->threads, make_uint3(bx, 0, 0), body, (uint64_t)h[0] * 1000003u + (uint64_t)h[1]);
        fwrite(dst.data(), 1, lens[1], out);
    }
    fclose(out);
    return 0;
}
"#;

/// The driver: the shim, the conversion kinds' headers with function-scope `__shared__` made
/// static, every entry, and a main that reads jobs from a file (`driver KERNEL JOBS OUT`): per
/// job 5 i32 (rows cols ld_src ld_dst blocks), 2 i64 (the bytes of src and dst), then those
/// bytes; it writes each job's dst after its run.
fn build_driver(
    catalog: &KernelCatalog,
    convs: &[&CatalogConversion],
    templates: &Path,
    dir: &Path,
) -> PathBuf {
    let mut headers: Vec<&str> = convs
        .iter()
        .map(|c| {
            catalog.specs.conversions[&c.conversion]
                .kind
                .header
                .as_str()
        })
        .collect();
    headers.sort_unstable();
    headers.dedup();
    // A function-scope __shared__ array is the block's: one static array, the blocks running
    // one after another.
    let mut s = String::from(
        "#include \"cuda_host_shim.h\"\n#include \"gemm_abi.h\"\n#undef __shared__\n#define __shared__ static\n",
    );
    for h in &headers {
        let _ = writeln!(s, "#include \"{h}\"");
    }
    for c in convs {
        s.push_str(&conversion_entry(&catalog.specs, c));
    }
    s.push_str(
        "#include <string>\nstruct Entry { const char* name; void (*fn)(const ConvertArgs); int threads; };\nstatic const Entry kEntries[] = {\n",
    );
    for c in convs {
        let cfg = config_name(&c.name);
        let _ = writeln!(s, "    {{\"{n}\", {n}, {cfg}::kThreads}},", n = c.name);
    }
    s.push_str(HOST_MAIN);
    gemm_aot_tests::build_host_driver(catalog, &s, templates, dir)
}

/// Runs every job of `c` through the driver and checks each against the model.
fn check(driver: &Path, c: &CatalogConversion, dir: &Path) -> Result<(), String> {
    let (from, to) = (c.from, c.to);
    let mut seed = 0x9e37_79b9_7f4a_7c15 ^ c.id as u64;
    let mut input = Vec::new();
    let mut want = Vec::new();
    for job in jobs(c) {
        let src = fill(from, job.rows * job.ld_src, &mut seed);
        let (dst_rows, _) = job.dst_shape(c.kind);
        let mut dst0 = vec![0u8; dst_rows * job.ld_dst * size(to)];
        for i in 0..dst_rows * job.ld_dst {
            write(&mut dst0, to, i, poison(to));
        }
        let mut dst = dst0.clone();
        if let ConversionKind::Row(op) = c.kind {
            for r in 0..job.rows {
                let x: Vec<f32> = (0..job.cols)
                    .map(|col| {
                        f32::from_bits(convert(
                            from,
                            Dtype::F32,
                            read(&src, from, r * job.ld_src + col),
                        ))
                    })
                    .collect();
                for (col, y) in row_tree(op, c.threads as usize, &x).into_iter().enumerate() {
                    write(
                        &mut dst,
                        to,
                        r * job.ld_dst + col,
                        convert(Dtype::F32, to, y.to_bits()),
                    );
                }
            }
        }
        for r in 0..job.rows {
            if matches!(c.kind, ConversionKind::Row(_)) {
                break;
            }
            for col in 0..job.cols {
                let v = read(&src, from, r * job.ld_src + col);
                let at = match c.kind {
                    ConversionKind::Transpose => col * job.ld_dst + r,
                    _ => r * job.ld_dst + col,
                };
                let v = if from == to { v } else { convert(from, to, v) };
                write(&mut dst, to, at, v);
            }
        }
        want.push(dst);
        for v in [
            job.rows,
            job.cols,
            job.ld_src,
            job.ld_dst,
            job.blocks as usize,
        ] {
            input.extend((v as i32).to_le_bytes());
        }
        input.extend((src.len() as i64).to_le_bytes());
        input.extend((dst0.len() as i64).to_le_bytes());
        input.extend(src);
        input.extend(dst0);
    }
    let got = gemm_aot_tests::run_host_driver(driver, &c.name, &input, dir)?;
    let mut at = 0;
    for (job, want) in jobs(c).iter().zip(&want) {
        let got = &got[at..at + want.len()];
        at += want.len();
        if let Some(i) = (0..want.len() / size(to)).find(|&i| read(got, to, i) != read(want, to, i))
        {
            return Err(format!(
                "{}: {job:?}: destination element ({}, {}) is {:#x}, the model's {:#x}",
                c.name,
                i / job.ld_dst,
                i % job.ld_dst,
                read(got, to, i),
                read(want, to, i)
            ));
        }
    }
    Ok(())
}

/// Contract row-t<threads> (`rows/row_reduce.cuh` states it; the shipped kernels are row-t256):
/// thread t folds elements t, t + threads, ... ascending from its start (-inf for the maximum,
/// +0 for the sums); each warp folds its 32 by xor butterfly at 16, 8,
/// 4, 2, 1; the warps' totals are folded in ascending order. All in f32; max for the row's
/// maximum, + for the sums. The host's expf and logf stand for the device's (the shim's
/// kernel calls the same libm functions as f32::exp and f32::ln here).
fn row_tree(op: gemm_core::table::RowOp, threads: usize, x: &[f32]) -> Vec<f32> {
    use gemm_core::table::RowOp;
    let fold = |f: &dyn Fn(f32) -> f32, start: f32, add: &dyn Fn(f32, f32) -> f32| {
        let mut s = vec![start; threads];
        for (c, &v) in x.iter().enumerate() {
            s[c % threads] = add(s[c % threads], f(v));
        }
        let mut total = None;
        for warp in s.chunks(32) {
            let mut v = warp.to_vec();
            for d in [16, 8, 4, 2, 1] {
                v = (0..32).map(|l| add(v[l], v[l ^ d])).collect();
            }
            total = Some(total.map_or(v[0], |t| add(t, v[0])));
        }
        total.unwrap()
    };
    let sum = |a: f32, b: f32| a + b;
    match op {
        RowOp::Mean => vec![fold(&|v| v, 0.0, &sum) / x.len() as f32],
        RowOp::Softmax | RowOp::LogSoftmax => {
            let max = fold(&|v| v, f32::NEG_INFINITY, &|a: f32, b: f32| a.max(b));
            let total = fold(&|v| (v - max).exp(), 0.0, &sum);
            match op {
                RowOp::Softmax => x.iter().map(|v| (v - max).exp() / total).collect(),
                _ => x.iter().map(|v| (v - max) - total.ln()).collect(),
            }
        }
    }
}

fn shipped() -> KernelCatalog {
    gemm_aot_tests::catalog(&gemm_aot_tests::shipped_specs()).0
}

#[test]
fn the_conversions_give_their_models_bits_on_the_cpu() {
    let catalog = shipped();
    let convs = host_conversions(&catalog);
    assert!(
        convs.iter().any(|c| c.kind == ConversionKind::Repack),
        "no host-emulated repack among the shipped conversions"
    );
    let dir = tempfile::tempdir().unwrap();
    let templates = Path::new("../kernels-templates").canonicalize().unwrap();
    let driver = build_driver(&catalog, &convs, &templates, dir.path());
    let failures: Vec<String> = convs
        .iter()
        .filter_map(|c| {
            let r = check(&driver, c, dir.path());
            eprintln!(
                "{} {} ({} jobs)",
                if r.is_ok() { "ok  " } else { "FAIL" },
                c.name,
                jobs(c).len()
            );
            r.err()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the first host conversion `pick` selects against the model with `from` replaced by
/// `to` in the template `file` (a copy of kernels-templates' `dirs`); the check's error, or
/// `None` when the specs build no such conversion.
fn mutated_check(
    pick: impl Fn(&gemm_spec::Conversion, &CatalogConversion) -> bool,
    dirs: &[&str],
    file: &str,
    (from, to): (&str, &str),
) -> Option<Result<(), String>> {
    let catalog = shipped();
    let c = host_conversions(&catalog)
        .into_iter()
        .find(|c| pick(&catalog.specs.conversions[&c.conversion], c))?;
    let dir = tempfile::tempdir().unwrap();
    let templates = gemm_aot_tests::mutated_templates(dir.path(), dirs, file, (from, to));
    let driver = build_driver(&catalog, &[c], &templates, dir.path());
    Some(check(&driver, c, dir.path()))
}

#[test]
fn a_transposition_without_its_barrier_fails_the_host_check() {
    let Some(result) = mutated_check(
        |_, c| c.kind == ConversionKind::Transpose,
        &["convert", "common"],
        "convert/transpose_matrix.cuh",
        (
            "            __syncthreads();\n#pragma unroll",
            "#pragma unroll",
        ),
    ) else {
        eprintln!("skipped: the shipped specs build no transposing conversion");
        return;
    };
    let err = result.expect_err("the transposition without its barrier passed");
    assert!(err.contains("the model's"), "{err}");
}

#[test]
fn a_row_kernel_whose_warp_path_folds_in_another_order_fails_the_host_check() {
    // Each fold a shipped row kernel uses (the spec's `warp_fold`), run in another order: the
    // butterflies from distance 1 up instead of 16 down; the halving's last butterfly steps
    // likewise. Another tree each: the host check must fail.
    let mutations = [
        (
            false,
            "for (int d = 16; d >= 1; d /= 2) s[w] = ",
            "for (int d = 1; d <= 16; d *= 2) s[w] = ",
        ),
        (
            true,
            "for (int d = 16 >> kHalvings; d >= 1; d /= 2) x = ",
            "for (int d = 1; d <= (16 >> kHalvings); d *= 2) x = ",
        ),
    ];
    let mut checked = 0;
    for (halving, from, to) in mutations {
        let Some(result) = mutated_check(
            |spec, c| {
                // f32 in and out: a half output's rounding could hide a changed sum.
                matches!(c.kind, ConversionKind::Row(op) if op != gemm_core::table::RowOp::Mean)
                    && (c.from, c.to) == (Dtype::F32, Dtype::F32)
                    && spec.halving_fold == halving
            },
            &["rows", "common"],
            "rows/row_reduce.cuh",
            (from, to),
        ) else {
            eprintln!(
                "skipped: no shipped softmax or log_softmax kernel folds by {}",
                if halving { "halving" } else { "butterflies" }
            );
            continue;
        };
        let err = result.expect_err("the row kernel folding in another order passed");
        assert!(err.contains("the model's"), "{err}");
        checked += 1;
    }
    assert!(
        checked > 0,
        "the shipped specs build no softmax or log_softmax row kernel"
    );
}

#[test]
fn each_row_kernel_is_built_for_the_blocks_an_sm_and_the_fold_its_spec_names() {
    // `min_blocks` in the spec, one a warp-path length, is each kernel's launch-bounds minimum
    // (what caps its registers); a conversion without it has no minimum. `warp_fold` is the
    // template's kHalvingFold.
    let catalog = shipped();
    let mut bounded = 0;
    for c in &catalog.conversions {
        let spec = &catalog.specs.conversions[&c.conversion];
        let at = spec.warp_cols.iter().position(|&w| w == c.warp_cols);
        let want = match at.and_then(|i| spec.min_blocks.get(i)) {
            Some(n) => {
                bounded += 1;
                format!("__launch_bounds__({}, {n}) {}(", c.threads, c.name)
            }
            None => format!("__launch_bounds__({}) {}(", c.threads, c.name),
        };
        let entry = conversion_entry(&catalog.specs, c);
        assert!(entry.contains(&want), "{}: no `{want}` in\n{entry}", c.name);
        // And the fold its spec names (`warp_fold`), which the template reads.
        if matches!(c.kind, ConversionKind::Row(_)) {
            let fold = format!("kHalvingFold = {};", spec.halving_fold);
            assert!(entry.contains(&fold), "{}: no `{fold}` in\n{entry}", c.name);
        }
    }
    let specified: usize = catalog
        .specs
        .conversions
        .values()
        .map(|s| s.min_blocks.len() * s.variants.len())
        .sum::<usize>()
        * catalog.specs.tiers.len();
    assert_eq!(
        bounded, specified,
        "every value of every min_blocks, for every tier"
    );
}
