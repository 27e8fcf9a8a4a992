//! The GPU's clock: each time is one launch of the named kernel through gemm-runtime
//! (`Context::gemm_on_kernel`, which runs that kernel or refuses), measured as the bench
//! measures (bench/src/tensor_core.rs): random inputs that are never zero, input sets rotating
//! so that a set small against L2 is not read from it (2 to 8 sets, together at least three
//! times L2 where 8 allow), 4 warm-up launches, then each timed launch between CUDA events,
//! preceded (untimed) by a launch on the previous set so the host's enqueue hides behind GPU
//! work; the median of the reps.

use gemm_aot_tune::{Timer, TimerError};
use gemm_runtime::tuning::TuningError;
use gemm_runtime::{
    bf16, f16, Context, DeviceBuffer, Dtype, DtypeTriple, Element, GemmError, GemmRequest,
    KernelId, Op,
};
use gemm_spec::{SpecSet, Tier};
use std::time::Instant;

/// The H100's and H200's L2 (60 MiB; a set is small against it below a third).
const L2_BYTES: usize = 60 << 20;
const WARM_UP: usize = 4;
/// A timed sample covers at least this many milliseconds of launches (several launches of a
/// short kernel, averaged).
const GROUP_MS: f64 = 0.2;

/// A measurement stops after this many seconds once it has 5 reps (large shapes).
const BUDGET_S: f64 = 2.0;

/// Input sets and an output of one element type, grown when a shape needs more; a shape
/// takes views of their first elements.
struct Pool<T: Element> {
    a: Vec<DeviceBuffer<T>>,
    b: Vec<DeviceBuffer<T>>,
    c: Option<DeviceBuffer<T>>,
}

impl<T: Element> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            a: Vec::new(),
            b: Vec::new(),
            c: None,
        }
    }
}

#[derive(Default)]
struct Pools {
    bf16: Pool<bf16>,
    f16: Pool<f16>,
    f32: Pool<f32>,
}

/// An element type with its pool.
trait Pooled: Element {
    fn pool(p: &mut Pools) -> &mut Pool<Self>;
}

impl Pooled for bf16 {
    fn pool(p: &mut Pools) -> &mut Pool<Self> {
        &mut p.bf16
    }
}

impl Pooled for f16 {
    fn pool(p: &mut Pools) -> &mut Pool<Self> {
        &mut p.f16
    }
}

impl Pooled for f32 {
    fn pool(p: &mut Pools) -> &mut Pool<Self> {
        &mut p.f32
    }
}

/// An LCG, values in [-1, 1), never zero (zeros can run faster than real data).
struct Rng(u64);

impl Rng {
    fn value(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = 2.0 * ((self.0 >> 40) as f32 / (1u64 << 24) as f32) - 1.0;
        if v == 0.0 {
            0.25
        } else {
            v
        }
    }
}

pub struct GpuTimer<'s> {
    ctx: Context,
    specs: &'s SpecSet,
    tier: &'s Tier,
    reps: usize,
    pools: Pools,
    rng: Rng,
}

fn failed(e: impl std::fmt::Display) -> TimerError {
    TimerError::Failed(e.to_string())
}

