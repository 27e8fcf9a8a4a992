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
//!
//! # Tensor-core templates (docs/tensor-core.md §2)
//!
//! Each is `template <typename TAB, typename TC, int OP, typename Cfg> struct X` with
//! `static constexpr int kThreads, kSharedBytes, kClusterM`, and for the TMA kinds
//! `kABoxInner, kABoxOuter, kBBoxInner, kBBoxOuter, kSwizzleA, kSwizzleB`; the generated CUDA
//! `static_assert`s each against the value the runtime's tables carry. The generator
//! instantiates them with these configuration types, which the template's header (or a
//! header it includes) defines, each member a `static constexpr int` of the same name:
//!
//! - `wgmma_tma_gemm<TAB, TC, OP, WgmmaConfig<M, N, K, STAGES, CONSUMERS, CLUSTER_M>>`
//! - `mma_decode_tma<TAB, TC, OP, MmaDecodeConfig<M, N, K, STAGES>>`
//! - `mma_gemm<TAB, TC, OP, MmaConfig<M, N, K, WARPS_M, WARPS_N, STAGES>>`
//! - `mma_async_gemm<TAB, TC, OP, MmaConfig<M, N, K, WARPS_M, WARPS_N, STAGES>>`
//!
//! (all in common/tc_config.cuh).
//!
//! Their numbers, which the templates must compute the same way:
//!
//! - `kThreads`: wgmma_tma_gemm `128 * (1 + CONSUMERS)`; mma_decode_tma `32 * (N / 8) + 32`;
//!   mma_gemm and mma_async_gemm `32 * WARPS_M * WARPS_N`.
//! - `kSharedBytes` (16-bit operands, 2 bytes an element): the TMA kinds
//!   `STAGES * (M * K + K * N) * 2 + 1024 + STAGES * 16` (the stages, slack to align the first
//!   stage to 1024 bytes for the 128-byte swizzle, and a full and an empty 8-byte mbarrier a
//!   stage: shared terms `operands`, `alignment`, `barriers`); mma_gemm
//!   `(M + N) * (K * E + 16)` with E the operand's bytes (one k-step of A and B, k-contiguous
//!   rows padded by 16 bytes: shared term `padded_step`; its STAGES = 2 keeps the next step in
//!   registers).
//!   mma_async_gemm `STAGES * (M * K + K * N) * 2` (the stages, rows XOR-swizzled rather than
//!   padded: shared term `operands`).
//! - `kClusterM`: `CLUSTER_M` for wgmma_tma_gemm, 1 for the others.
//! - Boxes (elements of the operand as stored, inner = the contiguous dimension) and swizzle
//!   bytes: see [`tensor_map_box`].

use crate::model::{
    MapOperand, MmaAsyncParams, MmaDecodeTmaParams, MmaGemmParams, ScalarParams, SharedTerm,
    Staging, Tile, TileKind, WgmmaTmaParams,
};
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
    /// The kind of kernel it is, with the limits it puts on a tile of that kind.
    pub rules: KindRules,
    /// The ops it can be instantiated for.
    pub ops: &'static [Op],
    /// How it holds operands in shared memory (the family's `staging`).
    pub staging: Staging,
    /// What its `kSharedBytes` sums (the family's `shared`, in any order).
    pub shared: &'static [SharedTerm],
    /// Lowest compute capability its code compiles for, and why; `None` for any.
    pub min_cc: Option<((u32, u32), &'static str)>,
    /// Only on an arch-specific target (`sm_90a`), and why: the family's instruction must be
    /// an arch-specific one.
    pub arch_specific: Option<&'static str>,
    /// Bytes an operand element may have (the tensor-core templates take 16-bit A and B, and
    /// mma_gemm also 32-bit as tf32); empty for any.
    pub operand_bytes: &'static [u64],
}

