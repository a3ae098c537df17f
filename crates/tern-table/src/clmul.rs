//! CRC16-XMODEM (polynomial 0x1021, initial value 0, no reflection) by
//! carry-less multiplication, for the cluster slot of every key located.
//!
//! Table-driven, a CRC costs a load and a few instructions per byte; here a
//! key costs two multiplications per 8 bytes and two more at the end. The
//! key is read as big-endian 64-bit words, the first one holding the
//! `len % 8` leading bytes (a whole word when that is 0) with zeros above
//! them, which change nothing since the CRC starts from 0. With `v` a
//! 64-bit value congruent to the bytes read so far modulo the polynomial
//! `G`, each further word `c` folds in as
//!
//! ```text
//!   v·x⁶⁴ + c  ≡  v·K + c,   K = x⁶⁴ mod G   (16 bits; v·K is 80 bits)
//!   v·K = A·x⁶⁴ + B        ≡  A·K + B        (A·K is 31 bits)
//! ```
//!
//! and the CRC, `v·x¹⁶ mod G`, is a Barrett reduction: the quotient is
//! `v ⊕ ⌊v·M / x⁶⁴⌋` with `M = ⌊x⁸⁰ / G⌋ − x⁶⁴`, the remainder the low 16
//! bits of `quotient·0x1021`.
//!
//! Scanning for `{` (a cluster hash tag) rides along on the same words: a
//! byte equal to `{` is a zero byte of the word xor `{{{{{{{{`, and the
//! zero padding of the first word is never one.
//!
//! Only on x86-64 CPUs with PCLMULQDQ (every one since 2010); elsewhere
//! [`crc16_scan`] returns `None` and the caller uses its tables.

/// `G` without its x¹⁶ term.
const POLY: u64 = 0x1021;

/// `x^n mod G`.
const fn x_pow_mod(n: u32) -> u64 {
    let mut r: u64 = 1;
    let mut i = 0;
    while i < n {
        r <<= 1;
        if r & 0x1_0000 != 0 {
            r ^= 0x1_0000 | POLY;
        }
        i += 1;
    }
    r
}

/// `⌊x⁸⁰ / G⌋` without its x⁶⁴ term.
const fn barrett_mu() -> u64 {
    let g: u128 = 0x1_0000 | POLY as u128;
    let mut r: u128 = 1 << 80;
    let mut q: u128 = 0;
    let mut i: i32 = 64;
    while i >= 0 {
        if r & (1u128 << (i + 16)) != 0 {
            r ^= g << i;
            q |= 1u128 << i;
        }
        i -= 1;
    }
    q as u64
}

const K64: u64 = x_pow_mod(64);
const MU: u64 = barrett_mu();

/// The CRC16-XMODEM of `bytes` and whether they hold a `{`, or `None`
/// where carry-less multiplication is not available.
#[inline]
pub fn crc16_scan(bytes: &[u8]) -> Option<(u16, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            // SAFETY: the CPU has PCLMULQDQ (just checked), the only
            // feature `x86::crc16_scan` is compiled for beyond the baseline.
            return Some(unsafe { x86::crc16_scan(bytes) });
        }
    }
    let _ = bytes;
    None
}

/// `bytes[..n]` (n < 8) as a big-endian number.
#[inline(always)]
fn short_be(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let hi = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let lo = u32::from_be_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        // The last 4 bytes overlap the first 4 by 8 - n: keep only the
        // n - 4 bytes of `lo` that follow `hi`.
        (hi << (8 * (n - 4))) | (lo & ((1u64 << (8 * (n - 4))) - 1))
    } else {
        b.iter().fold(0u64, |v, &x| (v << 8) | x as u64)
    }
}

/// Whether the word has a byte equal to `{` (exact: no false positives).
#[inline(always)]
fn has_brace(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = w ^ (b'{' as u64 * ONES);
    x.wrapping_sub(ONES) & !x & (ONES << 7) != 0
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_cvtsi128_si32, _mm_cvtsi64_si128, _mm_srli_si128, _mm_xor_si128,
    };

    use super::{has_brace, short_be, K64, MU, POLY};

    // The running value stays in a vector register: `clmul` takes either
    // 64-bit half of its operands (the immediate picks), so the fold reads
    // `A` (the high half of `v·K`) where it lies instead of moving it out,
    // and each word costs one move in and two multiplications. Only the low
    // half of `v` is meaningful; the multiplications never read the high.
    #[target_feature(enable = "sse2,pclmulqdq")]
    pub(super) fn crc16_scan(bytes: &[u8]) -> (u16, bool) {
        let n = bytes.len();
        if n == 0 {
            return (0, false);
        }
        let head = n - 8 * ((n - 1) / 8);
        let first = if n >= 8 {
            // `head` is 1..=8: the shift is at most 56.
            u64::from_be_bytes(bytes[..8].try_into().unwrap()) >> (8 * (8 - head))
        } else {
            short_be(bytes)
        };
        let mut brace = has_brace(first);
        let k = _mm_cvtsi64_si128(K64 as i64);
        let mut v = _mm_cvtsi64_si128(first as i64);
        let mut rest = &bytes[head..];
        while let Some((w, tail)) = rest.split_first_chunk::<8>() {
            let c = u64::from_be_bytes(*w);
            brace |= has_brace(c);
            let p = _mm_clmulepi64_si128::<0x00>(v, k); // v·K = A·x⁶⁴ + B
            let a = _mm_clmulepi64_si128::<0x01>(p, k); // A·K
            v = _mm_xor_si128(_mm_xor_si128(p, a), _mm_cvtsi64_si128(c as i64));
            rest = tail;
        }
        let m = _mm_cvtsi64_si128(MU as i64);
        let q = _mm_xor_si128(v, _mm_srli_si128::<8>(_mm_clmulepi64_si128::<0x00>(v, m)));
        let r = _mm_clmulepi64_si128::<0x00>(q, _mm_cvtsi64_si128(POLY as i64));
        (_mm_cvtsi128_si32(r) as u16, brace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        assert_eq!(x_pow_mod(16), POLY);
        // M·G = x⁸⁰ + (a remainder of degree < 16): check the product's
        // top bits by multiplying back.
        let m = (1u128 << 64) | MU as u128;
        let mut prod = 0u128;
        for i in 0..=16 {
            if (0x1_0000 | POLY) >> i & 1 != 0 {
                prod ^= m << i;
            }
        }
        assert_eq!(prod >> 16, 1 << 64);
    }

    /// Known CRCs, one per path (empty, under 4 bytes, 4 to 7, one word,
    /// words after a partial head) and the scan. The CRC against a bitwise
    /// one at every length and on random bytes, and the scan on every
    /// brace position, are tern-store's `slot` tests, which run this code
    /// on any machine that has PCLMULQDQ.
    #[test]
    fn known_values() {
        let Some(empty) = crc16_scan(b"") else {
            return; // no PCLMULQDQ here: nothing to check
        };
        assert_eq!(empty, (0, false));
        assert_eq!(crc16_scan(b"123456789"), Some((0x31c3, false)));
        assert_eq!(crc16_scan(b"foo"), Some((0xaf96, false)));
        assert_eq!(crc16_scan(b"hello"), Some((0xc362, false)));
        assert_eq!(crc16_scan(b"12345678"), Some((0x9015, false)));
        assert_eq!(crc16_scan(b"{user1000}.following"), Some((0x6fba, true)));
        assert_eq!(crc16_scan(b"abcdefgh{"), Some((0x347d, true)));
    }
}
