//! 64-byte buckets of nine fingerprints, an overflow count and nine 6-byte
//! item addresses.
//!
//! ```text
//!  bytes 0..9          byte 9     bytes 10..64
//! +-------------------+----------+------------------------------------------+
//! | fp0 fp1 ... fp8   | overflow | slot0 slot1 ... slot8 (48-bit addresses)  |
//! +-------------------+----------+------------------------------------------+
//!  fp_i == 0: slot i is free; otherwise it holds an item whose fingerprint
//!  (1..=255) is fp_i.
//! ```
//!
//! Keys that find their home bucket full go to the next bucket with a free
//! slot (linear probing over buckets, wrapping at the end). A bucket's
//! overflow count says how many items passed it on the way to a later
//! bucket: a lookup stops at the first bucket of its probe whose count is
//! zero. Counts saturate at 255 and then stay until the array is rebuilt; a
//! count too high only makes probes longer, never wrong.
//!
//! Addresses are stored in 48 bits: user-space addresses on x86_64 and
//! aarch64 Linux fit (the kernel hands out higher ones only on request), and
//! the table checks each one it stores.

/// Slots per bucket.
pub(crate) const SLOTS: usize = 9;
/// Byte offset of the overflow count.
const OVF: usize = 9;
/// Byte offset of slot 0's address.
const SLOT0: usize = 10;
/// Highest address a slot can hold, plus one.
pub(crate) const ADDR_LIMIT: usize = 1 << 48;

#[repr(C, align(64))]
pub(crate) struct Bucket {
    bytes: [u8; 64],
}

const _: () = assert!(std::mem::size_of::<Bucket>() == 64);
const _: () = assert!(std::mem::align_of::<Bucket>() == 64);
const _: () = assert!(SLOT0 + 6 * SLOTS == 64);

/// The fingerprint: 1..=255 from bits 32..48 of the hash. The low 32 bits
/// pick the home bucket, so they say nothing within one bucket.
#[inline(always)]
pub(crate) fn fingerprint(hash: u64) -> u8 {
    ((((hash >> 32) & 0xffff) * 255) >> 16) as u8 + 1
}

/// Bit 7 of each zero byte of `x`, exactly (no false hits from borrows).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    const LO7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LO7).wrapping_add(LO7)) | x | LO7)
}

