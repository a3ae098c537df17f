//! Redis's listpack, as RDB carries small hashes, sets, sorted sets and
//! list nodes: built from elements, and read back with every length and
//! back-length checked.
//!
//! ```text
//!  | total bytes u32 LE | count u16 LE (65535: unknown) | entry ... | 0xff |
//!  entry: encoding [+ data] | back-length (the entry's size, 7 bits a byte, read right to left)
//!    0xxxxxxx            uint 0..127          10xxxxxx + data    string < 64 bytes
//!    110xxxxx x          int13                1110xxxx x + data  string < 4096 bytes
//!    f1 / f2 / f3 / f4   int16/24/32/64 LE    f0 len32 + data    longer string
//! ```
//!
//! An element that reads as a canonical integer is stored as one, as
//! Redis's `lpAppend` does, so the bytes equal Redis's for the same
//! elements in the same order.
//!
//! A stream keeps its nodes as listpacks (`crate::stream`), and so
//! appends to one ([`LpBuilder::resume`]), walks it both ways ([`next`],
//! [`prev`], reading back-lengths right to left) and rewrites an integer
//! where it lies ([`replace_int`]). Hence this module sits below both
//! streams and `crate::rdb`, which re-exports it.

/// Bytes before the first element: total bytes (u32 LE), count (u16 LE).
pub const HEADER: usize = 6;
const EOF: u8 = 0xff;
/// The count of a listpack with more elements than its header holds.
const COUNT_UNKNOWN: u16 = u16::MAX;

/// An element as a listpack holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpVal<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl LpVal<'_> {
    /// The element's bytes (an integer's decimal digits).
    pub fn to_vec(self) -> Vec<u8> {
        match self {
            LpVal::Int(n) => itoa::Buffer::new().format(n).as_bytes().to_vec(),
            LpVal::Bytes(b) => b.to_vec(),
        }
    }
}

/// Builds a listpack element by element.
pub struct LpBuilder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for LpBuilder {
    fn default() -> Self {
        Self::new()
    }
}

