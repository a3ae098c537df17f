//! Redis's intset, as RDB carries small all-integer sets: sorted,
//! distinct integers of one width.
//!
//! ```text
//!  | width u32 LE (2, 4 or 8) | count u32 LE | count × width-byte LE integers, ascending |
//! ```

use super::RdbError;

/// The intset of `vals` (sorted here).
pub fn encode(vals: &mut [i64]) -> Vec<u8> {
    vals.sort_unstable();
    let width: usize = if vals.iter().all(|&v| i16::try_from(v).is_ok()) {
        2
    } else if vals.iter().all(|&v| i32::try_from(v).is_ok()) {
        4
    } else {
        8
    };
    let mut out = Vec::with_capacity(8 + width * vals.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(vals.len() as u32).to_le_bytes());
    for &v in vals.iter() {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}

/// The integers of an intset, checked: a known width, the length its
/// count implies, strictly ascending.
pub fn decode(b: &[u8]) -> Result<Vec<i64>, RdbError> {
    if b.len() < 8 {
        return Err(RdbError::Corrupt("intset shorter than its header"));
    }
    let width = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let count = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    if !matches!(width, 2 | 4 | 8) {
        return Err(RdbError::Corrupt("intset with an unknown width"));
    }
    if count.checked_mul(width).and_then(|n| n.checked_add(8)) != Some(b.len()) {
        return Err(RdbError::Corrupt("intset length differs from its count"));
    }
    let mut out = Vec::with_capacity(count);
    for c in b[8..].chunks_exact(width) {
        let mut a = [0u8; 8];
        a[..width].copy_from_slice(c);
        let shift = 64 - 8 * width as u32;
        let v = (i64::from_le_bytes(a) << shift) >> shift;
        if out.last().is_some_and(|&p| p >= v) {
            return Err(RdbError::Corrupt("intset not strictly ascending"));
        }
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_equal_redis() {
        // DUMP of `SADD s2 1 2 300` in Redis 8.4, its intset.
        let b = encode(&mut [300, 1, 2]);
        assert_eq!(b, b"\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00,\x01");
        assert_eq!(decode(&b).unwrap(), [1, 2, 300]);
        let mut wide = [i64::MIN, -1, i64::from(i32::MAX) + 1];
        assert_eq!(decode(&encode(&mut wide)).unwrap(), wide);
        assert!(decode(b"\x02\x00\x00\x00\x02\x00\x00\x00\x02\x00\x01\x00").is_err());
        assert!(decode(b"\x03\x00\x00\x00\x00\x00\x00\x00").is_err());
        assert!(decode(b"\x02\x00\x00\x00\xff\xff\xff\xff").is_err());
    }
}
