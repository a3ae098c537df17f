//! The declaration table (tern-config's `directives.rs`) against the real binary:
//! every runtime directive round-trips through CONFIG SET and CONFIG GET
//! (by its name and its alias), every start-up-only one is refused by
//! CONFIG SET with Redis's error, and where Tern claims Redis's default,
//! a Redis 8 build (`$TERN_REDIS8`, or `../shared/reference/bin/` beside the
//! checkout; skipped when there is none) shows the same value.
mod common;
use common::*;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tern_config::{Config, Directive, When, DIRECTIVES};

fn get(c: &mut redis::Connection, name: &str) -> Option<String> {
    let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg(name).query(c).unwrap();
    match v.as_slice() {
        [] => None,
        [n, v] => {
            assert!(n.eq_ignore_ascii_case(name), "{name}: {v:?}");
            Some(v.clone())
        }
        _ => panic!("{name}: {v:?}"),
    }
}

/// Values to try, in order; the first one the table accepts and that
/// changes what CONFIG GET shows is the one set.
const CANDIDATES: &[&str] = &[
    "yes", "no", "2", "7", "1", "1mb", "3kb", "60 5", "normal 1mb 512kb 10", "allkeys-lfu", "verbose", "always", "swapdb", "allchannels", "panic",
    "absolute", "clients", "local", "systemd", "local3", "KEA", "TLSv1.3", "TLS_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
];

/// A value the table accepts for `d` that differs from the default, with
/// what CONFIG GET should then show.
fn other_value(d: &Directive) -> (&'static str, String) {
    try_other_value(d).unwrap_or_else(|| panic!("no candidate value for {}", d.name))
}

fn try_other_value(d: &Directive) -> Option<(&'static str, String)> {
    let default = (d.get)(&Config::default());
    CANDIDATES.iter().find_map(|v| {
        let mut c = Config::default();
        (c.set_runtime(d, v).is_ok() && (d.get)(&c) != default).then(|| (*v, (d.get)(&c)))
    })
}

/// A directive Tern refuses unless it has its default (`replicaof`,
/// `tls-replication yes`): no candidate value other than the default is
/// accepted, and the table's reason for refusing one is Tern's own.
fn refused(d: &Directive) -> bool {
    let tern_says = |v: &str| Config::default().set_runtime(d, v).err().is_some_and(|e| e.starts_with("Tern "));
    try_other_value(d).is_none() && (tern_says("yes") || tern_says("1"))
}

#[test]
fn every_runtime_directive_round_trips_and_start_up_ones_are_refused() {
    let s = TestServer::start(1);
    let mut c = s.conn();
    let mut r = s.raw();
    let defaults = Config::default();
    for d in DIRECTIVES {
        let default = (d.get)(&defaults);
        match d.when {
            When::Runtime if refused(d) => {
                let e = redis::cmd("CONFIG").arg("SET").arg(d.name).arg("yes").query::<()>(&mut c).unwrap_err();
                assert!(e.to_string().contains("CONFIG SET failed"), "{}: {e}", d.name);
                let _: () = redis::cmd("CONFIG").arg("SET").arg(d.name).arg(&default).query(&mut c).unwrap_or_else(|e| panic!("CONFIG SET {} {default:?}: {e}", d.name));
            }
            When::Runtime => {
                let (value, shown) = other_value(d);
                for name in d.names() {
                    let _: () = redis::cmd("CONFIG").arg("SET").arg(name).arg(value).query(&mut c).unwrap_or_else(|e| panic!("CONFIG SET {name} {value}: {e}"));
                    for n in d.names() {
                        assert_eq!(get(&mut c, n).as_deref(), Some(shown.as_str()), "CONFIG SET {name} {value:?}, then GET {n}");
                    }
                    // Back to the default, so that `timeout 1` or
                    // `requirepass` do not end the test's connection.
                    let _: () = redis::cmd("CONFIG").arg("SET").arg(d.name).arg(&default).query(&mut c).unwrap_or_else(|e| panic!("CONFIG SET {} {default:?}: {e}", d.name));
                    assert_eq!(get(&mut c, d.name).as_deref(), Some(default.as_str()), "{} back to its default", d.name);
                }
            }
            When::Startup | When::Protected => {
                let why = if d.when == When::Startup { "can't set immutable config" } else { "can't set protected config" };
                for name in d.names() {
                    let want = format!("-ERR CONFIG SET failed (possibly related to argument '{name}') - {why}\r\n");
                    r.roundtrip(&[b"CONFIG", b"SET", name.as_bytes(), default.as_bytes()], want.as_bytes());
                }
            }
        }
    }
}

