//! Black-box tests of the list family and the blocking pops: exact bytes
//! on a raw socket (checked against Redis 8.4, `redis-server-unstable`),
//! encodings at their thresholds, the generic commands on lists, and
//! blocking across workers (producer and consumer on different workers,
//! first-come-first-served order, a waiter that disconnects, timeouts,
//! CLIENT UNBLOCK, MULTI, and many producers and consumers delivering
//! every element exactly once), at 1 and 2 worker threads.
mod common;
use common::*;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use redis::Commands;

#[test]
fn replies_and_errors() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "RPUSH l a b c 1 2 3 a", b":7\r\n");
        rt(&mut r, "LRANGE l 0 -1", &bulks(&["a", "b", "c", "1", "2", "3", "a"]));
        rt(&mut r, "LRANGE l -2 100", &bulks(&["3", "a"]));
        rt(&mut r, "LRANGE l 5 2", b"*0\r\n");
        rt(&mut r, "LRANGE nokey 0 -1", b"*0\r\n");
        rt(&mut r, "LINDEX l -1", b"$1\r\na\r\n");
        rt(&mut r, "LINDEX l 7", NIL);
        rt(&mut r, "LINDEX nokey x", NIL);
        rt(&mut r, "LINDEX l x", b"-ERR value is not an integer or out of range\r\n");
        rt(&mut r, "LPOS l a COUNT 0 RANK -1", b"*2\r\n:6\r\n:0\r\n");
        rt(&mut r, "LPOS l a RANK 2 MAXLEN 3", NIL);
        rt(&mut r, "LPOS nokey a COUNT 0", b"*0\r\n");
        rt(&mut r, "LPOS l a RANK 0", b"-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n");
        rt(&mut r, "LPOS l a COUNT -1", b"-ERR COUNT can't be negative\r\n");
        rt(&mut r, "LPOS l a MAXLEN -1", b"-ERR MAXLEN can't be negative\r\n");
        rt(&mut r, "LSET l 100 x", b"-ERR index out of range\r\n");
        rt(&mut r, "LSET nokey 0 x", b"-ERR no such key\r\n");
        rt(&mut r, "LINSERT l middle a b", b"-ERR syntax error\r\n");
        rt(&mut r, "LINSERT l BEFORE zz b", b":-1\r\n");
        rt(&mut r, "LINSERT l AFTER c C", b":8\r\n");
        rt(&mut r, "LREM l -1 a", b":1\r\n");
        rt(&mut r, "LPOP l 0", b"*0\r\n");
        rt(&mut r, "LPOP l -1", b"-ERR value is out of range, must be positive\r\n");
        rt(&mut r, "LPOP nokey 1", NIL_ARRAY);
        rt(&mut r, "LPOP l 1 2", b"-ERR wrong number of arguments for 'lpop' command\r\n");
        rt(&mut r, "RPOP l 2", &bulks(&["3", "2"]));
        rt(&mut r, "LTRIM l 1 -2", OK);
        rt(&mut r, "LRANGE l 0 -1", &bulks(&["b", "c", "C"]));
        rt(&mut r, "LMPOP 0 l LEFT", b"-ERR numkeys should be greater than 0\r\n");
        rt(&mut r, "LMPOP 2 l LEFT", b"-ERR syntax error\r\n");
        rt(&mut r, "LMPOP 1 l LEFT COUNT 0", b"-ERR count should be greater than 0\r\n");
        rt(&mut r, "LMPOP 2 nokey l RIGHT COUNT 5", b"*2\r\n$1\r\nl\r\n*3\r\n$1\r\nC\r\n$1\r\nc\r\n$1\r\nb\r\n");
        rt(&mut r, "EXISTS l", b":0\r\n");
        rt(&mut r, "LMPOP 1 nokey LEFT", NIL_ARRAY);
        rt(&mut r, "BLPOP l -1", b"-ERR timeout is negative\r\n");
        rt(&mut r, "BLPOP l x", b"-ERR timeout is not a float or out of range\r\n");
        rt(&mut r, "BLPOP l inf", b"-ERR timeout is out of range\r\n");
        rt(&mut r, "CLIENT UNBLOCK 1 foo", b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n");
        // WRONGTYPE both ways.
        rt(&mut r, "SET s v", OK);
        for cmd in ["LPUSH s a", "LLEN s", "LRANGE s 0 -1", "LPOP s", "BLPOP s 0", "LMOVE s l LEFT LEFT", "LMPOP 1 s LEFT"] {
            rt(&mut r, cmd, WRONGTYPE);
        }
        rt(&mut r, "RPUSH l x", b":1\r\n");
        rt(&mut r, "LMOVE l s LEFT LEFT", WRONGTYPE);
        rt(&mut r, "GET l", WRONGTYPE);
        rt(&mut r, "HSET l f v", WRONGTYPE);
        // A rotation keeps the list (and its TTL).
        rt(&mut r, "EXPIRE l 100", b":1\r\n");
        rt(&mut r, "LMOVE l l LEFT RIGHT", b"$1\r\nx\r\n");
        rt(&mut r, "TTL l", b":100\r\n");
    });
}

