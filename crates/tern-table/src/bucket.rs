//! 64-byte buckets and the chain operations on them.
//!
//! ```text
//!  byte 0      bytes 1..8          bytes 8..64
//! +--------+-------------------+--------------------------------------+
//! | ctrl   | fp0 fp1 ... fp6   | slot0 slot1 ... slot6 (thin pointers) |
//! +--------+-------------------+--------------------------------------+
//!  ctrl bit i (i < 7): slot i holds an item whose fingerprint is fp_i
//!  ctrl bit 7 (CHAINED): slot 6 points to the next bucket of the chain
//! ```
//!
//! A chain is a head bucket in the array followed by child buckets, each
//! allocated on its own. Inserting into a full last bucket moves its slot-6
//! item into a new child, so every bucket but the last holds six items and a
//! link. Removal pulls the chain's last item into the hole and frees a child
//! left with at most one item (that one moves back into its parent's slot 6),
//! so a child always holds at least two items. Holes left by an interrupted
//! operation (a panic in a hasher or a value's `Drop`) are tolerated by every
//! reader and filled later: only presence bits decide what is an item.

use std::ptr;

/// Slots per bucket.
pub(crate) const SLOTS: usize = 7;
/// The slot that holds the link to the next bucket when CHAINED is set.
pub(crate) const LINK: usize = SLOTS - 1;
pub(crate) const CHAINED: u8 = 0x80;
const ALL_SLOTS: u8 = 0x7f;
const ITEM_SLOTS_CHAINED: u8 = ALL_SLOTS & !(1 << LINK);

#[repr(C, align(64))]
pub(crate) struct Bucket {
    /// ctrl byte then seven fingerprints; read as one little-endian word.
    pub(crate) meta: [u8; 8],
    pub(crate) slots: [*mut u8; SLOTS],
}

const _: () = assert!(std::mem::size_of::<Bucket>() == 64);
const _: () = assert!(std::mem::align_of::<Bucket>() == 64);

impl Bucket {
    pub(crate) const EMPTY: Bucket = Bucket { meta: [0; 8], slots: [ptr::null_mut(); SLOTS] };
}

/// The fingerprint: a byte from the middle of the hash. The low bits pick
/// the bucket and the high bits pick the shard upstream, so neither says
/// anything within one bucket.
#[inline(always)]
pub(crate) fn fingerprint(hash: u64) -> u8 {
    (hash >> 32) as u8
}

/// Bit `8*i + 7` set for each present slot `i` whose fingerprint is `fp`
/// (SWAR over the metadata word: exact zero-byte detection, no false hits).
#[inline(always)]
pub(crate) fn match_fp(meta: [u8; 8], fp: u8) -> u64 {
    const LO7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let w = u64::from_le_bytes(meta);
    let x = w ^ (0x0101_0101_0101_0101u64 * fp as u64);
    let zero = !(((x & LO7).wrapping_add(LO7)) | x | LO7);
    let hits = zero >> 8;
    // Bit i of `present` lands on bit 8*i+7: the shifts 7*i+7 never collide
    // for i < 7, so the multiply has no carries.
    let present = (meta[0] & ALL_SLOTS) as u64;
    let spread = present.wrapping_mul(0x0002_0408_1020_4080) & 0x0080_8080_8080_8080;
    hits & spread
}

/// Slot index of the lowest hit in a `match_fp` result.
#[inline(always)]
pub(crate) fn first_slot(hits: u64) -> usize {
    (hits.trailing_zeros() / 8) as usize
}

/// Item slots that hold an item.
#[inline(always)]
pub(crate) fn present(b: &Bucket) -> u8 {
    b.meta[0] & ALL_SLOTS
}

#[inline(always)]
pub(crate) fn is_chained(b: &Bucket) -> bool {
    b.meta[0] & CHAINED != 0
}

/// Nothing in it and no chain.
#[inline(always)]
pub(crate) fn is_empty(b: &Bucket) -> bool {
    b.meta[0] == 0
}

/// Moves the item in `from[fs]` into the free slot `to[ts]`.
///
/// # Safety
/// Both buckets must be valid, initialised and writable; `from[fs]` present
/// and `to[ts]` a free item slot.
unsafe fn move_slot(from: *mut Bucket, fs: usize, to: *mut Bucket, ts: usize) {
    // SAFETY: per the contract; raw accesses, no references kept.
    unsafe {
        (*to).slots[ts] = (*from).slots[fs];
        (*to).meta[1 + ts] = (*from).meta[1 + fs];
        (*to).meta[0] |= 1 << ts;
        (*from).meta[0] &= !(1 << fs);
        (*from).slots[fs] = ptr::null_mut();
    }
}

/// Allocates an empty child bucket.
fn new_child() -> *mut Bucket {
    Box::into_raw(Box::new(Bucket::EMPTY))
}

/// Frees a child bucket made by `new_child`.
///
/// # Safety
/// `b` came from `new_child` and is no longer linked anywhere.
unsafe fn free_child(b: *mut Bucket) {
    // SAFETY: per the contract.
    drop(unsafe { Box::from_raw(b) });
}

/// The next bucket of the chain, if any.
///
/// # Safety
/// `b` must be a valid initialised bucket.
#[inline(always)]
pub(crate) unsafe fn next(b: *const Bucket) -> Option<*mut Bucket> {
    // SAFETY: per the contract.
    unsafe {
        if is_chained(&*b) {
            Some((*b).slots[LINK] as *mut Bucket)
        } else {
            None
        }
    }
}

