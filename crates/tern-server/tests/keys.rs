//! Generic key commands: Redis 7.4's exact replies and errors on a raw
//! socket, real-client use through the `redis` crate, at 1 and 2 workers.
//! Cross-database commands, whole-database walks, WATCH signalling, SCAN's
//! guarantee across table growth, and active expiry as seen by DBSIZE.
mod common;
use common::*;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use redis::{Connection, FromRedisValue};

fn q<T: FromRedisValue>(c: &mut Connection, parts: &[&str]) -> T {
    let mut cmd = redis::cmd(parts[0]);
    for p in &parts[1..] {
        cmd.arg(*p);
    }
    cmd.query(c).unwrap_or_else(|e| panic!("{parts:?}: {e}"))
}

fn ok(c: &mut Connection, parts: &[&str]) {
    let _: () = q(c, parts);
}

/// Polls `f` until it returns true, failing after `within`.
fn poll(within: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Walks a whole SCAN with the given extra arguments; returns every key.
fn scan_all(c: &mut Connection, extra: &[&str]) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut out = Vec::new();
    loop {
        let mut parts = vec!["SCAN", cursor.as_str()];
        parts.extend_from_slice(extra);
        let (next, keys): (String, Vec<String>) = q(c, &parts);
        out.extend(keys);
        if next == "0" {
            return out;
        }
        cursor = next;
    }
}

#[test]
fn del_unlink_exists_touch_type() {
    each_threads(|s| {
        let mut c = s.conn();
        for k in ["a", "b", "c", "d"] {
            ok(&mut c, &["SET", k, "v"]);
        }
        assert_eq!(q::<i64>(&mut c, &["EXISTS", "a", "a", "nope", "b"]), 3);
        assert_eq!(q::<i64>(&mut c, &["TOUCH", "a", "nope", "c"]), 2);
        assert_eq!(q::<i64>(&mut c, &["DEL", "a", "a", "nope"]), 1);
        assert_eq!(q::<i64>(&mut c, &["UNLINK", "b", "c", "nope"]), 2);
        assert_eq!(q::<i64>(&mut c, &["EXISTS", "a", "b", "c", "d"]), 1);
        let mut r = s.raw();
        r.roundtrip(&[b"TYPE", b"d"], b"+string\r\n");
        r.roundtrip(&[b"TYPE", b"a"], b"+none\r\n");
        r.roundtrip(&[b"DEL"], b"-ERR wrong number of arguments for 'del' command\r\n");
        r.roundtrip(&[b"UNLINK"], b"-ERR wrong number of arguments for 'unlink' command\r\n");
        r.roundtrip(&[b"EXISTS"], b"-ERR wrong number of arguments for 'exists' command\r\n");
        r.roundtrip(&[b"TOUCH"], b"-ERR wrong number of arguments for 'touch' command\r\n");
        r.roundtrip(&[b"TYPE", b"a", b"b"], b"-ERR wrong number of arguments for 'type' command\r\n");
        // Binary keys.
        r.roundtrip(&[b"SET", b"k\x00\xff", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"EXISTS", b"k\x00\xff", b"k\x00"], b":1\r\n");
        r.roundtrip(&[b"DEL", b"k\x00\xff"], b":1\r\n");
        // A key whose TTL passed is gone for every command.
        r.roundtrip(&[b"SET", b"gone", b"v"], b"+OK\r\n");
        r.roundtrip(&[b"PEXPIRE", b"gone", b"1"], b":1\r\n");
        poll(Duration::from_secs(5), "gone to expire", || {
            r.cmd(&[b"EXISTS", b"gone"]);
            r.read_n(4) == b":0\r\n"
        });
        r.roundtrip(&[b"TYPE", b"gone"], b"+none\r\n");
        r.roundtrip(&[b"DEL", b"gone"], b":0\r\n");
    });
}

