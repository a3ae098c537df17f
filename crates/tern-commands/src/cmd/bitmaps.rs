//! Bitmaps: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.
//!
//! A bitmap is a string: bit 0 is the most significant bit of the first
//! byte, GET / SETRANGE / APPEND see the same bytes, and an integer-encoded
//! string is read through its decimal digits, as Redis does. A write turns
//! the value into a `raw` buffer (Redis's `dbUnshareStringValue`), whether
//! or not a bit changes; only a real change tells WATCHers.
//!
//! Offsets are bounded by `proto-max-bulk-len` (`offset / 8` below it), so
//! no request makes a string longer than a client could have sent whole.
//! The bit-level helpers at the bottom are pure functions over byte slices,
//! property-tested against a `Vec<bool>` model.

use crate::messaging::notify::ev;
use tern_resp::{parse_i64, Args};
use tern_store::popcount::{self, popcount_with, Kernel, Scan};
use tern_store::{EntryExt, StrValue, Value};

use super::keyspec::{bitfield_key_flags, index, ks, range, ACCESS, OW, RO, RW, UPDATE, VARIABLE_FLAGS};
use super::strings::{edit_string, string_of, RawBytes};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors::{self, c_str};

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("setbit", 4, WRITE | DENYOOM, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], setbit)
        .event(ev::SETBIT)
        .doc("bitmap", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", "2.2.0", "O(1)")
        .acl(&["write", "bitmap", "slow"]),
    CommandSpec::new("getbit", 3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], getbit)
        .doc("bitmap", "Returns a bit value by offset.", "2.2.0", "O(1)")
        .acl(&["read", "bitmap", "fast"]),
    CommandSpec::new("bitcount", -2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], bitcount)
        .doc("bitmap", "Counts the number of set bits (population counting) in a string.", "2.6.0", "O(N)")
        .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .acl(&["read", "bitmap", "slow"]),
    CommandSpec::new("bitpos", -3, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], bitpos)
        .doc("bitmap", "Finds the first set (1) or clear (0) bit in a string.", "2.8.7", "O(N)")
        .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .acl(&["read", "bitmap", "slow"]),
    CommandSpec::new(
        "bitop",
        -4,
        WRITE | DENYOOM,
        &[ks(OW | UPDATE, index(2), range(0, 1, 0)), ks(RO | ACCESS, index(3), range(-1, 1, 0))],
        bitop,
    )
    .event(ev::SET)
    .doc("bitmap", "Performs bitwise operations on multiple strings, and stores the result.", "2.6.0", "O(N)")
    .acl(&["write", "bitmap", "slow"]),
    CommandSpec::new(
        "bitfield",
        -2,
        WRITE | DENYOOM,
        &[ks(RW | ACCESS | UPDATE | VARIABLE_FLAGS, index(1), range(0, 1, 0))
            .notes("This command allows both access and modification of the key")],
        bitfield,
    )
    .event(ev::SETBIT)
    .doc("bitmap", "Performs arbitrary bitfield integer operations on strings.", "3.2.0", "O(1) for each subcommand specified")
    .acl(&["write", "bitmap", "slow"])
    .key_flags_of(bitfield_key_flags),
    CommandSpec::new("bitfield_ro", -2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], bitfield_ro)
        .doc("bitmap", "Performs arbitrary read-only bitfield integer operations on strings.", "6.0.0", "O(1) for each subcommand specified")
        .acl(&["read", "bitmap", "fast"]),
];

/// A bit offset argument (Redis's getBitOffsetFromArgument). With `bits`
/// (BITFIELD), `#n` means `n * bits`; the product wraps as Redis's does.
/// The offset's byte must lie below `proto-max-bulk-len`.
fn bit_offset(ctx: &Ctx<'_, '_>, arg: &[u8], bits: u32) -> Result<u64, &'static str> {
    let hash = bits > 0 && arg.first() == Some(&b'#');
    let n = parse_i64(if hash { &arg[1..] } else { arg }).ok_or(errors::BIT_OFFSET)?;
    let n = if hash { n.wrapping_mul(i64::from(bits)) } else { n };
    if n < 0 || (n as u64 >> 3) >= ctx.srv.settings.proto_max_bulk_len() {
        return Err(errors::BIT_OFFSET);
    }
    Ok(n as u64)
}

