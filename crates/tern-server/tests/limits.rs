//! Every connection limit, driven past by a real client: each closes only
//! the offending client and leaves the others (and the server's memory)
//! alone. Also idle timeout, TCP keepalive, clients that vanish mid-request
//! and graceful shutdown on SIGTERM / SIGINT.
mod common;
use common::*;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Resident memory of the server process, in bytes.
fn rss(s: &TestServer) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.child.id())).expect("proc status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    let kb: usize = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("VmRSS value");
    kb * 1024
}

/// Reads until the server closes the connection (EOF or reset) and returns
/// the bytes received; panics if it is still open after `within`.
fn read_until_closed(r: &mut Raw, within: Duration) -> Vec<u8> {
    let deadline = Instant::now() + within;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "connection still open after {within:?}");
        r.s.set_read_timeout(Some(left)).unwrap();
        match r.s.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return got,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                panic!("connection still open after {within:?}")
            }
            Err(e) => panic!("read: {e}"),
        }
    }
}

/// True if nothing arrives and the connection stays open for `quiet`.
fn stays_open_and_silent(r: &mut Raw, quiet: Duration) -> bool {
    r.s.set_read_timeout(Some(quiet)).unwrap();
    let mut b = [0u8; 64];
    let res = r.s.read(&mut b);
    r.s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    matches!(res, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut))
}

fn get_cmd(key: &str) -> Vec<u8> {
    format!("*2\r\n$3\r\nGET\r\n${}\r\n{}\r\n", key.len(), key).into_bytes()
}

#[test]
fn proto_max_bulk_len() {
    for t in [1, 2] {
        let s = TestServer::start_with(t, &["--proto-max-bulk-len", "1mb"]);
        let mut bystander = s.raw();
        let mut r = s.raw();
        r.send(b"*2\r\n$4\r\nECHO\r\n$1048577\r\n");
        r.expect(b"-ERR Protocol error: invalid bulk length\r\n");
        assert!(read_until_closed(&mut r, Duration::from_secs(5)).is_empty());
        // Exactly the limit is allowed.
        let mut r = s.raw();
        let val = vec![b'q'; 1 << 20];
        r.cmd(&[b"ECHO", &val]);
        let mut want = b"$1048576\r\n".to_vec();
        want.extend_from_slice(&val);
        want.extend_from_slice(b"\r\n");
        r.expect(&want);
        bystander.roundtrip(&[b"PING"], b"+PONG\r\n");
    }
}

