//! Every way a runtime call can fail, each with the offending values. Nothing is enqueued when
//! a call returns one of these.

use crate::table::{Dtype, DtypeTriple, KernelRef, Op, Policy, RowOp};
use gemm_core::{NotRunnable, Refusal, TierChoiceError, TmaProblem, DIM_MAX};
use thiserror::Error;

/// Which operand of a GEMM call an error is about.
pub use gemm_core::Operand;

/// Why a call was refused or failed. Each variant's fields are the values its message names;
/// [`kind`](Self::kind) is a stable name for metrics and logs. New refusals may be added
/// (`#[non_exhaustive]`): match with a wildcard arm.
#[derive(Debug, Error)]
#[non_exhaustive]
#[allow(missing_docs)] // the fields are the values the variant's message names
pub enum GemmError {
    /// libcuda could not be loaded.
    #[error("no CUDA driver found (libcuda could not be loaded): gemm-runtime needs an NVIDIA driver to launch kernels")]
    NoDriver,
    /// The kernel set carries no cubins: it was built with `GEMM_AOT_NO_CUBINS`, or it is the
    /// shipped set of a runtime built without its `shipped-kernels` feature.
    #[error("this kernel set carries no cubins (built with GEMM_AOT_NO_CUBINS, or the shipped set of a gemm-runtime without its `shipped-kernels` feature): rebuild without the variable, enable the feature, or open the context on a set with cubins")]
    NoCubins,
    /// A timing-perturbation seed was given to a context whose kernel set has no delays
    /// compiled in (every shipped set): the seed would change nothing.
    #[error("kernel set {set} was not built with timing perturbation, so a perturbation seed would change nothing: build a test set with gemm_codegen::Builder::timing_perturbation(true) (docs/timing.md)")]
    NotPerturbed { set: &'static str },
    /// The runtime cannot serve the kernel set given to `Context::with_kernels`.
    #[error(transparent)]
    KernelSet(#[from] gemm_core::KernelSetError),
    /// No tier of the specs serves the device.
    #[error("no tier serves device {ordinal} of compute capability {major}.{minor}; the specs define {tiers}")]
    NoTier {
        ordinal: usize,
        major: u32,
        minor: u32,
        tiers: String,
    },
    /// A tier override names no tier of the kernel set.
    #[error("no tier named {name:?} in this kernel set; it defines {tiers}")]
    UnknownTier { name: String, tiers: String },
    /// A tier override names a tier the device cannot run.
    #[error("tier {tier} (compute capability {}.{}) cannot run on this device of {}.{}: {reason}", tier_capability.0, tier_capability.1, device_capability.0, device_capability.1)]
    TierNotRunnable {
        tier: &'static str,
        tier_capability: (u32, u32),
        device_capability: (u32, u32),
        reason: NotRunnable,
    },
    /// The driver could not JIT-compile a module of the tier's PTX (a driver older than the
    /// CUDA that wrote the PTX refuses its ISA version).
    #[error("the driver could not JIT-compile the {target} PTX of tier {tier}'s module {module}: {source}; a driver at least as new as the build's CUDA (13.0) is needed")]
    PtxJit {
        tier: &'static str,
        module: &'static str,
        target: &'static str,
        source: cudarc::driver::DriverError,
    },
    /// A CUDA driver call failed.
    #[error("CUDA driver call failed: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
    /// A cuBLAS call failed (vendor modes).
    #[error("cuBLAS call failed: {0}")]
    Cublas(#[from] cudarc::cublas::result::CublasError),
    /// An operand with elements is at address 0.
    #[error("{operand} is a null pointer")]
    NullPointer { operand: Operand },
    /// An operand is not aligned to its element size.
    #[error("{operand} at address {address:#x} is not aligned to {align} bytes")]
    Misaligned {
        operand: Operand,
        address: u64,
        align: u64,
    },
    /// An operand does not fit its allocation for this shape.
    #[error(
        "{operand} needs {needed} bytes from offset {offset} but its allocation holds {available}"
    )]
    OutOfBounds {
        operand: Operand,
        offset: u64,
        needed: u64,
        available: u64,
    },
    /// An operand's allocation was freed, or replaced at the same address.
    #[error(
        "{operand} refers to allocation {id} generation {generation}, which was freed or replaced"
    )]
    StaleAllocation {
        operand: Operand,
        id: u64,
        generation: u64,
    },
    /// An operand was registered with another context.
    #[error("{operand} belongs to another context")]
    ForeignAllocation { operand: Operand },
    /// The output overlaps an input.
    #[error("output C [{c_start:#x}, {c_end:#x}) overlaps input {operand} [{start:#x}, {end:#x})")]
    Overlap {
        operand: Operand,
        c_start: u64,
        c_end: u64,
        start: u64,
        end: u64,
    },
    /// A dimension or leading dimension does not fit in i32.
    #[error("{what} = {value} does not fit the kernels' i32 dimensions (max {max})")]
    DimensionOverflow {
        what: &'static str,
        value: u64,
        max: u64,
    },
    /// A leading dimension is shorter than a row.
    #[error("leading dimension of {operand} is {ld}, less than the {min} elements of a row")]
    LeadingDimension { operand: Operand, ld: u64, min: u64 },
    /// The tier has no route for this (policy, op, dtype).
    #[error("tier {tier} has no {policy} route for {op} {dtype}")]
    NoRoute {
        tier: &'static str,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
    },
    /// n is above what every kernel of the tier can launch (`table::max_n`); refused for every
    /// m alike, so that a refusal never depends on the batch size.
    #[error("n = {n} is more than tier {tier} launches for every batch size (at most {max})")]
    ColumnsTooMany {
        tier: &'static str,
        n: u64,
        max: u64,
    },
    /// The launch grid would exceed the device's limits.
    #[error("grid for m = {m}, n = {n} exceeds the launch limits of kernel {kernel}")]
    GridTooLarge {
        kernel: &'static str,
        m: u64,
        n: u64,
    },
    /// A recording observer would exceed its capacity.
    #[error("the recording observer holds {capacity} launches; this call would make it {needed}")]
    ObserverFull { capacity: usize, needed: usize },
    /// The half fallback needs more scratch than the context holds, and a captured graph
    /// froze the scratch (growing it would move memory the graph's nodes point into). Drop
    /// the graph, or make the first captured request the largest.
    #[error("the half fallback needs {needed} bytes of scratch but a captured graph froze it at {frozen} bytes; drop the graph or capture the largest request first")]
    ScratchFrozen { needed: u64, frozen: u64 },
    /// A kernel reads a copy of an operand (its family's prepass: A transposed) that the call
    /// could not make: over the stream's repack limit, or while a captured graph froze the
    /// scratch smaller (or another library is capturing the stream). A routed call runs its
    /// route's unaligned kernel instead (validation gives every such route one); a kernel
    /// named with `Context::gemm_on_kernel` has none, so that call returns this.
    #[error("kernel {kernel} reads a transposed copy of {operand} that this call could not make (the stream's repack limit, or scratch frozen by a captured graph); raise Context::set_repack_limit or drop the graph")]
    CopyNotMade {
        kernel: &'static str,
        operand: Operand,
    },
    /// The half fallback's scratch size does not fit in 64 bits of bytes.
    #[error("the half fallback would need {elements} f32 of scratch, more than can be addressed")]
    ScratchTooLarge { elements: usize },
    /// The half fallback or a prepared weight needs a conversion kernel the tier does not build.
    #[error("tier {tier} has no conversion kernel from {from} to {to} (the half fallback and the repack of operands need one)")]
    NoConversion {
        tier: &'static str,
        from: Dtype,
        to: Dtype,
    },
    /// The tier builds no row kernel for this op and pair of element types.
    #[error("tier {tier} has no row kernel for {op} from {from} rows into {to} (the specs' row kernels: [conversion.*] with a row_op in families.toml)")]
    NoRowKernel {
        tier: &'static str,
        op: RowOp,
        from: Dtype,
        to: Dtype,
    },
    /// A kernel id that is in no generated table (a record from another build).
    #[error("{0:?} is not in this build's kernel tables")]
    UnknownKernel(KernelRef),
    /// TMA cannot take an operand (or the kernel table's box or swizzle): the GEMM path runs
    /// the route's unaligned kernel instead when the operand is the reason and the route has
    /// one.
    #[error("TMA cannot take {operand}: {problem}")]
    Tma {
        operand: Operand,
        problem: TmaProblem,
    },
    /// A kernel fits no SM with its threads, shared memory and cluster (occupancy 0).
    #[error("kernel {kernel} with {threads} threads, {shared_bytes} bytes of shared memory and cluster {cluster:?} fits no SM")]
    Unschedulable {
        kernel: &'static str,
        threads: u32,
        shared_bytes: u32,
        cluster: (u32, u32, u32),
    },
    /// A launch grid is not made of whole clusters.
    #[error("kernel {kernel}: grid {grid:?} is not a whole number of clusters {cluster:?}")]
    ClusterShape {
        kernel: &'static str,
        grid: (u32, u32, u32),
        cluster: (u32, u32, u32),
    },
    /// The kernel the routes picked needs a launch path this build does not have yet.
    #[error("not supported yet: {what}")]
    Unsupported {
        /// What is missing.
        what: &'static str,
    },
    /// A kernel's argument struct is not among its set's (a hand-made set; generated sets
    /// always carry theirs, and `KernelSet::check` refuses one that does not).
    #[error("kernel argument struct {abi} is not among its kernel set's argument structs")]
    UnknownAbi { abi: &'static str },
    /// The request needs something the cuBLAS modes do not offer.
    #[error("{0} is not supported in the cuBLAS modes")]
    VendorUnsupported(&'static str),
    /// A whole-buffer write was given a host slice of another length (nothing was copied).
    #[error("the buffer holds {buffer} elements but the host slice {host}: a whole-buffer write needs equal lengths (write_at writes part of a buffer)")]
    LengthMismatch { buffer: usize, host: usize },
    /// A copy's element range leaves its buffer (nothing was copied).
    #[error("elements {offset}..{offset}+{len} are past the end of a buffer of {buffer}")]
    RangeOutOfBounds {
        offset: usize,
        len: usize,
        buffer: usize,
    },
    /// An external span runs past the allocation the driver reports for its address.
    #[error("external span [{address:#x}, +{bytes} bytes) runs past its allocation [{allocation_base:#x}, +{allocation_bytes} bytes)")]
    ExternalOverrun {
        address: u64,
        bytes: u64,
        allocation_base: u64,
        allocation_bytes: u64,
    },
}

impl From<TierChoiceError> for GemmError {
    fn from(e: TierChoiceError) -> Self {
        match e {
            TierChoiceError::NoTier {
                ordinal,
                major,
                minor,
                tiers,
            } => GemmError::NoTier {
                ordinal,
                major,
                minor,
                tiers,
            },
            TierChoiceError::UnknownTier { name, tiers } => GemmError::UnknownTier { name, tiers },
            TierChoiceError::TierNotRunnable {
                tier,
                tier_capability,
                device_capability,
                reason,
            } => GemmError::TierNotRunnable {
                tier,
                tier_capability,
                device_capability,
                reason,
            },
        }
    }
}

impl GemmError {
    /// The error of a call the planner refused for its shape and types alone.
    pub(crate) fn refused(
        refusal: Refusal,
        tier: &'static str,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
    ) -> GemmError {
        match refusal {
            Refusal::DimensionOverflow { dim, value } => GemmError::DimensionOverflow {
                what: dim,
                value,
                max: DIM_MAX,
            },
            Refusal::ColumnsTooMany { n, max } => GemmError::ColumnsTooMany { tier, n, max },
            Refusal::NoRoute => GemmError::NoRoute {
                tier,
                policy,
                op,
                dtype,
            },
            Refusal::UnknownKernel(k) => GemmError::UnknownKernel(k),
        }
    }

    /// A stable snake_case name of the variant, for metrics and logs (`"columns_too_many"`):
    /// it never changes for a variant, and no two variants share one.
    pub fn kind(&self) -> &'static str {
        match self {
            GemmError::NoDriver => "no_driver",
            GemmError::NoCubins => "no_cubins",
            GemmError::NoTier { .. } => "no_tier",
            GemmError::Driver(_) => "driver",
            GemmError::Cublas(_) => "cublas",
            GemmError::NullPointer { .. } => "null_pointer",
            GemmError::Misaligned { .. } => "misaligned",
            GemmError::OutOfBounds { .. } => "out_of_bounds",
            GemmError::StaleAllocation { .. } => "stale_allocation",
            GemmError::ForeignAllocation { .. } => "foreign_allocation",
            GemmError::Overlap { .. } => "overlap",
            GemmError::DimensionOverflow { .. } => "dimension_overflow",
            GemmError::LeadingDimension { .. } => "leading_dimension",
            GemmError::NoRoute { .. } => "no_route",
            GemmError::ColumnsTooMany { .. } => "columns_too_many",
            GemmError::GridTooLarge { .. } => "grid_too_large",
            GemmError::ObserverFull { .. } => "observer_full",
            GemmError::ScratchFrozen { .. } => "scratch_frozen",
            GemmError::ScratchTooLarge { .. } => "scratch_too_large",
            GemmError::CopyNotMade { .. } => "copy_not_made",
            GemmError::NoConversion { .. } => "no_conversion",
            GemmError::UnknownKernel(_) => "unknown_kernel",
            GemmError::Tma { .. } => "tma",
            GemmError::Unschedulable { .. } => "unschedulable",
            GemmError::ClusterShape { .. } => "cluster_shape",
            GemmError::Unsupported { .. } => "unsupported",
            GemmError::UnknownAbi { .. } => "unknown_abi",
            GemmError::VendorUnsupported(_) => "vendor_unsupported",
            GemmError::LengthMismatch { .. } => "length_mismatch",
            GemmError::RangeOutOfBounds { .. } => "range_out_of_bounds",
            GemmError::ExternalOverrun { .. } => "external_overrun",
            GemmError::KernelSet(_) => "kernel_set",
            GemmError::UnknownTier { .. } => "unknown_tier",
            GemmError::TierNotRunnable { .. } => "tier_not_runnable",
            GemmError::PtxJit { .. } => "ptx_jit",
            GemmError::NotPerturbed { .. } => "not_perturbed",
            GemmError::NoRowKernel { .. } => "no_row_kernel",
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::table::ConversionId;
    use cudarc::cublas::sys::cublasStatus_t;
    use cudarc::driver::sys::CUresult;

    /// One value of every variant. `every_variant_is_listed` fails to compile when a variant
    /// is added without a value here.
    pub(crate) fn one_of_each() -> Vec<GemmError> {
        let triple = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
        vec![
            GemmError::NoDriver,
            GemmError::NoCubins,
            GemmError::NoTier {
                ordinal: 0,
                major: 1,
                minor: 0,
                tiers: String::new(),
            },
            GemmError::Driver(cudarc::driver::DriverError(CUresult::CUDA_ERROR_UNKNOWN)),
            GemmError::Cublas(cudarc::cublas::result::CublasError(
                cublasStatus_t::CUBLAS_STATUS_INTERNAL_ERROR,
            )),
            GemmError::NullPointer {
                operand: Operand::A,
            },
            GemmError::Misaligned {
                operand: Operand::A,
                address: 1,
                align: 4,
            },
            GemmError::OutOfBounds {
                operand: Operand::B,
                offset: 0,
                needed: 8,
                available: 4,
            },
            GemmError::StaleAllocation {
                operand: Operand::C,
                id: 1,
                generation: 1,
            },
            GemmError::ForeignAllocation {
                operand: Operand::Bias,
            },
            GemmError::Overlap {
                operand: Operand::A,
                c_start: 0,
                c_end: 8,
                start: 4,
                end: 12,
            },
            GemmError::DimensionOverflow {
                what: "m",
                value: 1 << 40,
                max: 1 << 31,
            },
            GemmError::LeadingDimension {
                operand: Operand::A,
                ld: 1,
                min: 2,
            },
            GemmError::NoRoute {
                tier: "t",
                policy: Policy::Exact,
                op: Op::Nn,
                dtype: triple,
            },
            GemmError::ColumnsTooMany {
                tier: "t",
                n: 2,
                max: 1,
            },
            GemmError::GridTooLarge {
                kernel: "k",
                m: 1,
                n: 1,
            },
            GemmError::ObserverFull {
                capacity: 1,
                needed: 2,
            },
            GemmError::ScratchFrozen {
                needed: 2,
                frozen: 1,
            },
            GemmError::ScratchTooLarge { elements: 1 },
            GemmError::CopyNotMade {
                kernel: "k",
                operand: Operand::A,
            },
            GemmError::NoConversion {
                tier: "t",
                from: Dtype::Bf16,
                to: Dtype::F32,
            },
            GemmError::UnknownKernel(KernelRef::Conversion(ConversionId(9))),
            GemmError::Tma {
                operand: Operand::A,
                problem: TmaProblem::BaseMisaligned { address: 2 },
            },
            GemmError::Unschedulable {
                kernel: "k",
                threads: 1,
                shared_bytes: 0,
                cluster: (1, 1, 1),
            },
            GemmError::ClusterShape {
                kernel: "k",
                grid: (1, 1, 1),
                cluster: (2, 1, 1),
            },
            GemmError::Unsupported { what: "x" },
            GemmError::UnknownAbi { abi: "X" },
            GemmError::VendorUnsupported("x"),
            GemmError::LengthMismatch { buffer: 2, host: 1 },
            GemmError::RangeOutOfBounds {
                offset: 1,
                len: 2,
                buffer: 2,
            },
            GemmError::ExternalOverrun {
                address: 0,
                bytes: 2,
                allocation_base: 0,
                allocation_bytes: 1,
            },
            GemmError::KernelSet(gemm_core::KernelSetError::Resources {
                set: "s",
                resources: 0,
                kernels: 1,
            }),
            GemmError::UnknownTier {
                name: "x".into(),
                tiers: "t (8.0)".into(),
            },
            GemmError::TierNotRunnable {
                tier: "t",
                tier_capability: (9, 0),
                device_capability: (8, 0),
                reason: NotRunnable::DeviceOlder,
            },
            GemmError::PtxJit {
                tier: "t",
                module: "m",
                target: "compute_80",
                source: cudarc::driver::DriverError(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
            },
            GemmError::NotPerturbed { set: "s" },
            GemmError::NoRowKernel {
                tier: "t",
                op: RowOp::Softmax,
                from: Dtype::F32,
                to: Dtype::Bf16,
            },
        ]
    }

    /// Exhaustive without a wildcard: a new variant must be added here and to `one_of_each`.
    fn index(e: &GemmError) -> usize {
        match e {
            GemmError::NoDriver => 0,
            GemmError::NoCubins => 1,
            GemmError::NoTier { .. } => 2,
            GemmError::Driver(_) => 3,
            GemmError::Cublas(_) => 4,
            GemmError::NullPointer { .. } => 5,
            GemmError::Misaligned { .. } => 6,
            GemmError::OutOfBounds { .. } => 7,
            GemmError::StaleAllocation { .. } => 8,
            GemmError::ForeignAllocation { .. } => 9,
            GemmError::Overlap { .. } => 10,
            GemmError::DimensionOverflow { .. } => 11,
            GemmError::LeadingDimension { .. } => 12,
            GemmError::NoRoute { .. } => 13,
            GemmError::ColumnsTooMany { .. } => 14,
            GemmError::GridTooLarge { .. } => 15,
            GemmError::ObserverFull { .. } => 16,
            GemmError::ScratchFrozen { .. } => 17,
            GemmError::ScratchTooLarge { .. } => 18,
            GemmError::NoConversion { .. } => 19,
            GemmError::UnknownKernel(_) => 20,
            GemmError::Tma { .. } => 21,
            GemmError::Unschedulable { .. } => 22,
            GemmError::ClusterShape { .. } => 23,
            GemmError::Unsupported { .. } => 24,
            GemmError::UnknownAbi { .. } => 25,
            GemmError::VendorUnsupported(_) => 26,
            GemmError::LengthMismatch { .. } => 27,
            GemmError::RangeOutOfBounds { .. } => 28,
            GemmError::ExternalOverrun { .. } => 29,
            GemmError::KernelSet(_) => 30,
            GemmError::UnknownTier { .. } => 31,
            GemmError::TierNotRunnable { .. } => 32,
            GemmError::PtxJit { .. } => 33,
            GemmError::NotPerturbed { .. } => 34,
            GemmError::NoRowKernel { .. } => 35,
            GemmError::CopyNotMade { .. } => 36,
        }
    }
    const VARIANTS: usize = 37;

    #[test]
    fn every_variant_is_listed_and_has_a_distinct_snake_case_kind() {
        let all = one_of_each();
        let mut seen = [false; VARIANTS];
        for e in &all {
            seen[index(e)] = true;
        }
        assert!(seen.iter().all(|s| *s), "one_of_each misses a variant");
        assert_eq!(all.len(), VARIANTS);
        let mut kinds: Vec<&str> = all.iter().map(GemmError::kind).collect();
        for k in &kinds {
            assert!(
                !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{k}"
            );
        }
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), VARIANTS, "two variants share a kind");
        assert_eq!(
            GemmError::ColumnsTooMany {
                tier: "t",
                n: 2,
                max: 1
            }
            .kind(),
            "columns_too_many"
        );
    }
}
