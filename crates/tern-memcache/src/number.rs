//! Number parsing as memcached's `safe_strto*` do it over C's `strto*`:
//! leading whitespace and a sign are accepted, the number must be followed
//! by whitespace or the end of the token, and out-of-range values fail;
//! and the one way numbers are written (decimal, through `itoa`).

/// Appends `n` in decimal, as every request and reply writes numbers.
pub fn append(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// strtoull/strtol's common part: (negative, magnitude saturated flag,
/// magnitude) or None when no digit was found or trailing garbage follows.
fn scan(s: &[u8]) -> Option<(bool, bool, u64)> {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: u64 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(s[i] - b'0')))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    if i < s.len() && !is_space(s[i]) {
        return None;
    }
    Some((neg, overflow, v))
}

/// `safe_strtoull`: a negative number is refused only when its unsigned
/// wrap-around would look negative as a signed number, as in memcached.
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    let (neg, overflow, v) = scan(s)?;
    if overflow {
        return None;
    }
    let v = if neg { v.wrapping_neg() } else { v };
    if (v as i64) < 0 && neg {
        return None;
    }
    Some(v)
}

/// `safe_strtoul` into 32-bit client flags: parsed as a 64-bit unsigned
/// long, then truncated, as memcached 1.6 on 64-bit Linux does.
pub fn parse_flags(s: &[u8]) -> Option<u32> {
    parse_u64(s).map(|v| v as u32)
}

/// `safe_strtol` into an int32: C's `strtol` into a 64-bit long (which
/// fails only outside the long's range), then stored into the int32 as
/// is, so memcached 1.6.18 reads `4294967297` as 1 and `2147483648` as
/// `i32::MIN`. Callers range-check the result as memcached does (a data
/// length below 0 is a bad command line, an exptime below 0 is expired).
pub fn parse_i32(s: &[u8]) -> Option<i32> {
    let (neg, overflow, v) = scan(s)?;
    if overflow || (!neg && v > i64::MAX as u64) || (neg && v > 1 << 63) {
        return None;
    }
    let l = if neg {
        (v as i64).wrapping_neg()
    } else {
        v as i64
    };
    Some(l as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_rules() {
        assert_eq!(parse_i32(b"12"), Some(12));
        assert_eq!(parse_i32(b"+5"), Some(5));
        assert_eq!(parse_i32(b"-1"), Some(-1));
        assert_eq!(parse_i32(b" 7"), Some(7));
        assert_eq!(parse_i32(b"7\r"), Some(7));
        assert_eq!(parse_i32(b"7x"), None);
        assert_eq!(parse_i32(b""), None);
        assert_eq!(parse_i32(b"-"), None);
        // strtol's range is the long's; the int32 keeps the low 32 bits.
        assert_eq!(parse_i32(b"2147483648"), Some(i32::MIN));
        assert_eq!(parse_i32(b"4294967296"), Some(0));
        assert_eq!(parse_i32(b"4294967297"), Some(1));
        assert_eq!(parse_i32(b"-4294967295"), Some(1));
        assert_eq!(parse_i32(b"9223372036854775807"), Some(-1));
        assert_eq!(parse_i32(b"-9223372036854775808"), Some(0));
        assert_eq!(parse_i32(b"9223372036854775808"), None);
        assert_eq!(parse_i32(b"-9223372036854775809"), None);
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"-0"), Some(0));
        assert_eq!(parse_flags(b"4294967296"), Some(0));
        assert_eq!(parse_flags(b"-1"), None);
    }
}
