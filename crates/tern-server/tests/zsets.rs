//! Black-box tests of the sorted-set family, at 1 and 2 worker threads:
//! exact bytes on a raw socket for replies, errors and encodings (each
//! checked against redis-server-unstable, Redis 8.4), the `redis` crate
//! for ordinary use, and the blocking pops across workers (as the list
//! tests do BLPOP's: first come first served, wrong types, timeouts,
//! CLIENT UNBLOCK, MULTI, every member delivered exactly once).
mod common;
use common::*;

use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};

use redis::Commands;

const NOT_FLOAT: &[u8] = b"-ERR value is not a valid float\r\n";
const NOT_INT: &[u8] = b"-ERR value is not an integer or out of range\r\n";
const SYNTAX: &[u8] = b"-ERR syntax error\r\n";
const RANGE_NOT_FLOAT: &[u8] = b"-ERR min or max is not a float\r\n";
const RANGE_NOT_LEX: &[u8] = b"-ERR min or max not valid string range item\r\n";

/// RESP2 flat [member, score, ...] of string pairs.
fn flat(v: &[(&str, &str)]) -> Vec<u8> {
    let all: Vec<&str> = v.iter().flat_map(|(m, s)| [*m, *s]).collect();
    bulks(&all)
}

#[test]
fn add_score_card_rem() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "ZADD z 1 a 2 b 3 c", b":3\r\n");
        rt(&mut r, "ZADD z 1 a 5 d", b":1\r\n");
        rt(&mut r, "ZCARD z", b":4\r\n");
        rt(&mut r, "ZSCORE z d", b"$1\r\n5\r\n");
        rt(&mut r, "ZSCORE z nope", NIL);
        rt(&mut r, "ZSCORE nokey a", NIL);
        rt(
            &mut r,
            "ZMSCORE z a nope c",
            b"*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n3\r\n",
        );
        rt(&mut r, "ZMSCORE nokey a b", b"*2\r\n$-1\r\n$-1\r\n");
        rt(&mut r, "ZCARD nokey", b":0\r\n");
        rt(&mut r, "ZREM z a nope", b":1\r\n");
        rt(&mut r, "ZREM nokey a", b":0\r\n");
        rt(&mut r, "ZREM z b c d", b":3\r\n");
        rt(&mut r, "EXISTS z", b":0\r\n");
        rt(&mut r, "TYPE z", b"+none\r\n");
    });
}

#[test]
fn zadd_options_and_their_errors() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(
            &mut r,
            "ZADD z NX XX 1 a",
            b"-ERR XX and NX options at the same time are not compatible\r\n",
        );
        rt(
            &mut r,
            "ZADD z GT LT 1 a",
            b"-ERR GT, LT, and/or NX options at the same time are not compatible\r\n",
        );
        rt(
            &mut r,
            "ZADD z NX GT 1 a",
            b"-ERR GT, LT, and/or NX options at the same time are not compatible\r\n",
        );
        rt(
            &mut r,
            "ZADD z INCR 1 a 2 b",
            b"-ERR INCR option supports a single increment-element pair\r\n",
        );
        rt(&mut r, "ZADD z 1 a 2", SYNTAX);
        rt(&mut r, "ZADD z foo 1 a", SYNTAX);
        rt(
            &mut r,
            "ZADD z 1",
            b"-ERR wrong number of arguments for 'zadd' command\r\n",
        );
        rt(&mut r, "ZADD z nan a", NOT_FLOAT);
        rt(&mut r, "ZADD z 1e400 a", NOT_FLOAT);
        rt(&mut r, "ZADD z 1 a x b", NOT_FLOAT);
        rt(&mut r, "EXISTS z", b":0\r\n");
        rt(&mut r, "ZADD z XX 1 a", b":0\r\n");
        rt(&mut r, "ZADD z XX INCR 1 a", NIL);
        rt(&mut r, "EXISTS z", b":0\r\n");
        rt(&mut r, "ZADD z 1 a", b":1\r\n");
        rt(&mut r, "ZADD z INCR NX 1 a", NIL);
        rt(&mut r, "ZADD z INCR XX 1 b", NIL);
        rt(&mut r, "ZADD z CH 2 a 3 b", b":2\r\n");
        rt(&mut r, "ZADD z GT CH 1 a 5 b", b":1\r\n");
        rt(&mut r, "ZADD z LT CH 1 a 9 b", b":1\r\n");
        rt(&mut r, "ZADD z incr gt 1 b", b"$1\r\n6\r\n");
        rt(&mut r, "ZADD z INCR LT 1 b", NIL);
        rt(&mut r, "ZADD z XX 7 new", b":0\r\n");
        rt(&mut r, "ZSCORE z new", NIL);
        rt(&mut r, "ZADD z INCR inf a", b"$3\r\ninf\r\n");
        rt(
            &mut r,
            "ZADD z INCR -inf a",
            b"-ERR resulting score is not a number (NaN)\r\n",
        );
        rt(
            &mut r,
            "ZINCRBY z -inf a",
            b"-ERR resulting score is not a number (NaN)\r\n",
        );
        rt(&mut r, "ZINCRBY z x a", NOT_FLOAT);
        rt(&mut r, "ZINCRBY z 2.5 fresh", b"$3\r\n2.5\r\n");
        rt(&mut r, "ZINCRBY fresh 1 m", b"$1\r\n1\r\n");
    });
}

