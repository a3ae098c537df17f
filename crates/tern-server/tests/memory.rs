//! The memory limit against the real binary: writes past `maxmemory`
//! under each policy keep `used_memory` near the limit and count
//! `evicted_keys`; `noeviction` refuses writes with Redis's exact `-OOM`
//! while reads and DEL still work; volatile policies never take a key
//! without a TTL; lowering the limit at runtime shrinks memory with no
//! writes coming; the memcached port evicts and counts `evictions`;
//! switching to S3-FIFO at runtime tracks the keys already there.

mod common;
use common::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const LIMIT: u64 = 4 << 20;
/// How far over the limit `used_memory` may be seen: the shards' coarse
/// total is off by up to 16 KiB per shard (32 shards with 2 threads, all
/// in database 0 here) and a command may run while eviction catches up.
const SLACK: u64 = 768 << 10;
const OOM: &[u8] = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n";

fn info_field(c: &mut redis::Connection, section: &str, field: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg(section).query(c).unwrap();
    let line = info.lines().find_map(|l| l.strip_prefix(&format!("{field}:"))).unwrap_or_else(|| panic!("no {field} in {info}"));
    line.trim().parse().unwrap()
}

/// SETs `n` keys `prefix:i` of 100 bytes, pipelined 500 at a time; `ex`
/// gives them a TTL. Returns how many were refused with -OOM (any other
/// reply than +OK fails the test).
fn fill(s: &TestServer, prefix: &str, n: usize, ex: Option<u64>) -> usize {
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let value = "v".repeat(100);
    let mut oom = 0;
    let mut start = 0;
    while start < n {
        let end = (start + 500).min(n);
        let mut req = Vec::new();
        for i in start..end {
            let key = format!("{prefix}:{i}");
            let ttl = ex.map(|t| t.to_string());
            let mut parts: Vec<&str> = vec!["SET", &key, &value];
            if let Some(t) = &ttl {
                parts.extend(["EX", t]);
            }
            req.extend_from_slice(format!("*{}\r\n", parts.len()).as_bytes());
            for p in parts {
                req.extend_from_slice(format!("${}\r\n{p}\r\n", p.len()).as_bytes());
            }
        }
        c.write_all(&req).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 65536];
        while out.iter().filter(|&&b| b == b'\n').count() < end - start {
            let got = c.read(&mut buf).unwrap();
            assert!(got > 0, "closed");
            out.extend_from_slice(&buf[..got]);
        }
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            match line {
                b"+OK\r" => {}
                l if [l, b"\n"].concat() == OOM => oom += 1,
                l => panic!("unexpected reply {:?}", String::from_utf8_lossy(l)),
            }
        }
        start = end;
    }
    oom
}

/// SETs small keys one by one until one is refused with -OOM; false if
/// none is. The filling connections' buffers were part of used_memory:
/// with them gone, a few writes fit again before the limit is back.
fn write_until_oom(r: &mut Raw) -> bool {
    for i in 0..10_000 {
        r.cmd(&[b"SET", format!("pad:{i}").as_bytes(), b"v"]);
        if r.read_n(5) != b"+OK\r\n" {
            r.expect(&OOM[5..]);
            return true;
        }
    }
    false
}

/// Writes until refused, then sends `cmd` and expects it refused too.
/// Memory can fall back under the limit in between (an idle client's
/// read buffer is given back after 2 s, which a loaded machine reaches):
/// then `cmd` runs, and the check fills up and tries again.
fn refused_after_oom(r: &mut Raw, cmd: &[&[u8]]) {
    for _ in 0..20 {
        assert!(write_until_oom(r));
        r.cmd(cmd);
        let first = r.read_n(1);
        if first == b"-" {
            r.expect(&OOM[1..]);
            return;
        }
        // It ran: read the rest of its one-line reply.
        while r.read_n(1) != b"\n" {}
    }
    panic!("{:?} never refused", String::from_utf8_lossy(cmd[0]));
}

fn start(policy: &str) -> TestServer {
    TestServer::start_with(2, &["--maxmemory", &LIMIT.to_string(), "--maxmemory-policy", policy, "--hz", "50"])
}

