//! One GEMM call as host data: the request ([`Case`]), its stored operands ([`Data`]), running
//! it on a context ([`run`]) and checking what came back ([`check_reference`]).
//!
//! Operands are stored as the op says (docs/tensor-core.md §2): A is `[m, k]` for nn and nt
//! (`[k, m]` for tn), B is `[k, n]` for nn and tn (`[n, k]` for nt), C is `[m, n]`; every
//! leading dimension is the row length plus `pad`. Values are random in [-1, 1), never zero,
//! rounded to the operand's dtype on the host, so the host holds exactly what the device
//! reads.

use gemm_runtime::reference::{fma_k256, HostGemm};
use gemm_runtime::tuning::TuningError;
use gemm_runtime::{
    bf16, f16, Context, Dtype, Element, GemmError, GemmRequest, Launch, Op, Policy,
};

/// (A and B, C) storage pairs of the tests.
pub mod dtypes {
    use gemm_runtime::Dtype;
    pub const BF16: (Dtype, Dtype) = (Dtype::Bf16, Dtype::Bf16);
    pub const BF16_F32: (Dtype, Dtype) = (Dtype::Bf16, Dtype::F32);
    pub const F16: (Dtype, Dtype) = (Dtype::F16, Dtype::F16);
    pub const F16_F32: (Dtype, Dtype) = (Dtype::F16, Dtype::F32);
    pub const F32: (Dtype, Dtype) = (Dtype::F32, Dtype::F32);
}

/// SplitMix64: small and seedable.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `label`: from `GEMM_TEST_SEED` when set (the same data in a plain run and
    /// a sanitizer run), else from the clock; the seed is printed so a failure can be replayed.
    pub fn for_label(label: &str) -> Rng {
        let base = test_seed();
        let seed = label
            .bytes()
            .fold(base, |h, b| h.rotate_left(5) ^ u64::from(b));
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), never exactly zero.
    pub fn value(&mut self) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        let v = 2.0 * u - 1.0;
        if v == 0.0 {
            0.5
        } else {
            v
        }
    }
}

/// The base seed of this process: `GEMM_TEST_SEED`, else the clock (printed once).
pub fn test_seed() -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(|| {
        let seed = std::env::var("GEMM_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("test data seed {seed} (GEMM_TEST_SEED replays it)");
        seed
    })
}

/// One GEMM request in the GEMM view `C[m, n] = sum_k A(m, k) B(k, n)`.
#[derive(Clone, Debug)]
pub struct Case {
    pub op: Op,
    /// Storage of A and B.
    pub ab: Dtype,
    /// Storage of C (and of the bias).
    pub c: Dtype,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Extra elements in every leading dimension (0: rows packed).
    pub pad: usize,
    /// A's first element lies this many elements into its buffer (1: off 16 bytes, which
    /// TMA and cp.async cannot take, so the route's unaligned kernel runs).
    pub a_offset: usize,
    pub bias: bool,
    /// 0 overwrites C; otherwise `C = fma(beta, C, result)` over C's random old values.
    pub beta: f32,
    pub policy: Policy,
    /// Run this kernel of the context's tier (its entry-point name) instead of the route's:
    /// the tuner's `gemm_on_kernel`, so every candidate of a contract can be compared.
    pub kernel: Option<&'static str>,
}

impl Case {
    /// A packed, aligned case with no bias and beta 0.
    pub fn new(
        policy: Policy,
        op: Op,
        (ab, c): (Dtype, Dtype),
        (m, n, k): (usize, usize, usize),
    ) -> Case {
        Case {
            op,
            ab,
            c,
            m,
            n,
            k,
            pad: 0,
            a_offset: 0,
            bias: false,
            beta: 0.0,
            policy,
            kernel: None,
        }
    }

    /// The same request on kernel `name` of the context's tier instead of the route's.
    pub fn on_kernel(self, name: &'static str) -> Case {
        Case {
            kernel: Some(name),
            ..self
        }
    }

    pub fn pad(self, pad: usize) -> Case {
        Case { pad, ..self }
    }

    pub fn a_offset(self, a_offset: usize) -> Case {
        Case { a_offset, ..self }
    }

    pub fn bias(self) -> Case {
        Case { bias: true, ..self }
    }

    pub fn beta(self, beta: f32) -> Case {
        Case { beta, ..self }
    }

    /// The same request at another m (the stored operands of the larger m serve it).
    pub fn at_m(&self, m: usize) -> Case {
        Case { m, ..self.clone() }
    }

