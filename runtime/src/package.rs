//! Packages and CUDA graphs. A manifest is the ordered launch records of one eager request; a
//! package is the same request prepared (validated, routed, arguments built) without
//! launching, checked launch for launch against the manifest; capturing a package into a CUDA
//! graph reads the graph's kernel nodes back and compares them with the package node for node.
//! Capture and replay are refused when the world changed: another context or stream, an
//! allocation freed or replaced, the mode or policy changed, a count that is not exact.

use crate::context::{Context, Mode};
use crate::error::GemmError;
use crate::launch::LaunchArgs;
use crate::observer::{LaunchRecord, Observer, Recorder};
use crate::registry::{Span, SpanProblem};
use crate::table::Policy;
use cudarc::driver::{sys, CudaGraph, LaunchConfig};
use thiserror::Error;

/// A request that can run eagerly, be recorded, and be prepared into a package: the same
/// calls each time, with whatever observer it is given.
///
/// `run` must pass `observer` to every GEMM call it makes (`Context::gemm_observed`) and must
/// not launch other work on the context's stream: a package holds exactly the launches the
/// observer saw, and capture checks the graph has no others. A request whose calls bypass the
/// observer records nothing, and an empty manifest is refused (`PackageError::Empty`).
pub trait Request {
    /// Makes the request's GEMM calls on `ctx`, passing `observer` to each
    /// (`Context::gemm_observed`).
    fn run<O: Observer>(&mut self, ctx: &Context, observer: &mut O) -> Result<(), GemmError>;
}

/// One launch, prepared but not enqueued: its record, its exact argument bytes, and the
/// registered allocations its pointers point into (checked again before capture and replay).
#[derive(Clone, Debug)]
pub struct PreparedLaunch {
    /// What the launch would record.
    pub record: LaunchRecord,
    /// Its argument struct.
    pub args: LaunchArgs,
    /// The registered spans its pointers point into (checked again before capture and replay).
    pub spans: Vec<Span>,
}

/// The ordered launch records of one eager run of a request, with the world it ran in
/// (context, stream, mode, policy). Made by [`Context::record_manifest`], which refuses to
/// record outside `Mode::Deterministic` and, through the recorder's fixed capacity, a request
/// that makes more launches than asked for (nothing is launched past the capacity).
#[derive(Clone, Debug)]
pub struct Manifest {
    context: u64,
    stream: u64,
    mode: Mode,
    policy: Policy,
    records: Vec<LaunchRecord>,
}

impl Manifest {
    /// The launches, in order.
    pub fn records(&self) -> &[LaunchRecord] {
        &self.records
    }
}

/// Why a package or graph was refused.
#[derive(Debug, Error)]
pub enum PackageError {
    /// The package was made with another context.
    #[error("the package was made for another context")]
    WrongContext,
    /// The package was made for another stream of the context.
    #[error("the package was made for another stream")]
    WrongStream,
    /// A launch's allocation was freed, or replaced (even at the same address).
    #[error("launch {launch}: allocation {id} generation {generation} was freed or replaced since the package was made")]
    AllocationChanged {
        /// Index of the launch in the package.
        launch: usize,
        /// Allocation id.
        id: u64,
        /// Generation the package saw.
        generation: u64,
    },
    /// The mode differs from the one the package was made in.
    #[error("the mode changed from {then:?} to {now:?} since the package was made")]
    ModeChanged {
        /// Mode when packaged.
        then: Mode,
        /// Mode now.
        now: Mode,
    },
    /// The policy differs from the one the package was made in.
    #[error("the policy changed from {then} to {now} since the package was made")]
    PolicyChanged {
        /// Policy when packaged.
        then: Policy,
        /// Policy now.
        now: Policy,
    },
    /// The request made no launch the observer saw (its calls did not take the observer, or
    /// every output was empty): there is nothing to package.
    #[error("the request made no launch through its observer: pass the observer to every call (Context::gemm_observed)")]
    Empty,
    /// Packages hold the generated kernels only.
    #[error("packages need Mode::Deterministic (the request ran in {0:?})")]
    NotDeterministic(Mode),
    /// The request made another number of launches than the manifest holds.
    #[error("the manifest holds {recorded} launches but the request prepared {prepared}: capacity must be exact")]
    CountMismatch {
        /// Launches in the manifest.
        recorded: usize,
        /// Launches the request prepared.
        prepared: usize,
    },
    /// A prepared launch differs from its manifest record.
    #[error("launch {launch}: the manifest and the package disagree on {what}")]
    RecordMismatch {
        /// Index of the launch.
        launch: usize,
        /// What differs (kernel, grid, argument bytes, ...).
        what: &'static str,
    },
    /// The captured graph is not the package, node for node.
    #[error("graph node {node}: {what}")]
    GraphMismatch {
        /// Index of the node in the graph's chain.
        node: usize,
        /// What is extra, missing or changed.
        what: String,
    },
    /// A runtime call failed.
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// A driver call failed.
    #[error("CUDA driver call failed: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
}

