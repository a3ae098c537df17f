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
}