#[test]
fn expire_options_and_errors_are_exact() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        let nx_err: &[u8] = b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n";
        let gtlt_err: &[u8] = b"-ERR GT and LT options at the same time are not compatible\r\n";
        r.roundtrip(&[b"EXPIRE", b"a", b"10", b"NX", b"XX"], nx_err);
        r.roundtrip(&[b"EXPIRE", b"a", b"10", b"nx", b"gt"], nx_err);
        r.roundtrip(&[b"PEXPIRE", b"a", b"10", b"lt", b"nx"], nx_err);
        r.roundtrip(&[b"EXPIRE", b"a", b"10", b"gt", b"lt"], gtlt_err);
        r.roundtrip(&[b"EXPIRE", b"a", b"10", b"xx", b"gt", b"lt"], gtlt_err);
        r.roundtrip(&[b"EXPIRE", b"a", b"10", b"foo"], b"-ERR Unsupported option foo\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"10", b"a\r\nb"], b"-ERR Unsupported option a  b\r\n");
        // Options are checked before the number.
        r.roundtrip(&[b"EXPIRE", b"a", b"x", b"foo"], b"-ERR Unsupported option foo\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"x"], b"-ERR value is not an integer or out of range\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"10 "], b"-ERR value is not an integer or out of range\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"9223372036854775807"], b"-ERR invalid expire time in 'expire' command\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"-9223372036854775808"], b"-ERR invalid expire time in 'expire' command\r\n");
        r.roundtrip(&[b"PEXPIRE", b"a", b"9223372036854775807"], b"-ERR invalid expire time in 'pexpire' command\r\n");
        r.roundtrip(&[b"EXPIREAT", b"a", b"9223372036854775807"], b"-ERR invalid expire time in 'expireat' command\r\n");
        r.roundtrip(&[b"EXPIRE", b"a"], b"-ERR wrong number of arguments for 'expire' command\r\n");
        r.roundtrip(&[b"PEXPIREAT", b"a"], b"-ERR wrong number of arguments for 'pexpireat' command\r\n");
        // Missing key: 0, whatever the options.
        r.roundtrip(&[b"EXPIRE", b"nokey", b"10"], b":0\r\n");
        r.roundtrip(&[b"EXPIRE", b"nokey", b"10", b"NX"], b":0\r\n");
        // XX and GT need a TTL; NX and LT work without one.
        r.roundtrip(&[b"EXPIRE", b"a", b"100", b"XX"], b":0\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"100", b"GT"], b":0\r\n");
        r.roundtrip(&[b"TTL", b"a"], b":-1\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"100", b"LT"], b":1\r\n");
        r.roundtrip(&[b"TTL", b"a"], b":100\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"200", b"NX"], b":0\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"50", b"GT"], b":0\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"200", b"gt", b"xx"], b":1\r\n");
        r.roundtrip(&[b"TTL", b"a"], b":200\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"300", b"LT"], b":0\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"150", b"LT"], b":1\r\n");
        r.roundtrip(&[b"TTL", b"a"], b":150\r\n");
        // A deadline in the past deletes the key and still answers 1.
        r.roundtrip(&[b"EXPIRE", b"a", b"-1"], b":1\r\n");
        r.roundtrip(&[b"EXISTS", b"a"], b":0\r\n");
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"EXPIREAT", b"a", b"1"], b":1\r\n");
        r.roundtrip(&[b"EXISTS", b"a"], b":0\r\n");
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"PEXPIRE", b"a", b"0"], b":1\r\n");
        r.roundtrip(&[b"EXISTS", b"a"], b":0\r\n");
        // LT against no TTL with a past deadline deletes too.
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"EXPIRE", b"a", b"-5", b"LT"], b":1\r\n");
        r.roundtrip(&[b"EXISTS", b"a"], b":0\r\n");
        // The far end of the range is accepted.
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"PEXPIREAT", b"a", b"9223372036854775807"], b":1\r\n");
        r.roundtrip(&[b"PEXPIRETIME", b"a"], b":9223372036854775807\r\n");
        r.roundtrip(&[b"EXPIRETIME", b"a"], b":9223372036854776\r\n");
        r.roundtrip(&[b"EXPIREAT", b"a", b"9223372036854775"], b":1\r\n");
        r.roundtrip(&[b"EXPIRETIME", b"a"], b":9223372036854775\r\n");
    });
}

#[test]
fn ttl_family_and_persist() {
    each_threads(|s| {
        let mut c = s.conn();
        ok(&mut c, &["SET", "k", "v"]);
        assert_eq!(q::<i64>(&mut c, &["TTL", "k"]), -1);
        assert_eq!(q::<i64>(&mut c, &["PTTL", "k"]), -1);
        assert_eq!(q::<i64>(&mut c, &["EXPIRETIME", "k"]), -1);
        assert_eq!(q::<i64>(&mut c, &["PEXPIRETIME", "k"]), -1);
        assert_eq!(q::<i64>(&mut c, &["TTL", "nokey"]), -2);
        assert_eq!(q::<i64>(&mut c, &["PTTL", "nokey"]), -2);
        assert_eq!(q::<i64>(&mut c, &["EXPIRETIME", "nokey"]), -2);
        assert_eq!(q::<i64>(&mut c, &["PEXPIRETIME", "nokey"]), -2);
        assert_eq!(q::<i64>(&mut c, &["PERSIST", "k"]), 0);
        assert_eq!(q::<i64>(&mut c, &["PERSIST", "nokey"]), 0);
        let at = 4_000_000_000i64;
        assert_eq!(q::<i64>(&mut c, &["EXPIREAT", "k", &at.to_string()]), 1);
        assert_eq!(q::<i64>(&mut c, &["EXPIRETIME", "k"]), at);
        assert_eq!(q::<i64>(&mut c, &["PEXPIRETIME", "k"]), at * 1000);
        assert_eq!(q::<i64>(&mut c, &["PEXPIREAT", "k", &(at * 1000 + 499).to_string()]), 1);
        assert_eq!(q::<i64>(&mut c, &["EXPIRETIME", "k"]), at);
        assert_eq!(q::<i64>(&mut c, &["PEXPIREAT", "k", &(at * 1000 + 500).to_string()]), 1);
        assert_eq!(q::<i64>(&mut c, &["EXPIRETIME", "k"]), at + 1);
        assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "100"]), 1);
        let pttl: i64 = q(&mut c, &["PTTL", "k"]);
        assert!((99_000..=100_000).contains(&pttl), "pttl {pttl}");
        assert_eq!(q::<i64>(&mut c, &["TTL", "k"]), 100);
        assert_eq!(q::<i64>(&mut c, &["PEXPIRE", "k", "1500"]), 1);
        // Rounded to the nearest second.
        let ttl: i64 = q(&mut c, &["TTL", "k"]);
        assert!(ttl == 1 || ttl == 2, "ttl {ttl}");
        assert_eq!(q::<i64>(&mut c, &["PERSIST", "k"]), 1);
        assert_eq!(q::<i64>(&mut c, &["TTL", "k"]), -1);
        assert_eq!(q::<i64>(&mut c, &["PERSIST", "k"]), 0);
        // A short PX expires on its own; TTL then says -2.
        assert_eq!(q::<i64>(&mut c, &["PEXPIRE", "k", "30"]), 1);
        poll(Duration::from_secs(5), "k to expire", || q::<i64>(&mut c, &["PTTL", "k"]) == -2);
        let mut r = s.raw();
        r.roundtrip(&[b"TTL"], b"-ERR wrong number of arguments for 'ttl' command\r\n");
        r.roundtrip(&[b"PERSIST", b"a", b"b"], b"-ERR wrong number of arguments for 'persist' command\r\n");
        r.roundtrip(&[b"EXPIRETIME", b"a", b"b"], b"-ERR wrong number of arguments for 'expiretime' command\r\n");
    });
}

