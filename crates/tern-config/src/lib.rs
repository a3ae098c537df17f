//! Typed configuration in redis.conf syntax.
//!
//! `tern-server [config-file] [--directive value ...]`: the file is read
//! first, then the command-line directives, as redis-server does. Every
//! directive is declared once, in [`directives`]: its field and type, its
//! default, its [`Kind`](kinds::Kind) (bool, integer with a range, byte size
//! such as `1gb`, enum, string, or a special such as `save`), whether CONFIG
//! SET may change it, and where it is applied. File parsing, the command
//! line, CONFIG GET/SET/REWRITE and the server's live [`Settings`] are all
//! driven by that table. A bad value stops start-up with an error naming
//! the file, line, directive, value and reason.
//!
//! Logging ([`log`]: Redis's levels and line format, and the
//! `log_notice!`/`log_warning!`/`log_verbose!`/`log_debug!` macros) lives
//! here too, as the level is a directive and both the commands and the
//! process log.
//!
//! This crate depends on no other part of the server: the commands
//! (`tern-commands`: CONFIG GET/SET/REWRITE, the shared `Server` that
//! mirrors a [`Config`] into its live [`Settings`] in
//! `Server::apply_config`) and the process (`tern-server`: start-up, the
//! log file) sit above it.
#![forbid(unsafe_code)]

pub mod directives;
pub mod kinds;
pub mod log;
pub mod tls;

pub use directives::{Config, LogLevel, MaxmemoryPolicy, Settings, DIRECTIVES};
pub use kinds::{format_memory, parse_memory, OutputLimit, OutputLimits};
pub use tls::TlsAuthClients;

use std::path::PathBuf;

use kinds::one;

/// Why a directive is accepted but not acted on: what the start-up
/// warning and CONFIG SET's notice say.
pub mod reason {
    pub const PERSISTENCE: &str =
        "Tern syncs its AOF as appendfsync says during a rewrite too, and writes no timestamp annotations, in this version";
    pub const REPLICATION: &str = "Tern does not implement this part of replication in this version";
    pub const DEFRAG: &str = "Tern does not defragment memory in this version";
    pub const TLS_CLIENT: &str = "Tern presents no client certificate: its outgoing links (a replica's to its master, the cluster bus) are plaintext in this version";
    pub const TLS_DH: &str = "Tern offers only ECDHE key exchange over TLS (rustls), which needs no DH parameters";
    pub const TLS_CYCLE: &str = "Tern completes TLS handshakes as their bytes arrive, without a per-cycle cap, in this version";
    pub const UNIXSOCKET: &str = "Tern does not listen on Unix sockets in this version";
    pub const OTHER: &str = "Tern does not implement it in this version";
}

/// When a directive may be changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// By CONFIG SET, at any time.
    Runtime,
    /// Only at start-up (file or command line): CONFIG SET refuses it.
    Startup,
    /// By CONFIG SET only when `enable-protected-configs` allows it.
    Protected,
}

/// Where a directive's value takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Mirrored into the live [`Settings`] the request path reads.
    Live,
    /// Applied to the process (jemalloc, the logger).
    Process,
    /// Read from the [`Config`] where needed, or (passive) by nothing yet.
    Config,
}

/// One directive, as the table declares it.
pub struct Directive {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub when: When,
    pub applied: Applied,
    /// Accepted and shown but not acted on, for this reason.
    pub passive: Option<&'static str>,
    /// The default is Tern's own, not Redis's.
    pub tern_default: bool,
    /// Applies the directive's words; the error is the reason only.
    pub set: fn(&mut Config, &[&str]) -> Result<(), String>,
    /// What CONFIG GET shows.
    pub get: fn(&Config) -> String,
    rewrite: fn(&Config, &str) -> Vec<String>,
    multi: fn() -> bool,
}

impl Directive {
    /// Does the directive take a list of words (so that CONFIG SET splits
    /// its one value string)?
    pub fn is_multi(&self) -> bool {
        (self.multi)()
    }

    /// May CONFIG SET change it now? Like Redis, `dir` and `dbfilename`
    /// only when `enable-protected-configs` allows it.
    pub fn is_protected(&self, c: &Config) -> bool {
        self.when == When::Protected && c.enable_protected_configs == "no"
    }

