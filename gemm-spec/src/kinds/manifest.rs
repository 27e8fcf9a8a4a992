//! A kind manifest: the TOML file beside a kernel template that says everything the generator
//! and the runtime know of it (kernels-templates/README.md): its config parameters with
//! defaults and least values, its limits as formulas with their reasons, the numbers it derives
//! (threads, shared bytes, boxes, cluster, launch bounds), its grid and how A and B arrive, the
//! ops, operand and output types it takes, the contracts it implements, and where it runs.

use super::formula::Formula;
use crate::error::{Location, SpecError, SpecErrorKind};
use crate::vocab::{Dtype, Op};
use gemm_core::{GridKind, Operand as MapOperand, OperandPath};
use serde::Deserialize;
use toml::Spanned;

/// What a template instantiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A GEMM kernel `template<TAB, TC, OP, Cfg>`, named by a `[family.*]`.
    Gemm,
    /// An elementwise conversion `template<From, To, Cfg>`, named by a `[conversion.*]`.
    Conversion,
}

/// A contract a template implements, for the operand types it computes it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindContract {
    pub name: String,
    pub inputs: Vec<Dtype>,
}

/// One config parameter of a template: a `[[tile]]` key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub doc: String,
    /// The value when a tile leaves the key out; `None`: required. A default below `min` (0 for
    /// `min_blocks`) means "none".
    pub default: Option<u32>,
    /// The least value a tile may give.
    pub min: u32,
    /// The greatest value a tile may give; `None`: no bound but the limits'.
    pub max: Option<u32>,
    pub location: Location,
}

/// A limit a template puts on its tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    pub rule: Formula,
    /// Why the template needs it; `{name}` is replaced by the value of a name.
    pub why: String,
    pub location: Location,
}

/// A derived value, in order: later formulas may read earlier ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Let {
    pub name: String,
    pub value: Formula,
    pub location: Location,
}

/// A tensor map the template reads: the operand, its box in elements of the operand as stored
/// (inner = the contiguous dimension) and its swizzle in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapDecl {
    pub operand: MapOperand,
    /// The map is used when the operand can take TMA, the direct path otherwise (C's store).
    pub optional: bool,
    pub inner: Formula,
    pub outer: Formula,
    pub swizzle: Formula,
    pub location: Location,
}

/// A kernel template's manifest, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The C++ class template.
    pub template: String,
    /// Its header, relative to the templates folder.
    pub header: String,
    /// The manifest, relative to the templates folder.
    pub manifest: String,
    pub role: Role,
    pub doc: String,
    pub contracts: Vec<KindContract>,
    pub ops: Vec<Op>,
    /// The C types it stores (every type when empty).
    pub outputs: Vec<Dtype>,
    pub min_cc: Option<((u32, u32), String)>,
    /// Why it needs an arch-specific target (`sm_90a`), when it does.
    pub arch_specific: Option<String>,
    pub grid: GridKind,
    pub operands: OperandPath,
    /// It takes a strided batch in one launch: grid z walks the entries, each entry's operands
    /// at the ABI's batch strides (`a.batch_stride`, ...), or its tensor maps 3-D with the entry
    /// their third coordinate. Needs no K split or cluster (z is the batch's); a persistent
    /// kind's x CTAs walk one entry's tiles.
    pub batch: bool,
    /// Its template is plain CUDA C++ over the thread model (threads, blocks, shared memory,
    /// `__syncthreads`): no inline PTX, asynchronous copies or warp intrinsics. The tests then
    /// run its kernels on the CPU, a std::thread a CUDA thread (tests/host_kernels.rs).
    pub host_emulation: bool,
    /// A conversion kind that writes `dst[c, r] = src[r, c]` (a type to itself): its
    /// conversions are [`ConversionKind::Transpose`](gemm_core::ConversionKind::Transpose).
    /// Only a conversion kind may say it.
    pub transposes: bool,
    /// One line for people, `{name}` replaced by the value of a name.
    pub describe: String,
    pub params: Vec<Param>,
    pub limits: Vec<Limit>,
    pub lets: Vec<Let>,
    pub tensor_maps: Vec<MapDecl>,
    pub location: Location,
}

