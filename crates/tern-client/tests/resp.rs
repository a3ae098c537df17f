//! The RESP client against the real tern-server, and redis-server when
//! installed: the same checks on both.

mod common;

use std::sync::Arc;

use tern_client::{Error, Handshake, Options, RespClient, Value};

fn client(addrs: &[(String, u16)]) -> RespClient {
    RespClient::new(addrs, Options::default()).expect("client")
}

fn bulk(b: &[u8]) -> Value {
    Value::Bulk(b.to_vec())
}

fn basics(c: &RespClient) {
    c.command(&[&b"FLUSHALL"[..]]).unwrap();
    assert_eq!(c.command(&[&b"SET"[..], b"k1", b"v1"]).unwrap(), Value::Simple(b"OK".to_vec()));
    assert_eq!(c.get(b"k1").unwrap(), Some(b"v1".to_vec()));
    assert_eq!(c.get(b"nope").unwrap(), None);
    // Binary values and a 100 KB one survive.
    let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    c.mset(&[(&b"bin"[..], &b"\r\n\0\xff"[..]), (b"big", &big)]).unwrap();
    let got = c.mget(&[&b"k1"[..], b"missing", b"big", b"k1", b"bin"]).unwrap();
    assert_eq!(got, vec![Some(b"v1".to_vec()), None, Some(big.clone()), Some(b"v1".to_vec()), Some(b"\r\n\0\xff".to_vec())]);
    assert_eq!(c.mget(&[]).unwrap(), Vec::<Option<Vec<u8>>>::new());
    // An error reply is typed and leaves the connection usable.
    match c.command(&[&b"INCR"[..], b"k1"]) {
        Err(Error::Server(m)) => assert!(m.starts_with(b"ERR value is not an integer"), "{m:?}"),
        r => panic!("{r:?}"),
    }
    assert_eq!(c.command(&[&b"INCR"[..], b"n"]).unwrap(), Value::Int(1));
    // A pipeline: one write, replies in order, error replies in place.
    let cmds: Vec<Vec<Vec<u8>>> = vec![
        vec![b"SET".to_vec(), b"p".to_vec(), b"1".to_vec()],
        vec![b"INCRBY".to_vec(), b"p".to_vec(), b"41".to_vec()],
        vec![b"HSET".to_vec(), b"p".to_vec(), b"f".to_vec(), b"v".to_vec()],
        vec![b"GET".to_vec(), b"p".to_vec()],
    ];
    let r = c.pipeline(&cmds, false).unwrap();
    assert_eq!(r[0], Value::Simple(b"OK".to_vec()));
    assert_eq!(r[1], Value::Int(42));
    assert!(matches!(&r[2], Value::Error(m) if m.starts_with(b"WRONGTYPE")));
    assert_eq!(r[3], bulk(b"42"));
    // A transaction returns EXEC's replies.
    let r = c.pipeline(&cmds[..2], true).unwrap();
    assert_eq!(r, vec![Value::Simple(b"OK".to_vec()), Value::Int(42)]);
    assert_eq!(c.del(&[&b"p"[..], b"k1", b"nope"]).unwrap(), 2);
}

#[test]
fn tern_server() {
    let s = common::tern();
    basics(&client(&[s.addr()]));
}

#[test]
fn redis_server() {
    let Some(s) = common::redis() else { return };
    basics(&client(&[s.addr()]));
}

#[test]
fn handshake_hello3_select_and_auth() {
    let s = common::tern();
    let plain = client(&[s.addr()]);
    plain.command(&[&b"SET"[..], b"db0", b"x"]).unwrap();
    let opts = Options { handshake: Some(Handshake { resp3: true, db: 3, ..Handshake::default() }), ..Options::default() };
    let c = RespClient::new(&[s.addr()], opts).unwrap();
    assert_eq!(c.get(b"db0").unwrap(), None, "SELECT 3 on connect");
    c.command(&[&b"HSET"[..], b"h", b"f", b"v"]).unwrap();
    // RESP3 replies a map to HGETALL.
    assert_eq!(c.command(&[&b"HGETALL"[..], b"h"]).unwrap(), Value::Map(vec![(bulk(b"f"), bulk(b"v"))]));
    plain.command(&[&b"CONFIG"[..], b"SET", b"requirepass", b"s3cret"]).unwrap();
    let bad = Options { handshake: Some(Handshake { password: Some(b"wrong".to_vec()), ..Handshake::default() }), ..Options::default() };
    match RespClient::new(&[s.addr()], bad).unwrap().get(b"x") {
        Err(Error::Handshake { message, .. }) => assert!(message.starts_with(b"WRONGPASS"), "{message:?}"),
        r => panic!("{r:?}"),
    }
    for resp3 in [false, true] {
        let h = Handshake { password: Some(b"s3cret".to_vec()), resp3, ..Handshake::default() };
        let c = RespClient::new(&[s.addr()], Options { handshake: Some(h), ..Options::default() }).unwrap();
        assert_eq!(c.get(b"db0").unwrap(), Some(b"x".to_vec()));
    }
}

