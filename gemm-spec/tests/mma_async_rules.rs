//! The portable tensor-core kind `mma_async_gemm` (kernels-templates/mma/mma_async_gemm.cuh):
//! its typed tile parameters, each static_assert of the template as a located spec rule, and
//! its routes' `unaligned` kernel (cp.async needs 16-byte aligned operands, as TMA does).

mod support;

use gemm_spec::Validated;

const SHARED: &str = r#"
[instruction.mma16816]
shape = { m = 16, n = 8, k = 16 }
min_compute_capability = [8, 0]

[contract.tc-k16]
doc = "k16 steps in ascending k"
k_step = 16

[abi.TcGemmArgs]
fields = [
  { name = "a", type = "const_ptr" },
  { name = "b", type = "const_ptr" },
  { name = "c", type = "mut_ptr" },
  { name = "m", type = "i32" }, { name = "a_batch_stride", type = "i64", bind = "a.batch_stride" }, { name = "b_batch_stride", type = "i64", bind = "b.batch_stride" }, { name = "c_batch_stride", type = "i64", bind = "c.batch_stride" }, { name = "bias_batch_stride", type = "i64", bind = "bias.batch_stride" },
]

[family.async]
template = "mma_async_gemm"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]

[family.plain]
template = "mma_gemm"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]
"#;

const TIER: &str = r#"[tier]
name = "sm80"
gencode = "arch=compute_80,code=sm_80"
compute_capability = [8, 0]
max_shared_bytes = 101376
max_registers_per_thread = 255
families = ["async", "plain"]

[[tile]]
family = "async"
name = "wide"
m = 128
n = 128
k = 32
stages = 4
warps_m = 2
warps_n = 4
min_blocks = 2

[[tile]]
family = "plain"
name = "p"
m = 64
n = 64
k = 32
stages = 2
warps_m = 2
warps_n = 2

[[route]]
policy = "tensor-core"
op = "nn"
dtype = "any"
kernel = "async.wide"
unaligned = "plain.p"
"#;

fn load(shared: &str, tier: &str) -> Result<Validated, Vec<String>> {
    support::load_pair(shared, "sm80.toml", tier)
}

/// The errors of the base spec with one replacement made in the tier file.
fn tier_errors(from: &str, to: &str) -> Vec<String> {
    assert!(TIER.contains(from), "fixture lacks {from:?}");
    match load(SHARED, &TIER.replacen(from, to, 1)) {
        Ok(_) => panic!("spec with {from:?} -> {to:?} validated"),
        Err(e) => e,
    }
}

fn assert_one(errors: Vec<String>, want: &str) {
    assert_eq!(errors, [want]);
}

#[test]
fn the_base_spec_is_valid_and_counts_as_the_template_does() {
    let v = load(SHARED, TIER).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    let t = v.specs.tier("sm80").unwrap();
    let wide = t.tile("async", "wide").unwrap();
    assert_eq!(v.specs.families["async"].template(), "mma_async_gemm");
    assert_eq!(wide.param("stages"), Some(4));
    let d = support::derived(
        &v,
        "sm80",
        "async",
        "wide",
        "bf16.bf16.f32".parse().unwrap(),
    );
    assert_eq!(d.threads, 32 * 2 * 4);
    assert_eq!(d.min_blocks, Some(2), "__launch_bounds__(256, 2)");
    // kSharedBytes = STAGES * (M * K + K * N) * sizeof(TAB): no padding, no barriers.
    assert_eq!(d.shared_bytes, 4 * (128 * 32 + 32 * 128) * 2);
    assert_eq!(
        t.routes[0]
            .unaligned
            .as_ref()
            .map(|u| u.to_string())
            .as_deref(),
        Some("plain.p")
    );
}