#[test]
fn resp3_null_replies() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = redis::cmd("HELLO").arg(3).query(&mut c).unwrap();
        let v: redis::Value = redis::cmd("LPOP").arg("nokey").arg(1).query(&mut c).unwrap();
        assert_eq!(v, redis::Value::Nil);
        let v: redis::Value = redis::cmd("BLPOP").arg("nokey").arg("0.01").query(&mut c).unwrap();
        assert_eq!(v, redis::Value::Nil);
    });
}

#[test]
fn encodings_follow_list_max_listpack_size() {
    each_threads(|s| {
        let mut c = s.conn();
        let enc = |c: &mut redis::Connection, k: &str| -> String { redis::cmd("OBJECT").arg("ENCODING").arg(k).query(c).unwrap() };
        // Default -2: 8 KiB nodes. 100-byte elements: 79 fit, the 80th converts.
        let e = "x".repeat(100);
        for _ in 0..79 {
            let _: i64 = c.rpush("l", &e).unwrap();
        }
        assert_eq!(enc(&mut c, "l"), "listpack");
        let _: i64 = c.rpush("l", &e).unwrap();
        assert_eq!(enc(&mut c, "l"), "quicklist");
        // Back to one node within half the limit.
        let _: () = c.ltrim("l", 0, 9).unwrap();
        assert_eq!(enc(&mut c, "l"), "listpack");
        // A count limit.
        let _: () = redis::cmd("CONFIG").arg("SET").arg("list-max-listpack-size").arg("4").query(&mut c).unwrap();
        let _: i64 = c.rpush("n", &["1", "2", "3", "4"]).unwrap();
        assert_eq!(enc(&mut c, "n"), "listpack");
        let _: i64 = c.rpush("n", "5").unwrap();
        assert_eq!(enc(&mut c, "n"), "quicklist");
        let _: Vec<String> = c.rpop("n", std::num::NonZeroUsize::new(3)).unwrap();
        assert_eq!(enc(&mut c, "n"), "listpack");
        let got: Vec<String> = c.lrange("n", 0, -1).unwrap();
        assert_eq!(got, vec!["1", "2"]);
        let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("list-max-ziplist-size").query(&mut c).unwrap();
        assert_eq!(v, vec!["list-max-ziplist-size", "4"]);
    });
}

