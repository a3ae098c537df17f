//! Large values are sent from the stored bytes (`reply-copy-avoid-min-size`,
//! default 16kb): replies stay byte-exact around the threshold, in
//! pipelines, under slow readers, RESP3, MULTI/EXEC, CLIENT REPLY and the
//! memcached protocols; a reply still unsent keeps the bytes it was given
//! when the key is overwritten, appended to or deleted; output limits count
//! the full length. INFO's `reply_copy_avoided` shows which path a reply
//! took.
mod common;
use common::*;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const MIN: usize = 16 * 1024;

fn each_threads_with(extra: &[&str], f: impl Fn(&TestServer)) {
    for t in [1, 2] {
        let s = TestServer::start_with(t, extra);
        f(&s);
    }
}

/// Bytes whose position shows up in them, so truncation, reordering and
/// stale data are all visible.
fn value(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| b'!' + ((i / 7 + i * 13 + seed as usize) % 90) as u8).collect()
}

fn bulk(v: &[u8]) -> Vec<u8> {
    let mut b = format!("${}\r\n", v.len()).into_bytes();
    b.extend_from_slice(v);
    b.extend_from_slice(b"\r\n");
    b
}

fn resp(parts: &[&[u8]]) -> Vec<u8> {
    let mut b = format!("*{}\r\n", parts.len()).into_bytes();
    for p in parts {
        b.extend_from_slice(&bulk(p));
    }
    b
}

fn avoided(c: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("stats").query(c).unwrap();
    info.lines().find_map(|l| l.strip_prefix("reply_copy_avoided:")).expect("reply_copy_avoided").trim().parse().unwrap()
}

/// Polls INFO until at least `n` replies took the shared path.
fn wait_avoided(c: &mut redis::Connection, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while avoided(c) < n {
        assert!(Instant::now() < deadline, "replies were not queued");
        std::thread::yield_now();
    }
}

fn set(c: &mut redis::Connection, k: &str, v: &[u8]) {
    let _: () = redis::cmd("SET").arg(k).arg(v).query(c).unwrap();
}

#[test]
fn get_family_is_exact_below_at_and_above_the_threshold() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        for (i, n) in [MIN - 1, MIN, MIN + 1, 300_000].into_iter().enumerate() {
            let shared = n >= MIN;
            let v = value(n, i as u8);
            let v2 = value(n, 100 + i as u8);
            let before = avoided(&mut c);
            r.roundtrip(&[b"SET", b"k", &v], b"+OK\r\n");
            r.roundtrip(&[b"GET", b"k"], &bulk(&v));
            let mut want = b"*3\r\n".to_vec();
            want.extend_from_slice(&bulk(&v));
            want.extend_from_slice(b"$-1\r\n");
            want.extend_from_slice(&bulk(&v));
            r.roundtrip(&[b"MGET", b"k", b"missing", b"k"], &want);
            r.roundtrip(&[b"GETEX", b"k", b"PX", b"100000"], &bulk(&v));
            r.roundtrip(&[b"GETSET", b"k", &v2], &bulk(&v));
            r.roundtrip(&[b"SET", b"k", &v, b"GET"], &bulk(&v2));
            r.roundtrip(&[b"GETDEL", b"k"], &bulk(&v));
            r.roundtrip(&[b"GET", b"k"], b"$-1\r\n");
            r.roundtrip(&[b"STRLEN", b"k"], b":0\r\n");
            // GET, MGET x2, GETEX, GETSET, SET GET, GETDEL.
            let want_avoided = if shared { 7 } else { 0 };
            assert_eq!(avoided(&mut c) - before, want_avoided, "value of {n} bytes");
        }
        // A shared value reads the same through every other reader.
        let v = value(MIN * 2, 9);
        set(&mut c, "s", &v);
        r.roundtrip(&[b"STRLEN", b"s"], format!(":{}\r\n", v.len()).as_bytes());
        r.roundtrip(&[b"GETRANGE", b"s", b"5", b"9"], &bulk(&v[5..10]));
        r.roundtrip(&[b"OBJECT", b"ENCODING", b"s"], b"$3\r\nraw\r\n");
        let got: Vec<u8> = redis::cmd("GET").arg("s").query(&mut c).unwrap();
        assert_eq!(got, v);
    });
}

