//! A large sorted set's member → slab id index: open addressing over
//! groups of twelve ids, each group one cache line that holds its ids
//! beside a tag byte per id (seven bits of the member's hash).
//!
//! ```text
//!  Group (64 bytes, aligned):  tags[12] | passed | pad[3] | ids[12] (u32)
//!  home group = hash's low bits; tag = 0x80 | hash's top seven bits (0: empty)
//! ```
//!
//! A lookup reads the home group's line, then the slab slot of each id
//! whose tag matches: two misses where a table with its control bytes
//! apart from its entries takes three. Because the group is one line at
//! an address the hash gives, a pipeline can ask for it ahead of the
//! command that reads it ([`Index::prefetch`]), and once it is in cache,
//! for the slot that likely matches too ([`Index::candidate`]).
//!
//! An id that finds its home group full goes to the next group with room,
//! and every group it passes counts it (`passed`, as F14's overflow
//! counts): a lookup goes on past a group only while that count is not
//! zero, so an absent member usually costs one line. A removal takes its
//! count back off the groups it had passed; a count that reached 255
//! stays there (the lookup then only probes further than it must).
//!
//! Non-goals: shrinking (a sorted set that empties is dropped whole) and
//! iteration (the slab is walked instead).

/// Ids per group.
const WIDTH: usize = 12;

/// At most this many ids per group on average before the groups double
/// (10 of 12: 83%).
const FILL: usize = 10;

const EMPTY: u8 = 0;

#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Group {
    tags: [u8; WIDTH],
    /// Ids stored past this group whose probe started at or before it
    /// (saturating at 255).
    passed: u8,
    _pad: [u8; 3],
    ids: [u32; WIDTH],
}

const EMPTY_GROUP: Group = Group { tags: [EMPTY; WIDTH], passed: 0, _pad: [0; 3], ids: [0; WIDTH] };

impl Group {
    /// The slots whose tag is `tag`, as a bit mask (bit i: slot i).
    #[inline]
    fn matching(&self, tag: u8) -> u32 {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&self.tags[..8]);
        hi[..4].copy_from_slice(&self.tags[8..]);
        // Slots 12..16 of the high word do not exist: never match them.
        bytes_equal(u64::from_le_bytes(lo), tag) | ((bytes_equal(u64::from_le_bytes(hi), tag) & 0xf) << 8)
    }
}

/// Bit i set where byte i of `w` equals `b` (exact, no false positives).
#[inline]
fn bytes_equal(w: u64, b: u8) -> u32 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = w ^ (0x0101_0101_0101_0101 * u64::from(b));
    // The high bit of each byte is set where that byte of x is zero.
    let mut z = !(((x & LOW7) + LOW7) | x | LOW7);
    let mut m = 0;
    while z != 0 {
        m |= 1 << (z.trailing_zeros() / 8);
        z &= z - 1;
    }
    m
}

#[inline]
fn tag(hash: u64) -> u8 {
    0x80 | (hash >> 57) as u8
}

#[derive(Clone, Debug, Default)]
pub(super) struct Index {
    groups: Vec<Group>,
    len: usize,
}

impl Index {
    /// Room for `n` ids without growing.
    pub(super) fn with_capacity(n: usize) -> Index {
        let mut ix = Index::default();
        if n > 0 {
            ix.groups = vec![EMPTY_GROUP; n.div_ceil(FILL).next_power_of_two()];
        }
        ix
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
        hash as usize & (self.groups.len() - 1)
    }

    #[inline]
    fn next(&self, g: usize) -> usize {
        (g + 1) & (self.groups.len() - 1)
    }

    /// Bytes of groups held.
    pub(super) fn heap(&self) -> usize {
        self.groups.capacity() * std::mem::size_of::<Group>()
    }

    /// Asks for the line a lookup of `hash` reads first.
    #[inline]
    pub(super) fn prefetch(&self, hash: u64) {
        if !self.groups.is_empty() {
            tern_table::prefetch((&self.groups[self.home(hash)] as *const Group).cast());
        }
    }

    /// The first id of `hash`'s home group whose tag matches: the slot a
    /// lookup will most likely compare first. Read after
    /// [`Self::prefetch`], so that the group comes from cache.
    #[inline]
    pub(super) fn candidate(&self, hash: u64) -> Option<u32> {
        if self.groups.is_empty() {
            return None;
        }
        let g = &self.groups[self.home(hash)];
        let m = g.matching(tag(hash));
        (m != 0).then(|| g.ids[m.trailing_zeros() as usize])
    }

    /// Where the id `eq` accepts among those filed under `hash` is: its
    /// group and slot.
    #[inline]
    fn locate(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<(usize, usize)> {
        if self.groups.is_empty() {
            return None;
        }
        let t = tag(hash);
        let mut g = self.home(hash);
        for _ in 0..self.groups.len() {
            let grp = &self.groups[g];
            let mut m = grp.matching(t);
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                if eq(grp.ids[i]) {
                    return Some((g, i));
                }
                m &= m - 1;
            }
            if grp.passed == 0 {
                return None;
            }
            g = self.next(g);
        }
        None
    }

