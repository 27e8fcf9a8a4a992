//! The one list of kernel templates in `kernels-templates/` that a spec may name, with what
//! each supports and every limit it puts on a tile.
//!
//! Each `static_assert` of a template (and each limit its code relies on without asserting)
//! has the same rule here, so a tile the checker accepts compiles, and a tile it rejects is
//! rejected at its spec line rather than inside nvcc. Rules every template shares are checked
//! for every tile and are not repeated in the lists below:
//!
//! - `TileConfig` (common/tile_config.cuh): m, n, k, stages, thread_m, thread_n and k_split are
//!   positive (a zero is an error of its own);
//! - `m % thread_m == 0` and `n % thread_n == 0` (fma_gemm's static_assert; the thread tile
//!   divides the tile);
//! - threads a block a multiple of 32 and within the tier's limit (fma_gemm's static_assert);
//! - `OperandLayout` (common/operand_layout.cuh): the op is nn, tn or nt (the spec's op
//!   vocabulary has no other).
//!
//! Codegen also asserts in the generated CUDA that each template's `kThreads` and
//! `kSharedBytes` equal the spec's; the `staging` and `shared` of a template below are what
//! make the spec's shared-memory sum equal `kSharedBytes`, so a family must declare them as
//! its template does.

use crate::model::{SharedTerm, Staging, Tile};
use crate::vocab::Op;

/// The reduction chunk of the `fma-k256` contract (`kFmaChunk` in common/fma_chunks.cuh).
pub const FMA_CHUNK: u32 = 256;

/// A kernel template of `kernels-templates/`.
#[derive(Debug)]
pub struct KernelTemplate {
    /// The C++ class template a spec names in `template = "..."`.
    pub name: &'static str,
    /// Its header, relative to `kernels-templates/`.
    pub header: &'static str,
    pub kind: TemplateKind,
}

/// What a template instantiates.
#[derive(Debug)]
pub enum TemplateKind {
    /// A GEMM kernel `template<TAB, TC, OP, Tile>`, named by a `[family.*]`.
    Gemm(GemmTemplate),
    /// An elementwise conversion `template<From, To, Threads>`, named by a `[conversion.*]`.
    Conversion,
}

/// What a GEMM template supports.
#[derive(Debug)]
pub struct GemmTemplate {
    /// The ops it can be instantiated for.
    pub ops: &'static [Op],
    /// How it holds operands in shared memory (the family's `staging`).
    pub staging: Staging,
    /// What its `kSharedBytes` sums (the family's `shared`, in any order).
    pub shared: &'static [SharedTerm],
    /// Lowest compute capability its code compiles for, and why; `None` for any.
    pub min_cc: Option<((u32, u32), &'static str)>,
    /// Limits on a tile beyond the rules every template shares.
    pub limits: &'static [TileLimit],
}

/// One limit a template puts on a tile.
#[derive(Clone, Copy)]
pub struct TileLimit {
    /// The tile value it reads, as the error names it (`k`, `stages`, `m*k`).
    pub key: &'static str,
    /// The limit as the error states it (`k = 256`, `1 <= stages <= 2`).
    pub rule: &'static str,
    /// Why the template needs it.
    pub why: &'static str,
    /// The value `key` names.
    pub value: fn(&Tile) -> u64,
    /// Whether a tile keeps the limit.
    pub holds: fn(&Tile) -> bool,
}

impl std::fmt::Debug for TileLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TileLimit({}: {})", self.rule, self.why)
    }
}

