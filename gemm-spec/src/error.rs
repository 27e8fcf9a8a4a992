//! Spec errors: one variant per rule, each naming the file, the line and the numbers involved.

use std::fmt;
use thiserror::Error;

/// A place in a spec folder: file name relative to the folder, and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One broken rule, located.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{location}: {kind}")]
pub struct SpecError {
    pub location: Location,
    pub kind: SpecErrorKind,
}

/// Every rule a spec folder can break.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SpecErrorKind {
    #[error("cannot read the spec folder: {0}")]
    Io(String),
    #[error("the spec folder has no .toml files")]
    NoSpecFiles,
    #[error("the specs define no tier: add a file with a [tier] table")]
    NoTiers,
    #[error("{0}")]
    Toml(String),
    #[error("{what} `{name}` is defined twice; the first is at {first}")]
    Duplicate {
        what: &'static str,
        name: String,
        first: Location,
    },
    #[error("{what} in a file without a [tier] table: tiles and routes belong to the tier of their file{hint}", hint = if *what == "routes" { "; a file of routes alone is a routes file, which a tier lists in `routes_files`" } else { "" })]
    OrphanItems { what: &'static str },
    #[error("{what} name `{name}` must be lowercase letters and digits, starting with a letter")]
    BadName { what: &'static str, name: String },
    #[error("{what} name `{name}` is reserved: {why}")]
    ReservedName {
        what: &'static str,
        name: String,
        why: &'static str,
    },
    #[error(
        "contract name `{name}` must be lowercase letters, digits and `-`, starting with a letter"
    )]
    BadContractName { name: String },
    #[error("{0}")]
    UnknownWord(String),
    #[error("tile {family}.{tile}: {problem}")]
    TileKey {
        family: String,
        tile: String,
        /// The key at fault.
        key: String,
        problem: String,
    },
    #[error("tier {tier}: batch kernel `{kernel}` {problem}")]
    BatchKernel {
        tier: String,
        kernel: String,
        problem: String,
    },
    #[error("route {rule}: unaligned kernel `{kernel}` {problem}")]
    RouteUnaligned {
        rule: u32,
        kernel: String,
        problem: String,
    },
    #[error("route {rule}: wave_fit kernel `{kernel}` {problem}")]
    RouteWaveFit {
        rule: u32,
        kernel: String,
        problem: String,
    },
    #[error("{what} `{name}` is not defined; defined: {known}")]
    UnknownReference {
        what: &'static str,
        name: String,
        known: String,
    },
    #[error("ABI struct {abi}: field `{field}` {problem}")]
    AbiField {
        abi: String,
        field: String,
        problem: String,
    },
    #[error("tier {tier}: gencode `{gencode}` {problem}")]
    Gencode {
        tier: String,
        gencode: String,
        problem: String,
    },
    #[error("tiers {a} and {b} both claim compute capability {major}.{minor}{suffix}: the device's tier would be ambiguous", suffix = if *arch_specific { " (arch-specific)" } else { "" })]
    AmbiguousTier {
        a: String,
        b: String,
        major: u32,
        minor: u32,
        arch_specific: bool,
    },
    #[error("family {family} uses instruction {instruction}, which needs {needs}; tier {tier} is compute capability {major}.{minor}{target}", target = if *arch_specific { " (arch-specific target)" } else { " (portable target)" })]
    InstructionUnavailable {
        family: String,
        instruction: String,
        needs: String,
        tier: String,
        major: u32,
        minor: u32,
        arch_specific: bool,
    },
    #[error("conversion {name}: {problem}")]
    Conversion { name: String, problem: String },
    #[error("family {family}: prepass `{prepass}` {problem}")]
    Prepass {
        family: String,
        prepass: String,
        problem: String,
    },
    #[error("tier {tier} has a tile of family {family}, which is not in its `families` list")]
    FamilyNotUsed { tier: String, family: String },
    #[error(
        "tile {family}.{tile} {m}x{n}x{k}: {dim} = {value} is not a multiple of {multiple} ({why})"
    )]
    TileShape {
        family: String,
        tile: String,
        m: u32,
        n: u32,
        k: u32,
        dim: &'static str,
        value: u32,
        multiple: u32,
        why: String,
    },
    #[error("tile {family}.{tile} {m}x{n}x{k} runs {threads} threads a block; {tier} needs a multiple of 32 and at most {max}")]
    BlockThreads {
        family: String,
        tile: String,
        m: u32,
        n: u32,
        k: u32,
        threads: u32,
        tier: String,
        max: u32,
    },
    #[error("tile {family}.{tile} {m}x{n}x{k} needs {needed} bytes of shared memory; {tier} allows {allowed}")]
    SharedMemory {
        family: String,
        tile: String,
        m: u32,
        n: u32,
        k: u32,
        needed: u64,
        tier: String,
        allowed: u64,
    },
    #[error("tile {family}.{tile} {shape}: template {template} needs {rule} ({values}): {why} ({manifest})")]
    TemplateLimit {
        family: String,
        tile: String,
        shape: String,
        template: String,
        /// The limit as its manifest writes it.
        rule: String,
        /// `name = value, ...` of what the rule reads.
        values: String,
        why: String,
        /// The manifest's file and line.
        manifest: Location,
    },
    #[error("tile {family}.{tile} {shape}: {problem}")]
    Tile {
        family: String,
        tile: String,
        shape: String,
        problem: String,
    },
    #[error("kind manifest of {template}: {problem}")]
    Manifest { template: String, problem: String },
    #[error("hardware {major}.{minor}: {problem}")]
    Hardware {
        major: u32,
        minor: u32,
        problem: String,
    },
    #[error("tier {tier} is compute capability {major}.{minor}, which has no [[hardware]] entry (entries: {known}): add one for it (specs/hardware.toml)")]
    NoHardware {
        tier: String,
        major: u32,
        minor: u32,
        known: String,
    },
    #[error("tier {tier}: {problem}")]
    TierBase { tier: String, problem: String },
    #[error("{owner}: template `{name}` is not a known kernel template{hint}; known: {known}", hint = suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownTemplate {
        owner: String,
        name: String,
        suggestion: Option<String>,
        known: String,
    },
    #[error("{owner}: template {template} {problem}")]
    TemplateMismatch {
        owner: String,
        template: String,
        problem: String,
    },
    #[error("{item}: {key} = 0, but {why}")]
    Zero {
        item: String,
        key: &'static str,
        why: &'static str,
    },
    #[error("{item}: `{key} = []` lists nothing; {why}")]
    EmptyList {
        item: String,
        key: String,
        why: &'static str,
    },
    #[error("{item}: {key} [{major}, {minor}] {problem}")]
    Capability {
        item: String,
        key: &'static str,
        major: u32,
        minor: u32,
        problem: String,
    },
    #[error("tier {tier}: {key} = {value} {problem}")]
    Budget {
        tier: String,
        key: &'static str,
        value: u64,
        problem: String,
    },
    #[error("contract {contract}: accumulator `{acc}` is not one the templates have; every kernel template accumulates in f32 (accumulator = \"f32\")")]
    ContractAccumulator { contract: String, acc: String },
    #[error("family {family}: variant {op} {dtype} accumulates in {acc}, but its contract {contract} accumulates in {contract_acc}")]
    VariantAccumulator {
        family: String,
        op: String,
        dtype: String,
        acc: String,
        contract: String,
        contract_acc: String,
    },
    #[error("family {family}: variant {op} {dtype} takes {dtype} inputs, but its {what} is defined for {inputs} inputs only (its `inputs`): give the variant a family whose {what} takes them")]
    VariantInputs {
        family: String,
        op: String,
        dtype: String,
        /// `contract tc-k16`, `instruction mma16816`.
        what: String,
        inputs: String,
    },
    #[error("contract {contract}: `inputs` is empty; list the operand dtypes the contract is defined for, or leave the key out for all")]
    ContractInputsEmpty { contract: String },
    #[error("tier {tier}: routes file `{file}` {problem}")]
    RoutesFile {
        tier: String,
        /// The file as the tier lists it (or as the build named it).
        file: String,
        problem: String,
    },
    #[error("tier {tier} has no routes: add [[route]] blocks, or no request reaches its kernels")]
    NoRoutes { tier: String },
    #[error("tier {taker} takes devices of compute capability {devices} from tier {from} but does not serve {missing}, which {from} serves: route them in {taker} too, or those devices lose them")]
    TierTakesDevices {
        taker: String,
        from: String,
        devices: String,
        missing: String,
    },
    #[error("the file is not UTF-8 text: {0}")]
    NotUtf8(String),
    #[error("route {rule}: kernel `{kernel}` {problem}")]
    RouteKernel {
        rule: u32,
        kernel: String,
        problem: String,
    },
    #[error("route {rule}: {dim} range has min {min} > max {max}")]
    EmptyRange {
        rule: u32,
        dim: &'static str,
        min: u64,
        max: u64,
    },
    #[error("tier {tier} routes {policy} {op} {dtype} but has no catch-all route for it: add a route without m, n or k conditions after the others")]
    MissingCatchAll {
        tier: String,
        policy: String,
        op: String,
        dtype: String,
    },
    #[error("batch invariance broken in tier {tier} for {policy} {op} {dtype}: at n = {n}, k = {k}, m = {m_a} takes route {rule_a} ({kernel_a}, contract {contract_a}) but m = {m_b} takes route {rule_b} ({kernel_b}, contract {contract_b}); every m of one (n, k) must reach one contract")]
    BatchInvariance {
        tier: String,
        policy: String,
        op: String,
        dtype: String,
        n: u64,
        k: u64,
        m_a: u64,
        rule_a: u32,
        kernel_a: String,
        contract_a: String,
        m_b: u64,
        rule_b: u32,
        kernel_b: String,
        contract_b: String,
    },
}

/// All errors found in one spec folder (validation goes on past the first).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// Something legal but probably unintended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecWarning {
    pub location: Location,
    pub message: String,
}

impl fmt::Display for SpecWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: warning: {}", self.location, self.message)
    }
}
