//! Black-box tests of the string family: exact bytes on a raw socket for
//! every error and edge reply (checked against redis-server), and the
//! `redis` crate for ordinary use, at 1 and 2 worker threads.
mod common;
use common::*;

use std::time::{Duration, Instant};

use redis::Commands;

const NOT_INT: &[u8] = b"-ERR value is not an integer or out of range\r\n";
const SYNTAX: &[u8] = b"-ERR syntax error\r\n";
const NIL: &[u8] = b"$-1\r\n";
const OK: &[u8] = b"+OK\r\n";

fn bulk(s: &str) -> Vec<u8> {
    format!("${}\r\n{}\r\n", s.len(), s).into_bytes()
}

/// Polls until `key` is gone (its TTL ran out), failing after 5 s.
fn wait_gone(c: &mut redis::Connection, key: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let v: Option<Vec<u8>> = c.get(key).unwrap();
        if v.is_none() {
            return;
        }
        assert!(Instant::now() < deadline, "{key} never expired");
        std::thread::yield_now();
    }
}

#[test]
fn get_set_with_client() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = c.set("k", "v").unwrap();
        assert_eq!(c.get::<_, String>("k").unwrap(), "v");
        let _: () = c.set("k", b"bin\0ary\r\n".as_slice()).unwrap();
        assert_eq!(c.get::<_, Vec<u8>>("k").unwrap(), b"bin\0ary\r\n");
        let _: () = c.set("n", 42).unwrap();
        assert_eq!(c.get::<_, i64>("n").unwrap(), 42);
        let big = "x".repeat(100_000);
        let _: () = c.set("big", &big).unwrap();
        assert_eq!(c.get::<_, String>("big").unwrap(), big);
        assert_eq!(c.get::<_, Option<String>>("missing").unwrap(), None);
    });
}

#[test]
fn set_options() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"k", b"v1", b"NX"], OK);
        r.roundtrip(&[b"SET", b"k", b"v2", b"nx"], NIL);
        r.roundtrip(&[b"GET", b"k"], &bulk("v1"));
        r.roundtrip(&[b"SET", b"k", b"v2", b"XX"], OK);
        r.roundtrip(&[b"SET", b"nokey", b"v", b"XX"], NIL);
        r.roundtrip(&[b"GET", b"nokey"], NIL);
        r.roundtrip(&[b"SET", b"k", b"v3", b"GET"], &bulk("v2"));
        r.roundtrip(&[b"SET", b"new", b"v", b"GET"], NIL);
        r.roundtrip(&[b"GET", b"new"], &bulk("v"));
        // GET with NX: the old value comes back and nothing is set.
        r.roundtrip(&[b"SET", b"k", b"v4", b"NX", b"GET"], &bulk("v3"));
        r.roundtrip(&[b"GET", b"k"], &bulk("v3"));
        r.roundtrip(&[b"SET", b"gx", b"v", b"XX", b"GET"], NIL);
        r.roundtrip(&[b"GET", b"gx"], NIL);
        // Repeats are allowed, options in any order and case.
        r.roundtrip(&[b"SET", b"k", b"v", b"EX", b"10", b"EX", b"20"], OK);
        r.roundtrip(&[b"SET", b"k", b"v", b"nx", b"nx"], NIL);
        r.roundtrip(&[b"SET", b"k", b"v", b"KeepTTL", b"xx", b"get"], &bulk("v"));
        r.roundtrip(&[b"SET", b"k", b"v", b"px", b"100000", b"Xx"], OK);
        r.roundtrip(&[b"SET", b"k", b"v", b"exat", b"9223372036854775"], OK);
        r.roundtrip(&[b"SET", b"k", b"v", b"PXAT", b"99999999999999"], OK);
        for bad in [
            &[&b"NX"[..], b"XX"][..],
            &[b"XX", b"NX"],
            &[b"EX", b"10", b"PX", b"10"],
            &[b"PX", b"10", b"EXAT", b"10"],
            &[b"EXAT", b"10", b"PXAT", b"10"],
            &[b"KEEPTTL", b"EX", b"10"],
            &[b"EX", b"10", b"KEEPTTL"],
            &[b"PERSIST"],
            &[b"EX"],
            &[b"FOO"],
            &[b"NX", b"EX"],
            &[b"GETT"],
        ] {
            let mut cmd: Vec<&[u8]> = vec![b"SET", b"k", b"v"];
            cmd.extend_from_slice(bad);
            r.roundtrip(&cmd, SYNTAX);
        }
        // A syntax error wins over a bad expire value.
        r.roundtrip(&[b"SET", b"k", b"v", b"EX", b"0", b"NX", b"XX"], SYNTAX);
        let invalid = b"-ERR invalid expire time in 'set' command\r\n";
        for (opt, val) in [
            (&b"EX"[..], &b"0"[..]),
            (b"EX", b"-1"),
            (b"PX", b"0"),
            (b"EXAT", b"0"),
            (b"PXAT", b"-5"),
            (b"EX", b"9223372036854775807"),
            (b"PX", b"9223372036854775807"),
            (b"EXAT", b"9223372036854776"),
        ] {
            r.roundtrip(&[b"SET", b"k", b"v", opt, val], invalid);
        }
        for val in [&b"abc"[..], b"1.5", b" 1", b"", b"99999999999999999999"] {
            r.roundtrip(&[b"SET", b"k", b"v", b"EX", val], NOT_INT);
        }
        // The expire is checked before GET replies.
        r.roundtrip(&[b"SET", b"k", b"v", b"GET", b"EX", b"0"], invalid);
        r.roundtrip(&[b"SET", b"k"], b"-ERR wrong number of arguments for 'set' command\r\n");
        r.roundtrip(&[b"GET"], b"-ERR wrong number of arguments for 'get' command\r\n");
        r.roundtrip(&[b"GET", b"a", b"b"], b"-ERR wrong number of arguments for 'get' command\r\n");
    });
}

