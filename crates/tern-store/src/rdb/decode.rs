//! RDB bytes into values. Everything read is checked; a claimed length
//! never sizes an allocation before the bytes are there (strings grow as
//! they are read, element counts reserve at most [`RESERVE_MAX`]), and no
//! type nests another, so there is no recursion to bound.

use std::io::Read;

use crate::hash::Hash;
use crate::list::List;
use crate::set::Set;
use crate::zset::ZSet;
use crate::value::{StrValue, Value};

use crate::listpack::{self, LpVal};
use super::ziplist;
use super::{crc64, intset, types, Limits, RdbError};
use super::encode::{QUICKLIST_NODE_PACKED, QUICKLIST_NODE_PLAIN};

/// The most elements a claimed count reserves room for up front.
const RESERVE_MAX: usize = 1024;
/// LZF expands at most 264 bytes out of 2 in: a claimed size beyond this
/// many times the compressed one is corrupt.
const LZF_MAX_RATIO: u64 = 132;

/// A byte source that sums what it reads into Redis's CRC64.
pub struct Src<R> {
    r: R,
    pub(crate) crc: u64,
    pub(crate) pos: u64,
    /// Whether reads are summed (not when the whole file's scan sums them).
    sum: bool,
}

/// A length, or the special string encoding in its place.
enum Len {
    Plain(u64),
    Enc(u8),
}

impl<R: Read> Src<R> {
    pub fn new(r: R) -> Self {
        Src { r, crc: 0, pos: 0, sum: true }
    }

    /// A source whose reads are not summed.
    pub fn unsummed(r: R) -> Self {
        Src { r, crc: 0, pos: 0, sum: false }
    }

    pub fn exact(&mut self, buf: &mut [u8]) -> Result<(), RdbError> {
        self.r.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => RdbError::Truncated,
            _ => RdbError::Io(e),
        })?;
        if self.sum {
            self.crc = crc64::update(self.crc, buf);
        }
        self.pos += buf.len() as u64;
        Ok(())
    }

    pub fn byte(&mut self) -> Result<u8, RdbError> {
        let mut b = [0u8];
        self.exact(&mut b)?;
        Ok(b[0])
    }

    pub fn u64_le(&mut self) -> Result<u64, RdbError> {
        let mut b = [0u8; 8];
        self.exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// `n` bytes, read in steps so that a false length fails at the end of
    /// the input, not in the allocator.
    pub fn bytes(&mut self, n: u64) -> Result<Vec<u8>, RdbError> {
        let n = usize::try_from(n).map_err(|_| RdbError::Corrupt("length beyond memory"))?;
        let mut v = Vec::with_capacity(n.min(64 * 1024));
        let mut got = 0;
        while got < n {
            let step = (n - got).min(256 * 1024);
            v.resize(got + step, 0);
            let (_, tail) = v.split_at_mut(got);
            self.exact(tail)?;
            got += step;
        }
        Ok(v)
    }

    fn len_or_enc(&mut self) -> Result<Len, RdbError> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => Len::Plain(u64::from(b & 0x3f)),
            1 => Len::Plain(u64::from(b & 0x3f) << 8 | u64::from(self.byte()?)),
            2 if b == 0x80 => {
                let mut a = [0u8; 4];
                self.exact(&mut a)?;
                Len::Plain(u64::from(u32::from_be_bytes(a)))
            }
            2 if b == 0x81 => {
                let mut a = [0u8; 8];
                self.exact(&mut a)?;
                Len::Plain(u64::from_be_bytes(a))
            }
            2 => return Err(RdbError::Corrupt("unknown length encoding")),
            _ => Len::Enc(b & 0x3f),
        })
    }

    /// A length (not a string's special encoding).
    pub fn len(&mut self) -> Result<u64, RdbError> {
        match self.len_or_enc()? {
            Len::Plain(n) => Ok(n),
            Len::Enc(_) => Err(RdbError::Corrupt("encoded string where a length belongs")),
        }
    }

    /// A count of elements, which may not be zero in a stored value.
    fn count(&mut self) -> Result<u64, RdbError> {
        match self.len()? {
            0 => Err(RdbError::Corrupt("empty aggregate value")),
            n => Ok(n),
        }
    }

    /// A string, or the integer an integer-encoded one holds.
    pub fn string_or_int(&mut self) -> Result<Result<Vec<u8>, i64>, RdbError> {
        match self.len_or_enc()? {
            Len::Plain(n) => Ok(Ok(self.bytes(n)?)),
            Len::Enc(0) => Ok(Err(i64::from(self.byte()? as i8))),
            Len::Enc(1) => {
                let mut a = [0u8; 2];
                self.exact(&mut a)?;
                Ok(Err(i64::from(i16::from_le_bytes(a))))
            }
            Len::Enc(2) => {
                let mut a = [0u8; 4];
                self.exact(&mut a)?;
                Ok(Err(i64::from(i32::from_le_bytes(a))))
            }
            Len::Enc(3) => {
                let clen = self.len()?;
                let len = self.len()?;
                if len == 0 || len > clen.saturating_mul(LZF_MAX_RATIO) {
                    return Err(RdbError::Corrupt("LZF string with an impossible length"));
                }
                let packed = self.bytes(clen)?;
                let len = usize::try_from(len).map_err(|_| RdbError::Corrupt("length beyond memory"))?;
                let mut out = Vec::with_capacity(len);
                crate::lzf::decompress(&packed, &mut out, len).ok_or(RdbError::Corrupt("bad LZF data"))?;
                if out.len() != len {
                    return Err(RdbError::Corrupt("LZF string shorter than claimed"));
                }
                Ok(Ok(out))
            }
            Len::Enc(_) => Err(RdbError::Corrupt("unknown string encoding")),
        }
    }

    pub fn string(&mut self) -> Result<Vec<u8>, RdbError> {
        Ok(match self.string_or_int()? {
            Ok(b) => b,
            Err(n) => itoa::Buffer::new().format(n).as_bytes().to_vec(),
        })
    }

    /// A score as ZSET (version 1) writes it: length-prefixed text, or
    /// 253/254/255 for NaN/+inf/-inf.
    fn text_double(&mut self) -> Result<f64, RdbError> {
        match self.byte()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => {
                let mut b = vec![0u8; usize::from(n)];
                self.exact(&mut b)?;
                parse_score(&b)
            }
        }
    }

    fn binary_double(&mut self) -> Result<f64, RdbError> {
        Ok(f64::from_bits(self.u64_le()?))
    }
}

