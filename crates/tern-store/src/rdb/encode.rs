//! Values into RDB bytes: lengths, strings (integer-encoded, or LZF when
//! it pays, as Redis's `rdbSaveRawString` decides), and each type in the
//! encoding Redis gives it.

use crate::value::{StrRef, ValueRef};
use crate::hash::Hash;
use crate::list::ListRef;
use crate::set::{Member, Set};
use crate::zset::ZSet;

use crate::listpack::LpBuilder;
use super::{intset, types, Style, RDB_VERSION_HASH_TTL, RDB_VERSION_MIN, RDB_VERSION_SET_LISTPACK};

/// Redis's length encoding: 6 bits, 14 bits, 32 or 64 bits big-endian.
pub fn put_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if n <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// An integer in the shortest of the INT8/16/32 string encodings, if one
/// holds it.
fn put_int_enc(out: &mut Vec<u8>, v: i64) -> bool {
    if let Ok(b) = i8::try_from(v) {
        out.extend_from_slice(&[0xc0, b as u8]);
    } else if let Ok(h) = i16::try_from(v) {
        out.push(0xc1);
        out.extend_from_slice(&h.to_le_bytes());
    } else if let Ok(w) = i32::try_from(v) {
        out.push(0xc2);
        out.extend_from_slice(&w.to_le_bytes());
    } else {
        return false;
    }
    true
}

