//! Batched prefetching (`prefetch-batch-max-size`) is only a hint: every
//! multi-key command and every pipeline must answer byte for byte the same
//! with it off (0), at its default, and at odd sizes (1, 3), at 1 and 2
//! worker threads, and multi-key writes stay atomic under concurrent
//! readers.
mod common;
use common::*;

use std::time::{Duration, Instant};

/// The settings compared: off first (the reference), then on.
const SIZES: &[Option<&str>] = &[Some("0"), None, Some("1"), Some("3")];

fn start(threads: usize, size: Option<&str>, extra: &[&str]) -> TestServer {
    let mut args: Vec<&str> = extra.to_vec();
    if let Some(n) = size {
        args.extend(["--prefetch-batch-max-size", n]);
    }
    TestServer::start_with(threads, &args)
}

/// Runs `f` against every size at 1 and 2 worker threads.
fn each_size(f: impl Fn(&TestServer, Option<&str>)) {
    for t in [1, 2] {
        for &size in SIZES {
            let s = start(t, size, &[]);
            f(&s, size);
        }
    }
}

fn resp(parts: &[&[u8]]) -> Vec<u8> {
    let mut b = format!("*{}\r\n", parts.len()).into_bytes();
    for p in parts {
        b.extend_from_slice(format!("${}\r\n", p.len()).as_bytes());
        b.extend_from_slice(p);
        b.extend_from_slice(b"\r\n");
    }
    b
}

/// A pipeline of commands sent in one write, ending with an ECHO of a
/// marker so that the whole reply can be read without knowing its length.
struct Script {
    bytes: Vec<u8>,
}

const MARK: &[u8] = b"$11\r\n--the-end--\r\n";

impl Script {
    fn new() -> Script {
        Script { bytes: Vec::new() }
    }
    fn cmd(&mut self, parts: &[&[u8]]) -> &mut Script {
        self.bytes.extend_from_slice(&resp(parts));
        self
    }
    fn words(&mut self, line: &str) -> &mut Script {
        let w: Vec<&[u8]> = line.split_whitespace().map(|s| s.as_bytes()).collect();
        self.cmd(&w)
    }
    fn owned(&mut self, parts: &[String]) -> &mut Script {
        let w: Vec<&[u8]> = parts.iter().map(|s| s.as_bytes()).collect();
        self.cmd(&w)
    }
    /// Sends everything in one write and returns every reply byte.
    fn run(&self, r: &mut Raw) -> Vec<u8> {
        let mut all = self.bytes.clone();
        all.extend_from_slice(&resp(&[b"ECHO", b"--the-end--"]));
        r.send(&all);
        read_to_mark(r)
    }
}