/// Keys spread over three servers land where the ring says, and a multi-key
/// request split over them answers in the caller's order.
#[test]
fn pool_of_three_splits_by_the_ring() {
    let servers: Vec<_> = (0..3).map(|_| common::tern()).collect();
    let addrs: Vec<_> = servers.iter().map(|s| s.addr()).collect();
    let pool = client(&addrs);
    let keys: Vec<Vec<u8>> = (0..100).map(|i| format!("key:{i}").into_bytes()).collect();
    let pairs: Vec<(&[u8], &[u8])> = keys.iter().step_by(2).map(|k| (&k[..], &k[..])).collect();
    pool.mset(&pairs).unwrap();
    let mut wanted: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    wanted.push(b"key:0");
    let got = pool.mget(&wanted).unwrap();
    for (k, v) in wanted.iter().zip(&got) {
        let n: usize = std::str::from_utf8(&k[4..]).unwrap().parse().unwrap();
        assert_eq!(v.as_deref(), (n & 1 == 0).then_some(*k));
    }
    let mut per_server = [0; 3];
    for (i, a) in addrs.iter().enumerate() {
        let one = client(std::slice::from_ref(a));
        for (k, _) in &pairs {
            let here = one.get(k).unwrap().is_some();
            assert_eq!(here, pool.cluster.server_for(k) == i, "key {:?}", String::from_utf8_lossy(k));
            per_server[i] += usize::from(here);
        }
    }
    assert!(per_server.iter().all(|&n| n > 5), "{per_server:?}");
    // A pipeline over the pool keeps its order too.
    let cmds: Vec<Vec<Vec<u8>>> = keys.iter().take(10).map(|k| vec![b"GET".to_vec(), k.clone()]).collect();
    let r = pool.pipeline(&cmds, false).unwrap();
    for (i, v) in r.iter().enumerate() {
        assert_eq!(*v, if i % 2 == 0 { bulk(&keys[i]) } else { Value::Null });
    }
    assert!(matches!(pool.pipeline(&cmds, true), Err(Error::Invalid(_))));
    let all: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    assert_eq!(pool.del(&all).unwrap(), 50);
}

/// Threads share one client; each sees its own writes.
#[test]
fn threads_share_a_client() {
    let s = common::tern();
    let c = Arc::new(RespClient::new(&[s.addr()], Options { max_connections: 4, ..Options::default() }).unwrap());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    let k = format!("t{t}:{}", i % 7).into_bytes();
                    let v = format!("{t}-{i}").into_bytes();
                    c.command(&[&b"SET"[..], &k, &v]).unwrap();
                    assert_eq!(c.mget(&[&k[..], b"absent"]).unwrap(), vec![Some(v), None]);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Two servers with one connection each, and threads that each need both
/// at once: no thread waits for a connection the other holds.
#[test]
fn small_pools_shared_by_multi_server_calls_do_not_deadlock() {
    let servers: Vec<_> = (0..2).map(|_| common::tern()).collect();
    let addrs: Vec<_> = servers.iter().map(|s| s.addr()).collect();
    let o = Options { max_connections: 1, pool_timeout: std::time::Duration::from_secs(2), ..Options::default() };
    let c = Arc::new(RespClient::new(&addrs, o).unwrap());
    let keys: Vec<Vec<u8>> = (0..40).map(|i| format!("k{i}").into_bytes()).collect();
    let on = |s: usize| keys.iter().find(|k| c.cluster.server_for(k) == s).expect("a key on each server").clone();
    // Half the threads name server 0's key first, half server 1's.
    let (a, b) = (on(0), on(1));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let c = c.clone();
            let pair = if t % 2 == 0 { [a.clone(), b.clone()] } else { [b.clone(), a.clone()] };
            std::thread::spawn(move || {
                for _ in 0..2000 {
                    c.mget(&[&pair[0][..], &pair[1][..]]).expect("no pool timeout");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