    /// `policy op ab->c mxnxk`, plus what is not the default.
    pub fn label(&self) -> String {
        let mut s = format!(
            "{} {} {}->{} {}x{}x{}",
            self.policy, self.op, self.ab, self.c, self.m, self.n, self.k
        );
        if self.pad != 0 {
            s += &format!(" pad {}", self.pad);
        }
        if self.a_offset != 0 {
            s += &format!(" A+{}", self.a_offset);
        }
        if self.bias {
            s += " bias";
        }
        if self.beta != 0.0 {
            s += &format!(" beta {}", self.beta);
        }
        if let Some(k) = self.kernel {
            s += &format!(" on {k}");
        }
        s
    }

    /// (rows, columns) of A, B and C as stored.
    /// (rows, columns) of A, B and C as the op stores them.
    pub fn stored(&self) -> [(usize, usize); 3] {
        let a = if self.op == Op::Tn {
            (self.k, self.m)
        } else {
            (self.m, self.k)
        };
        let b = if self.op == Op::Nt {
            (self.n, self.k)
        } else {
            (self.k, self.n)
        };
        [a, b, (self.m, self.n)]
    }
}

/// A case's stored operands on the host, as f32 values exact in their dtypes.
#[derive(Clone, Debug)]
pub struct Data {
    /// A's buffer: `a_offset` leading elements, then the rows at `lda`.
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    pub bias: Vec<f32>,
    /// C's old values (read when beta != 0).
    pub c0: Vec<f32>,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
}

fn round_to(dtype: Dtype, v: f32) -> f32 {
    match dtype {
        Dtype::Bf16 => bf16::from_f32(v).to_f32(),
        Dtype::F16 => f16::from_f32(v).to_f32(),
        _ => v,
    }
}

impl Data {
    /// Random operands for `case` (its largest m: smaller m reuse the first rows).
    pub fn new(case: &Case, rng: &mut Rng) -> Data {
        let [(ar, ac), (br, bc), (cr, cc)] = case.stored();
        let (lda, ldb, ldc) = (ac + case.pad, bc + case.pad, cc + case.pad);
        let mut fill = |len: usize, dtype: Dtype| -> Vec<f32> {
            (0..len).map(|_| round_to(dtype, rng.value())).collect()
        };
        let a = fill(case.a_offset + ar.max(1) * lda, case.ab);
        let b = fill(br.max(1) * ldb, case.ab);
        let bias = fill(case.n.max(1), case.c);
        let c0 = fill(cr.max(1) * ldc, case.c);
        Data {
            a,
            b,
            bias,
            c0,
            lda,
            ldb,
            ldc,
        }
    }

    fn a_at(&self, case: &Case, i: usize, p: usize) -> f32 {
        let idx = if case.op == Op::Tn {
            p * self.lda + i
        } else {
            i * self.lda + p
        };
        self.a[case.a_offset + idx]
    }

    fn b_at(&self, case: &Case, p: usize, j: usize) -> f32 {
        self.b[if case.op == Op::Nt {
            j * self.ldb + p
        } else {
            p * self.ldb + j
        }]
    }
}

/// What one run of a case gave.
#[derive(Clone, Debug)]
pub struct Output {
    /// The launch the context made (its kernel id indexes the context's set); `None` for an
    /// output taken from elsewhere (a graph replay).
    pub launch: Option<Launch>,
    /// The kernel's name in the context's set (`-` for none).
    pub kernel: &'static str,
    /// C's bits, `m x n` row by row (f32 bits of the stored value widened exactly).
    pub bits: Vec<u32>,
}

/// Device copies of a case's operands in one context (buffers are a context's own).
pub struct Uploaded {
    a: Buffer,
    b: Buffer,
    bias: Buffer,
    c0: Buffer,
}

enum Buffer {
    F32(gemm_runtime::DeviceBuffer<f32>),
    Bf16(gemm_runtime::DeviceBuffer<bf16>),
    F16(gemm_runtime::DeviceBuffer<f16>),
}

fn upload(ctx: &Context, dtype: Dtype, host: &[f32]) -> Result<Buffer, GemmError> {
    Ok(match dtype {
        Dtype::Bf16 => {
            Buffer::Bf16(ctx.upload(&host.iter().map(|&v| bf16::from_f32(v)).collect::<Vec<_>>())?)
        }
        Dtype::F16 => {
            Buffer::F16(ctx.upload(&host.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>())?)
        }
        _ => Buffer::F32(ctx.upload(host)?),
    })
}

