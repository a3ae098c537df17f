//! Standard base64 (with padding) for meta `b` keys, as memcached's
//! decoder accepts it: whole 4-character groups only.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn val(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Decodes `s`; None when it is not valid padded base64 or decodes to
/// nothing.
pub fn decode(s: &[u8]) -> Option<Vec<u8>> {
    if s.is_empty() || s.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let groups = s.len() / 4;
    for (gi, g) in s.chunks(4).enumerate() {
        let pad = g.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && gi + 1 != groups) {
            return None;
        }
        let mut n = 0u32;
        for &c in &g[..4 - pad] {
            n = (n << 6) | val(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    if out.is_empty() {
        None
    } else {
        Some(out)
    }
}

/// Appends the padded base64 form of `b` to `out`.
pub fn encode(out: &mut Vec<u8>, b: &[u8]) {
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        let chars = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        for (i, &ch) in chars.iter().enumerate() {
            if i <= c.len() {
                out.push(ALPHABET[ch as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for s in [&b"a"[..], b"ab", b"abc", b"abcd", b"\x00\xff\x10"] {
            let mut e = Vec::new();
            encode(&mut e, s);
            assert_eq!(decode(&e).as_deref(), Some(s));
        }
        assert_eq!(decode(b"aGk="), Some(b"hi".to_vec()));
        assert_eq!(decode(b"b64"), None);
        assert_eq!(decode(b"a=Gk"), None);
        assert_eq!(decode(b"a*k="), None);
    }
}
