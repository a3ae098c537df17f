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

// ------------------------------------------------------------- searches --

const SICILY: &str = "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 edge1";

#[test]
fn search_replies() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, SICILY, b":3\r\n");
        rt(&mut r, "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHCOORD WITHDIST WITHHASH", b"*2\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n$18\r\n15.087267458438873\r\n$17\r\n37.50266842333162\r\n*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n*2\r\n$18\r\n13.361389338970184\r\n$16\r\n38.1155563954963\r\n");
        rt(&mut r, "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 400 km DESC WITHDIST", b"*3\r\n*2\r\n$7\r\nCatania\r\n$8\r\n166.2742\r\n*2\r\n$5\r\nedge1\r\n$7\r\n91.4007\r\n*2\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n");
        // COUNT keeps the nearest; with ANY, the first found.
        rt(&mut r, "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1", b"*1\r\n$7\r\nCatania\r\n");
        rt(&mut r, "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1 ANY", b"*1\r\n$7\r\nPalermo\r\n");
        // Unsorted, the members come in scan order; the units convert.
        rt(&mut r, "GEORADIUS Sicily 15 37 200000 m WITHDIST", b"*2\r\n*2\r\n$7\r\nPalermo\r\n$11\r\n190442.4298\r\n*2\r\n$7\r\nCatania\r\n$10\r\n56441.2579\r\n");
        rt(&mut r, "GEORADIUS Sicily 15 37 124.27 MI WITHDIST", b"*2\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n118.3357\r\n*2\r\n$7\r\nCatania\r\n$7\r\n35.0711\r\n");
        rt(&mut r, "GEORADIUSBYMEMBER Sicily Palermo 100 km", b"*2\r\n$7\r\nPalermo\r\n$5\r\nedge1\r\n");
        rt(&mut r, "GEORADIUSBYMEMBER_RO Sicily Catania 656168 ft DESC", b"*2\r\n$7\r\nPalermo\r\n$7\r\nCatania\r\n");
        rt(&mut r, "GEORADIUS_RO Sicily 15 37 200 km COUNT 2 DESC", b"*2\r\n$7\r\nPalermo\r\n$7\r\nCatania\r\n");
        rt(&mut r, "GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 200 km", b"*0\r\n");
        rt(&mut r, "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 m", b"*0\r\n");
        // Ties in distance: a full sort keeps the scan order (glibc's merge
        // sort), COUNT's partial quicksort its own.
        rt(&mut r, "GEOADD s 10 10 a 10 10 b 10 10 c 10 10 d 10 10 e 10 10 f 10 10 g 10 10 h 10.001 10 i 10.002 10 j 10.003 10 k 10.004 10 l 10.0001 10 m", b":13\r\n");
        rt(&mut r, "GEOSEARCH s FROMLONLAT 10 10 BYRADIUS 10 km DESC", &bulks(&["l", "k", "j", "i", "m", "a", "b", "c", "d", "e", "f", "g", "h"]));
        rt(&mut r, "GEOSEARCH s FROMLONLAT 10 10 BYRADIUS 10 km COUNT 12 DESC", &bulks(&["l", "k", "j", "i", "m", "f", "a", "h", "g", "b", "c", "d"]));
    });
}

#[test]
fn search_stores() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania", b":2\r\n");
        rt(&mut r, "SET dst old", OK);
        rt(&mut r, "EXPIRE dst 100", b":1\r\n");
        // The destination is replaced, its TTL gone.
        rt(&mut r, "GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 200 km", b":2\r\n");
        rt(&mut r, "TTL dst", b":-1\r\n");
        rt(&mut r, "ZRANGE dst 0 -1 WITHSCORES", b"*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n");
        rt(&mut r, "GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km STOREDIST DESC COUNT 1", b":1\r\n");
        rt(&mut r, "ZRANGE dst 0 -1 WITHSCORES", b"*2\r\n$7\r\nPalermo\r\n$18\r\n190.44242984775784\r\n");
        rt(&mut r, "GEORADIUS Sicily 15 37 200 km STOREDIST dst2 ASC", b":2\r\n");
        rt(&mut r, "ZRANGE dst2 0 -1 WITHSCORES", b"*4\r\n$7\r\nCatania\r\n$16\r\n56.4412578701582\r\n$7\r\nPalermo\r\n$18\r\n190.44242984775784\r\n");
        rt(&mut r, "GEORADIUSBYMEMBER Sicily Palermo 10 km STORE dst2", b":1\r\n");
        rt(&mut r, "ZRANGE dst2 0 -1 WITHSCORES", b"*2\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n");
        // Nothing found, or no source: the destination is deleted.
        rt(&mut r, "GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 1 m", b":0\r\n");
        rt(&mut r, "EXISTS dst", b":0\r\n");
        rt(&mut r, "GEORADIUS nokey 15 37 200 km STORE dst2", b":0\r\n");
        rt(&mut r, "EXISTS dst2", b":0\r\n");
        // GETKEYS follows the key specs (the first STORE, the first
        // STOREDIST); the command writes the last one.
        rt(&mut r, "COMMAND GETKEYS GEORADIUS Sicily 15 37 200 km STORE a STOREDIST b", &bulks(&["Sicily", "a", "b"]));
        rt(&mut r, "GEORADIUS Sicily 15 37 200 km STORE a STORE b", b":2\r\n");
        rt(&mut r, "EXISTS a b", b":1\r\n");
        rt(&mut r, "ZCARD b", b":2\r\n");
    });
}