#[test]
fn set_in_the_past_removes_the_key() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"k", b"v"], OK);
        r.roundtrip(&[b"SET", b"k", b"v2", b"EXAT", b"1"], OK);
        r.roundtrip(&[b"GET", b"k"], NIL);
        r.roundtrip(&[b"SET", b"k", b"v3", b"PXAT", b"1", b"GET"], NIL);
        r.roundtrip(&[b"GET", b"k"], NIL);
        r.roundtrip(&[b"SET", b"k", b"v4", b"PXAT", b"1", b"NX"], OK);
        r.roundtrip(&[b"SET", b"k", b"v5", b"NX"], OK);
        r.roundtrip(&[b"GET", b"k"], &bulk("v5"));
    });
}

#[test]
fn resp3_nulls() {
    each_threads(|s| {
        let mut r = s.raw();
        r.cmd(&[b"HELLO", b"3"]);
        // Skip HELLO's map: read until the reply is fully in, by asking for a
        // marker afterwards.
        r.cmd(&[b"ECHO", b"mark"]);
        let mut seen = Vec::new();
        while !seen.ends_with(b"$4\r\nmark\r\n") {
            seen.extend(r.read_n(1));
        }
        r.roundtrip(&[b"GET", b"missing"], b"_\r\n");
        r.roundtrip(&[b"SET", b"k", b"v", b"XX"], b"_\r\n");
        r.roundtrip(&[b"MGET", b"k", b"missing"], b"*2\r\n_\r\n_\r\n");
        r.roundtrip(&[b"GETDEL", b"k"], b"_\r\n");
        r.roundtrip(&[b"GETEX", b"k"], b"_\r\n");
    });
}

#[test]
fn setnx_setex_psetex() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SETNX", b"k", b"1"], b":1\r\n");
        r.roundtrip(&[b"SETNX", b"k", b"2"], b":0\r\n");
        r.roundtrip(&[b"GET", b"k"], &bulk("1"));
        r.roundtrip(&[b"SETEX", b"k", b"100", b"v"], OK);
        r.roundtrip(&[b"GET", b"k"], &bulk("v"));
        r.roundtrip(&[b"PSETEX", b"k", b"100000", b"w"], OK);
        r.roundtrip(&[b"GET", b"k"], &bulk("w"));
        r.roundtrip(&[b"SETEX", b"k", b"0", b"v"], b"-ERR invalid expire time in 'setex' command\r\n");
        r.roundtrip(&[b"SETEX", b"k", b"-10", b"v"], b"-ERR invalid expire time in 'setex' command\r\n");
        r.roundtrip(
            &[b"SETEX", b"k", b"9223372036854775807", b"v"],
            b"-ERR invalid expire time in 'setex' command\r\n",
        );
        r.roundtrip(&[b"PSETEX", b"k", b"0", b"v"], b"-ERR invalid expire time in 'psetex' command\r\n");
        r.roundtrip(
            &[b"PSETEX", b"k", b"9223372036854775807", b"v"],
            b"-ERR invalid expire time in 'psetex' command\r\n",
        );
        r.roundtrip(&[b"SETEX", b"k", b"ten", b"v"], NOT_INT);
        r.roundtrip(&[b"PSETEX", b"k", b"1.0", b"v"], NOT_INT);
        r.roundtrip(&[b"SETEX", b"k", b"10"], b"-ERR wrong number of arguments for 'setex' command\r\n");
        r.roundtrip(&[b"SETNX", b"k"], b"-ERR wrong number of arguments for 'setnx' command\r\n");
        r.roundtrip(&[b"PSETEX", b"k", b"10", b"v", b"x"], b"-ERR wrong number of arguments for 'psetex' command\r\n");
        // The failed commands left the value alone.
        r.roundtrip(&[b"GET", b"k"], &bulk("w"));

        let mut c = s.conn();
        let _: () = c.set_ex("e", "v", 1).unwrap();
        let _: () = c.pset_ex("p", "v", 50).unwrap();
        wait_gone(&mut c, "p");
        assert!(c.set_nx::<_, _, bool>("p", "again").unwrap());
    });
}