#[test]
fn scores_parse_and_print_as_redis() {
    each_threads(|s| {
        let mut r = s.raw();
        for (given, shown) in [
            ("0.1", "0.1"),
            ("1e20", "1e+20"),
            ("1.5e-7", "1.5e-7"),
            ("0.00001", "0.00001"),
            ("1e17", "100000000000000000"),
            ("123456789012345678", "123456789012345680"),
            ("+inf", "inf"),
            ("-Infinity", "-inf"),
            ("0x10", "16"),
            (".5", "0.5"),
            ("5e-324", "5e-324"),
            ("-0", "0"),
        ] {
            rt(&mut r, &format!("ZADD s {given} m"), b":1\r\n");
            rt(
                &mut r,
                "ZSCORE s m",
                format!("${}\r\n{shown}\r\n", shown.len()).as_bytes(),
            );
            rt(&mut r, "DEL s", b":1\r\n");
        }
        for bad in ["nan", "1_0", "infinit", "1e-400", "-"] {
            rt(&mut r, &format!("ZADD s {bad} m"), NOT_FLOAT);
        }
        // The large encoding keeps -0, as Redis's skiplist does.
        rt(&mut r, "CONFIG SET zset-max-listpack-entries 0", OK);
        rt(&mut r, "ZADD big -0 m", b":1\r\n");
        rt(&mut r, "ZSCORE big m", b"$2\r\n-0\r\n");
        rt(&mut r, "OBJECT ENCODING big", b"$8\r\nskiplist\r\n");
        rt(&mut r, "ZADD big 0.1 t", b":1\r\n");
        // A skiplist's scan shows scores as %.17g, as Redis's does.
        rt(&mut r, "ZSCAN big 0", b"*2\r\n$1\r\n0\r\n*4\r\n$1\r\nm\r\n$2\r\n-0\r\n$1\r\nt\r\n$19\r\n0.10000000000000001\r\n");
        rt(&mut r, "CONFIG SET zset-max-listpack-entries 128", OK);
    });
}

#[test]
fn ranks_counts_and_ranges() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "ZADD z 1 a 2 b 3 c 4 d 5 e", b":5\r\n");
        rt(&mut r, "ZRANK z c", b":2\r\n");
        rt(&mut r, "ZREVRANK z c", b":2\r\n");
        rt(&mut r, "ZREVRANK z a", b":4\r\n");
        rt(&mut r, "ZRANK z nope", NIL);
        rt(&mut r, "ZRANK z a WITHSCORE", b"*2\r\n:0\r\n$1\r\n1\r\n");
        rt(&mut r, "ZRANK z nope WITHSCORE", b"*-1\r\n");
        rt(&mut r, "ZRANK nokey a WITHSCORE", b"*-1\r\n");
        rt(&mut r, "ZRANK z a WITHSCORES", SYNTAX);
        rt(
            &mut r,
            "ZRANK z a WITHSCORE x",
            b"-ERR wrong number of arguments for 'zrank' command\r\n",
        );
        rt(&mut r, "ZCOUNT z 2 4", b":3\r\n");
        rt(&mut r, "ZCOUNT z (2 (4", b":1\r\n");
        rt(&mut r, "ZCOUNT z -inf +inf", b":5\r\n");
        rt(&mut r, "ZCOUNT z ( 3", b":3\r\n");
        rt(&mut r, "ZCOUNT z a b", RANGE_NOT_FLOAT);
        rt(&mut r, "ZCOUNT z (1 ((2", RANGE_NOT_FLOAT);
        rt(&mut r, "ZCOUNT nokey 0 1", b":0\r\n");
        rt(&mut r, "ZRANGE z 0 -1", &bulks(&["a", "b", "c", "d", "e"]));
        rt(&mut r, "ZRANGE z -2 100", &bulks(&["d", "e"]));
        rt(&mut r, "ZRANGE z 3 1", b"*0\r\n");
        rt(
            &mut r,
            "ZRANGE z 0 1 WITHSCORES",
            &flat(&[("a", "1"), ("b", "2")]),
        );
        rt(&mut r, "ZRANGE z 0 1 REV", &bulks(&["e", "d"]));
        rt(
            &mut r,
            "ZREVRANGE z 0 1 WITHSCORES",
            &flat(&[("e", "5"), ("d", "4")]),
        );
        rt(&mut r, "ZRANGE z (1 3 BYSCORE", &bulks(&["b", "c"]));
        rt(
            &mut r,
            "ZRANGE z 4 (1 BYSCORE REV LIMIT 1 2",
            &bulks(&["c", "b"]),
        );
        rt(
            &mut r,
            "ZRANGE z -inf +inf BYSCORE LIMIT 1 -1",
            &bulks(&["b", "c", "d", "e"]),
        );
        rt(&mut r, "ZRANGE z -inf +inf BYSCORE LIMIT -1 3", b"*0\r\n");
        rt(
            &mut r,
            "ZRANGEBYSCORE z 2 +inf WITHSCORES LIMIT 0 1",
            &flat(&[("b", "2")]),
        );
        rt(&mut r, "ZREVRANGEBYSCORE z +inf 4", &bulks(&["e", "d"]));
        rt(&mut r, "ZRANGE z 0 -1 LIMIT 0 1", b"-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n");
        rt(
            &mut r,
            "ZRANGE z - + BYLEX WITHSCORES",
            b"-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n",
        );
        rt(&mut r, "ZRANGE z a b BYLEX", RANGE_NOT_LEX);
        rt(&mut r, "ZRANGE z x 1 BYSCORE", RANGE_NOT_FLOAT);
        rt(&mut r, "ZRANGE z 0 1 LIMIT 0", SYNTAX);
        rt(&mut r, "ZRANGE z 0 1 BYSCORE BYLEX", SYNTAX);
        rt(&mut r, "ZRANGE z 0 -1 REV REV", SYNTAX);
        rt(&mut r, "ZRANGE z 0 x", NOT_INT);
        rt(&mut r, "ZRANGEBYSCORE z 0 1 LIMIT 0 x", NOT_INT);
        rt(&mut r, "ZRANGEBYSCORE z 0 1 REV", SYNTAX);
        rt(&mut r, "ZREVRANGE z 0 1 BYSCORE", SYNTAX);
        rt(&mut r, "ZRANGE nokey 0 -1 WITHSCORES", b"*0\r\n");
        rt(&mut r, "ZADD l 0 a 0 b 0 c 0 d", b":4\r\n");
        rt(&mut r, "ZRANGEBYLEX l [b (d", &bulks(&["b", "c"]));
        rt(&mut r, "ZRANGEBYLEX l - + LIMIT 1 2", &bulks(&["b", "c"]));
        rt(&mut r, "ZREVRANGEBYLEX l + (b", &bulks(&["d", "c"]));
        rt(&mut r, "ZRANGE l + - BYLEX", b"*0\r\n");
        rt(&mut r, "ZLEXCOUNT l [b +", b":3\r\n");
        rt(&mut r, "ZLEXCOUNT l a b", RANGE_NOT_LEX);
        rt(
            &mut r,
            "ZRANGEBYLEX l - + WITHSCORES",
            b"-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n",
        );
    });
}