    /// The names CONFIG GET matches: the name, then the alias.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.alias)
    }
}


/// Finds a directive by name or alias, case-insensitively.
pub fn find_directive(name: &str) -> Option<&'static Directive> {
    DIRECTIVES.iter().find(|d| d.name.eq_ignore_ascii_case(name) || d.alias.is_some_and(|a| a.eq_ignore_ascii_case(name)))
}

/// Splits one config-file line into words with redis.conf's quoting rules.
fn split_line(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut frame = tern_resp::Frame::new();
    let mut buf = line.as_bytes().to_vec();
    buf.push(b'\n');
    match frame.parse(&buf, &tern_resp::Limits::default()) {
        Ok(Some(_)) => {
            for a in frame.args(&buf).iter() {
                out.push(String::from_utf8_lossy(a).into_owned());
            }
            Some(out)
        }
        _ => None,
    }
}

/// Why Tern accepts a directive but does not act on it: what the start-up
/// warning and CONFIG SET's notice say.
pub fn passive_reason(name: &str) -> &'static str {
    find_directive(name).and_then(|d| d.passive).unwrap_or(reason::OTHER)
}

/// A config line as Redis's `sdstrim(line, " \t\r\n")` leaves it: only
/// those four bytes go, so a value ending in U+00A0 keeps it.
fn trim_line(raw: &str) -> &str {
    raw.trim_matches([' ', '\t', '\r', '\n'])
}

/// Deepest chain of `include` lines a configuration may have.
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// Why CONFIG REWRITE did not rewrite (its reply is in `errors`).
#[derive(Debug)]
pub enum RewriteError {
    /// The server started without a config file.
    NoConfigFile,
    /// Reading, writing or renaming the file failed.
    Io(std::io::Error),
}

impl Config {
    /// Applies one directive. The error is the reason only.
    pub fn apply(&mut self, name: &str, args: &[&str]) -> Result<(), String> {
        // Lines redis.conf allows that are not settings: `user` and
        // `rename-command` lines are kept for the server, which checks them
        // against its commands at start and stops on one it cannot honour.
        if name.eq_ignore_ascii_case("user") {
            if args.is_empty() {
                return Err("Bad directive or wrong number of arguments".into());
            }
            self.users.push(UserLine { words: args.iter().map(|a| a.to_string()).collect(), place: None });
            return Ok(());
        }
        if name.eq_ignore_ascii_case("rename-command") {
            if args.len() != 2 {
                return Err("Bad directive or wrong number of arguments".into());
            }
            self.renames.push(UserLine { words: args.iter().map(|a| a.to_string()).collect(), place: None });
            return Ok(());
        }
        if name.eq_ignore_ascii_case("loadmodule") {
            return Err("Tern does not support modules".into());
        }
        let d = find_directive(name).ok_or_else(|| "Bad directive or wrong number of arguments".to_string())?;
        (d.set)(self, args)
    }

    /// Applies a whole redis.conf text. `origin` names it in errors.
    pub fn apply_text(&mut self, text: &str, origin: &str) -> Result<(), String> {
        self.apply_text_at(text, origin, 0)
    }

