//! The whole job: specs in; CUDA sources, cubins, generated Rust and a JSON report out.
//! Used by `gemm-aot build` and by the runtime's build script.
//!
//! "Nothing written unless everything succeeded": specs are validated and every file is
//! generated in memory first; the output is then assembled in a staging folder beside the
//! output folder (sources, nvcc for every tier, resource checks, cubins, Rust, report), and
//! swapped in only at the end (see [`crate::output_staging::OutputStaging`]).

use crate::catalog::{CatalogError, KernelCatalog};
use crate::compile::cache::{cache_root, CubinCache};
use crate::compile::nvcc::{compile_all, CompileError, CompileJob, CompiledUnit};
use crate::compile::ptxas::{self, KernelResources};
use crate::compile::toolchain::{self, Toolchain, ToolchainError};
use crate::emit::{self, Instrumentation, Provenance};
use crate::output_staging::OutputStaging;
use crate::template_files::TemplateFiles;
use crate::write::{check_output_folder, files_under, OutputError};
use gemm_spec::{SpecErrors, SpecWarning};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Whether and how to make cubins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileMode {
    /// Compile; when no nvcc is found, bootstrap the pinned one if `bootstrap`.
    Cubins { bootstrap: bool },
    /// Generate only; resources are zero and `cubins/` is left as it was (a tier without a
    /// cubin gets an empty one), so `CUBINS_PRESENT` is false (docs, clippy).
    NoCubins,
}

#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub specs: PathBuf,
    pub out: PathBuf,
    /// Tier names to build; empty builds all.
    pub tiers: Vec<String>,
    pub compile: CompileMode,
    /// Show a progress bar on stderr.
    pub progress: bool,
    pub provenance: Provenance,
    /// Parallel nvcc processes.
    pub jobs: usize,
    /// Toolchain and cubin cache; defaults to [`cache_root`].
    pub cache: Option<PathBuf>,
    /// What is compiled into the kernels beyond the specs (default: nothing, as shipped).
    pub instrumentation: Instrumentation,
    /// Which kernel templates (headers and their kind manifests) to build from.
    pub templates: Templates,
    /// Add the shipped instructions, contracts, ABIs, conversions and families
    /// ([`crate::shipped_specs`]) beside the spec folder's own files.
    pub shipped_definitions: bool,
    /// Routes files added to tiers, `(tier, file)`: their routes come before those of the
    /// routes files the tier lists and the tier's own ([`crate::Builder::routes_file`]).
    pub routes_files: Vec<(String, PathBuf)>,
}

impl BuildOptions {
    pub fn new(specs: impl Into<PathBuf>, out: impl Into<PathBuf>, command: &str) -> Self {
        BuildOptions {
            specs: specs.into(),
            out: out.into(),
            tiers: Vec::new(),
            compile: CompileMode::Cubins { bootstrap: true },
            progress: false,
            provenance: Provenance::new(command),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            cache: None,
            instrumentation: Instrumentation::NONE,
            templates: Templates::Shipped,
            shipped_definitions: false,
            routes_files: Vec::new(),
        }
    }
}

/// Which kernel templates a build instantiates: kernel kinds are files (a template and its
/// manifest), so a new kind needs no Rust edited.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Templates {
    /// The generator's own copy of `kernels-templates/` (as shipped).
    #[default]
    Shipped,
    /// This folder instead (a copy of `kernels-templates/` with changes).
    Folder(PathBuf),
    /// The shipped templates and this folder's files beside them (a crate's own kinds).
    ShippedAnd(PathBuf),
}

/// A kernel broke a budget after compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceViolation {
    pub kernel: String,
    pub message: String,
}

/// A warning line of nvcc or ptxas, attributed to its tier and, when it names one, its kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CompileWarning {
    pub tier: String,
    pub kernel: Option<String>,
    pub message: String,
}

impl std::fmt::Display for CompileWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kernel {
            Some(k) => write!(
                f,
                "warning: tier {}, kernel {k}: {}",
                self.tier, self.message
            ),
            None => write!(f, "warning: tier {}: {}", self.tier, self.message),
        }
    }
}

