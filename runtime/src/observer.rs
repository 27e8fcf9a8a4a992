//! Launch observers: every GEMM launch can be recorded, with a digest of its argument struct in
//! which each device pointer is replaced by (allocation id, generation, offset), so equal work
//! at other addresses gives equal records.
//!
//! An observer is a type parameter with `const ENABLED: bool`: with [`NoObserver`] every
//! observer branch is `if false` and compiles away. [`Recorder`] has a capacity fixed before
//! recording and refuses, before anything is launched, a request that would exceed it.

use crate::error::GemmError;
use crate::registry::Span;
use crate::table::{ArgBytes, Dtype, KernelRef, Op, Policy, TierId};
use gemm_core::TensorMapKey;

/// What a launch does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchKind {
    /// A GEMM kernel.
    Gemm,
    /// A conversion of half inputs to f32 before a GEMM.
    InputUpcast,
    /// A rounding of an f32 result to a half output.
    OutputDowncast,
    /// A copy of A or B, bits unchanged, into aligned scratch that the GEMM's kernel reads.
    OperandRepack,
}

/// Where a device pointer of an argument struct points, independent of the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PointerIdentity {
    /// Allocation id from the registry (0 for a null pointer).
    pub allocation: u64,
    /// Generation of that allocation.
    pub generation: u64,
    /// Byte offset into it.
    pub offset: u64,
}

/// One launch as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaunchRecord {
    /// What the launch does.
    pub kind: LaunchKind,
    /// The kernel, by its id in the generated tables.
    pub kernel: KernelRef,
    /// Tier the kernel belongs to.
    pub tier: TierId,
    /// The policy the call routed under: the request's own, or the context's default.
    pub policy: Policy,
    /// Operand layout.
    pub op: Op,
    /// Element types the caller asked for: (A and B, C).
    pub logical: (Dtype, Dtype),
    /// Element types the kernel runs on: (A and B, C).
    pub execution: (Dtype, Dtype),
    /// GEMM shape (m, n, k).
    pub shape: (u64, u64, u64),
    /// Leading dimensions of A, B and C.
    pub leading_dims: (u64, u64, u64),
    /// Launch grid.
    pub grid: (u32, u32, u32),
    /// Threads a block.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory a block, in bytes.
    pub shared_bytes: u32,
    /// Thread-block cluster, in blocks; (1, 1, 1) for a launch without clusters.
    pub cluster: (u32, u32, u32),
    /// [`argument_digest_with_maps`] of the kernel's argument struct.
    pub args_digest: u64,
}

/// Sees every launch of the calls it is passed to.
pub trait Observer {
    /// False for an observer that records nothing: the launch path then has no observer code.
    const ENABLED: bool;
    /// True for an observer that takes launches instead of letting them run (package
    /// preparation); the call then enqueues nothing.
    const DEFERS: bool = false;
    /// Called before enqueueing `launches` launches; an error stops the call with nothing
    /// launched.
    fn reserve(&mut self, launches: usize) -> Result<(), GemmError>;
    /// Called after each launch was enqueued.
    fn record(&mut self, record: LaunchRecord);
    /// Called instead of launching when `DEFERS` is true.
    fn defer(&mut self, _launch: PreparedLaunch) {}
}

/// One launch, prepared but not enqueued: its record, its exact argument bytes, and the
/// registered allocations its pointers point into (checked again before capture and replay).
#[derive(Clone, Debug)]
pub struct PreparedLaunch {
    /// What the launch would record.
    pub record: LaunchRecord,
    /// Its argument struct's bytes.
    pub args: ArgBytes,
    /// The registered spans its pointers point into (checked again before capture and replay).
    pub spans: Vec<Span>,
    /// Whether the launch took its policy from the context's default (its request named
    /// none): capture and replay then refuse a context whose default is no longer
    /// `record.policy` (`PackageError::PolicyChanged`). A request's own policy is what its
    /// record holds, whatever the context's default.
    pub policy_from_context: bool,
}

/// Records nothing; the default for every call. With it the launch path has no observer code at
/// all (`bench/observer-asm.sh` compares the machine code with an observer-free build).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    const ENABLED: bool = false;
    #[inline(always)]
    fn reserve(&mut self, _: usize) -> Result<(), GemmError> {
        Ok(())
    }
    #[inline(always)]
    fn record(&mut self, _: LaunchRecord) {}
}

/// Records launches up to a capacity chosen up front. A call whose launches would exceed it is
/// refused with `GemmError::ObserverFull` before any of them is enqueued; the records already
/// held stay. Recording is refused in the cuBLAS modes (`GemmError::VendorUnsupported`).
#[derive(Clone, Debug)]
pub struct Recorder {
    capacity: usize,
    records: Vec<LaunchRecord>,
}

impl Recorder {
    /// A recorder that holds at most `capacity` launches.
    pub fn with_capacity(capacity: usize) -> Self {
        Recorder {
            capacity,
            records: Vec::with_capacity(capacity),
        }
    }

