//! Redis's ziplist, which files of Redis before 7.0 carry for small lists,
//! hashes and sorted sets (types LIST_ZIPLIST, HASH_ZIPLIST, ZSET_ZIPLIST,
//! and QUICKLIST's nodes): read only, every length checked.
//!
//! ```text
//!  | zlbytes u32 LE | zltail u32 LE | count u16 LE (65535: unknown) | entry ... | 0xff |
//!  entry: prevlen (1 byte, or 0xfe + u32 LE) | encoding [+ data]
//!    00llllll · 01llllll llllllll (BE) · 10000000 + u32 BE    string of that length
//!    c0 int16 · d0 int32 · e0 int64 · f0 int24 · fe int8 (LE) · f1..fd: 0..12
//! ```

use crate::listpack::{bad, int_le, le, LpVal};
use super::RdbError;

const HEADER: usize = 10;

/// The elements of a ziplist, after checking its header, each entry's
/// previous-length and encoding, the tail offset, the end byte and the
/// count.
pub fn collect(zl: &[u8]) -> Result<Vec<LpVal<'_>>, RdbError> {
    if zl.len() < HEADER + 1 {
        return Err(bad("ziplist shorter than its header"));
    }
    if le(&zl[0..4]) != zl.len() as u64 {
        return Err(bad("ziplist total bytes differ from its length"));
    }
    let tail = le(&zl[4..8]) as usize;
    let claimed = le(&zl[8..10]) as usize;
    let end = zl.len() - 1;
    if zl[end] != 0xff {
        return Err(bad("ziplist without its end byte"));
    }
    let mut out = Vec::new();
    let (mut pos, mut prev_size, mut last_start) = (HEADER, 0usize, HEADER);
    while pos < end {
        let start = pos;
        let rest = &zl[pos..end];
        let need = |n: usize| if rest.len() >= n { Ok(()) } else { Err(bad("ziplist entry past its end")) };
        need(1)?;
        let (prevlen, mut p) = if rest[0] < 0xfe {
            (usize::from(rest[0]), 1)
        } else if rest[0] == 0xfe {
            need(5)?;
            (le(&rest[1..5]) as usize, 5)
        } else {
            return Err(bad("ziplist entry with a bad previous length"));
        };
        if prevlen != prev_size {
            return Err(bad("ziplist entry's previous length is wrong"));
        }
        need(p + 1)?;
        let e = rest[p];
        let val = match e >> 6 {
            0..=2 => {
                let (n, h) = match e >> 6 {
                    0 => (usize::from(e & 0x3f), 1),
                    1 => {
                        need(p + 2)?;
                        (usize::from(e & 0x3f) << 8 | usize::from(rest[p + 1]), 2)
                    }
                    _ if e == 0x80 => {
                        need(p + 5)?;
                        (u32::from_be_bytes([rest[p + 1], rest[p + 2], rest[p + 3], rest[p + 4]]) as usize, 5)
                    }
                    _ => return Err(bad("ziplist entry with an unknown encoding")),
                };
                p += h;
                need(p.saturating_add(n))?;
                let v = LpVal::Bytes(&rest[p..p + n]);
                p += n;
                v
            }
            _ => {
                let w = match e {
                    0xc0 => 2,
                    0xd0 => 4,
                    0xe0 => 8,
                    0xf0 => 3,
                    0xfe => 1,
                    0xf1..=0xfd => 0,
                    _ => return Err(bad("ziplist entry with an unknown encoding")),
                };
                p += 1;
                need(p + w)?;
                let v = if w == 0 { i64::from(e & 0x0f) - 1 } else { int_le(&rest[p..p + w]) };
                p += w;
                LpVal::Int(v)
            }
        };
        out.push(val);
        last_start = start;
        prev_size = p;
        pos += p;
    }
    if (out.is_empty() && tail != HEADER) || (!out.is_empty() && tail != last_start) {
        return Err(bad("ziplist tail offset is wrong"));
    }
    if claimed != usize::from(u16::MAX) && claimed != out.len() {
        return Err(bad("ziplist count differs from its entries"));
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A ziplist of `items` as Redis 6 builds one (strings as strings,
    /// canonical integers in the smallest integer encoding).
    pub(crate) fn build(items: &[&[u8]]) -> Vec<u8> {
        let mut body = Vec::new();
        let (mut prev, mut tail) = (0usize, HEADER);
        for it in items {
            let start = body.len();
            tail = HEADER + start;
            if prev < 254 {
                body.push(prev as u8);
            } else {
                body.push(0xfe);
                body.extend_from_slice(&(prev as u32).to_le_bytes());
            }
            match tern_resp::parse_i64(it) {
                Some(v @ 0..=12) => body.push(0xf1 + v as u8),
                Some(v) if i8::try_from(v).is_ok() => body.extend_from_slice(&[0xfe, v as u8]),
                Some(v) if i16::try_from(v).is_ok() => {
                    body.push(0xc0);
                    body.extend_from_slice(&(v as i16).to_le_bytes());
                }
                Some(v) if (-(1 << 23)..(1 << 23)).contains(&v) => {
                    body.push(0xf0);
                    body.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
                }
                Some(v) if i32::try_from(v).is_ok() => {
                    body.push(0xd0);
                    body.extend_from_slice(&(v as i32).to_le_bytes());
                }
                Some(v) => {
                    body.push(0xe0);
                    body.extend_from_slice(&v.to_le_bytes());
                }
                None if it.len() < 64 => {
                    body.push(it.len() as u8);
                    body.extend_from_slice(it);
                }
                None if it.len() < 16384 => {
                    body.extend_from_slice(&[0x40 | (it.len() >> 8) as u8, it.len() as u8]);
                    body.extend_from_slice(it);
                }
                None => {
                    body.push(0x80);
                    body.extend_from_slice(&(it.len() as u32).to_be_bytes());
                    body.extend_from_slice(it);
                }
            }
            prev = body.len() - start;
        }
        let mut zl = Vec::new();
        zl.extend_from_slice(&((HEADER + body.len() + 1) as u32).to_le_bytes());
        zl.extend_from_slice(&(tail as u32).to_le_bytes());
        zl.extend_from_slice(&(items.len().min(65535) as u16).to_le_bytes());
        zl.extend_from_slice(&body);
        zl.push(0xff);
        zl
    }

    #[test]
    fn reads_what_redis_6_builds() {
        let long = vec![b'x'; 300];
        let items: Vec<&[u8]> = vec![b"a", b"0", b"12", b"13", b"-1", b"200", b"-70000", b"9000000", b"3000000000", b"-12345678901234", &long, b""];
        let zl = build(&items);
        let got: Vec<Vec<u8>> = collect(&zl).unwrap().into_iter().map(LpVal::to_vec).collect();
        assert_eq!(got, items.iter().map(|i| i.to_vec()).collect::<Vec<_>>());
        assert!(collect(&build(&[])).unwrap().is_empty());
        for i in 0..zl.len() {
            let mut z = zl.clone();
            z[i] ^= 0x41;
            let _ = collect(&z);
            let _ = collect(&zl[..i]);
        }
        let mut z = zl.clone();
        z[8] = 3;
        assert!(collect(&z).is_err());
    }
}
