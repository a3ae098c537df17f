//! Fuzzes the whole request path in-process: arbitrary bytes are fed to a
//! client of a real server (`tern_server::inproc`: RESP parsing, the
//! prefetch plan, command dispatch and every handler, against a real
//! keyspace), in pieces the first byte chooses. After each input:
//! - no panic (and, in this ASan build, no memory error in the table's
//!   unsafe code);
//! - the client's output is a sequence of complete, well-formed RESP2/RESP3
//!   replies (checked by [`read_reply`], a reader written here), with error
//!   replies on one line starting with an upper-case code;
//! - a new client (authenticated with the password the input may have
//!   set) gets `+PONG` for PING;
//! - in every database, DBSIZE equals the number of keys KEYS * returns,
//!   and a full SCAN returns exactly those keys (after removing the keys
//!   whose TTL has passed, which DBSIZE counts and KEYS does not, as in
//!   Redis);
//! - resumable execution: when the input was fed in pieces and uses only
//!   commands whose replies do not depend on time, randomness or hash
//!   order ([`DETERMINISTIC`]), a second fresh server fed it whole replies
//!   the same bytes (the prefetch plan parses ahead across piece
//!   boundaries; this is what checks it).
//!
//! Each input makes a fresh server (default configuration, one worker,
//! `proto-max-bulk-len` 1mb so that SETRANGE and LCS stay small), so a
//! crash reproduces from its input alone. Inputs are bounded: at most
//! [`MAX_COMMANDS`] commands, and none of the commands that stop the
//! server or whose cost is not bounded by the input (SHUTDOWN, raising
//! `proto-max-bulk-len`, HRANDFIELD with a large negative count, which
//! replies that many fields, in Redis too).
//!
//! Run from the repository root:
//! `cargo +nightly fuzz run dispatch -- -dict=fuzz/dispatch.dict -max_total_time=180`
#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use tern_resp::{Frame, Limits};
use tern_config::Config;
use tern_server::inproc::{InProc, Session};

const MAX_COMMANDS: usize = 64;
const PROTO_MAX_BULK_LEN: u64 = 1 << 20;
/// Largest |count| of a negative HRANDFIELD count.
const MAX_RANDFIELD: i64 = 1000;
/// Feeding piece sizes, chosen by the first byte (0: all at once).
const PIECES: [usize; 8] = [0, 1, 2, 3, 7, 16, 64, 301];

/// Commands whose replies are a function of the commands before them
/// (no clock, no randomness, no table order, no client ids).
const DETERMINISTIC: &[&[u8]] = &[
    b"get", b"set", b"setnx", b"getset", b"getdel", b"mget", b"mset", b"msetnx", b"append", b"strlen", b"getrange", b"substr",
    b"setrange", b"incr", b"decr", b"incrby", b"decrby", b"incrbyfloat", b"lcs", b"hset", b"hmset", b"hsetnx", b"hget", b"hmget",
    b"hdel", b"hlen", b"hexists", b"hstrlen", b"hincrby", b"hincrbyfloat", b"del", b"unlink", b"exists", b"touch", b"type",
    b"rename", b"renamenx", b"copy", b"move", b"persist", b"dbsize", b"flushdb", b"flushall", b"swapdb", b"select", b"multi",
    b"exec", b"discard", b"watch", b"unwatch", b"ping", b"echo", b"quit",
];

/// Options that give a key a TTL (whose expiry would race the two runs).
const TTL_OPTIONS: &[&[u8]] = &[b"ex", b"px", b"exat", b"pxat"];

/// Default config, one worker, small bulk limit; built once (a `Config`
/// asks the OS for the CPU count).
fn config() -> Config {
    static C: OnceLock<Config> = OnceLock::new();
    C.get_or_init(|| Config { threads: 1, proto_max_bulk_len: PROTO_MAX_BULK_LEN, ..Config::default() }).clone()
}

/// A decoded reply, as much as the checks need.
#[derive(Debug)]
enum V {
    Simple(Vec<u8>),
    Error,
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<V>>),
    Other,
}

fn line(b: &[u8], pos: usize) -> Result<(&[u8], usize), String> {
    let rest = &b[pos..];
    let Some(i) = rest.windows(2).position(|w| w == b"\r\n") else {
        return Err(format!("no CRLF after byte {pos}"));
    };
    let l = &rest[..i];
    if l.contains(&b'\n') || l.contains(&b'\r') {
        return Err(format!("a bare CR or LF in the line at byte {pos}"));
    }
    Ok((l, pos + i + 2))
}