fn violations_text(violations: &[ResourceViolation], warnings: &[CompileWarning]) -> String {
    let mut lines: Vec<String> = violations
        .iter()
        .map(|v| format!("kernel {}: {}", v.kernel, v.message))
        .collect();
    lines.extend(warnings.iter().map(|w| w.to_string()));
    lines.join("\n")
}

#[derive(Debug, Error)]
pub enum BuildError {
    #[error("{0}")]
    Spec(SpecErrors),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("{0}")]
    UnknownTier(String),
    /// A kind manifest of the templates folder is broken, or the folder cannot be read.
    #[error("kernel templates: {0}")]
    Templates(SpecErrors),
    #[error(transparent)]
    Toolchain(#[from] ToolchainError),
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Compile(Vec<CompileError>),
    /// Kernels over their tier's budgets, and the compiler's warnings (they may say why).
    #[error("{}", violations_text(.violations, .warnings))]
    Resources {
        violations: Vec<ResourceViolation>,
        warnings: Vec<CompileWarning>,
    },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl BuildError {
    /// Whether the build failed for want of a working CUDA compiler (none found, bootstrap
    /// failed, nvcc could not be started), rather than for the specs, the kernels or the
    /// output folder. Only then does building without cubins get around it.
    pub fn is_toolchain(&self) -> bool {
        match self {
            BuildError::Toolchain(_) => true,
            BuildError::Compile(errs) => {
                !errs.is_empty() && errs.iter().all(|e| matches!(e, CompileError::Spawn { .. }))
            }
            _ => false,
        }
    }
}

/// What `--no-cubins` did with `cubins/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoCubinsOutcome {
    /// Files of `cubins/` carried over unchanged.
    pub kept: usize,
    /// Units (`tier/module`) that had no cubin and got an empty one.
    pub placeholders: Vec<String>,
}

/// How one tier's cubins were obtained.
#[derive(Clone, Debug)]
pub struct TierOutcome {
    pub tier: String,
    /// nvcc seconds summed over its units, or `None` when every unit was cached (or not
    /// compiled).
    pub seconds: Option<f64>,
    /// Bytes of all its cubins.
    pub cubin_bytes: usize,
    /// Each compile unit, in the tier's module order.
    pub units: Vec<UnitOutcome>,
}

/// How one compile unit's cubin was obtained.
#[derive(Clone, Debug)]
pub struct UnitOutcome {
    /// The unit's name (a family, or `conversions`): `cubins/<tier>/<module>.cubin`.
    pub module: String,
    /// nvcc seconds, or `None` when cached (or not compiled).
    pub seconds: Option<f64>,
    pub cubin_bytes: usize,
}

#[derive(Debug)]
pub struct BuildReport {
    pub catalog: KernelCatalog,
    pub warnings: Vec<SpecWarning>,
    pub toolchain: Option<Toolchain>,
    pub tiers: Vec<TierOutcome>,
    /// Per kernel id, when compiled.
    pub resources: Option<Vec<KernelResources>>,
    /// Every warning line of nvcc and ptxas (also in `report.json`).
    pub compile_warnings: Vec<CompileWarning>,
    /// Set under [`CompileMode::NoCubins`].
    pub no_cubins: Option<NoCubinsOutcome>,
    /// Output files new or changed.
    pub files_written: usize,
    pub files_unchanged: usize,
    /// Files of the previous output the new one does not have (e.g. a tier gone).
    pub files_removed: usize,
}

/// Every generated text file, relative to the output folder.
pub struct Generated {
    pub files: Vec<(PathBuf, String)>,
}

