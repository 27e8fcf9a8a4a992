//! The plain-CUDA kernels on the CPU: every kernel of the shipped specs whose kind's manifest
//! says `host_emulation = true` (the exact policy's tiles: no inline PTX, asynchronous copies
//! or warp intrinsics) is compiled by the host C++ compiler from the generator's own entry
//! (`emit::cuda::gemm_entry`: its config struct and `extern "C"` function) against
//! `host/cuda_host_shim.h`, and run a block at a time, its threads as fibers meeting at each
//! barrier in a new shuffled order after each (the shim says how). Its output
//! must be the CPU model of its contract (`gemm_runtime::reference`) bit for bit, C poisoned
//! with NaN first, at shapes with partial tiles on both sides, two K chunks with a partial
//! second one, aligned leading dimensions (the vector loads) and odd ones (the elementwise path),
//! beta, bias and K = 0. So a template's indexing, chunk fold and edge handling are checked
//! here, without a GPU; what the CPU cannot show (the memory model, timing) stays with the GPU
//! suites. Two mutated templates (one k of each tile skipped; the barrier before a stage is
//! read removed) must fail the same check, so the check can fail.
//!
//! The f32 and bf16 variants of every op run (bf16 covers the widening loads and the rounding
//! store; f16 takes the same code); kernels that differ only by tier run once.

use gemm_codegen::catalog::{CatalogKernel, KernelCatalog};
use gemm_codegen::emit::cuda::gemm_entry;
use gemm_core::table::GridKind;
use gemm_core::vocab::{Dtype, Op};
use gemm_runtime::reference::{fma_k256, HostGemm};
use gemm_runtime::Element;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One GEMM the driver runs: the shape in the GEMM view, as `HostGemm` takes it.
#[derive(Clone, Copy, Debug)]
struct Job {
    g: HostGemm,
    bias: bool,
}

