//! The reported two-GEMM tensor-core decode step (bf16, m = 5, 3584 -> 18944 -> 3584: H = X W1
//! on dec64, then Y = H W2 on dec32), its weights on one context, run eagerly or recorded,
//! packaged, captured and replayed.

use crate::case::Rng;
use gemm_runtime::{
    bf16, Context, DeviceBuffer, GemmError, GemmRequest, KernelRef, Manifest, NoObserver, Observer,
    Op, Policy, Request,
};

/// (m, hidden, intermediate).
pub const STEP: (usize, usize, usize) = (5, 3584, 18944);

/// The step's inputs on the host: X [m, hidden], W1 [hidden, intermediate], W2 [intermediate,
/// hidden], random and exact in bf16.
pub struct StepHost {
    pub x: Vec<bf16>,
    pub w1: Vec<bf16>,
    pub w2: Vec<bf16>,
}

impl StepHost {
    pub fn new(rng: &mut Rng) -> StepHost {
        let (m, d, f) = STEP;
        let mut v = |n: usize| (0..n).map(|_| bf16::from_f32(rng.value())).collect();
        StepHost {
            x: v(m * d),
            w1: v(d * f),
            w2: v(f * d),
        }
    }
}

/// The step's buffers on one context.
pub struct StepBuffers {
    x: DeviceBuffer<bf16>,
    w1: DeviceBuffer<bf16>,
    w2: DeviceBuffer<bf16>,
    pub h: DeviceBuffer<bf16>,
    pub y: DeviceBuffer<bf16>,
}

/// The step as a [`Request`] over its buffers (what a manifest records and a package replays).
pub struct Step<'a>(&'a mut StepBuffers);

impl Request for Step<'_> {
    fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
        let (m, d, f) = STEP;
        let b = &mut *self.0;
        let tc = Policy::TensorCore;
        ctx.gemm_observed(
            GemmRequest::new(Op::Nn, (m, f, d), b.x.mat(d), b.w1.mat(f), b.h.mat_mut(f))
                .with_policy(tc),
            obs,
        )?;
        ctx.gemm_observed(
            GemmRequest::new(Op::Nn, (m, d, f), b.h.mat(f), b.w2.mat(d), b.y.mat_mut(d))
                .with_policy(tc),
            obs,
        )?;
        Ok(())
    }
}

/// H's and Y's bits (bf16 widened to f32 bits).
pub type StepBits = (Vec<u32>, Vec<u32>);

impl StepBuffers {
    /// Uploads the inputs into `ctx`; H and Y start as NaN.
    pub fn new(ctx: &Context, host: &StepHost) -> Result<StepBuffers, GemmError> {
        let (m, d, f) = STEP;
        let nan = bf16::from_f32(f32::NAN);
        Ok(StepBuffers {
            x: ctx.upload(&host.x)?,
            w1: ctx.upload(&host.w1)?,
            w2: ctx.upload(&host.w2)?,
            h: ctx.upload(&vec![nan; m * f])?,
            y: ctx.upload(&vec![nan; m * d])?,
        })
    }

    /// The request over these buffers.
    pub fn request(&mut self) -> Step<'_> {
        Step(self)
    }

    /// Poisons H and Y (NaN), so a replay that writes nothing shows.
    pub fn poison(&mut self, ctx: &Context) -> Result<(), GemmError> {
        let nan = bf16::from_f32(f32::NAN);
        let (hl, yl) = (self.h.len(), self.y.len());
        ctx.write(&mut self.h, &vec![nan; hl])?;
        ctx.write(&mut self.y, &vec![nan; yl])
    }

    /// H's and Y's bits now.
    pub fn bits(&self, ctx: &Context) -> Result<StepBits, GemmError> {
        let f = |b: &DeviceBuffer<bf16>| -> Result<Vec<u32>, GemmError> {
            Ok(ctx
                .download(b)?
                .into_iter()
                .map(|v| v.to_f32().to_bits())
                .collect())
        };
        Ok((f(&self.h)?, f(&self.y)?))
    }

    /// Runs the step eagerly and returns its bits.
    pub fn eager(&mut self, ctx: &Context) -> Result<StepBits, GemmError> {
        self.poison(ctx)?;
        self.request().run(ctx, &mut NoObserver)?;
        self.bits(ctx)
    }
}

/// The names of the kernels a manifest's GEMM launches ran, in order.
pub fn kernel_names(ctx: &Context, manifest: &Manifest) -> Vec<&'static str> {
    manifest
        .records()
        .iter()
        .filter_map(|r| match r.kernel {
            KernelRef::Gemm(id) => ctx.kernels().kernel(id).map(|k| k.name),
            _ => None,
        })
        .collect()
}
