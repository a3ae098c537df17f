//! Growing and shrinking: the incremental resize that moves a table's
//! items to a new bucket array a few buckets per insert or remove (see the
//! crate docs, "Resizing"), and `reserve` for a table about to be filled.

use std::hash::BuildHasher;

use super::*;

impl<T, B, S: BuildHasher> Table<T, S, B> {
    /// Makes room for `additional` more items: inserting them starts no
    /// resize (what Redis's loader does with RESIZEDB's hint). A resize
    /// under way is finished first; if the array is then too small, every
    /// item moves at once to the array `len + additional` items fill to the
    /// target (3/4), as a growth would pick for them. O(len), all in this
    /// call: meant for a table about to be filled (a load), not one that
    /// serves. Like a grown table, one left under a fifth full shrinks at
    /// its next removal. May panic in the hasher, with the table consistent
    /// (as [`Table::rehash_step`]).
    ///
    /// # Panics
    /// If the array for `len + additional` items would not fit the address
    /// space.
    pub fn reserve(&mut self, additional: usize) {
        let n = self.len.checked_add(additional).expect("table reserve overflow");
        while self.rehash_step(usize::MAX) {}
        if n.saturating_mul(GROW_DEN) <= self.old.nb * SLOTS * GROW_NUM {
            return;
        }
        if self.old.nb == 0 {
            // Nothing to move: the target array is the first one. Zeroed
            // large arrays come from fresh pages, so nothing is touched
            // before its inserts arrive.
            let nb = Self::target_buckets(n);
            self.old = Array::alloc(nb, true);
            return;
        }
        self.start_resize(n);
        while self.rehash_step(usize::MAX) {}
    }

    /// Buckets of the array `n` items fill at most to the target: a whole
    /// size class of the allocator.
    pub(super) fn target_buckets(n: usize) -> usize {
        let want = n.checked_mul(TARGET_DEN).expect("table size overflow").div_ceil(SLOTS * TARGET_NUM).max(1);
        assert!(want <= isize::MAX as usize / 128, "table size overflow");
        size_class(want * 64) / 64
    }

    pub(super) fn maybe_shrink(&mut self) {
        if !self.is_rehashing() && self.old.nb > 1 && self.len * SHRINK_DEN < self.old.nb * SLOTS * SHRINK_NUM {
            self.start_resize(self.len);
        }
    }

    /// Starts moving the items to the smallest array that `n` items fill
    /// at most to the target, a whole size class of the allocator (not a
    /// power of two: growth steps stay small, so does the waste).
    pub(super) fn start_resize(&mut self, n: usize) {
        let nb = Self::target_buckets(n);
        if nb == self.old.nb {
            return;
        }
        self.new = Array::alloc(nb, false);
        self.done = 0;
        self.nready = 0;
        self.new_len = 0;
        self.torn = false;
    }

    /// Moves up to about `budget` buckets' worth of a resize under way (whole
    /// clusters at a time), and gives back a slice of the previous resize's
    /// old array. Returns true while either has work left.
    pub fn rehash_step(&mut self, budget: usize) -> bool {
        let retiring = self.retiring.step(false);
        if !self.is_rehashing() {
            return retiring;
        }
        let (mut items, mut buckets) = (0usize, 0usize);
        while self.done < self.old.nb
            && items < budget.saturating_mul(SLOTS)
            && buckets < budget.saturating_mul(EMPTY_VISITS)
        {
            let (i, b) = self.move_cluster();
            items += i;
            buckets += b;
        }
        if self.done < self.old.nb {
            return true;
        }
        self.make_ready(self.new.nb - 1);
        if self.new_len != self.len {
            self.sweep_old();
        }
        let old = std::mem::replace(&mut self.old, std::mem::replace(&mut self.new, Array::NONE));
        self.done = 0;
        self.nready = 0;
        self.new_len = 0;
        self.retiring.step(true);
        if old.nb * 64 >= RETIRE_MIN {
            self.retiring = Retiring::new(old);
            return true;
        }
        let mut old = old;
        old.free();
        false
    }

    /// Moves whatever is still in `old` after every home was moved: nothing,
    /// unless a caller's hashes disagreed with the hasher. Their items are
    /// kept (they stay reachable by iteration) rather than lost.
    pub(super) fn sweep_old(&mut self) {
        for j in 0..self.old.nb {
            // SAFETY: `old` is fully initialised; `&mut self` is exclusive.
            let mut pres = unsafe { (*self.old.at(j)).present() };
            while pres != 0 {
                let s = pres.trailing_zeros() as usize;
                pres &= pres - 1;
                // SAFETY: a present slot holds a live item.
                let addr = unsafe { (*self.old.at(j)).addr(s) };
                // SAFETY: as above.
                let h = hash_key(&self.hasher, unsafe { (*item_ptr::<T, B>(addr)).key() });
                self.put(Side::New, h, addr);
                // SAFETY: as above.
                unsafe { (*self.old.at(j)).clear(s) };
                self.new_len += 1;
            }
        }
    }

    /// Moves the next cluster of `old`: the items of the first home not
    /// moved yet and of the homes after it, walking buckets until one that
    /// no remaining item passed. An item there whose home lies past the
    /// walk wrapped around the array's end: it stays until its home's turn.
    /// Items move one at a time (a panic in the hasher leaves each item in
    /// exactly one array, and `torn` set until the cluster is finished).
    /// Returns items and buckets moved.
    pub(super) fn move_cluster(&mut self) -> (usize, usize) {
        let nb = self.old.nb;
        let first = self.done;
        self.torn = true;
        let (mut items, mut k) = (0, 0);
        loop {
            let j = (first + k) % nb;
            // SAFETY: `old` is fully initialised; `&mut self` is exclusive.
            let mut pres = unsafe { (*self.old.at(j)).present() };
            // Each item is read to rehash its key: ask for all of them
            // first, so their misses overlap.
            let mut m = pres;
            while m != 0 {
                // SAFETY: as above; an address only prefetched.
                prefetch(unsafe { (*self.old.at(j)).addr(m.trailing_zeros() as usize) } as *const u8);
                m &= m - 1;
            }
            while pres != 0 {
                let s = pres.trailing_zeros() as usize;
                pres &= pres - 1;
                // SAFETY: a present slot holds a live item.
                let addr = unsafe { (*self.old.at(j)).addr(s) };
                // SAFETY: as above.
                let h = hash_key(&self.hasher, unsafe { (*item_ptr::<T, B>(addr)).key() });
                let oh = home(h as u32, nb);
                if (oh + nb - first) % nb > k {
                    continue;
                }
                // The item is in `new` before it leaves its old slot.
                self.put(Side::New, h, addr);
                // SAFETY: as above.
                unsafe { (*self.old.at(j)).clear(s) };
                self.unpass(Side::Old, oh, j);
                self.new_len += 1;
                items += 1;
            }
            k += 1;
            // SAFETY: as above.
            if unsafe { (*self.old.at(j)).overflow() } == 0 || k >= nb {
                break;
            }
        }
        self.done = (first + k).min(nb);
        // Keys of the moved homes are now inserted into and looked up in
        // `new`: their home buckets there must be initialised.
        self.make_ready(home((range_end(self.done - 1, nb) - 1) as u32, self.new.nb));
        self.torn = false;
        (items, k)
    }
}
