//! `gemm-aot explain` and the runtime's explain print the same: for every tier of the shipped
//! specs, every (policy, op, dtype) it serves and a few it does not, and shapes through every
//! route boundary (and the refusals: n over the tier's widest, dimensions over `i32`), the
//! generator's text (over the catalog it builds from `specs/`) equals the text of the
//! runtime's compiled-in set, which `Context::explain` prints. No device: both are gemm-core's
//! `KernelSet::explain`, one over tables built in memory, one over the generated Rust.
//!
//! The shapes: a fixed grid, every m boundary of any route over that grid's n and k, and, per
//! route, each dimension through its boundaries with the other two at the route's corner.
//! Not the full product of all boundaries: with a tuned route file (hundreds of routes, each
//! at its own n and k) that is millions of queries: a debug build ran it for over half an hour.

use gemm_codegen::pipeline::{template_files, validate_and_catalog};
use gemm_codegen::Templates;
use gemm_runtime::{Dtype, DtypeTriple, Op, Policy};
use gemm_spec::{DimRange, DIM_MAX};
use std::collections::BTreeSet;
use std::path::Path;

fn boundaries(values: &mut BTreeSet<u64>, r: DimRange) {
    values.extend([r.min.saturating_sub(1), r.min, r.min + 1]);
    if let Some(max) = r.max {
        values.extend([max.saturating_sub(1), max, max + 1]);
    }
}

#[test]
fn the_generator_and_the_runtime_explain_alike() {
    let templates = template_files(&Templates::Shipped).unwrap();
    let (catalog, _) = validate_and_catalog(Path::new("../specs"), &[], &templates, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let shipped = gemm_runtime::shipped();
    let from_catalog = gemm_codegen::memory_set::kernel_set(&catalog);
    assert_eq!(catalog.specs.tiers.len(), shipped.tiers().len());
    let mut compared = 0usize;
    let mut refusals = 0usize;
    for tier in &catalog.specs.tiers {
        let id = shipped.tier_by_name(&tier.name).unwrap().id;
        let mut combos: Vec<(Policy, Op, DtypeTriple)> = shipped
            .served(id)
            .into_iter()
            .map(|(p, o, d, _)| (p, o, d))
            .collect();
        assert!(!combos.is_empty(), "{} serves nothing", tier.name);
        // Unserved: an accumulator no route has, a C dtype no route has for the op.
        combos.push((
            Policy::Exact,
            Op::Nn,
            DtypeTriple::new(Dtype::F16, Dtype::Bf16, Dtype::F32),
        ));
        let widest = shipped.max_n(id);
        for (policy, op, dtype) in combos {
            let mut ms = BTreeSet::from([0, 1, 2, 7, 64, 65, 4096, DIM_MAX, DIM_MAX + 1]);
            let mut ns = BTreeSet::from([1, 64, 4095, 4096, DIM_MAX + 1]);
            let ks = BTreeSet::from([0, 1, 255, 256, 257, 4096, DIM_MAX + 1]);
            if widest < DIM_MAX {
                ns.extend([widest, widest + 1]);
            }
            let routes = tier.routes_for(policy, op, dtype);
            for r in &routes {
                boundaries(&mut ms, r.m);
            }
            let mut shapes: BTreeSet<(u64, u64, u64)> = BTreeSet::new();
            for &m in &ms {
                for &n in &ns {
                    shapes.extend(ks.iter().map(|&k| (m, n, k)));
                }
            }
            for r in &routes {
                let corner = (r.m.min.max(1), r.n.min.max(1), r.k.min.max(1));
                let (mut rm, mut rn, mut rk) = Default::default();
                boundaries(&mut rm, r.m);
                boundaries(&mut rn, r.n);
                boundaries(&mut rk, r.k);
                shapes.extend(rm.iter().map(|&m| (m, corner.1, corner.2)));
                shapes.extend(rn.iter().map(|&n| (corner.0, n, corner.2)));
                shapes.extend(rk.iter().map(|&k| (corner.0, corner.1, k)));
            }
            for (m, n, k) in shapes {
                let q = gemm_core::Query {
                    policy,
                    op,
                    dtype,
                    m,
                    n,
                    k,
                    sms: None,
                };
                let generator = gemm_codegen::explain::explain_in(from_catalog, &tier.name, &q)
                    .map_err(|e| e.to_string());
                let runtime = shipped
                    .explain(id, &q)
                    .map(|e| {
                        refusals += e.refusal.is_some() as usize;
                        e.to_string()
                    })
                    .map_err(|e| e.to_string());
                assert_eq!(
                    generator, runtime,
                    "{} {policy:?} {op:?} {dtype:?} m={m} n={n} k={k}",
                    tier.name
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 10_000, "only {compared} queries compared");
    assert!(refusals > 0, "the sweep reached no refusal");
    eprintln!("{compared} queries, {refusals} refused, explained alike");
}