/// redis-server-unstable on a free port, stopped by PID when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Option<Redis> {
        // $TERN_REDIS8 (a Redis 8 build made by hand), else the current
        // build beside the checkout, as tests/python/servers.py looks.
        let beside = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/bin/redis-server-unstable");
        let bin = std::env::var_os("TERN_REDIS8").map(std::path::PathBuf::from).into_iter().chain([beside]).find(|p| p.exists())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", &std::env::temp_dir().display().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let r = Redis { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        // Ready when it answers PING, not merely when it accepts: a
        // connection made while it starts can be reset.
        let ping = || -> redis::RedisResult<()> {
            let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?.get_connection()?;
            redis::cmd("PING").query(&mut c)
        };
        while ping().is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(r)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn defaults_claimed_as_redis_match_redis() {
    let Some(redis) = Redis::start() else {
        eprintln!("no Redis 8 build (TERN_REDIS8): skipped");
        return;
    };
    let mut rc = redis::Client::open(format!("redis://127.0.0.1:{}/", redis.port)).unwrap().get_connection().unwrap();
    let defaults = Config::default();
    // Set on Redis's command line above (or by the machine: the port).
    let given = ["port", "bind", "save", "appendonly", "dir"];
    let mut compared = 0;
    let mut differ = Vec::new();
    for d in DIRECTIVES.iter().filter(|d| !d.tern_default && !given.contains(&d.name)) {
        let Some(theirs) = get(&mut rc, d.name) else { continue };
        compared += 1;
        let ours = (d.get)(&defaults);
        if ours != theirs {
            differ.push(format!("{}: Tern {ours:?}, Redis {theirs:?}", d.name));
        }
    }
    assert!(differ.is_empty(), "defaults that differ from Redis's (mark them `+ own` or fix them):\n{}", differ.join("\n"));
    assert!(compared > 50, "only {compared} directives compared");
}

/// The README's configuration section follows the table: every directive
/// Tern acts on has its row, marked runtime exactly when CONFIG SET may
/// change it, and every passive one is named (or matched by a listed
/// pattern such as `rdb*`) among the directives accepted but not acted on.
#[test]
fn readme_lists_every_directive_as_the_table_declares_it() {
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let section = |from: &str, to: &str| {
        let start = readme.find(from).unwrap_or_else(|| panic!("README has no {from:?}"));
        let end = start + readme[start..].find(to).unwrap_or_else(|| panic!("README has no {to:?} after {from:?}"));
        readme[start..end].to_string()
    };
    let acted = section("\nActed on:", "\nAccepted for compatibility");
    let passive = section("\nAccepted for compatibility", "\n**Refused**");
    let refusals = section("\n**Refused**", "\n## ");
    // `| `name` (alias `x`) | yes | meaning |` -> (name, runtime).
    let rows: Vec<(String, bool)> = acted
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cols.get(1)?.strip_prefix('`')?.split('`').next()?;
            Some((name.to_string(), *cols.get(2)? == "yes"))
        })
        .collect();
    let patterns: Vec<&str> = passive.split('`').skip(1).step_by(2).collect();
    assert!(rows.len() >= 20 && patterns.len() >= 30, "README's tables not found: {rows:?}");
    let mut wrong = Vec::new();
    for d in DIRECTIVES {
        if refused(d) {
            if !refusals.contains(&format!("`{}", d.name)) {
                wrong.push(format!("{}: refused but not listed as refused", d.name));
            }
            continue;
        }
        if d.passive.is_some() {
            if !patterns.iter().any(|p| tern_commands::glob::matches(p.as_bytes(), d.name.as_bytes(), false)) {
                wrong.push(format!("{}: passive but not listed as accepted", d.name));
            }
            continue;
        }
        match rows.iter().find(|(n, _)| n == d.name) {
            None => wrong.push(format!("{}: acted on but has no row", d.name)),
            Some(&(_, runtime)) if runtime != (d.when != When::Startup) => wrong.push(format!("{}: runtime column says {runtime}", d.name)),
            Some(_) => {}
        }
    }
    for (n, _) in &rows {
        if !DIRECTIVES.iter().any(|d| d.name == n && d.passive.is_none()) {
            wrong.push(format!("{n}: has a row but is not a directive Tern acts on"));
        }
    }
    assert!(wrong.is_empty(), "README out of step with tern-config/src/directives.rs:\n{}", wrong.join("\n"));
}
