//! Geospatial commands (GEOADD, GEOPOS, GEODIST, GEOHASH) over sorted
//! sets, as Redis's `geo.c` and `geohash.c` do them: a member's position
//! is its score, a 52-bit geohash, so a geo index is an ordinary sorted
//! set (ZRANGE, ZREM and the rest work on it, and GEOADD is ZADD).
//!
//! ```text
//!  score (an integer below 2^53, exact in a double), bit 51 first:
//!  | lon25 lat25 | lon24 lat24 | ... | lon0 lat0 |
//!  lon: 26 bits over [-180, 180]; lat: 26 bits over ±85.05112878 (the
//!  Web Mercator limit), each the cell's index truncated from
//!  (x - min) / (max - min) * 2^26
//! ```
//!
//! Decoding gives the centre of the cell (clamped to the ranges), which is
//! why GEOPOS does not return what GEOADD was given. GEOHASH re-encodes
//! that centre over latitude [-90, 90], the standard geohash's, as 11
//! base-32 characters (the last one always `0`: 52 bits fill 10.4).
//!
//! Non-goals (not yet): GEORADIUS, GEORADIUSBYMEMBER, GEOSEARCH and
//! GEOSEARCHSTORE.

use tern_resp::{string2d, Args};
use tern_store::EntryExt;

use super::keyspec::{index, ks, range, ACCESS, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::{Ctx, Reply};
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("geoadd", -5, WRITE | DENYOOM, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], geoadd)
        .doc("geo", "Adds one or more members to a geospatial index. The key is created if it doesn't exist.", "3.2.0", "O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        .acl(&["write", "geo", "slow"])
        .history(&[("6.2.0", "Added the `CH`, `NX` and `XX` options.")]),
    CommandSpec::new("geopos", -2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], geopos)
        .doc("geo", "Returns the longitude and latitude of members from a geospatial index.", "3.2.0", "O(1) for each member requested.")
        .acl(&["read", "geo", "slow"]),
    CommandSpec::new("geodist", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], geodist)
        .doc("geo", "Returns the distance between two members of a geospatial index.", "3.2.0", "O(1)")
        .acl(&["read", "geo", "slow"]),
    CommandSpec::new("geohash", -2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], geohash)
        .doc("geo", "Returns members from a geospatial index as geohash strings.", "3.2.0", "O(1) for each member requested.")
        .acl(&["read", "geo", "slow"]),
];

/// Bits per coordinate (Redis's `GEO_STEP_MAX`).
const STEP: u32 = 26;
const LONG_MIN: f64 = -180.0;
const LONG_MAX: f64 = 180.0;
const LAT_MIN: f64 = -85.05112878;
const LAT_MAX: f64 = 85.05112878;
/// The Earth's radius Redis measures with, in metres.
const EARTH_RADIUS_M: f64 = 6372797.560856;
const GEOALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

/// Spreads the 32 bits of `x` to the even bits of a u64.
fn spread(x: u32) -> u64 {
    let mut x = u64::from(x);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// The even bits of `x`, packed (the inverse of [`spread`]).
fn squash(x: u64) -> u32 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    ((x | (x >> 16)) & 0x0000_0000_FFFF_FFFF) as u32
}

/// Redis's `geohashEncode` at 26 steps: latitude in the even bits,
/// longitude in the odd ones. The offsets are truncated to u32 as C does,
/// so a coordinate at its range's maximum gives index 2^26.
fn encode(lon: f64, lat: f64, lat_min: f64, lat_max: f64) -> u64 {
    let scale = f64::from(1u32 << STEP);
    let lat_offset = (lat - lat_min) / (lat_max - lat_min) * scale;
    let long_offset = (lon - LONG_MIN) / (LONG_MAX - LONG_MIN) * scale;
    spread(lat_offset as u32) | (spread(long_offset as u32) << 1)
}

/// A double converted to `uint64_t` as Redis's x86-64 build does it
/// (`cvttsd2si`, shifted by 2^63 for the upper half): exact for the scores
/// GEOADD writes; a negative or too large score (ZADD can write any)
/// wraps as there rather than saturating as Rust's `as` does, so GEOPOS
/// and GEOHASH answer what Redis answers for them.
fn c_u64(x: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    const INDEFINITE: u64 = 1 << 63;
    let cvtt = |x: f64| if x.is_nan() || !(-TWO63..TWO63).contains(&x) { INDEFINITE } else { x as i64 as u64 };
    if x < TWO63 {
        cvtt(x)
    } else {
        cvtt(x - TWO63) ^ INDEFINITE
    }
}