fn parse_score(b: &[u8]) -> Result<f64, RdbError> {
    std::str::from_utf8(b).ok().and_then(|s| s.parse::<f64>().ok()).ok_or(RdbError::Corrupt("unreadable score"))
}

fn lp_score(v: LpVal<'_>) -> Result<f64, RdbError> {
    match v {
        LpVal::Int(n) => Ok(n as f64),
        LpVal::Bytes(b) => parse_score(b),
    }
}

/// A string value as Redis would hold it after loading: a canonical
/// integer as an integer.
pub fn str_value(r: Result<Vec<u8>, i64>) -> Value {
    Value::Str(match r {
        Err(n) => StrValue::Int(n),
        Ok(b) => match tern_resp::parse_i64(&b) {
            Some(n) => StrValue::Int(n),
            None => StrValue::Emb(b.into_boxed_slice()),
        },
    })
}

/// The value of RDB type `t` that follows in `src`, in Tern's encoding
/// for `lim`.
pub fn value<R: Read>(src: &mut Src<R>, t: u8, lim: &Limits) -> Result<Value, RdbError> {
    match t {
        types::STRING => Ok(str_value(src.string_or_int()?)),
        types::LIST => {
            let n = src.count()?;
            let mut items = Vec::with_capacity((n as usize).min(RESERVE_MAX));
            for _ in 0..n {
                items.push(src.string()?);
            }
            Ok(list_of(items, lim))
        }
        types::LIST_QUICKLIST_2 => {
            let nodes = src.count()?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                let container = src.len()?;
                let blob = src.string()?;
                match container {
                    QUICKLIST_NODE_PLAIN => items.push(blob),
                    QUICKLIST_NODE_PACKED => {
                        let n = listpack::decode(&blob, |v| {
                            items.push(v.to_vec());
                            Ok(())
                        })?;
                        if n == 0 {
                            return Err(RdbError::Corrupt("empty quicklist node"));
                        }
                    }
                    _ => return Err(RdbError::Corrupt("unknown quicklist container")),
                }
            }
            Ok(list_of(items, lim))
        }
        types::LIST_ZIPLIST => {
            let blob = src.string()?;
            let vals = ziplist::collect(&blob)?;
            if vals.is_empty() {
                return Err(RdbError::Corrupt("empty aggregate value"));
            }
            Ok(list_of(vals.into_iter().map(LpVal::to_vec).collect(), lim))
        }
        types::LIST_QUICKLIST => {
            let nodes = src.count()?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                let blob = src.string()?;
                let vals = ziplist::collect(&blob)?;
                if vals.is_empty() {
                    return Err(RdbError::Corrupt("empty quicklist node"));
                }
                items.extend(vals.into_iter().map(LpVal::to_vec));
            }
            Ok(list_of(items, lim))
        }
        types::ZSET_ZIPLIST => {
            let blob = src.string()?;
            let vals = ziplist::collect(&blob)?;
            if vals.len() % 2 != 0 {
                return Err(RdbError::Corrupt("sorted set ziplist with an odd count"));
            }
            let mut pairs = Vec::with_capacity(vals.len() / 2);
            for c in vals.chunks_exact(2) {
                pairs.push((c[0].to_vec(), lp_score(c[1])?));
            }
            zset_of(pairs, lim)
        }
        types::HASH_ZIPLIST => {
            let blob = src.string()?;
            let vals = ziplist::collect(&blob)?;
            if vals.len() % 2 != 0 {
                return Err(RdbError::Corrupt("hash ziplist with an odd count"));
            }
            hash_of(vals.chunks_exact(2).map(|c| (c[0].to_vec(), c[1].to_vec(), None)).collect(), lim)
        }
        types::SET => {
            let n = src.count()?;
            let mut set: Option<Set> = None;
            for _ in 0..n {
                let m = src.string()?;
                let s = set.get_or_insert_with(|| Set::new_for(&m, n as usize, lim.set));
                if !s.add(&m, lim.set) {
                    return Err(RdbError::Corrupt("duplicate set member"));
                }
            }
            set.map(Value::Set).ok_or(RdbError::Corrupt("empty aggregate value"))
        }
        types::SET_INTSET => {
            let ints = intset::decode(&src.string()?)?;
            set_of(ints.iter().map(|&n| LpVal::Int(n)), ints.len(), lim)
        }
        types::SET_LISTPACK => {
            let blob = src.string()?;
            let vals = listpack::collect(&blob)?;
            set_of(vals.iter().copied(), vals.len(), lim)
        }
        types::ZSET | types::ZSET_2 => {
            let n = src.count()?;
            let mut pairs = Vec::with_capacity((n as usize).min(RESERVE_MAX));
            for _ in 0..n {
                let m = src.string()?;
                let s = if t == types::ZSET { src.text_double()? } else { src.binary_double()? };
                pairs.push((m, s));
            }
            zset_of(pairs, lim)
        }
        types::ZSET_LISTPACK => {
            let blob = src.string()?;
            let vals = listpack::collect(&blob)?;
            if vals.len() % 2 != 0 {
                return Err(RdbError::Corrupt("sorted set listpack with an odd count"));
            }
            let mut pairs = Vec::with_capacity(vals.len() / 2);
            for c in vals.chunks_exact(2) {
                pairs.push((c[0].to_vec(), lp_score(c[1])?));
            }
            zset_of(pairs, lim)
        }
        types::HASH => {
            let n = src.count()?;
            let mut fields = Vec::with_capacity((n as usize).min(RESERVE_MAX));
            for _ in 0..n {
                fields.push((src.string()?, src.string()?, None));
            }
            hash_of(fields, lim)
        }
        types::HASH_LISTPACK => {
            let blob = src.string()?;
            let vals = listpack::collect(&blob)?;
            if vals.len() % 2 != 0 {
                return Err(RdbError::Corrupt("hash listpack with an odd count"));
            }
            hash_of(vals.chunks_exact(2).map(|c| (c[0].to_vec(), c[1].to_vec(), None)).collect(), lim)
        }
        types::HASH_METADATA => {
            let min = src.u64_le()?;
            let n = src.count()?;
            let mut fields = Vec::with_capacity((n as usize).min(RESERVE_MAX));
            for _ in 0..n {
                let ttl = match src.len()? {
                    0 => None,
                    d => Some(min.checked_add(d - 1).ok_or(RdbError::Corrupt("field TTL out of range"))?),
                };
                fields.push((src.string()?, src.string()?, ttl));
            }
            hash_of(fields, lim)
        }
        types::HASH_LISTPACK_EX => {
            let _min = src.u64_le()?;
            let blob = src.string()?;
            let vals = listpack::collect(&blob)?;
            if vals.len() % 3 != 0 {
                return Err(RdbError::Corrupt("hash listpack with TTLs not in triplets"));
            }
            let mut fields = Vec::with_capacity(vals.len() / 3);
            for c in vals.chunks_exact(3) {
                let ttl = match c[2] {
                    LpVal::Int(0) => None,
                    LpVal::Int(t) if t > 0 => Some(t as u64),
                    _ => return Err(RdbError::Corrupt("bad field TTL")),
                };
                fields.push((c[0].to_vec(), c[1].to_vec(), ttl));
            }
            hash_of(fields, lim)
        }
        types::STREAM_LISTPACKS | types::STREAM_LISTPACKS_2 | types::STREAM_LISTPACKS_3 => super::stream::read_stream(src, t),
        _ => Err(RdbError::UnsupportedType(t)),
    }
}