#[test]
fn getrange_sends_long_windows_from_the_stored_bytes() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        let v = value(100_000, 11);
        set(&mut c, "k", &v);
        let before = avoided(&mut c);
        let n = v.len();
        for (start, end, range, shared) in [
            ("0", "-1", 0..n, true),
            ("10", "20000", 10..20001, true),
            ("5", "9", 5..10, false),
            ("-16384", "-1", n - MIN..n, true),
            ("-16383", "-1", n - MIN + 1..n, false),
            ("99990", "200000", 99990..n, false),
            ("-5", "-10", 0..0, false),
        ] {
            let b0 = avoided(&mut c);
            r.roundtrip(&[b"GETRANGE", b"k", start.as_bytes(), end.as_bytes()], &bulk(&v[range.clone()]));
            assert_eq!(avoided(&mut c) - b0, u64::from(shared), "GETRANGE {start} {end}");
        }
        r.roundtrip(&[b"SUBSTR", b"k", b"1", b"50000"], &bulk(&v[1..50001]));
        assert_eq!(avoided(&mut c) - before, 4);
    });
}

#[test]
fn unsent_replies_keep_the_old_bytes() {
    each_threads(|s| {
        let mut c = s.conn();
        let n = 2 << 20;
        let old = value(n, 1);
        // Every kind of change that could reach bytes a reply points at.
        let changes: [&[&[u8]]; 6] = [
            &[b"APPEND", b"k", b"tail"],
            &[b"SETRANGE", b"k", b"0", b"XXXX"],
            &[b"SETRANGE", b"k", b"3000000", b"XXXX"],
            &[b"SET", b"k", b"small"],
            &[b"DEL", b"k"],
            &[b"GETDEL", b"k"],
        ];
        for change in changes {
            set(&mut c, "k", &old);
            // More than the socket buffers hold, no more than the
            // high-water mark: the tail of these replies waits in the server.
            let gets = 4;
            let before = avoided(&mut c);
            let mut r = s.raw();
            r.roundtrip(&[b"CLIENT", b"SETNAME", b"reader"], b"+OK\r\n");
            r.send(&resp(&[b"GET", b"k"]).repeat(gets));
            wait_avoided(&mut c, before + gets as u64);
            assert!(omem(&mut c, "reader") > 0, "every reply already left: the test proves nothing");
            let _: redis::Value = redis::cmd(std::str::from_utf8(change[0]).unwrap()).arg(&change[1..]).query(&mut c).unwrap();
            for _ in 0..gets {
                r.expect(&bulk(&old));
            }
            r.roundtrip(&[b"PING"], b"+PONG\r\n");
        }
        // The value changed in place when no reply held it.
        set(&mut c, "k", &old);
        let _: usize = redis::cmd("APPEND").arg("k").arg("!").query(&mut c).unwrap();
        let got: Vec<u8> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
        assert_eq!((got.len(), &got[..n], got[n]), (n + 1, &old[..], b'!'));
    });
}

/// A client's `omem` in CLIENT LIST.
fn omem(c: &mut redis::Connection, name: &str) -> usize {
    let list: String = redis::cmd("CLIENT").arg("LIST").query(c).unwrap();
    let line = list.lines().find(|l| l.contains(&format!("name={name} "))).expect("client");
    line.split(' ').find_map(|f| f.strip_prefix("omem=")).unwrap().parse().unwrap()
}

/// Reads `want.len()` bytes a few at a time, in uneven pieces.
fn read_slowly(r: &mut Raw, want: &[u8]) {
    let mut got = Vec::with_capacity(want.len());
    let mut step = 1;
    while got.len() < want.len() {
        let mut b = vec![0u8; step.min(want.len() - got.len())];
        let k = r.s.read(&mut b).expect("read");
        assert!(k > 0, "closed after {} bytes", got.len());
        got.extend_from_slice(&b[..k]);
        step = step % 4093 + 7;
    }
    assert!(got == want, "slow read differs at byte {:?}", got.iter().zip(want).position(|(a, b)| a != b));
}

