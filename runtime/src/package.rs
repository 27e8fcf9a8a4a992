//! Packages and CUDA graphs. A manifest is the ordered launch records of one eager request; a
//! package is the same request prepared (validated, routed, arguments built) without
//! launching, checked launch for launch against the manifest; capturing a package into a CUDA
//! graph reads the graph's kernel nodes back and compares them with the package node for node.
//! Capture and replay are refused when the world changed: another context or stream, an
//! allocation freed or replaced, the mode or policy changed, a count that is not exact.

use crate::context::Context;
use crate::error::GemmError;
use crate::launcher::{Geometry, NO_CLUSTER};
use crate::observer::{LaunchRecord, Observer, PreparedLaunch, Recorder};
use crate::registry::SpanProblem;
use crate::stream::Mode;
use crate::table::{Dtype, DtypeTriple, Policy};
use cudarc::driver::{sys, CudaGraph};
use gemm_core::DefaultPolicy;
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

/// The ordered launch records of one eager run of a request, with the world it ran in
/// (context, stream, mode, the context's default policy; each record holds the policy its
/// call routed under). Made by [`Context::record_manifest`], which refuses to
/// record outside `Mode::Deterministic` and, through the recorder's fixed capacity, a request
/// that makes more launches than asked for (nothing is launched past the capacity).
#[derive(Clone, Debug)]
pub struct Manifest {
    context: u64,
    stream: u64,
    mode: Mode,
    policy: DefaultPolicy,
    records: Vec<LaunchRecord>,
}

impl Manifest {
    /// The launches, in order.
    pub fn records(&self) -> &[LaunchRecord] {
        &self.records
    }

    /// The context's default policy when the manifest was recorded.
    pub fn default_policy(&self) -> DefaultPolicy {
        self.policy
    }
}

/// Why a package or graph was refused. [`kind`](Self::kind) is a stable name for metrics and
/// logs. New refusals may be added (`#[non_exhaustive]`): match with a wildcard arm.
#[derive(Debug, Error)]
#[non_exhaustive]
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
    /// A launch's policy differs from the one it was recorded or packaged under: the
    /// context's default changed under a launch that takes it, or the request now names
    /// another.
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

impl PackageError {
    /// A stable snake_case name of the variant, for metrics and logs
    /// (`"allocation_changed"`). A runtime call's failure ([`PackageError::Gemm`]) gives its
    /// [`GemmError::kind`], so a refusal counts the same whether it came through a package or
    /// a plain call; the package's own variants have names no `GemmError` has.
    pub fn kind(&self) -> &'static str {
        match self {
            PackageError::WrongContext => "wrong_context",
            PackageError::WrongStream => "wrong_stream",
            PackageError::AllocationChanged { .. } => "allocation_changed",
            PackageError::ModeChanged { .. } => "mode_changed",
            PackageError::PolicyChanged { .. } => "policy_changed",
            PackageError::Empty => "empty_request",
            PackageError::NotDeterministic(_) => "not_deterministic",
            PackageError::CountMismatch { .. } => "count_mismatch",
            PackageError::RecordMismatch { .. } => "record_mismatch",
            PackageError::GraphMismatch { .. } => "graph_mismatch",
            PackageError::Gemm(e) => e.kind(),
            PackageError::Driver(_) => "driver",
        }
    }
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

/// Counts a request's launches without running them: the dry run that lets
/// [`Context::record_manifest`] refuse a request over its capacity before any launch.
#[derive(Default)]
struct Counter {
    launches: usize,
}

impl Observer for Counter {
    const ENABLED: bool = true;
    const DEFERS: bool = true;
    fn reserve(&mut self, _: usize) -> Result<(), GemmError> {
        Ok(())
    }
    fn record(&mut self, _: LaunchRecord) {}
    fn defer(&mut self, _: PreparedLaunch) {
        self.launches += 1;
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
    launches: Vec<PreparedLaunch>,
}

/// What differs between a manifest record and a prepared launch, if anything.
pub fn record_difference(recorded: &LaunchRecord, prepared: &LaunchRecord) -> Option<&'static str> {
    if recorded.policy != prepared.policy {
        Some("the policy")
    } else if recorded.kernel != prepared.kernel {
        Some("the kernel")
    } else if recorded.shape != prepared.shape || recorded.leading_dims != prepared.leading_dims {
        Some("the shape")
    } else if recorded.grid != prepared.grid || recorded.block != prepared.block {
        Some("the launch configuration")
    } else if recorded.cluster != prepared.cluster {
        Some("the cluster")
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
        self.stream().cu_stream() as u64
    }

