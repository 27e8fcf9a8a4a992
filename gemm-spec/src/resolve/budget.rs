//! Hardware limits and tier budgets: the most shared memory, registers, threads and resident
//! blocks any NVIDIA GPU through sm_120 allows, and the check that a tier's budgets lie inside
//! them (so a spec cannot promise a kernel resources no device has).

use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::raw::RawTier;

/// Largest opt-in dynamic shared memory a block may use on any NVIDIA GPU through sm_120
/// (227 KiB on sm_90 and sm_100; sm_80 has 163 KiB, sm_86/89/120 99 KiB). Also keeps every
/// planned kernel's shared bytes well inside the generated tables' `u32` and the templates'
/// `int kSharedBytes`.
pub const SHARED_BYTES_MAX: u64 = 232448;
/// A thread addresses at most 255 registers on every NVIDIA GPU since sm_35; ptxas does not
/// build a kernel below 16 a thread.
pub const REGISTERS_PER_THREAD: std::ops::RangeInclusive<u32> = 16..=255;
/// At most 1024 threads a block on every NVIDIA GPU since sm_20; blocks are whole warps.
pub const THREADS_PER_BLOCK_MAX: u32 = 1024;
/// 64 Ki 32-bit registers a block is the most of any NVIDIA GPU through sm_120.
pub const REGISTERS_PER_BLOCK_MAX: u32 = 65536;
/// No NVIDIA GPU through sm_120 keeps more than 32 resident blocks on an SM.
pub const BLOCKS_PER_SM_MAX: u32 = 32;

pub(super) fn check_budgets(sink: &mut Sink, at: &Location, raw: &RawTier) {
    let tier = &raw.name;
    let mut budget = |key: &'static str, value: u64, problem: Option<String>| {
        if let Some(problem) = problem {
            sink.push(
                at.clone(),
                SpecErrorKind::Budget {
                    tier: tier.clone(),
                    key,
                    value,
                    problem,
                },
            );
        }
    };
    let smem = raw.max_shared_bytes;
    budget(
        "max_shared_bytes",
        smem,
        if smem == 0 {
            Some("leaves a block no shared memory; every template needs some".into())
        } else if smem > SHARED_BYTES_MAX {
            Some(format!("is more than {SHARED_BYTES_MAX}, the most shared memory a block gets on any NVIDIA GPU through sm_120 (227 KiB on sm_90 and sm_100)"))
        } else {
            None
        },
    );
    let regs = raw.max_registers_per_thread;
    budget(
        "max_registers_per_thread",
        regs as u64,
        (!REGISTERS_PER_THREAD.contains(&regs)).then(|| {
            format!(
                "is outside {}..={}: a thread addresses at most 255 registers on every NVIDIA GPU, and ptxas does not go below 16",
                REGISTERS_PER_THREAD.start(),
                REGISTERS_PER_THREAD.end()
            )
        }),
    );
    let threads = raw.max_threads_per_block;
    budget(
        "max_threads_per_block",
        threads as u64,
        (threads == 0 || threads > THREADS_PER_BLOCK_MAX || !threads.is_multiple_of(32)).then(|| {
            format!("must be a multiple of 32 (blocks are whole warps) from 32 to {THREADS_PER_BLOCK_MAX}, the most any NVIDIA GPU runs in a block")
        }),
    );
    let block_regs = raw.registers_per_block;
    budget(
        "registers_per_block",
        block_regs as u64,
        (block_regs == 0 || block_regs > REGISTERS_PER_BLOCK_MAX).then(|| {
            format!("is outside 1..={REGISTERS_PER_BLOCK_MAX}: no NVIDIA GPU through sm_120 has more than 64 Ki registers for a block")
        }),
    );
}
