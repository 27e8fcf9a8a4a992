//! A [`KernelSet`] made in memory from a catalog: the same tiers, contracts, kernels,
//! conversions and routes the generated tables hold, without cubins or argument structs. What
//! `gemm-aot explain` plans over, so it runs gemm-core's `explain`, the one the runtime's
//! `Context::explain` runs on the generated tables: the two print the same.

use crate::catalog::KernelCatalog;
use gemm_core::{
    ContractInfo, ConversionId, ConversionInfo, KernelId, KernelInfo, KernelResources, KernelSet,
    KernelSetParts, ModuleInfo, RouteInfo, TensorMapPlan, TierId, TierInfo, TileShape,
};

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn slice<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn range(ids: impl Iterator<Item = usize>) -> std::ops::Range<u16> {
    let ids: Vec<usize> = ids.collect();
    let first = ids.first().copied().unwrap_or(0) as u16;
    let end = ids.last().map_or(first, |l| *l as u16 + 1);
    first..end
}

/// The catalog's tables as a set (leaked: made once per command). Without cubins, PTX or
/// argument structs: a set to plan and explain over, not to launch.
pub fn kernel_set(catalog: &KernelCatalog) -> &'static KernelSet {
    let specs = &catalog.specs;
    let tiers = specs
        .tiers
        .iter()
        .enumerate()
        .map(|(i, t)| TierInfo {
            id: TierId(i as u16),
            name: leak(&t.name),
            spec_file: leak(&t.file),
            gencode: leak(&t.gencode),
            compute_capability: t.cc,
            arch_specific: t.arch_specific,
            max_shared_bytes: u32::try_from(t.max_shared_bytes).unwrap_or(u32::MAX),
            kernels: range(catalog.tier_kernels(&t.name).map(|k| k.id)),
            conversions: range(catalog.tier_conversions(&t.name).map(|c| c.id)),
            modules: slice(
                catalog
                    .tier_modules(&t.name)
                    .iter()
                    .map(|m| ModuleInfo {
                        name: leak(m),
                        cubin: &[],
                    })
                    .collect(),
            ),
        })
        .collect();
    let contracts = specs
        .contracts
        .values()
        .map(|c| ContractInfo {
            name: leak(&c.name),
            doc: leak(&c.doc),
            inputs: slice(c.inputs.clone()),
        })
        .collect();
    let kernels = catalog
        .kernels
        .iter()
        .map(|k| {
            let family = specs.families.get(&k.family);
            KernelInfo {
                id: KernelId(k.id as u16),
                tier: TierId(k.tier_index as u16),
                module: k.module as u16,
                name: leak(&k.name),
                family: leak(&k.family),
                template: leak(&k.template),
                contract: leak(&k.contract),
                policy: family.map_or(gemm_core::Policy::Exact, |f| f.policy),
                op: k.op,
                dtype: k.dtype,
                tile: TileShape {
                    name: leak(&k.tile.name),
                    m: k.tile.m,
                    n: k.tile.n,
                    k: k.tile.k,
                    params: slice(k.tile.params.iter().map(|(p, v)| (leak(p), *v)).collect()),
                    describe: leak(&k.describe),
                },
                grid: k.grid,
                operands: k.operands,
                cluster: k.cluster,
                batch: k.batch,
                max_k: k.derived.max_k,
                tensor_maps: slice(
                    k.tensor_maps
                        .iter()
                        .map(|m| TensorMapPlan {
                            field: leak(&m.field),
                            operand: m.operand,
                            optional: m.optional,
                            box_inner: m.box_inner,
                            box_outer: m.box_outer,
                            swizzle_bytes: m.swizzle_bytes,
                        })
                        .collect(),
                ),
                block_threads: k.threads,
                shared_bytes: u32::try_from(k.shared_bytes).unwrap_or(u32::MAX),
                min_blocks: k.min_blocks.unwrap_or(0),
                abi: leak(family.map_or("", |f| f.abi.as_str())),
                prepass: k.prepass,
                vector_bytes: k.derived.vector_bytes.unwrap_or(0),
                tile_ps_per_k: k.tile.tile_ps_per_k.unwrap_or(0),
            }
        })
        .collect();
    let conversions = catalog
        .conversions
        .iter()
        .map(|c| ConversionInfo {
            id: ConversionId(c.id as u16),
            tier: TierId(c.tier_index as u16),
            module: c.module as u16,
            name: leak(&c.name),
            kind: c.kind,
            from: c.from,
            to: c.to,
            block_threads: c.threads,
            warp_cols: c.warp_cols,
            abi: leak(
                specs
                    .conversions
                    .get(&c.conversion)
                    .map_or("", |x| x.abi.as_str()),
            ),
            contract: leak(
                specs
                    .conversions
                    .get(&c.conversion)
                    .map_or("", |x| x.contract.as_str()),
            ),
        })
        .collect();
    let mut routes = Vec::new();
    for (ti, tier) in specs.tiers.iter().enumerate() {
        for r in &tier.routes {
            let Some(k) = catalog.kernel_for(&tier.name, &r.family, &r.tile, r.op, r.dtype) else {
                continue;
            };
            let unaligned = r
                .unaligned
                .as_ref()
                .and_then(|u| catalog.kernel_for(&tier.name, &u.family, &u.tile, r.op, r.dtype))
                .map(|u| KernelId(u.id as u16));
            let wave_fit = slice(
                r.wave_fit
                    .iter()
                    .filter_map(|w| {
                        catalog.kernel_for(&tier.name, &w.family, &w.tile, r.op, r.dtype)
                    })
                    .map(|w| KernelId(w.id as u16))
                    .collect(),
            );
            routes.push(RouteInfo {
                tier: TierId(ti as u16),
                rule: u16::try_from(r.rule).unwrap_or(u16::MAX),
                policy: r.policy,
                op: r.op,
                dtype: r.dtype,
                m: r.m,
                n: r.n,
                k: r.k,
                kernel: KernelId(k.id as u16),
                unaligned,
                wave_fit,
                location: leak(&r.location.to_string()),
            });
        }
    }
    let resources = vec![KernelResources::default(); catalog.kernels.len()];
    Box::leak(Box::new(KernelSet::from_parts(KernelSetParts {
        name: "gemm-aot (specs, in memory)",
        tiers: slice(tiers),
        contracts: slice(contracts),
        kernels: slice(kernels),
        conversions: slice(conversions),
        abis: &[],
        routes: slice(routes),
        resources: slice(resources),
        cubins_present: false,
        timing_perturbation: false,
        ptx: &[],
        dispatch: None,
    })))
}