fn put_backlen(out: &mut Vec<u8>, l: usize) {
    if l <= 127 {
        out.push(l as u8);
    } else if l < 16383 {
        out.extend_from_slice(&[(l >> 7) as u8, (l & 127) as u8 | 128]);
    } else if l < 2_097_151 {
        out.extend_from_slice(&[(l >> 14) as u8, ((l >> 7) & 127) as u8 | 128, (l & 127) as u8 | 128]);
    } else if l < 268_435_455 {
        out.extend_from_slice(&[
            (l >> 21) as u8,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    } else {
        out.extend_from_slice(&[
            (l >> 28) as u8,
            ((l >> 21) & 127) as u8 | 128,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    }
}

fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// Appends `b`'s string entry (encoding, bytes, back-length) to `out`.
fn put_str(out: &mut Vec<u8>, b: &[u8]) {
    let start = out.len();
    let n = b.len();
    if n < 64 {
        out.push(0x80 | n as u8);
    } else if n < 4096 {
        out.extend_from_slice(&[0xe0 | (n >> 8) as u8, n as u8]);
    } else {
        out.push(0xf0);
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    out.extend_from_slice(b);
    let l = out.len() - start;
    put_backlen(out, l);
}

/// Appends `v`'s integer entry, in the narrowest encoding that holds it.
fn put_int(out: &mut Vec<u8>, v: i64) {
    let start = out.len();
    if (0..=127).contains(&v) {
        out.push(v as u8);
    } else if (-4096..=4095).contains(&v) {
        let u = (v as u64) & 0x1fff;
        out.extend_from_slice(&[0xc0 | (u >> 8) as u8, u as u8]);
    } else if i16::try_from(v).is_ok() {
        out.push(0xf1);
        out.extend_from_slice(&(v as i16).to_le_bytes());
    } else if (-(1 << 23)..(1 << 23)).contains(&v) {
        out.push(0xf2);
        out.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
    } else if i32::try_from(v).is_ok() {
        out.push(0xf3);
        out.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        out.push(0xf4);
        out.extend_from_slice(&v.to_le_bytes());
    }
    let l = out.len() - start;
    put_backlen(out, l);
}

impl LpBuilder {
    pub fn new() -> Self {
        LpBuilder { buf: vec![0; HEADER], count: 0 }
    }

    /// An empty listpack whose buffer has room for `cap` bytes (a stream
    /// node grows in place up to its byte limit).
    pub fn with_capacity(cap: usize) -> Self {
        let mut buf = Vec::with_capacity(cap.max(HEADER + 1));
        buf.resize(HEADER, 0);
        LpBuilder { buf, count: 0 }
    }

    /// Reopens a finished listpack for appending, in its own buffer, in
    /// O(1): a header whose count is "unknown" stays so (Redis's
    /// `lpInsert` does not count either), and [`Self::len`] then starts
    /// from 65535.
    pub fn resume(mut lp: Vec<u8>) -> Self {
        let count = le(&lp[4..6]) as usize;
        lp.pop();
        LpBuilder { buf: lp, count }
    }

    /// Appends bytes, as an integer when they read as a canonical one.
    pub fn push(&mut self, b: &[u8]) {
        match tern_resp::parse_i64(b) {
            Some(n) => self.push_int(n),
            None => self.push_str(b),
        }
    }

    pub fn push_val(&mut self, v: LpVal<'_>) {
        match v {
            LpVal::Int(n) => self.push_int(n),
            LpVal::Bytes(b) => self.push(b),
        }
    }

    fn push_str(&mut self, b: &[u8]) {
        put_str(&mut self.buf, b);
        self.count += 1;
    }

    pub fn push_int(&mut self, v: i64) {
        put_int(&mut self.buf, v);
        self.count += 1;
    }

    /// Elements in the listpack (at least 65535 for one resumed with an
    /// "unknown" count: see [`Self::resume`]).
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The listpack's bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        set_total(&mut self.buf);
        let count = u16::try_from(self.count).unwrap_or(COUNT_UNKNOWN);
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

/// Writes the header's total bytes from the buffer's length.
fn set_total(lp: &mut [u8]) {
    let total = lp.len() as u32;
    lp[0..4].copy_from_slice(&total.to_le_bytes());
}

// In-place access, for listpacks kept as they are (a stream's nodes):
// each is valid, built here or checked by `decode` when loaded, so these
// read without checking again. Positions are byte offsets of elements.

/// The first element's position, or None in an empty listpack.
pub fn first(lp: &[u8]) -> Option<usize> {
    (lp[HEADER] != EOF).then_some(HEADER)
}

/// The last element's position, or None in an empty listpack.
pub fn last(lp: &[u8]) -> Option<usize> {
    prev(lp, lp.len() - 1)
}

/// The element at `pos` and the position after it (the end byte's after
/// the last element: see [`next`]).
pub fn element(lp: &[u8], pos: usize) -> (LpVal<'_>, usize) {
    let end = lp.len() - 1;
    let (v, size) = parse_element(&lp[pos..end]).expect("a kept listpack is valid");
    (v, pos + size + backlen_size(size))
}

/// The position of the element after the one at `pos`, or None after the
/// last.
pub fn next(lp: &[u8], pos: usize) -> Option<usize> {
    let after = element(lp, pos).1;
    (after < lp.len() - 1).then_some(after)
}

/// The position of the element before the one at `pos` (or before the
/// end byte, at `lp.len() - 1`), or None before the first: its size read
/// from its back-length, right to left.
pub fn prev(lp: &[u8], pos: usize) -> Option<usize> {
    if pos <= HEADER {
        return None;
    }
    let (mut size, mut shift, mut p) = (0usize, 0, pos - 1);
    loop {
        size |= usize::from(lp[p] & 127) << shift;
        if lp[p] & 128 == 0 {
            break;
        }
        shift += 7;
        p -= 1;
    }
    Some(pos - backlen_size(size) - size)
}

/// The element at `pos` as an integer: one stored as digits reads as the
/// integer they spell (as Redis's `lpGetInteger`), anything else as 0.
pub fn int_at(lp: &[u8], pos: usize) -> (i64, usize) {
    let (v, after) = element(lp, pos);
    let n = match v {
        LpVal::Int(n) => n,
        LpVal::Bytes(b) => tern_resp::parse_i64(b).unwrap_or(0),
    };
    (n, after)
}

/// Replaces the element at `pos` with the integer `v`, moving what
/// follows when the encodings differ in size. Returns the change in
/// the listpack's length.
pub fn replace_int(lp: &mut Vec<u8>, pos: usize, v: i64) -> isize {
    let old_end = element(lp, pos).1;
    let mut enc = Vec::with_capacity(10);
    put_int(&mut enc, v);
    let delta = enc.len() as isize - (old_end - pos) as isize;
    if delta == 0 {
        lp[pos..old_end].copy_from_slice(&enc);
    } else {
        lp.splice(pos..old_end, enc);
        set_total(lp);
    }
    delta
}

/// Why RDB input was refused: here, below streams, because a listpack's
/// reader refuses with it (`crate::rdb` re-exports it).
#[derive(Debug)]
pub enum RdbError {
    Io(std::io::Error),
    /// The input ended inside a record.
    Truncated,
    /// Bytes that are not RDB, with what was wrong.
    Corrupt(&'static str),
    /// Not `REDIS` and four digits.
    BadHeader,
    /// A version newer than this reader knows.
    Version(u16),
    /// The checksum at the end differs from the bytes' sum.
    Checksum { stored: u64, computed: u64 },
    /// A value type Tern does not hold (modules, zipmaps).
    UnsupportedType(u8),
    /// A top-level opcode Tern does not read (module AUX data).
    UnsupportedOpcode(u8),
    /// The load callback refused an entry.
    Rejected(String),
}

impl std::fmt::Display for RdbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RdbError::Io(e) => write!(f, "I/O error: {e}"),
            RdbError::Truncated => f.write_str("unexpected end of RDB data"),
            RdbError::Corrupt(w) => write!(f, "corrupt RDB data: {w}"),
            RdbError::BadHeader => f.write_str("wrong signature (not an RDB file)"),
            RdbError::Version(v) => write!(f, "can't handle RDB format version {v}"),
            RdbError::Checksum { stored, computed } => {
                write!(f, "wrong RDB checksum: expected {stored:#018x}, got {computed:#018x}")
            }
            RdbError::UnsupportedType(t) => write!(f, "unsupported RDB value type {t}"),
            RdbError::UnsupportedOpcode(t) => write!(f, "unsupported RDB opcode {t}"),
            RdbError::Rejected(w) => f.write_str(w),
        }
    }
}

impl std::error::Error for RdbError {}

impl From<std::io::Error> for RdbError {
    fn from(e: std::io::Error) -> Self {
        RdbError::Io(e)
    }
}

pub(crate) fn bad(what: &'static str) -> RdbError {
    RdbError::Corrupt(what)
}

pub(crate) fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x))
}

/// Sign-extends the low `bits` bits of `u`.
fn sext(u: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((u << shift) as i64) >> shift
}

/// The signed integer of 1 to 8 little-endian bytes: the fixed-width
/// integer entries of listpacks and ziplists alike.
pub(crate) fn int_le(b: &[u8]) -> i64 {
    sext(le(b), 8 * b.len() as u32)
}

/// The element whose encoding starts `rest` (which may run past it): its
/// value and the bytes of its encoding and data (without the
/// back-length), every length checked against `rest`.
fn parse_element(rest: &[u8]) -> Result<(LpVal<'_>, usize), RdbError> {
    let need = |n: usize| if rest.len() >= n { Ok(()) } else { Err(bad("listpack entry past its end")) };
    need(1)?;
    let b = rest[0];
    Ok(if b & 0x80 == 0 {
        (LpVal::Int(i64::from(b)), 1)
    } else if b & 0xc0 == 0x80 {
        let n = usize::from(b & 0x3f);
        need(1 + n)?;
        (LpVal::Bytes(&rest[1..1 + n]), 1 + n)
    } else if b & 0xe0 == 0xc0 {
        need(2)?;
        (LpVal::Int(sext(u64::from(b & 0x1f) << 8 | u64::from(rest[1]), 13)), 2)
    } else if b & 0xf0 == 0xe0 {
        need(2)?;
        let n = usize::from(b & 0x0f) << 8 | usize::from(rest[1]);
        need(2 + n)?;
        (LpVal::Bytes(&rest[2..2 + n]), 2 + n)
    } else {
        match b {
            0xf0 => {
                need(5)?;
                let n = le(&rest[1..5]) as usize;
                need(5usize.saturating_add(n))?;
                (LpVal::Bytes(&rest[5..5 + n]), 5 + n)
            }
            0xf1..=0xf4 => {
                // int16, int24, int32, int64.
                let w = [2, 3, 4, 8][usize::from(b - 0xf1)];
                need(1 + w)?;
                (LpVal::Int(int_le(&rest[1..1 + w])), 1 + w)
            }
            _ => return Err(bad("listpack entry with an unknown encoding")),
        }
    })
}

/// Calls `f` with each element of `lp`, after checking the header, every
/// entry's encoding and back-length, the end byte and the count. Returns
/// the count.
pub fn decode<'a>(lp: &'a [u8], mut f: impl FnMut(LpVal<'a>) -> Result<(), RdbError>) -> Result<usize, RdbError> {
    if lp.len() < HEADER + 1 {
        return Err(bad("listpack shorter than its header"));
    }
    if le(&lp[0..4]) != lp.len() as u64 {
        return Err(bad("listpack total bytes differ from its length"));
    }
    let claimed = le(&lp[4..6]) as usize;
    let end = lp.len() - 1;
    if lp[end] != EOF {
        return Err(bad("listpack without its end byte"));
    }
    let mut pos = HEADER;
    let mut count = 0usize;
    while pos < end {
        let rest = &lp[pos..end];
        let (val, size) = parse_element(rest)?;
        let bl = backlen_size(size);
        if rest.len() < size + bl {
            return Err(bad("listpack entry past its end"));
        }
        let mut want = Vec::with_capacity(5);
        put_backlen(&mut want, size);
        if rest[size..size + bl] != want[..] {
            return Err(bad("listpack entry with a wrong back-length"));
        }
        f(val)?;
        count += 1;
        pos += size + bl;
    }
    if claimed != usize::from(COUNT_UNKNOWN) && claimed != count {
        return Err(bad("listpack count differs from its entries"));
    }
    Ok(count)
}

/// The elements of `lp`, checked as [`decode`] does.
pub fn collect(lp: &[u8]) -> Result<Vec<LpVal<'_>>, RdbError> {
    let mut v = Vec::new();
    decode(lp, |x| {
        v.push(x);
        Ok(())
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes_equal_redis() {
        // DUMP of `HSET h a 1 b hello` in Redis 8.4, its listpack.
        let mut b = LpBuilder::new();
        for e in [&b"a"[..], b"1", b"b", b"hello"] {
            b.push(e);
        }
        assert_eq!(b.finish(), b"\x16\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x85hello\x06\xff");
        // RPUSH l a 1 -5 100000
        let mut b = LpBuilder::new();
        for e in [&b"a"[..], b"1", b"-5", b"100000"] {
            b.push(e);
        }
        let lp = b.finish();
        assert_eq!(lp, b"\x14\x00\x00\x00\x04\x00\x81a\x02\x01\x01\xdf\xfb\x02\xf2\xa0\x86\x01\x04\xff");
        assert_eq!(collect(&lp).unwrap(), [LpVal::Bytes(b"a"), LpVal::Int(1), LpVal::Int(-5), LpVal::Int(100000)]);
    }

    #[test]
    fn every_integer_width_reads_back() {
        let vals = [0, 127, 128, -1, -4096, 4095, 4096, -32768, 32767, -(1 << 23), (1 << 23) - 1, 1 << 23, i64::from(i32::MIN), i64::from(i32::MAX), i64::MIN, i64::MAX];
        let mut b = LpBuilder::new();
        for v in vals {
            b.push_int(v);
        }
        assert_eq!(collect(&b.finish()).unwrap(), vals.map(LpVal::Int));
    }

    #[test]
    fn walks_both_ways_and_replaces_in_place() {
        let mut b = LpBuilder::new();
        let big = vec![b'x'; 300];
        for e in [&b"a"[..], b"7", &big, b"-4000", b""] {
            b.push(e);
        }
        let mut lp = b.finish();
        let mut fwd = Vec::new();
        let mut at = first(&lp);
        while let Some(p) = at {
            fwd.push(p);
            at = next(&lp, p);
        }
        let mut back = Vec::new();
        let mut at = last(&lp);
        while let Some(p) = at {
            back.push(p);
            at = prev(&lp, p);
        }
        back.reverse();
        assert_eq!((fwd.len(), &fwd), (5, &back));
        assert_eq!(element(&lp, fwd[2]).0, LpVal::Bytes(&big));
        assert_eq!(int_at(&lp, fwd[3]).0, -4000);
        // 7 (one byte) becomes 128 (two), then 7 again: the rest moves and
        // the total follows.
        assert_eq!(replace_int(&mut lp, fwd[1], 128), 1);
        assert_eq!(collect(&lp).unwrap()[1], LpVal::Int(128));
        assert_eq!(replace_int(&mut lp, fwd[1], 7), -1);
        assert_eq!(replace_int(&mut lp, fwd[1], 9), 0);
        let vals = collect(&lp).unwrap();
        assert_eq!((vals[1], vals[2], vals.len()), (LpVal::Int(9), LpVal::Bytes(&big), 5));
        // Resumed, it appends after what it held and keeps counting.
        let mut r = LpBuilder::resume(lp);
        r.push(b"z");
        let lp = r.finish();
        assert_eq!((collect(&lp).unwrap().len(), collect(&lp).unwrap()[5]), (6, LpVal::Bytes(b"z")));
        assert_eq!((first(&LpBuilder::new().finish()), last(&LpBuilder::new().finish())), (None, None));
    }

    #[test]
    fn resume_keeps_an_unknown_count_unknown() {
        let mut b = LpBuilder::new();
        for _ in 0..70_000 {
            b.push_int(1);
        }
        let lp = b.finish();
        assert_eq!(le(&lp[4..6]), u64::from(COUNT_UNKNOWN));
        let mut r = LpBuilder::resume(lp);
        r.push_int(2);
        let lp = r.finish();
        assert_eq!((le(&lp[4..6]), decode(&lp, |_| Ok(())).unwrap()), (u64::from(COUNT_UNKNOWN), 70_001));
    }

    fn elem() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string().into_bytes()),
            (-5000i64..5000).prop_map(|n| n.to_string().into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..70),
            proptest::collection::vec(any::<u8>(), 4000..4200),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
        #[test]
        fn round_trip(items in proptest::collection::vec(elem(), 0..40)) {
            let mut b = LpBuilder::new();
            for i in &items {
                b.push(i);
            }
            let lp = b.finish();
            let back: Vec<Vec<u8>> = collect(&lp).unwrap().into_iter().map(LpVal::to_vec).collect();
            prop_assert_eq!(back, items);
        }

        #[test]
        fn corrupt_never_panics(items in proptest::collection::vec(elem(), 1..10), at in any::<usize>(), x in 1u8.., cut in any::<usize>()) {
            let mut b = LpBuilder::new();
            for i in &items {
                b.push(i);
            }
            let mut lp = b.finish();
            let n = lp.len();
            lp[at % n] ^= x;
            let _ = collect(&lp);
            lp.truncate(cut % n);
            let _ = collect(&lp);
        }
    }
}