#[test]
fn rename_and_renamenx() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"RENAME", b"nokey", b"x"], b"-ERR no such key\r\n");
        r.roundtrip(&[b"RENAMENX", b"nokey", b"x"], b"-ERR no such key\r\n");
        r.roundtrip(&[b"RENAME", b"nokey", b"nokey"], b"-ERR no such key\r\n");
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"RENAME", b"a", b"a"], b"+OK\r\n");
        r.roundtrip(&[b"RENAMENX", b"a", b"a"], b":0\r\n");
        r.roundtrip(&[b"RENAME", b"a"], b"-ERR wrong number of arguments for 'rename' command\r\n");
        r.roundtrip(&[b"RENAMENX", b"a", b"b", b"c"], b"-ERR wrong number of arguments for 'renamenx' command\r\n");

        let mut c = s.conn();
        // Many pairs, so both same-shard and cross-shard renames happen.
        for i in 0..64 {
            ok(&mut c, &["SET", &format!("src{i}"), &format!("v{i}")]);
            ok(&mut c, &["SET", &format!("dst{i}"), "old"]);
            assert_eq!(q::<i64>(&mut c, &["PEXPIRE", &format!("src{i}"), "100000"]), 1);
        }
        for i in 0..64 {
            let (src, dst) = (format!("src{i}"), format!("dst{i}"));
            assert_eq!(q::<i64>(&mut c, &["RENAMENX", &src, &dst]), 0);
            ok(&mut c, &["RENAME", &src, &dst]);
            assert_eq!(q::<i64>(&mut c, &["EXISTS", &src]), 0);
            assert_eq!(q::<String>(&mut c, &["GET", &dst]), format!("v{i}"));
            let pttl: i64 = q(&mut c, &["PTTL", &dst]);
            assert!(pttl > 90_000, "TTL must move with the key, got {pttl}");
            let back = format!("back{i}");
            assert_eq!(q::<i64>(&mut c, &["RENAMENX", &dst, &back]), 1);
            assert_eq!(q::<String>(&mut c, &["GET", &back]), format!("v{i}"));
        }
        // The 64 renamed keys and "a" from above.
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 65);
    });
}

#[test]
fn copy_and_move_across_databases() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"COPY", b"a", b"a"], b"-ERR source and destination objects are the same\r\n");
        r.roundtrip(&[b"COPY", b"a", b"a", b"DB", b"0"], b"-ERR source and destination objects are the same\r\n");
        r.roundtrip(&[b"COPY", b"a", b"b", b"DB", b"16"], b"-ERR DB index is out of range\r\n");
        r.roundtrip(&[b"COPY", b"a", b"b", b"DB", b"-1"], b"-ERR DB index is out of range\r\n");
        r.roundtrip(&[b"COPY", b"a", b"b", b"DB", b"x"], b"-ERR value is not an integer or out of range\r\n");
        r.roundtrip(
            &[b"COPY", b"a", b"b", b"DB", b"4294967296"],
            b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n",
        );
        r.roundtrip(&[b"COPY", b"a", b"b", b"DB"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"COPY", b"a", b"b", b"foo"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"COPY", b"a"], b"-ERR wrong number of arguments for 'copy' command\r\n");
        r.roundtrip(&[b"COPY", b"nokey", b"b"], b":0\r\n");
        r.roundtrip(&[b"COPY", b"a", b"b", b"REPLACE", b"replace"], b":1\r\n");
        r.roundtrip(&[b"COPY", b"a", b"b"], b":0\r\n");
        r.roundtrip(&[b"COPY", b"a", b"b", b"REPLACE"], b":1\r\n");
        r.roundtrip(&[b"MOVE", b"a", b"0"], b"-ERR source and destination objects are the same\r\n");
        r.roundtrip(&[b"MOVE", b"a", b"16"], b"-ERR DB index is out of range\r\n");
        r.roundtrip(&[b"MOVE", b"a", b"x"], b"-ERR value is not an integer or out of range\r\n");
        r.roundtrip(
            &[b"MOVE", b"a", b"4294967296"],
            b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n",
        );
        r.roundtrip(&[b"MOVE", b"a"], b"-ERR wrong number of arguments for 'move' command\r\n");
        r.roundtrip(&[b"MOVE", b"nokey", b"1"], b":0\r\n");

        let mut c = s.conn();
        ok(&mut c, &["FLUSHALL"]);
        for i in 0..32 {
            let k = format!("k{i}");
            ok(&mut c, &["SET", &k, &format!("v{i}")]);
            assert_eq!(q::<i64>(&mut c, &["PEXPIRE", &k, "100000"]), 1);
            // COPY into another db keeps value and TTL; the source stays.
            assert_eq!(q::<i64>(&mut c, &["COPY", &k, &format!("c{i}"), "DB", "3"]), 1);
            assert_eq!(q::<i64>(&mut c, &["COPY", &k, &format!("c{i}"), "DB", "3"]), 0);
            // MOVE takes it away, unless the target has the key already.
            assert_eq!(q::<i64>(&mut c, &["MOVE", &k, "2"]), 1);
            assert_eq!(q::<i64>(&mut c, &["EXISTS", &k]), 0);
        }
        ok(&mut c, &["SELECT", "2"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 32);
        for i in 0..32 {
            let k = format!("k{i}");
            assert_eq!(q::<String>(&mut c, &["GET", &k]), format!("v{i}"));
            assert!(q::<i64>(&mut c, &["PTTL", &k]) > 90_000);
        }
        ok(&mut c, &["SELECT", "3"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 32);
        assert_eq!(q::<String>(&mut c, &["GET", "c7"]), "v7");
        assert!(q::<i64>(&mut c, &["PTTL", "c7"]) > 90_000);
        ok(&mut c, &["SET", "k1", "mine"]);
        assert_eq!(q::<i64>(&mut c, &["MOVE", "k1", "2"]), 0);
        assert_eq!(q::<String>(&mut c, &["GET", "k1"]), "mine");
        // COPY DB with REPLACE overwrites there.
        assert_eq!(q::<i64>(&mut c, &["COPY", "k1", "k1", "DB", "2", "REPLACE"]), 1);
        ok(&mut c, &["SELECT", "2"]);
        assert_eq!(q::<String>(&mut c, &["GET", "k1"]), "mine");
        assert_eq!(q::<i64>(&mut c, &["TTL", "k1"]), -1);
        // The copy is independent of the original.
        ok(&mut c, &["SET", "orig", "x"]);
        assert_eq!(q::<i64>(&mut c, &["COPY", "orig", "dup"]), 1);
        ok(&mut c, &["APPEND", "dup", "y"]);
        assert_eq!(q::<String>(&mut c, &["GET", "orig"]), "x");
        assert_eq!(q::<String>(&mut c, &["GET", "dup"]), "xy");
    });
}

