//! Black-box tests of the hash family: exact bytes on a raw socket for
//! errors and edge replies (checked against redis-server 7.0 for the
//! commands it has, against Redis 7.4/8.0's documented replies for field
//! expiration), and the `redis` crate for ordinary use, at 1 and 2 worker
//! threads.
mod common;
use common::*;

use std::collections::{HashMap, HashSet};

use redis::Commands;

const NOT_INT: &[u8] = b"-ERR value is not an integer or out of range\r\n";
const SYNTAX: &[u8] = b"-ERR syntax error\r\n";

fn ints(v: &[i64]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", v.len()).into_bytes();
    for n in v {
        out.extend_from_slice(format!(":{n}\r\n").as_bytes());
    }
    out
}

#[test]
fn basic_commands_with_client() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = c.hset_multiple("h", &[("a", "1"), ("b", "2"), ("c", "3")]).unwrap();
        assert_eq!(c.hget::<_, _, String>("h", "a").unwrap(), "1");
        assert_eq!(c.hget::<_, _, Option<String>>("h", "zz").unwrap(), None);
        assert_eq!(c.hlen::<_, i64>("h").unwrap(), 3);
        let all: HashMap<String, String> = c.hgetall("h").unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all["b"], "2");
        let vals: Vec<Option<String>> =
            redis::cmd("HMGET").arg("h").arg("c").arg("nope").arg("a").query(&mut c).unwrap();
        assert_eq!(vals, vec![Some("3".into()), None, Some("1".into())]);
        assert!(c.hexists::<_, _, bool>("h", "a").unwrap());
        assert_eq!(c.hincr::<_, _, _, i64>("h", "a", 41).unwrap(), 42);
        let f: f64 = c.hincr("h", "f", 1.5).unwrap();
        assert_eq!(f, 1.5);
        assert_eq!(c.hdel::<_, _, i64>("h", &["a", "b", "nope"]).unwrap(), 2);
        let mut keys: Vec<String> = c.hkeys("h").unwrap();
        keys.sort();
        assert_eq!(keys, vec!["c", "f"]);
        let bin = b"bin\0ary\r\n".as_slice();
        let _: () = c.hset("h", bin, bin).unwrap();
        assert_eq!(c.hget::<_, _, Vec<u8>>("h", bin).unwrap(), bin);
        assert_eq!(c.hdel::<_, _, i64>("h", &["c", "f"]).unwrap(), 2);
        assert_eq!(c.hdel::<_, _, i64>("h", bin).unwrap(), 1);
        assert!(!c.exists::<_, bool>("h").unwrap());
    });
}

#[test]
fn basic_replies_and_errors() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "HSET h a 1 b 2", b":2\r\n");
        rt(&mut r, "HSET h a 1 c 3 c 4", b":1\r\n");
        rt(&mut r, "HGET h c", b"$1\r\n4\r\n");
        rt(&mut r, "HSET h a", b"-ERR wrong number of arguments for 'hset' command\r\n");
        rt(&mut r, "HSET h a 1 b", b"-ERR wrong number of arguments for 'hset' command\r\n");
        rt(&mut r, "HMSET h a 5", OK);
        rt(&mut r, "HMSET h a", b"-ERR wrong number of arguments for 'hmset' command\r\n");
        rt(&mut r, "HSETNX h a 9", b":0\r\n");
        rt(&mut r, "HSETNX h d 9", b":1\r\n");
        rt(&mut r, "HMGET nokey a b", b"*2\r\n$-1\r\n$-1\r\n");
        rt(&mut r, "HGETALL nokey", b"*0\r\n");
        rt(&mut r, "HKEYS nokey", b"*0\r\n");
        rt(&mut r, "HVALS nokey", b"*0\r\n");
        rt(&mut r, "HLEN nokey", b":0\r\n");
        rt(&mut r, "HEXISTS nokey a", b":0\r\n");
        rt(&mut r, "HSTRLEN h a", b":1\r\n");
        rt(&mut r, "HSTRLEN h zz", b":0\r\n");
        rt(&mut r, "HGET nokey a", NIL);
        rt(&mut r, "HDEL nokey a", b":0\r\n");
        rt(&mut r, "HINCRBY h a x", NOT_INT);
        rt(&mut r, "HINCRBY h a 9223372036854775807", b"-ERR increment or decrement would overflow\r\n");
        rt(&mut r, "HSET h s abc", b":1\r\n");
        rt(&mut r, "HINCRBY h s 1", b"-ERR hash value is not an integer\r\n");
        rt(&mut r, "HINCRBYFLOAT h s 1", b"-ERR hash value is not a float\r\n");
        rt(&mut r, "HINCRBYFLOAT h a abc", b"-ERR value is not a valid float\r\n");
        rt(&mut r, "HINCRBYFLOAT h a inf", b"-ERR value is NaN or Infinity\r\n");
        rt(&mut r, "HINCRBYFLOAT h a 1.5", b"$3\r\n6.5\r\n");
        rt(&mut r, "HINCRBYFLOAT h n 3.0e3", b"$4\r\n3000\r\n");
        rt(&mut r, "HINCRBYFLOAT h n -0.1", b"$22\r\n2999.89999999999999991\r\n");
        rt(&mut r, "HINCRBYFLOAT h q 1e5000", b"-ERR value is not a valid float\r\n");
        rt(&mut r, "HINCRBY newh f -5", b":-5\r\n");
        rt(&mut r, "TYPE newh", b"+hash\r\n");
    });
}