#[test]
fn generic_commands_on_lists() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: i64 = c.rpush("a", &["1", "2", "3"]).unwrap();
        let t: String = redis::cmd("TYPE").arg("a").query(&mut c).unwrap();
        assert_eq!(t, "list");
        let _: () = redis::cmd("COPY").arg("a").arg("b").query(&mut c).unwrap();
        let _: i64 = c.rpush("b", "4").unwrap();
        assert_eq!(c.llen::<_, i64>("a").unwrap(), 3);
        let _: () = c.rename("b", "c").unwrap();
        assert_eq!(c.lrange::<_, Vec<String>>("c", 0, -1).unwrap(), vec!["1", "2", "3", "4"]);
        let moved: i64 = redis::cmd("MOVE").arg("c").arg(1).query(&mut c).unwrap();
        assert_eq!(moved, 1);
        let _: bool = c.expire("a", 100).unwrap();
        assert!(c.ttl::<_, i64>("a").unwrap() > 0);
        let _: () = c.set("str", "v").unwrap();
        let (_, keys): (u64, Vec<String>) = redis::cmd("SCAN").arg(0).arg("TYPE").arg("list").arg("COUNT").arg(1000).query(&mut c).unwrap();
        assert_eq!(keys, vec!["a"]);
        assert_eq!(c.del::<_, i64>("a").unwrap(), 1);
        let _: () = redis::cmd("SELECT").arg(1).query(&mut c).unwrap();
        assert_eq!(c.lrange::<_, Vec<String>>("c", 0, -1).unwrap(), vec!["1", "2", "3", "4"]);
    });
}

#[test]
fn blocked_client_is_served_by_a_push_on_another_worker() {
    let s = TestServer::start(2);
    for (consumer_on, producer_on) in [(0, 1), (1, 0)] {
        let mut consumer = raw_on(&s, consumer_on);
        let mut producer = raw_on(&s, producer_on);
        send(&mut consumer, "BRPOP q 0");
        let mut c = s.conn();
        wait_for("the consumer to block", || blocked(&mut c) == 1);
        let t = Instant::now();
        rt(&mut producer, "LPUSH q job", b":1\r\n");
        consumer.expect(b"*2\r\n$1\r\nq\r\n$3\r\njob\r\n");
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(blocked(&mut c), 0);
        rt(&mut producer, "EXISTS q", b":0\r\n");
        // What it sent while blocked runs once it is served.
        send(&mut consumer, "BLMOVE q2 dst LEFT RIGHT 0");
        send(&mut consumer, "PING");
        wait_for("the consumer to block again", || blocked(&mut c) == 1);
        rt(&mut producer, "RPUSH q2 a", b":1\r\n");
        consumer.expect(b"$1\r\na\r\n+PONG\r\n");
        rt(&mut producer, "LRANGE dst 0 -1", &bulks(&["a"]));
        rt(&mut producer, "DEL dst", b":1\r\n");
    }
}

#[test]
fn requests_pipelined_behind_a_wait_run_after_it() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut w = s.raw();
        w.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n*3\r\n$5\r\nRPUSH\r\n$1\r\nx\r\n$1\r\n1\r\n*1\r\n$4\r\nPING\r\n");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        assert!(!c.exists::<_, bool>("x").unwrap(), "a request behind the wait ran early");
        let _: i64 = c.rpush("q", "job").unwrap();
        w.expect(b"*2\r\n$1\r\nq\r\n$3\r\njob\r\n:1\r\n+PONG\r\n");
        assert!(c.exists::<_, bool>("x").unwrap());
    });
}

#[test]
fn waiters_are_served_first_come_first_served() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut waiters: Vec<Raw> = Vec::new();
        for i in 0..6 {
            let mut w = s.raw();
            send(&mut w, "BLPOP q 0");
            wait_for("a waiter to block", || blocked(&mut c) == i + 1);
            waiters.push(w);
        }
        let _: i64 = c.rpush("q", &["0", "1", "2", "3", "4", "5"]).unwrap();
        for (i, w) in waiters.iter_mut().enumerate() {
            w.expect(format!("*2\r\n$1\r\nq\r\n$1\r\n{i}\r\n").as_bytes());
        }
        assert_eq!(blocked(&mut c), 0);
        assert!(!c.exists::<_, bool>("q").unwrap());
    });
}