#[test]
fn range_store_and_remove_ranges() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "ZADD {z}src 1 a 2 b 3 c 4 d 5 e", b":5\r\n");
        rt(&mut r, "SET {z}dst x EX 100", OK);
        rt(&mut r, "ZRANGESTORE {z}dst {z}src 1 2", b":2\r\n");
        rt(&mut r, "TTL {z}dst", b":-1\r\n");
        rt(
            &mut r,
            "ZRANGE {z}dst 0 -1 WITHSCORES",
            &flat(&[("b", "2"), ("c", "3")]),
        );
        rt(&mut r, "OBJECT ENCODING {z}dst", b"$8\r\nlistpack\r\n");
        rt(
            &mut r,
            "ZRANGESTORE {z}dst {z}src (4 +inf BYSCORE",
            b":1\r\n",
        );
        rt(&mut r, "ZRANGESTORE {z}dst {z}src 0 -1 WITHSCORES", SYNTAX);
        rt(&mut r, "ZRANGESTORE {z}dst {z}src 0 -1 LIMIT 0 1", b"-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n");
        rt(&mut r, "ZRANGESTORE {z}dst {z}nokey 0 -1", b":0\r\n");
        rt(&mut r, "EXISTS {z}dst", b":0\r\n");
        // Across shards, the destination on another one.
        rt(&mut r, "ZRANGESTORE other {z}src 0 0", b":1\r\n");
        rt(&mut r, "ZREMRANGEBYRANK {z}src x 1", NOT_INT);
        rt(&mut r, "ZREMRANGEBYRANK {z}src 0 0", b":1\r\n");
        rt(&mut r, "ZREMRANGEBYSCORE {z}src (2 4", b":2\r\n");
        rt(&mut r, "ZREMRANGEBYSCORE {z}src a 4", RANGE_NOT_FLOAT);
        rt(&mut r, "ZRANGE {z}src 0 -1", &bulks(&["b", "e"]));
        rt(&mut r, "ZREMRANGEBYLEX {z}src - +", b":2\r\n");
        rt(&mut r, "EXISTS {z}src", b":0\r\n");
        rt(&mut r, "ZREMRANGEBYLEX {z}src x +", RANGE_NOT_LEX);
        rt(&mut r, "ZREMRANGEBYRANK nokey 0 -1", b":0\r\n");
    });
}

#[test]
fn pops() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "ZADD z 1 a 2 b 3 c", b":3\r\n");
        rt(&mut r, "ZPOPMIN z", &flat(&[("a", "1")]));
        rt(&mut r, "ZPOPMAX z 5", &flat(&[("c", "3"), ("b", "2")]));
        rt(&mut r, "EXISTS z", b":0\r\n");
        rt(&mut r, "ZPOPMIN z", b"*0\r\n");
        rt(&mut r, "ZPOPMIN z 2", b"*0\r\n");
        rt(
            &mut r,
            "ZPOPMIN z -1",
            b"-ERR value is out of range, must be positive\r\n",
        );
        rt(
            &mut r,
            "ZPOPMIN z x",
            b"-ERR value is out of range, must be positive\r\n",
        );
        rt(&mut r, "ZPOPMIN z 1 2", SYNTAX);
        rt(&mut r, "ZADD {m}a 1 x 2 y", b":2\r\n");
        rt(
            &mut r,
            "ZMPOP 2 {m}nokey {m}a MAX COUNT 5",
            b"*2\r\n$4\r\n{m}a\r\n*2\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
        );
        rt(&mut r, "ZMPOP 1 {m}a MIN", b"*-1\r\n");
        rt(
            &mut r,
            "ZMPOP 0 z MIN",
            b"-ERR numkeys should be greater than 0\r\n",
        );
        rt(
            &mut r,
            "ZMPOP x z MIN",
            b"-ERR numkeys should be greater than 0\r\n",
        );
        rt(&mut r, "ZMPOP 1 z foo", SYNTAX);
        rt(&mut r, "ZMPOP 2 z MIN", SYNTAX);
        rt(
            &mut r,
            "ZMPOP 1 z MIN COUNT 0",
            b"-ERR count should be greater than 0\r\n",
        );
        rt(&mut r, "ZMPOP 1 z MIN COUNT 1 COUNT 2", SYNTAX);
        rt(
            &mut r,
            "ZMPOP 1 z",
            b"-ERR wrong number of arguments for 'zmpop' command\r\n",
        );
    });
}