#[test]
fn wrongtype_both_ways() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "SET s x", OK);
        rt(&mut r, "HSET h a 1", b":1\r\n");
        for cmd in [
            "HSET s a 1",
            "HMSET s a 1",
            "HSETNX s a 1",
            "HGET s a",
            "HMGET s a",
            "HGETALL s",
            "HDEL s a",
            "HLEN s",
            "HEXISTS s a",
            "HSTRLEN s a",
            "HINCRBY s a 1",
            "HINCRBYFLOAT s a 1",
            "HKEYS s",
            "HVALS s",
            "HRANDFIELD s",
            "HRANDFIELD s 2",
            "HSCAN s 0",
            "HGETDEL s FIELDS 1 a",
            "HGETEX s FIELDS 1 a",
            "HSETEX s FIELDS 1 a b",
            "HEXPIRE s 10 FIELDS 1 a",
            "HPEXPIRE s 10 FIELDS 1 a",
            "HEXPIREAT s 10 FIELDS 1 a",
            "HPEXPIREAT s 10 FIELDS 1 a",
            "HTTL s FIELDS 1 a",
            "HPTTL s FIELDS 1 a",
            "HEXPIRETIME s FIELDS 1 a",
            "HPEXPIRETIME s FIELDS 1 a",
            "HPERSIST s FIELDS 1 a",
            "GET h",
            "APPEND h x",
            "INCR h",
            "STRLEN h",
            "GETRANGE h 0 1",
            "SETRANGE h 0 x",
            "GETDEL h",
            "GETEX h",
        ] {
            rt(&mut r, cmd, WRONGTYPE);
        }
        rt(&mut r, "MGET h s", b"*2\r\n$-1\r\n$1\r\nx\r\n");
    });
}

#[test]
fn generic_key_commands_see_hashes() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "HSET h a 1 b 2", b":2\r\n");
        rt(&mut r, "TYPE h", b"+hash\r\n");
        rt(&mut r, "OBJECT ENCODING h", b"$8\r\nlistpack\r\n");
        rt(&mut r, "COPY h h2", b":1\r\n");
        rt(&mut r, "HSET h2 a changed", b":0\r\n");
        rt(&mut r, "HGET h a", b"$1\r\n1\r\n");
        rt(&mut r, "RENAME h2 h3", OK);
        rt(&mut r, "HGET h3 a", b"$7\r\nchanged\r\n");
        rt(&mut r, "MOVE h3 1", b":1\r\n");
        rt(&mut r, "EXISTS h3", b":0\r\n");
        rt(&mut r, "SELECT 1", OK);
        rt(&mut r, "HGETALL h3", &bulks(&["a", "changed", "b", "2"]));
        rt(&mut r, "SELECT 0", OK);
        rt(&mut r, "SET s v", OK);
        rt(&mut r, "SCAN 0 TYPE hash", &[b"*2\r\n$1\r\n0\r\n".as_slice(), &bulks(&["h"])].concat());
        rt(&mut r, "EXPIRE h 100", b":1\r\n");
        rt(&mut r, "TTL h", b":100\r\n");
        rt(&mut r, "DEL h", b":1\r\n");
        rt(&mut r, "EXISTS h", b":0\r\n");
    });
}

