//! CUDA sources, one translation unit per (tier, family) and one for a tier's conversions:
//! one `extern "C"` entry point per planned kernel, each instantiating its family's template,
//! with `static_assert`s that the template agrees with the spec (threads, shared memory, and
//! for tensor-core kinds the cluster and every tensor-map box and swizzle).

use super::{Instrumentation, Provenance};
use crate::plan::{Plan, PlannedKernel, CONVERSIONS_MODULE};
use gemm_spec::{Family, MapOperand, Op, TileParams};
use std::collections::BTreeSet;
use std::fmt::Write;

fn op_constant(op: Op) -> &'static str {
    match op {
        Op::Nn => "kOpNN",
        Op::Tn => "kOpTN",
        Op::Nt => "kOpNT",
    }
}

/// The template's configuration type for the tile (see `gemm_spec::templates`).
fn config(k: &PlannedKernel) -> String {
    let t = &k.tile;
    match &t.params {
        TileParams::Scalar(p) => format!(
            "TileConfig<{}, {}, {}, {}, {}, {}, {}>",
            t.m, t.n, t.k, p.stages, p.thread_m, p.thread_n, p.k_split
        ),
        TileParams::WgmmaTma(p) => format!(
            "WgmmaConfig<{}, {}, {}, {}, {}, {}>",
            t.m, t.n, t.k, p.stages, p.consumers, p.cluster_m
        ),
        TileParams::MmaDecodeTma(p) => {
            format!("MmaDecodeConfig<{}, {}, {}, {}>", t.m, t.n, t.k, p.stages)
        }
        TileParams::MmaGemm(p) => format!(
            "MmaConfig<{}, {}, {}, {}, {}, {}>",
            t.m, t.n, t.k, p.warps_m, p.warps_n, p.stages
        ),
        TileParams::MmaAsync(p) => format!(
            "MmaConfig<{}, {}, {}, {}, {}, {}>",
            t.m, t.n, t.k, p.warps_m, p.warps_n, p.stages
        ),
    }
}

fn instantiation(family: &Family, k: &PlannedKernel) -> String {
    format!(
        "{}<{}, {}, {}, {}>",
        family.template,
        k.dtype.ab.cuda_type(),
        k.dtype.c.cuda_type(),
        op_constant(k.op),
        config(k)
    )
}

/// The `static_assert`s beyond threads and shared memory: the cluster, and each tensor map's
/// box and swizzle, for the kinds whose templates declare them.
fn tensor_core_asserts(family: &Family, k: &PlannedKernel, inst: &str) -> String {
    let mut out = String::new();
    let name = &k.name;
    if family.kind.has_cluster_constant() {
        let cm = k.cluster.0;
        let _ = writeln!(
            out,
            "static_assert({inst}::kClusterM == {cm}, \"{name}: the spec plans clusters of {cm} CTA(s) along M but the template uses another size\");"
        );
    }
    for map in &k.tensor_maps {
        let (x, what) = match map.operand {
            MapOperand::A => ("A", "A"),
            MapOperand::B => ("B", "B"),
            MapOperand::C => ("C", "C"),
        };
        for (constant, value, meaning) in [
            (format!("k{x}BoxInner"), map.box_inner, "box inner extent"),
            (format!("k{x}BoxOuter"), map.box_outer, "box outer extent"),
            (format!("kSwizzle{x}"), map.swizzle_bytes, "swizzle bytes"),
        ] {
            let _ = writeln!(
                out,
                "static_assert({inst}::{constant} == {value}, \"{name}: the kernel table's tensor map of {what} ({}) has {meaning} {value} but the template uses another\");",
                map.field
            );
        }
    }
    out
}

/// The `.cu` file of one compile unit of a tier: a family's kernels, or (module
/// `conversions`) the conversion kernels.
pub fn unit_source(
    plan: &Plan,
    tier: &str,
    module: usize,
    prov: &Provenance,
    instrumentation: Instrumentation,
) -> String {
    let unit = plan
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
    let headers: BTreeSet<&str> = plan
        .module_kernels(tier, module)
        .filter_map(|k| plan.specs.families.get(&k.family))
        .map(|f| f.header.as_str())
        .collect();
    let conversion_headers = plan
        .module_conversions(tier, module)
        .filter_map(|c| plan.specs.conversions.get(&c.conversion))
        .map(|c| c.header.as_str());
    let headers: BTreeSet<&str> = headers.into_iter().chain(conversion_headers).collect();
    for h in headers {
        let _ = writeln!(out, "#include \"{h}\"");
    }
    for k in plan.module_kernels(tier, module) {
        // `Plan::new` resolved every family; a plan edited since fails in nvcc, by name.
        let Some(family) = plan.specs.families.get(&k.family) else {
            let _ = writeln!(
                out,
                "#error \"{}: family {} is not in the specs\"",
                k.name, k.family
            );
            continue;
        };
        let inst = instantiation(family, k);
        let grid_constant = plan
            .specs
            .abis
            .get(&family.abi)
            .is_some_and(|a| a.has_tensor_map());
        let _ = write!(
            out,
            "\n// {} {} {} tile {} ({}x{}x{}), contract {}\n\
             static_assert({inst}::kThreads == {threads}, \"{name}: the spec plans {threads} threads a block but the template uses a different count\");\n\
             static_assert({inst}::kSharedBytes == {smem}, \"{name}: the spec plans {smem} bytes of shared memory but the template needs a different amount\");\n\
             {extra}\
             extern \"C\" __global__ void __launch_bounds__({bounds}) {name}(const {grid_constant}{abi} args) {{\n    {inst}::run(args);\n}}\n",
            k.family,
            k.op,
            k.dtype,
            k.tile.name,
            k.tile.m,
            k.tile.n,
            k.tile.k,
            k.contract,
            threads = k.threads,
            bounds = match k.tile.min_blocks() {
                Some(b) => format!("{}, {b}", k.threads),
                None => k.threads.to_string(),
            },
            smem = k.shared_bytes,
            name = k.name,
            abi = family.abi,
            extra = tensor_core_asserts(family, k, &inst),
            grid_constant = if grid_constant { "__grid_constant__ " } else { "" },
        );
    }
    for c in plan.module_conversions(tier, module) {
        let Some(conv) = plan.specs.conversions.get(&c.conversion) else {
            let _ = writeln!(
                out,
                "#error \"{}: conversion {} is not in the specs\"",
                c.name, c.conversion
            );
            continue;
        };
        let inst = format!(
            "{}<{}, {}, {}>",
            conv.template,
            c.from.cuda_type(),
            c.to.cuda_type(),
            c.threads
        );
        let _ = write!(
            out,
            "\n// conversion {} {} -> {}\n\
             static_assert({inst}::kThreads == {threads}, \"{name}: the spec plans {threads} threads a block but the template uses a different count\");\n\
             extern \"C\" __global__ void __launch_bounds__({threads}) {name}(const {abi} args) {{\n    {inst}::run(args);\n}}\n",
            c.conversion,
            c.from,
            c.to,
            threads = c.threads,
            name = c.name,
            abi = conv.abi,
        );
    }
    out
}
