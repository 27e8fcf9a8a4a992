//! The hostile co-runner (`tests/timing/corunner.cu`) on a stream of its own: loaded from its
//! PTX into the device's context, launched with one CTA an SM (64 KiB of shared memory and 256
//! threads each, so GEMM CTAs still fit beside it) for a number of SM cycles.

use crate::CORUNNER_PTX;
use gemm_runtime::cudarc::driver::{
    sys, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use gemm_runtime::cudarc::nvrtc::Ptx;
use gemm_runtime::{Context, GemmError};
use std::sync::Arc;

/// Threads a co-runner CTA (`kCorunnerThreads`).
pub const THREADS: u32 = 256;
/// Dynamic shared memory a co-runner CTA (`kCorunnerSharedBytes`).
pub const SHARED_BYTES: u32 = 64 * 1024;
/// Bytes of the buffer it streams: more than the L2.
const JUNK_BYTES: usize = 256 << 20;

pub struct Corunner {
    _module: Arc<CudaModule>,
    func: CudaFunction,
    stream: Arc<CudaStream>,
    junk: CudaSlice<u8>,
    sink: CudaSlice<u32>,
    ctas: u32,
}

impl Corunner {
    /// Loads the co-runner into `ctx`'s device, on a new stream, with one CTA an SM.
    pub fn new(ctx: &Context) -> Result<Corunner, GemmError> {
        let cuda = ctx.stream().context().clone();
        let module = cuda.load_module(Ptx::from_src(CORUNNER_PTX))?;
        let func = module.load_function("hostile_corunner")?;
        func.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            SHARED_BYTES as i32,
        )?;
        let stream = cuda.new_stream()?;
        let mut junk = stream.alloc_zeros::<u8>(JUNK_BYTES)?;
        stream.memset_zeros(&mut junk)?;
        let sink = stream.alloc_zeros::<u32>(4096)?;
        let ctas = ctx.sm_count()?;
        Ok(Corunner {
            _module: module,
            func,
            stream,
            junk,
            sink,
            ctas,
        })
    }

    /// Starts one co-runner wave (one CTA an SM, each for `cycles` SM cycles) on its stream.
    pub fn launch(&mut self, cycles: i64, seed: u32) -> Result<(), GemmError> {
        let cfg = LaunchConfig {
            grid_dim: (self.ctas, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: SHARED_BYTES,
        };
        let elems = (JUNK_BYTES / 16) as u64;
        let mut b = self.stream.launch_builder(&self.func);
        b.arg(&self.junk)
            .arg(&elems)
            .arg(&mut self.sink)
            .arg(&cycles)
            .arg(&seed);
        // SAFETY: the argument list is the kernel's (const uint4*, u64, u32*, i64, u32); the
        // buffers are this co-runner's own and long enough (junk / 16 uint4, a u32 a CTA).
        unsafe { b.launch(cfg) }?;
        Ok(())
    }

    /// Waits for the co-runner's stream.
    pub fn synchronize(&self) -> Result<(), GemmError> {
        Ok(self.stream.synchronize()?)
    }
}