#[test]
fn query_buffer_limit_closes_only_that_client() {
    for t in [1, 2] {
        let s = TestServer::start_with(t, &["--client-query-buffer-limit", "1mb"]);
        let mut bystander = s.raw();
        // One argument bigger than the limit, arriving slowly enough that it
        // sits in the query buffer.
        let mut r = s.raw();
        r.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n");
        let mut w = r.s.try_clone().unwrap();
        let writer = std::thread::spawn(move || {
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..40 {
                if w.write_all(&chunk).is_err() {
                    return true;
                }
            }
            false
        });
        let got = read_until_closed(&mut r, Duration::from_secs(5));
        assert!(got.is_empty(), "no reply expected, got {:?}", String::from_utf8_lossy(&got));
        let _ = writer.join();
        bystander.roundtrip(&[b"GET", b"k"], b"$-1\r\n");

        // Arguments queued by MULTI count too.
        let mut m = s.raw();
        m.roundtrip(&[b"MULTI"], b"+OK\r\n");
        let val = vec![b'v'; 200 * 1024];
        let mut closed = false;
        for i in 0..10 {
            // The server may close while this is still being written.
            let mut req = format!("*3\r\n$3\r\nSET\r\n$2\r\nq{i}\r\n${}\r\n", val.len()).into_bytes();
            req.extend_from_slice(&val);
            req.extend_from_slice(b"\r\n");
            let _ = m.s.write_all(&req);
            let mut b = [0u8; 9];
            match m.s.read_exact(&mut b) {
                Ok(()) => assert_eq!(&b, b"+QUEUED\r\n"),
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        assert!(closed, "MULTI queue past the query buffer limit was not closed");
        bystander.roundtrip(&[b"PING"], b"+PONG\r\n");

        // A long pipeline of small requests, read as it goes, is fine: only
        // what is not executed yet counts.
        let mut p = s.raw();
        let mut req = Vec::new();
        for _ in 0..300_000 {
            req.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        }
        assert!(req.len() > 3 << 20);
        let mut w = p.s.try_clone().unwrap();
        let writer = std::thread::spawn(move || w.write_all(&req).unwrap());
        let want = b"+PONG\r\n".repeat(300_000);
        p.expect(&want);
        writer.join().unwrap();
    }
}

#[test]
fn unauthenticated_lengths_with_requirepass() {
    each_threads_with(&["--requirepass", "pw"], |s| {
        let mut r = s.raw();
        r.send(b"*11\r\n");
        r.expect(b"-ERR Protocol error: unauthenticated multibulk length\r\n");
        assert!(read_until_closed(&mut r, Duration::from_secs(5)).is_empty());
        let mut r = s.raw();
        r.send(b"*2\r\n$4\r\nECHO\r\n$16385\r\n");
        r.expect(b"-ERR Protocol error: unauthenticated bulk length\r\n");
        assert!(read_until_closed(&mut r, Duration::from_secs(5)).is_empty());
        // At the limits, the request is parsed and refused politely.
        let mut r = s.raw();
        let ten: Vec<&[u8]> = std::iter::once(&b"DEL"[..]).chain(vec![&b"k"[..]; 9]).collect();
        r.roundtrip(&ten, b"-NOAUTH Authentication required.\r\n");
        r.roundtrip(&[b"ECHO", &[b'e'; 16384]], b"-NOAUTH Authentication required.\r\n");
        // Once authenticated, the protocol limits are the usual ones.
        r.roundtrip(&[b"AUTH", b"pw"], b"+OK\r\n");
        let eleven: Vec<&[u8]> = std::iter::once(&b"DEL"[..]).chain(vec![&b"k"[..]; 10]).collect();
        r.roundtrip(&eleven, b":0\r\n");
        let big = vec![b'e'; 20_000];
        r.cmd(&[b"ECHO", &big]);
        let mut want = b"$20000\r\n".to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(b"\r\n");
        r.expect(&want);
    });
}

fn each_threads_with(extra: &[&str], f: impl Fn(&TestServer)) {
    for t in [1, 2] {
        let s = TestServer::start_with(t, extra);
        f(&s);
    }
}

#[test]
fn claimed_lengths_cost_nothing() {
    each_threads(|s| {
        let before = rss(s);
        let mut idle = Vec::new();
        for _ in 0..40 {
            let mut r = s.raw();
            r.send(b"*2\r\n$4\r\nECHO\r\n$500000000\r\n");
            idle.push(r);
        }
        for _ in 0..40 {
            let mut r = s.raw();
            r.send(b"*2000000000\r\n");
            idle.push(r);
        }
        // Every claim has been read once a later request on the same
        // worker is answered.
        for r in idle.iter_mut().step_by(7) {
            assert!(stays_open_and_silent(r, Duration::from_millis(20)));
        }
        let mut c = s.raw();
        c.roundtrip(&[b"PING"], b"+PONG\r\n");
        let after = rss(s);
        assert!(after < before + (32 << 20), "RSS grew from {before} to {after}");
    });
}

#[test]
fn vanishing_clients_cost_nothing() {
    each_threads_with(&["--maxclients", "4"], |s| {
        for i in 0..60 {
            let mut r = s.raw();
            match i % 3 {
                0 => r.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\nabc"),
                1 => r.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n*1\r\n$4\r\nPI"),
                _ => r.send(b"GET k"),
            }
            let _ = r.s.shutdown(std::net::Shutdown::Both);
        }
        // Had any of them leaked, the server would refuse some of these.
        let deadline = Instant::now() + Duration::from_secs(5);
        'retry: loop {
            assert!(Instant::now() < deadline, "closed clients still count against maxclients");
            let mut live = Vec::new();
            for _ in 0..4 {
                let mut r = s.raw();
                r.cmd(&[b"PING"]);
                let mut b = [0u8; 7];
                if r.s.read_exact(&mut b).is_err() || &b != b"+PONG\r\n" {
                    std::thread::sleep(Duration::from_millis(20));
                    continue 'retry;
                }
                live.push(r);
            }
            break;
        }
    });
}

#[test]
fn maxclients() {
    each_threads_with(&["--maxclients", "2"], |s| {
        let mut a = s.raw();
        a.roundtrip(&[b"PING"], b"+PONG\r\n");
        let mut b = s.raw();
        b.roundtrip(&[b"PING"], b"+PONG\r\n");
        let mut c = s.raw();
        let got = read_until_closed(&mut c, Duration::from_secs(5));
        assert_eq!(String::from_utf8_lossy(&got), "-ERR max number of clients reached\r\n");
        a.roundtrip(&[b"PING"], b"+PONG\r\n");
        drop(b);
        // The freed slot is usable once the server has noticed the close.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut d = s.raw();
            d.cmd(&[b"PING"]);
            let mut buf = [0u8; 7];
            if d.s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n" {
                break;
            }
            assert!(Instant::now() < deadline, "slot was not freed");
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

#[test]
fn output_hard_limit_disconnects_a_client_that_does_not_read() {
    each_threads_with(&["--client-output-buffer-limit", "normal 1mb 0 0"], |s| {
        let mut setup = s.conn();
        let _: () = redis::cmd("SET").arg("big").arg(vec![b'b'; 100 * 1024]).query(&mut setup).unwrap();
        let mut r = s.raw();
        r.send(&get_cmd("big").repeat(300));
        let got = read_until_closed(&mut r, Duration::from_secs(10));
        assert!(got.len() < 300 * 100 * 1024, "all replies were delivered: the limit did nothing");
        // Others are unaffected.
        let n: usize = redis::cmd("STRLEN").arg("big").query(&mut setup).unwrap();
        assert_eq!(n, 100 * 1024);
    });
}

#[test]
fn output_soft_limit_disconnects_after_its_seconds() {
    let s = TestServer::start_with(2, &["--client-output-buffer-limit", "normal 0 256kb 1"]);
    let mut setup = s.conn();
    let _: () = redis::cmd("SET").arg("big").arg(vec![b'b'; 100 * 1024]).query(&mut setup).unwrap();

    // Briefly over the soft limit, then drained: not closed.
    let mut ok = s.raw();
    ok.send(&get_cmd("big").repeat(20));
    let mut total = 0;
    let mut buf = vec![0u8; 64 * 1024];
    while total < 20 * (100 * 1024 + 11) {
        total += ok.s.read(&mut buf).unwrap();
    }
    ok.roundtrip(&[b"PING"], b"+PONG\r\n");

    drop(ok);

    // Over it and not reading: closed after more than one second.
    let started = Instant::now();
    let mut r = s.raw();
    r.send(&get_cmd("big").repeat(200));
    r.s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut first = [0u8; 1];
    r.s.peek(&mut first).unwrap();
    // Without reading from `r`, its close is seen through CLIENT LIST.
    loop {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut setup).unwrap();
        if list.lines().count() == 1 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "soft limit never closed the client");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started.elapsed() >= Duration::from_millis(950), "closed too early: {:?}", started.elapsed());
    let got = read_until_closed(&mut r, Duration::from_secs(5));
    assert!(got.len() < 200 * 100 * 1024);
}

#[test]
fn unread_replies_pause_the_client_and_memory_stays_bounded() {
    each_threads(|s| {
        let mut setup = s.conn();
        let val = vec![b'm'; 1 << 20];
        let _: () = redis::cmd("SET").arg("mb").arg(&val).query(&mut setup).unwrap();
        let before = rss(s);
        let n = 300;
        let mut r = s.raw();
        r.send(&get_cmd("mb").repeat(n));
        // Give the server time to run as far as it will; without the pause
        // it would hold all 300 MB of replies.
        let deadline = Instant::now() + Duration::from_millis(400);
        let mut peak = 0;
        while Instant::now() < deadline {
            peak = peak.max(rss(s));
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(peak < before + (64 << 20), "RSS went from {before} to {peak}");
        // Nothing was lost: every reply arrives, in order.
        let mut header = b"$1048576\r\n".to_vec();
        header.extend_from_slice(&val);
        header.extend_from_slice(b"\r\n");
        for _ in 0..n {
            r.expect(&header);
        }
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
    });
}

#[test]
fn idle_timeout_closes_idle_clients_only() {
    each_threads_with(&["--timeout", "1"], |s| {
        let started = Instant::now();
        let mut idle = s.raw();
        idle.roundtrip(&[b"PING"], b"+PONG\r\n");
        let mut in_multi = s.raw();
        in_multi.roundtrip(&[b"MULTI"], b"+OK\r\n");
        // A blocked client is not idle: its own timeout applies (Redis).
        let mut waiter = s.raw();
        waiter.cmd(&[b"BLPOP", b"idle-q", b"0"]);
        let mut busy = s.raw();
        let mut closed = [false; 2];
        while closed != [true, true] {
            busy.roundtrip(&[b"PING"], b"+PONG\r\n");
            for (i, r) in [&mut idle, &mut in_multi].into_iter().enumerate() {
                if !closed[i] {
                    r.s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
                    let mut b = [0u8; 1];
                    closed[i] = matches!(r.s.read(&mut b), Ok(0)) || matches!(r.s.read(&mut b), Err(ref e) if e.kind() == ErrorKind::ConnectionReset);
                }
            }
            assert!(started.elapsed() < Duration::from_secs(5), "idle clients were not closed");
        }
        assert!(started.elapsed() >= Duration::from_secs(1), "closed before the timeout");
        busy.roundtrip(&[b"PING"], b"+PONG\r\n");
        busy.roundtrip(&[b"RPUSH", b"idle-q", b"x"], b":1\r\n");
        waiter.expect(b"*2\r\n$6\r\nidle-q\r\n$1\r\nx\r\n");
    });
}

/// The server side of our connection in /proc/net/tcp: (timer kind, ticks).
fn server_socket_timer(server_port: u16, client_port: u16) -> Option<(u32, u64)> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!(":{server_port:04X}");
    let remote = format!(":{client_port:04X}");
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 5 && f[1].ends_with(&local) && f[2].ends_with(&remote) {
            let (tr, when) = f[5].split_once(':')?;
            return Some((u32::from_str_radix(tr, 16).ok()?, u64::from_str_radix(when, 16).ok()?));
        }
    }
    None
}

