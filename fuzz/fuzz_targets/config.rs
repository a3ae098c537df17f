//! Fuzzes the redis.conf parser (`tern_config`) through its three
//! public ways in: a config file's text (`Config::apply_text`), command-line
//! arguments (`Config::from_args`, `--name value ...`), and CONFIG SET
//! (`Config::set_runtime`). Checks:
//! - no panic, whatever the bytes or lines;
//! - a refused file or command line names the directive: the error ends
//!   with `(directive '<name>')`, `<name>` being the first word of the
//!   offending line (as written, or unquoted); a command line may instead
//!   be refused for an argument that is not a `--directive`;
//! - round trip: when a configuration is accepted, the lines CONFIG
//!   REWRITE would write for it (`Config::rewritten`, both into an empty
//!   file and over the text it came from, and each directive's
//!   `Config::rewrite_lines` alone) parse back without error into a
//!   configuration in which every directive's getter (what CONFIG GET
//!   shows) gives the same value.
//!
//! `include` lines read files, so inputs that have one are skipped (the
//! unit tests in tern-config cover include).
//!
//! Input: a control byte (mode: 0 file text, 1 arguments separated by NUL
//! bytes, 2 CONFIG SET of the directive chosen by the next byte), then the
//! text.
//!
//! Run from the repository root:
//! `cargo +nightly fuzz run config -- -dict=fuzz/config.dict -max_total_time=180`
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tern_resp::{Frame, Limits};
use tern_config::{Config, DIRECTIVES};

/// The words of one config line, as the parser splits it (redis.conf's
/// quoting, which is the inline-command syntax); `None` if unbalanced.
fn words(line: &str) -> Option<Vec<String>> {
    let mut buf = line.as_bytes().to_vec();
    buf.push(b'\n');
    let mut f = Frame::new();
    match f.parse(&buf, &Limits::default()) {
        Ok(Some(_)) => Some(f.args(&buf).iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect()),
        _ => None,
    }
}

/// The lines `apply_text` looks at, with their 1-based numbers.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(n, l)| (n + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn has_include(text: &str) -> bool {
    lines(text).any(|(_, l)| words(l).and_then(|w| w.into_iter().next()).is_some_and(|w| w.eq_ignore_ascii_case("include")))
}

/// What CONFIG GET shows for every directive.
fn values(c: &Config) -> Vec<(&'static str, String)> {
    DIRECTIVES.iter().map(|d| (d.name, (d.get)(c))).collect()
}

/// [`values`] of the default configuration, computed once (building a
/// `Config` asks the OS for the number of CPUs).
fn default_values() -> &'static [(&'static str, String)] {
    static V: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    V.get_or_init(|| values(&Config::default()))
}

fn parse_back(text: &str, what: &str, want: &Config) {
    let mut back = Config::default();
    if let Err(e) = back.apply_text(text, "rewritten") {
        panic!("{what} does not parse back:\n{text}\nerror: {e}");
    }
    let (a, b) = (values(want), values(&back));
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert_eq!(x, y, "{what}: directive {name} changed from {x:?} to {y:?} through\n{text}");
    }
}

/// The configuration renders to lines that parse back to the same values.
fn round_trip(c: &Config, source: Option<&str>) {
    parse_back(&c.rewritten(""), "CONFIG REWRITE into an empty file", c);
    if let Some(old) = source {
        parse_back(&c.rewritten(old), "CONFIG REWRITE over the original text", c);
    }
    // Each changed directive alone too (the unchanged ones were just
    // checked by the rewrite into an empty file, which leaves them out).
    let defaults = default_values();
    for (d, (_, default)) in DIRECTIVES.iter().zip(defaults) {
        if (d.get)(c) == *default {
            continue;
        }
        let text = c.rewrite_lines(d).join("\n");
        let mut back = Config::default();
        if let Err(e) = back.apply_text(&text, "rewritten") {
            panic!("rewrite_lines of {} does not parse back:\n{text}\nerror: {e}", d.name);
        }
        assert_eq!((d.get)(c), (d.get)(&back), "directive {} does not survive {text:?}", d.name);
    }
    // What start-up and the hot path read from it must not panic either.
    let _ = c.passive_in_use();
    tern_config::Settings::default().load_from(c);
}

/// The error of a refused file names the offending line's directive.
fn check_file_error(text: &str, e: &str) {
    let Some(tail) = e.rsplit_once("(directive '").map(|(_, t)| t) else {
        panic!("error does not name a directive: {e}");
    };
    let name = tail.strip_suffix("')").unwrap_or_else(|| panic!("error does not end with the directive: {e}"));
    let at = e.split("at line ").nth(1).and_then(|t| t.split('\n').next()).and_then(|n| n.parse::<usize>().ok());
    let Some(at) = at else { panic!("error does not give the line: {e}") };
    let raw = text.lines().nth(at - 1).unwrap_or_else(|| panic!("error names line {at}, past the end: {e}"));
    // Redis trims " \t\r\n" only; tern-config trims Unicode white space too
    // (config_lines_are_trimmed_of_ascii_white_space_only): either will do
    // here until that is fixed.
    let ok = [raw.trim_matches([' ', '\t', '\r', '\n']), raw.trim()].iter().any(|line| {
        let first_raw = line.split_whitespace().next().unwrap_or("");
        let first = words(line).and_then(|w| w.into_iter().next()).unwrap_or_default();
        name == first_raw || name == first
    });
    assert!(ok, "error names '{name}' for line {raw:?}: {e}");
}

fuzz_target!(|data: &[u8]| {
    let [ctl, rest @ ..] = data else { return };
    match ctl % 3 {
        0 => {
            let text = String::from_utf8_lossy(rest);
            if has_include(&text) {
                return;
            }
            let mut c = Config::default();
            match c.apply_text(&text, "fuzz.conf") {
                Ok(()) => round_trip(&c, Some(&text)),
                Err(e) => check_file_error(&text, &e),
            }
        }
        1 => {
            let text = String::from_utf8_lossy(rest);
            let mut args: Vec<String> = text.split('\0').map(str::to_string).collect();
            // A first argument that is not a directive is a file to read.
            if !args[0].starts_with("--") {
                args[0].insert_str(0, "--");
            }
            if args.iter().any(|a| a.strip_prefix("--").is_some_and(|n| n.eq_ignore_ascii_case("include"))) {
                return;
            }
            match Config::from_args(&args) {
                Ok(c) => round_trip(&c, None),
                Err(e) => assert!(
                    e.starts_with("Invalid argument '") || (e.contains("(directive '") && e.ends_with("')")),
                    "command-line error names no directive: {e}"
                ),
            }
        }
        _ => {
            let [which, value @ ..] = rest else { return };
            let d = &DIRECTIVES[usize::from(*which) % DIRECTIVES.len()];
            let value = String::from_utf8_lossy(value);
            let mut c = Config::default();
            if c.set_runtime(d, &value).is_ok() {
                round_trip(&c, None);
            }
        }
    }
});
