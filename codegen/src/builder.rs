//! [`Builder`]: a downstream crate's own kernel set, built from its build script.
//!
//! In the spirit of `prost-build`: the crate keeps its own specs (only its model's shapes and
//! tiers), its `build.rs` runs the same pipeline as gemm-runtime's (validation, generation,
//! nvcc through the content cache, bootstrapping the pinned compiler when none is found) into
//! `OUT_DIR`, and the crate includes one generated file that defines a
//! `gemm_runtime::KernelSet`:
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     gemm_codegen::Builder::new().specs("specs").tiers(["sm90a"]).build()?;
//!     Ok(())
//! }
//! ```
//!
//! ```ignore
//! // src/main.rs
//! include!(concat!(env!("OUT_DIR"), "/gemm_kernels.rs")); // pub static KERNELS: KernelSet
//!
//! fn main() -> Result<(), gemm_runtime::GemmError> {
//!     let ctx = gemm_runtime::Context::with_kernels(0, &KERNELS)?;
//!     // ... ctx.linear(..), ctx.gemm(..) as with Context::new
//!     Ok(())
//! }
//! ```
//!
//! The generated file names `::gemm_runtime`, so the including crate depends on gemm-runtime
//! (with `default-features = false` it leaves out the runtime's own cubins). Each set binds
//! its own arguments: its argument structs, and the code that fills them, are generated from
//! its own `[abi.*]` declarations (`KernelSet::check`, run by `Context::with_kernels`, binds
//! each and reads every field back). gemm-runtime's own build script is a `Builder` build of
//! the shipped specs. docs/downstream.md walks through it.

use crate::emit::Instrumentation;
use crate::pipeline::{build, BuildError, BuildOptions, BuildReport, CompileMode};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why [`Builder::build`] failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BuilderError {
    /// No output folder: neither [`Builder::out_dir`] nor `OUT_DIR` (set by cargo for build
    /// scripts) names one.
    #[error(
        "no output folder: call Builder::out_dir or run from a build script (OUT_DIR is unset)"
    )]
    NoOutDir,
    /// The static's name is not a Rust identifier.
    #[error("{0:?} is not a Rust identifier for the generated static")]
    StaticName(String),
    /// The pipeline failed: the specs, the kernels, the compiler or the output folder.
    #[error("gemm-aot could not build the kernels of {specs}:\n{source}")]
    Build {
        specs: String,
        #[source]
        source: BuildError,
    },
    /// The generated include file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl BuilderError {
    /// Whether the build failed for want of a working CUDA compiler (see
    /// [`BuildError::is_toolchain`]): building without cubins gets around only this.
    pub fn is_toolchain(&self) -> bool {
        matches!(self, BuilderError::Build { source, .. } if source.is_toolchain())
    }
}

/// What [`Builder::build`] made.
#[derive(Debug)]
pub struct Built {
    /// The file to `include!`: it defines `pub static <NAME>: gemm_runtime::KernelSet`.
    pub file: PathBuf,
    /// The pipeline's output folder (sources, cubins, generated Rust, `report.json`).
    pub out: PathBuf,
    /// The pipeline's report: the plan (tiers, kernels), warnings, compile outcomes.
    pub report: BuildReport,
}

