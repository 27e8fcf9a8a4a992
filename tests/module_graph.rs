//! The library crates' modules form no import cycle: within every folder of `gemm-core`,
//! `gemm-spec`, `gemm-codegen` and `gemm-runtime`, the modules that name each other (through
//! `crate::`, `super::` or `self::` paths, `use` or not) can be ordered so that each names only
//! those before it. A cycle means two files that can only be read, changed and tested together:
//! the hub `Context` was 13 files in one circle. Test modules (`#[cfg(test)]`) are left out:
//! a test may reach anywhere. Re-exports of a parent (`pub use x::Item` in `lib.rs` or
//! `mod.rs`) are followed to the module that defines the item.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module of a crate: its path from the crate root and its file.
struct Module {
    path: Vec<String>,
    ast: syn::File,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().split_whitespace().any(|t| t == "test"))
    })
}

/// Every module of the crate whose root is `root` (`lib.rs`), following `mod x;` items that
/// are not test modules.
fn modules(root: &Path) -> Vec<Module> {
    fn walk(path: Vec<String>, file: PathBuf, children_dir: PathBuf, out: &mut Vec<Module>) {
        let text = std::fs::read_to_string(&file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for item in &ast.items {
            let syn::Item::Mod(m) = item else { continue };
            if m.content.is_some() || is_cfg_test(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string();
            let (child, dir) = if children_dir.join(format!("{name}.rs")).is_file() {
                (
                    children_dir.join(format!("{name}.rs")),
                    children_dir.join(&name),
                )
            } else {
                (
                    children_dir.join(&name).join("mod.rs"),
                    children_dir.join(&name),
                )
            };
            assert!(
                child.is_file(),
                "{}: no file for mod {name}",
                file.display()
            );
            let mut p = path.clone();
            p.push(name);
            walk(p, child, dir, out);
        }
        out.push(Module { path, ast });
    }
    let mut out = Vec::new();
    walk(
        Vec::new(),
        root.join("lib.rs"),
        root.to_path_buf(),
        &mut out,
    );
    out
}

/// The absolute module paths a file names: every `crate::`, `super::`, `self::` path and, in a
/// module with children, a path through a child, resolved against the (inline) module it is in.
struct Names<'a> {
    /// The module path of the code being visited (the file's, plus inline modules).
    here: Vec<String>,
    /// Child modules of each module, to read bare paths in a parent.
    children: &'a BTreeMap<Vec<String>, BTreeSet<String>>,
    found: BTreeSet<Vec<String>>,
}

impl Names<'_> {
    fn resolve(&mut self, segments: &[String]) {
        let mut at = self.here.clone();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                at.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    at.pop();
                    rest = &rest[1..];
                }
            }
            Some(first)
                if self
                    .children
                    .get(&self.here)
                    .is_some_and(|c| c.contains(first)) => {}
            _ => return,
        }
        at.extend(rest.iter().cloned());
        self.found.insert(at);
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                let p = prefix.clone();
                self.resolve(&p);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                let p = prefix.clone();
                self.resolve(&p);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => {
                let p = prefix.clone();
                self.resolve(&p);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if is_cfg_test(attrs) {
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_none() {
            return;
        }
        self.here.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.here.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.resolve(&segments);
        syn::visit::visit_path(self, p);
    }
}

/// `pub use child::...::Item` re-exports of each module: (module, item name) -> the path of
/// the item where it is defined.
fn reexports(mods: &[Module]) -> BTreeMap<(Vec<String>, String), Vec<String>> {
    let mut out = BTreeMap::new();
    for m in mods {
        for item in &m.ast.items {
            let syn::Item::Use(u) = item else { continue };
            if matches!(u.vis, syn::Visibility::Inherited) {
                continue;
            }
            let mut flat = Vec::new();
            flatten(&mut Vec::new(), &u.tree, &mut flat);
            for (path, name) in flat {
                let mut abs = m.path.clone();
                let mut rest = &path[..];
                if rest.first().map(String::as_str) == Some("crate") {
                    abs.clear();
                    rest = &rest[1..];
                } else if rest.first().map(String::as_str) == Some("self") {
                    rest = &rest[1..];
                }
                abs.extend(rest.iter().cloned());
                out.insert((m.path.clone(), name), abs);
            }
        }
    }
    out
}

