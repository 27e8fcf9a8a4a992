//! K splits (contract tc-k16-c512, docs/tensor-core.md §9): a split needs a chunked contract, it
//! derives its cluster along z and its largest K from the manifest, and every route that reaches
//! a split kernel (as its kernel or its `unaligned` one) must bound k by that K.

mod support;

use gemm_spec::{Op, Validated};

const SHARED: &str = r#"
[instruction.mmatma]
shape = { m = 16, n = 8, k = 16 }
min_compute_capability = [9, 0]

[instruction.mma16816]
shape = { m = 16, n = 8, k = 16 }
min_compute_capability = [8, 0]

[contract.tc-k16]
doc = "k16 steps in ascending k"
k_step = 16

[contract.tc-k16-c512]
doc = "chunks of 512 k, each a k16 chain from +0, folded in ascending order"
k_step = 16
chunk = 512

[abi.TcGemmArgs]
fields = [
  { name = "a_map", type = "tensor_map", bind = "a.tensor_map" },
  { name = "b_map", type = "tensor_map", bind = "b.tensor_map" },
  { name = "a", type = "const_ptr" },
  { name = "b", type = "const_ptr" },
  { name = "c", type = "mut_ptr" },
  { name = "m", type = "i32" }, { name = "a_batch_stride", type = "i64", bind = "a.batch_stride" }, { name = "b_batch_stride", type = "i64", bind = "b.batch_stride" }, { name = "c_batch_stride", type = "i64", bind = "c.batch_stride" }, { name = "bias_batch_stride", type = "i64", bind = "bias.batch_stride" },
]

[family.split]
template = "mma_decode_tma"
contract = "tc-k16-c512"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mmatma"
variants.nn = ["bf16.bf16.f32"]

[family.chunked]
template = "mma_gemm"
contract = "tc-k16-c512"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
variants.nn = ["bf16.bf16.f32"]

[family.plain]
template = "mma_gemm"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
variants.nn = ["bf16.bf16.f32"]
"#;

const TIER: &str = r#"[tier]
name = "sm90a"
gencode = "arch=compute_90a,code=sm_90a"
compute_capability = [9, 0]
max_shared_bytes = 232448
max_registers_per_thread = 255
families = ["split", "chunked", "plain"]

[[tile]]
family = "split"
name = "s8"
m = 16
n = 64
k = 64
stages = 4
split_k = 8
slots = 16

[[tile]]
family = "chunked"
name = "any"
m = 64
n = 64
k = 32
stages = 2
warps_m = 2
warps_n = 2

[[tile]]
family = "plain"
name = "any"
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
m = { max = 16 }
n = { max = 1024 }
k = { min = 4096, max = 65536 }
kernel = "split.s8"
unaligned = "chunked.any"

[[route]]
policy = "tensor-core"
op = "nn"
dtype = "any"
n = { max = 1024 }
k = { min = 4096, max = 65536 }
kernel = "chunked.any"

[[route]]
policy = "tensor-core"
op = "nn"
dtype = "any"
kernel = "plain.any"
"#;

fn load(tier: &str) -> Result<Validated, Vec<String>> {
    support::load_pair(SHARED, "sm90a.toml", tier)
}

fn tier_errors(from: &str, to: &str) -> Vec<String> {
    assert!(TIER.contains(from), "fixture lacks {from:?}");
    match load(&TIER.replacen(from, to, 1)) {
        Ok(_) => panic!("spec with {from:?} -> {to:?} validated"),
        Err(e) => e,
    }
}

#[test]
fn a_split_derives_its_cluster_along_z_and_its_largest_k() {
    let v = load(TIER).unwrap_or_else(|e| panic!("{e:?}"));
    let tier = v.specs.tier("sm90a").unwrap();
    let tile = tier.tile("split", "s8").unwrap();
    let dtype = "bf16.bf16.f32".parse().unwrap();
    let d = v.specs.derive(tier, tile, Op::Nn, dtype).unwrap().unwrap();
    assert_eq!(d.split_k, 8);
    // split_k * slots * chunk
    assert_eq!(d.max_k, Some(8 * 16 * 512));
    // 4 stages of (16 x 64 + 64 x 64) bf16, the barriers, 16 slots of 16 x 64 f32, the slack.
    assert_eq!(
        d.shared_bytes,
        4 * (16 * 64 + 64 * 64) * 2 + 2 * 4 * 8 + 16 * 16 * 64 * 4 + 1024
    );
    let plain = tier.tile("plain", "any").unwrap();
    let d = v.specs.derive(tier, plain, Op::Nn, dtype).unwrap().unwrap();
    assert_eq!((d.split_k, d.max_k), (1, None));
}

#[test]
fn a_route_to_a_split_must_bound_k_by_its_largest_k() {
    let errors = tier_errors(
        "k = { min = 4096, max = 65536 }\nkernel = \"split.s8\"",
        "k = { min = 4096 }\nkernel = \"split.s8\"",
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("route 1: kernel `split.s8`")
                && e.contains("takes k up to 65536")
                && e.contains("the route sends any k")
                && e.contains("k = { max = 65536 }")),
        "{errors:?}"
    );
    let errors = tier_errors(
        "k = { min = 4096, max = 65536 }\nkernel = \"split.s8\"",
        "k = { min = 4096, max = 70000 }\nkernel = \"split.s8\"",
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("the route sends k up to 70000")),
        "{errors:?}"
    );
}

#[test]
fn a_split_needs_a_chunked_contract_and_a_portable_cluster() {
    let errors = tier_errors("split_k = 8", "split_k = 16");
    assert!(
        errors.iter().any(|e| e.contains("split_k in [1, 2, 4, 8]")),
        "{errors:?}"
    );
    let errors = tier_errors("slots = 16", "slots = 0");
    assert!(errors.iter().any(|e| e.contains("slots")), "{errors:?}");
    // The same tile on a family of tc-k16: one chain over K cannot be split.
    let errors = load_with_family_contract("tc-k16");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("a K split needs a chunked contract")),
        "{errors:?}"
    );
}

/// The base specs with family `split` implementing `contract` (and the routes that would mix
/// contracts left out).
fn load_with_family_contract(contract: &str) -> Vec<String> {
    let shared = SHARED.replacen(
        "template = \"mma_decode_tma\"\ncontract = \"tc-k16-c512\"",
        &format!("template = \"mma_decode_tma\"\ncontract = \"{contract}\""),
        1,
    );
    match support::load_pair(&shared, "sm90a.toml", TIER) {
        Ok(_) => panic!("a split of contract {contract} validated"),
        Err(e) => e,
    }
}
