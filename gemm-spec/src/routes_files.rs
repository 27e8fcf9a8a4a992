//! Routes files: `[[route]]` tables kept out of a tier's own file, so that routes a tool writes
//! (`gemm-aot tune`) never edit a hand-written file. A tier lists them in `routes_files`
//! (paths relative to its file); a build may add more for one tier
//! (`gemm_codegen::Builder::routes_file`). Their routes come first in the tier's table: the
//! build's files, then the listed files in order, then the tier's own (or its base's) routes.
//! First match wins, so a routes file overrides the hand-written routes exactly where its
//! conditions hold, and every route-table rule (kernels, catch-alls, one contract for every m
//! of one (n, k)) is checked on the merged table.
//!
//! This file resolves the names a tier lists and turns a parsed routes file into located
//! routes; reading the files is `load`'s job.

use crate::error::{Location, SpecError, SpecErrorKind};
use crate::raw::{line_of, RawRoute, RawRoutesFile, RawTier};
use std::collections::BTreeMap;
use toml::Spanned;

/// A routes file a tier lists: the entry as written, the name it resolves to (relative to the
/// spec folder, as errors name it) and where the entry is.
#[derive(Clone, Debug)]
pub(crate) struct Listed {
    pub tier: String,
    pub entry: String,
    pub name: String,
    pub at: Location,
}

/// Located routes of one routes file.
pub(crate) type FileRoutes = Vec<(RawRoute, Location)>;

/// The routes files of every tier, parsed: those a tier file lists (by the tier file's name)
/// and those a build adds (by tier name).
#[derive(Debug, Default)]
pub(crate) struct RoutesFiles {
    /// Parsed routes files by resolved name.
    pub parsed: BTreeMap<String, FileRoutes>,
    /// Tier file name to the names it lists, in order.
    pub listed: BTreeMap<String, Vec<String>>,
    /// Tier name to the files a build adds (name, routes), in order.
    pub added: BTreeMap<String, Vec<(String, FileRoutes)>>,
}

impl RoutesFiles {
    /// The routes files of the tier `tier` defined in `tier_file`, in merge order (the build's,
    /// then the listed ones), with their routes concatenated. A file that failed to parse or
    /// to be read counts with no routes (its error is reported already).
    pub fn for_tier(&self, tier_file: &str, tier: &str) -> (Vec<String>, FileRoutes) {
        let mut names = Vec::new();
        let mut routes = Vec::new();
        for (name, r) in self.added.get(tier).into_iter().flatten() {
            names.push(name.clone());
            routes.extend(r.iter().cloned());
        }
        for name in self.listed.get(tier_file).into_iter().flatten() {
            names.push(name.clone());
            if let Some(r) = self.parsed.get(name) {
                routes.extend(r.iter().cloned());
            }
        }
        (names, routes)
    }
}

/// `entry`, listed in `tier_file` (a name relative to the spec folder), as a name relative to
/// the spec folder: joined to the tier file's folder, `.` and `..` folded. Absolute paths are
/// refused, so a spec folder moves as a whole.
pub(crate) fn resolve_name(tier_file: &str, entry: &str) -> Result<String, String> {
    let is_absolute =
        entry.starts_with('/') || entry.starts_with('\\') || entry.as_bytes().get(1) == Some(&b':');
    if is_absolute {
        return Err(format!(
            "is an absolute path; name it relative to {tier_file}, so the spec folder can move"
        ));
    }
    if entry.trim().is_empty() {
        return Err("is empty; name a file relative to the tier file".into());
    }
    let mut parts: Vec<&str> = tier_file.split(['/', '\\']).collect();
    parts.pop(); // the tier file itself
    for p in entry.split(['/', '\\']) {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return Err("names no file".into());
    }
    Ok(parts.join("/"))
}

/// The routes files the tier of spec file `file` (with `text`) lists, resolved, and the
/// errors of bad entries (an empty list, an absolute path, a file listed twice).
pub(crate) fn listed_by(
    file: &str,
    text: &str,
    tier: Option<&Spanned<RawTier>>,
) -> (Vec<Listed>, Vec<SpecError>) {
    let mut listed: Vec<Listed> = Vec::new();
    let mut errors = Vec::new();
    let Some(tier) = tier else {
        return (listed, errors);
    };
    let Some(entries) = &tier.get_ref().routes_files else {
        return (listed, errors);
    };
    let at = |span: std::ops::Range<usize>| Location {
        file: file.to_string(),
        line: line_of(text, span.start),
    };
    let name = tier.get_ref().name.clone();
    if entries.is_empty() {
        errors.push(SpecError {
            location: at(tier.span()),
            kind: SpecErrorKind::EmptyList {
                item: format!("tier {name}"),
                key: "routes_files".into(),
                why: "name the routes files the tier includes, or leave the key out",
            },
        });
    }
    for e in entries {
        let at = at(e.span());
        let entry = e.get_ref().clone();
        let problem = match resolve_name(file, &entry) {
            Err(problem) => Some(problem),
            Ok(resolved) => match listed.iter().find(|l| l.name == resolved) {
                Some(first) => Some(format!(
                    "is listed twice in `routes_files`; the first is at {}",
                    first.at
                )),
                None => {
                    listed.push(Listed {
                        tier: name.clone(),
                        entry: entry.clone(),
                        name: resolved,
                        at: at.clone(),
                    });
                    None
                }
            },
        };
        if let Some(problem) = problem {
            errors.push(SpecError {
                location: at,
                kind: SpecErrorKind::RoutesFile {
                    tier: name.clone(),
                    file: entry,
                    problem,
                },
            });
        }
    }
    (listed, errors)
}

/// The routes of a parsed routes file named `name`, each located at its `[[route]]` line.
pub(crate) fn located(name: &str, text: &str, raw: RawRoutesFile) -> FileRoutes {
    let lines = crate::raw::LineIndex::new(text);
    raw.route
        .into_iter()
        .map(|r| {
            let at = Location {
                file: name.to_string(),
                line: lines.line(r.span().start),
            };
            (r.into_inner(), at)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::resolve_name;

    #[test]
    fn names_resolve_against_the_tier_file() {
        assert_eq!(
            resolve_name("sm90a.toml", "sm90a.tuned.toml").unwrap(),
            "sm90a.tuned.toml"
        );
        assert_eq!(
            resolve_name("sm90a.toml", "./tuned/llama.toml").unwrap(),
            "tuned/llama.toml"
        );
        assert_eq!(
            resolve_name("tiers/sm90a.toml", "../tuned/a.toml").unwrap(),
            "tuned/a.toml"
        );
        assert_eq!(
            resolve_name("sm90a.toml", "../elsewhere/a.toml").unwrap(),
            "../elsewhere/a.toml"
        );
        assert!(resolve_name("sm90a.toml", "/abs/a.toml").is_err());
        assert!(resolve_name("sm90a.toml", "C:\\a.toml").is_err());
        assert!(resolve_name("sm90a.toml", "").is_err());
        assert!(resolve_name("sm90a.toml", ".").is_err());
    }
}
