//! The check behind each crate's `# Layering` doc section: a crate's
//! modules use each other one way, as a table in its `lib.rs` docs says,
//! and a test of the crate calls [`check`] to hold the code to it.
//!
//! ```text
//!  lib.rs docs: # Layering ─► declared(): module -> the modules it may use
//!  src/**/*.rs ─► actual(): module -> the modules its `crate::` paths name
//!  check(): every module listed, every use allowed, no cycle in either
//! ```
//!
//! A top-level module is a file under `src/` or a directory there (its
//! files call each other freely). The scan reads `crate::` paths outside
//! comments and the test module that ends a file, and leaves out whole
//! the files of out-of-line test modules (`#[cfg(test)] mod tests;`): tests
//! may use anything. Paths to items the crate root re-exports
//! (`crate::Keyspace`) name no module and are not counted, so a layered
//! module should name what it uses by its module's path.
//!
//! A use the table's order forbids but the code still has, waiting to be
//! broken, may be listed under a `## Not yet one way` heading after the
//! table, in a code block of the same `module ─► uses…` form: the check
//! leaves those out of the code's uses, and fails once one is gone from
//! the code (so the list only shrinks).
//!
//! Non-goals: `super::` paths (inside a directory they stay in its
//! module), macros, and `use` of another crate.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module -> the modules it uses (or may use).
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The `.rs` files below `dir`, for the tests that read the sources.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The table of `lib_rs`'s `# Layering` section: module -> the modules
/// it may use. Each line of its first code block is `module ─► uses…`
/// (`-`: none).
pub fn declared(lib_rs: &str) -> Graph {
    let start = lib_rs.find("//! # Layering").expect("the module doc has a Layering section");
    let block = lib_rs[start..].split("//! ```").nth(1).expect("the Layering section has a table");
    let mut g = Graph::new();
    for line in block.lines().skip(1) {
        let line = line.trim_start_matches("//!").trim();
        let (m, uses) = line.split_once('─').unwrap_or_else(|| panic!("not `module ─► uses`: {line:?}"));
        let uses = uses.trim_start_matches(['─', '►']);
        let uses = uses.split_whitespace().filter(|u| *u != "-").map(str::to_string).collect();
        assert!(g.insert(m.trim().to_string(), uses).is_none(), "{} has two lines", m.trim());
    }
    g
}

/// The uses listed under `lib_rs`'s `## Not yet one way` heading, if it
/// has one (see the crate docs).
pub fn exceptions(lib_rs: &str) -> Graph {
    let Some(start) = lib_rs.find("//! ## Not yet one way") else { return Graph::new() };
    let block = lib_rs[start..].split("//! ```").nth(1).expect("the Not yet one way section has a list");
    declared(&format!("//! # Layering\n//! ```{block}//! ```"))
}

/// The first segment of each path after `crate::` in `code`
/// (`crate::a::b`, `crate::{a, b::c}`).
pub fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| s.trim().split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("").to_string();
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let mut depth = 0;
                let end = group
                    .char_indices()
                    .find(|&(_, c)| {
                        depth += match c {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        depth < 0
                    })
                    .map_or(group.len(), |(j, _)| j);
                let mut depth = 0;
                let mut item = String::new();
                for c in group[..end].chars().chain([',']) {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            out.push(ident(&item));
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    item.push(c);
                }
            }
            None => out.push(ident(rest)),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The files that out-of-line test modules declared in `file` (whose
/// text is `text`) live in: `#[cfg(test)]`, other attributes, then
/// `mod name;`, at `name.rs` or `name/mod.rs` beside `file`'s own
/// submodules, or where a `#[path = "…"]` among the attributes says.
pub fn test_module_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = file.parent().expect("a file has a directory");
    let stem = file.file_stem().expect("a file has a name").to_string_lossy();
    // Submodules of `lib.rs`, `main.rs` and `mod.rs` sit beside them;
    // those of `a.rs`, in `a/`.
    let sub = if ["lib", "main", "mod"].contains(&&*stem) { dir.to_path_buf() } else { dir.join(&*stem) };
    let mut out = Vec::new();
    let mut lines = text.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line != "#[cfg(test)]" {
            continue;
        }
        let mut path = None;
        for next in lines.by_ref() {
            if let Some(p) = next.strip_prefix("#[path = \"").and_then(|p| p.strip_suffix("\"]")) {
                path = Some(dir.join(p));
            } else if next.starts_with("#[") {
                continue;
            } else {
                let decl = next.strip_prefix("pub(crate) ").or_else(|| next.strip_prefix("pub ")).unwrap_or(next);
                if let Some(name) = decl.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                    out.push(path.take().unwrap_or_else(|| {
                        let flat = sub.join(format!("{name}.rs"));
                        if flat.exists() {
                            flat
                        } else {
                            sub.join(name).join("mod.rs")
                        }
                    }));
                }
                break;
            }
        }
    }
    out
}

