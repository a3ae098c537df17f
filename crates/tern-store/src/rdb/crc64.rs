//! Redis's CRC64: the Jones polynomial (0xad93d23594c935a9), reflected,
//! initial value 0 and no final xor. It ends every RDB file and DUMP
//! payload.
//!
//! With a zero start and no final xor the checksum is linear over GF(2),
//! so a change to bytes already summed can be patched into the checksum
//! without reading them again ([`shift`], as zlib's `crc32_combine`):
//! [`super::RdbWriter`] raises the version digits of a header it has
//! already written that way.

/// The polynomial, bit-reversed.
const POLY: u64 = 0x95ac_9329_ac4b_c9b5;

/// Slicing-by-8 tables: `TABLES[k][b]` is byte `b`'s contribution when
/// `k` more bytes follow it in the same 8-byte word. `TABLES[0]` is the
/// classic byte-at-a-time table. Eight bytes per step instead of one: a
/// 5M-key file (~600 MB) is summed on load and on save, and the one-byte
/// loop took about a second of it.
const TABLES: [[u64; 256]; 8] = {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
};

/// `crc` extended over `data`.
pub fn update(mut crc: u64, data: &[u8]) -> u64 {
    let t = &TABLES;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        let x = crc ^ u64::from_le_bytes(a);
        crc = t[7][(x & 0xff) as usize]
            ^ t[6][(x >> 8 & 0xff) as usize]
            ^ t[5][(x >> 16 & 0xff) as usize]
            ^ t[4][(x >> 24 & 0xff) as usize]
            ^ t[3][(x >> 32 & 0xff) as usize]
            ^ t[2][(x >> 40 & 0xff) as usize]
            ^ t[1][(x >> 48 & 0xff) as usize]
            ^ t[0][(x >> 56) as usize];
    }
    for &b in words.remainder() {
        crc = t[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// The checksum of `data`.
pub fn crc64(data: &[u8]) -> u64 {
    update(0, data)
}

fn times(mat: &[u64; 64], mut vec: u64) -> u64 {
    let mut sum = 0;
    let mut i = 0;
    while vec != 0 {
        if vec & 1 == 1 {
            sum ^= mat[i];
        }
        vec >>= 1;
        i += 1;
    }
    sum
}

fn square(mat: &[u64; 64]) -> [u64; 64] {
    let mut sq = [0u64; 64];
    for (n, s) in sq.iter_mut().enumerate() {
        *s = times(mat, mat[n]);
    }
    sq
}

/// `crc` extended over `len` zero bytes, in O(log len) steps.
pub fn shift(mut crc: u64, mut len: u64) -> u64 {
    if len == 0 || crc == 0 {
        return crc;
    }
    // The operator for one zero bit, then squared to two and four bits.
    let mut odd = [0u64; 64];
    odd[0] = POLY;
    for (n, o) in odd.iter_mut().enumerate().skip(1) {
        *o = 1 << (n - 1);
    }
    let mut even = square(&odd);
    odd = square(&even);
    // Each round squares the operator once more: one byte, two, four...
    loop {
        even = square(&odd);
        if len & 1 == 1 {
            crc = times(&even, crc);
        }
        len >>= 1;
        if len == 0 {
            break;
        }
        odd = square(&even);
        if len & 1 == 1 {
            crc = times(&odd, crc);
        }
        len >>= 1;
        if len == 0 {
            break;
        }
    }
    crc
}

/// The checksum of `a ++ b` from those of `a` and `b` (`b` being `len_b`
/// bytes long).
pub fn combine(crc_a: u64, crc_b: u64, len_b: u64) -> u64 {
    shift(crc_a, len_b) ^ crc_b
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn redis_test_vector() {
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(crc64(b""), 0);
    }

    /// The byte-at-a-time definition the tables must agree with.
    fn bytewise(mut crc: u64, data: &[u8]) -> u64 {
        for &b in data {
            crc = TABLES[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
        }
        crc
    }

    proptest! {
        #[test]
        fn slicing_by_8_matches_bytewise(start in any::<u64>(), data in proptest::collection::vec(any::<u8>(), 0..100)) {
            prop_assert_eq!(update(start, &data), bytewise(start, &data));
        }

        #[test]
        fn combine_matches_one_pass(a in proptest::collection::vec(any::<u8>(), 0..300),
                                    b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let whole: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
            prop_assert_eq!(combine(crc64(&a), crc64(&b), b.len() as u64), crc64(&whole));
        }

        #[test]
        fn patching_bytes_is_linear(data in proptest::collection::vec(any::<u8>(), 10..400), at in 0usize..10, x in 1u8..) {
            let mut changed = data.clone();
            changed[at] ^= x;
            let delta = update(0, &[x]);
            let patched = crc64(&data) ^ shift(delta, (data.len() - at - 1) as u64);
            prop_assert_eq!(patched, crc64(&changed));
        }
    }
}
