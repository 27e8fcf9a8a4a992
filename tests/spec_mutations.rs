//! Mutation property test of the shipped specs: keys renamed or deleted, numbers set at and past
//! every bound, list entries and `[[tile]]`/`[[route]]` blocks removed or duplicated, one to
//! three mutations a case. For every mutant the tool must not panic, and
//!
//! - an accepted mutant passes the generate step with no cubins (what `gemm-aot build
//!   --no-cubins` runs: validation, planning, every CUDA and Rust file written);
//! - a rejected one yields only spec errors, each naming a spec file and a line > 0, and
//!   writes nothing into the output folder.
//!
//! The specs are read from `specs/` when the test runs, so a new tier is mutated too. Cases per
//! property: 48, or `PROPTEST_CASES`. A failure prints the mutant (file, line, text before and
//! after) as well as proptest's minimal input.

use gemm_codegen::{build, BuildError, BuildOptions, CompileMode};
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One shipped spec file: its name and text.
#[derive(Clone, Debug)]
struct SpecFile {
    name: String,
    text: String,
}

fn shipped() -> Vec<SpecFile> {
    let dir = gemm_aot_tests::shipped_specs();
    let mut v: Vec<SpecFile> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| SpecFile {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&p).unwrap(),
        })
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(v.len() >= 2, "families.toml and at least one tier");
    v
}

// ---------------------------------------------------------------------------------------------
// A small TOML scanner: which bytes are code, string or comment; where keys, numbers, arrays
// and array-of-tables blocks are. Good enough for the shipped specs (and their mutants).

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Code,
    Str,
    Comment,
}

fn classes(text: &str) -> Vec<Class> {
    let b = text.as_bytes();
    let mut c = vec![Class::Code; b.len()];
    let mut i = 0;
    let fill = |c: &mut Vec<Class>, from: usize, to: usize, k: Class| {
        for x in c.iter_mut().take(to.min(b.len())).skip(from) {
            *x = k;
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"\"\"\"") || rest.starts_with(b"'''") {
            let delim = &rest[..3];
            let literal = delim[0] == b'\'';
            let mut j = i + 3;
            while j < b.len() && !b[j..].starts_with(delim) {
                j += if !literal && b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 3).min(b.len());
            fill(&mut c, i, end, Class::Str);
            i = end;
        } else if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            let mut j = i + 1;
            while j < b.len() && b[j] != q && b[j] != b'\n' {
                j += if q == b'"' && b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            fill(&mut c, i, end, Class::Str);
            i = end;
        } else if b[i] == b'#' {
            let mut j = i;
            while j < b.len() && b[j] != b'\n' {
                j += 1;
            }
            fill(&mut c, i, j, Class::Comment);
            i = j;
        } else {
            i += 1;
        }
    }
    c
}

fn is_key_byte(x: u8) -> bool {
    x.is_ascii_alphanumeric() || x == b'_' || x == b'-' || x == b'.'
}

/// The previous byte that is not a space, a tab or in a comment (`None` at the start).
fn prev_code(b: &[u8], cls: &[Class], mut i: usize) -> Option<u8> {
    while i > 0 {
        i -= 1;
        if cls[i] != Class::Comment && b[i] != b' ' && b[i] != b'\t' {
            return Some(b[i]);
        }
    }
    None
}

/// The next byte that is not a space, a tab or in a comment, with its offset.
fn next_code(b: &[u8], cls: &[Class], mut i: usize) -> Option<(usize, u8)> {
    while i < b.len() {
        if cls[i] != Class::Comment && b[i] != b' ' && b[i] != b'\t' {
            return Some((i, b[i]));
        }
        i += 1;
    }
    None
}

/// Where a key is: its byte range, and whether it sits inside an inline table.
#[derive(Clone, Debug)]
struct KeySite {
    range: std::ops::Range<usize>,
    inline: bool,
}

fn key_sites(text: &str) -> Vec<KeySite> {
    let b = text.as_bytes();
    let cls = classes(text);
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if cls[i] == Class::Code
            && (b[i].is_ascii_alphabetic() || b[i] == b'_')
            && (i == 0 || !is_key_byte(b[i - 1]))
        {
            let mut j = i;
            while j < b.len() && cls[j] == Class::Code && is_key_byte(b[j]) {
                j += 1;
            }
            let before = prev_code(b, &cls, i);
            let after = next_code(b, &cls, j);
            let eq = matches!(after, Some((p, b'=')) if b.get(p + 1) != Some(&b'='));
            let line_start = before.is_none() || before == Some(b'\n');
            let in_table = matches!(before, Some(b'{') | Some(b','));
            if eq && (line_start || in_table) {
                v.push(KeySite {
                    range: i..j,
                    inline: !line_start,
                });
            }
            i = j;
        } else {
            i += 1;
        }
    }
    v
}