/// The string at `locs[0]` zero-padded to at least `len` bytes and given
/// to `f` (created when absent: Redis's lookupStringForBitCommand). `f`
/// answers whether it changed a byte; growing counts as a change.
fn edit_bits<R>(ctx: &mut Ctx<'_, '_>, key: &[u8], len: usize, f: impl FnOnce(&mut [u8]) -> (R, bool)) -> Result<R, &'static str> {
    let edited = edit_string(ctx, key, true, Some(len), |bytes| match bytes {
        RawBytes::InItem(b) => Ok(f(b)),
        RawBytes::Buffer(buf, _) => {
            let grew = buf.len() < len;
            if grew {
                buf.try_reserve(len - buf.len()).map_err(|_| errors::STRING_TOO_LONG)?;
                buf.resize(len, 0);
            }
            let (r, changed) = f(buf);
            Ok((r, grew || changed))
        }
    });
    edited?.ok_or(errors::NO_SUCH_KEY)
}

/// Reads the string at `locs[0]` for a bit command: `f` gets its bytes
/// (None: no key); Err is WRONGTYPE. Counts the keyspace hit or miss.
fn read_bits<R>(ctx: &mut Ctx<'_, '_>, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R, &'static str> {
    let acc = ctx.access();
    let loc = ctx.locs[0];
    match ctx.locks.shard(loc.gid).lookup(key, loc.hash, ctx.now, acc) {
        None => {
            ctx.stats.keyspace_misses.add(1);
            Ok(f(None))
        }
        Some(e) => {
            ctx.stats.keyspace_hits.add(1);
            Ok(string_of(e)?.with_bytes(|b| f(Some(b))))
        }
    }
}

fn setbit(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let offset = match bit_offset(ctx, args.get(2), 0) {
        Ok(o) => o,
        Err(msg) => return ctx.reply.error(msg),
    };
    let on = match parse_i64(args.get(3)) {
        Some(v @ (0 | 1)) => v == 1,
        _ => return ctx.reply.error(errors::BIT_VALUE),
    };
    let byte = (offset >> 3) as usize;
    let mask = 0x80u8 >> (offset & 7);
    let res = edit_bits(ctx, args.get(1), byte + 1, |buf| {
        let was = buf[byte] & mask != 0;
        if on {
            buf[byte] |= mask;
        } else {
            buf[byte] &= !mask;
        }
        (was, was != on)
    });
    match res {
        Ok(was) => ctx.reply.int(i64::from(was)),
        Err(msg) => ctx.reply.error(msg),
    }
}

