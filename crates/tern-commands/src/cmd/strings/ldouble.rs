//! The x87 80-bit "long double" that Redis's INCRBYFLOAT (and HINCRBYFLOAT)
//! compute in, emulated in software so replies match byte for byte.
//!
//! Redis parses both operands with `strtold`, adds them in long double and
//! prints the sum with `"%.17Lf"` minus trailing zeros. An `f64` gets the
//! visible digits wrong (`0.1 + 0.2` is `0.3` in Redis, `0.30000000000000004`
//! in `f64`) and overflows where Redis does not (`1e308 + 1e308`). So this
//! module implements exactly the three steps Redis uses, each correctly
//! rounded to nearest-even on a 64-bit significand, as glibc does:
//!
//! ```text
//!  value = m * 2^e    m: u64 (explicit integer bit), e: lsb exponent
//!  normal:    2^63 <= m < 2^64,  EMIN <= e <= EMAX
//!  subnormal: m < 2^63,          e == EMIN
//! ```
//!
//! Exact intermediates use a small big integer; the inputs are bounded by
//! Redis's 5 KiB float text limit, so the worst case is a few thousand limbs.
//!
//! Non-goals: other rounding modes, NaN payloads, anything but the `+` that
//! INCRBYFLOAT needs.

use std::cmp::Ordering;

/// Exponent of the last bit of the smallest subnormal (2^-16445).
const EMIN: i64 = -16445;
/// Largest lsb exponent of a finite value: (2^64 - 1) * 2^16320 < 2^16384.
const EMAX: i64 = 16320;
/// Longest text `string2ld` accepts (its buffer is `MAX_LONG_DOUBLE_CHARS`).
const MAX_TEXT: usize = 5 * 1024;
/// Fraction digits of `"%.17Lf"`.
const FRAC_DIGITS: u32 = 17;

/// A long double: finite (`m * 2^e`) or infinite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongDouble {
    neg: bool,
    inf: bool,
    m: u64,
    e: i64,
}

impl LongDouble {
    const fn zero(neg: bool) -> Self {
        LongDouble { neg, inf: false, m: 0, e: 0 }
    }

    /// The exact value of an integer (64 significand bits hold any `i64`).
    pub fn from_i64(n: i64) -> Self {
        round(n < 0, &Big::from_u128(u128::from(n.unsigned_abs())), 0, false)
    }

    pub fn is_finite(&self) -> bool {
        !self.inf
    }

    /// The nearest f64 (infinite when out of its range).
    pub fn to_f64(&self) -> f64 {
        let v = if self.inf { f64::INFINITY } else { (self.m as f64) * 2f64.powi(self.e.clamp(-4000, 4000) as i32) };
        if self.neg {
            -v
        } else {
            v
        }
    }