fn read_to_mark(r: &mut Raw) -> Vec<u8> {
    use std::io::Read;
    let mut got = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    while !got.ends_with(MARK) {
        let n = r.s.read(&mut buf).expect("read");
        assert!(n > 0, "closed before the end marker: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    got.truncate(got.len() - MARK.len());
    got
}

/// Runs the script on every size and thread count; all replies must equal
/// those with prefetching off. Returns that reply.
fn same_everywhere(setup: &Script, script: &Script) -> Vec<u8> {
    let mut reference: Option<Vec<u8>> = None;
    for t in [1, 2] {
        for &size in SIZES {
            let s = start(t, size, &[]);
            let mut r = s.raw();
            setup.run(&mut r);
            let got = script.run(&mut r);
            match &reference {
                None => reference = Some(got),
                Some(want) => assert!(
                    want == &got,
                    "threads {t}, prefetch-batch-max-size {size:?}:\nwant {}\ngot  {}",
                    String::from_utf8_lossy(want),
                    String::from_utf8_lossy(&got)
                ),
            }
        }
    }
    reference.unwrap_or_default()
}

fn keys(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn with_cmd(cmd: &str, args: &[String]) -> Vec<String> {
    std::iter::once(cmd.to_string()).chain(args.iter().cloned()).collect()
}

#[test]
fn mget_mset_with_duplicates_missing_and_wrong_types() {
    let mut setup = Script::new();
    setup.words("HSET h f v").words("SET n 12").words("SET s hello");
    let mut s = Script::new();
    s.words("MSET a 1 a 2 b 3")
        .words("MGET a a b missing h n s a")
        .words("MSETNX a 9 c 1")
        .words("MSETNX c 1 c 2 d 4")
        .words("MGET c d")
        .words("EXISTS a a missing h c")
        .words("TOUCH a missing a h")
        .words("DEL a a missing b")
        .words("UNLINK c c d h missing")
        .words("EXISTS a b c d h n s")
        .words("MGET a b c d h n s");
    let out = same_everywhere(&setup, &s);
    let want: &[u8] = b"+OK\r\n\
        *8\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\n3\r\n$-1\r\n$-1\r\n$2\r\n12\r\n$5\r\nhello\r\n$1\r\n2\r\n\
        :0\r\n:1\r\n*2\r\n$1\r\n2\r\n$1\r\n4\r\n:4\r\n:3\r\n:2\r\n:3\r\n:2\r\n\
        *7\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$2\r\n12\r\n$5\r\nhello\r\n";
    assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(want));
}

#[test]
fn many_keys_span_several_groups() {
    for n in [100, 1000] {
        let ks = keys("k", n);
        let mut setup = Script::new();
        let mut pairs = Vec::new();
        for (i, k) in ks.iter().enumerate() {
            pairs.push(k.clone());
            pairs.push(format!("v{i}"));
        }
        setup.owned(&with_cmd("MSET", &pairs));
        // Every other key is missing in the second half of the reads.
        let mut mixed = ks.clone();
        for i in (0..n).step_by(2) {
            mixed[i] = format!("absent{i}");
        }
        let mut s = Script::new();
        s.owned(&with_cmd("MGET", &ks))
            .owned(&with_cmd("MGET", &mixed))
            .owned(&with_cmd("EXISTS", &mixed))
            .owned(&with_cmd("TOUCH", &ks))
            .owned(&with_cmd("MSETNX", &pairs))
            .owned(&with_cmd("DEL", &mixed))
            .owned(&with_cmd("UNLINK", &ks))
            .owned(&with_cmd("MGET", &ks));
        let out = same_everywhere(&setup, &s);
        let mut want = format!("*{n}\r\n");
        for i in 0..n {
            want += &format!("${}\r\nv{i}\r\n", format!("v{i}").len());
        }
        want += &format!("*{n}\r\n");
        for i in 0..n {
            if i % 2 == 0 {
                want += "$-1\r\n";
            } else {
                want += &format!("${}\r\nv{i}\r\n", format!("v{i}").len());
            }
        }
        want += &format!(":{}\r\n:{n}\r\n:0\r\n:{}\r\n:{}\r\n*{n}\r\n", n / 2, n / 2, n / 2);
        want += &"$-1\r\n".repeat(n);
        assert_eq!(String::from_utf8_lossy(&out), want, "{n} keys");
    }
}

#[test]
fn expired_keys_read_as_missing() {
    each_size(|s, size| {
        let mut r = s.raw();
        let mut sc = Script::new();
        for i in 0..20 {
            sc.owned(&["SET".into(), format!("e{i}"), "x".into(), "PX".into(), "1".into()]);
        }
        sc.words("SET live y");
        sc.run(&mut r);
        // Time passes on the server's clock; nothing is asked of it meanwhile.
        let until = Instant::now() + Duration::from_millis(5);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        let names: Vec<String> = (0..20).map(|i| format!("e{i}")).chain(["live".to_string()]).collect();
        let mut q = Script::new();
        q.owned(&with_cmd("MGET", &names)).owned(&with_cmd("EXISTS", &names)).owned(&with_cmd("DEL", &names));
        let got = q.run(&mut r);
        let want = format!("*21\r\n{}$1\r\ny\r\n:1\r\n:1\r\n", "$-1\r\n".repeat(20));
        assert_eq!(String::from_utf8_lossy(&got), want, "size {size:?}");
    });
}

#[test]
fn pipelines_across_databases_and_transactions() {
    let setup = Script::new();
    let mut s = Script::new();
    s.words("SET k zero")
        .words("SELECT 1")
        .words("SET k one")
        .words("MGET k k")
        .words("SELECT 0")
        .words("MGET k k")
        .words("MSET x 1 y 2")
        .words("SELECT 2")
        .words("EXISTS x y k")
        .words("SELECT 0")
        .words("EXISTS x y k")
        .words("MULTI")
        .words("GET k")
        .words("SELECT 1")
        .words("GET k")
        .words("MGET k x")
        .words("EXEC")
        .words("GET k")
        .words("DEL k x y")
        .words("SELECT 0")
        .words("DEL k x y")
        .words("NOSUCH k")
        .words("MGET")
        .words("GET k")
        .words("SWAPDB 0 1")
        .words("MGET k x")
        .words("SET k again")
        .words("SWAPDB 0 1")
        .words("SELECT 1")
        .words("GET k")
        .words("RESET")
        .words("GET k");
    let out = same_everywhere(&setup, &s);
    let want = "+OK\r\n+OK\r\n+OK\r\n*2\r\n$3\r\none\r\n$3\r\none\r\n+OK\r\n*2\r\n$4\r\nzero\r\n$4\r\nzero\r\n\
        +OK\r\n+OK\r\n:0\r\n+OK\r\n:3\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n\
        *4\r\n$4\r\nzero\r\n+OK\r\n$3\r\none\r\n*2\r\n$3\r\none\r\n$-1\r\n$3\r\none\r\n:1\r\n+OK\r\n:3\r\n\
        -ERR unknown command 'NOSUCH', with args beginning with: 'k' \r\n-ERR wrong number of arguments for 'mget' command\r\n\
        $-1\r\n+OK\r\n*2\r\n$-1\r\n$-1\r\n+OK\r\n+OK\r\n+OK\r\n$5\r\nagain\r\n+RESET\r\n$-1\r\n";
    assert_eq!(String::from_utf8_lossy(&out), want);
}

#[test]
fn many_pipelined_commands_in_one_read() {
    let mut setup = Script::new();
    for i in 0..300 {
        setup.owned(&["SET".into(), format!("p{i}"), format!("{i}")]);
    }
    let mut s = Script::new();
    for i in 0..300 {
        match i % 5 {
            0 => s.owned(&["GET".into(), format!("p{i}")]),
            1 => s.owned(&["MGET".into(), format!("p{i}"), format!("p{}", i + 1), "nope".into()]),
            2 => s.owned(&["INCR".into(), format!("p{i}")]),
            3 => s.words("PING"),
            _ => s.owned(&["EXISTS".into(), format!("p{i}"), format!("p{}", i - 1)]),
        };
    }
    let out = same_everywhere(&setup, &s);
    assert!(out.starts_with(b"$1\r\n0\r\n*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n:3\r\n+PONG\r\n:2\r\n"), "{}", String::from_utf8_lossy(&out[..80]));
}

/// A request cut in two, after a pipeline that fills the output past the
/// high-water mark while its replies are not read: execution pauses in the
/// middle of a batch parsed ahead, and must resume at the right command.
#[test]
fn paused_batch_resumes_where_it_stopped() {
    each_size(|s, size| {
        let mut r = s.raw();
        let big = vec![b'z'; 1 << 20];
        r.cmd(&[b"SET", b"big", &big]);
        r.expect(b"+OK\r\n");
        let mut sc = Vec::new();
        for _ in 0..12 {
            sc.extend_from_slice(&resp(&[b"GET", b"big"]));
        }
        sc.extend_from_slice(&resp(&[b"MGET", b"big", b"none"]));
        let tail = resp(&[b"SET", b"after", b"yes"]);
        let cut = tail.len() / 2;
        sc.extend_from_slice(&tail[..cut]);
        r.send(&sc);
        r.send(&tail[cut..]);
        let mut want = Vec::new();
        let mut one = format!("${}\r\n", big.len()).into_bytes();
        one.extend_from_slice(&big);
        one.extend_from_slice(b"\r\n");
        for _ in 0..12 {
            want.extend_from_slice(&one);
        }
        want.extend_from_slice(b"*2\r\n");
        want.extend_from_slice(&one);
        want.extend_from_slice(b"$-1\r\n+OK\r\n");
        let got = r.read_n(want.len());
        assert!(got == want, "size {size:?}: replies differ");
        r.roundtrip(&[b"GET", b"after"], b"$3\r\nyes\r\n");
    });
}

/// RESET drops authentication: the commands after it in the same read are
/// parsed with the unauthenticated limits, even if they were parsed ahead.
#[test]
fn reset_in_a_pipeline_applies_unauthenticated_limits() {
    for t in [1, 2] {
        for &size in SIZES {
            let s = start(t, size, &["--requirepass", "pw"]);
            let mut r = s.raw();
            let mut b = resp(&[b"AUTH", b"pw"]);
            b.extend_from_slice(&resp(&[b"MGET", b"a", b"b"]));
            b.extend_from_slice(&resp(&[b"RESET"]));
            let eleven: Vec<&[u8]> = std::iter::once(&b"MGET"[..]).chain(std::iter::repeat_n(&b"k"[..], 10)).collect();
            b.extend_from_slice(&resp(&eleven));
            r.send(&b);
            r.expect(b"+OK\r\n*2\r\n$-1\r\n$-1\r\n+RESET\r\n-ERR Protocol error: unauthenticated multibulk length\r\n");
            assert!(r.is_closed(), "threads {t} size {size:?}");
        }
    }
}

#[test]
fn config_get_set_and_range_errors() {
    for t in [1, 2] {
        let s = TestServer::start(t);
        let mut r = s.raw();
        r.roundtrip(&[b"CONFIG", b"GET", b"prefetch-batch-max-size"], b"*2\r\n$23\r\nprefetch-batch-max-size\r\n$2\r\n16\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"prefetch-batch-max-size", b"0"], b"+OK\r\n");
        r.roundtrip(&[b"MSET", b"a", b"1", b"b", b"2"], b"+OK\r\n");
        r.roundtrip(&[b"MGET", b"a", b"b", b"c"], b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"prefetch-batch-max-size", b"128"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"GET", b"prefetch-*-size"], b"*2\r\n$23\r\nprefetch-batch-max-size\r\n$3\r\n128\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"prefetch-min-memory", b"4mb"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"GET", b"prefetch-min-memory"], b"*2\r\n$19\r\nprefetch-min-memory\r\n$7\r\n4194304\r\n");
        r.roundtrip(&[b"MGET", b"a", b"b", b"c"], b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"prefetch-min-memory", b"0"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"GET", b"prefetch-tune"], b"*2\r\n$13\r\nprefetch-tune\r\n$2\r\nno\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"prefetch-tune", b"yes"], b"+OK\r\n");
        r.roundtrip(&[b"MGET", b"a", b"b", b"c"], b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"prefetch-tune", b"no"], b"+OK\r\n");
        r.roundtrip(&[b"MGET", b"a", b"b", b"c"], b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n");
        r.roundtrip(
            &[b"CONFIG", b"SET", b"prefetch-batch-max-size", b"129"],
            b"-ERR CONFIG SET failed (possibly related to argument 'prefetch-batch-max-size') - argument must be between 0 and 128 inclusive\r\n",
        );
        r.roundtrip(
            &[b"CONFIG", b"SET", b"prefetch-batch-max-size", b"-1"],
            b"-ERR CONFIG SET failed (possibly related to argument 'prefetch-batch-max-size') - argument must be between 0 and 128 inclusive\r\n",
        );
        r.roundtrip(
            &[b"CONFIG", b"SET", b"prefetch-batch-max-size", b"8x"],
            b"-ERR CONFIG SET failed (possibly related to argument 'prefetch-batch-max-size') - argument couldn't be parsed into an integer\r\n",
        );
        r.roundtrip(&[b"CONFIG", b"GET", b"prefetch-batch-max-size"], b"*2\r\n$23\r\nprefetch-batch-max-size\r\n$3\r\n128\r\n");

        // The redis crate, and the directive on the command line.
        let s = start(t, Some("5"), &[]);
        let mut c = s.conn();
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("prefetch-batch-max-size").query(&mut c).unwrap();
        assert_eq!(v, ["prefetch-batch-max-size", "5"]);
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tern-server"))
        .args(["--port", "0", "--prefetch-batch-max-size", "200"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run tern-server");
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("prefetch-batch-max-size") && err.contains("argument must be between 0 and 128 inclusive"), "{err}");
}

/// MSET and MSETNX are atomic across all of their keys: a concurrent MGET
/// of the same keys sees every key from one write or none of them, with
/// prefetching off and on.
#[test]
fn multi_key_writes_stay_atomic_under_concurrent_readers() {
    for t in [1, 2] {
        for &size in SIZES {
            let s = start(t, size, &[]);
            let names = keys("c", 40);
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let writer = {
                let mut c = s.conn();
                let names = names.clone();
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut i = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let mut cmd = redis::cmd(if i % 7 == 3 { "MSETNX" } else { "MSET" });
                        for k in &names {
                            cmd.arg(k).arg(i);
                        }
                        let _: redis::Value = cmd.query(&mut c).unwrap();
                        if i.is_multiple_of(5) {
                            let _: i64 = redis::cmd("DEL").arg(&names).query(&mut c).unwrap();
                        }
                        i += 1;
                    }
                    i
                })
            };
            let mut c = s.conn();
            let mut consistent = 0;
            let deadline = Instant::now() + Duration::from_millis(300);
            while Instant::now() < deadline || consistent < 50 {
                let v: Vec<Option<u64>> = redis::cmd("MGET").arg(&names).query(&mut c).unwrap();
                assert!(v.iter().all(|x| *x == v[0]), "threads {t} size {size:?}: torn read {v:?}");
                let n: i64 = redis::cmd("EXISTS").arg(&names).query(&mut c).unwrap();
                assert!(n == 0 || n == names.len() as i64, "threads {t} size {size:?}: EXISTS saw {n} keys");
                consistent += 1;
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let writes = writer.join().unwrap();
            assert!(writes > 0);
        }
    }
}

/// Runs `f` on servers with the boolean `directive` off and on, at two
/// group sizes and one or two workers: every result must equal the first,
/// which is returned. CONFIG GET and SET see the directive, `yes` by
/// default.
fn same_either_way<R: PartialEq>(directive: &str, f: impl Fn(&TestServer) -> R) -> R {
    let mut reference: Option<R> = None;
    let flag = format!("--{directive}");
    for t in [1, 2] {
        for on in ["no", "yes"] {
            for size in ["16", "3"] {
                let got = f(&start(t, Some(size), &[&flag, on]));
                match &reference {
                    None => reference = Some(got),
                    Some(want) => assert!(want == &got, "threads {t}, {directive} {on}, size {size}: replies differ"),
                }
            }
        }
        let s = TestServer::start(t);
        let mut r = s.raw();
        let name = directive.as_bytes();
        let reply = |v: &str| format!("*2\r\n${}\r\n{directive}\r\n${}\r\n{v}\r\n", name.len(), v.len()).into_bytes();
        r.roundtrip(&[b"CONFIG", b"GET", name], &reply("yes"));
        r.roundtrip(&[b"CONFIG", b"SET", name, b"no"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"GET", name], &reply("no"));
    }
    reference.expect("a result")
}

/// The value stage's gate (`prefetch-value-gate`) only skips hints: MGETs
/// and pipelined GETs over runs of short values, then long ones kept in
/// the item, then ones kept apart (shared), then missing keys, in an order
/// that closes and reopens the gate, reply the same with it on and off.
#[test]
fn value_gate_on_and_off_reply_the_same() {
    let sizes = [3usize, 300, 20_000, 5];
    let mut setup = Script::new();
    let mut names = Vec::new();
    for (run, &len) in sizes.iter().enumerate() {
        for i in 0..12 {
            let k = format!("v{run}-{i}");
            let v = format!("{i:x}").repeat(len).into_bytes();
            setup.cmd(&[b"SET", k.as_bytes(), &v[..len]]);
            names.push(k);
        }
        for i in 0..6 {
            names.push(format!("missing{run}-{i}"));
        }
    }
    let mut script = Script::new();
    script.owned(&with_cmd("MGET", &names));
    let rev: Vec<String> = names.iter().rev().cloned().collect();
    script.owned(&with_cmd("MGET", &rev));
    for k in &names {
        script.cmd(&[b"GET", k.as_bytes()]);
    }
    let want = same_either_way("prefetch-value-gate", |s| {
        let mut r = s.raw();
        setup.run(&mut r);
        script.run(&mut r)
    });
    // Both MGETs and every GET: 12 values of each size per run, 6 nulls.
    let nulls = want.windows(5).filter(|w| w == b"$-1\r\n").count();
    assert_eq!(nulls, 3 * 24, "{}", String::from_utf8_lossy(&want[..200]));
}

/// Writes that give their keys new items (SET, MSET, MSETNX, SET with GET,
/// memcached `set` and `ms`), each reusing the block of an item freed
/// before it, reply, and leave the data, the same whether freed blocks
/// are asked for whole or not (`prefetch-freed-items`), at two group sizes
/// and one or two workers.
#[test]
fn freed_items_prefetched_or_not_reply_the_same() {
    use std::io::{Read, Write};
    let mut setup = Script::new();
    for i in 0..40 {
        let v = format!("{i:x}").repeat(1 + i * 7);
        setup.owned(&["SET".into(), format!("r{i}"), v]);
    }
    let mut script = Script::new();
    for round in 0..3 {
        for i in 0..40 {
            let v = format!("{round}{i}").repeat(1 + (i * 13 + round * 5) % 300);
            script.owned(&["SET".into(), format!("r{i}"), v]);
        }
        let mut mset = vec!["MSET".to_string()];
        for i in (0..40).step_by(3) {
            mset.extend([format!("r{i}"), format!("m{round}-{i}")]);
        }
        script.owned(&mset);
        script.owned(&["MSETNX".into(), format!("r{round}"), "no".into(), format!("new{round}"), "x".into()]);
        script.owned(&["SET".into(), format!("r{}", round + 1), "got".into(), "GET".into()]);
        script.owned(&with_cmd("MGET", &keys("r", 40)));
    }
    let mut mc = Vec::new();
    for i in 0..30 {
        let v = "v".repeat(1 + i * 9);
        mc.extend_from_slice(format!("set c{i} 0 0 {}\r\n{v}\r\nms c{} {}\r\n{v}\r\n", v.len(), (i + 7) % 30, v.len()).as_bytes());
    }
    mc.extend_from_slice(b"get");
    for i in 0..30 {
        mc.extend_from_slice(format!(" c{i}").as_bytes());
    }
    mc.extend_from_slice(b"\r\nmn\r\n");
    let (want, mc_want) = same_either_way("prefetch-freed-items", |s| {
        let mut r = s.raw();
        setup.run(&mut r);
        let got = script.run(&mut r);
        let mut c = std::net::TcpStream::connect(("127.0.0.1", mc_port(s))).expect("connect");
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(&mc).unwrap();
        let mut mc_got = Vec::new();
        let mut buf = [0u8; 65536];
        while !mc_got.ends_with(b"MN\r\n") {
            let n = c.read(&mut buf).expect("memcached read");
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&mc_got));
            mc_got.extend_from_slice(&buf[..n]);
        }
        (got, mc_got)
    });
    // Each round's MGET sees the MSET's values over the SETs before it.
    assert!(want.windows(7).any(|w| w == b"m2-39\r\n"), "{}", String::from_utf8_lossy(&want[want.len() - 300..]));
    assert_eq!(mc_want.windows(8).filter(|w| w == b"STORED\r\n").count(), 30, "{}", String::from_utf8_lossy(&mc_want[..200]));
    assert_eq!(mc_want.windows(4).filter(|w| w == b"HD\r\n").count(), 30);
    assert_eq!(mc_want.windows(6).filter(|w| w == b"VALUE ").count(), 30);
}

/// memcached pipelines (several requests in one read, multi-key gets) are
/// looked ahead for prefetching: replies must not change.
#[test]
fn memcache_pipelines_same_on_and_off() {
    use std::io::{Read, Write};
    let mut req = b"set a 0 0 1\r\nx\r\nset b 0 0 2\r\nyy\r\nget a b c a\r\nmg a v\r\nmg c v\r\nmg b v k\r\ndelete a\r\nget a b\r\n".to_vec();
    for i in 0..40 {
        req.extend_from_slice(format!("set m{i} 0 0 {}\r\n{i}\r\n", i.to_string().len()).as_bytes());
    }
    req.extend_from_slice(b"get");
    for i in (0..40).rev() {
        req.extend_from_slice(format!(" m{i} nope{i}").as_bytes());
    }
    req.extend_from_slice(b"\r\n");
    for i in 0..40 {
        req.extend_from_slice(format!("mg m{i} v\r\nmd m{i} q\r\n").as_bytes());
    }
    req.extend_from_slice(b"get m1 m2\r\nmn\r\n");
    let mut want = b"STORED\r\nSTORED\r\nVALUE a 0 1\r\nx\r\nVALUE b 0 2\r\nyy\r\nVALUE a 0 1\r\nx\r\nEND\r\nVA 1\r\nx\r\nEN\r\nVA 2 kb\r\nyy\r\nDELETED\r\nVALUE b 0 2\r\nyy\r\nEND\r\n".to_vec();
    want.extend_from_slice(&b"STORED\r\n".repeat(40));
    for i in (0..40).rev() {
        want.extend_from_slice(format!("VALUE m{i} 0 {}\r\n{i}\r\n", i.to_string().len()).as_bytes());
    }
    want.extend_from_slice(b"END\r\n");
    for i in 0..40 {
        want.extend_from_slice(format!("VA {}\r\n{i}\r\n", i.to_string().len()).as_bytes());
    }
    want.extend_from_slice(b"END\r\nMN\r\n");
    for t in [1, 2] {
        for &size in SIZES {
            let s = start(t, size, &[]);
            let mut c = std::net::TcpStream::connect(("127.0.0.1", mc_port(&s))).expect("connect");
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            c.write_all(&req).unwrap();
            let mut got = vec![0u8; want.len()];
            c.read_exact(&mut got).unwrap();
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "threads {t} size {size:?}");
        }
    }
}