    /// [`Config::apply_text`] inside `depth` levels of `include`: a file that
    /// includes itself, directly or not, fails at [`MAX_INCLUDE_DEPTH`]
    /// instead of recursing until the stack overflows.
    fn apply_text_at(&mut self, text: &str, origin: &str, depth: usize) -> Result<(), String> {
        for (n, raw) in text.lines().enumerate() {
            let line = trim_line(raw);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_line(line)
                .ok_or_else(|| fatal(origin, n + 1, line, line.split_whitespace().next().unwrap_or(""), "Unbalanced quotes in configuration line"))?;
            let Some((name, args)) = words.split_first() else { continue };
            let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            if name.eq_ignore_ascii_case("include") {
                let path = one(&args).map_err(|e| fatal(origin, n + 1, line, name, &e))?;
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(fatal(origin, n + 1, line, name, &format!("includes nested more than {MAX_INCLUDE_DEPTH} deep (does {path} include itself?)")));
                }
                let inc = std::fs::read_to_string(path).map_err(|e| fatal(origin, n + 1, line, name, &format!("can't open {path}: {e}")))?;
                self.apply_text_at(&inc, path, depth + 1)?;
                continue;
            }
            self.apply(name, &args).map_err(|e| fatal(origin, n + 1, line, name, &e))?;
            let kept = if name.eq_ignore_ascii_case("user") {
                self.users.last_mut()
            } else if name.eq_ignore_ascii_case("rename-command") {
                self.renames.last_mut()
            } else {
                None
            };
            if let Some(k) = kept {
                k.place = Some((origin.to_string(), n + 1, line.to_string()));
            }
        }
        Ok(())
    }

    /// Builds the configuration from redis-server style arguments.
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut cfg = Config::default();
        let mut rest = args;
        if let Some(first) = rest.first() {
            if !first.starts_with("--") {
                // `-` reads the configuration from stdin, as redis-server does.
                let text = if first == "-" {
                    std::io::read_to_string(std::io::stdin()).map_err(|e| format!("Fatal error, can't read config from stdin: {e}"))?
                } else {
                    let t = std::fs::read_to_string(first).map_err(|e| format!("Fatal error, can't open config file '{first}': {e}"))?;
                    cfg.config_file = Some(std::fs::canonicalize(first).unwrap_or_else(|_| PathBuf::from(first)));
                    t
                };
                cfg.apply_text(&text, first)?;
                rest = &rest[1..];
            }
        }
        // "--port 7000 --save '' " becomes lines "port 7000" and "save ''".
        let mut i = 0;
        let mut nth = 0;
        while i < rest.len() {
            let Some(name) = rest[i].strip_prefix("--") else {
                return Err(format!("Invalid argument '{}': directives are given as --name value", rest[i]));
            };
            let mut vals: Vec<&str> = Vec::new();
            i += 1;
            while i < rest.len() && !rest[i].starts_with("--") {
                vals.push(&rest[i]);
                i += 1;
            }
            nth += 1;
            let line = format!("{} {}", name, vals.join(" "));
            if name.eq_ignore_ascii_case("include") {
                cfg.apply_text(&line, "command line")?;
                continue;
            }
            cfg.apply(name, &vals).map_err(|e| fatal("command line", nth, &line, name, &e))?;
        }
        Ok(cfg)
    }

    /// Directives accepted but not acted on, for the start-up warning.
    pub fn passive_in_use(&self) -> Vec<String> {
        // Turning a feature off ("no", "") is what Tern does anyway.
        let defaults = Config::default();
        DIRECTIVES
            .iter()
            .filter(|d| d.passive.is_some())
            .filter(|d| {
                let val = (d.get)(self);
                !val.is_empty() && val != "no" && val != (d.get)(&defaults)
            })
            .map(|d| d.name.to_string())
            .collect()
    }

    /// CONFIG SET of one directive: the value is one string, split into
    /// words for the directives that take a list, as Redis does.
    pub fn set_runtime(&mut self, d: &Directive, value: &str) -> Result<(), String> {
        if d.is_multi() {
            let words: Vec<&str> = value.split_ascii_whitespace().collect();
            if words.is_empty() {
                return (d.set)(self, &[""]);
            }
            (d.set)(self, &words)
        } else {
            (d.set)(self, &[value])
        }
    }

    /// The redis.conf lines that express `d`'s current value, as CONFIG
    /// REWRITE writes them (one line per client class for the output
    /// buffer limits, sizes with Redis's units, words quoted as needed).
    pub fn rewrite_lines(&self, d: &Directive) -> Vec<String> {
        (d.rewrite)(self, d.name)
    }

    /// CONFIG REWRITE: rewrites the file the server started with. Comments
    /// and lines Tern does not know keep their place; a directive already
    /// in the file is rewritten where it first appears (later repeats are
    /// dropped); one that differs from its default and is not in the file
    /// is appended after a `# Generated by CONFIG REWRITE` line.
    pub fn rewrite(&self) -> Result<(), RewriteError> {
        let Some(path) = &self.config_file else {
            return Err(RewriteError::NoConfigFile);
        };
        let old = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(RewriteError::Io(e)),
        };
        let text = self.rewritten(&old);
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|_| {
                if let Ok(meta) = std::fs::metadata(path) {
                    let _ = std::fs::set_permissions(&tmp, meta.permissions());
                }
                std::fs::rename(&tmp, path)
            })
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                RewriteError::Io(e)
            })
    }

    /// The text CONFIG REWRITE writes, given the file's current text.
    pub fn rewritten(&self, old: &str) -> String {
        const SIGNATURE: &str = "# Generated by CONFIG REWRITE";
        let defaults = Config::default();
        let mut lines: Vec<Option<String>> = Vec::new();
        // Directive name -> indexes of its lines in `lines`.
        let mut seen: Vec<(&'static str, Vec<usize>)> = Vec::new();
        let mut has_signature = false;
        let mut user_at: Vec<usize> = Vec::new();
        for raw in old.lines() {
            let t = trim_line(raw);
            if t == SIGNATURE {
                has_signature = true;
            }
            let name = if t.is_empty() || t.starts_with('#') { None } else { split_line(t).and_then(|w| w.into_iter().next()) };
            if let Some(d) = name.as_deref().and_then(find_directive) {
                match seen.iter_mut().find(|(n, _)| *n == d.name) {
                    Some((_, v)) => v.push(lines.len()),
                    None => seen.push((d.name, vec![lines.len()])),
                }
            }
            if name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case("user")) {
                user_at.push(lines.len());
            }
            lines.push(Some(raw.to_string()));
        }
        let mut appended = Vec::new();
        // The users in force take the place of the file's first `user`
        // line, or come last, as Redis writes them (every user, `default`
        // too); with an ACL file the file's user lines go.
        if let Some(users) = &self.rewrite_users {
            for (k, &i) in user_at.iter().enumerate() {
                lines[i] = (k == 0 && !users.is_empty()).then(|| users.join("\n"));
            }
        }
        for d in DIRECTIVES {
            let new = self.rewrite_lines(d);
            match seen.iter().find(|(n, _)| *n == d.name) {
                Some((_, at)) => {
                    for (k, &i) in at.iter().enumerate() {
                        lines[i] = if k == 0 && !new.is_empty() { Some(new.join("\n")) } else { None };
                    }
                }
                None if (d.get)(self) != (d.get)(&defaults) => appended.extend(new),
                None => {}
            }
        }
        if let Some(users) = self.rewrite_users.as_ref().filter(|_| user_at.is_empty()) {
            appended.extend(users.iter().cloned());
        }
        let mut out = String::new();
        for l in lines.into_iter().flatten() {
            out.push_str(&l);
            out.push('\n');
        }
        if !appended.is_empty() {
            if !has_signature {
                out.push_str(SIGNATURE);
                out.push('\n');
            }
            for l in appended {
                out.push_str(&l);
                out.push('\n');
            }
        }
        out
    }
}