impl Uploaded {
    /// Uploads `data` for `case` into `ctx`.
    pub fn new(ctx: &Context, case: &Case, data: &Data) -> Result<Uploaded, GemmError> {
        Ok(Uploaded {
            a: upload(ctx, case.ab, &data.a)?,
            b: upload(ctx, case.ab, &data.b)?,
            bias: upload(ctx, case.c, &data.bias)?,
            c0: upload(ctx, case.c, &data.c0)?,
        })
    }
}

/// Runs `case` on `ctx` with the operands uploaded there: C starts as C's old values when beta
/// is not 0, as NaN otherwise (so an element no kernel writes shows).
pub fn run(ctx: &Context, case: &Case, data: &Data, up: &Uploaded) -> Result<Output, GemmError> {
    macro_rules! typed {
        ($a:ident, $c:ident, $ta:ty, $tc:ty) => {{
            let (Buffer::$a(a), Buffer::$a(b), Buffer::$c(bias), Buffer::$c(c0)) =
                (&up.a, &up.b, &up.bias, &up.c0)
            else {
                unreachable!("uploaded with the case's dtypes")
            };
            run_typed::<$ta, $tc>(ctx, case, data, (a, b, bias, c0))
        }};
    }
    match (case.ab, case.c) {
        (Dtype::Bf16, Dtype::Bf16) => typed!(Bf16, Bf16, bf16, bf16),
        (Dtype::Bf16, Dtype::F32) => typed!(Bf16, F32, bf16, f32),
        (Dtype::F16, Dtype::F16) => typed!(F16, F16, f16, f16),
        (Dtype::F16, Dtype::F32) => typed!(F16, F32, f16, f32),
        (Dtype::F32, Dtype::F32) => typed!(F32, F32, f32, f32),
        (ab, c) => panic!("no test path for {ab} -> {c}"),
    }
}

type Operands<'a, A, C> = (
    &'a gemm_runtime::DeviceBuffer<A>,
    &'a gemm_runtime::DeviceBuffer<A>,
    &'a gemm_runtime::DeviceBuffer<C>,
    &'a gemm_runtime::DeviceBuffer<C>,
);

fn run_typed<A: Element, C: Element>(
    ctx: &Context,
    case: &Case,
    data: &Data,
    (a, b, bias, c0): Operands<'_, A, C>,
) -> Result<Output, GemmError> {
    let mut c = if case.beta != 0.0 {
        ctx.upload(&ctx.download(c0)?)?
    } else {
        ctx.upload(&vec![C::from_f32(f32::NAN); data.c0.len()])?
    };
    let req = GemmRequest::new(
        case.op,
        (case.m, case.n, case.k),
        a.mat_at(case.a_offset, data.lda),
        b.mat(data.ldb),
        c.mat_mut(data.ldc),
    )
    .with_bias(case.bias.then(|| bias.mat(case.n)))
    .with_beta(case.beta)
    .with_policy(case.policy);
    let launch = match case.kernel {
        None => ctx.gemm(req)?,
        Some(name) => {
            let id = ctx.tier_kernel_named(name).unwrap_or_else(|| {
                panic!("{}: no kernel {name} in the context's tier", case.label())
            });
            ctx.gemm_on_kernel(req, id).map_err(|e| match e {
                TuningError::Gemm(g) => g,
                other => panic!("{}: {name} refused: {other}", case.label()),
            })?
        }
    };
    let host = ctx.download(&c)?;
    let mut bits = Vec::with_capacity(case.m * case.n);
    for i in 0..case.m {
        bits.extend(
            host[i * data.ldc..i * data.ldc + case.n]
                .iter()
                .map(|v| v.to_f32().to_bits()),
        );
    }
    let kernel = launch
        .kernel
        .and_then(|id| ctx.kernels().kernel(id))
        .map_or("-", |k| k.name);
    Ok(Output {
        launch: Some(launch),
        kernel,
        bits,
    })
}

/// The unit roundoff of a stored output type.
fn unit_roundoff(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Bf16 => 2f64.powi(-8),
        Dtype::F16 => 2f64.powi(-11),
        _ => 2f64.powi(-24),
    }
}

/// TF32 as contract tc-tf32-k8 reads an f32 input: the low 13 mantissa bits cleared.
fn tf32(v: f32) -> f32 {
    f32::from_bits(v.to_bits() & 0xffff_e000)
}