/// Commands parsed ahead are looked up once; subcommands, unknown ones,
/// mixed case and arity errors answer as when they are not.
#[test]
fn pipelined_subcommands_and_errors() {
    let mut setup = Script::new();
    setup.words("SET k 12");
    let mut s = Script::new();
    for line in [
        "object encoding k",
        "OBJECT NOSUCH k",
        "CONFIG",
        "config get maxmemory-policy",
        "mGeT k nope",
        "Exists k k",
        "GET",
        "get k extra",
        "object encoding nope",
        "OBJECT",
    ] {
        s.words(line);
    }
    let out = same_everywhere(&setup, &s);
    // Bytes as redis-server 7.0 sends them for the same pipeline.
    let want = "$3\r\nint\r\n-ERR unknown subcommand 'NOSUCH'. Try OBJECT HELP.\r\n-ERR wrong number of arguments for 'config' command\r\n\
        *2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n*2\r\n$2\r\n12\r\n$-1\r\n:2\r\n\
        -ERR wrong number of arguments for 'get' command\r\n-ERR wrong number of arguments for 'get' command\r\n$-1\r\n\
        -ERR wrong number of arguments for 'object' command\r\n";
    assert_eq!(String::from_utf8_lossy(&out), want);
}

/// Random pipelines of multi-key and single-key commands over a small key
/// set (so duplicates, wrong types and database switches are frequent),
/// sent in chunks that cut requests at random points: every size answers
/// byte for byte as with prefetching off.
#[test]
fn random_pipelines_same_on_and_off() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let key = |r: u64| format!("r{r}");
    let mut script = Vec::new();
    for _ in 0..1500 {
        let nk = 1 + rnd(24);
        let ks: Vec<String> = (0..nk).map(|_| key(rnd(40))).collect();
        let mut parts: Vec<String> = match rnd(14) {
            0 | 1 => with_cmd("MGET", &ks),
            2 => {
                let mut p = vec!["MSET".to_string()];
                for k in &ks {
                    p.push(k.clone());
                    p.push(rnd(1000).to_string());
                }
                p
            }
            3 => {
                let mut p = vec!["MSETNX".to_string()];
                for k in &ks {
                    p.push(k.clone());
                    p.push("n".into());
                }
                p
            }
            4 => with_cmd("DEL", &ks),
            5 => with_cmd("UNLINK", &ks),
            6 => with_cmd("EXISTS", &ks),
            7 => with_cmd("TOUCH", &ks),
            8 => vec!["SELECT".into(), rnd(3).to_string()],
            9 => vec!["INCR".into(), ks[0].clone()],
            10 => vec!["HSET".into(), ks[0].clone(), "f".into(), "v".into()],
            // A TTL far enough out not to pass during the test.
            11 => vec!["SET".into(), ks[0].clone(), "x".into(), "PX".into(), (100_000 + rnd(3)).to_string()],
            12 => vec![if rnd(2) == 0 { "MULTI" } else { "EXEC" }.to_string()],
            _ => vec!["GET".into(), ks[0].clone()],
        };
        if parts.len() == 1 && parts[0] == "EXEC" && rnd(4) == 0 {
            parts[0] = "DISCARD".into();
        }
        script.extend_from_slice(&resp(&parts.iter().map(|s| s.as_bytes()).collect::<Vec<_>>()));
    }
    script.extend_from_slice(&resp(&[b"EXEC"]));
    script.extend_from_slice(&resp(&[b"ECHO", b"--the-end--"]));
    let mut cuts = vec![0];
    while *cuts.last().unwrap_or(&0) < script.len() {
        let next = cuts.last().unwrap_or(&0) + 1 + rnd(3000) as usize;
        cuts.push(next.min(script.len()));
    }
    let mut reference: Option<Vec<u8>> = None;
    for t in [1, 2] {
        for &size in SIZES {
            let s = start(t, size, &[]);
            let mut r = s.raw();
            for w in cuts.windows(2) {
                r.send(&script[w[0]..w[1]]);
            }
            let got = read_to_mark(&mut r);
            match &reference {
                None => reference = Some(got),
                Some(want) => {
                    let at = want.iter().zip(&got).position(|(a, b)| a != b).unwrap_or(want.len().min(got.len()));
                    let ctx = |b: &[u8]| String::from_utf8_lossy(&b[at.saturating_sub(80)..(at + 80).min(b.len())]).into_owned();
                    assert!(*want == got, "threads {t} size {size:?}: replies differ at byte {at}:\nwant {:?}\ngot  {:?}", ctx(want), ctx(&got));
                }
            }
        }
    }
}