/// End of the value that starts after `=` at `eq`: for a top-level key the end of its line at
/// bracket depth 0; inside an inline table the next `,` or `}` at depth 0.
fn value_end(b: &[u8], cls: &[Class], eq: usize, inline: bool) -> usize {
    let mut depth = 0i32;
    let mut i = eq + 1;
    while i < b.len() {
        if cls[i] == Class::Code {
            match b[i] {
                b'[' | b'{' => depth += 1,
                b']' | b'}' if depth > 0 => depth -= 1,
                b'}' | b',' if inline && depth == 0 => return i,
                b'\n' if !inline && depth == 0 => return i,
                _ => {}
            }
        } else if cls[i] == Class::Comment && !inline && depth == 0 {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// Integer literals in code (not parts of keys or names).
fn number_sites(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let cls = classes(text);
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if cls[i] == Class::Code && b[i].is_ascii_digit() && (i == 0 || !is_key_byte(b[i - 1])) {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'_') {
                j += 1;
            }
            if j >= b.len() || !is_key_byte(b[j]) || b[j] == b'_' {
                v.push(i..j);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    v
}

/// The entries of every array value (`key = [ ... ]`, one line or several): trimmed byte
/// ranges, comments and blank space left out.
fn arrays(text: &str) -> Vec<Vec<std::ops::Range<usize>>> {
    let b = text.as_bytes();
    let cls = classes(text);
    let mut out = Vec::new();
    for open in 0..b.len() {
        if cls[open] != Class::Code || b[open] != b'[' || prev_code(b, &cls, open) != Some(b'=') {
            continue;
        }
        let mut entries = Vec::new();
        let mut depth = 0i32;
        let mut start = open + 1;
        let mut i = open + 1;
        while i < b.len() {
            if cls[i] == Class::Code {
                match b[i] {
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' if depth > 0 => depth -= 1,
                    b',' | b']' if depth == 0 => {
                        let mut s = start;
                        let mut e = i;
                        let blank =
                            |k: usize| cls[k] == Class::Comment || b[k].is_ascii_whitespace();
                        while s < e && blank(s) {
                            s += 1;
                        }
                        while e > s && blank(e - 1) {
                            e -= 1;
                        }
                        if s < e {
                            entries.push(s..e);
                        }
                        start = i + 1;
                        if b[i] == b']' {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        if !entries.is_empty() {
            out.push(entries);
        }
    }
    out
}

/// Line ranges (byte ranges of whole lines) of `[[...]]` blocks: from the header to the next
/// table header.
fn blocks(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut starts = Vec::new();
    let mut headers = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[') {
            headers.push(pos);
            if t.starts_with("[[") {
                starts.push(pos);
            }
        }
        pos += line.len();
    }
    starts
        .into_iter()
        .map(|s| {
            let end = headers
                .iter()
                .copied()
                .find(|&h| h > s)
                .unwrap_or(text.len());
            s..end
        })
        .collect()
}

/// Table headers: the byte range of the name inside the brackets.
fn header_sites(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut v = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let lead = line.len() - line.trim_start().len();
        let t = &line[lead..];
        if t.starts_with('[') {
            let open = t.bytes().take_while(|&c| c == b'[').count();
            if let Some(close) = t.find(']') {
                v.push(pos + lead + open..pos + lead + close);
            }
        }
        pos += line.len();
    }
    v
}

fn line_at(text: &str, offset: usize) -> usize {
    gemm_spec::line_of(text, offset)
}

fn line_text(text: &str, line: usize) -> &str {
    text.lines().nth(line.saturating_sub(1)).unwrap_or("")
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// Values written in place of a number: every bound the rules and the ABI have, each side of it.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "16",
    "31",
    "32",
    "33",
    "255",
    "256",
    "257",
    "1023",
    "1024",
    "1025",
    "65535",
    "65536",
    "65537",
    "101376",
    "101377",
    "166912",
    "166913",
    "232448",
    "232449",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "99999999999999999999999999",
    "-1",
    "ORIG-1",
    "ORIG+1",
    "ORIGx2",
];

#[derive(Clone, Copy, Debug)]
enum Kind {
    RenameKey,
    DeleteKey,
    RenameHeader,
    Number,
    RemoveEntry,
    DuplicateEntry,
    RemoveBlock,
    DuplicateBlock,
}

const KEY_KINDS: &[Kind] = &[Kind::RenameKey, Kind::DeleteKey, Kind::RenameHeader];
const NUMBER_KINDS: &[Kind] = &[Kind::Number];
const LIST_KINDS: &[Kind] = &[
    Kind::RemoveEntry,
    Kind::DuplicateEntry,
    Kind::RemoveBlock,
    Kind::DuplicateBlock,
];
const ALL_KINDS: &[Kind] = &[
    Kind::RenameKey,
    Kind::DeleteKey,
    Kind::RenameHeader,
    Kind::Number,
    Kind::RemoveEntry,
    Kind::DuplicateEntry,
    Kind::RemoveBlock,
    Kind::DuplicateBlock,
];

/// One mutation as drawn: numbers taken modulo the count of files, kinds, sites, entries and
/// replacements when applied (so shrinking goes towards the first of each).
#[derive(Clone, Debug)]
struct Draw {
    file: u32,
    kind: u32,
    site: u32,
    entry: u32,
    how: u32,
}

fn draw() -> impl Strategy<Value = Draw> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
    )
        .prop_map(|(file, kind, site, entry, how)| Draw {
            file,
            kind,
            site,
            entry,
            how,
        })
}

/// `x` as an index into `n` things (`n > 0`).
fn pick(x: u32, n: usize) -> usize {
    x as usize % n.max(1)
}

/// Applies one mutation; returns a description (`file:line: before -> after`), or `None` when
/// the file has no site of that kind.
fn apply(files: &mut [SpecFile], kinds: &[Kind], d: &Draw) -> Option<String> {
    let fi = pick(d.file, files.len());
    let f = &mut files[fi];
    let text = f.text.clone();
    let kind = kinds[pick(d.kind, kinds.len())];
    let (start, end, new): (usize, usize, String) = match kind {
        Kind::RenameKey => {
            let sites = key_sites(&text);
            let s = &sites.get(pick(d.site, sites.len()))?.range;
            let key = &text[s.clone()];
            let other = &sites[pick(d.entry, sites.len())].range;
            let new = match pick(d.how, 4) {
                0 => format!("{key}x"),
                1 => key[..key.len() - 1].to_string(),
                2 => key.to_uppercase(),
                _ => text[other.clone()].to_string(),
            };
            (s.start, s.end, new)
        }
        Kind::DeleteKey => {
            let sites = key_sites(&text);
            let s = sites.get(pick(d.site, sites.len()))?;
            let b = text.as_bytes();
            let cls = classes(&text);
            let (eq, _) = next_code(b, &cls, s.range.end)?;
            let mut end = value_end(b, &cls, eq, s.inline);
            let mut start = s.range.start;
            if s.inline {
                if b.get(end) == Some(&b',') {
                    end += 1;
                    while b.get(end) == Some(&b' ') {
                        end += 1;
                    }
                } else if prev_code(b, &cls, start) == Some(b',') {
                    start = text[..start].rfind(',').unwrap_or(start);
                }
            }
            (start, end, String::new())
        }
        Kind::RenameHeader => {
            let sites = header_sites(&text);
            let s = sites.get(pick(d.site, sites.len()))?;
            let name = &text[s.clone()];
            let new = match pick(d.how, 3) {
                0 => format!("{name}x"),
                1 => name[..name.len().saturating_sub(1)].to_string(),
                _ => text[sites[pick(d.entry, sites.len())].clone()].to_string(),
            };
            (s.start, s.end, new)
        }
        Kind::Number => {
            let sites = number_sites(&text);
            let s = sites.get(pick(d.site, sites.len()))?;
            let orig: i128 = text[s.clone()].replace('_', "").parse().ok()?;
            let new = match NUMBERS[pick(d.how, NUMBERS.len())] {
                "ORIG-1" => (orig - 1).to_string(),
                "ORIG+1" => (orig + 1).to_string(),
                "ORIGx2" => (orig * 2).to_string(),
                v => v.to_string(),
            };
            (s.start, s.end, new)
        }
        Kind::RemoveEntry | Kind::DuplicateEntry => {
            let lists = arrays(&text);
            let list = lists.get(pick(d.site, lists.len()))?;
            let e = list[pick(d.entry, list.len())].clone();
            if matches!(kind, Kind::DuplicateEntry) {
                (e.end, e.end, format!(", {}", &text[e.clone()]))
            } else {
                // The entry and the comma after it, or before it when it is the last.
                let b = text.as_bytes();
                let cls = classes(&text);
                match next_code(b, &cls, e.end) {
                    Some((p, b',')) => (e.start, p + 1, String::new()),
                    _ => match prev_code(b, &cls, e.start) {
                        Some(b',') => (text[..e.start].rfind(',')?, e.end, String::new()),
                        _ => (e.start, e.end, String::new()),
                    },
                }
            }
        }
        Kind::RemoveBlock | Kind::DuplicateBlock => {
            let bl = blocks(&text);
            let r = bl.get(pick(d.site, bl.len()))?.clone();
            if matches!(kind, Kind::DuplicateBlock) {
                let mut copy = text[r.clone()].to_string();
                if !copy.ends_with('\n') {
                    copy.insert(0, '\n');
                }
                (r.end, r.end, copy)
            } else {
                (r.start, r.end, String::new())
            }
        }
    };
    let line = line_at(&text, start);
    let before = line_text(&text, line).to_string();
    f.text = format!("{}{}{}", &text[..start], new, &text[end..]);
    let after = line_text(&f.text, line).to_string();
    let removed = text[start..end].lines().count();
    Some(format!(
        "{}:{line}: {kind:?}: `{before}` -> `{after}`{}",
        f.name,
        if removed > 1 {
            format!(" ({removed} lines replaced by {:?})", new)
        } else {
            String::new()
        }
    ))
}

// ---------------------------------------------------------------------------------------------
// The property.

fn check_mutant(kinds: &[Kind], draws: &[Draw]) -> Result<(), TestCaseError> {
    let mut files = shipped();
    let applied: Vec<String> = draws
        .iter()
        .filter_map(|d| apply(&mut files, kinds, d))
        .collect();
    prop_assume!(!applied.is_empty());
    check(&files, &applied.join("\n  ")).map_err(TestCaseError::fail)
}

/// Builds `files` with no cubins and checks the outcome; `mutant` describes them for messages.
fn check(files: &[SpecFile], mutant: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    std::fs::create_dir(&specs).unwrap();
    for f in files {
        std::fs::write(specs.join(&f.name), &f.text).unwrap();
    }
    let out = dir.path().join("out");
    let mut opts = BuildOptions::new(&specs, &out, "spec_mutations test");
    opts.compile = CompileMode::NoCubins;
    opts.jobs = 1;
    let result = catch_unwind(AssertUnwindSafe(|| build(&opts, &|_| {}))).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("the tool panicked ({msg}) on the mutant\n  {mutant}")
    })?;
    let fail = |what: String| Err(format!("{what}\n  mutant: {mutant}"));
    match result {
        Ok(report) => {
            if report.files_written == 0 || !out.join("rust/kernels.rs").is_file() {
                return fail("an accepted mutant wrote no Rust".into());
            }
            for t in &report.catalog.specs.tiers {
                // One source a compile unit (family, conversions) under `cuda/<tier>/`.
                let units = std::fs::read_dir(out.join("cuda").join(&t.name)).is_ok_and(|d| {
                    d.flatten()
                        .any(|e| e.path().extension().is_some_and(|x| x == "cu"))
                });
                if !units {
                    return fail(format!("no CUDA source for tier {}", t.name));
                }
            }
        }
        Err(BuildError::Spec(errors)) => {
            if errors.0.is_empty() {
                return fail("rejected with no error listed".into());
            }
            for e in &errors.0 {
                let Some(file) = files.iter().find(|f| f.name == e.location.file) else {
                    return fail(format!("an error that names no spec file: `{e}`"));
                };
                let lines = file.text.lines().count().max(1);
                if e.location.line == 0 || e.location.line > lines {
                    return fail(format!("an error without a line of {}: `{e}`", file.name));
                }
                let prefix = format!("{}:{}: ", e.location.file, e.location.line);
                if !e.to_string().starts_with(&prefix) {
                    return fail(format!("an error not shown as file:line: `{e}`"));
                }
            }
            if out.exists() {
                return fail("a rejected mutant wrote into the output folder".into());
            }
        }
        Err(other) => return fail(format!("rejected without a spec file and line: `{other}`")),
    }
    Ok(())
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    ProptestConfig {
        cases,
        // Bugs found here are reported by the mutant text; no regression files in the tree.
        failure_persistence: None,
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn renamed_or_deleted_keys(draws in prop::collection::vec(draw(), 1..=2)) {
        check_mutant(KEY_KINDS, &draws)?;
    }

    #[test]
    fn numbers_at_and_past_every_bound(draws in prop::collection::vec(draw(), 1..=2)) {
        check_mutant(NUMBER_KINDS, &draws)?;
    }

    #[test]
    fn list_entries_and_blocks_removed_or_duplicated(draws in prop::collection::vec(draw(), 1..=2)) {
        check_mutant(LIST_KINDS, &draws)?;
    }

    #[test]
    fn mixed_mutations(draws in prop::collection::vec(draw(), 1..=3)) {
        check_mutant(ALL_KINDS, &draws)?;
    }
}

// ---------------------------------------------------------------------------------------------
// The scanner itself, on a known text.

#[test]
fn the_scanner_finds_keys_numbers_lists_and_blocks() {
    let text = "# c = 1\n[tier]\nname = \"a#b = 2\"\nlist = [\"x\", \"y\",]\n\
                doc = \"\"\"\nq = 3\n\"\"\"\n[[tile]]\nm = { max = 4, min = 5 } # z = 6\n[[tile]]\nk = 7\n";
    let keys: Vec<&str> = key_sites(text)
        .iter()
        .map(|s| &text[s.range.clone()])
        .collect();
    assert_eq!(keys, ["name", "list", "doc", "m", "max", "min", "k"]);
    let nums: Vec<&str> = number_sites(text)
        .iter()
        .map(|r| &text[r.clone()])
        .collect();
    assert_eq!(nums, ["4", "5", "7"]);
    let lists: Vec<Vec<&str>> = arrays(text)
        .iter()
        .map(|l| l.iter().map(|r| &text[r.clone()]).collect())
        .collect();
    assert_eq!(lists, [vec!["\"x\"", "\"y\""]]);
    let bl: Vec<&str> = blocks(text).iter().map(|r| &text[r.clone()]).collect();
    assert_eq!(
        bl,
        [
            "[[tile]]\nm = { max = 4, min = 5 } # z = 6\n",
            "[[tile]]\nk = 7\n"
        ]
    );
    let headers: Vec<&str> = header_sites(text)
        .iter()
        .map(|r| &text[r.clone()])
        .collect();
    assert_eq!(headers, ["tier", "tile", "tile"]);

    // Deleting an inline key takes its comma; a number keeps its place.
    let mut files = vec![SpecFile {
        name: "t.toml".into(),
        text: text.into(),
    }];
    let delete_max = Draw {
        file: 0,
        kind: 1,
        site: 4,
        entry: 0,
        how: 0,
    };
    let d = apply(&mut files, ALL_KINDS, &delete_max).unwrap();
    assert!(files[0].text.contains("m = { min = 5 }"), "{d}");
    assert!(d.starts_with("t.toml:9: DeleteKey: "), "{d}");
}

#[test]
fn a_rejected_mutant_names_its_line_and_writes_nothing() {
    // A known rejection through the same checks, so the property's error branch is exercised.
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    gemm_aot_tests::copy_specs(&gemm_aot_tests::shipped_specs(), &specs).unwrap();
    let tier = shipped()
        .into_iter()
        .find(|f| f.text.contains("[tier]"))
        .unwrap();
    let text = tier.text.replacen("[tier]", "[tierx]", 1);
    std::fs::write(specs.join(&tier.name), &text).unwrap();
    let out = dir.path().join("out");
    let mut opts = BuildOptions::new(&specs, &out, "spec_mutations test");
    opts.compile = CompileMode::NoCubins;
    let err = build(&opts, &|_| {}).expect_err("unknown table");
    let BuildError::Spec(errors) = err else {
        panic!("{err}")
    };
    let line = text.lines().position(|l| l == "[tierx]").unwrap() + 1;
    assert!(
        errors
            .0
            .iter()
            .any(|e| e.location.file == tier.name && e.location.line == line),
        "{errors}"
    );
    assert!(!out.exists());
}
