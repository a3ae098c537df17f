//! MONITOR against the real binary, at 1 and 2 workers (the monitor and
//! the client it watches may be on different workers): Redis's line format,
//! quoting and redaction, what a monitor may still run, RESET and QUIT.
mod common;
use common::*;

use std::io::Read;

fn read_line(r: &mut Raw) -> String {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        r.s.read_exact(&mut b).expect("a line");
        line.push(b[0]);
    }
    String::from_utf8_lossy(&line[..line.len() - 2]).into_owned()
}

/// CLIENT LIST's text (not fed to monitors: it is an admin command).
fn client_list(r: &mut Raw) -> String {
    r.cmd(&[b"CLIENT", b"LIST"]);
    let n: usize = read_line(r).trim_start_matches('$').parse().unwrap();
    String::from_utf8_lossy(&r.read_n(n + 2)).into_owned()
}

/// A monitor line without its time and port: `[db addr] "args"...`.
fn strip(line: &str) -> String {
    let (time, rest) = line.split_once(' ').unwrap();
    let (secs, micros) = time.trim_start_matches('+').split_once('.').unwrap();
    assert!(secs.parse::<u64>().is_ok() && micros.len() == 6 && micros.parse::<u32>().is_ok(), "{line}");
    let (db, rest) = rest.split_once(' ').unwrap();
    let (addr, args) = rest.split_once("] ").unwrap();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    format!("{db}] {args}")
}

#[test]
fn monitor_lines_and_rules() {
    each_threads(|s| {
        let mut m = s.raw();
        m.roundtrip(&[b"MONITOR"], b"+OK\r\n");
        let mut c = s.raw();
        c.roundtrip(&[b"SET", b"a\"", b"\x01\n\\"], b"+OK\r\n");
        c.roundtrip(&[b"AUTH", b"x", b"y"], b"-WRONGPASS invalid username-password pair or user is disabled.\r\n");
        c.roundtrip(&[b"CONFIG", b"GET", b"nosuch"], b"*0\r\n");
        c.roundtrip(&[b"SELECT", b"2"], b"+OK\r\n");
        c.roundtrip(&[b"MULTI"], b"+OK\r\n");
        c.roundtrip(&[b"GET", b"k"], b"+QUEUED\r\n");
        c.roundtrip(&[b"EXEC"], b"*1\r\n$-1\r\n");
        let want = [
            r#"[0] "SET" "a\"" "\x01\n\\""#,
            r#"[0] "AUTH" "(redacted)" "(redacted)""#,
            r#"[2] "SELECT" "2""#,
            r#"[2] "MULTI""#,
            r#"[2] "GET" "k""#,
            r#"[2] "EXEC""#,
        ];
        for w in want {
            assert_eq!(strip(&read_line(&mut m)), w);
        }
        // A monitor runs only what touches no key; its own commands are fed too.
        m.roundtrip(&[b"GET", b"k"], b"-ERR Replica can't interact with the keyspace\r\n");
        m.roundtrip(&[b"PING"], b"+PONG\r\n");
        assert_eq!(strip(&read_line(&mut m)), r#"[0] "PING""#);
        // CLIENT LIST shows it with flag O (asked on a raw connection: the
        // redis crate's connection set-up would be fed to the monitor).
        let mut admin = s.raw();
        let list = client_list(&mut admin);
        assert_eq!(list.lines().filter(|l| l.contains(" flags=O ")).count(), 1, "{list}");
        // MONITOR again answers nothing; RESET ends monitoring.
        m.cmd(&[b"MONITOR"]);
        m.roundtrip(&[b"RESET"], b"+RESET\r\n");
        let list = client_list(&mut admin);
        assert!(!list.contains(" flags=O "), "{list}");
        c.roundtrip(&[b"PING"], b"+PONG\r\n");
        m.roundtrip(&[b"GET", b"nosuch"], b"$-1\r\n");

        // QUIT closes a monitor; the others go on.
        let mut q = s.raw();
        q.roundtrip(&[b"MONITOR"], b"+OK\r\n");
        q.roundtrip(&[b"QUIT"], b"+OK\r\n");
        assert!(q.is_closed());
        c.roundtrip(&[b"PING"], b"+PONG\r\n");

        // Queued by MULTI, MONITOR is refused at EXEC.
        c.roundtrip(&[b"MULTI"], b"+OK\r\n");
        c.roundtrip(&[b"MONITOR"], b"+QUEUED\r\n");
        c.roundtrip(&[b"EXEC"], b"*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n");
        c.roundtrip(&[b"GET", b"nosuch"], b"$-1\r\n");
    });
}