#[test]
fn getset_getdel() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"GETSET", b"k", b"a"], NIL);
        r.roundtrip(&[b"GETSET", b"k", b"b"], &bulk("a"));
        r.roundtrip(&[b"GET", b"k"], &bulk("b"));
        r.roundtrip(&[b"GETDEL", b"k"], &bulk("b"));
        r.roundtrip(&[b"GETDEL", b"k"], NIL);
        r.roundtrip(&[b"GET", b"k"], NIL);
        r.roundtrip(&[b"GETSET", b"k"], b"-ERR wrong number of arguments for 'getset' command\r\n");
        r.roundtrip(&[b"GETDEL", b"k", b"x"], b"-ERR wrong number of arguments for 'getdel' command\r\n");

        let mut c = s.conn();
        let _: () = c.set("n", 12).unwrap();
        assert_eq!(c.getset::<_, _, i64>("n", 13).unwrap(), 12);
        assert_eq!(c.get_del::<_, i64>("n").unwrap(), 13);
        assert_eq!(c.get_del::<_, Option<i64>>("n").unwrap(), None);
    });
}

#[test]
fn getex_options_and_errors() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"k", b"v"], OK);
        r.roundtrip(&[b"GETEX", b"k"], &bulk("v"));
        r.roundtrip(&[b"GETEX", b"k", b"EX", b"100"], &bulk("v"));
        r.roundtrip(&[b"GETEX", b"k", b"px", b"100000"], &bulk("v"));
        r.roundtrip(&[b"GETEX", b"k", b"EXAT", b"99999999999"], &bulk("v"));
        r.roundtrip(&[b"GETEX", b"k", b"PXAT", b"99999999999999"], &bulk("v"));
        r.roundtrip(&[b"GETEX", b"k", b"PERSIST", b"persist"], &bulk("v"));
        for bad in [
            &[&b"NX"[..]][..],
            &[b"XX"],
            &[b"GET"],
            &[b"KEEPTTL"],
            &[b"EX", b"10", b"PERSIST"],
            &[b"PERSIST", b"EX", b"10"],
            &[b"EX", b"10", b"PX", b"10"],
            &[b"EX"],
            &[b"BOGUS"],
        ] {
            let mut cmd: Vec<&[u8]> = vec![b"GETEX", b"k"];
            cmd.extend_from_slice(bad);
            r.roundtrip(&cmd, SYNTAX);
        }
        let invalid = b"-ERR invalid expire time in 'getex' command\r\n";
        r.roundtrip(&[b"GETEX", b"k", b"EX", b"0"], invalid);
        r.roundtrip(&[b"GETEX", b"k", b"PXAT", b"-1"], invalid);
        r.roundtrip(&[b"GETEX", b"k", b"EX", b"9223372036854775807"], invalid);
        r.roundtrip(&[b"GETEX", b"k", b"EX", b"x"], NOT_INT);
        // A missing key is a null reply before the expire is looked at.
        r.roundtrip(&[b"GETEX", b"missing", b"EX", b"0"], NIL);
        r.roundtrip(&[b"GETEX", b"missing", b"EX", b"abc"], NIL);
        r.roundtrip(&[b"GETEX", b"missing", b"NX"], SYNTAX);
        // An absolute time in the past returns the value and deletes the key.
        r.roundtrip(&[b"GETEX", b"k", b"EXAT", b"1"], &bulk("v"));
        r.roundtrip(&[b"GET", b"k"], NIL);
        r.roundtrip(&[b"GETEX"], b"-ERR wrong number of arguments for 'getex' command\r\n");

        let mut c = s.conn();
        let _: () = c.set("a", "1").unwrap();
        let _: () = c.set("w", "1").unwrap();
        let v: String = redis::cmd("GETEX").arg("a").arg("PX").arg(60).query(&mut c).unwrap();
        assert_eq!(v, "1");
        wait_gone(&mut c, "a");
        // PERSIST removes a TTL: "w" outlives "witness", which had the same.
        let _: () = redis::cmd("GETEX").arg("w").arg("PX").arg(60).query(&mut c).unwrap();
        let _: () = c.pset_ex("witness", "1", 60).unwrap();
        let _: () = redis::cmd("GETEX").arg("w").arg("PERSIST").query(&mut c).unwrap();
        wait_gone(&mut c, "witness");
        assert_eq!(c.get::<_, Option<String>>("w").unwrap().as_deref(), Some("1"));
    });
}

