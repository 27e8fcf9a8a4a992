//! The kernel catalog: every kernel each tier instantiates, with a global id, a name built from
//! every axis, and every number its template's manifest derives for it (threads, shared memory,
//! cluster, launch bounds, tensor maps, the values of its config). Everything emitted is
//! derived from this.

use gemm_spec::kinds::{describe, Derived};
use gemm_spec::{
    ConversionKind, Dtype, DtypeTriple, Family, GridKind, MapOperand, Op, OperandPath, Prepass,
    SpecSet, Tier, Tile,
};
use thiserror::Error;

/// One kernel to instantiate: a (tier, family, tile, op, dtype) point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogKernel {
    /// Index into the generated `KERNELS` table.
    pub id: usize,
    /// Index into the generated `TIERS` table.
    pub tier_index: usize,
    pub name: String,
    pub tier: String,
    pub family: String,
    /// The kernel template (its kind).
    pub template: String,
    pub contract: String,
    pub op: Op,
    pub dtype: DtypeTriple,
    /// A copy its launch makes first (its family's `prepass`).
    pub prepass: Prepass,
    pub tile: Tile,
    /// What the template's manifest derives for this kernel.
    pub derived: Derived,
    /// The manifest's one-line description of the tile, filled.
    pub describe: String,
    pub threads: u32,
    /// Dynamic shared memory per block (the manifest's `shared_bytes`).
    pub shared_bytes: u64,
    /// Index into its tier's modules (`KernelCatalog::modules`): the compile unit holding it.
    pub module: usize,
    /// How its grid covers C (its template's).
    pub grid: GridKind,
    /// How it reads A and B (its template's).
    pub operands: OperandPath,
    /// CTAs a cluster.
    pub cluster: (u32, u32, u32),
    /// It runs strided batches in one launch: its tier lists it among its `batch_kernels`
    /// (validation checked that its kind is batched).
    pub batch: bool,
    /// `__launch_bounds__`'s blocks an SM, if any.
    pub min_blocks: Option<u32>,
    /// The tensor maps it reads, each carried by a tensor_map field of its ABI.
    pub tensor_maps: Vec<TensorMapPlan>,
}

/// A tensor map a kernel reads: the ABI field that carries it, the operand, and its box in
/// elements of the operand as stored (inner = the contiguous dimension) and swizzle in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapPlan {
    pub field: String,
    pub operand: MapOperand,
    /// Used when the operand can take TMA; the kernel runs without it otherwise.
    pub optional: bool,
    pub box_inner: u32,
    pub box_outer: u32,
    pub swizzle_bytes: u32,
}

/// One conversion kernel to instantiate: a (tier, conversion, from, to) point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogConversion {
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
    /// A row kernel's warp-path length (`Cfg::kWarpCols`); 0 for an elementwise conversion.
    pub warp_cols: u32,
    /// The blocks an SM a row kernel is built for (`__launch_bounds__(threads, n)`, from its
    /// spec's `min_blocks`); 0: no bound.
    pub min_blocks: u32,
    /// Index into its tier's modules: the tier's `conversions` unit.
    pub module: usize,
}

/// All kernels of all tiers, tiers sorted by name, kernels in spec order within a tier;
/// every tier also gets every conversion.
#[derive(Clone, Debug)]
pub struct KernelCatalog {
    pub specs: SpecSet,
    pub kernels: Vec<CatalogKernel>,
    pub conversions: Vec<CatalogConversion>,
    /// Per tier (by tier index), its compile units in order: each family with kernels on the
    /// tier (in the tier's `families` order), then `conversions` when it has conversions.
    /// Unit `u` of tier `t` is `cuda/<t>/<u>.cu`, compiled to `cubins/<t>/<u>.cubin`.
    pub modules: Vec<Vec<String>>,
}

/// The compile unit of a tier's conversion kernels (gemm-core's, which the runtime reads).
pub use gemm_core::CONVERSIONS_MODULE;

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

/// A spec set whose references do not resolve or whose manifests cannot be evaluated
/// (validation rules both out; a hand-built [`SpecSet`] can still have them).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CatalogError {
    #[error("{owner} names {what} `{name}`, which the specs do not define")]
    Unresolved {
        owner: String,
        what: &'static str,
        name: String,
    },
    #[error("kernel {kernel}: {error}")]
    Derive { kernel: String, error: String },
}