#[test]
fn keys_and_scan() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SCAN", b"x"], b"-ERR invalid cursor\r\n");
        r.roundtrip(&[b"SCAN", b"-1"], b"-ERR invalid cursor\r\n");
        r.roundtrip(&[b"SCAN", b""], b"-ERR invalid cursor\r\n");
        r.roundtrip(&[b"SCAN", b"18446744073709551616"], b"-ERR invalid cursor\r\n");
        r.roundtrip(&[b"SCAN", b"x", b"COUNT", b"0"], b"-ERR invalid cursor\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"COUNT", b"0"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"COUNT", b"-1"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"COUNT", b"x"], b"-ERR value is not an integer or out of range\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"MATCH"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"foo", b"bar"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"NOVALUES"], b"-ERR NOVALUES option can only be used in HSCAN\r\n");
        r.roundtrip(&[b"SCAN"], b"-ERR wrong number of arguments for 'scan' command\r\n");
        r.roundtrip(&[b"KEYS"], b"-ERR wrong number of arguments for 'keys' command\r\n");
        r.roundtrip(&[b"SCAN", b"0"], b"*2\r\n$1\r\n0\r\n*0\r\n");
        r.roundtrip(&[b"KEYS", b"*"], b"*0\r\n");
        r.roundtrip(&[b"SET", b"only", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"KEYS", b"*"], b"*1\r\n$4\r\nonly\r\n");
        r.roundtrip(&[b"KEYS", b"o?l[xy]"], b"*1\r\n$4\r\nonly\r\n");
        r.roundtrip(&[b"KEYS", b"O*"], b"*0\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"COUNT", b"1000", b"TYPE", b"STRING"], b"*2\r\n$1\r\n0\r\n*1\r\n$4\r\nonly\r\n");
        // An unknown type name matches nothing (7.4 does not reject it).
        r.roundtrip(&[b"SCAN", b"0", b"COUNT", b"1000", b"TYPE", b"nosuchtype"], b"*2\r\n$1\r\n0\r\n*0\r\n");
        r.roundtrip(&[b"SCAN", b"0", b"COUNT", b"1000", b"TYPE", b"list"], b"*2\r\n$1\r\n0\r\n*0\r\n");
        r.roundtrip(&[b"SCAN", b"+0", b"COUNT", b"1000", b"MATCH", b"on*"], b"*2\r\n$1\r\n0\r\n*1\r\n$4\r\nonly\r\n");

        let mut c = s.conn();
        ok(&mut c, &["FLUSHDB"]);
        for i in 0..500 {
            ok(&mut c, &["SET", &format!("user:{i}"), "v"]);
            ok(&mut c, &["SET", &format!("item:{i}"), "v"]);
        }
        let mut keys: Vec<String> = q(&mut c, &["KEYS", "user:*"]);
        keys.sort();
        let mut want: Vec<String> = (0..500).map(|i| format!("user:{i}")).collect();
        want.sort();
        assert_eq!(keys, want);
        assert_eq!(q::<Vec<String>>(&mut c, &["KEYS", "*"]).len(), 1000);
        assert_eq!(q::<Vec<String>>(&mut c, &["KEYS", "user:1?"]).len(), 10);

        let all: HashSet<String> = scan_all(&mut c, &[]).into_iter().collect();
        assert_eq!(all.len(), 1000);
        for count in ["1", "7", "100", "5000"] {
            let got = scan_all(&mut c, &["MATCH", "item:*", "COUNT", count]);
            let set: HashSet<&String> = got.iter().collect();
            assert_eq!(set.len(), 500, "COUNT {count}");
            assert!(got.iter().all(|k| k.starts_with("item:")));
        }
        assert_eq!(scan_all(&mut c, &["TYPE", "string", "MATCH", "*"]).len(), 1000);
        // COUNT is a hint, but a big one takes everything in one call.
        let (next, got): (String, Vec<String>) = q(&mut c, &["SCAN", "0", "COUNT", "100000"]);
        assert_eq!((next.as_str(), got.len()), ("0", 1000));
        // Expired keys are never returned (and SCAN removes those it meets).
        for i in 0..50 {
            assert_eq!(q::<i64>(&mut c, &["PEXPIRE", &format!("user:{i}"), "1"]), 1);
        }
        poll(Duration::from_secs(5), "TTLs to pass", || q::<i64>(&mut c, &["PTTL", "user:49"]) == -2);
        assert_eq!(scan_all(&mut c, &["COUNT", "50"]).len(), 950);
        assert_eq!(q::<Vec<String>>(&mut c, &["KEYS", "*"]).len(), 950);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 950);
    });
}