    /// Runs `request` eagerly and records its launches (at most `capacity`).
    ///
    /// A request that needs more launches than `capacity` is refused
    /// (`GemmError::ObserverFull`) before any of its GEMMs runs: the request is first run
    /// dry (validated, routed and counted, nothing enqueued), then eagerly. `run` is
    /// therefore called twice and must make the same calls each time (as [`Request`] asks).
    pub fn record_manifest<R: Request>(
        &self,
        request: &mut R,
        capacity: usize,
    ) -> Result<Manifest, PackageError> {
        if self.mode() != Mode::Deterministic {
            return Err(PackageError::NotDeterministic(self.mode()));
        }
        let mut counter = Counter::default();
        request.run(self, &mut counter)?;
        if counter.launches > capacity {
            return Err(GemmError::ObserverFull {
                capacity,
                needed: counter.launches,
            }
            .into());
        }
        if counter.launches == 0 {
            return Err(PackageError::Empty);
        }
        let mut recorder = Recorder::with_capacity(capacity);
        request.run(self, &mut recorder)?;
        if recorder.records().is_empty() {
            return Err(PackageError::Empty);
        }
        Ok(Manifest {
            context: self.registry().token(),
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
            if rec.policy != launch.record.policy {
                return Err(PackageError::PolicyChanged {
                    then: rec.policy,
                    now: launch.record.policy,
                });
            }
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

    /// Context, stream and mode are those the package was made in, and every launch that
    /// takes the context's default policy would route under the policy it was recorded with
    /// (a launch whose request names its own policy is compared with that one, when the
    /// package is prepared).
    fn check_world(&self, ctx: &Context) -> Result<(), PackageError> {
        if ctx.registry().token() != self.context {
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
        for launch in self.launches.iter().filter(|l| l.policy_from_context) {
            // The default resolved for the launch's call, as it routed (by op and dtype).
            let r = &launch.record;
            let now = ctx.policy_for(r.op, DtypeTriple::new(r.logical.0, r.logical.1, Dtype::F32));
            if r.policy != now {
                return Err(PackageError::PolicyChanged {
                    then: launch.record.policy,
                    now,
                });
            }
        }
        Ok(())
    }

    /// Everything capture and replay require: the same world, and every allocation live in
    /// the generation the package saw.
    pub fn check(&self, ctx: &Context) -> Result<(), PackageError> {
        self.check_world(ctx)?;
        for (i, launch) in self.launches.iter().enumerate() {
            for span in &launch.spans {
                match ctx.registry().check(span) {
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
            let geometry = Geometry {
                grid: r.grid,
                block: r.block,
                shared_bytes: r.shared_bytes,
                cluster: r.cluster,
            };
            if let Err(e) = ctx.launch_bytes(r.kernel, geometry, &launch.args) {
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
            .own
            .scratch
            .current()
            .filter(|s| {
                self.launches
                    .iter()
                    .any(|l| l.spans.iter().any(|x| x.id == s.id))
            })
            .map(|_| ctx.own.scratch.pin());
        Ok(CapturedPackage {
            package: self.clone(),
            graph,
            _scratch_pin: scratch_pin,
        })
    }

    /// Reads the graph's kernel nodes back (a single chain from its root) and compares each
    /// with the package: function, grid, block, shared memory, cluster and argument bytes (for
    /// a tensor-core launch, its tensor maps too). An extra, missing or changed node is an
    /// error naming the field.
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
            let grid = (p.gridDimX, p.gridDimY, p.gridDimZ);
            if grid != r.grid {
                return Err(mismatch(format!("grid {grid:?}, the package {:?}", r.grid)));
            }
            let block = (p.blockDimX, p.blockDimY, p.blockDimZ);
            if block != r.block {
                return Err(mismatch(format!(
                    "block {block:?}, the package {:?}",
                    r.block
                )));
            }
            if p.sharedMemBytes != r.shared_bytes {
                return Err(mismatch(format!(
                    "shared memory {} bytes, the package {}",
                    p.sharedMemBytes, r.shared_bytes
                )));
            }
            let cluster = node_cluster(*node)?;
            if cluster != r.cluster {
                return Err(mismatch(format!(
                    "cluster {cluster:?}, the package {:?}",
                    r.cluster
                )));
            }
            if p.kernelParams.is_null() {
                return Err(mismatch("no kernel parameters".into()));
            }
            // SAFETY: every generated kernel takes one by-value argument struct; the driver's
            // parameter array holds one pointer to its bytes, as long as the package's.
            let expected = launch.args.bytes();
            let bytes = unsafe {
                let first = *p.kernelParams;
                std::slice::from_raw_parts(first as *const u8, expected.len())
            };
            if bytes != expected {
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

/// The cluster dimension of a kernel node, (1, 1, 1) for a node without clusters (the driver
/// reports zeros for those).
fn node_cluster(node: sys::CUgraphNode) -> Result<(u32, u32, u32), PackageError> {
    // SAFETY: a zeroed attribute value is a valid out-union for the driver to fill.
    let mut value: sys::CUkernelNodeAttrValue = unsafe { std::mem::zeroed() };
    // SAFETY: `node` is a kernel node of a live graph; `value` is a valid out-pointer.
    unsafe {
        sys::cuGraphKernelNodeGetAttribute(
            node,
            sys::CUkernelNodeAttrID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
            &mut value,
        )
    }
    .result()?;
    // SAFETY: the driver filled the cluster member for this attribute.
    let d = unsafe { value.clusterDim };
    Ok(normalize_cluster((d.x, d.y, d.z)))
}

/// A cluster as records hold it: zeros (no cluster attribute) read as (1, 1, 1).
fn normalize_cluster(c: (u32, u32, u32)) -> (u32, u32, u32) {
    if c == (0, 0, 0) {
        NO_CLUSTER
    } else {
        c
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
/// shared memory, cluster, argument bytes; no extra or missing node). [`replay`](Self::replay) runs the
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
            policy: Policy::Exact,
            op: Op::Nn,
            logical: (Dtype::F32, Dtype::F32),
            execution: (Dtype::F32, Dtype::F32),
            shape: (8, 64, 32),
            leading_dims: (32, 64, 64),
            grid: (1, 2, 1),
            block: (512, 1, 1),
            shared_bytes: 8192,
            cluster: (1, 1, 1),
            args_digest: 77,
        }
    }

    /// One value of every variant but `Gemm` (whose kind is the `GemmError`'s).
    /// Exhaustive without a wildcard: a new variant fails to compile here until listed.
    fn own_variants() -> Vec<PackageError> {
        let all = vec![
            PackageError::WrongContext,
            PackageError::WrongStream,
            PackageError::AllocationChanged {
                launch: 0,
                id: 1,
                generation: 1,
            },
            PackageError::ModeChanged {
                then: Mode::Deterministic,
                now: Mode::CublasFast,
            },
            PackageError::PolicyChanged {
                then: Policy::Exact,
                now: Policy::TensorCore,
            },
            PackageError::Empty,
            PackageError::NotDeterministic(Mode::CublasFast),
            PackageError::CountMismatch {
                recorded: 1,
                prepared: 2,
            },
            PackageError::RecordMismatch {
                launch: 0,
                what: "the kernel",
            },
            PackageError::GraphMismatch {
                node: 0,
                what: String::new(),
            },
            PackageError::Driver(cudarc::driver::DriverError(
                sys::CUresult::CUDA_ERROR_UNKNOWN,
            )),
        ];
        for e in &all {
            match e {
                PackageError::WrongContext
                | PackageError::WrongStream
                | PackageError::AllocationChanged { .. }
                | PackageError::ModeChanged { .. }
                | PackageError::PolicyChanged { .. }
                | PackageError::Empty
                | PackageError::NotDeterministic(_)
                | PackageError::CountMismatch { .. }
                | PackageError::RecordMismatch { .. }
                | PackageError::GraphMismatch { .. }
                | PackageError::Driver(_) => {}
                PackageError::Gemm(_) => unreachable!("listed through GemmError"),
            }
        }
        all
    }

    #[test]
    fn package_kinds_are_distinct_and_a_gemm_failure_keeps_its_kind() {
        let own: Vec<&str> = own_variants().iter().map(PackageError::kind).collect();
        assert_eq!(own.len(), 11);
        let mut distinct = own.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            own.len(),
            "two variants share a kind: {own:?}"
        );
        // The package's own names say something no GemmError says (a driver failure is the
        // same failure either way).
        let gemm: Vec<&str> = crate::error::tests::one_of_each()
            .iter()
            .map(GemmError::kind)
            .collect();
        for k in own.iter().filter(|k| **k != "driver") {
            assert!(!gemm.contains(k), "{k} is also a GemmError kind");
        }
        for e in crate::error::tests::one_of_each() {
            let kind = e.kind();
            assert_eq!(PackageError::Gemm(e).kind(), kind);
        }
    }

    #[test]
    fn record_differences_are_named() {
        let a = record();
        assert_eq!(record_difference(&a, &a), None);
        let cases: [(&str, LaunchRecord); 7] = [
            (
                "the policy",
                LaunchRecord {
                    policy: Policy::TensorCore,
                    ..record()
                },
            ),
            (
                "the cluster",
                LaunchRecord {
                    cluster: (2, 1, 1),
                    ..record()
                },
            ),
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

    /// The cluster launch path and the graph's cluster read-back, on a shipped kernel
    /// launched in clusters of two CTAs (any sm_90 kernel can be): the same bits as the plain
    /// launch, the cluster read back from the graph, and a package that expects no cluster
    /// refused node for node.
    #[test]
    #[ignore = "needs a CUDA device"]
    fn cluster_launches_capture_verify_and_replay() {
        use crate::{Context, DeviceBuffer, GemmRequest};
        let ctx = Context::new(0).expect("a CUDA device");
        if ctx.tier().compute_capability.0 < 9 {
            eprintln!("skipped: clusters need sm_90 or newer");
            return;
        }
        let f32s = crate::DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
        let probe = ctx
            .route(Policy::Exact, Op::Nn, f32s, 256, 256, 256)
            .unwrap();
        let tile_m = crate::kernel(probe.kernel).unwrap().tile.m as usize;
        let (m, n, k) = (2 * tile_m, 96, 70);
        let x = ctx
            .upload(&(0..m * k).map(|i| (i % 7) as f32 - 3.0).collect::<Vec<_>>())
            .unwrap();
        let w = ctx
            .upload(
                &(0..k * n)
                    .map(|i| (i % 5) as f32 * 0.25)
                    .collect::<Vec<_>>(),
            )
            .unwrap();
        let mut y: DeviceBuffer<f32> = ctx.alloc(m * n).unwrap();
        struct Step<'a> {
            x: crate::Mat<'a, f32>,
            w: crate::Mat<'a, f32>,
            y: &'a mut DeviceBuffer<f32>,
            dims: (usize, usize, usize),
        }
        impl Request for Step<'_> {
            fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
                let req = GemmRequest::linear(
                    self.x,
                    self.w,
                    None,
                    self.y.mat_mut(self.dims.1),
                    self.dims,
                );
                ctx.gemm_observed(req, obs).map(|_| ())
            }
        }
        let mut step = Step {
            x: x.mat(k),
            w: w.mat(n),
            y: &mut y,
            dims: (m, n, k),
        };
        let manifest = ctx.record_manifest(&mut step, 1).unwrap();
        let eager = ctx.download(step.y).unwrap();
        let plain = ctx.prepare_package(&manifest, &mut step).unwrap();
        assert_eq!(plain.launches[0].record.grid.0 % 2, 0);
        let mut clustered = plain.clone();
        clustered.launches[0].record.cluster = (2, 1, 1);
        let graph = clustered.capture(&ctx).unwrap();
        ctx.write(step.y, &vec![f32::NAN; m * n]).unwrap();
        graph.replay(&ctx).unwrap();
        let replayed = ctx.download(step.y).unwrap();
        assert!(eager
            .iter()
            .zip(&replayed)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        match plain.verify_graph(&ctx, graph.graph()) {
            Err(PackageError::GraphMismatch { node: 0, what }) => {
                assert!(what.contains("cluster"), "{what}")
            }
            other => panic!("expected a cluster mismatch, got {other:?}"),
        }
        // And the plain package's own graph reads back without a cluster.
        let plain_graph = plain.capture(&ctx).unwrap();
        assert!(clustered.verify_graph(&ctx, plain_graph.graph()).is_err());
    }
}
