//! Strict number parsing with Redis's rules (`string2ll`, `string2ld`).

/// Parses a signed 64-bit integer the way Redis's `string2ll` does: optional
/// `-`, no `+`, no leading zeros, no spaces, at most 20 bytes, no overflow.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else if v > i64::MAX as u64 {
        None
    } else {
        Some(v as i64)
    }
}

/// Parses an unsigned 64-bit integer with the same strictness as [`parse_i64`].
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s == b"0" {
        return Some(0);
    }
    if s.is_empty() || s.len() > 20 || !(b'1'..=b'9').contains(&s[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

/// Parses a float the way Redis's `string2ld`/`strtold` path accepts it:
/// no leading or trailing space, not empty, not NaN; "inf", "+inf", "-inf"
/// (any case) are accepted.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s.len() > 5120 {
        return None;
    }
    if s[0].is_ascii_whitespace() || s[s.len() - 1].is_ascii_whitespace() {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    let lower = text.to_ascii_lowercase();
    let v = match lower.as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => {
            // Rust accepts "nan" and "infinity" spelled out; strtold accepts hex
            // floats which we do not. Reject anything that is not plain decimal.
            if !lower
                .bytes()
                .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'-' | b'+'))
            {
                return None;
            }
            lower.parse::<f64>().ok()?
        }
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// What C's `strtod` makes of the start of `s`: the value, how many
/// bytes it read (0: no number), and whether it set `ERANGE` (a finite
/// number too large, or a non-zero one that rounds to zero). Accepts what
/// glibc does: leading white space, a sign, decimal and hexadecimal
/// (`0x1.8p3`) numbers, `inf`, `infinity`, `nan` and `nan(chars)`.
pub fn strtod(s: &[u8]) -> (f64, usize, bool) {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let neg = i < s.len() && s[i] == b'-';
    if i < s.len() && matches!(s[i], b'+' | b'-') {
        i += 1;
    }
    let sign = if neg { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    if starts(b"infinity") {
        return (sign * f64::INFINITY, i + 8, false);
    }
    if starts(b"inf") {
        return (sign * f64::INFINITY, i + 3, false);
    }
    if starts(b"nan") {
        let mut j = i + 3;
        if j < s.len() && s[j] == b'(' {
            let mut k = j + 1;
            while k < s.len() && (s[k].is_ascii_alphanumeric() || s[k] == b'_') {
                k += 1;
            }
            if k < s.len() && s[k] == b')' {
                j = k + 1;
            }
        }
        return (f64::NAN, j, false);
    }
    if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some((v, n, erange)) = hex_float(&rest[2..]) {
            return (sign * v, i + 2 + n, erange);
        }
        // "0x" with no hex digit: the "0" alone.
        return (sign * 0.0, i + 1, false);
    }
    let start = i;
    let mut j = i;
    let mut digits = 0;
    let mut nonzero = false;
    while j < s.len() && s[j].is_ascii_digit() {
        nonzero |= s[j] != b'0';
        j += 1;
        digits += 1;
    }
    if j < s.len() && s[j] == b'.' {
        j += 1;
        while j < s.len() && s[j].is_ascii_digit() {
            nonzero |= s[j] != b'0';
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return (0.0, 0, false);
    }
    if j < s.len() && (s[j] | 0x20) == b'e' {
        let mut k = j + 1;
        if k < s.len() && matches!(s[k], b'+' | b'-') {
            k += 1;
        }
        if k < s.len() && s[k].is_ascii_digit() {
            while k < s.len() && s[k].is_ascii_digit() {
                k += 1;
            }
            j = k;
        }
    }
    // Only ASCII digits, '.', 'e' and signs were taken: valid UTF-8, and a
    // form Rust's parser reads (it rounds correctly, as glibc does).
    let text = std::str::from_utf8(&s[start..j]).unwrap_or("0");
    let v: f64 = text.parse().unwrap_or(0.0);
    let erange = v.is_infinite() || (v == 0.0 && nonzero);
    (sign * v, j, erange)
}

/// A hexadecimal float's digits after `0x`: value, bytes read, ERANGE.
fn hex_float(s: &[u8]) -> Option<(f64, usize, bool)> {
    let mut j = 0;
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut digits = 0;
    let mut seen_dot = false;
    while j < s.len() {
        let c = s[j];
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            b'.' if !seen_dot => {
                seen_dot = true;
                j += 1;
                continue;
            }
            _ => break,
        };
        digits += 1;
        // Past 60 bits the rest only scales (their rounding is lost).
        if mant >> 56 == 0 {
            mant = mant << 4 | u64::from(d);
            if seen_dot {
                exp -= 4;
            }
        } else if !seen_dot {
            exp += 4;
        }
        j += 1;
    }
    if digits == 0 {
        return None;
    }
    if j < s.len() && (s[j] | 0x20) == b'p' {
        let mut k = j + 1;
        let eneg = k < s.len() && s[k] == b'-';
        if k < s.len() && matches!(s[k], b'+' | b'-') {
            k += 1;
        }
        if k < s.len() && s[k].is_ascii_digit() {
            let mut e: i64 = 0;
            while k < s.len() && s[k].is_ascii_digit() {
                e = (e * 10 + i64::from(s[k] - b'0')).min(1 << 20);
                k += 1;
            }
            exp += if eneg { -e } else { e };
            j = k;
        }
    }
    let v = (mant as f64) * 2f64.powi(exp.clamp(-2000, 2000) as i32);
    let erange = v.is_infinite() || (v == 0.0 && mant != 0);
    Some((v, j, erange))
}

