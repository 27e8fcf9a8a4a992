//! One launch of a generated kernel: its argument struct, how it is enqueued, and how an
//! observer sees it. Every GEMM and conversion launch goes through [`Context::emit`], so
//! recording, deferring (package preparation) and plain launching share one path.

use crate::context::Context;
use crate::error::GemmError;
use crate::observer::{argument_digest, LaunchKind, LaunchRecord, Observer, PointerIdentity};
use crate::registry::Span;
use crate::table::{Dtype, KernelRef, Op};
use crate::{ConvertArgs, GemmArgs};
use cudarc::driver::{LaunchConfig, PushKernelArg};

/// The by-value argument struct of one launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LaunchArgs {
    /// A GEMM kernel's arguments.
    Gemm(GemmArgs),
    /// A conversion kernel's arguments.
    Convert(ConvertArgs),
}

impl LaunchArgs {
    /// The struct's bytes exactly as the kernel receives them.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            LaunchArgs::Gemm(a) => a.to_bytes().to_vec(),
            LaunchArgs::Convert(a) => a.to_bytes().to_vec(),
        }
    }

    /// (field, byte offset) of every device-pointer field.
    pub fn pointer_fields(&self) -> &'static [(&'static str, usize)] {
        match self {
            LaunchArgs::Gemm(_) => GemmArgs::POINTER_FIELDS,
            LaunchArgs::Convert(_) => ConvertArgs::POINTER_FIELDS,
        }
    }
}

/// Where a pointer field of a launch points: the registered span and the byte offset into it
/// (`None` for a null pointer).
pub(crate) type Target = (&'static str, Option<(Span, u64)>);

/// What a record says about the request a launch belongs to.
#[derive(Clone, Copy)]
pub(crate) struct RequestFacts {
    pub op: Op,
    pub logical: (Dtype, Dtype),
    pub shape: (u64, u64, u64),
    pub leading_dims: (u64, u64, u64),
}

/// The record of one launch, and the spans its pointers point into.
pub(crate) fn describe(
    ctx: &Context,
    facts: RequestFacts,
    (kind, kernel, execution): (LaunchKind, KernelRef, (Dtype, Dtype)),
    cfg: &LaunchConfig,
    args: &LaunchArgs,
    targets: &[Target],
) -> (LaunchRecord, Vec<Span>) {
    let identity = |name: &str| {
        targets
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, t)| *t)
            .map_or(PointerIdentity::default(), |(span, offset)| {
                PointerIdentity {
                    allocation: span.id,
                    generation: span.generation,
                    offset,
                }
            })
    };
    let record = LaunchRecord {
        kind,
        kernel,
        tier: ctx.tier.id,
        op: facts.op,
        logical: facts.logical,
        execution,
        shape: facts.shape,
        leading_dims: facts.leading_dims,
        grid: cfg.grid_dim,
        block: cfg.block_dim,
        shared_bytes: cfg.shared_mem_bytes,
        args_digest: argument_digest(&args.to_bytes(), args.pointer_fields(), identity),
    };
    let mut spans: Vec<Span> = Vec::with_capacity(targets.len());
    for (span, _) in targets.iter().filter_map(|(_, t)| *t) {
        if !spans.iter().any(|s| s.id == span.id) {
            spans.push(span);
        }
    }
    (record, spans)
}

impl Context {
    /// Hands one launch to the observer: deferred (package preparation), or enqueued and
    /// then recorded. `describe` runs only for an enabled observer, so with
    /// [`NoObserver`](crate::NoObserver) this is the bare launch. (Built with
    /// `--cfg gemm_observer_stripped`, every observer branch is removed from the source;
    /// `bench/observer-asm.sh` compares the two builds' machine code.)
    #[inline(always)]
    #[cfg_attr(gemm_observer_stripped, allow(unused_variables))]
    pub(crate) fn emit<O: Observer>(
        &self,
        observer: &mut O,
        kernel: KernelRef,
        cfg: LaunchConfig,
        args: LaunchArgs,
        describe: impl FnOnce(&LaunchArgs) -> (LaunchRecord, Vec<Span>),
    ) -> Result<(), GemmError> {
        #[cfg(not(gemm_observer_stripped))]
        if O::ENABLED {
            let (record, spans) = describe(&args);
            if O::DEFERS {
                observer.defer(crate::package::PreparedLaunch {
                    record,
                    args,
                    spans,
                });
                return Ok(());
            }
            self.launch_args(kernel, cfg, &args)?;
            observer.record(record);
            return Ok(());
        }
        self.launch_args(kernel, cfg, &args)
    }

    /// Enqueues one kernel with its argument struct.
    pub(crate) fn launch_args(
        &self,
        kernel: KernelRef,
        cfg: LaunchConfig,
        args: &LaunchArgs,
    ) -> Result<(), GemmError> {
        let func = self.function(kernel)?;
        let mut builder = self.stream.launch_builder(&func);
        match args {
            LaunchArgs::Gemm(a) => builder.arg(a),
            LaunchArgs::Convert(a) => builder.arg(a),
        };
        // SAFETY: every pointer in `args` was checked, when the call was validated, to lie
        // inside a live allocation of this context (or its scratch), long enough for the
        // shape, with outputs overlapping no input; packages re-check that the allocations
        // are still live.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }
}
