//! CUDA sources, one translation unit per (tier, family) and one for a tier's conversions.
//! Each planned kernel gets its config struct, every number its template's manifest derives
//! for it (the tile, each parameter, each `let`, the tensor-map boxes and swizzles, the
//! contract's step and chunk, the tier's shared-memory cap), and one `extern "C"` entry point
//! instantiating the template with it. The template reads those constants and checks its own
//! layout against them; nothing here restates a template's rules.

use super::{Instrumentation, Provenance};
use crate::catalog::{CatalogConversion, CatalogKernel, KernelCatalog, CONVERSIONS_MODULE};
use gemm_spec::kinds::config_constant;
use gemm_spec::{Family, Op, SpecSet};
use std::collections::BTreeSet;
use std::fmt::Write;

fn op_constant(op: Op) -> &'static str {
    match op {
        Op::Nn => "kOpNN",
        Op::Tn => "kOpTN",
        Op::Nt => "kOpNT",
    }
}

/// `static constexpr int NAME = value;` (or `long long` for a value past `int`), with a comment.
fn constant(out: &mut String, name: &str, value: i64, comment: &str) {
    let ty = if i32::try_from(value).is_ok() {
        "int"
    } else {
        "long long"
    };
    let _ = write!(out, "    static constexpr {ty} {name} = {value};");
    if comment.is_empty() {
        out.push('\n');
    } else {
        let _ = writeln!(out, "  // {comment}");
    }
}

/// The name of a kernel's config struct.
pub fn config_name(kernel: &str) -> String {
    format!("{kernel}_cfg")
}

/// A kernel's config struct: every value its template reads, evaluated from the manifest.
fn config_struct(specs: &SpecSet, family: &Family, k: &CatalogKernel) -> String {
    let kind = &family.kind;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// The config of {}: tile {} of family {} ({}), from template {}'s manifest ({}).",
        k.name, k.tile.name, k.family, k.tile.location, kind.template, kind.manifest
    );
    let _ = writeln!(out, "struct {} {{", config_name(&k.name));
    constant(&mut out, "M", k.tile.m.into(), "rows of C a block computes");
    constant(
        &mut out,
        "N",
        k.tile.n.into(),
        "columns of C a block computes",
    );
    constant(&mut out, "K", k.tile.k.into(), "the tile's k");
    for (name, value) in &k.derived.values {
        let (constant_name, comment) = match kind.param(name) {
            Some(p) => (config_constant(name, true), p.doc.clone()),
            None => (
                config_constant(name, false),
                kind.lets
                    .iter()
                    .find(|l| &l.name == name)
                    .map_or(String::new(), |l| l.value.text().to_string()),
            ),
        };
        constant(&mut out, &constant_name, *value, &comment);
    }
    for m in &k.derived.tensor_maps {
        let x = m.operand.to_string();
        let what = format!("tensor map of {x}");
        constant(
            &mut out,
            &format!("k{x}BoxInner"),
            m.box_inner.into(),
            &format!("{what}: box along the contiguous dimension"),
        );
        constant(
            &mut out,
            &format!("k{x}BoxOuter"),
            m.box_outer.into(),
            &format!("{what}: box along the rows"),
        );
        constant(
            &mut out,
            &format!("kSwizzle{x}"),
            m.swizzle_bytes.into(),
            &format!("{what}: swizzle bytes"),
        );
    }
    if let Some(c) = specs.contracts.get(&k.contract) {
        constant(
            &mut out,
            "kStepK",
            c.k_step.into(),
            &format!("contract {}: k of one step", c.name),
        );
        constant(
            &mut out,
            "kChunk",
            c.chunk.into(),
            &format!("contract {}: K chunk (0: none)", c.name),
        );
    }
    if specs.families.get(&k.family).is_some_and(|f| f.kind.batch) {
        constant(
            &mut out,
            "kBatch",
            k.batch.into(),
            "1: a batch kernel of its tier (grid z walks a strided batch); 0: one GEMM a launch",
        );
    }
    if let Some(t) = specs.tier(&k.tier) {
        constant(
            &mut out,
            "kMaxSharedBytes",
            t.max_shared_bytes as i64,
            &format!("tier {}: shared memory a block may have", t.name),
        );
    }
    out.push_str("};\n");
    out
}