#[test]
fn pipelines_mix_small_and_large_replies_in_order() {
    each_threads(|s| {
        let mut c = s.conn();
        let (a, b) = (value(MIN * 3, 1), value(200_000, 2));
        set(&mut c, "a", &a);
        set(&mut c, "b", &b);
        set(&mut c, "small", b"tiny");
        let mut req = Vec::new();
        let mut want = Vec::new();
        for round in 0..3 {
            for (cmd, reply) in [
                (resp(&[b"GET", b"a"]), bulk(&a)),
                (resp(&[b"GET", b"small"]), bulk(b"tiny")),
                (resp(&[b"PING"]), b"+PONG\r\n".to_vec()),
                (resp(&[b"GET", b"missing"]), b"$-1\r\n".to_vec()),
                (resp(&[b"INCR", b"ctr"]), format!(":{}\r\n", round + 1).into_bytes()),
                (resp(&[b"INCR", b"small"]), b"-ERR value is not an integer or out of range\r\n".to_vec()),
                (resp(&[b"GET", b"b"]), bulk(&b)),
                (resp(&[b"MGET", b"b", b"small", b"a"]), [b"*3\r\n".to_vec(), bulk(&b), bulk(b"tiny"), bulk(&a)].concat()),
            ] {
                req.extend_from_slice(&cmd);
                want.extend_from_slice(&reply);
            }
        }
        let mut r = s.raw();
        r.send(&req);
        read_slowly(&mut r, &want);
        // The same pipeline, read at full speed.
        let _: () = redis::cmd("DEL").arg("ctr").query(&mut c).unwrap();
        let mut r = s.raw();
        r.send(&req);
        r.expect(&want);
    });
}

#[test]
fn resp3_multi_exec_and_client_reply() {
    each_threads(|s| {
        let mut c = s.conn();
        let v = value(MIN * 4, 3);
        set(&mut c, "big", &v);
        let mut r = s.raw();
        r.cmd(&[b"HELLO", b"3"]);
        let mut hello = [0u8; 1];
        r.s.read_exact(&mut hello).unwrap();
        assert_eq!(hello[0], b'%');
        // Drain the rest of HELLO's map with a marker reply behind it.
        r.cmd(&[b"ECHO", b"marker"]);
        let mut seen = Vec::new();
        while !seen.ends_with(b"$6\r\nmarker\r\n") {
            let mut b = [0u8; 1];
            r.s.read_exact(&mut b).unwrap();
            seen.push(b[0]);
        }
        r.roundtrip(&[b"GET", b"big"], &bulk(&v));
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"GET", b"big"], b"+QUEUED\r\n");
        r.roundtrip(&[b"MGET", b"big", b"nope"], b"+QUEUED\r\n");
        r.roundtrip(&[b"SET", b"big", b"new"], b"+QUEUED\r\n");
        r.roundtrip(&[b"GET", b"big"], b"+QUEUED\r\n");
        let want = [b"*4\r\n".to_vec(), bulk(&v), b"*2\r\n".to_vec(), bulk(&v), b"_\r\n+OK\r\n".to_vec(), bulk(b"new")].concat();
        r.roundtrip(&[b"EXEC"], &want);

        // RESP2 from here; replies that are dropped drop their references.
        set(&mut c, "big", &v);
        let mut r = s.raw();
        r.roundtrip(&[b"CLIENT", b"REPLY", b"SKIP"], b"");
        r.cmd(&[b"GET", b"big"]);
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
        r.cmd(&[b"CLIENT", b"REPLY", b"OFF"]);
        r.cmd(&[b"GET", b"big"]);
        r.cmd(&[b"MGET", b"big", b"big"]);
        r.roundtrip(&[b"CLIENT", b"REPLY", b"ON"], b"+OK\r\n");
        r.roundtrip(&[b"MGET", b"big"], &[b"*1\r\n".to_vec(), bulk(&v)].concat());
    });
}