#[test]
fn mget_mset_msetnx() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"MSET", b"a", b"1", b"b", b"2", b"a", b"3"], OK);
        r.roundtrip(&[b"MGET", b"a", b"b", b"c"], b"*3\r\n$1\r\n3\r\n$1\r\n2\r\n$-1\r\n");
        r.roundtrip(&[b"MSET", b"a", b"1", b"b"], b"-ERR wrong number of arguments for 'mset' command\r\n");
        r.roundtrip(&[b"MSET", b"a"], b"-ERR wrong number of arguments for 'mset' command\r\n");
        r.roundtrip(&[b"MSETNX", b"a", b"1", b"b"], b"-ERR wrong number of arguments for 'msetnx' command\r\n");
        r.roundtrip(&[b"MGET"], b"-ERR wrong number of arguments for 'mget' command\r\n");
        r.roundtrip(&[b"MSETNX", b"x", b"1", b"a", b"9"], b":0\r\n");
        r.roundtrip(&[b"MGET", b"x", b"a"], b"*2\r\n$-1\r\n$1\r\n3\r\n");
        r.roundtrip(&[b"MSETNX", b"x", b"1", b"y", b"2"], b":1\r\n");
        r.roundtrip(&[b"MSETNX", b"z", b"1", b"z", b"2"], b":1\r\n");
        r.roundtrip(&[b"MGET", b"x", b"y", b"z"], b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n2\r\n");

        let mut c = s.conn();
        let pairs: Vec<(String, String)> = (0..50).map(|i| (format!("key{i}"), format!("val{i}"))).collect();
        let _: () = c.mset(&pairs).unwrap();
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        let vals: Vec<String> = c.mget(&keys).unwrap();
        assert_eq!(vals, pairs.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>());
        assert!(!c.mset_nx::<_, _, bool>(&[("key1", "x"), ("fresh", "y")]).unwrap());
        assert_eq!(c.get::<_, Option<String>>("fresh").unwrap(), None);
    });
}

/// Writers MSET many keys to one value each round while a reader MGETs
/// them: with the keys' shards locked together, a reader never sees a mix.
#[test]
fn mset_is_atomic_across_shards() {
    let s = TestServer::start(2);
    let keys: Vec<String> = (0..32).map(|i| format!("atomic:{i}")).collect();
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let keys = keys.clone();
            let mut c = s.conn();
            std::thread::spawn(move || {
                for round in 0..300 {
                    let v = format!("{w}-{round}");
                    let pairs: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), v.as_str())).collect();
                    let _: () = c.mset(&pairs).unwrap();
                }
            })
        })
        .collect();
    let mut c = s.conn();
    for _ in 0..300 {
        let vals: Vec<Option<String>> = c.mget(&keys).unwrap();
        if vals[0].is_some() {
            assert!(vals.iter().all(|v| *v == vals[0]), "torn MSET: {vals:?}");
        }
    }
    for w in writers {
        w.join().unwrap();
    }
}

#[test]
fn append_strlen() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"APPEND", b"k", b"hello"], b":5\r\n");
        r.roundtrip(&[b"APPEND", b"k", b" world"], b":11\r\n");
        r.roundtrip(&[b"APPEND", b"k", b""], b":11\r\n");
        r.roundtrip(&[b"GET", b"k"], &bulk("hello world"));
        r.roundtrip(&[b"STRLEN", b"k"], b":11\r\n");
        r.roundtrip(&[b"STRLEN", b"missing"], b":0\r\n");
        r.roundtrip(&[b"SET", b"n", b"-123"], OK);
        r.roundtrip(&[b"STRLEN", b"n"], b":4\r\n");
        r.roundtrip(&[b"APPEND", b"n", b"4"], b":5\r\n");
        r.roundtrip(&[b"INCR", b"n"], b":-1233\r\n");
        r.roundtrip(&[b"APPEND", b"k"], b"-ERR wrong number of arguments for 'append' command\r\n");
        r.roundtrip(&[b"STRLEN"], b"-ERR wrong number of arguments for 'strlen' command\r\n");

        let mut c = s.conn();
        let mut want = String::new();
        for i in 0..200 {
            let part = format!("{i},");
            want.push_str(&part);
            assert_eq!(c.append::<_, _, usize>("grow", &part).unwrap(), want.len());
        }
        assert_eq!(c.get::<_, String>("grow").unwrap(), want);
        assert_eq!(c.strlen::<_, usize>("grow").unwrap(), want.len());
    });
}

