//! `gemm-aot explain` and `gemm-aot list`: the route tables read back in words.

use crate::catalog::KernelCatalog;
use gemm_core::KernelSet;
use gemm_spec::{DimRange, Route};
use std::fmt::Write;
use thiserror::Error;

fn conditions(r: &Route) -> String {
    let c: Vec<String> = [("m", r.m), ("n", r.n), ("k", r.k)]
        .iter()
        .filter(|(_, d)| *d != DimRange::ANY)
        .map(|(n, d)| format!("{n} {d}"))
        .collect();
    if c.is_empty() {
        "any shape (catch-all)".into()
    } else {
        c.join(", ")
    }
}

/// Why `gemm-aot explain` cannot answer.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExplainError {
    #[error("no tier named `{tier}`; the specs define {known}")]
    UnknownTier { tier: String, known: String },
    #[error(transparent)]
    Set(#[from] gemm_core::ExplainError),
}

pub use gemm_core::Query;

/// Which route serves the query on `tier`, why the earlier ones did not, and the kernel it
/// launches: gemm-core's `explain` over the catalog's tables, as the runtime's
/// `Context::explain` prints it for the generated ones. Makes the catalog's set (once a
/// call: for many queries, make it once with [`crate::memory_set::kernel_set`] and call
/// [`explain_in`]).
pub fn explain(catalog: &KernelCatalog, tier: &str, q: &Query) -> Result<String, ExplainError> {
    explain_in(crate::memory_set::kernel_set(catalog), tier, q)
}

/// [`explain`] over a set already made.
pub fn explain_in(set: &KernelSet, tier: &str, q: &Query) -> Result<String, ExplainError> {
    let t = set
        .tier_by_name(tier)
        .ok_or_else(|| ExplainError::UnknownTier {
            tier: tier.to_string(),
            known: set
                .tiers()
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    Ok(set.explain(t.id, q)?.to_string())
}

/// Every kernel and route of the catalog's tiers.
pub fn list(plan: &KernelCatalog) -> String {
    let mut s = String::new();
    for t in &plan.specs.tiers {
        let _ = writeln!(
            s,
            "tier {} ({}): compute capability {}.{}, {}, {} bytes of shared memory",
            t.name, t.file, t.cc.0, t.cc.1, t.gencode, t.max_shared_bytes
        );
        let _ = writeln!(s, "  kernels:");
        for k in plan.tier_kernels(&t.name) {
            let mut line = format!(
                "    {:>3}  {:<48} {:<8} {:>4} threads {:>6} B smem",
                k.id, k.name, k.contract, k.threads, k.shared_bytes
            );
            if !k.describe.is_empty() {
                line += &format!("  ({}: {})", k.template, k.describe);
            }
            let _ = writeln!(s, "{line}");
        }
        let _ = writeln!(
            s,
            "  conversions (half fallback, repack) and row kernels (the fronts' reductions):"
        );
        for c in plan.tier_conversions(&t.name) {
            let what = match c.kind {
                gemm_spec::ConversionKind::Row(op) => {
                    let contract = plan
                        .specs
                        .conversions
                        .get(&c.conversion)
                        .map_or("", |x| x.contract.as_str());
                    format!(
                        "  row {op}, contract {contract}, a warp a row up to {} columns",
                        c.warp_cols
                    )
                }
                _ => String::new(),
            };
            let _ = writeln!(
                s,
                "    {:>3}  {:<48} {} -> {} {:>4} threads{what}",
                c.id, c.name, c.from, c.to, c.threads
            );
        }
        let _ = writeln!(s, "  routes (first match wins):");
        let mut last_rule = 0;
        for r in &t.routes {
            if r.rule == last_rule {
                continue;
            }
            last_rule = r.rule;
            let expanded: Vec<String> = t
                .routes
                .iter()
                .filter(|x| x.rule == r.rule)
                .map(|x| format!("{} {}", x.op, x.dtype))
                .collect();
            let unaligned = r
                .unaligned
                .as_ref()
                .map(|u| format!(" (unaligned: {u})"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "    {:>2}. {} [{}] when {} -> {}{unaligned}",
                r.rule,
                r.policy,
                expanded.join(", "),
                conditions(r),
                r.kernel_ref()
            );
        }
    }
    s
}