/// The kernels to emulate: plain kinds, f32 or bf16 operands, one of each distinct entry
/// (kernels of two tiers with the same config are one).
fn plain_kernels(catalog: &KernelCatalog) -> Vec<&CatalogKernel> {
    let mut seen = BTreeMap::new();
    for k in &catalog.kernels {
        let family = &catalog.specs.families[&k.family];
        if !family.kind.host_emulation || !matches!(k.dtype.ab, Dtype::F32 | Dtype::Bf16) {
            continue;
        }
        assert_eq!(
            family.abi, "GemmArgs",
            "{}: the host driver fills GemmArgs; teach it {}",
            k.name, family.abi
        );
        assert!(
            k.grid == GridKind::Tiles && k.cluster == (1, 1, 1),
            "{}: the host driver runs grids of tiles without clusters",
            k.name
        );
        // The entry without its name, tier and spec line: equal for equal kernels.
        let key = gemm_entry(&catalog.specs, k)
            .replace(&k.name, "KERNEL")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//") && !l.contains("kMaxSharedBytes"))
            .collect::<Vec<_>>()
            .join("\n");
        seen.entry(key).or_insert(k);
    }
    let mut out: Vec<&CatalogKernel> = seen.into_values().collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `(type, name)` of every `extern __shared__ T name[]` in the kinds' headers.
fn shared_arrays(headers: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for text in headers {
        for (i, _) in text.match_indices("extern __shared__") {
            let decl = &text[i..text[i..].find(';').map_or(text.len(), |e| i + e)];
            let words: Vec<&str> = decl
                .split(|c: char| c.is_whitespace() || c == '[')
                .filter(|w| !w.is_empty() && !w.starts_with("__align__"))
                .collect();
            // extern __shared__ T name ]
            let (ty, name) = (words[2].to_string(), words[3].to_string());
            if !out.contains(&(ty.clone(), name.clone())) {
                out.push((ty, name));
            }
        }
    }
    out
}

/// The driver: the shim, the kinds' headers, every entry, and a main that reads jobs from a file
/// (`driver KERNEL JOBS OUT`): per job 7 i32 (m n k lda ldb ldc bias), f32 beta, 4 i64 (the bytes
/// of A, B, bias and C as stored), then those bytes; it writes each job's C after its run.
fn driver_source(catalog: &KernelCatalog, kernels: &[&CatalogKernel], templates: &Path) -> String {
    let mut headers: Vec<String> = kernels
        .iter()
        .map(|k| catalog.specs.families[&k.family].header().to_string())
        .collect();
    headers.sort();
    headers.dedup();
    let texts: Vec<String> = headers
        .iter()
        .map(|h| std::fs::read_to_string(templates.join(h)).unwrap())
        .collect();
    let mut s = String::from("#include \"cuda_host_shim.h\"\n#include \"gemm_abi.h\"\n");
    for h in &headers {
        let _ = writeln!(s, "#include \"{h}\"");
    }
    for (ty, name) in shared_arrays(&texts) {
        let _ = writeln!(
            s,
            "alignas(16) {ty} {name}[{} / sizeof({ty})];",
            catalog
                .specs
                .tiers
                .iter()
                .map(|t| t.max_shared_bytes)
                .max()
                .unwrap()
        );
    }
    for k in kernels {
        s.push_str(&gemm_entry(&catalog.specs, k));
    }
    s.push_str(
        "#include <cstring>\n#include <string>\n\
         struct Entry { const char* name; void (*fn)(const GemmArgs); int bm, bn, threads; };\n\
         static const Entry kEntries[] = {\n",
    );
    for k in kernels {
        let cfg = gemm_codegen::emit::cuda::config_name(&k.name);
        let _ = writeln!(
            s,
            "    {{\"{n}\", {n}, {cfg}::M, {cfg}::N, {cfg}::kThreads}},",
            n = k.name
        );
    }
    s.push_str(HOST_MAIN);
    s
}

const HOST_MAIN: &str = r#"};

static void run_grid(const Entry& e, const GemmArgs& p, uint64_t seed) {
    const int gx = (p.m + e.bm - 1) / e.bm, gy = (p.n + e.bn - 1) / e.bn;
    GemmHostBlock block;
    const std::function<void()> body = [&] { e.fn(p); };
    for (int bx = 0; bx < gx; ++bx)
        for (int by = 0; by < gy; ++by) block.run(e.threads, make_uint3(bx, by, 0), body, seed);
}

int main(int argc, char** argv) {
    if (argc != 4) { fprintf(stderr, "usage: driver KERNEL JOBS OUT\n"); return 2; }
    const Entry* e = nullptr;
    for (const Entry& x : kEntries) if (std::string(x.name) == argv[1]) e = &x;
    if (!e) { fprintf(stderr, "no kernel %s\n", argv[1]); return 2; }
    FILE* in = fopen(argv[2], "rb");
    FILE* out = fopen(argv[3], "wb");
    if (!in || !out) { fprintf(stderr, "cannot open the job or output file\n"); return 2; }
    int h[7];
    while (fread(h, sizeof h, 1, in) == 1) {
        float beta;
        if (fread(&beta, 4, 1, in) != 1) return 3;
        const int m = h[0], n = h[1], k = h[2], lda = h[3], ldb = h[4], ldc = h[5], bias = h[6];
        int64_t lens[4];  // bytes of A, B, bias and C as stored
        if (fread(lens, sizeof lens, 1, in) != 1) return 3;
        auto read = [&](int64_t bytes) {
            std::vector<unsigned char> v((size_t)bytes);  // operator new: 16-byte aligned, as cudaMalloc's
            if (bytes && fread(v.data(), 1, (size_t)bytes, in) != (size_t)bytes) exit(3);
            return v;
        };
        std::vector<unsigned char> a = read(lens[0]), b = read(lens[1]), bs = read(lens[2]), c = read(lens[3]);
        GemmArgs p{};
        p.a = a.data(); p.b = b.data(); p.bias = bias ? bs.data() : nullptr; p.c = c.data();
        p.m = m; p.n = n; p.k = k; p.lda = lda; p.ldb = ldb; p.ldc = ldc; p.beta = beta;
        p.flags = bias ? GemmArgs::kFlagBias : 0u;
        run_grid(*e, p, (uint64_t)m * 1000003u + (uint64_t)k);
        fwrite(c.data(), 1, lens[3], out);
    }
    fclose(out);
    return 0;
}
"#;

/// The element's bits as stored, little-endian.
fn to_bytes<E: Element>(v: &[E]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        match E::DTYPE {
            Dtype::F32 => out.extend(x.to_f32().to_bits().to_le_bytes()),
            Dtype::Bf16 => out.extend(half::bf16::from_f32(x.to_f32()).to_bits().to_le_bytes()),
            Dtype::F16 => out.extend(half::f16::from_f32(x.to_f32()).to_bits().to_le_bytes()),
        }
    }
    out
}

fn from_bytes<E: Element>(b: &[u8]) -> Vec<E> {
    match E::DTYPE {
        Dtype::F32 => b
            .chunks_exact(4)
            .map(|c| E::from_f32(f32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        Dtype::Bf16 => b
            .chunks_exact(2)
            .map(|c| E::from_f32(half::bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32()))
            .collect(),
        Dtype::F16 => b
            .chunks_exact(2)
            .map(|c| E::from_f32(half::f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32()))
            .collect(),
    }
}

/// Uniform in [-1, 1), never exactly zero (xorshift; the same inputs every run).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let u = ((self.0 >> 40) as f32 + 0.5) / (1u64 << 24) as f32;
        2.0 * u - 1.0
    }
    fn fill<E: Element>(&mut self, n: usize) -> Vec<E> {
        (0..n).map(|_| E::from_f32(self.next())).collect()
    }
}