#[test]
fn getrange_substr() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"k", b"This is a string"], OK);
        for (cmd, start, end, want) in [
            (&b"GETRANGE"[..], &b"0"[..], &b"3"[..], "This"),
            (b"GETRANGE", b"-3", b"-1", "ing"),
            (b"GETRANGE", b"0", b"-1", "This is a string"),
            (b"GETRANGE", b"10", b"100", "string"),
            (b"GETRANGE", b"5", b"3", ""),
            (b"GETRANGE", b"-1", b"-5", ""),
            (b"GETRANGE", b"100", b"200", ""),
            // Redis 7.4 clamps an end before the string's start to 0.
            (b"GETRANGE", b"0", b"-100", "T"),
            (b"GETRANGE", b"-100", b"-99", "T"),
            (b"GETRANGE", b"1", b"-100", ""),
            (b"GETRANGE", b"-9223372036854775808", b"9223372036854775807", "This is a string"),
            (b"SUBSTR", b"0", b"3", "This"),
            (b"SUBSTR", b"-6", b"-1", "string"),
        ] {
            r.roundtrip(&[cmd, b"k", start, end], &bulk(want));
        }
        r.roundtrip(&[b"GETRANGE", b"missing", b"0", b"-1"], b"$0\r\n\r\n");
        r.roundtrip(&[b"SET", b"n", b"1234"], OK);
        r.roundtrip(&[b"GETRANGE", b"n", b"1", b"2"], &bulk("23"));
        r.roundtrip(&[b"GETRANGE", b"k", b"a", b"1"], NOT_INT);
        r.roundtrip(&[b"GETRANGE", b"missing", b"0", b"1.5"], NOT_INT);
        r.roundtrip(&[b"SUBSTR", b"k", b"0"], b"-ERR wrong number of arguments for 'substr' command\r\n");
        r.roundtrip(&[b"GETRANGE", b"k", b"0"], b"-ERR wrong number of arguments for 'getrange' command\r\n");

        let mut c = s.conn();
        assert_eq!(c.getrange::<_, String>("k", 5, 6).unwrap(), "is");
    });
}

#[test]
fn setrange() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"k", b"Hello World"], OK);
        r.roundtrip(&[b"SETRANGE", b"k", b"6", b"Redis"], b":11\r\n");
        r.roundtrip(&[b"GET", b"k"], &bulk("Hello Redis"));
        r.roundtrip(&[b"SETRANGE", b"k", b"11", b"!"], b":12\r\n");
        r.roundtrip(&[b"SETRANGE", b"k", b"0", b""], b":12\r\n");
        r.roundtrip(&[b"SETRANGE", b"k", b"100", b""], b":12\r\n");
        r.roundtrip(&[b"SETRANGE", b"pad", b"3", b"ab"], b":5\r\n");
        r.roundtrip(&[b"GET", b"pad"], b"$5\r\n\0\0\0ab\r\n");
        // Nothing to write on a missing key: 0, and no key is created.
        r.roundtrip(&[b"SETRANGE", b"none", b"5", b""], b":0\r\n");
        r.roundtrip(&[b"GET", b"none"], NIL);
        r.roundtrip(&[b"SET", b"n", b"1234"], OK);
        r.roundtrip(&[b"SETRANGE", b"n", b"1", b"9"], b":4\r\n");
        r.roundtrip(&[b"INCR", b"n"], b":1935\r\n");
        r.roundtrip(&[b"SETRANGE", b"k", b"-1", b"x"], b"-ERR offset is out of range\r\n");
        r.roundtrip(&[b"SETRANGE", b"k", b"x", b"x"], NOT_INT);
        r.roundtrip(
            &[b"SETRANGE", b"k", b"9223372036854775807", b"x"],
            b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n",
        );
        r.roundtrip(
            &[b"SETRANGE", b"new", b"536870912", b"x"],
            b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n",
        );
        r.roundtrip(&[b"SETRANGE", b"k", b"0"], b"-ERR wrong number of arguments for 'setrange' command\r\n");

        let mut c = s.conn();
        assert_eq!(c.setrange::<_, _, usize>("k", 0, "J").unwrap(), 12);
        assert_eq!(c.get::<_, String>("k").unwrap(), "Jello Redis!");
    });
}

#[test]
fn proto_max_bulk_len_limits_appends() {
    for t in [1, 2] {
        let s = TestServer::start_with(t, &["--proto-max-bulk-len", "1mb"]);
        let mut r = s.raw();
        let too_long = b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
        r.roundtrip(&[b"SETRANGE", b"k", b"1048575", b"x"], b":1048576\r\n");
        r.roundtrip(&[b"APPEND", b"k", b"y"], too_long);
        r.roundtrip(&[b"APPEND", b"k", b""], b":1048576\r\n");
        r.roundtrip(&[b"SETRANGE", b"k", b"1048575", b"xy"], too_long);
        r.roundtrip(&[b"SETRANGE", b"k2", b"1048576", b"x"], too_long);
        r.roundtrip(&[b"GET", b"k2"], NIL);
        r.roundtrip(&[b"STRLEN", b"k"], b":1048576\r\n");
        // LCS's table of (601 * 601) u32 cells is over 1 MiB.
        let a = vec![b'a'; 600];
        r.roundtrip(&[b"MSET", b"l1", &a, b"l2", &a], OK);
        r.roundtrip(
            &[b"LCS", b"l1", b"l2", b"LEN"],
            b"-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n",
        );
        r.roundtrip(&[b"LCS", b"l1", b"missing", b"LEN"], b":0\r\n");
    }
}

