//! The MLP both example binaries run: `y = relu(x·W1 + b1)·W2 + b2` in bf16 with f32 logits,
//! on the same first row at batch 1 and at batch 37 (shared by examples/mlp, on the runtime's
//! shipped kernels, and examples/downstream, on a kernel set of its own specs).

use gemm_runtime::{bf16, Context, GemmError, GemmRequest, Launch, Policy};

const D_IN: usize = 256;
const D_HIDDEN: usize = 1024;
const D_OUT: usize = 100;

/// Deterministic pseudo-random weights and inputs in [-1, 1).
pub fn values(seed: u64, len: usize) -> Vec<bf16> {
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

    /// Logits `[batch, D_OUT]` for inputs `[batch, D_IN]`, under the context's policy.
    #[allow(dead_code)]
    fn forward(&self, ctx: &Context, x: &[bf16], batch: usize) -> Result<Vec<f32>, GemmError> {
        Ok(self.forward_under(ctx, x, batch, None)?.0)
    }

    /// [`forward`](Self::forward) under `policy` (`None`: the context's), with the two GEMM
    /// launches.
    fn forward_under(
        &self,
        ctx: &Context,
        x: &[bf16],
        batch: usize,
        policy: Option<Policy>,
    ) -> Result<(Vec<f32>, [Launch; 2]), GemmError> {
        let x = ctx.upload(x)?;
        let mut h = ctx.alloc::<bf16>(batch * D_HIDDEN)?;
        let mut layer1 = GemmRequest::linear(
            x.mat(D_IN),
            self.w1.mat(D_HIDDEN),
            Some(self.b1.mat(D_HIDDEN)),
            h.mat_mut(D_HIDDEN),
            (batch, D_HIDDEN, D_IN),
        );
        layer1.policy = policy;
        let first = ctx.gemm(layer1)?;
        // ReLU on the host: the library does GEMMs, not activations.
        let relu: Vec<bf16> = ctx
            .download(&h)?
            .into_iter()
            .map(|v| if v.to_f32() > 0.0 { v } else { bf16::ZERO })
            .collect();
        ctx.write(&mut h, &relu)?;
        let mut y = ctx.alloc::<f32>(batch * D_OUT)?;
        let mut layer2 = GemmRequest::linear(
            h.mat(D_HIDDEN),
            self.w2.mat(D_OUT),
            Some(self.b2.mat(D_OUT)),
            y.mat_mut(D_OUT),
            (batch, D_OUT, D_HIDDEN),
        );
        layer2.policy = policy;
        let second = ctx.gemm(layer2)?;
        Ok((ctx.download(&y)?, [first, second]))
    }
}

/// What a launch ran: kernel name (in the context's kernel set), and whether it was the
/// unaligned kernel.
fn ran(ctx: &Context, l: &Launch) -> String {
    format!(
        "{}{}",
        l.kernel
            .and_then(|id| ctx.kernels().kernel(id))
            .map_or("-", |k| k.name),
        if l.unaligned {
            " (unaligned: TMA cannot take an operand)"
        } else {
            ""
        }
    )
}

/// Runs row 0 alone and in the batch under `policy`; whether its logits are bit-identical.
fn compare(
    ctx: &Context,
    mlp: &Mlp,
    inputs: &[bf16],
    batch: usize,
    policy: Option<Policy>,
) -> Result<bool, GemmError> {
    let (alone, l1) = mlp.forward_under(ctx, &inputs[..D_IN], 1, policy)?;
    let (batched, lb) = mlp.forward_under(ctx, inputs, batch, policy)?;
    let tier = ctx.tier().name;
    let name = l1[0].policy.as_str();
    for (b, launches) in [(1, &l1), (batch, &lb)] {
        println!(
            "tier {tier}, policy {name} (launches report {}, {}): batch {b}: layer 1 {}, layer 2 {}",
            launches[0].policy.as_str(),
            launches[1].policy.as_str(),
            ran(ctx, &launches[0]),
            ran(ctx, &launches[1])
        );
    }
    println!(
        "tier {tier}, policy {name}: logits[0..4] at batch 1:  {:?}",
        &alone[..4]
    );
    println!(
        "tier {tier}, policy {name}: logits[0..4] at batch {batch}: {:?}",
        &batched[..4]
    );
    let same = alone
        .iter()
        .zip(&batched[..D_OUT])
        .all(|(a, b)| a.to_bits() == b.to_bits());
    println!("policy {name}: row 0 bit-identical at batch 1 and batch {batch}: {same}");
    Ok(same)
}

/// Runs the MLP on `ctx` under the exact policy and (where the tier routes it) the
/// tensor-core policy, each named per call; an error when row 0 differs between batch 1 and
/// batch 37.
pub fn run(ctx: &Context) -> Result<(), Box<dyn std::error::Error>> {
    let mlp = Mlp::new(ctx)?;
    let batch = 37;
    let inputs = values(42, batch * D_IN); // row 0 is the request we follow
    let exact = compare(ctx, &mlp, &inputs, batch, Some(Policy::Exact))?;
    // The tensor-core policy, named by each request.
    let bf = gemm_runtime::DtypeTriple::new(
        gemm_runtime::Dtype::Bf16,
        gemm_runtime::Dtype::Bf16,
        gemm_runtime::Dtype::F32,
    );
    let tc_routes = ctx
        .route(
            Policy::TensorCore,
            gemm_runtime::Op::Nn,
            bf,
            1,
            D_HIDDEN as u64,
            D_IN as u64,
        )
        .is_some();
    let tensor_core = if tc_routes {
        Some(compare(
            ctx,
            &mlp,
            &inputs,
            batch,
            Some(Policy::TensorCore),
        )?)
    } else {
        println!(
            "policy tensor-core: skipped: tier {} has no tensor-core route",
            ctx.tier().name
        );
        None
    };
    let tc_word = tensor_core.map_or("skipped".to_string(), |s| s.to_string());
    println!(
        "row 0 bit-identical at batch 1 and batch {batch}: exact {exact}, tensor-core {tc_word}"
    );
    if !exact || tensor_core == Some(false) {
        return Err("row 0 differs between batch sizes".into());
    }
    Ok(())
}