fn getbit(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let offset = match bit_offset(ctx, args.get(2), 0) {
        Ok(o) => o,
        Err(msg) => return ctx.reply.error(msg),
    };
    match read_bits(ctx, args.get(1), |b| b.map_or(0, |b| get_bits(b, offset, 1))) {
        Ok(bit) => ctx.reply.int(bit as i64),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// BITCOUNT / BITPOS's BYTE | BIT unit (C's strcasecmp); None: syntax error.
fn unit_is_bit(arg: &[u8]) -> Option<bool> {
    let a = c_str(arg);
    if a.eq_ignore_ascii_case(b"bit") {
        Some(true)
    } else if a.eq_ignore_ascii_case(b"byte") {
        Some(false)
    } else {
        None
    }
}

/// `start..=end` (negative from the end) over `total` units, clamped as
/// Redis clamps BITCOUNT's and BITPOS's ranges; None when empty.
fn clamp_range(total: i64, start: i64, end: i64) -> Option<(u64, u64)> {
    let start = if start < 0 { total.saturating_add(start) } else { start }.max(0);
    let end = if end < 0 { total.saturating_add(end) } else { end }.max(0).min(total - 1);
    (start <= end).then_some((start as u64, end as u64))
}

/// BITCOUNT key [start end [BYTE | BIT]]: the range's arguments are checked
/// before the key, as in Redis.
fn bitcount(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (range, in_bits) = match args.len() {
        2 => (None, false),
        4 | 5 => {
            let (Some(start), Some(end)) = (parse_i64(args.get(2)), parse_i64(args.get(3))) else {
                return ctx.reply.error(errors::NOT_INTEGER);
            };
            let in_bits = if args.len() == 5 {
                match unit_is_bit(args.get(4)) {
                    Some(b) => b,
                    None => return ctx.reply.error(errors::SYNTAX),
                }
            } else {
                false
            };
            (Some((start, end)), in_bits)
        }
        _ => return ctx.reply.error(errors::SYNTAX),
    };
    let kernel = if ctx.srv.settings.bitcount_simd() { Kernel::best() } else { Kernel::Portable };
    let alternate = ctx.srv.settings.bitcount_alternate_scan();
    let counted = read_bits(ctx, args.get(1), |b| {
        let b = b.unwrap_or_default();
        let bits = b.len() as u64 * 8;
        let span = match range {
            None if b.is_empty() => None,
            None => Some((0, bits - 1)),
            // Both ends before the start, in the wrong order: nothing.
            Some((s, e)) if s < 0 && e < 0 && s > e => None,
            Some((s, e)) if in_bits => clamp_range(bits as i64, s, e),
            Some((s, e)) => clamp_range(b.len() as i64, s, e).map(|(s, e)| (s * 8, e * 8 + 7)),
        };
        span.map_or(0, |(s, e)| count_bits(b, s, e, kernel, alternate))
    });
    match counted {
        Ok(n) => ctx.reply.int(n as i64),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// BITPOS key bit [start [end [BYTE | BIT]]]. Without an end, a search
/// for 0 runs on into the zeros past the string; with one, it stops at it.
fn bitpos(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let bit = match parse_i64(args.get(2)) {
        Some(b @ (0 | 1)) => b == 1,
        Some(_) => return ctx.reply.error(errors::BITPOS_BIT),
        None => return ctx.reply.error(errors::NOT_INTEGER),
    };
    if args.len() > 6 {
        return ctx.reply.error(errors::SYNTAX);
    }
    let start = match args.len() {
        3 => 0,
        _ => match parse_i64(args.get(3)) {
            Some(s) => s,
            None => return ctx.reply.error(errors::NOT_INTEGER),
        },
    };
    let in_bits = match args.len() {
        6 => match unit_is_bit(args.get(5)) {
            Some(b) => b,
            None => return ctx.reply.error(errors::SYNTAX),
        },
        _ => false,
    };
    let end = match args.len() {
        5 | 6 => match parse_i64(args.get(4)) {
            Some(e) => Some(e),
            None => return ctx.reply.error(errors::NOT_INTEGER),
        },
        _ => None,
    };
    let found = read_bits(ctx, args.get(1), |b| {
        let Some(b) = b else { return if bit { -1 } else { 0 } };
        let len = b.len() as i64;
        let span = if in_bits {
            clamp_range(len * 8, start, end.unwrap_or(len * 8 + 7))
        } else {
            clamp_range(len, start, end.unwrap_or(len - 1)).map(|(s, e)| (s * 8, e * 8 + 7))
        };
        let Some((s, e)) = span else { return -1 };
        match find_bit(b, s, e, bit) {
            Some(p) => p as i64,
            None if !bit && end.is_none() => e as i64 + 1,
            None => -1,
        }
    });
    match found {
        Ok(p) => ctx.reply.int(p),
        Err(msg) => ctx.reply.error(msg),
    }
}

/// BITOP's operations (Redis 8.2 added DIFF, DIFF1, ANDOR and ONE).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    And,
    Or,
    Xor,
    Not,
    /// The first source without any bit of the others.
    Diff,
    /// The others' bits that the first source lacks.
    Diff1,
    /// The first source's bits that one of the others has too.
    AndOr,
    /// The bits set in exactly one source.
    One,
}

impl Op {
    fn parse(name: &[u8]) -> Option<Op> {
        let n = c_str(name);
        let ops = [
            ("and", Op::And),
            ("or", Op::Or),
            ("xor", Op::Xor),
            ("not", Op::Not),
            ("diff", Op::Diff),
            ("diff1", Op::Diff1),
            ("andor", Op::AndOr),
            ("one", Op::One),
        ];
        ops.iter().find(|(s, _)| n.eq_ignore_ascii_case(s.as_bytes())).map(|&(_, op)| op)
    }
}

/// BITOP op destkey key [key ...]: the sources are read (missing ones as
/// empty strings), the result of the longest one's length stored as `raw`,
/// or the destination deleted when every source is empty.
fn bitop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(op) = Op::parse(args.get(1)) else {
        return ctx.reply.error(errors::SYNTAX);
    };
    let sources = args.len() - 3;
    if op == Op::Not && sources != 1 {
        return ctx.reply.error(errors::BITOP_NOT_ONE_KEY);
    }
    if matches!(op, Op::Diff | Op::Diff1 | Op::AndOr) && sources < 2 {
        let name = match op {
            Op::Diff => "DIFF",
            Op::Diff1 => "DIFF1",
            _ => "ANDOR",
        };
        return ctx.reply.error(errors::bitop_two_sources(name));
    }
    // First the types and the longest length (the lookups count as reads);
    // then each source is folded into the result from its stored bytes, one
    // at a time, so that naming a large string many times copies nothing.
    let acc = ctx.access();
    let mut len = 0;
    for i in 0..sources {
        let loc = ctx.locs[1 + i];
        if let Some(e) = ctx.locks.shard(loc.gid).lookup_source(args.get(3 + i), loc.hash, ctx.now, acc) {
            match string_of(e) {
                Ok(s) => len = len.max(s.len()),
                Err(msg) => return ctx.reply.error(msg),
            }
        }
    }
    let now = ctx.now;
    let res = bit_op_with(op, sources, len, |i, f| {
        let loc = ctx.locs[1 + i];
        match ctx.locks.shard(loc.gid).get(args.get(3 + i), loc.hash, now).and_then(|e| e.str()) {
            Some(s) => s.with_bytes(|b| f(b)),
            None => f(&[]),
        }
    });
    let (loc, dest) = (ctx.locs[0], args.get(2));
    let shard = ctx.locks.shard(loc.gid);
    let len = res.len();
    if res.is_empty() {
        shard.remove(dest, loc.hash, ctx.now);
    } else {
        shard.set(dest, loc.hash, Value::Str(StrValue::Raw(res)), None, ctx.now);
    }
    ctx.reply.int(len as i64);
}

/// BITFIELD's overflow behaviours.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// A BITFIELD field type: `i1`..`i64` or `u1`..`u63`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Field {
    signed: bool,
    bits: u32,
}

impl Field {
    /// Redis's getBitfieldTypeFromArgument: the sign letter is case-sensitive.
    fn parse(arg: &[u8]) -> Option<Field> {
        let arg = c_str(arg);
        let signed = match arg.first()? {
            b'i' => true,
            b'u' => false,
            _ => return None,
        };
        let bits = parse_i64(&arg[1..]).filter(|&b| b >= 1 && b <= if signed { 64 } else { 63 })?;
        Some(Field { signed, bits: bits as u32 })
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FieldOp {
    Get,
    Set(i64),
    IncrBy(i64),
}

/// BITFIELD and BITFIELD_RO. Every operation is parsed before the key is
/// looked at; writes make room up to the farthest bit any of them touches.
fn bitfield_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, read_only: bool) {
    let mut ops: Vec<(FieldOp, Field, u64, Overflow)> = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut highest: Option<u64> = None;
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let sub = c_str(args.get(j));
        let is = |s: &[u8]| sub.eq_ignore_ascii_case(s);
        let takes_value = if is(b"get") && left >= 2 {
            false
        } else if (is(b"set") || is(b"incrby")) && left >= 3 {
            true
        } else if is(b"overflow") && left >= 1 {
            let how = c_str(args.get(j + 1));
            overflow = if how.eq_ignore_ascii_case(b"wrap") {
                Overflow::Wrap
            } else if how.eq_ignore_ascii_case(b"sat") {
                Overflow::Sat
            } else if how.eq_ignore_ascii_case(b"fail") {
                Overflow::Fail
            } else {
                return ctx.reply.error(errors::BITFIELD_OVERFLOW);
            };
            j += 2;
            continue;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        };
        let Some(field) = Field::parse(args.get(j + 1)) else {
            return ctx.reply.error(errors::BITFIELD_TYPE);
        };
        let offset = match bit_offset(ctx, args.get(j + 2), field.bits) {
            Ok(o) => o,
            Err(msg) => return ctx.reply.error(msg),
        };
        let op = if takes_value {
            let Some(v) = parse_i64(args.get(j + 3)) else {
                return ctx.reply.error(errors::NOT_INTEGER);
            };
            let last = offset + u64::from(field.bits) - 1;
            highest = Some(highest.map_or(last, |h| h.max(last)));
            if is(b"set") {
                FieldOp::Set(v)
            } else {
                FieldOp::IncrBy(v)
            }
        } else {
            FieldOp::Get
        };
        ops.push((op, field, offset, overflow));
        j += if takes_value { 4 } else { 3 };
    }
    let key = args.get(1);
    let Some(highest) = highest else {
        // Only GETs: a read, answered from the bytes as they are.
        let got = read_bits(ctx, key, |b| {
            let b = b.unwrap_or_default();
            ops.iter().map(|&(_, f, off, _)| field_value(f, get_bits(b, off, f.bits))).collect::<Vec<i64>>()
        });
        match got {
            Ok(vals) => {
                ctx.reply.array(vals.len());
                vals.into_iter().for_each(|v| ctx.reply.int(v));
            }
            Err(msg) => ctx.reply.error(msg),
        }
        return;
    };
    if read_only {
        return ctx.reply.error(errors::BITFIELD_RO_GET_ONLY);
    }
    let res = edit_bits(ctx, key, (highest >> 3) as usize + 1, |buf| {
        let mut changed = false;
        let out: Vec<Option<i64>> = ops.iter().map(|&(op, f, off, ow)| run_field_op(buf, op, f, off, ow, &mut changed)).collect();
        (out, changed)
    });
    match res {
        Ok(out) => {
            ctx.reply.array(out.len());
            for v in out {
                match v {
                    Some(v) => ctx.reply.int(v),
                    None => ctx.reply.null(),
                }
            }
        }
        Err(msg) => ctx.reply.error(msg),
    }
}

fn bitfield(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    bitfield_generic(ctx, args, false);
}

fn bitfield_ro(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    bitfield_generic(ctx, args, true);
}

// ---- bit-level helpers: pure functions over bytes -------------------------

/// Set bits in `b` from bit `s` to bit `e` inclusive (within `b`). The
/// whole bytes in the middle are counted by `kernel` (`bitcount-simd`
/// picks the fastest or the portable one; all give the same count), in
/// the order `popcount::alternate` gives when `alternate`
/// (`bitcount-alternate-scan`), else forward.
fn count_bits(b: &[u8], s: u64, e: u64, kernel: Kernel, alternate: bool) -> u64 {
    let (sb, eb) = ((s >> 3) as usize, (e >> 3) as usize);
    let head = 0xffu8 >> (s & 7);
    let tail = 0xffu8 << (7 - (e & 7));
    if sb == eb {
        return u64::from((b[sb] & head & tail).count_ones());
    }
    let mid = &b[sb + 1..eb];
    let n = popcount_with(kernel, mid, if alternate { popcount::alternate(mid.len()) } else { Scan::Forward });
    n + u64::from((b[sb] & head).count_ones()) + u64::from((b[eb] & tail).count_ones())
}

/// The first bit equal to `bit` in `b` from bit `s` to bit `e` inclusive
/// (both within `b`). Whole bytes that cannot hold it are skipped.
fn find_bit(b: &[u8], s: u64, e: u64, bit: bool) -> Option<u64> {
    let skip = if bit { 0x00 } else { 0xff };
    let mut i = s;
    while i <= e {
        let byte = (i >> 3) as usize;
        if i & 7 == 0 && i + 7 <= e && b[byte] == skip {
            // Whole bytes (and words of them) without the bit.
            let last = ((e + 1) >> 3) as usize;
            let run = b[byte..last].iter().position(|&x| x != skip).unwrap_or(last - byte);
            i += run as u64 * 8;
            continue;
        }
        if (b[byte] & (0x80 >> (i & 7)) != 0) == bit {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `bits` bits (1..=64) of `b` from bit `off`, big-endian, bytes past the
/// end read as zeros.
fn get_bits(b: &[u8], off: u64, bits: u32) -> u64 {
    let mut v = 0u64;
    for i in 0..u64::from(bits) {
        let p = off + i;
        let byte = b.get((p >> 3) as usize).copied().unwrap_or(0);
        v = (v << 1) | u64::from((byte >> (7 - (p & 7))) & 1);
    }
    v
}

/// Writes the low `bits` bits of `v` into `b` from bit `off` (within `b`).
fn set_bits(b: &mut [u8], off: u64, bits: u32, v: u64) {
    for i in 0..u64::from(bits) {
        let p = off + i;
        let mask = 0x80u8 >> (p & 7);
        let byte = &mut b[(p >> 3) as usize];
        if (v >> (u64::from(bits) - 1 - i)) & 1 == 1 {
            *byte |= mask;
        } else {
            *byte &= !mask;
        }
    }
}

/// The field's value from its raw bits: sign-extended when signed.
fn field_value(f: Field, raw: u64) -> i64 {
    if f.signed && f.bits < 64 && raw & (1 << (f.bits - 1)) != 0 {
        (raw | (u64::MAX << f.bits)) as i64
    } else {
        raw as i64
    }
}

/// `value + incr` in field `f`: Ok when it fits, else Err with what
/// `ow` makes of it (None for FAIL). For SET, `value` is the new value and
/// `incr` 0. As Redis's checkSignedBitfieldOverflow /
/// checkUnsignedBitfieldOverflow, with their wrapping arithmetic.
fn add_in_field(f: Field, value: i64, incr: i64, ow: Overflow) -> Result<i64, Option<i64>> {
    let bits = f.bits;
    let wrap = |v: u64| -> i64 {
        if bits == 64 {
            return v as i64;
        }
        let mask = u64::MAX << bits;
        if f.signed && v & (1 << (bits - 1)) != 0 {
            (v | mask) as i64
        } else {
            (v & !mask) as i64
        }
    };
    let sum = (value as u64).wrapping_add(incr as u64);
    let limit = |sat: i64| match ow {
        Overflow::Wrap => Some(wrap(sum)),
        Overflow::Sat => Some(sat),
        Overflow::Fail => None,
    };
    if f.signed {
        let max = if bits == 64 { i64::MAX } else { (1i64 << (bits - 1)) - 1 };
        let min = -max - 1;
        let maxincr = (max as u64).wrapping_sub(value as u64) as i64;
        let minincr = min.wrapping_sub(value);
        if value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr) {
            return Err(limit(max));
        }
        if value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr) {
            return Err(limit(min));
        }
    } else {
        let v = value as u64;
        let max = (1u64 << bits) - 1;
        let maxincr = max.wrapping_sub(v) as i64;
        let minincr = 0i64.wrapping_sub(value);
        if v > max || (incr > 0 && incr > maxincr) {
            return Err(limit(max as i64));
        }
        if incr < 0 && incr < minincr {
            return Err(limit(0));
        }
    }
    Ok(sum as i64)
}

/// One SET or INCRBY of BITFIELD on `buf` (long enough): the reply (None:
/// FAIL refused it) and whether a bit changed.
fn run_field_op(buf: &mut [u8], op: FieldOp, f: Field, off: u64, ow: Overflow, changed: &mut bool) -> Option<i64> {
    let old = field_value(f, get_bits(buf, off, f.bits));
    let (new, reply) = match op {
        FieldOp::Get => return Some(old),
        FieldOp::Set(v) => (add_in_field(f, v, 0, ow), old),
        FieldOp::IncrBy(by) => (add_in_field(f, old, by, ow), 0),
    };
    let new = match new {
        Ok(v) | Err(Some(v)) => v,
        Err(None) => return None,
    };
    set_bits(buf, off, f.bits, new as u64);
    *changed |= new != old;
    Some(if matches!(op, FieldOp::IncrBy(_)) { new } else { reply })
}

/// BITOP over `n` sources of which the longest has `len` bytes, each
/// zero-padded to it: `visit(i, f)` calls `f` with source `i`'s bytes.
/// Sources are folded into the result one at a time (the first one twice
/// for DIFF, DIFF1 and ANDOR, which combine it with the others' union).
fn bit_op_with(op: Op, n: usize, len: usize, mut visit: impl FnMut(usize, &mut dyn FnMut(&[u8]))) -> Vec<u8> {
    let mut acc = vec![0u8; len];
    if n == 0 || len == 0 {
        return acc;
    }
    match op {
        Op::Diff | Op::Diff1 | Op::AndOr => {
            for i in 1..n {
                visit(i, &mut |b| acc.iter_mut().zip(b).for_each(|(a, &b)| *a |= b));
            }
            visit(0, &mut |x| {
                for (j, a) in acc.iter_mut().enumerate() {
                    let x = x.get(j).copied().unwrap_or(0);
                    *a = match op {
                        Op::Diff => x & !*a,
                        Op::Diff1 => !x & *a,
                        _ => x & *a,
                    };
                }
            });
        }
        Op::One => {
            // Bits seen in more than one source so far, and in exactly one.
            let mut many = vec![0u8; len];
            visit(0, &mut |x| acc[..x.len()].copy_from_slice(x));
            for i in 1..n {
                visit(i, &mut |b| {
                    for ((a, m), &b) in acc.iter_mut().zip(many.iter_mut()).zip(b) {
                        *m |= *a & b;
                        *a = (*a ^ b) & !*m;
                    }
                });
            }
        }
        Op::And | Op::Or | Op::Xor | Op::Not => {
            visit(0, &mut |x| acc[..x.len()].copy_from_slice(x));
            if op == Op::Not {
                // NOT has one source (BITOP refuses more).
                acc.iter_mut().for_each(|a| *a = !*a);
                return acc;
            }
            for i in 1..n {
                visit(i, &mut |b| match op {
                    Op::And => {
                        acc.iter_mut().zip(b).for_each(|(a, &b)| *a &= b);
                        // Past its end a source is zeros.
                        acc.iter_mut().skip(b.len()).for_each(|a| *a = 0);
                    }
                    Op::Or => acc.iter_mut().zip(b).for_each(|(a, &b)| *a |= b),
                    _ => acc.iter_mut().zip(b).for_each(|(a, &b)| *a ^= b),
                });
            }
        }
    }
    acc
}

/// [`bit_op_with`] over sources in hand.
#[cfg(test)]
fn bit_op(op: Op, srcs: &[&[u8]]) -> Vec<u8> {
    let len = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
    bit_op_with(op, srcs.len(), len, |i, f| f(srcs[i]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The bits of `b`, most significant first: the model.
    fn model(b: &[u8]) -> Vec<bool> {
        b.iter().flat_map(|&x| (0..8).map(move |i| x & (0x80 >> i) != 0)).collect()
    }

    proptest! {
        #[test]
        fn count_bits_matches_the_model(b in proptest::collection::vec(any::<u8>(), 1..1200), s in 0u64..9600, e in 0u64..9600) {
            let n = b.len() as u64 * 8;
            let (s, e) = (s % n, e % n);
            prop_assume!(s <= e);
            let want = model(&b)[s as usize..=e as usize].iter().filter(|&&x| x).count() as u64;
            for k in Kernel::ALL {
                for alternate in [false, true] {
                    prop_assert_eq!(count_bits(&b, s, e, k, alternate), want);
                }
            }
        }

        #[test]
        fn find_bit_matches_the_model(b in proptest::collection::vec(prop_oneof![Just(0u8), Just(0xff), any::<u8>()], 1..80), s in 0u64..640, e in 0u64..640, bit: bool) {
            let n = b.len() as u64 * 8;
            let (s, e) = (s % n, e % n);
            prop_assume!(s <= e);
            let want = model(&b)[s as usize..=e as usize].iter().position(|&x| x == bit).map(|p| p as u64 + s);
            prop_assert_eq!(find_bit(&b, s, e, bit), want);
        }

        #[test]
        fn fields_read_back_what_was_written(b in proptest::collection::vec(any::<u8>(), 17..20), off in 0u64..72, bits in 1u32..=64, v: u64) {
            let mut b = b;
            let before = model(&b);
            set_bits(&mut b, off, bits, v);
            let mask = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
            prop_assert_eq!(get_bits(&b, off, bits), v & mask);
            // Only the field's bits moved.
            let after = model(&b);
            for (i, (x, y)) in before.iter().zip(&after).enumerate() {
                let i = i as u64;
                if i < off || i >= off + u64::from(bits) {
                    prop_assert_eq!(x, y);
                }
            }
        }

        #[test]
        fn bit_ops_match_the_model(srcs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 1..5), op in 0usize..8) {
            let op = [Op::And, Op::Or, Op::Xor, Op::Not, Op::Diff, Op::Diff1, Op::AndOr, Op::One][op];
            let refs: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
            let out = bit_op(op, &refs);
            let n = srcs.iter().map(Vec::len).max().unwrap_or(0);
            prop_assert_eq!(out.len(), n);
            let bits: Vec<Vec<bool>> = srcs.iter().map(|s| { let mut m = model(s); m.resize(n * 8, false); m }).collect();
            for (i, got) in model(&out).into_iter().enumerate() {
                let x = bits[0][i];
                let ones = bits.iter().filter(|s| s[i]).count();
                let others = bits[1..].iter().any(|s| s[i]);
                let want = match op {
                    Op::And => bits.iter().all(|s| s[i]),
                    Op::Or => ones > 0,
                    Op::Xor => ones % 2 == 1,
                    Op::Not => !x,
                    Op::Diff => x && !others,
                    Op::Diff1 => !x && others,
                    Op::AndOr => x && others,
                    Op::One => ones == 1,
                };
                prop_assert_eq!(got, want, "bit {}", i);
            }
        }

        #[test]
        fn increments_wrap_saturate_or_fail_like_wide_arithmetic(signed: bool, bits in 1u32..=64, value: i64, incr: i64) {
            prop_assume!(signed || bits < 64);
            let f = Field { signed, bits };
            let (min, max): (i128, i128) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            // The value as stored in the field, as BITFIELD reads it back.
            let value = field_value(f, value as u64 & if bits == 64 { u64::MAX } else { (1 << bits) - 1 });
            let exact = i128::from(value) + i128::from(incr);
            let fits = (min..=max).contains(&exact);
            let wrapped = field_value(f, (exact as u64) & if bits == 64 { u64::MAX } else { (1 << bits) - 1 });
            match add_in_field(f, value, incr, Overflow::Wrap) {
                Ok(v) => { prop_assert!(fits); prop_assert_eq!(i128::from(v), exact); }
                Err(v) => { prop_assert!(!fits); prop_assert_eq!(v, Some(wrapped)); }
            }
            let sat = add_in_field(f, value, incr, Overflow::Sat).unwrap_or_else(|v| v.unwrap_or(0));
            prop_assert_eq!(i128::from(sat), exact.clamp(min, max));
            prop_assert_eq!(add_in_field(f, value, incr, Overflow::Fail).is_err(), !fits);
        }
    }

    #[test]
    fn field_types_as_redis_reads_them() {
        assert_eq!(Field::parse(b"i64"), Some(Field { signed: true, bits: 64 }));
        assert_eq!(Field::parse(b"u63"), Some(Field { signed: false, bits: 63 }));
        for bad in [&b"u64"[..], b"i65", b"I8", b"i0", b"i", b"", b"u08", b"i-1", b"u 8"] {
            assert_eq!(Field::parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(Field::parse(b"i8\0junk"), Some(Field { signed: true, bits: 8 }));
    }

    #[test]
    fn ranges_clamp_as_redis_does() {
        assert_eq!(clamp_range(10, 0, -1), Some((0, 9)));
        assert_eq!(clamp_range(10, -100, 100), Some((0, 9)));
        assert_eq!(clamp_range(10, 5, 2), None);
        assert_eq!(clamp_range(0, 0, -1), None);
        assert_eq!(clamp_range(10, i64::MIN, i64::MAX), Some((0, 9)));
    }
}