#[test]
fn encoding_converts_at_thresholds() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "CONFIG GET hash-max-listpack-entries", &bulks(&["hash-max-listpack-entries", "512"]));
        rt(&mut r, "CONFIG SET hash-max-ziplist-entries 3", OK);
        rt(&mut r, "CONFIG GET hash-max-listpack-entries", &bulks(&["hash-max-listpack-entries", "3"]));
        rt(&mut r, "HSET h a 1 b 2 c 3", b":3\r\n");
        rt(&mut r, "OBJECT ENCODING h", b"$8\r\nlistpack\r\n");
        rt(&mut r, "HSET h d 4", b":1\r\n");
        rt(&mut r, "OBJECT ENCODING h", b"$9\r\nhashtable\r\n");
        rt(&mut r, "HDEL h a b c", b":3\r\n");
        // Never converted back, as in Redis.
        rt(&mut r, "OBJECT ENCODING h", b"$9\r\nhashtable\r\n");
        // Four pairs in one HSET convert even if they repeat a field.
        rt(&mut r, "HSET g a 1 a 2 a 3 a 4", b":1\r\n");
        rt(&mut r, "OBJECT ENCODING g", b"$9\r\nhashtable\r\n");
        rt(&mut r, "CONFIG SET hash-max-listpack-value 4", OK);
        rt(&mut r, "HSET v a 1234", b":1\r\n");
        rt(&mut r, "OBJECT ENCODING v", b"$8\r\nlistpack\r\n");
        rt(&mut r, "HSET v b 12345", b":1\r\n");
        rt(&mut r, "OBJECT ENCODING v", b"$9\r\nhashtable\r\n");
        rt(&mut r, "HSET w abcde 1", b":1\r\n");
        rt(&mut r, "OBJECT ENCODING w", b"$9\r\nhashtable\r\n");
        rt(&mut r, "HINCRBYFLOAT x f 1.2345", b"$6\r\n1.2345\r\n");
        rt(&mut r, "OBJECT ENCODING x", b"$9\r\nhashtable\r\n");
        rt(&mut r, "CONFIG SET hash-max-listpack-value 64", OK);
        rt(&mut r, "CONFIG SET hash-max-listpack-entries 512", OK);
    });
}