#[test]
fn a_waiter_that_leaves_takes_nothing() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut gone = s.raw();
        send(&mut gone, "BLPOP q 0");
        wait_for("the first waiter to block", || blocked(&mut c) == 1);
        let mut next = s.raw();
        send(&mut next, "BLPOP q 0");
        wait_for("the second waiter to block", || blocked(&mut c) == 2);
        drop(gone);
        wait_for("the first waiter to be gone", || blocked(&mut c) == 1);
        let _: i64 = c.rpush("q", &["a", "b"]).unwrap();
        next.expect(b"*2\r\n$1\r\nq\r\n$1\r\na\r\n");
        assert_eq!(c.lrange::<_, Vec<String>>("q", 0, -1).unwrap(), vec!["b"]);
        // Leaving with no one behind leaves the element in place.
        let mut alone = s.raw();
        let _: i64 = c.del("q").unwrap();
        send(&mut alone, "BLPOP q 0");
        wait_for("the lone waiter to block", || blocked(&mut c) == 1);
        drop(alone);
        wait_for("the lone waiter to be gone", || blocked(&mut c) == 0);
        let _: i64 = c.rpush("q", "kept").unwrap();
        assert_eq!(c.lrange::<_, Vec<String>>("q", 0, -1).unwrap(), vec!["kept"]);
    });
}

#[test]
fn a_waiter_whose_destination_turns_wrong_type_gets_the_error() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut w = s.raw();
        send(&mut w, "BLMOVE src dst LEFT LEFT 0");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        // A string under the key it waits on does not serve it.
        let _: () = c.set("src", "str").unwrap();
        let _: i64 = c.del("src").unwrap();
        let _: () = c.set("dst", "str").unwrap();
        let _: i64 = c.rpush("src", "a").unwrap();
        w.expect(WRONGTYPE);
        assert_eq!(blocked(&mut c), 0);
        assert_eq!(c.lrange::<_, Vec<String>>("src", 0, -1).unwrap(), vec!["a"]);
        rt(&mut w, "BLMOVE dst src LEFT LEFT 0", WRONGTYPE);
    });
}

#[test]
fn a_waiter_woken_behind_a_wrong_type_key_gets_the_error() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut w = s.raw();
        for (wait, k1, k2) in [("BLPOP a b 0", "a", "b"), ("BLMPOP 0 2 c d LEFT", "c", "d")] {
            send(&mut w, wait);
            wait_for("the waiter to block", || blocked(&mut c) == 1);
            // A string under the first key alone leaves it waiting.
            let _: () = c.set(k1, "str").unwrap();
            assert_eq!(blocked(&mut c), 1);
            // Redis re-runs the command for the second key and fails on the first.
            let _: i64 = c.rpush(k2, "x").unwrap();
            w.expect(WRONGTYPE);
            assert_eq!(blocked(&mut c), 0);
            assert_eq!(c.llen::<_, i64>(k2).unwrap(), 1);
        }
    });
}

#[test]
fn rename_move_and_swapdb_serve_waiters() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut w = s.raw();
        send(&mut w, "BLPOP dst 0");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        let _: i64 = c.rpush("src", "a").unwrap();
        let _: () = c.rename("src", "dst").unwrap();
        w.expect(b"*2\r\n$3\r\ndst\r\n$1\r\na\r\n");
        // A waiter in database 1, served by SWAPDB bringing a list in.
        rt(&mut w, "SELECT 1", OK);
        send(&mut w, "BRPOP q 0");
        wait_for("the waiter to block in db 1", || blocked(&mut c) == 1);
        let _: i64 = c.rpush("q", &["x", "y"]).unwrap();
        let _: () = redis::cmd("SWAPDB").arg(0).arg(1).query(&mut c).unwrap();
        w.expect(b"*2\r\n$1\r\nq\r\n$1\r\ny\r\n");
        // MOVE into the waiter's database.
        send(&mut w, "BLPOP m 0");
        wait_for("the waiter to block again", || blocked(&mut c) == 1);
        let _: i64 = c.rpush("m", "z").unwrap();
        let moved: i64 = redis::cmd("MOVE").arg("m").arg(1).query(&mut c).unwrap();
        assert_eq!(moved, 1);
        w.expect(b"*2\r\n$1\r\nm\r\n$1\r\nz\r\n");
    });
}