    /// Parses text as Redis's `string2ld` does with `strtold`: decimal or
    /// hexadecimal (`0x1.8p3`) floats, optional sign, `inf`/`infinity` in any
    /// case; no surrounding space, no NaN, no overflow to infinity and no
    /// non-zero text that underflows to zero.
    pub fn parse(s: &[u8]) -> Option<Self> {
        if s.is_empty() || s.len() >= MAX_TEXT || is_c_space(s[0]) {
            return None;
        }
        let (neg, body) = match s[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(LongDouble { neg, inf: true, m: 0, e: 0 });
        }
        let v = if body.len() > 2 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
            parse_hex(neg, &body[2..])?
        } else {
            parse_decimal(neg, body)?
        };
        // strtold reports ERANGE for both; string2ld refuses them.
        if v.inf {
            return None;
        }
        Some(v)
    }

    /// The sum, rounded to nearest-even, or None if it is infinite or NaN
    /// (Redis: "increment would produce NaN or Infinity").
    pub fn checked_add(self, o: LongDouble) -> Option<LongDouble> {
        if self.inf || o.inf {
            return None;
        }
        if self.m == 0 && o.m == 0 {
            return Some(LongDouble::zero(self.neg && o.neg));
        }
        let base = self.e.min(o.e);
        let a = Big::from_u128(u128::from(self.m)).shl((self.e - base) as u64);
        let b = Big::from_u128(u128::from(o.m)).shl((o.e - base) as u64);
        let (neg, n) = if self.neg == o.neg {
            (self.neg, a.add(&b))
        } else {
            match a.cmp(&b) {
                Ordering::Greater => (self.neg, a.sub(&b)),
                Ordering::Less => (o.neg, b.sub(&a)),
                Ordering::Equal => return Some(LongDouble::zero(false)),
            }
        };
        let r = round(neg, &n, base, false);
        r.is_finite().then_some(r)
    }

    /// Appends the value as Redis's `ld2string(.., LD_STR_HUMAN)` writes it:
    /// `"%.17Lf"`, then trailing fraction zeros and a bare `.` removed, and
    /// `-0` written as `0`. No exponent, ever.
    pub fn write_human(&self, out: &mut Vec<u8>) {
        let start = out.len();
        if self.inf {
            out.extend_from_slice(if self.neg { b"-inf" } else { b"inf" });
            return;
        }
        if self.neg {
            out.push(b'-');
        }
        if self.e >= 0 {
            Big::from_u128(u128::from(self.m)).shl(self.e as u64).write_decimal(out);
        } else {
            let scaled = u128::from(self.m) * 10u128.pow(FRAC_DIGITS);
            let s = (-self.e) as u32;
            // Below 2^-128 of scale the value times 10^17 is under 0.5.
            let q = if s >= 128 {
                0
            } else {
                let q = scaled >> s;
                let rem = scaled & ((1u128 << s) - 1);
                let half = 1u128 << (s - 1);
                if rem > half || (rem == half && q & 1 == 1) {
                    q + 1
                } else {
                    q
                }
            };
            let unit = 10u128.pow(FRAC_DIGITS);
            let (int, frac) = (q / unit, q % unit);
            let mut ibuf = itoa::Buffer::new();
            out.extend_from_slice(ibuf.format(int).as_bytes());
            if frac != 0 {
                let mut digits = [b'0'; FRAC_DIGITS as usize];
                let mut f = frac;
                for d in digits.iter_mut().rev() {
                    *d = b'0' + (f % 10) as u8;
                    f /= 10;
                }
                let keep = digits.iter().rposition(|&d| d != b'0').map_or(0, |p| p + 1);
                out.push(b'.');
                out.extend_from_slice(&digits[..keep]);
            }
        }
        if &out[start..] == b"-0" {
            out.truncate(start);
            out.push(b'0');
        }
    }
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Parses a decimal exponent's digits, saturating far beyond any exponent
/// that could still give a finite, non-zero long double.
fn parse_exp(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        v = (v * 10 + i64::from(c - b'0')).min(1 << 40);
    }
    Some(if neg { -v } else { v })
}

/// A number's text split as (integer digits, fraction digits, exponent).
type NumberParts<'a> = (&'a [u8], &'a [u8], Option<&'a [u8]>);

/// Splits `int[.frac][<exp_char>exp]` into its parts; None if malformed or
/// without a single mantissa digit.
fn split_number(s: &[u8], is_digit: fn(&u8) -> bool, exp_char: u8) -> Option<NumberParts<'_>> {
    let int_end = s.iter().position(|c| !is_digit(c)).unwrap_or(s.len());
    let (int, mut rest) = s.split_at(int_end);
    let mut frac: &[u8] = &[];
    if rest.first() == Some(&b'.') {
        let r = &rest[1..];
        let end = r.iter().position(|c| !is_digit(c)).unwrap_or(r.len());
        frac = &r[..end];
        rest = &r[end..];
    }
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let exp = match rest.first() {
        None => None,
        Some(&c) if c | 0x20 == exp_char => Some(&rest[1..]),
        Some(_) => return None,
    };
    Some((int, frac, exp))
}