    /// Launches it can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The records so far, in launch order.
    pub fn records(&self) -> &[LaunchRecord] {
        &self.records
    }

    /// Takes the records, leaving the recorder empty with its capacity.
    pub fn take(&mut self) -> Vec<LaunchRecord> {
        std::mem::replace(&mut self.records, Vec::with_capacity(self.capacity))
    }
}

impl Observer for Recorder {
    const ENABLED: bool = true;
    fn reserve(&mut self, launches: usize) -> Result<(), GemmError> {
        let needed = self.records.len() + launches;
        if needed > self.capacity {
            return Err(GemmError::ObserverFull {
                capacity: self.capacity,
                needed,
            });
        }
        Ok(())
    }
    fn record(&mut self, record: LaunchRecord) {
        self.records.push(record);
    }
}

/// 64-bit FNV-1a, stable across runs and platforms.
fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Digest of an argument struct's bytes in which each pointer field (name, byte offset, from
/// its argument struct's [`AbiInfo::pointer_fields`](crate::AbiInfo::pointer_fields)) is replaced by the identity of what it points into: equal for
/// the same work at other addresses, different at another offset, allocation or scalar.
pub fn argument_digest(
    bytes: &[u8],
    pointer_fields: &[(&str, usize)],
    identity: impl Fn(&str) -> PointerIdentity,
) -> u64 {
    argument_digest_with_maps(bytes, pointer_fields, identity, &[])
}

/// Bytes of a `CUtensorMap` field.
pub const TENSOR_MAP_BYTES: usize = 128;