/// Bit 7 of byte i of `z` to bit i (the other bits of `z` must be clear).
#[inline(always)]
fn gather(z: u64) -> u32 {
    // Byte i's bit lands on bit 56 + i; the other partial products fall
    // below bit 56 or past bit 63, and no two share a position (no carries).
    ((z >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
}

impl Bucket {
    pub(crate) const EMPTY: Bucket = Bucket { bytes: [0; 64] };

    #[inline(always)]
    fn fp_word(&self) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.bytes[..8]);
        u64::from_le_bytes(w)
    }

    /// Bit i set for each slot i holding an item with fingerprint `fp`
    /// (`fp != 0`).
    #[inline(always)]
    pub(crate) fn matches(&self, fp: u8) -> u32 {
        let z = zero_bytes(self.fp_word() ^ (0x0101_0101_0101_0101u64 * fp as u64));
        gather(z) | ((self.bytes[8] == fp) as u32) << 8
    }

    /// Bit i set for each free slot i.
    #[inline(always)]
    pub(crate) fn free(&self) -> u32 {
        gather(zero_bytes(self.fp_word())) | ((self.bytes[8] == 0) as u32) << 8
    }

    /// Bit i set for each slot i holding an item.
    #[inline(always)]
    pub(crate) fn present(&self) -> u32 {
        !self.free() & ((1 << SLOTS) - 1)
    }

    /// The overflow count.
    #[inline(always)]
    pub(crate) fn overflow(&self) -> u8 {
        self.bytes[OVF]
    }

    /// Counts one more item passing this bucket (sticks at 255).
    #[inline(always)]
    pub(crate) fn inc_overflow(&mut self) {
        self.bytes[OVF] = self.bytes[OVF].saturating_add(1);
    }

    /// Counts one item fewer passing this bucket (255 sticks).
    #[inline(always)]
    pub(crate) fn dec_overflow(&mut self) {
        let n = self.bytes[OVF];
        if n != 255 && n != 0 {
            self.bytes[OVF] = n - 1;
        }
    }

    /// The address in slot `s` (meaningful when the slot holds an item).
    #[inline(always)]
    pub(crate) fn addr(&self, s: usize) -> usize {
        let mut a = [0u8; 8];
        a[..6].copy_from_slice(&self.bytes[SLOT0 + 6 * s..SLOT0 + 6 * s + 6]);
        u64::from_le_bytes(a) as usize
    }

    /// Puts an item with fingerprint `fp` (nonzero) at `addr` (below
    /// `ADDR_LIMIT`) in slot `s`.
    #[inline(always)]
    pub(crate) fn set(&mut self, s: usize, fp: u8, addr: usize) {
        debug_assert!(fp != 0 && addr < ADDR_LIMIT);
        self.bytes[s] = fp;
        self.set_addr(s, addr);
    }

    /// Replaces the address in slot `s`, keeping its fingerprint.
    #[inline(always)]
    pub(crate) fn set_addr(&mut self, s: usize, addr: usize) {
        self.bytes[SLOT0 + 6 * s..SLOT0 + 6 * s + 6].copy_from_slice(&(addr as u64).to_le_bytes()[..6]);
    }

    /// Frees slot `s`.
    #[inline(always)]
    pub(crate) fn clear(&mut self, s: usize) {
        self.bytes[s] = 0;
        self.bytes[SLOT0 + 6 * s..SLOT0 + 6 * s + 6].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_and_free_are_exact() {
        for fp in [1u8, 2, 0x7f, 0x80, 0xfe, 0xff] {
            for pattern in 0u32..512 {
                let mut b = Bucket::EMPTY;
                for s in 0..SLOTS {
                    if pattern & (1 << s) != 0 {
                        b.set(s, if s % 3 == 0 { fp } else { fp ^ 1 | 1 }, 0x1234 + s);
                    }
                }
                let mut want_hits = 0;
                for s in 0..SLOTS {
                    if pattern & (1 << s) != 0 && b.bytes[s] == fp {
                        want_hits |= 1 << s;
                    }
                }
                assert_eq!(b.matches(fp), want_hits, "fp {fp} pattern {pattern:#x}");
                assert_eq!(b.present(), pattern);
                assert_eq!(b.free(), !pattern & 0x1ff);
            }
        }
    }

    #[test]
    fn addresses_round_trip_and_overflow_saturates() {
        let mut b = Bucket::EMPTY;
        for s in 0..SLOTS {
            b.set(s, 7, (ADDR_LIMIT - 1) - s * 0x1_0000_0001);
        }
        for s in 0..SLOTS {
            assert_eq!(b.addr(s), (ADDR_LIMIT - 1) - s * 0x1_0000_0001);
        }
        b.clear(4);
        assert_eq!(b.present(), 0x1ff & !(1 << 4));
        assert_eq!(b.addr(3), (ADDR_LIMIT - 1) - 3 * 0x1_0000_0001);
        for _ in 0..300 {
            b.inc_overflow();
        }
        assert_eq!(b.overflow(), 255);
        b.dec_overflow();
        assert_eq!(b.overflow(), 255);
        b.bytes[OVF] = 2;
        b.dec_overflow();
        b.dec_overflow();
        b.dec_overflow();
        assert_eq!(b.overflow(), 0);
    }

    #[test]
    fn fingerprints_cover_1_to_255() {
        let mut seen = [false; 256];
        for x in 0u64..=0xffff {
            seen[fingerprint(x << 32) as usize] = true;
        }
        assert!(!seen[0]);
        assert!(seen[1..].iter().all(|&s| s));
    }
}
