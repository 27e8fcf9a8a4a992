//! The generated tables agree with the specs they came from: the dispatch `match` picks the
//! same route as the spec model's first-match evaluator at every route boundary, ids are
//! consistent, cubins are present and loadable-looking, and tiers serve the right devices.

use gemm_runtime::generated::{GemmArgs, TcGemmArgs};
use gemm_runtime::*;
use std::path::Path;

fn specs() -> gemm_spec::SpecSet {
    // Tests run from the crate folder; the shipped specs sit beside it.
    gemm_codegen::pipeline::load_specs(Path::new("../specs")).expect("shipped specs validate")
}

fn probe_values(ranges: impl Iterator<Item = gemm_spec::DimRange>) -> Vec<u64> {
    let mut v = vec![0, 1, 2, 7, 64, 65, 4096, gemm_spec::DIM_MAX];
    for r in ranges {
        v.extend([r.min.saturating_sub(1), r.min, r.min + 1]);
        if let Some(max) = r.max {
            v.extend([max.saturating_sub(1), max, max + 1]);
        }
    }
    v.sort();
    v.dedup();
    v
}

#[test]
fn dispatch_matches_the_spec_evaluator_at_every_boundary() {
    let specs = specs();
    assert_eq!(specs.tiers.len(), TIERS.len());
    let mut checked = 0;
    for (ti, tier) in specs.tiers.iter().enumerate() {
        assert_eq!(TIERS[ti].name, tier.name);
        for (policy, op, dtype) in tier.served() {
            let routes = tier.routes_for(policy, op, dtype);
            let ms = probe_values(routes.iter().map(|r| r.m));
            let ns = probe_values(routes.iter().map(|r| r.n));
            let ks = probe_values(routes.iter().map(|r| r.k));
            for &m in &ms {
                for &n in &ns {
                    for &k in &ks {
                        let want = tier.select(policy, op, dtype, m, n, k).unwrap();
                        let hit = dispatch(TierId(ti as u16), policy, op, dtype, m, n, k)
                            .expect("served combination dispatches");
                        let kinfo = kernel(hit.kernel).unwrap();
                        assert_eq!(hit.rule as u32, want.rule);
                        assert_eq!(kinfo.family, want.family);
                        assert_eq!(kinfo.tile.name, want.tile);
                        assert_eq!((kinfo.op, kinfo.dtype), (op, dtype));
                        assert_eq!(kinfo.tier, TierId(ti as u16));
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} probes");
}

#[test]
fn unserved_combinations_do_not_dispatch() {
    // Every (policy, op, dtype) a tier's routes do not name gives None, at any size.
    let specs = specs();
    let mut unserved = 0;
    for (ti, tier) in specs.tiers.iter().enumerate() {
        let served = tier.served();
        for policy in Policy::ALL {
            for op in Op::ALL {
                for ab in Dtype::ALL {
                    for c in Dtype::ALL {
                        for acc in Dtype::ALL {
                            let dtype = DtypeTriple::new(ab, c, acc);
                            if served.contains(&(policy, op, dtype)) {
                                continue;
                            }
                            unserved += 1;
                            for (m, n, k) in [(8, 8, 8), (1, 4096, 4096), (4096, 4096, 4096)] {
                                assert_eq!(
                                    dispatch(TierId(ti as u16), policy, op, dtype, m, n, k),
                                    None,
                                    "{} {policy:?} {op:?} {dtype}",
                                    tier.name
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(unserved > 0);
    let f32 = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
    let beyond = TierId(u16::try_from(TIERS.len()).unwrap());
    assert_eq!(dispatch(beyond, Policy::Exact, Op::Nn, f32, 8, 8, 8), None);
    assert_eq!(
        dispatch(TierId(u16::MAX), Policy::Exact, Op::Nn, f32, 8, 8, 8),
        None
    );
}

#[test]
fn ids_and_ranges_are_consistent() {
    for (i, k) in KERNELS.iter().enumerate() {
        assert_eq!(k.id.0 as usize, i);
        let t = &TIERS[k.tier.0 as usize];
        assert!(
            t.kernels.contains(&k.id.0),
            "{} outside its tier's range",
            k.name
        );
        assert!(k
            .name
            .starts_with(&format!("gemm_{}_{}_{}_", t.name, k.family, k.op)));
        assert!(CONTRACTS.iter().any(|c| c.name == k.contract));
        assert!(k.shared_bytes <= t.max_shared_bytes);
    }
    assert_eq!(RESOURCES.len(), KERNELS.len());
}

/// A kernel needs aligned operands exactly when its template's manifest says it copies A and B
/// in 16-byte cp.async chunks; every route to one names an unaligned kernel of its contract
/// that takes any alignment.
#[test]
fn cp_async_kernels_need_aligned_operands_and_their_routes_have_an_unaligned_kernel() {
    let s = specs();
    let mut aligned = 0;
    for k in KERNELS.iter() {
        let kind = &s.families[k.family].kind;
        assert_eq!(k.operands, kind.operands, "{}", k.name);
        if k.operands.alignment() == 0 {
            continue;
        }
        aligned += 1;
        let t = &TIERS[k.tier.0 as usize];
        for m in [1u64, 16, 17, 64, 300, 4096] {
            let Some(hit) = dispatch(t.id, k.policy, k.op, k.dtype, m, 4096, 4096) else {
                continue;
            };
            if hit.kernel != k.id {
                continue;
            }
            let u = hit.unaligned.and_then(kernel).expect("an unaligned kernel");
            assert_eq!(u.operands, OperandPath::Loads, "{}", u.name);
            assert!(u.tensor_maps.is_empty(), "{}", u.name);
            assert_eq!(u.contract, k.contract);
        }
    }
    // The shipped portable tiers route the tensor-core policy to cp.async kernels.
    assert!(aligned > 0);
}

/// Each kernel's template and tile parameters are its family's kind's, with the spec tile's
/// values in the manifest's order (defaults filled in), and its launch shape is what the
/// manifest derives.
#[test]
fn tile_params_follow_the_family_kind() {
    let s = specs();
    for k in KERNELS.iter() {
        let family = &s.families[k.family];
        assert_eq!(k.template, family.kind.template, "{}", k.name);
        let tier = s
            .tiers
            .iter()
            .find(|t| t.name == TIERS[k.tier.0 as usize].name)
            .unwrap();
        let spec_tile = tier
            .tiles
            .iter()
            .find(|x| x.family == k.family && x.name == k.tile.name)
            .unwrap_or_else(|| panic!("{}: no spec tile {}", k.name, k.tile.name));
        let params: Vec<(&str, u32)> = spec_tile
            .params
            .iter()
            .map(|(n, v)| (n.as_str(), *v))
            .collect();
        assert_eq!(k.tile.params, params.as_slice(), "{}", k.name);
        let names: Vec<&str> = family.kind.params.iter().map(|p| p.name.as_str()).collect();
        let table_names: Vec<&str> = k.tile.params.iter().map(|(n, _)| *n).collect();
        assert_eq!(table_names, names, "{}", k.name);
        let d = s.derive(tier, spec_tile, k.op, k.dtype).unwrap().unwrap();
        assert_eq!(k.block_threads, d.threads, "{}", k.name);
        assert_eq!(k.shared_bytes as u64, d.shared_bytes, "{}", k.name);
        assert_eq!(k.cluster, (d.cluster, 1, d.split_k), "{}", k.name);
        assert_eq!(k.max_k, d.max_k, "{}", k.name);
        assert_eq!(k.min_blocks, d.min_blocks.unwrap_or(0), "{}", k.name);
        assert_eq!(k.grid, family.kind.grid, "{}", k.name);
    }
}

#[test]
fn every_tier_builds_the_half_fallback_conversions() {
    for (i, c) in CONVERSIONS.iter().enumerate() {
        assert_eq!(c.id.0 as usize, i);
        assert!(TIERS[c.tier.0 as usize].conversions.contains(&c.id.0));
        match c.kind {
            // A row kernel names its tree; its pair is its op's input and output types.
            ConversionKind::Row(_) => {
                assert!(c.contract.starts_with("row-t"), "{}", c.name);
                assert!(c.to == c.from || c.to == Dtype::F32, "{}", c.name);
            }
            // A transposing copy moves a type to itself.
            ConversionKind::Transpose => {
                assert_eq!(c.from, c.to, "{}", c.name);
                assert_eq!(c.contract, "", "{}", c.name);
            }
            kind => {
                assert_eq!(ConversionKind::of(c.from, c.to), Some(kind), "{}", c.name);
                assert_eq!(c.contract, "", "{}", c.name);
            }
        }
    }
    for t in TIERS.iter() {
        for half in [Dtype::Bf16, Dtype::F16] {
            for (from, to) in [(half, Dtype::F32), (Dtype::F32, half)] {
                let c = conversion_for(t.id, from, to)
                    .unwrap_or_else(|| panic!("{} has no {from} -> {to} conversion", t.name));
                assert_eq!(c.tier, t.id);
            }
        }
        if !CUBINS_PRESENT {
            eprintln!(
                "SKIPPED: built with GEMM_AOT_NO_CUBINS, no {} cubin to search",
                t.name
            );
        } else {
            for id in t.conversions.clone() {
                let c = &CONVERSIONS[id as usize];
                let needle = c.name.as_bytes();
                let cubin = t.modules[c.module as usize].cubin;
                assert!(
                    cubin.windows(needle.len()).any(|w| w == needle),
                    "{} missing from the {} cubin",
                    CONVERSIONS[id as usize].name,
                    t.name
                );
            }
        }
    }
}

/// Each kernel's contract and the inputs it is defined for come from the specs, and the half
/// fallback's test (`contract_takes`) follows them: a half request may widen into an f32
/// kernel only when that kernel's contract lists the half dtype.
#[test]
fn contracts_carry_their_inputs_and_gate_the_half_fallback() {
    let specs = specs();
    assert_eq!(CONTRACTS.len(), specs.contracts.len());
    for c in CONTRACTS.iter() {
        let spec = &specs.contracts[c.name];
        assert_eq!(c.inputs, spec.inputs.as_slice(), "contract {}", c.name);
    }
    let mut refused = 0;
    for k in KERNELS.iter() {
        let spec = &specs.contracts[k.contract];
        for d in Dtype::ALL {
            assert_eq!(
                contract_takes(k.id, d),
                spec.inputs.contains(&d),
                "{} at {d}",
                k.name
            );
            refused += usize::from(!spec.inputs.contains(&d));
        }
        assert!(contract_takes(k.id, k.dtype.ab), "{}", k.name);
    }
    eprintln!("{refused} (kernel, input dtype) pairs the half fallback may not widen into");
}

#[test]
fn cubins_are_embedded_elf_with_every_kernel_and_no_spills() {
    if !CUBINS_PRESENT {
        eprintln!("SKIPPED: built with GEMM_AOT_NO_CUBINS, no cubins to check");
        return;
    }
    for t in TIERS.iter() {
        for m in t.modules {
            assert_eq!(
                &m.cubin[..4],
                b"\x7fELF",
                "tier {} cubin {} is not ELF",
                t.name,
                m.name
            );
        }
        for id in t.kernels.clone() {
            let k = kernel(KernelId(id)).unwrap();
            let needle = k.name.as_bytes();
            let cubin = t.modules[k.module as usize].cubin;
            assert_eq!(t.modules[k.module as usize].name, k.family);
            assert!(
                cubin.windows(needle.len()).any(|w| w == needle),
                "{} missing from the {} cubin",
                k.name,
                t.name
            );
            let r = resources(k.id).unwrap();
            assert!(r.registers > 0, "{} has no register count", k.name);
            assert_eq!(r.spill_bytes, 0, "{} spills", k.name);
        }
    }
}

/// The README's rule, written out on its own from the tiers' capabilities: an arch-specific
/// tier serves exactly its capability; otherwise the portable tier of the device's major
/// version with the highest minor not above the device's.
fn expected_tier(tiers: &[gemm_spec::Tier], (major, minor): (u32, u32)) -> Option<&str> {
    let exact = tiers
        .iter()
        .filter(|t| t.arch_specific && t.cc == (major, minor))
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>();
    assert!(exact.len() <= 1, "{major}.{minor} claimed by {exact:?}");
    if let Some(t) = exact.first() {
        return Some(t);
    }
    // The portable tiers of the device's major, highest minor first: the first one not above
    // the device's minor serves it.
    let mut portable: Vec<&gemm_spec::Tier> = tiers
        .iter()
        .filter(|t| !t.arch_specific && t.cc.0 == major)
        .collect();
    portable.sort_by_key(|t| std::cmp::Reverse(t.cc.1));
    portable
        .into_iter()
        .find(|t| t.cc.1 <= minor)
        .map(|t| t.name.as_str())
}

#[test]
fn devices_map_to_tiers() {
    let name = |cc| tier_for_capability(cc).map(|t| t.name);
    let specs = specs();
    // Every capability a tier names, and every minor around it, through the generated match.
    let mut probes: Vec<(u32, u32)> = (0..=15)
        .flat_map(|major| (0..=9).map(move |minor| (major, minor)))
        .collect();
    for t in &specs.tiers {
        probes.extend([(t.cc.0, t.cc.1 + 1), (t.cc.0, t.cc.1 + 10), (t.cc.0 + 1, 0)]);
        probes.extend(t.cc.1.checked_sub(1).map(|m| (t.cc.0, m)));
    }
    probes.extend([(0, 0), (u32::MAX, u32::MAX)]);
    for &cc in &probes {
        assert_eq!(
            name(cc),
            expected_tier(&specs.tiers, cc),
            "capability {}.{}",
            cc.0,
            cc.1
        );
        // The spec model agrees as well.
        assert_eq!(
            name(cc),
            specs.tier_for_capability(cc).map(|t| t.name.as_str()),
            "capability {}.{}",
            cc.0,
            cc.1
        );
    }
    // Each tier serves its own capability; an arch-specific one nothing else of its own.
    for t in &specs.tiers {
        assert_eq!(name(t.cc), Some(t.name.as_str()));
        if t.arch_specific {
            let next = (t.cc.0, t.cc.1 + 1);
            assert_ne!(
                name(next),
                Some(t.name.as_str()),
                "{} is arch-specific",
                t.name
            );
        }
    }
}

#[test]
fn abi_bytes_follow_the_declared_layout() {
    let args = GemmArgs {
        a: 0x1111,
        b: 0x2222,
        bias: 0,
        c: 0x3333,
        m: 7,
        n: 9,
        k: 11,
        lda: 11,
        ldb: 9,
        ldc: 9,
        beta: 1.0,
        flags: 1,
    };
    let bytes = args.to_bytes();
    assert_eq!(bytes.len(), GemmArgs::SIZE);
    assert_eq!(
        u64::from_ne_bytes(bytes[24..32].try_into().unwrap()),
        0x3333
    );
    assert_eq!(i32::from_ne_bytes(bytes[32..36].try_into().unwrap()), 7);
    assert_eq!(f32::from_ne_bytes(bytes[56..60].try_into().unwrap()), 1.0);
    let info = ABIS.iter().find(|a| a.name == "GemmArgs").unwrap();
    let ptrs: Vec<&str> = info.pointer_fields().map(|p| p.0).collect();
    assert_eq!(ptrs, ["a", "b", "bias", "c"]);
    assert_eq!(info.size as usize, GemmArgs::SIZE);
}

#[test]
fn the_widest_n_a_tier_takes_is_the_same_for_every_batch_size() {
    // Routes pick kernels of other tile widths for other m; n above what the narrowest
    // one-block-a-tile kernel can put on grid.y (65535 tiles) is refused for every m alike.
    let specs = specs();
    for (i, tier) in specs.tiers.iter().enumerate() {
        let want = tier
            .tiles
            .iter()
            .filter(|t| specs.families[&t.family].grid() == gemm_spec::GridKind::Tiles)
            .map(|t| 65535 * t.n as u64)
            .min()
            .unwrap_or(u64::MAX);
        assert_eq!(max_n(TierId(i as u16)), want, "{}", tier.name);
        // A 16-column decode tile (sm90a's dec16) bounds a tier at 1,048,560 columns: four
        // times the widest vocabulary of the shape list (256000).
        assert!(want >= 65535 * 16, "{}: {want}", tier.name);
    }
    assert_eq!(max_n(TierId(u16::MAX)), 0);
}

/// Each argument struct's bind, as the set carries it, is the struct's own generated bind, the
/// flag bits set from what is present; and the set's check reads every field back.
#[test]
fn each_abi_binds_its_own_struct_and_sets_its_flags_from_the_sources() {
    let mut s = ArgSources {
        a: 0x1000,
        b: 0x2000,
        c: 0x3000,
        m: 7,
        n: 9,
        k: 11,
        ldc: 9,
        beta: 0.5,
        ..ArgSources::default()
    };
    let info = |name: &str| ABIS.iter().find(|a| a.name == name).unwrap();
    let tc = (info("TcGemmArgs").bind)(&s);
    assert_eq!(tc.bytes(), TcGemmArgs::bind(&s).to_bytes().as_slice());
    assert_eq!(info("TcGemmArgs").tensor_map_fields().count(), 3);
    assert_eq!(TcGemmArgs::bind(&s).flags, 0);
    s.bias = 0x4000;
    s.c_map = Some(TensorMap([7; 128]));
    assert_eq!(
        TcGemmArgs::bind(&s).flags,
        TcGemmArgs::FLAG_BIAS | TcGemmArgs::FLAG_C_TENSOR_MAP
    );
    assert_eq!(TcGemmArgs::bind(&s).c_map, TensorMap([7; 128]));
    let g = (info("GemmArgs").bind)(&s);
    assert_eq!(g.bytes(), GemmArgs::bind(&s).to_bytes().as_slice());
    assert_eq!(GemmArgs::bind(&s).flags, GemmArgs::FLAG_BIAS);
    for abi in ABIS.iter() {
        abi.check()
            .unwrap_or_else(|(f, why)| panic!("{}.{}: {why}", abi.name, f.name));
    }
}

#[test]
fn every_tier_builds_the_row_kernels_of_the_specs() {
    let s = specs();
    let rows: Vec<_> = s
        .conversions
        .values()
        .filter(|c| c.row_op.is_some())
        .collect();
    assert!(!rows.is_empty(), "the shipped specs define no row kernels");
    for t in TIERS.iter() {
        for c in &rows {
            let op = c.row_op.unwrap();
            for &(from, to) in &c.variants {
                // One kernel a warp-path length of the spec, each reached by rows of that length.
                for &len in &c.warp_cols {
                    let k = shipped()
                        .row_kernel(t.id, op, from, to, u64::from(len))
                        .unwrap_or_else(|| panic!("{} has no {op} {from} -> {to}", t.name));
                    assert_eq!(k.warp_cols, len, "{}", k.name);
                    assert_eq!(k.contract, c.contract, "{}", k.name);
                    assert_eq!(k.block_threads, c.threads, "{}", k.name);
                    assert_eq!(k.kind, ConversionKind::Row(op), "{}", k.name);
                }
            }
        }
        // The half fallback's lookup never lands on a row kernel.
        for (from, to) in [(Dtype::F32, Dtype::F32), (Dtype::Bf16, Dtype::F32)] {
            if let Some(c) = conversion_for(t.id, from, to) {
                assert!(!matches!(c.kind, ConversionKind::Row(_)), "{}", c.name);
            }
        }
    }
}

/// Every route's `wave_fit` kernels in the generated tables are the spec's, of the route's
/// contract, op and dtype, with a cost; on 132 SMs (an H100 SXM, an H200) the wave model runs
/// one of them instead of the route's kernel at some shape of each tier that names any, and
/// what it runs is always one of them or the route's.
#[test]
fn wave_fit_kernels_share_the_routes_contract_and_the_model_picks_among_them() {
    let specs = specs();
    let set = shipped();
    let mut routes_with_fit = 0;
    for (ti, tier) in specs.tiers.iter().enumerate() {
        let mut switched = 0;
        for r in tier.routes.iter().filter(|r| !r.wave_fit.is_empty()) {
            routes_with_fit += 1;
            let info = ROUTES
                .iter()
                .find(|i| {
                    i.tier == TierId(ti as u16)
                        && u32::from(i.rule) == r.rule
                        && (i.op, i.dtype) == (r.op, r.dtype)
                })
                .expect("the route is in the tables");
            let own = kernel(info.kernel).unwrap();
            let names: Vec<String> = info
                .wave_fit
                .iter()
                .map(|&id| {
                    let k = kernel(id).unwrap();
                    assert_eq!(
                        (k.contract, k.policy, k.op, k.dtype),
                        (own.contract, own.policy, own.op, own.dtype),
                        "route {} ({}): {}",
                        r.rule,
                        r.location,
                        k.name
                    );
                    assert!(k.tile_ps_per_k > 0, "{} has no cost", k.name);
                    format!("{}.{}", k.family, k.tile.name)
                })
                .collect();
            let want: Vec<String> = r.wave_fit.iter().map(|w| w.to_string()).collect();
            assert_eq!(names, want, "route {} ({})", r.rule, r.location);
            // Probe the route's own box: m from its bounds, n and k inside its own.
            let lo = |d: gemm_spec::DimRange| d.min.max(1);
            let hi = |d: gemm_spec::DimRange, cap: u64| d.max.unwrap_or(cap).min(cap);
            for m in [lo(r.m), 300, 700, 1000, 1500, 3000, 4096] {
                if !r.m.contains(m) {
                    continue;
                }
                for n in [lo(r.n), 1000, 2560, 3000, 4672, 5120, hi(r.n, 20000)] {
                    let k = hi(r.k, 4096).max(lo(r.k));
                    if !r.n.contains(n) || !r.k.contains(k) {
                        continue;
                    }
                    let routed = set
                        .route(TierId(ti as u16), r.policy, r.op, r.dtype, m, n, k)
                        .unwrap();
                    if routed.hit.rule as u32 != r.rule {
                        continue; // an earlier route (a tuned (n, k)) takes it
                    }
                    let fitted = routed.fit_waves(set, m, n, k, |_| Some(132));
                    assert!(
                        std::ptr::eq(fitted.kernel, own)
                            || info.wave_fit.contains(&fitted.kernel.id),
                        "{m} x {n} x {k}: {}",
                        fitted.kernel.name
                    );
                    // The rule: the fastest modeled candidate, where it beats the route's own
                    // by the margin; else the route's own.
                    let t = |x: &KernelInfo| gemm_runtime::wave_time(x, m, n, k, 132);
                    let own_t = t(own).unwrap();
                    let best = info
                        .wave_fit
                        .iter()
                        .filter_map(|&id| t(kernel(id).unwrap()))
                        .min()
                        .unwrap();
                    let margin = 100 - gemm_runtime::WAVE_FIT_MARGIN_PERCENT;
                    if !std::ptr::eq(fitted.kernel, own) {
                        switched += 1;
                        assert_eq!(t(fitted.kernel), Some(best), "{m} x {n} x {k}");
                        assert!(best * 100 <= own_t * margin, "{m} x {n} x {k}");
                    } else {
                        assert!(
                            best * 100 > own_t * margin,
                            "{m} x {n} x {k}: kept the route's"
                        );
                    }
                }
            }
        }
        if tier.routes.iter().any(|r| !r.wave_fit.is_empty()) {
            assert!(
                switched > 0,
                "tier {}: the wave model never left a route's kernel",
                tier.name
            );
        }
    }
    eprintln!("{routes_with_fit} expanded routes name wave_fit kernels");
}
