//! Smoke tests of the request path: a few commands with the `redis` crate
//! and exact bytes on a raw socket, at 1 and 2 worker threads.
mod common;
use common::*;

#[test]
fn get_set_with_redis_crate() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
        let v: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
        assert_eq!(v, "v");
        let n: Option<String> = redis::cmd("GET").arg("missing").query(&mut c).unwrap();
        assert_eq!(n, None);
    });
}

#[test]
fn pipeline_replies_in_order() {
    each_threads(|s| {
        let mut r = s.raw();
        r.send(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n");
        r.expect(b"+OK\r\n$1\r\n1\r\n+PONG\r\n$2\r\nhi\r\n");
    });
}

#[test]
fn unknown_command_keeps_connection() {
    let s = TestServer::start(1);
    let mut r = s.raw();
    r.roundtrip(&[b"nosuch", b"a", b"b"], b"-ERR unknown command 'nosuch', with args beginning with: 'a' 'b' \r\n");
    r.roundtrip(&[b"GET"], b"-ERR wrong number of arguments for 'get' command\r\n");
    r.roundtrip(&[b"PING"], b"+PONG\r\n");
}

#[test]
fn protocol_error_closes_only_that_connection() {
    let s = TestServer::start(2);
    let mut other = s.raw();
    let mut bad = s.raw();
    bad.send(b"*1\r\nfoo\r\n");
    bad.expect(b"-ERR Protocol error: expected '$', got 'f'\r\n");
    assert!(bad.is_closed());
    other.roundtrip(&[b"PING"], b"+PONG\r\n");
}
