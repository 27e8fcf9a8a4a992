//! The routes file a run writes: a header comment (tier, shape list, device, date, method) and
//! one `[[route]]` per op, (n, k) and m range, in that order, each after a comment with its
//! layers and times. The same tuning always gives the same text.

use crate::tier_view::Dtypes;
use crate::tune::{TunedRoute, Tuning};
use std::fmt::Write;

/// Where and how a run measured, for the file's header and the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Provenance {
    /// The shape list, as the command line named it.
    pub shapes: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The GPU (or the test timer).
    pub device: String,
    /// How each time was taken.
    pub method: String,
    /// The routes file's name, as the header tells the tier to list it.
    pub file: String,
}

/// Columns of the header comment.
const WIDTH: usize = 96;

/// `text` in lines of at most `width` columns, broken at spaces (a longer word stands alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// One line of a comment: no line breaks from names in the shape list.
fn comment_text(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// The routes file for `t`; `None` when no region changed (nothing is to be written).
pub fn routes_file(t: &Tuning, p: &Provenance) -> Option<String> {
    if !t.changed() {
        return None;
    }
    let mut s = String::new();
    let measured: Vec<String> = t
        .measured
        .iter()
        .map(|(op, d)| format!("{op} {d}"))
        .collect();
    let what = format!(
        "Routes of tier {} tuned by `gemm-aot tune` for {}: the fastest {} kernel of each (n, k) and m range, timed on {} on {} ({}; {}). A kernel replaces the routed one when it is more than {:.1}% faster. m ranges: {}.",
        t.tier,
        p.shapes,
        t.policy,
        p.device,
        p.date,
        measured.join(", "),
        p.method,
        100.0 * t.threshold,
        t.buckets.labels().join(", ")
    );
    let how = format!(
        "Include it from the tier (`routes_files = [\"{}\"]` in its [tier] table) or from a build (`gemm_codegen::Builder::routes_file(\"{}\", path)`). Its routes come before the tier's own and each names one (n, k), so they override the tier's routes there alone. Every kernel here implements the contract of the route it overrides, so every m of one (n, k) still reaches one contract; validation proves it again. Written by the tool: rerun `gemm-aot tune` rather than edit it (docs/tuning.md).",
        p.file, t.tier
    );
    for (i, paragraph) in [what, how].iter().enumerate() {
        if i > 0 {
            s.push_str("#\n");
        }
        for line in wrap(&comment_text(paragraph), WIDTH - 2) {
            let _ = writeln!(s, "# {line}");
        }
    }
    let mut last: Option<(String, u64, u64)> = None;
    for r in &t.routes {
        let group = (r.op.to_string(), r.n, r.k);
        if last.as_ref() != Some(&group) {
            let layers = t
                .shapes
                .iter()
                .find(|x| x.n == r.n && x.k == r.k)
                .map(|x| x.layers.join("; "))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "\n# {} n = {}, k = {}: {}",
                r.op,
                r.n,
                r.k,
                comment_text(&layers)
            );
            last = Some(group);
        }
        route_text(&mut s, t, r);
    }
    Some(s)
}

