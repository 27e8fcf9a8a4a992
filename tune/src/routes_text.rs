//! The routes file a run writes: a header comment (tier, shape list, device, date, method) and
//! one `[[route]]` per op, (n, k) and m range, in that order, each after a comment with its
//! layers and times. The same tuning always gives the same text.

use crate::tier_view::Dtypes;
use crate::tune::{TunedRoute, Tuning, KEPT, KEPT_BELOW_FROM_M};
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
    ) + &t.from_m.map_or(String::new(), |m| {
        format!(" Only the m ranges that reach m = {m} were timed (--from-m); those below keep their earlier routes.")
    });
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
    // A section for each (op, n, k) with routes or with an earlier route dropped (the route
    // sections in the run's order, then those with notes only; `assembled` sorts them): first
    // the notes of the dropped ones, then the routes.
    let mut groups: Vec<(gemm_spec::Op, u64, u64)> = Vec::new();
    let keys = t.routes.iter().map(|r| (r.op, r.n, r.k));
    for key in keys.chain(t.dropped.iter().map(|d| (d.op, d.n, d.k))) {
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    for (op, n, k) in groups {
        let layers = t
            .shapes
            .iter()
            .find(|x| x.n == n && x.k == k)
            .map(|x| x.layers.join("; "))
            .unwrap_or_default();
        let _ = writeln!(s, "\n# {op} n = {n}, k = {k}: {}", comment_text(&layers));
        for d in t.dropped.iter().filter(|d| (d.op, d.n, d.k) == (op, n, k)) {
            let _ = writeln!(s, "# {}", comment_text(&d.note));
        }
        for r in t.routes.iter().filter(|r| (r.op, r.n, r.k) == (op, n, k)) {
            route_text(&mut s, t, r);
        }
    }
    Some(s)
}

/// Whether `line` begins the note the tool writes before the sections a run kept (`# The nt,
/// tn routes below are kept from the earlier file ...`).
fn is_kept_note(line: &str) -> bool {
    line.starts_with("# The ") && line.contains(" routes below are kept from the earlier file")
}

/// The (op, n, k) a section heading names: `# <op> n = <n>, k = <k>: ...`.
fn section_of(line: &str) -> Option<(gemm_spec::Op, u64, u64)> {
    let (op, tail) = line.strip_prefix("# ")?.split_once(' ')?;
    let op = op.parse::<gemm_spec::Op>().ok()?;
    let (n, rest) = tail.strip_prefix("n = ")?.split_once(", k = ")?;
    let k = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    Some((op, n.parse().ok()?, k.parse().ok()?))
}

/// The (op, n, k) a section is about.
type SectionKey = (gemm_spec::Op, u64, u64);

/// One section of a routes file: its (op, n, k), the 1-based line of its heading, its text.
type Section = (SectionKey, usize, String);

/// A routes file (as this module writes them) cut into its header (every line before the
/// first section heading) and its sections: a `# <op> n = .., k = ..:` heading, then that
/// (n, k)'s notes and routes up to the next heading, without trailing blank lines. An earlier
/// run's note on what it kept ends a section and belongs to none: a run writes its own.
fn sections_of(text: &str) -> (String, Vec<Section>) {
    let mut header = String::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut in_section = false;
    for (i, line) in text.lines().enumerate() {
        if is_kept_note(line) {
            in_section = false;
            continue;
        }
        if let Some(key) = section_of(line) {
            sections.push((key, i + 1, String::new()));
            in_section = true;
        }
        match sections.last_mut() {
            Some((_, _, body)) if in_section => {
                body.push_str(line);
                body.push('\n');
            }
            Some(_) => {}
            None => {
                header.push_str(line);
                header.push('\n');
            }
        }
    }
    for (_, _, body) in &mut sections {
        let trimmed = body.trim_end_matches('\n').len();
        body.truncate(trimmed);
        body.push('\n');
    }
    let trimmed = header.trim_end_matches('\n').len();
    header.truncate(trimmed);
    (header, sections)
}