/// What the code under `src` uses: top-level module -> the top-level
/// modules its files name by `crate::` paths, outside comments, the test
/// module that ends a file and the files of out-of-line test modules;
/// and the set of top-level modules. Paths to the crate root's own items
/// are left out.
pub fn actual(src: &Path) -> (BTreeSet<String>, Graph) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("read source");
            (f, text)
        })
        .collect();
    let tests: Vec<PathBuf> = texts.iter().flat_map(|(f, t)| test_module_files(f, t)).collect();
    let is_test = |f: &Path| tests.iter().any(|t| f == t || t.file_name().is_some_and(|n| n == "mod.rs") && t.parent().is_some_and(|d| f.starts_with(d)));
    let texts: Vec<&(PathBuf, String)> = texts.iter().filter(|(f, _)| !is_test(f)).collect();
    let module_of = |f: &Path| {
        let rel = f.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a file").as_os_str().to_string_lossy().into_owned();
        first.strip_suffix(".rs").map(str::to_string).unwrap_or(first)
    };
    let modules: BTreeSet<String> = texts.iter().map(|(f, _)| module_of(f)).filter(|m| m != "lib").collect();
    let mut g = Graph::new();
    for (f, text) in texts {
        let from = module_of(f);
        let code = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or(text);
        let code: String = code.lines().map(|l| l.split("//").next().unwrap_or(l)).collect::<Vec<_>>().join("\n");
        let used = g.entry(from.clone()).or_default();
        for to in crate_paths(&code) {
            if to != from && modules.contains(&to) {
                used.insert(to);
            }
        }
    }
    g.remove("lib");
    (modules, g)
}

/// A cycle of `g`, as the path that closes it, if it has one.
pub fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(g: &Graph, m: &str, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys().find_map(|m| visit(g, m, &mut Vec::new(), &mut done))
}

/// Checks the crate at `manifest_dir` (its `CARGO_MANIFEST_DIR`) against
/// the `# Layering` table of `lib_rs` (its `lib.rs`, as
/// `include_str!("lib.rs")`): every module has a line in the table, every
/// use in the code is one its line allows, and neither the table nor the
/// code has a cycle. `known` is a use the code has, so that a scan that
/// sees nothing fails. Panics with what is wrong.
pub fn check(manifest_dir: &str, lib_rs: &str, known: (&str, &str)) {
    let table = declared(lib_rs);
    let (modules, mut code) = actual(&Path::new(manifest_dir).join("src"));
    assert!(code.get(known.0).is_some_and(|u| u.contains(known.1)), "the scan found no {} -> {}: {code:?}", known.0, known.1);
    let mut gone = Vec::new();
    for (from, uses) in exceptions(lib_rs) {
        for to in uses {
            if !code.get_mut(&from).is_some_and(|u| u.remove(&to)) {
                gone.push(format!("{from} uses {to}"));
            }
        }
    }
    assert!(gone.is_empty(), "listed as not yet one way but no longer in the code (remove them from the list):\n{}", gone.join("\n"));
    let listed: BTreeSet<String> = table.keys().cloned().collect();
    assert_eq!(listed, modules, "the Layering table and src/ name different modules");
    let mut wrong = Vec::new();
    for (from, uses) in &code {
        for to in uses {
            if !table.get(from).is_some_and(|allowed| allowed.contains(to)) {
                wrong.push(format!("{from} uses {to}"));
            }
        }
    }
    assert!(wrong.is_empty(), "uses the Layering table does not allow:\n{}", wrong.join("\n"));
    assert_eq!(find_cycle(&table), None, "the Layering table has a cycle");
    assert_eq!(find_cycle(&code), None, "the modules have an import cycle");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_finder_finds_cycles() {
        let g = |edges: &[(&str, &str)]| {
            let mut g = Graph::new();
            for (a, b) in edges {
                g.entry(a.to_string()).or_default().insert(b.to_string());
            }
            g
        };
        assert_eq!(find_cycle(&g(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
        assert_eq!(find_cycle(&g(&[("a", "b"), ("b", "c"), ("c", "b")])), Some(vec!["b".into(), "c".into(), "b".into()]));
    }

    #[test]
    fn crate_paths_reads_single_and_grouped_uses() {
        let code = "use crate::server::{now_ms, Server};\nuse crate::{errors, glob::matches};\nlet x = crate::cmd::call(); crate::REDIS_VERSION";
        assert_eq!(crate_paths(code), ["server", "errors", "glob", "cmd", "REDIS_VERSION"]);
    }

    #[test]
    fn declared_reads_the_table() {
        let lib = "//! # Layering\n//!\n//! ```text\n//!  a ─► b c\n//!  b ─► c\n//!  c ─► -\n//! ```\n";
        let g = declared(lib);
        assert_eq!(g.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(g["a"].iter().collect::<Vec<_>>(), ["b", "c"]);
        assert!(g["c"].is_empty());
    }

    #[test]
    fn exceptions_read_their_own_list() {
        let lib = "//! # Layering\n//! ```text\n//!  a ─► b\n//!  b ─► -\n//! ```\n//! ## Not yet one way\n//! ```text\n//!  b ─► a\n//! ```\n";
        assert_eq!(declared(lib).len(), 2);
        let ex = exceptions(lib);
        assert_eq!(ex.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(ex["b"].iter().collect::<Vec<_>>(), ["a"]);
        assert!(exceptions("//! # Layering\n//! ```text\n//!  a ─► -\n//! ```\n").is_empty());
    }

    #[test]
    fn test_module_files_follow_the_declarations() {
        let text = "mod a;\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod other;\n#[cfg(test)]\npub(crate) mod more;\n#[cfg(test)]\nmod inline {\n}\n";
        let got = test_module_files(Path::new("src/x.rs"), text);
        assert_eq!(got, [Path::new("src/x/tests/mod.rs"), Path::new("src/x_tests.rs"), Path::new("src/x/more/mod.rs")]);
        let got = test_module_files(Path::new("src/d/mod.rs"), "#[cfg(test)]\nmod tests;\n");
        assert_eq!(got, [Path::new("src/d/tests/mod.rs")]);
    }
}
