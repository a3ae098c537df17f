//! Number conversions as the C libraries get them from the C compiler and
//! the C library on x86-64: casts from double, `printf("%.*g")` and
//! `strtod`. The libraries' outputs depend on these details (a cast out of
//! range, a hexadecimal float in JSON), so they are reproduced here.

/// A C cast of a double to `int64_t` on x86-64: truncation toward zero,
/// and the "integer indefinite" value (`INT64_MIN`) for NaN and anything
/// out of range, where Rust's `as` would saturate.
pub(crate) fn double_to_i64(x: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// A C cast of a double to `int` on x86-64, `INT_MIN` when out of range.
pub(crate) fn double_to_i32(x: f64) -> i32 {
    const LIMIT: f64 = 2_147_483_648.0; // 2^31
    if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
        i32::MIN
    } else {
        x as i32
    }
}

/// A C cast of a double to `uint64_t` as compilers emit it on x86-64:
/// values below 2^63 (negative ones and NaN included) go through the
/// signed conversion, larger ones through the signed conversion of
/// `x - 2^63`.
pub(crate) fn double_to_u64(x: f64) -> u64 {
    const HALF: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if x.is_nan() || x < HALF {
        double_to_i64(x) as u64
    } else {
        (double_to_i64(x - HALF) as u64) ^ (1 << 63)
    }
}