/// Checks an output against the contract: the exact policy bit for bit against the CPU model
/// of fma-k256 (every element, or `samples` of them for large cases); the tensor-core policy
/// against float64 of the inputs as the contract reads them (TF32-truncated for f32) within
/// `u_out |ref| + 4 K16 2^-24 S` (S the sum of the magnitudes of the terms: the bound of
/// docs/tensor-core.md §1's f32 chain). Returns a description of the first failure.
pub fn check_reference(
    case: &Case,
    data: &Data,
    out: &Output,
    samples: usize,
) -> Result<(), String> {
    let total = case.m * case.n;
    if total == 0 {
        return Ok(());
    }
    let elems: Vec<(usize, usize)> = if total <= samples {
        (0..total).map(|e| (e / case.n, e % case.n)).collect()
    } else {
        let mut rng = Rng::for_label(&format!("samples {}", case.label()));
        let mut v = vec![(0, 0), (case.m - 1, case.n - 1)];
        v.extend((2..samples).map(|_| {
            let e = (rng.next_u64() % total as u64) as usize;
            (e / case.n, e % case.n)
        }));
        v
    };
    if case.policy == Policy::Exact {
        return check_exact(case, data, out, &elems);
    }
    let widen = |v: f32| -> f64 {
        if case.ab == Dtype::F32 {
            tf32(v) as f64
        } else {
            v as f64
        }
    };
    let k16 = (case.k.div_ceil(16) * 16) as f64;
    let u = unit_roundoff(case.c);
    for &(i, j) in &elems {
        let (mut r, mut s) = (0.0f64, 0.0f64);
        for p in 0..case.k {
            let t = widen(data.a_at(case, i, p)) * widen(data.b_at(case, p, j));
            r += t;
            s += t.abs();
        }
        if case.bias {
            r += data.bias[j] as f64;
            s += (data.bias[j] as f64).abs();
        }
        if case.beta != 0.0 {
            let t = case.beta as f64 * data.c0[i * data.ldc + j] as f64;
            r += t;
            s += t.abs();
        }
        let got = f32::from_bits(out.bits[i * case.n + j]) as f64;
        let bound = u * r.abs() + 4.0 * k16 * 2f64.powi(-24) * s;
        if got.is_nan() || (got - r).abs() > bound {
            return Err(format!(
                "{} ({}): C[{i}, {j}] = {got}, float64 {r}, bound {bound:.3e}",
                case.label(),
                out.kernel
            ));
        }
    }
    Ok(())
}

fn check_exact(
    case: &Case,
    data: &Data,
    out: &Output,
    elems: &[(usize, usize)],
) -> Result<(), String> {
    for &(i, j) in elems {
        let want = model_at(case, data, i, j);
        let got = out.bits[i * case.n + j];
        if got != want {
            return Err(format!(
                "{} ({}): C[{i}, {j}] bits {got:#010x}, the fma-k256 model {want:#010x}",
                case.label(),
                out.kernel
            ));
        }
    }
    Ok(())
}

/// Element (i, j) through the exact CPU model (a 1 x 1 GEMM over row i of A and column j of B),
/// in the case's storage types, as f32 bits.
fn model_at(case: &Case, data: &Data, i: usize, j: usize) -> u32 {
    let a: Vec<f32> = (0..case.k).map(|p| data.a_at(case, i, p)).collect();
    let b: Vec<f32> = (0..case.k).map(|p| data.b_at(case, p, j)).collect();
    let g = HostGemm {
        op: Op::Nn,
        m: 1,
        n: 1,
        k: case.k,
        lda: case.k.max(1),
        ldb: 1,
        ldc: 1,
        beta: case.beta,
    };
    match case.c {
        Dtype::Bf16 => model::<bf16>(case, data, &g, (&a, &b), (i, j)),
        Dtype::F16 => model::<f16>(case, data, &g, (&a, &b), (i, j)),
        _ => model::<f32>(case, data, &g, (&a, &b), (i, j)),
    }
}

fn model<C: Element>(
    case: &Case,
    data: &Data,
    g: &HostGemm,
    (a, b): (&[f32], &[f32]),
    (i, j): (usize, usize),
) -> u32 {
    let bias = [C::from_f32(data.bias[j])];
    let mut c = [C::from_f32(data.c0[i * data.ldc + j])];
    let bias = case.bias.then_some(&bias[..]);
    fn cast<T: Element>(v: &[f32]) -> Vec<T> {
        v.iter().map(|&x| T::from_f32(x)).collect()
    }
    match case.ab {
        Dtype::Bf16 => fma_k256(g, &cast::<bf16>(a), &cast::<bf16>(b), bias, &mut c),
        Dtype::F16 => fma_k256(g, &cast::<f16>(a), &cast::<f16>(b), bias, &mut c),
        _ => fma_k256(g, a, b, bias, &mut c),
    }
    c[0].to_f32().to_bits()
}