/// The file to write: `tuned` (this run's header and sections, from [`routes_file`]), with
/// `note` (what was kept, and why) as the header's last paragraph, and the sections of the
/// earlier file `old` that this run did not retune (`retuned` says which it did), verbatim.
/// Every section in (op, n, k) order, whichever run wrote it: a run over a few shapes changes
/// only their sections, so the file's diff (and the generated tables' snapshots) shows what
/// the run changed. A run of one op keeps what earlier runs tuned for the others, so NN, NT
/// and TN can be tuned in separate runs into one file, and a run stopped by its time limit
/// keeps the earlier routes of the shapes it did not reach. In a section it retuned, the
/// earlier routes it did not tune (`untuned`: by the 1-based line of their `[[route]]` in
/// `old`, those of another dtype or policy) stay too, after this run's, with their notes: so
/// bf16 and TF32 can be tuned in separate runs over the same (n, k).
pub fn assembled(
    tuned: &str,
    old: &str,
    retuned: impl Fn(gemm_spec::Op, u64, u64) -> bool,
    untuned: impl Fn(usize) -> bool,
    note: Option<&str>,
) -> String {
    let (mut header, mut sections) = sections_of(tuned);
    let (_, earlier) = sections_of(old);
    for (key, _, body) in &mut sections {
        if let Some((_, start, before)) = earlier.iter().find(|(k, _, _)| k == key) {
            *body = carried_over(body, before) + &untuned_routes(before, *start, &untuned);
        }
    }
    for (key, start, before) in earlier {
        let (op, n, k) = key;
        if !retuned(op, n, k) {
            sections.push((key, start, before));
        } else if !sections.iter().any(|(k, _, _)| *k == key) {
            // Retuned with nothing to write for the run's dtype: the others' routes stay.
            let others = untuned_routes(&before, start, &untuned);
            if !others.is_empty() {
                let heading = before.lines().next().unwrap_or_default();
                sections.push((key, start, format!("{heading}\n{others}")));
            }
        }
    }
    // Stable: a key in both (never, as this run wrote what it retuned) keeps this run's first.
    sections.sort_by_key(|(key, _, _)| *key);
    if let Some(note) = note {
        header.push_str("\n#\n");
        for line in wrap(&comment_text(note), WIDTH - 2) {
            let _ = writeln!(header, "# {line}");
        }
        let trimmed = header.trim_end_matches('\n').len();
        header.truncate(trimmed);
    }
    let mut s = header;
    s.push('\n');
    for (_, _, body) in sections {
        s.push('\n');
        s.push_str(&body);
    }
    s
}

