//! The kernel plan: every kernel each tier instantiates, with a global id, a name built from
//! every axis, its launch shape and shared memory. Everything emitted is derived from this.

use gemm_spec::{ConversionKind, Dtype, DtypeTriple, Family, Op, SpecSet, Tier, Tile};
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
}

/// All kernels of all tiers, tiers sorted by name, kernels in spec order within a tier;
/// every tier also gets every conversion.
#[derive(Clone, Debug)]
pub struct Plan {
    pub specs: SpecSet,
    pub kernels: Vec<PlannedKernel>,
    pub conversions: Vec<PlannedConversion>,
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
        for (tier_index, tier) in specs.tiers.iter().enumerate() {
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
                    });
                }
            }
        }
        let mut conversions = Vec::new();
        for (tier_index, tier) in specs.tiers.iter().enumerate() {
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
                    });
                }
            }
        }
        Ok(Plan {
            specs,
            kernels,
            conversions,
        })
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

    /// Launch grid of a kernel for a GEMM of m x n (the `tiles` grid kind); empty when m or n is 0.
    pub fn grid(kernel: &PlannedKernel, m: u64, n: u64) -> (u64, u64, u64) {
        (
            m.div_ceil(kernel.tile.m as u64),
            n.div_ceil(kernel.tile.n as u64),
            1,
        )
    }
}