/// A `user` or `rename-command` line, kept for the server to act on: its
/// words after the directive, and where it was (file, line number, text)
/// for the start-up error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserLine {
    pub words: Vec<String>,
    pub place: Option<(String, usize, String)>,
}

impl UserLine {
    /// The fatal start-up error for this line of `directive`, as a bad
    /// directive's.
    pub fn fatal(&self, directive: &str, reason: &str) -> String {
        match &self.place {
            Some((origin, n, line)) => fatal(origin, *n, line, directive, reason),
            None => fatal("command line", 0, &format!("{directive} {}", self.words.join(" ")), directive, reason),
        }
    }
}

fn fatal(origin: &str, line_no: usize, line: &str, name: &str, reason: &str) -> String {
    let place = if origin == "command line" {
        format!("Reading the command line arguments, at directive {line_no}")
    } else {
        format!("Reading the configuration file '{origin}', at line {line_no}")
    };
    format!("\n*** FATAL CONFIG FILE ERROR (Tern {}) ***\n{place}\n>>> '{line}'\n{reason} (directive '{name}')", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units() {
        assert_eq!(parse_memory("1gb"), Some(1 << 30));
        assert_eq!(parse_memory("1G"), Some(1_000_000_000));
        assert_eq!(parse_memory("512mb"), Some(512 << 20));
        assert_eq!(parse_memory("100"), Some(100));
        assert_eq!(parse_memory("-1"), None);
        assert_eq!(parse_memory("1tb"), None);
    }

    #[test]
    fn file_and_args() {
        let dir = std::env::temp_dir().join(format!("tern-cfg-{}", std::process::id()));
        std::fs::write(&dir, "# comment\nport 7001\nio-threads 3\nsave \"\"\nclient-output-buffer-limit normal 1mb 512kb 10\n").unwrap();
        let cfg = Config::from_args(&[dir.display().to_string(), "--port".into(), "7002".into()]).unwrap();
        assert_eq!(cfg.port, 7002);
        assert_eq!(cfg.threads, 3);
        assert_eq!(cfg.client_output_buffer_limit.normal, OutputLimit { hard: 1 << 20, soft: 512 << 10, soft_seconds: 10 });
        assert_eq!(cfg.save, vec![]);
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn self_include_is_an_error_not_a_stack_overflow() {
        let path = std::env::temp_dir().join(format!("tern-cfg-loop-{}", std::process::id()));
        std::fs::write(&path, format!("port 7003\ninclude {}\n", path.display())).unwrap();
        let e = Config::from_args(&[path.display().to_string()]).unwrap_err();
        assert!(e.contains(&format!("nested more than {MAX_INCLUDE_DEPTH} deep")), "{e}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn passive_directives_give_their_own_reason() {
        assert!(find_directive("maxmemory").is_some_and(|d| d.passive.is_none()));
        assert!(find_directive("save").is_some_and(|d| d.passive.is_none()));
        assert!(passive_reason("aof-timestamp-enabled").contains("AOF"));
        assert!(passive_reason("replica-priority").contains("replication"));
        assert!(find_directive("repl-backlog-size").is_some_and(|d| d.passive.is_none()));
        assert!(find_directive("zset-max-listpack-entries").is_some_and(|d| d.passive.is_none()));
        assert!(find_directive("stream-node-max-entries").is_some_and(|d| d.passive.is_none()));
    }

    #[test]
    fn errors_name_line_directive_and_reason() {
        let mut c = Config::default();
        let e = c.apply_text("port 6379\nport abc\n", "x.conf").unwrap_err();
        assert!(e.contains("x.conf") && e.contains("line 2") && e.contains("port abc") && e.contains("integer"), "{e}");
        let e = c.apply_text("no-such-thing 1\n", "y.conf").unwrap_err();
        assert!(e.contains("Bad directive"), "{e}");
    }

    #[test]
    fn table_names_are_unique_and_defaults_survive_a_rewrite() {
        let defaults = Config::default();
        let mut names: Vec<String> = DIRECTIVES.iter().flat_map(|d| d.names()).map(str::to_ascii_lowercase).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a name or alias is declared twice");
        for d in DIRECTIVES {
            let text = defaults.rewrite_lines(d).join("\n");
            let mut back = Config::default();
            back.apply_text(&text, "default").unwrap_or_else(|e| panic!("{}: default {text:?} refused: {e}", d.name));
            assert_eq!((d.get)(&back), (d.get)(&defaults), "{} through {text:?}", d.name);
            assert!(d.passive.map_or(true, |r| r.starts_with("Tern ")), "{}", d.name);
        }
    }

    #[test]
    fn settings_mirror_the_config_they_were_loaded_from() {
        let mut c = Config::default();
        c.apply_text("prefetch-batch-max-size 128\nmaxmemory-policy allkeys-lfu\nlfu-log-factor 3\nrequirepass x\nclient-output-buffer-limit normal 1mb 2mb 3\n", "t")
            .unwrap();
        let s = Settings::default();
        s.load_from(&c);
        assert_eq!(s.prefetch_batch_max_size(), tern_store::MAX_PREFETCH_GROUP);
        assert_eq!(s.lfu().map(|l| l.log_factor), Some(3));
        assert_eq!(s.evict_config().policy, tern_store::Policy::AllkeysLfu);
        assert!(s.requirepass_set());
        assert_eq!(s.client_output_buffer_limit().normal, OutputLimit { hard: 1 << 20, soft: 2 << 20, soft_seconds: 3 });
        let e = Config::default().apply_text("prefetch-batch-max-size 129\n", "t").unwrap_err();
        assert!(e.contains("argument must be between 0 and 128 inclusive"), "{e}");
    }
}