#[test]
fn incr_decr_family() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"INCR", b"n"], b":1\r\n");
        r.roundtrip(&[b"INCRBY", b"n", b"10"], b":11\r\n");
        r.roundtrip(&[b"DECR", b"n"], b":10\r\n");
        r.roundtrip(&[b"DECRBY", b"n", b"15"], b":-5\r\n");
        r.roundtrip(&[b"DECRBY", b"n", b"-5"], b":0\r\n");
        r.roundtrip(&[b"DECR", b"fresh"], b":-1\r\n");
        r.roundtrip(&[b"INCRBY", b"fresh2", b"-7"], b":-7\r\n");
        r.roundtrip(&[b"GET", b"n"], &bulk("0"));
        r.roundtrip(&[b"SET", b"n", b"9223372036854775806"], OK);
        r.roundtrip(&[b"INCR", b"n"], b":9223372036854775807\r\n");
        r.roundtrip(&[b"INCR", b"n"], b"-ERR increment or decrement would overflow\r\n");
        r.roundtrip(&[b"SET", b"n", b"-9223372036854775808"], OK);
        r.roundtrip(&[b"DECR", b"n"], b"-ERR increment or decrement would overflow\r\n");
        r.roundtrip(&[b"INCRBY", b"n", b"-1"], b"-ERR increment or decrement would overflow\r\n");
        r.roundtrip(&[b"DECRBY", b"x", b"-9223372036854775808"], b"-ERR decrement would overflow\r\n");
        r.roundtrip(&[b"INCRBY", b"x", b"9223372036854775808"], NOT_INT);
        r.roundtrip(&[b"INCRBY", b"x", b"1.0"], NOT_INT);
        r.roundtrip(&[b"DECRBY", b"x", b"abc"], NOT_INT);
        for bad in [&b"abc"[..], b" 1", b"1 ", b"01", b"+1", b"1.5", b"", b"99999999999999999999"] {
            r.roundtrip(&[b"SET", b"s", bad], OK);
            r.roundtrip(&[b"INCR", b"s"], NOT_INT);
        }
        // A raw string that spells an integer is fine.
        r.roundtrip(&[b"SET", b"s", b"1"], OK);
        r.roundtrip(&[b"APPEND", b"s", b"0"], b":2\r\n");
        r.roundtrip(&[b"INCR", b"s"], b":11\r\n");
        r.roundtrip(&[b"INCR", b"a", b"b"], b"-ERR wrong number of arguments for 'incr' command\r\n");
        r.roundtrip(&[b"INCRBY", b"a"], b"-ERR wrong number of arguments for 'incrby' command\r\n");

        let mut c = s.conn();
        assert_eq!(c.incr::<_, _, i64>("c", 5).unwrap(), 5);
        assert_eq!(c.decr::<_, _, i64>("c", 2).unwrap(), 3);
        assert_eq!(c.get::<_, i64>("c").unwrap(), 3);
    });
}

#[test]
fn incrbyfloat() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"SET", b"f", b"10.50"], OK);
        r.roundtrip(&[b"INCRBYFLOAT", b"f", b"0.1"], &bulk("10.6"));
        r.roundtrip(&[b"INCRBYFLOAT", b"f", b"-5"], &bulk("5.6"));
        r.roundtrip(&[b"SET", b"f", b"5.0e3"], OK);
        r.roundtrip(&[b"INCRBYFLOAT", b"f", b"2.0e2"], &bulk("5200"));
        r.roundtrip(&[b"INCRBYFLOAT", b"z", b"0.1"], &bulk("0.1"));
        r.roundtrip(&[b"INCRBYFLOAT", b"z", b"0.2"], &bulk("0.3"));
        r.roundtrip(&[b"INCRBYFLOAT", b"z", b"-0.3"], &bulk("0"));
        r.roundtrip(&[b"INCRBYFLOAT", b"h", b"0x10"], &bulk("16"));
        r.roundtrip(&[b"INCRBYFLOAT", b"h", b"+1e1"], &bulk("26"));
        r.roundtrip(&[b"SET", b"i", b"4999"], OK);
        r.roundtrip(&[b"INCRBYFLOAT", b"i", b"1"], &bulk("5000"));
        r.roundtrip(&[b"INCR", b"i"], b":5001\r\n");
        // Long double headroom: beyond f64's range without overflowing.
        r.roundtrip(&[b"SET", b"big", b"1e308"], OK);
        r.cmd(&[b"INCRBYFLOAT", b"big", b"1e308"]);
        let two = "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096";
        r.expect(&bulk(two));
        let nan = b"-ERR increment would produce NaN or Infinity\r\n";
        let not_float = b"-ERR value is not a valid float\r\n";
        r.roundtrip(&[b"INCRBYFLOAT", b"f", b"inf"], nan);
        r.roundtrip(&[b"INCRBYFLOAT", b"f", b"-Infinity"], nan);
        r.roundtrip(&[b"INCRBYFLOAT", b"f", b"1e4933"], not_float);
        for bad in [&b"nan"[..], b"abc", b" 1", b"1 ", b"", b"1e", b"0x"] {
            r.roundtrip(&[b"INCRBYFLOAT", b"f", bad], not_float);
        }
        r.roundtrip(&[b"SET", b"s", b"abc"], OK);
        r.roundtrip(&[b"INCRBYFLOAT", b"s", b"1"], not_float);
        r.roundtrip(&[b"GET", b"f"], &bulk("5200"));
        r.roundtrip(&[b"INCRBYFLOAT", b"f"], b"-ERR wrong number of arguments for 'incrbyfloat' command\r\n");

        let mut c = s.conn();
        assert_eq!(c.incr::<_, _, f64>("fl", 1.5).unwrap(), 1.5);
        assert_eq!(c.incr::<_, _, f64>("fl", 0.25).unwrap(), 1.75);
        assert_eq!(c.get::<_, String>("fl").unwrap(), "1.75");
    });
}

