//! Failures: servers that die mid-reply, stall, refuse, or are killed in
//! the middle of multi-gets. A broken connection must never be reused, the
//! server must be marked down (and come back), and the caller must get a
//! typed error or, by policy, misses.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use common::fake;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_client::{Error, FailurePolicy, GetOpts, MetaClient, Options, RespClient, SetOpts, Value};

/// Reads one request's worth of bytes (these tests send small ones).
fn read_request(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 4096];
    matches!(s.read(&mut b), Ok(n) if n > 0)
}

fn opts(down_for_ms: u64) -> Options {
    Options {
        read_timeout: Duration::from_millis(300),
        connect_timeout: Duration::from_millis(300),
        down_for: Duration::from_millis(down_for_ms),
        ..Options::default()
    }
}

/// Polls `f` until it is true or 10 s pass.
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// The first connection answers half a bulk and closes; later ones answer
/// whole. The half-read connection is not reused: the next answer comes
/// on a new connection and is the right one.
#[test]
fn server_dies_mid_reply() {
    let (addr, accepted) = fake(|n, mut s| {
        while read_request(&mut s) {
            if n == 0 {
                let _ = s.write_all(b"$10\r\nhalf");
                return;
            }
            let _ = s.write_all(b"$5\r\nwhole\r\n");
        }
    });
    let c = RespClient::new(&[addr], opts(50)).unwrap();
    assert!(matches!(c.get(b"k"), Err(Error::Connection { .. })));
    assert!(c.cluster.servers[0].is_down());
    assert!(matches!(c.get(b"k"), Err(Error::ServerDown { .. })), "down: fails fast");
    assert!(eventually(|| c.get(b"k").is_ok()), "comes back on its own");
    assert_eq!(c.get(b"k").unwrap(), Some(b"whole".to_vec()));
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

/// A reply that stalls half way times out; the connection, with half a
/// reply unread, is dropped rather than handed to the next caller.
#[test]
fn stalled_reply_times_out_and_is_not_reused() {
    let (addr, accepted) = fake(|n, mut s| {
        while read_request(&mut s) {
            if n == 0 {
                let _ = s.write_all(b"*2\r\n$1\r\na\r\n");
                std::thread::sleep(Duration::from_secs(3));
                let _ = s.write_all(b"$1\r\nb\r\n");
                continue;
            }
            let _ = s.write_all(b"*2\r\n$1\r\nc\r\n$1\r\nd\r\n");
        }
    });
    let c = RespClient::new(&[addr], opts(1)).unwrap();
    let t = Instant::now();
    assert!(matches!(c.mget(&[&b"x"[..], b"y"]), Err(Error::Timeout { .. })));
    assert!(t.elapsed() < Duration::from_secs(2));
    assert!(eventually(|| c.mget(&[&b"x"[..], b"y"]).is_ok()));
    assert_eq!(c.mget(&[&b"x"[..], b"y"]).unwrap(), vec![Some(b"c".to_vec()), Some(b"d".to_vec())]);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

/// Consecutive failures double the mark-down (the reconnect backoff).
#[test]
fn refused_server_backs_off() {
    let port = common::free_port();
    let addr = ("127.0.0.1".to_string(), port);
    let c = RespClient::new(&[addr], Options { down_max: Duration::from_secs(10), ..opts(100) }).unwrap();
    let mut downs = Vec::new();
    for _ in 0..3 {
        assert!(matches!(c.get(b"k"), Err(Error::Connection { .. })));
        let t = Instant::now();
        assert!(eventually(|| !c.cluster.servers[0].is_down()));
        downs.push(t.elapsed());
    }
    assert!(downs[0] >= Duration::from_millis(90), "{downs:?}");
    assert!(downs[1] >= Duration::from_millis(190), "{downs:?}");
    assert!(downs[2] >= Duration::from_millis(390), "{downs:?}");
}

/// With every connection in use, a caller waits the pool timeout and gets
/// a typed error.
#[test]
fn pool_limit() {
    let release = Arc::new(AtomicBool::new(false));
    let r2 = release.clone();
    let (addr, accepted) = fake(move |_, mut s| {
        while read_request(&mut s) {
            while !r2.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = s.write_all(b"+OK\r\n");
        }
    });
    let o = Options { max_connections: 1, pool_timeout: Duration::from_millis(100), read_timeout: Duration::from_secs(5), ..opts(100) };
    let c = Arc::new(RespClient::new(&[addr], o).unwrap());
    let c2 = c.clone();
    let busy = std::thread::spawn(move || c2.command(&[&b"PING"[..]]));
    assert!(eventually(|| accepted.load(Ordering::SeqCst) == 1));
    assert!(matches!(c.command(&[&b"PING"[..]]), Err(Error::PoolExhausted { .. })));
    release.store(true, Ordering::SeqCst);
    assert_eq!(busy.join().unwrap().unwrap(), Value::Simple(b"OK".to_vec()));
    assert_eq!(c.command(&[&b"PING"[..]]).unwrap(), Value::Simple(b"OK".to_vec()));
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "one connection, reused");
}

/// Three real servers; one is killed (by PID) while a thread runs
/// multi-gets over all three. Keys of the live servers keep hitting; the
/// dead one's keys are misses (policy) or a typed error (default), and
/// writes to it fail typed or are skipped.
#[test]
fn server_killed_mid_batch() {
    let mut servers: Vec<_> = (0..3).map(|_| common::tern()).collect();
    let addrs: Vec<_> = servers.iter().map(|s| s.mc_addr()).collect();
    let miss = Options { failure: FailurePolicy { reads_miss: true, skip_writes: true }, down_for: Duration::from_secs(60), ..opts(0) };
    let pool = Arc::new(MetaClient::new(&addrs, miss).unwrap());
    let strict = MetaClient::new(&addrs, Options { down_for: Duration::from_secs(60), ..opts(0) }).unwrap();
    let value = vec![b'v'; 20_000];
    let keys: Vec<Vec<u8>> = (0..200).map(|i| format!("key:{i}").into_bytes()).collect();
    for k in &keys {
        pool.set(k, &value, &SetOpts::default()).unwrap();
    }
    let victim = 1;
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let reader = {
        let (pool, keys, stop, rounds) = (pool.clone(), keys.clone(), stop.clone(), rounds.clone());
        std::thread::spawn(move || {
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            while !stop.load(Ordering::SeqCst) {
                let got = pool.get_many(&refs, &GetOpts::default()).expect("misses, not errors");
                for (k, v) in keys.iter().zip(&got) {
                    if pool.cluster.server_for(k) != victim {
                        assert!(v.is_some(), "a live server's key missed");
                    }
                }
                rounds.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    assert!(eventually(|| rounds.load(Ordering::SeqCst) >= 3));
    servers[victim].kill();
    let after = rounds.load(Ordering::SeqCst);
    assert!(eventually(|| rounds.load(Ordering::SeqCst) >= after + 3));
    stop.store(true, Ordering::SeqCst);
    reader.join().expect("reader saw only misses on the dead server");
    assert!(pool.cluster.servers[victim].is_down());
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let got = pool.get_many(&refs, &GetOpts::default()).unwrap();
    for (k, v) in keys.iter().zip(&got) {
        assert_eq!(v.is_some(), pool.cluster.server_for(k) != victim);
    }
    let dead_key = keys.iter().find(|k| pool.cluster.server_for(k) == victim).unwrap();
    assert_eq!(pool.set(dead_key, b"x", &SetOpts::default()).unwrap(), tern_client::Stored::NotStored);
    // Without the policy: typed errors, for reads and writes.
    assert!(matches!(strict.get_many(&refs, &GetOpts::default()), Err(Error::Connection { .. } | Error::ServerDown { .. })));
    assert!(matches!(strict.set(dead_key, b"x", &SetOpts::default()), Err(Error::ServerDown { .. } | Error::Connection { .. })));
}

/// A reply longer than `max_reply` is refused as it arrives, not buffered
/// whole, and the connection is dropped.
#[test]
fn reply_over_max_reply_is_refused() {
    let (addr, _) = fake(|_, mut s| {
        while read_request(&mut s) {
            let _ = s.write_all(b"$4000000\r\n");
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..64 {
                if s.write_all(&chunk).is_err() {
                    return;
                }
            }
        }
    });
    let c = RespClient::new(&[addr], Options { max_reply: 1 << 20, ..opts(0) }).unwrap();
    match c.get(b"k") {
        Err(Error::Protocol { detail, .. }) => assert!(detail.contains("max_reply"), "{detail}"),
        r => panic!("{r:?}"),
    }
}