#[test]
fn every_evicting_policy_holds_the_limit_and_counts_evictions() {
    for policy in ["allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-s3fifo", "allkeys-sieve"] {
        let s = start(policy);
        let mut c = s.conn();
        // About 3x what fits.
        assert_eq!(fill(&s, "k", 90_000, None), 0, "{policy}: writes refused although keys can be evicted");
        let used = info_field(&mut c, "memory", "used_memory");
        assert!(used <= LIMIT + SLACK, "{policy}: used_memory {used} over the limit {LIMIT}");
        // One transaction, so the background cycle cannot evict between.
        let (keys, info): (u64, String) = redis::pipe().atomic().cmd("DBSIZE").cmd("INFO").arg("stats").query(&mut c).unwrap();
        let evicted: u64 = info.lines().find_map(|l| l.strip_prefix("evicted_keys:")).unwrap().parse().unwrap();
        assert!(evicted > 30_000, "{policy}: only {evicted} evicted");
        assert_eq!(keys + evicted, 90_000, "{policy}: keys {keys} + evicted {evicted}");
        // CONFIG RESETSTAT starts the count again, as in Redis. (A
        // background round begun before the limit was lifted may still
        // evict a few keys: those are all it may count.)
        let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(0).query(&mut c).unwrap();
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
        let (keys_now, info): (u64, String) = redis::pipe().atomic().cmd("DBSIZE").cmd("INFO").arg("stats").query(&mut c).unwrap();
        let evicted_now: u64 = info.lines().find_map(|l| l.strip_prefix("evicted_keys:")).unwrap().parse().unwrap();
        assert!(evicted_now <= keys - keys_now, "{policy}: {evicted_now} evicted since the reset");
    }
}

#[test]
fn volatile_policies_never_evict_a_key_without_ttl() {
    for policy in ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "volatile-s3fifo", "volatile-sieve"] {
        let s = start(policy);
        let mut c = s.conn();
        assert_eq!(fill(&s, "keep", 2_000, None), 0);
        assert_eq!(fill(&s, "temp", 60_000, Some(3600)), 0, "{policy}: writes refused although keys with a TTL are left");
        let used = info_field(&mut c, "memory", "used_memory");
        assert!(used <= LIMIT + SLACK, "{policy}: used_memory {used} over the limit {LIMIT}");
        assert!(info_field(&mut c, "stats", "evicted_keys") > 20_000, "{policy}");
        let mut p = redis::pipe();
        for i in 0..2_000 {
            p.cmd("EXISTS").arg(format!("keep:{i}"));
        }
        let there: Vec<u64> = p.query(&mut c).unwrap();
        assert!(there.iter().all(|&e| e == 1), "{policy}: a key without TTL was evicted");
    }
    // Only keys without a TTL left: a write is refused, exactly as Redis.
    let s = start("volatile-lru");
    assert!(fill(&s, "p", 60_000, None) > 0);
    let mut r = s.raw();
    refused_after_oom(&mut r, &[b"SET", b"one", b"more"]);
}

