//! memcached's delayed `flush_all` against the real binary: the cron
//! carries it out within one of its periods of the deadline, an immediate
//! `flush_all` cancels it, and a pending one does not hold up shutdown.
//! (The exact tick semantics, with a clock the test controls, are unit
//! tests in tern-commands' src/memcache/mod.rs.)

mod common;
use common::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn connect(s: &TestServer) -> TcpStream {
    let c = TcpStream::connect(("127.0.0.1", mc_port(s))).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c
}

/// Sends `req` and reads one reply line.
fn line(c: &mut TcpStream, req: &[u8]) -> String {
    c.write_all(req).unwrap();
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while !out.ends_with(b"\r\n") {
        c.read_exact(&mut b).unwrap();
        out.push(b[0]);
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn a_delayed_flush_comes_within_a_cron_period_of_its_time() {
    // hz 10: the cron runs every 100 ms.
    let s = TestServer::start_with(1, &["--hz", "10"]);
    let mut c = connect(&s);
    assert_eq!(line(&mut c, b"set f 0 0 1\r\nx\r\n"), "STORED\r\n");
    let t0 = Instant::now();
    assert_eq!(line(&mut c, b"flush_all 1\r\n"), "OK\r\n");
    let gone = loop {
        let r = line(&mut c, b"mg f\r\n");
        let at = t0.elapsed();
        if r == "EN\r\n" {
            break at;
        }
        assert_eq!(r, "HD\r\n");
        assert!(at < Duration::from_secs(5), "the delayed flush did not happen");
    };
    // Never early (the server's clock read the request after t0); late by
    // at most a period, plus what a loaded machine adds.
    assert!(gone >= Duration::from_millis(990), "flushed after {gone:?}");
    assert!(gone < Duration::from_millis(1000 + 100 + 900), "flushed after {gone:?}");
}

#[test]
fn an_immediate_flush_all_cancels_the_pending_one() {
    let s = TestServer::start_with(2, &["--hz", "50"]);
    let mut c = connect(&s);
    let t0 = Instant::now();
    assert_eq!(line(&mut c, b"flush_all 1\r\n"), "OK\r\n");
    assert_eq!(line(&mut c, b"flush_all 0\r\n"), "OK\r\n");
    assert_eq!(line(&mut c, b"set f 0 0 1\r\nx\r\n"), "STORED\r\n");
    // Well past the cancelled deadline (50 cron periods after it).
    while t0.elapsed() < Duration::from_millis(2000) {
        assert_eq!(line(&mut c, b"mg f\r\n"), "HD\r\n", "after {:?}", t0.elapsed());
    }
}

#[test]
fn shutdown_with_a_pending_flush_exits_promptly() {
    for threads in [1, 2] {
        let mut s = TestServer::start(threads);
        let mut c = connect(&s);
        assert_eq!(line(&mut c, b"flush_all 3600\r\n"), "OK\r\n");
        let mut r = s.raw();
        r.cmd(&[b"SHUTDOWN"]);
        assert!(r.is_closed());
        assert_eq!(s.wait_exit(Duration::from_secs(5)), Some(0));
    }
}
