//! Evaluating a kind's manifest for one kernel: a tile of a family at one (op, dtype) on one tier.
//! The one place every derived number is computed: the validation checks them against the tier
//! and the hardware, the generator writes them into the kernel's config (the template reads
//! them) and into the runtime's tables.

use super::formula::{EvalError, Formula, Value};
use super::manifest::{keys, Kind, Limit, MapDecl, BUILTIN_NAMES};
use gemm_core::vocab::{DtypeTriple, Op};
use gemm_core::Operand as MapOperand;
use std::collections::BTreeMap;

/// One kernel to evaluate a manifest for, as the values its formulas read (the spec model
/// builds it from a tile, its family and its tier: `model::kernel_point`).
#[derive(Clone, Copy, Debug)]
pub struct KernelPoint<'a> {
    pub kind: &'a Kind,
    /// The tile's m, n and k.
    pub shape: (u32, u32, u32),
    /// The tile's parameters; one it leaves out takes the kind's default.
    pub params: &'a [(String, u32)],
    pub op: Op,
    pub dtype: DtypeTriple,
    /// The contract's k step and K chunk.
    pub k_step: u32,
    pub chunk: u32,
    /// The instruction's m, n and k.
    pub instruction: (u32, u32, u32),
    /// The tier's limits: threads a block, shared bytes a block, registers a thread.
    pub max_threads_per_block: u32,
    pub max_shared_bytes: u64,
    pub max_registers_per_thread: u32,
}

impl KernelPoint<'_> {
    /// The tile's value of a parameter, else the kind's default, else 0.
    fn param(&self, param: &super::manifest::Param) -> u32 {
        self.params
            .iter()
            .find(|(n, _)| *n == param.name)
            .map(|(_, v)| *v)
            .or(param.default)
            .unwrap_or(0)
    }
}

/// A tensor map's box and swizzle, evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedMap {
    pub operand: MapOperand,
    pub optional: bool,
    pub box_inner: u32,
    pub box_outer: u32,
    pub swizzle_bytes: u32,
}

/// Everything a manifest derives for one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derived {
    /// Every parameter (the tile's value or the default) and every let, in manifest order:
    /// what the kernel's config carries.
    pub values: Vec<(String, i64)>,
    pub threads: u32,
    pub shared_bytes: u64,
    /// CTAs a cluster along M.
    pub cluster: u32,
    /// CTAs a cluster along z, splitting K (the grid's z); 1 for none.
    pub split_k: u32,
    /// The largest K the kernel takes, when it is bounded.
    pub max_k: Option<u64>,
    /// `__launch_bounds__`'s second value, when the kernel has one.
    pub min_blocks: Option<u32>,
    /// f32 accumulators a thread, when the manifest says.
    pub accumulators: Option<u64>,
    /// Registers a thread of the accumulating warps is granted, when the manifest says (above
    /// the block's even share).
    pub accumulator_registers: Option<u64>,
    /// Bytes a plain-load kernel's vector path needs its operands aligned to, when it has one.
    pub vector_bytes: Option<u32>,
    pub tensor_maps: Vec<DerivedMap>,
    /// The builtin names' values for this kernel (the tile's m, n, k, ...), for `describe`.
    pub builtins: Vec<(String, i64)>,
}

impl Derived {
    /// The value of a parameter or let.
    pub fn value(&self, name: &str) -> Option<i64> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

/// A formula of the manifest that could not be evaluated for a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeriveError {
    /// What it computes (`let shared_bytes`, `tensor map a inner`).
    pub what: String,
    pub formula: String,
    pub error: String,
}

impl std::fmt::Display for DeriveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} `{}` {}", self.what, self.formula, self.error)
    }
}

/// A limit a kernel breaks: the rule, the values it read, and why the template needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenLimit<'a> {
    pub limit: &'a Limit,
    /// (name, value) of each name the rule reads.
    pub values: Vec<(String, String)>,
    /// The limit's why, `{name}`s filled.
    pub why: String,
    /// Set when the rule could not even be evaluated.
    pub error: Option<EvalError>,
}