#[test]
fn noeviction_refuses_writes_with_redis_error_and_keeps_reads() {
    let s = start("noeviction");
    let refused = fill(&s, "k", 60_000, None);
    assert!(refused > 0, "nothing refused past the limit");
    let mut c = s.conn();
    assert_eq!(info_field(&mut c, "stats", "evicted_keys"), 0);
    let mut r = s.raw();
    refused_after_oom(&mut r, &[b"SET", b"new", b"v"]);
    refused_after_oom(&mut r, &[b"APPEND", b"k:0", b"v"]);
    // Reads, DEL and commands that cannot grow memory keep working.
    let v = format!("$100\r\n{}\r\n", "v".repeat(100));
    r.roundtrip(&[b"GET", b"k:0"], v.as_bytes());
    r.roundtrip(&[b"EXISTS", b"k:1"], b":1\r\n");
    r.roundtrip(&[b"EXPIRE", b"k:2", b"100"], b":1\r\n");
    r.roundtrip(&[b"DEL", b"k:1"], b":1\r\n");
    // A denyoom command queued in MULTI fails the transaction; a read
    // queued beside it is accepted, as in Redis 8.4. (The DEL, or a
    // buffer given back, may bring memory under the limit: then SET is
    // queued, and the check fills up and tries again.)
    let mut aborted = false;
    for _ in 0..20 {
        assert!(write_until_oom(&mut r));
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        r.roundtrip(&[b"GET", b"k:0"], b"+QUEUED\r\n");
        r.cmd(&[b"SET", b"a", b"b"]);
        if r.read_n(1) == b"-" {
            r.expect(&OOM[1..]);
            r.roundtrip(&[b"EXEC"], b"-EXECABORT Transaction discarded because of previous errors.\r\n");
            aborted = true;
            break;
        }
        r.expect(b"QUEUED\r\n");
        r.roundtrip(&[b"DISCARD"], b"+OK\r\n");
    }
    assert!(aborted, "SET never refused inside MULTI");
    // Raising the limit lets writes in again.
    r.roundtrip(&[b"CONFIG", b"SET", b"maxmemory", b"0"], b"+OK\r\n");
    r.roundtrip(&[b"SET", b"new", b"v"], b"+OK\r\n");
}

#[test]
fn lowering_maxmemory_at_runtime_shrinks_memory_without_writes() {
    let s = TestServer::start_with(2, &["--maxmemory-policy", "allkeys-random", "--hz", "100"]);
    assert_eq!(fill(&s, "k", 40_000, None), 0);
    let mut c = s.conn();
    let used = info_field(&mut c, "memory", "used_memory");
    let target = used / 2;
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(target).query(&mut c).unwrap();
    // Polled: the background cycle evicts with no write coming.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now_used = info_field(&mut c, "memory", "used_memory");
        if now_used <= target + SLACK {
            break;
        }
        assert!(Instant::now() < deadline, "used_memory still {now_used} > {target}");
        std::thread::yield_now();
    }
    assert!(info_field(&mut c, "stats", "evicted_keys") > 10_000);
}

fn mc_connect(s: &TestServer) -> TcpStream {
    let c = TcpStream::connect(("127.0.0.1", mc_port(s))).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c
}

