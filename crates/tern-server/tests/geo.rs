//! Black-box tests of the geospatial commands, at 1 and 2 worker threads:
//! exact bytes on a raw socket (checked against redis-server-unstable,
//! Redis 8.4) in RESP2 and RESP3, and a geo index being a sorted set.
mod common;
use common::*;

use redis::Commands;

#[test]
fn add_pos_dist_hash() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania", b":2\r\n");
        rt(&mut r, "ZSCORE Sicily Palermo", b"$16\r\n3479099956230698\r\n");
        rt(
            &mut r,
            "GEOPOS Sicily Palermo nope",
            b"*2\r\n*2\r\n$18\r\n13.361389338970184\r\n$16\r\n38.1155563954963\r\n*-1\r\n",
        );
        rt(&mut r, "GEODIST Sicily Palermo Catania", b"$11\r\n166274.1516\r\n");
        rt(&mut r, "GEODIST Sicily Palermo Catania KM", b"$8\r\n166.2742\r\n");
        rt(&mut r, "GEODIST Sicily Palermo Catania ft", b"$11\r\n545518.8700\r\n");
        rt(&mut r, "GEODIST Sicily Palermo Palermo mi", b"$6\r\n0.0000\r\n");
        rt(&mut r, "GEODIST Sicily Palermo nope", NIL);
        rt(&mut r, "GEODIST nokey a b", NIL);
        rt(&mut r, "GEOHASH Sicily Palermo Catania nope", b"*3\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n$-1\r\n");
        rt(&mut r, "GEOPOS nokey a b", b"*2\r\n*-1\r\n*-1\r\n");
        rt(&mut r, "GEOHASH nokey a", b"*1\r\n$-1\r\n");
        // The corners of the index: the upper one is clamped to the range.
        rt(&mut r, "GEOADD Sicily -180 -85.05112878 lo 180 85.05112878 hi", b":2\r\n");
        rt(
            &mut r,
            "GEOPOS Sicily lo hi",
            b"*2\r\n*2\r\n$19\r\n-179.99999731779099\r\n$18\r\n-85.05112751263943\r\n*2\r\n$3\r\n180\r\n$11\r\n85.05112878\r\n",
        );
        rt(&mut r, "GEOHASH Sicily lo hi", b"*2\r\n$11\r\n00bh0hbj200\r\n$11\r\nbp05b5048p0\r\n");
        // GEOADD is ZADD: its options, and the members as any sorted set's.
        rt(&mut r, "GEOADD Sicily CH 13.361389 38.115556 Palermo 1 1 new", b":1\r\n");
        rt(&mut r, "GEOADD Sicily XX CH 13 38 Palermo 1 1 other", b":1\r\n");
        rt(&mut r, "GEOADD Sicily NX 14 39 Palermo", b":0\r\n");
        rt(&mut r, "ZCARD Sicily", b":5\r\n");
        rt(&mut r, "TYPE Sicily", b"+zset\r\n");
        rt(&mut r, "ZREM Sicily new", b":1\r\n");
        rt(&mut r, "GEOPOS Sicily new", b"*1\r\n*-1\r\n");
    });
}

#[test]
fn errors() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "GEOADD g 200 10 x", b"-ERR invalid longitude,latitude pair 200.000000,10.000000\r\n");
        rt(&mut r, "GEOADD g 10 86 x", b"-ERR invalid longitude,latitude pair 10.000000,86.000000\r\n");
        rt(&mut r, "GEOADD g 1e-300 inf x", b"-ERR invalid longitude,latitude pair 0.000000,inf\r\n");
        rt(&mut r, "GEOADD g x 10 y", b"-ERR value is not a valid float\r\n");
        rt(&mut r, "GEOADD g NX XX 1 2 m", b"-ERR syntax error\r\n");
        rt(&mut r, "GEOADD g CH 1 2 m 3", b"-ERR syntax error\r\n");
        rt(&mut r, "GEOADD g GT 1 2 m", b"-ERR syntax error\r\n");
        rt(&mut r, "GEOADD g NX CH 1 1", b"-ERR syntax error\r\n");
        rt(&mut r, "GEOADD g 1 2", b"-ERR wrong number of arguments for 'geoadd' command\r\n");
        rt(&mut r, "EXISTS g", b":0\r\n");
        rt(&mut r, "GEOADD g 1 2 m", b":1\r\n");
        rt(&mut r, "GEODIST g m m yd", b"-ERR unsupported unit provided. please use M, KM, FT, MI\r\n");
        rt(&mut r, "GEODIST g m m km x", b"-ERR syntax error\r\n");
        rt(&mut r, "SET str v", OK);
        rt(&mut r, "GEOADD str 1 2 m", WRONGTYPE);
        // The coordinates are checked before the key.
        rt(&mut r, "GEOADD str 200 2 m", b"-ERR invalid longitude,latitude pair 200.000000,2.000000\r\n");
        rt(&mut r, "GEOPOS str a", WRONGTYPE);
        rt(&mut r, "GEODIST str a b", WRONGTYPE);
        rt(&mut r, "GEOHASH str a", WRONGTYPE);
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
        rt(&mut r, "GEOADD g 13 38 a 15.087269 37.502669 b", b":2\r\n");
        rt(&mut r, "GEOPOS g a nope", b"*2\r\n*2\r\n,12.999999225139618\r\n,38.000000992563194\r\n_\r\n");
        // A distance stays a bulk string in RESP3, as in Redis.
        rt(&mut r, "GEODIST g a b", b"$11\r\n191711.0024\r\n");
        rt(&mut r, "GEODIST g a nope", b"_\r\n");
        rt(&mut r, "GEOHASH g a nope", b"*2\r\n$11\r\nsqc0pvdq1c0\r\n_\r\n");
    });
}

#[test]
fn geoadd_wakes_a_blocked_pop() {
    let s = TestServer::start(2);
    let mut c = s.conn();
    let mut w = raw_on(&s, 0);
    send(&mut w, "BZPOPMIN g 0");
    wait_for("the waiter to block", || blocked(&mut c) == 1);
    let mut p = raw_on(&s, 1);
    rt(&mut p, "GEOADD g 13.361389 38.115556 Palermo", b":1\r\n");
    w.expect(&bulks(&["g", "Palermo", "3479099956230698"]));
    assert!(!c.exists::<_, bool>("g").unwrap());
}
