//! The fixed vocabulary every spec, table and request speaks: ops, policies, element types,
//! dimension ranges.
//!
//! These are the axes the kernel templates and the runtime understand; specs choose among them
//! but cannot add to them (a new op or dtype needs template code, not just a spec line).

use std::fmt;
use std::str::FromStr;

/// Operand layout of a GEMM, in the row-major GEMM view `C[m, n] = sum_k A(m, k) · B(k, n)`.
///
/// - `nn`: `A` is `[m, k]`, `B` is `[k, n]` (forward `Y = X·W`).
/// - `tn`: `A` is stored `[k, m]` (weight gradient `dW = X^T·dY`, reducing over the batch).
/// - `nt`: `B` is stored `[n, k]` (input gradient `dX = dY·W^T`, tied LM head).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// `A` `[m, k]`, `B` `[k, n]`.
    Nn,
    /// `A` stored `[k, m]`, `B` `[k, n]`.
    Tn,
    /// `A` `[m, k]`, `B` stored `[n, k]`.
    Nt,
}

impl Op {
    /// Every op.
    pub const ALL: [Op; 3] = [Op::Nn, Op::Tn, Op::Nt];

    /// The word specs and kernel names use.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Nn => "nn",
            Op::Tn => "tn",
            Op::Nt => "nt",
        }
    }
}

/// How a route trades speed for reproducibility; both are batch-invariant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// Scalar FMA, bit-exact to a CPU model of the family's contract.
    Exact,
    /// Tensor-core instructions (f32 operands run as tf32); still batch-invariant.
    TensorCore,
}

impl Policy {
    /// Every policy.
    pub const ALL: [Policy; 2] = [Policy::Exact, Policy::TensorCore];

    /// The word specs and kernel names use.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Exact => "exact",
            Policy::TensorCore => "tensor-core",
        }
    }
}

/// An element type in device memory or in the accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dtype {
    /// IEEE binary32.
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE binary16.
    F16,
}

impl Dtype {
    /// Every element type.
    pub const ALL: [Dtype; 3] = [Dtype::F32, Dtype::Bf16, Dtype::F16];

    /// The word specs and kernel names use.
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
            Dtype::F16 => "f16",
        }
    }

    /// Bytes of one element.
    pub fn size_bytes(self) -> u64 {
        match self {
            Dtype::F32 => 4,
            Dtype::Bf16 | Dtype::F16 => 2,
        }
    }

    /// The C++ type the templates use for this element.
    pub fn cuda_type(self) -> &'static str {
        match self {
            Dtype::F32 => "float",
            Dtype::Bf16 => "__nv_bfloat16",
            Dtype::F16 => "__half",
        }
    }
}

/// The element types of one GEMM: storage of `A` and `B`, storage of `C`, and the accumulator.
///
/// Spelled `ab.c.acc` in specs and kernel names, e.g. `bf16.bf16.f32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DtypeTriple {
    /// Storage of A and B.
    pub ab: Dtype,
    /// Storage of C (and the bias).
    pub c: Dtype,
    /// The accumulator.
    pub acc: Dtype,
}

impl DtypeTriple {
    /// The triple `ab.c.acc`.
    pub const fn new(ab: Dtype, c: Dtype, acc: Dtype) -> Self {
        DtypeTriple { ab, c, acc }
    }

    /// The `ab_c_acc` spelling used inside kernel names.
    pub fn ident(self) -> String {
        format!(
            "{}_{}_{}",
            self.ab.as_str(),
            self.c.as_str(),
            self.acc.as_str()
        )
    }
}

/// A word in a spec that is not in the vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownWord {
    /// What the word was to be (`op`, `dtype`).
    pub what: &'static str,
    /// The word.
    pub word: String,
    /// What would have been understood.
    pub expected: &'static str,
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}`; expected {}",
            self.what, self.word, self.expected
        )
    }
}

impl FromStr for Op {
    type Err = UnknownWord;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Op::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or(UnknownWord {
                what: "op",
                word: s.to_string(),
                expected: "one of nn, tn, nt",
            })
    }
}

impl FromStr for Policy {
    type Err = UnknownWord;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Policy::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or(UnknownWord {
                what: "policy",
                word: s.to_string(),
                expected: "one of exact, tensor-core",
            })
    }
}

impl FromStr for Dtype {
    type Err = UnknownWord;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or(UnknownWord {
                what: "dtype",
                word: s.to_string(),
                expected: "one of f32, bf16, f16",
            })
    }
}

impl FromStr for DtypeTriple {
    type Err = UnknownWord;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || UnknownWord {
            what: "dtype triple",
            word: s.to_string(),
            expected: "`ab.c.acc` such as bf16.bf16.f32",
        };
        let parts: Vec<&str> = s.split('.').collect();
        if parts.len() != 3 {
            return Err(bad());
        }
        let p = |i: usize| parts[i].parse::<Dtype>().map_err(|_| bad());
        Ok(DtypeTriple::new(p(0)?, p(1)?, p(2)?))
    }
}

macro_rules! display_as_str {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
display_as_str!(Op, Policy, Dtype);

impl fmt::Display for DtypeTriple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.ab, self.c, self.acc)
    }
}

/// The largest m, n or k a kernel takes: its dimensions are `i32`.
pub const DIM_MAX: u64 = i32::MAX as u64;

/// An inclusive range of one dimension; `max = None` is unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DimRange {
    /// The least value.
    pub min: u64,
    /// The largest value, `None` for no bound.
    pub max: Option<u64>,
}

impl DimRange {
    /// Every value.
    pub const ANY: DimRange = DimRange { min: 0, max: None };

    /// Whether `v` lies in the range.
    pub const fn contains(&self, v: u64) -> bool {
        v >= self.min
            && match self.max {
                None => true,
                Some(max) => v <= max,
            }
    }

    /// Whether the range is every value.
    pub fn is_any(&self) -> bool {
        *self == DimRange::ANY
    }
}

impl fmt::Display for DimRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max {
            None => write!(f, ">= {}", self.min),
            Some(max) if self.min == 0 => write!(f, "<= {max}"),
            Some(max) => write!(f, "{}..={max}", self.min),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        for op in Op::ALL {
            assert_eq!(op.as_str().parse::<Op>().unwrap(), op);
        }
        for p in Policy::ALL {
            assert_eq!(p.as_str().parse::<Policy>().unwrap(), p);
        }
        let t: DtypeTriple = "bf16.f32.f32".parse().unwrap();
        assert_eq!(t, DtypeTriple::new(Dtype::Bf16, Dtype::F32, Dtype::F32));
        assert_eq!(t.to_string(), "bf16.f32.f32");
        assert_eq!(t.ident(), "bf16_f32_f32");
    }

    #[test]
    fn unknown_words_say_what_is_expected() {
        let e = "bf16-f32".parse::<DtypeTriple>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown dtype triple `bf16-f32`; expected `ab.c.acc` such as bf16.bf16.f32"
        );
        assert!("fp8".parse::<Dtype>().is_err());
        assert!("NN".parse::<Op>().is_err());
    }
}
