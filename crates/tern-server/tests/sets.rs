//! Black-box tests of the set family, at 1 and 2 worker threads: exact
//! bytes on a raw socket for errors and encodings (checked against
//! redis-server-unstable, Redis 8.4), and the `redis` crate for ordinary
//! use across keys that live on different shards.
mod common;
use common::*;

use std::collections::BTreeSet;

use redis::Commands;


fn set_of(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn members_cardinality_and_membership() {
    each_threads(|s| {
        let mut c = s.conn();
        let added: i64 = c.sadd("s", &["a", "b", "c", "a"]).unwrap();
        assert_eq!(added, 3);
        let n: i64 = c.scard("s").unwrap();
        assert_eq!(n, 3);
        let m: BTreeSet<String> = c.smembers("s").unwrap();
        assert_eq!(m, set_of(&["a", "b", "c"]));
        let yes: bool = c.sismember("s", "b").unwrap();
        let no: bool = c.sismember("s", "z").unwrap();
        assert!(yes && !no);
        let many: Vec<bool> = redis::cmd("SMISMEMBER").arg("s").arg("a").arg("z").query(&mut c).unwrap();
        assert_eq!(many, [true, false]);
        let gone: i64 = c.srem("s", &["a", "z"]).unwrap();
        assert_eq!(gone, 1);
        let gone: i64 = c.srem("s", &["b", "c"]).unwrap();
        assert_eq!(gone, 2);
        let exists: bool = c.exists("s").unwrap();
        assert!(!exists, "a set left empty is removed");
    });
}

#[test]
fn algebra_across_shards() {
    each_threads(|s| {
        let mut c = s.conn();
        // Keys chosen to spread over shards: the operations read them together.
        let _: () = redis::cmd("SADD").arg("{a}x").arg(&["1", "2", "3", "x"]).query(&mut c).unwrap();
        let _: () = redis::cmd("SADD").arg("b-other").arg(&["2", "3", "4"]).query(&mut c).unwrap();
        let _: () = redis::cmd("SADD").arg("zz-third").arg(&["3", "x"]).query(&mut c).unwrap();
        let inter: BTreeSet<String> = c.sinter(&["{a}x", "b-other", "zz-third"]).unwrap();
        assert_eq!(inter, set_of(&["3"]));
        let union: BTreeSet<String> = c.sunion(&["{a}x", "b-other", "missing"]).unwrap();
        assert_eq!(union, set_of(&["1", "2", "3", "4", "x"]));
        let diff: BTreeSet<String> = c.sdiff(&["{a}x", "b-other"]).unwrap();
        assert_eq!(diff, set_of(&["1", "x"]));
        let card: i64 = redis::cmd("SINTERCARD").arg(2).arg("{a}x").arg("b-other").query(&mut c).unwrap();
        assert_eq!(card, 2);
        let card: i64 = redis::cmd("SINTERCARD").arg(2).arg("{a}x").arg("b-other").arg("LIMIT").arg(1).query(&mut c).unwrap();
        assert_eq!(card, 1);
        let n: i64 = c.sinterstore("dst", &["{a}x", "b-other"]).unwrap();
        assert_eq!(n, 2);
        let n: i64 = c.sunionstore("dst", &["{a}x", "b-other"]).unwrap();
        assert_eq!(n, 5);
        let n: i64 = c.sdiffstore("dst", &["{a}x", "{a}x"]).unwrap();
        assert_eq!(n, 0);
        let exists: bool = c.exists("dst").unwrap();
        assert!(!exists, "an empty result deletes the destination");
        let moved: bool = c.smove("{a}x", "b-other", "x").unwrap();
        assert!(moved);
        let m: BTreeSet<String> = c.smembers("b-other").unwrap();
        assert_eq!(m, set_of(&["2", "3", "4", "x"]));
    });
}

#[test]
fn pops_and_random_members() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = c.sadd("p", &["a", "b", "c", "d", "e"]).unwrap();
        let one: String = c.spop("p").unwrap();
        assert!(["a", "b", "c", "d", "e"].contains(&one.as_str()));
        let two: Vec<String> = redis::cmd("SPOP").arg("p").arg(2).query(&mut c).unwrap();
        assert_eq!(two.len(), 2);
        let left: BTreeSet<String> = c.smembers("p").unwrap();
        assert_eq!(left.len(), 2);
        assert!(two.iter().chain([&one]).all(|m| !left.contains(m)), "popped members are gone");
        let picks: Vec<String> = c.srandmember_multiple("p", 10).unwrap();
        assert_eq!(picks.iter().cloned().collect::<BTreeSet<_>>(), left);
        let repeats: Vec<String> = redis::cmd("SRANDMEMBER").arg("p").arg(-7).query(&mut c).unwrap();
        assert_eq!(repeats.len(), 7);
        assert!(repeats.iter().all(|m| left.contains(m)));
        let rest: Vec<String> = redis::cmd("SPOP").arg("p").arg(10).query(&mut c).unwrap();
        assert_eq!(rest.into_iter().collect::<BTreeSet<_>>(), left);
        let exists: bool = c.exists("p").unwrap();
        assert!(!exists);
    });
}