/// HMGET over a hash past its listpack size goes through the staged
/// lookups in groups of `prefetch-batch-max-size`: replies are those with
/// prefetching off, for repeated, missing and present fields across
/// several groups.
#[test]
fn hmget_of_a_large_hash_same_on_and_off() {
    let n = 400;
    let mut setup = Script::new();
    let mut pairs = vec!["h".to_string()];
    for i in 0..n {
        pairs.push(format!("f{i}"));
        pairs.push("v".repeat(i % 70));
    }
    setup.owned(&with_cmd("HSET", &pairs));
    let mut fields = vec!["h".to_string()];
    for i in 0..300 {
        fields.push(format!("f{}", (i * 7) % (n + 50)));
    }
    let mut s = Script::new();
    s.words("OBJECT ENCODING h").owned(&with_cmd("HMGET", &fields)).words("HMGET h f1 nope f1");
    let out = same_everywhere(&setup, &s);
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("$9\r\nhashtable\r\n*300\r\n"), "{text:.60}");
    assert!(text.ends_with("*3\r\n$1\r\nv\r\n$-1\r\n$1\r\nv\r\n"), "{text}");
    assert_eq!(text.matches("$-1\r\n").count(), 1 + (0..300).filter(|i| (i * 7) % (n + 50) >= n).count());
}