/// Writes that keep the TTL keep it, and those that clear it clear it: each
/// key gets the same short TTL as a witness, and once the witness is gone
/// so must the keepers be, while the others stay.
#[test]
fn ttl_kept_or_cleared() {
    each_threads(|s| {
        let mut c = s.conn();
        let keep = ["keepttl", "incr", "incrbyfloat", "append", "setrange", "getex"];
        let clear = ["set", "getset", "persist", "setnx-later"];
        for k in keep.iter().chain(clear.iter()) {
            let _: () = c.pset_ex(*k, "1", 80).unwrap();
        }
        let _: () = c.pset_ex("witness", "1", 80).unwrap();
        let _: () = redis::cmd("SET").arg("keepttl").arg("2").arg("KEEPTTL").query(&mut c).unwrap();
        let _: i64 = c.incr("incr", 1).unwrap();
        let _: f64 = c.incr("incrbyfloat", 1.5).unwrap();
        let _: usize = c.append("append", "x").unwrap();
        let _: usize = c.setrange("setrange", 3, "x").unwrap();
        let _: String = redis::cmd("GETEX").arg("getex").query(&mut c).unwrap();
        let _: () = c.set("set", "2").unwrap();
        let _: String = c.getset("getset", "2").unwrap();
        let _: String = redis::cmd("GETEX").arg("persist").arg("PERSIST").query(&mut c).unwrap();
        let _: () = c.set("setnx-later", "2").unwrap();
        wait_gone(&mut c, "witness");
        for k in keep {
            wait_gone(&mut c, k);
        }
        for k in clear {
            assert!(c.get::<_, Option<String>>(k).unwrap().is_some(), "{k} lost its value");
        }
    });
}

#[test]
fn lcs() {
    each_threads(|s| {
        let mut r = s.raw();
        r.roundtrip(&[b"MSET", b"key1", b"ohmytext", b"key2", b"mynewtext"], OK);
        r.roundtrip(&[b"LCS", b"key1", b"key2"], &bulk("mytext"));
        r.roundtrip(&[b"LCS", b"key1", b"key2", b"LEN"], b":6\r\n");
        r.roundtrip(
            &[b"LCS", b"key1", b"key2", b"IDX"],
            b"*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n",
        );
        r.roundtrip(
            &[b"LCS", b"key1", b"key2", b"IDX", b"MINMATCHLEN", b"4", b"WITHMATCHLEN"],
            b"*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n",
        );
        r.roundtrip(
            &[b"LCS", b"key1", b"key2", b"idx", b"withmatchlen", b"minmatchlen", b"-3"],
            b"*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n",
        );
        r.roundtrip(&[b"LCS", b"key1", b"missing"], b"$0\r\n\r\n");
        r.roundtrip(&[b"LCS", b"missing", b"missing2", b"IDX"], b"*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n");
        r.roundtrip(
            &[b"LCS", b"key1", b"key2", b"IDX", b"LEN"],
            b"-ERR If you want both the length and indexes, please just use IDX.\r\n",
        );
        r.roundtrip(&[b"LCS", b"key1", b"key2", b"FOO"], SYNTAX);
        r.roundtrip(&[b"LCS", b"key1", b"key2", b"MINMATCHLEN"], SYNTAX);
        r.roundtrip(&[b"LCS", b"key1", b"key2", b"MINMATCHLEN", b"x"], NOT_INT);
        r.roundtrip(&[b"LCS", b"key1"], b"-ERR wrong number of arguments for 'lcs' command\r\n");

        // RESP3: a map.
        r.cmd(&[b"HELLO", b"3"]);
        r.cmd(&[b"ECHO", b"mark"]);
        let mut seen = Vec::new();
        while !seen.ends_with(b"$4\r\nmark\r\n") {
            seen.extend(r.read_n(1));
        }
        r.roundtrip(
            &[b"LCS", b"key1", b"key2", b"IDX", b"MINMATCHLEN", b"3"],
            b"%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n$3\r\nlen\r\n:6\r\n",
        );

        let mut c = s.conn();
        let _: () = c.mset(&[("a", "GAC"), ("b", "AGCAT")]).unwrap();
        let v: String = redis::cmd("LCS").arg("a").arg("b").query(&mut c).unwrap();
        assert_eq!(v, "AC");
    });
}

