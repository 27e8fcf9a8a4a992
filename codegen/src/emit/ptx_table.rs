//! `ptx.rs`: per tier that embeds PTX (`crate::ptx::ptx_target`), the PTX of each of its
//! compile units, for a runtime to JIT on a device newer than any tier's cubin target.
//!
//! Like `kernels.rs`, it names the runtime's table types (`TierPtx`, `PtxModule` of
//! `gemm_runtime::table`, in scope where it is included) and needs a `ptx!(tier, module)` macro
//! yielding the `&'static str` of `cubins/<tier>/<module>.ptx` (like `cubin!`, so the file does
//! not depend on where it is written). A tier's `modules` are in the order of its
//! `TierInfo::modules` in `kernels.rs`, so `KernelInfo::module` indexes both.

use super::rust::format_file;
use super::Provenance;
use crate::catalog::KernelCatalog;
use crate::ptx::ptx_target;
use proc_macro2::Literal;
use quote::quote;

pub fn ptx(catalog: &KernelCatalog, prov: &Provenance) -> String {
    let tiers: Vec<_> = catalog
        .specs
        .tiers
        .iter()
        .enumerate()
        .filter_map(|(i, t)| ptx_target(&catalog.specs, t).map(|target| (i, t, target)))
        .map(|(i, t, target)| {
            let name = &t.name;
            let index = Literal::usize_unsuffixed(i);
            let modules = catalog.tier_modules(&t.name).iter().map(|m| {
                quote! { PtxModule { name: #m, ptx: ptx!(#name, #m) } }
            });
            quote! {
                TierPtx { tier: #name, tier_index: #index, target: #target, modules: &[#(#modules),*] }
            }
        })
        .collect();
    let n = Literal::usize_unsuffixed(tiers.len());
    format_file(
        prov,
        quote! {
            /// Every tier that embeds PTX, in `TIERS` order.
            pub static TIER_PTX: [TierPtx; #n] = [#(#tiers),*];

            /// The PTX of tier `name`, when it embeds PTX.
            pub fn tier_ptx(name: &str) -> Option<&'static TierPtx> {
                TIER_PTX.iter().find(|t| t.tier == name)
            }
        },
    )
}