/// A template's kind and the limits it puts on a tile of that kind, beyond the rules every
/// template of the kind shares.
#[derive(Debug)]
pub enum KindRules {
    Scalar(&'static [TileLimit<ScalarParams>]),
    WgmmaTma(&'static [TileLimit<WgmmaTmaParams>]),
    MmaDecodeTma(&'static [TileLimit<MmaDecodeTmaParams>]),
    MmaGemm(&'static [TileLimit<MmaGemmParams>]),
    MmaAsync(&'static [TileLimit<MmaAsyncParams>]),
}

impl KindRules {
    pub fn kind(&self) -> TileKind {
        match self {
            KindRules::Scalar(_) => TileKind::Scalar,
            KindRules::WgmmaTma(_) => TileKind::WgmmaTma,
            KindRules::MmaDecodeTma(_) => TileKind::MmaDecodeTma,
            KindRules::MmaGemm(_) => TileKind::MmaGemm,
            KindRules::MmaAsync(_) => TileKind::MmaAsync,
        }
    }
}

/// A broken limit: (key, value, rule, why).
pub type Broken = (&'static str, u64, &'static str, &'static str);

impl KindRules {
    /// The limits `tile` breaks; none when the tile's parameters are of another kind (the
    /// resolver builds a tile's parameters from its family's kind, so they never are).
    pub fn broken(&self, tile: &Tile) -> Vec<Broken> {
        use crate::model::TileParams as P;
        fn run<T>(limits: &[TileLimit<T>], tile: &Tile, p: &T) -> Vec<Broken> {
            limits
                .iter()
                .filter(|l| !(l.holds)(tile, p))
                .map(|l| (l.key, (l.value)(tile, p), l.rule, l.why))
                .collect()
        }
        match (self, &tile.params) {
            (KindRules::Scalar(l), P::Scalar(p)) => run(l, tile, p),
            (KindRules::WgmmaTma(l), P::WgmmaTma(p)) => run(l, tile, p),
            (KindRules::MmaDecodeTma(l), P::MmaDecodeTma(p)) => run(l, tile, p),
            (KindRules::MmaGemm(l), P::MmaGemm(p)) => run(l, tile, p),
            (KindRules::MmaAsync(l), P::MmaAsync(p)) => run(l, tile, p),
            _ => Vec::new(),
        }
    }
}

/// One limit a template puts on a tile whose parameters are `P`.
pub struct TileLimit<P> {
    /// The tile value it reads, as the error names it (`k`, `stages`, `m*k`).
    pub key: &'static str,
    /// The limit as the error states it (`k = 256`, `1 <= stages <= 2`).
    pub rule: &'static str,
    /// Why the template needs it.
    pub why: &'static str,
    /// The value `key` names.
    pub value: fn(&Tile, &P) -> u64,
    /// Whether a tile keeps the limit.
    pub holds: fn(&Tile, &P) -> bool,
}

impl<P> Clone for TileLimit<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for TileLimit<P> {}

impl<P> std::fmt::Debug for TileLimit<P> {
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
                value: |t, _| t.n as u64,
                holds: |t, _| t.n == 32,
            },
            TileLimit {
                key: "thread_n",
                rule: "thread_n = 1",
                why: concat!($t, " gives each lane one column"),
                value: |_, p| p.thread_n as u64,
                holds: |_, p| p.thread_n == 1,
            },
            TileLimit {
                key: "thread_m",
                rule: "thread_m = m",
                why: concat!($t, ": each thread computes all of the block's rows"),
                value: |_, p| p.thread_m as u64,
                holds: |t, p| p.thread_m == t.m,
            },
            TileLimit {
                key: "k",
                rule: "k = 256",
                why: concat!($t, ": tile k must equal the contract's chunk of 256"),
                value: |t, _| t.k as u64,
                holds: |t, _| t.k == FMA_CHUNK,
            },
            TileLimit {
                key: "k_split",
                rule: "k_split >= m",
                why: concat!($t, ": the fold uses one thread per row of the block"),
                value: |_, p| p.k_split as u64,
                holds: |t, p| p.k_split >= t.m,
            },
        ]
    };
}

const DECODE_LIMITS: [TileLimit<ScalarParams>; 5] = decode_limits!("fma_decode_gemm");
const STAGED_DECODE_LIMITS: [TileLimit<ScalarParams>; 5] = decode_limits!("fma_decode_staged");

const FMA_GEMM_LIMITS: &[TileLimit<ScalarParams>] = &[
    TileLimit {
        key: "k_split",
        rule: "k_split = 1",
        why: "fma_gemm reduces K in sequence",
        value: |_, p| p.k_split as u64,
        holds: |_, p| p.k_split == 1,
    },
    TileLimit {
        key: "stages",
        rule: "1 <= stages <= 2",
        why: "fma_gemm supports one or two shared-memory stages",
        value: |_, p| p.stages as u64,
        holds: |_, p| p.stages == 1 || p.stages == 2,
    },
    TileLimit {
        key: "k",
        rule: "256 % k = 0",
        why: "fma_gemm folds chunk totals every 256 / k k-tiles, so k must divide the contract's chunk of 256",
        value: |t, _| t.k as u64,
        holds: |t, _| t.k != 0 && FMA_CHUNK.is_multiple_of(t.k),
    },
    // Not asserted in the template, but a misaligned float4 read faults at run time: B's stage
    // starts m*k floats into shared memory, and a thread reads its thread_n columns of B as
    // float4 when thread_n is a multiple of 4.
    TileLimit {
        key: "m*k",
        rule: "m*k % 4 = 0 when thread_n % 4 = 0",
        why: "fma_gemm reads B from shared memory as float4, and B's stage starts m*k floats in",
        value: |t, _| t.m as u64 * t.k as u64,
        holds: |t, p| !p.thread_n.is_multiple_of(4) || (t.m as u64 * t.k as u64).is_multiple_of(4),
    },
    // Likewise for A in the second stage, which starts m*k + k*n floats in.
    TileLimit {
        key: "k*n",
        rule: "k*n % 4 = 0 when thread_m % 4 = 0 and stages = 2",
        why: "fma_gemm reads A from shared memory as float4, and the second stage starts m*k + k*n floats in",
        value: |t, _| t.k as u64 * t.n as u64,
        holds: |t, p| {
            !p.thread_m.is_multiple_of(4)
                || p.stages != 2
                || (t.k as u64 * t.n as u64).is_multiple_of(4)
        },
    },
];

const FMA_DECODE_GEMM_LIMITS: &[TileLimit<ScalarParams>] = &[
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
        value: |_, p| p.stages as u64,
        holds: |_, p| p.stages == 1,
    },
];

const FMA_DECODE_STAGED_LIMITS: &[TileLimit<ScalarParams>] = &[
    STAGED_DECODE_LIMITS[0],
    STAGED_DECODE_LIMITS[1],
    STAGED_DECODE_LIMITS[2],
    STAGED_DECODE_LIMITS[3],
    STAGED_DECODE_LIMITS[4],
    TileLimit {
        key: "stages",
        rule: "stages >= 2",
        why: "fma_decode_staged needs at least two stages, one loading while one is read",
        value: |_, p| p.stages as u64,
        holds: |_, p| p.stages >= 2,
    },
];

/// What the TMA kinds keep in shared memory: the stages, 1024 bytes of alignment slack and two
/// mbarriers a stage.
const TMA_SHARED: &[SharedTerm] = &[
    SharedTerm::Operands,
    SharedTerm::Alignment,
    SharedTerm::Barriers,
];

/// What wgmma_tma_gemm keeps in shared memory: the TMA kinds' terms and the staging of C for
/// its TMA-store epilogue.
const WGMMA_SHARED: &[SharedTerm] = &[
    SharedTerm::Operands,
    SharedTerm::CStaging,
    SharedTerm::Alignment,
    SharedTerm::Barriers,
];

/// The k of a TMA stage: one 128-byte swizzled row of 16-bit elements.
pub const TMA_STAGE_K: u32 = 64;

const WGMMA_TMA_LIMITS: &[TileLimit<WgmmaTmaParams>] = &[
    TileLimit {
        key: "consumers",
        rule: "1 <= consumers <= 2",
        why: "wgmma_tma_gemm runs one producer and one or two consumer warpgroups (setmaxnreg shares 64 Ki registers among at most three)",
        value: |_, p| p.consumers as u64,
        holds: |_, p| p.consumers == 1 || p.consumers == 2,
    },
    TileLimit {
        key: "m",
        rule: "m = 64 * consumers",
        why: "each consumer warpgroup computes 64 rows of the tile with wgmma m64nNk16",
        value: |t, _| t.m as u64,
        holds: |t, p| t.m as u64 == 64 * p.consumers as u64,
    },
    TileLimit {
        key: "n",
        rule: "n % 64 = 0 and n <= 256",
        why: "wgmma's n is at most 256, and B arrives in boxes of 64 columns",
        value: |t, _| t.n as u64,
        holds: |t, _| t.n.is_multiple_of(64) && t.n <= 256,
    },
    TileLimit {
        key: "k",
        rule: "k = 64",
        why: "a stage is 64 k, one 128-byte swizzled row of 16-bit elements",
        value: |t, _| t.k as u64,
        holds: |t, _| t.k == TMA_STAGE_K,
    },
    TileLimit {
        key: "stages",
        rule: "2 <= stages <= 8",
        why: "the TMA ring needs a stage loading while another is consumed, and wgmma_tma_gemm's barrier phases support at most 8",
        value: |_, p| p.stages as u64,
        holds: |_, p| (2..=8).contains(&p.stages),
    },
    TileLimit {
        key: "cluster_m",
        rule: "1 <= cluster_m <= 2",
        why: "wgmma_tma_gemm multicasts B to clusters of one or two CTAs along M",
        value: |_, p| p.cluster_m as u64,
        holds: |_, p| p.cluster_m == 1 || p.cluster_m == 2,
    },
];

const MMA_DECODE_TMA_LIMITS: &[TileLimit<MmaDecodeTmaParams>] = &[
    TileLimit {
        key: "m",
        rule: "m = 16",
        why: "a CTA computes the 16 rows of one mma.sync m16n8k16",
        value: |t, _| t.m as u64,
        holds: |t, _| t.m == 16,
    },
    TileLimit {
        key: "n",
        rule: "n = 16, 32 or 64",
        why: "one consumer warp per 8 columns, and B stored [k, n] arrives in boxes of n-element rows whose n * 2 bytes must be a TMA swizzle width (32, 64 or 128)",
        value: |t, _| t.n as u64,
        holds: |t, _| matches!(t.n, 16 | 32 | 64),
    },
    TileLimit {
        key: "k",
        rule: "k = 64",
        why: "a stage is 64 k, one 128-byte swizzled row of 16-bit elements",
        value: |t, _| t.k as u64,
        holds: |t, _| t.k == TMA_STAGE_K,
    },
    TileLimit {
        key: "stages",
        rule: "2 <= stages <= 16",
        why: "the TMA ring needs a stage loading while another is consumed, and mma_decode_tma supports at most 16",
        value: |_, p| p.stages as u64,
        holds: |_, p| (2..=16).contains(&p.stages),
    },
];

const MMA_GEMM_LIMITS: &[TileLimit<MmaGemmParams>] = &[
    TileLimit {
        key: "m",
        rule: "m % (16 * warps_m) = 0",
        why: "each warp covers whole 16-row mma.sync fragments",
        value: |t, _| t.m as u64,
        holds: |t, p| (t.m as u64).is_multiple_of(16 * p.warps_m as u64),
    },
    TileLimit {
        key: "n",
        rule: "n % (8 * warps_n) = 0",
        why: "each warp covers whole 8-column mma.sync fragments",
        value: |t, _| t.n as u64,
        holds: |t, p| (t.n as u64).is_multiple_of(8 * p.warps_n as u64),
    },
    TileLimit {
        key: "k",
        rule: "k % 16 = 0",
        why: "a step is whole k16 steps of the contract",
        value: |t, _| t.k as u64,
        holds: |t, _| t.k.is_multiple_of(16),
    },
    TileLimit {
        key: "stages",
        rule: "1 <= stages <= 2",
        why: "mma_gemm loads a step then computes it (1), or keeps the next step's loads in flight in registers (2)",
        value: |_, p| p.stages as u64,
        holds: |_, p| p.stages == 1 || p.stages == 2,
    },
];

/// A dimension mma_async_gemm stages as the contiguous rows of an operand (k always; m for tn's
/// A, n for nn's and tn's B): 16 or 32, or a multiple of 64, so a row is 32 or 64 bytes or whole
/// 128-byte lines and the XOR swizzle (tc/cp_async.cuh) keeps ldmatrix conflict-free.
fn swizzled_row(v: u32) -> bool {
    v == 16 || v == 32 || v.is_multiple_of(64)
}

/// The limit `swizzled_row` puts on tile dimension `$d`, with why the template stages it so.
macro_rules! swizzled_row_limit {
    ($d:ident, $why:literal) => {
        TileLimit {
            key: stringify!($d),
            rule: concat!(stringify!($d), " = 16, 32 or a multiple of 64"),
            why: concat!(
                $why,
                ", which the chunk swizzle needs to be 32 or 64 bytes or whole 128-byte lines"
            ),
            value: |t, _| t.$d as u64,
            holds: |t, _| swizzled_row(t.$d),
        }
    };
}

const MMA_ASYNC_LIMITS: &[TileLimit<MmaAsyncParams>] = &[
    swizzled_row_limit!(k, "a stage holds k-contiguous rows of A or B"),
    swizzled_row_limit!(m, "tn stages A as rows of m elements"),
    swizzled_row_limit!(n, "nn and tn stage B as rows of n elements"),
    TileLimit {
        key: "m",
        rule: "m % (16 * warps_m) = 0",
        why: "each warp covers whole 16-row mma.sync fragments",
        value: |t, _| t.m as u64,
        holds: |t, p| (t.m as u64).is_multiple_of(16 * p.warps_m as u64),
    },
    TileLimit {
        key: "n",
        rule: "n % (16 * warps_n) = 0",
        why: "each warp loads B's fragments in pairs of 8 columns (one ldmatrix.x4)",
        value: |t, _| t.n as u64,
        holds: |t, p| (t.n as u64).is_multiple_of(16 * p.warps_n as u64),
    },
    TileLimit {
        key: "stages",
        rule: "2 <= stages <= 8",
        why: "the cp.async pipeline keeps stages - 1 stages in flight while one is computed",
        value: |_, p| p.stages as u64,
        holds: |_, p| (2..=8).contains(&p.stages),
    },
];

/// The box of the tensor map of `operand` for a kernel of `kind`, op `op` and tile `tile`:
/// `(inner, outer, swizzle bytes)`, in elements of the operand as stored (inner = the
/// contiguous dimension); `None` when the kind reads no map of that operand.
///
/// - wgmma_tma: A stored `[m, k]` (nn, nt): (64, m); A stored `[k, m]` (tn): (64, 64);
///   B stored `[k, n]` (nn, tn): (64, 64); B stored `[n, k]` (nt): (64, n); swizzle 128.
/// - mma_decode_tma: A `[m, k]`: (64, 16), swizzle 128; A `[k, m]` (tn): (16, 64), swizzle
///   32; B `[k, n]`: (n, 64), swizzle n * 2; B `[n, k]` (nt): (64, n), swizzle 128.
/// - C, for wgmma_tma's TMA-store epilogue only: one 128-byte swizzled row by 64 rows,
///   (128 / size of C, 64), swizzle 128. The other kinds store C directly.
pub fn tensor_map_box(
    kind: TileKind,
    (op, c): (Op, crate::vocab::Dtype),
    tile: &Tile,
    operand: MapOperand,
) -> Option<(u32, u32, u32)> {
    let a_transposed = op == Op::Tn; // A stored [k, m]
    let b_transposed = op == Op::Nt; // B stored [n, k]
    match (kind, operand) {
        (TileKind::WgmmaTma, MapOperand::A) if a_transposed => Some((64, 64, 128)),
        (TileKind::WgmmaTma, MapOperand::A) => Some((64, tile.m, 128)),
        (TileKind::WgmmaTma, MapOperand::B) if b_transposed => Some((64, tile.n, 128)),
        (TileKind::WgmmaTma, MapOperand::B) => Some((64, 64, 128)),
        (TileKind::WgmmaTma, MapOperand::C) => Some((128 / c.size_bytes() as u32, 64, 128)),
        (TileKind::MmaDecodeTma, MapOperand::A) if a_transposed => Some((16, 64, 32)),
        (TileKind::MmaDecodeTma, MapOperand::A) => Some((64, 16, 128)),
        (TileKind::MmaDecodeTma, MapOperand::B) if b_transposed => Some((64, tile.n, 128)),
        (TileKind::MmaDecodeTma, MapOperand::B) => Some((tile.n, 64, tile.n * 2)),
        _ => None,
    }
}

/// Every kernel template a spec may name. Its other static_asserts hold for any tile:
/// fma_decode_gemm's `kFmaChunk % kBatch == 0` (256 % 8), fma_decode_staged's
/// `kFmaChunk % kRows == 0` (256 % 32) and `(kRows * kRowPieces) % 32 == 0` (32 * (n / 4 or
/// n / 8), n = 32).
pub const KNOWN: &[KernelTemplate] = &[
    KernelTemplate {
        name: "fma_gemm",
        header: "fma/fma_gemm.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            rules: KindRules::Scalar(FMA_GEMM_LIMITS),
            ops: &[Op::Nn, Op::Tn, Op::Nt],
            staging: Staging::F32,
            shared: &[SharedTerm::Operands, SharedTerm::Totals],
            min_cc: None,
            arch_specific: None,
            operand_bytes: &[],
        }),
    },
    KernelTemplate {
        name: "fma_decode_gemm",
        header: "fma/fma_decode_gemm.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            rules: KindRules::Scalar(FMA_DECODE_GEMM_LIMITS),
            ops: &[Op::Nn, Op::Tn, Op::Nt],
            staging: Staging::F32,
            shared: &[SharedTerm::Partials],
            min_cc: None,
            arch_specific: None,
            operand_bytes: &[],
        }),
    },
    KernelTemplate {
        name: "fma_decode_staged",
        header: "fma/fma_decode_staged.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            rules: KindRules::Scalar(FMA_DECODE_STAGED_LIMITS),
            // static_assert(OP == kOpNN): the slices copy A as [m, k] and B as [k, n].
            ops: &[Op::Nn],
            staging: Staging::Operand,
            shared: &[SharedTerm::Slices, SharedTerm::Partials],
            min_cc: Some(((8, 0), "it copies operands with cp.async")),
            arch_specific: None,
            operand_bytes: &[],
        }),
    },
    KernelTemplate {
        name: "wgmma_tma_gemm",
        header: "wgmma/wgmma_tma_gemm.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            rules: KindRules::WgmmaTma(WGMMA_TMA_LIMITS),
            ops: &[Op::Nn, Op::Nt, Op::Tn],
            staging: Staging::Operand,
            shared: WGMMA_SHARED,
            min_cc: Some(((9, 0), "it uses wgmma, TMA, mbarriers and clusters")),
            arch_specific: Some("wgmma exists only on arch-specific sm_90a targets"),
            operand_bytes: &[2],
        }),
    },
    KernelTemplate {
        name: "mma_decode_tma",
        header: "mma/mma_decode_tma.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            rules: KindRules::MmaDecodeTma(MMA_DECODE_TMA_LIMITS),
            ops: &[Op::Nn, Op::Nt, Op::Tn],
            staging: Staging::Operand,
            shared: TMA_SHARED,
            min_cc: Some(((9, 0), "it loads operands with TMA")),
            arch_specific: None,
            operand_bytes: &[2],
        }),
    },
    KernelTemplate {
        name: "mma_gemm",
        header: "mma/mma_gemm.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            rules: KindRules::MmaGemm(MMA_GEMM_LIMITS),
            ops: &[Op::Nn, Op::Nt, Op::Tn],
            staging: Staging::Operand,
            shared: &[SharedTerm::PaddedStep],
            min_cc: Some((
                (8, 0),
                "it uses mma.sync (m16n8k16 on bf16 and f16, m16n8k8 on tf32)",
            )),
            arch_specific: None,
            // f32 operands run as tf32 (contract tc-tf32-k8).
            operand_bytes: &[2, 4],
        }),
    },
    KernelTemplate {
        name: "mma_async_gemm",
        header: "mma/mma_async_gemm.cuh",
        kind: TemplateKind::Gemm(GemmTemplate {
            rules: KindRules::MmaAsync(MMA_ASYNC_LIMITS),
            ops: &[Op::Nn, Op::Nt, Op::Tn],
            staging: Staging::Operand,
            shared: &[SharedTerm::Operands],
            min_cc: Some((
                (8, 0),
                "it uses cp.async, ldmatrix and mma.sync (m16n8k16 on bf16 and f16, m16n8k8 on tf32)",
            )),
            arch_specific: None,
            // f32 operands run as TF32 (contract tc-tf32-k8).
            operand_bytes: &[2, 4],
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
        .map(|t| (crate::spelling::edit_distance(&n, &norm(t.name)), t.name))
        .filter(|&(d, known)| d <= 2.max(known.len() / 4))
        .min()
        .map(|(_, known)| known)
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