#[test]
fn sscan_visits_every_member_of_a_large_set() {
    each_threads(|s| {
        let mut c = s.conn();
        let members: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
        let _: () = c.sadd("big", &members).unwrap();
        let mut r = s.raw();
        rt(&mut r, "OBJECT ENCODING big", b"$9\r\nhashtable\r\n");
        let mut seen = BTreeSet::new();
        let mut cursor = 0u64;
        loop {
            let (next, batch): (u64, Vec<String>) =
                redis::cmd("SSCAN").arg("big").arg(cursor).arg("COUNT").arg(50).query(&mut c).unwrap();
            seen.extend(batch);
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen, members.into_iter().collect());
        // Many members of a table at once: the staged (prefetched) lookups.
        let asked: Vec<String> = (990..1010).map(|i| format!("m{i}")).collect();
        let found: Vec<bool> = redis::cmd("SMISMEMBER").arg("big").arg(&asked).query(&mut c).unwrap();
        assert_eq!(found, (990..1010).map(|i| i < 1000).collect::<Vec<_>>());
        let (_, matched): (u64, Vec<String>) = redis::cmd("SSCAN").arg("big").arg(0).arg("MATCH").arg("m99*").arg("COUNT").arg(5000).query(&mut c).unwrap();
        assert_eq!(matched.into_iter().collect::<BTreeSet<_>>(), set_of(&["m99", "m990", "m991", "m992", "m993", "m994", "m995", "m996", "m997", "m998", "m999"]));
    });
}

#[test]
fn encodings_follow_the_thresholds() {
    let s = TestServer::start_with(1, &["--set-max-intset-entries", "3", "--set-max-listpack-entries", "2", "--set-max-listpack-value", "4"]);
    let mut r = s.raw();
    rt(&mut r, "SADD i 3 1 2", b":3\r\n");
    rt(&mut r, "OBJECT ENCODING i", b"$6\r\nintset\r\n");
    rt(&mut r, "SMEMBERS i", &bulks(&["1", "2", "3"]));
    rt(&mut r, "SADD i 4", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING i", b"$9\r\nhashtable\r\n");
    rt(&mut r, "SADD l 1", b":1\r\n");
    rt(&mut r, "SADD l b", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING l", b"$8\r\nlistpack\r\n");
    rt(&mut r, "SMEMBERS l", &bulks(&["1", "b"]));
    rt(&mut r, "SADD l c", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING l", b"$9\r\nhashtable\r\n");
    rt(&mut r, "SADD v abcde", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING v", b"$9\r\nhashtable\r\n");
    rt(&mut r, "CONFIG SET set-max-listpack-value 64", b"+OK\r\n");
    rt(&mut r, "SADD w abcde", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING w", b"$8\r\nlistpack\r\n");
}

#[test]
fn errors_and_wrong_types() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "SET str v", b"+OK\r\n");
        rt(&mut r, "SADD s a", b":1\r\n");
        rt(&mut r, "SADD str a", WRONGTYPE);
        rt(&mut r, "GET s", WRONGTYPE);
        rt(&mut r, "SMOVE s str a", WRONGTYPE);
        rt(&mut r, "SINTER missing str", WRONGTYPE);
        rt(&mut r, "SUNIONSTORE d s str", WRONGTYPE);
        rt(&mut r, "SPOP s -1", b"-ERR value is out of range, must be positive\r\n");
        rt(&mut r, "SRANDMEMBER s -9223372036854775808", b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n");
        rt(&mut r, "SINTERCARD 0 s", b"-ERR numkeys should be greater than 0\r\n");
        rt(&mut r, "SINTERCARD 3 s", b"-ERR Number of keys can't be greater than number of args\r\n");
        rt(&mut r, "SINTERCARD 1 s LIMIT -1", b"-ERR LIMIT can't be negative\r\n");
        rt(&mut r, "SSCAN s 0 NOVALUES", b"-ERR NOVALUES option can only be used in HSCAN\r\n");
        rt(&mut r, "SSCAN s 0 COUNT 0", b"-ERR syntax error\r\n");
        rt(&mut r, "TYPE s", b"+set\r\n");
        rt(&mut r, "SCAN 0 TYPE set", b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\ns\r\n");
    });
}