/// Takes launches instead of running them, up to the manifest's count.
struct Preparer {
    capacity: usize,
    launches: Vec<PreparedLaunch>,
    overflow: usize,
}

impl Observer for Preparer {
    const ENABLED: bool = true;
    const DEFERS: bool = true;
    fn reserve(&mut self, launches: usize) -> Result<(), GemmError> {
        let needed = self.launches.len() + self.overflow + launches;
        if needed > self.capacity {
            // Counted, not refused: the package reports the exact mismatch afterwards.
            self.overflow += launches;
        }
        Ok(())
    }
    fn record(&mut self, _: LaunchRecord) {}
    fn defer(&mut self, launch: PreparedLaunch) {
        if self.launches.len() < self.capacity {
            self.launches.push(launch);
        }
    }
}

/// The launches of a request, prepared without launching and checked against its manifest:
/// exactly as many launches, each with the record's kernel, shape, launch configuration and
/// argument digest. It remembers the world of the manifest; [`Package::check`], run by
/// capture and replay, refuses another context or stream, a changed mode or policy, and any
/// allocation its launches point into that was freed or replaced since.
#[derive(Clone, Debug)]
pub struct Package {
    context: u64,
    stream: u64,
    mode: Mode,
    policy: Policy,
    launches: Vec<PreparedLaunch>,
}

/// What differs between a manifest record and a prepared launch, if anything.
pub fn record_difference(recorded: &LaunchRecord, prepared: &LaunchRecord) -> Option<&'static str> {
    if recorded.kernel != prepared.kernel {
        Some("the kernel")
    } else if recorded.shape != prepared.shape || recorded.leading_dims != prepared.leading_dims {
        Some("the shape")
    } else if recorded.grid != prepared.grid || recorded.block != prepared.block {
        Some("the launch configuration")
    } else if recorded.shared_bytes != prepared.shared_bytes {
        Some("the shared memory")
    } else if recorded.args_digest != prepared.args_digest {
        Some("the argument bytes")
    } else if recorded != prepared {
        Some("the launch record")
    } else {
        None
    }
}

impl Context {
    fn stream_token(&self) -> u64 {
        self.stream.cu_stream() as u64
    }

    /// Runs `request` eagerly and records its launches (at most `capacity`).
    pub fn record_manifest<R: Request>(
        &self,
        request: &mut R,
        capacity: usize,
    ) -> Result<Manifest, PackageError> {
        if self.mode() != Mode::Deterministic {
            return Err(PackageError::NotDeterministic(self.mode()));
        }
        let mut recorder = Recorder::with_capacity(capacity);
        request.run(self, &mut recorder)?;
        if recorder.records().is_empty() {
            return Err(PackageError::Empty);
        }
        Ok(Manifest {
            context: self.registry.token(),
            stream: self.stream_token(),
            mode: self.mode(),
            policy: self.policy(),
            records: recorder.take(),
        })
    }

    /// Prepares `request` without launching: exactly the manifest's launches, each equal to
    /// its record.
    pub fn prepare_package<R: Request>(
        &self,
        manifest: &Manifest,
        request: &mut R,
    ) -> Result<Package, PackageError> {
        let package = Package {
            context: manifest.context,
            stream: manifest.stream,
            mode: manifest.mode,
            policy: manifest.policy,
            launches: Vec::new(),
        };
        package.check_world(self)?;
        let mut preparer = Preparer {
            capacity: manifest.records.len(),
            launches: Vec::new(),
            overflow: 0,
        };
        request.run(self, &mut preparer)?;
        let prepared = preparer.launches.len() + preparer.overflow;
        if prepared != manifest.records.len() {
            return Err(PackageError::CountMismatch {
                recorded: manifest.records.len(),
                prepared,
            });
        }
        for (i, (rec, launch)) in manifest.records.iter().zip(&preparer.launches).enumerate() {
            if let Some(what) = record_difference(rec, &launch.record) {
                return Err(PackageError::RecordMismatch { launch: i, what });
            }
        }
        Ok(Package {
            launches: preparer.launches,
            ..package
        })
    }
}

impl Package {
    /// The prepared launches, in order.
    pub fn launches(&self) -> &[PreparedLaunch] {
        &self.launches
    }