#[test]
fn scan_returns_every_key_across_growth() {
    each_threads(|s| {
        let mut c = s.conn();
        let original: Vec<String> = (0..300).map(|i| format!("orig:{i}")).collect();
        for k in &original {
            ok(&mut c, &["SET", k, "v"]);
        }
        let mut seen = HashSet::new();
        let mut cursor = "0".to_string();
        let mut step = 0;
        loop {
            let (next, keys): (String, Vec<String>) = q(&mut c, &["SCAN", &cursor, "COUNT", "5"]);
            seen.extend(keys);
            step += 1;
            // Grow every table a lot, then shrink them, mid-scan.
            if step == 5 {
                let mut p = redis::pipe();
                for i in 0..4000 {
                    p.cmd("SET").arg(format!("new:{i}")).arg("v").ignore();
                }
                let _: () = p.query(&mut c).unwrap();
            }
            if step == 30 {
                let mut p = redis::pipe();
                for i in 0..4000 {
                    p.cmd("DEL").arg(format!("new:{i}")).ignore();
                }
                let _: () = p.query(&mut c).unwrap();
            }
            if next == "0" {
                break;
            }
            cursor = next;
            assert!(step < 100_000, "scan does not terminate");
        }
        for k in &original {
            assert!(seen.contains(k), "SCAN missed {k}");
        }
    });
}