/// A string as Redis saves one: up to 11 bytes that read as a canonical
/// integer in an integer encoding; over 20 bytes LZF-compressed when
/// `compress` and that saves more than 4 bytes; else length and bytes.
pub fn put_string(out: &mut Vec<u8>, b: &[u8], compress: bool) {
    if b.len() <= 11 {
        if let Some(v) = tern_resp::parse_i64(b) {
            if put_int_enc(out, v) {
                return;
            }
        }
    }
    if compress && b.len() > 20 {
        let mark = out.len();
        out.push(0xc3);
        let mut packed = Vec::new();
        if crate::lzf::compress_as_liblzf(b, &mut packed, b.len() - 4) {
            put_len(out, packed.len() as u64);
            put_len(out, b.len() as u64);
            out.extend_from_slice(&packed);
            return;
        }
        out.truncate(mark);
    }
    put_len(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// An integer string value (`int` encoding), as `rdbSaveLongLongAsStringObject`.
pub fn put_int_string(out: &mut Vec<u8>, v: i64) {
    if !put_int_enc(out, v) {
        let mut buf = itoa::Buffer::new();
        let s = buf.format(v).as_bytes();
        put_len(out, s.len() as u64);
        out.extend_from_slice(s);
    }
}

/// A value's type byte and body, in `style`. Returns the lowest RDB
/// version that reads it.
pub fn put_value(out: &mut Vec<u8>, v: ValueRef<'_>, style: Style, compress: bool) -> u16 {
    match v {
        ValueRef::Str(s) => {
            out.push(types::STRING);
            put_str_value(out, s, compress);
            RDB_VERSION_MIN
        }
        ValueRef::List(l) => put_list(out, l, compress),
        ValueRef::Set(s) => put_set(out, s, style, compress),
        ValueRef::ZSet(z) => put_zset(out, z, compress),
        ValueRef::Hash(h) => put_hash(out, h, compress),
        ValueRef::Stream(x) => super::stream::put_stream(out, x, style, compress),
    }
}

fn put_str_value(out: &mut Vec<u8>, s: StrRef<'_>, compress: bool) {
    match s {
        StrRef::Int(n) => put_int_string(out, n),
        _ => s.with_bytes(|b| put_string(out, b, compress)),
    }
}

/// QUICKLIST_2: one listpack ("packed") node per node of the list.
fn put_list(out: &mut Vec<u8>, l: ListRef<'_>, compress: bool) -> u16 {
    out.push(types::LIST_QUICKLIST_2);
    let lens: Vec<usize> = l.node_lens().filter(|&n| n > 0).collect();
    put_len(out, lens.len() as u64);
    let mut it = l.iter();
    for n in lens {
        let mut lp = LpBuilder::new();
        for e in it.by_ref().take(n) {
            lp.push(&e);
        }
        put_len(out, QUICKLIST_NODE_PACKED);
        put_string(out, &lp.finish(), compress);
    }
    RDB_VERSION_MIN
}

/// A quicklist node holding one large element as it is.
pub const QUICKLIST_NODE_PLAIN: u64 = 1;
/// A quicklist node holding a listpack.
pub const QUICKLIST_NODE_PACKED: u64 = 2;

/// An intset as SET_INTSET; a listpack as SET_LISTPACK in Redis's
/// style, as a plain SET in the oldest (RDB 10 has no SET_LISTPACK).
fn put_set(out: &mut Vec<u8>, s: &Set, style: Style, compress: bool) -> u16 {
    match s.encoding() {
        "intset" => {
            let mut ints: Vec<i64> = s.iter().filter_map(|m| match m {
                Member::Int(n) => Some(n),
                Member::Bytes(b) => tern_resp::parse_i64(b),
            }).collect();
            out.push(types::SET_INTSET);
            put_string(out, &intset::encode(&mut ints), compress);
            RDB_VERSION_MIN
        }
        "listpack" if style == Style::Redis => {
            let mut lp = LpBuilder::new();
            for m in s.iter() {
                match m {
                    Member::Int(n) => lp.push_int(n),
                    Member::Bytes(b) => lp.push(b),
                }
            }
            out.push(types::SET_LISTPACK);
            put_string(out, &lp.finish(), compress);
            RDB_VERSION_SET_LISTPACK
        }
        _ => {
            out.push(types::SET);
            put_len(out, s.len() as u64);
            for m in s.iter() {
                m.with_bytes(|b| put_string(out, b, compress));
            }
            RDB_VERSION_MIN
        }
    }
}

/// A listpack of member, score pairs (scores as Redis's `d2string`
/// writes them), or ZSET_2 with binary scores, highest first as Redis
/// walks its skiplist.
fn put_zset(out: &mut Vec<u8>, z: &ZSet, compress: bool) -> u16 {
    if z.is_compact() {
        let mut lp = LpBuilder::new();
        let mut buf = String::new();
        z.for_range(0, z.len(), false, |m, s| {
            lp.push(m);
            tern_resp::encode::format_double(s, &mut buf);
            lp.push(buf.as_bytes());
        });
        out.push(types::ZSET_LISTPACK);
        put_string(out, &lp.finish(), compress);
    } else {
        out.push(types::ZSET_2);
        put_len(out, z.len() as u64);
        z.for_range(0, z.len(), true, |m, s| {
            put_string(out, m, compress);
            out.extend_from_slice(&s.to_le_bytes());
        });
    }
    RDB_VERSION_MIN
}

/// A field's place in a listpack with TTLs: deadline, then the later set first.
type TtlOrder = (u64, std::cmp::Reverse<u64>);

/// HASH_LISTPACK or HASH; with field TTLs, Redis 7.4's HASH_LISTPACK_EX
/// (triplets ordered by deadline, fields without one last) or
/// HASH_METADATA (each field's deadline relative to the earliest).
fn put_hash(out: &mut Vec<u8>, h: &Hash, compress: bool) -> u16 {
    let min = h.next_deadline().filter(|_| h.volatile_fields() > 0);
    match (h.is_compact(), min) {
        (true, None) => {
            let mut lp = LpBuilder::new();
            for (f, v) in h.iter() {
                lp.push(f);
                lp.push(v);
            }
            out.push(types::HASH_LISTPACK);
            put_string(out, &lp.finish(), compress);
            RDB_VERSION_MIN
        }
        (false, None) => {
            out.push(types::HASH);
            put_len(out, h.len() as u64);
            for (f, v) in h.iter() {
                put_string(out, f, compress);
                put_string(out, v, compress);
            }
            RDB_VERSION_MIN
        }
        (true, Some(min)) => {
            // By deadline; equal deadlines the later set first (Redis
            // inserts before its equals); fields without one last, in order.
            let mut fields: Vec<(TtlOrder, &[u8], &[u8])> = h
                .iter()
                .map(|(f, v)| {
                    let (t, serial) = h.field_expire_serial(f).unwrap_or((u64::MAX, 0));
                    ((t, std::cmp::Reverse(serial)), f, v)
                })
                .collect();
            fields.sort_by_key(|e| e.0);
            let mut lp = LpBuilder::new();
            for ((t, _), f, v) in fields {
                lp.push(f);
                lp.push(v);
                lp.push_int(if t == u64::MAX { 0 } else { t as i64 });
            }
            out.push(types::HASH_LISTPACK_EX);
            out.extend_from_slice(&min.to_le_bytes());
            put_string(out, &lp.finish(), compress);
            RDB_VERSION_HASH_TTL
        }
        (false, Some(min)) => {
            out.push(types::HASH_METADATA);
            out.extend_from_slice(&min.to_le_bytes());
            put_len(out, h.len() as u64);
            for (f, v) in h.iter() {
                put_len(out, h.field_expire(f).map_or(0, |t| t - min + 1));
                put_string(out, f, compress);
                put_string(out, v, compress);
            }
            RDB_VERSION_HASH_TTL
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_strings_as_redis() {
        let mut o = Vec::new();
        put_len(&mut o, 63);
        put_len(&mut o, 1001);
        put_len(&mut o, 70000);
        put_len(&mut o, 1 << 33);
        assert_eq!(o, b"\x3f\x43\xe9\x80\x00\x01\x11\x70\x81\x00\x00\x00\x02\x00\x00\x00\x00");
        let mut o = Vec::new();
        put_string(&mut o, b"1", true);
        put_string(&mut o, b"-300", true);
        put_string(&mut o, b"100000", true);
        put_string(&mut o, b"012", true);
        put_string(&mut o, b"4294967296", true);
        assert_eq!(o, b"\xc0\x01\xc1\xd4\xfe\xc2\xa0\x86\x01\x00\x03012\x0a4294967296");
        let mut o = Vec::new();
        put_int_string(&mut o, 1 << 40);
        assert_eq!(o, b"\x0d1099511627776");
    }
}