fn flatten(prefix: &mut Vec<String>, tree: &syn::UseTree, out: &mut Vec<(Vec<String>, String)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(prefix, &p.tree, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut p = prefix.clone();
            p.push(n.ident.to_string());
            out.push((p, n.ident.to_string()));
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            p.push(r.ident.to_string());
            out.push((p, r.rename.to_string()));
        }
        syn::UseTree::Glob(_) | syn::UseTree::Group(_) => {
            if let syn::UseTree::Group(g) = tree {
                for t in &g.items {
                    flatten(prefix, t, out);
                }
            }
        }
    }
}

/// Edges between sibling modules: for a file in module A naming path P, the children of the
/// deepest common ancestor that lead to A and to P (when P's is a module).
fn sibling_edges(root: &Path) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let mods = modules(root);
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for m in &mods {
        if let Some((last, parent)) = m.path.split_last() {
            children
                .entry(parent.to_vec())
                .or_default()
                .insert(last.clone());
        }
    }
    let reexports = reexports(&mods);
    // Follows re-exports until the path's module prefix is a real module.
    let canonical = |mut p: Vec<String>| -> Vec<String> {
        for _ in 0..8 {
            let mut module = Vec::new();
            for s in &p {
                if children.get(&module).is_some_and(|c| c.contains(s)) {
                    module.push(s.clone());
                } else {
                    break;
                }
            }
            let Some(item) = p.get(module.len()) else {
                return p;
            };
            match reexports.get(&(module.clone(), item.clone())) {
                Some(target) => {
                    let mut next = target.clone();
                    next.extend(p[module.len() + 1..].iter().cloned());
                    p = next;
                }
                None => return p,
            }
        }
        p
    };
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for m in &mods {
        let mut names = Names {
            here: m.path.clone(),
            children: &children,
            found: BTreeSet::new(),
        };
        names.visit_file(&m.ast);
        for target in names.found {
            let target = canonical(target);
            let common = m
                .path
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            let (Some(from), Some(to)) = (m.path.get(common), target.get(common)) else {
                continue; // names an ancestor, a descendant or itself
            };
            let parent = m.path[..common].to_vec();
            if children.get(&parent).is_some_and(|c| c.contains(to)) {
                edges
                    .entry(parent)
                    .or_default()
                    .entry(from.clone())
                    .or_default()
                    .insert(to.clone());
            }
        }
    }
    edges
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn dfs(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for next in graph.get(n).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == next).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(next.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = dfs(next, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = dfs(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_library_crate_has_a_module_import_cycle() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for krate in ["gemm-core", "gemm-spec", "codegen", "runtime"] {
        let root = Path::new("..").join(krate).join("src");
        for (parent, graph) in sibling_edges(&root) {
            checked += graph.values().map(BTreeSet::len).sum::<usize>();
            if let Some(c) = cycle(&graph) {
                let at = if parent.is_empty() {
                    String::from("crate")
                } else {
                    parent.join("::")
                };
                failures.push(format!("{krate} ({at}): {}", c.join(" -> ")));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} edges found: the scan is broken"
    );
    assert!(
        failures.is_empty(),
        "import cycles:\n{}",
        failures.join("\n")
    );
}

/// The scan itself sees a cycle when there is one (so the test above can fail).
#[test]
fn the_scan_finds_a_cycle_it_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub use b::Bee;\n",
    )
    .unwrap();
    std::fs::write(src.join("a.rs"), "use crate::Bee;\npub struct Ay;\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "pub struct Bee;\nfn f() -> super::c::Sea { todo!() }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("c.rs"),
        "pub struct Sea;\n#[cfg(test)]\nmod tests { use crate::b::Bee; }\nfn g(_: crate::a::Ay) {}\n",
    )
    .unwrap();
    let edges = sibling_edges(src);
    let c = cycle(&edges[&Vec::new()]).expect("a -> b -> c -> a");
    assert_eq!(c.len(), 4, "{c:?}");
    // Without c's use of a, no cycle (the test module's use of b does not count).
    std::fs::write(
        src.join("c.rs"),
        "pub struct Sea;\n#[cfg(test)]\nmod tests { use crate::a::Ay; }\n",
    )
    .unwrap();
    assert_eq!(cycle(&sibling_edges(src)[&Vec::new()]), None);
}