/// The server's CPU time so far (user + system), from /proc.
fn cpu_time(s: &TestServer) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", s.child.id())).unwrap();
    // Fields after the command name (which ends at the last ')').
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

#[test]
fn many_idle_waiters_cost_no_cpu_and_leave_cleanly() {
    let s = TestServer::start(2);
    let mut c = s.conn();
    // One waiter on 5,000 keys, and 400 more on a key each.
    let mut wide = s.raw();
    let keys: Vec<String> = (0..5000).map(|i| format!("k{i}")).collect();
    let mut parts: Vec<&[u8]> = vec![b"BLPOP"];
    parts.extend(keys.iter().map(|k| k.as_bytes()));
    parts.push(b"0");
    wide.cmd(&parts);
    let mut waiters: Vec<Raw> = (0..400)
        .map(|i| {
            let mut w = s.raw();
            send(&mut w, &format!("BRPOP w{i} 0"));
            w
        })
        .collect();
    wait_for("every waiter to block", || blocked(&mut c) == 401);
    let before = cpu_time(&s);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(1) {
        std::thread::yield_now();
    }
    let spent = cpu_time(&s) - before;
    // Two workers' periodic ticks only (the /proc clock counts in 10 ms).
    assert!(spent <= Duration::from_millis(60), "idle waiters cost {spent:?} of CPU in 1 s");
    drop(wide);
    waiters.truncate(200);
    wait_for("the leavers to be gone", || blocked(&mut c) == 200);
    let _: i64 = c.rpush("k4999", "kept").unwrap();
    let _: i64 = c.rpush("w7", "x").unwrap();
    waiters[7].expect(b"*2\r\n$2\r\nw7\r\n$1\r\nx\r\n");
    assert_eq!(c.lrange::<_, Vec<String>>("k4999", 0, -1).unwrap(), vec!["kept"]);
}

#[test]
fn timeouts_fire_on_time_whatever_hz() {
    for threads in [1, 2] {
        let s = TestServer::start_with(threads, &["--hz", "1"]);
        let mut r = s.raw();
        for (cmd, reply, ms) in [("BLPOP q 0.15", NIL_ARRAY, 150u64), ("BLMOVE q d LEFT LEFT 0.05", NIL_ARRAY, 50), ("BLMPOP 0.1 1 q LEFT", NIL_ARRAY, 100)] {
            let t = Instant::now();
            send(&mut r, cmd);
            r.expect(reply);
            let took = t.elapsed();
            assert!(took >= Duration::from_millis(ms), "{cmd} answered after {took:?}");
            // 10 ms is the target; the margin is for a loaded debug build.
            assert!(took < Duration::from_millis(ms + 60), "{cmd} answered after {took:?}");
        }
    }
}

#[test]
fn client_unblock_and_client_list() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut w = s.raw();
        let (_, id) = whoami(&mut w);
        send(&mut w, "BLPOP q 0");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
        let line = list.lines().find(|l| l.starts_with(&format!("id={id} "))).unwrap();
        assert!(line.contains(" flags=b "), "{line}");
        let n: i64 = redis::cmd("CLIENT").arg("UNBLOCK").arg(id).query(&mut c).unwrap();
        assert_eq!(n, 1);
        w.expect(NIL_ARRAY);
        let n: i64 = redis::cmd("CLIENT").arg("UNBLOCK").arg(id).query(&mut c).unwrap();
        assert_eq!(n, 0);
        send(&mut w, "BRPOPLPUSH q d 0");
        wait_for("the waiter to block again", || blocked(&mut c) == 1);
        let n: i64 = redis::cmd("CLIENT").arg("UNBLOCK").arg(id).arg("ERROR").query(&mut c).unwrap();
        assert_eq!(n, 1);
        w.expect(b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
        rt(&mut w, "PING", b"+PONG\r\n");
        assert_eq!(blocked(&mut c), 0);
    });
}

