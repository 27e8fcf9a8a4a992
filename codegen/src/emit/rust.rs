//! Generated Rust, built with `quote!` and formatted with prettyplease:
//! - `abi.rs`: `#[repr(C)]` argument structs with cudarc `DeviceRepr` and `const` layout asserts;
//! - `kernels.rs`: the tier, contract, kernel and conversion tables;
//! - `dispatch.rs`: the route tables as one `match`;
//! - `resources.rs`: what ptxas reported for each kernel.
//!
//! The code names types the including crate brings into scope (`Op`, `Policy`, `Dtype`,
//! `DtypeTriple`, `TierId`, `KernelId`, `TierInfo`, `ModuleInfo`, `KernelInfo`, `TileShape`,
//! `TileParams`, `GridKind`, `TensorMapPlan`, `Operand`, `RouteHit`, `KernelResources`,
//! `ContractInfo`, `ConversionId`, `ConversionInfo`, `ConversionKind`), the crate-root types
//! `crate::TensorMap` and `crate::ArgSources` (in `abi.rs`), and a `cubin!(tier, module)`
//! macro that yields one compile unit's cubin bytes, so the files do not depend on where they
//! are written.

use super::{Instrumentation, Provenance};
use crate::compile::ptxas::KernelResources;
use crate::plan::{Plan, PlannedConversion, PlannedKernel};
use gemm_spec::{
    AbiField, ConversionKind, Dtype, DtypeTriple, FieldType, GridKind, MapOperand, Op, Policy,
    SourceType, SpecSet, TileParams,
};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

/// An integer literal without a type suffix (`64`, not `64u32`), for readable output.
fn lit(v: impl Into<u64>) -> Literal {
    Literal::u64_unsuffixed(v.into())
}

/// Spec text as a rustdoc line: brackets escaped so `C[m, n]` is not read as a link.
fn doc_text(s: &str) -> String {
    format!(" {}", s.replace('[', "\\[").replace(']', "\\]"))
}

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

pub(crate) fn format_file(prov: &Provenance, tokens: TokenStream) -> String {
    // The tokens come from quote! and always parse; should they not, the unformatted text
    // still compiles or fails with rustc's own message.
    let body = match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => tokens.to_string(),
    };
    format!("{}{}", prov.header_line(), body)
}

fn op_tokens(op: Op) -> TokenStream {
    match op {
        Op::Nn => quote!(Op::Nn),
        Op::Tn => quote!(Op::Tn),
        Op::Nt => quote!(Op::Nt),
    }
}

fn policy_tokens(p: Policy) -> TokenStream {
    match p {
        Policy::Exact => quote!(Policy::Exact),
        Policy::TensorCore => quote!(Policy::TensorCore),
    }
}

fn dtype_tokens(d: Dtype) -> TokenStream {
    match d {
        Dtype::F32 => quote!(Dtype::F32),
        Dtype::Bf16 => quote!(Dtype::Bf16),
        Dtype::F16 => quote!(Dtype::F16),
    }
}

