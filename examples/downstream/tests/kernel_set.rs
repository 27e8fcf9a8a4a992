//! The downstream set's tables, without a device: what the builder made from specs/ (with the
//! shipped definitions and the crate's own kind, templates/) is what the runtime serves: one
//! tier, its routes switching by m between the crate's kind and a shipped template of one
//! contract, its own argument struct with its own flag bit, and a set whose argument layout
//! disagrees with its declaration is refused, naming the field and where the specs declare it.

use gemm_downstream_example::KERNELS;
use gemm_runtime::{
    AbiFieldInfo, AbiInfo, Context, Dtype, DtypeTriple, GemmError, KernelSet, KernelSetError, Op,
    Policy, TierId,
};

const BF16: DtypeTriple = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);

#[test]
fn the_set_has_its_own_tier_kinds_and_routes() {
    KERNELS.check().unwrap();
    let names: Vec<&str> = KERNELS.tiers().iter().map(|t| t.name).collect();
    assert_eq!(names, ["sm90a"]);
    // Two families of one tile each, nn f32, bf16 -> bf16 and bf16 -> f32; the shipped
    // definitions' conversions and row kernels, as the shipped set builds them for its sm90a.
    assert_eq!(KERNELS.kernels().len(), 6);
    let shipped = gemm_runtime::shipped();
    let sm90a = shipped.tiers().iter().find(|t| t.name == "sm90a").unwrap();
    let what = |c: &gemm_runtime::ConversionInfo| (c.kind, c.from, c.to, c.contract, c.warp_cols);
    let ours: Vec<_> = KERNELS.conversions().iter().map(what).collect();
    let theirs: Vec<_> = shipped
        .tier_conversions(sm90a.id)
        .iter()
        .map(what)
        .collect();
    assert_eq!(ours, theirs);
    assert!(ours
        .iter()
        .any(|c| matches!(c.0, gemm_runtime::ConversionKind::Row(_))));
    let tier = KERNELS.tier_for_capability((9, 0)).unwrap();
    assert_eq!(tier.id, TierId(0));
    assert!(KERNELS.tier_for_capability((8, 0)).is_none());
    assert!(KERNELS.tier_for_capability((10, 0)).is_none());
    for (m, template, rule) in [
        (1, "fma_row_gemm", 1),
        (8, "fma_row_gemm", 1),
        (9, "fma_gemm", 2),
        (4096, "fma_gemm", 2),
    ] {
        let hit = KERNELS
            .dispatch(tier.id, Policy::Exact, Op::Nn, BF16, m, 1024, 256)
            .unwrap();
        let k = KERNELS.kernel(hit.kernel).unwrap();
        assert_eq!(k.template, template, "m = {m}");
        assert_eq!(k.contract, "fma-k256");
        assert_eq!(hit.rule, rule);
    }
    // What the specs leave out is not routed.
    assert!(KERNELS
        .dispatch(tier.id, Policy::TensorCore, Op::Nn, BF16, 1, 1024, 256)
        .is_none());
    assert!(KERNELS
        .dispatch(tier.id, Policy::Exact, Op::Tn, BF16, 1, 1024, 256)
        .is_none());
    assert_eq!(KERNELS.max_n(tier.id), 65535 * 32);
}