fn parse_decimal(neg: bool, s: &[u8]) -> Option<LongDouble> {
    let (int, frac, exp) = split_number(s, u8::is_ascii_digit, b'e')?;
    let mut e10 = match exp {
        Some(x) => parse_exp(x)?,
        None => 0,
    };
    e10 -= frac.len() as i64;
    // The significant digits, without leading or trailing zeros.
    let mut digits: Vec<u8> = int.iter().chain(frac).copied().skip_while(|&c| c == b'0').collect();
    while digits.last() == Some(&b'0') {
        digits.pop();
        e10 += 1;
    }
    if digits.is_empty() {
        return Some(LongDouble::zero(neg));
    }
    let nd = digits.len() as i64;
    // value is in [10^(e10+nd-1), 10^(e10+nd)): past the largest long double
    // (1.19e4932) it overflows, under half the smallest subnormal (3.6e-4951)
    // it rounds to zero.
    if e10 + nd - 1 > 4932 {
        return None;
    }
    if e10 + nd < -4951 {
        return None;
    }
    let mut d = Big::default();
    for chunk in digits.chunks(9) {
        let mut v = 0u32;
        for &c in chunk {
            v = v * 10 + u32::from(c - b'0');
        }
        d.mul_add_small(10u32.pow(chunk.len() as u32), v);
    }
    let v = if e10 >= 0 {
        round(neg, &d.mul(&Big::pow10(e10 as u32)), 0, false)
    } else {
        // Divide with enough quotient bits (67+) for a rounding bit below the
        // 64 kept ones; the remainder is the sticky bit.
        let den = Big::pow10((-e10) as u32);
        let diff = d.bits() as i64 - den.bits() as i64;
        let (num, den, e2) = if diff < 67 {
            let k = 67 - diff;
            (d.shl(k as u64), den, -k)
        } else {
            let j = diff - 67;
            (d, den.shl(j as u64), j)
        };
        let (q, rem) = num.div_rem_small_quotient(&den);
        round(neg, &Big::from_u128(q), e2, rem)
    };
    if v.m == 0 {
        return None;
    }
    Some(v)
}

fn parse_hex(neg: bool, s: &[u8]) -> Option<LongDouble> {
    let (int, frac, exp) = split_number(s, u8::is_ascii_hexdigit, b'p')?;
    let mut e2 = match exp {
        Some(x) => parse_exp(x)?,
        None => 0,
    };
    e2 -= 4 * frac.len() as i64;
    let mut h = Big::default();
    for &c in int.iter().chain(frac).skip_while(|&&c| c == b'0') {
        let v = (c as char).to_digit(16).unwrap_or(0);
        h.mul_add_small(16, v);
    }
    if h.is_zero() {
        return Some(LongDouble::zero(neg));
    }
    let top = h.bits() as i64 + e2;
    if !(EMIN..=16384).contains(&top) {
        return None;
    }
    let v = round(neg, &h, e2, false);
    if v.m == 0 {
        return None;
    }
    Some(v)
}

/// Rounds `(n + s) * 2^e` to a long double, nearest-even, where `s` (the
/// `sticky` flag) stands for some amount strictly between 0 and 1. Callers
/// that pass `sticky` give `n` at least 66 bits, so it lies below the
/// rounding bit.
fn round(neg: bool, n: &Big, e: i64, sticky: bool) -> LongDouble {
    let bl = n.bits() as i64;
    if bl == 0 {
        return LongDouble::zero(neg);
    }
    let mut t = (e + bl - 64).max(EMIN);
    let shift = t - e;
    let m = if shift <= 0 {
        // bl <= 64 + shift: n fits in the significand exactly.
        (n.low_u128() as u64) << (-shift)
    } else {
        let shift = shift as u64;
        let q = n.shr_low_u128(shift) as u64;
        let half = n.bit(shift - 1);
        let rest = sticky || n.any_below(shift - 1);
        if half && (rest || q & 1 == 1) {
            match q.checked_add(1) {
                Some(q) => q,
                None => {
                    t += 1;
                    1 << 63
                }
            }
        } else {
            q
        }
    };
    if m == 0 {
        return LongDouble::zero(neg);
    }
    if t > EMAX {
        return LongDouble { neg, inf: true, m: 0, e: 0 };
    }
    LongDouble { neg, inf: false, m, e: t }
}

