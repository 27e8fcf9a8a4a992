//! A two-layer MLP, `y = relu(x·W1 + b1)·W2 + b2`, in bf16 with f32 logits, run on the same
//! first row at batch 1 and at batch 37. With gemm-runtime's deterministic mode the row's
//! output does not depend on the other 36 rows: the bits are identical.

use gemm_runtime::{bf16, Context, GemmError};

const D_IN: usize = 256;
const D_HIDDEN: usize = 1024;
const D_OUT: usize = 100;

/// Deterministic pseudo-random weights and inputs in [-1, 1).
fn values(seed: u64, len: usize) -> Vec<bf16> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            bf16::from_f32(((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

struct Mlp {
    w1: gemm_runtime::DeviceBuffer<bf16>,
    b1: gemm_runtime::DeviceBuffer<bf16>,
    w2: gemm_runtime::DeviceBuffer<bf16>,
    b2: gemm_runtime::DeviceBuffer<f32>,
}

impl Mlp {
    fn new(ctx: &Context) -> Result<Self, GemmError> {
        let scale = |v: Vec<bf16>, s: f32| {
            v.into_iter()
                .map(|x| bf16::from_f32(x.to_f32() * s))
                .collect::<Vec<_>>()
        };
        Ok(Mlp {
            w1: ctx.upload(&scale(values(1, D_IN * D_HIDDEN), 0.06))?,
            b1: ctx.upload(&values(2, D_HIDDEN))?,
            w2: ctx.upload(&scale(values(3, D_HIDDEN * D_OUT), 0.03))?,
            b2: ctx.upload(
                &values(4, D_OUT)
                    .iter()
                    .map(|x| x.to_f32())
                    .collect::<Vec<f32>>(),
            )?,
        })
    }

    /// Logits `[batch, D_OUT]` for inputs `[batch, D_IN]`.
    fn forward(&self, ctx: &Context, x: &[bf16], batch: usize) -> Result<Vec<f32>, GemmError> {
        let x = ctx.upload(x)?;
        let mut h = ctx.alloc::<bf16>(batch * D_HIDDEN)?;
        ctx.linear(
            x.mat(D_IN),
            self.w1.mat(D_HIDDEN),
            Some(self.b1.mat(D_HIDDEN)),
            h.mat_mut(D_HIDDEN),
            (batch, D_HIDDEN, D_IN),
        )?;
        // ReLU on the host: the library does GEMMs, not activations.
        let relu: Vec<bf16> = ctx
            .download(&h)?
            .into_iter()
            .map(|v| if v.to_f32() > 0.0 { v } else { bf16::ZERO })
            .collect();
        ctx.write(&mut h, &relu)?;
        let mut y = ctx.alloc::<f32>(batch * D_OUT)?;
        ctx.linear(
            h.mat(D_HIDDEN),
            self.w2.mat(D_OUT),
            Some(self.b2.mat(D_OUT)),
            y.mat_mut(D_OUT),
            (batch, D_OUT, D_HIDDEN),
        )?;
        ctx.download(&y)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = Context::new(0)?;
    let mlp = Mlp::new(&ctx)?;
    let batch = 37;
    let inputs = values(42, batch * D_IN); // row 0 is the request we follow
    let alone = mlp.forward(&ctx, &inputs[..D_IN], 1)?;
    let batched = mlp.forward(&ctx, &inputs, batch)?;
    let same = alone
        .iter()
        .zip(&batched[..D_OUT])
        .all(|(a, b)| a.to_bits() == b.to_bits());
    println!(
        "tier {}: logits[0..4] at batch 1:  {:?}",
        ctx.tier().name,
        &alone[..4]
    );
    println!(
        "tier {}: logits[0..4] at batch {batch}: {:?}",
        ctx.tier().name,
        &batched[..4]
    );
    println!("row 0 bit-identical at batch 1 and batch {batch}: {same}");
    if !same {
        return Err("row 0 differs between batch sizes".into());
    }
    Ok(())
}