#[test]
fn the_own_kind_and_its_argument_struct_come_from_files_alone() {
    let row = KERNELS
        .kernels()
        .iter()
        .find(|k| k.template == "fma_row_gemm")
        .unwrap();
    assert_eq!(
        row.tile.param("thread_m"),
        Some(2),
        "specs/sm90a.toml's tile"
    );
    assert_eq!(
        row.block_threads,
        8 / 2 * 32,
        "the manifest's threads = (m / thread_m) * n"
    );
    assert_eq!(row.shared_bytes, 0);
    assert_eq!(
        row.tile.describe,
        "2 element(s) a thread down a column, 128 threads"
    );
    assert_eq!(row.abi, "RowArgs");
    let abi = KERNELS.abi("RowArgs").unwrap();
    assert_eq!(abi.flags.len(), 1);
    assert_eq!((abi.flags[0].name, abi.flags[0].bit), ("bias", 3));
    assert_eq!(abi.fields[0].name, "c");
    assert!(
        abi.fields[0].location.starts_with("own.toml:"),
        "{}",
        abi.fields[0].location
    );
    let rows =
        gemm_downstream_example::__gemm_kernels_kernels::RowArgs::bind(&gemm_runtime::ArgSources {
            bias: 0x1000,
            ..Default::default()
        });
    assert_eq!(rows.flags, 1 << 3);
}

#[test]
fn its_shipped_template_kernels_are_the_shipped_kernels_of_that_tile() {
    let shipped = gemm_runtime::shipped();
    let Some(sm90a) = shipped.tier_by_name("sm90a") else {
        panic!("the shipped specs have no sm90a tier");
    };
    let shipped_kernels =
        &shipped.kernels()[sm90a.kernels.start as usize..sm90a.kernels.end as usize];
    for k in KERNELS.kernels().iter().filter(|k| k.family == "fmann") {
        let s = shipped_kernels
            .iter()
            .find(|s| {
                s.family == "fma"
                    && s.tile.name == k.tile.name
                    && (s.op, s.dtype) == (k.op, k.dtype)
            })
            .unwrap_or_else(|| panic!("{} has no shipped sm90a fma kernel of its tile", k.name));
        assert_eq!(
            (
                k.template,
                k.contract,
                k.tile,
                k.block_threads,
                k.shared_bytes,
                k.abi
            ),
            (
                s.template,
                s.contract,
                s.tile,
                s.block_threads,
                s.shared_bytes,
                s.abi
            ),
            "{}",
            k.name
        );
    }
}

#[test]
fn its_cubins_are_embedded_when_built_with_them() {
    let tier = &KERNELS.tiers()[0];
    if KERNELS.cubins_present() {
        assert!(tier.has_cubins());
        for m in tier.modules {
            assert!(m.cubin.starts_with(b"\x7fELF"), "{} is not a cubin", m.name);
        }
    } else {
        // Built with GEMM_AOT_NO_CUBINS: the tables only (a cubin folder carried over from an
        // earlier build may still be embedded, but the set says it has none).
        assert!(std::env::var_os("GEMM_AOT_NO_CUBINS").is_some());
    }
}

#[test]
fn a_set_whose_struct_layout_disagrees_with_its_declaration_is_refused_before_a_device() {
    // The set's own RowArgs, declared with `m` four bytes off: its bind no longer puts m where
    // the declaration says, and the check names the field and its line.
    let mut parts = KERNELS.parts();
    let abis: Vec<AbiInfo> = parts
        .abis
        .iter()
        .map(|a| {
            if a.name != "RowArgs" {
                return *a;
            }
            let fields: Vec<AbiFieldInfo> = a
                .fields
                .iter()
                .map(|f| AbiFieldInfo {
                    offset: if f.name == "m" {
                        f.offset + 4
                    } else {
                        f.offset
                    },
                    ..*f
                })
                .collect();
            AbiInfo {
                fields: Box::leak(fields.into_boxed_slice()),
                ..*a
            }
        })
        .collect();
    parts.abis = Box::leak(abis.into_boxed_slice());
    let set: &'static KernelSet = Box::leak(Box::new(KernelSet::from_parts(parts)));
    let err = Context::with_kernels(0, set).unwrap_err();
    match &err {
        GemmError::KernelSet(KernelSetError::AbiField {
            abi: "RowArgs",
            field: "m",
            location,
            ..
        }) => assert!(location.starts_with("own.toml:"), "{err}"),
        other => panic!("{other}"),
    }
    assert_eq!(err.kind(), "kernel_set");
}