#[test]
fn random_members() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = c
            .zadd_multiple("z", &[(1, "a"), (2, "b"), (3, "c")])
            .unwrap();
        let all: BTreeSet<String> = ["a", "b", "c"].iter().map(|x| x.to_string()).collect();
        let one: String = redis::cmd("ZRANDMEMBER").arg("z").query(&mut c).unwrap();
        assert!(all.contains(&one));
        let two: Vec<String> = redis::cmd("ZRANDMEMBER")
            .arg("z")
            .arg(2)
            .query(&mut c)
            .unwrap();
        assert_eq!(two.iter().collect::<BTreeSet<_>>().len(), 2);
        let many: Vec<String> = redis::cmd("ZRANDMEMBER")
            .arg("z")
            .arg(-10)
            .query(&mut c)
            .unwrap();
        assert_eq!(many.len(), 10);
        assert!(many.iter().all(|m| all.contains(m)));
        let whole: Vec<String> = redis::cmd("ZRANDMEMBER")
            .arg("z")
            .arg(10)
            .arg("WITHSCORES")
            .query(&mut c)
            .unwrap();
        assert_eq!(whole, ["c", "3", "b", "2", "a", "1"], "the whole set from its end, as Redis");
        let mut r = s.raw();
        rt(&mut r, "ZRANDMEMBER z x", NOT_INT);
        rt(
            &mut r,
            "ZRANDMEMBER z 4611686018427387904 WITHSCORES",
            b"-ERR value is out of range\r\n",
        );
        rt(
            &mut r,
            "ZRANDMEMBER z -4611686018427387904 WITHSCORES",
            b"-ERR value is out of range\r\n",
        );
        rt(&mut r, "ZRANDMEMBER z -9223372036854775808", b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n");
        rt(&mut r, "ZRANDMEMBER z 1 WITHSCORE", SYNTAX);
        rt(&mut r, "ZRANDMEMBER z 1 WITHSCORES x", SYNTAX);
        rt(&mut r, "ZRANDMEMBER z 0", b"*0\r\n");
        rt(&mut r, "ZRANDMEMBER nokey", NIL);
        rt(&mut r, "ZRANDMEMBER nokey 5", b"*0\r\n");
    });
}

#[test]
fn scan_small_and_large() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        rt(&mut r, "ZADD small 1.5 a 2 b", b":2\r\n");
        rt(
            &mut r,
            "ZSCAN small 0",
            b"*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$1\r\n2\r\n",
        );
        rt(&mut r, "ZSCAN small x", b"-ERR invalid cursor\r\n");
        rt(&mut r, "ZSCAN small 0 COUNT 0", SYNTAX);
        rt(
            &mut r,
            "ZSCAN small 0 NOVALUES",
            b"-ERR NOVALUES option can only be used in HSCAN\r\n",
        );
        rt(&mut r, "ZSCAN small 0 NOSCORES", SYNTAX);
        rt(&mut r, "ZSCAN nokey 0", b"*2\r\n$1\r\n0\r\n*0\r\n");
        let members: Vec<(i64, String)> = (0..1000).map(|i| (i, format!("m{i}"))).collect();
        let _: () = c.zadd_multiple("big", &members).unwrap();
        rt(&mut r, "OBJECT ENCODING big", b"$8\r\nskiplist\r\n");
        let mut seen = BTreeSet::new();
        let mut cursor = 0u64;
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("ZSCAN")
                .arg("big")
                .arg(cursor)
                .arg("COUNT")
                .arg(50)
                .query(&mut c)
                .unwrap();
            for p in batch.chunks(2) {
                assert_eq!(p[0], format!("m{}", p[1]));
                seen.insert(p[0].clone());
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 1000);
        let (_, matched): (u64, Vec<String>) = redis::cmd("ZSCAN")
            .arg("big")
            .arg(0)
            .arg("MATCH")
            .arg("m99?")
            .arg("COUNT")
            .arg(5000)
            .query(&mut c)
            .unwrap();
        assert_eq!(matched.len(), 20);
    });
}

#[test]
fn encodings_follow_the_thresholds() {
    let s = TestServer::start_with(
        1,
        &[
            "--zset-max-listpack-entries",
            "2",
            "--zset-max-listpack-value",
            "4",
        ],
    );
    let mut r = s.raw();
    rt(&mut r, "ZADD a 1 x 2 y", b":2\r\n");
    rt(&mut r, "OBJECT ENCODING a", b"$8\r\nlistpack\r\n");
    rt(&mut r, "ZADD a 3 z", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING a", b"$8\r\nskiplist\r\n");
    rt(&mut r, "ZREM a x y", b":2\r\n");
    rt(&mut r, "OBJECT ENCODING a", b"$8\r\nskiplist\r\n");
    rt(&mut r, "ZADD b 1 x 2 y 3 z", b":3\r\n");
    rt(&mut r, "OBJECT ENCODING b", b"$8\r\nskiplist\r\n");
    rt(&mut r, "ZADD c 1 abcde", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING c", b"$8\r\nskiplist\r\n");
    rt(&mut r, "ZADD d 1 abcd", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING d", b"$8\r\nlistpack\r\n");
    rt(&mut r, "ZADD d XX 1 abcdefgh", b":0\r\n");
    rt(&mut r, "OBJECT ENCODING d", b"$8\r\nlistpack\r\n");
    rt(&mut r, "ZADD d 1 abcde", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING d", b"$8\r\nskiplist\r\n");
    rt(&mut r, "CONFIG SET zset-max-listpack-value 1kb", OK);
    rt(
        &mut r,
        "CONFIG GET zset-max-listpack-value",
        b"*2\r\n$23\r\nzset-max-listpack-value\r\n$4\r\n1024\r\n",
    );
    rt(&mut r, "ZADD e 1 abcdefgh", b":1\r\n");
    rt(&mut r, "OBJECT ENCODING e", b"$8\r\nlistpack\r\n");
}

#[test]
fn wrong_types_both_ways_and_generic_commands() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "SET str v", OK);
        rt(&mut r, "ZADD z 1 a 2 b", b":2\r\n");
        for cmd in [
            "ZADD str 1 a",
            "ZINCRBY str 1 a",
            "ZREM str a",
            "ZCARD str",
            "ZSCORE str a",
            "ZMSCORE str a",
            "ZRANK str a",
            "ZCOUNT str 0 1",
            "ZLEXCOUNT str - +",
            "ZRANGE str 0 -1",
            "ZRANGESTORE d str 0 -1",
            "ZREMRANGEBYRANK str 0 1",
            "ZPOPMIN str",
            "ZPOPMIN str 0",
            "ZMPOP 1 str MIN",
            "ZRANDMEMBER str",
            "ZRANDMEMBER str 0",
            "ZSCAN str 0",
            "GET z",
            "SADD z a",
            "LPUSH z a",
            "HSET z a b",
        ] {
            rt(&mut r, cmd, WRONGTYPE);
        }
        rt(&mut r, "TYPE z", b"+zset\r\n");
        rt(
            &mut r,
            "SCAN 0 TYPE zset",
            b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nz\r\n",
        );
        rt(&mut r, "OBJECT ENCODING z", b"$8\r\nlistpack\r\n");
        rt(&mut r, "COPY z {x}copy", b":1\r\n");
        rt(&mut r, "RENAME {x}copy {x}moved", OK);
        rt(
            &mut r,
            "ZRANGE {x}moved 0 -1 WITHSCORES",
            &flat(&[("a", "1"), ("b", "2")]),
        );
        rt(&mut r, "EXPIRE {x}moved 100", b":1\r\n");
        rt(&mut r, "MOVE {x}moved 1", b":1\r\n");
        rt(&mut r, "SELECT 1", OK);
        rt(&mut r, "ZCARD {x}moved", b":2\r\n");
        rt(&mut r, "UNLINK {x}moved", b":1\r\n");
        rt(&mut r, "SELECT 0", OK);
        assert!(memory_usage(&mut r, "z") > 0);
        rt(&mut r, "DEL z", b":1\r\n");
    });
}

