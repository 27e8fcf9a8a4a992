//! The kernel plan: every kernel each tier instantiates, with a global id, a name built from
//! every axis, its launch shape and shared memory. Everything emitted is derived from this.

use gemm_spec::{
    ConversionKind, Dtype, DtypeTriple, Family, GridKind, MapOperand, Op, SpecSet, Tier, Tile,
};
use thiserror::Error;

/// One kernel to instantiate: a (tier, family, tile, op, dtype) point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedKernel {
    /// Index into the generated `KERNELS` table.
    pub id: usize,
    /// Index into the generated `TIERS` table.
    pub tier_index: usize,
    pub name: String,
    pub tier: String,
    pub family: String,
    pub contract: String,
    pub op: Op,
    pub dtype: DtypeTriple,
    pub tile: Tile,
    pub threads: u32,
    /// Dynamic shared memory per block, as the spec computes it (checked against the template).
    pub shared_bytes: u64,
    /// Index into its tier's modules (`Plan::modules`): the compile unit holding it.
    pub module: usize,
    /// How its grid covers C (the family's).
    pub grid: GridKind,
    /// CTAs a cluster.
    pub cluster: (u32, u32, u32),
    /// The tensor maps it reads, one per tensor_map field of its ABI that it uses.
    pub tensor_maps: Vec<TensorMapPlan>,
}

/// A tensor map a kernel reads: the ABI field that carries it, the operand, and its box in
/// elements of the operand as stored (inner = the contiguous dimension) and swizzle in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapPlan {
    pub field: String,
    pub operand: MapOperand,
    pub box_inner: u32,
    pub box_outer: u32,
    pub swizzle_bytes: u32,
}

/// One conversion kernel to instantiate: a (tier, conversion, from, to) point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedConversion {
    /// Index into the generated `CONVERSIONS` table.
    pub id: usize,
    /// Index into the generated `TIERS` table.
    pub tier_index: usize,
    pub name: String,
    pub tier: String,
    pub conversion: String,
    pub kind: ConversionKind,
    pub from: Dtype,
    pub to: Dtype,
    pub threads: u32,
    /// Index into its tier's modules (`Plan::modules`): the tier's `conversions` unit.
    pub module: usize,
}

/// All kernels of all tiers, tiers sorted by name, kernels in spec order within a tier;
/// every tier also gets every conversion.
#[derive(Clone, Debug)]
pub struct Plan {
    pub specs: SpecSet,
    pub kernels: Vec<PlannedKernel>,
    pub conversions: Vec<PlannedConversion>,
    /// Per tier (by tier index), its compile units in order: each family with kernels on the
    /// tier (in the tier's `families` order), then `conversions` when it has conversions.
    /// Unit `u` of tier `t` is `cuda/<t>/<u>.cu`, compiled to `cubins/<t>/<u>.cubin`.
    pub modules: Vec<Vec<String>>,
}

/// The compile unit of a tier's conversion kernels.
pub const CONVERSIONS_MODULE: &str = "conversions";

/// The tensor maps a kernel of `family` reads for op `op` and tile `tile`: for each
/// tensor_map field of its ABI bound to an operand's map, the box its template loads (none for
/// kinds that do not use TMA, whose kernels ignore the maps).
pub fn tensor_map_plans(
    specs: &SpecSet,
    family: &Family,
    (op, dtype): (Op, DtypeTriple),
    tile: &Tile,
) -> Vec<TensorMapPlan> {
    let Some(abi) = specs.abis.get(&family.abi) else {
        return Vec::new();
    };
    abi.fields
        .iter()
        .filter_map(|f| {
            let operand = f.bind.map_operand()?;
            let (inner, outer, swizzle) =
                gemm_spec::templates::tensor_map_box(family.kind, (op, dtype.c), tile, operand)?;
            Some(TensorMapPlan {
                field: f.name.clone(),
                operand,
                box_inner: inner,
                box_outer: outer,
                swizzle_bytes: swizzle,
            })
        })
        .collect()
}

/// Conversion kernel names: `convert_<tier>_<conversion>_<from>_<to>`, e.g.
/// `convert_sm90a_upcast_bf16_f32`.
pub fn conversion_name(tier: &Tier, conversion: &str, from: Dtype, to: Dtype) -> String {
    format!(
        "convert_{}_{}_{}_{}",
        tier.name,
        conversion,
        from.as_str(),
        to.as_str()
    )
}

/// The kernel naming pattern, documented in the README:
/// `gemm_<tier>_<family>_<op>_<ab>_<c>_<acc>_<tile>_m<M>n<N>k<K>`,
/// e.g. `gemm_sm90a_fma_nn_bf16_bf16_f32_thin_m8n64k32`.
pub fn kernel_name(
    tier: &Tier,
    family: &Family,
    op: Op,
    dtype: DtypeTriple,
    tile: &Tile,
) -> String {
    format!(
        "gemm_{}_{}_{}_{}_{}_{}",
        tier.name,
        family.name,
        op,
        dtype.ident(),
        tile.name,
        tile.shape_ident()
    )
}

/// A spec set whose references do not resolve (validation rules them out; a hand-built
/// [`SpecSet`] can still have them).
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{owner} names {what} `{name}`, which the specs do not define")]
pub struct PlanError {
    pub owner: String,
    pub what: &'static str,
    pub name: String,
}