/// `printf("%.{precision}g", x)` (precision at least 1).
pub(crate) fn format_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_owned();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    let scientific = format!("{:.*e}", precision - 1, x);
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` writes an exponent");
    let exponent: i64 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    if exponent < -4 || exponent >= precision as i64 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            strip_fraction_zeros(mantissa),
            exponent.abs()
        )
    } else {
        let decimals = (precision as i64 - 1 - exponent) as usize;
        strip_fraction_zeros(&format!("{x:.decimals$}")).to_owned()
    }
}

/// `%g` drops the trailing zeros of the fraction, and the point with them.
fn strip_fraction_zeros(digits: &str) -> &str {
    if digits.contains('.') {
        digits.trim_end_matches('0').trim_end_matches('.')
    } else {
        digits
    }
}

/// `strtod` in the C locale: the number at the start of `s` and how many
/// bytes it took, or `None` when `s` starts with no number. Reads what glibc
/// reads: a sign, then `inf`/`infinity`, `nan`/`nan(chars)`, a hexadecimal
/// float (`0x1.8p3`) or a decimal one.
pub(crate) fn strtod(s: &[u8]) -> Option<(f64, usize)> {
    let (negative, start) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let rest = &s[start..];
    let (magnitude, len) = special(rest)
        .or_else(|| hexadecimal(rest))
        .or_else(|| decimal(rest))?;
    Some((if negative { -magnitude } else { magnitude }, start + len))
}

fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// `inf`, `infinity`, `nan` and `nan(n-char-sequence)`.
fn special(s: &[u8]) -> Option<(f64, usize)> {
    if starts_with_ignore_case(s, b"infinity") {
        return Some((f64::INFINITY, 8));
    }
    if starts_with_ignore_case(s, b"inf") {
        return Some((f64::INFINITY, 3));
    }
    if !starts_with_ignore_case(s, b"nan") {
        return None;
    }
    let chars = s[3..]
        .iter()
        .skip(1)
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let closed = s.get(3) == Some(&b'(') && s.get(4 + chars) == Some(&b')');
    Some((f64::NAN, if closed { 5 + chars } else { 3 }))
}

fn digits_len(s: &[u8], is_digit: fn(&u8) -> bool) -> usize {
    s.iter().take_while(|c| is_digit(c)).count()
}

/// A decimal float: digits with an optional point, at least one digit,
/// and an exponent when one follows with digits.
fn decimal(s: &[u8]) -> Option<(f64, usize)> {
    let whole = digits_len(s, u8::is_ascii_digit);
    let mut len = whole;
    let mut fraction = 0;
    if s.get(len) == Some(&b'.') {
        fraction = digits_len(&s[len + 1..], u8::is_ascii_digit);
        len += 1 + fraction;
    }
    if whole + fraction == 0 {
        return None;
    }
    let mut text = String::with_capacity(len + 8);
    text.push('0');
    text.extend(s[..whole].iter().map(|&c| c as char));
    text.push('.');
    text.extend(s[len - fraction..len].iter().map(|&c| c as char));
    text.push('0');
    if let Some(exponent_len) = exponent_len(&s[len..], b'e', u8::is_ascii_digit) {
        text.extend(s[len..len + exponent_len].iter().map(|&c| c as char));
        len += exponent_len;
    }
    Some((text.parse().expect("a well-formed decimal float"), len))
}

/// The length of an exponent (`marker`, optional sign, digits) at the start
/// of `s`, if there is a complete one.
fn exponent_len(s: &[u8], marker: u8, is_digit: fn(&u8) -> bool) -> Option<usize> {
    if !s.first().is_some_and(|c| c.eq_ignore_ascii_case(&marker)) {
        return None;
    }
    let signed = usize::from(matches!(s.get(1), Some(b'+' | b'-')));
    let digits = digits_len(&s[1 + signed..], is_digit);
    (digits > 0).then_some(1 + signed + digits)
}

/// A hexadecimal float: `0x`, hex digits with an optional point, and an
/// optional binary exponent (`p`). Without a digit after `0x`, `strtod`
/// reads just the `0`, which [`decimal`] does.
fn hexadecimal(s: &[u8]) -> Option<(f64, usize)> {
    if !(s.len() > 2 && s[0] == b'0' && s[1].eq_ignore_ascii_case(&b'x')) {
        return None;
    }
    let body = &s[2..];
    let whole = digits_len(body, u8::is_ascii_hexdigit);
    let mut len = whole;
    let mut fraction = 0;
    if body.get(len) == Some(&b'.') {
        fraction = digits_len(&body[len + 1..], u8::is_ascii_hexdigit);
        len += 1 + fraction;
    }
    if whole + fraction == 0 {
        return None;
    }
    let digits = body[..whole].iter().chain(&body[len - fraction..len]);
    let mut exponent = -4 * fraction as i64;
    if let Some(exponent_len) = exponent_len(&body[len..], b'p', u8::is_ascii_digit) {
        let text = std::str::from_utf8(&body[len + 1..len + exponent_len]).expect("ASCII digits");
        exponent =
            exponent.saturating_add(text.parse::<i64>().unwrap_or(if text.starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            }));
        len += exponent_len;
    }
    Some((scale_hex_digits(digits, exponent), 2 + len))
}

/// The value of hex `digits` times 2^`exponent`, rounded once: the first
/// 15 significant digits (60 bits) are kept exactly and any nonzero digit
/// after them is folded into the lowest bit, which rounds as the exact
/// value would.
fn scale_hex_digits<'a>(digits: impl Iterator<Item = &'a u8>, mut exponent: i64) -> f64 {
    let mut mantissa: u64 = 0;
    let mut kept = 0;
    let mut sticky = false;
    for digit in digits {
        let value = u64::from((*digit as char).to_digit(16).expect("a hex digit"));
        if mantissa == 0 && value == 0 {
            continue;
        }
        if kept < 15 {
            mantissa = mantissa << 4 | value;
            kept += 1;
        } else {
            exponent = exponent.saturating_add(4);
            sticky |= value != 0;
        }
    }
    if mantissa == 0 {
        return 0.0;
    }
    let mantissa = (mantissa << 1 | u64::from(sticky)) as f64;
    let exponent = exponent.saturating_sub(1).clamp(-1200, 1200) as i32;
    // Two steps keep the intermediate power of two representable.
    let half = exponent / 2;
    mantissa * 2f64.powi(half) * 2f64.powi(exponent - half)
}