impl<'s> GpuTimer<'s> {
    /// Opens device `ordinal` on tier `tier` of gemm-runtime's compiled set; `specs` is the
    /// model the tuner reads (kernel names are built from it).
    pub fn open(
        ordinal: usize,
        specs: &'s SpecSet,
        tier: &str,
        reps: usize,
    ) -> Result<GpuTimer<'s>, String> {
        let t = specs
            .tier(tier)
            .ok_or_else(|| format!("no tier named {tier} in the specs"))?;
        let ctx = Context::with_tier(ordinal, tier)
            .map_err(|e| format!("cannot open device {ordinal} on tier {tier}: {e}"))?;
        Ok(GpuTimer {
            ctx,
            specs,
            tier: t,
            reps: reps.max(1),
            pools: Pools::default(),
            rng: Rng(0x5eed),
        })
    }

    /// The GPU's name, for the routes file's header.
    pub fn device_name(&self) -> String {
        self.ctx
            .stream()
            .context()
            .name()
            .unwrap_or_else(|_| "an unnamed GPU".into())
    }

    /// The set's kernel for `family.tile` at (op, dtype), by its entry point's name.
    fn kernel_id(&self, kernel: &str, op: Op, dtype: DtypeTriple) -> Result<KernelId, TimerError> {
        let (family, tile) = kernel
            .split_once('.')
            .ok_or_else(|| failed(format!("`{kernel}` is not `family.tile`")))?;
        let fam = self
            .specs
            .family(family)
            .ok_or_else(|| failed(format!("no family {family} in the specs")))?;
        let t = self
            .tier
            .tile(family, tile)
            .ok_or_else(|| failed(format!("tier {} has no tile {kernel}", self.tier.name)))?;
        let name = gemm_codegen::catalog::kernel_name(self.tier, fam, op, dtype, t);
        self.ctx.tier_kernel_named(&name).ok_or_else(|| {
            failed(format!(
                "kernel {name} is not in gemm-runtime's compiled set: build the tune binary from the specs it tunes (GEMM_AOT_SPECS=<folder> when they are not the shipped ones)"
            ))
        })
    }

    fn random<T: Element>(&mut self, len: usize) -> Result<DeviceBuffer<T>, TimerError> {
        // A block of up to 2^22 + 7 values written again and again: drawing gigabytes on the
        // host would take seconds, and the odd length shifts the pattern against every row.
        let block = len.clamp(1, (1 << 22) + 7);
        let host: Vec<T> = (0..block).map(|_| T::from_f32(self.rng.value())).collect();
        let mut buf = self.ctx.alloc::<T>(len).map_err(failed)?;
        let mut at = 0;
        while at < len {
            let n = block.min(len - at);
            self.ctx
                .write_at(&mut buf, at, &host[..n])
                .map_err(failed)?;
            at += n;
        }
        Ok(buf)
    }

    /// At least `sets` buffers of at least `len` elements in `which` (A or B) of T's pool.
    fn ensure<T: Pooled>(&mut self, b: bool, sets: usize, len: usize) -> Result<(), TimerError> {
        for i in 0..sets {
            let have = {
                let pool = T::pool(&mut self.pools);
                let bufs = if b { &pool.b } else { &pool.a };
                bufs.get(i).map(|x| x.len())
            };
            if have.is_some_and(|l| l >= len) {
                continue;
            }
            let buf = self.random::<T>(len)?;
            let pool = T::pool(&mut self.pools);
            let bufs = if b { &mut pool.b } else { &mut pool.a };
            if i < bufs.len() {
                bufs[i] = buf;
            } else {
                bufs.push(buf);
            }
        }
        Ok(())
    }

    fn time_as<A: Pooled, C: Pooled>(
        &mut self,
        id: KernelId,
        op: Op,
        (m, n, k): (usize, usize, usize),
    ) -> Result<f64, TimerError> {
        let (a_len, lda) = (m * k, if op == Op::Tn { m } else { k });
        let (b_len, ldb) = (k * n, if op == Op::Nt { k } else { n });
        let set_bytes = (a_len + b_len) * std::mem::size_of::<A>();
        let sets = (3 * L2_BYTES).div_ceil(set_bytes.max(1)).clamp(2, 8);
        self.ensure::<A>(false, sets, a_len)?;
        self.ensure::<A>(true, sets, b_len)?;
        let mut c = match C::pool(&mut self.pools).c.take() {
            Some(c) if c.len() >= m * n => c,
            _ => self.ctx.alloc::<C>(m * n).map_err(failed)?,
        };
        // A gradient accumulates (TN, beta = 1), as the bench times it.
        let beta = if op == Op::Tn { 1.0 } else { 0.0 };
        let ctx = &self.ctx;
        let pool = A::pool(&mut self.pools);
        let launch = |set: usize, c: &mut DeviceBuffer<C>| {
            let req = GemmRequest::new(
                op,
                (m, n, k),
                pool.a[set].mat(lda),
                pool.b[set].mat(ldb),
                c.mat_mut(n),
            )
            .with_beta(beta);
            ctx.gemm_on_kernel(req, id).map(|_| ()).map_err(refusal)
        };
        let result = (|| {
            for i in 0..WARM_UP {
                launch(i % sets, &mut c)?;
            }
            let timer = ctx.timer().map_err(failed)?;
            // A sample is a group of launches long enough (GROUP_MS) that event resolution
            // and launch jitter do not decide it: one launch of a 10 us kernel does not.
            timer.start().map_err(failed)?;
            launch(0, &mut c)?;
            timer.stop().map_err(failed)?;
            let one = timer.elapsed().map_err(failed)?.as_secs_f64() * 1e3;
            let group = ((GROUP_MS / one.max(1e-4)).ceil() as usize).clamp(1, 32);
            let mut times = Vec::with_capacity(self.reps);
            let started = Instant::now();
            for i in 0..self.reps {
                launch((i * group + sets - 1) % sets, &mut c)?;
                timer.start().map_err(failed)?;
                for j in 0..group {
                    launch((i * group + j) % sets, &mut c)?;
                }
                timer.stop().map_err(failed)?;
                times.push(timer.elapsed().map_err(failed)?.as_secs_f64() * 1e3 / group as f64);
                if i >= 5 && started.elapsed().as_secs_f64() > BUDGET_S {
                    break;
                }
            }
            times.sort_by(f64::total_cmp);
            Ok(times[times.len() / 2])
        })();
        C::pool(&mut self.pools).c = Some(c);
        result
    }
}

/// A launch refused for the shape is a skipped candidate; anything else stops tuning.
fn refusal(e: TuningError) -> TimerError {
    match e {
        TuningError::Gemm(
            g @ (GemmError::Tma { .. }
            | GemmError::GridTooLarge { .. }
            | GemmError::ColumnsTooMany { .. }
            | GemmError::DimensionOverflow { .. }
            | GemmError::ClusterShape { .. }
            | GemmError::Unschedulable { .. }),
        ) => TimerError::Refused(g.to_string()),
        other => failed(other),
    }
}

impl Timer for GpuTimer<'_> {
    fn time(
        &mut self,
        kernel: &str,
        m: u64,
        n: u64,
        k: u64,
        op: Op,
        dtype: DtypeTriple,
    ) -> Result<f64, TimerError> {
        let id = self.kernel_id(kernel, op, dtype)?;
        let dims = (m as usize, n as usize, k as usize);
        match (dtype.ab, dtype.c) {
            (Dtype::Bf16, Dtype::Bf16) => self.time_as::<bf16, bf16>(id, op, dims),
            (Dtype::Bf16, Dtype::F32) => self.time_as::<bf16, f32>(id, op, dims),
            (Dtype::F16, Dtype::F16) => self.time_as::<f16, f16>(id, op, dims),
            (Dtype::F16, Dtype::F32) => self.time_as::<f16, f32>(id, op, dims),
            (Dtype::F32, Dtype::F32) => self.time_as::<f32, f32>(id, op, dims),
            (ab, c) => Err(failed(format!(
                "no GEMM takes {ab} operands into a {c} output"
            ))),
        }
    }
}