#[test]
fn resp3_shapes() {
    each_threads(|s| {
        let mut r = s.raw();
        r.cmd(&[b"HELLO", b"3"]);
        r.cmd(&[b"PING"]);
        let mut buf = Vec::new();
        while !buf.ends_with(b"+PONG\r\n") {
            buf.extend(r.read_n(1));
        }
        rt(&mut r, "ZADD z 1 a 2.5 b 3 c", b":3\r\n");
        rt(
            &mut r,
            "ZRANGE z 0 1 WITHSCORES",
            b"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n",
        );
        rt(&mut r, "ZSCORE z b", b",2.5\r\n");
        rt(&mut r, "ZSCORE z nope", b"_\r\n");
        rt(&mut r, "ZMSCORE z a nope", b"*2\r\n,1\r\n_\r\n");
        rt(&mut r, "ZINCRBY z 1 a", b",2\r\n");
        rt(&mut r, "ZADD z INCR XX 1 zz", b"_\r\n");
        rt(&mut r, "ZRANK z a WITHSCORE", b"*2\r\n:0\r\n,2\r\n");
        rt(&mut r, "ZRANK z nope WITHSCORE", b"_\r\n");
        rt(&mut r, "ZSCAN z 0", b"*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$3\r\n2.5\r\n$1\r\nc\r\n$1\r\n3\r\n");
        rt(
            &mut r,
            "ZRANDMEMBER z 10 WITHSCORES",
            b"*3\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\nb\r\n,2.5\r\n*2\r\n$1\r\na\r\n,2\r\n",
        );
        rt(&mut r, "ZPOPMIN z", b"*2\r\n$1\r\na\r\n,2\r\n");
        rt(&mut r, "ZPOPMIN z 1", b"*1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n");
        rt(&mut r, "ZMPOP 1 nokey MIN", b"_\r\n");
        rt(
            &mut r,
            "ZMPOP 1 z MAX COUNT 2",
            b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nc\r\n,3\r\n",
        );
        rt(&mut r, "ZADD i 1 inf 2 -inf", b":2\r\n");
        rt(&mut r, "ZADD i inf x -inf y", b":2\r\n");
        rt(&mut r, "ZRANGE i 0 -1 WITHSCORES", b"*4\r\n*2\r\n$1\r\ny\r\n,-inf\r\n*2\r\n$3\r\ninf\r\n,1\r\n*2\r\n$4\r\n-inf\r\n,2\r\n*2\r\n$1\r\nx\r\n,inf\r\n");
    });
}

#[test]
fn large_sets_rank_and_range_across_conversion() {
    each_threads(|s| {
        let mut c = s.conn();
        let members: Vec<(f64, String)> = (0..5000)
            .map(|i| (f64::from(i % 100), format!("m{i:05}")))
            .collect();
        let _: () = c.zadd_multiple("big", &members).unwrap();
        let mut want = members.clone();
        want.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let got: Vec<String> = c.zrange("big", 100, 104).unwrap();
        assert_eq!(
            got,
            want[100..105]
                .iter()
                .map(|x| x.1.clone())
                .collect::<Vec<_>>()
        );
        let rank: usize = c.zrank("big", &want[4321].1).unwrap();
        assert_eq!(rank, 4321);
        let n: usize = c.zcount("big", 10, "(20").unwrap();
        assert_eq!(n, 500);
        let page: Vec<String> = c.zrangebyscore_limit("big", 50, 50, 10, 3).unwrap();
        assert_eq!(
            page,
            want.iter()
                .filter(|x| x.0 == 50.0)
                .skip(10)
                .take(3)
                .map(|x| x.1.clone())
                .collect::<Vec<_>>()
        );
        let removed: usize = c.zrembyscore("big", 0, 49).unwrap();
        assert_eq!(removed, 2500);
        let card: usize = c.zcard("big").unwrap();
        assert_eq!(card, 2500);
    });
}