/// The names every formula may read beside the kind's parameters and earlier lets.
pub const BUILTIN_NAMES: &[(&str, &str)] = &[
    ("m", "rows of C a block computes (the tile's m)"),
    ("n", "columns of C a block computes (the tile's n)"),
    ("k", "the tile's k: its reduction step, or its K chunk"),
    ("ab_bytes", "bytes of an A and B element"),
    ("c_bytes", "bytes of a C element"),
    ("a_k_major", "A stored [m, k] (nn, nt), k contiguous"),
    ("b_k_major", "B stored [n, k] (nt), k contiguous"),
    (
        "k_step",
        "the contract's k step (16 for tc-k16, 8 for tc-tf32-k8, 1 for a scalar chain)",
    ),
    (
        "chunk",
        "the contract's K chunk (256 for fma-k256), 0 when it has none",
    ),
    ("inst_m", "m of the family's instruction"),
    ("inst_n", "n of the family's instruction"),
    ("inst_k", "k of the family's instruction"),
    ("threads_per_block", "threads a block may have on the tier"),
    (
        "max_shared_bytes",
        "shared memory a block may have on the tier",
    ),
    (
        "registers_per_thread",
        "registers a thread may have on the tier's hardware",
    ),
];

/// Lets with a meaning of their own to the generator and the runtime.
pub mod keys {
    /// Threads a block (required).
    pub const THREADS: &str = "threads";
    /// Dynamic shared memory a block, in bytes (required).
    pub const SHARED_BYTES: &str = "shared_bytes";
    /// CTAs a cluster along M (1 when absent).
    pub const CLUSTER: &str = "cluster";
    /// CTAs a cluster along z that split K between them (1 when absent); the grid's z.
    pub const SPLIT_K: &str = "split_k";
    /// The largest K the kernel takes (0 or absent: any); routes to it must bound k by it.
    pub const MAX_K: &str = "max_k";
    /// `__launch_bounds__`'s second value; 0 or absent: none.
    pub const MIN_BLOCKS: &str = "min_blocks";
    /// f32 accumulators a thread keeps in registers (checked against the hardware's registers
    /// a thread when present).
    pub const ACCUMULATORS: &str = "accumulators";
    /// Registers a thread of the accumulating warps is granted (setmaxnreg moves them from the
    /// other warps), when that is above the block's even share; 0 or absent: the even share.
    /// The accumulators are checked against it.
    pub const ACCUMULATOR_REGISTERS: &str = "accumulator_registers";
    /// Bytes a plain-load kernel reads A and B in where their addresses and leading
    /// dimensions (in bytes) are multiples of it, element by element elsewhere; 0 or absent:
    /// no such path. The runtime copies an operand off it into aligned scratch (the repack), or
    /// runs the route's unaligned kernel where that one takes the operands as they are.
    pub const VECTOR_BYTES: &str = "vector_bytes";
}