/// Redis's `string2d` (scores of ZADD, ZINCRBY): the whole argument is one
/// `strtod` number, with no leading space, not NaN, and neither too large
/// nor so small it rounds to zero.
pub fn string2d(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s[0].is_ascii_whitespace() || s[0] == b'\x0b' {
        return None;
    }
    let (v, n, erange) = strtod(s);
    if n != s.len() || v.is_nan() || (erange && (v.is_infinite() || v == 0.0)) {
        return None;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i64_rules() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        for bad in [&b""[..], b"+1", b"01", b"-0", b" 1", b"1 ", b"1a", b"-", b"1.0"] {
            assert_eq!(parse_i64(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn f64_rules() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        for bad in [&b""[..], b"nan", b" 1", b"1 ", b"abc", b"0x10"] {
            assert_eq!(parse_f64(bad), None, "{:?}", bad);
        }
    }

    /// What redis-server 8.4 accepts as a ZADD score (string2d).
    #[test]
    fn string2d_rules() {
        for (s, want) in [
            (&b"0.1"[..], 0.1),
            (b"inf", f64::INFINITY),
            (b"+inf", f64::INFINITY),
            (b"-Infinity", f64::NEG_INFINITY),
            (b"0x10", 16.0),
            (b".5", 0.5),
            (b"5.", 5.0),
            (b"5e-324", 5e-324),
            (b"1e3", 1000.0),
            (b"-0", -0.0),
        ] {
            assert_eq!(string2d(s), Some(want), "{s:?}");
        }
        for bad in [
            &b""[..],
            b"nan",
            b" 1",
            b"1 ",
            b"1e400",
            b"1e-400",
            b"1_0",
            b"infinit",
            b"-",
            b"0x",
            b"1e",
            b"(1",
        ] {
            assert_eq!(string2d(bad), None, "{bad:?}");
        }
        assert_eq!(strtod(b"  1.5x"), (1.5, 5, false));
        assert_eq!(strtod(b""), (0.0, 0, false));
        assert_eq!(strtod(b"0x1.8p1"), (3.0, 7, false));
        assert!(strtod(b"nan(abc)").0.is_nan());
    }
}