/// The sections of an earlier routes file (`old`, as this module writes them: a `# <op> n = ..,
/// k = ..:` comment, then that (n, k)'s routes) for the ops this run did not tune, verbatim,
/// each starting with its blank line: a run of one op keeps what earlier runs tuned for the
/// others, so NN, NT and TN can be tuned in separate runs into one file.
pub fn kept_sections(old: &str, tuned: &[gemm_spec::Op]) -> String {
    let mut kept = String::new();
    let mut keep = false;
    let mut in_sections = false;
    for line in old.lines() {
        if let Some(rest) = line.strip_prefix("# ") {
            if let Some((op, tail)) = rest.split_once(' ') {
                if tail.starts_with("n = ") {
                    if let Ok(op) = op.parse::<gemm_spec::Op>() {
                        in_sections = true;
                        keep = !tuned.contains(&op);
                        if keep {
                            kept.push('\n');
                        }
                    }
                }
            }
        }
        if in_sections && keep && !line.is_empty() {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The ops an earlier file's sections name that this run did not tune, in first-seen order.
pub fn kept_ops(old: &str, tuned: &[gemm_spec::Op]) -> Vec<gemm_spec::Op> {
    let mut ops = Vec::new();
    for line in old.lines() {
        let Some((op, tail)) = line.strip_prefix("# ").and_then(|r| r.split_once(' ')) else {
            continue;
        };
        if let (true, Ok(op)) = (tail.starts_with("n = "), op.parse::<gemm_spec::Op>()) {
            if !tuned.contains(&op) && !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    ops
}

fn route_text(s: &mut String, t: &Tuning, r: &TunedRoute) {
    for note in &r.notes {
        let _ = writeln!(s, "# {}", comment_text(note));
    }
    let _ = writeln!(s, "[[route]]");
    let _ = writeln!(s, "policy = \"{}\"", t.policy);
    let _ = writeln!(s, "op = \"{}\"", r.op);
    match &r.dtypes {
        Dtypes::Any => {
            let _ = writeln!(s, "dtype = \"any\"");
        }
        Dtypes::List(v) => {
            let v: Vec<String> = v.iter().map(|d| format!("\"{d}\"")).collect();
            let _ = writeln!(s, "dtype = [{}]", v.join(", "));
        }
    }
    match (r.m.min, r.m.max) {
        (0, None) => {}
        (0, Some(max)) => {
            let _ = writeln!(s, "m = {{ max = {max} }}");
        }
        (min, None) => {
            let _ = writeln!(s, "m = {{ min = {min} }}");
        }
        (min, Some(max)) => {
            let _ = writeln!(s, "m = {{ min = {min}, max = {max} }}");
        }
    }
    let _ = writeln!(s, "n = {{ min = {0}, max = {0} }}", r.n);
    let _ = writeln!(s, "k = {{ min = {0}, max = {0} }}", r.k);
    let _ = writeln!(s, "kernel = \"{}\"", r.pick.kernel);
    if let Some(u) = &r.pick.unaligned {
        let _ = writeln!(s, "unaligned = \"{u}\"");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_spec::Op;

    const OLD: &str = "# Routes of tier sm90a tuned by `gemm-aot tune` ...\n#\n# Include it ...\n\n# nn n = 512, k = 3584: Qwen2.5 7B k_proj\n# m <= 16: a note\n[[route]]\nop = \"nn\"\nkernel = \"a.b\"\n\n# nt n = 4096, k = 4096: o_proj\n[[route]]\nop = \"nt\"\nkernel = \"c.d\"\n\n# nn n = 768, k = 768: c_proj\n[[route]]\nop = \"nn\"\nkernel = \"e.f\"\n";

    #[test]
    fn a_run_of_one_op_keeps_the_other_ops_sections_verbatim() {
        let kept = kept_sections(OLD, &[Op::Nt]);
        assert_eq!(
            kept,
            "\n# nn n = 512, k = 3584: Qwen2.5 7B k_proj\n# m <= 16: a note\n[[route]]\nop = \"nn\"\nkernel = \"a.b\"\n\n# nn n = 768, k = 768: c_proj\n[[route]]\nop = \"nn\"\nkernel = \"e.f\"\n"
        );
        assert_eq!(kept_ops(OLD, &[Op::Nt]), [Op::Nn]);
        assert_eq!(
            kept_sections(OLD, &[Op::Nn]),
            "\n# nt n = 4096, k = 4096: o_proj\n[[route]]\nop = \"nt\"\nkernel = \"c.d\"\n"
        );
        // Every op tuned again, or no earlier file: nothing is kept; the header never is.
        assert_eq!(kept_sections(OLD, &[Op::Nn, Op::Nt]), "");
        assert!(kept_ops(OLD, &[Op::Nn, Op::Nt]).is_empty());
        assert_eq!(kept_sections("", &[Op::Nn]), "");
    }
}