fn memory_usage(r: &mut Raw, key: &str) -> usize {
    r.cmd(&[b"MEMORY", b"USAGE", key.as_bytes()]);
    let mut buf = Vec::new();
    while !buf.ends_with(b"\r\n") {
        buf.extend(r.read_n(1));
    }
    std::str::from_utf8(&buf[1..buf.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

/// Bytes per member stay under Redis 8.4's: for these very commands its
/// MEMORY USAGE is 1692 for the 100-member listpack and 9311414 for the
/// 100K-member skiplist (93 bytes a member).
#[test]
fn bytes_per_member_under_redis() {
    let s = TestServer::start(1);
    let mut c = s.conn();
    let mut r = s.raw();
    let small: Vec<(u32, String)> = (0..100)
        .map(|i| (i * 1000, format!("member{i:04}")))
        .collect();
    let _: () = c.zadd_multiple("small", &small).unwrap();
    rt(&mut r, "OBJECT ENCODING small", b"$8\r\nlistpack\r\n");
    let used = memory_usage(&mut r, "small");
    assert!(used <= 1692, "{used} bytes for 100 members");
    for chunk in 0..100u32 {
        let batch: Vec<(u32, String)> = (0..1000)
            .map(|i| {
                (
                    (chunk * 1000 + i) % 997,
                    format!("member{:06}", chunk * 1000 + i),
                )
            })
            .collect();
        let _: () = c.zadd_multiple("big", &batch).unwrap();
    }
    rt(&mut r, "ZCARD big", b":100000\r\n");
    let per = memory_usage(&mut r, "big") / 100_000;
    assert!(per <= 64, "{per} bytes per member");
}

#[test]
fn union_inter_diff_and_their_stores() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "ZADD {a}a 1 x 2 y 3 z", b":3\r\n");
        rt(&mut r, "ZADD {a}b 10 y 20 z 30 w", b":3\r\n");
        rt(&mut r, "SADD {a}s x w", b":2\r\n");
        rt(&mut r, "ZUNION 3 {a}a {a}b {a}s WITHSCORES", &flat(&[("x", "2"), ("y", "12"), ("z", "23"), ("w", "31")]));
        rt(&mut r, "ZUNION 2 {a}a {a}b WEIGHTS 2 0.5 AGGREGATE MAX", &bulks(&["x", "y", "z", "w"]));
        rt(&mut r, "ZUNION 3 {a}a {a}b {a}s WEIGHTS 2 3 4 AGGREGATE COUNT WITHSCORES", &flat(&[("y", "5"), ("z", "5"), ("x", "6"), ("w", "7")]));
        rt(&mut r, "ZUNION 2 {a}a {a}b WEIGHTS inf -inf WITHSCORES", &flat(&[("w", "-inf"), ("y", "0"), ("z", "0"), ("x", "inf")]));
        rt(&mut r, "ZINTER 2 {a}a {a}b WITHSCORES", &flat(&[("y", "12"), ("z", "23")]));
        rt(&mut r, "ZINTER 2 {a}a {a}b AGGREGATE MIN WITHSCORES", &flat(&[("y", "2"), ("z", "3")]));
        rt(&mut r, "ZINTER 2 {a}a {a}nokey", b"*0\r\n");
        rt(&mut r, "ZDIFF 2 {a}a {a}b WITHSCORES", &flat(&[("x", "1")]));
        rt(&mut r, "ZDIFF 2 {a}b {a}s", &bulks(&["y", "z"]));
        rt(&mut r, "ZINTERCARD 2 {a}a {a}b", b":2\r\n");
        rt(&mut r, "ZINTERCARD 2 {a}a {a}b LIMIT 1", b":1\r\n");
        rt(&mut r, "ZUNIONSTORE {a}d 2 {a}a {a}b", b":4\r\n");
        rt(&mut r, "OBJECT ENCODING {a}d", b"$8\r\nlistpack\r\n");
        rt(&mut r, "ZINTERSTORE {a}d 2 {a}a {a}nokey", b":0\r\n");
        rt(&mut r, "EXISTS {a}d", b":0\r\n");
        rt(&mut r, "ZDIFFSTORE {a}d 2 {a}b {a}a", b":1\r\n");
        rt(&mut r, "ZRANGE {a}d 0 -1 WITHSCORES", &flat(&[("w", "30")]));
        rt(&mut r, "ZUNION 0 {a}a", b"-ERR at least 1 input key is needed for 'zunion' command\r\n");
        rt(&mut r, "ZUNIONSTORE {a}d 0 {a}a", b"-ERR at least 1 input key is needed for 'zunionstore' command\r\n");
        rt(&mut r, "ZINTERCARD 0 {a}a", b"-ERR at least 1 input key is needed for 'zintercard' command\r\n");
        rt(&mut r, "ZUNION x {a}a", NOT_INT);
        rt(&mut r, "ZUNION 3 {a}a", SYNTAX);
        rt(&mut r, "ZUNION 1 {a}a WEIGHTS x", b"-ERR weight value is not a float\r\n");
        rt(&mut r, "ZUNION 1 {a}a AGGREGATE foo", SYNTAX);
        rt(&mut r, "ZINTERCARD 1 {a}a LIMIT -1", b"-ERR LIMIT can't be negative\r\n");
        rt(&mut r, "ZDIFF 1 {a}a WEIGHTS 1", SYNTAX);
        rt(&mut r, "ZUNIONSTORE {a}d 1 {a}a WITHSCORES", SYNTAX);
        rt(&mut r, "SET {a}str v", OK);
        rt(&mut r, "ZUNION 2 {a}a {a}str WEIGHTS x", WRONGTYPE);
        rt(&mut r, "ZINTERSTORE {a}d 1 {a}str", WRONGTYPE);
    });
}

// ------------------------------------------------------- blocking pops --