#[test]
fn output_limit_counts_shared_values_in_full() {
    each_threads_with(&["--client-output-buffer-limit", "normal 1mb 0 0"], |s| {
        let mut c = s.conn();
        // One reply larger than the hard limit closes the client, as Redis
        // does, though it is only a reference in the output.
        set(&mut c, "big", &value(2 << 20, 4));
        let mut r = s.raw();
        r.cmd(&[b"GET", b"big"]);
        r.s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match r.s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
                Err(e) => panic!("still open: {e}"),
            }
        }
        assert_eq!(got, 0, "a reply over the hard limit was sent");
        // Replies within the limit are sent in full.
        let v = value(512 * 1024, 5);
        set(&mut c, "mid", &v);
        let mut r = s.raw();
        r.roundtrip(&[b"GET", b"mid"], &bulk(&v));
        let len: usize = redis::cmd("STRLEN").arg("big").query(&mut c).unwrap();
        assert_eq!(len, 2 << 20);
    });
}

#[test]
fn client_list_counts_unsent_shared_bytes() {
    each_threads(|s| {
        let mut c = s.conn();
        let v = value(1 << 20, 6);
        set(&mut c, "big", &v);
        let mut r = s.raw();
        r.roundtrip(&[b"CLIENT", b"SETNAME", b"slow"], b"+OK\r\n");
        let before = avoided(&mut c);
        r.send(&resp(&[b"GET", b"big"]).repeat(6));
        wait_avoided(&mut c, before + 6);
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
        let line = list.lines().find(|l| l.contains("name=slow")).expect("slow client");
        let field = |name: &str| -> usize {
            line.split(' ').find_map(|f| f.strip_prefix(name)).unwrap().parse().unwrap()
        };
        // What the socket has not taken yet, shared bytes included.
        let omem = field("omem=");
        assert!(omem > 0 && omem <= 6 * (v.len() + 12), "omem={omem}");
        assert!(field("tot-mem=") >= omem);
        for _ in 0..6 {
            r.expect(&bulk(&v));
        }
    });
}

#[test]
fn directive_at_start_and_at_runtime() {
    each_threads_with(&["--reply-copy-avoid-min-size", "1kb"], |s| {
        let mut c = s.conn();
        let mut r = s.raw();
        r.roundtrip(&[b"CONFIG", b"GET", b"reply-copy-avoid-min-size"], &resp(&[b"reply-copy-avoid-min-size", b"1024"]));
        let v = value(1024, 7);
        let before = avoided(&mut c);
        set(&mut c, "k", &v);
        r.roundtrip(&[b"GET", b"k"], &bulk(&v));
        r.roundtrip(&[b"GET", b"k"], &bulk(&v));
        assert_eq!(avoided(&mut c) - before, 2);

        // Off: values are stored and sent as before.
        r.roundtrip(&[b"CONFIG", b"SET", b"reply-copy-avoid-min-size", b"0"], b"+OK\r\n");
        r.roundtrip(&[b"GET", b"k"], &bulk(&v));
        let big = value(300_000, 8);
        set(&mut c, "k", &big);
        r.roundtrip(&[b"GET", b"k"], &bulk(&big));
        assert_eq!(avoided(&mut c) - before, 2);

        // Back on with a unit: a value stored while off is copied until
        // written again.
        r.roundtrip(&[b"CONFIG", b"SET", b"reply-copy-avoid-min-size", b"64KB"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"GET", b"reply-copy-avoid-min-size"], &resp(&[b"reply-copy-avoid-min-size", b"65536"]));
        r.roundtrip(&[b"GET", b"k"], &bulk(&big));
        assert_eq!(avoided(&mut c) - before, 2);
        set(&mut c, "k", &big);
        r.roundtrip(&[b"GET", b"k"], &bulk(&big));
        assert_eq!(avoided(&mut c) - before, 3);
        // Shared when stored, but now below the threshold: copied.
        r.roundtrip(&[b"CONFIG", b"SET", b"reply-copy-avoid-min-size", b"1mb"], b"+OK\r\n");
        r.roundtrip(&[b"GET", b"k"], &bulk(&big));
        assert_eq!(avoided(&mut c) - before, 3);

        r.roundtrip(
            &[b"CONFIG", b"SET", b"reply-copy-avoid-min-size", b"lots"],
            b"-ERR CONFIG SET failed (possibly related to argument 'reply-copy-avoid-min-size') - argument must be a memory value\r\n",
        );
        r.roundtrip(
            &[b"CONFIG", b"SET", b"reply-copy-avoid-min-size", b"-1"],
            b"-ERR CONFIG SET failed (possibly related to argument 'reply-copy-avoid-min-size') - argument must be a memory value\r\n",
        );
        r.roundtrip(&[b"CONFIG", b"GET", b"reply-copy-avoid-min-size"], &resp(&[b"reply-copy-avoid-min-size", b"1048576"]));
    });
}

