//! Generated Rust, built with `quote!` and formatted with prettyplease:
//! - `abi.rs`: `#[repr(C)]` argument structs with `const` layout asserts, each with its `bind`
//!   from the launch's `ArgSources` (flag bits from what is present), and `ABIS`, the structs
//!   as data for the set;
//! - `kernels.rs`: the tier, contract, kernel, conversion and route tables;
//! - `dispatch.rs`: the route tables as one `match`;
//! - `resources.rs`: what ptxas reported for each kernel.
//!
//! The code names the table types of gemm-core (`gemm_runtime::table` re-exports them; the
//! including module brings them into scope) and a `cubin!(tier, module)` macro that yields one
//! compile unit's cubin bytes, so the files do not depend on where they are written.

use super::{Instrumentation, Provenance};
use crate::catalog::{CatalogConversion, CatalogKernel, KernelCatalog};
use crate::compile::ptxas::KernelResources;
use gemm_spec::{
    AbiField, BindSource, ConversionKind, Dtype, DtypeTriple, FieldType, GridKind, MapOperand, Op,
    OperandPath, Policy, Prepass, RowOp, SourceType, SpecSet,
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
        FieldType::TensorMap => quote!(TensorMap),
    }
}

fn operand_tokens(o: MapOperand) -> TokenStream {
    match o {
        MapOperand::A => quote!(Operand::A),
        MapOperand::B => quote!(Operand::B),
        MapOperand::C => quote!(Operand::C),
        MapOperand::Bias => quote!(Operand::Bias),
    }
}

fn operands_tokens(o: OperandPath) -> TokenStream {
    match o {
        OperandPath::Loads => quote!(OperandPath::Loads),
        OperandPath::CpAsync => quote!(OperandPath::CpAsync),
        OperandPath::Tma => quote!(OperandPath::Tma),
    }
}