/// Sends `req` and reads until `lines` reply lines have come.
fn mc_lines(c: &mut TcpStream, req: &[u8], lines: usize) -> String {
    c.write_all(req).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    while out.windows(2).filter(|w| w == b"\r\n").count() < lines {
        let n = c.read(&mut buf).unwrap();
        assert!(n > 0, "closed");
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(out).unwrap()
}

fn mc_stat(c: &mut TcpStream, name: &str) -> u64 {
    c.write_all(b"stats\r\n").unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    while !out.ends_with(b"END\r\n") {
        let n = c.read(&mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8(out).unwrap();
    text.lines().find_map(|l| l.strip_prefix(&format!("STAT {name} "))).unwrap_or_else(|| panic!("no {name}")).parse().unwrap()
}

#[test]
fn memcached_port_evicts_and_counts_evictions() {
    let s = start("allkeys-lru");
    let mut c = mc_connect(&s);
    let value = "v".repeat(100);
    for round in 0..120 {
        let mut req = String::new();
        for i in 0..500 {
            let k = round * 500 + i;
            // Half text `set`, half meta `ms`.
            if k % 2 == 0 {
                req.push_str(&format!("set k{k} 0 0 100\r\n{value}\r\n"));
            } else {
                req.push_str(&format!("ms k{k} 100 T0\r\n{value}\r\n"));
            }
        }
        let out = mc_lines(&mut c, req.as_bytes(), 500);
        assert!(!out.contains("SERVER_ERROR"), "{out}");
    }
    let (evictions, items) = (mc_stat(&mut c, "evictions"), mc_stat(&mut c, "curr_items"));
    assert!(evictions > 20_000, "{evictions}");
    assert_eq!(evictions + items, 60_000);
    assert_eq!(mc_stat(&mut c, "limit_maxbytes"), LIMIT);
    let mut r = s.conn();
    assert!(info_field(&mut r, "memory", "used_memory") <= LIMIT + SLACK);
}

#[test]
fn memcached_port_out_of_memory_under_noeviction() {
    let s = start("noeviction");
    let mut c = mc_connect(&s);
    let value = "v".repeat(100);
    let mut refused = 0;
    for round in 0..90 {
        let mut req = String::new();
        for i in 0..500 {
            req.push_str(&format!("set k{} 0 0 100\r\n{value}\r\n", round * 500 + i));
        }
        let out = mc_lines(&mut c, req.as_bytes(), 500);
        refused += out.matches("SERVER_ERROR out of memory storing object\r\n").count();
    }
    assert!(refused > 0);
    // Each refused store below may free an item: fill up again first.
    let mut pad = 0;
    let mut full = |c: &mut TcpStream| {
        loop {
            pad += 1;
            assert!(pad < 100_000, "never full again");
            if mc_lines(c, format!("set pad{pad} 0 0 100\r\n{value}\r\n").as_bytes(), 1) != "STORED\r\n" {
                return;
            }
        }
    };
    // memcached's replies: the error for set and ms, a failed set drops
    // the old item, and reads keep working.
    full(&mut c);
    assert_eq!(mc_lines(&mut c, b"ms new 1\r\nx\r\n", 1), "SERVER_ERROR out of memory storing object\r\n");
    // An `ms` in append mode drops the old item too (memcached 1.6 -M).
    full(&mut c);
    assert_eq!(mc_lines(&mut c, b"ms k2 1 MA\r\nx\r\n", 1), "SERVER_ERROR out of memory storing object\r\n");
    assert_eq!(mc_lines(&mut c, b"get k2\r\n", 1), "END\r\n");
    // An `append` (text) does not.
    full(&mut c);
    assert_eq!(mc_lines(&mut c, b"append k3 0 0 1\r\nx\r\n", 1), "SERVER_ERROR out of memory storing object\r\n");
    assert_eq!(mc_lines(&mut c, b"get k3\r\n", 3), format!("VALUE k3 0 100\r\n{value}\r\nEND\r\n"));
    full(&mut c);
    assert_eq!(mc_lines(&mut c, b"set k0 0 0 1\r\nx\r\n", 1), "SERVER_ERROR out of memory storing object\r\n");
    assert_eq!(mc_lines(&mut c, b"get k0\r\n", 1), "END\r\n");
    assert_eq!(mc_lines(&mut c, b"get k1\r\n", 3), format!("VALUE k1 0 100\r\n{value}\r\nEND\r\n"));
    full(&mut c);
    assert_eq!(mc_lines(&mut c, b"set quiet 0 0 1 noreply\r\nx\r\nmn\r\n", 1), "MN\r\n");
    assert_eq!(mc_stat(&mut c, "evictions"), 0);
}

#[test]
fn switching_to_a_fifo_policy_at_runtime_evicts_the_keys_already_there() {
    let s = TestServer::start_with(2, &["--maxmemory-policy", "allkeys-lru", "--hz", "100"]);
    assert_eq!(fill(&s, "old", 20_000, None), 0);
    let mut c = s.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("allkeys-s3fifo").query(&mut c).unwrap();
    let mut r = s.raw();
    r.roundtrip(&[b"OBJECT", b"FREQ", b"old:1"], b"-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n");
    // The queues the switch builds cost memory too: room is left for them.
    let used = info_field(&mut c, "memory", "used_memory");
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(used * 3 / 4).query(&mut c).unwrap();
    assert_eq!(fill(&s, "new", 20_000, None), 0);
    let old_left = (0..20_000).filter(|i| redis::cmd("EXISTS").arg(format!("old:{i}")).query::<u64>(&mut c).unwrap() == 1).count();
    assert!(old_left < 10_000, "{old_left} of the keys stored before the switch are all still there");
    r.roundtrip(&[b"SET", b"k", b"v"], b"+OK\r\n");
    r.roundtrip(&[b"OBJECT", b"IDLETIME", b"k"], b"-ERR An S3-FIFO or SIEVE maxmemory policy is selected, idle time not tracked for this key.\r\n");
}

#[test]
fn memory_command_replies_as_redis() {
    let s = TestServer::start(1);
    let mut r = s.raw();
    r.roundtrip(&[b"SET", b"foo", b"bar"], b"+OK\r\n");
    // A 3-byte key and value: one 32-byte item, as Redis's figure.
    r.roundtrip(&[b"MEMORY", b"USAGE", b"foo"], b":32\r\n");
    r.roundtrip(&[b"MEMORY", b"USAGE", b"foo", b"SAMPLES", b"0"], b":32\r\n");
    r.roundtrip(&[b"MEMORY", b"USAGE", b"nokey"], b"$-1\r\n");
    for bad in [&[b"MEMORY".as_slice(), b"USAGE", b"foo", b"SAMPLES"][..], &[b"MEMORY", b"USAGE", b"foo", b"SAMPLES", b"-1"], &[b"MEMORY", b"USAGE", b"foo", b"BAD", b"1"]] {
        r.roundtrip(bad, b"-ERR syntax error\r\n");
    }
    r.roundtrip(&[b"MEMORY", b"USAGE", b"foo", b"SAMPLES", b"x"], b"-ERR value is not an integer or out of range\r\n");
    r.roundtrip(&[b"MEMORY", b"FOO"], b"-ERR unknown subcommand 'FOO'. Try MEMORY HELP.\r\n");
    r.roundtrip(&[b"MEMORY"], b"-ERR wrong number of arguments for 'memory' command\r\n");
    r.roundtrip(&[b"MEMORY", b"PURGE"], b"+OK\r\n");
    let empty = b"Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";
    r.roundtrip(&[b"MEMORY", b"DOCTOR"], &[format!("${}\r\n", empty.len()).as_bytes(), empty, b"\r\n"].concat());
    let mut c = s.conn();
    // MEMORY STATS: Redis 8.4's 35 fields and one map per non-empty db.
    let stats: Vec<redis::Value> = redis::cmd("MEMORY").arg("STATS").query(&mut c).unwrap();
    assert_eq!(stats.len(), 72);
    let names: Vec<String> = stats.iter().step_by(2).map(|v| redis::from_redis_value(v).unwrap()).collect();
    assert_eq!(&names[..3], ["peak.allocated", "total.allocated", "startup.allocated"]);
    assert_eq!(names[14], "db.0");
    assert_eq!(names.last().unwrap(), "fragmentation.bytes");
    let total: u64 = redis::from_redis_value(&stats[3]).unwrap();
    // The same counters as INFO's (the clients' buffers move between).
    let info = info_field(&mut c, "memory", "used_memory");
    assert!(total.abs_diff(info) < 64 << 10, "{total} vs {info}");
    let text: String = redis::cmd("MEMORY").arg("MALLOC-STATS").query(&mut c).unwrap();
    assert!(text.starts_with("___ Begin jemalloc statistics ___"), "{}", &text[..80.min(text.len())]);
}

#[test]
fn maxmemory_clients_closes_the_biggest_client() {
    let s = TestServer::start_with(1, &["--maxmemory-clients", "1mb"]);
    let mut small = s.raw();
    small.roundtrip(&[b"PING"], b"+PONG\r\n");
    // A client that asked not to be evicted keeps its 2 MB half-request.
    let mut kept = s.raw();
    kept.roundtrip(&[b"CLIENT", b"NO-EVICT", b"on"], b"+OK\r\n");
    kept.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5000000\r\n");
    kept.send(&vec![b'x'; 2 << 20]);
    small.roundtrip(&[b"PING"], b"+PONG\r\n");
    let mut c = s.conn();
    assert_eq!(info_field(&mut c, "stats", "evicted_clients"), 0);
    // Another one does not: it is closed, and the others stay.
    let mut big = s.raw();
    // The server may close it before all of it is written (a reset).
    big.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5000000\r\n");
    if big.send_may_fail(&vec![b'x'; 2 << 20]) {
        assert!(big.is_closed());
    }
    assert_eq!(info_field(&mut c, "stats", "evicted_clients"), 1);
    small.roundtrip(&[b"PING"], b"+PONG\r\n");
    kept.send(&vec![b'x'; 3_000_000]);
    kept.send(b"\r\n");
    kept.expect(b"+OK\r\n");
}