/// One GEMM kernel of a compile unit: its config struct (the manifest's numbers for its tile)
/// and its `extern "C"` entry calling the template. Also what the host emulation of the plain
/// kinds compiles (tests/host_kernels.rs).
pub fn gemm_entry(specs: &SpecSet, k: &CatalogKernel) -> String {
    // `KernelCatalog::new` resolved every family; a catalog edited since fails in nvcc, by name.
    let Some(family) = specs.families.get(&k.family) else {
        return format!(
            "#error \"{}: family {} is not in the specs\"\n",
            k.name, k.family
        );
    };
    let cfg = config_name(&k.name);
    let inst = format!(
        "{}<{}, {}, {}, {cfg}>",
        family.kind.template,
        k.dtype.ab.cuda_type(),
        k.dtype.c.cuda_type(),
        // The layout its body reads: nn for a tn kernel that reads A's transposed copy.
        op_constant(k.prepass.layout(k.op)),
    );
    let grid_constant = specs
        .abis
        .get(&family.abi)
        .is_some_and(|a| a.has_tensor_map());
    let bounds = match k.min_blocks {
        Some(b) => format!("{}, {b}", k.threads),
        None => k.threads.to_string(),
    };
    let reads = match k.prepass.as_str() {
        Some(p) => format!(" (prepass {p}: reads A as nn)"),
        None => String::new(),
    };
    format!(
        "\n// {} {}{reads} {} tile {} ({}x{}x{}), contract {}\n{}extern \"C\" __global__ void __launch_bounds__({bounds}) {}(const {}{} args) {{\n    {inst}::run(args);\n}}\n",
        k.family,
        k.op,
        k.dtype,
        k.tile.name,
        k.tile.m,
        k.tile.n,
        k.tile.k,
        k.contract,
        config_struct(specs, family, k),
        k.name,
        if grid_constant { "__grid_constant__ " } else { "" },
        family.abi,
    )
}

/// One conversion kernel of a compile unit: its config struct and its `extern "C"` entry
/// calling the template. Also what the host emulation of the conversions compiles
/// (tests/host_conversions.rs).
pub fn conversion_entry(specs: &SpecSet, c: &CatalogConversion) -> String {
    let Some(conv) = specs.conversions.get(&c.conversion) else {
        return format!(
            "#error \"{}: conversion {} is not in the specs\"\n",
            c.name, c.conversion
        );
    };
    let cfg = config_name(&c.name);
    // A row kernel's op, as its template reads it (RowOp::template_code).
    let op = match conv.row_op {
        Some(op) => format!(
            "\n    static constexpr int kOp = {};  // row op {op}, contract {}\n    static constexpr int kWarpCols = {};  // rows this long or shorter: a warp a row\n    static constexpr bool kHalvingFold = {};  // the warp path's fold: {}",
            op.template_code(),
            conv.contract,
            c.warp_cols,
            conv.halving_fold,
            if conv.halving_fold { "one recursive halving" } else { "one butterfly a warp" },
        ),
        None => String::new(),
    };
    // The spec's blocks an SM for this kernel, if any, as the launch bounds' minimum.
    let bounds = match c.min_blocks {
        0 => c.threads.to_string(),
        n => format!("{}, {n}", c.threads),
    };
    format!(
        "\n// conversion {} {} -> {}\nstruct {cfg} {{\n    static constexpr int kThreads = {threads};  // threads a block{op}\n}};\nextern \"C\" __global__ void __launch_bounds__({bounds}) {name}(const {abi} args) {{\n    {template}<{from}, {to}, {cfg}>::run(args);\n}}\n",
        c.conversion,
        c.from,
        c.to,
        threads = c.threads,
        name = c.name,
        abi = conv.abi,
        template = conv.kind.template,
        from = c.from.cuda_type(),
        to = c.to.cuda_type(),
    )
}

/// The `.cu` file of one compile unit of a tier: a family's kernels, or (module
/// `conversions`) the conversion kernels.
pub fn unit_source(
    catalog: &KernelCatalog,
    tier: &str,
    module: usize,
    prov: &Provenance,
    instrumentation: Instrumentation,
) -> String {
    let specs = &catalog.specs;
    let unit = catalog
        .tier_modules(tier)
        .get(module)
        .map_or("", String::as_str);
    let mut out = prov.header_line();
    if unit == CONVERSIONS_MODULE {
        let _ = writeln!(out, "// Conversion kernels of tier {tier}.");
    } else {
        let _ = writeln!(out, "// Kernels of family {unit}, tier {tier}.");
    }
    if instrumentation.timing_perturbation {
        out.push_str(
            "// Timing-perturbation build: seeded delays at every pipeline step (common/timing_perturbation.cuh). Never shipped.\n\
             #define GEMM_AOT_TIMING_PERTURBATION 1\n",
        );
    }
    out.push_str("#include \"gemm_abi.h\"\n");
    let headers: BTreeSet<&str> = catalog
        .module_kernels(tier, module)
        .filter_map(|k| specs.families.get(&k.family))
        .map(|f| f.header())
        .chain(
            catalog
                .module_conversions(tier, module)
                .filter_map(|c| specs.conversions.get(&c.conversion))
                .map(|c| c.kind.header.as_str()),
        )
        .collect();
    for h in headers {
        let _ = writeln!(out, "#include \"{h}\"");
    }
    for k in catalog.module_kernels(tier, module) {
        out.push_str(&gemm_entry(specs, k));
    }
    for c in catalog.module_conversions(tier, module) {
        out.push_str(&conversion_entry(specs, c));
    }
    out
}