fn mc_expect(m: &mut TcpStream, req: &[u8], want: &[u8]) {
    m.write_all(req).unwrap();
    let mut got = vec![0u8; want.len()];
    m.read_exact(&mut got).unwrap();
    assert!(got == want, "reply to {:?} differs at byte {:?}", String::from_utf8_lossy(&req[..req.len().min(40)]), got.iter().zip(want).position(|(a, b)| a != b));
}

#[test]
fn memcache_values_are_sent_from_the_stored_bytes() {
    each_threads(|s| {
        let port = mc_port(s);
        let mut c = s.conn();
        let mut m = TcpStream::connect(("127.0.0.1", port)).unwrap();
        m.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let v = value(100_000, 9);
        let before = avoided(&mut c);
        let mut set = format!("set big 7 0 {}\r\n", v.len()).into_bytes();
        set.extend_from_slice(&v);
        set.extend_from_slice(b"\r\n");
        mc_expect(&mut m, &set, b"STORED\r\n");
        let value_line = |head: &str| [head.as_bytes(), &v, b"\r\n"].concat();
        mc_expect(&mut m, b"get big nope big\r\n", &[value_line("VALUE big 7 100000\r\n"), value_line("VALUE big 7 100000\r\n"), b"END\r\n".to_vec()].concat());
        mc_expect(&mut m, b"mg big v f s\r\n", &value_line("VA 100000 f7 s100000\r\n"));
        mc_expect(&mut m, b"mg big v k q\r\nmn\r\n", &[value_line("VA 100000 kbig\r\n"), b"MN\r\n".to_vec()].concat());
        assert_eq!(avoided(&mut c) - before, 4);

        // A reply still unsent keeps the bytes; append copies, then changes.
        let gets = 12;
        m.write_all(&b"get big\r\n".repeat(gets)).unwrap();
        wait_avoided(&mut c, before + 4 + gets as u64);
        let mut m2 = TcpStream::connect(("127.0.0.1", port)).unwrap();
        m2.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        mc_expect(&mut m2, b"append big 0 0 3\r\nend\r\n", b"STORED\r\n");
        for _ in 0..gets {
            let mut want = value_line("VALUE big 7 100000\r\n");
            want.extend_from_slice(b"END\r\n");
            let mut got = vec![0u8; want.len()];
            m.read_exact(&mut got).unwrap();
            assert!(got == want);
        }
        let appended = [&v[..], b"end"].concat();
        mc_expect(&mut m, b"get big\r\n", &[b"VALUE big 7 100003\r\n".to_vec(), appended.clone(), b"\r\nEND\r\n".to_vec()].concat());

        // A large string set through RESP is shared through memcached too.
        let w = value(50_000, 10);
        let _: () = redis::cmd("SET").arg("resp").arg(&w).query(&mut c).unwrap();
        let before = avoided(&mut c);
        mc_expect(&mut m, b"gets resp\r\n", b"VALUE resp 0 50000 ");
        let mut cas_line = Vec::new();
        while !cas_line.ends_with(b"\r\n") {
            let mut b = [0u8; 1];
            m.read_exact(&mut b).unwrap();
            cas_line.push(b[0]);
        }
        mc_expect(&mut m, b"", &[&w[..], b"\r\nEND\r\n"].concat());
        assert_eq!(avoided(&mut c) - before, 1);
        let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).unwrap();
        assert_eq!(got, appended);
    });
}
