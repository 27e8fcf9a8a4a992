//! Handing a launch to its observer, and the safe layer over the one raw launch path: every
//! GEMM and conversion launch goes through [`Context::emit`], so recording, deferring (package
//! preparation) and plain launching share one path, and every launch (a package's capture
//! too) through [`Context::launch_bytes`].

use crate::context::Context;
use crate::error::GemmError;
use crate::launcher::{launch, Geometry};
use crate::observer::{
    argument_digest_with_maps, LaunchKind, LaunchRecord, Observer, PointerIdentity, PreparedLaunch,
};
use crate::registry::Span;
use crate::request::Target;
use crate::table::{AbiInfo, ArgBytes, Dtype, KernelRef, Op, Policy};
use gemm_core::TensorMapKey;

/// What a record says about the request a launch belongs to.
#[derive(Clone, Copy)]
pub(crate) struct RequestFacts {
    pub op: Op,
    pub logical: (Dtype, Dtype),
    pub shape: (u64, u64, u64),
    pub leading_dims: (u64, u64, u64),
    /// The policy the call routed under.
    pub policy: Policy,
    /// Whether that policy is the context's default (the request named none): then a
    /// package must refuse a context whose default changed.
    pub policy_from_context: bool,
}

impl RequestFacts {
    /// The facts of `req` at its checked shape, routed under `policy`.
    pub(crate) fn of<A: crate::element::Element, C: crate::element::Element>(
        req: &crate::request::GemmRequest<'_, A, C>,
        shape: (u64, u64, u64),
        policy: Policy,
        policy_from_context: bool,
    ) -> RequestFacts {
        RequestFacts {
            op: req.op,
            logical: (A::DTYPE, C::DTYPE),
            shape,
            leading_dims: (req.a.ld as u64, req.b.ld as u64, req.c.ld as u64),
            policy,
            policy_from_context,
        }
    }
}

/// A launch as an observer sees it: its record, the spans its pointers (and tensor maps)
/// point into, and whether its policy came from the context.
pub(crate) struct Described {
    pub record: LaunchRecord,
    pub spans: Vec<Span>,
    pub policy_from_context: bool,
}

/// The record of one launch, and the spans its pointers point into. `targets` say where each
/// pointer source points (by source: `a.ptr`, `src`, ...); `maps` give each tensor-map field
/// of the struct (byte offset) with the key it was encoded from and its span.
pub(crate) fn describe(
    ctx: &Context,
    facts: RequestFacts,
    (kind, kernel, execution): (LaunchKind, KernelRef, (Dtype, Dtype)),
    geometry: &Geometry,
    (abi, args): (&AbiInfo, &ArgBytes),
    targets: &[Target],
    maps: &[(usize, Option<(TensorMapKey, Span)>)],
) -> Described {
    let target_of = |source: &str| {
        targets
            .iter()
            .find(|(s, _)| *s == source)
            .and_then(|(_, t)| *t)
    };
    let identity = |field: &str| {
        abi.fields
            .iter()
            .find(|f| f.name == field)
            .and_then(|f| target_of(f.bind))
            .map_or(PointerIdentity::default(), |(span, offset)| {
                PointerIdentity {
                    allocation: span.id,
                    generation: span.generation,
                    offset,
                }
            })
    };
    let map_keys: Vec<(usize, Option<TensorMapKey>)> = maps
        .iter()
        .map(|(offset, m)| (*offset, m.map(|(key, _)| key)))
        .collect();
    let pointer_fields: Vec<(&str, usize)> = abi.pointer_fields().collect();
    let record = LaunchRecord {
        kind,
        kernel,
        tier: ctx.tier().id,
        policy: facts.policy,
        op: facts.op,
        logical: facts.logical,
        execution,
        shape: facts.shape,
        leading_dims: facts.leading_dims,
        grid: geometry.grid,
        block: geometry.block,
        shared_bytes: geometry.shared_bytes,
        cluster: geometry.cluster,
        args_digest: argument_digest_with_maps(args.bytes(), &pointer_fields, identity, &map_keys),
    };
    let mut spans: Vec<Span> = Vec::with_capacity(targets.len());
    let map_spans = maps.iter().filter_map(|(_, m)| m.map(|(_, span)| span));
    for span in targets
        .iter()
        .filter_map(|(_, t)| t.map(|(span, _)| span))
        .chain(map_spans)
    {
        if !spans.iter().any(|s| s.id == span.id) {
            spans.push(span);
        }
    }
    Described {
        record,
        spans,
        policy_from_context: facts.policy_from_context,
    }
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
        geometry: Geometry,
        args: &ArgBytes,
        describe: impl FnOnce(&ArgBytes) -> Described,
    ) -> Result<(), GemmError> {
        #[cfg(not(gemm_observer_stripped))]
        if O::ENABLED {
            let d = describe(args);
            if O::DEFERS {
                observer.defer(PreparedLaunch {
                    record: d.record,
                    args: *args,
                    spans: d.spans,
                    policy_from_context: d.policy_from_context,
                });
                return Ok(());
            }
            self.launch_bytes(kernel, geometry, args)?;
            observer.record(d.record);
            return Ok(());
        }
        self.launch_bytes(kernel, geometry, args)
    }

    /// Enqueues one kernel of this context's tier with its argument struct's bytes: the safe
    /// layer over [`launcher::launch`](crate::launcher). Reached only with arguments the
    /// GEMM path built from validated operands, or a package's prepared launches (checked
    /// again against the registry before capture and replay).
    pub(crate) fn launch_bytes(
        &self,
        kernel: KernelRef,
        geometry: Geometry,
        args: &ArgBytes,
    ) -> Result<(), GemmError> {
        let func = self.function(kernel)?;
        // SAFETY: every pointer in `args` was checked, when the call was validated, to lie
        // inside a live allocation of this context (or its scratch), long enough for the
        // shape, with outputs overlapping no input; packages re-check that the allocations
        // are still live before they launch.
        unsafe { launch(self.cuda(), self.stream(), &func, geometry, args) }
    }
}