fn triple_tokens(t: DtypeTriple) -> TokenStream {
    let (ab, c, acc) = (dtype_tokens(t.ab), dtype_tokens(t.c), dtype_tokens(t.acc));
    quote!(DtypeTriple::new(#ab, #c, #acc))
}

fn field_rust_type(ty: FieldType) -> TokenStream {
    match ty {
        FieldType::ConstPtr | FieldType::MutPtr | FieldType::U64 => quote!(u64),
        FieldType::I32 => quote!(i32),
        FieldType::U32 => quote!(u32),
        FieldType::I64 => quote!(i64),
        FieldType::F32 => quote!(f32),
        FieldType::TensorMap => quote!(crate::TensorMap),
    }
}

fn operand_tokens(o: MapOperand) -> TokenStream {
    match o {
        MapOperand::A => quote!(Operand::A),
        MapOperand::B => quote!(Operand::B),
        MapOperand::C => quote!(Operand::C),
    }
}

/// The value of a field in `bind`: its source's `ArgSources` field, widened where the field is
/// wider (validation admits only these pairs).
fn bind_value(f: &AbiField) -> TokenStream {
    let src = ident(f.bind.field());
    match (f.bind.ty(), f.ty) {
        (SourceType::I32, FieldType::I64) => quote!(i64::from(s.#src)),
        (SourceType::U32, FieldType::U64) => quote!(u64::from(s.#src)),
        _ => quote!(s.#src),
    }
}

/// `abi.rs`: one struct per ABI, layout asserted at compile time.
pub fn abi(specs: &SpecSet, prov: &Provenance) -> String {
    let mut items = TokenStream::new();
    for abi in specs.abis.values() {
        let name = ident(&abi.name);
        let doc = doc_text(&abi.doc);
        let fields = abi.fields.iter().map(|f| {
            let fname = ident(&f.name);
            let ty = field_rust_type(f.ty);
            let doc = if f.ty.is_pointer() {
                doc_text(&format!("{} (device address)", f.doc))
            } else {
                doc_text(&f.doc)
            };
            quote! { #[doc = #doc] pub #fname: #ty, }
        });
        let size = lit(abi.size);
        let align = lit(abi.align);
        let offsets = abi.fields.iter().map(|f| {
            let fname = ident(&f.name);
            let off = lit(f.offset);
            quote! { assert!(core::mem::offset_of!(#name, #fname) == #off); }
        });
        let ptrs = abi.fields.iter().filter(|f| f.ty.is_pointer()).map(|f| {
            let n = &f.name;
            let off = lit(f.offset);
            quote! { (#n, #off), }
        });
        let writes = abi.fields.iter().map(|f| {
            let fname = ident(&f.name);
            let (lo, hi) = (lit(f.offset), lit(f.offset + f.ty.size()));
            if f.ty == FieldType::TensorMap {
                quote! { bytes[#lo..#hi].copy_from_slice(&self.#fname.0); }
            } else {
                quote! { bytes[#lo..#hi].copy_from_slice(&self.#fname.to_ne_bytes()); }
            }
        });
        let maps = abi.fields.iter().filter_map(|f| {
            let operand = operand_tokens(f.bind.map_operand()?);
            let n = &f.name;
            let off = lit(f.offset);
            Some(quote! { (#n, #off, #operand), })
        });
        let binds = abi.fields.iter().map(|f| {
            let fname = ident(&f.name);
            let value = bind_value(f);
            quote! { #fname: #value, }
        });
        items.extend(quote! {
            #[doc = #doc]
            #[repr(C)]
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            pub struct #name { #(#fields)* }

            // SAFETY: plain-old-data with the C layout asserted below and in gemm_abi.h.
            unsafe impl cudarc::driver::DeviceRepr for #name {}

            const _: () = {
                assert!(core::mem::size_of::<#name>() == #size);
                assert!(core::mem::align_of::<#name>() == #align);
                #(#offsets)*
            };

            impl #name {
                /// Size in bytes, equal on the CUDA side.
                pub const SIZE: usize = #size;
                /// (field, byte offset) of every device-pointer field.
                pub const POINTER_FIELDS: &'static [(&'static str, usize)] = &[#(#ptrs)*];
                /// (field, byte offset, operand) of every tensor-map field.
                pub const TENSOR_MAP_FIELDS: &'static [(&'static str, usize, Operand)] = &[#(#maps)*];

                /// The struct filled from the launch's sources, each field from the source its
                /// spec `bind` names.
                pub fn bind(s: &crate::ArgSources) -> Self {
                    Self { #(#binds)* }
                }

                /// The struct's bytes exactly as the kernel receives them (padding zeroed).
                pub fn to_bytes(&self) -> [u8; #size] {
                    let mut bytes = [0u8; #size];
                    #(#writes)*
                    bytes
                }
            }
        });
    }
    // One generated dispatcher from an ABI's name to its bound bytes, so the runtime needs no
    // case per ABI struct.
    let arms = specs.abis.values().map(|abi| {
        let name = ident(&abi.name);
        let lit_name = abi.name.as_str();
        quote! {
            #lit_name => Some(BoundArgs {
                bytes: #name::bind(s).to_bytes().to_vec(),
                pointer_fields: #name::POINTER_FIELDS,
                tensor_map_fields: #name::TENSOR_MAP_FIELDS,
            }),
        }
    });
    items.extend(quote! {
        /// The argument struct named `abi` filled from `s` (its generated `bind`), as the bytes
        /// the kernel receives, with its pointer and tensor-map fields; `None` for a name no
        /// spec declares.
        pub fn bind_abi(abi: &str, s: &crate::ArgSources) -> Option<BoundArgs> {
            match abi {
                #(#arms)*
                _ => None,
            }
        }
    });
    format_file(prov, items)
}

fn grid_tokens(g: GridKind) -> TokenStream {
    match g {
        GridKind::Tiles => quote!(GridKind::Tiles),
        GridKind::Persistent => quote!(GridKind::Persistent),
    }
}

fn tile_params_tokens(p: &TileParams) -> TokenStream {
    match p {
        TileParams::Scalar(p) => {
            let (tm, tn, ks) = (lit(p.thread_m), lit(p.thread_n), lit(p.k_split));
            quote!(TileParams::Scalar { thread_m: #tm, thread_n: #tn, k_split: #ks })
        }
        TileParams::WgmmaTma(p) => {
            let (c, cm) = (lit(p.consumers), lit(p.cluster_m));
            quote!(TileParams::WgmmaTma { consumers: #c, cluster_m: #cm })
        }
        TileParams::MmaDecodeTma(_) => quote!(TileParams::MmaDecodeTma),
        TileParams::MmaGemm(p) => {
            let (wm, wn) = (lit(p.warps_m), lit(p.warps_n));
            quote!(TileParams::MmaGemm { warps_m: #wm, warps_n: #wn })
        }
        TileParams::MmaAsync(p) => {
            let (wm, wn) = (lit(p.warps_m), lit(p.warps_n));
            let mb = lit(p.min_blocks.unwrap_or(0));
            quote!(TileParams::MmaAsync { warps_m: #wm, warps_n: #wn, min_blocks: #mb })
        }
    }
}

fn kernel_info(plan: &Plan, k: &PlannedKernel) -> TokenStream {
    // `Plan::new` resolved every family; a plan edited since fails to compile, by name.
    let Some(family) = plan.specs.families.get(&k.family) else {
        let msg = format!("{}: family {} is not in the specs", k.name, k.family);
        return quote!(compile_error!(#msg));
    };
    let id = lit(k.id as u64);
    let tier = lit(k.tier_index as u64);
    let (name, fam, contract, abi) = (&k.name, &k.family, &k.contract, &family.abi);
    let policy = policy_tokens(family.policy);
    let op = op_tokens(k.op);
    let dtype = triple_tokens(k.dtype);
    let grid = grid_tokens(k.grid);
    let t = &k.tile;
    let tname = &t.name;
    let (tm, tn, tk, ts) = (lit(t.m), lit(t.n), lit(t.k), lit(t.stages()));
    let params = tile_params_tokens(&t.params);
    let threads = lit(k.threads);
    let smem = lit(k.shared_bytes);
    let module = lit(k.module as u64);
    let (cx, cy, cz) = (lit(k.cluster.0), lit(k.cluster.1), lit(k.cluster.2));
    // Kernels that copy A and B in 16-byte chunks without TMA (cp.async) check alignment in
    // the runtime; TMA kernels are checked by the rules of their tensor maps.
    let align = lit(
        if family.kind.operand_alignment().is_some() && !family.kind.uses_tma() {
            16u32
        } else {
            0
        },
    );
    let maps = k.tensor_maps.iter().map(|m| {
        let field = &m.field;
        let operand = operand_tokens(m.operand);
        let (bi, bo, sw) = (lit(m.box_inner), lit(m.box_outer), lit(m.swizzle_bytes));
        quote! {
            TensorMapPlan { field: #field, operand: #operand, box_inner: #bi, box_outer: #bo, swizzle_bytes: #sw }
        }
    });
    quote! {
        KernelInfo {
            id: KernelId(#id),
            tier: TierId(#tier),
            module: #module,
            name: #name,
            family: #fam,
            contract: #contract,
            policy: #policy,
            op: #op,
            dtype: #dtype,
            tile: TileShape { name: #tname, m: #tm, n: #tn, k: #tk, stages: #ts, params: #params },
            grid: #grid,
            cluster: (#cx, #cy, #cz),
            tensor_maps: &[#(#maps),*],
            operand_align: #align,
            block_threads: #threads,
            shared_bytes: #smem,
            abi: #abi,
        }
    }
}

fn conversion_info(plan: &Plan, c: &PlannedConversion) -> TokenStream {
    let Some(conv) = plan.specs.conversions.get(&c.conversion) else {
        let msg = format!(
            "{}: conversion {} is not in the specs",
            c.name, c.conversion
        );
        return quote!(compile_error!(#msg));
    };
    let abi = &conv.abi;
    let (id, tier) = (lit(c.id as u64), lit(c.tier_index as u64));
    let kind = match c.kind {
        ConversionKind::InputUpcast => quote!(ConversionKind::InputUpcast),
        ConversionKind::OutputDowncast => quote!(ConversionKind::OutputDowncast),
    };
    let (from, to) = (dtype_tokens(c.from), dtype_tokens(c.to));
    let (name, threads) = (&c.name, lit(c.threads));
    let module = lit(c.module as u64);
    quote! {
        ConversionInfo {
            id: ConversionId(#id),
            tier: TierId(#tier),
            module: #module,
            name: #name,
            kind: #kind,
            from: #from,
            to: #to,
            block_threads: #threads,
            abi: #abi,
        }
    }
}

/// A tier's contiguous id range in a table.
fn id_range(ids: impl Iterator<Item = usize>) -> TokenStream {
    let ids: Vec<usize> = ids.collect();
    let first_id = ids.first().copied().unwrap_or(0) as u64;
    let end = lit(ids.last().map_or(first_id, |l| *l as u64 + 1));
    let first = lit(first_id);
    quote!(#first..#end)
}

/// `kernels.rs`: `TIERS`, `CONTRACTS`, `KERNELS` and `CONVERSIONS`.
pub fn kernels(plan: &Plan, prov: &Provenance) -> String {
    let tiers = plan.specs.tiers.iter().enumerate().map(|(i, t)| {
        let id = lit(i as u64);
        let (name, gencode, file) = (&t.name, &t.gencode, &t.file);
        let (major, minor) = (lit(t.cc.0), lit(t.cc.1));
        let arch = t.arch_specific;
        let smem = lit(t.max_shared_bytes);
        let kernels = id_range(plan.tier_kernels(&t.name).map(|k| k.id));
        let conversions = id_range(plan.tier_conversions(&t.name).map(|c| c.id));
        let modules = plan.tier_modules(&t.name).iter().map(|m| {
            quote! { ModuleInfo { name: #m, cubin: cubin!(#name, #m) } }
        });
        quote! {
            TierInfo {
                id: TierId(#id),
                name: #name,
                spec_file: #file,
                gencode: #gencode,
                compute_capability: (#major, #minor),
                arch_specific: #arch,
                max_shared_bytes: #smem,
                kernels: #kernels,
                conversions: #conversions,
                modules: &[#(#modules),*],
            }
        }
    });
    let contracts = plan.specs.contracts.values().map(|c| {
        let (name, doc) = (&c.name, &c.doc);
        let inputs = c.inputs.iter().map(|&d| dtype_tokens(d));
        quote! { ContractInfo { name: #name, doc: #doc, inputs: &[#(#inputs),*] } }
    });
    let kernels = plan.kernels.iter().map(|k| kernel_info(plan, k));
    let conversions = plan.conversions.iter().map(|c| conversion_info(plan, c));
    let n_conversions = lit(plan.conversions.len() as u64);
    let selection = tier_selection(plan);
    let n_tiers = lit(plan.specs.tiers.len() as u64);
    let n_contracts = lit(plan.specs.contracts.len() as u64);
    let n_kernels = lit(plan.kernels.len() as u64);
    format_file(
        prov,
        quote! {
            /// Every tier of the specs, sorted by name; a tier's kernels are a contiguous id range.
            pub static TIERS: [TierInfo; #n_tiers] = [#(#tiers),*];
            /// Every numeric contract, with the reduction order it promises.
            pub static CONTRACTS: [ContractInfo; #n_contracts] = [#(#contracts),*];
            /// Every kernel of every tier; `KERNELS[id.0].id == id`.
            pub static KERNELS: [KernelInfo; #n_kernels] = [#(#kernels),*];
            /// Every conversion kernel of every tier; `CONVERSIONS[id.0].id == id`.
            pub static CONVERSIONS: [ConversionInfo; #n_conversions] = [#(#conversions),*];
            #selection
        },
    )
}

fn range_check(var: &Ident, r: &gemm_spec::DimRange) -> Option<TokenStream> {
    let min = lit(r.min);
    match (r.min, r.max) {
        (0, None) => None,
        (_, None) => Some(quote!(#var >= #min)),
        (0, Some(max)) => {
            let max = lit(max);
            Some(quote!(#var <= #max))
        }
        (_, Some(max)) => {
            let max = lit(max);
            Some(quote!((#min..=#max).contains(&#var)))
        }
    }
}

/// `dispatch.rs`: `dispatch(tier, policy, op, dtype, m, n, k)`, first match wins.
pub fn dispatch(plan: &Plan, prov: &Provenance) -> String {
    let mut arms = TokenStream::new();
    for (ti, tier) in plan.specs.tiers.iter().enumerate() {
        let tid = lit(ti as u64);
        for (policy, op, dtype) in tier.served() {
            let mut body = TokenStream::new();
            let mut closed = false;
            for r in tier.routes_for(policy, op, dtype) {
                // A validated route always names a planned kernel.
                let Some(k) = plan.kernel_for(&tier.name, &r.family, &r.tile, op, dtype) else {
                    continue;
                };
                let kid = lit(k.id as u64);
                let rule = lit(r.rule);
                let unaligned = match r
                    .unaligned
                    .as_ref()
                    .and_then(|u| plan.kernel_for(&tier.name, &u.family, &u.tile, op, dtype))
                {
                    Some(u) => {
                        let uid = lit(u.id as u64);
                        quote!(Some(KernelId(#uid)))
                    }
                    None => quote!(None),
                };
                let hit =
                    quote!(RouteHit { kernel: KernelId(#kid), rule: #rule, unaligned: #unaligned });
                let conds: Vec<TokenStream> = [
                    range_check(&ident("m"), &r.m),
                    range_check(&ident("n"), &r.n),
                    range_check(&ident("k"), &r.k),
                ]
                .into_iter()
                .flatten()
                .collect();
                if conds.is_empty() {
                    body.extend(quote!(Some(#hit)));
                    closed = true;
                    break;
                }
                body.extend(quote! { if #(#conds)&&* { return Some(#hit); } });
            }
            if !closed {
                body.extend(quote!(None));
            }
            let (p, o) = (policy_tokens(policy), op_tokens(op));
            let (ab, c, acc) = (
                dtype_tokens(dtype.ab),
                dtype_tokens(dtype.c),
                dtype_tokens(dtype.acc),
            );
            arms.extend(quote! { (#tid, #p, #o, #ab, #c, #acc) => { #body } });
        }
    }
    format_file(
        prov,
        quote! {
            /// The route tables of every tier: the first route of (tier, policy, op, dtype) whose
            /// m, n and k conditions hold. `None` when the tier does not serve the combination.
            /// Dimensions are in the GEMM view `C[m, n] = sum_k A(m, k) B(k, n)`.
            #[allow(clippy::manual_range_contains, unused_variables)]
            pub fn dispatch(
                tier: TierId,
                policy: Policy,
                op: Op,
                dtype: DtypeTriple,
                m: u64,
                n: u64,
                k: u64,
            ) -> Option<RouteHit> {
                match (tier.0, policy, op, dtype.ab, dtype.c, dtype.acc) {
                    #arms
                    _ => None,
                }
            }
        },
    )
}

/// `tier_for_capability` as a `match`, following [`gemm_spec::SpecSet::tier_for_capability`]:
/// arch-specific tiers by exact capability first, then portable tiers by major version,
/// highest minor first.
fn tier_selection(plan: &Plan) -> TokenStream {
    let tiers = &plan.specs.tiers;
    let mut arms = TokenStream::new();
    for (i, t) in tiers.iter().enumerate().filter(|(_, t)| t.arch_specific) {
        let (major, minor, id) = (lit(t.cc.0), lit(t.cc.1), lit(i as u64));
        arms.extend(quote! { (#major, #minor) => Some(TierId(#id)), });
    }
    let mut portable: Vec<(usize, &gemm_spec::Tier)> = tiers
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.arch_specific)
        .collect();
    portable.sort_by_key(|(_, t)| (t.cc.0, std::cmp::Reverse(t.cc.1)));
    for (i, t) in portable {
        let (major, minor, id) = (lit(t.cc.0), lit(t.cc.1), lit(i as u64));
        arms.extend(quote! { (#major, minor) if minor >= #minor => Some(TierId(#id)), });
    }
    quote! {
        /// The tier serving a device of this compute capability: an arch-specific tier of
        /// exactly it, else the portable tier of its major version with the highest minor
        /// not above the device's. `None` when no tier serves it.
        #[allow(unused_comparisons)]
        pub fn tier_for_capability(major: u32, minor: u32) -> Option<TierId> {
            match (major, minor) {
                #arms
                _ => None,
            }
        }
    }
}

/// `resources.rs`: the ptxas report of each kernel, or zeros when built without cubins.
pub fn resources(
    plan: &Plan,
    report: Option<&[KernelResources]>,
    prov: &Provenance,
    instrumentation: Instrumentation,
) -> String {
    let present = report.is_some();
    let perturbed = instrumentation.timing_perturbation;
    let rows = plan.kernels.iter().map(|k| {
        let r = report.and_then(|r| r.get(k.id).copied()).unwrap_or_default();
        let (regs, smem, stack, spill) = (lit(r.registers), lit(r.static_shared_bytes), lit(r.stack_bytes), lit(r.spill_bytes()));
        quote! { KernelResources { registers: #regs, static_shared_bytes: #smem, stack_bytes: #stack, spill_bytes: #spill } }
    });
    let n = lit(plan.kernels.len() as u64);
    format_file(
        prov,
        quote! {
            /// Whether this build compiled and embedded cubins (false under `GEMM_AOT_NO_CUBINS`).
            pub const CUBINS_PRESENT: bool = #present;
            /// Whether the cubins carry the timing-perturbation delays (a test build; never shipped).
            pub const TIMING_PERTURBATION: bool = #perturbed;
            /// ptxas's resource report for `KERNELS[i]` (zeros when `CUBINS_PRESENT` is false).
            pub static RESOURCES: [KernelResources; #n] = [#(#rows),*];
        },
    )
}