/// Generates everything but cubins and `rust/resources.rs`, in memory.
pub fn generate(
    catalog: &KernelCatalog,
    templates: &TemplateFiles,
    prov: &Provenance,
    instrumentation: Instrumentation,
) -> Generated {
    let mut files = Vec::new();
    files.push((
        PathBuf::from("cuda/include/gemm_abi.h"),
        emit::header::abi_header(&catalog.specs, prov),
    ));
    for (path, text) in templates.files() {
        files.push((
            PathBuf::from("cuda/kernels-templates").join(path),
            text.to_string(),
        ));
    }
    for t in &catalog.specs.tiers {
        for (i, m) in catalog.tier_modules(&t.name).iter().enumerate() {
            files.push((
                unit_source_path(&t.name, m),
                emit::cuda::unit_source(catalog, &t.name, i, prov, instrumentation),
            ));
        }
    }
    files.push((
        PathBuf::from("rust/abi.rs"),
        emit::rust::abi(&catalog.specs, prov),
    ));
    files.push((
        PathBuf::from("rust/kernels.rs"),
        emit::rust::kernels(catalog, prov),
    ));
    files.push((
        PathBuf::from("rust/dispatch.rs"),
        emit::rust::dispatch(catalog, prov),
    ));
    files.push((
        PathBuf::from("rust/ptx.rs"),
        emit::ptx_table::ptx(catalog, prov),
    ));
    Generated { files }
}

/// `cuda/<tier>/<module>.cu`, relative to the output folder.
pub fn unit_source_path(tier: &str, module: &str) -> PathBuf {
    PathBuf::from(format!("cuda/{tier}/{module}.cu"))
}

/// `cubins/<tier>/<module>.cubin`, relative to the output folder.
pub fn unit_cubin_path(tier: &str, module: &str) -> PathBuf {
    PathBuf::from(format!("cubins/{tier}/{module}.cubin"))
}

/// The template files of `templates`.
pub fn template_files(templates: &Templates) -> Result<TemplateFiles, BuildError> {
    match templates {
        Templates::Shipped => TemplateFiles::embedded(),
        Templates::Folder(dir) => TemplateFiles::from_dir(dir),
        Templates::ShippedAnd(dir) => TemplateFiles::embedded_and(dir),
    }
    .map_err(BuildError::Templates)
}

/// Validates the specs against the templates' kind manifests (and the shipped hardware table
/// when the folder has none; the shipped definitions too when `shipped_definitions`) and
/// catalogues the kernels (no files touched).
pub fn validate_and_catalog(
    specs: &Path,
    tiers: &[String],
    templates: &TemplateFiles,
    shipped_definitions: bool,
) -> Result<(KernelCatalog, Vec<SpecWarning>), BuildError> {
    validate_and_catalog_with_routes(specs, tiers, templates, shipped_definitions, &[])
}

/// [`validate_and_catalog`] with routes files added to tiers, `(tier, file)`, before the
/// routes files each tier lists (errors name each file as given).
pub fn validate_and_catalog_with_routes(
    specs: &Path,
    tiers: &[String],
    templates: &TemplateFiles,
    shipped_definitions: bool,
    routes_files: &[(String, PathBuf)],
) -> Result<(KernelCatalog, Vec<SpecWarning>), BuildError> {
    let defaults = crate::shipped_specs::defaults(shipped_definitions);
    let mut added = Vec::with_capacity(routes_files.len());
    for (tier, path) in routes_files {
        let text = std::fs::read_to_string(path).map_err(|source| BuildError::Io {
            path: path.display().to_string(),
            source,
        })?;
        added.push(gemm_spec::TierRoutesFile {
            tier: tier.clone(),
            source: gemm_spec::SpecSource {
                file: path.display().to_string(),
                text,
            },
        });
    }
    let validated = gemm_spec::load_dir_with_routes(specs, templates.kinds(), &defaults, &added)
        .map_err(BuildError::Spec)?;
    let mut set = validated.specs;
    set.retain_tiers(tiers).map_err(BuildError::UnknownTier)?;
    Ok((KernelCatalog::new(set)?, validated.warnings))
}

/// The validated specs of `dir`, against the generator's own templates and the shipped
/// hardware table (for tools and tests that need the model without a build).
pub fn load_specs(dir: &Path) -> Result<gemm_spec::SpecSet, BuildError> {
    let templates = template_files(&Templates::Shipped)?;
    let defaults = crate::shipped_specs::defaults(false);
    gemm_spec::load_dir(dir, templates.kinds(), &defaults)
        .map(|v| v.specs)
        .map_err(BuildError::Spec)
}