/// The keyspace's own bytes as INFO reports them (`used_memory_dataset`:
/// tables, items and boxed values, without client buffers).
fn dataset_memory(c: &mut redis::Connection) -> i64 {
    let info: String = redis::cmd("INFO").arg("memory").query(c).unwrap();
    info.lines().find_map(|l| l.strip_prefix("used_memory_dataset:")).unwrap().trim().parse().unwrap()
}

/// A string moves between the forms a key can hold it in — bytes in the
/// key's own item, an integer, a growable buffer after APPEND/SETRANGE, a
/// new value from INCRBYFLOAT — and every move keeps the TTL, reports the
/// encoding Redis would, and gives the memory back when the key goes.
#[test]
fn value_forms_keep_ttl_encoding_and_memory() {
    each_threads(|s| {
        let mut c = s.conn();
        // The first round leaves what any first use of a shard does (its
        // first bucket array); a second round must leave nothing more.
        let first = value_forms_round(&mut c);
        let second = value_forms_round(&mut c);
        assert_eq!(first, second, "memory not given back");
    });
}

/// One round of [`value_forms_keep_ttl_encoding_and_memory`]; returns
/// the keyspace's bytes once its keys are deleted.
fn value_forms_round(c: &mut redis::Connection) -> i64 {
        {
        let enc = |c: &mut redis::Connection, k: &str| -> String { redis::cmd("OBJECT").arg("ENCODING").arg(k).query(c).unwrap() };
        let ttl = |c: &mut redis::Connection, k: &str| -> i64 { c.ttl(k).unwrap() };

        let _: () = redis::cmd("SET").arg("k").arg("hello").arg("EX").arg(1000).query(c).unwrap();
        assert_eq!(enc(c, "k"), "embstr");
        let n: i64 = c.append("k", " world").unwrap();
        assert_eq!(n, 11);
        assert_eq!(enc(c, "k"), "raw");
        assert!(ttl(c, "k") > 990);
        let n: i64 = redis::cmd("SETRANGE").arg("k").arg(6).arg("there").query(c).unwrap();
        assert_eq!(n, 11);
        assert_eq!(c.get::<_, String>("k").unwrap(), "hello there");
        let n: i64 = c.append("k", "!".repeat(100)).unwrap();
        assert_eq!(n, 111);

        let _: () = redis::cmd("SET").arg("n").arg("10").arg("PX").arg(1_000_000).query(c).unwrap();
        assert_eq!(enc(c, "n"), "int");
        let v: i64 = c.incr("n", 5).unwrap();
        assert_eq!(v, 15);
        let v: f64 = redis::cmd("INCRBYFLOAT").arg("n").arg("0.5").query(c).unwrap();
        assert_eq!(v, 15.5);
        assert_eq!(enc(c, "n"), "embstr");
        assert!(ttl(c, "n") > 990);
        assert_eq!(c.incr::<_, _, i64>("n", 1).unwrap_err().code(), Some("ERR"));
        let _: () = c.set("n", "41").unwrap();
        let v: i64 = c.incr("n", 1).unwrap();
        assert_eq!((v, enc(c, "n")), (42, "int".to_string()));
        assert_eq!(ttl(c, "n"), -1);
        // An APPENDed integer is bytes again.
        let n: i64 = c.append("n", "x").unwrap();
        assert_eq!((n, c.get::<_, String>("n").unwrap()), (3, "42x".to_string()));

        let long = "v".repeat(100);
        let _: () = c.set("w", &long).unwrap();
        assert_eq!(enc(c, "w"), "raw");
        assert_eq!(c.get::<_, String>("w").unwrap(), long);
        let _: () = redis::cmd("COPY").arg("w").arg("w2").query(c).unwrap();
        let _: () = c.rename("w2", "w3").unwrap();
        assert_eq!(c.get::<_, String>("w3").unwrap(), long);
        let _: () = c.rename("k", "k2").unwrap();
        assert_eq!(c.get::<_, String>("k2").unwrap(), format!("hello there{}", "!".repeat(100)));
        assert!(ttl(c, "k2") > 990);

        let _: () = c.del(&["k2", "n", "w", "w3"]).unwrap();
    }
    dataset_memory(c)
}
