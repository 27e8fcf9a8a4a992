//! The JSON document of a run: its settings, every region's times and decision, every time
//! the timer gave, and what was written.

use crate::routes_text::Provenance;
use crate::tune::Tuning;
use serde::Serialize;
use serde_json::{json, Value};

fn to<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_default()
}

/// The document; `written` names the routes file when one was written.
pub fn report(t: &Tuning, p: &Provenance, written: Option<&str>) -> Value {
    let measured: Vec<Value> = t
        .measured
        .iter()
        .map(|(op, d)| json!({ "op": op.to_string(), "dtype": d.to_string() }))
        .collect();
    json!({
        "tool": "gemm-aot tune",
        "tier": t.tier,
        "policy": t.policy.to_string(),
        "provenance": to(p),
        "measured": measured,
        "threshold": t.threshold,
        "m_buckets": t.buckets.labels(),
        "from_m": t.from_m,
        "only": t.only,
        "changed": t.changed(),
        "routes": t.routes.len(),
        "dropped": t
            .dropped
            .iter()
            .map(|d| json!({ "op": d.op.to_string(), "n": d.n, "k": d.k, "m": d.m.label(), "note": d.note }))
            .collect::<Vec<_>>(),
        "written": written,
        "unreached": t
            .unreached
            .iter()
            .map(|(op, n, k)| json!({ "op": op.to_string(), "n": n, "k": k }))
            .collect::<Vec<_>>(),
        "regions": to(&t.regions),
        "measurements": to(&t.measurements),
    })
}