/// The names a kernel's formulas read, before the kind's lets.
fn builtins(p: &KernelPoint<'_>) -> BTreeMap<&'static str, Value> {
    let mut env = BTreeMap::new();
    let int = |v: u64| Value::Int(i64::try_from(v).unwrap_or(i64::MAX));
    for (name, _) in BUILTIN_NAMES {
        let v = match *name {
            "m" => int(p.shape.0 as u64),
            "n" => int(p.shape.1 as u64),
            "k" => int(p.shape.2 as u64),
            "ab_bytes" => int(p.dtype.ab.size_bytes()),
            "c_bytes" => int(p.dtype.c.size_bytes()),
            "a_k_major" => Value::Bool(p.op != Op::Tn),
            "b_k_major" => Value::Bool(p.op == Op::Nt),
            "k_step" => int(p.k_step as u64),
            "chunk" => int(p.chunk as u64),
            "inst_m" => int(p.instruction.0 as u64),
            "inst_n" => int(p.instruction.1 as u64),
            "inst_k" => int(p.instruction.2 as u64),
            "threads_per_block" => int(p.max_threads_per_block as u64),
            "max_shared_bytes" => int(p.max_shared_bytes),
            "registers_per_thread" => int(p.max_registers_per_thread as u64),
            _ => continue,
        };
        env.insert(*name, v);
    }
    env
}

/// Every name a formula of one kernel may read, with its value.
type Env = BTreeMap<String, Value>;

/// The kernel's environment: builtins, then parameters (the tile's values), then lets in order;
/// and the (name, value) of every parameter and let, in order.
fn environment(p: &KernelPoint<'_>) -> Result<(Env, Vec<(String, i64)>), DeriveError> {
    let mut env: BTreeMap<String, Value> = builtins(p)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let mut values = Vec::new();
    for param in &p.kind.params {
        let v = p.param(param);
        env.insert(param.name.clone(), Value::Int(v as i64));
        values.push((param.name.clone(), v as i64));
    }
    for l in &p.kind.lets {
        let v = {
            let look = |n: &str| env.get(n).copied();
            l.value.eval(&look)
        };
        let v = v.map_err(|e| DeriveError {
            what: format!("let {}", l.name),
            formula: l.value.text().to_string(),
            error: e.to_string(),
        })?;
        let i = match v {
            Value::Int(i) => i,
            Value::Bool(b) => i64::from(b),
        };
        env.insert(l.name.clone(), v);
        values.push((l.name.clone(), i));
    }
    Ok((env, values))
}

fn eval_u32(f: &Formula, what: &str, env: &BTreeMap<String, Value>) -> Result<u32, DeriveError> {
    let look = |n: &str| env.get(n).copied();
    let err = |error: String| DeriveError {
        what: what.to_string(),
        formula: f.text().to_string(),
        error,
    };
    let v = f.eval_int(&look).map_err(|e| err(e.to_string()))?;
    u32::try_from(v).map_err(|_| err(format!("gives {v}, not a whole number below 2^32")))
}

/// Evaluates every number the kind derives for the kernel.
pub fn derive(p: &KernelPoint<'_>) -> Result<Derived, DeriveError> {
    let (env, values) = environment(p)?;
    let get = |name: &str| values.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let as_u32 = |name: &str, v: i64| {
        u32::try_from(v).map_err(|_| DeriveError {
            what: format!("let {name}"),
            formula: p
                .kind
                .lets
                .iter()
                .find(|l| l.name == name)
                .map_or(String::new(), |l| l.value.text().to_string()),
            error: format!("gives {v}, not a whole number below 2^32"),
        })
    };
    let threads = as_u32(keys::THREADS, get(keys::THREADS).unwrap_or(0))?;
    let shared_bytes = as_u32(keys::SHARED_BYTES, get(keys::SHARED_BYTES).unwrap_or(0))? as u64;
    let cluster = as_u32(keys::CLUSTER, get(keys::CLUSTER).unwrap_or(1))?;
    let split_k = as_u32(keys::SPLIT_K, get(keys::SPLIT_K).unwrap_or(1))?;
    let max_k = get(keys::MAX_K).filter(|&v| v > 0).map(|v| v as u64);
    let min_blocks = as_u32(keys::MIN_BLOCKS, get(keys::MIN_BLOCKS).unwrap_or(0))?;
    let accumulators = get(keys::ACCUMULATORS).map(|v| v.max(0) as u64);
    let accumulator_registers = get(keys::ACCUMULATOR_REGISTERS)
        .filter(|&v| v > 0)
        .map(|v| v as u64);
    let vector_bytes = as_u32(keys::VECTOR_BYTES, get(keys::VECTOR_BYTES).unwrap_or(0))?;
    let mut tensor_maps = Vec::new();
    for m in &p.kind.tensor_maps {
        let MapDecl {
            operand,
            optional,
            inner,
            outer,
            swizzle,
            ..
        } = m;
        let name = operand.as_str();
        tensor_maps.push(DerivedMap {
            operand: *operand,
            optional: *optional,
            box_inner: eval_u32(inner, &format!("tensor map {name} inner"), &env)?,
            box_outer: eval_u32(outer, &format!("tensor map {name} outer"), &env)?,
            swizzle_bytes: eval_u32(swizzle, &format!("tensor map {name} swizzle"), &env)?,
        });
    }
    let builtins = env
        .iter()
        .filter(|(n, _)| BUILTIN_NAMES.iter().any(|(b, _)| b == n))
        .map(|(n, v)| {
            let v = match v {
                Value::Int(i) => *i,
                Value::Bool(b) => i64::from(*b),
            };
            (n.clone(), v)
        })
        .collect();
    Ok(Derived {
        builtins,
        values,
        threads,
        shared_bytes,
        cluster: cluster.max(1),
        split_k: split_k.max(1),
        max_k,
        min_blocks: (min_blocks > 0).then_some(min_blocks),
        accumulators,
        accumulator_registers,
        vector_bytes: (vector_bytes > 0).then_some(vector_bytes),
        tensor_maps,
    })
}

/// The limits the kernel breaks (none when every rule holds).
pub fn broken_limits<'a>(p: &KernelPoint<'a>) -> Vec<BrokenLimit<'a>> {
    let env = match environment(p) {
        Ok((env, _)) => env,
        // A let that cannot be evaluated is reported by `derive`; the limits read the
        // builtins and parameters alone then.
        Err(_) => {
            let mut env: BTreeMap<String, Value> = builtins(p)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            for param in &p.kind.params {
                let v = p.param(param);
                env.insert(param.name.clone(), Value::Int(v as i64));
            }
            env
        }
    };
    check_limits(&p.kind.limits, &env)
}

