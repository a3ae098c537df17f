//! MULTI / EXEC / DISCARD / WATCH / UNWATCH: Redis 7.4's exact replies on a
//! raw socket, real-client use through the `redis` crate, and atomicity as
//! seen by a concurrent client of a 2-worker server.
mod common;
use common::*;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn control_errors_are_exact() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"EXEC"], b"-ERR EXEC without MULTI\r\n");
        r.roundtrip(&[b"DISCARD"], b"-ERR DISCARD without MULTI\r\n");
        r.roundtrip(&[b"UNWATCH"], b"+OK\r\n");
        r.roundtrip(&[b"MULTI", b"x"], b"-ERR wrong number of arguments for 'multi' command\r\n");
        r.roundtrip(&[b"WATCH"], b"-ERR wrong number of arguments for 'watch' command\r\n");
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        // Neither of these aborts the transaction: they are the commands'
        // own errors, not queueing failures.
        r.roundtrip(&[b"MULTI"], b"-ERR MULTI calls can not be nested\r\n");
        r.roundtrip(&[b"WATCH", b"k"], b"-ERR WATCH inside MULTI is not allowed\r\n");
        r.roundtrip(&[b"SET", b"k", b"1"], b"+QUEUED\r\n");
        r.roundtrip(&[b"EXEC"], b"*1\r\n+OK\r\n");
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"EXEC"], b"*0\r\n");
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"k", b"2"], b"+QUEUED\r\n");
        r.roundtrip(&[b"DISCARD"], b"+OK\r\n");
        r.roundtrip(&[b"EXEC"], b"-ERR EXEC without MULTI\r\n");
        r.roundtrip(&[b"GET", b"k"], b"$1\r\n1\r\n");
    });
}

#[test]
fn queueing_failure_aborts_exec() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"k"], b"-ERR wrong number of arguments for 'set' command\r\n");
        r.roundtrip(&[b"SET", b"k", b"v"], b"+QUEUED\r\n");
        r.roundtrip(&[b"NOSUCH", b"a"], b"-ERR unknown command 'NOSUCH', with args beginning with: 'a' \r\n");
        r.roundtrip(&[b"EXEC"], b"-EXECABORT Transaction discarded because of previous errors.\r\n");
        r.roundtrip(&[b"EXEC"], b"-ERR EXEC without MULTI\r\n");
        r.roundtrip(&[b"GET", b"k"], b"$-1\r\n");
        // A malformed EXEC discards the transaction and says why.
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"k", b"v"], b"+QUEUED\r\n");
        r.roundtrip(&[b"EXEC", b"x"], b"-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n");
        r.roundtrip(&[b"EXEC"], b"-ERR EXEC without MULTI\r\n");
        r.roundtrip(&[b"GET", b"k"], b"$-1\r\n");
    });
}

#[test]
fn runtime_errors_do_not_stop_the_rest() {
    each_threads(|s| {
        let mut r = s.raw();
        r.send(b"MULTI\r\nSET k 1\r\nSET k 2 bogus\r\nGET k\r\nEXEC\r\n");
        r.expect(b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n-ERR syntax error\r\n$1\r\n1\r\n");
    });
}

#[test]
fn binary_arguments_survive_queueing() {
    each_threads(|s| {
        let mut r = s.raw();
        let key: &[u8] = b"k\0\r\n\xff";
        let val: &[u8] = b"\r\n*1\r\n$0\r\n\0";
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"SET", key, val], b"+QUEUED\r\n");
        r.roundtrip(&[b"GET", key], b"+QUEUED\r\n");
        let mut want = b"*2\r\n+OK\r\n$11\r\n".to_vec();
        want.extend_from_slice(val);
        want.extend_from_slice(b"\r\n");
        r.roundtrip(&[b"EXEC"], &want);
    });
}

#[test]
fn watch_aborts_on_change_by_another_client() {
    each_threads(|s| {
        let mut a = s.raw();
        let mut b = s.raw();
        a.roundtrip(&[b"WATCH", b"w", b"w", b"other"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"w", b"1"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"SET", b"x", b"1"], b"+QUEUED\r\n");
        a.roundtrip(&[b"EXEC"], b"*-1\r\n");
        a.roundtrip(&[b"GET", b"x"], b"$-1\r\n");
        // EXEC forgot the watches: the next transaction runs.
        b.roundtrip(&[b"SET", b"w", b"2"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"SET", b"x", b"1"], b"+QUEUED\r\n");
        a.roundtrip(&[b"EXEC"], b"*1\r\n+OK\r\n");
        // A write to an unwatched key, or by the client itself inside EXEC,
        // does not abort.
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"unrelated", b"1"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"SET", b"w", b"3"], b"+QUEUED\r\n");
        a.roundtrip(&[b"EXEC"], b"*1\r\n+OK\r\n");
        // DEL of a watched key is a change too.
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        b.roundtrip(&[b"DEL", b"w"], b":1\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*-1\r\n");
    });
}