/// The jobs of one kernel: partial tiles on both sides of M and N, K over two chunks with a
/// partial second one, aligned and odd leading dimensions, beta and bias, a single k-tile, and
/// K = 0.
fn jobs(k: &CatalogKernel) -> Vec<Job> {
    let (tm, tn) = (k.tile.m as usize, k.tile.n as usize);
    let (m, n) = (tm + 3, tn + 3);
    let job = |m: usize, n: usize, kk: usize, pad: usize, beta: f32, bias: bool| {
        let (lda, ldb) = match k.op {
            Op::Nn => (kk + pad, n + pad),
            Op::Tn => (m + pad, n + pad),
            Op::Nt => (kk + pad, kk + pad),
        };
        Job {
            g: HostGemm {
                op: k.op,
                m,
                n,
                k: kk,
                lda: lda.max(1),
                ldb: ldb.max(1),
                ldc: n + pad,
                beta,
            },
            bias,
        }
    };
    vec![
        job(m, n, 300, 0, 0.0, false),
        job(m, n, 261, 1, 0.5, true),
        job(tm, tn, 8, 0, 0.0, false),
        job(m, n, 0, 0, 0.0, true),
    ]
}

/// Runs `jobs` on `kernel` through the driver and checks each against the contract's model.
fn check<A: Element, C: Element>(
    driver: &Path,
    kernel: &CatalogKernel,
    dir: &Path,
) -> Result<(), String> {
    assert_eq!(
        kernel.contract, "fma-k256",
        "{}: no CPU model for its contract here",
        kernel.name
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ kernel.id as u64);
    let mut input = Vec::new();
    let mut want: Vec<Vec<u8>> = Vec::new();
    for job in jobs(kernel) {
        let g = job.g;
        let (a_len, b_len) = match g.op {
            Op::Nn => (g.m * g.lda, g.k * g.ldb),
            Op::Tn => (g.k * g.lda, g.k * g.ldb),
            Op::Nt => (g.m * g.lda, g.n * g.ldb),
        };
        let a: Vec<A> = rng.fill(a_len);
        let b: Vec<A> = rng.fill(b_len);
        let bias: Vec<C> = if job.bias { rng.fill(g.n) } else { Vec::new() };
        // Poison: NaN wherever beta does not read C, so an element left unwritten shows.
        let c0: Vec<C> = if g.beta != 0.0 {
            rng.fill(g.m * g.ldc)
        } else {
            vec![C::from_f32(f32::NAN); g.m * g.ldc]
        };
        let mut c = c0.clone();
        fma_k256(&g, &a, &b, job.bias.then_some(&bias[..]), &mut c);
        // Padding columns of C keep the poison in both.
        want.push(to_bytes(&c));
        for v in [g.m, g.n, g.k, g.lda, g.ldb, g.ldc, job.bias as usize] {
            input.extend((v as i32).to_le_bytes());
        }
        input.extend(g.beta.to_le_bytes());
        let parts = [to_bytes(&a), to_bytes(&b), to_bytes(&bias), to_bytes(&c0)];
        for p in &parts {
            input.extend((p.len() as i64).to_le_bytes());
        }
        for p in parts {
            input.extend(p);
        }
    }
    let got = gemm_aot_tests::run_host_driver(driver, &kernel.name, &input, dir)?;
    let mut at = 0;
    for (job, want) in jobs(kernel).iter().zip(&want) {
        let got = &got[at..at + want.len()];
        at += want.len();
        if got != want.as_slice() {
            let (g, w): (Vec<C>, Vec<C>) = (from_bytes(got), from_bytes(want));
            let bad = g
                .iter()
                .zip(&w)
                .enumerate()
                .filter(|(_, (x, y))| x.to_f32().to_bits() != y.to_f32().to_bits())
                .count();
            let first = g
                .iter()
                .zip(&w)
                .position(|(x, y)| x.to_f32().to_bits() != y.to_f32().to_bits())
                .unwrap();
            return Err(format!(
                "{}: {bad} elements differ from fma-k256 at {:?} (first at ({}, {}): {} for {})",
                kernel.name,
                job,
                first / job.g.ldc,
                first % job.g.ldc,
                g[first].to_f32(),
                w[first].to_f32()
            ));
        }
    }
    Ok(())
}