/// The centre of the cell a score names, clamped to the ranges
/// (Redis's `decodeGeohash`): (longitude, latitude).
fn decode(score: f64) -> (f64, f64) {
    let bits = c_u64(score);
    let (ilat, ilon) = (squash(bits), squash(bits >> 1));
    let scale = (1u64 << STEP) as f64;
    let lat_scale = LAT_MAX - LAT_MIN;
    let long_scale = LONG_MAX - LONG_MIN;
    let lat_lo = LAT_MIN + (f64::from(ilat) / scale) * lat_scale;
    let lat_hi = LAT_MIN + ((f64::from(ilat) + 1.0) / scale) * lat_scale;
    let lon_lo = LONG_MIN + (f64::from(ilon) / scale) * long_scale;
    let lon_hi = LONG_MIN + ((f64::from(ilon) + 1.0) / scale) * long_scale;
    let lon = ((lon_lo + lon_hi) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((lat_lo + lat_hi) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// The haversine distance in metres (Redis's `geohashGetDistance`).
fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let rad = |d: f64| d * (std::f64::consts::PI / 180.0);
    let v = ((rad(lon2) - rad(lon1)) / 2.0).sin();
    if v == 0.0 {
        return EARTH_RADIUS_M * (rad(lat2) - rad(lat1)).abs();
    }
    let (lat1r, lat2r) = (rad(lat1), rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// `d` with four decimals, rounded half to even as Redis's
/// `fixedpoint_d2string` (`llrint`) does.
fn fixed4(d: f64) -> String {
    let v = (d * 10000.0).round_ties_even() as i64;
    let sign = if v < 0 { "-" } else { "" };
    let v = v.unsigned_abs();
    format!("{sign}{}.{:04}", v / 10000, v % 10000)
}

/// The 11-character standard geohash of a score.
fn geohash_string(score: f64) -> [u8; 11] {
    let (lon, lat) = decode(score);
    let bits = encode(lon, lat, -90.0, 90.0);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        *c = GEOALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    out
}

/// Metres per `unit` (Redis's `extractUnitOrReply`).
fn unit(arg: &[u8]) -> Option<f64> {
    let a = errors::c_str(arg);
    [(&b"m"[..], 1.0), (b"km", 1000.0), (b"ft", 0.3048), (b"mi", 1609.34)]
        .into_iter()
        .find(|(u, _)| a.eq_ignore_ascii_case(u))
        .map(|(_, m)| m)
}

/// GEOADD: ZADD with each `lon lat` turned into its score (Redis runs
/// ZADD over the rewritten arguments, and so does this).
fn geoadd(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (mut xx, mut nx) = (false, false);
    let mut at = 2;
    while at < args.len() {
        let a = errors::c_str(args.get(at));
        if a.eq_ignore_ascii_case(b"nx") {
            nx = true;
        } else if a.eq_ignore_ascii_case(b"xx") {
            xx = true;
        } else if !a.eq_ignore_ascii_case(b"ch") {
            break;
        }
        at += 1;
    }
    if !(args.len() - at).is_multiple_of(3) || (xx && nx) {
        return ctx.reply.error(errors::SYNTAX);
    }
    let mut data = Vec::new();
    let mut ranges = Vec::new();
    let mut push = |b: &[u8]| {
        ranges.push((data.len(), b.len()));
        data.extend_from_slice(b);
    };
    push(b"zadd");
    for i in 1..at {
        push(args.get(i));
    }
    for i in (at..args.len()).step_by(3) {
        let (Some(lon), Some(lat)) = (string2d(args.get(i)), string2d(args.get(i + 1))) else {
            return ctx.reply.error(errors::NOT_FLOAT);
        };
        if !(LONG_MIN..=LONG_MAX).contains(&lon) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
            return ctx.reply.error(errors::geo_invalid_pair(lon, lat));
        }
        push(encode(lon, lat, LAT_MIN, LAT_MAX).to_string().as_bytes());
        push(args.get(i + 2));
    }
    super::zsets::zadd(ctx, Args::from_parts(&data, &ranges))
}

/// GEOPOS: `[longitude, latitude]` per member, a null array for one
/// that is absent.
fn geopos(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let n = args.len() - 2;
    let z = read_typed!(ctx, args.get(1), zset, |r: &mut Reply<'_>| {
        r.array(n);
        for _ in 0..n {
            r.null_array();
        }
    });
    ctx.reply.array(n);
    for m in args.tail(2).iter() {
        match z.score(m) {
            Some(s) => {
                let (lon, lat) = decode(s);
                ctx.reply.array(2);
                ctx.reply.double(lon);
                ctx.reply.double(lat);
            }
            None => ctx.reply.null_array(),
        }
    }
}

/// GEODIST: always a bulk string with four decimals, even in RESP3.
fn geodist(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let to_meter = match args.len() {
        4 => 1.0,
        5 => match unit(args.get(4)) {
            Some(m) => m,
            None => return ctx.reply.error(errors::GEO_UNIT),
        },
        _ => return ctx.reply.error(errors::SYNTAX),
    };
    let z = read_typed!(ctx, args.get(1), zset, |r: &mut Reply<'_>| r.null());
    let (Some(a), Some(b)) = (z.score(args.get(2)), z.score(args.get(3))) else {
        return ctx.reply.null();
    };
    let ((lon1, lat1), (lon2, lat2)) = (decode(a), decode(b));
    ctx.reply.bulk(fixed4(distance(lon1, lat1, lon2, lat2) / to_meter).as_bytes());
}

/// GEOHASH: the standard 11-character geohash per member, a null bulk
/// for one that is absent.
fn geohash(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let n = args.len() - 2;
    let z = read_typed!(ctx, args.get(1), zset, |r: &mut Reply<'_>| {
        r.array(n);
        for _ in 0..n {
            r.null();
        }
    });
    ctx.reply.array(n);
    for m in args.tail(2).iter() {
        match z.score(m) {
            Some(s) => ctx.reply.bulk(&geohash_string(s)),
            None => ctx.reply.null(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values from redis-server-unstable (Redis 8.4).
    #[test]
    fn scores_are_redis_geohashes() {
        assert_eq!(encode(13.361389, 38.115556, LAT_MIN, LAT_MAX), 3479099956230698);
        assert_eq!(encode(15.087269, 37.502669, LAT_MIN, LAT_MAX), 3479447370796909);
        assert_eq!(decode(3479099956230698.0), (13.361389338970184, 38.1155563954963));
        // The corners: index 0, and 2^26 (one past the last cell) clamped.
        assert_eq!(decode(0.0), (-179.99999731779099, -85.05112751263943));
        assert_eq!(decode(encode(LONG_MAX, LAT_MAX, LAT_MIN, LAT_MAX) as f64), (180.0, 85.05112878));
        assert_eq!(&geohash_string(3479099956230698.0), b"sqc8b49rny0");
        assert_eq!(&geohash_string(3479447370796909.0), b"sqdtr74hyu0");
        assert_eq!(&geohash_string(0.0), b"00bh0hbj200");
    }

    #[test]
    fn scores_out_of_range_convert_as_redis_on_x86_64() {
        assert_eq!(c_u64(-1.0), u64::MAX);
        assert_eq!(c_u64(1e30), 0);
        assert_eq!(c_u64(-1e30), 1 << 63);
        assert_eq!(c_u64(1.5), 1);
        assert_eq!(c_u64(9_223_372_036_854_775_808.0), 1 << 63);
        assert_eq!(decode(-1.0), (180.0, 85.05112878));
        assert_eq!(&geohash_string(1e30), b"00bh0hbj200");
    }

    #[test]
    fn distances_print_as_redis() {
        let ((a, b), (c, d)) = (decode(3479099956230698.0), decode(3479447370796909.0));
        assert_eq!(fixed4(distance(a, b, c, d)), "166274.1516");
        assert_eq!(fixed4(distance(a, b, c, d) / 1609.34), "103.3182");
        assert_eq!(fixed4(distance(a, b, a, b)), "0.0000");
        assert_eq!(fixed4(1.23456), "1.2346");
        assert_eq!(fixed4(12.0), "12.0000");
    }

    #[test]
    fn bits_spread_and_squash_back() {
        for x in [0u32, 1, 0x3ff_ffff, 0x400_0000, u32::MAX, 0x1234_5678] {
            assert_eq!(squash(spread(x)), x);
            assert_eq!(spread(x) & !0x5555_5555_5555_5555, 0);
        }
    }
}