/// The limits the two decode templates share (fma_decode_gemm.cuh, fma_decode_staged.cuh).
macro_rules! decode_limits {
    ($t:literal) => {
        [
            TileLimit {
                key: "n",
                rule: "n = 32",
                why: concat!($t, " makes a block one warp (32 columns) wide"),
                value: |t| t.n as u64,
                holds: |t| t.n == 32,
            },
            TileLimit {
                key: "thread_n",
                rule: "thread_n = 1",
                why: concat!($t, " gives each lane one column"),
                value: |t| t.thread_n as u64,
                holds: |t| t.thread_n == 1,
            },
            TileLimit {
                key: "thread_m",
                rule: "thread_m = m",
                why: concat!($t, ": each thread computes all of the block's rows"),
                value: |t| t.thread_m as u64,
                holds: |t| t.thread_m == t.m,
            },
            TileLimit {
                key: "k",
                rule: "k = 256",
                why: concat!($t, ": tile k must equal the contract's chunk of 256"),
                value: |t| t.k as u64,
                holds: |t| t.k == FMA_CHUNK,
            },
            TileLimit {
                key: "k_split",
                rule: "k_split >= m",
                why: concat!($t, ": the fold uses one thread per row of the block"),
                value: |t| t.k_split as u64,
                holds: |t| t.k_split >= t.m,
            },
        ]
    };
}

const DECODE_LIMITS: [TileLimit; 5] = decode_limits!("fma_decode_gemm");
const STAGED_DECODE_LIMITS: [TileLimit; 5] = decode_limits!("fma_decode_staged");

const FMA_GEMM_LIMITS: &[TileLimit] = &[
    TileLimit {
        key: "k_split",
        rule: "k_split = 1",
        why: "fma_gemm reduces K in sequence",
        value: |t| t.k_split as u64,
        holds: |t| t.k_split == 1,
    },
    TileLimit {
        key: "stages",
        rule: "1 <= stages <= 2",
        why: "fma_gemm supports one or two shared-memory stages",
        value: |t| t.stages as u64,
        holds: |t| t.stages == 1 || t.stages == 2,
    },
    TileLimit {
        key: "k",
        rule: "256 % k = 0",
        why: "fma_gemm folds chunk totals every 256 / k k-tiles, so k must divide the contract's chunk of 256",
        value: |t| t.k as u64,
        holds: |t| t.k != 0 && FMA_CHUNK.is_multiple_of(t.k),
    },
    // Not asserted in the template, but a misaligned float4 read faults at run time: B's stage
    // starts m*k floats into shared memory, and a thread reads its thread_n columns of B as
    // float4 when thread_n is a multiple of 4.
    TileLimit {
        key: "m*k",
        rule: "m*k % 4 = 0 when thread_n % 4 = 0",
        why: "fma_gemm reads B from shared memory as float4, and B's stage starts m*k floats in",
        value: |t| t.m as u64 * t.k as u64,
        holds: |t| !t.thread_n.is_multiple_of(4) || (t.m as u64 * t.k as u64).is_multiple_of(4),
    },
    // Likewise for A in the second stage, which starts m*k + k*n floats in.
    TileLimit {
        key: "k*n",
        rule: "k*n % 4 = 0 when thread_m % 4 = 0 and stages = 2",
        why: "fma_gemm reads A from shared memory as float4, and the second stage starts m*k + k*n floats in",
        value: |t| t.k as u64 * t.n as u64,
        holds: |t| {
            !t.thread_m.is_multiple_of(4)
                || t.stages != 2
                || (t.k as u64 * t.n as u64).is_multiple_of(4)
        },
    },
];

const FMA_DECODE_GEMM_LIMITS: &[TileLimit] = &[
    DECODE_LIMITS[0],
    DECODE_LIMITS[1],
    DECODE_LIMITS[2],
    DECODE_LIMITS[3],
    DECODE_LIMITS[4],
    // Not asserted: the template ignores Tile::STAGES. A second value would only give one
    // kernel two names.
    TileLimit {
        key: "stages",
        rule: "stages = 1",
        why: "fma_decode_gemm reads operands straight from global memory and has no shared-memory stages",
        value: |t| t.stages as u64,
        holds: |t| t.stages == 1,
    },
];

