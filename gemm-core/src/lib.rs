//! # gemm-core
//!
//! What the generator and the runtime of gemm-aot share, with no CUDA and no spec parsing:
//!
//! - [`vocab`]: ops, policies, element types, dimension ranges;
//! - [`table`]: the types a kernel set's generated tables are made of (tiers, kernels with
//!   their tiles, tensor maps and launch shape, conversions, contracts, routes);
//! - [`args`]: argument structs as data, the sources that fill them and their inline bytes;
//! - [`kernel_set`]: [`KernelSet`], one build's tables as a value, with its consistency check;
//! - [`planner`]: the planning of one GEMM as pure functions (default policy, bounds, route and
//!   half fallback, unaligned kernel, grid);
//! - [`repack`]: the aligned copy of an operand TMA cannot take, for the route's own kernel;
//! - [`tma`]: TMA's rules for a tensor map;
//! - [`tier_choice`]: which tier a device runs, from which code;
//! - [`wave_fit`]: the wave model that picks among a route's `wave_fit` kernels by m and n;
//! - [`explain`]: the route a shape takes, in words, over any set.

#![warn(missing_docs)]

pub mod args;
mod dispatch_memo;
pub mod explain;
pub mod fast_hash;
pub mod kernel_set;
pub mod planner;
pub mod repack;
pub mod table;
pub mod tier_choice;
pub mod tma;
pub mod vocab;
pub mod wave_fit;

pub use args::{AbiFieldInfo, AbiFlagInfo, AbiInfo, ArgBytes, ArgSources, BindFn, FieldKind};
pub use explain::{ExplainError, Explanation, Query};
pub use kernel_set::{DispatchFn, KernelSet, KernelSetError, KernelSetParts};
pub use planner::{
    persistent_limit, DefaultPolicy, GridProblem, PickError, Picked, Refusal, Routed, StoredAb,
    StoredOperand, UnalignedWhy, GRID_X_MAX, GRID_YZ_MAX,
};
pub use repack::{aligned_ld, NoRepack, RepackPlan, RepackedOperand, REPACK_ALIGN_BYTES};
pub use table::*;
pub use tier_choice::{
    DeviceCaps, NotRunnable, TierChoice, TierChoiceError, TierCode, TierSelection,
};
pub use tma::{
    check_tma, MapBatch, TensorMapKey, TmaProblem, TMA_MAX_BOX, TMA_MAX_DIM, TMA_MAX_STRIDE_BYTES,
};
pub use vocab::{DimRange, Dtype, DtypeTriple, Op, Policy, UnknownWord, DIM_MAX};
pub use wave_fit::{wave_time, WAVE_FIT_MARGIN_PERCENT};