#[test]
fn large_hash_scan_and_random() {
    each_threads(|s| {
        let mut c = s.conn();
        let pairs: Vec<(String, String)> = (0..1000).map(|i| (format!("f{i}"), format!("v{i}"))).collect();
        let _: () = c.hset_multiple("big", &pairs).unwrap();
        let enc: String = redis::cmd("OBJECT").arg("ENCODING").arg("big").query(&mut c).unwrap();
        assert_eq!(enc, "hashtable");
        let mut seen = HashSet::new();
        let mut cursor = 0u64;
        loop {
            let (next, items): (u64, Vec<String>) =
                redis::cmd("HSCAN").arg("big").arg(cursor).arg("COUNT").arg(50).query(&mut c).unwrap();
            for kv in items.chunks(2) {
                assert_eq!(kv[1], format!("v{}", &kv[0][1..]));
                seen.insert(kv[0].clone());
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 1000);
        let (_, items): (u64, Vec<String>) = redis::cmd("HSCAN")
            .arg("big")
            .arg(0)
            .arg("MATCH")
            .arg("f99*")
            .arg("NOVALUES")
            .arg("COUNT")
            .arg(100_000)
            .query(&mut c)
            .unwrap();
        let mut items = items;
        items.sort();
        assert_eq!(items, vec!["f99", "f990", "f991", "f992", "f993", "f994", "f995", "f996", "f997", "f998", "f999"]);
        let picked: Vec<String> = redis::cmd("HRANDFIELD").arg("big").arg(20).query(&mut c).unwrap();
        assert_eq!(picked.iter().collect::<HashSet<_>>().len(), 20);
        let picked: Vec<String> = redis::cmd("HRANDFIELD").arg("big").arg(-3000).query(&mut c).unwrap();
        assert_eq!(picked.len(), 3000);
        let picked: Vec<String> = redis::cmd("HRANDFIELD").arg("big").arg(900).arg("WITHVALUES").query(&mut c).unwrap();
        assert_eq!(picked.len(), 1800);
        assert_eq!(picked.chunks(2).map(|p| p[0].clone()).collect::<HashSet<_>>().len(), 900);
        let one: String = redis::cmd("HRANDFIELD").arg("big").query(&mut c).unwrap();
        assert!(one.starts_with('f'));
    });
}

#[test]
fn hrandfield_and_hscan_replies() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "HRANDFIELD nokey", NIL);
        rt(&mut r, "HRANDFIELD nokey 3", b"*0\r\n");
        rt(&mut r, "HSET h a 1 b 2", b":2\r\n");
        rt(&mut r, "HRANDFIELD h 0", b"*0\r\n");
        rt(&mut r, "HRANDFIELD h 5", &bulks(&["a", "b"]));
        rt(&mut r, "HRANDFIELD h 5 WITHVALUES", &bulks(&["a", "1", "b", "2"]));
        rt(&mut r, "HRANDFIELD h 1 withvalue", SYNTAX);
        rt(&mut r, "HRANDFIELD h 1 withvalues x", SYNTAX);
        rt(&mut r, "HRANDFIELD h x", NOT_INT);
        rt(
            &mut r,
            "HRANDFIELD h -9223372036854775808",
            b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n",
        );
        // With values the reply holds two entries a field: a count past
        // LONG_MAX / 2 either way is refused, even for a missing key.
        rt(&mut r, "HRANDFIELD h 4611686018427387903 WITHVALUES", &bulks(&["a", "1", "b", "2"]));
        for count in ["4611686018427387904", "-4611686018427387904", "9223372036854775807"] {
            rt(&mut r, &format!("HRANDFIELD h {count} WITHVALUES"), b"-ERR value is out of range\r\n");
            rt(&mut r, &format!("HRANDFIELD nokey {count} WITHVALUES"), b"-ERR value is out of range\r\n");
        }
        rt(&mut r, "HSCAN h 0", &[b"*2\r\n$1\r\n0\r\n".as_slice(), &bulks(&["a", "1", "b", "2"])].concat());
        rt(&mut r, "HSCAN h 0 NOVALUES", &[b"*2\r\n$1\r\n0\r\n".as_slice(), &bulks(&["a", "b"])].concat());
        rt(&mut r, "HSCAN h 0 MATCH b", &[b"*2\r\n$1\r\n0\r\n".as_slice(), &bulks(&["b", "2"])].concat());
        rt(&mut r, "HSCAN h 0 COUNT 0", SYNTAX);
        rt(&mut r, "HSCAN h 0 COUNT x", NOT_INT);
        rt(&mut r, "HSCAN h 0 foo", SYNTAX);
        rt(&mut r, "HSCAN h x", b"-ERR invalid cursor\r\n");
        rt(&mut r, "HSCAN nokey 0 COUNT 0", b"*2\r\n$1\r\n0\r\n*0\r\n");
    });
}

#[test]
fn resp3_shapes() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = c.hset_multiple("h", &[("a", "1"), ("b", "2")]).unwrap();
        let mut r = s.raw();
        r.cmd(&[b"HELLO", b"3"]);
        // Drain the HELLO map: send a PING and read until its reply.
        r.cmd(&[b"PING"]);
        let mut buf = Vec::new();
        while !buf.ends_with(b"+PONG\r\n") {
            buf.extend(r.read_n(1));
        }
        rt(&mut r, "HGETALL h", b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
        rt(&mut r, "HGETALL nokey", b"%0\r\n");
        rt(&mut r, "HRANDFIELD h 2 WITHVALUES", b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
        rt(&mut r, "HGET h zz", b"_\r\n");
    });
}