/// Builds a kernel set from a spec folder into `OUT_DIR`; see the [module docs](self).
///
/// Defaults: specs `specs` (relative to the crate, as cargo runs build scripts there), every
/// tier of them, output `$OUT_DIR`, file `gemm_kernels.rs`, static `KERNELS`, cubins compiled
/// (the pinned nvcc bootstrapped when none is found) unless `GEMM_AOT_NO_CUBINS` or `DOCS_RS`
/// is set, and `cargo:` lines printed (rerun when the specs or those variables change;
/// warnings).
#[derive(Clone, Debug)]
pub struct Builder {
    specs: PathBuf,
    tiers: Vec<String>,
    out_dir: Option<PathBuf>,
    file_name: String,
    static_name: String,
    compile: Option<CompileMode>,
    cargo: bool,
    cache: Option<PathBuf>,
    jobs: Option<usize>,
    instrumentation: Instrumentation,
    templates: crate::Templates,
    label: Option<String>,
    shipped_definitions: bool,
    routes_files: Vec<(String, PathBuf)>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// The environment a build reads (`cargo:rerun-if-env-changed` for each).
const ENV: [&str; 5] = [
    "GEMM_AOT_NO_CUBINS",
    "GEMM_AOT_CACHE",
    "NVCC",
    "CUDA_HOME",
    "DOCS_RS",
];

impl Builder {
    /// A builder with the defaults above.
    pub fn new() -> Builder {
        Builder {
            specs: PathBuf::from("specs"),
            tiers: Vec::new(),
            out_dir: None,
            file_name: "gemm_kernels.rs".into(),
            static_name: "KERNELS".into(),
            compile: None,
            cargo: true,
            cache: None,
            jobs: None,
            instrumentation: Instrumentation::NONE,
            templates: crate::Templates::Shipped,
            label: None,
            shipped_definitions: false,
            routes_files: Vec::new(),
        }
    }

    /// The spec folder (tier files and the shared definitions, as `specs/` of gemm-aot).
    pub fn specs(mut self, dir: impl Into<PathBuf>) -> Self {
        self.specs = dir.into();
        self
    }

    /// Only these tiers of the specs (by name); by default every tier. A binary leaves out
    /// the tiers it will never run, and with them their cubins.
    pub fn tiers<I, S>(mut self, tiers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tiers = tiers.into_iter().map(Into::into).collect();
        self
    }

    /// Where to write (default `OUT_DIR`): the include file, and the pipeline's output in
    /// `gemm-aot-<file stem>/`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The include file's name (default `gemm_kernels.rs`); two sets in one crate need two.
    pub fn file_name(mut self, name: impl Into<String>) -> Self {
        self.file_name = name.into();
        self
    }

    /// The generated static's name (default `KERNELS`).
    pub fn static_name(mut self, name: impl Into<String>) -> Self {
        self.static_name = name.into();
        self
    }

    /// Whether to compile cubins (overrides `GEMM_AOT_NO_CUBINS` and `DOCS_RS`). Without
    /// them the tables are generated and the set's `cubins_present()` is false: a context
    /// refuses to open on it (docs, lints).
    pub fn compile(mut self, mode: CompileMode) -> Self {
        self.compile = Some(mode);
        self
    }

    /// Whether to print `cargo:rerun-if-changed`, `cargo:rerun-if-env-changed` and
    /// `cargo:warning` lines (default true; off outside build scripts).
    pub fn cargo_metadata(mut self, on: bool) -> Self {
        self.cargo = on;
        self
    }

    /// The toolchain and cubin cache (default: gemm-aot's, `GEMM_AOT_CACHE` or the user
    /// cache folder), shared with gemm-runtime's own build.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache = Some(dir.into());
        self
    }