#[test]
fn each_static_assert_of_the_template_is_a_located_rule() {
    assert_one(
        tier_errors("k = 32\nstages = 4", "k = 48\nstages = 4"),
        format!("sm80.toml:9: tile async.wide 128x128x48: template mma_async_gemm needs k in [16, 32] || k % 64 == 0 (k = 48): a stage holds k-contiguous rows of A or B, which the chunk swizzle needs to be 32 or 64 bytes or whole 128-byte lines ({})", support::block_at("mma/mma_async_gemm.toml", "rule = \"k in [16, 32] || k % 64 == 0\"")).as_str(),
    );
    assert_one(
        tier_errors("m = 128\nn = 128", "m = 96\nn = 128"),
        format!("sm80.toml:9: tile async.wide 96x128x32: template mma_async_gemm needs m in [16, 32] || m % 64 == 0 (m = 96): tn stages A as rows of m elements, which the chunk swizzle needs to be 32 or 64 bytes or whole 128-byte lines ({})", support::block_at("mma/mma_async_gemm.toml", "rule = \"m in [16, 32] || m % 64 == 0\"")).as_str(),
    );
    assert_one(
        tier_errors("warps_n = 4\n", "warps_n = 16\n"),
        format!("sm80.toml:9: tile async.wide 128x128x32: template mma_async_gemm needs n % (16 * warps_n) == 0 (n = 128, warps_n = 16): each warp loads B's fragments in pairs of 8 columns (one ldmatrix.x4) ({})", support::block_at("mma/mma_async_gemm.toml", "rule = \"n % (16 * warps_n) == 0\"")).as_str(),
    );
    assert_one(
        tier_errors("n = 128\nk = 32\nstages = 4\nwarps_m = 2\nwarps_n = 4", "n = 96\nk = 32\nstages = 4\nwarps_m = 2\nwarps_n = 2"),
        format!("sm80.toml:9: tile async.wide 128x96x32: template mma_async_gemm needs n in [16, 32] || n % 64 == 0 (n = 96): nn and tn stage B as rows of n elements, which the chunk swizzle needs to be 32 or 64 bytes or whole 128-byte lines ({})", support::block_at("mma/mma_async_gemm.toml", "rule = \"n in [16, 32] || n % 64 == 0\"")).as_str(),
    );
    assert_one(
        tier_errors("warps_m = 2\nwarps_n = 4", "warps_m = 16\nwarps_n = 4"),
        format!("sm80.toml:9: tile async.wide 128x128x32: template mma_async_gemm needs m % (16 * warps_m) == 0 (m = 128, warps_m = 16): each warp covers whole 16-row mma.sync fragments ({})", support::block_at("mma/mma_async_gemm.toml", "rule = \"m % (16 * warps_m) == 0\"")).as_str(),
    );
    assert_one(
        tier_errors("stages = 4\nwarps_m = 2\nwarps_n = 4", "stages = 1\nwarps_m = 2\nwarps_n = 4"),
        format!("sm80.toml:9: tile async.wide 128x128x32: template mma_async_gemm needs stages >= 2 && stages <= 8 (stages = 1): the cp.async pipeline keeps stages - 1 stages in flight while one is computed ({})", support::block_at("mma/mma_async_gemm.toml", "rule = \"stages >= 2 && stages <= 8\"")).as_str(),
    );
}

#[test]
fn its_keys_are_typed_and_stages_have_no_default() {
    assert_one(
        tier_errors("min_blocks = 2\n", "min_blocks = 2\nconsumers = 2\n"),
        "sm80.toml:19: tile async.wide: `consumers` is not a parameter of template mma_async_gemm (family async, mma/mma_async_gemm.toml); its keys are family, name, m, n, k, stages, warps_m, warps_n, min_blocks",
    );
    assert_one(
        tier_errors("k = 32\nstages = 4\n", "k = 32\n"),
        "sm80.toml:9: tile async.wide: needs `stages` (cp.async stages (stages - 1 in flight while one is computed)): template mma_async_gemm has no default for it",
    );
    assert_one(
        tier_errors("min_blocks = 2\n", "min_blocks = 0\n"),
        "sm80.toml:18: tile async.wide: `min_blocks` = 0, but its least value is 1 (CTAs an SM the kernel's launch bounds ask for (mma.sync hides its latency with warps of other blocks); none when omitted); leave it out for none",
    );
}

#[test]
fn shared_memory_is_checked_against_the_tier() {
    assert_one(
        tier_errors("stages = 4\nwarps_m = 2\nwarps_n = 4", "stages = 8\nwarps_m = 2\nwarps_n = 4"),
        "sm80.toml:9: tile async.wide 128x128x32 needs 131072 bytes of shared memory; sm80 allows 101376",
    );
}

#[test]
fn its_routes_name_an_unaligned_kernel_that_needs_no_alignment() {
    assert_one(
        tier_errors("kernel = \"async.wide\"\nunaligned = \"plain.p\"\n", "kernel = \"async.wide\"\n"),
        "sm80.toml:30: route 1: kernel `async.wide` is a mma_async_gemm kernel, which copies A and B in 16-byte cp.async chunks: the route needs `unaligned = \"family.tile\"`, a plain-load kernel of contract tc-k16 for operands it cannot take",
    );
    assert_one(
        tier_errors("unaligned = \"plain.p\"\n", "unaligned = \"async.wide\"\n"),
        "sm80.toml:30: route 1: unaligned kernel `async.wide` is a mma_async_gemm kernel, which copies A and B in 16-byte cp.async chunks too: name a plain-load kernel (e.g. of template mma_gemm)",
    );
}