/// Puts `item` with fingerprint `fp` in the first free item slot of the
/// chain, extending it when full. Returns true when a child was allocated.
///
/// # Safety
/// `head` must be a valid initialised bucket, writable, heading a chain.
pub(crate) unsafe fn insert(head: *mut Bucket, fp: u8, item: *mut u8) -> bool {
    let mut b = head;
    // SAFETY: every bucket reached is the head or a live child of its chain.
    unsafe {
        loop {
            let ctrl = (*b).meta[0];
            let chained = ctrl & CHAINED != 0;
            let free = !ctrl & if chained { ITEM_SLOTS_CHAINED } else { ALL_SLOTS };
            if free != 0 {
                let s = free.trailing_zeros() as usize;
                (*b).slots[s] = item;
                (*b).meta[1 + s] = fp;
                (*b).meta[0] |= 1 << s;
                return false;
            }
            if !chained {
                let c = new_child();
                move_slot(b, LINK, c, 0);
                (*c).slots[1] = item;
                (*c).meta[2] = fp;
                (*c).meta[0] |= 1 << 1;
                (*b).slots[LINK] = c as *mut u8;
                (*b).meta[0] |= CHAINED;
                return true;
            }
            b = (*b).slots[LINK] as *mut Bucket;
        }
    }
}

/// Restores the chain's shape after items were taken out: fills holes of the
/// non-last buckets from the last one and frees children left with fewer
/// than two items. Returns the number of children freed.
///
/// # Safety
/// `head` must be a valid initialised bucket, writable, heading a chain.
pub(crate) unsafe fn compact(head: *mut Bucket) -> usize {
    let mut freed = 0;
    // SAFETY: every bucket reached is the head or a live child of its chain;
    // a child is unlinked before it is freed.
    unsafe {
        loop {
            if !is_chained(&*head) {
                return freed;
            }
            let mut parent = head;
            let mut last = (*head).slots[LINK] as *mut Bucket;
            while let Some(n) = next(last) {
                parent = last;
                last = n;
            }
            let n = present(&*last).count_ones();
            if n > 0 {
                if let Some((hb, hs)) = first_hole_before(head, last) {
                    let from = 7 - present(&*last).leading_zeros() as usize;
                    move_slot(last, from, hb, hs);
                    continue;
                }
            }
            match n {
                0 => {
                    (*parent).slots[LINK] = ptr::null_mut();
                    (*parent).meta[0] &= !CHAINED;
                    free_child(last);
                    freed += 1;
                }
                1 => {
                    let s = present(&*last).trailing_zeros() as usize;
                    (*parent).slots[LINK] = ptr::null_mut();
                    (*parent).meta[0] &= !CHAINED;
                    move_slot(last, s, parent, LINK);
                    free_child(last);
                    return freed + 1;
                }
                _ => return freed,
            }
        }
    }
}

/// The first free item slot in a bucket before `last` in the chain.
///
/// # Safety
/// `head` heads a valid chain that contains `last`.
unsafe fn first_hole_before(head: *mut Bucket, last: *mut Bucket) -> Option<(*mut Bucket, usize)> {
    let mut b = head;
    // SAFETY: walks the chain's live buckets only.
    unsafe {
        while b != last {
            let free = !(*b).meta[0] & ITEM_SLOTS_CHAINED;
            if free != 0 {
                return Some((b, free.trailing_zeros() as usize));
            }
            b = (*b).slots[LINK] as *mut Bucket;
        }
    }
    None
}

/// Frees every child of the chain (their items must have been taken out)
/// and resets the head. Returns the number of children freed.
///
/// # Safety
/// `head` must be a valid initialised bucket, writable, whose chain holds no
/// items.
pub(crate) unsafe fn free_chain(head: *mut Bucket) -> usize {
    let mut freed = 0;
    // SAFETY: per the contract; each child is read before it is freed.
    unsafe {
        let mut link = next(head);
        while let Some(c) = link {
            link = next(c);
            free_child(c);
            freed += 1;
        }
        head.write(Bucket::EMPTY);
    }
    freed
}

/// Number of items in the chain.
///
/// # Safety
/// `head` must be a valid initialised bucket.
pub(crate) unsafe fn count(head: *const Bucket) -> usize {
    let mut n = 0;
    let mut b = head;
    // SAFETY: walks live buckets only.
    unsafe {
        loop {
            n += present(&*b).count_ones() as usize;
            match next(b) {
                Some(c) => b = c,
                None => return n,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_matches_exactly() {
        for fp in [0u8, 1, 0x7f, 0x80, 0xff] {
            for present in [0u8, 0x7f, 0x55, 0x2a, 0x01, 0x40] {
                let mut meta = [present, fp, fp ^ 1, fp, 0, fp, 0xff, fp];
                meta[0] = present;
                let hits = match_fp(meta, fp);
                for i in 0..7 {
                    let want = present & (1 << i) != 0 && meta[1 + i] == fp;
                    assert_eq!(hits & (1 << (8 * i + 7)) != 0, want, "fp {fp} present {present:#x} slot {i}");
                }
                assert_eq!(hits & !0x0080_8080_8080_8080, 0);
            }
        }
    }
}