#[test]
fn multi_does_not_block_and_exec_wakes_after_the_transaction() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        rt(&mut r, "MULTI", OK);
        rt(&mut r, "BLPOP q 0", b"+QUEUED\r\n");
        rt(&mut r, "BLMOVE q d LEFT LEFT 0", b"+QUEUED\r\n");
        rt(&mut r, "EXEC", b"*2\r\n*-1\r\n$-1\r\n");
        let mut w = s.raw();
        send(&mut w, "BLPOP q 0");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        // Pushed and taken back inside one transaction: nothing to serve.
        rt(&mut r, "MULTI", OK);
        rt(&mut r, "RPUSH q a", b"+QUEUED\r\n");
        rt(&mut r, "LPOP q", b"+QUEUED\r\n");
        rt(&mut r, "RPUSH q b", b"+QUEUED\r\n");
        rt(&mut r, "EXEC", b"*3\r\n:1\r\n$1\r\na\r\n:1\r\n");
        w.expect(b"*2\r\n$1\r\nq\r\n$1\r\nb\r\n");
    });
}

#[test]
fn many_producers_and_consumers_deliver_each_element_once() {
    each_threads(|s| {
        const PRODUCERS: usize = 4;
        const CONSUMERS: usize = 6;
        const PER: usize = 300;
        let port = s.port;
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                std::thread::spawn(move || {
                    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap().get_connection().unwrap();
                    let mut got = Vec::new();
                    loop {
                        let v: Option<(String, String)> = redis::cmd("BLPOP").arg("q1").arg("q2").arg("5").query(&mut c).unwrap();
                        match v {
                            Some((_, e)) if e == "stop" => return got,
                            Some((_, e)) => got.push(e),
                            None => panic!("a consumer timed out with elements outstanding"),
                        }
                    }
                })
            })
            .collect();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                std::thread::spawn(move || {
                    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap().get_connection().unwrap();
                    for i in 0..PER {
                        let key = if i % 2 == 0 { "q1" } else { "q2" };
                        let _: i64 = c.rpush(key, format!("{p}:{i}")).unwrap();
                    }
                })
            })
            .collect();
        for p in producers {
            p.join().unwrap();
        }
        let mut c = s.conn();
        for _ in 0..CONSUMERS {
            let _: i64 = c.rpush("q2", "stop").unwrap();
        }
        let mut seen = HashSet::new();
        let mut total = 0;
        for h in consumers {
            for e in h.join().unwrap() {
                assert!(seen.insert(e.clone()), "{e} delivered twice");
                total += 1;
            }
        }
        assert_eq!(total, PRODUCERS * PER);
        assert!(!c.exists::<_, bool>("q1").unwrap());
        assert!(!c.exists::<_, bool>("q2").unwrap());
        assert_eq!(blocked(&mut c), 0);
    });
}

/// An INFO clients field.
fn info_field(c: &mut redis::Connection, name: &str) -> i64 {
    let info: String = redis::cmd("INFO").arg("clients").query(c).unwrap();
    let prefix = format!("{name}:");
    info.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn info_counts_the_keys_clients_block_on() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut w1 = s.raw();
        send(&mut w1, "BLPOP a b a 0");
        let mut w2 = s.raw();
        send(&mut w2, "BLPOP b c 0");
        // The same name in another database is another key.
        let mut w3 = s.raw();
        rt(&mut w3, "SELECT 1", OK);
        send(&mut w3, "BRPOP c 0");
        wait_for("three waiters", || blocked(&mut c) == 3);
        assert_eq!(info_field(&mut c, "total_blocking_keys"), 4);
        assert_eq!(info_field(&mut c, "total_blocking_keys_on_nokey"), 0);
        let _: i64 = c.rpush("a", "x").unwrap();
        w1.expect(&bulks(&["a", "x"]));
        wait_for("a's waiter served", || blocked(&mut c) == 2);
        assert_eq!(info_field(&mut c, "total_blocking_keys"), 3);
        drop(w2);
        wait_for("w2 gone", || blocked(&mut c) == 1);
        assert_eq!(info_field(&mut c, "total_blocking_keys"), 1);
        drop(w3);
        wait_for("w3 gone", || blocked(&mut c) == 0);
        assert_eq!(info_field(&mut c, "total_blocking_keys"), 0);
    });
}