impl Plan {
    /// Plans every kernel of `specs`; fails only when a reference does not resolve.
    pub fn new(specs: SpecSet) -> Result<Plan, PlanError> {
        let mut kernels = Vec::new();
        let mut modules: Vec<Vec<String>> = Vec::new();
        for (tier_index, tier) in specs.tiers.iter().enumerate() {
            let mut units: Vec<String> = Vec::new();
            for fam in &tier.families {
                if tier.tiles.iter().any(|t| &t.family == fam) && !units.contains(fam) {
                    units.push(fam.clone());
                }
            }
            for tile in &tier.tiles {
                let owner = || format!("tile {}.{} of tier {}", tile.family, tile.name, tier.name);
                let family = specs.families.get(&tile.family).ok_or_else(|| PlanError {
                    owner: owner(),
                    what: "family",
                    name: tile.family.clone(),
                })?;
                if !specs.contracts.contains_key(&family.contract) {
                    return Err(PlanError {
                        owner: format!("family {}", family.name),
                        what: "contract",
                        name: family.contract.clone(),
                    });
                }
                let module = match units.iter().position(|u| *u == family.name) {
                    Some(i) => i,
                    None => {
                        units.push(family.name.clone());
                        units.len() - 1
                    }
                };
                for &(op, dtype) in &family.variants {
                    kernels.push(PlannedKernel {
                        id: kernels.len(),
                        tier_index,
                        name: kernel_name(tier, family, op, dtype, tile),
                        tier: tier.name.clone(),
                        family: family.name.clone(),
                        contract: family.contract.clone(),
                        op,
                        dtype,
                        tile: tile.clone(),
                        threads: tile.threads(),
                        shared_bytes: gemm_spec::shared_bytes_for(family, tile, dtype),
                        module,
                        grid: family.grid,
                        cluster: tile.cluster(),
                        tensor_maps: tensor_map_plans(&specs, family, (op, dtype), tile),
                    });
                }
            }
            if specs.conversions.values().any(|c| !c.variants.is_empty()) {
                units.push(CONVERSIONS_MODULE.to_string());
            }
            modules.push(units);
        }
        let mut conversions = Vec::new();
        for (tier_index, tier) in specs.tiers.iter().enumerate() {
            let module = modules[tier_index]
                .iter()
                .position(|u| u == CONVERSIONS_MODULE)
                .unwrap_or(0);
            for c in specs.conversions.values() {
                for &(from, to) in &c.variants {
                    // Validation admits only pairs that have a kind.
                    let Some(kind) = ConversionKind::of(from, to) else {
                        continue;
                    };
                    conversions.push(PlannedConversion {
                        id: conversions.len(),
                        tier_index,
                        name: conversion_name(tier, &c.name, from, to),
                        tier: tier.name.clone(),
                        conversion: c.name.clone(),
                        kind,
                        from,
                        to,
                        threads: c.threads,
                        module,
                    });
                }
            }
        }
        Ok(Plan {
            specs,
            kernels,
            conversions,
            modules,
        })
    }

    /// The compile units of a tier, by name (empty for a tier not in the plan).
    pub fn tier_modules(&self, tier: &str) -> &[String] {
        self.specs
            .tiers
            .iter()
            .position(|t| t.name == tier)
            .and_then(|i| self.modules.get(i))
            .map_or(&[], |v| v.as_slice())
    }

    /// The kernels of one compile unit of a tier.
    pub fn module_kernels<'a>(
        &'a self,
        tier: &'a str,
        module: usize,
    ) -> impl Iterator<Item = &'a PlannedKernel> {
        self.tier_kernels(tier).filter(move |k| k.module == module)
    }

    /// The conversions of one compile unit of a tier.
    pub fn module_conversions<'a>(
        &'a self,
        tier: &'a str,
        module: usize,
    ) -> impl Iterator<Item = &'a PlannedConversion> {
        self.tier_conversions(tier)
            .filter(move |c| c.module == module)
    }

    pub fn tier_conversions<'a>(
        &'a self,
        tier: &'a str,
    ) -> impl Iterator<Item = &'a PlannedConversion> {
        self.conversions.iter().filter(move |c| c.tier == tier)
    }

    pub fn tier_kernels<'a>(&'a self, tier: &'a str) -> impl Iterator<Item = &'a PlannedKernel> {
        self.kernels.iter().filter(move |k| k.tier == tier)
    }

    /// The kernel a route of `tier` names for one (op, dtype).
    pub fn kernel_for(
        &self,
        tier: &str,
        family: &str,
        tile: &str,
        op: Op,
        dtype: DtypeTriple,
    ) -> Option<&PlannedKernel> {
        self.kernels.iter().find(|k| {
            k.tier == tier
                && k.family == family
                && k.tile.name == tile
                && k.op == op
                && k.dtype == dtype
        })
    }

    /// Output tiles of a kernel for a GEMM of m x n: (ceil(m / tile.m), ceil(n / tile.n), 1);
    /// the launch grid of the `tiles` grid kind (empty when m or n is 0). A persistent kernel
    /// launches min(tiles, co-resident CTAs) instead, which depends on the device.
    pub fn grid(kernel: &PlannedKernel, m: u64, n: u64) -> (u64, u64, u64) {
        (
            m.div_ceil(kernel.tile.m as u64),
            n.div_ceil(kernel.tile.n as u64),
            1,
        )
    }
}