/// The limits of `limits` that break under `env`.
pub(crate) fn check_limits<'a>(
    limits: &'a [Limit],
    env: &BTreeMap<String, Value>,
) -> Vec<BrokenLimit<'a>> {
    let look = |n: &str| env.get(n).copied();
    limits
        .iter()
        .filter_map(|l| {
            let (holds, error) = match l.rule.eval_bool(&look) {
                Ok(b) => (b, None),
                Err(e) => (false, Some(e)),
            };
            if holds {
                return None;
            }
            let values = l
                .rule
                .names()
                .into_iter()
                .filter_map(|n| env.get(n).map(|v| (n.to_string(), v.to_string())))
                .collect();
            let why =
                super::manifest::interpolate(&l.why, &mut |n| env.get(n).map(|v| v.to_string()));
            Some(BrokenLimit {
                limit: l,
                values,
                why,
                error,
            })
        })
        .collect()
}

/// A conversion kind's limits for a block of `threads`.
pub fn broken_conversion_limits(kind: &Kind, threads: u32) -> Vec<BrokenLimit<'_>> {
    let mut env = BTreeMap::new();
    env.insert("threads".to_string(), Value::Int(threads as i64));
    check_limits(&kind.limits, &env)
}

/// The kind's one-line description of a tile (its `describe`, names filled from the derived
/// values), e.g. `4 stage(s), 2 consumer warpgroup(s), ...`.
pub fn describe(kind: &Kind, derived: &Derived) -> String {
    super::manifest::interpolate(&kind.describe, &mut |n| {
        derived
            .value(n)
            .or_else(|| {
                derived
                    .builtins
                    .iter()
                    .find(|(b, _)| b == n)
                    .map(|(_, v)| *v)
            })
            .map(|v| v.to_string())
    })
}