/// Voluntary context switches of the worker threads: each return from a
/// wait in epoll is one.
fn worker_wakeups(s: &TestServer) -> u64 {
    let dir = format!("/proc/{}/task", s.child.id());
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            if !std::fs::read_to_string(p.join("comm"))
                .ok()?
                .starts_with("tern-worker")
            {
                return None;
            }
            let status = std::fs::read_to_string(p.join("status")).ok()?;
            status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .map(|v| v.trim().parse::<u64>().unwrap())
        })
        .sum()
}

#[test]
fn idle_workers_sleep_while_clients_wait() {
    for threads in [1, 2] {
        let s = TestServer::start_with(threads, &["--hz", "100"]);
        let mut c = s.conn();
        // Waiting forever, and until a deadline far off.
        let mut waiters: Vec<Raw> = (0..300)
            .map(|i| {
                let mut w = s.raw();
                send(
                    &mut w,
                    &format!("BLPOP q{i} {}", if i % 2 == 0 { "0" } else { "600" }),
                );
                w
            })
            .collect();
        wait_for("every waiter to block", || blocked(&mut c) == 300);
        // Once the work left after the activity is done (idle read
        // buffers go after 2 s), a whole second passes without a wake-up.
        let deadline = Instant::now() + Duration::from_secs(15);
        let quiet = loop {
            let before = worker_wakeups(&s);
            std::thread::sleep(Duration::from_secs(1));
            let woke = worker_wakeups(&s) - before;
            if woke == 0 || Instant::now() > deadline {
                break woke;
            }
        };
        assert_eq!(
            quiet, 0,
            "{threads} workers woke {quiet} times in a quiet second"
        );
        // And they still serve at once.
        let _: i64 = c.rpush("q7", "x").unwrap();
        waiters[7].expect(&bulks(&["q7", "x"]));
    }
}

#[test]
fn timeouts_are_late_by_under_10ms_at_any_hz() {
    for threads in [1, 2] {
        for hz in ["1", "10", "100"] {
            let s = TestServer::start_with(threads, &["--hz", hz]);
            let mut conns: Vec<Raw> = (0..50).map(|_| s.raw()).collect();
            // The control: how late this machine wakes a thread that sleeps
            // 50 ms while the server's timeouts fire. On a loaded machine
            // (CI runs many tests at once) every wake-up is late by the
            // scheduler's queue; the server is held to 10 ms beyond that.
            let control = std::thread::spawn(|| {
                let mut l: Vec<Duration> = (0..5)
                    .map(|_| {
                        let t = Instant::now();
                        std::thread::sleep(Duration::from_millis(50));
                        t.elapsed() - Duration::from_millis(50)
                    })
                    .collect();
                l.sort();
                l[l.len() / 2]
            });
            let sent: Vec<Instant> = conns
                .iter_mut()
                .enumerate()
                .map(|(i, r)| {
                    let t = Instant::now();
                    send(r, &format!("BLPOP t{i} 0.05"));
                    t
                })
                .collect();
            let mut late: Vec<Duration> = conns
                .iter_mut()
                .zip(sent)
                .map(|(r, t)| {
                    r.expect(NIL_ARRAY);
                    let took = t.elapsed();
                    assert!(took >= Duration::from_millis(50), "answered after {took:?}");
                    took - Duration::from_millis(50)
                })
                .collect();
            late.sort();
            // The earliest answer is the timer's own lateness; the later
            // ones add the serving of the 50 timeouts one after another,
            // which a debug build makes slow (about 0.3 ms each).
            let first = late[0];
            let machine = control.join().unwrap();
            assert!(
                first <= Duration::from_millis(10) + machine,
                "threads {threads} hz {hz}: lateness {first:?}, a sleeping thread's {machine:?} ({late:?})"
            );
        }
    }
}