/// The value of a field in `bind`: its source's `ArgSources` field, widened where the field is
/// wider (validation admits only these pairs).
fn bind_value(abi: &gemm_spec::Abi, f: &AbiField) -> TokenStream {
    if f.bind == BindSource::Flags {
        // Each declared bit, set exactly when its source is present.
        let bits = abi.flags.iter().map(|b| {
            let word = b.set.as_str();
            let bit = lit(b.bit);
            quote!((u32::from(s.present(#word)) << #bit))
        });
        let value = quote!(0u32 #(| #bits)*);
        return match f.ty {
            FieldType::U64 => quote!(u64::from(#value)),
            _ => value,
        };
    }
    let src = ident(f.bind.field());
    match (f.bind.ty(), f.ty) {
        (SourceType::TensorMap, _) => quote!(s.#src.unwrap_or_default()),
        (SourceType::I32, FieldType::I64) => quote!(i64::from(s.#src)),
        (SourceType::U32, FieldType::U64) => quote!(u64::from(s.#src)),
        _ => quote!(s.#src),
    }
}

fn field_kind(f: &AbiField) -> TokenStream {
    if f.ty.is_pointer() {
        return quote!(FieldKind::Pointer);
    }
    if let Some(o) = f.bind.map_operand() {
        let o = operand_tokens(o);
        return quote!(FieldKind::TensorMap(#o));
    }
    if f.bind == BindSource::Flags {
        return quote!(FieldKind::Flags);
    }
    quote!(FieldKind::Value)
}

/// `abi.rs`: one struct per ABI, layout asserted at compile time, its `bind`, and `ABIS`.
pub fn abi(specs: &SpecSet, prov: &Provenance) -> String {
    let mut items = TokenStream::new();
    let mut infos = Vec::new();
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
        let writes = abi.fields.iter().map(|f| {
            let fname = ident(&f.name);
            let (lo, hi) = (lit(f.offset), lit(f.offset + f.ty.size()));
            if f.ty == FieldType::TensorMap {
                quote! { bytes[#lo..#hi].copy_from_slice(&self.#fname.0); }
            } else {
                quote! { bytes[#lo..#hi].copy_from_slice(&self.#fname.to_le_bytes()); }
            }
        });
        let binds = abi.fields.iter().map(|f| {
            let fname = ident(&f.name);
            let value = bind_value(abi, f);
            quote! { #fname: #value, }
        });
        let flag_consts = abi.flags.iter().map(|b| {
            let c = ident(&format!("FLAG_{}", b.name.to_ascii_uppercase()));
            let bit = lit(b.bit);
            let doc = doc_text(&format!(
                "`flags` bit {}: {} (set when {} is present).",
                b.bit, b.doc, b.set
            ));
            quote! { #[doc = #doc] pub const #c: u32 = 1 << #bit; }
        });
        let bind_fn = ident(&format!("bind_{}", abi.name.to_ascii_lowercase()));
        items.extend(quote! {
            #[doc = #doc]
            #[repr(C)]
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            pub struct #name { #(#fields)* }

            const _: () = {
                assert!(core::mem::size_of::<#name>() == #size);
                assert!(core::mem::align_of::<#name>() == #align);
                #(#offsets)*
            };

            impl #name {
                /// Size in bytes, equal on the CUDA side.
                pub const SIZE: usize = #size;
                #(#flag_consts)*

                /// The struct filled from the launch's sources, each field from the source its
                /// spec `bind` names, the flag bits from what is present.
                pub fn bind(s: &ArgSources) -> Self {
                    Self { #(#binds)* }
                }

                /// The struct's bytes exactly as the kernel receives them (padding zeroed).
                pub fn to_bytes(&self) -> [u8; #size] {
                    let mut bytes = [0u8; #size];
                    #(#writes)*
                    bytes
                }
            }

            fn #bind_fn(s: &ArgSources) -> ArgBytes {
                ArgBytes::new(&#name::bind(s).to_bytes()).unwrap_or_default()
            }
        });
        let lit_name = abi.name.as_str();
        let location = abi.location.to_string();
        let field_infos = abi.fields.iter().map(|f| {
            let (n, off, sz) = (&f.name, lit(f.offset), lit(f.ty.size()));
            let bind = f.bind.as_str();
            let kind = field_kind(f);
            let loc = f.location.to_string();
            quote! { AbiFieldInfo { name: #n, offset: #off, size: #sz, bind: #bind, kind: #kind, location: #loc } }
        });
        let flag_infos = abi.flags.iter().map(|b| {
            let (n, bit, set) = (&b.name, lit(b.bit), b.set.as_str());
            quote! { AbiFlagInfo { name: #n, bit: #bit, set: #set } }
        });
        infos.push(quote! {
            AbiInfo {
                name: #lit_name,
                size: #size,
                align: #align,
                fields: &[#(#field_infos),*],
                flags: &[#(#flag_infos),*],
                location: #location,
                bind: #bind_fn,
            }
        });
    }
    let n = lit(infos.len() as u64);
    items.extend(quote! {
        /// Every argument struct of the specs, as data, with its bind: what the set's kernels
        /// take and the runtime launches with.
        pub static ABIS: [AbiInfo; #n] = [#(#infos),*];
    });
    format_file(prov, items)
}

fn grid_tokens(g: GridKind) -> TokenStream {
    match g {
        GridKind::Tiles => quote!(GridKind::Tiles),
        GridKind::Persistent => quote!(GridKind::Persistent),
    }
}

fn kernel_info(catalog: &KernelCatalog, k: &CatalogKernel) -> TokenStream {
    // `KernelCatalog::new` resolved every family; a catalog edited since fails to compile, by name.
    let Some(family) = catalog.specs.families.get(&k.family) else {
        let msg = format!("{}: family {} is not in the specs", k.name, k.family);
        return quote!(compile_error!(#msg));
    };
    let id = lit(k.id as u64);
    let tier = lit(k.tier_index as u64);
    let (name, fam, template, contract, abi) =
        (&k.name, &k.family, &k.template, &k.contract, &family.abi);
    let policy = policy_tokens(family.policy);
    let op = op_tokens(k.op);
    let dtype = triple_tokens(k.dtype);
    let grid = grid_tokens(k.grid);
    let operands = operands_tokens(k.operands);
    let t = &k.tile;
    let tname = &t.name;
    let (tm, tn, tk) = (lit(t.m), lit(t.n), lit(t.k));
    let params = t.params.iter().map(|(p, v)| {
        let v = lit(*v);
        quote!((#p, #v))
    });
    let describe = &k.describe;
    let threads = lit(k.threads);
    let smem = lit(k.shared_bytes);
    let module = lit(k.module as u64);
    let min_blocks = lit(k.min_blocks.unwrap_or(0));
    let (cx, cy, cz) = (lit(k.cluster.0), lit(k.cluster.1), lit(k.cluster.2));
    let batch = k.batch;
    let vector_bytes = lit(k.derived.vector_bytes.unwrap_or(0));
    let tile_ps_per_k = lit(t.tile_ps_per_k.unwrap_or(0));
    let prepass = match k.prepass {
        Prepass::None => quote!(Prepass::None),
        Prepass::TransposeA => quote!(Prepass::TransposeA),
    };
    let max_k = match k.derived.max_k {
        Some(v) => {
            let v = lit(v);
            quote!(Some(#v))
        }
        None => quote!(None),
    };
    let maps = k.tensor_maps.iter().map(|m| {
        let field = &m.field;
        let operand = operand_tokens(m.operand);
        let optional = m.optional;
        let (bi, bo, sw) = (lit(m.box_inner), lit(m.box_outer), lit(m.swizzle_bytes));
        quote! {
            TensorMapPlan { field: #field, operand: #operand, optional: #optional, box_inner: #bi, box_outer: #bo, swizzle_bytes: #sw }
        }
    });
    quote! {
        KernelInfo {
            id: KernelId(#id),
            tier: TierId(#tier),
            module: #module,
            name: #name,
            family: #fam,
            template: #template,
            contract: #contract,
            policy: #policy,
            op: #op,
            dtype: #dtype,
            tile: TileShape { name: #tname, m: #tm, n: #tn, k: #tk, params: &[#(#params),*], describe: #describe },
            grid: #grid,
            operands: #operands,
            cluster: (#cx, #cy, #cz),
            batch: #batch,
            max_k: #max_k,
            tensor_maps: &[#(#maps),*],
            block_threads: #threads,
            shared_bytes: #smem,
            min_blocks: #min_blocks,
            abi: #abi,
            prepass: #prepass,
            vector_bytes: #vector_bytes,
            tile_ps_per_k: #tile_ps_per_k,
        }
    }
}

fn conversion_info(catalog: &KernelCatalog, c: &CatalogConversion) -> TokenStream {
    let Some(conv) = catalog.specs.conversions.get(&c.conversion) else {
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
        ConversionKind::Repack => quote!(ConversionKind::Repack),
        ConversionKind::Transpose => quote!(ConversionKind::Transpose),
        ConversionKind::Row(op) => {
            let op = match op {
                RowOp::Softmax => quote!(RowOp::Softmax),
                RowOp::LogSoftmax => quote!(RowOp::LogSoftmax),
                RowOp::Mean => quote!(RowOp::Mean),
            };
            quote!(ConversionKind::Row(#op))
        }
    };
    let contract = &conv.contract;
    let (from, to) = (dtype_tokens(c.from), dtype_tokens(c.to));
    let (name, threads) = (&c.name, lit(c.threads));
    let module = lit(c.module as u64);
    let warp_cols = lit(u64::from(c.warp_cols));
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
            contract: #contract,
            warp_cols: #warp_cols,
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

/// `kernels.rs`: `TIERS`, `CONTRACTS`, `KERNELS`, `CONVERSIONS` and `ROUTES`.
pub fn kernels(catalog: &KernelCatalog, prov: &Provenance) -> String {
    let tiers = catalog.specs.tiers.iter().enumerate().map(|(i, t)| {
        let id = lit(i as u64);
        let (name, gencode, file) = (&t.name, &t.gencode, &t.file);
        let (major, minor) = (lit(t.cc.0), lit(t.cc.1));
        let arch = t.arch_specific;
        let smem = lit(t.max_shared_bytes);
        let kernels = id_range(catalog.tier_kernels(&t.name).map(|k| k.id));
        let conversions = id_range(catalog.tier_conversions(&t.name).map(|c| c.id));
        let modules = catalog.tier_modules(&t.name).iter().map(|m| {
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
    let contracts = catalog.specs.contracts.values().map(|c| {
        let (name, doc) = (&c.name, &c.doc);
        let inputs = c.inputs.iter().map(|&d| dtype_tokens(d));
        quote! { ContractInfo { name: #name, doc: #doc, inputs: &[#(#inputs),*] } }
    });
    let kernels = catalog.kernels.iter().map(|k| kernel_info(catalog, k));
    let conversions = catalog
        .conversions
        .iter()
        .map(|c| conversion_info(catalog, c));
    let n_conversions = lit(catalog.conversions.len() as u64);
    let routes = route_infos(catalog);
    let n_routes = lit(routes.len() as u64);
    let n_tiers = lit(catalog.specs.tiers.len() as u64);
    let n_contracts = lit(catalog.specs.contracts.len() as u64);
    let n_kernels = lit(catalog.kernels.len() as u64);
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
            /// Every expanded route of every tier, in match order within a tier: the data the
            /// `dispatch` match compiles, and what `explain` reads back.
            pub static ROUTES: [RouteInfo; #n_routes] = [#(#routes),*];
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
pub fn dispatch(catalog: &KernelCatalog, prov: &Provenance) -> String {
    let mut arms = TokenStream::new();
    for (ti, tier) in catalog.specs.tiers.iter().enumerate() {
        let tid = lit(ti as u64);
        for (policy, op, dtype) in tier.served() {
            let mut body = TokenStream::new();
            let mut closed = false;
            for r in tier.routes_for(policy, op, dtype) {
                // A validated route always names a planned kernel.
                let Some(k) = catalog.kernel_for(&tier.name, &r.family, &r.tile, op, dtype) else {
                    continue;
                };
                let kid = lit(k.id as u64);
                let rule = lit(r.rule);
                let unaligned = match r
                    .unaligned
                    .as_ref()
                    .and_then(|u| catalog.kernel_for(&tier.name, &u.family, &u.tile, op, dtype))
                {
                    Some(u) => {
                        let uid = lit(u.id as u64);
                        quote!(Some(KernelId(#uid)))
                    }
                    None => quote!(None),
                };
                let wave_fit = wave_fit_tokens(catalog, &tier.name, r, op, dtype);
                let hit = quote!(RouteHit { kernel: KernelId(#kid), rule: #rule, unaligned: #unaligned, wave_fit: #wave_fit });
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

fn range_tokens(r: &gemm_spec::DimRange) -> TokenStream {
    let min = lit(r.min);
    let max = match r.max {
        Some(m) => {
            let m = lit(m);
            quote!(Some(#m))
        }
        None => quote!(None),
    };
    quote!(DimRange { min: #min, max: #max })
}

/// `&[KernelId(..), ..]`: the kernels of a route's `wave_fit` for one (op, dtype).
fn wave_fit_tokens(
    catalog: &KernelCatalog,
    tier: &str,
    r: &gemm_spec::Route,
    op: gemm_spec::Op,
    dtype: gemm_spec::DtypeTriple,
) -> TokenStream {
    let ids = r
        .wave_fit
        .iter()
        .filter_map(|w| catalog.kernel_for(tier, &w.family, &w.tile, op, dtype))
        .map(|w| {
            let id = lit(w.id as u64);
            quote!(KernelId(#id))
        });
    quote!(&[#(#ids),*])
}

/// Every expanded route of every tier, as `RouteInfo` values.
fn route_infos(catalog: &KernelCatalog) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for (ti, tier) in catalog.specs.tiers.iter().enumerate() {
        let tid = lit(ti as u64);
        for r in &tier.routes {
            let Some(k) = catalog.kernel_for(&tier.name, &r.family, &r.tile, r.op, r.dtype) else {
                continue;
            };
            let kid = lit(k.id as u64);
            let unaligned = match r
                .unaligned
                .as_ref()
                .and_then(|u| catalog.kernel_for(&tier.name, &u.family, &u.tile, r.op, r.dtype))
            {
                Some(u) => {
                    let uid = lit(u.id as u64);
                    quote!(Some(KernelId(#uid)))
                }
                None => quote!(None),
            };
            let wave_fit = wave_fit_tokens(catalog, &tier.name, r, r.op, r.dtype);
            let (rule, policy, op, dtype) = (
                lit(r.rule),
                policy_tokens(r.policy),
                op_tokens(r.op),
                triple_tokens(r.dtype),
            );
            let (m, n, kk) = (range_tokens(&r.m), range_tokens(&r.n), range_tokens(&r.k));
            let location = r.location.to_string();
            out.push(quote! {
                RouteInfo {
                    tier: TierId(#tid),
                    rule: #rule,
                    policy: #policy,
                    op: #op,
                    dtype: #dtype,
                    m: #m,
                    n: #n,
                    k: #kk,
                    kernel: KernelId(#kid),
                    unaligned: #unaligned,
                    wave_fit: #wave_fit,
                    location: #location,
                }
            });
        }
    }
    out
}

/// `resources.rs`: the ptxas report of each kernel, or zeros when built without cubins.
pub fn resources(
    catalog: &KernelCatalog,
    report: Option<&[KernelResources]>,
    prov: &Provenance,
    instrumentation: Instrumentation,
) -> String {
    let present = report.is_some();
    let perturbed = instrumentation.timing_perturbation;
    let rows = catalog.kernels.iter().map(|k| {
        let r = report.and_then(|r| r.get(k.id).copied()).unwrap_or_default();
        let (regs, smem, stack, spill) = (lit(r.registers), lit(r.static_shared_bytes), lit(r.stack_bytes), lit(r.spill_bytes()));
        quote! { KernelResources { registers: #regs, static_shared_bytes: #smem, stack_bytes: #stack, spill_bytes: #spill } }
    });
    let n = lit(catalog.kernels.len() as u64);
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