/// Checks ptxas's report of every kernel against its tier's budgets, and that ptxas did not
/// serialize a kernel's wgmma. With `allow_spills` (a timing-perturbation build, whose delays
/// cost a few registers and may break the wgmma pipeline) neither is a violation: they change
/// timing, never values (spills are printed as warnings).
pub fn check_resources(
    catalog: &KernelCatalog,
    compiled: &[CompiledUnit],
    allow_spills: bool,
) -> Result<Vec<KernelResources>, Vec<ResourceViolation>> {
    let mut res = vec![KernelResources::default(); catalog.kernels.len()];
    let mut bad = Vec::new();
    for c in compiled {
        let report = ptxas::parse(&c.ptxas_log);
        let Some(tier) = catalog.specs.tier(&c.tier) else {
            continue; // every compiled unit comes from the catalog
        };
        let Some(module) = catalog
            .tier_modules(&c.tier)
            .iter()
            .position(|m| *m == c.module)
        else {
            continue;
        };
        for k in catalog.module_kernels(&c.tier, module) {
            let mut fail = |message: String| {
                bad.push(ResourceViolation {
                    kernel: k.name.clone(),
                    message,
                })
            };
            let Some(r) = report.get(&k.name) else {
                fail("ptxas reported nothing for it: was the entry point emitted?".into());
                continue;
            };
            if let Some(slot) = res.get_mut(k.id) {
                *slot = *r;
            }
            let where_ = format!("tile {}.{} at {}", k.family, k.tile.name, k.tile.location);
            if r.spill_bytes() > 0 && !allow_spills {
                fail(format!(
                    "spills {} bytes ({} stored, {} loaded) on {}: shrink what a thread computes ({}) of {where_}",
                    r.spill_bytes(),
                    r.spill_store_bytes,
                    r.spill_load_bytes,
                    tier.name,
                    k.describe
                ));
            }
            if r.wgmma_serialized && !allow_spills {
                fail(format!(
                    "ptxas serialized its wgmma instructions on {} (a wgmma group's accumulators are read or copied while a group may run), so every group waits for the one before: keep accumulator reads after the wait that retires their group, and paths that join with the same groups in flight ({where_})",
                    tier.name
                ));
            }
            if r.registers > tier.max_registers_per_thread {
                fail(format!(
                    "uses {} registers a thread; {} allows {} ({where_})",
                    r.registers, tier.name, tier.max_registers_per_thread
                ));
            }
            let block_regs = r.registers as u64 * k.threads as u64;
            if block_regs > tier.registers_per_block as u64 {
                fail(format!(
                    "needs {} registers x {} threads = {block_regs} registers a block; {} has {} ({where_})",
                    r.registers, k.threads, tier.name, tier.registers_per_block
                ));
            }
            let smem = k.shared_bytes + r.static_shared_bytes as u64;
            if smem > tier.max_shared_bytes {
                fail(format!(
                    "needs {smem} bytes of shared memory ({} dynamic + {} static); {} allows {} ({where_})",
                    k.shared_bytes, r.static_shared_bytes, tier.name, tier.max_shared_bytes
                ));
            }
        }
        // Conversions: no spills and within the register budgets (no shared memory).
        for conv in catalog.module_conversions(&c.tier, module) {
            let mut fail = |message: String| {
                bad.push(ResourceViolation {
                    kernel: conv.name.clone(),
                    message,
                })
            };
            let Some(r) = report.get(&conv.name) else {
                fail("ptxas reported nothing for it: was the entry point emitted?".into());
                continue;
            };
            if r.spill_bytes() > 0 {
                fail(format!("spills {} bytes on {}", r.spill_bytes(), tier.name));
            }
            let block_regs = r.registers as u64 * conv.threads as u64;
            if r.registers > tier.max_registers_per_thread
                || block_regs > tier.registers_per_block as u64
            {
                fail(format!(
                    "uses {} registers x {} threads; {} allows {} a thread and {} a block",
                    r.registers,
                    conv.threads,
                    tier.name,
                    tier.max_registers_per_thread,
                    tier.registers_per_block
                ));
            }
        }
    }
    if bad.is_empty() {
        Ok(res)
    } else {
        Err(bad)
    }
}