    /// The id `eq` accepts among those filed under `hash`.
    #[inline]
    pub(super) fn find(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<u32> {
        self.locate(hash, eq).map(|(g, i)| self.groups[g].ids[i])
    }

    /// Files `id` under `hash` (the caller knows no equal member is
    /// there); `rehash` gives any filed id's hash, for a growth.
    pub(super) fn insert(&mut self, hash: u64, id: u32, rehash: impl Fn(u32) -> u64) {
        if (self.len + 1) > self.groups.len() * FILL {
            self.grow(&rehash);
        }
        self.place(hash, id);
        self.len += 1;
    }

    fn place(&mut self, hash: u64, id: u32) {
        let t = tag(hash);
        let mut g = self.home(hash);
        loop {
            let grp = &mut self.groups[g];
            let free = grp.matching(EMPTY);
            if free != 0 {
                let i = free.trailing_zeros() as usize;
                grp.tags[i] = t;
                grp.ids[i] = id;
                return;
            }
            grp.passed = grp.passed.saturating_add(1);
            g = self.next(g);
        }
    }

    fn grow(&mut self, rehash: &impl Fn(u32) -> u64) {
        let n = (self.groups.len() * 2).max(1);
        let old = std::mem::replace(&mut self.groups, vec![EMPTY_GROUP; n]);
        for grp in &old {
            let mut m = !grp.matching(EMPTY) & ((1 << WIDTH) - 1);
            while m != 0 {
                let id = grp.ids[m.trailing_zeros() as usize];
                self.place(rehash(id), id);
                m &= m - 1;
            }
        }
    }

    /// Unfiles and returns the id `eq` accepts among those under `hash`.
    pub(super) fn remove(&mut self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<u32> {
        let (at, i) = self.locate(hash, eq)?;
        let id = self.groups[at].ids[i];
        self.groups[at].tags[i] = EMPTY;
        self.len -= 1;
        let mut g = self.home(hash);
        while g != at {
            let grp = &mut self.groups[g];
            if grp.passed != u8::MAX {
                grp.passed -= 1;
            }
            g = self.next(g);
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn bytes_equal_is_exact() {
        let words = [0u64, u64::MAX, 0x0080_ff01_7f80_0100, 0x8080_8080_8080_8080, 0x0102_0304_0506_0708];
        for &w in &words {
            for b in [0u8, 1, 0x7f, 0x80, 0x81, 0xff] {
                let want = (0..8).filter(|&i| (w >> (8 * i)) as u8 == b).fold(0, |m, i| m | 1 << i);
                assert_eq!(bytes_equal(w, b), want, "{w:#x} {b:#x}");
            }
        }
    }

    #[test]
    fn a_group_is_one_line() {
        assert_eq!(std::mem::size_of::<Group>(), 64);
        assert_eq!(std::mem::align_of::<Group>(), 64);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u32),
        Remove(u32),
    }

    proptest! {
        /// Against a HashMap, with hashes from few bits (so that groups
        /// fill, overflow and their counts matter) or spread ones.
        #[test]
        fn index_matches_a_map(ops in proptest::collection::vec(prop_oneof![
            (0u32..400).prop_map(Op::Insert), (0u32..400).prop_map(Op::Remove)], 1..600),
            bits in prop_oneof![Just(3u32), Just(6), Just(64)], cap in 0usize..50) {
            let hash = |k: u32| {
                let h = u64::from(k).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                if bits == 64 { h } else { h & ((1 << bits) - 1) | (h & (0x7f << 57)) }
            };
            // Ids are keys + 1000: what the index files is not the key.
            let mut ix = Index::with_capacity(cap);
            let mut model: HashMap<u32, u32> = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(k) => if !model.contains_key(&k) {
                        ix.insert(hash(k), k + 1000, |id| hash(id - 1000));
                        model.insert(k, k + 1000);
                    },
                    Op::Remove(k) => {
                        prop_assert_eq!(ix.remove(hash(k), |id| id == k + 1000), model.remove(&k));
                    }
                }
                prop_assert_eq!(ix.len, model.len());
            }
            // Each group's count is the number of ids that passed it.
            let n = ix.groups.len();
            let mut passed = vec![0usize; n];
            for (g, grp) in ix.groups.iter().enumerate() {
                for i in 0..WIDTH {
                    if grp.tags[i] != EMPTY {
                        let mut h = ix.home(hash(grp.ids[i] - 1000));
                        while h != g {
                            passed[h] += 1;
                            h = (h + 1) % n;
                        }
                    }
                }
            }
            for (grp, &want) in ix.groups.iter().zip(&passed) {
                prop_assert!(grp.passed == u8::MAX || usize::from(grp.passed) == want);
            }
            for k in 0u32..400 {
                prop_assert_eq!(ix.find(hash(k), |id| id == k + 1000), model.get(&k).copied());
                // A candidate is an id with the same tag (filed from this
                // home or passed on to it from one before), and a member
                // filed in its home group with no other of its tag before
                // it is the candidate.
                if let Some(id) = ix.candidate(hash(k)) {
                    prop_assert_eq!(tag(hash(id - 1000)), tag(hash(k)));
                }
                if bits == 64 && model.contains_key(&k) {
                    let g = &ix.groups[ix.home(hash(k))];
                    let m = g.matching(tag(hash(k)));
                    if m.count_ones() == 1 && g.ids[m.trailing_zeros() as usize] == k + 1000 {
                        prop_assert_eq!(ix.candidate(hash(k)), Some(k + 1000));
                    }
                }
            }
        }
    }
}
