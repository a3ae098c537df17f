//! The request protocol seen from a raw socket: every protocol error byte
//! for byte (checked against redis-server) followed by the close of that
//! connection only, inline commands, and requests split at every byte.
mod common;
use common::*;

use std::io::Read;
use std::time::Duration;

/// Sends `input` on a fresh connection and expects exactly `reply`, then
/// the connection closed (`closed`) or still usable.
fn check(s: &TestServer, input: &[u8], reply: &[u8], closed: bool) {
    let mut r = s.raw();
    r.send(input);
    r.expect(reply);
    if closed {
        assert!(r.is_closed(), "connection stayed open after {:?}", String::from_utf8_lossy(input));
    } else {
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
    }
}

#[test]
fn protocol_errors_are_exact_and_close_only_that_connection() {
    each_threads(|s| {
        let mut bystander = s.raw();
        bystander.roundtrip(&[b"SET", b"k", b"v"], b"+OK\r\n");
        let cases: &[(&[u8], &[u8])] = &[
            (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
            (b"*3000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
            (b"*\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
            (b"*+1\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
            (b"*1\r\nfoo\r\n", b"-ERR Protocol error: expected '$', got 'f'\r\n"),
            (b"*1\r\n\xe9oo\r\n", b"-ERR Protocol error: expected '$', got '\xe9'\r\n"),
            (b"*1\r\n\r\n\r\n", b"-ERR Protocol error: expected '$', got ' '\r\n"),
            (b"*1\r\n$-1\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
            (b"*1\r\n$+3\r\nfoo\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
            (b"*1\r\n$ 3\r\nfoo\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
            (b"*1\r\n$03\r\nfoo\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
            (b"*1\r\n$4x\r\nPING\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
            (b"*1\r\n$600000000\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
            (b"set \"a\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
            (b"set 'a'b\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
            (b"set \"a\"b c\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
            // Requests before the bad one are answered first.
            (b"PING\r\n*1\r\n$4\r\nPING\r\n*x\r\n", b"+PONG\r\n+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n"),
        ];
        for (input, reply) in cases {
            check(s, input, reply, true);
        }
        bystander.roundtrip(&[b"GET", b"k"], b"$1\r\nv\r\n");
    });
}

#[test]
fn oversized_lines_are_errors() {
    each_threads(|s| {
        let mut inline = vec![b'a'; 70_000];
        inline.extend_from_slice(b"\r\n");
        check(s, &inline[..65 * 1024 + 1], b"-ERR Protocol error: too big inline request\r\n", true);
        let mut mbulk = b"*".to_vec();
        mbulk.extend(vec![b'1'; 65 * 1024]);
        check(s, &mbulk, b"-ERR Protocol error: too big mbulk count string\r\n", true);
        let mut bulk = b"*1\r\n$".to_vec();
        bulk.extend(vec![b'1'; 65 * 1024]);
        check(s, &bulk, b"-ERR Protocol error: too big bulk count string\r\n", true);
        // Just under the limit, a long inline line is fine.
        let mut ok = b"ECHO ".to_vec();
        ok.extend(vec![b'x'; 60_000]);
        ok.extend_from_slice(b"\r\n");
        let mut want = b"$60000\r\n".to_vec();
        want.extend(vec![b'x'; 60_000]);
        want.extend_from_slice(b"\r\n");
        check(s, &ok, &want, false);
    });
}

#[test]
fn nul_before_line_end_waits_like_redis() {
    // Redis finds line ends with strchr, which stops at a NUL: such a line
    // is never complete, so nothing is answered and nothing is closed.
    let s = TestServer::start(1);
    for input in [&b"PING\0x\r\n"[..], b"*1\0\r\n"] {
        let mut r = s.raw();
        r.send(input);
        r.s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut b = [0u8; 16];
        match r.s.read(&mut b) {
            Err(e) => assert!(matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
            Ok(n) => panic!("unexpected reply {:?}", &b[..n]),
        }
    }
}

#[test]
fn lenient_forms_redis_accepts() {
    each_threads(|s| {
        // Empty and negative multibulk counts, empty inline lines.
        check(s, b"*0\r\n*-5\r\n\r\n\n  \t \r\n*1\r\n$4\r\nPING\r\n", b"+PONG\r\n", false);
        // The two bytes after a bulk are skipped unchecked.
        check(s, b"*2\r\n$4\r\nECHO\r\n$3\r\nabcXY*1\r\n$4\r\nPING\r\n", b"$3\r\nabc\r\n+PONG\r\n", false);
        // A bare \n ends an inline line; \r inside it is a separator.
        check(s, b"ECHO hi\nECHO a\rb\r\n", b"$2\r\nhi\r\n-ERR wrong number of arguments for 'echo' command\r\n", false);
        // Binary bulk with NUL and CRLF inside.
        check(s, b"*2\r\n$4\r\nECHO\r\n$4\r\n\0\r\n\0\r\n", b"$4\r\n\0\r\n\0\r\n", false);
    });
}

#[test]
fn inline_quoting_like_sdssplitargs() {
    each_threads(|s| {
        check(s, b"ECHO \"\\x41\\x4g\\q\"\r\n", b"$5\r\nAx4gq\r\n", false);
        check(s, b"ECHO \"a\\r\\n\\t\\b\\a\\\\\\\"b\"\r\n", b"$9\r\na\r\n\t\x08\x07\\\"b\r\n", false);
        check(s, b"ECHO 'it\\'s' \r\n", b"$4\r\nit's\r\n", false);
        check(s, b"ECHO \"\"\r\n", b"$0\r\n\r\n", false);
        check(s, b"ECHO 'a\\nb'\r\n", b"$4\r\na\\nb\r\n", false);
        check(s, b"ECHO 'a' \"b\"\r\n", b"-ERR wrong number of arguments for 'echo' command\r\n", false);
        check(s, b"SET \"sp ace\" 'v 1'\r\nGET \"sp ace\"\r\n", b"+OK\r\n$3\r\nv 1\r\n", false);
    });
}

#[test]
fn requests_split_at_every_byte() {
    each_threads(|s| {
        let req: &[u8] = b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$5\r\nva\0ue\r\nGET k\r\n\r\n*2\r\n$3\r\nGET\r\n$3\r\nk\r\n\r\n";
        let mut r = s.raw();
        for b in req {
            r.send(std::slice::from_ref(b));
        }
        // The key is "k\r\n"; the inline GET asks for "k".
        r.expect(b"+OK\r\n$-1\r\n$5\r\nva\0ue\r\n");
    });
}

#[test]
fn big_argument_arriving_in_pieces() {
    each_threads(|s| {
        let val = vec![b'z'; 3 * 1024 * 1024 + 7];
        let mut req = format!("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n", val.len()).into_bytes();
        req.extend_from_slice(&val);
        req.extend_from_slice(b"\r\n");
        let mut r = s.raw();
        for chunk in req.chunks(100_003) {
            r.send(chunk);
        }
        r.expect(b"+OK\r\n");
        r.cmd(&[b"STRLEN", b"big"]);
        r.expect(format!(":{}\r\n", val.len()).as_bytes());
    });
}

#[test]
fn long_pipeline_is_answered_in_order() {
    each_threads(|s| {
        let mut req = Vec::new();
        let mut want = Vec::new();
        for i in 0..20_000 {
            let v = i.to_string();
            req.extend_from_slice(format!("*2\r\n$4\r\nECHO\r\n${}\r\n{}\r\n", v.len(), v).as_bytes());
            want.extend_from_slice(format!("${}\r\n{}\r\n", v.len(), v).as_bytes());
        }
        let mut r = s.raw();
        let mut w = r.s.try_clone().unwrap();
        let writer = std::thread::spawn(move || std::io::Write::write_all(&mut w, &req).unwrap());
        r.expect(&want);
        writer.join().unwrap();
    });
}

#[test]
fn http_requests_close_silently() {
    let s = TestServer::start(1);
    let mut r = s.raw();
    r.send(b"POST / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(r.is_closed());
    // The reply to the request line is dropped too: nothing is sent.
    let mut r = s.raw();
    r.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(r.is_closed());
}

/// With `io-replies-after-round` on (the default) replies wait for the end
/// of the event-loop round: every connection of a busy round still gets its
/// own replies, in order, including one whose replies overflow the socket
/// (its reads pause until they drain), one that quits mid-pipeline, and the
/// memcached port; switched at runtime both ways.
#[test]
fn replies_after_round_reach_every_client() {
    for (start, then) in [("yes", "no"), ("no", "yes")] {
        let s = TestServer::start_with(1, &["--io-replies-after-round", start]);
        let mc = mc_port(&s);
        for setting in [start, then] {
            let mut admin = s.raw();
            admin.cmd(&[b"CONFIG", b"SET", b"io-replies-after-round", setting.as_bytes()]);
            admin.expect(b"+OK\r\n");
            let mut conns: Vec<Raw> = (0..12).map(|_| s.raw()).collect();
            for (i, r) in conns.iter_mut().enumerate() {
                let mut p = Vec::new();
                for j in 0..50 {
                    p.extend_from_slice(format!("SET k{i} {j}\r\nGET k{i}\r\n").as_bytes());
                }
                r.send(&p);
            }
            for r in conns.iter_mut() {
                for j in 0..50 {
                    let v = j.to_string();
                    r.expect(format!("+OK\r\n${}\r\n{v}\r\n", v.len()).as_bytes());
                }
            }
            // Replies far larger than a socket's buffer, while others talk.
            let mut big = s.raw();
            big.cmd(&[b"SET", b"big", &vec![b'x'; 1 << 20]]);
            big.expect(b"+OK\r\n");
            big.send(&b"GET big\r\n".repeat(16));
            for r in conns.iter_mut() {
                r.send(b"PING\r\n");
            }
            for _ in 0..16 {
                big.expect(format!("$1048576\r\n{}\r\n", "x".repeat(1 << 20)).as_bytes());
            }
            for r in conns.iter_mut() {
                r.expect(b"+PONG\r\n");
            }
            // QUIT in a pipeline: what came before it is answered, then the
            // connection closes.
            let mut q = s.raw();
            q.send(b"PING\r\nQUIT\r\nPING\r\n");
            q.expect(b"+PONG\r\n+OK\r\n");
            assert!(q.is_closed(), "closed after QUIT ({setting})");
            let mut m = Raw::connect(mc);
            m.send(b"set mk 0 0 1\r\na\r\nget mk\r\n");
            m.expect(b"STORED\r\nVALUE mk 0 1\r\na\r\nEND\r\n");
        }
    }
}

/// With `io-short-read-drains` on (the default) a short read ends the reads
/// of one readiness event; what the peer sends later, and a half-close that
/// arrives with the last request, must still be read. Both settings, both
/// protocols.
#[test]
fn short_reads_lose_nothing() {
    for drains in ["yes", "no"] {
        let s = TestServer::start_with(2, &["--io-short-read-drains", drains]);
        // Requests, then the write side closed at once: every reply comes,
        // then the server closes its side.
        let mut r = Raw::connect(s.port);
        r.send(b"PING\r\nSET k v\r\nGET k\r\n");
        r.s.shutdown(std::net::Shutdown::Write).unwrap();
        r.expect(b"+PONG\r\n+OK\r\n$1\r\nv\r\n");
        assert_eq!(r.s.read(&mut [0u8; 1]).ok(), Some(0), "half-closed client is closed after its replies ({drains})");
        // A request in pieces, each answered only when complete, over
        // several readiness events.
        let mut r = Raw::connect(s.port);
        for piece in [&b"*2\r\n$3\r\nGE"[..], b"T\r\n$1", b"\r\nk\r", b"\n"] {
            r.send(piece);
            std::thread::yield_now();
        }
        r.expect(b"$1\r\nv\r\n");
        // A pipeline larger than one read buffer.
        let mut big = Vec::new();
        for _ in 0..20_000 {
            big.extend_from_slice(b"GET k\r\n");
        }
        r.send(&big);
        for _ in 0..20_000 {
            r.expect(b"$1\r\nv\r\n");
        }
        // The memcached port, half-closed after its request.
        let mut m = Raw::connect(mc_port(&s));
        m.send(b"get k\r\n");
        m.s.shutdown(std::net::Shutdown::Write).unwrap();
        m.expect(b"VALUE k 0 1\r\nv\r\nEND\r\n");
        assert_eq!(m.s.read(&mut [0u8; 1]).ok(), Some(0), "memcache client closed ({drains})");
    }
}
