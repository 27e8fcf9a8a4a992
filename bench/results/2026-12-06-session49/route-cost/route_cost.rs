//! Host time of the planner's pieces on the build machine (no GPU): the route of a call, the
//! scan the planner made for `max_n` on every call before session 49 (every kernel of the
//! tier, the narrowest one-block-a-tile kernel's n), and `max_n` as cached now. Run as an
//! example of the runtime crate (copied to runtime/examples/, `cargo run --release -p
//! gemm-runtime --example route_cost`), then removed.
use gemm_runtime::{Dtype, DtypeTriple, Op, Policy};
use std::time::Instant;

fn ns(mut f: impl FnMut()) -> f64 {
    let n = 200_000;
    for _ in 0..1000 {
        f();
    }
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() * 1e9 / n as f64
}

fn main() {
    let set = gemm_runtime::shipped();
    let tier = set.tier_by_name("sm90a").unwrap();
    let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
    let scan = ns(|| {
        let widest = set
            .tier_kernels(std::hint::black_box(tier.id))
            .iter()
            .filter(|k| k.grid == gemm_runtime::GridKind::Tiles)
            .map(|k| 65535 * k.tile.n as u64)
            .min();
        std::hint::black_box(widest);
    });
    let cached = ns(|| {
        std::hint::black_box(set.max_n(std::hint::black_box(tier.id)));
    });
    println!("sm90a: {} kernels", set.tier_kernels(tier.id).len());
    println!("the scan for max_n (before): {scan:.0} ns a call");
    println!("max_n cached (now):          {cached:.0} ns a call");
    for (m, n, k) in [(1u64, 64u64, 64u64), (1, 4096, 4096), (1024, 4096, 4096), (64, 1024, 14336)] {
        let route = ns(|| {
            let r = set.route(tier.id, Policy::TensorCore, Op::Nn, bf16, std::hint::black_box(m), n, k);
            std::hint::black_box(r.ok());
        });
        println!("route {m}x{n}x{k} (cached max_n included): {route:.0} ns");
    }
}
