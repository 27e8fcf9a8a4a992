//! Hardware and tier budgets: each `[[hardware]]` entry (one compute capability: what a block and
//! an SM can have) checked for sense, and a tier's budgets checked against its capability's
//! entry, so a spec cannot promise a kernel resources its device does not have.

use super::capability::check_cc;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::{Hardware, Tier};
use crate::raw::RawHardware;

pub(super) fn resolve_hardware(
    sink: &mut Sink,
    at: &Location,
    raw: &RawHardware,
) -> Option<Hardware> {
    let [major, minor] = raw.compute_capability;
    let item = format!("hardware {major}.{minor}");
    if !check_cc(
        sink,
        at,
        &item,
        "compute_capability",
        raw.compute_capability,
    ) {
        return None;
    }
    let before = sink.errors.len();
    let mut problem = |problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::Hardware {
                major,
                minor,
                problem,
            },
        )
    };
    for (key, v) in [
        ("shared_bytes_per_block", raw.shared_bytes_per_block),
        ("shared_bytes_per_sm", raw.shared_bytes_per_sm),
        ("registers_per_sm", raw.registers_per_sm as u64),
        ("registers_per_block", raw.registers_per_block as u64),
        ("registers_per_thread", raw.registers_per_thread as u64),
        ("threads_per_sm", raw.threads_per_sm as u64),
        ("threads_per_block", raw.threads_per_block as u64),
        ("blocks_per_sm", raw.blocks_per_sm as u64),
    ] {
        if v == 0 {
            problem(format!("{key} = 0: every NVIDIA GPU has some"));
        }
    }
    if raw
        .shared_bytes_per_block
        .saturating_add(raw.reserved_shared_bytes_per_block)
        > raw.shared_bytes_per_sm
    {
        problem(format!(
            "shared_bytes_per_block ({}) and its reserved {} bytes exceed shared_bytes_per_sm ({})",
            raw.shared_bytes_per_block,
            raw.reserved_shared_bytes_per_block,
            raw.shared_bytes_per_sm
        ));
    }
    if raw.threads_per_block > raw.threads_per_sm || !raw.threads_per_block.is_multiple_of(32) {
        problem(format!(
            "threads_per_block ({}) must be whole warps and at most threads_per_sm ({})",
            raw.threads_per_block, raw.threads_per_sm
        ));
    }
    if raw.registers_per_block > raw.registers_per_sm || raw.registers_per_thread > 255 {
        problem(format!(
            "registers_per_block ({}) must be at most registers_per_sm ({}), and registers_per_thread ({}) at most 255",
            raw.registers_per_block, raw.registers_per_sm, raw.registers_per_thread
        ));
    }
    (sink.errors.len() == before).then(|| Hardware {
        cc: (major, minor),
        shared_bytes_per_block: raw.shared_bytes_per_block,
        shared_bytes_per_sm: raw.shared_bytes_per_sm,
        reserved_shared_bytes_per_block: raw.reserved_shared_bytes_per_block,
        registers_per_sm: raw.registers_per_sm,
        registers_per_block: raw.registers_per_block,
        registers_per_thread: raw.registers_per_thread,
        threads_per_sm: raw.threads_per_sm,
        threads_per_block: raw.threads_per_block,
        blocks_per_sm: raw.blocks_per_sm,
        location: at.clone(),
    })
}

/// A tier's budgets within its hardware: shared memory a block, registers a thread and a
/// block, threads a block.
pub(super) fn check_budgets(sink: &mut Sink, tier: &Tier) {
    let hw = &tier.hardware;
    let (major, minor) = hw.cc;
    let mut budget = |key: &'static str, value: u64, max: u64, what: &str| {
        if value == 0 || value > max {
            sink.push(
                tier.location.clone(),
                SpecErrorKind::Budget {
                    tier: tier.name.clone(),
                    key,
                    value,
                    problem: if value == 0 {
                        format!("leaves a block no {what}")
                    } else {
                        format!(
                            "is more than compute capability {major}.{minor} gives {what} ({max}, {}): lower it, or correct the hardware entry",
                            hw.location
                        )
                    },
                },
            );
        }
    };
    budget(
        "max_shared_bytes",
        tier.max_shared_bytes,
        hw.shared_bytes_per_block,
        "a block of shared memory",
    );
    budget(
        "max_registers_per_thread",
        tier.max_registers_per_thread as u64,
        hw.registers_per_thread as u64,
        "a thread of registers",
    );
    budget(
        "registers_per_block",
        tier.registers_per_block as u64,
        hw.registers_per_block as u64,
        "a block of registers",
    );
    budget(
        "max_threads_per_block",
        tier.max_threads_per_block as u64,
        hw.threads_per_block as u64,
        "a block of threads",
    );
    if !tier.max_threads_per_block.is_multiple_of(32) {
        sink.push(
            tier.location.clone(),
            SpecErrorKind::Budget {
                tier: tier.name.clone(),
                key: "max_threads_per_block",
                value: tier.max_threads_per_block as u64,
                problem: "must be a multiple of 32: blocks are whole warps".into(),
            },
        );
    }
}