fn num(l: &[u8], what: &str) -> Result<i64, String> {
    std::str::from_utf8(l).ok().and_then(|s| s.parse::<i64>().ok()).ok_or_else(|| format!("{what}: bad number {:?}", l.escape_ascii().to_string()))
}

/// Reads one RESP2/RESP3 reply at `pos`; returns it and where it ends.
fn read_reply(b: &[u8], pos: usize, depth: usize) -> Result<(V, usize), String> {
    if depth > 16 {
        return Err("replies nested more than 16 deep".into());
    }
    let Some(&t) = b.get(pos) else { return Err("missing reply".into()) };
    let (l, next) = line(b, pos + 1)?;
    let blob = |n: i64| -> Result<(&[u8], usize), String> {
        let n = usize::try_from(n).map_err(|_| format!("negative length {n}"))?;
        let end = next.checked_add(n).filter(|&e| e + 2 <= b.len()).ok_or_else(|| format!("blob of {n} bytes cut short"))?;
        if &b[end..end + 2] != b"\r\n" {
            return Err(format!("blob of {n} bytes not followed by CRLF"));
        }
        Ok((&b[next..end], end + 2))
    };
    let aggregate = |n: i64, per: usize| -> Result<(Vec<V>, usize), String> {
        let n = usize::try_from(n).map_err(|_| format!("negative count {n}"))?;
        let mut p = next;
        let mut items = Vec::new();
        for _ in 0..n * per {
            let (v, q) = read_reply(b, p, depth + 1)?;
            items.push(v);
            p = q;
        }
        Ok((items, p))
    };
    Ok(match t {
        b'+' => (V::Simple(l.to_vec()), next),
        b'-' => {
            if !l.first().is_some_and(u8::is_ascii_uppercase) {
                return Err(format!("error reply without an upper-case code: {:?}", l.escape_ascii().to_string()));
            }
            (V::Error, next)
        }
        b':' => (V::Int(num(l, "integer")?), next),
        b'(' => {
            let digits = l.strip_prefix(b"-").unwrap_or(l);
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err("bad big number".into());
            }
            (V::Other, next)
        }
        b',' => {
            let s = std::str::from_utf8(l).map_err(|_| "double not UTF-8")?;
            if !matches!(s, "inf" | "-inf" | "nan") && s.parse::<f64>().is_err() {
                return Err(format!("bad double {s:?}"));
            }
            (V::Other, next)
        }
        b'#' => {
            if l != b"t" && l != b"f" {
                return Err("bad boolean".into());
            }
            (V::Other, next)
        }
        b'_' => {
            if !l.is_empty() {
                return Err("null with a payload".into());
            }
            (V::Bulk(None), next)
        }
        b'$' => match num(l, "bulk length")? {
            -1 => (V::Bulk(None), next),
            n => {
                let (d, end) = blob(n)?;
                (V::Bulk(Some(d.to_vec())), end)
            }
        },
        b'!' => {
            let (_, end) = blob(num(l, "blob error length")?)?;
            (V::Other, end)
        }
        b'=' => {
            let (d, end) = blob(num(l, "verbatim length")?)?;
            if d.len() < 4 || d[3] != b':' {
                return Err("verbatim string without its format".into());
            }
            (V::Other, end)
        }
        b'*' => match num(l, "array length")? {
            -1 => (V::Array(None), next),
            n => {
                let (items, end) = aggregate(n, 1)?;
                (V::Array(Some(items)), end)
            }
        },
        b'~' | b'>' => {
            let (_, end) = aggregate(num(l, "set length")?, 1)?;
            (V::Other, end)
        }
        b'%' => {
            let (_, end) = aggregate(num(l, "map length")?, 2)?;
            (V::Other, end)
        }
        b'|' => {
            // Attributes precede the reply they annotate.
            let (_, end) = aggregate(num(l, "attribute length")?, 2)?;
            return read_reply(b, end, depth + 1);
        }
        other => return Err(format!("unknown reply type {:?} at byte {pos}", other as char)),
    })
}