#[test]
fn randomkey_dbsize_flush_and_swapdb() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"RANDOMKEY"], b"$-1\r\n");
        r.roundtrip(&[b"DBSIZE"], b":0\r\n");
        r.roundtrip(&[b"SET", b"one", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"RANDOMKEY"], b"$3\r\none\r\n");
        r.roundtrip(&[b"RANDOMKEY", b"x"], b"-ERR wrong number of arguments for 'randomkey' command\r\n");
        r.roundtrip(&[b"DBSIZE", b"x"], b"-ERR wrong number of arguments for 'dbsize' command\r\n");
        r.roundtrip(&[b"FLUSHDB", b"x"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"FLUSHDB", b"SYNC", b"x"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"FLUSHALL", b"x"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"FLUSHALL", b"async", b"sync"], b"-ERR syntax error\r\n");
        r.roundtrip(&[b"SWAPDB", b"0", b"x"], b"-ERR invalid second DB index\r\n");
        r.roundtrip(&[b"SWAPDB", b"x", b"0"], b"-ERR invalid first DB index\r\n");
        r.roundtrip(&[b"SWAPDB", b"4294967296", b"0"], b"-ERR invalid first DB index\r\n");
        r.roundtrip(&[b"SWAPDB", b"0", b"16"], b"-ERR DB index is out of range\r\n");
        r.roundtrip(&[b"SWAPDB", b"-1", b"0"], b"-ERR DB index is out of range\r\n");
        r.roundtrip(&[b"SWAPDB", b"0"], b"-ERR wrong number of arguments for 'swapdb' command\r\n");
        r.roundtrip(&[b"SWAPDB", b"3", b"3"], b"+OK\r\n");
        // An expired key is never returned by RANDOMKEY.
        r.roundtrip(&[b"PEXPIRE", b"one", b"1"], b":1\r\n");
        poll(Duration::from_secs(5), "one to expire", || {
            r.cmd(&[b"RANDOMKEY"]);
            if r.read_n(4) == b"$-1\r" {
                r.expect(b"\n");
                true
            } else {
                r.expect(b"one\r\n");
                false
            }
        });

        let mut c = s.conn();
        for i in 0..200 {
            ok(&mut c, &["SET", &format!("k{i}"), "v"]);
        }
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 200);
        let mut picked = HashSet::new();
        for _ in 0..100 {
            let k: String = q(&mut c, &["RANDOMKEY"]);
            assert!(k.starts_with('k'));
            picked.insert(k);
        }
        assert!(picked.len() > 20, "RANDOMKEY is not random: {}", picked.len());

        // SWAPDB exchanges whole databases, TTLs included.
        assert_eq!(q::<i64>(&mut c, &["PEXPIRE", "k0", "100000"]), 1);
        ok(&mut c, &["SELECT", "5"]);
        ok(&mut c, &["SET", "five", "5"]);
        ok(&mut c, &["SWAPDB", "0", "5"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 200);
        assert!(q::<i64>(&mut c, &["PTTL", "k0"]) > 90_000);
        assert_eq!(q::<i64>(&mut c, &["EXISTS", "five"]), 0);
        ok(&mut c, &["SELECT", "0"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 1);
        assert_eq!(q::<String>(&mut c, &["GET", "five"]), "5");

        // FLUSHDB empties only the selected database.
        ok(&mut c, &["FLUSHDB"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
        ok(&mut c, &["SELECT", "5"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 200);
        ok(&mut c, &["FLUSHDB", "ASYNC"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
        ok(&mut c, &["SET", "x", "1"]);
        ok(&mut c, &["FLUSHDB", "sync"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);

        // FLUSHALL empties every database, sync or async, big or small.
        let mut p = redis::pipe();
        for db in [0, 1, 15] {
            p.cmd("SELECT").arg(db).ignore();
            for i in 0..3000 {
                p.cmd("SET").arg(format!("big{i}")).arg("v").ignore();
            }
        }
        let _: () = p.query(&mut c).unwrap();
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 3000);
        ok(&mut c, &["FLUSHALL", "ASYNC"]);
        for db in ["0", "1", "15"] {
            ok(&mut c, &["SELECT", db]);
            assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
        }
        ok(&mut c, &["SET", "y", "1"]);
        ok(&mut c, &["FLUSHALL"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
        ok(&mut c, &["SET", "y", "1"]);
        ok(&mut c, &["FLUSHALL", "SYNC"]);
        assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
    });
}

#[test]
fn object_subcommands_are_exact() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"OBJECT"], b"-ERR wrong number of arguments for 'object' command\r\n");
        r.roundtrip(&[b"OBJECT", b"foo"], b"-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n");
        r.roundtrip(&[b"OBJECT", b"foo", b"k"], b"-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n");
        r.roundtrip(&[b"OBJECT", b"ENCODING"], b"-ERR wrong number of arguments for 'object|encoding' command\r\n");
        r.roundtrip(&[b"OBJECT", b"freq", b"a", b"b"], b"-ERR wrong number of arguments for 'object|freq' command\r\n");
        r.roundtrip(&[b"OBJECT", b"help", b"x"], b"-ERR wrong number of arguments for 'object|help' command\r\n");
        r.roundtrip(&[b"OBJECT", b"ENCODING", b"nokey"], b"$-1\r\n");
        r.roundtrip(&[b"OBJECT", b"REFCOUNT", b"nokey"], b"$-1\r\n");
        r.roundtrip(&[b"OBJECT", b"IDLETIME", b"nokey"], b"$-1\r\n");
        r.roundtrip(&[b"OBJECT", b"FREQ", b"nokey"], b"$-1\r\n");
        r.roundtrip(&[b"SET", b"s", b"bar"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"n", b"123"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"big", b"12345"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"long", &[b'x'; 45]], b"+OK\r\n");
        r.roundtrip(&[b"OBJECT", b"encoding", b"s"], b"$6\r\nembstr\r\n");
        r.roundtrip(&[b"OBJECT", b"encoding", b"n"], b"$3\r\nint\r\n");
        r.roundtrip(&[b"OBJECT", b"encoding", b"long"], b"$3\r\nraw\r\n");
        r.roundtrip(&[b"OBJECT", b"refcount", b"s"], b":1\r\n");
        r.roundtrip(&[b"OBJECT", b"refcount", b"n"], b":2147483647\r\n");
        r.roundtrip(&[b"OBJECT", b"refcount", b"big"], b":1\r\n");
        r.roundtrip(&[b"OBJECT", b"idletime", b"s"], b":0\r\n");
        r.roundtrip(
            &[b"OBJECT", b"freq", b"s"],
            b"-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n",
        );
        let help: &[&str] = &[
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP",
            "    Print this help.",
        ];
        let mut want = format!("*{}\r\n", help.len()).into_bytes();
        for l in help {
            want.extend_from_slice(format!("+{l}\r\n").as_bytes());
        }
        r.roundtrip(&[b"OBJECT", b"HELP"], &want);

        // Under an LFU policy FREQ counts accesses and IDLETIME is refused.
        // Decay is switched off: a minute boundary between SET and TOUCH
        // would otherwise take one step off before TOUCH adds one.
        r.roundtrip(&[b"CONFIG", b"SET", b"maxmemory-policy", b"allkeys-lfu"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"lfu-decay-time", b"0"], b"+OK\r\n");
        r.roundtrip(&[b"SET", b"f", b"v"], b"+OK\r\n");
        r.roundtrip(&[b"OBJECT", b"freq", b"f"], b":5\r\n");
        // OBJECT itself does not count as an access; TOUCH does, and the
        // first hits above the initial value always count.
        r.roundtrip(&[b"OBJECT", b"freq", b"f"], b":5\r\n");
        r.roundtrip(&[b"TOUCH", b"f"], b":1\r\n");
        r.roundtrip(&[b"OBJECT", b"freq", b"f"], b":6\r\n");
        r.roundtrip(
            &[b"OBJECT", b"idletime", b"f"],
            b"-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n",
        );
        r.roundtrip(&[b"OBJECT", b"idletime", b"nokey"], b"$-1\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"maxmemory-policy", b"noeviction"], b"+OK\r\n");
        r.roundtrip(&[b"CONFIG", b"SET", b"lfu-decay-time", b"1"], b"+OK\r\n");
    });
}

#[test]
fn idletime_follows_touching_commands_and_no_touch() {
    each_threads(|s| {
        let mut c = s.conn();
        ok(&mut c, &["SET", "k", "v"]);
        ok(&mut c, &["SET", "other", "v"]);
        let idle = |c: &mut Connection| q::<i64>(c, &["OBJECT", "IDLETIME", "k"]);
        poll(Duration::from_secs(5), "k to idle", || idle(&mut c) >= 1);
        // Reads that do not count as access leave the clock alone.
        assert_eq!(q::<i64>(&mut c, &["EXISTS", "k"]), 1);
        assert_eq!(q::<String>(&mut c, &["TYPE", "k"]), "string");
        assert_eq!(q::<i64>(&mut c, &["TTL", "k"]), -1);
        assert!(idle(&mut c) >= 1);
        // With CLIENT NO-TOUCH a touching command does not count either...
        ok(&mut c, &["CLIENT", "NO-TOUCH", "on"]);
        assert_eq!(q::<i64>(&mut c, &["PERSIST", "k"]), 0);
        assert!(idle(&mut c) >= 1);
        // ...but TOUCH always does.
        assert_eq!(q::<i64>(&mut c, &["TOUCH", "k"]), 1);
        assert_eq!(idle(&mut c), 0);
        ok(&mut c, &["CLIENT", "NO-TOUCH", "off"]);
        poll(Duration::from_secs(5), "k to idle again", || idle(&mut c) >= 1);
        assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "1000"]), 1);
        assert_eq!(idle(&mut c), 0);
        // RENAME carries the access time with the key.
        assert!(q::<i64>(&mut c, &["OBJECT", "IDLETIME", "other"]) >= 1);
        ok(&mut c, &["RENAME", "other", "renamed"]);
        assert_eq!(q::<i64>(&mut c, &["OBJECT", "IDLETIME", "renamed"]), 0);
    });
}

