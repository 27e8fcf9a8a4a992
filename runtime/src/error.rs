//! Every way a runtime call can fail, each with the offending values. Nothing is enqueued when
//! a call returns one of these.

use crate::table::{Dtype, DtypeTriple, KernelRef, Op, Policy};
use crate::tensor_map::TmaProblem;
use thiserror::Error;

/// Which operand of a GEMM call an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The first GEMM operand.
    A,
    /// The second GEMM operand.
    B,
    /// The bias vector.
    Bias,
    /// The output.
    C,
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::Bias => "bias",
            Operand::C => "C",
        })
    }
}

/// Why a call was refused or failed. Each variant's fields are the values its message names.
#[derive(Debug, Error)]
#[allow(missing_docs)] // the fields are the values the variant's message names
pub enum GemmError {
    /// libcuda could not be loaded.
    #[error("no CUDA driver found (libcuda could not be loaded): gemm-runtime needs an NVIDIA driver to launch kernels")]
    NoDriver,
    /// The crate was built with `GEMM_AOT_NO_CUBINS`.
    #[error("this build of gemm-runtime carries no cubins (it was built with GEMM_AOT_NO_CUBINS): rebuild without it to launch kernels")]
    NoCubins,
    /// No tier of the specs serves the device.
    #[error("no tier serves device {ordinal} of compute capability {major}.{minor}; the specs define {tiers}")]
    NoTier {
        ordinal: usize,
        major: u32,
        minor: u32,
        tiers: String,
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
    /// The half fallback's scratch size does not fit in 64 bits of bytes.
    #[error("the half fallback would need {elements} f32 of scratch, more than can be addressed")]
    ScratchTooLarge { elements: usize },
    /// The half fallback needs a conversion kernel the tier does not build.
    #[error("tier {tier} has no conversion kernel from {from} to {to} for the half fallback")]
    NoConversion {
        tier: &'static str,
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
    /// A kernel's argument struct is an ABI this runtime cannot bind.
    #[error("kernel argument struct {abi} is not one this runtime binds (GemmArgs, TcGemmArgs)")]
    UnknownAbi { abi: &'static str },
    /// The request needs something the cuBLAS modes do not offer.
    #[error("{0} is not supported in the cuBLAS modes")]
    VendorUnsupported(&'static str),
}