#[test]
fn field_expiration_errors() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "HSET h a 1", b":1\r\n");
        rt(&mut r, "HEXPIRE h -1 FIELDS 1 a", b"-ERR invalid expire time, must be >= 0\r\n");
        rt(&mut r, "HEXPIRE h x FIELDS 1 a", NOT_INT);
        rt(&mut r, "HEXPIRE h 281474976710 FIELDS 1 a", b"-ERR invalid expire time in 'hexpire' command\r\n");
        rt(&mut r, "HPEXPIRE h 281474976710656 FIELDS 1 a", b"-ERR invalid expire time in 'hpexpire' command\r\n");
        rt(&mut r, "HPEXPIREAT h 70368744177664 FIELDS 1 a", b"-ERR invalid expire time in 'hpexpireat' command\r\n");
        rt(&mut r, "HPEXPIREAT h 70368744177663 FIELDS 1 a", b"*1\r\n:1\r\n");
        rt(&mut r, "HPEXPIRE h 100 NX FIELDS 0 a", b"-ERR Parameter `numFields` should be greater than 0\r\n");
        rt(&mut r, "HPEXPIRE h 100 FIELDS x a", b"-ERR Parameter `numFields` should be greater than 0\r\n");
        rt(
            &mut r,
            "HPEXPIRE h 100 FIELDS 2 a",
            b"-ERR The `numfields` parameter must match the number of arguments\r\n",
        );
        rt(
            &mut r,
            "HPEXPIRE h 100 XX FIELD 1 a",
            b"-ERR Mandatory argument FIELDS is missing or not at the right position\r\n",
        );
        rt(&mut r, "HPEXPIRE h 100 FIELDS", b"-ERR wrong number of arguments for 'hpexpire' command\r\n");
        rt(&mut r, "HTTL h FIELDS 0 a", b"-ERR Number of fields must be a positive integer\r\n");
        rt(&mut r, "HTTL h FIELDS 2 a", b"-ERR The `numfields` parameter must match the number of arguments\r\n");
        rt(&mut r, "HTTL h FIELD 1 a", b"-ERR Mandatory argument FIELDS is missing or not at the right position\r\n");
        rt(&mut r, "HPERSIST h FIELDS -1 a", b"-ERR Number of fields must be a positive integer\r\n");
        rt(&mut r, "HGETDEL h FIELDS 0 a", b"-ERR Number of fields must be a positive integer\r\n");
        rt(&mut r, "HGETDEL h NOPE 1 a", b"-ERR Mandatory argument FIELDS is missing or not at the right position\r\n");
        rt(&mut r, "HGETEX h FIELDS 2 a", b"-ERR The `numfields` parameter must match the number of arguments\r\n");
        rt(&mut r, "HGETEX h PXAT 1 1", b"-ERR Mandatory argument FIELDS is missing or not at the right position\r\n");
        rt(
            &mut r,
            "HGETEX h PERSIST 1 FIELDS 1 a",
            b"-ERR Mandatory argument FIELDS is missing or not at the right position\r\n",
        );
        rt(&mut r, "HGETEX h EX bla FIELDS 1 a", NOT_INT);
        rt(&mut r, "HGETEX h PX -1 FIELDS 1 a", b"-ERR invalid expire time, must be >= 0\r\n");
        rt(&mut r, "HGETEX h EXAT 70368744178 FIELDS 1 a", b"-ERR invalid expire time in 'hgetex' command\r\n");
        rt(&mut r, "HSETEX h FIELDS 2 a b", b"-ERR wrong number of arguments for 'hsetex' command\r\n");
        rt(&mut r, "HSETEX h FIELDS 1 a b c", b"-ERR wrong number of arguments for 'hsetex' command\r\n");
        rt(&mut r, "HSETEX h NX FIELDS 1 a b", b"-ERR unknown argument\r\n");
        rt(&mut r, "HSETEX h FXX FNX FIELDS 1 a b", b"-ERR Only one of FXX or FNX arguments can be specified\r\n");
        rt(
            &mut r,
            "HSETEX h EX 1 KEEPTTL FIELDS 1 a b",
            b"-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n",
        );
        rt(
            &mut r,
            "HSETEX h PX 1 PX 1 FIELDS 1 a b",
            b"-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n",
        );
        rt(&mut r, "HSETEX h EX FIELDS 1 a b", NOT_INT);
        rt(&mut r, "HSETEX h FIELDS 0 a b", b"-ERR invalid number of fields\r\n");
        rt(&mut r, "HSETEX h FIELDS x a b", b"-ERR invalid number of fields\r\n");
        rt(&mut r, "HSETEX h EXAT -1 1 a b", b"-ERR invalid expire time, must be >= 0\r\n");
    });
}