#[test]
fn active_expiry_removes_untouched_keys() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut p = redis::pipe();
        for i in 0..300 {
            p.cmd("SET").arg(format!("t{i}")).arg("v").arg("PX").arg(50).ignore();
        }
        p.cmd("SET").arg("keep").arg("v").ignore();
        // Some keys in another database too.
        p.cmd("SELECT").arg(7).ignore();
        for i in 0..100 {
            p.cmd("SET").arg(format!("t{i}")).arg("v").ignore();
            p.cmd("PEXPIRE").arg(format!("t{i}")).arg(50).ignore();
        }
        p.cmd("SELECT").arg(0).ignore();
        let _: () = p.query(&mut c).unwrap();
        poll(Duration::from_secs(5), "DBSIZE to drop to 1", || q::<i64>(&mut c, &["DBSIZE"]) == 1);
        ok(&mut c, &["SELECT", "7"]);
        poll(Duration::from_secs(5), "db 7 to empty", || q::<i64>(&mut c, &["DBSIZE"]) == 0);
    });
}

/// Runs `change` on client `c` between `w`'s WATCH of `key` and its EXEC;
/// returns whether EXEC ran (false: the WATCH aborted it).
fn watched(w: &mut Raw, c: &mut Connection, key: &[u8], change: impl FnOnce(&mut Connection)) -> bool {
    w.roundtrip(&[b"WATCH", key], b"+OK\r\n");
    change(c);
    w.roundtrip(&[b"MULTI"], b"+OK\r\n");
    w.roundtrip(&[b"PING"], b"+QUEUED\r\n");
    w.cmd(&[b"EXEC"]);
    let head = w.read_n(4);
    if head == b"*-1\r" {
        w.expect(b"\n");
        false
    } else {
        assert_eq!(head, b"*1\r\n");
        w.expect(b"+PONG\r\n");
        true
    }
}