impl KernelCatalog {
    /// Catalogues every kernel of `specs`; fails only when a reference does not resolve or a
    /// manifest formula cannot be evaluated.
    pub fn new(specs: SpecSet) -> Result<KernelCatalog, CatalogError> {
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
                let family =
                    specs
                        .families
                        .get(&tile.family)
                        .ok_or_else(|| CatalogError::Unresolved {
                            owner: owner(),
                            what: "family",
                            name: tile.family.clone(),
                        })?;
                let abi = specs
                    .abis
                    .get(&family.abi)
                    .ok_or_else(|| CatalogError::Unresolved {
                        owner: format!("family {}", family.name),
                        what: "ABI struct",
                        name: family.abi.clone(),
                    })?;
                let module = match units.iter().position(|u| *u == family.name) {
                    Some(i) => i,
                    None => {
                        units.push(family.name.clone());
                        units.len() - 1
                    }
                };
                for &(op, dtype) in &family.variants {
                    let name = kernel_name(tier, family, op, dtype, tile);
                    let derived = match specs.derive(tier, tile, op, dtype) {
                        Some(Ok(d)) => d,
                        Some(Err(e)) => {
                            return Err(CatalogError::Derive {
                                kernel: name,
                                error: e.to_string(),
                            })
                        }
                        None => {
                            return Err(CatalogError::Unresolved {
                                owner: format!("family {}", family.name),
                                what: "contract or instruction",
                                name: format!("{} / {}", family.contract, family.instruction),
                            })
                        }
                    };
                    // Each map the template reads is carried by the ABI field bound to it.
                    let tensor_maps = derived
                        .tensor_maps
                        .iter()
                        .filter_map(|m| {
                            let field = abi
                                .fields
                                .iter()
                                .find(|f| f.bind.map_operand() == Some(m.operand))?;
                            Some(TensorMapPlan {
                                field: field.name.clone(),
                                operand: m.operand,
                                optional: m.optional,
                                box_inner: m.box_inner,
                                box_outer: m.box_outer,
                                swizzle_bytes: m.swizzle_bytes,
                            })
                        })
                        .collect();
                    kernels.push(CatalogKernel {
                        id: kernels.len(),
                        tier_index,
                        name,
                        tier: tier.name.clone(),
                        family: family.name.clone(),
                        template: family.kind.template.clone(),
                        contract: family.contract.clone(),
                        op,
                        dtype,
                        prepass: family.prepass,
                        tile: tile.clone(),
                        describe: describe(&family.kind, &derived),
                        threads: derived.threads,
                        shared_bytes: derived.shared_bytes,
                        module,
                        grid: family.kind.grid,
                        operands: family.kind.operands,
                        cluster: (derived.cluster, 1, derived.split_k),
                        batch: family.kind.batch
                            && tier
                                .batch_kernels
                                .iter()
                                .any(|(f, t)| *f == family.name && *t == tile.name),
                        min_blocks: derived.min_blocks,
                        tensor_maps,
                        derived,
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
                    let Some(kind) = c.kind_of(from, to) else {
                        continue;
                    };
                    // A row kernel: one kernel a warp-path length, the first under the
                    // conversion's name, the others `_w<cols>` after it.
                    let lengths: Vec<u32> = if c.warp_cols.is_empty() {
                        vec![0]
                    } else {
                        c.warp_cols.clone()
                    };
                    for (i, &warp_cols) in lengths.iter().enumerate() {
                        let base = conversion_name(tier, &c.name, from, to);
                        conversions.push(CatalogConversion {
                            id: conversions.len(),
                            tier_index,
                            name: if i == 0 {
                                base
                            } else {
                                format!("{base}_w{warp_cols}")
                            },
                            tier: tier.name.clone(),
                            conversion: c.name.clone(),
                            kind,
                            from,
                            to,
                            threads: c.threads,
                            warp_cols,
                            min_blocks: c.min_blocks.get(i).copied().unwrap_or(0),
                            module,
                        });
                    }
                }
            }
        }
        Ok(KernelCatalog {
            specs,
            kernels,
            conversions,
            modules,
        })
    }

    /// The compile units of a tier, by name (empty for a tier not in the catalog).
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
    ) -> impl Iterator<Item = &'a CatalogKernel> {
        self.tier_kernels(tier).filter(move |k| k.module == module)
    }

    /// The conversions of one compile unit of a tier.
    pub fn module_conversions<'a>(
        &'a self,
        tier: &'a str,
        module: usize,
    ) -> impl Iterator<Item = &'a CatalogConversion> {
        self.tier_conversions(tier)
            .filter(move |c| c.module == module)
    }

    pub fn tier_conversions<'a>(
        &'a self,
        tier: &'a str,
    ) -> impl Iterator<Item = &'a CatalogConversion> {
        self.conversions.iter().filter(move |c| c.tier == tier)
    }

    pub fn tier_kernels<'a>(&'a self, tier: &'a str) -> impl Iterator<Item = &'a CatalogKernel> {
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
    ) -> Option<&CatalogKernel> {
        self.kernels.iter().find(|k| {
            k.tier == tier
                && k.family == family
                && k.tile.name == tile
                && k.op == op
                && k.dtype == dtype
        })
    }
}