#[test]
fn field_expiration_replies() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "HEXPIRE nokey 10 FIELDS 2 a b", &ints(&[-2, -2]));
        rt(&mut r, "HTTL nokey FIELDS 1 a", &ints(&[-2]));
        rt(&mut r, "HPERSIST nokey FIELDS 1 a", &ints(&[-2]));
        rt(&mut r, "HGETDEL nokey FIELDS 2 a b", b"*2\r\n$-1\r\n$-1\r\n");
        rt(&mut r, "HGETEX nokey EX 5 FIELDS 1 a", b"*1\r\n$-1\r\n");
        rt(&mut r, "HSET h f1 v1 f2 v2 f3 v3", b":3\r\n");
        rt(&mut r, "HTTL h FIELDS 2 f1 zz", &ints(&[-1, -2]));
        rt(&mut r, "HEXPIRE h 1000 NX FIELDS 2 f1 zz", &ints(&[1, -2]));
        rt(&mut r, "OBJECT ENCODING h", b"$10\r\nlistpackex\r\n");
        rt(&mut r, "HTTL h FIELDS 1 f1", &ints(&[1000]));
        rt(&mut r, "HEXPIRE h 1000 NX FIELDS 2 f1 f2", &ints(&[0, 1]));
        rt(&mut r, "HEXPIRE h 2000 XX FIELDS 2 f1 f3", &ints(&[1, 0]));
        rt(&mut r, "HEXPIRE h 1500 GT FIELDS 3 f1 f2 f3", &ints(&[0, 1, 0]));
        rt(&mut r, "HEXPIRE h 1200 LT FIELDS 3 f1 f2 f3", &ints(&[1, 1, 1]));
        rt(&mut r, "HPERSIST h FIELDS 3 f3 f3 zz", &ints(&[1, -1, -2]));
        rt(&mut r, "HEXPIREAT h 4102444800 FIELDS 1 f3", &ints(&[1]));
        rt(&mut r, "HEXPIRETIME h FIELDS 1 f3", &ints(&[4102444800]));
        rt(&mut r, "HPEXPIRETIME h FIELDS 1 f3", &ints(&[4102444800000]));
        rt(&mut r, "HPEXPIREAT h 1 FIELDS 2 f3 zz", &ints(&[2, -2]));
        rt(&mut r, "HEXISTS h f3", b":0\r\n");
        rt(&mut r, "HEXPIRE h 0 FIELDS 2 f1 f2", &ints(&[2, 2]));
        rt(&mut r, "EXISTS h", b":0\r\n");
        // HSET drops a field's TTL; HINCRBY keeps it.
        rt(&mut r, "HSET h a 1 b 2", b":2\r\n");
        rt(&mut r, "HEXPIRE h 100 FIELDS 2 a b", &ints(&[1, 1]));
        rt(&mut r, "HSET h a 5", b":0\r\n");
        rt(&mut r, "HINCRBY h b 1", b":3\r\n");
        rt(&mut r, "HTTL h FIELDS 2 a b", &ints(&[-1, 100]));
        // HGETEX sets, persists, and deletes with a past time.
        rt(&mut r, "HGETEX h EX 50 FIELDS 2 a zz", b"*2\r\n$1\r\n5\r\n$-1\r\n");
        rt(&mut r, "HTTL h FIELDS 1 a", &ints(&[50]));
        rt(&mut r, "HGETEX h PERSIST FIELDS 1 a", b"*1\r\n$1\r\n5\r\n");
        rt(&mut r, "HTTL h FIELDS 1 a", &ints(&[-1]));
        rt(&mut r, "HGETEX h PXAT 1 FIELDS 1 a", b"*1\r\n$1\r\n5\r\n");
        rt(&mut r, "HGETALL h", &bulks(&["b", "3"]));
        // HSETEX: FNX / FXX all or nothing, KEEPTTL, a plain set drops TTLs.
        rt(&mut r, "HSETEX h FNX EX 100 FIELDS 2 b 1 c 2", b":0\r\n");
        rt(&mut r, "HSETEX h FXX FIELDS 2 b 1 c 2", b":0\r\n");
        rt(&mut r, "HSETEX h FNX PX 100000 FIELDS 2 c 1 d 2", b":1\r\n");
        rt(&mut r, "HSETEX h KEEPTTL FXX FIELDS 2 c 7 d 8", b":1\r\n");
        rt(&mut r, "HTTL h FIELDS 3 b c d", &ints(&[100, 100, 100]));
        rt(&mut r, "HSETEX h FIELDS 1 c 9", b":1\r\n");
        rt(&mut r, "HTTL h FIELDS 2 c d", &ints(&[-1, 100]));
        rt(&mut r, "HSETEX nokey FXX FIELDS 1 a b", b":0\r\n");
        rt(&mut r, "EXISTS nokey", b":0\r\n");
        rt(&mut r, "HSETEX past EXAT 1 FIELDS 2 a 1 b 2", b":1\r\n");
        rt(&mut r, "EXISTS past", b":0\r\n");
        // HGETDEL: repeats, missing fields, and the last field deletes the key.
        rt(&mut r, "HGETDEL h FIELDS 4 c c zz b", b"*4\r\n$1\r\n9\r\n$-1\r\n$-1\r\n$1\r\n3\r\n");
        rt(&mut r, "HGETDEL h FIELDS 1 d", b"*1\r\n$1\r\n8\r\n");
        rt(&mut r, "EXISTS h", b":0\r\n");
    });
}