/// An unsigned big integer, little-endian 32-bit limbs, no high zero limbs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u128(mut v: u128) -> Big {
        let mut b = Big(Vec::with_capacity(4));
        while v != 0 {
            b.0.push(v as u32);
            v >>= 32;
        }
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => 32 * (self.0.len() as u64 - 1) + u64::from(32 - top.leading_zeros()),
        }
    }

    fn bit(&self, i: u64) -> bool {
        self.0.get((i / 32) as usize).is_some_and(|&l| l >> (i % 32) & 1 == 1)
    }

    /// Is any bit below bit `i` set?
    fn any_below(&self, i: u64) -> bool {
        let (full, part) = ((i / 32) as usize, i % 32);
        self.0.iter().take(full).any(|&l| l != 0)
            || (part != 0 && self.0.get(full).is_some_and(|&l| l & ((1u32 << part) - 1) != 0))
    }

    fn low_u128(&self) -> u128 {
        self.0.iter().take(4).rev().fold(0u128, |acc, &l| (acc << 32) | u128::from(l))
    }

    /// Bits `i..i+128` as a number.
    fn shr_low_u128(&self, i: u64) -> u128 {
        let (limb, off) = ((i / 32) as usize, (i % 32) as u32);
        let low = self.0.iter().skip(limb).take(4).rev().fold(0u128, |acc, &l| (acc << 32) | u128::from(l));
        if off == 0 {
            return low;
        }
        let top = u128::from(self.0.get(limb + 4).copied().unwrap_or(0));
        (low >> off) | (top << (128 - off))
    }

    fn mul_add_small(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for l in self.0.iter_mut() {
            let v = u64::from(*l) * u64::from(m) + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn pow10(n: u32) -> Big {
        let mut b = Big::from_u128(1);
        let mut left = n;
        while left > 0 {
            let k = left.min(9);
            b.mul_add_small(10u32.pow(k), 0);
            left -= k;
        }
        b
    }

    fn mul(&self, o: &Big) -> Big {
        let mut r = vec![0u32; self.0.len() + o.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in o.0.iter().enumerate() {
                let v = u64::from(a) * u64::from(b) + u64::from(r[i + j]) + carry;
                r[i + j] = v as u32;
                carry = v >> 32;
            }
            r[i + o.0.len()] = carry as u32;
        }
        let mut b = Big(r);
        b.trim();
        b
    }

    fn shl(&self, n: u64) -> Big {
        if self.is_zero() {
            return Big::default();
        }
        let (limbs, off) = ((n / 32) as usize, (n % 32) as u32);
        let mut r = vec![0u32; limbs];
        r.reserve(self.0.len() + 1);
        if off == 0 {
            r.extend_from_slice(&self.0);
        } else {
            let mut carry = 0u32;
            for &l in &self.0 {
                r.push((l << off) | carry);
                carry = l >> (32 - off);
            }
            r.push(carry);
        }
        let mut b = Big(r);
        b.trim();
        b
    }

    fn cmp(&self, o: &Big) -> Ordering {
        self.0.len().cmp(&o.0.len()).then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    fn add(&self, o: &Big) -> Big {
        let (long, short) = if self.0.len() >= o.0.len() { (self, o) } else { (o, self) };
        let mut r = Vec::with_capacity(long.0.len() + 1);
        let mut carry = 0u64;
        for (i, &a) in long.0.iter().enumerate() {
            let v = u64::from(a) + u64::from(short.0.get(i).copied().unwrap_or(0)) + carry;
            r.push(v as u32);
            carry = v >> 32;
        }
        if carry != 0 {
            r.push(carry as u32);
        }
        Big(r)
    }

    /// `self - o`, for `self >= o`.
    fn sub(&self, o: &Big) -> Big {
        let mut r = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for (i, &a) in self.0.iter().enumerate() {
            let mut v = i64::from(a) - i64::from(o.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = 0;
            if v < 0 {
                v += 1 << 32;
                borrow = 1;
            }
            r.push(v as u32);
        }
        let mut b = Big(r);
        b.trim();
        b
    }

    /// `(self / d, self % d != 0)` for a quotient known to fit in 127 bits.
    fn div_rem_small_quotient(&self, d: &Big) -> (u128, bool) {
        let mut rem = self.clone();
        let mut q = 0u128;
        let span = self.bits().saturating_sub(d.bits());
        for i in (0..=span.min(126)).rev() {
            let t = d.shl(i);
            if rem.cmp(&t) != Ordering::Less {
                rem = rem.sub(&t);
                q |= 1u128 << i;
            }
        }
        (q, !rem.is_zero())
    }

    /// Divides in place by `d`, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for l in self.0.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*l);
            *l = (v / u64::from(d)) as u32;
            rem = v % u64::from(d);
        }
        self.trim();
        rem as u32
    }

    fn write_decimal(&self, out: &mut Vec<u8>) {
        if self.is_zero() {
            out.push(b'0');
            return;
        }
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_small(1_000_000_000));
        }
        let mut buf = itoa::Buffer::new();
        let mut iter = chunks.iter().rev();
        if let Some(first) = iter.next() {
            out.extend_from_slice(buf.format(*first).as_bytes());
        }
        for c in iter {
            let s = buf.format(*c);
            out.resize(out.len() + 9 - s.len(), b'0');
            out.extend_from_slice(s.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(a: &str, b: &str) -> String {
        let (Some(x), Some(y)) = (LongDouble::parse(a.as_bytes()), LongDouble::parse(b.as_bytes())) else {
            return "invalid".into();
        };
        match x.checked_add(y) {
            Some(v) => {
                let mut out = Vec::new();
                v.write_human(&mut out);
                String::from_utf8(out).unwrap_or_default()
            }
            None => "nonfinite".into(),
        }
    }

    #[test]
    fn parse_rules() {
        for bad in [
            "",
            " 1",
            "1 ",
            "nan",
            "NaN",
            "-nan",
            "abc",
            "1e",
            "1e+",
            ".",
            "-",
            "0x",
            "0xg",
            "1.2.3",
            "1e5000",
            "1e-5000",
            "0x1p99999",
            "1\0",
        ] {
            assert!(LongDouble::parse(bad.as_bytes()).is_none(), "{bad:?}");
        }
        for good in
            ["0", "+1", "-1", ".5", "5.", "1e3", "1E-3", "0x10", "0X1.8p1", "inf", "-Infinity", "0e-999999", "1e-4940"]
        {
            assert!(LongDouble::parse(good.as_bytes()).is_some(), "{good:?}");
        }
    }

    const TWO_E308: &str = "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096";

    /// Sums and texts produced by glibc's strtold, long double `+` and
    /// `"%.17Lf"` with Redis's trimming (40,000 random pairs matched while
    /// developing; these are the telling ones).
    #[test]
    fn matches_glibc_long_double() {
        let cases: &[(&str, &str, &str)] = &[
            ("10.5", "0.1", "10.6"),
            ("0.1", "0.2", "0.3"),
            ("5.0e3", "0", "5000"),
            ("1e308", "1e308", TWO_E308),
            ("0.3", "-0.1", "0.2"),
            ("-0", "0", "0"),
            ("1", "-1.0000000000000000001", "0"),
            ("0x10", "0.3", "16.3"),
            ("0x1.8p1", "+1", "4"),
            ("1e-18", "0", "0"),
            ("0.000000000000000005", "0", "0"),
            ("0.0000000000000000051", "0", "0.00000000000000001"),
            ("0.0000000000000000149", "0.0000000000000000001", "0.00000000000000002"),
            ("7.62939453125e-06", "0", "0.00000762939453125"),
            ("9223372036854775807", "1", "9223372036854775808"),
            ("-9223372036854775808", "-0.5", "-9223372036854775808"),
            ("123456789012345678901234567890", "0.000001", "123456789012345678899921813504"),
            ("1.18e4932", "1e4931", "nonfinite"),
            ("1e-4950", "1e-4950", "0"),
            ("3.14159265358979323846264338327950288", "2.71828182845904523536028747135266249", "5.85987448204883847"),
            ("1e20", "-1e20", "0"),
            ("0.1", "100000000000000000000", "100000000000000000000"),
            ("inf", "1", "nonfinite"),
            ("1e4932", "1e4932", "nonfinite"),
            ("1", "nan", "invalid"),
            ("1", "1 ", "invalid"),
            ("0x", "1", "invalid"),
        ];
        for &(a, b, want) in cases {
            assert_eq!(sum(a, b), want, "{a} + {b}");
        }
    }

    #[test]
    fn integers_are_exact() {
        for n in [0, 1, -1, i64::MAX, i64::MIN, 4999] {
            let mut out = Vec::new();
            LongDouble::from_i64(n).write_human(&mut out);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }
}