/// Every reply in `out`, which must hold nothing else.
fn read_all(out: &[u8]) -> Vec<V> {
    let mut pos = 0;
    let mut all = Vec::new();
    while pos < out.len() {
        match read_reply(out, pos, 0) {
            Ok((v, next)) => {
                all.push(v);
                pos = next;
            }
            Err(e) => panic!("malformed reply at byte {pos}: {e}\noutput: {}", out.escape_ascii()),
        }
    }
    all
}

fn cmd(args: &[&[u8]]) -> Vec<u8> {
    let mut v = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        v.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        v.extend_from_slice(a);
        v.extend_from_slice(b"\r\n");
    }
    v
}

/// Runs one command on `s` and returns its one reply.
fn call(srv: &mut InProc, s: &mut Session, args: &[&[u8]]) -> V {
    srv.feed(s, &cmd(args));
    let out = s.take_replies();
    let mut all = read_all(&out);
    assert_eq!(all.len(), 1, "{:?} gave {} replies: {}", args, all.len(), out.escape_ascii());
    all.pop().unwrap_or(V::Other)
}

fn keys_of(v: &V) -> Vec<Vec<u8>> {
    match v {
        V::Array(Some(items)) => items
            .iter()
            .map(|i| match i {
                V::Bulk(Some(k)) => k.clone(),
                other => panic!("a key that is not a bulk string: {other:?}"),
            })
            .collect(),
        other => panic!("expected an array of keys, got {other:?}"),
    }
}

/// DBSIZE, KEYS * and a full SCAN agree in database `db`; `None` if they
/// do not (yet: a TTL may pass between the commands).
fn keyspace_agrees(srv: &mut InProc, s: &mut Session) -> Result<(), String> {
    let V::Int(dbsize) = call(srv, s, &[b"DBSIZE"]) else { return Err("DBSIZE is not an integer".into()) };
    let keys = keys_of(&call(srv, s, &[b"KEYS", b"*"]));
    let distinct: HashSet<Vec<u8>> = keys.iter().cloned().collect();
    if distinct.len() != keys.len() {
        return Err(format!("KEYS * returned a key twice: {keys:?}"));
    }
    let mut scanned = HashSet::new();
    let mut cursor = b"0".to_vec();
    for round in 0.. {
        if round > 10_000 {
            return Err("SCAN did not finish in 10,000 calls".into());
        }
        let V::Array(Some(mut r)) = call(srv, s, &[b"SCAN", &cursor, b"COUNT", b"50"]) else { return Err("SCAN reply is not an array".into()) };
        if r.len() != 2 {
            return Err("SCAN reply is not [cursor, keys]".into());
        }
        scanned.extend(keys_of(&r[1]));
        match r.swap_remove(0) {
            V::Bulk(Some(c)) => cursor = c,
            other => return Err(format!("SCAN cursor {other:?}")),
        }
        if cursor == b"0" {
            break;
        }
    }
    if dbsize as usize != keys.len() || scanned != distinct {
        return Err(format!("DBSIZE {dbsize}, KEYS * {} keys, SCAN {} keys", keys.len(), scanned.len()));
    }
    Ok(())
}

/// What the pre-parse of an input found.
struct Scan {
    /// Within bounds: run it.
    admissible: bool,
    /// Every command is in [`DETERMINISTIC`] and sets no TTL.
    deterministic: bool,
}

/// Parses `input` as the server will (it may stop earlier, e.g. at
/// stricter unauthenticated limits) to bound it and classify it.
fn scan(input: &[u8]) -> Scan {
    let limits = Limits { max_bulk_len: PROTO_MAX_BULK_LEN, ..Limits::default() };
    let mut f = Frame::new();
    let mut pos = 0;
    let mut n = 0;
    let mut deterministic = true;
    let refuse = Scan { admissible: false, deterministic: false };
    while pos < input.len() {
        let buf = &input[pos..];
        let Ok(Some(used)) = f.parse(buf, &limits) else { break };
        let args = f.args(buf);
        if !args.is_empty() {
            n += 1;
            let name = args.get(0);
            let is = |a: &[u8], s: &[u8]| a.eq_ignore_ascii_case(s);
            if n > MAX_COMMANDS || is(name, b"shutdown") || args.iter().any(|a| is(a, b"proto-max-bulk-len")) {
                return refuse;
            }
            if is(name, b"hrandfield") && args.len() >= 3 {
                if let Some(c) = tern_resp::parse_i64(args.get(2)) {
                    if c < -MAX_RANDFIELD {
                        return refuse;
                    }
                }
            }
            if !DETERMINISTIC.iter().any(|d| is(name, d)) || args.iter().skip(1).any(|a| TTL_OPTIONS.iter().any(|o| is(a, o))) {
                deterministic = false;
            }
        }
        pos += used;
    }
    Scan { admissible: true, deterministic }
}