#[test]
fn watch_of_own_write_before_multi_aborts() {
    each_threads(|s| {
        let mut a = s.raw();
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        a.roundtrip(&[b"SET", b"w", b"1"], b"+OK\r\n");
        // Already dirty: WATCH is a no-op, EXEC still fails.
        a.roundtrip(&[b"WATCH", b"z"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*-1\r\n");
    });
}

#[test]
fn unwatch_and_discard_forget_watches() {
    each_threads(|s| {
        let mut a = s.raw();
        let mut b = s.raw();
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        a.roundtrip(&[b"UNWATCH"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"w", b"1"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*0\r\n");

        // UNWATCH after the key changed clears the dirty state too.
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"w", b"2"], b"+OK\r\n");
        a.roundtrip(&[b"UNWATCH"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*0\r\n");

        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"DISCARD"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"w", b"3"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*0\r\n");

        // Inside MULTI, UNWATCH is queued: it cannot save a transaction
        // whose key already changed.
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"UNWATCH"], b"+QUEUED\r\n");
        b.roundtrip(&[b"SET", b"w", b"4"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*-1\r\n");
    });
}

#[test]
fn watch_is_per_database() {
    each_threads(|s| {
        let mut a = s.raw();
        let mut b = s.raw();
        a.roundtrip(&[b"SELECT", b"1"], b"+OK\r\n");
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"w", b"1"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*0\r\n");
        a.roundtrip(&[b"WATCH", b"w"], b"+OK\r\n");
        b.roundtrip(&[b"SELECT", b"1"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"w", b"1"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*-1\r\n");
    });
}

#[test]
fn watched_key_that_expires_aborts() {
    each_threads(|s| {
        let mut a = s.raw();
        a.roundtrip(&[b"SET", b"t", b"v", b"PX", b"100"], b"+OK\r\n");
        a.roundtrip(&[b"WATCH", b"t"], b"+OK\r\n");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            // The lookup that finds it expired deletes it, which is a
            // change to a watched key.
            a.cmd(&[b"EXISTS", b"t"]);
            if a.read_n(4) == b":0\r\n" {
                break;
            }
            assert!(Instant::now() < deadline, "key did not expire");
        }
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*-1\r\n");

        // A key already expired when WATCHed is not a change.
        a.roundtrip(&[b"SET", b"t", b"v", b"PX", b"1"], b"+OK\r\n");
        let deadline = Instant::now() + Duration::from_millis(5);
        while Instant::now() < deadline {
            std::hint::spin_loop();
        }
        a.roundtrip(&[b"WATCH", b"t"], b"+OK\r\n");
        a.roundtrip(&[b"MULTI"], b"+OK\r\n");
        a.roundtrip(&[b"EXEC"], b"*0\r\n");
    });
}

#[test]
fn watched_key_expiring_untouched_aborts() {
    // Nobody touches the key: EXEC itself must notice it expired.
    let s = TestServer::start(2);
    let mut a = s.raw();
    a.roundtrip(&[b"SET", b"t", b"v", b"PX", b"100"], b"+OK\r\n");
    a.roundtrip(&[b"WATCH", b"t"], b"+OK\r\n");
    let deadline = Instant::now() + Duration::from_millis(150);
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
    a.roundtrip(&[b"MULTI"], b"+OK\r\n");
    a.roundtrip(&[b"EXEC"], b"*-1\r\n");
}

#[test]
fn resp3_replies() {
    each_threads(|s| {
        let mut a = s.raw();
        a.cmd(&[b"HELLO", b"3"]);
        let mut first = [0u8; 1];
        std::io::Read::read_exact(&mut a.s, &mut first).unwrap();
        if first[0] == b'-' {
            eprintln!("HELLO not available yet; skipping RESP3 checks");
            return;
        }
        // Drain the HELLO map with a PING fence.
        a.cmd(&[b"PING"]);
        let mut seen = Vec::new();
        while !seen.ends_with(b"+PONG\r\n") {
            seen.push(a.read_n(1)[0]);
        }
        a.send(b"MULTI\r\nSET k 1\r\nGET k\r\nGET nope\r\nEXEC\r\n");
        a.expect(b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n$1\r\n1\r\n_\r\n");
        let mut b = s.raw();
        a.roundtrip(&[b"WATCH", b"k"], b"+OK\r\n");
        b.roundtrip(&[b"SET", b"k", b"2"], b"+OK\r\n");
        a.send(b"MULTI\r\nEXEC\r\n");
        a.expect(b"+OK\r\n_\r\n");
    });
}

#[test]
fn redis_crate_atomic_pipeline() {
    each_threads(|s| {
        let mut c = s.conn();
        let (v, missing): (String, Option<String>) = redis::pipe()
            .atomic()
            .cmd("SET")
            .arg("p")
            .arg("hello")
            .ignore()
            .cmd("GET")
            .arg("p")
            .cmd("GET")
            .arg("nothere")
            .query(&mut c)
            .unwrap();
        assert_eq!(v, "hello");
        assert_eq!(missing, None);

        // A runtime error inside the transaction surfaces as an error.
        let r: redis::RedisResult<(String, String)> =
            redis::pipe().atomic().cmd("SET").arg("p").arg("a").arg("bogus").cmd("GET").arg("p").query(&mut c);
        assert!(r.is_err());

        // Optimistic locking with WATCH, as redis::transaction does it;
        // another client's write forces exactly one retry.
        let mut other = s.conn();
        let mut attempts = 0;
        let total: i64 = redis::transaction(&mut c, &["counter"], |c, pipe| {
            attempts += 1;
            let cur: Option<i64> = redis::cmd("GET").arg("counter").query(c)?;
            if attempts == 1 {
                let _: () = redis::cmd("SET").arg("counter").arg(100).query(&mut other)?;
            }
            let next = cur.unwrap_or(0) + 1;
            pipe.cmd("SET").arg("counter").arg(next).ignore().cmd("GET").arg("counter").query(c)
        })
        .map(|(v,): (i64,)| v)
        .unwrap();
        assert_eq!(attempts, 2);
        assert_eq!(total, 101);
    });
}

/// Writers change a group of keys in one transaction; a reader that reads
/// them all atomically must always see one generation, never a mix.
#[test]
fn concurrent_reader_never_sees_half_a_transaction() {
    let s = TestServer::start(2);
    let keys: Vec<String> = (0..8).map(|i| format!("group:{i}")).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..2 {
        let client = s.client();
        let keys = keys.clone();
        let stop = stop.clone();
        writers.push(std::thread::spawn(move || {
            let mut c = client.get_connection().unwrap();
            let mut gen = 0i64;
            while !stop.load(Ordering::Relaxed) {
                gen += 1;
                let v = gen * 2 + w;
                let mut p = redis::pipe();
                p.atomic();
                for k in &keys {
                    p.cmd("SET").arg(k).arg(v).ignore();
                }
                let _: () = p.query(&mut c).unwrap();
            }
            gen
        }));
    }
    let mut c = s.conn();
    let mut mixed = 0;
    let mut reads = 0;
    let deadline = Instant::now() + Duration::from_millis(800);
    while Instant::now() < deadline {
        let mut p = redis::pipe();
        p.atomic();
        for k in &keys {
            p.cmd("GET").arg(k);
        }
        let vals: Vec<Option<i64>> = p.query(&mut c).unwrap();
        reads += 1;
        if vals.iter().any(|v| *v != vals[0]) {
            mixed += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let gens: i64 = writers.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(gens > 10, "writers made no progress");
    assert!(reads > 10);
    assert_eq!(mixed, 0, "{mixed} of {reads} reads saw a half-applied transaction");
}

/// Same, for MSET against MGET when the server has them.
#[test]
fn concurrent_reader_never_sees_half_an_mset() {
    let s = TestServer::start(2);
    let mut probe = s.raw();
    probe.cmd(&[b"MSET", b"probe", b"1"]);
    if probe.read_n(1)[0] == b'-' {
        eprintln!("MSET not available yet; skipping");
        return;
    }
    let keys: Vec<String> = (0..8).map(|i| format!("m:{i}")).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let client = s.client();
        let keys = keys.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut c = client.get_connection().unwrap();
            let mut gen = 0i64;
            while !stop.load(Ordering::Relaxed) {
                gen += 1;
                let mut cmd = redis::cmd("MSET");
                for k in &keys {
                    cmd.arg(k).arg(gen);
                }
                let _: () = cmd.query(&mut c).unwrap();
            }
            gen
        })
    };
    let mut c = s.conn();
    let deadline = Instant::now() + Duration::from_millis(500);
    let mut mixed = 0;
    while Instant::now() < deadline {
        let vals: Vec<Option<i64>> = redis::cmd("MGET").arg(&keys).query(&mut c).unwrap();
        if vals.iter().any(|v| *v != vals[0]) {
            mixed += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    assert!(writer.join().unwrap() > 10);
    assert_eq!(mixed, 0);
}

#[test]
fn long_transaction_with_many_commands() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut p = redis::pipe();
        p.atomic();
        for i in 0..500 {
            p.cmd("SET").arg(format!("bulk{i}")).arg(i).ignore();
        }
        for i in 0..500 {
            p.cmd("GET").arg(format!("bulk{i}"));
        }
        let vals: Vec<i64> = p.query(&mut c).unwrap();
        assert_eq!(vals, (0..500).collect::<Vec<i64>>());
    });
}

#[test]
fn closing_a_client_in_multi_with_watches_is_clean() {
    each_threads(|s| {
        for _ in 0..20 {
            let mut a = s.raw();
            a.send(b"WATCH a b c\r\nMULTI\r\nSET a 1\r\n");
            a.expect(b"+OK\r\n+OK\r\n+QUEUED\r\n");
        }
        let mut b = s.raw();
        b.roundtrip(&[b"SET", b"a", b"2"], b"+OK\r\n");
        b.roundtrip(&[b"GET", b"a"], b"$1\r\n2\r\n");
    });
}