#[test]
fn list_compress_depth_compresses_the_middle() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        let err = "-ERR CONFIG SET failed (possibly related to argument 'list-compress-depth') - argument must be between 0 and 2147483647 inclusive\r\n";
        rt(&mut r, "CONFIG SET list-compress-depth -1", err.as_bytes());
        let elems: Vec<String> = (0..10_000).map(|i| format!("element:{i:08}")).collect();
        let fill = |c: &mut redis::Connection, key: &str| {
            for chunk in elems.chunks(500) {
                let _: i64 = c.rpush(key, chunk).unwrap();
            }
        };
        let usage = |c: &mut redis::Connection, key: &str| -> i64 {
            redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(key)
                .arg("SAMPLES")
                .arg(0)
                .query(c)
                .unwrap()
        };
        fill(&mut c, "plain");
        // A list takes the depth in force when it becomes a quicklist.
        let _: i64 = c.rpush("early", "x").unwrap();
        rt(&mut r, "CONFIG SET list-compress-depth 1", OK);
        rt(
            &mut r,
            "CONFIG GET list-compress-depth",
            &bulks(&["list-compress-depth", "1"]),
        );
        fill(&mut c, "deep");
        fill(&mut c, "early");
        let (plain, deep, early) = (
            usage(&mut c, "plain"),
            usage(&mut c, "deep"),
            usage(&mut c, "early"),
        );
        // Redis 8.4 on the same data: 181103 bytes at depth 0, 62830 at 1.
        assert!(deep * 2 < plain, "depth 1 {deep} vs depth 0 {plain}");
        assert!(early * 2 < plain, "{early}");
        // One that was a quicklist already keeps its depth, 0.
        let _: i64 = c.rpush("plain", "y").unwrap();
        assert!(usage(&mut c, "plain") >= plain);
        // Reads and writes in the compressed middle.
        let mid: Vec<String> = c.lrange("deep", 4990, 5009).unwrap();
        assert_eq!(mid, elems[4990..5010]);
        let tail: Vec<String> = c.lrange("deep", -5020, -5001).unwrap();
        assert_eq!(tail, elems[4980..5000]);
        assert_eq!(c.lindex::<_, String>("deep", 5555).unwrap(), elems[5555]);
        let _: () = c.lset("deep", 6000, "changed").unwrap();
        let n: i64 = redis::cmd("LINSERT")
            .arg("deep")
            .arg("BEFORE")
            .arg(&elems[7000])
            .arg("new")
            .query(&mut c)
            .unwrap();
        assert_eq!(n, 10_001);
        let pos: i64 = redis::cmd("LPOS")
            .arg("deep")
            .arg("new")
            .query(&mut c)
            .unwrap();
        assert_eq!(pos, 7000);
        let removed: i64 = c.lrem("deep", 1, &elems[3000]).unwrap();
        assert_eq!(removed, 1);
        let all: Vec<String> = c.lrange("deep", 0, -1).unwrap();
        let mut want = elems.clone();
        want[6000] = "changed".into();
        want.insert(7000, "new".into());
        want.remove(3000);
        assert_eq!(all, want);
        // Emptied from one end, through every compressed node.
        let mut popped = 0;
        while let Some(v) = c
            .lpop::<_, Option<Vec<String>>>("deep", std::num::NonZeroUsize::new(700))
            .unwrap()
        {
            assert_eq!(v[..], want[popped..popped + v.len()]);
            popped += v.len();
        }
        assert_eq!(popped, want.len());
    });
}