    /// Context, stream, mode and policy are those the package was made in.
    fn check_world(&self, ctx: &Context) -> Result<(), PackageError> {
        if ctx.registry.token() != self.context {
            return Err(PackageError::WrongContext);
        }
        if ctx.stream_token() != self.stream {
            return Err(PackageError::WrongStream);
        }
        if ctx.mode() != self.mode {
            return Err(PackageError::ModeChanged {
                then: self.mode,
                now: ctx.mode(),
            });
        }
        if ctx.policy() != self.policy {
            return Err(PackageError::PolicyChanged {
                then: self.policy,
                now: ctx.policy(),
            });
        }
        Ok(())
    }

    /// Everything capture and replay require: the same world, and every allocation live in
    /// the generation the package saw.
    pub fn check(&self, ctx: &Context) -> Result<(), PackageError> {
        self.check_world(ctx)?;
        for (i, launch) in self.launches.iter().enumerate() {
            for span in &launch.spans {
                match ctx.registry.check(span) {
                    Ok(()) => {}
                    Err(SpanProblem::Foreign) => return Err(PackageError::WrongContext),
                    Err(SpanProblem::Stale) => {
                        return Err(PackageError::AllocationChanged {
                            launch: i,
                            id: span.id,
                            generation: span.generation,
                        })
                    }
                }
            }
        }
        Ok(())
    }

    /// Captures the package into a CUDA graph on the context's stream and verifies the graph's
    /// kernel nodes against the package. After a refusal the stream is out of capture mode.
    pub fn capture(&self, ctx: &Context) -> Result<CapturedPackage, PackageError> {
        self.check(ctx)?;
        // Load every function first: module loads do not belong inside a capture.
        for launch in &self.launches {
            ctx.function(launch.record.kernel)?;
        }
        let stream = ctx.stream();
        stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        let mut failure: Option<PackageError> = None;
        for launch in &self.launches {
            let r = &launch.record;
            let cfg = LaunchConfig {
                grid_dim: r.grid,
                block_dim: r.block,
                shared_mem_bytes: r.shared_bytes,
            };
            if let Err(e) = ctx.launch_args(r.kernel, cfg, &launch.args) {
                failure = Some(e.into());
                break;
            }
        }
        // End the capture in every case, so the stream is usable after a refusal.
        let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
        if let Some(e) = failure {
            return Err(e);
        }
        let graph = graph?.ok_or(PackageError::GraphMismatch {
            node: 0,
            what: "capture produced no graph".into(),
        })?;
        self.verify_graph(ctx, &graph)?;
        // A graph whose nodes point into the fallback's scratch freezes it while alive.
        let scratch_pin = ctx
            .scratch
            .current()
            .filter(|s| {
                self.launches
                    .iter()
                    .any(|l| l.spans.iter().any(|x| x.id == s.id))
            })
            .map(|_| ctx.scratch.pin());
        Ok(CapturedPackage {
            package: self.clone(),
            graph,
            _scratch_pin: scratch_pin,
        })
    }

    /// Reads the graph's kernel nodes back (a single chain from its root) and compares each
    /// with the package: function, grid, block, shared memory and argument bytes. An extra,
    /// missing or changed node is an error.
    pub fn verify_graph(&self, ctx: &Context, graph: &CudaGraph) -> Result<(), PackageError> {
        let nodes = graph_chain(graph.cu_graph())?;
        for (i, node) in nodes.iter().enumerate() {
            let mismatch = |what: String| PackageError::GraphMismatch { node: i, what };
            let Some(launch) = self.launches.get(i) else {
                return Err(mismatch("an extra node the package did not prepare".into()));
            };
            let mut ty = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: `node` belongs to the live graph; `ty` is a valid out-pointer.
            unsafe { sys::cuGraphNodeGetType(*node, &mut ty) }.result()?;
            if ty != sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
                return Err(mismatch(format!(
                    "a {ty:?} node where the package has a kernel"
                )));
            }
            // SAFETY: zeroed params are a valid out-structure for the driver to fill.
            let mut p: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
            unsafe { sys::cuGraphKernelNodeGetParams_v2(*node, &mut p) }.result()?;
            let r = &launch.record;
            let func = ctx.function(r.kernel)?;
            if p.func != func.cu_function() {
                return Err(mismatch(format!("another function than {:?}", r.kernel)));
            }
            if (p.gridDimX, p.gridDimY, p.gridDimZ) != r.grid
                || (p.blockDimX, p.blockDimY, p.blockDimZ) != r.block
                || p.sharedMemBytes != r.shared_bytes
            {
                return Err(mismatch("another grid, block or shared memory".into()));
            }
            if p.kernelParams.is_null() {
                return Err(mismatch("no kernel parameters".into()));
            }
            // SAFETY: every generated kernel takes one by-value argument struct; the driver's
            // parameter array holds one pointer to its bytes, as long as the package's.
            let expected = launch.args.to_bytes();
            let bytes = unsafe {
                let first = *p.kernelParams;
                std::slice::from_raw_parts(first as *const u8, expected.len())
            };
            if bytes != expected.as_slice() {
                return Err(mismatch("argument bytes differ from the package".into()));
            }
        }
        if nodes.len() < self.launches.len() {
            return Err(PackageError::GraphMismatch {
                node: nodes.len(),
                what: format!(
                    "missing: the graph has {} nodes, the package {}",
                    nodes.len(),
                    self.launches.len()
                ),
            });
        }
        Ok(())
    }
}

