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

use super::RdbError;

const HEADER: usize = 6;
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

impl LpBuilder {
    pub fn new() -> Self {
        LpBuilder { buf: vec![0; HEADER], count: 0 }
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
        let start = self.buf.len();
        let n = b.len();
        if n < 64 {
            self.buf.push(0x80 | n as u8);
        } else if n < 4096 {
            self.buf.extend_from_slice(&[0xe0 | (n >> 8) as u8, n as u8]);
        } else {
            self.buf.push(0xf0);
            self.buf.extend_from_slice(&(n as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(b);
        let l = self.buf.len() - start;
        put_backlen(&mut self.buf, l);
        self.count += 1;
    }

    pub fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        if (0..=127).contains(&v) {
            self.buf.push(v as u8);
        } else if (-4096..=4095).contains(&v) {
            let u = (v as u64) & 0x1fff;
            self.buf.extend_from_slice(&[0xc0 | (u >> 8) as u8, u as u8]);
        } else if i16::try_from(v).is_ok() {
            self.buf.push(0xf1);
            self.buf.extend_from_slice(&(v as i16).to_le_bytes());
        } else if (-(1 << 23)..(1 << 23)).contains(&v) {
            self.buf.push(0xf2);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        } else if i32::try_from(v).is_ok() {
            self.buf.push(0xf3);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            self.buf.push(0xf4);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        let l = self.buf.len() - start;
        put_backlen(&mut self.buf, l);
        self.count += 1;
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The listpack's bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        let count = u16::try_from(self.count).unwrap_or(COUNT_UNKNOWN);
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

pub(super) fn bad(what: &'static str) -> RdbError {
    RdbError::Corrupt(what)
}

pub(super) fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x))
}

/// Sign-extends the low `bits` bits of `u`.
fn sext(u: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((u << shift) as i64) >> shift
}

/// The signed integer of 1 to 8 little-endian bytes: the fixed-width
/// integer entries of listpacks and ziplists alike.
pub(super) fn int_le(b: &[u8]) -> i64 {
    sext(le(b), 8 * b.len() as u32)
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
        let b = lp[pos];
        let rest = &lp[pos..end];
        let need = |n: usize| if rest.len() >= n { Ok(()) } else { Err(bad("listpack entry past its end")) };
        let (val, size) = if b & 0x80 == 0 {
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
        };
        let bl = backlen_size(size);
        need(size + bl)?;
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