const FMA_DECODE_STAGED_LIMITS: &[TileLimit] = &[
    STAGED_DECODE_LIMITS[0],
    STAGED_DECODE_LIMITS[1],
    STAGED_DECODE_LIMITS[2],
    STAGED_DECODE_LIMITS[3],
    STAGED_DECODE_LIMITS[4],
    TileLimit {
        key: "stages",
        rule: "stages >= 2",
        why: "fma_decode_staged needs at least two stages, one loading while one is read",
        value: |t| t.stages as u64,
        holds: |t| t.stages >= 2,
    },
];

/// Every kernel template a spec may name. Its other static_asserts hold for any tile:
/// fma_decode_gemm's `kFmaChunk % kBatch == 0` (256 % 8), fma_decode_staged's
/// `kFmaChunk % kRows == 0` (256 % 32) and `(kRows * kRowPieces) % 32 == 0` (32 * (n / 4 or
/// n / 8), n = 32).
pub const KNOWN: &[KernelTemplate] = &[
    KernelTemplate {
        name: "fma_gemm",
        header: "fma/fma_gemm.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            ops: &[Op::Nn, Op::Tn, Op::Nt],
            staging: Staging::F32,
            shared: &[SharedTerm::Operands, SharedTerm::Totals],
            min_cc: None,
            limits: FMA_GEMM_LIMITS,
        }),
    },
    KernelTemplate {
        name: "fma_decode_gemm",
        header: "fma/fma_decode_gemm.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            ops: &[Op::Nn, Op::Tn, Op::Nt],
            staging: Staging::F32,
            shared: &[SharedTerm::Partials],
            min_cc: None,
            limits: FMA_DECODE_GEMM_LIMITS,
        }),
    },
    KernelTemplate {
        name: "fma_decode_staged",
        header: "fma/fma_decode_staged.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            // static_assert(OP == kOpNN): the slices copy A as [m, k] and B as [k, n].
            ops: &[Op::Nn],
            staging: Staging::Operand,
            shared: &[SharedTerm::Slices, SharedTerm::Partials],
            min_cc: Some(((8, 0), "it copies operands with cp.async")),
            limits: FMA_DECODE_STAGED_LIMITS,
        }),
    },
    KernelTemplate {
        name: "ConvertMatrix",
        header: "convert/convert_matrix.cuh",
        // Its only parameter limit, Threads a multiple of 32 and at most 1024, is checked for
        // every conversion.
        kind: TemplateKind::Conversion,
    },
];

/// The template of this name.
pub fn find(name: &str) -> Option<&'static KernelTemplate> {
    KNOWN.iter().find(|t| t.name == name)
}

/// The known template whose name is closest to `name`, when one is close enough to be a
/// likely misspelling (case and underscores aside, or a few edits away).
pub fn closest(name: &str) -> Option<&'static str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('_', "");
    let n = norm(name);
    KNOWN
        .iter()
        .map(|t| (edit_distance(&n, &norm(t.name)), t.name))
        .filter(|&(d, known)| d <= 2.max(known.len() / 4))
        .min()
        .map(|(_, known)| known)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `name (header), ...` of every template of one kind, for error messages.
pub fn listing(gemm: bool) -> String {
    KNOWN
        .iter()
        .filter(|t| matches!(t.kind, TemplateKind::Gemm(_)) == gemm)
        .map(|t| format!("{} ({})", t.name, t.header))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings_find_their_template() {
        assert_eq!(closest("fma_gem"), Some("fma_gemm"));
        assert_eq!(closest("convert_matrix"), Some("ConvertMatrix"));
        assert_eq!(closest("fma_decode_stagd"), Some("fma_decode_staged"));
        assert_eq!(closest("tc"), None);
    }

    #[test]
    fn names_and_headers_are_unique() {
        for (i, a) in KNOWN.iter().enumerate() {
            for b in &KNOWN[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.header, b.header);
            }
        }
    }
}