fn check_kernel(driver: &Path, k: &CatalogKernel, dir: &Path) -> Result<(), String> {
    match (k.dtype.ab, k.dtype.c) {
        (Dtype::F32, Dtype::F32) => check::<f32, f32>(driver, k, dir),
        (Dtype::Bf16, Dtype::Bf16) => check::<half::bf16, half::bf16>(driver, k, dir),
        (Dtype::Bf16, Dtype::F32) => check::<half::bf16, f32>(driver, k, dir),
        (ab, c) => panic!("{}: no host check for {ab:?} -> {c:?}", k.name),
    }
}

/// Writes the driver for `kernels` and compiles it (`gemm_aot_tests::build_host_driver`).
fn build_driver(
    catalog: &KernelCatalog,
    kernels: &[&CatalogKernel],
    templates: &Path,
    dir: &Path,
) -> PathBuf {
    let text = driver_source(catalog, kernels, templates);
    gemm_aot_tests::build_host_driver(catalog, &text, templates, dir)
}

#[test]
fn the_plain_kernels_give_their_contracts_bits_on_the_cpu() {
    let (catalog, _) = gemm_aot_tests::catalog(&gemm_aot_tests::shipped_specs());
    let kernels = plain_kernels(&catalog);
    assert!(
        !kernels.is_empty(),
        "no kind of the shipped specs says host_emulation = true"
    );
    let dir = tempfile::tempdir().unwrap();
    let templates = Path::new("../kernels-templates").canonicalize().unwrap();
    let started = std::time::Instant::now();
    let driver = build_driver(&catalog, &kernels, &templates, dir.path());
    eprintln!(
        "host driver of {} kernels compiled in {:.1} s",
        kernels.len(),
        started.elapsed().as_secs_f64()
    );
    // Kernels split over the cores, each worker checking its share in turn.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let failures: Vec<String> = std::thread::scope(|scope| {
        let shares: Vec<_> = (0..workers)
            .map(|w| {
                let (kernels, driver, dir) = (&kernels, &driver, dir.path());
                scope.spawn(move || {
                    kernels
                        .iter()
                        .skip(w)
                        .step_by(workers)
                        .filter_map(|k| {
                            let started = std::time::Instant::now();
                            let r = check_kernel(driver, k, dir);
                            eprintln!(
                                "{} {} ({} jobs, {:.2} s)",
                                if r.is_ok() { "ok  " } else { "FAIL" },
                                k.name,
                                jobs(k).len(),
                                started.elapsed().as_secs_f64()
                            );
                            r.err()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        shares.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs one shipped fma_warp_gemm nn f32 kernel with the text `from` of `file` (under
/// kernels-templates/) replaced by `to` (in a copy of the templates) through the same driver and
/// check, and returns the error.
fn mutated_check(file: &str, from: &str, to: &str) -> Result<(), String> {
    let (catalog, _) = gemm_aot_tests::catalog(&gemm_aot_tests::shipped_specs());
    let kernel = *plain_kernels(&catalog)
        .iter()
        .find(|k| k.template == "fma_warp_gemm" && k.op == Op::Nn && k.dtype.ab == Dtype::F32)
        .expect("a shipped fma_warp_gemm nn f32 kernel");
    let dir = tempfile::tempdir().unwrap();
    let templates =
        gemm_aot_tests::mutated_templates(dir.path(), &["fma", "common"], file, (from, to));
    let driver = build_driver(&catalog, &[kernel], &templates, dir.path());
    check_kernel(&driver, kernel, dir.path())
}

#[test]
fn a_template_that_skips_a_k_fails_the_host_check() {
    // The last k of every full k-tile left out.
    let err = mutated_check(
        "fma/fma_warp_tiles.cuh",
        "for (int kk = 0; kk < BK; ++kk) step(",
        "for (int kk = 0; kk < BK - 1; ++kk) step(",
    )
    .expect_err("the mutated kernel passed");
    assert!(err.contains("elements differ from fma-k256"), "{err}");
}

#[test]
fn a_template_missing_a_barrier_fails_the_host_check() {
    // No barrier between storing the next k-tile and reading it: the threads of the block run
    // on, reading stages the others have not written.
    let err = mutated_check(
        "fma/fma_warp_gemm.cuh",
        "                GEMM_PERTURB(kPerturbConsumerRelease, kt);\n                __syncthreads();",
        "                GEMM_PERTURB(kPerturbConsumerRelease, kt);",
    )
    .expect_err("the kernel without its barrier passed");
    assert!(err.contains("elements differ from fma-k256"), "{err}");
}