fuzz_target!(|data: &[u8]| {
    run(data);
    lazyfree_threads_gone();
});

/// Waits until no lazyfree thread is left: each server of an input has
/// its own, which ends once the server is dropped. A thread still tearing
/// down its thread-locals when the input ends looks, to LeakSanitizer, as
/// if it had leaked them (glibc's `__cxa_thread_atexit_impl` list).
fn lazyfree_threads_gone() {
    let t = Instant::now();
    let alive = || {
        std::fs::read_dir("/proc/self/task").map_or(false, |tasks| {
            tasks.flatten().any(|task| std::fs::read_to_string(task.path().join("comm")).is_ok_and(|c| c.trim_end() == "tern-lazyfree"))
        })
    };
    while alive() {
        assert!(t.elapsed() < Duration::from_secs(5), "a lazyfree thread outlives its server by 5 s");
        std::thread::yield_now();
    }
}

fn run(data: &[u8]) {
    let [ctl, input @ ..] = data else { return };
    let found = scan(input);
    if !found.admissible {
        return;
    }
    let mut srv = InProc::new(config());
    let mut s = srv.connect();
    let pieces = PIECES[usize::from(*ctl) % PIECES.len()];
    if pieces == 0 {
        srv.feed(&mut s, input);
    } else {
        for piece in input.chunks(pieces) {
            srv.feed(&mut s, piece);
        }
    }
    let out = s.take_replies();
    read_all(&out);
    if pieces != 0 && found.deterministic {
        let mut whole = InProc::new(config());
        let mut w = whole.connect();
        whole.feed(&mut w, input);
        let out_whole = w.take_replies();
        settle(&whole);
        assert!(
            out == out_whole,
            "fed in pieces of {pieces} bytes the replies differ from fed whole:\npieces: {}\nwhole:  {}",
            out.escape_ascii(),
            out_whole.escape_ascii()
        );
    }

    let mut check = srv.connect();
    let password = srv.server().config.read().requirepass.clone();
    if let Some(p) = password {
        match call(&mut srv, &mut check, &[b"AUTH", &p]) {
            V::Simple(ok) if ok == b"OK" => {}
            other => panic!("AUTH with the configured password: {other:?}"),
        }
    }
    srv.feed(&mut check, b"PING\r\n");
    assert_eq!(check.take_replies(), b"+PONG\r\n", "PING after the input");

    let dbs = srv.server().ks.db_count();
    for db in 0..dbs {
        let db_arg = db.to_string();
        match call(&mut srv, &mut check, &[b"SELECT", db_arg.as_bytes()]) {
            V::Simple(ok) if ok == b"OK" => {}
            other => panic!("SELECT {db}: {other:?}"),
        }
        let mut tries = 0;
        loop {
            match keyspace_agrees(&mut srv, &mut check) {
                Ok(()) => break,
                Err(e) if tries >= 4 => panic!("database {db}: {e}"),
                Err(_) => tries += 1,
            }
            // Keys whose TTL has passed are still counted by DBSIZE until
            // removed, as in Redis: remove them, then compare again.
            let ks = &srv.server().ks;
            ks.expire_cycle(tern_commands::server::now_ms(), ks.total_shards(), usize::MAX, &Default::default());
        }
    }
    settle(&srv);
}

/// Waits for `srv`'s lazyfree thread to drop what it was handed. The table
/// keeps item addresses packed in 6 bytes, which LeakSanitizer does not
/// see as pointers: a table FLUSHALL ASYNC handed to the thread and not
/// yet dropped when the input ends looks leaked. It must not take long.
fn settle(srv: &InProc) {
    let t = Instant::now();
    while srv.server().ks.lazyfree.pending() > 0 {
        assert!(t.elapsed() < Duration::from_secs(5), "the lazyfree thread holds {} values after 5 s", srv.server().ks.lazyfree.pending());
        std::thread::yield_now();
    }
}