#[test]
fn blocking_pops_reply_at_once_when_they_can() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "ZADD z 1 a 2 b 3 c 1.5 d", b":4\r\n");
        rt(&mut r, "BZPOPMIN nokey z 0", &bulks(&["z", "a", "1"]));
        rt(&mut r, "BZPOPMAX z 0", &bulks(&["z", "c", "3"]));
        rt(&mut r, "BZMPOP 0 2 nokey z MIN", b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nd\r\n$3\r\n1.5\r\n");
        rt(&mut r, "BZMPOP 0 1 z MAX COUNT 5", b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
        rt(&mut r, "EXISTS z", b":0\r\n");
        rt(&mut r, "SET str v", OK);
        rt(&mut r, "ZADD z 1 a", b":1\r\n");
        // A key of another type fails only if no key before it had a member.
        rt(&mut r, "BZPOPMIN nokey str z 0", WRONGTYPE);
        rt(&mut r, "BZMPOP 0 2 str z MIN", WRONGTYPE);
        rt(&mut r, "BZPOPMIN z str 0", &bulks(&["z", "a", "1"]));
        rt(&mut r, "BZPOPMIN nokey 0.01", NIL_ARRAY);
        rt(&mut r, "BZMPOP 0.01 1 nokey MAX", NIL_ARRAY);
        rt(&mut r, "BZPOPMIN z x", b"-ERR timeout is not a float or out of range\r\n");
        rt(&mut r, "BZPOPMAX z -1", b"-ERR timeout is negative\r\n");
        rt(&mut r, "BZPOPMIN z inf", b"-ERR timeout is out of range\r\n");
        // BZMPOP reads numkeys, MIN|MAX and COUNT before its timeout.
        rt(&mut r, "BZMPOP x 0 z MIN", b"-ERR numkeys should be greater than 0\r\n");
        rt(&mut r, "BZMPOP x 1 z mid", SYNTAX);
        rt(&mut r, "BZMPOP x 1 z MIN COUNT 0", b"-ERR count should be greater than 0\r\n");
        rt(&mut r, "BZMPOP x 1 z MIN", b"-ERR timeout is not a float or out of range\r\n");
        rt(&mut r, "BZMPOP 0 2 z MIN", SYNTAX);
        rt(&mut r, "BZMPOP 0 1 z MIN COUNT 1 COUNT 2", SYNTAX);
        rt(&mut r, "BZPOPMIN z", b"-ERR wrong number of arguments for 'bzpopmin' command\r\n");
        r.cmd(&[b"HELLO", b"3"]);
        r.cmd(&[b"PING"]);
        let mut buf = Vec::new();
        while !buf.ends_with(b"+PONG\r\n") {
            buf.extend(r.read_n(1));
        }
        rt(&mut r, "ZADD z 1 a 2 b 3 c", b":3\r\n");
        rt(&mut r, "BZPOPMIN z 0", b"*3\r\n$1\r\nz\r\n$1\r\na\r\n,1\r\n");
        rt(&mut r, "BZMPOP 0 1 z MAX COUNT 2", b"*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\nb\r\n,2\r\n");
        rt(&mut r, "BZPOPMAX nokey 0.01", b"_\r\n");
        rt(&mut r, "BZMPOP 0.01 1 nokey MIN", b"_\r\n");
    });
}

#[test]
fn blocked_pop_is_served_by_a_write_on_another_worker() {
    let s = TestServer::start(2);
    for (consumer_on, producer_on) in [(0, 1), (1, 0)] {
        let mut consumer = raw_on(&s, consumer_on);
        let mut producer = raw_on(&s, producer_on);
        let mut c = s.conn();
        // Each command that creates or grows a sorted set wakes a waiter.
        for (wait, write, wrote, served) in [
            ("BZPOPMIN q 0", "ZADD q 2 b 1 a", &b":2\r\n"[..], bulks(&["q", "a", "1"])),
            ("BZPOPMAX q 0", "ZINCRBY q 5 a", b"$1\r\n5\r\n", bulks(&["q", "a", "5"])),
            ("BZMPOP 0 2 x q MIN COUNT 3", "ZUNIONSTORE q 1 src", b":1\r\n", b"*2\r\n$1\r\nq\r\n*1\r\n*2\r\n$1\r\ns\r\n$1\r\n7\r\n".to_vec()),
            ("BZPOPMIN q 0", "ZRANGESTORE q src 0 0", b":1\r\n", bulks(&["q", "s", "7"])),
        ] {
            let _: i64 = c.del("q").unwrap();
            let _: i64 = c.zadd("src", "s", 7).unwrap();
            send(&mut consumer, wait);
            wait_for("the consumer to block", || blocked(&mut c) == 1);
            let t = Instant::now();
            rt(&mut producer, write, wrote);
            consumer.expect(&served);
            assert!(t.elapsed() < Duration::from_secs(1));
            assert_eq!(blocked(&mut c), 0);
        }
        assert!(!c.exists::<_, bool>("q").unwrap());
        let _: i64 = c.del(&["q", "src"]).unwrap();
    }
}

#[test]
fn pop_waiters_are_served_first_come_first_served() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut waiters: Vec<Raw> = Vec::new();
        for (i, cmd) in ["BZPOPMIN q 0", "BZPOPMAX q 0", "BZMPOP 0 1 q MIN COUNT 2", "BZPOPMIN other q 0"].iter().enumerate() {
            let mut w = s.raw();
            send(&mut w, cmd);
            wait_for("a waiter to block", || blocked(&mut c) == i as i64 + 1);
            waiters.push(w);
        }
        let _: i64 = c.zadd_multiple("q", &[(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]).unwrap();
        waiters[0].expect(&bulks(&["q", "a", "1"]));
        waiters[1].expect(&bulks(&["q", "e", "5"]));
        waiters[2].expect(b"*2\r\n$1\r\nq\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n");
        waiters[3].expect(&bulks(&["q", "d", "4"]));
        assert_eq!(blocked(&mut c), 0);
        assert!(!c.exists::<_, bool>("q").unwrap());
    });
}