#[test]
fn watch_sees_cross_database_and_flush_changes() {
    each_threads(|s| {
        let mut w = s.raw();
        let mut c = s.conn();
        ok(&mut c, &["SET", "m", "v"]);
        assert!(!watched(&mut w, &mut c, b"m", |c| assert_eq!(q::<i64>(c, &["MOVE", "m", "1"]), 1)));
        // A MOVE into the watcher's database from another one.
        assert!(!watched(&mut w, &mut c, b"m", |c| {
            ok(c, &["SELECT", "1"]);
            assert_eq!(q::<i64>(c, &["MOVE", "m", "0"]), 1);
            ok(c, &["SELECT", "0"]);
        }));
        assert!(!watched(&mut w, &mut c, b"cp", |c| assert_eq!(q::<i64>(c, &["COPY", "m", "cp"]), 1)));
        assert!(!watched(&mut w, &mut c, b"cp", |c| {
            ok(c, &["SELECT", "2"]);
            ok(c, &["SET", "src", "v"]);
            assert_eq!(q::<i64>(c, &["COPY", "src", "cp", "DB", "0", "REPLACE"]), 1);
            ok(c, &["SELECT", "0"]);
        }));
        // A failed COPY/MOVE changes nothing.
        assert!(watched(&mut w, &mut c, b"cp", |c| assert_eq!(q::<i64>(c, &["COPY", "m", "cp"]), 0)));
        assert!(watched(&mut w, &mut c, b"m", |c| assert_eq!(q::<i64>(c, &["MOVE", "nokey", "1"]), 0)));
        assert!(!watched(&mut w, &mut c, b"m", |c| assert_eq!(q::<i64>(c, &["EXPIRE", "m", "100"]), 1)));
        // DEL tells only the WATCHers of keys it deleted.
        ok(&mut c, &["SET", "d1", "v"]);
        assert!(watched(&mut w, &mut c, b"absent", |c| assert_eq!(q::<i64>(c, &["DEL", "d1", "absent"]), 1)));
        ok(&mut c, &["SET", "d1", "v"]);
        assert!(!watched(&mut w, &mut c, b"d1", |c| assert_eq!(q::<i64>(c, &["UNLINK", "absent", "d1"]), 1)));
        assert!(watched(&mut w, &mut c, b"d1", |c| assert_eq!(q::<i64>(c, &["DEL", "d1"]), 0)));
        assert!(!watched(&mut w, &mut c, b"m", |c| assert_eq!(q::<i64>(c, &["PERSIST", "m"]), 1)));
        assert!(!watched(&mut w, &mut c, b"m", |c| ok(c, &["RENAME", "m", "m2"])));
        assert!(!watched(&mut w, &mut c, b"m", |c| ok(c, &["RENAME", "m2", "m"])));
        // Flushing a database with the key in it is a change; flushing one
        // without it, or where it does not exist, is not.
        assert!(watched(&mut w, &mut c, b"m", |c| {
            ok(c, &["SELECT", "3"]);
            ok(c, &["SET", "m", "other db"]);
            ok(c, &["FLUSHDB"]);
            ok(c, &["SELECT", "0"]);
        }));
        assert!(watched(&mut w, &mut c, b"absent", |c| ok(c, &["FLUSHALL"])));
        ok(&mut c, &["SET", "m", "v"]);
        assert!(!watched(&mut w, &mut c, b"m", |c| ok(c, &["FLUSHALL", "ASYNC"])));
        ok(&mut c, &["SET", "m", "v"]);
        assert!(!watched(&mut w, &mut c, b"m", |c| ok(c, &["FLUSHDB"])));
        // SWAPDB changes the key when it exists on either side.
        assert!(watched(&mut w, &mut c, b"m", |c| ok(c, &["SWAPDB", "0", "9"])));
        assert!(!watched(&mut w, &mut c, b"m", |c| {
            ok(c, &["SELECT", "9"]);
            ok(c, &["SET", "m", "from 9"]);
            ok(c, &["SWAPDB", "9", "0"]);
            ok(c, &["SELECT", "0"]);
        }));
        assert_eq!(q::<String>(&mut c, &["GET", "m"]), "from 9");
        assert!(!watched(&mut w, &mut c, b"m", |c| ok(c, &["SWAPDB", "0", "9"])));
        assert_eq!(q::<i64>(&mut c, &["EXISTS", "m"]), 0);
    });
}

#[test]
fn manual_lock_commands_run_inside_exec() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"a", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"MULTI"], b"+OK\r\n");
        for cmd in [
            &[&b"COPY"[..], b"a", b"b", b"DB", b"1"][..],
            &[b"MOVE", b"a", b"2"],
            &[b"DBSIZE"],
            &[b"KEYS", b"*"],
            &[b"SCAN", b"0", b"COUNT", b"1000"],
            &[b"RANDOMKEY"],
            &[b"SWAPDB", b"0", b"2"],
            &[b"DBSIZE"],
            &[b"FLUSHDB"],
            &[b"DBSIZE"],
            &[b"FLUSHALL"],
        ] {
            r.roundtrip(cmd, b"+QUEUED\r\n");
        }
        r.roundtrip(
            &[b"EXEC"],
            b"*11\r\n:1\r\n:1\r\n:0\r\n*0\r\n*2\r\n$1\r\n0\r\n*0\r\n$-1\r\n+OK\r\n:1\r\n+OK\r\n:0\r\n+OK\r\n",
        );
        r.roundtrip(&[b"SELECT", b"1"], b"+OK\r\n");
        r.roundtrip(&[b"DBSIZE"], b":0\r\n");
        r.roundtrip(&[b"PING"], b"+PONG\r\n");
    });
}

#[test]
fn concurrent_renames_and_walks_do_not_deadlock() {
    let s = TestServer::start(2);
    let mut c = s.conn();
    for i in 0..100 {
        ok(&mut c, &["SET", &format!("k{i}"), "v"]);
    }
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let client = s.client();
            std::thread::spawn(move || {
                let mut c = client.get_connection().expect("connect");
                for n in 0..200 {
                    let i = (n * 7 + t * 13) % 100;
                    let _: redis::RedisResult<()> = redis::cmd("RENAME").arg(format!("k{i}")).arg(format!("k{}", (i + 1) % 100)).query(&mut c);
                    let _: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
                    let _: Vec<String> = redis::cmd("KEYS").arg("k1*").query(&mut c).unwrap();
                    let _: (String, Vec<String>) = redis::cmd("SCAN").arg(0).query(&mut c).unwrap();
                    let _: i64 = redis::cmd("COPY").arg(format!("k{i}")).arg(format!("k{i}")).arg("DB").arg(t % 3 + 1).arg("REPLACE").query(&mut c).unwrap();
                    let _: () = redis::cmd("SWAPDB").arg(1).arg(2).query(&mut c).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    let n: i64 = q(&mut c, &["DBSIZE"]);
    assert!((1..=100).contains(&n), "dbsize {n}");
}