/// The nodes of a graph that is one chain (what capturing one stream makes), in order.
fn graph_chain(graph: sys::CUgraph) -> Result<Vec<sys::CUgraphNode>, PackageError> {
    let mut count = 0usize;
    // SAFETY: querying the count with a null array is the documented use.
    unsafe { sys::cuGraphGetRootNodes(graph, std::ptr::null_mut(), &mut count) }.result()?;
    if count == 0 {
        return Ok(Vec::new());
    }
    if count > 1 {
        return Err(PackageError::GraphMismatch {
            node: 0,
            what: format!("{count} root nodes; a package is one chain"),
        });
    }
    let mut node: sys::CUgraphNode = std::ptr::null_mut();
    unsafe { sys::cuGraphGetRootNodes(graph, &mut node, &mut count) }.result()?;
    let mut chain = vec![node];
    loop {
        let mut n = 0usize;
        unsafe {
            sys::cuGraphNodeGetDependentNodes_v2(
                node,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut n,
            )
        }
        .result()?;
        match n {
            0 => return Ok(chain),
            1 => {
                let mut next: sys::CUgraphNode = std::ptr::null_mut();
                unsafe {
                    sys::cuGraphNodeGetDependentNodes_v2(
                        node,
                        &mut next,
                        std::ptr::null_mut(),
                        &mut n,
                    )
                }
                .result()?;
                chain.push(next);
                node = next;
            }
            _ => {
                return Err(PackageError::GraphMismatch {
                    node: chain.len(),
                    what: format!("{n} dependents; a package is one chain"),
                })
            }
        }
    }
}

/// A package captured into a CUDA graph and verified node for node (function, grid, block,
/// shared memory, argument bytes; no extra or missing node). [`replay`](Self::replay) runs the
/// package's checks first and refuses when the world changed. While it lives, the half
/// fallback's scratch it points into cannot grow: a request that would need more is refused
/// with `GemmError::ScratchFrozen` instead of moving memory under the graph.
pub struct CapturedPackage {
    package: Package,
    graph: CudaGraph,
    /// Keeps the fallback's scratch from growing (moving) while the graph points into it.
    _scratch_pin: Option<std::sync::Arc<()>>,
}

impl CapturedPackage {
    /// The package it was captured from.
    pub fn package(&self) -> &Package {
        &self.package
    }

    /// The verified graph.
    pub fn graph(&self) -> &CudaGraph {
        &self.graph
    }

    /// Replays the graph on the context's stream, after the same checks as capture.
    pub fn replay(&self, ctx: &Context) -> Result<(), PackageError> {
        self.package.check(ctx)?;
        self.graph.launch()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observer::LaunchKind;
    use crate::table::{Dtype, KernelId, KernelRef, Op, TierId};

    fn record() -> LaunchRecord {
        LaunchRecord {
            kind: LaunchKind::Gemm,
            kernel: KernelRef::Gemm(KernelId(3)),
            tier: TierId(0),
            op: Op::Nn,
            logical: (Dtype::F32, Dtype::F32),
            execution: (Dtype::F32, Dtype::F32),
            shape: (8, 64, 32),
            leading_dims: (32, 64, 64),
            grid: (1, 2, 1),
            block: (512, 1, 1),
            shared_bytes: 8192,
            args_digest: 77,
        }
    }

    #[test]
    fn record_differences_are_named() {
        let a = record();
        assert_eq!(record_difference(&a, &a), None);
        let cases: [(&str, LaunchRecord); 5] = [
            (
                "the kernel",
                LaunchRecord {
                    kernel: KernelRef::Gemm(KernelId(4)),
                    ..record()
                },
            ),
            (
                "the shape",
                LaunchRecord {
                    shape: (9, 64, 32),
                    ..record()
                },
            ),
            (
                "the launch configuration",
                LaunchRecord {
                    grid: (2, 2, 1),
                    ..record()
                },
            ),
            (
                "the shared memory",
                LaunchRecord {
                    shared_bytes: 0,
                    ..record()
                },
            ),
            (
                "the argument bytes",
                LaunchRecord {
                    args_digest: 78,
                    ..record()
                },
            ),
        ];
        for (what, b) in cases {
            assert_eq!(record_difference(&a, &b), Some(what));
        }
    }
}