/// A tile as JSON: the common fields and its template's parameters.
fn tile_json(t: &gemm_spec::Tile) -> serde_json::Value {
    let mut v = serde_json::json!({ "name": t.name, "m": t.m, "n": t.n, "k": t.k });
    if let Some(o) = v.as_object_mut() {
        for (p, value) in &t.params {
            o.insert(p.clone(), serde_json::json!(value));
        }
    }
    v
}

/// Machine-readable summary of the build (no timings, so it is stable across rebuilds).
fn report_json(
    catalog: &KernelCatalog,
    resources: Option<&[KernelResources]>,
    warnings: &[CompileWarning],
    instrumentation: Instrumentation,
) -> String {
    let kernels: Vec<serde_json::Value> = catalog
        .kernels
        .iter()
        .map(|k| {
            serde_json::json!({
                "id": k.id,
                "name": k.name,
                "tier": k.tier,
                "family": k.family,
                "template": k.template,
                "contract": k.contract,
                "op": k.op.as_str(),
                "dtype": k.dtype.to_string(),
                "tile": tile_json(&k.tile),
                "module": catalog.tier_modules(&k.tier).get(k.module),
                "grid": k.grid.as_str(),
                "cluster": [k.cluster.0, k.cluster.1, k.cluster.2],
                "batch": k.batch,
                "tensor_maps": k.tensor_maps.iter().map(|m| serde_json::json!({
                    "field": m.field, "operand": m.operand.to_string(), "optional": m.optional,
                    "box_inner": m.box_inner, "box_outer": m.box_outer, "swizzle_bytes": m.swizzle_bytes,
                })).collect::<Vec<_>>(),
                "block_threads": k.threads,
                "shared_bytes": k.shared_bytes,
                "min_blocks": k.min_blocks,
                "describe": k.describe,
                "resources": resources.and_then(|r| r.get(k.id)).map(|r| serde_json::to_value(r).unwrap_or_default()),
            })
        })
        .collect();
    let tiers: Vec<serde_json::Value> = catalog
        .specs
        .tiers
        .iter()
        .map(|t| serde_json::json!({ "name": t.name, "gencode": t.gencode, "compute_capability": [t.cc.0, t.cc.1], "spec_file": t.file, "modules": catalog.tier_modules(&t.name) }))
        .collect();
    let conversions: Vec<serde_json::Value> = catalog
        .conversions
        .iter()
        .map(|c| serde_json::json!({ "id": c.id, "name": c.name, "tier": c.tier, "conversion": c.conversion, "from": c.from.as_str(), "to": c.to.as_str(), "block_threads": c.threads, "module": catalog.tier_modules(&c.tier).get(c.module), "row_op": match c.kind { gemm_spec::ConversionKind::Row(op) => Some(op.as_str()), _ => None }, "warp_cols": (c.warp_cols > 0).then_some(c.warp_cols) }))
        .collect();
    let v = serde_json::json!({
        "timing_perturbation": instrumentation.timing_perturbation,
        "tiers": tiers,
        "kernels": kernels,
        "conversions": conversions,
        "warnings": warnings,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

/// Runs the whole pipeline. `say` receives one-line status messages (toolchain bootstrap).
///
/// The output folder is built in a staging folder beside it and replaces it only when every
/// step succeeded; a failing build leaves it exactly as it was. The new output is complete:
/// files of tiers no longer built are gone. Under [`CompileMode::NoCubins`] the `cubins/`
/// folder is carried over as it was (an empty placeholder is added for a unit without one, so
/// the Rust's `cubin!` references resolve; `CUBINS_PRESENT` is false).
pub fn build(opts: &BuildOptions, say: &dyn Fn(&str)) -> Result<BuildReport, BuildError> {
    let templates = template_files(&opts.templates)?;
    let (catalog, warnings) = validate_and_catalog_with_routes(
        &opts.specs,
        &opts.tiers,
        &templates,
        opts.shipped_definitions,
        &opts.routes_files,
    )?;
    let generated = generate(&catalog, &templates, &opts.provenance, opts.instrumentation);
    let cache_dir = opts.cache.clone().unwrap_or_else(cache_root);
    check_output_folder(&opts.out)?;

    // Resolve the toolchain before writing anything: a missing compiler leaves no half output.
    let toolchain = match opts.compile {
        CompileMode::Cubins { bootstrap: true } => {
            Some(toolchain::find_or_bootstrap(&cache_dir, say)?)
        }
        CompileMode::Cubins { bootstrap: false } => Some(toolchain::find(&cache_dir)?),
        CompileMode::NoCubins => None,
    };

    let mut stage = OutputStaging::new(&opts.out)?;
    for (rel, text) in generated
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("cuda"))
    {
        stage.put(rel, text.as_bytes())?;
    }

    let mut outcomes = Vec::new();
    let mut compile_warnings = Vec::new();
    let mut no_cubins = None;
    let resources = if let Some(tc) = &toolchain {
        let text_of = |rel: &Path| {
            generated
                .files
                .iter()
                .find(|(p, _)| p == rel)
                .map(|(_, t)| t.as_str())
                .unwrap_or_default()
        };
        let abi_rel = PathBuf::from("cuda/include/gemm_abi.h");
        let abi_input = format!("{}\n{}", abi_rel.display(), text_of(&abi_rel));
        let mut jobs: Vec<CompileJob> = Vec::new();
        for t in &catalog.specs.tiers {
            for m in catalog.tier_modules(&t.name) {
                let source_rel = unit_source_path(&t.name, m);
                let source_text = text_of(&source_rel).to_string();
                // The cache key: the source, the ABI header and exactly the template headers
                // it includes, so a template change recompiles only the units that use it.
                let mut inputs = vec![source_text.clone(), abi_input.clone()];
                for h in templates.transitive_includes(&source_text) {
                    inputs.push(format!(
                        "cuda/kernels-templates/{h}\n{}",
                        templates.text(h).unwrap_or_default()
                    ));
                }
                jobs.push(CompileJob {
                    tier: t.name.clone(),
                    module: m.clone(),
                    gencode: t.gencode.clone(),
                    source: source_rel,
                    include_dirs: vec![
                        PathBuf::from("cuda/include"),
                        PathBuf::from("cuda/kernels-templates"),
                    ],
                    workdir: Some(stage.dir().to_path_buf()),
                    inputs,
                    ptx: crate::ptx::ptx_target(&catalog.specs, t),
                });
            }
        }
        let bar = if opts.progress {
            indicatif::ProgressBar::new(jobs.len() as u64)
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} compiling units [{bar:30}] {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        let scratch = stage.dir().join("cuda");
        let cache = CubinCache::new(&cache_dir);
        let compiled = compile_all(tc, &cache, &jobs, &scratch, opts.jobs, &|u| {
            bar.set_message(match u.seconds {
                Some(s) => format!("{}/{} ({s:.1} s)", u.tier, u.module),
                None => format!("{}/{} (cached)", u.tier, u.module),
            });
            bar.inc(1);
        });
        bar.finish_and_clear();
        let compiled = compiled.map_err(BuildError::Compile)?;
        for c in &compiled {
            compile_warnings.extend(ptxas::warnings(&c.ptxas_log).into_iter().map(|w| {
                CompileWarning {
                    tier: c.tier.clone(),
                    kernel: w.kernel,
                    message: w.message,
                }
            }));
        }
        let res = check_resources(
            &catalog,
            &compiled,
            opts.instrumentation.timing_perturbation,
        )
        .map_err(|violations| BuildError::Resources {
            violations,
            warnings: compile_warnings.clone(),
        })?;
        for t in &catalog.specs.tiers {
            let units: Vec<UnitOutcome> = compiled
                .iter()
                .filter(|c| c.tier == t.name)
                .map(|c| UnitOutcome {
                    module: c.module.clone(),
                    seconds: c.seconds,
                    cubin_bytes: c.cubin.len(),
                })
                .collect();
            let timed: Vec<f64> = units.iter().filter_map(|u| u.seconds).collect();
            outcomes.push(TierOutcome {
                tier: t.name.clone(),
                seconds: (!timed.is_empty()).then(|| timed.iter().sum()),
                cubin_bytes: units.iter().map(|u| u.cubin_bytes).sum(),
                units,
            });
        }
        for c in compiled {
            stage.put(&unit_cubin_path(&c.tier, &c.module), &c.cubin)?;
            if let Some(ptx) = &c.ptx {
                stage.put(&crate::ptx::unit_ptx_path(&c.tier, &c.module), ptx)?;
            }
        }
        Some(res)
    } else {
        // Carry cubins/ over as it was; never truncate or delete a cubin.
        let old = opts.out.join("cubins");
        let kept = files_under(&old)?;
        for rel in &kept {
            let from = old.join(rel);
            let bytes = std::fs::read(&from).map_err(|source| BuildError::Io {
                path: from.display().to_string(),
                source,
            })?;
            stage.put(&Path::new("cubins").join(rel), &bytes)?;
        }
        let mut placeholders = Vec::new();
        for t in &catalog.specs.tiers {
            let mut units = Vec::new();
            let ptx = crate::ptx::ptx_target(&catalog.specs, t).is_some();
            for m in catalog.tier_modules(&t.name) {
                let rel = PathBuf::from(format!("{}/{m}.cubin", t.name));
                if !kept.contains(&rel) {
                    stage.put(&Path::new("cubins").join(&rel), &[])?;
                    placeholders.push(format!("{}/{m}", t.name));
                }
                // rust/ptx.rs embeds it, so it must exist (empty: no PTX in this build).
                let ptx_rel = PathBuf::from(format!("{}/{m}.ptx", t.name));
                if ptx && !kept.contains(&ptx_rel) {
                    stage.put(&Path::new("cubins").join(&ptx_rel), &[])?;
                }
                units.push(UnitOutcome {
                    module: m.clone(),
                    seconds: None,
                    cubin_bytes: 0,
                });
            }
            outcomes.push(TierOutcome {
                tier: t.name.clone(),
                seconds: None,
                cubin_bytes: 0,
                units,
            });
        }
        no_cubins = Some(NoCubinsOutcome {
            kept: kept.len(),
            placeholders,
        });
        None
    };

    for (rel, text) in generated
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("rust"))
    {
        stage.put(rel, text.as_bytes())?;
    }
    let res_rs = emit::rust::resources(
        &catalog,
        resources.as_deref(),
        &opts.provenance,
        opts.instrumentation,
    );
    stage.put(Path::new("rust/resources.rs"), res_rs.as_bytes())?;
    stage.put(
        Path::new("report.json"),
        report_json(
            &catalog,
            resources.as_deref(),
            &compile_warnings,
            opts.instrumentation,
        )
        .as_bytes(),
    )?;
    let committed = stage.commit()?;

    Ok(BuildReport {
        catalog,
        warnings,
        toolchain,
        tiers: outcomes,
        resources,
        compile_warnings,
        no_cubins,
        files_written: committed.written,
        files_unchanged: committed.unchanged,
        files_removed: committed.removed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_compiler_counts_as_a_toolchain_error() {
        assert!(BuildError::Toolchain(ToolchainError::NotFound).is_toolchain());
        let spawn = CompileError::Spawn {
            nvcc: "nvcc".into(),
            detail: "not found".into(),
        };
        assert!(BuildError::Compile(vec![spawn]).is_toolchain());
        let nvcc = CompileError::Nvcc {
            tier: "sm80".into(),
            source_file: "sm80.cu".into(),
            output: "error".into(),
        };
        assert!(!BuildError::Compile(vec![nvcc]).is_toolchain());
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sm80.toml"), "[tier]\nname = 1\n").unwrap();
        let templates = template_files(&Templates::Shipped).unwrap();
        let spec = validate_and_catalog(dir.path(), &[], &templates, false).unwrap_err();
        assert!(matches!(spec, BuildError::Spec(_)), "{spec}");
        assert!(!spec.is_toolchain());
        let output = BuildError::Output(OutputError::NotAFolder { path: "x".into() });
        assert!(!output.is_toolchain());
    }
}
