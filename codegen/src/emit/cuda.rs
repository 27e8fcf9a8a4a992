//! Per-tier CUDA sources: one `extern "C"` entry point per planned kernel, each instantiating
//! its family's template, with `static_assert`s that the template agrees with the spec.

use super::Provenance;
use crate::plan::{Plan, PlannedKernel};
use gemm_spec::{Family, Op};
use std::collections::BTreeSet;
use std::fmt::Write;

fn op_constant(op: Op) -> &'static str {
    match op {
        Op::Nn => "kOpNN",
        Op::Tn => "kOpTN",
        Op::Nt => "kOpNT",
    }
}

fn instantiation(family: &Family, k: &PlannedKernel) -> String {
    let t = &k.tile;
    format!(
        "{}<{}, {}, {}, TileConfig<{}, {}, {}, {}, {}, {}, {}>>",
        family.template,
        k.dtype.ab.cuda_type(),
        k.dtype.c.cuda_type(),
        op_constant(k.op),
        t.m,
        t.n,
        t.k,
        t.stages,
        t.thread_m,
        t.thread_n,
        t.k_split
    )
}

/// The `.cu` file of one tier.
pub fn tier_source(plan: &Plan, tier: &str, prov: &Provenance) -> String {
    let mut out = prov.header_line();
    let _ = writeln!(out, "// Kernels of tier {tier}.");
    out.push_str("#include \"gemm_abi.h\"\n");
    let headers: BTreeSet<&str> = plan
        .tier_kernels(tier)
        .filter_map(|k| plan.specs.families.get(&k.family))
        .map(|f| f.header.as_str())
        .collect();
    let conversion_headers = plan
        .tier_conversions(tier)
        .filter_map(|c| plan.specs.conversions.get(&c.conversion))
        .map(|c| c.header.as_str());
    let headers: BTreeSet<&str> = headers.into_iter().chain(conversion_headers).collect();
    for h in headers {
        let _ = writeln!(out, "#include \"{h}\"");
    }
    for k in plan.tier_kernels(tier) {
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
        let _ = write!(
            out,
            "\n// {} {} {} tile {} ({}x{}x{}), contract {}\n\
             static_assert({inst}::kThreads == {threads}, \"{name}: the spec plans {threads} threads a block but the template uses a different count\");\n\
             static_assert({inst}::kSharedBytes == {smem}, \"{name}: the spec plans {smem} bytes of shared memory but the template needs a different amount\");\n\
             extern \"C\" __global__ void __launch_bounds__({bounds}) {name}(const {abi} args) {{\n    {inst}::run(args);\n}}\n",
            k.family,
            k.op,
            k.dtype,
            k.tile.name,
            k.tile.m,
            k.tile.n,
            k.tile.k,
            k.contract,
            threads = k.threads,
            bounds = match k.tile.min_blocks {
                Some(b) => format!("{}, {b}", k.threads),
                None => k.threads.to_string(),
            },
            smem = k.shared_bytes,
            name = k.name,
            abi = family.abi,
        );
    }
    for c in plan.tier_conversions(tier) {
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