#[test]
fn a_pop_waiter_stays_blocked_through_other_types() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut w = s.raw();
        send(&mut w, "BZPOPMIN k 0");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        // A string, then a list, under the key: it takes from neither.
        let _: () = c.set("k", "str").unwrap();
        let _: i64 = c.del("k").unwrap();
        let _: i64 = c.rpush("k", "x").unwrap();
        assert_eq!(c.lpop::<_, String>("k", None).unwrap(), "x");
        assert_eq!(blocked(&mut c), 1);
        // A list waiter queued behind it is served by a list, as in Redis.
        let mut l = s.raw();
        send(&mut l, "BLPOP k 0");
        wait_for("the list waiter to block", || blocked(&mut c) == 2);
        let _: i64 = c.rpush("k", "y").unwrap();
        l.expect(b"*2\r\n$1\r\nk\r\n$1\r\ny\r\n");
        assert_eq!(blocked(&mut c), 1);
        let _: i64 = c.zadd("k", "m", 1).unwrap();
        w.expect(&bulks(&["k", "m", "1"]));
        assert_eq!(blocked(&mut c), 0);
        // Woken by a key behind one of another type: the re-run fails on
        // the first, as Redis's does, and takes nothing.
        send(&mut w, "BZPOPMIN k1 k2 0");
        wait_for("the waiter to block on two keys", || blocked(&mut c) == 1);
        let _: () = c.set("k1", "str").unwrap();
        let _: i64 = c.zadd("k2", "m", 1).unwrap();
        w.expect(WRONGTYPE);
        assert_eq!(blocked(&mut c), 0);
        assert_eq!(c.zcard::<_, i64>("k2").unwrap(), 1);
        let _: i64 = c.del(&["k1", "k2"]).unwrap();
        // A waiter that leaves takes nothing and passes its turn on.
        let mut gone = s.raw();
        send(&mut gone, "BZPOPMAX k 0");
        wait_for("the first waiter to block", || blocked(&mut c) == 1);
        send(&mut w, "BZPOPMAX k 0");
        wait_for("the second waiter to block", || blocked(&mut c) == 2);
        drop(gone);
        wait_for("the first waiter to be gone", || blocked(&mut c) == 1);
        let _: i64 = c.zadd_multiple("k", &[(1, "a"), (2, "b")]).unwrap();
        w.expect(&bulks(&["k", "b", "2"]));
        assert_eq!(c.zrange::<_, Vec<String>>("k", 0, -1).unwrap(), vec!["a"]);
    });
}

#[test]
fn pop_timeouts_unblock_and_multi() {
    each_threads(|s| {
        let mut c = s.conn();
        let mut r = s.raw();
        for (cmd, ms) in [("BZPOPMIN q 0.15", 150u64), ("BZMPOP 0.05 1 q MAX", 50)] {
            let t = Instant::now();
            send(&mut r, cmd);
            r.expect(NIL_ARRAY);
            let took = t.elapsed();
            assert!(took >= Duration::from_millis(ms), "{cmd} answered after {took:?}");
            // The margin is for a loaded debug build.
            assert!(took < Duration::from_millis(ms + 500), "{cmd} answered after {took:?}");
        }
        let (_, id) = whoami(&mut r);
        send(&mut r, "BZPOPMAX q 0");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        let n: i64 = redis::cmd("CLIENT").arg("UNBLOCK").arg(id).arg("TIMEOUT").query(&mut c).unwrap();
        assert_eq!(n, 1);
        r.expect(NIL_ARRAY);
        send(&mut r, "BZMPOP 0 1 q MIN");
        wait_for("the waiter to block again", || blocked(&mut c) == 1);
        let n: i64 = redis::cmd("CLIENT").arg("UNBLOCK").arg(id).arg("ERROR").query(&mut c).unwrap();
        assert_eq!(n, 1);
        r.expect(b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
        assert_eq!(blocked(&mut c), 0);
        // Inside MULTI nothing blocks.
        rt(&mut r, "MULTI", OK);
        rt(&mut r, "BZPOPMIN q 0", b"+QUEUED\r\n");
        rt(&mut r, "BZMPOP 0 1 q MIN", b"+QUEUED\r\n");
        rt(&mut r, "EXEC", b"*2\r\n*-1\r\n*-1\r\n");
        // A transaction's writes wake a waiter after EXEC: what it left.
        let mut w = s.raw();
        send(&mut w, "BZPOPMIN q 0");
        wait_for("the waiter to block", || blocked(&mut c) == 1);
        rt(&mut r, "MULTI", OK);
        rt(&mut r, "ZADD q 1 a", b"+QUEUED\r\n");
        rt(&mut r, "ZPOPMIN q", b"+QUEUED\r\n");
        rt(&mut r, "ZADD q 2 b", b"+QUEUED\r\n");
        rt(&mut r, "EXEC", b"*3\r\n:1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n:1\r\n");
        w.expect(&bulks(&["q", "b", "2"]));
    });
}

#[test]
fn many_producers_and_pop_consumers_deliver_each_member_once() {
    each_threads(|s| {
        const PRODUCERS: usize = 4;
        const CONSUMERS: usize = 6;
        const PER: usize = 200;
        let port = s.port;
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|i| {
                std::thread::spawn(move || {
                    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap().get_connection().unwrap();
                    let mut got = Vec::new();
                    loop {
                        let cmd = if i % 2 == 0 { "BZPOPMIN" } else { "BZPOPMAX" };
                        let v: Option<(String, String, String)> = redis::cmd(cmd).arg("q1").arg("q2").arg("5").query(&mut c).unwrap();
                        match v {
                            Some((_, m, _)) if m.starts_with("stop") => return got,
                            Some((_, m, _)) => got.push(m),
                            None => panic!("a consumer timed out with members outstanding"),
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
                        let _: i64 = c.zadd(key, format!("{p}:{i}"), i).unwrap();
                    }
                })
            })
            .collect();
        for p in producers {
            p.join().unwrap();
        }
        let mut c = s.conn();
        // Stops sort between the other members, so each consumer's last
        // pop is its stop whichever end it takes from only once the rest
        // is gone: wait for that before adding them.
        wait_for("the members to be taken", || c.exists::<_, i64>(&["q1", "q2"]).unwrap() == 0);
        for i in 0..CONSUMERS {
            let _: i64 = c.zadd("q2", format!("stop{i}"), 0).unwrap();
        }
        let mut seen = HashSet::new();
        let mut total = 0;
        for h in consumers {
            for m in h.join().unwrap() {
                assert!(seen.insert(m.clone()), "{m} delivered twice");
                total += 1;
            }
        }
        assert_eq!(total, PRODUCERS * PER);
        assert!(!c.exists::<_, bool>("q2").unwrap());
        assert_eq!(blocked(&mut c), 0);
    });
}