/// The routes of the earlier section `before` (its heading at line `start` of its file) whose
/// `[[route]]` line `untuned` accepts, each with the notes just above it, in their order.
fn untuned_routes(before: &str, start: usize, untuned: &impl Fn(usize) -> bool) -> String {
    let mut out = String::new();
    let mut notes: Vec<&str> = Vec::new();
    // The route being read, and whether it is kept.
    let mut block: Option<bool> = None;
    for (i, line) in before.lines().enumerate().skip(1) {
        if line.trim() == "[[route]]" {
            let keep = untuned(start + i);
            if keep {
                for n in &notes {
                    out.push_str(n);
                    out.push('\n');
                }
                out.push_str(line);
                out.push('\n');
            }
            notes.clear();
            block = Some(keep);
        } else if line.starts_with('#') || line.trim().is_empty() {
            if block.take().is_some() {
                notes.clear();
            }
            if line.starts_with('#') {
                notes.push(line);
            }
        } else if block == Some(true) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A retuned section's `body` with what the earlier file's section `before` said that this
/// run did not measure: the heading's layers of models this run's list does not name (the
/// routes serve them still), and, for each m range kept untimed below `--from-m`, the earlier
/// notes of that range (their times and gains) in place of the bare "kept" note, when they
/// name the same kernel.
fn carried_over(body: &str, before: &str) -> String {
    let mut out = String::new();
    for (i, line) in body.lines().enumerate() {
        if i == 0 {
            out.push_str(&merged_heading(
                line,
                before.lines().next().unwrap_or_default(),
            ));
        } else if let Some(notes) = earlier_notes(line, before) {
            out.push_str(&notes);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The layers of a section heading `# <op> n = .., k = ..: a; b` (`["a", "b"]`), and what comes
/// before them.
fn heading_layers(line: &str) -> (&str, Vec<&str>) {
    match line.split_once(':') {
        Some((head, layers)) => (
            head,
            layers
                .split(';')
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect(),
        ),
        None => (line, Vec::new()),
    }
}

/// `heading` naming the layers of `earlier` (the same section's heading in the earlier file)
/// too: the earlier ones first, in their order, then this run's that they lack, each once. So
/// runs over two shape lists in turn write the same heading each time.
fn merged_heading(heading: &str, earlier: &str) -> String {
    let (head, ours) = heading_layers(heading);
    let (_, before) = heading_layers(earlier);
    let mut all: Vec<&str> = Vec::new();
    for l in before.into_iter().chain(ours) {
        if !all.contains(&l) {
            all.push(l);
        }
    }
    if all.is_empty() {
        return heading.to_string();
    }
    format!("{head}: {}", all.join("; "))
}

/// For a note `# m <range>: <kernel>, kept from the earlier tuning (not timed: below
/// --from-m)`, the earlier section's notes of that range (`# m <range> (timed ...` or `# m
/// <range>: ...`), if there are any and each is about `<kernel>`; the lines joined, each ending
/// in "kept from the earlier tuning".
fn earlier_notes(line: &str, before: &str) -> Option<String> {
    let rest = line.strip_prefix("# m ")?.strip_suffix(KEPT_BELOW_FROM_M)?;
    let (range, kernel) = rest.strip_suffix(", ")?.split_once(": ")?;
    let notes: Vec<&str> = before
        .lines()
        .filter(|l| {
            l.strip_prefix("# m ")
                .and_then(|t| t.strip_prefix(range))
                .is_some_and(|t| t.starts_with(' ') || t.starts_with(':'))
        })
        .collect();
    // The kernel a note is about comes first after its range: `(timed ...): <kernel> ..`.
    let names_it = |l: &&str| {
        l.split_once(": ").is_some_and(|(_, t)| {
            t.split(|c: char| c.is_whitespace() || c == ',').next() == Some(kernel)
        })
    };
    // Each says it was kept (this run did not time it), as a note of a range timed then kept
    // already does.
    (!notes.is_empty() && notes.iter().all(names_it)).then(|| {
        notes
            .iter()
            .map(|l| {
                if l.contains(KEPT) {
                    l.to_string()
                } else {
                    format!("{l}, {KEPT}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The ops of the sections of `old` that [`assembled`] keeps, in first-seen order.
pub fn kept_ops(
    old: &str,
    retuned: impl Fn(gemm_spec::Op, u64, u64) -> bool,
) -> Vec<gemm_spec::Op> {
    let mut ops = Vec::new();
    for (op, n, k) in old.lines().filter_map(section_of) {
        if !retuned(op, n, k) && !ops.contains(&op) {
            ops.push(op);
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

    /// Sections of the ops in `ops`, every (n, k), are retuned.
    fn ops(ops: &[Op]) -> impl Fn(Op, u64, u64) -> bool + '_ {
        move |op, _, _| ops.contains(&op)
    }

    /// The sections `assembled` keeps of `old` when `retuned` were retuned and this run wrote
    /// nothing: the text after the header.
    fn kept(old: &str, retuned: impl Fn(Op, u64, u64) -> bool) -> String {
        let file = assembled("# header\n", old, retuned, |_| false, None);
        file.strip_prefix("# header\n").unwrap().to_string()
    }

    #[test]
    fn a_run_of_one_op_keeps_the_other_ops_sections_verbatim() {
        assert_eq!(
            kept(OLD, ops(&[Op::Nt])),
            "\n# nn n = 512, k = 3584: Qwen2.5 7B k_proj\n# m <= 16: a note\n[[route]]\nop = \"nn\"\nkernel = \"a.b\"\n\n# nn n = 768, k = 768: c_proj\n[[route]]\nop = \"nn\"\nkernel = \"e.f\"\n"
        );
        assert_eq!(kept_ops(OLD, ops(&[Op::Nt])), [Op::Nn]);
        assert_eq!(
            kept(OLD, ops(&[Op::Nn])),
            "\n# nt n = 4096, k = 4096: o_proj\n[[route]]\nop = \"nt\"\nkernel = \"c.d\"\n"
        );
        // Every op tuned again, or no earlier file: nothing is kept; the header never is.
        assert_eq!(kept(OLD, ops(&[Op::Nn, Op::Nt])), "");
        assert!(kept_ops(OLD, ops(&[Op::Nn, Op::Nt])).is_empty());
        assert_eq!(kept("", ops(&[Op::Nn])), "");
        // An earlier run's note on what it kept is not part of the section before it.
        let noted = format!("{OLD}# The nt routes below are kept from the earlier file (...); their\n# comments carry\n# their own times.\n\n# nt n = 1, k = 2: x\n[[route]]\n");
        assert_eq!(kept(&noted, ops(&[Op::Nt])), kept(OLD, ops(&[Op::Nt])));
        assert!(kept(&noted, ops(&[Op::Nn]))
            .starts_with("\n# nt n = 1, k = 2: x\n[[route]]\n\n# nt n = 4096"));
    }

    #[test]
    fn a_run_stopped_early_keeps_the_sections_it_did_not_reach() {
        // nn and nt tuned, but nn n = 768, k = 768 was not reached.
        let retuned = |op: Op, n: u64, k: u64| op != Op::Nn || (n, k) != (768, 768);
        assert_eq!(
            kept(OLD, retuned),
            "\n# nn n = 768, k = 768: c_proj\n[[route]]\nop = \"nn\"\nkernel = \"e.f\"\n"
        );
        assert_eq!(kept_ops(OLD, retuned), [Op::Nn]);
        assert_eq!(
            section_of("# nn n = 512, k = 3584: Qwen2.5 7B k_proj"),
            Some((Op::Nn, 512, 3584))
        );
        assert_eq!(section_of("# m <= 16: a note"), None);
    }

    #[test]
    fn a_retuned_section_keeps_the_earlier_notes_of_ranges_below_from_m_and_its_layers() {
        let old = "# header\n\n# nt n = 4096, k = 14336: Llama-3 8B down_proj; Mistral 7B down_proj\n# m 129-256 (timed at m = 256): tcwide.pp128 0.0506 ms, kept from the earlier tuning\n[[route]]\nkernel = \"tcwide.pp128\"\n# m 513-1024 (timed at m = 1024): tcwide.wide 0.1517 ms against 0.1593 ms for the routed tcwide.mid2 (4.8% faster)\n[[route]]\nkernel = \"tcwide.wide\"\n# m 1025-2048: tcwide.mid2, kept from the earlier tuning (not timed: below --from-m)\n[[route]]\nkernel = \"tcwide.mid2\"\n";
        let tuned = "# this run\n\n# nt n = 4096, k = 14336: Llama-3 8B down_proj\n# m 129-256: tcwide.pp128, kept from the earlier tuning (not timed: below --from-m)\n[[route]]\nkernel = \"tcwide.pp128\"\n# m 513-1024: tcwide.mid2, kept from the earlier tuning (not timed: below --from-m)\n[[route]]\nkernel = \"tcwide.mid2\"\n# m 1025-2048: tcwide.mid2, kept from the earlier tuning (not timed: below --from-m)\n# m >= 8193 (timed at m = 32768): tcwide.sq192 1 ms against 2 ms for the routed tcwide.mid2 (50.0% faster)\n[[route]]\nkernel = \"tcwide.sq192\"\n";
        let file = assembled(tuned, old, |_, _, _| true, |_| false, None);
        assert_eq!(
            file,
            // The earlier layers this run's list lacks; the 129-256 note with its time; the
            // 513-1024 one stays bare (the earlier note names another kernel); 1025-2048's
            // earlier note was itself a "kept" one, and is written as it was.
            "# this run\n\n# nt n = 4096, k = 14336: Llama-3 8B down_proj; Mistral 7B down_proj\n# m 129-256 (timed at m = 256): tcwide.pp128 0.0506 ms, kept from the earlier tuning\n[[route]]\nkernel = \"tcwide.pp128\"\n# m 513-1024: tcwide.mid2, kept from the earlier tuning (not timed: below --from-m)\n[[route]]\nkernel = \"tcwide.mid2\"\n# m 1025-2048: tcwide.mid2, kept from the earlier tuning (not timed: below --from-m)\n# m >= 8193 (timed at m = 32768): tcwide.sq192 1 ms against 2 ms for the routed tcwide.mid2 (50.0% faster)\n[[route]]\nkernel = \"tcwide.sq192\"\n"
        );
        // Assembled again over its own output, the same text.
        assert_eq!(
            assembled(tuned, &file, |_, _, _| true, |_| false, None),
            file
        );
        // A range's note is not another's whose label begins the same (m 1025-2048 vs m 1025-20480).
        assert_eq!(
            earlier_notes(
                "# m 1025-2048: a.b, kept from the earlier tuning (not timed: below --from-m)",
                "# m 1025-20480 (timed at m = 2048): a.b 1 ms\n"
            ),
            None
        );
        // Several notes of one range (a route merged over two buckets earlier is two notes of
        // two ranges, but one range may carry a timed note and a later "kept" one): all, joined,
        // each saying it was kept; a timed note gains that ending.
        let before = "# nt n = 1, k = 2: x\n# m 17-32 (timed at m = 32): a.b 1 ms against 2 ms for the routed c.d (50.0% faster)\n# m 17-32: a.b, kept from the earlier tuning (not timed: below --from-m)\n[[route]]\n";
        let kept = "# m 17-32: a.b, kept from the earlier tuning (not timed: below --from-m)";
        assert_eq!(
            earlier_notes(kept, before).as_deref(),
            Some("# m 17-32 (timed at m = 32): a.b 1 ms against 2 ms for the routed c.d (50.0% faster), kept from the earlier tuning\n# m 17-32: a.b, kept from the earlier tuning (not timed: below --from-m)")
        );
        // One of them about another kernel: the bare note stays.
        let mixed = before.replace("# m 17-32: a.b", "# m 17-32: c.d");
        assert_eq!(earlier_notes(kept, &mixed), None);
        // No earlier note of the range, or a line that is no "kept" note: nothing to carry.
        assert_eq!(earlier_notes(kept, "# nt n = 1, k = 2: x\n"), None);
        assert_eq!(
            earlier_notes("# m 17-32 (timed at m = 32): a.b 1 ms", before),
            None
        );
    }

    #[test]
    fn a_merged_heading_names_each_layer_once_in_a_stable_order() {
        let h = |layers: &str| format!("# nn n = 1, k = 2:{layers}");
        // The earlier layers first, then this run's that they lack.
        assert_eq!(merged_heading(&h(" x"), &h(" y; x")), h(" y; x"));
        assert_eq!(merged_heading(&h(" x"), &h(" x")), h(" x"));
        assert_eq!(merged_heading(&h(" x; z"), &h(" y")), h(" y; x; z"));
        // Two shape lists in turn: the heading stays as it is.
        let once = merged_heading(&h(" x"), &h(" y"));
        assert_eq!(merged_heading(&h(" y"), &once), once);
        assert_eq!(merged_heading(&h(" x"), &once), once);
        // Duplicates in the earlier heading are written once.
        assert_eq!(merged_heading(&h(" x"), &h(" y; y; x")), h(" y; x"));
        // Headings without layers, with or without the space after the colon, or without it.
        assert_eq!(merged_heading(&h(" "), &h(" y")), h(" y"));
        assert_eq!(merged_heading(&h(""), &h(" y")), h(" y"));
        assert_eq!(merged_heading("# nn n = 1, k = 2", &h(" y")), h(" y"));
        assert_eq!(merged_heading(&h(" "), &h("")), h(" "));
        assert_eq!(merged_heading(&h(" x"), ""), h(" x"));
    }

    #[test]
    fn a_rewritten_section_keeps_the_routes_of_another_dtype_with_their_notes() {
        // The earlier file: nn 512 x 3584 holds a bf16 route (line 5) and a TF32 route (line
        // 10); nn 768 x 768 a TF32 route only (line 15). This run tuned bf16 over both.
        let old = "# header\n\n# nn n = 512, k = 3584: k_proj\n# m 17-32: bf16 note\n[[route]]\ndtype = \"any\"\nkernel = \"tcdecsplit.a\"\n# m 17-32: tf32 note\n# m 33-64: tf32 note\n[[route]]\ndtype = \"any\"\nkernel = \"tcdec32split.b\"\n\n# nn n = 768, k = 768: c_proj\n[[route]]\nkernel = \"tcdec32split.c\"\n";
        assert_eq!(old.lines().nth(4), Some("[[route]]"));
        assert_eq!(old.lines().nth(9), Some("[[route]]"));
        assert_eq!(old.lines().nth(14), Some("[[route]]"));
        let tuned = "# this run\n\n# nn n = 512, k = 3584: k_proj\n# m 17-32: new bf16 note\n[[route]]\nkernel = \"tcdecsplit.n\"\n";
        let bf16_lines = [5];
        let file = assembled(
            tuned,
            old,
            |_, _, _| true,
            |line| !bf16_lines.contains(&line),
            None,
        );
        assert_eq!(
            file,
            "# this run\n\n# nn n = 512, k = 3584: k_proj\n# m 17-32: new bf16 note\n[[route]]\nkernel = \"tcdecsplit.n\"\n# m 17-32: tf32 note\n# m 33-64: tf32 note\n[[route]]\ndtype = \"any\"\nkernel = \"tcdec32split.b\"\n\n# nn n = 768, k = 768: c_proj\n[[route]]\nkernel = \"tcdec32split.c\"\n"
        );
        // Every route tuned by this run: the earlier ones give way, as before.
        let all = assembled(tuned, old, |_, _, _| true, |_| false, None);
        assert!(
            !all.contains("tcdec32split") && !all.contains("tcdecsplit.a"),
            "{all}"
        );
    }

    #[test]
    fn sections_are_written_in_op_n_k_order_whichever_run_wrote_them() {
        // This run retuned nt 4096 x 4096 and wrote nn 600 x 3584 anew; the earlier file's
        // other sections go around them, so a rerun's diff is its own sections only.
        let tuned = "# Routes of this run\n#\n# Include it\n\n# nt n = 4096, k = 4096: o_proj\n[[route]]\nkernel = \"x.y\"\n\n# nn n = 600, k = 3584: new\n[[route]]\nkernel = \"z.w\"\n";
        let retuned = |op: Op, n: u64, k: u64| {
            (op, n, k) == (Op::Nt, 4096, 4096) || (op, n, k) == (Op::Nn, 600, 3584)
        };
        let file = assembled(
            tuned,
            OLD,
            retuned,
            |_| false,
            Some("This run tuned nt; the other sections are the earlier file's."),
        );
        assert_eq!(
            file,
            "# Routes of this run\n#\n# Include it\n#\n# This run tuned nt; the other sections are the earlier file's.\n\n# nn n = 512, k = 3584: Qwen2.5 7B k_proj\n# m <= 16: a note\n[[route]]\nop = \"nn\"\nkernel = \"a.b\"\n\n# nn n = 600, k = 3584: new\n[[route]]\nkernel = \"z.w\"\n\n# nn n = 768, k = 768: c_proj\n[[route]]\nop = \"nn\"\nkernel = \"e.f\"\n\n# nt n = 4096, k = 4096: o_proj\n[[route]]\nkernel = \"x.y\"\n"
        );
        // Assembling the written file again over itself, nothing retuned, changes nothing but
        // the header (this run's).
        let again = assembled("# Routes of this run\n#\n# Include it\n#\n# This run tuned nt; the other sections are the earlier file's.\n", &file, |_, _, _| false, |_| false, None);
        assert_eq!(again, file);
    }
}