/// The first element where two outputs' bits differ, as a message.
pub fn first_difference(case: &Case, want: &Output, got: &Output) -> Option<String> {
    let idx = want.bits.iter().zip(&got.bits).position(|(a, b)| a != b)?;
    let count = want
        .bits
        .iter()
        .zip(&got.bits)
        .filter(|(a, b)| a != b)
        .count();
    Some(format!(
        "{}: {count} of {} elements differ; first C[{}, {}]: {} ({}) against {} ({})",
        case.label(),
        want.bits.len(),
        idx / case.n.max(1),
        idx % case.n.max(1),
        f32::from_bits(got.bits[idx]),
        got.kernel,
        f32::from_bits(want.bits[idx]),
        want.kernel
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(bits: Vec<u32>) -> Output {
        Output {
            launch: None,
            kernel: "test",
            bits,
        }
    }

    fn model_bits(case: &Case, data: &Data) -> Vec<u32> {
        (0..case.m * case.n)
            .map(|e| model_at(case, data, e / case.n, e % case.n))
            .collect()
    }

    #[test]
    fn the_exact_check_takes_the_model_s_bits_and_refuses_one_flipped_bit() {
        for op in [Op::Nn, Op::Nt, Op::Tn] {
            let case = Case::new(Policy::Exact, op, (Dtype::Bf16, Dtype::F32), (3, 5, 300))
                .pad(2)
                .a_offset(1)
                .bias()
                .beta(0.5);
            let data = Data::new(&case, &mut Rng(7));
            let mut bits = model_bits(&case, &data);
            check_reference(&case, &data, &output(bits.clone()), 100).unwrap();
            bits[7] ^= 1;
            let e = check_reference(&case, &data, &output(bits), 100).unwrap_err();
            assert!(e.contains("C[1, 2]"), "{e}");
        }
    }

    #[test]
    fn the_tensor_core_check_takes_float64_within_the_bound_and_refuses_more() {
        let case = Case::new(
            Policy::TensorCore,
            Op::Tn,
            (Dtype::Bf16, Dtype::Bf16),
            (4, 6, 40),
        )
        .bias();
        let data = Data::new(&case, &mut Rng(9));
        let exact: Vec<f64> = (0..case.m * case.n)
            .map(|e| {
                let (i, j) = (e / case.n, e % case.n);
                (0..case.k)
                    .map(|p| data.a_at(&case, i, p) as f64 * data.b_at(&case, p, j) as f64)
                    .sum::<f64>()
                    + data.bias[j] as f64
            })
            .collect();
        let rounded = |v: f64| bf16::from_f32(v as f32).to_f32().to_bits();
        check_reference(
            &case,
            &data,
            &output(exact.iter().map(|&v| rounded(v)).collect()),
            1000,
        )
        .unwrap();
        let off: Vec<u32> = exact
            .iter()
            .enumerate()
            .map(|(e, &v)| rounded(if e == 5 { v + 0.5 } else { v }))
            .collect();
        assert!(check_reference(&case, &data, &output(off), 1000).is_err());
        // NaN (an element nobody wrote) never passes.
        let mut nan: Vec<u32> = exact.iter().map(|&v| rounded(v)).collect();
        nan[0] = f32::NAN.to_bits();
        assert!(check_reference(&case, &data, &output(nan), 1000).is_err());
    }

    #[test]
    fn stored_operands_follow_the_op_and_values_are_exact_in_their_dtype() {
        let case = Case::new(
            Policy::TensorCore,
            Op::Nt,
            (Dtype::F16, Dtype::F32),
            (3, 4, 5),
        )
        .pad(1);
        let data = Data::new(&case, &mut Rng(3));
        assert_eq!((data.lda, data.ldb, data.ldc), (6, 6, 5));
        assert_eq!(data.a.len(), 3 * 6);
        assert_eq!(data.b.len(), 4 * 6, "nt stores B as [n, k]");
        assert!(data
            .a
            .iter()
            .all(|&v| f16::from_f32(v).to_f32() == v && v != 0.0));
        assert_eq!(data.b_at(&case, 2, 3), data.b[3 * 6 + 2]);
        assert_eq!(case.label(), "tensor-core nt f16->f32 3x4x5 pad 1");
    }
}