fn list_of(items: Vec<Vec<u8>>, lim: &Limits) -> Value {
    Value::List(List::from_items(items.iter().map(Vec::as_slice), lim.list))
}

fn set_of<'a>(members: impl Iterator<Item = LpVal<'a>>, n: usize, lim: &Limits) -> Result<Value, RdbError> {
    let mut set: Option<Set> = None;
    for m in members {
        let m = m.to_vec();
        let s = set.get_or_insert_with(|| Set::new_for(&m, n, lim.set));
        if !s.add(&m, lim.set) {
            return Err(RdbError::Corrupt("duplicate set member"));
        }
    }
    set.map(Value::Set).ok_or(RdbError::Corrupt("empty aggregate value"))
}

fn zset_of(pairs: Vec<(Vec<u8>, f64)>, lim: &Limits) -> Result<Value, RdbError> {
    if pairs.is_empty() {
        return Err(RdbError::Corrupt("empty aggregate value"));
    }
    let longest = pairs.iter().map(|p| p.0.len()).max().unwrap_or(0);
    let mut z = ZSet::new_for(pairs.len(), longest, lim.zset);
    for (m, s) in &pairs {
        if s.is_nan() {
            return Err(RdbError::Corrupt("NaN score"));
        }
        if !z.insert(m, *s, lim.zset) {
            return Err(RdbError::Corrupt("duplicate sorted set member"));
        }
    }
    Ok(Value::ZSet(z))
}

type FieldTtl = (Vec<u8>, Vec<u8>, Option<u64>);

fn hash_of(fields: Vec<FieldTtl>, lim: &Limits) -> Result<Value, RdbError> {
    if fields.is_empty() {
        return Err(RdbError::Corrupt("empty aggregate value"));
    }
    let longest = fields.iter().map(|f| f.0.len().max(f.1.len())).max().unwrap_or(0);
    let mut h = Hash::new();
    h.prepare_write(fields.len(), longest, lim.hash);
    for (f, v, _) in &fields {
        if !h.set(f, v, lim.hash) {
            return Err(RdbError::Corrupt("duplicate hash field"));
        }
    }
    // In reverse, so that of fields with equal deadlines the first in the
    // input counts as set last, and is written first again.
    for (f, _, t) in fields.iter().rev() {
        if let Some(t) = t {
            h.set_field_expire(f, *t);
        }
    }
    Ok(Value::Hash(h))
}