/// [`argument_digest`] of a struct that also holds tensor-map fields: each `(byte offset,
/// key)` in `tensor_maps` has its 128 bytes (which encode the address) replaced by the key
/// the map was made from (allocation id, generation, offset, rows, cols, ld, dtype, box,
/// swizzle, and a batch kernel's entries and entry stride), or by a marker for a map left empty (`None`, all zero bytes). Equal for the
/// same work at other addresses; different at another offset, leading dimension, box or
/// swizzle.
pub fn argument_digest_with_maps(
    bytes: &[u8],
    pointer_fields: &[(&str, usize)],
    identity: impl Fn(&str) -> PointerIdentity,
    tensor_maps: &[(usize, Option<TensorMapKey>)],
) -> u64 {
    let mut canonical = bytes.to_vec();
    let mut extra = Vec::new();
    for &(name, offset) in pointer_fields {
        if let Some(slot) = canonical.get_mut(offset..offset + 8) {
            slot.fill(0);
        }
        let id = identity(name);
        extra.extend(name.bytes());
        extra.extend(id.allocation.to_le_bytes());
        extra.extend(id.generation.to_le_bytes());
        extra.extend(id.offset.to_le_bytes());
    }
    for &(offset, key) in tensor_maps {
        if let Some(slot) = canonical.get_mut(offset..offset + TENSOR_MAP_BYTES) {
            slot.fill(0);
        }
        extra.extend((offset as u64).to_le_bytes());
        match key {
            Some(key) => {
                extra.push(1);
                extra.extend(key.digest_bytes());
            }
            None => extra.push(0),
        }
    }
    fnv1a(canonical.into_iter().chain(extra))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::GemmArgs;

    fn args(a: u64, c: u64, m: i32, beta: f32) -> GemmArgs {
        GemmArgs {
            a,
            b: 0x9000,
            bias: 0,
            c,
            m,
            n: 64,
            k: 32,
            lda: 32,
            ldb: 64,
            ldc: 64,
            beta,
            flags: 0,
        }
    }

    /// Identities for allocations A (id 1) at `a_base` and C (id 2) at `c_base`, B (id 3).
    fn digest_of(args: &GemmArgs, a_base: u64, c_base: u64, generation: u64) -> u64 {
        let info = crate::generated::ABIS
            .iter()
            .find(|a| a.name == "GemmArgs")
            .expect("the shipped specs declare GemmArgs");
        let pointers: Vec<(&str, usize)> = info.pointer_fields().collect();
        argument_digest(&args.to_bytes(), &pointers, |name| match name {
            "a" => PointerIdentity {
                allocation: 1,
                generation,
                offset: args.a - a_base,
            },
            "c" => PointerIdentity {
                allocation: 2,
                generation: 1,
                offset: args.c - c_base,
            },
            "b" => PointerIdentity {
                allocation: 3,
                generation: 1,
                offset: 0,
            },
            _ => PointerIdentity::default(),
        })
    }

    #[test]
    fn same_work_at_other_addresses_has_one_digest() {
        let here = digest_of(&args(0x1000, 0x5000, 16, 0.0), 0x1000, 0x5000, 1);
        let there = digest_of(&args(0x7_0000, 0x8_0000, 16, 0.0), 0x7_0000, 0x8_0000, 1);
        assert_eq!(here, there);
    }

    #[test]
    fn another_offset_scalar_or_generation_changes_the_digest() {
        let base = digest_of(&args(0x1000, 0x5000, 16, 0.0), 0x1000, 0x5000, 1);
        let offset = digest_of(&args(0x1040, 0x5000, 16, 0.0), 0x1000, 0x5000, 1);
        let scalar_m = digest_of(&args(0x1000, 0x5000, 17, 0.0), 0x1000, 0x5000, 1);
        let scalar_beta = digest_of(&args(0x1000, 0x5000, 16, 1.0), 0x1000, 0x5000, 1);
        let generation = digest_of(&args(0x1000, 0x5000, 16, 0.0), 0x1000, 0x5000, 2);
        for (what, d) in [
            ("offset", offset),
            ("m", scalar_m),
            ("beta", scalar_beta),
            ("generation", generation),
        ] {
            assert_ne!(base, d, "{what} must change the digest");
        }
    }

    /// A struct of one tensor map (bytes 0..128, which hold the address as a real map
    /// does), pointer `a` at 128 and `m` at 136, as a TMA kernel's ABI lays them out.
    fn map_struct(address: u64, m: i32) -> Vec<u8> {
        let mut bytes = vec![0u8; 144];
        for chunk in bytes[..128].chunks_exact_mut(8) {
            chunk.copy_from_slice(&(address ^ 0x5a5a).to_ne_bytes());
        }
        bytes[128..136].copy_from_slice(&address.to_ne_bytes());
        bytes[136..140].copy_from_slice(&m.to_ne_bytes());
        bytes
    }

    fn map_digest(address: u64, base: u64, key: TensorMapKey) -> u64 {
        let bytes = map_struct(address, 16);
        argument_digest_with_maps(
            &bytes,
            &[("a", 128)],
            |_| PointerIdentity {
                allocation: key.allocation,
                generation: key.generation,
                offset: address - base,
            },
            &[(0, Some(key))],
        )
    }

    fn map_key(offset: u64) -> TensorMapKey {
        TensorMapKey {
            allocation: 4,
            generation: 1,
            offset,
            rows: 16,
            cols: 4096,
            ld: 4096,
            dtype: Dtype::Bf16,
            box_inner: 64,
            box_outer: 64,
            swizzle_bytes: 128,
            batch: None,
        }
    }

    #[test]
    fn tensor_maps_digest_by_what_they_map_not_their_bytes() {
        let here = map_digest(0x10_0000, 0x10_0000, map_key(0));
        let there = map_digest(0x7f_0000, 0x7f_0000, map_key(0));
        assert_eq!(here, there, "same work at another address");
        let moved = map_digest(0x10_0040, 0x10_0000, map_key(0x40));
        let ld = map_digest(
            0x10_0000,
            0x10_0000,
            TensorMapKey {
                ld: 4104,
                ..map_key(0)
            },
        );
        let boxed = map_digest(
            0x10_0000,
            0x10_0000,
            TensorMapKey {
                box_outer: 128,
                ..map_key(0)
            },
        );
        let swizzle = map_digest(
            0x10_0000,
            0x10_0000,
            TensorMapKey {
                swizzle_bytes: 64,
                ..map_key(0)
            },
        );
        let generation = map_digest(
            0x10_0000,
            0x10_0000,
            TensorMapKey {
                generation: 2,
                ..map_key(0)
            },
        );
        for (what, d) in [
            ("offset", moved),
            ("ld", ld),
            ("box", boxed),
            ("swizzle", swizzle),
            ("generation", generation),
        ] {
            assert_ne!(here, d, "{what} must change the digest");
        }
        // Without the map declared, its address-bearing bytes would make the digests differ.
        let raw = |address: u64| {
            argument_digest(&map_struct(address, 16), &[("a", 128)], |_| {
                PointerIdentity::default()
            })
        };
        assert_ne!(raw(0x10_0000), raw(0x7f_0000));
        // An empty map (a kernel that takes none) digests apart from a present one.
        let empty = argument_digest_with_maps(
            &[0u8; 144],
            &[("a", 128)],
            |_| PointerIdentity::default(),
            &[(0, None)],
        );
        assert_ne!(empty, here);
    }

    #[test]
    fn a_full_recorder_refuses_before_launch() {
        let mut r = Recorder::with_capacity(1);
        assert!(r.reserve(1).is_ok());
        r.record(LaunchRecord {
            kind: LaunchKind::Gemm,
            kernel: KernelRef::Gemm(crate::table::KernelId(0)),
            tier: TierId(0),
            policy: Policy::Exact,
            op: Op::Nn,
            logical: (Dtype::F32, Dtype::F32),
            execution: (Dtype::F32, Dtype::F32),
            shape: (1, 1, 1),
            leading_dims: (1, 1, 1),
            grid: (1, 1, 1),
            block: (32, 1, 1),
            shared_bytes: 0,
            cluster: (1, 1, 1),
            args_digest: 0,
        });
        match r.reserve(1) {
            Err(GemmError::ObserverFull {
                capacity: 1,
                needed: 2,
            }) => {}
            other => panic!("expected ObserverFull, got {other:?}"),
        }
        assert_eq!(r.records().len(), 1);
        assert_eq!(r.take().len(), 1);
        assert!(r.records().is_empty());
    }
}