/// Names a tile key may not take: they are the tile's own keys, or formulas' builtins.
const RESERVED: &[&str] = &["family", "name", "replaces"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    kind: Spanned<RawKind>,
    #[serde(default)]
    param: Vec<Spanned<RawParam>>,
    #[serde(default)]
    limit: Vec<Spanned<RawLimit>>,
    #[serde(default, rename = "let")]
    lets: Vec<Spanned<RawLet>>,
    #[serde(default)]
    tensor_map: Vec<Spanned<RawMap>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKind {
    template: String,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    doc: String,
    #[serde(default)]
    contracts: Vec<RawKindContract>,
    #[serde(default)]
    ops: Vec<String>,
    #[serde(default)]
    outputs: Vec<String>,
    min_compute_capability: Option<RawMinCc>,
    arch_specific: Option<String>,
    grid: Option<String>,
    operands: Option<String>,
    #[serde(default)]
    batch: bool,
    #[serde(default)]
    host_emulation: bool,
    #[serde(default)]
    transposes: bool,
    #[serde(default)]
    describe: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKindContract {
    name: String,
    inputs: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMinCc {
    at: [u32; 2],
    why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParam {
    name: String,
    #[serde(default)]
    doc: String,
    default: Option<u32>,
    min: Option<u32>,
    max: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimit {
    rule: String,
    why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLet {
    name: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMap {
    operand: String,
    #[serde(default)]
    optional: bool,
    inner: String,
    outer: String,
    swizzle: String,
}

/// `{name}` of `text` replaced by `value(name)`; names without a value stay as written.
pub fn interpolate(text: &str, value: &mut dyn FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match value(name) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `{name}`s of a text.
fn placeholders(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    interpolate(text, &mut |n| {
        v.push(n.to_string());
        None
    });
    v
}

fn is_snake(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl Kind {
    /// Whether it declares a vector path ([`keys::VECTOR_BYTES`]): its routes may name an
    /// unaligned kernel for operands off it.
    pub fn has_vector_path(&self) -> bool {
        self.lets.iter().any(|l| l.name == keys::VECTOR_BYTES)
    }

    /// Parses and checks the manifest `file` (relative to the templates folder, as errors name
    /// it) whose header is `header`.
    pub fn parse(file: &str, header: &str, text: &str) -> Result<Kind, Vec<SpecError>> {
        let at = |span: std::ops::Range<usize>| Location {
            file: file.to_string(),
            line: crate::raw::line_of(text, span.start),
        };
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            vec![SpecError {
                location: Location {
                    file: file.to_string(),
                    line: e.span().map_or(0, |s| crate::raw::line_of(text, s.start)),
                },
                kind: SpecErrorKind::Toml(e.message().to_string()),
            }]
        })?;
        let mut errors = Vec::new();
        let k_at = at(raw.kind.span());
        let rk = raw.kind.into_inner();
        let template = rk.template.clone();
        let mut bad = |location: Location, problem: String| {
            errors.push(SpecError {
                location,
                kind: SpecErrorKind::Manifest {
                    template: template.clone(),
                    problem,
                },
            })
        };
        let role = match rk.role.as_deref() {
            None | Some("gemm") => Role::Gemm,
            Some("conversion") => Role::Conversion,
            Some(o) => {
                bad(
                    k_at.clone(),
                    format!("role `{o}` is not gemm or conversion"),
                );
                Role::Gemm
            }
        };
        let dtypes = |words: &[String], bad: &mut dyn FnMut(Location, String)| -> Vec<Dtype> {
            words
                .iter()
                .filter_map(|w| match w.parse::<Dtype>() {
                    Ok(d) => Some(d),
                    Err(e) => {
                        bad(k_at.clone(), e.to_string());
                        None
                    }
                })
                .collect()
        };
        let mut contracts = Vec::new();
        for c in &rk.contracts {
            let inputs = dtypes(&c.inputs, &mut bad);
            contracts.push(KindContract {
                name: c.name.clone(),
                inputs,
            });
        }
        let mut ops = Vec::new();
        for o in &rk.ops {
            match o.parse::<Op>() {
                Ok(op) => ops.push(op),
                Err(e) => bad(k_at.clone(), e.to_string()),
            }
        }
        let outputs = dtypes(&rk.outputs, &mut bad);
        if role == Role::Gemm {
            if contracts.is_empty() {
                bad(k_at.clone(), "names no contract it implements: list `contracts = [{ name = \"...\", inputs = [...] }]`".into());
            }
            if ops.is_empty() {
                bad(k_at.clone(), "lists no ops (`ops = [\"nn\", ...]`)".into());
            }
        }
        let grid = match rk.grid.as_deref() {
            None | Some("tiles") => GridKind::Tiles,
            Some("persistent") => GridKind::Persistent,
            Some(o) => {
                bad(
                    k_at.clone(),
                    format!("grid `{o}` is not tiles or persistent"),
                );
                GridKind::Tiles
            }
        };
        let operands = match rk.operands.as_deref() {
            None | Some("loads") => OperandPath::Loads,
            Some("cp.async") => OperandPath::CpAsync,
            Some("tma") => OperandPath::Tma,
            Some(o) => {
                bad(
                    k_at.clone(),
                    format!("operands `{o}` is not loads, cp.async or tma"),
                );
                OperandPath::Loads
            }
        };
        let min_cc = rk
            .min_compute_capability
            .as_ref()
            .map(|c| ((c.at[0], c.at[1]), c.why.clone()));

        if rk.transposes && role != Role::Conversion {
            bad(
                k_at.clone(),
                "says `transposes`, which only a conversion kind (role = \"conversion\") may"
                    .into(),
            );
        }
        let mut known: Vec<String> = BUILTIN_NAMES.iter().map(|(n, _)| n.to_string()).collect();
        if role == Role::Conversion {
            known = vec!["threads".into()];
        }
        let mut params = Vec::new();
        for p in raw.param {
            let p_at = at(p.span());
            let p = p.into_inner();
            if !is_snake(&p.name) || RESERVED.contains(&p.name.as_str()) || known.contains(&p.name)
            {
                bad(
                    p_at.clone(),
                    format!(
                        "parameter `{}` must be a new snake_case name (not m, n, k, family, name, replaces or a formula's builtin)",
                        p.name
                    ),
                );
                continue;
            }
            let min = p.min.unwrap_or(1);
            if let Some(max) = p.max.filter(|&max| max < min) {
                bad(
                    p_at.clone(),
                    format!(
                        "parameter `{}` has max = {max} below its least value {min}",
                        p.name
                    ),
                );
                continue;
            }
            known.push(p.name.clone());
            params.push(Param {
                name: p.name,
                doc: p.doc,
                default: p.default,
                min,
                max: p.max,
                location: p_at,
            });
        }
        let parse = |text: &str,
                     what: &str,
                     loc: &Location,
                     known: &[String],
                     bad: &mut dyn FnMut(Location, String)|
         -> Option<Formula> {
            match Formula::parse(text) {
                Ok(f) => {
                    if let Some(n) = f
                        .names()
                        .into_iter()
                        .find(|n| !known.iter().any(|k| k == n))
                    {
                        bad(
                            loc.clone(),
                            format!("{what} `{text}` reads `{n}`, which is no parameter, earlier let or builtin name (kernels-templates/README.md lists them)"),
                        );
                        return None;
                    }
                    Some(f)
                }
                Err(e) => {
                    bad(loc.clone(), format!("{what} `{text}` {e}"));
                    None
                }
            }
        };
        let mut lets = Vec::new();
        for l in raw.lets {
            let l_at = at(l.span());
            let l = l.into_inner();
            if !is_snake(&l.name) || known.contains(&l.name) {
                bad(
                    l_at.clone(),
                    format!("let `{}` must be a new snake_case name", l.name),
                );
                continue;
            }
            if let Some(value) = parse(
                &l.value,
                &format!("let {}", l.name),
                &l_at,
                &known,
                &mut bad,
            ) {
                known.push(l.name.clone());
                lets.push(Let {
                    name: l.name,
                    value,
                    location: l_at,
                });
            }
        }
        // Limits read lets too (accumulators, threads), so they come after them.
        let mut limits = Vec::new();
        for l in raw.limit {
            let l_at = at(l.span());
            let l = l.into_inner();
            if let Some(rule) = parse(&l.rule, "limit", &l_at, &known, &mut bad) {
                if let Some(n) = placeholders(&l.why)
                    .into_iter()
                    .find(|n| !known.contains(n))
                {
                    bad(
                        l_at.clone(),
                        format!(
                            "limit `{}`: its why names `{{{n}}}`, which is no known name",
                            l.rule
                        ),
                    );
                }
                limits.push(Limit {
                    rule,
                    why: l.why,
                    location: l_at,
                });
            }
        }
        let mut tensor_maps = Vec::new();
        for m in raw.tensor_map {
            let m_at = at(m.span());
            let m = m.into_inner();
            let operand = match m.operand.as_str() {
                "a" => MapOperand::A,
                "b" => MapOperand::B,
                "c" => MapOperand::C,
                o => {
                    bad(
                        m_at.clone(),
                        format!("tensor map operand `{o}` is not a, b or c"),
                    );
                    continue;
                }
            };
            if tensor_maps.iter().any(|x: &MapDecl| x.operand == operand) {
                bad(
                    m_at.clone(),
                    format!("a second tensor map of operand {}", m.operand),
                );
                continue;
            }
            let f = |text: &str, what: &str, bad: &mut dyn FnMut(Location, String)| {
                parse(
                    text,
                    &format!("tensor map {} {what}", m.operand),
                    &m_at,
                    &known,
                    bad,
                )
            };
            let (inner, outer, swizzle) = (
                f(&m.inner, "inner", &mut bad),
                f(&m.outer, "outer", &mut bad),
                f(&m.swizzle, "swizzle", &mut bad),
            );
            if let (Some(inner), Some(outer), Some(swizzle)) = (inner, outer, swizzle) {
                tensor_maps.push(MapDecl {
                    operand,
                    optional: m.optional,
                    inner,
                    outer,
                    swizzle,
                    location: m_at,
                });
            }
        }
        if role == Role::Gemm {
            for key in [keys::THREADS, keys::SHARED_BYTES] {
                if !lets.iter().any(|l| l.name == key) {
                    bad(k_at.clone(), format!("needs `[[let]] name = \"{key}\"`: the generator plans every kernel's {key} from it"));
                }
            }
            if operands == OperandPath::Tma
                && !tensor_maps.iter().any(|m| m.operand == MapOperand::A)
            {
                bad(
                    k_at.clone(),
                    "says operands = \"tma\" but declares no tensor map of A".into(),
                );
            }
        }
        if rk.batch {
            // z is the batch's entry: a K split derived here would own z too. (A persistent
            // kind's batch kernels get x CTAs an entry, which walk that entry's tiles; a kind
            // that reads tensor maps gets 3-D maps, the entry their third coordinate. Tiles
            // that cluster or split are refused where a tier lists them in `batch_kernels`.)
            if lets.iter().any(|l| l.name == keys::SPLIT_K) {
                bad(
                    k_at.clone(),
                    "says batch = true and derives `split_k`: both would take the grid's z".into(),
                );
            }
            if role != Role::Gemm {
                bad(
                    k_at.clone(),
                    "says batch = true, which only a GEMM kind can be".into(),
                );
            }
        }
        if let Some(n) = placeholders(&rk.describe)
            .into_iter()
            .find(|n| !known.contains(n))
        {
            bad(
                k_at.clone(),
                format!("describe names `{{{n}}}`, which is no known name"),
            );
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Kind {
            template: rk.template,
            header: header.to_string(),
            manifest: file.to_string(),
            role,
            doc: rk.doc,
            contracts,
            ops,
            outputs,
            min_cc,
            arch_specific: rk.arch_specific,
            grid,
            operands,
            batch: rk.batch,
            host_emulation: rk.host_emulation,
            transposes: rk.transposes,
            describe: rk.describe,
            params,
            limits,
            lets,
            tensor_maps,
            location: k_at,
        })
    }

    /// The parameter of this name.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The contract entry for `contract`, if the template implements it.
    pub fn contract(&self, contract: &str) -> Option<&KindContract> {
        self.contracts.iter().find(|c| c.name == contract)
    }

    /// The tile keys it takes beyond family, name, m, n and k, in order.
    pub fn keys(&self) -> Vec<&str> {
        self.params.iter().map(|p| p.name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[kind]
template = "t"
contracts = [{ name = "c", inputs = ["f32"] }]
ops = ["nn"]
[[param]]
name = "stages"
[[let]]
name = "threads"
value = "32 * stages"
[[let]]
name = "shared_bytes"
value = "m * k * ab_bytes"
[[limit]]
rule = "stages <= 4"
why = "at most 4 (here {stages})"
"#;

    #[test]
    fn a_minimal_manifest_parses() {
        let k = Kind::parse("x/t.toml", "x/t.cuh", MINIMAL).unwrap();
        assert_eq!(k.keys(), ["stages"]);
        assert_eq!(k.params[0].default, None);
        assert_eq!(k.grid, GridKind::Tiles);
        assert_eq!(k.operands, OperandPath::Loads);
        assert_eq!(k.limits[0].location.line, 14, "the `[[limit]]` line");
    }

    #[test]
    fn host_emulation_is_said_by_the_manifest_and_off_by_default() {
        assert!(
            !Kind::parse("x/t.toml", "x/t.cuh", MINIMAL)
                .unwrap()
                .host_emulation
        );
        let plain = MINIMAL.replace("ops = [\"nn\"]", "ops = [\"nn\"]\nhost_emulation = true");
        assert!(
            Kind::parse("x/t.toml", "x/t.cuh", &plain)
                .unwrap()
                .host_emulation
        );
        let wrong = MINIMAL.replace("ops = [\"nn\"]", "ops = [\"nn\"]\nhost_emulation = \"yes\"");
        assert!(Kind::parse("x/t.toml", "x/t.cuh", &wrong).is_err());
    }

    #[test]
    fn a_batched_kind_needs_grid_z_to_itself() {
        let batched = MINIMAL.replace("ops = [\"nn\"]", "ops = [\"nn\"]\nbatch = true");
        assert!(Kind::parse("x/t.toml", "x/t.cuh", &batched).unwrap().batch);
        assert!(!Kind::parse("x/t.toml", "x/t.cuh", MINIMAL).unwrap().batch);
        // A persistent kind may be batched (x CTAs an entry walk its tiles), and so may one
        // reading tensor maps (its batch kernels get 3-D maps).
        let persistent = batched.replace("batch = true", "batch = true\ngrid = \"persistent\"");
        assert!(Kind::parse("x/t.toml", "x/t.cuh", &persistent).is_ok());
        let split = format!("{batched}[[let]]\nname = \"split_k\"\nvalue = \"2\"\n");
        let e = Kind::parse("x/t.toml", "x/t.cuh", &split).unwrap_err();
        assert!(
            e[0].to_string().contains("both would take the grid's z"),
            "{}",
            e[0]
        );
    }

    #[test]
    fn bad_formulas_and_names_are_errors_at_their_line() {
        let text = MINIMAL.replace("32 * stages", "32 * stage");
        let e = Kind::parse("x/t.toml", "x/t.cuh", &text).unwrap_err();
        assert_eq!(e[0].location.line, 8, "{e:?}");
        assert!(e[0].to_string().contains("reads `stage`"), "{}", e[0]);
        let text = MINIMAL.replace("value = \"m * k * ab_bytes\"", "value = \"m * \"");
        let e = Kind::parse("x/t.toml", "x/t.cuh", &text).unwrap_err();
        assert!(e[0].to_string().contains("at the end"), "{}", e[0]);
        let text = MINIMAL.replace("name = \"shared_bytes\"", "name = \"smem\"");
        let e = Kind::parse("x/t.toml", "x/t.cuh", &text).unwrap_err();
        assert!(
            e[0].to_string()
                .contains("needs `[[let]] name = \"shared_bytes\"`"),
            "{}",
            e[0]
        );
        let text = MINIMAL.replace("here {stages}", "here {stagez}");
        assert!(Kind::parse("x/t.toml", "x/t.cuh", &text).is_err());
        let text = MINIMAL.replace("name = \"stages\"", "name = \"m\"");
        assert!(Kind::parse("x/t.toml", "x/t.cuh", &text).is_err());
    }

    #[test]
    fn a_parameter_range_is_checked() {
        let capped = MINIMAL.replace("name = \"stages\"\n", "name = \"stages\"\nmax = 4\n");
        let k = Kind::parse("x/t.toml", "x/t.cuh", &capped).unwrap();
        assert_eq!((k.params[0].min, k.params[0].max), (1, Some(4)));
        let inverted = MINIMAL.replace(
            "name = \"stages\"\n",
            "name = \"stages\"\nmin = 3\nmax = 2\n",
        );
        let e = Kind::parse("x/t.toml", "x/t.cuh", &inverted).unwrap_err();
        assert!(
            e[0].to_string().contains("max = 2 below its least value 3"),
            "{}",
            e[0]
        );
    }

    #[test]
    fn interpolation_fills_known_names_only() {
        let mut v = |n: &str| (n == "a").then(|| "1".to_string());
        assert_eq!(interpolate("x {a} {b} {", &mut v), "x 1 {b} {");
        assert_eq!(placeholders("{a} and {bc}"), ["a", "bc"]);
    }
}