#[test]
fn search_errors() {
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "GEOADD g 1 1 m", b":1\r\n");
        rt(&mut r, "SET str v", OK);
        rt(&mut r, "GEOSEARCH g BYRADIUS 1 km ASC DESC", b"-ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH\r\n");
        // The command's name as the client spelt it.
        rt(&mut r, "geosearch g FROMMEMBER m ASC DESC ASC", b"-ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch\r\n");
        rt(&mut r, "GeoSearchStore d g FROMMEMBER m ASC DESC ASC", b"-ERR exactly one of BYRADIUS and BYBOX can be specified for GeoSearchStore\r\n");
        rt(&mut r, "GEOSEARCH g FROMMEMBER m FROMLONLAT 1 1 BYRADIUS 1 km", b"-ERR syntax error\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km BYBOX 1 1 km", b"-ERR syntax error\r\n");
        rt(&mut r, "GEOSEARCH g FROMMEMBER nope BYRADIUS 1 km", b"-ERR could not decode requested zset member\r\n");
        rt(&mut r, "GEOSEARCH nokey FROMMEMBER nope BYRADIUS 1 km", b"*0\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS x km", b"-ERR need numeric radius\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS -1 km", b"-ERR radius cannot be negative\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYBOX x 1 km", b"-ERR need numeric width\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYBOX 1 x km", b"-ERR need numeric height\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYBOX 1 -1 km", b"-ERR height or width cannot be negative\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYBOX 1 1 yd", b"-ERR unsupported unit provided. please use M, KM, FT, MI\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 200 1 BYRADIUS 1 km", b"-ERR invalid longitude,latitude pair 200.000000,1.000000\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT 0", b"-ERR COUNT must be > 0\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT x", b"-ERR value is not an integer or out of range\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km ANY", b"-ERR the ANY argument requires COUNT argument\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km STOREDIST", b"-ERR syntax error\r\n");
        rt(&mut r, "GEOSEARCHSTORE d g FROMLONLAT 1 1 BYRADIUS 1 km WITHDIST", b"-ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n");
        rt(&mut r, "GEORADIUS g 1 1 1 km WITHHASH STORE d", b"-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n");
        rt(&mut r, "GEORADIUS_RO g 1 1 1 km STORE d", b"-ERR syntax error\r\n");
        rt(&mut r, "GEORADIUSBYMEMBER g nope 1 km", b"-ERR could not decode requested zset member\r\n");
        // Without the key, GEORADIUSBYMEMBER's radius is never read.
        rt(&mut r, "GEORADIUSBYMEMBER nokey nope x yd", b"*0\r\n");
        // The type is checked before the arguments.
        rt(&mut r, "GEOSEARCH str FROMLONLAT 1 1 bogus x", WRONGTYPE);
        rt(&mut r, "GEORADIUS str 1 1 1 km", WRONGTYPE);
        rt(&mut r, "GEOSEARCHSTORE d str FROMLONLAT 1 1 BYRADIUS 1 km", WRONGTYPE);
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1", b"-ERR wrong number of arguments for 'geosearch' command\r\n");
        rt(&mut r, "GEORADIUS g 1 1 1", b"-ERR wrong number of arguments for 'georadius' command\r\n");
        rt(&mut r, "GEOSEARCHSTORE d g FROMMEMBER m", b"-ERR wrong number of arguments for 'geosearchstore' command\r\n");
    });
}

#[test]
fn search_resp3() {
    each_threads(|s| {
        let mut r = s.raw();
        r.cmd(&[b"HELLO", b"3"]);
        r.cmd(&[b"PING"]);
        let mut buf = Vec::new();
        while !buf.ends_with(b"+PONG\r\n") {
            buf.extend(r.read_n(1));
        }
        rt(&mut r, "GEOADD g 1 1 m", b":1\r\n");
        rt(&mut r, "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km WITHCOORD WITHDIST WITHHASH", b"*1\r\n*4\r\n$1\r\nm\r\n$6\r\n0.0001\r\n:3377822707026402\r\n*2\r\n,0.9999999403953552\r\n,0.9999994591429768\r\n");
        rt(&mut r, "GEORADIUS g 1 1 1 km WITHCOORD", b"*1\r\n*2\r\n$1\r\nm\r\n*2\r\n,0.9999999403953552\r\n,0.9999994591429768\r\n");
        rt(&mut r, "GEOSEARCH nokey FROMLONLAT 1 1 BYRADIUS 1 km", b"*0\r\n");
    });
}

#[test]
fn coordinates_print_as_redis() {
    // Redis prints doubles with Grisu2, which is not always the shortest
    // form: one digit more here than Rust's `{}`.
    each_threads(|s| {
        let mut r = s.raw();
        rt(&mut r, "GEOADD t 117.10436850786209 41.229070992685656 x", b":1\r\n");
        rt(&mut r, "GEOPOS t x", b"*1\r\n*2\r\n$18\r\n117.10436850786209\r\n$18\r\n41.229070992685656\r\n");
        rt(&mut r, "GEOSEARCH t FROMMEMBER x BYRADIUS 1 m WITHCOORD", b"*1\r\n*2\r\n$1\r\nx\r\n*2\r\n$18\r\n117.10436850786209\r\n$18\r\n41.229070992685656\r\n");
        rt(&mut r, "ZADD z 41.229070992685656 m", b":1\r\n");
        rt(&mut r, "ZSCORE z m", b"$18\r\n41.229070992685656\r\n");
    });
}