#[test]
fn expired_fields_vanish_and_hash_goes_with_the_last() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        rt(&mut r, "HSET h keep 1 gone 2", b":2\r\n");
        rt(&mut r, "HPEXPIRE h 30 FIELDS 1 gone", &ints(&[1]));
        wait_for("field gone", || !c.hexists::<_, _, bool>("h", "gone").unwrap());
        rt(&mut r, "HLEN h", b":1\r\n");
        rt(&mut r, "HGETALL h", &bulks(&["keep", "1"]));
        // A hash whose fields all expired is absent to every command at once.
        rt(&mut r, "HSETEX all PX 30 FIELDS 2 a 1 b 2", b":1\r\n");
        wait_for("hash gone", || !c.exists::<_, bool>("all").unwrap());
        rt(&mut r, "TYPE all", b"+none\r\n");
        rt(&mut r, "DEL all", b":0\r\n");
        let (_, keys): (u64, Vec<String>) = redis::cmd("SCAN").arg(0).arg("COUNT").arg(1000).query(&mut c).unwrap();
        assert_eq!(keys, vec!["h"]);
    });
}

#[test]
fn active_expiry_removes_fields_and_hashes() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        rt(&mut r, "CONFIG SET hz 100", OK);
        // Nobody touches these keys: only the background cycle can drop
        // them, which DBSIZE (it does not look keys up) shows.
        rt(&mut r, "HSETEX a PX 20 FIELDS 2 f1 v1 f2 v2", b":1\r\n");
        rt(&mut r, "CONFIG SET hash-max-listpack-entries 0", OK);
        rt(&mut r, "HSET b x 1 y 2", b":2\r\n");
        rt(&mut r, "HPEXPIRE b 20 FIELDS 2 x y", &ints(&[1, 1]));
        rt(&mut r, "CONFIG SET hash-max-listpack-entries 512", OK);
        rt(&mut r, "HSET mixed keep 1 drop 2", b":2\r\n");
        rt(&mut r, "HPEXPIRE mixed 20 FIELDS 1 drop", &ints(&[1]));
        // Two keys gone is not yet `mixed`'s field (another shard's cycle
        // may come later): wait for both, then check the counts exactly.
        let stats = |c: &mut redis::Connection| redis::cmd("INFO").arg("stats").query::<String>(c).unwrap();
        wait_for("active expiry", || {
            redis::cmd("DBSIZE").query::<i64>(&mut c).unwrap() == 1 && !stats(&mut c).contains("\r\nexpired_subkeys:4\r\n")
        });
        let info = stats(&mut c);
        assert!(info.contains("\r\nexpired_subkeys:5\r\n"), "{info}");
        assert!(info.contains("\r\nexpired_keys:2\r\n"), "{info}");
        rt(&mut r, "HGETALL mixed", &bulks(&["keep", "1"]));
        // A renamed hash keeps its field deadlines in its new shard.
        rt(&mut r, "HSET r f v", b":1\r\n");
        rt(&mut r, "HPEXPIRE r 20 FIELDS 1 f", &ints(&[1]));
        rt(&mut r, "RENAME r r2", OK);
        wait_for("renamed hash expiry", || redis::cmd("DBSIZE").query::<i64>(&mut c).unwrap() == 1);
    });
}

#[test]
fn watch_sees_hash_writes() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        rt(&mut r, "HSET h a 1", b":1\r\n");
        rt(&mut r, "WATCH h", OK);
        let _: () = c.hset("h", "a", "2").unwrap();
        rt(&mut r, "MULTI", OK);
        rt(&mut r, "HGET h a", b"+QUEUED\r\n");
        rt(&mut r, "EXEC", b"*-1\r\n");
        rt(&mut r, "MULTI", OK);
        rt(&mut r, "HSET h b 1", b"+QUEUED\r\n");
        rt(&mut r, "HGETALL h", b"+QUEUED\r\n");
        rt(&mut r, "EXEC", b"*2\r\n:1\r\n*4\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n1\r\n");
    });
}