#[test]
fn tcp_keepalive_is_applied() {
    for (ka, want_timer) in [("7", 2), ("0", 0)] {
        let s = TestServer::start_with(1, &["--tcp-keepalive", ka]);
        let mut r = s.raw();
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
        let port = r.s.local_addr().unwrap().port();
        let Some((timer, ticks)) = server_socket_timer(s.port, port) else {
            eprintln!("no /proc/net/tcp entry; skipping");
            return;
        };
        assert_eq!(timer, want_timer, "tcp-keepalive {ka}: timer kind");
        if want_timer == 2 {
            // USER_HZ ticks until the first probe: at most 7 seconds.
            assert!(ticks <= 7 * 100 + 10, "keepalive fires in {ticks} ticks");
        }
    }
}

fn signal(s: &TestServer, sig: &str) {
    let st = std::process::Command::new("kill").arg(format!("-{sig}")).arg(s.child.id().to_string()).status().expect("kill");
    assert!(st.success());
}

fn graceful_shutdown_on(sig: &str, threads: usize) {
    let mut s = TestServer::start(threads);
    let mut setup = s.conn();
    let val = vec![b's'; 1 << 20];
    let _: () = redis::cmd("SET").arg("v").arg(&val).query(&mut setup).unwrap();
    // Replies in flight: more than the socket buffers hold.
    let n = 24;
    let mut r = s.raw();
    r.send(&get_cmd("v").repeat(n));
    r.s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut first = [0u8; 1];
    r.s.peek(&mut first).unwrap();
    signal(&s, sig);
    // New connections are refused once the listeners are gone, while the
    // replies in flight are still being delivered.
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", s.port)).is_ok() {
        assert!(Instant::now() < deadline, "still accepting after SIG{sig}");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut want = b"$1048576\r\n".to_vec();
    want.extend_from_slice(&val);
    want.extend_from_slice(b"\r\n");
    for _ in 0..n {
        r.expect(&want);
    }
    assert!(read_until_closed(&mut r, Duration::from_secs(5)).is_empty());
    assert_eq!(s.wait_exit(Duration::from_secs(10)), Some(0), "exit code after {sig}");
}

#[test]
fn graceful_shutdown_on_sigterm() {
    graceful_shutdown_on("TERM", 1);
    graceful_shutdown_on("TERM", 2);
}

#[test]
fn graceful_shutdown_on_sigint() {
    graceful_shutdown_on("INT", 1);
    graceful_shutdown_on("INT", 2);
}
