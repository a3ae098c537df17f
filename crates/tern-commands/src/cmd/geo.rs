//! Geospatial commands (GEOADD, GEOPOS, GEODIST, GEOHASH, the searches) over
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
//! The searches (GEOSEARCH, GEOSEARCHSTORE and the older GEORADIUS
//! forms) scan the sorted set by score, as Redis's `geohash_helper.c`
//! does: the centre's cell at a step coarse enough for the radius, and
//! its eight neighbours, each a score range; every member found is then
//! checked against the exact shape (haversine distance, or a box along
//! meridian and parallel).
//!
//! ```text
//!   +----+----+----+
//!   | NW | N  | NE |    a cell at step s holds the scores
//!   +----+----+----+    [bits << (52-2s), (bits+1) << (52-2s))
//!   | W  | C  | E  |
//!   +----+----+----+    neighbours the shape's bounds do not reach
//!   | SW | S  | SE |    are skipped
//!   +----+----+----+
//! ```

use crate::messaging::notify::ev;
use std::borrow::Cow;
use std::cmp::Ordering;

use tern_resp::{parse_i64, string2d, Args};
use tern_store::{EntryExt, Loc, ScoreBound, ZSet};

use super::hashes::is;
use super::keyspec::{index, keyword, ks, range, Key, KeySpec, ACCESS, OW, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::{Ctx, Reply};
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("geoadd", -5, WRITE | DENYOOM, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], geoadd)
        .event(ev::ZADD)
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
    CommandSpec::new("georadius", -6, WRITE | DENYOOM | MANUAL_LOCKS, GEORADIUS_KEYS, georadius)
        .event(ev::GEORADIUSSTORE)
        .doc("geo", "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.", "3.2.0", RADIUS_COMPLEXITY)
        .acl(&["write", "geo", "slow"])
        .history(RADIUS_HISTORY)
        .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument"),
    CommandSpec::new("georadius_ro", -6, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], georadius_ro)
        .doc("geo", "Returns members from a geospatial index that are within a distance from a coordinate.", "3.2.10", RADIUS_COMPLEXITY)
        .acl(&["read", "geo", "slow"])
        .history(RADIUS_HISTORY)
        .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` argument"),
    CommandSpec::new("georadiusbymember", -5, WRITE | DENYOOM | MANUAL_LOCKS, GEORADIUSBYMEMBER_KEYS, georadiusbymember)
        .event(ev::GEORADIUSSTORE)
        .doc("geo", "Queries a geospatial index for members within a distance from a member, optionally stores the result.", "3.2.0", RADIUS_COMPLEXITY)
        .acl(&["write", "geo", "slow"])
        .history(RADIUS_HISTORY)
        .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments"),
    CommandSpec::new("georadiusbymember_ro", -5, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], georadiusbymember_ro)
        .doc("geo", "Returns members from a geospatial index that are within a distance from a member.", "3.2.10", RADIUS_COMPLEXITY)
        .acl(&["read", "geo", "slow"])
        .history(RADIUS_HISTORY)
        .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments"),
    CommandSpec::new("geosearch", -7, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], geosearch)
        .doc("geo", "Queries a geospatial index for members inside an area of a box or a circle.", "6.2.0", SEARCH_COMPLEXITY)
        .acl(&["read", "geo", "slow"])
        .history(&[("7.0.0", "Added support for uppercase unit names.")]),
    CommandSpec::new("geosearchstore", -8, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(0, 1, 0))], geosearchstore)
        .event(ev::GEOSEARCHSTORE)
        .doc("geo", "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.", "6.2.0", SEARCH_COMPLEXITY)
        .acl(&["write", "geo", "slow"])
        .history(&[("7.0.0", "Added support for uppercase unit names.")]),
];

const RADIUS_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.";
const SEARCH_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape";
const RADIUS_HISTORY: &[(&str, &str)] =
    &[("6.2.0", "Added the `ANY` option for `COUNT`."), ("7.0.0", "Added support for uppercase unit names.")];

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
    encode_step(lon, lat, lat_min, lat_max, STEP)
}

/// [`encode`] with `step` bits per coordinate (a search's coarser cells).
fn encode_step(lon: f64, lat: f64, lat_min: f64, lat_max: f64, step: u32) -> u64 {
    let scale = (1u64 << step) as f64;
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
    let a = Area::of(Cell { bits: c_u64(score), step: STEP });
    let lon = ((a.lon_min + a.lon_max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((a.lat_min + a.lat_max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

fn rad(deg: f64) -> f64 {
    deg * (std::f64::consts::PI / 180.0)
}

fn deg(rad: f64) -> f64 {
    rad / (std::f64::consts::PI / 180.0)
}

/// The distance in metres along a meridian (Redis's
/// `geohashGetLatDistance`).
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (rad(lat2) - rad(lat1)).abs()
}

/// The haversine distance in metres (Redis's `geohashGetDistance`).
fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    haversine(lon1, lat1, lon2, lat2, f64::cos, f64::cos)
}

/// [`distance`], with each latitude's cosine from `cos1` and `cos2`
/// (given the latitude in radians): a search passes the cosine of its
/// centre's latitude, worked out once, and gets the same bits as
/// `cos` would give each time.
fn haversine(lon1: f64, lat1: f64, lon2: f64, lat2: f64, cos1: impl FnOnce(f64) -> f64, cos2: impl FnOnce(f64) -> f64) -> f64 {
    let v = ((rad(lon2) - rad(lon1)) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (rad(lat1), rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + cos1(lat1r) * cos2(lat2r) * v * v;
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

// --------------------------------------------------------------- search --

/// A geohash of `step` bits per coordinate (Redis's `GeoHashBits`): a
/// cell of the grid that halves the ranges `step` times.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Cell {
    bits: u64,
    step: u32,
}

impl Cell {
    fn of(lon: f64, lat: f64, step: u32) -> Cell {
        Cell { bits: encode_step(lon, lat, LAT_MIN, LAT_MAX, step), step }
    }

    /// The cell `dx` columns east and `dy` rows north, wrapping at the
    /// edges (Redis's `geohash_move_x` / `geohash_move_y`): the
    /// coordinate's bits are incremented in place, the other
    /// coordinate's bits filled with ones so that the carry crosses them.
    fn moved(self, dx: i8, dy: i8) -> Cell {
        const LAT_BITS: u64 = 0x5555_5555_5555_5555;
        const LON_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;
        let shift = 64 - self.step * 2;
        let step_coord = |bits: u64, mine: u64, d: i8| {
            let (own, other) = (bits & mine, bits & !mine);
            let zz = !mine >> shift;
            let own = match d {
                0 => return bits,
                1.. => own.wrapping_add(zz + 1),
                _ => (own | zz).wrapping_sub(zz + 1),
            };
            (own & (mine >> shift)) | other
        };
        let bits = step_coord(self.bits, LON_BITS, dx);
        Cell { bits: step_coord(bits, LAT_BITS, dy), step: self.step }
    }

    /// The scores `min..max` (max excluded) of the 52-bit geohashes
    /// inside this cell (Redis's `scoresOfGeoHashBox`).
    fn scores(self) -> (f64, f64) {
        let shift = 52 - self.step * 2;
        ((self.bits << shift) as f64, ((self.bits + 1) << shift) as f64)
    }
}

/// The bounds of a cell (Redis's `geohashDecode`), not clamped.
struct Area {
    lon_min: f64,
    lon_max: f64,
    lat_min: f64,
    lat_max: f64,
}

impl Area {
    fn of(c: Cell) -> Area {
        let (ilat, ilon) = (squash(c.bits), squash(c.bits >> 1));
        let scale = (1u64 << c.step) as f64;
        let (lat_scale, long_scale) = (LAT_MAX - LAT_MIN, LONG_MAX - LONG_MIN);
        Area {
            lat_min: LAT_MIN + (f64::from(ilat) / scale) * lat_scale,
            lat_max: LAT_MIN + ((f64::from(ilat) + 1.0) / scale) * lat_scale,
            lon_min: LONG_MIN + (f64::from(ilon) / scale) * long_scale,
            lon_max: LONG_MIN + ((f64::from(ilon) + 1.0) / scale) * long_scale,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum By {
    Radius(f64),
    /// Width, height.
    Box(f64, f64),
}

/// What a search covers: around (lon, lat), the sizes in the unit that
/// `to_m` converts to metres (Redis's `GeoShape`).
#[derive(Clone, Copy, Debug)]
struct Shape {
    lon: f64,
    lat: f64,
    by: By,
    to_m: f64,
    /// The cosine of `lat` in radians, for the distances from the centre.
    cos_lat: f64,
}

/// Half the Mercator projection's width in metres: the radius at which
/// one cell (step 1) is still wide enough.
const MERCATOR_MAX: f64 = 20037726.37;

/// The cell size for a search of `range` metres (Redis's
/// `geohashEstimateStepsByRadius`): the finest step whose cells are at
/// least `range` wide, coarser near the poles where cells narrow.
fn estimate_steps(mut range: f64, lat: f64) -> u32 {
    if range == 0.0 {
        return STEP;
    }
    let mut step = 1i32;
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    // Two steps coarser, so that the range fits the nine cells in most
    // cases (the neighbour check below catches the rest).
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, STEP as i32) as u32
}

impl Shape {
    /// The longitude and latitude bounds of the shape (Redis's
    /// `geohashBoundingBox`): min lon, min lat, max lon, max lat. The
    /// longitude span is taken at the edge nearer the pole, where a
    /// metre is the most degrees.
    fn bounds(&self) -> [f64; 4] {
        let (height, width) = match self.by {
            By::Radius(r) => (self.to_m * r, self.to_m * r),
            By::Box(w, h) => (self.to_m * h / 2.0, self.to_m * w / 2.0),
        };
        let lat_delta = deg(height / EARTH_RADIUS_M);
        let long_delta_top = deg(width / EARTH_RADIUS_M / rad(self.lat + lat_delta).cos());
        let long_delta_bottom = deg(width / EARTH_RADIUS_M / rad(self.lat - lat_delta).cos());
        let long_delta = if self.lat < 0.0 { long_delta_bottom } else { long_delta_top };
        [self.lon - long_delta, self.lat - lat_delta, self.lon + long_delta, self.lat + lat_delta]
    }

    /// The cells to scan (Redis's `geohashCalculateAreasByShapeWGS84`):
    /// the centre's cell and its eight neighbours at the estimated step,
    /// one step coarser when a neighbour does not reach the bounds, and
    /// without the neighbours the bounds do not reach (None). In Redis's
    /// order: centre, N, S, E, W, NE, NW, SE, SW.
    fn cells(&self) -> [Option<Cell>; 9] {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounds();
        let radius = match self.by {
            By::Radius(r) => r,
            By::Box(w, h) => ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
        } * self.to_m;
        let mut steps = estimate_steps(radius, self.lat);
        let around = |c: Cell| {
            [c, c.moved(0, 1), c.moved(0, -1), c.moved(1, 0), c.moved(-1, 0), c.moved(1, 1), c.moved(-1, 1), c.moved(1, -1), c.moved(-1, -1)]
        };
        let mut cells = around(Cell::of(self.lon, self.lat, steps));
        let (n, s, e, w) = (Area::of(cells[1]), Area::of(cells[2]), Area::of(cells[3]), Area::of(cells[4]));
        let short = n.lat_max < max_lat || s.lat_min > min_lat || e.lon_max < max_lon || w.lon_min > min_lon;
        if steps > 1 && short {
            steps -= 1;
            cells = around(Cell::of(self.lon, self.lat, steps));
        }
        let mut out = cells.map(Some);
        if steps >= 2 {
            let area = Area::of(cells[0]);
            let mut drop = |idx: [usize; 3]| idx.iter().for_each(|&i| out[i] = None);
            if area.lat_min < min_lat {
                drop([2, 7, 8]);
            }
            if area.lat_max > max_lat {
                drop([1, 5, 6]);
            }
            if area.lon_min < min_lon {
                drop([4, 8, 6]);
            }
            if area.lon_max > max_lon {
                drop([3, 7, 5]);
            }
        }
        out
    }

    /// The distance in metres from the centre to the point a score names
    /// and the point, if it is inside the shape (Redis's
    /// `geoWithinShape`). A box is checked along the meridian, then
    /// along the point's parallel.
    ///
    /// A point farther from the centre along the meridian than the radius
    /// (with a margin far wider than the rounding of either figure) is
    /// outside without the haversine's sines and arcsine: the great-circle
    /// distance is never shorter.
    fn contains(&self, score: f64) -> Option<(f64, f64, f64)> {
        let (lon, lat) = decode(score);
        let centre = |_| self.cos_lat;
        match self.by {
            By::Radius(r) => {
                let r = r * self.to_m;
                if lat_distance(self.lat, lat) > r * (1.0 + 1e-9) {
                    return None;
                }
                let d = haversine(self.lon, self.lat, lon, lat, centre, f64::cos);
                (d <= r).then_some((d, lon, lat))
            }
            By::Box(w, h) => {
                if lat_distance(lat, self.lat) > h * self.to_m / 2.0 {
                    return None;
                }
                let cos = rad(lat).cos();
                if haversine(lon, lat, self.lon, lat, |_| cos, |_| cos) > w * self.to_m / 2.0 {
                    return None;
                }
                Some((haversine(self.lon, self.lat, lon, lat, centre, |_| cos), lon, lat))
            }
        }
    }
}

/// A member found by a search (Redis's `geoPoint`); `dist` in metres.
struct Point<'a> {
    member: &'a [u8],
    score: f64,
    dist: f64,
    lon: f64,
    lat: f64,
}

/// The members inside the shape, cell by cell in [`Shape::cells`]'s
/// order and by score inside a cell (Redis's `membersOfAllNeighbors`); a
/// cell equal to the one scanned before it is skipped (huge radii wrap
/// around). With `limit` (COUNT ... ANY), the scan stops once that many
/// are found.
fn points_within<'a>(z: &'a ZSet, shape: &Shape, limit: usize) -> Vec<Point<'a>> {
    let mut out = Vec::new();
    let cells = shape.cells();
    let mut last: Option<Cell> = None;
    let full = |out: &Vec<Point<'_>>| limit > 0 && out.len() >= limit;
    for cell in cells.into_iter().flatten() {
        if last == Some(cell) {
            continue;
        }
        if full(&out) {
            break;
        }
        let (min, max) = cell.scores();
        z.for_scores(ScoreBound { value: min, exclusive: false }, ScoreBound { value: max, exclusive: true }, |member, score| {
            if let Some((dist, lon, lat)) = shape.contains(score) {
                out.push(Point { member, score, dist, lon, lat });
            }
            !full(&out)
        });
        last = Some(cell);
    }
    out
}

/// Redis's `pqsort` (Bentley and McIlroy's quicksort, recursing only into
/// the parts that overlap positions `lo..=hi`; as Redis 7+ has it, without
/// the switch to insertion sort after a pass without swaps): what COUNT
/// without ANY sorts with, so equal distances come out in Redis's order.
fn pqsort<T>(v: &mut [T], lo: usize, hi: usize, cmp: &impl Fn(&T, &T) -> Ordering) {
    pqsort_at(v, 0, v.len(), lo, hi, cmp)
}

/// [`pqsort`] of `v[a..a + n]` (positions stay absolute, as `lo..=hi`).
fn pqsort_at<T>(v: &mut [T], mut a: usize, mut n: usize, lo: usize, hi: usize, cmp: &impl Fn(&T, &T) -> Ordering) {
    let overlaps = |a: usize, n: usize| !((lo < a && hi < a) || (lo >= a + n && hi >= a + n));
    let insertion = |v: &mut [T], a: usize, n: usize| {
        for m in a + 1..a + n {
            let mut l = m;
            while l > a && cmp(&v[l - 1], &v[l]) == Ordering::Greater {
                v.swap(l, l - 1);
                l -= 1;
            }
        }
    };
    let med3 = |v: &[T], a: usize, b: usize, c: usize| {
        if cmp(&v[a], &v[b]) == Ordering::Less {
            if cmp(&v[b], &v[c]) == Ordering::Less {
                b
            } else if cmp(&v[a], &v[c]) == Ordering::Less {
                c
            } else {
                a
            }
        } else if cmp(&v[b], &v[c]) == Ordering::Greater {
            b
        } else if cmp(&v[a], &v[c]) == Ordering::Less {
            a
        } else {
            c
        }
    };
    let vecswap = |v: &mut [T], a: usize, b: usize, n: usize| (0..n).for_each(|i| v.swap(a + i, b + i));
    loop {
        if n < 7 {
            return insertion(v, a, n);
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let (mut pl, mut pn) = (a, a + n - 1);
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d);
                pm = med3(v, pm - d, pm, pm + d);
                pn = med3(v, pn - 2 * d, pn - d, pn);
            }
            pm = med3(v, pl, pm, pn);
        }
        v.swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        let (mut pc, mut pd) = (a + n - 1, a + n - 1);
        loop {
            while pb <= pc {
                match cmp(&v[pb], &v[a]) {
                    Ordering::Greater => break,
                    Ordering::Equal => {
                        v.swap(pa, pb);
                        pa += 1;
                    }
                    Ordering::Less => {}
                }
                pb += 1;
            }
            while pb <= pc {
                match cmp(&v[pc], &v[a]) {
                    Ordering::Less => break,
                    Ordering::Equal => {
                        v.swap(pc, pd);
                        pd -= 1;
                    }
                    Ordering::Greater => {}
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(v, a, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vecswap(v, pb, pn - r, r);
        let r = pb - pa;
        if r > 1 && overlaps(a, r) {
            pqsort_at(v, a, r, lo, hi, cmp);
        }
        let r = pd - pc;
        if r > 1 && overlaps(pn - r, r) {
            a = pn - r;
            n = r;
            continue;
        }
        return;
    }
}

/// The search commands, told apart as Redis's `georadiusGeneric` flags do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// GEORADIUS (`ro`: GEORADIUS_RO, without STORE).
    Radius { ro: bool },
    /// GEORADIUSBYMEMBER (and _RO).
    ByMember { ro: bool },
    /// GEOSEARCH.
    Search,
    /// GEOSEARCHSTORE.
    SearchStore,
}

impl Kind {
    fn src(self) -> usize {
        if self == Kind::SearchStore {
            2
        } else {
            1
        }
    }

    fn is_search(self) -> bool {
        matches!(self, Kind::Search | Kind::SearchStore)
    }

    /// Whether STORE and STOREDIST take a key (GEORADIUS, GEORADIUSBYMEMBER).
    fn stores(self) -> bool {
        matches!(self, Kind::Radius { ro: false } | Kind::ByMember { ro: false })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// A search's arguments (`shape` is None only when the source key is
/// absent, which ends the command before it is needed).
struct Query {
    shape: Option<Shape>,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    sort: Sort,
    /// COUNT's value; 0 without COUNT.
    count: usize,
    any: bool,
    /// The destination's argument index, and whether it stores distances.
    store: Option<(usize, bool)>,
}

type GeoError = Cow<'static, [u8]>;

fn err(msg: &'static str) -> GeoError {
    Cow::Borrowed(msg.as_bytes())
}

/// `lon lat` at `args[at..]` (Redis's `extractLongLatOrReply`).
fn lon_lat(args: Args<'_>, at: usize) -> Result<(f64, f64), GeoError> {
    let lon = string2d(args.get(at)).ok_or(err(errors::NOT_FLOAT))?;
    let lat = string2d(args.get(at + 1)).ok_or(err(errors::NOT_FLOAT))?;
    if !(LONG_MIN..=LONG_MAX).contains(&lon) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
        return Err(Cow::Owned(errors::geo_invalid_pair(lon, lat).into_bytes()));
    }
    Ok((lon, lat))
}

/// `radius unit` at `args[at..]`: the radius and metres per unit.
fn radius_unit(args: Args<'_>, at: usize) -> Result<(By, f64), GeoError> {
    let r = string2d(args.get(at)).ok_or(err(errors::GEO_NEED_RADIUS))?;
    if r < 0.0 {
        return Err(err(errors::GEO_RADIUS_NEGATIVE));
    }
    Ok((By::Radius(r), unit(args.get(at + 1)).ok_or(err(errors::GEO_UNIT))?))
}

/// `width height unit` at `args[at..]`.
fn box_unit(args: Args<'_>, at: usize) -> Result<(By, f64), GeoError> {
    let w = string2d(args.get(at)).ok_or(err(errors::GEO_NEED_WIDTH))?;
    let h = string2d(args.get(at + 1)).ok_or(err(errors::GEO_NEED_HEIGHT))?;
    if h < 0.0 || w < 0.0 {
        return Err(err(errors::GEO_BOX_NEGATIVE));
    }
    Ok((By::Box(w, h), unit(args.get(at + 2)).ok_or(err(errors::GEO_UNIT))?))
}

/// A member's position, as the centre of a search.
fn member_pos(z: &ZSet, member: &[u8]) -> Result<(f64, f64), GeoError> {
    z.score(member).map(decode).ok_or(err(errors::GEO_NO_MEMBER))
}

/// Redis's argument parsing in `georadiusGeneric`, errors in its order:
/// the fixed centre and radius of the GEORADIUS forms first, then the
/// options left to right (a FROMMEMBER of an absent key is not looked up,
/// nor the radius of GEORADIUSBYMEMBER's), then the combinations.
fn parse(args: Args<'_>, kind: Kind, z: Option<&ZSet>) -> Result<Query, GeoError> {
    let mut q = Query { shape: None, with_dist: false, with_hash: false, with_coord: false, sort: Sort::None, count: 0, any: false, store: None };
    let mut center = None;
    let mut by = None;
    let base = match kind {
        Kind::Radius { .. } => {
            center = Some(lon_lat(args, 2)?);
            by = Some(radius_unit(args, 4)?);
            6
        }
        Kind::ByMember { .. } => {
            if let Some(z) = z {
                center = Some(member_pos(z, args.get(2))?);
                by = Some(radius_unit(args, 3)?);
            }
            5
        }
        Kind::Search => 2,
        Kind::SearchStore => {
            q.store = Some((1, false));
            3
        }
    };
    let search = kind.is_search();
    let (mut from_member, mut from_lonlat, mut by_radius, mut by_box) = (false, false, false, false);
    let mut i = base;
    while i < args.len() {
        let a = args.get(i);
        let left = args.len() - i - 1;
        if is(a, b"withdist") {
            q.with_dist = true;
        } else if is(a, b"withhash") {
            q.with_hash = true;
        } else if is(a, b"withcoord") {
            q.with_coord = true;
        } else if is(a, b"any") {
            q.any = true;
        } else if is(a, b"asc") {
            q.sort = Sort::Asc;
        } else if is(a, b"desc") {
            q.sort = Sort::Desc;
        } else if is(a, b"count") && left >= 1 {
            let n = parse_i64(args.get(i + 1)).ok_or(err(errors::NOT_INTEGER))?;
            if n <= 0 {
                return Err(err(errors::GEO_COUNT_NOT_POSITIVE));
            }
            q.count = usize::try_from(n).unwrap_or(usize::MAX);
            i += 1;
        } else if (is(a, b"store") || is(a, b"storedist")) && left >= 1 && kind.stores() {
            q.store = Some((i + 1, is(a, b"storedist")));
            i += 1;
        } else if is(a, b"storedist") && kind == Kind::SearchStore {
            q.store = Some((1, true));
        } else if is(a, b"frommember") && left >= 1 && search && !from_lonlat {
            if let Some(z) = z {
                center = Some(member_pos(z, args.get(i + 1))?);
            }
            from_member = true;
            i += 1;
        } else if is(a, b"fromlonlat") && left >= 2 && search && !from_member {
            center = Some(lon_lat(args, i + 1)?);
            from_lonlat = true;
            i += 2;
        } else if is(a, b"byradius") && left >= 2 && search && !by_box {
            by = Some(radius_unit(args, i + 1)?);
            by_radius = true;
            i += 2;
        } else if is(a, b"bybox") && left >= 3 && search && !by_radius {
            by = Some(box_unit(args, i + 1)?);
            by_box = true;
            i += 3;
        } else {
            return Err(err(errors::SYNTAX));
        }
        i += 1;
    }
    if q.store.is_some() && (q.with_dist || q.with_hash || q.with_coord) {
        return Err(err(if kind == Kind::SearchStore { errors::GEOSEARCHSTORE_WITH } else { errors::GEORADIUS_STORE_WITH }));
    }
    if search && !(from_member || from_lonlat) {
        return Err(Cow::Owned(errors::geo_need_from(args.get(0))));
    }
    if search && !(by_radius || by_box) {
        return Err(Cow::Owned(errors::geo_need_by(args.get(0))));
    }
    if q.any && q.count == 0 {
        return Err(err(errors::GEO_ANY_NEEDS_COUNT));
    }
    if let (Some((lon, lat)), Some((by, to_m))) = (center, by) {
        q.shape = Some(Shape { lon, lat, by, to_m, cos_lat: rad(lat).cos() });
    }
    Ok(q)
}

/// The source, and the key after the last STORE or STOREDIST: the one
/// the command writes (Redis's `georadiusGetKeys`; its COMMAND GETKEYS
/// follows the key specs, which find the first of each).
fn georadius_keys(args: Args<'_>) -> Vec<Key> {
    let mut keys = vec![Key { pos: 1, flags: RO | ACCESS }];
    let mut store = None;
    let mut i = 5;
    while i < args.len() {
        let a = args.get(i);
        if (is(a, b"store") || is(a, b"storedist")) && i + 1 < args.len() {
            store = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    keys.extend(store.map(|pos| Key { pos, flags: OW | UPDATE }));
    keys
}

static GEORADIUS_KEYS: &[KeySpec] = &[
    ks(RO | ACCESS, index(1), range(0, 1, 0)),
    ks(OW | UPDATE, keyword("STORE", 6), range(0, 1, 0)),
    ks(OW | UPDATE, keyword("STOREDIST", 6), range(0, 1, 0)),
];

static GEORADIUSBYMEMBER_KEYS: &[KeySpec] = &[
    ks(RO | ACCESS, index(1), range(0, 1, 0)),
    ks(OW | UPDATE, keyword("STORE", 5), range(0, 1, 0)),
    ks(OW | UPDATE, keyword("STOREDIST", 5), range(0, 1, 0)),
];

/// The search itself, over the source at `src` (locked); `dst` is the
/// destination's argument index and location, when the command's keys
/// have one (locked too).
fn search(ctx: &mut Ctx<'_, '_>, args: Args<'_>, kind: Kind, src: Loc, dst: Option<(usize, Loc)>) {
    let (now, acc, lim) = (ctx.now, ctx.access(), super::zsets::limits(ctx));
    let found = ctx.locks.shard(src.gid).lookup_source(args.get(kind.src()), src.hash, now, acc);
    let z = match found {
        None => {
            ctx.stats.keyspace_misses.add(1);
            None
        }
        Some(e) => {
            ctx.stats.keyspace_hits.add(1);
            match e.zset() {
                Some(z) => Some(z),
                None => return ctx.reply.error(errors::WRONGTYPE),
            }
        }
    };
    let q = match parse(args, kind, z) {
        Ok(q) => q,
        Err(e) => return ctx.reply.error(e),
    };
    // The parser and `georadius_keys` (what was locked) agree on the
    // destination whenever the arguments parse; locating it again is only
    // a safety net.
    let dst = q.store.map(|(at, dist)| match dst {
        Some((pos, d)) if pos == at => (at, dist, d),
        _ => (at, dist, ctx.ks.locate(ctx.client.db, args.get(at))),
    });
    let (Some(z), Some(shape)) = (z, q.shape) else {
        return match dst {
            Some((at, _, d)) => super::zsets::store_result(ctx, args.get(at), d, None),
            None => ctx.reply.array(0),
        };
    };
    // COUNT keeps the nearest: sorted unless ANY took the first found.
    let sort = if q.count > 0 && q.sort == Sort::None && !q.any { Sort::Asc } else { q.sort };
    let mut found = points_within(z, &shape, if q.any { q.count } else { 0 });
    let n = if q.count == 0 { found.len() } else { found.len().min(q.count) };
    if sort != Sort::None && n > 0 {
        let asc = |a: &Point<'_>, b: &Point<'_>| a.dist.partial_cmp(&b.dist).unwrap_or(Ordering::Equal);
        let desc = |a: &Point<'_>, b: &Point<'_>| asc(b, a);
        // Redis sorts everything with qsort (glibc's, a stable merge sort)
        // and only the first COUNT with its partial quicksort.
        match (sort == Sort::Desc, n == found.len()) {
            (false, true) => found.sort_by(asc),
            (true, true) => found.sort_by(desc),
            (false, false) => pqsort(&mut found, 0, n - 1, &asc),
            (true, false) => pqsort(&mut found, 0, n - 1, &desc),
        }
    }
    let found = &found[..n];
    let Some((at, store_dist, d)) = dst else {
        let reply = &mut ctx.reply;
        let extra = usize::from(q.with_dist) + usize::from(q.with_hash) + usize::from(q.with_coord);
        reply.array(n);
        for p in found {
            if extra > 0 {
                reply.array(extra + 1);
            }
            reply.bulk(p.member);
            if q.with_dist {
                reply.bulk(fixed4(p.dist / shape.to_m).as_bytes());
            }
            if q.with_hash {
                reply.int(p.score as i64);
            }
            if q.with_coord {
                reply.array(2);
                reply.double(p.lon);
                reply.double(p.lat);
            }
        }
        return;
    };
    let longest = found.iter().map(|p| p.member.len()).max().unwrap_or(0);
    let mut out = ZSet::new_for(n, longest, lim);
    for p in found {
        out.insert(p.member, if store_dist { p.dist / shape.to_m } else { p.score }, lim);
    }
    super::zsets::store_result(ctx, args.get(at), d, Some(out));
}

/// GEORADIUS and GEORADIUSBYMEMBER lock for themselves: their
/// destination follows the last STORE or STOREDIST among the options,
/// which the key specs (the first of each) may miss.
fn search_locked(ctx: &mut Ctx<'_, '_>, args: Args<'_>, kind: Kind) {
    let db = ctx.client.db;
    let keys = georadius_keys(args);
    let src = ctx.ks.locate(db, args.get(1));
    let dst = keys.get(1).map(|k| (k.pos, ctx.ks.locate(db, args.get(k.pos))));
    ctx.locks.acquire([src.gid].into_iter().chain(dst.map(|(_, d)| d.gid)));
    search(ctx, args, kind, src, dst);
    ctx.locks.release();
}

fn georadius(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    search_locked(ctx, args, Kind::Radius { ro: false })
}

fn georadiusbymember(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    search_locked(ctx, args, Kind::ByMember { ro: false })
}

fn georadius_ro(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let src = ctx.locs[0];
    search(ctx, args, Kind::Radius { ro: true }, src, None)
}

fn georadiusbymember_ro(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let src = ctx.locs[0];
    search(ctx, args, Kind::ByMember { ro: true }, src, None)
}

fn geosearch(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let src = ctx.locs[0];
    search(ctx, args, Kind::Search, src, None)
}

fn geosearchstore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (dst, src) = (ctx.locs[0], ctx.locs[1]);
    search(ctx, args, Kind::SearchStore, src, Some((1, dst)))
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
    fn neighbours_wrap_around() {
        // Step 2: a 4x4 grid; longitude in the odd bits, latitude in the even.
        let c = Cell { bits: 0, step: 2 };
        assert_eq!(c.moved(1, 0), Cell { bits: 0b0010, step: 2 });
        assert_eq!(c.moved(0, 1), Cell { bits: 0b0001, step: 2 });
        assert_eq!(c.moved(-1, 0), Cell { bits: 0b1010, step: 2 });
        assert_eq!(c.moved(0, -1), Cell { bits: 0b0101, step: 2 });
        assert_eq!(c.moved(1, 0).moved(-1, 0), c);
        let a = Area::of(c.moved(-1, -1));
        assert_eq!((a.lon_min, a.lon_max), (90.0, 180.0));
        assert_eq!(Cell { bits: 0b1011, step: 2 }.scores(), ((0b1011u64 << 48) as f64, (0b1100u64 << 48) as f64));
    }

    #[test]
    fn steps_follow_the_radius() {
        assert_eq!(estimate_steps(0.0, 0.0), 26);
        assert_eq!(estimate_steps(1.0, 0.0), 24);
        assert_eq!(estimate_steps(1000.0, 0.0), 14);
        assert_eq!(estimate_steps(1000.0, 70.0), 13);
        assert_eq!(estimate_steps(1000.0, -85.0), 12);
        assert_eq!(estimate_steps(5e6, 0.0), 2);
        assert_eq!(estimate_steps(2e7, 0.0), 1);
        assert_eq!(estimate_steps(f64::INFINITY, 0.0), 1);
    }

    #[test]
    fn pqsort_sorts_the_asked_prefix() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for n in [1usize, 6, 7, 8, 40, 41, 100, 300] {
            for hi in [0, n / 3, n - 1] {
                let mut v: Vec<(u64, usize)> = (0..n)
                    .map(|i| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        (rng % 10, i)
                    })
                    .collect();
                let mut sorted = v.clone();
                sorted.sort_by_key(|e| e.0);
                pqsort(&mut v, 0, hi, &|a: &(u64, usize), b: &(u64, usize)| a.0.cmp(&b.0));
                let keys = |v: &[(u64, usize)]| v[..=hi].iter().map(|e| e.0).collect::<Vec<_>>();
                assert_eq!(keys(&v), keys(&sorted), "n {n} hi {hi}");
            }
        }
    }

    #[test]
    fn bits_spread_and_squash_back() {
        for x in [0u32, 1, 0x3ff_ffff, 0x400_0000, u32::MAX, 0x1234_5678] {
            assert_eq!(squash(spread(x)), x);
            assert_eq!(spread(x) & !0x5555_5555_5555_5555, 0);
        }
    }
}