    /// Parallel nvcc processes (default: the available parallelism).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = Some(jobs.max(1));
        self
    }

    /// A test set whose kernels carry seeded delays at every pipeline step (default off;
    /// docs/timing.md): its `timing_perturbation()` is true and a context on it takes a seed
    /// (`Context::set_timing_perturbation_seed`). For tests of timing independence only.
    pub fn timing_perturbation(mut self, on: bool) -> Self {
        self.instrumentation.timing_perturbation = on;
        self
    }

    /// Adds the shipped instructions, contracts, ABIs, conversions and families
    /// (`specs/families.toml` of gemm-aot, as the generator embeds it) beside the crate's own
    /// spec files (default off): the crate's folder then holds its tiers and what it adds, and
    /// copies none of the shipped definitions. A name the crate defines again is an error
    /// naming both places. (A folder without `[[hardware]]` always uses the shipped hardware
    /// table.)
    pub fn shipped_definitions(mut self, on: bool) -> Self {
        self.shipped_definitions = on;
        self
    }

    /// Adds a routes file to tier `tier`: `[[route]]` tables alone, as `gemm-aot tune`
    /// writes them (docs/tuning.md), read from `path` (relative to the crate, as cargo runs
    /// build scripts there). Its routes come before those of the routes files the tier lists
    /// (`routes_files`) and the tier's own, so they override them where their conditions
    /// hold; files added first come first. The merged table passes every rule a tier's own
    /// routes do (one contract for every m of one (n, k) among them), and errors name the
    /// file as given, with the line.
    pub fn routes_file(mut self, tier: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        self.routes_files.push((tier.into(), path.into()));
        self
    }

    /// The set's name, as `KernelSet::name` and errors give it (default: the builder and
    /// its tiers).
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// A templates folder (headers and kind manifests beside them) to build from instead of
    /// the generator's own copy of `kernels-templates/` (the default): a changed copy of it.
    pub fn templates(mut self, dir: impl Into<PathBuf>) -> Self {
        self.templates = crate::Templates::Folder(dir.into());
        self
    }

    /// A folder of the crate's own kernel kinds, each a template and its manifest beside it
    /// (kernels-templates/README.md), added to the generator's own: the crate's families may
    /// name shipped and own templates alike, with no Rust edited.
    pub fn extra_templates(mut self, dir: impl Into<PathBuf>) -> Self {
        self.templates = crate::Templates::ShippedAnd(dir.into());
        self
    }

    /// Validates the specs, generates the tables and the CUDA, compiles the cubins (through
    /// the content cache: an unchanged rebuild compiles nothing) and writes the include file.
    /// Nothing of the previous output is replaced unless every step succeeded.
    pub fn build(self) -> Result<Built, BuilderError> {
        if !is_identifier(&self.static_name) {
            return Err(BuilderError::StaticName(self.static_name));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(BuilderError::NoOutDir)?,
        };
        let env_set = |v: &str| std::env::var_os(v).is_some_and(|v| !v.is_empty() && v != "0");
        let compile = self.compile.unwrap_or(
            if env_set("GEMM_AOT_NO_CUBINS") || std::env::var_os("DOCS_RS").is_some() {
                CompileMode::NoCubins
            } else {
                CompileMode::Cubins { bootstrap: true }
            },
        );
        if self.cargo {
            println!("cargo:rerun-if-changed={}", self.specs.display());
            for (_, path) in &self.routes_files {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            if let crate::Templates::Folder(t) | crate::Templates::ShippedAnd(t) = &self.templates {
                println!("cargo:rerun-if-changed={}", t.display());
            }
            if self.compile.is_none() {
                for var in ENV {
                    println!("cargo:rerun-if-env-changed={var}");
                }
            }
        }
        let stem = Path::new(&self.file_name).file_stem().map_or_else(
            || "gemm_kernels".into(),
            |s| s.to_string_lossy().into_owned(),
        );
        let out = out_dir.join(format!("gemm-aot-{stem}"));
        let mut opts = BuildOptions::new(&self.specs, &out, "gemm_codegen::Builder");
        opts.tiers = self.tiers.clone();
        opts.compile = compile;
        opts.cache = self.cache.clone();
        opts.instrumentation = self.instrumentation;
        opts.templates = self.templates.clone();
        opts.shipped_definitions = self.shipped_definitions;
        opts.routes_files = self.routes_files.clone();
        if let Some(j) = self.jobs {
            opts.jobs = j;
        }
        let cargo = self.cargo;
        let say = move |m: &str| {
            if cargo {
                println!("cargo:warning=gemm-aot: {m}");
            }
        };
        let report = build(&opts, &say).map_err(|source| BuilderError::Build {
            specs: self.specs.display().to_string(),
            source,
        })?;
        if self.cargo {
            // A routes file a tier lists may lie outside the spec folder (`../tuned.toml`),
            // where the folder's rerun-if-changed does not reach: name each.
            for t in &report.catalog.specs.tiers {
                for f in &t.routes_files {
                    if !self
                        .routes_files
                        .iter()
                        .any(|(_, p)| p.display().to_string() == *f)
                    {
                        println!("cargo:rerun-if-changed={}", self.specs.join(f).display());
                    }
                }
            }
            for w in &report.warnings {
                println!("cargo:warning={w}");
            }
            for w in &report.compile_warnings {
                println!("cargo:warning=gemm-aot: {w}");
            }
        }
        let text = crate::emit::set_file::set_file(
            &self.static_name,
            self.label.as_deref(),
            &out,
            &report.catalog.specs,
            &self.tiers,
        );
        let file = out_dir.join(&self.file_name);
        crate::write::write_if_changed(&file, text.as_bytes()).map_err(|source| {
            BuilderError::Io {
                path: file.display().to_string(),
                source,
            }
        })?;
        Ok(Built { file, out, report })
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && s != "_"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/tiny/specs")
    }

    #[test]
    fn builds_the_tables_and_an_include_file_naming_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let built = Builder::new()
            .specs(tiny())
            .tiers(["sm80"])
            .out_dir(dir.path())
            .static_name("TINY")
            .compile(CompileMode::NoCubins)
            .cargo_metadata(false)
            .build()
            .unwrap();
        assert_eq!(built.file, dir.path().join("gemm_kernels.rs"));
        let text = std::fs::read_to_string(&built.file).unwrap();
        assert!(
            text.contains("pub static TINY: ::gemm_runtime::KernelSet"),
            "{text}"
        );
        assert!(text.contains("mod __gemm_kernels_tiny"), "{text}");
        // Nothing in it or in the tables it includes names the including crate's root.
        for f in ["kernels.rs", "dispatch.rs", "resources.rs", "ptx.rs"] {
            let t = std::fs::read_to_string(built.out.join("rust").join(f)).unwrap();
            assert!(!t.contains("crate::"), "{f} names crate::");
        }
        assert!(!text.contains("crate::"));
        assert_eq!(built.report.catalog.specs.tiers.len(), 1);
        assert!(built.out.join("cubins/sm80").is_dir());
    }

    #[test]
    fn takes_a_routes_file_for_a_tier_before_its_own_routes() {
        let dir = tempfile::tempdir().unwrap();
        let routes = dir.path().join("model.routes.toml");
        let route = "# tuned\n[[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"any\"\nn = { min = 4096, max = 4096 }\nkernel = \"fma.big\"\n";
        std::fs::write(&routes, route).unwrap();
        let b = || {
            Builder::new()
                .specs(tiny())
                .out_dir(dir.path())
                .compile(CompileMode::NoCubins)
                .cargo_metadata(false)
                .routes_file("sm80", &routes)
        };
        let built = b().build().unwrap();
        let tier = built.report.catalog.specs.tier("sm80").unwrap();
        assert_eq!(tier.routes_files, [routes.display().to_string()]);
        assert_eq!(
            tier.routes[0].location.to_string(),
            format!("{}:2", routes.display())
        );
        let dispatch = std::fs::read_to_string(built.out.join("rust/dispatch.rs")).unwrap();
        assert!(dispatch.contains("4096"), "{dispatch}");
        // A bad route in it fails the build at its line.
        std::fs::write(&routes, route.replace("fma.big", "fma.huge")).unwrap();
        let err = b().build().unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "{}:2: route 1: kernel `fma.huge`",
                routes.display()
            )),
            "{err}"
        );
        let err = b()
            .routes_file("sm80", dir.path().join("gone.toml"))
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("gone.toml"), "{err}");
    }

    #[test]
    fn refuses_unknown_tiers_bad_names_and_a_missing_out_dir() {
        let dir = tempfile::tempdir().unwrap();
        let b = || {
            Builder::new()
                .specs(tiny())
                .out_dir(dir.path())
                .compile(CompileMode::NoCubins)
                .cargo_metadata(false)
        };
        let err = b().tiers(["sm99"]).build().unwrap_err();
        assert!(
            matches!(
                err,
                BuilderError::Build {
                    source: BuildError::UnknownTier(_),
                    ..
                }
            ),
            "{err}"
        );
        assert!(!err.is_toolchain());
        let err = b().static_name("1x").build().unwrap_err();
        assert!(matches!(err, BuilderError::StaticName(_)), "{err}");
        assert!(!dir.path().join("gemm_kernels.rs").exists());
        if std::env::var_os("OUT_DIR").is_none() {
            let err = Builder::new()
                .specs(tiny())
                .compile(CompileMode::NoCubins)
                .cargo_metadata(false)
                .build()
                .unwrap_err();
            assert!(matches!(err, BuilderError::NoOutDir), "{err}");
        }
    }
}
