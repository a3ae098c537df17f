//! Tern's commands: everything that executes a request against the
//! `tern-store` keyspace, for both protocols, without owning a socket.
//! The process (`tern-server`: listeners, workers, connections, the timer)
//! and persistence and replication (`tern-persist`: the RDB and AOF
//! threads, the replication links, reached through
//! [`server::Durability`]) call in from above; configuration and logging (`tern-config`) sit
//! below, beside the codecs (`tern-resp`, `tern-memcache`).
//!
//! ```text
//!  Engine (engine.rs) = the shared state (server.rs: keyspace, settings, clients, stats)
//!                     + the command table (cmd/table.rs), side by side
//!  RESP request ─► prefetch::Plan (a pipeline's keys located and staged ahead)
//!               ─► cmd::dispatch ─► key specs (cmd/keyspec.rs) locate and lock the keys
//!               ─► the family's handler (cmd/strings.rs, cmd/keys.rs, ...) with a cmd::Ctx
//!  memcached request ─► memcache::Exec (text, meta, stats)
//!  every handler writes through tern-store's one write path, which tells
//!  WATCHers, accounts memory and records the change's effect
//! ```
//!
//! # Layering
//!
//! Modules use each other one way, top to bottom. Each line names the
//! modules of this crate that one may use (`-`: none); the crate root's
//! version constants are open to all. `cmd` counts as one module: its
//! dispatch (`mod.rs`), table, key specs, key staging and families call
//! each other. The test `layering` checks the code against this table and
//! the table for cycles, so a new module needs a line here.
//!
//! ```text
//!  engine    ─► cmd script server
//!  script    ─► cmd server client scriptcache errors outbuf stats persist glob maxmemory
//!  prefetch  ─► cmd server client
//!  memcache  ─► server client acl errors outbuf stats maxmemory messaging
//!  cmd       ─► server client acl outbuf stats errors glob sysinfo fdlimit cmdlog latency monitor maxmemory persist aofstate scriptcache messaging repl
//!  persist   ─► server
//!  maxmemory ─► server sysinfo
//!  server    ─► client acl stats cmdlog latency monitor sysinfo aofstate scriptcache messaging repl
//!  aofstate  ─► -
//!  repl      ─► -
//!  client    ─► acl monitor messaging repl
//!  messaging ─► glob outbuf
//!  acl       ─► glob
//!  outbuf    ─► -
//!  scriptcache ─► -
//!  stats     ─► -
//!  cmdlog    ─► -
//!  latency   ─► -
//!  monitor   ─► -
//!  errors    ─► -
//!  glob      ─► -
//!  sysinfo   ─► -
//!  fdlimit   ─► -
//! ```
//!
//! The shared state knows no command: the table sits beside it in
//! [`engine::Engine`], and a command gets both through `cmd::Ctx`. The
//! commands stage their own keys (`cmd/stage.rs`); the pipeline planner
//! (`prefetch.rs`) looks commands up and hands `cmd::call` their located
//! keys (`cmd::Planned`). The memcached executor sits beside `cmd`, not
//! on it.
#![forbid(unsafe_code)]

pub mod acl;
pub mod aofstate;
pub mod client;
pub mod cmd;
pub mod cmdlog;
pub mod engine;
pub mod errors;
pub mod fdlimit;
pub mod glob;
pub mod latency;
pub mod memcache;
pub mod monitor;
pub mod maxmemory;
pub mod outbuf;
pub mod persist;
pub mod messaging;
pub mod prefetch;
pub mod repl;
pub mod script;
pub mod scriptcache;
pub mod server;
pub mod stats;
pub mod sysinfo;

/// The Redis version whose behaviour Tern matches (INFO `redis_version`).
pub const REDIS_VERSION: &str = "8.4.0";
/// [`REDIS_VERSION`] as Redis's `REDIS_VERSION_NUM` (`redis.REDIS_VERSION_NUM`).
pub const REDIS_VERSION_NUM: u32 = 0x0008_0400;
pub const TERN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `.rs` files below `dir`, for the tests that read the sources
/// (the layering here, the error strings in `errors`).
#[cfg(test)]
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod layering {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    type Graph = BTreeMap<String, BTreeSet<String>>;

    /// The table of the module doc above: module -> the modules it may use.
    fn declared() -> Graph {
        let doc = include_str!("lib.rs");
        let start = doc.find("//! # Layering").expect("the module doc has a Layering section");
        let block = doc[start..].split("//! ```").nth(1).expect("the Layering section has a table");
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

    /// The first segment of each path after `crate::` in `code`
    /// (`crate::a::b`, `crate::{a, b::c}`).
    fn crate_paths(code: &str) -> Vec<String> {
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

    /// What the code uses: top-level module -> the top-level modules its
    /// files name by `crate::` paths, outside comments and the test module
    /// that ends a file. Paths to the crate root's own items (`crate::REDIS_VERSION`)
    /// are left out, as the root declares modules and constants only.
    fn actual() -> (BTreeSet<String>, Graph) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        crate::rust_files(&src, &mut files);
        let module_of = |f: &Path| {
            let rel = f.strip_prefix(&src).expect("under src");
            let first = rel.components().next().expect("a file").as_os_str().to_string_lossy().into_owned();
            first.strip_suffix(".rs").map(str::to_string).unwrap_or(first)
        };
        let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).filter(|m| m != "lib").collect();
        let mut g = Graph::new();
        for f in &files {
            let from = module_of(f);
            let text = std::fs::read_to_string(f).expect("read source");
            let code = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or(&text);
            let code: String = code.lines().map(|l| l.split("//").next().unwrap_or(l)).collect::<Vec<_>>().join("\n");
            let used = g.entry(from.clone()).or_default();
            for to in crate_paths(&code) {
                if to != from && modules.contains(&to) {
                    used.insert(to);
                }
            }
        }
        (modules, g)
    }

    /// A cycle of `g`, as the path that closes it, if it has one.
    fn find_cycle(g: &Graph) -> Option<Vec<String>> {
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

    /// Every module has a line in the table, every use in the code is one
    /// its line allows, and neither the table nor the code has a cycle.
    #[test]
    fn modules_use_each_other_as_the_layering_says() {
        let table = declared();
        let (modules, code) = actual();
        // The scan sees what is there: dispatch's handlers reach the shared state.
        assert!(code.get("cmd").is_some_and(|u| u.contains("server")), "the scan found no cmd -> server: {code:?}");
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
}
